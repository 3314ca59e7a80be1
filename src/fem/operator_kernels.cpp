// Launches of the fused mass and diffusion operators (compiled by nvcc in CUDA builds).
#include "operator_kernels.hpp"

#include <algorithm>
#include <cstdlib>

#include "tessera/core/forall.hpp"

namespace tessera::fem::interp_detail {

template <bool Diffusion, bool OnTheFly>
void launch_operator_kind(const char* label, const Exec& exec, const Teams& t, Geometry g, const Args& a) {
  static const bool generic = [] {  // TESSERA_OPERATOR_GENERIC=1: the run-time-size kernel only (for comparisons)
    const char* v = std::getenv("TESSERA_OPERATOR_GENERIC");
    return v && v[0] == '1';
  }();
  const int n = generic ? 1 << 20 : std::max(a.nd1, a.nq1);
  if (g == Geometry::Quadrilateral)
    launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { quad_operator<Diffusion, OnTheFly>(ctx, a); });
  else if (n <= 6)  // p <= 4 with q = p + 2
    launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { hex_operator_fixed<Diffusion, OnTheFly, 6>(ctx, a); });
  else if (n <= 10)  // p <= 8
    launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { hex_operator_fixed<Diffusion, OnTheFly, 10>(ctx, a); });
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
