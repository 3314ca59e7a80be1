// Launches of the fused mass and diffusion operators (compiled by nvcc in CUDA builds).
#include "kernels.hpp"

#include <algorithm>

#include "tessera/core/forall.hpp"

namespace tessera::fem::interp_detail {

// Named functors (not lambdas) so that the thread limit of each kernel can be queried.
// The run-time-size kernels (QuadOperator, HexOperator<..., 0>) may keep their element
// buffers in device memory where shared memory cannot hold them (operator_may_spill).
// The hexahedron kernels with sizes or bounds fixed at compile time are gpu_only (core/team.hpp):
// in CUDA builds they are compiled for the GPU alone, and the CPU backends' team path runs the
// run-time-size kernel (operator_choice_for); builds without CUDA run them on the CPU.
template <bool Diffusion, bool OnTheFly>
struct QuadOperator {
  static constexpr bool items_may_spill = true;
  Args a;
  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const { quad_operator<Diffusion, OnTheFly>(ctx, a); }
};
/// ElementFactors: stored diffusion by lines with the points at the nodes reading one factor
/// per element (bounds 6 and 12; with_operator_kernel).
template <bool Diffusion, bool OnTheFly, int MaxN, bool Nodal = false, bool ElementFactors = false>
struct HexOperator {
  using Policy = HexPolicy<Diffusion, OnTheFly, MaxN, Nodal>;
  static_assert(!ElementFactors || (Policy::lines && Diffusion && Nodal && !OnTheFly));
  static constexpr int max_registers = Policy::max_registers;
  static constexpr bool items_may_spill = MaxN == 0, gpu_only = MaxN > 0, element_factors = ElementFactors;
  Args a;
  /// The line kernel's 1-D tables (launch_operator fills them), in the kernel's parameters
  struct NoTables {};
  [[no_unique_address]] std::conditional_t<Policy::lines, LineTables<MaxN>, NoTables> t{};
  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const {
    if constexpr (Policy::lines && Diffusion) hex_diffusion_lines<OnTheFly, MaxN, Nodal, 0, 0, ElementFactors>(ctx, a, t);
    else if constexpr (Policy::lines) hex_mass_lines<OnTheFly, MaxN>(ctx, a, t);
    else if constexpr (MaxN == 0) hex_operator_runtime<Diffusion, OnTheFly>(ctx, a);
    else hex_operator<Diffusion, OnTheFly, MaxN, Nodal>(ctx, a);
  }
};

/// Hexahedron mass by small matrix products (hex_mass_matmul), MaxK = 8 or 16: two warps per
/// element on the GPU.
template <bool OnTheFly, int MaxK>
struct HexMassMatmul {
  static constexpr bool matmul = true, gpu_only = true;
  Args a;
  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const { hex_mass_matmul<OnTheFly, MaxK>(ctx, a); }
};

/// Hexahedra with N nodes and at most N + 1 points per direction (hex_thread_element): one
/// thread per element. ElementFactors: stored data of one factor per element (the global
/// apply on affine meshes; with_operator_kernel).
template <int N, bool Diffusion, bool OnTheFly, bool ElementFactors = false>
struct HexThreadElement {
  static constexpr bool thread_element = true, stages_evector = false, bulk = false, gpu_only = true,
                        element_factors = ElementFactors;
  static constexpr int global_block = 0;
  Args a;
  ThreadElementTables<N> t{};  // launch_operator fills them
  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const {
    hex_thread_element<N, Diffusion, OnTheFly, ElementFactors>(ctx, a, t);
  }
};
/// Diffusion with the points at the nodes, N nodes per direction (hex_thread_element_nodal):
/// one thread per element (N = 2, 3: p = 1, 2).
/// Stored data in a bulk copy at N = 3 only: its rows of 162 doubles are 2-way bank-
/// conflicted, those of 48 at N = 2 would be 16-way.
/// ElementFactors as HexThreadElement's (no bulk copy for 6 doubles per element).
template <int N, bool OnTheFly, bool ElementFactors = false>
struct HexThreadElementNodal {
  static constexpr bool thread_element = true, stages_evector = true, bulk = !OnTheFly && !ElementFactors && N == 3,
                        gpu_only = true, element_factors = ElementFactors;
  // on the fly at N = 3: 256. H100, 8M DOFs, two rounds against the rule's 64: BP5 1.06x, BP6
  // 1.11x; not element by element (BK5 1.07x, BK6 0.96x); 256 for the other on-the-fly thread
  // kernels lost (p = 2 mass BP1 0.98x, p = 1 0.84-0.93x) (docs/benchmarks/operators.md)
  static constexpr int global_block = OnTheFly && N == 3 ? 256 : 0;
  Args a;
  ThreadElementTables<N> t{};  // launch_operator fills them
  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const {
    hex_thread_element_nodal<N, OnTheFly, stages_evector, bulk, ElementFactors>(ctx, a, t);
  }
};

/// Diffusion with the points at the nodes at p = 3, 4 (N = 4, 5), several components: on the
/// GPU one element per half warp or warp (hex_column_nodal, no shared memory); on the CPU the
/// kernel of the bound (4: point columns, 6: lines), whose shapes (Policy) FusedOperator::
/// shape keeps there. Uncapped (218-244 registers, no spills): capped at 128, two
/// earlier forms of it ran BP6 p = 3 0.64-1.09x of uncapped (below 1 in 9 of 10 cases), at 96
/// and 80 0.36-0.76x (H100, docs/benchmarks/operators.md).
template <int N, bool OnTheFly>
struct HexColumnNodal {
  static constexpr int bound = N <= 4 ? 4 : 6;
  using Policy = HexPolicy<true, OnTheFly, bound, true>;
  static constexpr bool column_tables = true, gpu_only = true;
  static constexpr int max_registers = 0;
  Args a;
  ThreadElementTables<N> t{};  // launch_operator fills them
  struct NoTables {};
  /// the CPU's line kernel's tables (bound 6), which launch_operator fills
  [[no_unique_address]] std::conditional_t<Policy::lines, LineTables<bound>, NoTables> lt{};
  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const {
#if defined(TESSERA_DEVICE_CODE)
    hex_column_nodal<N, OnTheFly>(ctx, a, t);
#else
    if constexpr (Policy::lines) hex_diffusion_lines<OnTheFly, bound, true>(ctx, a, lt);
    else hex_operator<true, OnTheFly, bound, true>(ctx, a);
#endif
  }
};

/// Triangles (Dim = 2) and tetrahedra (Dim = 3): simplex_operator, dense tables.
template <bool Diffusion, bool OnTheFly, int Dim>
struct SimplexOperator {
  Args a;
  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const { simplex_operator<Diffusion, OnTheFly, Dim>(ctx, a); }
};

OperatorKernelChoice operator_choice_for(const OperatorKernelChoice& choice, const Exec& exec) {
  if (exec.on_device() || team_runs_on_cpu<HexOperator<true, false, 8>>()) return choice;
  OperatorKernelChoice c = choice;  // a CUDA build on a CPU backend: the kernels that run there
  c.bound = 0;
  c.matmul = false;
  return c;
}

bool operator_exact_sizes(const OperatorKernelChoice& choice, Geometry g, bool diffusion, int nd1, int nq1, bool nodal) {
  if (g != Geometry::Hexahedron || choice.bound >= 0 || !choice.exact || operator_matmul(choice, g, diffusion, nd1, nq1))
    return false;
  // H200, 8M DOFs, same run against the bound's kernels (two rounds; docs/benchmarks/
  // operators.md): q = p + 2, mass at p = 3..6 BP1 stored 1.10-1.17x, on the fly 1.11-1.22x,
  // BP2 1.12-1.24x; diffusion at p = 2..6 BP3 stored 1.00-1.16x, on the fly 1.06-1.13x, BP4
  // 1.02-1.14x; at p = 7..10 BP1 stored 1.09-1.26x, on the fly 0.99-1.27x, BP2 1.06-1.32x,
  // BP3 stored 1.12-1.26x, on the fly 1.12-1.18x, BP4 1.11-1.31x
  if (nq1 == nd1 + 1 && !nodal) return nd1 >= (diffusion ? 3 : 4) && nd1 <= 11;
  // the points at the nodes at p = 6..10: BP5 stored 1.18x, 1.03x, 1.07x, 1.03x at p = 6..9,
  // on the fly 1.04-1.15x at p = 6..10, BP6 1.00-1.11x. Stored at p = 5 (BP5 0.96x) and
  // p = 10 (BP5 0.95x, BP6 0.97x) see operator_exact_here.
  // p = 4 (stored 0.99x without a skew) with its items skewed by 9 doubles
  // (diffusion_lines_skew): H200, 8M DOFs, three rounds against the bound-6 kernel, BP5 on the
  // fly 20.2 -> 23.5 GDOF/s (1.17x), stored 0.92x (operator_exact_here keeps the bound's
  // kernel there); BP6 runs the column kernel. p = 5: on the fly BP5 and BP6 1.04x, stored
  // 1.00x (kept off there too); CPU (2 cores, 2e5 DOFs) p = 4 1.02-1.13x, p = 5 1.13-1.67x
  // p = 3, by lines where the bound-4 kernel runs point columns: H200, 8M DOFs, three rounds
  // against it, BP5 stored 1.07x, on the fly 1.05x (with the elements per item of then; BP6
  // keeps the column kernel, operator_exact_here); CPU (2 cores, 2e5 DOFs) 1.66x and 1.17x
  return diffusion && nodal && nq1 == nd1 && nd1 >= 4 && nd1 <= 11;
}

namespace {
/// Whether exec runs the compile-time-size kernel for these sizes: operator_exact_sizes, except
/// - on the CPU, stored Gauss diffusion at p <= 5, where it ran 0.80-0.98x of the bound's
///   kernel (OpenMP, 2 cores, 2e5 DOFs, two rounds: BP3 p = 2..5; on the fly 0.92x at p = 2 and
///   1.25-1.33x at p = 3..5; at p = 7..10 every problem 1.15-2.4x; docs/benchmarks/operators.md);
/// - on the GPU, stored Gauss-Lobatto diffusion at p = 4, 5 and 10 (H200: BP5 0.92x at p = 4,
///   0.96x at p = 5, where on the fly gained 1.17x and 1.04x; at p = 10 BP5 0.95x, BP6 0.97x, on
///   the fly 1.15x and 1.06x), so only on the fly takes those;
/// - wherever a kernel that with_operator_kernel picks ahead of the bound's serves: the column
///   kernel for several components with the points at the nodes at p = 3, 4 (the
///   thread-per-element kernels and the matrix products serve no size of operator_exact_sizes).
bool operator_exact_here(const OperatorKernelChoice& choice, const Exec& exec, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1,
                         bool nodal, int comps) {
  if (!operator_exact_sizes(choice, g, diffusion, nd1, nq1, nodal) || operator_columns(choice, g, diffusion, nd1, nq1, nodal, comps))
    return false;
  if (exec.on_device()) return !(nodal && !on_the_fly && (nd1 == 5 || nd1 == 6 || nd1 == 11));
  return !(diffusion && !on_the_fly && !nodal && nd1 <= 6);
}
}  // namespace

bool operator_matmul(const OperatorKernelChoice& choice, Geometry g, bool diffusion, int nd1, int nq1) {
  return choice.matmul && g == Geometry::Hexahedron && !diffusion && std::max(nd1, nq1) <= 16;
}

bool operator_thread_element(const OperatorKernelChoice& choice, Geometry g, bool diffusion, int nd1, int nq1, bool nodal, bool element) {
  if (g != Geometry::Hexahedron || choice.bound >= 0 || operator_matmul(choice, g, diffusion, nd1, nq1)) return false;
  // p = 1. At p = 2 with Gauss points the general kernel serves mass in the global apply only
  // (below); for diffusion its 255 registers and spills made BP3 0.57x and BP5 on the fly 0.30x
  // (H100, docs/benchmarks/operators.md)
  if (nd1 == 2) return nq1 >= 2 && nq1 <= 3;
  // p = 2 mass with at most 4 points per direction in the global apply. H100, 8M DOFs, same
  // run against the line kernel: with the interleaved numbering (the default at p = 2) BP1
  // stored 1.38x, on the fly 1.46x, BP2 2.18x, 1.73x; with first touch BP1 0.95x, 1.09x, BP2
  // 1.03x, 1.16x. Element by element the E-vectors, read and written with a stride of one
  // element per thread, made it 0.70-0.94x (docs/benchmarks/operators.md)
  if (nd1 == 3 && !diffusion && !element) return nq1 >= 2 && nq1 <= 4;
  // p = 2, diffusion with the points at the nodes: hex_thread_element_nodal (with_operator_kernel
  // also gives it p = 1 diffusion at the nodes). H100, same run against the bound-4 point-column
  // kernel (8M DOFs): BP5 stored 1.12x, on the fly 1.74x, BP6 1.28x, 1.85x, BK5 1.04x, 2.02x,
  // BK6 1.02x, 2.16x; the stored data's bulk copy then BK5 1.15x, BK6 1.30x, BP5 1.01x, BP6
  // 0.98x more. At p = 1 against hex_thread_element: BP5 stored 1.07x, on the fly 2.44x, BP6
  // 1.18x, 1.75x, BK5 1.00x, 2.56x, BK6 1.76x, 2.60x (docs/benchmarks/operators.md)
  return nd1 == 3 && nodal && diffusion;
}

bool operator_columns(const OperatorKernelChoice& choice, Geometry g, bool diffusion, int nd1, int nq1, bool nodal, int comps) {
  // Several components only. H100, 8M DOFs, same run against the kernels before: p = 3 (the
  // bound-4 point-column kernel) BP6 stored 1.31x, on the fly 1.58x, BK6 1.05x, 1.46x; p = 4
  // (the bound-6 line kernel) BP6 1.55x, 1.47x, BK6 1.28x, 1.40x. Scalar (BP5, p = 3) at best
  // 1.01x stored and 0.84-0.91x on the fly, with any elements per item, per block and register
  // cap (docs/benchmarks/operators.md)
  return g == Geometry::Hexahedron && diffusion && nodal && comps > 1 && (nd1 == 4 || nd1 == 5) && nq1 == nd1 &&
         choice.bound < 0 && !operator_matmul(choice, g, diffusion, nd1, nq1);
}

int operator_bound(const OperatorKernelChoice& choice, Geometry g, int nd1, int nq1) {
  if (g != Geometry::Hexahedron) return 0;
  if (choice.bound == 0) return 0;
  const int n = std::max({nd1, nq1, choice.bound});
  // bound 16 serves p = 13, 14 with q = p + 2 and p = 14, 15 with the points at the nodes:
  // against the run-time-size kernel it served them before, H200, 8M DOFs, same run: BP1
  // 3.0-6.5x, BP3 1.9-5.5x, BP5 5.0-6.4x (docs/benchmarks/operators.md)
  return hex_bound_for(n);
}

/// Calls v.template operator()<Functor>() with the one-thread-per-element functor for these
/// sizes (where operator_thread_element holds); element_factors: with stored data, the
/// instance that reads one factor per element.
template <class Visit>
auto with_thread_element_kernel(bool diffusion, bool on_the_fly, int nd1, bool nodal, bool element_factors, const Visit& v) {
  const auto stored = [&]<class PerPoint, class PerElement>() {
    return element_factors ? v.template operator()<PerElement>() : v.template operator()<PerPoint>();
  };
  if (nd1 == 3 && !diffusion)
    return on_the_fly ? v.template operator()<HexThreadElement<3, false, true>>()
                      : stored.template operator()<HexThreadElement<3, false, false>, HexThreadElement<3, false, false, true>>();
  if (nd1 == 3)
    return on_the_fly ? v.template operator()<HexThreadElementNodal<3, true>>()
                      : stored.template operator()<HexThreadElementNodal<3, false>, HexThreadElementNodal<3, false, true>>();
  if (nodal && diffusion)
    return on_the_fly ? v.template operator()<HexThreadElementNodal<2, true>>()
                      : stored.template operator()<HexThreadElementNodal<2, false>, HexThreadElementNodal<2, false, true>>();
  if (diffusion)
    return on_the_fly ? v.template operator()<HexThreadElement<2, true, true>>()
                      : stored.template operator()<HexThreadElement<2, true, false>, HexThreadElement<2, true, false, true>>();
  return on_the_fly ? v.template operator()<HexThreadElement<2, false, true>>()
                    : stored.template operator()<HexThreadElement<2, false, false>, HexThreadElement<2, false, false, true>>();
}

/// Whether functor K reads one factor per element (Args::element_factors).
template <class K>
constexpr bool kernel_reads_element_factors() {
  if constexpr (requires { K::element_factors; }) return K::element_factors;
  else return false;
}

/// Calls v.template operator()<Functor>() with the functor type of the kernel that serves
/// (geometry, diffusion, on the fly, 1-D sizes, points at the nodes). element_factors: with
/// stored data, the instance that reads one factor per element where the kernel has one (one
/// thread per element; the nodal-diffusion buckets 6 and 12), else the per-point one
/// (kernel_reads_element_factors<K> tells). Those instances keep the per-point one's shared layout,
/// so the plan's shape queries ask for the per-point type.
template <class Visit>
auto with_operator_kernel(const OperatorKernelChoice& choice, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1, bool nodal, int comps, bool element,
                          bool element_factors, const Visit& v) {
  if (g == Geometry::Triangle || g == Geometry::Tetrahedron) {
    const auto simplex = [&]<bool D, bool O>() {
      if (g == Geometry::Triangle) return v.template operator()<SimplexOperator<D, O, 2>>();
      return v.template operator()<SimplexOperator<D, O, 3>>();
    };
    if (diffusion) return on_the_fly ? simplex.template operator()<true, true>() : simplex.template operator()<true, false>();
    return on_the_fly ? simplex.template operator()<false, true>() : simplex.template operator()<false, false>();
  }
  if (operator_matmul(choice, g, diffusion, nd1, nq1)) {
    if (std::max(nd1, nq1) <= 8)
      return on_the_fly ? v.template operator()<HexMassMatmul<true, 8>>()
                        : v.template operator()<HexMassMatmul<false, 8>>();
    return on_the_fly ? v.template operator()<HexMassMatmul<true, 16>>()
                      : v.template operator()<HexMassMatmul<false, 16>>();
  }
  if (operator_thread_element(choice, g, diffusion, nd1, nq1, nodal, element))
    return with_thread_element_kernel(diffusion, on_the_fly, nd1, nodal, element_factors, v);
  if (operator_columns(choice, g, diffusion, nd1, nq1, nodal, comps)) {
    if (nd1 == 5)
      return on_the_fly ? v.template operator()<HexColumnNodal<5, true>>() : v.template operator()<HexColumnNodal<5, false>>();
    return on_the_fly ? v.template operator()<HexColumnNodal<4, true>>() : v.template operator()<HexColumnNodal<4, false>>();
  }
  const int bound = operator_bound(choice, g, nd1, nq1);
  // the buckets: p <= 2, 4, 6, 8, 10, 12, 14 with q = p + 2 (operator_bound);
  // bound 0: the run-time-size kernel
  const auto by_bound = [&]<bool D, bool O, bool Nodal>() {
    if constexpr (D && !O && Nodal)
      if (element_factors && (bound == 6 || bound == 12))
        return bound == 6 ? v.template operator()<HexOperator<D, O, 6, Nodal, true>>()
                          : v.template operator()<HexOperator<D, O, 12, Nodal, true>>();
    switch (bound) {
      case 4: return v.template operator()<HexOperator<D, O, 4, Nodal>>();
      case 6: return v.template operator()<HexOperator<D, O, 6, Nodal>>();
      case 8: return v.template operator()<HexOperator<D, O, 8, Nodal>>();
      case 10: return v.template operator()<HexOperator<D, O, 10, Nodal>>();
      case 12: return v.template operator()<HexOperator<D, O, 12, Nodal>>();
      case 14: return v.template operator()<HexOperator<D, O, 14, Nodal>>();
      case 16: return v.template operator()<HexOperator<D, O, 16, Nodal>>();
      default: return v.template operator()<HexOperator<D, O, 0>>();
    }
  };
  const auto pick = [&]<bool D, bool O>() {
    if (g == Geometry::Quadrilateral) return v.template operator()<QuadOperator<D, O>>();
    // diffusion with the points at the nodes: its own instances (the path in the Gauss kernel
    // raised its register count, 128 -> 139 at bound 8, and halved BP3's occupancy)
    if constexpr (D)
      if (nodal && bound > 0) return by_bound.template operator()<D, O, true>();
    return by_bound.template operator()<D, O, false>();
  };
  if (diffusion) return on_the_fly ? pick.template operator()<true, true>() : pick.template operator()<true, false>();
  return on_the_fly ? pick.template operator()<false, true>() : pick.template operator()<false, false>();
}

void launch_operator(const OperatorKernelChoice& choice, const char* label, const Exec& exec, const Teams& t, Geometry g, bool diffusion, const Args& a) {
  // the compile-time-size kernels (launch_exact.cpp) where operator_exact_here holds:
  // never where a kernel with_operator_kernel picks ahead of the bound's (thread per element,
  // columns, matrix products) serves; the shape queries get the bound's type (the same Policy),
  // and operator_rows the lines' layout
  if (operator_exact_here(choice, exec, g, diffusion, a.on_the_fly, a.nd1, a.nq1, a.nodal_points, a.comps)) {
    launch_operator_exact(choice, label, exec, t, diffusion, a);
    return;
  }
  with_operator_kernel(choice, g, diffusion, a.on_the_fly, a.nd1, a.nq1, a.nodal_points, a.comps, a.idx == nullptr,
                       a.element_factors, [&]<class K>() {
    K k{a};
    if constexpr (requires { K::column_tables; }) {
      fill_thread_element_tables(k.t, a);
      if constexpr (K::Policy::lines) fill_line_tables(k.lt, a);
    } else {
      if constexpr (requires { typename K::Policy; })
        if constexpr (K::Policy::lines) fill_line_tables(k.t, a);
      if constexpr (requires { K::thread_element; }) fill_thread_element_tables(k.t, a);
    }
    launch(label, exec, t, k);
    return 0;
  });
}

bool operator_may_spill(const OperatorKernelChoice& choice, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1, bool nodal_points, int comps,
                        bool element) {
  return with_operator_kernel(choice, g, diffusion, on_the_fly, nd1, nq1, nodal_points, comps, element, false,
                              [&]<class K>() { return detail::team_items_may_spill<K>(); });
}

bool operator_element_factors(const OperatorKernelChoice& choice, const Exec& exec, Geometry g, bool diffusion, int nd1,
                              int nq1, bool nodal_points, int comps) {
  // the compile-time-size kernels (HexExact), and the kernels with_operator_kernel has
  // instances for, in the global apply
  return operator_exact_here(choice, exec, g, diffusion, false, nd1, nq1, nodal_points, comps) ||
         with_operator_kernel(choice, g, diffusion, false, nd1, nq1, nodal_points, comps, false, true,
                              [&]<class K>() { return kernel_reads_element_factors<K>(); });
}

OperatorRows operator_rows(const OperatorKernelChoice& choice, const Exec& exec, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1,
                           bool nodal_points, int comps, bool element) {
  // the compile-time-size kernels run by lines, as their bound's do except at bound 4
  if (operator_exact_here(choice, exec, g, diffusion, on_the_fly, nd1, nq1, nodal_points, comps)) return OperatorRows{nq1, nd1, true, false, true};
  return with_operator_kernel(choice, g, diffusion, on_the_fly, nd1, nq1, nodal_points, comps, element, false, [&]<class K>() {
    if constexpr (requires { typename K::Policy; }) {
      using P = typename K::Policy;
      return OperatorRows{P::rows > 0 ? P::rows : nq1, P::gather_rows > 0 ? P::gather_rows : nd1, P::lines, false, false};
    } else {  // quadrilaterals, matrix products: run-time rows
      return OperatorRows{nq1, nd1, false, requires { K::matmul; }, false};
    }
  });
}

ThreadElementLayout operator_thread_element_layout(const OperatorKernelChoice& choice, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1,
                                                   bool nodal_points, int comps, bool element) {
  return with_operator_kernel(choice, g, diffusion, on_the_fly, nd1, nq1, nodal_points, comps, element, false, [&]<class K>() {
    if constexpr (requires { K::thread_element; })
      return ThreadElementLayout{K::stages_evector, K::bulk, K::global_block};
    else return ThreadElementLayout{false, false, 0};
  });
}

int operator_max_threads(const OperatorKernelChoice& choice, const Exec& exec, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1,
                         bool nodal_points, int comps, bool element) {
  if (operator_exact_here(choice, exec, g, diffusion, on_the_fly, nd1, nq1, nodal_points, comps))
    return operator_exact_max_threads(choice, exec, diffusion, on_the_fly, nd1, nq1, nodal_points);
  const auto limit = [&](bool element_factors) {
    return with_operator_kernel(choice, g, diffusion, on_the_fly, nd1, nq1, nodal_points, comps, element, element_factors,
                                [&]<class K>() { return team_max_threads<K>(exec); });
  };
  // stored, global apply: the lower of the per-point instance's and the one reading one factor
  // per element (the plan's shape serves both)
  return on_the_fly || element ? limit(false) : std::min(limit(false), limit(true));
}

}  // namespace tessera::fem::interp_detail
