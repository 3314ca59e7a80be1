// Tests of the MFEM mesh reader: small meshes of every geometry in data/, curved meshes,
// and malformed inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "io_test_util.hpp"
#include "tessera/fem/reference_element.hpp"
#include "tessera/io/mfem.hpp"

namespace {

using tessera::index_t;
using tessera::fem::Geometry;
using tessera::fem::Mesh;
using tessera::io::read_mfem;
using tessera::io::read_mfem_bytes;

using tessera::io::test::data_path;
using tessera::io::test::slurp;

std::map<int, int> boundary_attribute_counts(const Mesh& m) {
  std::map<int, int> c;
  for (index_t b = 0; b < m.num_boundary(); ++b) ++c[m.boundary_attribute(b)];
  return c;
}

// Measures below are sums of a few areas/volumes with coordinates that are small integers
// or halves: every operation is exact or rounds once at 1e-16 relative; 1e-14 is ample.
constexpr double kTol = 1e-14;

// MFEM's reference vertices (MFEM documentation / Geometry class): tessera takes MFEM
// vertex lists unchanged, which is right when they coincide with tessera's (Gmsh's).
TEST(MfemOrdering, ReferenceVerticesEqualTessera) {
  const std::map<Geometry, std::vector<std::array<double, 3>>> mfem = {
      {Geometry::Segment, {{0, 0, 0}, {1, 0, 0}}},
      {Geometry::Triangle, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}},
      {Geometry::Quadrilateral, {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}}},
      {Geometry::Tetrahedron, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}}},
      {Geometry::Hexahedron,
       {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}}},
  };
  for (const auto& [g, verts] : mfem) {
    ASSERT_EQ(tessera::fem::num_vertices(g), int(verts.size())) << g;
    for (int v = 0; v < int(verts.size()); ++v) {
      const auto t = tessera::fem::reference_vertex(g, v);
      for (int c = 0; c < tessera::fem::dim(g); ++c) EXPECT_EQ(t[c], verts[v][c]) << g << " vertex " << v;
    }
  }
}

TEST(MfemData, Segment) {
  const Mesh m = read_mfem(data_path("mfem_segment.mesh"));
  EXPECT_EQ(m.dim(), 1);
  EXPECT_EQ(m.space_dim(), 1);
  EXPECT_EQ(m.num_elements(Geometry::Segment), 3);
  EXPECT_EQ(m.num_boundary(), 0);  // boundary points have no fem::Geometry
  EXPECT_NEAR(m.measure(), 2.0, kTol);
  EXPECT_EQ(m.element_attribute(1), 2);
  EXPECT_NEAR(m.element_measure(1), 1.0, kTol);
}

TEST(MfemData, Triangle) {
  const Mesh m = read_mfem(data_path("mfem_triangle.mesh"));
  EXPECT_EQ(m.dim(), 2);
  EXPECT_EQ(m.num_elements(Geometry::Triangle), 2);
  EXPECT_NEAR(m.measure(), 1.0, kTol);
  EXPECT_EQ(m.element_attribute(0), 1);
  EXPECT_EQ(m.element_attribute(1), 2);
  ASSERT_EQ(m.num_boundary(), 4);
  // Attribute 1 on y = 0, 2 on x = 1, 3 on y = 1, 4 on x = 0 (file comment).
  const int axis[4] = {1, 0, 1, 0};
  const double side[4] = {0, 1, 1, 0};
  for (index_t b = 0; b < 4; ++b) {
    const int a = m.boundary_attribute(b) - 1;
    for (index_t v : m.boundary_vertices(b)) EXPECT_EQ(m.vertex(v, axis[a]), side[a]);
  }
}

TEST(MfemData, Square) {
  const Mesh m = read_mfem(data_path("mfem_square.mesh"));
  EXPECT_EQ(m.num_elements(Geometry::Quadrilateral), 2);
  EXPECT_NEAR(m.measure(), 2.0, kTol);
  EXPECT_EQ(boundary_attribute_counts(m), (std::map<int, int>{{1, 2}, {2, 4}}));
}

TEST(MfemData, MixedTrianglesAndSquares) {
  const Mesh m = read_mfem(data_path("mfem_mixed.mesh"));
  EXPECT_FALSE(m.is_uniform());
  EXPECT_EQ(m.num_elements(Geometry::Quadrilateral), 1);
  EXPECT_EQ(m.num_elements(Geometry::Triangle), 2);
  EXPECT_NEAR(m.measure(), 2.0, kTol);
  EXPECT_EQ(m.element_attribute(0), 1);
  EXPECT_EQ(m.element_attribute(2), 2);
  EXPECT_NEAR(m.element_measure(0), 1.0, kTol);
  EXPECT_NEAR(m.element_measure(1) + m.element_measure(2), 1.0, kTol);
  EXPECT_EQ(boundary_attribute_counts(m), (std::map<int, int>{{5, 1}, {6, 5}}));
}

