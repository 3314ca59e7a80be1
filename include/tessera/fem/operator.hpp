#pragma once
/// \file operator.hpp
/// Matrix-free mass and diffusion operators of an H1Space, their diagonals, and a Jacobi-
/// preconditioned conjugate-gradient solver (linalg::pcg_jacobi) with Dirichlet conditions by
/// elimination.
///
///     tessera::fem::H1Operator A(space, OperatorKind::Diffusion, exec);   // q = p + 2 Gauss
///     A.apply(x.cview(), y.view());                                     // y = A x (global vectors)
///     auto d = A.diagonal();                                            // for Jacobi
///
/// Every geometry uses one fused kernel per apply (gather, interpolation, the factor w det J
/// (mass) or D = w det J J^-1 J^-T (diffusion), the transpose and an atomic scatter-add):
/// sum-factorized on quadrilaterals and hexahedra, dense tables on triangles and tetrahedra
/// (up to 4 elements sharing each table read). With OperatorOptions::fused = false, or on
/// simplices on the GPU where one element's point data does not fit shared memory, the
/// interpolation kernels (interpolate.hpp) are composed instead: values or gradients at the
/// points, the point-wise product, the transpose scatter-added into y (three launches, point
/// data through memory).
///
/// Geometry (OperatorOptions::geometry): Stored reads the factors computed at construction
/// (1 number per point for mass, dim (dim + 1) / 2 for diffusion); OnTheFly recomputes them in
/// the fused kernels from the element's vertices (first-order map), reading 8 vertices per
/// hexahedron instead of 6 numbers per point (simplices: J is constant, computed once per
/// element). The composed path with OnTheFly computes J^-1 in the interpolation kernels from
/// the vertices and reads only w det J (1 number per point). OnTheFly is for straight-sided
/// meshes: on a curved mesh (Mesh::has_nodes) the constructor throws; Stored factors of a
/// curved mesh are those of its order-k map, and on simplices the default degree grows by
/// dim (k - 1) (det J's degree) so that the mass matrix stays exact.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/array.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/fem/fused_operator.hpp"
#include "tessera/fem/geometric_factors.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/interpolate.hpp"
#include "tessera/fem/quadrature.hpp"
#include "tessera/linalg/krylov.hpp"

