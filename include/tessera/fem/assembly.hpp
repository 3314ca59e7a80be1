#pragma once
/// \file assembly.hpp
/// Global sparse assembly of the bilinear forms of an H1Space into one CSR matrix, on every
/// backend, with the sparsity pattern built by kernels (no host round trip), and load vectors.
///
///     tessera::fem::H1Space space(mesh, 3);
///     tessera::fem::MatrixAssembler a(space, FormKind::Diffusion, exec);   // pattern, once
///     tessera::linalg::CsrMatrix A = a.assemble();                          // numeric fill
///     a.set_materials({{1, {.conductivity = 2.0}}});                        // new coefficients
///     a.fill(A);                                                            // same pattern, refilled
///
/// Gather–fill–scatter. The elements are grouped once by (geometry, attribute); each group
/// has one typed kernel (the *polymorphic driver*: a host-side AssemblyNode per group whose
/// execute() launches its typed functor over the group's element-matrix entries, one thread
/// per entry; on the CPU backends simd::lanes elements at a time, one per SIMD lane,
/// AssemblyOptions::cpu_batched). Dispatch::Functor instead runs one kernel over every entry of
/// every group and reaches the physics through device-side virtual calls (objects constructed
/// on the device), one call per entry: the other pattern of multiphysics codes, kept to be
/// measured against the driver. Both compute every entry with the same arithmetic (explicit
/// fused multiply-adds on the GPU), so they produce the same bits (on the CPU: the per-entry
/// driver; the batched one agrees to roundoff).
///
/// Pattern (symbolic phase, at construction). Each element-matrix entry t of a group gets the
/// key row * n + col (row, col: global DOFs), the keys are radix-sorted with the entry index
/// alongside (tessera::sort_pairs, stable), equal keys are merged into one CSR entry (columns
/// sorted within each row), and two maps are kept: entry -> CSR position (the atomic fill) and
/// CSR position -> its entries in ascending entry order (the deterministic fill). Memory: 8
/// bytes per element-matrix entry while the assembler lives (32-bit maps: one assembly holds
/// fewer than 2^31 entries), 32 more during the symbolic phase.
///
/// Numeric fill (FillMode). Atomic: every entry is computed and added to its CSR position
/// atomically, in one kernel per group. Deterministic: the entries are written to a buffer
/// (8 bytes each) and one kernel sums each CSR entry's contributions in ascending entry order:
/// the matrix is the same bits in every run and with either dispatch.
///
/// Forms (FormKind), per element attribute a Material:
/// - Mass:        density * (u, v), each component separately;
/// - Diffusion:   conductivity * (grad u, grad v), each component separately (heat conduction);
/// - Elasticity:  lambda (div u, div v) + 2 mu (eps(u), eps(v)) on a vector space with one
///   component per space dimension (isotropic linear elasticity).
/// The rule is the one H1Operator uses (default q = p + 2 Gauss points per direction, degree 2p
/// on meshes of simplices only), so an assembled mass or diffusion matrix equals the
/// matrix-free operator.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/array.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/fem/geometric_factors.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/quadrature.hpp"
#include "tessera/fem/restriction.hpp"
#include "tessera/linalg/csr.hpp"

