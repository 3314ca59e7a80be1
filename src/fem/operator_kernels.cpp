// Launches of the fused mass and diffusion operators (compiled by nvcc in CUDA builds).
#include "operator_kernels.hpp"

#include <algorithm>
#include <cstdlib>

#include "tessera/core/forall.hpp"

namespace tessera::fem::interp_detail {

// Named functors (not lambdas) so that the thread limit of each kernel can be queried.
template <bool Diffusion, bool OnTheFly>
struct QuadOperator {
  Args a;
  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const { quad_operator<Diffusion, OnTheFly>(ctx, a); }
};
template <bool Diffusion, bool OnTheFly, int MaxN>
struct HexOperator {
  Args a;
  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const {
    hex_operator<Diffusion, OnTheFly, MaxN>(ctx, a);
  }
};

/// Calls v.template operator()<Functor>() with the functor type of the kernel that serves
/// (geometry, diffusion, on the fly, 1-D sizes).
template <class Visit>
auto with_operator_kernel(Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1, const Visit& v) {
  static const bool generic = [] {  // TESSERA_OPERATOR_GENERIC=1: the run-time-size kernel only (for comparisons)
    const char* e = std::getenv("TESSERA_OPERATOR_GENERIC");
    return e && e[0] == '1';
  }();
  const int n = generic ? 1 << 20 : std::max(nd1, nq1);
  const auto pick = [&]<bool D, bool O>() {
    if (g == Geometry::Quadrilateral) return v.template operator()<QuadOperator<D, O>>();
    if (n <= 6) return v.template operator()<HexOperator<D, O, 6>>();    // p <= 4 with q = p + 2
    if (n <= 10) return v.template operator()<HexOperator<D, O, 10>>();  // p <= 8
    return v.template operator()<HexOperator<D, O, 0>>();
  };
  if (diffusion) return on_the_fly ? pick.template operator()<true, true>() : pick.template operator()<true, false>();
  return on_the_fly ? pick.template operator()<false, true>() : pick.template operator()<false, false>();
}

void launch_operator(const char* label, const Exec& exec, const Teams& t, Geometry g, bool diffusion, const Args& a) {
  with_operator_kernel(g, diffusion, a.on_the_fly, a.nd1, a.nq1, [&]<class K>() {
    launch(label, exec, t, K{a});
    return 0;
  });
}

int operator_max_threads(const Exec& exec, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1) {
  return with_operator_kernel(g, diffusion, on_the_fly, nd1, nq1,
                              [&]<class K>() { return team_max_threads<K>(exec); });
}

}  // namespace tessera::fem::interp_detail