TEST(MfemData, Tetrahedron) {
  const Mesh m = read_mfem(data_path("mfem_tetrahedron.mesh"));
  EXPECT_EQ(m.dim(), 3);
  EXPECT_EQ(m.num_elements(Geometry::Tetrahedron), 6);
  EXPECT_NEAR(m.measure(), 1.0, kTol);
  for (index_t e = 0; e < 6; ++e) EXPECT_NEAR(m.element_measure(e), 1.0 / 6.0, kTol);
  // 2 triangles per cube face; attribute 1 on z = 0 only.
  EXPECT_EQ(boundary_attribute_counts(m), (std::map<int, int>{{1, 2}, {2, 10}}));
  for (index_t b = 0; b < m.num_boundary(); ++b)
    if (m.boundary_attribute(b) == 1) {
      for (index_t v : m.boundary_vertices(b)) EXPECT_EQ(m.vertex(v, 2), 0.0);
    }
}

TEST(MfemData, Hexahedron) {
  const Mesh m = read_mfem(data_path("mfem_hexahedron.mesh"));
  EXPECT_EQ(m.num_elements(Geometry::Hexahedron), 2);
  EXPECT_NEAR(m.measure(), 2.0, kTol);
  EXPECT_EQ(boundary_attribute_counts(m), (std::map<int, int>{{1, 2}, {2, 2}, {3, 6}}));
  for (index_t b = 0; b < m.num_boundary(); ++b)
    if (m.boundary_attribute(b) == 2) {
      for (index_t v : m.boundary_vertices(b)) EXPECT_EQ(m.vertex(v, 2), 1.0);
    }
}

// mfem_curved_quad.mesh: the quadrilateral (0,0), (2,0), (2,1), (0,1) whose bottom and top
// edges are parabolas through (1, -0.1) and (1, 1.1): each adds (2/3) * 2 * 0.1 to the area 2.
constexpr double kCurvedQuadArea = 2 + 4.0 / 15;

