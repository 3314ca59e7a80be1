#pragma once
/// \file interpolate.hpp
/// Values and gradients of a finite-element field at the quadrature points of every element
/// of one geometry (interpolation), and the transpose (integration of point values and
/// gradients back to element degrees of freedom), on every backend.
///
///     tessera::fem::H1Space space(mesh, 3, 1);
///     auto rule = tessera::fem::quadrature(Geometry::Hexahedron, 2 * 3);      // 4^3 points
///     tessera::fem::Interpolator interp(space, Geometry::Hexahedron, rule, exec);
///     auto qd = interp.allocate(Eval::Values | Eval::Gradients);
///     interp.interpolate(u.cview(), Eval::Values | Eval::Gradients, qd);   // global u -> points
///     // qd.values(e, c, 0, q), qd.gradients(e, c, r, q) = d u_c / d x_r at point q of element e
///     interp.integrate(qd, Eval::Values, ue.view());                      // points -> E-vector
///
/// One kernel per family, for every order: the order p and the number of points are run-time
/// arguments. The gather from the global vector is fused into the interpolation kernel. Each
/// kernel is a team launch (core/team.hpp) that processes several elements per block with
/// shared memory sized at launch:
/// - quadrilaterals and hexahedra: sum factorization with the 1-D tables of the GLL basis at
///   the rule's 1-D points (the rule must be a tensor-product rule, as quadrature() returns);
///   threads (T, T) per element, T = max(p + 1, points per direction); hexahedra loop over z
///   ((2, 2, 2) threads at T = 2);
/// - triangles and tetrahedra: dense tables B(i, q) and G(d, i, q) (a small matrix product
///   per element); threads over the points (at most 32 by default).
/// In the forward kernels each group of threads walks `elements_per_item` elements one after
/// the other and copies the next element's nodal values into shared memory (cp.async on the
/// GPU) while it computes the current one: at low order the kernels are latency-bound.
/// On the CPU backends (serial, OpenMP) interpolate and integrate run element-batched kernels
/// instead (InterpolatorOptions::kernels.cpu_batched, default true): simd::lanes elements side by side,
/// one per SIMD lane, with the contractions of the CPU's batched operator (sum factorization or
/// dense tables), J^-1 on the fly for all lanes at once; elements per block and per item do
/// not apply there. cpu_batched = false runs the team kernels (comparisons).
///
/// Output layout (QuadLayout): the quadrature point is always the fastest index.
/// `ElementMajor` (default): (element, component, derivative, point), the layout of
/// GeometricFactors, so that a point-wise operator reads both with the same index.
/// `ComponentMajor`: (component, derivative, element, point): each component (and
/// derivative) is one contiguous array over all points of all elements.
///
/// Physical gradients du/dx = J^-T du/dxi use the element map of the mesh's vertices
/// (geometric_factors.hpp). `GeometrySource::OnTheFly` (default) computes J and J^-1 at each
/// point inside the kernel from the element's vertex coordinates (dim x vertices doubles per
/// element); `GeometrySource::Stored` reads J^-1 precomputed by geometric_factors (dim x
/// space_dim doubles per point). On a curved mesh (Mesh::has_nodes) the Interpolator always
/// reads stored J^-1 of the curved map, whatever the option says. Physical gradients need
/// elements whose dimension equals the mesh's space dimension.
///
/// Elements per block (elements a block works on at the same time): the option when given; otherwise the
/// tuning cache (tuning.hpp, written by `tessera tune interpolate`) for this device and
/// kernel; otherwise a heuristic (interpolation_heuristic_epb). A choice whose shared memory
/// exceeds the device's limit is reduced until it fits; when even one element per block does
/// not fit, the call throws tessera::Error naming the sizes.

#include <algorithm>
#include <array>
#include <memory>
#include <string>

#include "tessera/core/array.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/core/team.hpp"
#include "tessera/fem/geometric_factors.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/quadrature.hpp"
#include "tessera/fem/restriction.hpp"

