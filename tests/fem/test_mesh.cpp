// Tests of fem::Mesh geometry and validation, the box generators, uniform refinement and
// generator specs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {
namespace {

constexpr Geometry kAll[] = {Geometry::Segment, Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron,
                             Geometry::Hexahedron};

using Key = std::vector<index_t>;

Key sorted(std::vector<index_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Vertex lists of the (dim - 1)-dimensional faces of element e (edges in 2-D, faces in 3-D).
std::vector<Key> element_faces(const Mesh& m, index_t e) {
  const Geometry g = m.element_geometry(e);
  const auto v = m.element_vertices(e);
  std::vector<Key> out;
  if (dim(g) == 2) {
    for (int i = 0; i < num_edges(g); ++i) {
      const auto ev = edge_vertices(g, i);
      out.push_back(sorted({v[std::size_t(ev[0])], v[std::size_t(ev[1])]}));
    }
  } else if (dim(g) == 3) {
    for (int f = 0; f < num_faces(g); ++f) {
      Key k;
      for (int lv : face_vertices(g, f)) k.push_back(v[std::size_t(lv)]);
      out.push_back(sorted(k));
    }
  }
  return out;
}

// Checks that the mesh is conforming: every face of an element is shared by at most two
// elements, and the faces used once are exactly the boundary faces (each listed once).
void expect_conforming(const Mesh& m) {
  std::map<Key, int> uses;
  for (index_t e = 0; e < m.num_elements(); ++e)
    for (const auto& f : element_faces(m, e)) ++uses[f];
  std::set<Key> once;
  for (const auto& [f, n] : uses) {
    ASSERT_LE(n, 2) << "a face is shared by " << n << " elements";
    if (n == 1) once.insert(f);
  }
  std::set<Key> boundary;
  for (index_t b = 0; b < m.num_boundary(); ++b) {
    const auto v = m.boundary_vertices(b);
    EXPECT_TRUE(boundary.insert(sorted({v.begin(), v.end()})).second) << "boundary face " << b << " is listed twice";
  }
  EXPECT_EQ(once.size(), boundary.size());
  EXPECT_TRUE(once == boundary) << "the faces used by one element differ from the boundary list";
}

// Checks that every boundary face of a box [0, size] lies on one side, carries that side's
// attribute (x = 0: 1, x = max: 2, y = 0: 3, ...) and has a normal pointing out of the box.
void expect_box_boundary(const Mesh& m, const std::array<double, 3>& size) {
  const int d = m.space_dim();
  for (index_t b = 0; b < m.num_boundary(); ++b) {
    const auto v = m.boundary_vertices(b);
    int side = -1;
    for (int c = 0; c < d && side < 0; ++c)
      for (int s = 0; s < 2; ++s) {
        const double at = s ? size[std::size_t(c)] : 0.0;
        if (std::all_of(v.begin(), v.end(), [&](index_t i) { return m.vertex(i, c) == at; })) side = 2 * c + s;
      }
    ASSERT_GE(side, 0) << "boundary face " << b << " is not on a side of the box";
    EXPECT_EQ(m.boundary_attribute(b), side + 1) << "boundary face " << b;
    // Normal by the right-hand rule (2-D: the tangent turned clockwise).
    auto X = [&](std::size_t i, int c) { return m.vertex(v[i], c); };
    std::array<double, 3> n{};
    if (d == 2) {
      n = {X(1, 1) - X(0, 1), -(X(1, 0) - X(0, 0)), 0};
    } else {
      const std::size_t p = v.size() == 4 ? 2 : 1, q = v.size() == 4 ? 3 : 2;  // quad: diagonals
      const std::size_t o = v.size() == 4 ? 1 : 0;
      const double a[3] = {X(p, 0) - X(0, 0), X(p, 1) - X(0, 1), X(p, 2) - X(0, 2)};
      const double c[3] = {X(q, 0) - X(o, 0), X(q, 1) - X(o, 1), X(q, 2) - X(o, 2)};
      n = {a[1] * c[2] - a[2] * c[1], a[2] * c[0] - a[0] * c[2], a[0] * c[1] - a[1] * c[0]};
    }
    const int axis = side / 2;
    EXPECT_GT(n[std::size_t(axis)] * (side % 2 ? 1 : -1), 0) << "boundary face " << b << " points into the box";
  }
}

std::array<int, 3> cells(int a, int b, int c) { return {a, b, c}; }

// Closed-form counts of box_mesh(g, n).
struct Counts {
  index_t vertices, elements, boundary;
};
Counts box_counts(Geometry g, std::array<int, 3> n) {
  const int d = dim(g);
  index_t v = 1, c = 1;
  for (int i = 0; i < d; ++i) v *= n[std::size_t(i)] + 1, c *= n[std::size_t(i)];
  const index_t per_cell = g == Geometry::Triangle ? 2 : g == Geometry::Tetrahedron ? 6 : 1;
  index_t b = 0;
  if (d == 2) b = 2 * (n[0] + n[1]);
  if (d == 3) b = 2 * (index_t(n[0]) * n[1] + index_t(n[1]) * n[2] + index_t(n[0]) * n[2]) * (g == Geometry::Tetrahedron ? 2 : 1);
  return {v, c * per_cell, b};
}

double box_volume(Geometry g, const std::array<double, 3>& size) {
  double v = 1;
  for (int c = 0; c < dim(g); ++c) v *= size[std::size_t(c)];
  return v;
}

// Largest ratio of the longest to the shortest edge over the elements.
double max_edge_ratio(const Mesh& m) {
  double worst = 0;
  for (index_t e = 0; e < m.num_elements(); ++e) {
    const Geometry g = m.element_geometry(e);
    const auto v = m.element_vertices(e);
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (int i = 0; i < num_edges(g); ++i) {
      const auto ev = edge_vertices(g, i);
      double s = 0;
      for (int c = 0; c < m.space_dim(); ++c) {
        const double t = m.vertex(v[std::size_t(ev[0])], c) - m.vertex(v[std::size_t(ev[1])], c);
        s += t * t;
      }
      lo = std::min(lo, std::sqrt(s)), hi = std::max(hi, std::sqrt(s));
    }
    worst = std::max(worst, hi / lo);
  }
  return worst;
}

// ---- element geometry on hand-computed elements -----------------------------------------

// Rounding tolerance for quantities of size ~1 computed with a few flops each.
constexpr double kTight = 1e-13;

TEST(MeshGeometry, AffineTriangleJacobianAndMap) {
  Mesh m(2);
  m.add_vertex({1, 1});
  m.add_vertex({3, 2});
  m.add_vertex({2, 4});
  m.add_element(Geometry::Triangle, {0, 1, 2});
  // x = v0 + [v1 - v0, v2 - v0] xi: J = [[2, 1], [1, 3]], det 5.
  const double xi[2] = {0.5, 0.25};
  const auto J = m.jacobian(0, xi);
  EXPECT_NEAR(J[0][0], 2, kTight);
  EXPECT_NEAR(J[0][1], 1, kTight);
  EXPECT_NEAR(J[1][0], 1, kTight);
  EXPECT_NEAR(J[1][1], 3, kTight);
  EXPECT_EQ(J[2][2], 0);
  const auto x = m.map(0, xi);
  EXPECT_NEAR(x[0], 1 + 2 * 0.5 + 1 * 0.25, kTight);
  EXPECT_NEAR(x[1], 1 + 1 * 0.5 + 3 * 0.25, kTight);
  EXPECT_NEAR(m.det_jacobian(0, xi), 5, kTight);
  EXPECT_NEAR(m.element_measure(0), 2.5, kTight);
  EXPECT_NEAR(m.measure(), 2.5, kTight);
  const auto r = m.det_jacobian_range();
  EXPECT_NEAR(r[0], 5, kTight);
  EXPECT_NEAR(r[1], 5, kTight);
  const auto bb = m.bounding_box();
  EXPECT_EQ(bb[0][0], 1);
  EXPECT_EQ(bb[1][0], 3);
  EXPECT_EQ(bb[0][1], 1);
  EXPECT_EQ(bb[1][1], 4);
  // Vertices map to themselves.
  for (int v = 0; v < 3; ++v) {
    const auto r0 = reference_vertex(Geometry::Triangle, v);
    const auto p = m.map(0, std::span<const double>(r0.data(), 2));
    EXPECT_NEAR(p[0], m.vertex(v, 0), kTight);
    EXPECT_NEAR(p[1], m.vertex(v, 1), kTight);
  }
}

TEST(MeshGeometry, AffineTetrahedronJacobian) {
  Mesh m(3);
  m.add_vertex({0, 0, 0});
  m.add_vertex({2, 0, 0});
  m.add_vertex({1, 3, 0});
  m.add_vertex({0, 1, 4});
  m.add_element(Geometry::Tetrahedron, {0, 1, 2, 3});
  // Columns v1 - v0, v2 - v0, v3 - v0: det = 2 * (3 * 4 - 0 * 1) = 24, volume 4.
  const double xi[3] = {0.1, 0.2, 0.3};
  const auto J = m.jacobian(0, xi);
  const double expect[3][3] = {{2, 1, 0}, {0, 3, 1}, {0, 0, 4}};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(J[std::size_t(r)][std::size_t(c)], expect[r][c], kTight);
  EXPECT_NEAR(m.det_jacobian(0, xi), 24, 1e-12);
  EXPECT_NEAR(m.element_measure(0), 4, 1e-12);
  const auto x = m.map(0, xi);
  EXPECT_NEAR(x[0], 2 * 0.1 + 1 * 0.2, kTight);
  EXPECT_NEAR(x[1], 3 * 0.2 + 1 * 0.3, kTight);
  EXPECT_NEAR(x[2], 4 * 0.3, kTight);
}

TEST(MeshGeometry, BilinearQuadAreaIsThePolygonArea) {
  Mesh m(2);
  for (auto p : {std::array<double, 2>{0, 0}, {2, 0}, {3, 3}, {0, 1}}) m.add_vertex(p);
  m.add_element(Geometry::Quadrilateral, {0, 1, 2, 3});
  // Shoelace: (0 + 6 + 3 + 0) / 2 = 4.5 (straight edges: the bilinear image is the polygon).
  EXPECT_NEAR(m.element_measure(0), 4.5, kTight);
  // Centre maps to the vertex average; J at xi = (0, 0) has columns v1 - v0, v3 - v0.
  const double c[2] = {0.5, 0.5}, o[2] = {0, 0};
  const auto x = m.map(0, c);
  EXPECT_NEAR(x[0], 5.0 / 4, kTight);
  EXPECT_NEAR(x[1], 4.0 / 4, kTight);
  EXPECT_NEAR(m.det_jacobian(0, o), 2 * 1, kTight);
  // At xi = (1, 1): columns v2 - v3 = (3, 2) and v2 - v1 = (1, 3): det 7.
  const double t[2] = {1, 1};
  EXPECT_NEAR(m.det_jacobian(0, t), 7, kTight);
  const auto r = m.det_jacobian_range();
  EXPECT_NEAR(r[0], 2, kTight);
  EXPECT_NEAR(r[1], 7, kTight);
}

TEST(MeshGeometry, TrilinearHexVolumeIsExact) {
  // Unit cube with vertex 6 moved from (1,1,1) to (2,2,2): x_r = xi_r (1 + product of the
  // other two), J = I + 1 w^T with w = (eta zeta, xi zeta, xi eta), so det J = 1 + xi eta +
  // eta zeta + xi zeta and the volume is 1 + 3/4.
  Mesh m(3);
  for (int v = 0; v < 8; ++v) {
    auto r = reference_vertex(Geometry::Hexahedron, v);
    if (v == 6) r = {2, 2, 2};
    m.add_vertex(std::span<const double>(r.data(), 3));
  }
  m.add_element(Geometry::Hexahedron, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_NEAR(m.element_measure(0), 1.75, kTight);
  const double xi[3] = {0.3, 0.6, 0.9};
  EXPECT_NEAR(m.det_jacobian(0, xi), 1 + 0.3 * 0.6 + 0.6 * 0.9 + 0.3 * 0.9, kTight);
  const auto r = m.det_jacobian_range();
  EXPECT_NEAR(r[0], 1, kTight);
  EXPECT_NEAR(r[1], 4, kTight);
  const auto x = m.map(0, xi);
  EXPECT_NEAR(x[0], 0.3 * (1 + 0.6 * 0.9), kTight);
  EXPECT_NEAR(x[2], 0.9 * (1 + 0.3 * 0.6), kTight);
}

TEST(MeshGeometry, EmbeddedElementsUseTheGramDeterminant) {
  Mesh m(3);
  m.add_vertex({0, 0, 0});
  m.add_vertex({2, 0, 0});
  m.add_vertex({0, 0, 3});
  m.add_vertex({0, 4, 3});
  m.add_element(Geometry::Triangle, {0, 1, 2});  // right triangle, legs 2 and 3: area 3
  m.add_element(Geometry::Segment, {2, 3});      // length 4, also embedded
  const double xi[2] = {0.2, 0.2};
  EXPECT_NEAR(m.det_jacobian(0, xi), 6, kTight);
  EXPECT_NEAR(m.element_measure(0), 3, kTight);
  EXPECT_NEAR(m.det_jacobian(1, std::span<const double>(xi, 1)), 4, kTight);
  EXPECT_NEAR(m.element_measure(1), 4, kTight);
  const auto J = m.jacobian(0, xi);
  EXPECT_NEAR(J[2][1], 3, kTight);  // d z / d eta
  EXPECT_NEAR(J[0][0], 2, kTight);  // d x / d xi
}

TEST(MeshGeometry, JacobianChecksItsArguments) {
  Mesh m(2);
  m.add_vertex({0, 0});
  m.add_vertex({1, 0});
  m.add_vertex({0, 1});
  m.add_element(Geometry::Triangle, {0, 1, 2});
  const double xi[3] = {0, 0, 0};
  EXPECT_ERROR_MENTIONS(m.jacobian(1, std::span<const double>(xi, 2)), "element 1", "out of range");
  EXPECT_ERROR_MENTIONS(m.map(0, std::span<const double>(xi, 3)), "triangle", "2 reference coordinates");
}

// ---- validate ---------------------------------------------------------------------------

Mesh two_triangles() {
  Mesh m(2);
  m.add_vertex({0, 0});
  m.add_vertex({1, 0});
  m.add_vertex({1, 1});
  m.add_vertex({0, 1});
  m.add_element(Geometry::Triangle, {0, 1, 2});
  m.add_element(Geometry::Triangle, {0, 2, 3});
  m.add_boundary(Geometry::Segment, {0, 1}, 1);
  m.add_boundary(Geometry::Segment, {1, 2}, 1);
  return m;
}

// ---- curved (order-k) geometry ----------------------------------------------------------

// A quadratic map of the reference triangle: F(x, y) = (x + 0.2 y^2, y + 0.1 x y).
std::array<double, 3> quadratic_map(const std::array<double, 3>& p) {
  return {p[0] + 0.2 * p[1] * p[1], p[1] + 0.1 * p[0] * p[1], 0};
}

Mesh reference_triangle() {
  Mesh m(2);
  m.add_vertex({0, 0});
  m.add_vertex({1, 0});
  m.add_vertex({0, 1});
  m.add_element(Geometry::Triangle, {0, 1, 2});
  return m;
}

// An order-2 map reproduces a quadratic F exactly: map, Jacobian and the measure (the
// integral of det F' = 1 + 0.1 x - 0.04 y^2 over the reference triangle: 1/2 + 0.1/6 - 0.04/12).
TEST(MeshCurved, QuadraticTriangleReproducesItsMap) {
  Mesh m = reference_triangle();
  EXPECT_EQ(m.nodes_order(), 0);
  EXPECT_FALSE(m.has_nodes());
  EXPECT_TRUE(m.element_nodes(0).empty());
  m.set_nodes(2, map_nodes(m, 2, quadratic_map));
  EXPECT_EQ(m.nodes_order(), 2);
  EXPECT_TRUE(m.has_nodes());
  ASSERT_EQ(m.element_nodes(0).size(), 12u);
  // the nodes sit at F(H1Basis nodes), in the basis' order
  const H1Basis b(Geometry::Triangle, 2);
  for (index_t i = 0; i < 6; ++i) {
    const auto f = quadratic_map({b.nodes()(i, 0), b.nodes()(i, 1), 0});
    EXPECT_NEAR(m.element_nodes(0)[std::size_t(2 * i)], f[0], kTight);
    EXPECT_NEAR(m.element_nodes(0)[std::size_t(2 * i + 1)], f[1], kTight);
  }
  const double xi[2] = {0.3, 0.45};
  const auto x = m.map(0, xi);
  const auto f = quadratic_map({0.3, 0.45, 0});
  EXPECT_NEAR(x[0], f[0], kTight);
  EXPECT_NEAR(x[1], f[1], kTight);
  const auto J = m.jacobian(0, xi);
  EXPECT_NEAR(J[0][0], 1, kTight);
  EXPECT_NEAR(J[0][1], 0.4 * 0.45, kTight);
  EXPECT_NEAR(J[1][0], 0.1 * 0.45, kTight);
  EXPECT_NEAR(J[1][1], 1 + 0.1 * 0.3, kTight);
  EXPECT_NEAR(m.det_jacobian(0, xi), (1 + 0.03) - 0.4 * 0.45 * 0.1 * 0.45, kTight);
  EXPECT_NEAR(m.measure(), 0.5 + 0.1 / 6 - 0.04 / 12, kTight);
  // F moves vertex 2 to (0.2, 1): validate wants the vertex there too
  EXPECT_ERROR_MENTIONS(m.validate("quadratic"), "element 0", "reference vertex 2", "distance 0.2");
  m.coordinates()[4] = 0.2;
  EXPECT_NO_THROW(m.validate("quadratic"));
  // det J over the nodes: its smallest value is at (0, 1): 1 - 0.04
  EXPECT_NEAR(m.det_jacobian_range()[0], 0.96, kTight);
  // a copy keeps the nodes; clear_nodes goes back to the straight triangle
  Mesh c = m;
  EXPECT_EQ(c.nodes_order(), 2);
  c.clear_nodes();
  EXPECT_NEAR(c.measure(), 0.5, kTight);
}

// Raising a straight mesh to order k keeps its shape and measure, on every geometry, also
// for bilinear quads and trilinear hexes (the multilinear map is in the order-k space).
TEST(MeshCurved, RaisingTheOrderKeepsTheShape) {
  for (Geometry g : kAll) {
    if (g == Geometry::Segment) continue;
    BoxOptions o;
    o.perturb = 0.2;
    Mesh m = box_mesh(g, {2, 2, 2}, o);
    const double straight = m.measure();
    for (int k : {1, 3}) {
      Mesh c = m;
      c.set_nodes(k, map_nodes(m, k));
      EXPECT_NEAR(c.measure(), straight, 1e-12) << name(g) << " k = " << k;
      const double xi[3] = {0.2, 0.1, 0.3};
      const std::span<const double> s(xi, std::size_t(dim(g)));
      for (index_t e = 0; e < m.num_elements(); e += 3) {
        const auto a = m.map(e, s), b = c.map(e, s);
        for (int r = 0; r < 3; ++r) EXPECT_NEAR(a[std::size_t(r)], b[std::size_t(r)], 1e-13);
        EXPECT_NEAR(m.det_jacobian(e, s), c.det_jacobian(e, s), 1e-12);
      }
      EXPECT_NO_THROW(c.validate("raised"));
    }
  }
}

TEST(MeshCurved, SetNodesChecksOrderAndSize) {
  Mesh m = reference_triangle();
  EXPECT_ERROR_MENTIONS(m.set_nodes(0, {}), "order 0", "outside 1..");
  EXPECT_ERROR_MENTIONS(m.set_nodes(max_geometry_order + 1, {}), "outside 1..");
  EXPECT_ERROR_MENTIONS(m.set_nodes(2, std::vector<double>(11)), "need 12", "got 11");
  EXPECT_FALSE(m.has_nodes());
  m.set_nodes(1, {0, 0, 1, 0, 0, 1});
  EXPECT_ERROR_MENTIONS(m.add_element(Geometry::Triangle, {0, 1, 2}), "set_nodes");
  EXPECT_ERROR_MENTIONS(Mesh(2).set_nodes(1, {}), "no elements");
}

// validate: non-finite nodes, nodes that miss the vertices, and tangled curved elements
// (det J <= 0 inside although every corner is fine) are refused, naming the element.
TEST(MeshCurved, ValidateRefusesBadNodes) {
  const H1Basis b(Geometry::Triangle, 2);
  Mesh m = reference_triangle();
  std::vector<double> x = map_nodes(m, 2);
  // local node 1 is the lattice point (1, 0, 0) / 2: the midpoint of edge {0, 1}
  ASSERT_NEAR(b.nodes()(1, 0), 0.5, kTight);
  ASSERT_NEAR(b.nodes()(1, 1), 0.0, kTight);
  auto bad = x;
  bad[3] = std::numeric_limits<double>::quiet_NaN();
  Mesh n = m;
  n.set_nodes(2, bad);
  EXPECT_ERROR_MENTIONS(n.validate("nan.msh"), "nan.msh", "element 0", "non-finite", "node 1");
  // a vertex node moved away from its vertex
  bad = x;
  bad[0] = 0.1;
  n.set_nodes(2, bad);
  EXPECT_ERROR_MENTIONS(n.validate("moved"), "element 0", "reference vertex 0", "vertices");
  // the midpoint of the bottom edge pulled up beyond the opposite vertex: tangled
  bad = x;
  bad[3] = 1.2;
  n.set_nodes(2, bad);
  EXPECT_ERROR_MENTIONS(n.validate("pulled.mesh"), "pulled.mesh", "element 0", "triangle", "tangled", "det J");
  // the bottom midpoint pulled only a little up stays valid (det J > 0 everywhere)
  bad = x;
  bad[3] = 0.1;
  n.set_nodes(2, bad);
  EXPECT_NO_THROW(n.validate("bent"));
  EXPECT_LT(n.measure(), 0.5);  // the bottom edge bulges in: 0.5 - (2/3) * 0.1 * 1
  EXPECT_NEAR(n.measure(), 0.5 - 2.0 / 3.0 * 0.1, kTight);
}

TEST(MeshValidate, AcceptsAValidMesh) { EXPECT_NO_THROW(two_triangles().validate("square")); }

TEST(MeshValidate, RejectsVertexIdsOutOfRange) {
  Mesh m = two_triangles();
  m.add_element(Geometry::Triangle, {0, 2, 7});
  EXPECT_ERROR_MENTIONS(m.validate("square.msh"), "square.msh", "element 2", "vertex 7", "out of range", "4 vertices");
  Mesh b = two_triangles();
  b.add_boundary(Geometry::Segment, {3, -1});
  EXPECT_ERROR_MENTIONS(b.validate("square.msh"), "square.msh", "boundary face 2", "vertex -1", "out of range");
}

TEST(MeshValidate, RejectsRepeatedVertices) {
  Mesh m = two_triangles();
  m.add_element(Geometry::Triangle, {1, 2, 1});
  EXPECT_ERROR_MENTIONS(m.validate("src"), "src", "element 2", "vertex 1 twice");
}

TEST(MeshValidate, RejectsNonFiniteCoordinates) {
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    Mesh m = two_triangles();
    m.add_vertex({0.5, bad});
    EXPECT_ERROR_MENTIONS(m.validate("grid.vtu"), "grid.vtu", "vertex 4", "non-finite");
  }
}

TEST(MeshValidate, RejectsInvertedAndDegenerateElements) {
  Mesh m = two_triangles();
  m.add_element(Geometry::Triangle, {0, 3, 2});  // clockwise
  EXPECT_ERROR_MENTIONS(m.validate("box:tri:1"), "box:tri:1", "element 2", "triangle", "inverted", "det J = -1");
  Mesh d(2);
  d.add_vertex({0, 0});
  d.add_vertex({1, 1});
  d.add_vertex({2, 2});
  d.add_element(Geometry::Triangle, {0, 1, 2});
  EXPECT_ERROR_MENTIONS(d.validate("line"), "line", "element 0", "degenerate");
  // A quad whose vertices are not in cyclic order (a bow tie) has det J < 0 at a vertex.
  Mesh q(2);
  for (auto p : {std::array<double, 2>{0, 0}, {1, 0}, {0, 1}, {1, 1}}) q.add_vertex(p);
  q.add_element(Geometry::Quadrilateral, {0, 1, 2, 3});
  EXPECT_ERROR_MENTIONS(q.validate("bowtie"), "bowtie", "element 0", "quadrilateral", "inverted");
}

// A wrong vertex order (negative at every vertex) is told apart from a tangled element (negative
// at some vertices, which no reordering mends), and the count of bad elements is given.
TEST(MeshValidate, TellsInvertedFromTangledElements) {
  // the bow tie: two of its four corners have det J < 0 (the diagonal crossing splits it)
  Mesh q(2);
  for (auto p : {std::array<double, 2>{0, 0}, {1, 0}, {0, 1}, {1, 1}}) q.add_vertex(p);
  q.add_element(Geometry::Quadrilateral, {0, 1, 2, 3});
  EXPECT_ERROR_MENTIONS(q.validate("bowtie"), "element 0", "inverted at 2 of its 4 vertices", "tangled",
                        "regenerate");
  // the unit cube with its vertex order mirrored (the bottom and top faces swapped): negative
  // at all 8 vertices, a reordering problem; a second such element is counted
  Mesh h(3);
  for (int z = 0; z < 3; ++z)
    for (auto p : {std::array<double, 2>{0, 0}, {1, 0}, {1, 1}, {0, 1}}) h.add_vertex({p[0], p[1], double(z)});
  h.add_element(Geometry::Hexahedron, {4, 5, 6, 7, 0, 1, 2, 3});
  EXPECT_ERROR_MENTIONS(h.validate("mirrored"), "element 0", "hexahedron", "negative at all its 8 vertices",
                        "positive orientation");
  h.add_element(Geometry::Hexahedron, {8, 9, 10, 11, 4, 5, 6, 7});
  EXPECT_ERROR_MENTIONS(h.validate("two"), "element 0", "2 elements of the mesh have det J <= 0");
  // a valid hexahedron with one top vertex pushed below the bottom face: tangled at some corners
  Mesh t(3);
  for (int z = 0; z < 2; ++z)
    for (auto p : {std::array<double, 2>{0, 0}, {1, 0}, {1, 1}, {0, 1}}) t.add_vertex({p[0], p[1], double(z)});
  t.add_vertex({1, 1, -0.5});
  t.add_element(Geometry::Hexahedron, {0, 1, 2, 3, 4, 5, 8, 7});
  EXPECT_ERROR_MENTIONS(t.validate("pushed"), "element 0", "tangled");
}

TEST(MeshValidate, RejectsRepeatedElements) {
  // The same vertices in another order, both counter-clockwise: the area would count twice.
  Mesh m = two_triangles();
  m.add_element(Geometry::Triangle, {2, 3, 0});
  EXPECT_ERROR_MENTIONS(m.validate("twice"), "twice", "element 2", "triangle", "same vertices as element 1",
                        "repeated element");
  // A triangle and a quadrilateral sharing three vertices are not repeats.
  Mesh q(2);
  for (auto p : {std::array<double, 2>{0, 0}, {1, 0}, {1, 1}, {0, 1}, {2, 0}, {2, 1}}) q.add_vertex(p);
  q.add_element(Geometry::Quadrilateral, {1, 4, 5, 2});
  q.add_element(Geometry::Triangle, {0, 1, 2});
  q.add_element(Geometry::Triangle, {0, 2, 3});
  EXPECT_NO_THROW(q.validate("mixed"));
}

TEST(MeshValidate, RejectsWrongDimensions) {
  Mesh m = two_triangles();
  m.add_element(Geometry::Segment, {0, 1});
  EXPECT_ERROR_MENTIONS(m.validate("mixed"), "mixed", "element 2", "segment");
  Mesh t(3);
  for (int v = 0; v < 4; ++v) {
    const auto r = reference_vertex(Geometry::Tetrahedron, v);
    t.add_vertex(std::span<const double>(r.data(), 3));
  }
  t.add_element(Geometry::Tetrahedron, {0, 1, 2, 3});
  t.add_boundary(Geometry::Triangle, {0, 2, 1});
  t.add_boundary(Geometry::Segment, {0, 1});
  EXPECT_ERROR_MENTIONS(t.validate("tet"), "tet", "boundary face 1", "segment", "dimension 2");
}

TEST(MeshValidate, ChecksInTheDocumentedOrder) {
  // A NaN coordinate and a bad id: the id is reported first.
  Mesh n = two_triangles();
  n.add_vertex({std::numeric_limits<double>::quiet_NaN(), 0});
  n.add_element(Geometry::Triangle, {0, 1, 9});
  EXPECT_ERROR_MENTIONS(n.validate(), "element 2", "vertex 9");

  // An inverted element 0 and a bad id in element 1: the id is reported.
  Mesh m(2);
  m.add_vertex({0, 0});
  m.add_vertex({1, 0});
  m.add_vertex({0, 1});
  m.add_element(Geometry::Triangle, {0, 2, 1});
  m.add_element(Geometry::Triangle, {0, 1, 3});
  EXPECT_ERROR_MENTIONS(m.validate(), "element 1", "vertex 3");
}

// ---- box generators ---------------------------------------------------------------------

TEST(MeshBox, CountsMatchClosedForms) {
  const std::array<int, 3> n = cells(3, 4, 5);
  for (Geometry g : kAll) {
    SCOPED_TRACE(name(g));
    const Mesh m = box_mesh(g, n);
    const Counts c = box_counts(g, n);
    EXPECT_EQ(m.space_dim(), dim(g));
    EXPECT_EQ(m.dim(), dim(g));
    EXPECT_EQ(m.num_vertices(), c.vertices);
    EXPECT_EQ(m.num_elements(), c.elements);
    EXPECT_EQ(m.num_elements(g), c.elements);
    EXPECT_EQ(m.num_boundary(), c.boundary);
    EXPECT_TRUE(m.is_uniform());
    for (index_t e = 0; e < m.num_elements(); ++e) ASSERT_EQ(m.element_attribute(e), 1);
    EXPECT_NO_THROW(m.validate("box"));
  }
  // Closed forms spelled out for the tetrahedra: 6 n^3 elements, 2 triangles per boundary square.
  const Mesh t = box_mesh(Geometry::Tetrahedron, cells(4, 4, 4));
  EXPECT_EQ(t.num_elements(), 6 * 64);
  EXPECT_EQ(t.num_boundary(), 6 * 16 * 2);
  EXPECT_EQ(t.num_vertices(), 125);
}

// The measure is a sum of num_elements() positive terms of size ~ volume / num_elements,
// each exact up to a few ulps: a relative 1e-12 leaves room for the ~1e3-term sums here.
constexpr double kMeasureTol = 1e-12;

TEST(MeshBox, MeasureAndBoundingBoxAreTheBox) {
  const std::array<double, 3> size{2.0, 0.5, 3.0};
  for (Geometry g : kAll) {
    SCOPED_TRACE(name(g));
    BoxOptions o;
    o.size = size;
    const Mesh m = box_mesh(g, cells(3, 2, 4), o);
    const double vol = box_volume(g, size);
    EXPECT_NEAR(m.measure(), vol, kMeasureTol * vol);
    const auto bb = m.bounding_box();
    for (int c = 0; c < dim(g); ++c) {
      EXPECT_EQ(bb[0][std::size_t(c)], 0.0);
      EXPECT_NEAR(bb[1][std::size_t(c)], size[std::size_t(c)], kTight);
    }
    EXPECT_GT(m.det_jacobian_range()[0], 0);
    // Every element of a uniform box has the same measure: volume / elements.
    for (index_t e = 0; e < m.num_elements(); ++e)
      ASSERT_NEAR(m.element_measure(e), vol / double(m.num_elements()), 1e-12 * vol);
  }
}

TEST(MeshBox, IsConformingWithOutwardBoundaryOfTheRightAttributes) {
  for (Geometry g : {Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron, Geometry::Hexahedron}) {
    SCOPED_TRACE(name(g));
    const Mesh m = box_mesh(g, cells(3, 2, 4));
    expect_conforming(m);
    expect_box_boundary(m, {1, 1, 1});
    std::set<int> attrs;
    for (index_t b = 0; b < m.num_boundary(); ++b) attrs.insert(m.boundary_attribute(b));
    EXPECT_EQ(int(attrs.size()), 2 * dim(g));
  }
}

TEST(MeshBox, SegmentsTileTheInterval) {
  BoxOptions o;
  o.size = {3, 1, 1};
  const Mesh m = box_mesh(Geometry::Segment, cells(6, 0, 0), o);
  ASSERT_EQ(m.num_elements(), 6);
  for (index_t e = 0; e < 6; ++e) {
    const auto v = m.element_vertices(e);
    EXPECT_NEAR(m.vertex(v[0], 0), 0.5 * double(e), kTight);
    EXPECT_NEAR(m.vertex(v[1], 0), 0.5 * double(e + 1), kTight);
  }
}

TEST(MeshBox, PerturbationMovesInteriorVerticesWithinBounds) {
  const std::array<double, 3> size{1.0, 2.0, 1.5};
  const std::array<int, 3> n = cells(5, 4, 3);
  for (Geometry g : kAll) {
    SCOPED_TRACE(name(g));
    BoxOptions o;
    o.size = size;
    const Mesh plain = box_mesh(g, n, o);
    o.perturb = 0.3;
    o.seed = 42;
    const Mesh m = box_mesh(g, n, o);
    ASSERT_EQ(m.num_vertices(), plain.num_vertices());
    EXPECT_NO_THROW(m.validate("perturbed"));
    EXPECT_GT(m.det_jacobian_range()[0], 0);
    const double vol = box_volume(g, size);
    EXPECT_NEAR(m.measure(), vol, kMeasureTol * vol);
    index_t moved = 0, interior = 0;
    for (index_t v = 0; v < m.num_vertices(); ++v) {
      bool on_boundary = false, differs = false;
      for (int c = 0; c < dim(g); ++c) {
        const double x0 = plain.vertex(v, c), x = m.vertex(v, c), h = size[std::size_t(c)] / n[std::size_t(c)];
        on_boundary = on_boundary || x0 == 0 || x0 == size[std::size_t(c)];
        differs = differs || x != x0;
        // 1e-15 * h: rounding of x0 + displacement.
        EXPECT_LE(std::abs(x - x0), 0.3 * h * (1 + 1e-15)) << "vertex " << v;
      }
      if (on_boundary) {
        EXPECT_FALSE(differs) << "boundary vertex " << v << " moved";
      } else {
        ++interior;
        moved += differs;
      }
    }
    // Only displacements that would flatten an element are undone: most vertices move.
    EXPECT_GT(moved, interior / 2);
    // The same seed gives the same mesh; another seed another one.
    const Mesh again = box_mesh(g, n, o);
    EXPECT_TRUE(std::equal(m.coordinates().begin(), m.coordinates().end(), again.coordinates().begin()));
    o.seed = 43;
    const Mesh other = box_mesh(g, n, o);
    EXPECT_FALSE(std::equal(m.coordinates().begin(), m.coordinates().end(), other.coordinates().begin()));
  }
}

TEST(MeshBox, PerturbedTetsStayConformingAndValidOnManySeeds) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    BoxOptions o;
    o.perturb = 0.3;
    o.seed = seed;
    const Mesh m = box_mesh(Geometry::Tetrahedron, cells(4, 4, 4), o);
    EXPECT_NO_THROW(m.validate("box:tet:4"));
    EXPECT_NEAR(m.measure(), 1.0, kMeasureTol);
    expect_conforming(m);
  }
}

