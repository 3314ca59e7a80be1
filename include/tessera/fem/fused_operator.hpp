#pragma once
/// \file fused_operator.hpp
/// The fused mass or diffusion operator of one geometry's elements: y += A x in one launch
/// (gather, interpolation to the quadrature points, the point-wise factor, the transpose and
/// the scatter-add), or element by element (E-vectors in and out), on every backend.
///
///     tessera::fem::FusedOperator op(space, Geometry::Hexahedron, rule, exec);
///     const auto plan = op.plan(/*diffusion=*/true, /*on_the_fly=*/false, /*element=*/false);
///     op.apply(plan, gf.D.data(), x.cview(), y.view());   // y += A x, D at the rule's points
///
/// The object owns what the kernels read (the 1-D or dense basis tables, the vertex
/// coordinates and the rule's weights for on-the-fly geometry), the run-time rules of a launch
/// (elements per item and per block, threads, shared memory: `plan`) and the launches.
/// H1Operator holds one per fused geometry part and keeps its plans.
/// docs/dev/operator-kernels.md describes the kernels and how the plan chooses.

#include <array>
#include <memory>
#include <string>

#include "tessera/fem/interpolate.hpp"

namespace tessera::fem {

/// How FusedOperator::apply writes the global vector: every entry added to (Add), or the
/// entries of the nodes one element uses alone (H1Space::exclusive_from() on) stored and the
/// others added (StoreExclusive; no atomics and no zero fill needed for the former).
enum class OperatorScatter { Add, StoreExclusive };

/// How a fused operator is launched, as FusedOperator::plan chose it from every run-time rule
/// (kernel family, elements per item and per block, threads, shared memory): computed once per
/// operator and kept (H1Operator), so that the rules run at set-up and not at every apply.
/// docs/dev/operator-kernels.md describes the rules.
struct OperatorPlan {
  bool diffusion = false, on_the_fly = false, element = false;
  int elements_per_item = 1, elements_per_block = 1;
  std::string item_source, block_source;  ///< "option", "tuning cache", "heuristic", ...
  Dim3 threads{1, 1, 1};                  ///< threads per element
  std::size_t item_bytes = 0, common_bytes = 0;  ///< shared memory per item and per block
  bool prefetch_qdata = false;            ///< stored point data prefetched into L2 a step ahead
  bool merged_lines = false;              ///< the Gauss diffusion line kernel's merged buffers
  bool tables_shared = false;             ///< simplices: the tables in shared memory
  /// Stored geometry compressed: qdata holds one factor per element, (ne, nf) without the rule's
  /// weight (det J, or the packed det J J^-1 J^-T), where every element's map is affine; the
  /// kernel multiplies it by w_q at each point. Set by the caller (H1Operator with
  /// OperatorOptions::compress_geometry) where reads_element_factors() holds; no L2 prefetch.
  bool element_factors = false;
};

/// Options of a FusedOperator.
struct FusedOperatorOptions {
  /// Triangles and tetrahedra: where the kernel reads its table (B for mass, G for diffusion).
  /// Auto: shared memory on the GPU up to 48 KB, else device memory.
  TableMemory simplex_tables = TableMemory::Auto;
  /// Elements each group of threads processes one after the other, gathering the next one's
  /// nodal values while computing the current one (0: the tuning cache, else the kernel's rule).
  int elements_per_item = 0;
  /// Read the tuning cache (`tessera tune operators`) for the elements per item and per block.
  bool use_tuning_cache = true;
  /// The kernels that may serve (the plan's by default; for comparisons). In a CUDA build the
  /// hexahedron kernels with compile-time sizes are compiled for the GPU only: on the CPU
  /// backends (whose default path is the batched kernel, OperatorKernelChoice::cpu_batched) the
  /// team kernels then run the run-time-size kernel, as with bound = 0.
  OperatorKernelChoice kernels{};
};

/// The fused operator of the elements of one geometry of an H1Space (see the file comment).
class FusedOperator : public interp_detail::ElementBase {
 public:
  /// Set-up for the elements of geometry g of space.mesh() (which must outlive the operator)
  /// at the points of `rule` (on quadrilaterals and hexahedra a tensor-product rule). Throws
  /// tessera::Error as Interpolator's constructor does.
  FusedOperator(const H1Space& space, Geometry g, const QuadratureRule& rule, Exec exec = Exec::best(),
                FusedOperatorOptions options = {});