namespace tessera::fem {

namespace interp_detail {
struct Args;
struct ElementTables;
/// The sizes of one geometry's elements of a space at a rule's points, as Interpolator and
/// FusedOperator hold them (their members keep these names; make_tables fills them).
struct ElementSizes {
  Geometry geom_ = Geometry::Triangle;
  int p_ = 1, dim_ = 0, sdim_ = 0, comps_ = 1, nd_ = 0, nq_ = 0, nd1_ = 0, nq1_ = 0, nv_ = 0;
  index_t ne_ = 0, nn_ = 0;
  index_t exclusive_from_ = 0;     // H1Space::exclusive_from
  bool tensor_ = false;
  bool nodal_points_ = false;      // tensor: the 1-D points are the nodes (B = I)
  bool mirror_symmetric_ = false;  // tensor: B and D mirror-symmetric (the hexahedron line kernels need it)
};
/// What Interpolator and FusedOperator share: the elements of geometry g of a space (whose mesh
/// must outlive them) at a rule's points, their restriction and the kernels' tables
/// (make_tables, src/fem/element_tables.hpp). Throws naming `who` as make_tables does.
class ElementBase : protected ElementSizes {
 public:
  Geometry geometry() const { return geom_; }
  const Exec& exec() const { return exec_; }
  index_t num_elements() const { return ne_; }
  int nodes_per_element() const { return nd_; }
  int num_points() const { return nq_; }
  int components() const { return comps_; }
  int dim() const { return dim_; }
  int space_dim() const { return sdim_; }
  int order() const { return p_; }
  /// The restriction whose index map the kernels read.
  const ElementRestriction& restriction() const { return restr_; }

 protected:
  ElementBase(const char* who, const H1Space& space, Geometry g, const QuadratureRule& rule, const Exec& exec);
  Exec exec_;
  ElementRestriction restr_;
  const Mesh* mesh_ = nullptr;
  std::shared_ptr<const ElementTables> tables_;
};
/// Elements per item of the forward and operator kernels where nothing sets them: 512 / nodes
/// per element in 1..8 (8 up to p = 3 hexahedra; large elements keep their index maps in shared
/// memory small).
constexpr int default_elements_per_item(int nd) { return nd >= 512 ? 1 : std::min(8, 512 / nd); }
}
namespace cpu_detail {
class BatchedInterpolator;
}

/// What is evaluated at the quadrature points (a bit set; combine with `|`).
enum class Eval : unsigned {
  None = 0,
  Values = 1u << 0,              ///< u_c at the points
  ReferenceGradients = 1u << 1,  ///< d u_c / d xi_d (reference coordinates)
  Gradients = 1u << 2,           ///< d u_c / d x_r (physical coordinates, isoparametric map)
};
constexpr Eval operator|(Eval a, Eval b) { return static_cast<Eval>(static_cast<unsigned>(a) | static_cast<unsigned>(b)); }
constexpr Eval operator&(Eval a, Eval b) { return static_cast<Eval>(static_cast<unsigned>(a) & static_cast<unsigned>(b)); }
/// True when `set` contains every flag of `f` (and f is not None).
constexpr bool has(Eval set, Eval f) { return f != Eval::None && (set & f) == f; }
/// "values", "reference-gradients", "gradients", or names joined with '+'.
std::string name(Eval e);
/// Parses "values", "reference-gradients" (or "ref-grad"), "gradients" (or "grad"), joined
/// with '+'; throws tessera::Error naming the bad word.
Eval parse_eval(const std::string& s);

/// Layout of the arrays at quadrature points (see the file comment).
enum class QuadLayout {
  ElementMajor,   ///< (element, component, derivative, point)
  ComponentMajor  ///< (component, derivative, element, point)
};
/// "element-major" or "component-major".
const char* name(QuadLayout l);

/// Where physical gradients take J^-1 from (see the file comment).
enum class GeometrySource {
  OnTheFly,  ///< computed in the kernel from the element's vertices
  Stored     ///< read from geometric factors computed at construction
};
/// "on-the-fly" or "stored".
const char* name(GeometrySource s);

/// Where the simplex kernels read their basis tables from.
enum class TableMemory {
  Auto,    ///< shared memory when the tables fit in 48 KB, else global memory
  Shared,  ///< copied to shared memory by every block
  Global   ///< read from global memory (cached in L1/L2)
};

/// Which fused operator kernels may serve (FusedOperator, H1Operator), for
/// comparisons and experiments. The defaults are the kernels the plan picks for each case
/// (docs/dev/operator-kernels.md); library objects never read the environment themselves.
struct OperatorKernelChoice {
  /// Hexahedra: -1 the plan's kernel; 0 the run-time-size kernel at every order; b > 0 the
  /// bounded kernel of the smallest bucket (4, 6, ..., 16) of at least b. Either value >= 0 also
  /// turns off the one-thread-per-element, column and compile-time-size kernels.
  int bound = -1;
  /// Hexahedra: the compile-time-size line kernels where the plan picks them (false: their
  /// bucket's bounded kernel instead); on the CPU's batched kernels, the contractions of
  /// sizes 2..9 unrolled at compile time (false: run-time loops at every size).
  bool exact = true;
  /// Hexahedron mass by small matrix products on the tensor cores (at most 16 nodes and points
  /// per direction; opt-in: slower than the line kernels where measured).
  bool matmul = false;
  /// Triangles and tetrahedra on the GPU: threads per item (0: the rule; at most 128 and the
  /// whole warps of the nodes or points; applies past 32 nodes or points).
  int simplex_threads = 0;
  /// CPU backends (serial, OpenMP): H1Operator (stored geometry) and Interpolator::interpolate
  /// and integrate run element-batched kernels (simd::lanes elements side by side, one per
  /// lane; the operator's scatter without atomics; no elements per block); false: the team
  /// kernels, one element at a time (comparisons).
  bool cpu_batched = true;
  /// The defaults, overridden by the environment variables that are set:
  /// TESSERA_OPERATOR_BOUND=b (bound), TESSERA_OPERATOR_EXACT=0 (exact = false),
  /// TESSERA_OPERATOR_MATMUL=1 (matmul), TESSERA_SIMPLEX_THREADS=t (simplex_threads), TESSERA_CPU_BATCHED=0
  /// (cpu_batched = false). `tessera
  /// bench`, `tessera tune` and `tessera poisson` start from it, so that scripts can compare
  /// kernels without code changes. Throws tessera::Error on a value that is not a number in range.
  static OperatorKernelChoice from_environment();
};

/// Options of an Interpolator.
struct InterpolatorOptions {
  QuadLayout layout = QuadLayout::ElementMajor;
  GeometrySource geometry = GeometrySource::OnTheFly;
  /// Triangles and tetrahedra: where the dense basis tables are read from.
  TableMemory simplex_tables = TableMemory::Auto;
  /// Elements per block of every launch; 0 = tuning cache, else the heuristic.
  int elements_per_block = 0;
  /// Read the tuning cache (tuning.hpp) when elements_per_block is 0.
  bool use_tuning_cache = true;
  /// Forward kernels: elements each group of threads processes one after the other, gathering
  /// the next one's nodal values while computing the current one (0: 512 / nodes per element,
  /// clamped to 1..8; 8 was the fastest of 1, 4, 8 on the H200 up to p = 3, and 8 slowed
  /// hexahedra of p = 8 from 23% to 15% of the copy bandwidth).
  int elements_per_item = 0;
  /// Triangles and tetrahedra: threads per element (0: max(nodes, points) up to 32; more
  /// points or nodes than threads loop). Fewer threads per element put more elements, and so
  /// more gathers, in flight per SM.
  int threads_per_element = 0;
  /// On the CPU, the interpolation's kernels: kernels.cpu_batched (default true) runs interpolate
  /// and integrate element-batched, kernels.exact = false with run-time contraction loops (the
  /// fused operators read the same choice from FusedOperatorOptions::kernels).
  OperatorKernelChoice kernels{};
};

/// Fields at quadrature points. Each array has rank 4 with the extents of `layout`:
/// ElementMajor (ne, components, K, nq), ComponentMajor (components, K, ne, nq), where K is 1
/// for values, dim for reference gradients and space_dim for gradients. Arrays not asked
/// for are empty.
struct QuadratureData {
  QuadLayout layout = QuadLayout::ElementMajor;
  Array<double, 4> values;
  Array<double, 4> reference_gradients;
  Array<double, 4> gradients;
};

/// Which kernel of the interpolation family a launch runs (for tuning keys and reports).
struct InterpolationKernel {
  Geometry geom = Geometry::Triangle;
  int order = 1;       ///< p
  int points_1d = 0;   ///< tensor: points per direction; simplex: 0
  int points = 0;      ///< points per element
  int components = 1;
  Eval what = Eval::Values;
  bool transpose = false;
  QuadLayout layout = QuadLayout::ElementMajor;
  GeometrySource geometry = GeometrySource::OnTheFly;
  int threads_per_element = 0;  ///< simplices: InterpolatorOptions::threads_per_element
  int elements_per_item = 1;    ///< forward kernels: elements processed one after the other