namespace tessera::fem {

namespace cpu_detail {
class BatchedOperator;
}

/// Which bilinear form an H1Operator applies (each component of a vector field separately).
enum class OperatorKind {
  Mass,      ///< (u, v)
  Diffusion  ///< (grad u, grad v)
};
/// "mass" or "diffusion".
const char* name(OperatorKind k);

/// Options of an H1Operator.
struct OperatorOptions {
  /// Quadrature degree; -1: q = p + 2 Gauss points per direction (degree 2p + 3), or with
  /// Gauss–Lobatto q = p + 1 points (degree 2p - 1, the nodes of the basis: "collocated");
  /// on meshes of triangles and tetrahedra only, degree 2p (exact on affine simplices).
  int degree = -1;
  QuadratureType quadrature = QuadratureType::Gauss;
  /// Where the geometric factors come from (see the file comment).
  GeometrySource geometry = GeometrySource::Stored;
  /// One kernel per apply instead of the three-launch composition (see the file comment).
  bool fused = true;
  /// Triangles and tetrahedra, fused: where the kernel reads its table (B for mass, G for
  /// diffusion). Auto: shared memory on the GPU up to 48 KB, else device memory.
  TableMemory simplex_tables = TableMemory::Auto;
  /// Fused kernels: elements per block; 0 = the tuning cache's choice (`tessera tune
  /// operators`), else about 256 threads per block, reduced to fit shared memory.
  int elements_per_block = 0;
  /// Fused kernels: elements each thread group processes one after the other, prefetching
  /// the next one's gather (FusedOperatorOptions::elements_per_item); 0 = the tuning cache's
  /// choice where `tessera tune operators` made one, else 512 / nodes in 1..8 (on hexahedra on
  /// the GPU: stored diffusion at most 2 with p <= 3, 1 with Gauss points at p = 4, 1 for one
  /// component with Gauss-Lobatto points at p = 4, 5 (then 2 elements per block); on the fly
  /// with Gauss points and one component 2 from p = 6, for diffusion up to p = 8).
  int elements_per_item = 0;
  /// The fused kernels that may serve (the plan's by default; for comparisons, see
  /// OperatorKernelChoice::from_environment).
  OperatorKernelChoice kernels{};
  /// Quadrilaterals and hexahedra with stored geometry: store the factor once per element (det
  /// J, or det J J^-1 J^-T; on the CPU its diagonal on axis-aligned elements) where the
  /// element's map is affine, instead of at every point (the same operator up to rounding;
  /// 6 numbers instead of 6 q^3 per hexahedron). CPU backends: per element, in the batched
  /// kernel. GPU (the team kernels): where every element of the mesh is affine and the kernel
  /// reads them (Gauss points at p = 1..10; Gauss-Lobatto points: diffusion at p = 1..11 but
  /// several components at p = 3, 4; FusedOperator::reads_element_factors).
  /// Curved meshes and distorted elements keep the per-point factors.
  bool compress_geometry = true;
};

class H1Operator;

namespace operator_detail {
/// H1Operator::diagonal() by the element-by-element loop over every point and table entry
/// (O(nd nq dim^2) per element) on every geometry, also on quadrilaterals and hexahedra, where
/// diagonal() sum-factorizes: the reference of the tests.
Array<double, 1> naive_diagonal(const H1Operator& A);
}  // namespace operator_detail

/// A matrix-free operator on the global vectors of an H1Space (see the file comment).
class H1Operator {
 public:
  /// The operator of `kind` on every element of space.mesh() (elements whose dimension is the
  /// mesh's). Throws tessera::Error when the rule is too small to integrate the operator
  /// exactly on affine elements (mass: degree < 2p; diffusion: degree < 2p - 2), or an element
  /// is inverted.
  H1Operator(const H1Space& space, OperatorKind kind, Exec exec, const OperatorOptions& options);
  /// The same with a Gauss rule of `degree` (-1: q = p + 2), stored geometry, `fused` as in
  /// OperatorOptions.
  H1Operator(const H1Space& space, OperatorKind kind, Exec exec = Exec::best(), int degree = -1,
             bool fused = true);

  OperatorKind kind() const { return kind_; }
  const Exec& exec() const { return exec_; }
  /// Number of rows: space.num_dofs().
  index_t size() const { return n_; }
  /// Quadrature degree used.
  int degree() const { return degree_; }
  const OperatorOptions& options() const { return opt_; }