namespace tessera::fem {

/// Which bilinear form a MatrixAssembler assembles (see the file comment).
enum class FormKind { Mass, Diffusion, Elasticity };
/// "mass", "diffusion" or "elasticity".
const char* name(FormKind k);
/// Parses "mass", "diffusion" (or "heat") and "elasticity"; throws tessera::Error otherwise.
FormKind parse_form(const std::string& s);

/// Material constants of one element attribute.
struct Material {
  double density = 1;       ///< coefficient of the mass form
  double conductivity = 1;  ///< coefficient of the diffusion (heat conduction) form
  double lambda = 1;        ///< first Lamé parameter
  double mu = 1;            ///< shear modulus
  double expansion = 0;     ///< thermal expansion coefficient alpha (thermal_expansion_load)
};
/// Materials by element attribute. An empty table means Material{} for every attribute; a
/// non-empty one must name every attribute of the mesh.
using MaterialTable = std::map<int, Material>;

/// How the numeric fill sums the element-matrix entries (see the file comment).
enum class FillMode {
  Deterministic,  ///< buffered entries summed in a fixed order: bitwise reproducible
  Atomic,         ///< computed and added atomically in one kernel per group
  Auto            ///< Atomic on the GPU, Deterministic on the CPU
};
/// "deterministic", "atomic" or "auto".
const char* name(FillMode m);

/// How the fill reaches the physics of each group (see the file comment).
enum class Dispatch {
  Driver,  ///< one typed kernel per (geometry, attribute) group, launched by a host virtual call
  Functor  ///< one kernel over all groups, device-side virtual calls per entry (for comparison)
};
/// "driver" or "functor".
const char* name(Dispatch d);

/// Options of a MatrixAssembler.
struct AssemblyOptions {
  /// Quadrature degree; -1: H1Operator's default for the mesh (see OperatorOptions::degree).
  int degree = -1;
  QuadratureType quadrature = QuadratureType::Gauss;
  FillMode fill = FillMode::Auto;
  Dispatch dispatch = Dispatch::Driver;
  /// CPU backends (serial, OpenMP) with Dispatch::Driver: each group's node fills simd::lanes
  /// elements at a time, one per SIMD lane, row by row of the element matrix (a small matrix
  /// product per row); false: the per-entry kernel of the GPU, one entry at a time (comparisons;
  /// `TESSERA_CPU_BATCHED=0` in `tessera bench assembly` and `tessera assemble`).
  bool cpu_batched = true;
};

/// Timings of the last symbolic phase and fill, milliseconds (host clock around
/// synchronized kernels).
struct AssemblyTimings {
  double symbolic_ms = 0;  ///< keys, sort, merge, maps (construction)
  double fill_ms = 0;      ///< the last fill()
};

/// One uniform launch of the fill: the elements of one geometry with one attribute.
struct AssemblyGroup {
  Geometry geometry;
  int attribute = 0;
  index_t num_elements = 0;
  int nodes_per_element = 0;
  index_t entries_per_element = 0;  ///< element-matrix entries (all component blocks)
  index_t first_entry = 0;          ///< index of the group's first entry among all entries
};

/// Host interface of the polymorphic driver: one implementation per (group, form), holding
/// its launch range and its typed functor. execute() launches the group's fill kernel.
class AssemblyNode {
 public:
  virtual ~AssemblyNode() = default;
  /// Computes the group's entries and writes them to `entries` (deterministic: at the entry
  /// index) or adds them to `values` at the entry's CSR position (atomic: `pos` given).
  virtual void execute(View<double, 1> entries, View<const std::int32_t, 1> pos, View<double, 1> values) const = 0;
  /// The group this node fills.
  virtual const AssemblyGroup& group() const = 0;
};

/// Assembles one bilinear form of an H1Space into a CSR matrix (see the file comment).
class MatrixAssembler {
 public:
  /// Groups the elements, computes the geometric factors and basis tables, and builds the
  /// sparsity pattern on exec's backend. Throws tessera::Error when: the mesh has no element
  /// of its dimension; an attribute has no entry in a non-empty `materials`; Elasticity is
  /// asked for a space whose components differ from the mesh dimension; the rule does not
  /// integrate the form exactly on affine elements; the matrix would have more than 2^31 - 1
  /// rows or columns, or more entries than 64-bit offsets hold; or memory runs out (the
  /// message names the bytes asked for).
  MatrixAssembler(const H1Space& space, FormKind kind, Exec exec = Exec::best(), const MaterialTable& materials = {},
                  const AssemblyOptions& options = {});
  ~MatrixAssembler();
  MatrixAssembler(MatrixAssembler&&) noexcept;
  MatrixAssembler& operator=(MatrixAssembler&&) noexcept;

  /// A new matrix with this pattern, filled.
  linalg::CsrMatrix assemble() const;
  /// Refills A's values (A must have this assembler's pattern: made by assemble()).
  void fill(linalg::CsrMatrix& A) const;
  /// New material constants for the next fill (same groups and pattern).
  void set_materials(const MaterialTable& materials);
  /// Changes the fill mode or the dispatch of the next fills.
  void set_fill_mode(FillMode m);
  void set_dispatch(Dispatch d);
  FillMode fill_mode() const;  ///< never Auto: the mode the fills use
  Dispatch dispatch() const;