  // geometry(), exec(), num_elements(), nodes_per_element(), num_points(), components(), dim(),
  // space_dim(), order(), restriction(): ElementBase's
  /// The options, with the kernel choice that serves exec() (see FusedOperatorOptions::kernels).
  const FusedOperatorOptions& options() const { return opt_; }

  /// y += A x on this geometry's elements in one launch (gather, interpolation, the point-wise
  /// factor, the transpose and an atomic scatter-add): diffusion with qdata =
  /// GeometricFactors::D, or mass with qdata = GeometricFactors::wdetJ, both computed at this
  /// operator's rule. qdata = nullptr: on-the-fly geometry, the same factors recomputed in the
  /// kernel at every point from the element's vertices (first-order map; the mesh's space
  /// dimension must equal the elements'). Every geometry: triangles and tetrahedra by dense
  /// tables, up to 4 elements per item sharing each table read (fits() says whether one
  /// element's buffers fit the GPU's shared memory). epb <= 0: about 256 threads per block,
  /// reduced to fit shared memory. With OperatorScatter::StoreExclusive the entries of the
  /// nodes from H1Space::exclusive_from() on (each used by one element) are overwritten with
  /// (A x) instead: y need not be zero there. StoreExclusive needs stores_exclusive(diffusion)
  /// (throws otherwise). Plans at every call: keep a plan for repeated applies.
  void apply(bool diffusion, const double* qdata, View<const double, 1> x, View<double, 1> y, int epb = 0,
             OperatorScatter scatter = OperatorScatter::Add) const;
  /// The plan of the launch (global apply, or element by element): every run-time rule in one
  /// place; epb <= 0 the rule's elements per block. Throws when epb elements per block need
  /// more shared memory than the device has (bounded kernels).
  OperatorPlan plan(bool diffusion, bool on_the_fly, bool element, int epb = 0) const;
  /// Whether the kernel with stored data can read one factor per element
  /// (OperatorPlan::element_factors): hexahedra by the compile-time-size kernels, the
  /// one-thread-per-element kernels and the Gauss-Lobatto diffusion buckets 6 and 12, which
  /// have instances for it. On the GPU: Gauss points (q = p + 2) at p = 1..10; Gauss-Lobatto
  /// points (diffusion) at p = 1..11 except the column kernel (several components at p = 3,
  /// 4). Not the other kernels (the other buckets, the run-time-size kernel, quadrilaterals,
  /// simplices).
  bool reads_element_factors(bool diffusion) const;
  /// apply and apply_element as planned (plan.on_the_fly: qdata must be nullptr; plan.element
  /// must match the call; plan.element_factors: qdata (ne, nf), reads_element_factors must hold).
  void apply(const OperatorPlan& plan, const double* qdata, View<const double, 1> x, View<double, 1> y,
             OperatorScatter scatter = OperatorScatter::Add) const;
  void apply_element(const OperatorPlan& plan, const double* qdata, View<const double, 3> xe,
                     View<double, 3> ye) const;
  /// The same operator element by element (CEED's "BK" problems): ye = A_e xe for E-vectors
  /// (elements, components, nodes per element), ye overwritten, no gather or scatter.
  void apply_element(bool diffusion, const double* qdata, View<const double, 3> xe, View<double, 3> ye,
                     int epb = 0) const;
  /// Whether the global apply's kernel can store the nodes of one element
  /// (OperatorScatter::StoreExclusive): every fused kernel but those that always add, the
  /// one-thread-per-element ones (hexahedra at p <= 2) and the column kernel of Gauss-Lobatto
  /// diffusion with several components at p = 3.
  bool stores_exclusive(bool diffusion) const;
  /// Whether apply and apply_element can run one element per block here: always on the CPU
  /// and for quadrilaterals and hexahedra (their largest kernels keep their buffers in device
  /// memory where shared memory cannot hold them); on triangles and tetrahedra on the GPU when
  /// an element's tables-free buffers (nodal values and point data) fit the device's shared
  /// memory (tetrahedra with 3 components up to about 2000 points).
  bool fits(bool diffusion, bool on_the_fly) const;
  /// Builds what on-the-fly geometry reads (the vertex coordinates, the rule's weights) and
  /// checks the elements (throws naming an inverted one); the first on-the-fly apply does it.
  /// Nothing for stored data.
  void prepare(bool on_the_fly) const;
  void check_element_factors(const OperatorPlan& plan) const;