TEST(MeshBox, RejectsBadOptions) {
  BoxOptions o;
  o.perturb = 0.31;
  EXPECT_ERROR_MENTIONS(box_mesh(Geometry::Quadrilateral, cells(2, 2, 0), o), "perturb", "0.31", "0.3");
  o.perturb = -0.1;
  EXPECT_ERROR_MENTIONS(box_mesh(Geometry::Quadrilateral, cells(2, 2, 0), o), "perturb");
  EXPECT_ERROR_MENTIONS(box_mesh(Geometry::Hexahedron, cells(2, 0, 2)), "0 cells", "direction 1");
  BoxOptions s;
  s.size = {1, -2, 1};
  EXPECT_ERROR_MENTIONS(box_mesh(Geometry::Triangle, cells(2, 2, 0), s), "size", "direction 1");
}

// ---- refinement -------------------------------------------------------------------------

TEST(MeshRefine, MultipliesCountsAndKeepsMeasureAndBoundary) {
  const std::array<int, 3> n = cells(2, 3, 2);
  const std::array<double, 3> size{1.5, 1.0, 0.5};
  for (Geometry g : kAll) {
    SCOPED_TRACE(name(g));
    BoxOptions o;
    o.size = size;
    Mesh m = box_mesh(g, n, o);
    const int d = dim(g);
    // Mark elements with distinct attributes to check inheritance.
    for (index_t e = 0; e < m.num_elements(); ++e) m.set_element_attribute(e, int(e % 5) + 1);
    Mesh r = m;
    for (int level = 1; level <= 2; ++level) {
      const Mesh parent = r;
      r = refine_uniformly(parent);
      const int kids = 1 << d;
      ASSERT_EQ(r.num_elements(), parent.num_elements() * kids);
      EXPECT_EQ(r.num_boundary(), parent.num_boundary() * (1 << (d - 1)) * (d > 1));
      // The refined box has the vertices of the box with twice the cells (Kuhn tets: the
      // midpoints of face and cube diagonals are the face and cube centres).
      std::array<int, 3> n2 = n;
      for (auto& k : n2) k <<= level;
      EXPECT_EQ(r.num_vertices(), box_counts(g, n2).vertices);
      for (index_t e = 0; e < r.num_elements(); ++e)
        ASSERT_EQ(r.element_attribute(e), parent.element_attribute(e / kids)) << "child " << e;
      const double vol = box_volume(g, size);
      EXPECT_NEAR(r.measure(), vol, kMeasureTol * vol);
      // Children of uniform parents have an eighth (quarter, half) of their measure.
      for (index_t e = 0; e < r.num_elements(); ++e)
        ASSERT_NEAR(r.element_measure(e), parent.element_measure(e / kids) / kids, 1e-12 * vol) << "child " << e;
      EXPECT_NO_THROW(r.validate("refined"));
      EXPECT_GT(r.det_jacobian_range()[0], 0);
      if (d > 1) {
        expect_conforming(r);
        expect_box_boundary(r, size);
      }
    }
  }
}

