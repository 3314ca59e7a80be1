// Tests of write_vtu_lagrange and vtk_lagrange_nodes (io/vtu.hpp): VTK's node order, the
// values written at every point, and the round trip through read_vtu.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/fem/field_functions.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/reference_element.hpp"
#include "tessera/io/vtu.hpp"

namespace {

using tessera::index_t;
using tessera::fem::Geometry;
using tessera::fem::Mesh;
using tessera::io::VtuFunctionField;
using tessera::io::VtuOptions;
using tessera::io::VtuSpaceField;
using Encoding = tessera::io::VtuOptions::Encoding;
using P3 = std::array<double, 3>;

constexpr Geometry kGeometries[] = {Geometry::Segment, Geometry::Triangle, Geometry::Quadrilateral,
                                    Geometry::Tetrahedron, Geometry::Hexahedron};

// Node j of VTK's order-p cell of geometry g is at `x` (exact: equispaced lattice / p).
void expect_node(Geometry g, int p, int j, P3 x) {
  const auto nodes = tessera::io::vtk_lagrange_nodes(g, p);
  ASSERT_LT(std::size_t(j), nodes.size());
  for (int c = 0; c < 3; ++c)
    EXPECT_NEAR(nodes[std::size_t(j)][std::size_t(c)], x[std::size_t(c)], 1e-15)
        << tessera::fem::name(g) << " p = " << p << " node " << j << " coordinate " << c;
}

// Every order: the nodes are the equispaced lattice, each point once, corners first in
// fem::Mesh's (Gmsh's) vertex order.
TEST(VtkLagrangeNodes, AreTheEquispacedLatticeCornersFirst) {
  for (Geometry g : kGeometries)
    for (int p = 1; p <= 6; ++p) {
      const auto nodes = tessera::io::vtk_lagrange_nodes(g, p);
      ASSERT_EQ(index_t(nodes.size()), tessera::fem::num_nodes(g, p));
      const auto lattice = tessera::fem::equispaced_nodes(g, p);
      std::vector<P3> want, got(nodes.begin(), nodes.end());
      for (index_t i = 0; i < lattice.extent(0); ++i) {
        P3 x{0, 0, 0};
        for (int d = 0; d < tessera::fem::dim(g); ++d) x[std::size_t(d)] = lattice(i, d);
        want.push_back(x);
      }
      // Lattice coordinates are k / p: rounding to 1e-9 makes equal points compare equal.
      auto round = [](std::vector<P3>& v) {
        for (P3& x : v)
          for (double& c : x) c = std::round(c * 1e9) / 1e9;
        std::sort(v.begin(), v.end());
      };
      round(want);
      round(got);
      EXPECT_EQ(got, want) << tessera::fem::name(g) << " p = " << p;
      EXPECT_EQ(std::adjacent_find(got.begin(), got.end()), got.end()) << "a repeated node";
      for (int v = 0; v < tessera::fem::num_vertices(g); ++v)
        expect_node(g, p, v, tessera::fem::reference_vertex(g, v));
    }
}

// Low orders coincide with VTK's fixed quadratic cells, whose layout is documented with
// the cell types: VTK_QUADRATIC_TRIANGLE / _TETRA / _QUAD, VTK_TRIQUADRATIC_HEXAHEDRON.
TEST(VtkLagrangeNodes, QuadraticCellsMatchVtksQuadraticLayouts) {
  const double h = 0.5;
  expect_node(Geometry::Segment, 2, 2, {h, 0, 0});
  expect_node(Geometry::Triangle, 2, 3, {h, 0, 0});
  expect_node(Geometry::Triangle, 2, 4, {h, h, 0});
  expect_node(Geometry::Triangle, 2, 5, {0, h, 0});
  const P3 tet_edges[6] = {{h, 0, 0}, {h, h, 0}, {0, h, 0}, {0, 0, h}, {h, 0, h}, {0, h, h}};
  for (int k = 0; k < 6; ++k) expect_node(Geometry::Tetrahedron, 2, 4 + k, tet_edges[k]);
  const P3 quad[5] = {{h, 0, 0}, {1, h, 0}, {h, 1, 0}, {0, h, 0}, {h, h, 0}};
  for (int k = 0; k < 5; ++k) expect_node(Geometry::Quadrilateral, 2, 4 + k, quad[k]);
  // Hexahedron: bottom edges, top edges, then the vertical edges at (0,0), (1,0), (1,1),
  // (0,1) (VTK 9), the faces x = 0, x = 1, y = 0, y = 1, z = 0, z = 1 and the centre.
  const P3 hex[19] = {{h, 0, 0}, {1, h, 0}, {h, 1, 0}, {0, h, 0}, {h, 0, 1}, {1, h, 1}, {h, 1, 1},
                      {0, h, 1}, {0, 0, h}, {1, 0, h}, {1, 1, h}, {0, 1, h}, {0, h, h}, {1, h, h},
                      {h, 0, h}, {h, 1, h}, {h, h, 0}, {h, h, 1}, {h, h, h}};
  for (int k = 0; k < 19; ++k) expect_node(Geometry::Hexahedron, 2, 8 + k, hex[k]);
}

// Higher orders: edges run from their first corner, faces and interiors follow them.
TEST(VtkLagrangeNodes, HigherOrderEdgesFacesAndInteriors) {
  const double t = 1.0 / 3;
  // Triangle p = 3: edge 0-1, 1-2, 2-0 two nodes each, then the centre.
  const P3 tri[7] = {{t, 0, 0}, {2 * t, 0, 0}, {2 * t, t, 0}, {t, 2 * t, 0}, {0, 2 * t, 0}, {0, t, 0}, {t, t, 0}};
  for (int k = 0; k < 7; ++k) expect_node(Geometry::Triangle, 3, 3 + k, tri[k]);
  // Tetrahedron p = 3: the face centres of (0,1,3), (1,2,3), (2,0,3), (0,2,1) (VTK's
  // 15-node tetrahedron lists the same face centres).
  const P3 faces[4] = {{t, 0, t}, {t, t, t}, {0, t, t}, {t, t, 0}};
  for (int k = 0; k < 4; ++k) expect_node(Geometry::Tetrahedron, 3, 16 + k, faces[k]);
  expect_node(Geometry::Tetrahedron, 3, 4 + 2 * 3, {0, 0, t});      // edge 0-3, first node
  // Tetrahedron p = 4: 3 nodes on each face, in its plane; the single interior node last.
  const auto t4 = tessera::io::vtk_lagrange_nodes(Geometry::Tetrahedron, 4);
  for (int f = 0; f < 4; ++f)
    for (int k = 0; k < 3; ++k) {
      const P3& x = t4[std::size_t(4 + 6 * 3 + 3 * f + k)];
      const double on[4] = {x[1], x[0] + x[1] + x[2] - 1, x[0], x[2]};  // zero on faces 0..3
      EXPECT_NEAR(on[f], 0.0, 1e-15) << "face " << f << " node " << k;
    }
  expect_node(Geometry::Tetrahedron, 4, 34, {0.25, 0.25, 0.25});
  // Hexahedron p = 3: the x = 0 face's nodes with j fastest, the interior with i fastest.
  expect_node(Geometry::Hexahedron, 3, 8 + 12 * 2, {0, t, t});
  expect_node(Geometry::Hexahedron, 3, 8 + 12 * 2 + 1, {0, 2 * t, t});
  expect_node(Geometry::Hexahedron, 3, 8 + 12 * 2 + 24, {t, t, t});
  expect_node(Geometry::Hexahedron, 3, 8 + 12 * 2 + 25, {2 * t, t, t});
  // Quadrilateral p = 3: edge 2 runs from (0,1) to (1,1), edge 3 from (0,0) to (0,1).
  expect_node(Geometry::Quadrilateral, 3, 4 + 2 * 2, {t, 1, 0});
  expect_node(Geometry::Quadrilateral, 3, 4 + 3 * 2, {0, t, 0});
}

// ---- the writer ------------------------------------------------------------------------------

// The numbers of DataArray `name` in an ASCII document.
std::vector<double> ascii_array(const std::string& doc, const std::string& name) {
  const auto k = doc.find("Name=\"" + name + "\"");
  EXPECT_NE(k, std::string::npos) << name;
  if (k == std::string::npos) return {};
  const auto b = doc.find('>', k) + 1, e = doc.find("</DataArray>", b);
  std::vector<double> v;
  std::istringstream in(doc.substr(b, e - b));
  for (double x; in >> x;) v.push_back(x);
  return v;
}

Mesh test_mesh(Geometry g) {
  tessera::fem::BoxOptions o;
  o.size = {1.0, 0.75, 1.25};
  // Perturbed simplices stay affine (the test's polynomial is then in the space); quads and
  // hexes stay parallelograms.
  if (g == Geometry::Triangle || g == Geometry::Tetrahedron) o.perturb = 0.2;
  const int d = tessera::fem::dim(g);
  return tessera::fem::box_mesh(g, {d >= 1 ? 3 : 1, d >= 2 ? 2 : 1, d >= 3 ? 2 : 1}, o);
}

// A polynomial of total degree p (in every order-p space on affine elements).
struct Poly {
  int p;
  TESSERA_HOST_DEVICE double operator()(const double* x, double*) const {
    double s = 1.0;
    for (int k = 0; k < p; ++k) s *= 0.5 + x[0] - 0.7 * x[1] + 0.4 * x[2] + 0.1 * k;
    return s;
  }
};

// Write at p = 1..4 on every geometry: the point data at every written point is the field
// there (its position being the element map of VTK's node), and read_vtu gives back the
// mesh: the same corners per cell, the vertices merged.
TEST(VtuLagrange, EveryPointCarriesTheFieldAndTheMeshReadsBack) {
  const tessera::Exec exec = tessera::Exec::serial();
  for (Geometry g : kGeometries)
    for (int p = 1; p <= 4; ++p) {
      SCOPED_TRACE(std::string(tessera::fem::name(g)) + " p = " + std::to_string(p));
      const Mesh mesh = test_mesh(g);
      const tessera::fem::H1Space space(mesh, p);
      tessera::Array<double, 1> u("u", {space.num_dofs()}, exec.space());
      tessera::fem::interpolate_function(space, Poly{p}, u.view(), exec);
      const std::vector<double> dofs = u.to_vector();
      const VtuSpaceField field{"u", &space, dofs};
      // The function field sees the space field's value at the point (`at`).
      const VtuFunctionField fn{"u_minus_exact", 1, [p](index_t, const double* x, const double* at, double* v) {
                                  v[0] = at[0] - Poly{p}(x, nullptr);
                                }};
      const std::string doc = tessera::io::write_vtu_lagrange_string(mesh, p, {&field, 1}, {&fn, 1},
                                                                     VtuOptions{Encoding::Ascii});
      const std::vector<double> pts = ascii_array(doc, "Points"), val = ascii_array(doc, "u"),
                                diff = ascii_array(doc, "u_minus_exact");
      const index_t np = p == 1 ? mesh.num_vertices() : mesh.num_elements() * tessera::fem::num_nodes(g, p);
      ASSERT_EQ(val.size(), std::size_t(np));
      ASSERT_EQ(pts.size(), 3 * std::size_t(np));
      double scale = 0;
      for (double v : val) scale = std::max(scale, std::abs(v));
      // The interpolant reproduces the polynomial to rounding: the basis sums ~p^d terms of
      // size <= the Lebesgue constant (< 10 here), so 1e-12 relative is ample.
      for (index_t k = 0; k < np; ++k) {
        const double x[3] = {pts[std::size_t(3 * k)], pts[std::size_t(3 * k + 1)], pts[std::size_t(3 * k + 2)]};
        ASSERT_NEAR(val[std::size_t(k)], Poly{p}(x, nullptr), 1e-12 * scale) << "point " << k;
        ASSERT_NEAR(diff[std::size_t(k)], 0.0, 1e-12 * scale) << "point " << k;
      }
      // The points of cell e are the element map at VTK's nodes (hexahedra in VTK 8's order,
      // which a version-1.0 file promises: vertical edges (0,1) and (1,1) swapped).
      if (p >= 2) {
        auto ref = tessera::io::vtk_lagrange_nodes(g, p);
        if (g == Geometry::Hexahedron)
          std::swap_ranges(ref.begin() + 8 + 10 * (p - 1), ref.begin() + 8 + 11 * (p - 1),
                           ref.begin() + 8 + 11 * (p - 1));
        const index_t e = mesh.num_elements() - 1, n = index_t(ref.size());
        for (index_t j = 0; j < n; ++j) {
          const auto x = mesh.map(e, std::span<const double>(ref[std::size_t(j)].data(), std::size_t(tessera::fem::dim(g))));
          for (int c = 0; c < mesh.space_dim(); ++c)
            EXPECT_NEAR(pts[std::size_t(3 * (e * n + j) + c)], x[std::size_t(c)], 1e-14) << "node " << j;
        }
      }
      for (Encoding enc : {Encoding::Ascii, Encoding::BinaryAppended}) {
        std::vector<tessera::io::VtuField> fields;
        const std::string d = enc == Encoding::Ascii ? doc
                                                     : tessera::io::write_vtu_lagrange_string(mesh, p, {&field, 1}, {&fn, 1});
        const Mesh back = tessera::io::read_vtu_bytes(d, "lagrange.vtu", &fields);
        ASSERT_EQ(back.num_elements(), mesh.num_elements());
        EXPECT_EQ(back.num_vertices(), mesh.num_vertices());  // per-cell corners merged again
        EXPECT_EQ(back.space_dim(), mesh.space_dim());
        for (index_t e = 0; e < mesh.num_elements(); ++e) {
          ASSERT_EQ(back.element_geometry(e), g);
          EXPECT_EQ(back.element_attribute(e), mesh.element_attribute(e));
          const auto a = mesh.element_vertices(e), b = back.element_vertices(e);
          for (std::size_t v = 0; v < a.size(); ++v)
            for (int c = 0; c < mesh.space_dim(); ++c) EXPECT_EQ(back.vertex(b[v], c), mesh.vertex(a[v], c));
        }
        ASSERT_EQ(fields.size(), 2u);
        EXPECT_EQ(fields[0].name, "u");
        ASSERT_EQ(fields[0].values.size(), std::size_t(back.num_vertices()));
        for (index_t v = 0; v < back.num_vertices(); ++v) {
          double x[3] = {0, 0, 0};
          for (int c = 0; c < back.space_dim(); ++c) x[c] = back.vertex(v, c);
          EXPECT_NEAR(fields[0].values[std::size_t(v)], Poly{p}(x, nullptr), 1e-12 * scale);
        }
      }
    }
}

TEST(VtuLagrange, VectorFieldsArePaddedAndCellTypesAreLagrange) {
  const Mesh mesh = test_mesh(Geometry::Quadrilateral);  // 6 quads
  const tessera::fem::H1Space vec(mesh, 2, 2);
  std::vector<double> dofs(std::size_t(vec.num_dofs()));
  for (index_t n = 0; n < vec.num_nodes(); ++n) {
    dofs[std::size_t(vec.dof(0, n))] = 1.0;
    dofs[std::size_t(vec.dof(1, n))] = -2.0;
  }
  const VtuSpaceField f{"disp", &vec, dofs, 3};
  const std::string doc = tessera::io::write_vtu_lagrange_string(mesh, 2, {&f, 1}, {}, VtuOptions{Encoding::Ascii});
  EXPECT_NE(doc.find("Name=\"disp\" NumberOfComponents=\"3\""), std::string::npos);
  const auto v = ascii_array(doc, "disp");
  ASSERT_EQ(v.size(), 3u * 6 * 9);
  for (std::size_t k = 0; k < v.size(); k += 3) {
    EXPECT_NEAR(v[k], 1.0, 1e-14);  // the basis sums to 1 at every point
    EXPECT_NEAR(v[k + 1], -2.0, 1e-14);
    EXPECT_EQ(v[k + 2], 0.0);
  }
  EXPECT_NE(doc.find("70 70 70 70 70 70"), std::string::npos);  // VTK_LAGRANGE_QUADRILATERAL
  EXPECT_NE(doc.find("9 18 27 36 45 54"), std::string::npos);   // offsets: 9 points a cell
  EXPECT_NE(doc.find("version=\"1.0\""), std::string::npos);
  // p = 1: the linear cells on the mesh vertices, as write_vtu.
  const tessera::fem::H1Space s1(mesh, 1);
  const std::vector<double> d1(std::size_t(s1.num_dofs()), 0.5);
  const VtuSpaceField f1{"c", &s1, d1};
  const std::string lin = tessera::io::write_vtu_lagrange_string(mesh, 1, {&f1, 1}, {}, VtuOptions{Encoding::Ascii});
  EXPECT_NE(lin.find("NumberOfPoints=\"12\" NumberOfCells=\"6\""), std::string::npos);
  EXPECT_NE(lin.find("9 9 9 9 9 9"), std::string::npos);
}

TEST(VtuLagrange, BadFieldsAreRefusedByName) {
  const Mesh mesh = test_mesh(Geometry::Triangle), other = test_mesh(Geometry::Triangle);
  const tessera::fem::H1Space s2(mesh, 2), s3(mesh, 3), elsewhere(other, 2);
  const std::vector<double> d2(std::size_t(s2.num_dofs())), d3(std::size_t(s3.num_dofs()));
  auto write = [&](const VtuSpaceField& f) { tessera::io::write_vtu_lagrange_string(mesh, 2, {&f, 1}); };
  EXPECT_ERROR_MENTIONS(write({"u", &s3, d3}), "'u'", "order 3", "order 2");
  const std::string expected = "expected " + std::to_string(s2.num_dofs());
  EXPECT_ERROR_MENTIONS(write({"u", &s2, d3}), "'u'", expected.c_str());
  EXPECT_ERROR_MENTIONS(write({"u", &elsewhere, d2}), "'u'", "another mesh");
  EXPECT_ERROR_MENTIONS(write({"", &s2, d2}), "empty name");
  EXPECT_ERROR_MENTIONS(write({"u", nullptr, d2}), "no space");
  const VtuSpaceField twice[2] = {{"u", &s2, d2}, {"u", &s2, d2}};
  EXPECT_ERROR_MENTIONS(tessera::io::write_vtu_lagrange_string(mesh, 2, twice), "field 1 'u'", "must differ");
  EXPECT_ERROR_MENTIONS(tessera::io::write_vtu_lagrange_string(mesh, 0, {}), "order 0");
  EXPECT_ERROR_MENTIONS(tessera::io::write_vtu_lagrange("/no/such/dir/u.vtu", mesh, 2, {}), "/no/such/dir/u.vtu",
                        "cannot open");
}

TEST(VtuLagrange, PvdListsTheFilesWithTheirTimes) {
  const std::string path = ::testing::TempDir() + "/tessera_collection.pvd";
  const tessera::io::PvdEntry entries[2] = {{0.0, "u_0.vtu"}, {1.0, "u_1.vtu"}};
  tessera::io::write_pvd(path, entries);
  std::ifstream in(path);
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(doc.find("<VTKFile type=\"Collection\""), std::string::npos);
  EXPECT_NE(doc.find("timestep=\"0\" group=\"\" part=\"0\" file=\"u_0.vtu\""), std::string::npos);
  EXPECT_NE(doc.find("timestep=\"1\" group=\"\" part=\"0\" file=\"u_1.vtu\""), std::string::npos);
}

}  // namespace