TEST(MfemData, CurvedQuadKeepsItsNodes) {
  const std::string path = data_path("mfem_curved_quad.mesh");
  std::vector<std::string> warnings;
  const Mesh m = read_mfem(path, &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(m.nodes_order(), 2);
  ASSERT_EQ(m.num_vertices(), 4);  // the vertices are the corners
  EXPECT_EQ(m.vertex(2, 0), 2.0);
  EXPECT_EQ(m.vertex(2, 1), 1.0);
  EXPECT_NEAR(m.measure(), kCurvedQuadArea, kTol);
  EXPECT_EQ(m.element_attribute(0), 7);
  // the bottom edge's midpoint
  const double mid[2] = {0.5, 0.0};
  const auto x = m.map(0, mid);
  EXPECT_NEAR(x[0], 1.0, kTol);
  EXPECT_NEAR(x[1], -0.1, kTol);

  // The same nodes ordered by nodes (all x, then all y).
  std::string by_nodes = slurp(path);
  const std::size_t at = by_nodes.find("Ordering: 1");
  ASSERT_NE(at, std::string::npos);
  by_nodes = by_nodes.substr(0, at) + "Ordering: 0\n\n0 2 2 0 1 2 1 0 1\n0 0 1 1 -0.1 0.5 1.1 0.5 0.5\n";
  const Mesh n = read_mfem_bytes(by_nodes, "by_nodes.mesh", &warnings);
  ASSERT_EQ(n.nodes().size(), m.nodes().size());
  for (std::size_t i = 0; i < m.nodes().size(); ++i) EXPECT_EQ(n.nodes()[i], m.nodes()[i]);
}

// The same quadrilateral listed clockwise (0 3 2 1): MFEM numbers its edges (0,3), (3,2),
// (2,1), (1,0) in that order, so the edge nodes come in that order; read counter-clockwise.
TEST(MfemData, ClockwiseCurvedElementIsReoriented) {
  const std::string s =
      "MFEM mesh v1.0\ndimension\n2\nelements\n1\n7 3 0 3 2 1\nboundary\n0\nvertices\n4\n\nnodes\n"
      "FiniteElementSpace\nFiniteElementCollection: H1_2D_P2\nVDim: 2\nOrdering: 1\n"
      "0 0\n2 0\n2 1\n0 1\n0 0.5\n1 1.1\n2 0.5\n1 -0.1\n1 0.5\n";
  std::vector<std::string> warnings;
  const Mesh m = read_mfem_bytes(s, "cw.mesh", &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cw.mesh: 1 of the 1 elements turn clockwise"), std::string::npos) << warnings[0];
  const auto v = m.element_vertices(0);
  EXPECT_EQ(std::vector<index_t>(v.begin(), v.end()), (std::vector<index_t>{0, 1, 2, 3}));
  EXPECT_EQ(m.nodes_order(), 2);
  EXPECT_NEAR(m.measure(), kCurvedQuadArea, kTol);
  EXPECT_GT(m.det_jacobian_range()[0], 0.0);
}

// Measure of a straight or curved mesh whose shared edges (2-D) or faces (3-D) match: the
// largest distance between the two elements' maps at points of each shared entity. The nodes
// of a shared entity are the same dofs of the file, so a right reading matches to rounding.
double interface_gap(const Mesh& m) {
  std::map<std::vector<index_t>, std::vector<std::pair<index_t, std::vector<int>>>> shared;
  for (index_t e = 0; e < m.num_elements(); ++e) {
    const Geometry g = m.element_geometry(e);
    const auto v = m.element_vertices(e);
    const int nf = m.dim() == 2 ? tessera::fem::num_edges(g) : tessera::fem::num_faces(g);
    for (int f = 0; f < nf; ++f) {
      std::vector<int> local;
      if (m.dim() == 2) {
        const auto ab = tessera::fem::edge_vertices(g, f);
        local = {ab[0], ab[1]};
      } else {
        for (int a : tessera::fem::face_vertices(g, f)) local.push_back(a);
      }
      std::vector<index_t> key;
      for (int a : local) key.push_back(v[std::size_t(a)]);
      std::sort(key.begin(), key.end());
      shared[key].emplace_back(e, local);
    }
  }
  double gap = 0;
  for (const auto& [key, users] : shared) {
    if (users.size() != 2) continue;
    // points with the same weights on the same global vertices, from both sides
    for (const auto& w : std::vector<std::array<double, 3>>{{0.2, 0.7, 0.1}, {0.45, 0.15, 0.4}, {0.6, 0.3, 0.1}}) {
      std::array<double, 3> x[2];
      for (int side = 0; side < 2; ++side) {
        const auto& [e, local] = users[std::size_t(side)];
        const Geometry g = m.element_geometry(e);
        const auto v = m.element_vertices(e);
        std::array<double, 3> xi{0, 0, 0};
        for (std::size_t k = 0; k < std::min<std::size_t>(3, key.size()); ++k) {
          // weight w[k] on global vertex key[k]; a quadrilateral face uses three of its corners,
          // which (its reference square being planar) stays on the face and agrees on both sides
          int a = 0;
          while (v[std::size_t(local[std::size_t(a)])] != key[k]) ++a;
          const auto r = tessera::fem::reference_vertex(g, local[std::size_t(a)]);
          const double wk = key.size() == 2 ? (k == 0 ? w[0] : 1 - w[0]) : w[k];
          for (int d = 0; d < 3; ++d) xi[std::size_t(d)] += wk * r[std::size_t(d)];
        }
        x[side] = m.map(e, std::span<const double>(xi.data(), std::size_t(m.dim())));
      }
      for (int d = 0; d < m.space_dim(); ++d) gap = std::max(gap, std::abs(x[0][std::size_t(d)] - x[1][std::size_t(d)]));
    }
  }
  return gap;
}

// MFEM's curved data meshes (tests/io/data/README.md): read with their order-3 nodes, det J > 0
// everywhere, neighbouring elements meeting exactly, and the measure of the domain:
// - rt-2d-q3 (a Rayleigh-Taylor run's Lagrangian mesh): the box [0, 0.5] x [-1, 1], whose walls
//   the motion keeps; nodes printed with 8 digits, so 1e-7.
// - square-disc-p3: the unit square less a 24-gon inscribed in the circle of radius 0.2 (its
//   cubic nodes lie on the chords: the file is straight), 1 - 12 (0.2)^2 sin(15 deg); nodes
//   printed with 6 digits, so 1e-5.
// - toroid-hex: a twisted torus whose cross-section, a square of half-diagonal 0.4, turns around
//   the circle of radius 1: by Pappus 2 pi * 1 * 0.32; the cubic maps of its 60-degree sectors
//   miss it by 1.3e-4 relative (the cubic interpolation error of such arcs), so 5e-4.
// - star-q3 and escher-p3: no closed form; star-q3's area was computed independently (MFEM's
//   numbering in a separate script, 6x6 Gauss points per element), escher-p3 is compared
//   with the volume of its straight tetrahedra (6.46989), which its curved faces change by
//   0.4 %: within 2 %.
TEST(MfemData, CurvedDataMeshes) {
  const double pi = 3.14159265358979324;
  struct Case {
    const char* file;
    Geometry cell;
    double measure, tol;
  };
  for (const Case& c : {Case{"mfem_rt-2d-q3.mesh", Geometry::Quadrilateral, 1.0, 1e-7},
                        Case{"mfem_square-disc-p3.mesh", Geometry::Triangle, 1 - 12 * 0.04 * std::sin(pi / 12), 1e-5},
                        Case{"mfem_toroid-hex.mesh", Geometry::Hexahedron, 2 * pi * 0.32, 5e-4 * 2 * pi * 0.32},
                        Case{"mfem_star-q3.mesh", Geometry::Quadrilateral, 4.755281582182, 1e-10},
                        Case{"mfem_escher-p3.mesh", Geometry::Tetrahedron, 6.46989, 0.02 * 6.46989}}) {
    SCOPED_TRACE(c.file);
    std::vector<std::string> warnings;
    const Mesh m = read_mfem(data_path(c.file), &warnings);
    EXPECT_TRUE(warnings.empty());
    EXPECT_EQ(m.nodes_order(), 3);
    EXPECT_EQ(m.element_geometry(0), c.cell);
    EXPECT_NEAR(m.measure(), c.measure, c.tol);
    EXPECT_GT(m.det_jacobian_range()[0], 0.0);
    EXPECT_LT(interface_gap(m), 1e-13);  // the same dofs on both sides: rounding only
    EXPECT_NO_THROW(m.validate(c.file));
  }
}

TEST(MfemData, CurvedGeometryErrors) {
  const std::string quad = slurp(data_path("mfem_curved_quad.mesh"));
  // The bottom edge's node pushed up through the element's centre: folded
  std::string tangled = quad;
  tangled.replace(tangled.find("1 -0.1"), 6, "1 0.95");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(tangled, "t.mesh"), "t.mesh", "line 11", "element 0", "tangled", "det J");
  // Orders above 4 and the families tessera does not read
  const std::size_t at = quad.find("H1_2D_P2");
  for (const auto& [name, why] : std::vector<std::pair<std::string, std::string>>{
           {"H1_2D_P5", "order 5, higher than"},
           {"H1Pos_2D_P2", "positive (Bernstein)"},
           {"H1@O_2D_P2", "node family 'O'"},
           {"H1_3D_P2", "3-D collection"}}) {
    std::string other = quad;
    other.replace(at, 8, name);
    EXPECT_ERROR_MENTIONS(read_mfem_bytes(other, "o.mesh"), "o.mesh", "line 22", name.c_str(), why.c_str());
  }
  // Nodes that do not match the elements: one node missing
  std::string missing = quad;
  missing.replace(missing.find("1 0.5\n", missing.find("1 1.1")), 6, "");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(missing, "m.mesh"), "m.mesh", "line 20", "holds 8 nodes", "has 9");
}