TEST(MeshRefine, PerturbedMeshesKeepMeasureAndOrientation) {
  for (Geometry g : {Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron, Geometry::Hexahedron}) {
    SCOPED_TRACE(name(g));
    BoxOptions o;
    o.perturb = 0.25;
    o.seed = 9;
    const Mesh m = box_mesh(g, cells(3, 3, 3), o);
    const Mesh r = refine_uniformly(m);
    EXPECT_NO_THROW(r.validate("refined"));
    // Simplices: children are exactly affine pieces (sum = parent up to rounding). Quads and
    // hexes: the children of a non-affine parent are bilinear/trilinear interpolants of the
    // parent map, whose measures still add up because refinement at midpoints of a
    // multilinear map is exact (the map is reproduced by the children).
    EXPECT_NEAR(r.measure(), 1.0, kMeasureTol);
    for (index_t e = 0; e < m.num_elements(); ++e) {
      double s = 0;
      for (index_t c = 0; c < (1 << dim(g)); ++c) s += r.element_measure(e * (1 << dim(g)) + c);
      ASSERT_NEAR(s, m.element_measure(e), 1e-12) << "element " << e;
    }
    expect_conforming(r);
  }
}

TEST(MeshRefine, TetrahedraStayWellShaped) {
  // Kuhn tets have edges h, h sqrt 2, h sqrt 3. Bey's refinement produces finitely many
  // similarity classes, so the worst edge ratio must not grow from level to level.
  Mesh m = box_mesh(Geometry::Tetrahedron, cells(2, 2, 2));
  const double r0 = max_edge_ratio(m);
  EXPECT_NEAR(r0, std::sqrt(3.0), 1e-12);
  double prev = r0;
  for (int level = 1; level <= 3; ++level) {
    m = refine_uniformly(m);
    const double r = max_edge_ratio(m);
    EXPECT_LE(r, std::sqrt(3.0) * (1 + 1e-12)) << "level " << level;  // rounding only
    prev = r;
  }
  EXPECT_GT(prev, 1.0);
}

