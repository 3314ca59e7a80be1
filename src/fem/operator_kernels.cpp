// Launches of the fused mass and diffusion operators (compiled by nvcc in CUDA builds).
#include "operator_kernels.hpp"

#include "tessera/core/forall.hpp"

namespace tessera::fem::interp_detail {

template <bool Diffusion, bool OnTheFly>
void launch_operator_kind(const char* label, const Exec& exec, const Teams& t, Geometry g, const Args& a) {
  if (g == Geometry::Quadrilateral)
    launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { quad_operator<Diffusion, OnTheFly>(ctx, a); });
  else
    launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { hex_operator<Diffusion, OnTheFly>(ctx, a); });
}

void launch_operator(const char* label, const Exec& exec, const Teams& t, Geometry g, bool diffusion, const Args& a) {
  if (diffusion) {
    if (a.on_the_fly) launch_operator_kind<true, true>(label, exec, t, g, a);
    else launch_operator_kind<true, false>(label, exec, t, g, a);
  } else {
    if (a.on_the_fly) launch_operator_kind<false, true>(label, exec, t, g, a);
    else launch_operator_kind<false, false>(label, exec, t, g, a);
  }
}

}  // namespace tessera::fem::interp_detail
