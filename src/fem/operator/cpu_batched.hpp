#pragma once
// The fused mass and diffusion operators for the CPU backends (serial, OpenMP): simd::lanes
// elements side by side, one per SIMD lane; sum factorization on quadrilaterals and hexahedra,
// dense tables on triangles and tetrahedra, the orders as run-time values; geometry stored per point, or once per element where
// the element map is affine (one packed factor) or axis-aligned (its diagonal); the scatter
// without atomics (each thread's elements whose nodes no other thread touches, then the rest
// in colours). Host code only (operator/cpu_batched.cpp), built by H1Operator for a part
// whose exec is a CPU backend (docs/dev/operator-kernels.md, "CPU kernels").

#include <cstdint>
#include <vector>

#include "cpu_indices.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/core/macros.hpp"

namespace tessera::fem::cpu_detail {

/// How an element's operator factor is stored (per batch of simd::lanes elements).
enum class FactorStorage : std::uint8_t {
  Points,   ///< at every point: w det J (mass) or the packed w det J J^-1 J^-T (diffusion)
  Element,  ///< once per element (affine map): det J or the packed det J J^-1 J^-T; w_q per point
  Diagonal,  ///< once per element, diffusion on axis-aligned affine elements: the diagonal only
  Vertices   ///< on-the-fly geometry: the first-order map's monomial coefficients, J at each point
};

/// What the batched operator reads from its part (host arrays, used during construction only).
struct BatchedInput {
  bool tensor = true;             // quadrilaterals, hexahedra (sum factorization); else triangles, tetrahedra
  int dim = 3;                    // 2 or 3
  int comps = 1;                  // field components (each gets the operator)
  int n1 = 0, m1 = 0;             // nodes and points per direction
  index_t ne = 0, nn = 0;         // elements; global nodes per component
  const int* idx = nullptr;       // (ne, n1^dim): global node of each local (lexicographic) node
  const double* B = nullptr;      // (n1, m1): B[i m1 + q] = phi_i(x_q)
  const double* D = nullptr;      // (m1, m1): D[a m1 + r] = l_r'(x_a) on the 1-D points
  // simplices (tensor = false): nd nodes and nq points per element, dense tables
  int nd = 0, nq = 0;
  const double* Bs = nullptr;     // (nq, nd): phi_i(x_q)
  const double* Gs = nullptr;     // (nq, nd, dim): d phi_i / d xi_d (x_q)
  const double* weights = nullptr;  // (m1^dim) the rule's weights (compressed elements)
  bool nodal = false;             // the points are the nodes (B = I)
  bool diffusion = false;
  const double* qdata = nullptr;  // (ne, NF, m1^dim): NF = 1 (mass) or dim (dim + 1) / 2 (diffusion)
  /// (ne, NF) or nullptr: the element's factor without the weight where its map is affine,
  /// with element_affine[e] != 0 (then qdata's entries are weights[q] times it).
  const double* element_factor = nullptr;
  const std::uint8_t* element_affine = nullptr;
  /// On-the-fly geometry (quadrilaterals, hexahedra): (ne, 2^dim, dim) the first-order
  /// vertices, vertex v at the reference corner corner[v], and the m1 1-D points. Elements whose
  /// map is affine (element_affine) take their per-element factor instead; simplices always do.
  bool on_the_fly = false;
  const double* vertices = nullptr;
  int corner[8][3] = {};
  const double* points = nullptr;
  /// the contractions of sizes 2..9 unrolled at compile time (OperatorKernelChoice::exact);
  /// false: the run-time loops at every size (comparisons)
  bool fixed_sizes = true;
  /// colours of the shared batches (1..64); batches that find them all taken run last, on one thread
  int max_colours = 64;
};

class BatchedOperator {
 public:
  /// Lays out the geometry and the indices by batches for exec's threads (Serial: one;
  /// OpenMP: openmp_threads()). compress: store the factor once per element in the batches
  /// whose elements are all affine (on-the-fly geometry: always, since that factor is what
  /// every point would compute).
  BatchedOperator(const BatchedInput& in, const Exec& exec, bool compress);
  /// y += A x on global vectors (comps blocks of nn entries), host memory.
  void apply_add(const double* x, double* y) const;
  /// y = A x without a zero fill before: each batch stores where it meets a node first (in the
  /// order the batches run) and adds elsewhere. Only where covers_every_node().
  void apply(const double* x, double* y) const;
  /// Every global node is met by some batch (apply writes every entry of y).
  bool covers_every_node() const { return covers_; }
  /// d += diag(A) (comps blocks of nn entries), by sum factorization of the squared basis
  /// functions against the stored factors (no geometric factors recomputed).
  void diagonal_add(double* d) const;
  /// Elements per batch (simd::lanes of the translation unit that runs the kernels).
  static int lanes();
  /// Elements whose factor is stored per element (Element or Diagonal).
  index_t compressed_elements() const { return compressed_; }
  /// Bytes of the stored geometry (factors, weights) and of the batched indices.
  std::size_t geometry_bytes() const { return geo_.size() * sizeof(double); }
  std::size_t index_bytes() const { return ix_.bytes(); }
  /// Threads, batches that run without any other thread touching their nodes, and colours
  /// (each a set of batches without shared nodes, at most 64; batches that find all 64 taken
  /// around them run last, on one thread) for the rest.
  int threads() const { return threads_; }
  index_t batches() const { return nb_; }
  index_t interior_batches() const;
  index_t last_batches() const { return index_t(last_.size()); }
  int colours() const { return static_cast<int>(colour_.size()); }
  /// Share of the (batch, local node) accesses that are one vector load or store (consecutive ids).
  double vector_access_share() const;