TEST(MeshRefine, MixedTrianglesAndQuads) {
  // [0, 2] x [0, 1]: a quad on the left, two triangles on the right sharing the edge x = 1.
  Mesh m(2);
  for (auto p : {std::array<double, 2>{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}}) m.add_vertex(p);
  m.add_element(Geometry::Quadrilateral, {0, 1, 4, 3}, 1);
  m.add_element(Geometry::Triangle, {1, 2, 5}, 2);
  m.add_element(Geometry::Triangle, {1, 5, 4}, 2);
  m.add_boundary(Geometry::Segment, {0, 1}, 3);
  m.add_boundary(Geometry::Segment, {1, 2}, 3);
  m.add_boundary(Geometry::Segment, {2, 5}, 2);
  m.add_boundary(Geometry::Segment, {5, 4}, 4);
  m.add_boundary(Geometry::Segment, {4, 3}, 4);
  m.add_boundary(Geometry::Segment, {3, 0}, 1);
  ASSERT_NO_THROW(m.validate("mixed"));
  expect_conforming(m);
  const Mesh r = refine_uniformly(m);
  EXPECT_EQ(r.num_elements(Geometry::Quadrilateral), 4);
  EXPECT_EQ(r.num_elements(Geometry::Triangle), 8);
  EXPECT_EQ(r.num_boundary(), 12);
  // Vertices: 6 old + 8 edge midpoints (4 quad edges; the triangles add 3 outer edges and
  // the diagonal, their edge x = 1 is the quad's) + 1 quad centre.
  EXPECT_EQ(r.num_vertices(), 6 + 8 + 1);
  EXPECT_NEAR(r.measure(), 2.0, kTight);
  EXPECT_NO_THROW(r.validate("mixed refined"));
  expect_conforming(r);
  expect_box_boundary(r, {2, 1, 0});
  for (index_t e = 0; e < r.num_elements(); ++e)
    EXPECT_EQ(r.element_attribute(e), r.element_geometry(e) == Geometry::Quadrilateral ? 1 : 2);
  const Mesh rr = refine_uniformly(r);
  EXPECT_NEAR(rr.measure(), 2.0, kTight);
  expect_conforming(rr);
}