  /// The tuning-cache key, e.g.
  /// "operator/hexahedron/p3/q125/c1/diffusion/stored/global/rev2/kauto" ("/rev<r>": the
  /// kernels' revision, so that counts tuned for earlier kernels are not reused; "/k<n>" when
  /// the options fix the elements per item); the elements per item a call uses (the option;
  /// else the tuning cache's choice where `tessera tune operators` made one; else the kernel's
  /// rule, chunk) and the elements per block a call with epb <= 0 uses (tuning cache, else
  /// about 256 threads per block; reduced to fit), each with where it came from; the largest
  /// elements per block that fits (CPU backends: 64); the shared bytes of one block.
  std::string key(bool diffusion, bool on_the_fly, bool element) const;
  int elements_per_item(bool diffusion, bool on_the_fly, bool element, std::string* source = nullptr) const;
  int elements_per_block(bool diffusion, bool on_the_fly, bool element, std::string* source = nullptr) const;
  int max_elements_per_block(bool diffusion, bool on_the_fly, bool element = false) const;
  std::size_t shared_bytes(bool diffusion, bool on_the_fly, int epb, bool element = false) const;
  /// Fixes the elements per item of every later call (FusedOperatorOptions::elements_per_item;
  /// 0: automatic again) and forgets the choices made so far.
  void set_elements_per_item(int k);

 private:
  void run(const OperatorPlan& plan, const double* qdata, const double* x, double* y,
           OperatorScatter scatter = OperatorScatter::Add) const;
  /// The kernel's threads per element and shared memory (per element, common) for a launch of
  /// epb elements per block (the one-thread-per-element kernel's common rows grow with it).
  Dim3 shape(bool diffusion, bool on_the_fly, bool element, std::size_t* item, std::size_t* common, int epb = 1) const;
  /// The kernels' rule for the elements per item where neither the option nor the tuning cache
  /// sets it: default_elements_per_item, except on hexahedra on the GPU: stored diffusion at
  /// most 2 with p <= 3 (1 with Gauss points at bound 6: gauss_diffusion_at_bound6), 1 with
  /// Gauss points at p = 4, 1 with the points at the nodes at p = 4, 5
  /// (single_nodal_diffusion), stored mass at p = 3 with 5 points per direction 4, and 2 on the
  /// fly with Gauss points and scalar fields from p = 6 (diffusion up to p = 8); on triangles
  /// and tetrahedra 4 (on the GPU where the point data of 4 elements takes at most 32 KB, else 1).
  int chunk(bool diffusion, bool on_the_fly) const;
  /// The option's elements per item, else default_elements_per_item.
  int option_chunk() const {
    return opt_.elements_per_item > 0 ? opt_.elements_per_item : interp_detail::default_elements_per_item(nd_);
  }
  /// Whether the simplex kernel keeps its table (B for mass, G for diffusion) in shared memory:
  /// FusedOperatorOptions::simplex_tables, Auto: on the GPU up to 48 KB.
  bool simplex_tables_shared(bool diffusion) const;
  /// Whether the rules give stored diffusion with the points at the nodes 1 element per item
  /// and 2 per block (hexahedra on the GPU, p = 4, 5; several components at p = 4 run
  /// hex_column_nodal instead).
  bool single_nodal_diffusion(bool diffusion, bool on_the_fly) const;
  /// Whether the rules give stored diffusion with Gauss points at bound 6 (p = 3, 4 with q = p
  /// + 2; hexahedra on the GPU) 1 element per item and about 96 threads per block.
  bool gauss_diffusion_at_bound6(bool diffusion, bool on_the_fly) const;
  /// Whether the hexahedron Gauss diffusion line kernel keeps its T2 stage in buffers that are
  /// dead at the time (Args::merged_lines) instead of one of its own.
  bool merged_lines() const;

  FusedOperatorOptions opt_;
  mutable Array<double, 3> X_;   // vertex coordinates (ne, nv, sdim), on-the-fly geometry
  mutable Array<double, 1> wq_;  // the rule's weights (nq), on-the-fly geometry and element factors
  const double* weights() const;  // wq_, filled at the first call
  mutable std::array<int, 8> epb_{};  // by (diffusion, on the fly, element)
  mutable std::array<std::string, 8> epb_source_;
  mutable std::array<int, 8> k_{};    // elements per item, by the same
  mutable std::array<std::string, 8> k_source_;
};

}  // namespace tessera::fem
