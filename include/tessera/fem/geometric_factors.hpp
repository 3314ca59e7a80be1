#pragma once
/// \file geometric_factors.hpp
/// Geometric factors of a mesh's elements at the points of a quadrature rule, computed by
/// one kernel on exec's backend.
///
///     auto rule = tessera::fem::quadrature(Geometry::Hexahedron, 2 * p + 3);   // p + 2 points
///     auto gf = tessera::fem::geometric_factors(mesh, Geometry::Hexahedron, rule, exec);
///     // gf.D(e, k, q): packed w_q det J J^-1 J^-T of element e at point q (exec's memory)
///
///     // only what a diffusion operator needs:
///     auto d = tessera::fem::geometric_factors(mesh, Geometry::Hexahedron, rule, exec,
///                                              GeometricFactorFlags::D);
///
/// The element map is the mesh's (Mesh::map): for a mesh without nodes the first-order
/// (affine or multilinear) interpolation of the element's vertices (Gmsh order, reference
/// elements on [0, 1]): x(xi) = sum_v N_v(xi) x_v, so J = dx/dxi is constant on simplices and
/// multilinear on quadrilaterals and hexahedra; for a mesh with nodes of order k (curved
/// geometry) x(xi) = sum_i phi_i(xi) x_i over the nodes, phi_i the basis H1Basis(g, k), and
/// the kernel contracts the gradients of phi_i at the points with each element's nodes.
/// Elements of dimension dim below the space dimension space_dim (segments in 2-D or 3-D,
/// triangles and quadrilaterals in 3-D) are *embedded*: det J means sqrt(det(J^T J)) (the
/// length / area factor) and J^-1 the pseudo-inverse (J^T J)^-1 J^T, a left inverse of J.
///
/// Every array has the quadrature point as its last (fastest) index, so GPU threads that
/// map to adjacent points read and write adjacent addresses.

#include <vector>

#include "tessera/core/array.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/fem/geometry.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/quadrature.hpp"