TEST(MeshRefine, MixedTetrahedraAndHexahedra) {
  // The hexes and tets of two boxes side by side (not sharing faces): each part refines as
  // on its own.
  const Mesh h = box_mesh(Geometry::Hexahedron, cells(2, 2, 2));
  const Mesh t = box_mesh(Geometry::Tetrahedron, cells(2, 2, 2));
  Mesh m(3);
  for (index_t v = 0; v < h.num_vertices(); ++v) m.add_vertex({h.vertex(v, 0), h.vertex(v, 1), h.vertex(v, 2)});
  for (index_t v = 0; v < t.num_vertices(); ++v) m.add_vertex({t.vertex(v, 0) + 2, t.vertex(v, 1), t.vertex(v, 2)});
  const index_t off = h.num_vertices();
  auto copy = [&](const Mesh& src, index_t shift) {
    for (index_t e = 0; e < src.num_elements(); ++e) {
      std::vector<index_t> v(src.element_vertices(e).begin(), src.element_vertices(e).end());
      for (auto& i : v) i += shift;
      m.add_element(src.element_geometry(e), v);
    }
    for (index_t b = 0; b < src.num_boundary(); ++b) {
      std::vector<index_t> v(src.boundary_vertices(b).begin(), src.boundary_vertices(b).end());
      for (auto& i : v) i += shift;
      m.add_boundary(src.boundary_geometry(b), v, src.boundary_attribute(b));
    }
  };
  copy(h, 0);
  copy(t, off);
  const Mesh r = refine_uniformly(m);
  const Mesh rh = refine_uniformly(h), rt = refine_uniformly(t);
  EXPECT_EQ(r.num_elements(Geometry::Hexahedron), rh.num_elements());
  EXPECT_EQ(r.num_elements(Geometry::Tetrahedron), rt.num_elements());
  EXPECT_EQ(r.num_vertices(), rh.num_vertices() + rt.num_vertices());
  EXPECT_EQ(r.num_boundary(), rh.num_boundary() + rt.num_boundary());
  EXPECT_NEAR(r.measure(), 2.0, kMeasureTol);
  EXPECT_NO_THROW(r.validate("hex+tet"));
  expect_conforming(r);
}