TEST(MfemData, LaterVersionHeadersWithV10Content) {
  std::string s = slurp(data_path("mfem_triangle.mesh"));
  s.replace(0, 14, "MFEM mesh v1.2");
  s += "\nmfem_mesh_end\n";
  const Mesh m = read_mfem_bytes(s, "v12.mesh");
  EXPECT_NEAR(m.measure(), 1.0, kTol);
  EXPECT_EQ(m.num_boundary(), 4);
}

// MFEM mesh v1.3 named attribute sets, in every layout MFEM files use, are read past.
TEST(MfemData, AttributeSetsAreSkipped) {
  const Mesh m = read_mfem(data_path("mfem_attribute_sets.mesh"));
  EXPECT_EQ(m.num_elements(Geometry::Quadrilateral), 2);
  EXPECT_NEAR(m.measure(), 2.0, kTol);
  EXPECT_EQ(m.element_attribute(0), 1);
  EXPECT_EQ(m.element_attribute(1), 2);
  EXPECT_EQ(boundary_attribute_counts(m), (std::map<int, int>{{1, 2}, {2, 4}}));
  EXPECT_EQ(m.num_vertices(), 6);
  EXPECT_EQ(m.vertex(5, 0), 2.0);
}

// Linear, Quadratic and Cubic are MFEM's older names of the H1 collections of order 1 to 3,
// with equispaced nodes (as Gauss-Lobatto ones up to order 2).
TEST(MfemData, LegacyH1CollectionNames) {
  const std::string h1 = slurp(data_path("mfem_curved_quad.mesh"));
  std::string quadratic = h1;
  const std::size_t at = quadratic.find("H1_2D_P2");
  ASSERT_NE(at, std::string::npos);
  quadratic.replace(at, 8, "Quadratic");
  std::vector<std::string> warnings;
  const Mesh q = read_mfem_bytes(quadratic, "quadratic.mesh", &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(q.nodes_order(), 2);
  EXPECT_NEAR(q.measure(), kCurvedQuadArea, kTol);

  // Linear: the vertex nodes only, a straight mesh.
  const std::string linear = h1.substr(0, at) + "Linear\nVDim: 2\nOrdering: 1\n0 0\n2 0\n2 1\n0 1\n";
  const Mesh l = read_mfem_bytes(linear, "linear.mesh", &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(l.nodes_order(), 0);
  EXPECT_NEAR(l.measure(), 2.0, kTol);

  // Cubic: the triangle (0,0), (2,0), (0,1), nodes ordered by nodes (all x, then all y): the
  // vertices, the edges (0,1), (1,2), (0,2) (each from its lower vertex id, at 1/3 and 2/3),
  // the centre. Edge (0,1) bends down to y = -0.1 at both nodes: the cubic through
  // 0, -0.1, -0.1, 0 encloses 2 * (3/8) * 0.2 = 0.15 more (Simpson's 3/8 rule, exact for cubics).
  const std::string cubic =
      "MFEM mesh v1.0\ndimension\n2\nelements\n1\n1 2 0 1 2\nboundary\n0\nvertices\n3\n\nnodes\n"
      "FiniteElementSpace\nFiniteElementCollection: Cubic\nVDim: 2\nOrdering: 0\n"
      "0 2 0 0.666666666666666667 1.33333333333333333 1.33333333333333333 0.666666666666666667 0 0 0.6\n"
      "0 0 1 -0.1 -0.1 0.333333333333333333 0.666666666666666667 0.333333333333333333 0.666666666666666667 0.3\n";
  const Mesh c = read_mfem_bytes(cubic, "cubic.mesh", &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(c.nodes_order(), 3);
  ASSERT_EQ(c.num_vertices(), 3);
  EXPECT_EQ(c.vertex(1, 0), 2.0);
  EXPECT_EQ(c.vertex(2, 1), 1.0);
  EXPECT_NEAR(c.measure(), 1.15, kTol);

  // Only the exact names: other spellings stay refused.
  for (const char* name : {"cubic", "CubicFE", "Quartic"}) {
    std::string other = quadratic;
    other.replace(other.find("Quadratic"), 9, name);
    EXPECT_ERROR_MENTIONS(read_mfem_bytes(other, "other.mesh"), "other.mesh", "line 22", name, "not an H1 collection");
  }
}

// ---- malformed input ----------------------------------------------------------------------

const std::string kTri = "MFEM mesh v1.0\ndimension\n2\nelements\n1\n1 2 0 1 2\nboundary\n0\nvertices\n3\n2\n0 0\n1 0\n0 1\n";

TEST(MfemMalformed, Headers) {
  EXPECT_ERROR_MENTIONS(read_mfem_bytes("", "e.mesh"), "e.mesh", "empty");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes("$MeshFormat\n", "h.mesh"), "h.mesh", "line 1", "MFEM mesh v1.0");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes("MFEM NC mesh v1.0\n", "h.mesh"), "h.mesh", "line 1", "nonconforming");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes("MFEM NURBS mesh v1.0\n", "h.mesh"), "h.mesh", "line 1", "NURBS");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes("MFEM mesh v2.0\n", "h.mesh"), "h.mesh", "line 1", "version");
  // v1.2 parallel data is refused.
  EXPECT_ERROR_MENTIONS(read_mfem_bytes("MFEM mesh v1.2\n" + kTri.substr(15) + "mfem_serial_mesh_end\n", "p.mesh"),
                        "p.mesh", "line 15", "mfem_serial_mesh_end");
  EXPECT_ERROR_MENTIONS(read_mfem(data_path("no_such_file.mesh")), "no_such_file.mesh", "cannot open");
}