namespace {

// Lagrange cells as other tools write them: shared points, cells of different orders.
TEST(VtuLagrangeRead, SharedPointsAndMixedOrdersReadByCorners) {
  // Two triangles on the unit square: an order-2 one (6 nodes) and an order-1 Lagrange one
  // (3 nodes) sharing the diagonal's corners; the other nodes are no vertices.
  const std::string doc = R"(<?xml version="1.0"?>
<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian">
<UnstructuredGrid><Piece NumberOfPoints="7" NumberOfCells="2">
<PointData><DataArray type="Float32" Name="p" format="ascii">0 1 2 3 4 5 6</DataArray></PointData>
<Points><DataArray type="Float32" NumberOfComponents="3" format="ascii">
0 0 0  1 0 0  1 1 0  0.5 0 0  1 0.5 0  0.5 0.5 0  0 1 0</DataArray></Points>
<Cells>
<DataArray type="Int32" Name="connectivity" format="ascii">0 1 2 3 4 5  0 2 6</DataArray>
<DataArray type="Int32" Name="offsets" format="ascii">6 9</DataArray>
<DataArray type="UInt8" Name="types" format="ascii">69 69</DataArray>
</Cells></Piece></UnstructuredGrid></VTKFile>
)";
  std::vector<tessera::io::VtuField> fields;
  const Mesh m = tessera::io::read_vtu_bytes(doc, "shared.vtu", &fields);
  ASSERT_EQ(m.num_elements(), 2);
  ASSERT_EQ(m.num_vertices(), 4);  // the corners 0, 1, 2, 6
  EXPECT_EQ(m.element_geometry(0), Geometry::Triangle);
  EXPECT_EQ(m.vertex(m.element_vertices(1)[2], 1), 1.0);  // point 6 = (0, 1)
  ASSERT_EQ(fields.size(), 1u);
  EXPECT_EQ(fields[0].values, (std::vector<double>{0, 1, 2, 6}));  // at the corners
  // 5 nodes: no triangle order has them.
  std::string bad = doc;
  bad.replace(bad.find(">6 9<"), 5, ">5 9<");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(bad, "bad.vtu"), "bad.vtu", "offsets[0] = 5",
                        "Lagrange triangle cell 0", "no order has");
}

}  // namespace