// ---- generator specs --------------------------------------------------------------------

TEST(MeshSpec, BuildsWhatItSays) {
  const Mesh a = generate_mesh("box:hex:2x3x4");
  EXPECT_EQ(a.num_elements(Geometry::Hexahedron), 24);
  const Mesh b = generate_mesh("box:tet:3");  // one count: the same in every direction
  EXPECT_EQ(b.num_elements(Geometry::Tetrahedron), 6 * 27);
  const Mesh c = generate_mesh("box:tri:2x3:size=4x2:refine=1");
  EXPECT_EQ(c.num_elements(), 2 * 6 * 4);
  EXPECT_NEAR(c.measure(), 8.0, kTight);
  const auto bb = c.bounding_box();
  EXPECT_EQ(bb[1][0], 4.0);
  EXPECT_EQ(bb[1][1], 2.0);
  const Mesh d = generate_mesh("box:quad:4:perturb=0.2:seed=5");
  BoxOptions o;
  o.perturb = 0.2;
  o.seed = 5;
  const Mesh d2 = box_mesh(Geometry::Quadrilateral, cells(4, 4, 0), o);
  EXPECT_TRUE(std::equal(d.coordinates().begin(), d.coordinates().end(), d2.coordinates().begin()));
  const Mesh e = generate_mesh("box:seg:5:size=2");
  EXPECT_EQ(e.num_elements(Geometry::Segment), 5);
  EXPECT_NEAR(e.measure(), 2.0, kTight);
}