TEST(MfemMalformed, MissingAndMisplacedSections) {
  EXPECT_ERROR_MENTIONS(read_mfem_bytes("MFEM mesh v1.0\n", "m.mesh"), "m.mesh", "no 'dimension'");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes("MFEM mesh v1.0\nelements\n0\n", "m.mesh"), "m.mesh", "line 2",
                        "before 'dimension'");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(kTri.substr(0, kTri.find("vertices")), "m.mesh"), "m.mesh", "no 'vertices'");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes("MFEM mesh v1.0\ndimension\n2\nvertices\n0\n2\n", "m.mesh"), "m.mesh",
                        "no 'elements'");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(kTri + "vertex_parents\n", "m.mesh"), "m.mesh", "line 15", "vertex_parents");
}

TEST(MfemMalformed, BadElements) {
  auto with_element = [](const std::string& el) {
    return "MFEM mesh v1.0\ndimension\n2\nelements\n1\n" + el + "\nboundary\n0\nvertices\n3\n2\n0 0\n1 0\n0 1\n";
  };
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(with_element("1 6 0 1 2 0 1 2"), "b.mesh"), "b.mesh", "line 6",
                        "geometry code 6", "prism");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(with_element("1 4 0 1 2 0"), "b.mesh"), "b.mesh", "line 6", "dimension 3");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(with_element("1 2 0 1 7"), "b.mesh"), "b.mesh", "line 6", "vertex id 7",
                        "out of range");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(with_element("1 2 0 1 -1"), "b.mesh"), "b.mesh", "line 6", "out of range");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(with_element("0 2 0 1 2"), "b.mesh"), "b.mesh", "line 6", "attribute");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(with_element("1 2 0 1"), "b.mesh"), "b.mesh", "line 7",
                        "expected a vertex id");
  // A clockwise triangle is read counter-clockwise, with a warning naming the file and the count.
  std::vector<std::string> warnings;
  const Mesh cw = read_mfem_bytes(with_element("1 2 0 2 1"), "cw.mesh", &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cw.mesh: 1 of the 1 elements turn clockwise"), std::string::npos) << warnings[0];
  const auto v = cw.element_vertices(0);
  EXPECT_EQ(std::vector<index_t>(v.begin(), v.end()), (std::vector<index_t>{0, 1, 2}));
  EXPECT_NEAR(cw.measure(), 0.5, kTol);
}

TEST(MfemMalformed, BadCountsAndTruncation) {
  EXPECT_ERROR_MENTIONS(read_mfem_bytes("MFEM mesh v1.0\ndimension\n2\nelements\n99999999999999\n1 2 0 1 2\n", "c.mesh"),
                        "c.mesh", "line 5", "cannot fit");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes("MFEM mesh v1.0\ndimension\n2\nelements\n-1\n", "c.mesh"), "c.mesh", "line 5",
                        "out of range");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes("MFEM mesh v1.0\ndimension\n4\n", "c.mesh"), "c.mesh", "line 3", "out of range");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(kTri.substr(0, kTri.size() - 3), "t.mesh"), "t.mesh", "truncated");
  std::string nan = kTri;
  nan.replace(nan.find("1 0\n0 1"), 3, "1 nan");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(nan, "n.mesh"), "n.mesh", "line 13", "not a finite number");
}

