#pragma once
/// \file mesh.hpp
/// `Mesh`: an unstructured mesh of segments, triangles, quadrilaterals, tetrahedra and
/// hexahedra (one or several geometries), with element attributes and boundary faces with
/// attributes, and optionally a curved (high-order) geometry. Host data; spaces and kernels
/// copy what they need to the device.
///
///     tessera::fem::Mesh m(2);                                   // 2-D
///     m.add_vertex({0, 0}); m.add_vertex({1, 0}); m.add_vertex({0, 1});
///     m.add_element(Geometry::Triangle, {0, 1, 2});              // attribute 1
///     m.add_boundary(Geometry::Segment, {0, 1}, 3);              // boundary attribute 3
///     m.validate();                                              // ids, NaNs, inverted elements
///
/// Element vertex lists use Gmsh's ordering (reference_element.hpp). Without nodes the
/// element map is the first-order (affine or multilinear) interpolation of the vertices.
/// With nodes (set_nodes) every element carries a Lagrange map of order k: the H1 vector field
/// x(xi) = sum_i phi_i(xi) x_i over the nodes of H1Basis(geometry, k) (basis.hpp), stored per
/// element; the vertices stay the element corners (the map at the reference vertices).
///
///     m.set_nodes(2, nodes);   // 6 points per triangle, at H1Basis(Triangle, 2).nodes()
///     m.map(e, xi);            // the quadratic map; jacobian, measure, validate use it too

#include <array>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/macros.hpp"
#include "tessera/fem/geometry.hpp"

namespace tessera::fem {

class H1Basis;

/// Largest order of a curved geometry map (Mesh::set_nodes).
inline constexpr int max_geometry_order = 10;

/// The basis of order-k geometry maps on g: H1Basis(g, k), built once per (g, k) and shared
/// (thread-safe). k in 1..max_geometry_order.
const H1Basis& geometry_basis(Geometry g, int k);

/// An unstructured mesh (see the file comment).
class Mesh {
 public:
  Mesh() = default;
  /// An empty mesh whose vertices have `space_dim` coordinates (1, 2 or 3).
  explicit Mesh(int space_dim);

  // ---- building -------------------------------------------------------------------------
  /// Appends a vertex (space_dim() coordinates) and returns its index.
  index_t add_vertex(std::span<const double> x);
  index_t add_vertex(std::initializer_list<double> x) { return add_vertex(std::span<const double>(x.begin(), x.size())); }
  /// Appends an element (num_vertices(g) vertex indices, Gmsh order) and returns its index.
  /// Indices are checked by validate(), not here.
  index_t add_element(Geometry g, std::span<const index_t> vertices, int attribute = 1);
  index_t add_element(Geometry g, std::initializer_list<index_t> v, int attribute = 1) {
    return add_element(g, std::span<const index_t>(v.begin(), v.size()), attribute);
  }
  /// Appends a boundary face (a geometry of dimension dim() - 1) and returns its index.
  index_t add_boundary(Geometry g, std::span<const index_t> vertices, int attribute = 1);
  index_t add_boundary(Geometry g, std::initializer_list<index_t> v, int attribute = 1) {
    return add_boundary(g, std::span<const index_t>(v.begin(), v.size()), attribute);
  }
  /// Reserves storage for the given numbers of vertices, elements and boundary faces.
  void reserve(index_t vertices, index_t elements, index_t boundary = 0);

  // ---- curved geometry ------------------------------------------------------------------
  /// Gives every element a Lagrange map of order `order` (1..max_geometry_order):
  /// `nodes` holds, element after element, num_nodes(element_geometry(e), order) points of
  /// space_dim() coordinates each (node-major), in the local node order and at the node
  /// positions of H1Basis(element_geometry(e), order) (basis.hpp: GLL lattice on
  /// segments/quads/hexes, warp & blend on triangles/tets). Throws on a wrong size / order.
  /// Call it after the last add_element (add_element refuses a mesh with nodes); the nodes
  /// at the reference vertices should equal the element's vertices (validate checks).
  void set_nodes(int order, std::vector<double> nodes);
  /// Order of the geometry map: 0 when the mesh has no nodes (the vertex map, affine or
  /// multilinear), else k.
  int nodes_order() const { return nodes_order_; }
  bool has_nodes() const { return nodes_order() > 0; }
  /// Element e's nodes (num_nodes(geometry, k) * space_dim() doubles), empty without nodes.
  std::span<const double> element_nodes(index_t e) const {
    if (nodes_order_ == 0) return {};
    return {nodes_.data() + nodes_off_[std::size_t(e)], std::size_t(nodes_off_[std::size_t(e) + 1] - nodes_off_[std::size_t(e)])};
  }
  /// All nodes, element after element (see set_nodes); empty without nodes.
  std::span<const double> nodes() const { return nodes_; }
  /// Drops the nodes: the mesh becomes straight-sided (the vertex map).
  void clear_nodes();

