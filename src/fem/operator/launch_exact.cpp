// Launches of the hexahedron line kernels with their sizes fixed at compile time
// (operator_exact_sizes), in a translation unit of their own so that a parallel build compiles
// them beside launch.cpp.
#include <algorithm>

#include "kernels.hpp"
#include "tessera/core/forall.hpp"

namespace tessera::fem::interp_detail {

/// Hexahedra by lines with the nodes and points per direction fixed at compile time (N1, M1):
/// the line kernel of bound MaxN (hex_mass_lines, hex_diffusion_lines) with every stride and
/// line length a constant and no multiply-add by the tables' zero pairs. Same shared layout,
/// register cap and launch shape (Policy) as the bound's kernel; at bound 4 with the points at
/// the nodes (p = 3), whose bound's kernel runs point columns, the lines' layout (operator_rows).
/// ElementFactors: stored data of one factor per element (Args::element_factors, H1Operator's
/// compressed geometry on affine meshes); instances of their own, so that those reading
/// per-point data keep their code (a run-time switch in the diffusion kernel ran BP3 and BP5 at
/// 0.82-0.92x in several cases, H100, docs/benchmarks/operators.md).
template <bool Diffusion, bool OnTheFly, int MaxN, int N1, int M1, bool Nodal = false, bool ElementFactors = false>
struct HexExact {
  using Policy = HexPolicy<Diffusion, OnTheFly, MaxN, Nodal>;
  // the points at the nodes at p = 3 run by lines at bound 4, where the bound's kernel does not
  static_assert((Policy::lines || (Nodal && MaxN == 4)) && N1 <= MaxN && M1 <= MaxN);
  static constexpr int max_registers = Policy::max_registers;
  static constexpr bool items_may_spill = false, gpu_only = true;  // launch.cpp's note on gpu_only
  /// The threads per item in x and y that the kernel's loops assume (item_lines<true>): at
  /// least the nodes and the points per direction.
  static constexpr int line_threads = N1 > M1 ? N1 : M1;
  Args a;
  LineTables<MaxN> t{};  // launch_operator_exact fills them
  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const {
    if constexpr (Diffusion) hex_diffusion_lines<OnTheFly, MaxN, Nodal, N1, M1, ElementFactors>(ctx, a, t);
    else hex_mass_lines<OnTheFly, MaxN, N1, M1, ElementFactors>(ctx, a, t);
  }
};

namespace {
/// Calls v.template operator()<Functor>() with the HexExact of these sizes (bound
/// hex_bound_for, as operator_bound gives it); operator_exact_sizes lists them.
/// element_factors: the stored instance that reads one factor per element.
template <class Visit>
auto with_exact_kernel(bool diffusion, bool on_the_fly, int nd1, bool nodal, bool element_factors, const Visit& v) {
  const auto exact = [&]<bool D, int N1, int M1, bool Nodal = false>() {
    constexpr int MaxN = hex_bound_for(N1 > M1 ? N1 : M1);
    if (element_factors && !on_the_fly) return v.template operator()<HexExact<D, false, MaxN, N1, M1, Nodal, true>>();
    return on_the_fly ? v.template operator()<HexExact<D, true, MaxN, N1, M1, Nodal>>()
                      : v.template operator()<HexExact<D, false, MaxN, N1, M1, Nodal>>();
  };
  if (nodal) {
    switch (nd1) {
      case 4: return exact.template operator()<true, 4, 4, true>();
      case 5: return exact.template operator()<true, 5, 5, true>();
      case 6: return exact.template operator()<true, 6, 6, true>();
      case 7: return exact.template operator()<true, 7, 7, true>();
      case 8: return exact.template operator()<true, 8, 8, true>();
      case 9: return exact.template operator()<true, 9, 9, true>();
      case 10: return exact.template operator()<true, 10, 10, true>();
      default: return exact.template operator()<true, 11, 11, true>();
    }
  }
  const auto gauss = [&]<bool D>() {  // q = p + 2: n1 nodes, n1 + 1 points
    if constexpr (D)  // p = 2: diffusion only (mass runs one thread per element there)
      if (nd1 == 3) return exact.template operator()<D, 3, 4>();
    switch (nd1) {
      case 4: return exact.template operator()<D, 4, 5>();
      case 5: return exact.template operator()<D, 5, 6>();
      case 6: return exact.template operator()<D, 6, 7>();
      case 7: return exact.template operator()<D, 7, 8>();
      case 8: return exact.template operator()<D, 8, 9>();
      case 9: return exact.template operator()<D, 9, 10>();
      case 10: return exact.template operator()<D, 10, 11>();
      default: return exact.template operator()<D, 11, 12>();
    }
  };
  return diffusion ? gauss.template operator()<true>() : gauss.template operator()<false>();
}
}  // namespace

void launch_operator_exact(const OperatorKernelChoice& choice, const char* label, const Exec& exec, const Teams& t, bool diffusion, const Args& a) {
  TESSERA_REQUIRE(operator_exact_sizes(choice, Geometry::Hexahedron, diffusion, a.nd1, a.nq1, a.nodal_points),
                  "fem operator: no compile-time-size kernel for ", a.nd1, " nodes and ", a.nq1,
                  " points per direction");
  with_exact_kernel(diffusion, a.on_the_fly, a.nd1, a.nodal_points, a.element_factors, [&]<class K>() {
    TESSERA_REQUIRE(t.threads.x >= K::line_threads && t.threads.y >= K::line_threads,
                    "fem operator: the compile-time-size kernel for ", a.nd1, " nodes and ", a.nq1,
                    " points per direction needs at least ", K::line_threads, " x ", K::line_threads,
                    " threads per element; the launch gave ", t.threads.x, " x ", t.threads.y);
    K k{a};
    fill_line_tables(k.t, a);
    launch(label, exec, t, k);
    return 0;
  });
}

int operator_exact_max_threads(const OperatorKernelChoice& choice, const Exec& exec, bool diffusion, bool on_the_fly, int nd1, int nq1, bool nodal) {
  TESSERA_REQUIRE(operator_exact_sizes(choice, Geometry::Hexahedron, diffusion, nd1, nq1, nodal),
                  "fem operator: no compile-time-size kernel for ", nd1, " nodes and ", nq1, " points per direction");
  // the lower of the two stored instances' limits: the plan's shape serves both
  const auto limit = [&](bool element_factors) {
    return with_exact_kernel(diffusion, on_the_fly, nd1, nodal, element_factors,
                             [&]<class K>() { return team_max_threads<K>(exec); });
  };
  return on_the_fly ? limit(false) : std::min(limit(false), limit(true));
}

}  // namespace tessera::fem::interp_detail