TEST(MfemMalformed, Nodes) {
  const std::string head = "MFEM mesh v1.0\ndimension\n2\nelements\n1\n1 3 0 1 2 3\nboundary\n0\nvertices\n4\n\nnodes\n"
                           "FiniteElementSpace\nFiniteElementCollection: ";
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(head + "L2_T1_2D_P1\nVDim: 2\nOrdering: 1\n0 0 1 0 1 1 0 1\n", "l2.mesh"),
                        "l2.mesh", "line 14", "L2_T1_2D_P1");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(head + "H1_2D_P1\nVDim: 2\nOrdering: 1\n0 0 1 0 1 1\n", "few.mesh"), "few.mesh",
                        "line 12", "fewer than the 4 vertices");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(head + "H1_2D_P1\nVDim: 2\nOrdering: 1\n0 0 1 0 1 1 0\n", "odd.mesh"),
                        "odd.mesh", "multiple of the vector dimension");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(head + "H1_2D_P1\nVDim: 2\nOrder: 1\n", "kw.mesh"), "kw.mesh", "line 16",
                        "'Ordering:'");
}

// kTri with `sets` inserted before its boundary section (line 7).
std::string tri_with_sets(const std::string& sets) {
  const std::size_t at = kTri.find("boundary");
  return "MFEM mesh v1.3\n" + kTri.substr(15, at - 15) + sets + kTri.substr(at);
}

TEST(MfemMalformed, AttributeSets) {
  // Well formed: empty lists of sets, and sets after the vertices.
  EXPECT_NEAR(read_mfem_bytes(tri_with_sets("attribute_sets\n0\nbdr_attribute_sets\n0\n"), "s.mesh").measure(), 0.5,
              kTol);
  EXPECT_NEAR(read_mfem_bytes(kTri + "attribute_sets\n1\n\"All\" 1 1\nmfem_mesh_end\n", "s.mesh").measure(), 0.5, kTol);
  // A quote that is not closed on its line.
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(tri_with_sets("attribute_sets\n1\n\"Left 1 1\n"), "q.mesh"), "q.mesh", "line 9",
                        "double quote");
  // More sets counted than given: the next section is not taken as a name.
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(tri_with_sets("attribute_sets\n2\n\"A\" 1 1\n"), "c.mesh"), "c.mesh",
                        "line 10", "set 2 of 2", "'boundary'", "(line 8)");
  // Fewer attributes counted than given: the extra one is not taken as a name.
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(tri_with_sets("attribute_sets\n2\n\"A\" 1 1 2\n\"B\" 1 1\n"), "c.mesh"),
                        "c.mesh", "line 9", "the number '2'");
  // More attributes counted than given.
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(tri_with_sets("bdr_attribute_sets\n1\n\"A\" 3 1 2\n"), "c.mesh"), "c.mesh",
                        "line 10", "an attribute of the set 'A' in 'bdr_attribute_sets'", "'boundary'");
  // Bad numbers.
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(tri_with_sets("attribute_sets\n1\n\"A\" 1 0\n"), "n.mesh"), "n.mesh", "line 9",
                        "attribute", "out of range");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(tri_with_sets("attribute_sets\n1\n\"A B\" x 1\n"), "n.mesh"), "n.mesh",
                        "line 9", "the number of attributes of the set 'A B'", "'x'");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(tri_with_sets("attribute_sets\n-1\n"), "n.mesh"), "n.mesh", "line 8",
                        "out of range");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(kTri + "attribute_sets\n", "n.mesh"), "n.mesh", "number of attribute sets",
                        "truncated");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(kTri + "attribute_sets\n2\n\"A\" 1 1\n", "n.mesh"), "n.mesh", "set 2 of 2",
                        "truncated");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(tri_with_sets("attribute_sets\n0\nattribute_sets\n0\n"), "d.mesh"), "d.mesh",
                        "line 9", "a second 'attribute_sets'");
}

// Discontinuous (L2) nodes are MFEM's periodic meshes: refused, without advising an H1 space
// (which would drop the periodicity).
TEST(MfemMalformed, PeriodicL2Nodes) {
  const std::string head = "MFEM mesh v1.0\ndimension\n2\nelements\n1\n1 3 0 1 2 3\nboundary\n0\nvertices\n4\n\nnodes\n"
                           "FiniteElementSpace\nFiniteElementCollection: ";
  for (const char* coll : {"L2_T1_2D_P1", "L2_2D_P2"}) {
    const std::string msg = tessera::fem::test::error_message(
        [&] { read_mfem_bytes(head + coll + "\nVDim: 2\nOrdering: 1\n0 0 1 0 1 1 0 1\n", "p.mesh"); });
    for (const char* s : {"p.mesh", "line 14", coll, "discontinuous (L2)", "periodic", "non-periodic"})
      EXPECT_NE(msg.find(s), std::string::npos) << "message: '" << msg << "' lacks '" << s << "'";
    EXPECT_EQ(msg.find("H1"), std::string::npos) << msg;
  }
  // Other collections keep the general message.
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(head + "ND_2D_P1\nVDim: 2\nOrdering: 1\n0 0 1 0 1 1 0 1\n", "nd.mesh"),
                        "nd.mesh", "line 14", "not an H1 collection");
}