  FormKind kind() const;
  const Exec& exec() const;
  int degree() const;                  ///< quadrature degree used
  index_t size() const;                ///< rows = columns = space.num_dofs()
  std::int64_t nnz() const;            ///< non-zeros of the pattern
  std::int64_t num_entries() const;    ///< element-matrix entries summed into them
  const std::vector<AssemblyGroup>& groups() const;
  const AssemblyTimings& timings() const;
  /// CSR structure of the pattern (exec's space): row offsets (size() + 1), columns (nnz()).
  const Array<std::int64_t, 1>& row_offsets() const;
  const Array<int, 1>& col_indices() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// Dirichlet conditions by symmetric elimination on an assembled matrix, consistent with the
/// matrix-free Constrained: for the constrained DOFs (sorted, unique) the rows and columns of A
/// become those of the identity, b becomes b - A_fc x_c on the free entries and x_c on the
/// constrained ones (x_bc holds the prescribed values at the constrained entries; its other
/// entries are not read). A's pattern is kept (eliminated entries hold 0). All arrays in A's
/// memory space.
void eliminate_dirichlet(linalg::CsrMatrix& A, View<const index_t, 1> constrained, View<const double, 1> x_bc,
                         View<double, 1> b);

/// Points and weights of the quadrature used for load vectors: the elements of one geometry,
/// in restriction order.
struct LoadPoints {
  Geometry geometry;
  index_t num_elements = 0;
  int num_points = 0;
  Array<double, 3> x;       ///< (ne, nq, 3) physical coordinates (unused coordinates 0), exec's space
  Array<int, 1> attribute;  ///< (ne) element attribute, exec's space
};

/// Load vectors (linear forms) of an H1Space: b_(c, i) = sum over elements and points of
/// f_c(x_q) phi_i(x_q) w_q det J(x_q), for f given at the quadrature points.
///
///     tessera::fem::LoadAssembler L(space, exec);
///     auto f = L.allocate_source();                      // f[part](e, c, q), zero
///     // ... fill f from L.points(part).x (a kernel or host loop) ...
///     tessera::Array<double, 1> b = L.assemble(f);
class LoadAssembler {
 public:
  /// The rule as MatrixAssembler's (options.degree, options.quadrature); the physical points
  /// are computed by a kernel on exec's backend.
  LoadAssembler(const H1Space& space, Exec exec = Exec::best(), const AssemblyOptions& options = {});
  ~LoadAssembler();
  LoadAssembler(LoadAssembler&&) noexcept;
  LoadAssembler& operator=(LoadAssembler&&) noexcept;

  /// One part per geometry of the mesh's dimension.
  int num_parts() const;
  const LoadPoints& points(int part) const;
  /// Source arrays (ne, components, nq) per part, zero, in exec's space.
  std::vector<Array<double, 3>> allocate_source() const;
  /// The load vector (space.num_dofs() entries, exec's space) of the given source values.
  Array<double, 1> assemble(const std::vector<Array<double, 3>>& source) const;
  /// The thermal-expansion load of linear elasticity, b_(c, i) = sum_q (3 lambda + 2 mu) alpha
  /// T(x_q) d phi_i / d x_c (x_q) w_q det J, for the temperature T (a global vector of
  /// `t_space`, a scalar space on the same mesh; exec's space) and the materials of each
  /// element attribute. This space must be a vector space with one component per dimension.
  Array<double, 1> thermal_expansion_load(const H1Space& t_space, View<const double, 1> T,
                                          const MaterialTable& materials) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// Elements per batch of the CPU backends' batched fill (AssemblyOptions::cpu_batched): the SIMD
/// width in doubles of the instruction set the library's CPU kernels were built for.
int assembly_fill_lanes();

/// Material of attribute `a`: table.at(a), Material{} for an empty table; throws
/// tessera::Error naming the attribute and the table's attributes when it has no entry.
Material material_of(const MaterialTable& table, int a);

}  // namespace tessera::fem
