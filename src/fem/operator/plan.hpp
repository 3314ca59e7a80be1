#pragma once
// Which kernel serves an operator and how it is launched: the hexahedron buckets, the families'
// applicability rules and the launch entry points (operator/launch.cpp,
// operator/launch_exact.cpp). FusedOperator::shape mirrors the layouts chosen here.

#include "common.hpp"
#include "tessera/fem/interpolate.hpp"

namespace tessera::fem::interp_detail {

/// The choice that serves exec: `choice` itself, except in a CUDA build on a CPU backend, where
/// the hexahedron kernels with compile-time sizes or bounds are not compiled for the CPU
/// (gpu_only, core/team.hpp): there bound = 0 (the run-time-size kernel) and no matrix products.
/// FusedOperator keeps this choice, so that every query below answers for the kernel that runs.
OperatorKernelChoice operator_choice_for(const OperatorKernelChoice& choice, const Exec& exec);

/// The smallest hexahedron bucket bound (4, 6, ..., 16) that holds n nodes or points per
/// direction, 0 past 16 (operator_bound without its TESSERA_OPERATOR_BOUND override).
TESSERA_HOST_DEVICE constexpr int hex_bound_for(int n) { return n <= 4 ? 4 : n <= 16 ? (n + 1) / 2 * 2 : 0; }

/// The compile-time bound on the nodes and points per direction of the hexahedron operator
/// variant that serves these sizes (4, 6, 8, 10, 12, 14 or 16), or 0 for the run-time-size variant
/// (larger sizes and quadrilaterals). For comparisons, TESSERA_OPERATOR_BOUND=0 forces the
/// run-time variant and TESSERA_OPERATOR_BOUND=b the smallest bound of at least b that fits. The
/// bounded variants run one thread per (qy, qx) point column (threads z = 1), with their own
/// shared-memory layout (FusedOperator::shape mirrors it).
int operator_bound(const OperatorKernelChoice& choice, Geometry g, int nd1, int nq1);
/// Whether the hexahedron operator for these sizes is diffusion with the points at the nodes at
/// p = 3 or 4 (4 or 5 nodes and points per direction) on a field of several components, which
/// on the GPU runs one element per half warp or warp (hex_column_nodal: no shared memory); not
/// when TESSERA_OPERATOR_BOUND is set. On the CPU the kernel of its bound serves it.
bool operator_columns(const OperatorKernelChoice& choice, Geometry g, bool diffusion, int nd1, int nq1, bool nodal, int comps);
/// Whether the hexahedron operator for these sizes runs one thread per element: p = 1 with 2
/// or 3 points per direction (hex_thread_element with N = 2; with the points at the nodes,
/// diffusion: hex_thread_element_nodal), diffusion at p = 2 with the points at the nodes
/// (hex_thread_element_nodal with N = 3) and, in the global apply (not `element`), mass at
/// p = 2 with at most 4 points per direction (hex_thread_element with N = 3); not when
/// TESSERA_OPERATOR_BOUND is set (comparisons with the bounded kernels) or the opt-in matrix
/// products are chosen. Its launches take one element per item and block-wide rows in the
/// common region (FusedOperator::shape).
bool operator_thread_element(const OperatorKernelChoice& choice, Geometry g, bool diffusion, int nd1, int nq1, bool nodal, bool element);
/// The shared rows of the one-thread-per-element kernel that launch_operator picks for these
/// sizes (operator_thread_element), as its functor declares them: whether element by element
/// it stages the E-vectors (thread_element_data's StageE) and whether its stored data may
/// arrive in a bulk copy (Bulk: an mbarrier in the common region). FusedOperator::
/// shape sizes the common region with them. global_block: the elements per block it runs
/// fastest with in the global apply where that is not FusedOperator::elements_per_block's
/// general rule (0: the rule).
struct ThreadElementLayout {
  bool stages_evector;
  bool bulk;
  int global_block;
};
ThreadElementLayout operator_thread_element_layout(const OperatorKernelChoice& choice, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1,
                                                   bool nodal_points, int comps, bool element);
/// Whether the hexahedron mass operator runs by small matrix products (hex_mass_matmul) for
/// these sizes: n1, m1 <= 16 and TESSERA_OPERATOR_MATMUL=1 (opt-in, on every backend: on the
/// H100 it ran at 0.14-0.89x of the line kernels, docs/benchmarks/operators.md).
bool operator_matmul(const OperatorKernelChoice& choice, Geometry g, bool diffusion, int nd1, int nq1);
/// Whether the hexahedron operator for these sizes runs its line kernel with the sizes fixed at
/// compile time (HexExact): q = p + 2 (n1 nodes, n1 + 1 points per direction) mass at p = 3..10
/// and diffusion at p = 2..10, and diffusion with the points at the nodes (nodal) at p = 3 and
/// 6..10; not when TESSERA_OPERATOR_BOUND is set, with the matrix products, or with
/// TESSERA_OPERATOR_EXACT=0 (comparisons). The one-thread-per-element and column kernels take
/// precedence where they serve (operator_thread_element, operator_columns). On the CPU stored
/// Gauss diffusion at p <= 5, on the GPU stored nodal diffusion at p = 10, keep the bound's
/// kernel (operator_exact_here in operator/launch.cpp).
bool operator_exact_sizes(const OperatorKernelChoice& choice, Geometry g, bool diffusion, int nd1, int nq1, bool nodal);
/// Launches the compile-time-size kernel of a.nd1, a.nq1 (operator_exact_sizes must hold), and
/// the most threads per block it can use (operator/launch_exact.cpp: its own translation unit,
/// compiled beside operator/launch.cpp). Every other query answers with the bound's kernel,
/// whose shared layout and launch shape it shares, except operator_rows: the nodal kernel at
/// p = 3 runs by lines where its bound's (4) runs point columns.
void launch_operator_exact(const OperatorKernelChoice& choice, const char* label, const Exec& exec, const Teams& t, bool diffusion, const Args& a);
int operator_exact_max_threads(const OperatorKernelChoice& choice, const Exec& exec, bool diffusion, bool on_the_fly, int nd1, int nq1, bool nodal);
/// Whether the kernel that launch_operator picks for these sizes declares items_may_spill
/// (core/team.hpp): its element buffers then go to device memory when they do not fit the
/// block's shared memory (the run-time-size kernels, above 16 nodes or points per direction:
/// diffusion from p = 15 with q = p + 2 and from p = 16 with Gauss-Lobatto points, on the GPU).
bool operator_may_spill(const OperatorKernelChoice& choice, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1, bool nodal_points, int comps,
                        bool element);
/// Whether the kernel that launch_operator picks for these sizes with stored data can read one
/// factor per element (Args::element_factors) in the global apply: the compile-time-size
/// kernels where exec runs them (operator_exact_here), the one-thread-per-element kernels and
/// the nodal-diffusion buckets 6 and 12, which have instances for it.
bool operator_element_factors(const OperatorKernelChoice& choice, const Exec& exec, Geometry g, bool diffusion, int nd1,
                              int nq1, bool nodal_points, int comps);
/// The row lengths (row_length) of the shared buffers of the kernel that launch_operator picks
/// for these sizes on exec: its point data (HexPolicy::rows, or nq1 where its rows are not padded)
/// and its gathered nodal values (HexPolicy::gather_rows, or nd1).
struct OperatorRows {
  int points;
  int gathered;
  bool lines;     // HexPolicy::lines: the kernel runs by lines (hex_mass_lines, hex_diffusion_lines), its own layout
  bool matmul;    // hex_mass_matmul, its own layout and two warps per element
  bool exact;     // the kernel with the sizes fixed at compile time (mass_lines_layout)
};
OperatorRows operator_rows(const OperatorKernelChoice& choice, const Exec& exec, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1,
                           bool nodal_points, int comps, bool element);
/// Launches the fused operator of geometry g (any of the four; triangles and tetrahedra:
/// simplex_operator); a.on_the_fly selects the geometry source.
void launch_operator(const OperatorKernelChoice& choice, const char* label, const Exec& exec, const Teams& t, Geometry g, bool diffusion, const Args& a);
/// The most threads per block the kernel that launch_operator picks for these sizes can use
/// (its register use sets it on the GPU, for both of its launches where its items may spill;
/// INT_MAX on the CPU).
int operator_max_threads(const OperatorKernelChoice& choice, const Exec& exec, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1,
                         bool nodal_points, int comps, bool element);

}  // namespace tessera::fem::interp_detail