// ---- MFEM INLINE mesh v1.0 -----------------------------------------------------------------

std::map<int, int> boundary_geometry_counts(const Mesh& m) {
  std::map<int, int> c;
  for (index_t b = 0; b < m.num_boundary(); ++b) ++c[int(m.boundary_geometry(b))];
  return c;
}

TEST(MfemInline, QuadFileIsTheGeneratorsBox) {
  std::vector<std::string> warnings;
  const Mesh m = read_mfem(data_path("mfem_inline_quad.mesh"), &warnings);
  EXPECT_EQ(m.dim(), 2);
  EXPECT_EQ(m.space_dim(), 2);
  EXPECT_EQ(m.num_elements(Geometry::Quadrilateral), 6);
  EXPECT_EQ(m.num_vertices(), 12);
  EXPECT_NEAR(m.measure(), 3.0, kTol);
  const auto box = m.bounding_box();
  EXPECT_EQ(box[0][0], 0.0);
  EXPECT_EQ(box[0][1], 0.0);
  EXPECT_EQ(box[1][0], 1.5);
  EXPECT_EQ(box[1][1], 2.0);
  // MFEM's boundary attributes of a Cartesian quadrilateral mesh: 1 y = 0, 2 x = max,
  // 3 y = max, 4 x = 0 (the generator's are 1 x = 0, 2 x = max, 3 y = 0, 4 y = max).
  EXPECT_EQ(boundary_attribute_counts(m), (std::map<int, int>{{1, 3}, {2, 2}, {3, 3}, {4, 2}}));
  const int axis[4] = {1, 0, 1, 0};
  const double side[4] = {0, 1.5, 2, 0};
  for (index_t b = 0; b < m.num_boundary(); ++b) {
    const int a = m.boundary_attribute(b) - 1;
    for (index_t v : m.boundary_vertices(b)) EXPECT_EQ(m.vertex(v, axis[a]), side[a]);
  }
  // The same mesh as fem::box_mesh builds.
  tessera::fem::BoxOptions opt;
  opt.size = {1.5, 2.0, 1.0};
  const Mesh g = tessera::fem::box_mesh(Geometry::Quadrilateral, {3, 2, 1}, opt);
  ASSERT_EQ(m.coordinates().size(), g.coordinates().size());
  for (std::size_t i = 0; i < g.coordinates().size(); ++i) EXPECT_EQ(m.coordinates()[i], g.coordinates()[i]);
  for (index_t e = 0; e < g.num_elements(); ++e)
    EXPECT_TRUE(std::ranges::equal(m.element_vertices(e), g.element_vertices(e))) << e;
  // nz means nothing to a 2-D mesh: a warning naming its line.
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("line 8"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("'nz' is ignored"), std::string::npos) << warnings[0];
}

TEST(MfemInline, EveryType) {
  const std::string h = "MFEM INLINE mesh v1.0\n";
  // Segments (the two boundary points are not kept, as in MFEM files).
  const Mesh s = read_mfem_bytes(h + "type = segment\nnx = 5\nsx = 2\n", "s.mesh");
  EXPECT_EQ(s.num_elements(Geometry::Segment), 5);
  EXPECT_NEAR(s.measure(), 2.0, kTol);
  EXPECT_EQ(s.num_boundary(), 0);
  // Triangles: 2 per square. Layout variants: no blanks around '=', ';', comments, CRLF.
  const Mesh t = read_mfem_bytes(h + "# a comment\r\n\r\ntype=tri;\r\nnx = 4 # cells\r\nny =4\r\nsx = 3.14 ;\r\n"
                                     "sy = +3.14\r\n",
                                 "t.mesh");
  EXPECT_EQ(t.num_elements(Geometry::Triangle), 32);
  EXPECT_NEAR(t.measure(), 3.14 * 3.14, 1e-12);
  EXPECT_EQ(t.num_boundary(), 16);
  // Tetrahedra: 6 per cube, 2 triangles per boundary square.
  const Mesh k = read_mfem_bytes(h + "type = tet\nnx = 1\nny = 1\nnz = 1\nsx = 1\nsy = 1\nsz = 1\n", "k.mesh");
  EXPECT_EQ(k.num_elements(Geometry::Tetrahedron), 6);
  EXPECT_NEAR(k.measure(), 1.0, kTol);
  EXPECT_EQ(boundary_geometry_counts(k), (std::map<int, int>{{int(Geometry::Triangle), 12}}));
  // Hexahedra, keys in any order.
  const Mesh x = read_mfem_bytes(h + "sz = 0.5\nnz = 4\ntype = hex\nnx = 2\nny = 3\nsx = 1\nsy = 2\n", "x.mesh");
  EXPECT_EQ(x.num_elements(Geometry::Hexahedron), 24);
  EXPECT_NEAR(x.measure(), 1.0, kTol);
  EXPECT_EQ(boundary_geometry_counts(x), (std::map<int, int>{{int(Geometry::Quadrilateral), 2 * (6 + 8 + 12)}}));
  // MFEM's attributes in 3-D: 1 z = 0, 2 y = 0, 3 x = max, 4 y = max, 5 x = 0, 6 z = max.
  EXPECT_EQ(boundary_attribute_counts(x), (std::map<int, int>{{1, 6}, {2, 8}, {3, 12}, {4, 8}, {5, 12}, {6, 6}}));
  const int axis[6] = {2, 1, 0, 1, 0, 2};
  const double side[6] = {0, 0, 1, 2, 0, 0.5};
  for (index_t b = 0; b < x.num_boundary(); ++b) {
    const int a = x.boundary_attribute(b) - 1;
    for (index_t v : x.boundary_vertices(b)) EXPECT_EQ(x.vertex(v, axis[a]), side[a]) << "attribute " << a + 1;
  }
  EXPECT_EQ(x.bounding_box()[1][2], 0.5);
}