  /// Tuning-cache key, e.g. "interpolate/hexahedron/p3/q64/c1/values+gradients/element-major/on-the-fly".
  std::string key() const;
};

/// The elements per block the heuristic chooses for a kernel (no device query): enough
/// elements for about 256 threads per block, at most 32 (2-D) or 16 (3-D).
int interpolation_heuristic_epb(const InterpolationKernel& k);

/// Interpolation of the fields of an H1Space at the points of a rule on the elements of one
/// geometry, and its transpose (see the file comment).
class Interpolator : public interp_detail::ElementBase {
 public:
  /// Set-up for the elements of geometry g of space.mesh() (which must outlive the
  /// interpolator) (mesh.elements_of(g) order, the
  /// order of ElementRestriction) at the points of `rule` (a rule on g; on quadrilaterals and
  /// hexahedra a tensor-product rule). Throws tessera::Error when the rule is not on g, a
  /// tensor rule is not a tensor product, or the mesh has no element of geometry g.
  Interpolator(const H1Space& space, Geometry g, const QuadratureRule& rule, Exec exec = Exec::best(),
               InterpolatorOptions options = {});

  // geometry(), exec(), num_elements(), nodes_per_element(), num_points(), components(), dim(),
  // space_dim(), order(), restriction() (whose scatter_add integrate_add uses): ElementBase's
  const InterpolatorOptions& options() const { return opt_; }
  /// Whether interpolate and integrate run the CPU's element-batched kernels (a CPU backend and
  /// InterpolatorOptions::kernels.cpu_batched) rather than the team kernels.
  bool cpu_batched() const { return !exec_.on_device() && opt_.kernels.cpu_batched; }