TEST(MeshSpec, ErrorsNameTheSpecAndTheBadPart) {
  EXPECT_ERROR_MENTIONS(generate_mesh("sphere:tri:4"), "sphere:tri:4", "box:<seg|tri|quad|tet|hex>");
  EXPECT_ERROR_MENTIONS(generate_mesh("box:tri"), "box:tri", "box:<seg|tri|quad|tet|hex>");
  EXPECT_ERROR_MENTIONS(generate_mesh("box:prism:4"), "box:prism:4", "'prism'", "seg, tri, quad, tet, hex");
  EXPECT_ERROR_MENTIONS(generate_mesh("box:tri:4x4x4"), "box:tri:4x4x4", "'4x4x4'", "1", "2");
  EXPECT_ERROR_MENTIONS(generate_mesh("box:quad:4xa"), "box:quad:4xa", "'a'", "integer");
  EXPECT_ERROR_MENTIONS(generate_mesh("box:quad:0"), "box:quad:0", "at least 1");
  EXPECT_ERROR_MENTIONS(generate_mesh("box:quad:4:perturb=0.5"), "box:quad:4:perturb=0.5", "perturb");
  EXPECT_ERROR_MENTIONS(generate_mesh("box:quad:4:perturb=big"), "'big'", "not a number");
  EXPECT_ERROR_MENTIONS(generate_mesh("box:quad:4:colour=red"), "'colour'", "perturb, seed, size, refine");
  EXPECT_ERROR_MENTIONS(generate_mesh("box:quad:4:refine"), "'refine'", "key=value");
  EXPECT_ERROR_MENTIONS(generate_mesh("box:quad:4:refine=-1"), "refine=-1", "0..10");
  EXPECT_ERROR_MENTIONS(generate_mesh("box:hex:2:size=1x2"), "size '1x2'", "1 or 3");
  EXPECT_ERROR_MENTIONS(generate_mesh("box:hex:2:size=1x0x1"), "box:hex:2:size=1x0x1", "size");
  EXPECT_ERROR_MENTIONS(generate_mesh("box:hex:2:seed=-3"), "seed", ">= 0");
}

}  // namespace
}  // namespace tessera::fem