  // ---- queries --------------------------------------------------------------------------
  /// Coordinates per vertex.
  int space_dim() const { return sdim_; }
  /// Largest element dimension (0 for a mesh without elements).
  int dim() const { return dim_; }
  index_t num_vertices() const { return sdim_ ? index_t(coords_.size()) / sdim_ : 0; }
  index_t num_elements() const { return index_t(el_geom_.size()); }
  /// Number of elements of geometry g.
  index_t num_elements(Geometry g) const { return count_[static_cast<int>(g)]; }
  index_t num_boundary() const { return index_t(bd_geom_.size()); }
  /// True when every element has the same geometry (and there is at least one).
  bool is_uniform() const;

  /// Coordinate c of vertex v.
  double vertex(index_t v, int c) const { return coords_[std::size_t(v * sdim_ + c)]; }
  /// All vertex coordinates, vertex-major (num_vertices() * space_dim()).
  std::span<const double> coordinates() const { return coords_; }
  std::span<double> coordinates() { return coords_; }

  Geometry element_geometry(index_t e) const { return el_geom_[std::size_t(e)]; }
  std::span<const index_t> element_vertices(index_t e) const {
    return {el_conn_.data() + el_off_[std::size_t(e)], std::size_t(el_off_[std::size_t(e) + 1] - el_off_[std::size_t(e)])};
  }
  int element_attribute(index_t e) const { return el_attr_[std::size_t(e)]; }
  void set_element_attribute(index_t e, int a) { el_attr_[std::size_t(e)] = a; }

  Geometry boundary_geometry(index_t b) const { return bd_geom_[std::size_t(b)]; }
  std::span<const index_t> boundary_vertices(index_t b) const {
    return {bd_conn_.data() + bd_off_[std::size_t(b)], std::size_t(bd_off_[std::size_t(b) + 1] - bd_off_[std::size_t(b)])};
  }
  int boundary_attribute(index_t b) const { return bd_attr_[std::size_t(b)]; }
  void set_boundary_attribute(index_t b, int a) { bd_attr_[std::size_t(b)] = a; }

  /// Element connectivity in CSR form: element e owns element_connectivity()[offsets[e] ..
  /// offsets[e + 1]).
  std::span<const index_t> element_offsets() const { return el_off_; }
  std::span<const index_t> element_connectivity() const { return el_conn_; }
  std::span<const int> element_attributes() const { return el_attr_; }

  /// Indices of the elements of geometry g, ascending.
  std::vector<index_t> elements_of(Geometry g) const;

  // ---- checks and geometry (mesh_geometry.cpp) -------------------------------------------
  /// Checks the mesh and throws tessera::Error naming `source` (a file name or generator
  /// spec, may be empty) and the first offending entity: vertex ids out of range, repeated
  /// vertices in an element, non-finite coordinates, element dimensions that differ from
  /// dim() (boundary: dim() - 1), inverted or degenerate elements (det J <= 0 at a vertex of
  /// the element when space_dim() == dim()), and repeated elements (two with the same
  /// vertices, in any order). With nodes it also checks that the nodes are finite, that the
  /// map at each reference vertex is the element's vertex, and det J > 0 at every node and
  /// at the points of a quadrature rule of degree dim * k (a tangled curved element is named).
  /// A reader may pass the numbers its file gives the elements and
  /// the vertices (one per element, per vertex; Gmsh element and node tags), which the
  /// messages then name next to the indices.
  void validate(const std::string& source = {}, std::span<const long long> element_ids = {},
                std::span<const long long> vertex_ids = {}) const;

  /// The element maps below use the nodes when the mesh has them, else the vertices.
  /// Jacobian dx/dxi of element e at reference point xi (dim(geometry) entries): J[r][c] =
  /// d x_r / d xi_c, r < space_dim(), c < dim(element geometry); unused entries are 0.
  std::array<std::array<double, 3>, 3> jacobian(index_t e, std::span<const double> xi) const;
  /// Physical coordinates of reference point xi of element e (space_dim() entries used).
  std::array<double, 3> map(index_t e, std::span<const double> xi) const;
  /// det J (space_dim() == element dim) or sqrt(det(J^T J)) (embedded elements) at xi.
  double det_jacobian(index_t e, std::span<const double> xi) const;
  /// Length / area / volume of element e (exact for affine elements; quadrature exact for
  /// the determinant of a multilinear or order-k map (degree dim * k) otherwise; embedded
  /// curved elements: that rule applied to sqrt(det J^T J)).
  double element_measure(index_t e) const;
  /// Sum of element_measure over all elements.
  double measure() const;
  /// Smallest and largest det J over the vertices of every element (with nodes: over the
  /// nodes of every element).
  std::array<double, 2> det_jacobian_range() const;
  /// Smallest and largest vertex coordinates per direction: {min, max}.
  std::array<std::array<double, 3>, 2> bounding_box() const;