  /// Arrays (uninitialised) in exec's space for the flags of `what`.
  QuadratureData allocate(Eval what) const;

  /// out.<kind> = the interpolation of the global vector u (components * num_nodes entries,
  /// component-major, readable by exec's backend) for each kind in `what`: one launch.
  void interpolate(View<const double, 1> u, Eval what, QuadratureData& out) const;

  /// The transpose: e_out(k, c, i) = sum over the kinds in `what` and the points q of
  /// (d phi_i)(x_q) * in.<kind>(...) — the adjoint of interpolate without the gather, into
  /// an E-vector of extents (num_elements, components, nodes_per_element) (overwritten).
  /// For Gradients it is the adjoint of the physical gradient: J^-1 applied before the
  /// reference-gradient transpose. One launch.
  void integrate(const QuadratureData& in, Eval what, View<double, 3> e_out) const;

  /// integrate followed by the restriction's scatter-add into the global vector y (+=).
  void integrate_add(const QuadratureData& in, Eval what, View<double, 1> y) const;

  /// The elements per block a launch of this kind uses (after the shared-memory fit).
  int elements_per_block(Eval what, bool transpose = false) const;
  /// Where that choice came from: "option", "tuning cache" or "heuristic".
  std::string elements_per_block_source(Eval what, bool transpose = false) const;
  /// Describes a launch (for keys and reports).
  InterpolationKernel kernel(Eval what, bool transpose = false) const;
  /// Bytes of shared memory one block uses with `epb` elements per block.
  std::size_t shared_bytes(Eval what, bool transpose, int epb) const;

  /// Runs interpolate (transpose = false) or integrate with a fixed number of elements per
  /// block, for sweeps (throws when it does not fit).
  void interpolate_with(int epb, View<const double, 1> u, Eval what, QuadratureData& out) const;
  void integrate_with(int epb, const QuadratureData& in, Eval what, View<double, 3> e_out) const;

  /// Largest elements per block that fits the device's shared memory and thread limits
  /// (CPU backends: 64).
  int max_elements_per_block(Eval what, bool transpose) const;

  /// Fixes the elements per item of every later forward launch (InterpolatorOptions::
  /// elements_per_item; 0: automatic again) and forgets the elements per block chosen so far.
  void set_elements_per_item(int k);

 private:
  void check_what(Eval what, const char* where) const;
  void check_data(const QuadratureData& d, Eval what, const char* where) const;
  int choose_epb(Eval what, bool transpose, std::string* source) const;
  void run(int epb, bool transpose, Eval what, const double* u, const QuadratureData& qd, double* e_out) const;
  void ensure_geometry() const;
  void ensure_vertices() const;  // X_, checked
  void fill_args(interp_detail::Args& a) const;
  /// Elements per item of the forward kernels: the option, else default_elements_per_item.
  int chunk() const {
    return opt_.elements_per_item > 0 ? opt_.elements_per_item : interp_detail::default_elements_per_item(nd_);
  }
  bool tables_in_shared(Eval what) const;
  std::size_t shared_bytes_parts(bool transpose, Eval what, std::size_t* common) const;

  InterpolatorOptions opt_;
  mutable Array<double, 3> X_;     // vertex coordinates (ne, nv, sdim), on-the-fly physical gradients
  mutable Array<double, 4> Jinv_;  // stored (ne, dim, sdim, nq)
  mutable Array<double, 3> scratch_;  // E-vector for integrate_add
  mutable std::shared_ptr<const cpu_detail::BatchedInterpolator> cpu_;  // built at the first batched call
  mutable std::array<int, 16> epb_cache_{};          // chosen elements per block, by (what, transpose)
  mutable std::array<std::string, 16> epb_source_;   // where each choice came from
};

/// Convenience: interpolation of u on the elements of geometry g of `space` at the points of
/// `rule` into `out` (allocated when its arrays are empty). Builds an Interpolator each call;
/// keep one for repeated use.
void interpolate(const H1Space& space, Geometry g, View<const double, 1> u, const QuadratureRule& rule, Eval what,
                 QuadratureData& out, Exec exec = Exec::best());

}  // namespace tessera::fem