  /// y = A x (y overwritten); global vectors of size() entries in exec's memory space.
  void apply(View<const double, 1> x, View<double, 1> y) const;
  /// Element-level apply (CEED's "BK" problems): ye = A_e xe on every element, for E-vectors
  /// (elements, components, nodes per element) in exec's space (ye overwritten; no gather or
  /// scatter). Meshes of one element type, with the fused kernels.
  void apply_element(View<const double, 3> xe, View<double, 3> ye) const;
  /// Fused kernels (the first fused part; 0 / "" without one): the
  /// elements per block and per item an apply (element = false) or apply_element uses and
  /// where each choice came from ("option", "tuning cache", "heuristic"; per item also "one
  /// thread per element"), the largest elements per block that fits, and the tuning-cache
  /// key. set_elements_per_block(0) and set_elements_per_item(0) return to the automatic
  /// choices; a new elements per item also resets the automatic elements per block.
  int elements_per_block(bool element = false, std::string* source = nullptr) const;
  int elements_per_item(bool element = false, std::string* source = nullptr) const;
  int max_elements_per_block(bool element = false) const;
  std::string tuning_key(bool element = false) const;
  void set_elements_per_block(int epb);
  void set_elements_per_item(int k);
  /// How the CPU backends run this operator: the element-batched kernel (serial and OpenMP,
  /// every geometry, stored or on-the-fly geometry, OperatorKernelChoice::cpu_batched) and
  /// what it stores. All zero where no part runs it (GPU, cpu_batched = false).
  struct CpuKernelInfo {
    index_t batched_elements = 0;     ///< elements run by the batched kernel
    int lanes = 0;                    ///< elements per batch (the SIMD width in doubles)
    index_t compressed_elements = 0;  ///< of those, elements with one factor instead of one per point
    /// the geometry it reads: factors, and on the fly the first-order maps' coefficients
    /// (2^dim dim per element) of the elements that are not affine
    std::size_t geometry_bytes = 0;
    /// the node ids it reads: the starts of the runs of consecutive ids, the other ids one by one
    std::size_t index_bytes = 0;
    int threads = 0;                  ///< threads it runs on
    index_t shared_batches = 0;       ///< batches that share nodes with another thread's (run in colours)
    int colours = 0;                  ///< colours of those batches
    /// share of the gathers and scatters (per batch and local node) that are one vector access,
    /// or two where the lanes' ids are two runs of consecutive ids (NodeOrdering::Interleaved,
    /// the CPU's default numbering, on structured meshes)
    double vector_access_share = 0;
  };
  CpuKernelInfo cpu_kernel() const;
  /// Elements whose stored geometry is one factor per element instead of one per point
  /// (compress_geometry): the batched CPU kernel's affine elements, and on the team kernels
  /// (the GPU) every element of a part whose elements are all affine and whose kernel reads
  /// them (FusedOperator::reads_element_factors). 0 on the fly and on curved meshes.
  index_t compressed_elements() const;
  /// The diagonal of A (computed element by element, not assembled): on quadrilaterals and
  /// hexahedra by sum factorization (per pair of directions a <= b, D_ab at the points
  /// contracted with products of the 1-D value and derivative tables, one direction at a
  /// time), on triangles and tetrahedra from the basis tables at every point.
  Array<double, 1> diagonal() const;

 private:
  friend Array<double, 1> operator_detail::naive_diagonal(const H1Operator& A);
  Array<double, 1> diagonal(bool sum_factorized) const;