 private:
  friend Mesh refine_uniformly(const Mesh&);
  int sdim_ = 0, dim_ = 0;
  std::vector<double> coords_;
  std::vector<Geometry> el_geom_, bd_geom_;
  std::vector<index_t> el_off_{0}, el_conn_, bd_off_{0}, bd_conn_;
  std::vector<int> el_attr_, bd_attr_;
  std::array<index_t, 5> count_{};
  int nodes_order_ = 0;
  std::vector<double> nodes_;         // element after element, node-major
  std::vector<index_t> nodes_off_;    // element e's nodes at [nodes_off_[e], nodes_off_[e + 1])
};

/// A point transformation for map_nodes: physical point in, physical point out (space_dim()
/// coordinates used).
using PointMap = std::function<std::array<double, 3>(const std::array<double, 3>&)>;

/// Nodes for Mesh::set_nodes(order, ...): every element's current map (its nodes, or its
/// vertices) evaluated at the node positions of H1Basis(geometry, order), then passed
/// through `f` when given. set_nodes(k, map_nodes(m, k)) gives a straight mesh an order-k map
/// of the same shape; with f, the order-k interpolant of f composed with the map.
std::vector<double> map_nodes(const Mesh& mesh, int order, const PointMap& f = {});

// ---- generators and refinement (mesh_generators.cpp) ------------------------------------

/// Options of the box generators.
struct BoxOptions {
  /// Random displacement of interior vertices, up to this fraction of the cell size per
  /// direction (0 = none, at most 0.3; larger values are refused). Displacements that would
  /// leave an element with det J below a quarter of its unperturbed value at a vertex are
  /// undone, so the mesh is always valid; boundary vertices stay, so the box's measure is
  /// unchanged. The same seed gives the same mesh on every platform.
  double perturb = 0.0;
  /// Seed of the perturbation.
  unsigned seed = 1;
  /// Box extent (the box is [0, size[0]] x [0, size[1]] x [0, size[2]]).
  std::array<double, 3> size{1.0, 1.0, 1.0};
};

/// Structured box mesh of geometry g with n[0] x n[1] (x n[2]) cells: segments, quads and
/// hexes are the cells; triangles split each square in 2, tetrahedra split each cube in 6
/// (Kuhn split along each cube's (0,0,0)-(1,1,1) diagonal: conforming). Boundary faces
/// carry attributes 1..2*dim (x = 0, x = max, y = 0, y = max, z = 0, z = max) and point out
/// of the box; elements have attribute 1. Segment meshes have no boundary faces (points are
/// not a Geometry).
Mesh box_mesh(Geometry g, std::array<int, 3> n, const BoxOptions& options = {});

/// Uniform refinement: every element split into 2^dim children of its geometry (segments
/// 2, triangles 4, quads 4, tets 8, hexes 8), boundary faces split accordingly, attributes
/// inherited. A curved mesh (nodes of order k) refines its curved map, not its corners: each
/// child's nodes are the parent's map at the child's node positions in the parent's reference
/// element, and the new vertices lie on that map, so the refined mesh has order k and
/// describes the same domain (the same measure up to rounding).
Mesh refine_uniformly(const Mesh& mesh);

/// The unit disc (radius 1, centre 0) meshed with quadrilaterals (5 n^2: an n x n inner
/// square of half-width 0.4 and four n x n blocks out to the circle) or triangles (10 n^2, each
/// of those quadrilaterals cut in two), with an order-`order` map (1..max_geometry_order) that
/// interpolates a smooth map of each block onto the disc: the outer blocks blend linearly
/// (radially) from the square's side to the circle arc, parametrised by angle; every boundary
/// node lies on the circle (to rounding). Boundary segments on the circle, attribute 1.
Mesh disk_mesh(Geometry g, int n, int order);

/// The annulus 0.5 <= r <= 1 meshed with n (radial) x 8n (angular) quadrilaterals, with an
/// order-`order` map of the polar coordinates (exact circles through the nodes). Boundary
/// segments: attribute 1 on the inner circle, 2 on the outer one.
Mesh annulus_mesh(int n, int order);

/// The unit ball: hexahedra (7 n^3: an n^3 inner cube of half-width 0.4 and six n^3 blocks out
/// to the sphere, blended radially from the cube's face to an equiangular cubed-sphere patch)
/// or tetrahedra (84 n^3: each of those hexahedra cut into 12 around its centre), with an
/// order-`order` map whose boundary nodes lie on the sphere. Boundary faces on the sphere,
/// attribute 1.
Mesh ball_mesh(Geometry g, int n, int order);

/// Builds a mesh from a generator spec (syntax in docs/fem.md), e.g. "box:hex:10x10x10",
/// "box:tri:100x100:perturb=0.2:seed=3:refine=2", "disk:quad:4:order=3", "ball:tet:2". Throws tessera::Error naming the spec and
/// the problem. (Files are read by the io layer: tessera::io::load_mesh accepts both.)
Mesh generate_mesh(const std::string& spec);

}  // namespace tessera::fem
