// Tests of the MFEM mesh reader: small meshes of every geometry in data/, curved meshes,
// and malformed inputs.
#include <gtest/gtest.h>

#include <array>
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

TEST(MfemData, CurvedH1NodesGiveTheVertices) {
  const std::string path = data_path("mfem_curved_quad.mesh");
  std::vector<std::string> warnings;
  const Mesh m = read_mfem(path, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("H1_2D_P2"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find(path), std::string::npos) << warnings[0];
  ASSERT_EQ(m.num_vertices(), 4);
  EXPECT_EQ(m.vertex(2, 0), 2.0);
  EXPECT_EQ(m.vertex(2, 1), 1.0);
  EXPECT_NEAR(m.measure(), 2.0, kTol);  // the first-order (straight) quadrilateral
  EXPECT_EQ(m.element_attribute(0), 7);

  // The same nodes ordered by nodes (all x, then all y).
  std::string by_nodes = slurp(path);
  const std::size_t at = by_nodes.find("Ordering: 1");
  ASSERT_NE(at, std::string::npos);
  by_nodes = by_nodes.substr(0, at) + "Ordering: 0\n\n0 2 2 0 1 2 1 0 1\n0 0 1 1 -0.1 0.5 1.1 0.5 0.5\n";
  const Mesh n = read_mfem_bytes(by_nodes, "by_nodes.mesh", &warnings);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(n.coordinates()[i], m.coordinates()[i]);
}

TEST(MfemData, LaterVersionHeadersWithV10Content) {
  std::string s = slurp(data_path("mfem_triangle.mesh"));
  s.replace(0, 14, "MFEM mesh v1.2");
  s += "\nmfem_mesh_end\n";
  const Mesh m = read_mfem_bytes(s, "v12.mesh");
  EXPECT_NEAR(m.measure(), 1.0, kTol);
  EXPECT_EQ(m.num_boundary(), 4);
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
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(kTri + "attribute_sets\n", "m.mesh"), "m.mesh", "line 15", "attribute_sets");
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
  // Clockwise triangle: inverted, found by Mesh::validate, whose message names the file.
  EXPECT_ERROR_MENTIONS(read_mfem_bytes(with_element("1 2 0 2 1"), "inv.mesh"), "inv.mesh");
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

}  // namespace
