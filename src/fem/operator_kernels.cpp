// Launches of the fused mass and diffusion operators (compiled by nvcc in CUDA builds).
#include "operator_kernels.hpp"

#include "tessera/core/forall.hpp"

namespace tessera::fem::interp_detail {

void launch_operator(const char* label, const Exec& exec, const Teams& t, Geometry g, bool diffusion, const Args& a) {
  if (g == Geometry::Quadrilateral) {
    if (diffusion) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { quad_operator<true>(ctx, a); });
    else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { quad_operator<false>(ctx, a); });
  } else {
    if (diffusion) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { hex_operator<true>(ctx, a); });
    else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { hex_operator<false>(ctx, a); });
  }
}

}  // namespace tessera::fem::interp_detail