  struct Part {
    /// The fused kernel's operator (fused parts), else the interpolator of the composed path.
    std::optional<FusedOperator> op;
    std::optional<Interpolator> interp;
    QuadratureRule rule;
    mutable GeometricFactors gf;  // what apply reads: none (fused, on the fly), wdetJ or D
    Array<double, 2> B;  // (nq, nd) basis values at the points (exec's space), for the diagonal
    Array<double, 3> G;  // (nq, nd, dim) reference gradients
    mutable QuadratureData qd;
    /// CPU backends: the element-batched kernel (operator/cpu_batched.hpp) that apply runs
    /// instead of the fused team kernel; then gf is released, and filled again by the first
    /// apply_element (which the batched kernel does not serve).
    std::shared_ptr<const cpu_detail::BatchedOperator> batched;
    /// The team kernels with compressed geometry (OperatorOptions::compress_geometry): one factor
    /// per element, (ne, nf) in exec's space, where every element is affine; gf stays empty then
    /// (filled by the first apply_element, which reads the per-point factors).
    Array<double, 1> element_factors;
    /// The fused kernel's launch plans (global apply, element by element), made at the first
    /// apply of each kind and kept until the elements per item or block change.
    mutable std::optional<OperatorPlan> plan, element_plan;
    void forget_plans() {
      plan.reset();
      element_plan.reset();
    }
    bool fused() const { return op.has_value(); }
    const ElementRestriction& restriction() const { return op ? op->restriction() : interp->restriction(); }
    int order() const { return op ? op->order() : interp->order(); }
  };
  /// part's plan of that kind, made now if it has none.
  const OperatorPlan& plan_of(const Part& part, bool element) const;
  OperatorKind kind_;
  Exec exec_;
  OperatorOptions opt_;
  const Mesh* mesh_ = nullptr;
  int degree_ = 0;
  index_t n_ = 0;
  index_t exclusive_from_ = 0;  // the space's exclusive_from()
  int comps_ = 1;
  bool store_exclusive_ = false;  // apply stores the nodes of one element and skips their fill (see the constructor)
  std::vector<Part> parts_;
};

/// Elements per SIMD vector of the CPU's batched operator kernel (8 with AVX-512, 4 with AVX, 2
/// otherwise) and the instruction set it was compiled for (CMake's TESSERA_CPU_ARCH; "" for
/// the compiler's default).
int cpu_simd_lanes();
const char* cpu_arch();

/// Options and result of cg(): linalg's (see tessera/linalg/krylov.hpp).
using CgOptions = linalg::CgOptions;
using CgResult = linalg::CgResult;

/// Jacobi-preconditioned conjugate gradients for A x = b, A symmetric positive definite,
/// applied by `apply(x, y)`; `inv_diag` holds 1 / diag(A). x is the initial guess and the
/// result. All vectors in exec's memory space. Does not throw on non-convergence: check
/// CgResult::converged. Throws tessera::Error naming the iteration and the value when the
/// iteration breaks down (p^T A p <= 0: the operator is not symmetric positive definite).
/// A wrapper of linalg::pcg_jacobi (the same iterates), which reports a breakdown in
/// CgResult instead of throwing.
CgResult cg(const std::function<void(View<const double, 1>, View<double, 1>)>& apply,
            View<const double, 1> inv_diag, View<const double, 1> b, View<double, 1> x, const Exec& exec,
            const CgOptions& options = {});

/// Dirichlet conditions by elimination: the operator x -> A (P x) + (I - P) x, where P zeroes
/// the constrained entries (sorted dof list), is symmetric positive definite on the whole
/// vector when A is on the free entries. constrained_apply runs it; eliminate_rhs turns b into
/// b_free - A_fc x_c on the free entries and x_c on the constrained ones, for the prescribed
/// values held in x's constrained entries.
class Constrained {
 public:
  Constrained(const H1Operator& A, const std::vector<index_t>& constrained_dofs);
  void apply(View<const double, 1> x, View<double, 1> y) const;
  /// apply for an x that is zero on the constrained entries (not checked): A x with y's
  /// constrained entries set to 0, without apply's copy of x (16 bytes per entry less).
  void apply_homogeneous(View<const double, 1> x, View<double, 1> y) const;
  /// Solves the constrained system for the right-hand side b and the prescribed values in
  /// x_bc's constrained entries by Jacobi CG on the homogeneous system: d = b - A x_bc' on the
  /// free entries and 0 on the constrained ones (x_bc' = x_bc there, 0 elsewhere), CG for
  /// the correction from 0 (its directions stay 0 on the constrained entries: apply_homogeneous
  /// serves), then x = x_bc' + correction. x is the result (its input is not used); the
  /// relative residual is that of the homogeneous system. inv_diag: inverse_diagonal() computed
  /// ahead (empty: computed here).
  CgResult solve(View<const double, 1> b, View<const double, 1> x_bc, View<double, 1> x,
                 const CgOptions& options = {}, View<const double, 1> inv_diag = {}) const;
  /// The same with the preconditioner M (e.g. Multigrid::preconditioner(); it receives vectors
  /// that are 0 on the constrained entries and must return such vectors) and linalg::pcg.
  /// Throws tessera::Error naming the quantity when CG breaks down.
  CgResult solve(View<const double, 1> b, View<const double, 1> x_bc, View<double, 1> x, const CgOptions& options,
                 const linalg::LinearOperator& M) const;
  /// Right-hand side of the constrained system for the values in x_bc (constrained entries).
  void eliminate_rhs(View<const double, 1> b, View<const double, 1> x_bc, View<double, 1> out) const;
  /// 1 / diagonal with 1 on the constrained entries.
  Array<double, 1> inverse_diagonal() const;

 private:
  const H1Operator* A_;
  Array<index_t, 1> dofs_;
  mutable Array<double, 1> tmp_;
};

}  // namespace tessera::fem