TEST(MfemInline, Malformed) {
  const std::string h = "MFEM INLINE mesh v1.0\n";
  const std::string quad = "nx = 2\nny = 2\nsx = 1\nsy = 1\n";  // lines 3 to 6 after a type line
  const std::string cube = "nx = 2\nny = 2\nnz = 2\nsx = 1\nsy = 1\nsz = 1\n";
  EXPECT_ERROR_MENTIONS(read_mfem_bytes("MFEM INLINE mesh v2.0\n", "v.mesh"), "v.mesh", "line 1", "inline mesh version");
  // Types.
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(h + "type = wedge\n" + cube, "w.mesh"), "w.mesh", "line 2", "'wedge'",
                        "not supported");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(h + cube + "type = pyramid\n", "p.mesh"), "p.mesh", "line 8", "'pyramid'",
                        "not supported");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(h + "type = cube\n" + cube, "u.mesh"), "u.mesh", "line 2",
                        "unknown inline mesh type 'cube'");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(h + quad, "n.mesh"), "n.mesh", "no 'type = ...' line");
  // Missing directions: named, at the type line.
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(h + "type = quad\nnx = 2\nsx = 1\nsy = 1\n", "m.mesh"), "m.mesh", "line 2",
                        "'ny = ...'");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(h + "type = hex\nnx = 2\nny = 2\nsx = 1\nsy = 1\nsz = 1\n", "m.mesh"),
                        "m.mesh", "line 2", "'nz = ...'");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(h + "type = quad\nnx = 2\nny = 2\nsy = 1\n", "m.mesh"), "m.mesh", "line 2",
                        "'sx = ...'");
  // Counts and lengths: a quad box "nx ny sx sy" (lines 3 to 6), the line of the bad value
  // and what the message says.
  struct Bad {
    const char *nx, *ny, *sx, *sy;
    int line;
    const char* says;
  };
  for (const Bad& c : {Bad{"0", "2", "1", "1", 3, "at least 1"}, Bad{"2", "-3", "1", "1", 4, "at least 1"},
                       Bad{"2.5", "2", "1", "1", 3, "whole number"}, Bad{"99999999999", "2", "1", "1", 3, "out of range"},
                       Bad{"2", "2", "0", "1", 5, "positive"}, Bad{"2", "2", "1", "-1", 6, "positive"},
                       Bad{"2", "2", "nan", "1", 5, "finite number"}, Bad{"2", "2", "1 m", "1", 5, "finite number"}}) {
    const std::string file = h + "type = quad\nnx = " + c.nx + "\nny = " + c.ny + "\nsx = " + c.sx + "\nsy = " + c.sy + "\n";
    const std::string line = "line " + std::to_string(c.line);
    EXPECT_ERROR_MENTIONS(read_mfem_bytes(file, "c.mesh"), "c.mesh", line.c_str(), c.says);
  }
  // Lines.
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(h + "type = quad\nnw = 2\n" + quad, "k.mesh"), "k.mesh", "line 3",
                        "unknown key 'nw'");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(h + "type = quad\nnx 2\n", "k.mesh"), "k.mesh", "line 3", "'key = value'");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(h + "type = quad\n" + quad + "nx = 3\n", "k.mesh"), "k.mesh", "line 7",
                        "second time", "first on line 3");
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(h + "type = quad\nnx = ;\n", "k.mesh"), "k.mesh", "line 3", "no value");
  // Too many cells for the generator: refused before anything is allocated.
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(h + "type = hex\nnx = 2000\nny = 2000\nnz = 2000\nsx = 1\nsy = 1\nsz = 1\n",
                                        "big.mesh"),
                        "big.mesh", "line 2", "2^31");
}

}  // namespace