namespace tessera::fem {

/// Which arrays geometric_factors computes (a bit set; combine with `|`).
enum class GeometricFactorFlags : unsigned {
  None = 0,
  J = 1u << 0,      ///< the Jacobian
  DetJ = 1u << 1,   ///< det J
  Jinv = 1u << 2,   ///< the (pseudo-)inverse
  D = 1u << 3,      ///< w det J J^-1 J^-T, packed
  WDetJ = 1u << 4,  ///< w det J
  All = (1u << 5) - 1
};

/// Union of two flag sets.
constexpr GeometricFactorFlags operator|(GeometricFactorFlags a, GeometricFactorFlags b) {
  return static_cast<GeometricFactorFlags>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
/// Intersection of two flag sets.
constexpr GeometricFactorFlags operator&(GeometricFactorFlags a, GeometricFactorFlags b) {
  return static_cast<GeometricFactorFlags>(static_cast<unsigned>(a) & static_cast<unsigned>(b));
}
/// True when `set` contains every flag of `f`.
constexpr bool has(GeometricFactorFlags set, GeometricFactorFlags f) { return (set & f) == f; }

/// Number of packed entries of the symmetric dim x dim factor D: dim (dim + 1) / 2.
constexpr int num_packed_symmetric(int dim) { return dim * (dim + 1) / 2; }

/// Geometric factors of the elements of one geometry at the points of one rule.
/// Element index e runs over mesh.elements_of(geom) (ascending mesh numbering); arrays whose
/// flag was not asked for are empty (size 0). Arrays live in the memory space of the Exec
/// they were computed with.
struct GeometricFactors {
  Geometry geom = Geometry::Segment;
  index_t num_elements = 0;
  int num_points = 0;  ///< quadrature points per element, nq
  int dim = 0;         ///< reference dimension of geom
  int space_dim = 0;   ///< coordinates per vertex of the mesh
  /// (ne, space_dim, dim, nq): J(e, r, c, q) = d x_r / d xi_c.
  Array<double, 4> J;
  /// (ne, nq): det J (sqrt(det J^T J) for embedded elements).
  Array<double, 2> detJ;
  /// (ne, dim, space_dim, nq): J^-1 (the pseudo-inverse (J^T J)^-1 J^T for embedded elements).
  Array<double, 4> Jinv;
  /// (ne, dim (dim + 1) / 2, nq): w_q det J J^-1 J^-T, symmetric, upper triangle packed row by
  /// row: 1-D (00), 2-D (00, 01, 11), 3-D (00, 01, 02, 11, 12, 22).
  Array<double, 3> D;
  /// (ne, nq): w_q det J.
  Array<double, 2> wdetJ;
};

/// Position of entry (i, j) of a symmetric dim x dim matrix in the packed upper-triangle
/// row-by-row layout of GeometricFactors::D (either order of i and j).
constexpr int packed_symmetric_index(int dim, int i, int j) {
  if (i > j) {
    const int t = i;
    i = j;
    j = t;
  }
  return i * dim - i * (i - 1) / 2 + (j - i);
}

/// The kernel behind geometric_factors, with its inputs already in exec's memory space:
/// the element map's nodes X (ne, nv, space_dim) (the vertices, or a curved mesh's nodes),
/// the map's shape-function gradients at the rule's points G (nq, nv, dim) and the weights
/// (nq). Construct it once and call compute() to time
/// or repeat the kernel alone.
///
///     GeometricFactorKernel k(mesh, Geometry::Hexahedron, rule, exec);   // gather + copy
///     auto out = k.allocate(GeometricFactorFlags::D);
///     k.compute(out, GeometricFactorFlags::D);                           // one launch
///     k.check(out);                                                      // det J > 0
class GeometricFactorKernel {
 public:
  /// Gathers the map nodes of the elements of geometry g (mesh.elements_of(g) order; the
  /// vertices, or the nodes of a curved mesh) and tabulates the map's shape-function
  /// gradients at the rule's points on the host, then copies both to exec's space. Throws tessera::Error when the rule is not
  /// on g, or g does not fit in the mesh's space dimension.
  GeometricFactorKernel(const Mesh& mesh, Geometry g, const QuadratureRule& rule, Exec exec = Exec::best());

  /// Output arrays (uninitialised values) in exec's space for the given flags; the others
  /// stay empty.
  GeometricFactors allocate(GeometricFactorFlags flags = GeometricFactorFlags::All) const;

  /// Computes the flagged arrays into `out` (from allocate() with at least these flags) with
  /// one forall over (element, point). No checks of the values: see check().
  void compute(GeometricFactors& out, GeometricFactorFlags flags = GeometricFactorFlags::All) const;
  /// compute, adding 1 to *bad (exec's memory; may be nullptr) for every point where det J <= 0
  /// or is not a number: geometric_factors() checks with it instead of a second pass.
  void compute_counting(GeometricFactors& out, GeometricFactorFlags flags, double* bad) const;

  /// Smallest det J over every element and point (a reduction on exec's backend; recomputes
  /// det J from the inputs, so it needs no output array). +infinity without elements.
  double min_det() const;

  /// Throws tessera::Error naming the first element (mesh numbering) whose det J <= 0 at some
  /// quadrature point, with that value, when min_det() <= 0 (or is not a number).
  void check() const;

  /// Map nodes X(e, v, r) (the vertex coordinates, or a curved mesh's nodes), in exec's space.
  const Array<double, 3>& coordinates() const { return X_; }
  /// Map shape-function gradients G(q, v, c) = d N_v / d xi_c at point q, in exec's space.
  const Array<double, 3>& shape_gradients() const { return G_; }
  /// Mesh indices of the elements, in kernel order (host).
  const std::vector<index_t>& elements() const { return elements_; }
  /// The backend the kernel runs on.
  const Exec& exec() const { return exec_; }
  Geometry geometry() const { return geom_; }
  index_t num_elements() const { return static_cast<index_t>(elements_.size()); }
  int num_points() const { return nq_; }
  /// Nodes of the element map: num_vertices(g), or num_nodes(g, k) on a curved mesh.
  int num_vertices() const { return nv_; }
  /// True when the mesh has nodes (a curved map of order k).
  bool curved() const { return curved_; }
  int dim() const { return dim_; }
  int space_dim() const { return sdim_; }

 private:
  Exec exec_;
  Geometry geom_;
  int nq_ = 0, nv_ = 0, dim_ = 0, sdim_ = 0;
  bool curved_ = false;
  std::vector<index_t> elements_;
  Array<double, 3> X_, G_;
  Array<double, 1> w_;
  Array<double, 2> points_host_;  // the rule's points on the host, for error messages
};

/// Geometric factors of the elements of geometry g (mesh.elements_of(g) order) at the points
/// of `rule` (a rule on g), computed on exec's backend, arrays in exec's memory space.
/// Throws tessera::Error naming the element (mesh numbering) and the value when det J <= 0
/// at a quadrature point (an inverted or degenerate element).
GeometricFactors geometric_factors(const Mesh& mesh, Geometry g, const QuadratureRule& rule,
                                   Exec exec = Exec::best(),
                                   GeometricFactorFlags flags = GeometricFactorFlags::All);

/// Vertex coordinates X(k, v, r) of the elements of geometry g (mesh.elements_of(g) order),
/// host memory; throws tessera::Error naming the element for a vertex id out of range.
Array<double, 3> element_vertex_coordinates(const Mesh& mesh, Geometry g);

/// Nodes of the element map per element of a mesh: num_vertices(g) without nodes,
/// num_nodes(g, k) with nodes of order k.
int map_num_nodes(const Mesh& mesh, Geometry g);

/// The element maps' nodes X(k, i, r) of the elements of geometry g (mesh.elements_of(g)
/// order), host memory: element_vertex_coordinates without nodes, else each element's nodes
/// (Mesh::element_nodes). With map_shape_values / map_shape_gradients this is the map:
/// x(xi) = sum_i N_i(xi) X(k, i, :).
Array<double, 3> element_map_nodes(const Mesh& mesh, Geometry g);

/// The map's shape functions at reference points ((np, dim(g)), any space): N(j, i), extents
/// (np, map_num_nodes(mesh, g)), host: the vertex shape functions, or the order-k basis.
Array<double, 2> map_shape_values(const Mesh& mesh, Geometry g, const Array<double, 2>& points);

/// Their gradients G(j, i, c), extents (np, map_num_nodes(mesh, g), dim(g)), host.
Array<double, 3> map_shape_gradients(const Mesh& mesh, Geometry g, const Array<double, 2>& points);

/// Gradients of the first-order shape functions of g (Gmsh vertex order, reference element on
/// [0, 1]) at the given reference points (extents (nq, dim(g)), host): G(q, v, c) =
/// d N_v / d xi_c, extents (nq, num_vertices(g), dim(g)), host.
Array<double, 3> first_order_shape_gradients(Geometry g, const Array<double, 2>& points);

}  // namespace tessera::fem