 private:
  bool tensor_;
  int dim_, comps_, n1_, m1_, nd_, nq_, nf_, threads_ = 1;
  std::vector<double> Bs_, Bst_, Gs_, Gst_;      // simplices: (nq, nd), (nd, nq), (dim, nq, nd), (dim, nd, nq)
  index_t ne_, nn_, nb_;
  bool nodal_, diffusion_, fixed_;
  std::vector<double> Bf_, Bb_, Df_, Db_, w_;  // forward (m x n), back (n x m), D (m x m), D^T, weights
  std::vector<double> x1_;                     // the 1-D points (on-the-fly geometry)
  std::vector<double> eo_[4];                  // even and odd parts of Bf, Bb, Df, Db where mirror-symmetric
  int sign_[4] = {};                           // their mirror symmetry: 1, -1, or 0 (none)
  // Diffusion on axis-aligned elements (FactorStorage::Diagonal) as a sum of Kronecker
  // products: K = D^T diag(c) D (m x m, c the 1-D weights over the first one), and for each
  // direction a the weight of the point with its a-th coordinate set to the first point
  // (dim, nq); empty where the rule has no weights
  std::vector<double> K_, Keo_, wp_;
  int Ksign_ = 0;
  BatchIndices ix_;                            // (nb, nd, lanes); padded lanes repeat the last element
  std::vector<double> geo_;                    // per batch, at offset_[b]
  std::vector<std::size_t> offset_;
  std::vector<FactorStorage> storage_;
  std::vector<std::vector<index_t>> interior_;  // per thread
  std::vector<std::vector<index_t>> colour_;    // batches of each colour
  std::vector<index_t> last_;                   // shared batches past 64 colours: run by one thread, last
  index_t compressed_ = 0;

  bool covers_ = false;
  template <int Dim, bool Store>
  void run_batch(index_t b, const double* x, double* y, void* work) const;
  template <bool Store>
  void run_simplex_batch(index_t b, const double* x, double* y, void* work) const;
  template <bool Store>
  void run_all(const double* x, double* y) const;
  void mark_first_touches();  // ix_.first and covers_, from the batch lists
  template <class F>
  void each_batch(const F& run) const;  // run(b, work) over every batch, threads as apply_add
};

}  // namespace tessera::fem::cpu_detail

#include <functional>
#include <memory>

namespace tessera::fem {
class Mesh;
class ElementRestriction;
struct QuadratureRule;
struct GeometricFactors;
enum class Geometry;
}  // namespace tessera::fem

namespace tessera::fem::cpu_detail {

/// One factor per element where the element's map is affine (operator/cpu_setup.cpp): det J
/// for mass, the packed det J J^-1 J^-T for diffusion, without the rule's weight, into factor
/// (ne, nf), with affine[e] = 1 for those elements (the first-order straight-sided elements
/// whose Jacobian is the same at every corner to 1e-14 relative; every straight-sided simplex).
/// Returns how many of them have det J > 0. Curved and embedded meshes: empty, 0. Used by the
/// batched kernel and by H1Operator's compressed geometry for the team kernels.
index_t affine_element_factors(const Mesh& mesh, const ElementRestriction& r, Geometry g, bool diffusion,
                               std::vector<double>& factor, std::vector<std::uint8_t>& affine);

/// The batched operator of a part of H1Operator (operator/cpu_setup.cpp): stored factors from
/// `factors` (wdetJ for mass, D for diffusion, host; called only when some element is not
/// compressed, or is inverted) on the elements of restriction r (geometry g, order
/// p, a tensor-product rule); compress: per-element factors where the element's map is affine
/// (first-order straight-sided element whose Jacobian is the same at every corner to 1e-14
/// relative, every straight-sided simplex; not on curved meshes or where the space dimension
/// exceeds the element's). nullptr
/// when exec is not a CPU backend. Simplices of a straight-sided mesh are affine.
/// on_the_fly: no stored factors (factors is not called); every affine element takes its
/// per-element factor, the others their first-order map's coefficients (J at each point);
/// nullptr on curved or embedded meshes, where on-the-fly geometry is refused elsewhere.
std::shared_ptr<const BatchedOperator> make_batched(const Mesh& mesh, const ElementRestriction& r, Geometry g, int p,
                                                    const QuadratureRule& rule, bool diffusion,
                                                    const std::function<GeometricFactors()>& factors, const Exec& exec,
                                                    bool compress, bool fixed_sizes, int max_colours = 64,
                                                    bool on_the_fly = false);

}  // namespace tessera::fem::cpu_detail
