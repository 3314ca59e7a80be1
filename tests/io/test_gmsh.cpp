// Tests of the Gmsh MSH reader: committed files in data/, meshes that gmsh makes from geo/
// at test time (in all four encodings), and malformed inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "io_test_util.hpp"
#include "../../src/io/high_order.hpp"
#include "tessera/fem/reference_element.hpp"
#include "tessera/io/gmsh.hpp"

namespace {

using tessera::fem::Geometry;
using tessera::fem::Mesh;
using tessera::io::read_gmsh;
using tessera::io::read_gmsh_bytes;

using tessera::io::test::data_path;
using tessera::io::test::slurp;
std::string geo_path(const std::string& f) { return std::string(TESSERA_IO_TEST_GEO) + "/" + f; }

/// Counts of the elements of each Gmsh type in an ASCII MSH 2.2 file, parsed independently
/// of the reader (one element per line: id type ...).
std::map<int, int> count_types_v22(const std::string& text) {
  std::map<int, int> counts;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line) && line.rfind("$Elements", 0) != 0) {
  }
  int n = 0;
  in >> n;
  std::getline(in, line);
  for (int i = 0; i < n && std::getline(in, line); ++i) {
    std::istringstream ls(line);
    int id = 0, type = 0;
    ls >> id >> type;
    ++counts[type];
  }
  return counts;
}

/// Checks the boundary attributes of the geo/ meshes: attribute 11 + 2 * axis + side marks
/// the face x_axis = side of the unit square or cube; every such face must be present.
void expect_box_boundary_attributes(const Mesh& m) {
  std::map<int, int> seen;
  for (tessera::index_t b = 0; b < m.num_boundary(); ++b) {
    const int a = m.boundary_attribute(b);
    ASSERT_GE(a, 11);
    ASSERT_LT(a, 11 + 2 * m.dim());
    ++seen[a];
    const int axis = (a - 11) / 2;
    const double side = (a - 11) % 2;
    // Gmsh writes the box faces' coordinates exactly (0 and 1 come from the geo points).
    for (tessera::index_t v : m.boundary_vertices(b)) EXPECT_EQ(m.vertex(v, axis), side) << "boundary face " << b;
  }
  EXPECT_EQ(int(seen.size()), 2 * m.dim());
}

/// Equality of two meshes: connectivity, geometries and attributes exactly, coordinates
/// within `coord_tol`.
void expect_same_mesh(const Mesh& a, const Mesh& b, const std::string& what, double coord_tol) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.space_dim(), b.space_dim());
  ASSERT_EQ(a.num_vertices(), b.num_vertices());
  ASSERT_EQ(a.num_elements(), b.num_elements());
  ASSERT_EQ(a.num_boundary(), b.num_boundary());
  for (std::size_t i = 0; i < a.coordinates().size(); ++i)
    ASSERT_NEAR(a.coordinates()[i], b.coordinates()[i], coord_tol) << "coordinate " << i;
  for (tessera::index_t e = 0; e < a.num_elements(); ++e) {
    ASSERT_EQ(a.element_geometry(e), b.element_geometry(e));
    ASSERT_EQ(a.element_attribute(e), b.element_attribute(e));
    const auto va = a.element_vertices(e), vb = b.element_vertices(e);
    ASSERT_TRUE(std::equal(va.begin(), va.end(), vb.begin(), vb.end())) << "element " << e;
  }
  for (tessera::index_t f = 0; f < a.num_boundary(); ++f) {
    ASSERT_EQ(a.boundary_geometry(f), b.boundary_geometry(f));
    ASSERT_EQ(a.boundary_attribute(f), b.boundary_attribute(f));
    const auto va = a.boundary_vertices(f), vb = b.boundary_vertices(f);
    ASSERT_TRUE(std::equal(va.begin(), va.end(), vb.begin(), vb.end())) << "boundary face " << f;
  }
}

// The measures below are sums of some hundred element areas/volumes of straight-sided
// elements tiling the unit box exactly; rounding in the coordinates (printed with 16
// digits) and in the sums stays far below 1e-12.
constexpr double kMeasureTol = 1e-12;

// ---- committed files ----------------------------------------------------------------------

TEST(GmshData, SquareTrianglesV22) {
  const std::string path = data_path("square_tri_v22.msh");
  std::vector<std::string> warnings;
  const Mesh m = read_gmsh(path, &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_NO_THROW(m.validate(path));
  EXPECT_EQ(m.dim(), 2);
  EXPECT_EQ(m.space_dim(), 2);  // z = 0 everywhere: dropped
  const auto counts = count_types_v22(slurp(path));
  EXPECT_EQ(m.num_elements(), counts.at(2));
  EXPECT_EQ(m.num_elements(Geometry::Triangle), m.num_elements());
  EXPECT_EQ(m.num_boundary(), counts.at(1));
  EXPECT_NEAR(m.measure(), 1.0, kMeasureTol);
  for (tessera::index_t e = 0; e < m.num_elements(); ++e) EXPECT_EQ(m.element_attribute(e), 1);
  expect_box_boundary_attributes(m);
}

TEST(GmshData, SquareQuadrilateralsV41) {
  const Mesh m = read_gmsh(data_path("square_quad_v41.msh"));
  EXPECT_EQ(m.dim(), 2);
  EXPECT_EQ(m.num_elements(Geometry::Quadrilateral), 5 * 4);  // transfinite 5 x 4 cells (geo file)
  EXPECT_EQ(m.num_elements(), 20);
  EXPECT_EQ(m.num_boundary(), 2 * (5 + 4));
  EXPECT_EQ(m.num_vertices(), 6 * 5);
  EXPECT_NEAR(m.measure(), 1.0, kMeasureTol);
  expect_box_boundary_attributes(m);
}

TEST(GmshData, CubeTetrahedraV41Binary) {
  const Mesh m = read_gmsh(data_path("cube_tet_v41_bin.msh"));
  EXPECT_EQ(m.dim(), 3);
  EXPECT_EQ(m.space_dim(), 3);
  EXPECT_GT(m.num_elements(), 0);
  EXPECT_EQ(m.num_elements(Geometry::Tetrahedron), m.num_elements());
  EXPECT_NEAR(m.measure(), 1.0, kMeasureTol);
  for (tessera::index_t e = 0; e < m.num_elements(); ++e) EXPECT_EQ(m.element_attribute(e), 1);
  expect_box_boundary_attributes(m);
}

TEST(GmshData, CubeHexahedraV22Binary) {
  const Mesh m = read_gmsh(data_path("cube_hex_v22_bin.msh"));
  EXPECT_EQ(m.num_elements(Geometry::Hexahedron), 3 * 3 * 2);  // transfinite 3 x 3 x 2 (geo file)
  EXPECT_EQ(m.num_boundary(), 2 * (3 * 3 + 3 * 2 + 3 * 2));
  EXPECT_EQ(m.num_vertices(), 4 * 4 * 3);
  EXPECT_NEAR(m.measure(), 1.0, kMeasureTol);
  expect_box_boundary_attributes(m);
}

TEST(GmshData, SecondOrderSquareKeepsItsNodes) {
  // 6-node triangles of the unit square: read with an order-2 map (straight, as the geo's
  // edges are), the vertices being the corners only, as in the first-order mesh
  std::vector<std::string> warnings;
  const Mesh m = read_gmsh(data_path("square_tri_order2_v41.msh"), &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(m.nodes_order(), 2);
  const Mesh first = read_gmsh(data_path("square_tri_v22.msh"));
  EXPECT_EQ(m.num_vertices(), first.num_vertices());
  EXPECT_EQ(m.num_elements(), first.num_elements());
  EXPECT_EQ(m.num_boundary(), first.num_boundary());
  EXPECT_NEAR(m.measure(), 1.0, kMeasureTol);
  expect_box_boundary_attributes(m);
}

// Curved meshes made by gmsh 4.15.2 from geo/disc.geo, ball.geo and cylinder_hex.geo (the
// commands are in the geo files; the P3 cylinder with -setnumber Mesh.HighOrderOptimize 2).
// `gmsh` is the measure gmsh itself computes for the file (Gauss12 rule on its own
// Jacobians); the reader's nodes reproduce gmsh's map exactly, so the two agree up to the
// quadrature rules on det J (polynomial of degree <= dim (k - 1) + ... for these orders,
// both rules near exact): 1e-9 relative. `exact` is the domain's measure (pi, 4 pi / 3,
// pi / 2); the difference is the geometric error of an order-k boundary on these coarse
// meshes (h = 0.6 to 0.9), bounded here by `exact_tol`, well below the corner polygon's
// error (about 0.1 for the disc at h = 0.6).
struct CurvedCase {
  const char* file;
  int order, dim;
  Geometry cell;
  double gmsh, exact, exact_tol;
};

TEST(GmshData, CurvedMeshesKeepTheirGeometry) {
  const double pi = 3.14159265358979324;
  for (const CurvedCase& c : {
           CurvedCase{"disc_tri_p2_v41.msh", 2, 2, Geometry::Triangle, 3.141104721642, pi, 1e-3},
           CurvedCase{"disc_quad_p3_v22.msh", 3, 2, Geometry::Quadrilateral, 3.141615468908, pi, 1e-4},
           CurvedCase{"disc_tri_p4_v22_bin.msh", 4, 2, Geometry::Triangle, 3.141592985270, pi, 1e-6},
           CurvedCase{"disc_quad_p4_v41.msh", 4, 2, Geometry::Quadrilateral, 3.141592712840, pi, 1e-6},
           CurvedCase{"ball_tet_p2_v41_bin.msh", 2, 3, Geometry::Tetrahedron, 4.150977803859, 4 * pi / 3, 0.05},
           CurvedCase{"ball_tet_p3_v41.msh", 3, 3, Geometry::Tetrahedron, 4.205248668527, 4 * pi / 3, 0.02},
           CurvedCase{"ball_tet_p4_v41_bin.msh", 4, 3, Geometry::Tetrahedron, 4.172987706985, 4 * pi / 3, 0.02},
           CurvedCase{"cylinder_hex_p2_v41.msh", 2, 3, Geometry::Hexahedron, 1.569573785156, pi / 2, 2e-3},
           CurvedCase{"cylinder_hex_p3_v22_bin.msh", 3, 3, Geometry::Hexahedron, 1.569432491723, pi / 2, 2e-3}}) {
    SCOPED_TRACE(c.file);
    std::vector<std::string> warnings;
    const Mesh m = read_gmsh(data_path(c.file), &warnings);
    EXPECT_TRUE(warnings.empty());
    EXPECT_EQ(m.dim(), c.dim);
    EXPECT_EQ(m.nodes_order(), c.order);
    ASSERT_GT(m.num_elements(), 0);
    EXPECT_EQ(m.element_geometry(0), c.cell);
    EXPECT_EQ(m.element_nodes(0).size(), std::size_t(tessera::fem::num_nodes(c.cell, c.order) * c.dim));
    EXPECT_NEAR(m.measure(), c.gmsh, 1e-9 * c.gmsh);
    EXPECT_NEAR(m.measure(), c.exact, c.exact_tol);
    EXPECT_GT(m.det_jacobian_range()[0], 0.0);
    EXPECT_NO_THROW(m.validate(c.file));
    // Refinement splits the curved map, whose children tile the same domain: the measure
    // stays (the corners alone would converge to it from the polygon's value instead)
    if (c.dim == 2) {
      EXPECT_NEAR(tessera::fem::refine_uniformly(m).measure(), m.measure(), 1e-12);
    }
  }
}

TEST(GmshData, TangledCurvedElementIsRefused) {
  // The P3 cylinder without gmsh's high-order optimization: gmsh reports a scaled Jacobian of
  // -0.013 in one hexahedron (tag 25), whose record starts at byte 10471
  EXPECT_ERROR_MENTIONS(read_gmsh(data_path("cylinder_hex_p3_tangled_v22_bin.msh")),
                        "cylinder_hex_p3_tangled_v22_bin.msh", "byte offset 10471", "element 25",
                        "64-node third-order hexahedron", "tangled", "det J");
}

TEST(GmshData, NodeOrderingIsGmsh) {
  // gmsh_node_coordinates.txt: per type (lines 8, 26, 27; triangles 9, 21, 23; quadrangles
  // 10, 36, 37; tetrahedra 11, 29, 30; hexahedra 12, 92, 93) the reference coordinates of
  // its nodes, printed by gmsh 4.15.2's getElementProperties (6 digits; [-1, 1] on lines,
  // quadrangles and hexahedra, [0, 1] on simplices)
  std::ifstream in(data_path("gmsh_node_coordinates.txt"));
  ASSERT_TRUE(in.good());
  std::string line;
  int types = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    int type = 0, dim = 0, order = 0, n = 0;
    ls >> type >> dim >> order >> n;
    const Geometry g = dim == 1 ? Geometry::Segment
                       : dim == 2 ? (n == (order + 1) * (order + 1) ? Geometry::Quadrilateral : Geometry::Triangle)
                       : (n == (order + 1) * (order + 1) * (order + 1) ? Geometry::Hexahedron : Geometry::Tetrahedron);
    const bool box = g == Geometry::Segment || g == Geometry::Quadrilateral || g == Geometry::Hexahedron;
    const auto points = tessera::io::detail::gmsh_node_points(g, order);
    ASSERT_EQ(int(points.size()), n) << type;
    for (int i = 0; i < n; ++i)
      for (int d = 0; d < dim; ++d) {
        double x = 0;
        ls >> x;
        if (box) x = (x + 1) / 2;
        EXPECT_NEAR(points[std::size_t(i)][std::size_t(d)], x, 1e-6) << "type " << type << " node " << i;  // 6 digits
      }
    ++types;
  }
  EXPECT_EQ(types, 15);
}

// ---- meshes made by gmsh at test time -------------------------------------------------------

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("tessera_io_gmsh_" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

struct GeoCase {
  const char* geo;
  int dim;
  Geometry geometry;
  int exact_count;  // expected elements when structured, else 0
};

void check_generated(const GeoCase& c) {
  const std::string gmsh = TESSERA_GMSH_EXECUTABLE;
  if (gmsh.empty()) GTEST_SKIP() << "gmsh not installed";
  TempDir dir;
  const char* encodings[4][2] = {{"msh22", ""}, {"msh22", "-bin"}, {"msh41", ""}, {"msh41", "-bin"}};
  std::vector<Mesh> meshes;
  std::string ascii22;
  for (auto& enc : encodings) {
    const std::string out = dir.file(std::string(c.geo) + "_" + enc[0] + (enc[1][0] ? "_bin" : "") + ".msh");
    const std::string cmd = "\"" + gmsh + "\" -" + std::to_string(c.dim) + " \"" + geo_path(std::string(c.geo) + ".geo") +
                            "\" -format " + enc[0] + " " + enc[1] + " -o \"" + out + "\" > \"" + out + ".log\" 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << slurp(out + ".log");
    SCOPED_TRACE(out);
    std::vector<std::string> warnings;
    Mesh m = read_gmsh(out, &warnings);
    EXPECT_TRUE(warnings.empty());
    EXPECT_NO_THROW(m.validate(out));
    EXPECT_EQ(m.dim(), c.dim);
    EXPECT_EQ(m.space_dim(), c.dim);
    EXPECT_EQ(m.num_elements(c.geometry), m.num_elements());
    EXPECT_NEAR(m.measure(), 1.0, kMeasureTol);
    expect_box_boundary_attributes(m);
    if (c.exact_count > 0) {
      EXPECT_EQ(m.num_elements(), c.exact_count);
    }
    if (std::string(enc[0]) == "msh22" && !enc[1][0]) ascii22 = slurp(out);
    meshes.push_back(std::move(m));
  }
  // Element counts as the ASCII 2.2 file declares them, counted independently per type.
  const auto counts = count_types_v22(ascii22);
  const int cell_type = c.geometry == Geometry::Triangle ? 2 : c.geometry == Geometry::Quadrilateral ? 3
                        : c.geometry == Geometry::Tetrahedron ? 4 : 5;
  const int face_type = c.dim == 2 ? 1 : (c.geometry == Geometry::Tetrahedron ? 2 : 3);
  EXPECT_EQ(meshes[0].num_elements(), counts.at(cell_type));
  EXPECT_EQ(meshes[0].num_boundary(), counts.at(face_type));
  // ASCII files print coordinates with 16 significant digits, binary files hold the doubles:
  // for coordinates in [0, 1] they differ by at most half a unit of the 16th digit, 5e-16.
  // Files of the same kind (ASCII 2.2 and 4.1; binary 2.2 and 4.1) hold the same digits.
  expect_same_mesh(meshes[0], meshes[2], "ASCII 2.2 vs ASCII 4.1", 0.0);
  expect_same_mesh(meshes[1], meshes[3], "binary 2.2 vs binary 4.1", 0.0);
  expect_same_mesh(meshes[0], meshes[1], "ASCII 2.2 vs binary 2.2", 1e-15);
}

TEST(GmshGenerated, SquareTriangles) { check_generated({"square_tri", 2, Geometry::Triangle, 0}); }
TEST(GmshGenerated, SquareQuadrilaterals) { check_generated({"square_quad", 2, Geometry::Quadrilateral, 20}); }
TEST(GmshGenerated, CubeTetrahedra) { check_generated({"cube_tet", 3, Geometry::Tetrahedron, 0}); }
TEST(GmshGenerated, CubeHexahedra) { check_generated({"cube_hex", 3, Geometry::Hexahedron, 18}); }

// Orders 2 to 4 of the same geo: the geometry of every order (straight, as the geo's is) has
// the first-order mesh's vertices, elements and measure, and the order of the file.
TEST(GmshGenerated, HigherOrderElementsKeepTheirNodes) {
  const std::string gmsh = TESSERA_GMSH_EXECUTABLE;
  if (gmsh.empty()) GTEST_SKIP() << "gmsh not installed";
  TempDir dir;
  for (const auto& [geo, dim] : {std::pair<const char*, int>{"square_tri", 2}, {"square_quad", 2}, {"cube_hex", 3},
                                 {"cube_tet", 3}}) {
    Mesh first;
    for (int order = 1; order <= 4; ++order) {
      const std::string out = dir.file(std::string(geo) + "_p" + std::to_string(order) + ".msh");
      const std::string cmd = "\"" + gmsh + "\" -" + std::to_string(dim) + " -order " + std::to_string(order) + " \"" +
                              geo_path(std::string(geo) + ".geo") + "\" -format msh41 -o \"" + out + "\" > \"" + out +
                              ".log\" 2>&1";
      ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
      SCOPED_TRACE(out);
      std::vector<std::string> warnings;
      Mesh m = read_gmsh(out, &warnings);
      EXPECT_TRUE(warnings.empty());
      if (order == 1) {
        EXPECT_EQ(m.nodes_order(), 0);
        first = std::move(m);
        continue;
      }
      EXPECT_EQ(m.nodes_order(), order);
      EXPECT_EQ(m.num_vertices(), first.num_vertices());
      EXPECT_EQ(m.num_elements(), first.num_elements());
      EXPECT_EQ(m.num_boundary(), first.num_boundary());
      EXPECT_NEAR(m.measure(), 1.0, 1e-11);  // straight elements tiling the box; rounding of many terms
      expect_box_boundary_attributes(m);
    }
  }
}

// ---- small hand-written files ---------------------------------------------------------------

const std::string kHead22 = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n";
const std::string kHead41 = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n";

// Two triangles of the unit square with node tags sparse, unordered, and one unused node.
const std::string kSparse22 = kHead22 +
                              "$PhysicalNames\n1\n2 5 \"domain\"\n$EndPhysicalNames\n"
                              "$Nodes\n5\n100 1 1 0\n7 0 0 0\n9999 5 5 5\n55 1 0 0\n3 0 1 0\n$EndNodes\n"
                              "$Elements\n3\n"
                              "1 2 2 5 1 7 55 100\n"
                              "2 2 2 0 4 7 100 3\n"
                              "3 1 2 9 2 7 55\n"
                              "$EndElements\n"
                              "$Comments\nanything $Nodes\n$EndComments\n";

TEST(GmshSmall, SparseUnorderedTagsAreCompactedInTagOrder) {
  const Mesh m = read_gmsh_bytes(kSparse22, "sparse.msh");
  ASSERT_EQ(m.num_vertices(), 4);  // node 9999 is unused
  EXPECT_EQ(m.space_dim(), 2);     // the unused node's z = 5 does not count
  // Tag order 3, 7, 55, 100 -> vertices 0..3.
  EXPECT_EQ(m.vertex(0, 1), 1.0);  // tag 3: (0, 1)
  EXPECT_EQ(m.vertex(1, 0), 0.0);  // tag 7: (0, 0)
  EXPECT_EQ(m.vertex(2, 0), 1.0);  // tag 55: (1, 0)
  EXPECT_EQ(m.vertex(3, 1), 1.0);  // tag 100: (1, 1)
  ASSERT_EQ(m.num_elements(), 2);
  const auto v0 = m.element_vertices(0);
  EXPECT_EQ(std::vector<tessera::index_t>(v0.begin(), v0.end()), (std::vector<tessera::index_t>{1, 2, 3}));
  EXPECT_EQ(m.element_attribute(0), 5);  // physical tag
  EXPECT_EQ(m.element_attribute(1), 4);  // physical tag 0: elementary tag
  ASSERT_EQ(m.num_boundary(), 1);
  EXPECT_EQ(m.boundary_attribute(0), 9);
  EXPECT_NEAR(m.measure(), 1.0, 1e-15);  // two right triangles of area 1/2, exact in binary
}

TEST(GmshSmall, ElementsListedOncePerPhysicalGroupAreReadOnce) {
  // MSH 2.2 writes an element once per physical group (here 5 and 6) under a new element tag
  std::string s = kHead22 + "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n$EndNodes\n$Elements\n4\n"
                            "1 2 2 5 1 1 2 3\n2 2 2 5 1 1 3 4\n3 2 2 6 1 1 2 3\n4 2 2 6 1 1 3 4\n$EndElements\n";
  std::vector<std::string> warnings;
  const Mesh m = read_gmsh_bytes(s, "twice.msh", &warnings);
  ASSERT_EQ(m.num_elements(), 2);
  EXPECT_EQ(m.element_attribute(0), 5);  // the first listing's group
  EXPECT_EQ(m.element_attribute(1), 5);
  EXPECT_NEAR(m.measure(), 1.0, 1e-15);  // two right triangles of area 1/2, exact in binary
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("2 elements repeat"), std::string::npos) << warnings[0];
}

TEST(GmshSmall, PeriodicSectionIsIgnoredWithAWarning) {
  // the unit square with its top edge periodic to its bottom one (MSH 2.2 $Periodic: entity
  // pairs and their node pairs); the mesh is read as it stands, non-periodic, and said so
  const std::string s = kHead22 + "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n$EndNodes\n"
                                  "$Elements\n2\n1 2 2 1 1 1 2 3\n2 2 2 1 1 1 3 4\n$EndElements\n"
                                  "$Periodic\n1\n1 3 1\n2\n4 1\n3 2\n$EndPeriodic\n";
  std::vector<std::string> warnings;
  const Mesh m = read_gmsh_bytes(s, "periodic.msh", &warnings);
  EXPECT_EQ(m.num_vertices(), 4);  // the paired nodes stay apart
  EXPECT_NEAR(m.measure(), 1.0, 1e-15);  // two right triangles of area 1/2, exact in binary
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("$Periodic"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("non-periodic"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("periodic.msh"), std::string::npos) << warnings[0];
}

TEST(GmshSmall, ClockwiseTwoDimensionalMeshesAreReversedAndMixedOnesRefused) {
  // Every element clockwise (the curve loop or the normal reversed in Gmsh): read reversed,
  // corner 0 first; a triangle and a quadrilateral
  const std::string nodes = "$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 2 0 0\n$EndNodes\n";
  const std::string cw = kHead22 + "$Nodes\n6\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n5 2 0 0\n6 2 1 0\n$EndNodes\n"
                 "$Elements\n3\n1 2 2 1 1 1 3 2\n2 2 2 1 1 1 4 3\n3 3 2 1 1 2 3 6 5\n$EndElements\n";
  std::vector<std::string> warnings;
  const Mesh m = read_gmsh_bytes(cw, "cw.msh", &warnings);
  ASSERT_EQ(m.num_elements(), 3);
  const auto t0 = m.element_vertices(0), q = m.element_vertices(2);
  // tags 1, 3, 2 -> vertices 0, 2, 1, reversed: 0, 1, 2; quad tags 2, 3, 6, 5 -> 1, 2, 5, 4, reversed 1, 4, 5, 2
  EXPECT_EQ(std::vector<tessera::index_t>(t0.begin(), t0.end()), (std::vector<tessera::index_t>{0, 1, 2}));
  EXPECT_EQ(std::vector<tessera::index_t>(q.begin(), q.end()), (std::vector<tessera::index_t>{1, 4, 5, 2}));
  EXPECT_NEAR(m.measure(), 2.0, 1e-15);
  EXPECT_GT(m.det_jacobian_range()[0], 0.0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("clockwise"), std::string::npos) << warnings[0];
  // One element of each turn: overlapping elements, refused as inverted
  const std::string mixed = kHead22 + nodes + "$Elements\n2\n1 2 2 1 1 1 2 3\n2 2 2 1 1 1 4 3\n$EndElements\n";
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(mixed, "mixed.msh"), "mixed.msh", "inverted");
}

TEST(GmshSmall, ParametricNodesV22) {
  // gmsh -save_parametric: each node adds its entity's dimension and tag and 0-2 parameters
  const std::string s = kHead22 +
                        "$ParametricNodes\n5\n1 0 0 0 0 1\n2 1 0 0 0 2\n3 1 1 0 0 3\n4 0 1 0 0 4\n"
                        "5 0.5 0 0 1 1 0.5\n$EndParametricNodes\n"
                        "$Elements\n2\n1 2 2 1 1 1 2 3\n2 2 2 1 1 1 3 4\n$EndElements\n";
  const Mesh m = read_gmsh_bytes(s, "param.msh");
  EXPECT_EQ(m.num_vertices(), 4);  // node 5 (on a curve, one parameter) is unused
  ASSERT_EQ(m.num_elements(), 2);
  EXPECT_NEAR(m.measure(), 1.0, 1e-15);  // two right triangles of area 1/2, exact in binary
  // a parametric line with a missing parameter runs into the next node's tag and then the end
  const std::string bad = kHead22 + "$ParametricNodes\n1\n1 0 0 0 2 1 0.5\n$EndParametricNodes\n";
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(bad, "bad.msh"), "bad.msh", "parametric coordinate");
}

TEST(GmshSmall, IncompleteAndFifthOrderTypesAreRefused) {
  // type 39: the 12-node third-order incomplete quadrangle; 16: the 8-node serendipity one;
  // type 38: the 36-node fifth-order one (geometry order above 4)
  std::ostringstream nodes;
  nodes << "$Nodes\n36\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n";
  for (int i = 5; i <= 36; ++i) nodes << i << " 0.5 0.5 0\n";
  nodes << "$EndNodes\n";
  auto element = [](int type, int n) {
    std::ostringstream el;
    el << "$Elements\n1\n1 " << type << " 2 1 1";
    for (int i = 1; i <= n; ++i) el << ' ' << i;
    el << "\n$EndElements\n";
    return el.str();
  };
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + nodes.str() + element(39, 12), "ho.msh"), "ho.msh", "line 45",
                        "element type 39", "incomplete");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + nodes.str() + element(16, 8), "ho.msh"), "ho.msh", "line 45",
                        "element type 16", "serendipity");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + nodes.str() + element(38, 36), "ho.msh"), "ho.msh", "line 45",
                        "element type 38", "order higher", "4");
}

// One 6-node triangle on (0,0), (1,0), (0,1) whose edge 1-2 bulges out through (0.6, 0.6):
// the edge is a parabola whose midpoint lies d = 0.1 sqrt(2) off the chord of length
// sqrt(2), which adds (2/3) d sqrt(2) = 2/15 to the straight triangle's 1/2.
const std::string kCurvedTri22 = kHead22 +
                                 "$Nodes\n6\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0.5 0 0\n5 0.6 0.6 0\n6 0 0.5 0\n"
                                 "$EndNodes\n";

TEST(GmshSmall, QuadraticTriangleKeepsItsCurvedEdge) {
  const Mesh m = read_gmsh_bytes(kCurvedTri22 + "$Elements\n1\n1 9 2 1 1 1 2 3 4 5 6\n$EndElements\n", "p2.msh");
  EXPECT_EQ(m.nodes_order(), 2);
  EXPECT_NEAR(m.measure(), 0.5 + 2.0 / 15, 1e-14);  // a few roundings of O(1) values
  // Listed clockwise (vertices 1 3 2, edge nodes 6 5 4): reversed, the same curved triangle
  std::vector<std::string> warnings;
  const Mesh cw =
      read_gmsh_bytes(kCurvedTri22 + "$Elements\n1\n1 9 2 1 1 1 3 2 6 5 4\n$EndElements\n", "cw.msh", &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("clockwise"), std::string::npos) << warnings[0];
  EXPECT_EQ(cw.nodes_order(), 2);
  EXPECT_NEAR(cw.measure(), 0.5 + 2.0 / 15, 1e-14);
  EXPECT_GT(cw.det_jacobian_range()[0], 0.0);
  // The bulge pushed back through the opposite vertex: det J < 0 near vertex 0's side
  const std::string tangled = kHead22 +
                              "$Nodes\n6\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0.5 0 0\n5 -0.3 -0.3 0\n6 0 0.5 0\n"
                              "$EndNodes\n$Elements\n1\n7 9 2 1 1 1 2 3 4 5 6\n$EndElements\n";
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(tangled, "t.msh"), "t.msh", "line 15", "element 7", "6-node second-order triangle",
                        "tangled");
}

TEST(GmshSmall, NodeCountNotMatchingTheTypeIsNamed) {
  // Type 9 has 6 nodes; a line with 5 or 7 is named with its line and element tag
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kCurvedTri22 + "$Elements\n1\n3 9 2 1 1 1 2 3 4 5\n$EndElements\n", "n.msh"),
                        "n.msh", "line 15", "element 3", "type 9", "lists 5 nodes", "has 6");
  EXPECT_ERROR_MENTIONS(
      read_gmsh_bytes(kCurvedTri22 + "$Elements\n1\n3 9 2 1 1 1 2 3 4 5 6 6\n$EndElements\n", "n.msh"), "n.msh",
      "line 15", "element 3", "more than the 6 nodes");
  // MSH 4.1: one element per line as well
  const std::string nodes41 = "$Nodes\n1 6 1 6\n2 1 0 6\n1\n2\n3\n4\n5\n6\n0 0 0\n1 0 0\n0 1 0\n0.5 0 0\n0.5 0.5 0\n"
                              "0 0.5 0\n$EndNodes\n";
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead41 + nodes41 + "$Elements\n1 1 1 1\n2 1 9 1\n1 1 2 3 4 5\n$EndElements\n",
                                        "n41.msh"),
                        "n41.msh", "line 23", "element 1", "lists 5 nodes");
  const Mesh ok = read_gmsh_bytes(kHead41 + nodes41 + "$Elements\n1 1 1 1\n2 1 9 1\n1 1 2 3 4 5 6\n$EndElements\n",
                                  "n41.msh");
  EXPECT_NEAR(ok.measure(), 0.5, 1e-15);
}

TEST(GmshSmall, EmbeddedSurfaceKeepsThreeCoordinates) {
  const std::string s = kHead22 + "$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 2\n$EndNodes\n$Elements\n1\n1 2 2 1 1 1 2 3\n$EndElements\n";
  const Mesh m = read_gmsh_bytes(s, "embedded.msh");
  EXPECT_EQ(m.space_dim(), 3);
  EXPECT_EQ(m.dim(), 2);
  // Triangle (0,0,0), (1,0,0), (0,1,2): area |e1 x e2| / 2 = |(0,-2,1)| / 2.
  EXPECT_NEAR(m.measure(), std::sqrt(5.0) / 2, 1e-14);  // a few roundings of O(1) values
}

// MSH 4.1: a surface entity without physical tags gives its entity tag; one with gives the tag.
const std::string kSmall41 = kHead41 +
                             "$Entities\n0 1 2 0\n"
                             "3 0 0 0 1 0 0 1 21 0\n"
                             "7 0 0 0 1 1 0 0 0\n"
                             "8 0 0 0 1 1 0 1 42 0\n"
                             "$EndEntities\n"
                             "$Nodes\n1 4 1 4\n2 7 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n$EndNodes\n"
                             "$Elements\n3 3 1 3\n2 7 2 1\n1 1 2 3\n2 8 2 1\n2 2 4 3\n1 3 1 1\n3 1 2\n$EndElements\n";

TEST(GmshSmall, AttributesFromEntitiesV41) {
  const Mesh m = read_gmsh_bytes(kSmall41, "small41.msh");
  ASSERT_EQ(m.num_elements(), 2);
  EXPECT_EQ(m.element_attribute(0), 7);   // entity 7 has no physical tag
  EXPECT_EQ(m.element_attribute(1), 42);  // entity 8: physical 42
  ASSERT_EQ(m.num_boundary(), 1);
  EXPECT_EQ(m.boundary_attribute(0), 21);
  EXPECT_NEAR(m.measure(), 1.0, 1e-15);  // exact: halves of the unit square
}

// ---- malformed input ----------------------------------------------------------------------

TEST(GmshMalformed, EmptyAndForeignFiles) {
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes("", "e.msh"), "e.msh", "empty");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes("hello world\n", "f.msh"), "f.msh", "line 1", "section header");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes("$Nodes\n0\n$EndNodes\n", "g.msh"), "g.msh", "line 1", "$MeshFormat");
  EXPECT_ERROR_MENTIONS(read_gmsh("/nonexistent/dir/x.msh"), "/nonexistent/dir/x.msh", "cannot open");
}

TEST(GmshMalformed, BadVersionAndFormatLine) {
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes("$MeshFormat\n3.0 0 8\n$EndMeshFormat\n", "v.msh"), "v.msh", "line 2",
                        "version '3.0'");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes("$MeshFormat\n4.1 0 4\n$EndMeshFormat\n", "v.msh"), "v.msh", "line 2",
                        "data size 4");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes("$MeshFormat\n4.1 2 8\n$EndMeshFormat\n", "v.msh"), "v.msh", "line 2",
                        "file type");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes("$MeshFormat\n4.1 0 8 9\n$EndMeshFormat\n", "v.msh"), "v.msh", "line 2",
                        "$EndMeshFormat");
}

TEST(GmshMalformed, MissingSections) {
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22, "m.msh"), "m.msh", "no $Nodes");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + "$Nodes\n1\n1 0 0 0\n$EndNodes\n", "m.msh"), "m.msh", "no $Elements");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + "$Elements\n0\n$EndElements\n", "m.msh"), "m.msh", "line 4",
                        "before $Nodes");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + "$PhysicalNames\n1\n", "m.msh"), "m.msh", "line 4",
                        "has no $EndPhysicalNames");
}

TEST(GmshMalformed, TruncatedAscii) {
  const std::string full = slurp(data_path("square_tri_v22.msh"));
  const std::string cut = full.substr(0, full.find("17 0.364"));  // inside $Nodes
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(cut, "cut.msh"), "cut.msh", "line 22", "truncated");
  const std::string cut2 = full.substr(0, full.find("$EndElements"));
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(cut2, "cut2.msh"), "cut2.msh", "truncated");
}

TEST(GmshMalformed, BadCounts) {
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + "$Nodes\n-5\n$EndNodes\n", "c.msh"), "c.msh", "line 5", "out of range");
  // A huge count must be refused before anything is allocated (no std::bad_alloc).
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + "$Nodes\n999999999999999\n1 0 0 0\n$EndNodes\n", "c.msh"), "c.msh",
                        "line 5", "cannot fit");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + "$Nodes\n99999999999999999999999\n", "c.msh"), "c.msh", "line 5",
                        "out of range");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + "$Nodes\n2\n1 0 0 0\n$EndNodes\n", "c.msh"), "c.msh", "line 7",
                        "expected a node tag");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + "$Nodes\n1\n1 0 0 0\n2 0 0 0\n$EndNodes\n", "c.msh"), "c.msh",
                        "line 7", "expected $EndNodes");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead41 + "$Nodes\n1 2 1 2\n0 1 0 9\n1\n2\n0 0 0\n1 0 0\n$EndNodes\n", "c.msh"), "c.msh",
                        "line 6", "out of range");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + "$Nodes\n1\n1 0 0 0\n$EndNodes\n$Elements\n1\n1 2 99999 1 1 1\n",
                                        "c.msh"),
                        "c.msh", "line 10", "number of element tags");
}

TEST(GmshMalformed, UnsupportedElementTypes) {
  const std::string nodes = "$Nodes\n6\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 0 1\n6 0 1 1\n$EndNodes\n";
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + nodes + "$Elements\n1\n1 6 0 1 2 3 4 5 6\n$EndElements\n", "p.msh"),
                        "p.msh", "line 15", "element type 6", "prism");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + nodes + "$Elements\n1\n1 7 0 1 2 3 4 5\n$EndElements\n", "p.msh"),
                        "p.msh", "line 15", "element type 7", "pyramid");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + nodes + "$Elements\n1\n1 77 0 1 2\n$EndElements\n", "p.msh"), "p.msh",
                        "line 15", "element type 77");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead41 + "$Nodes\n1 1 1 1\n0 1 0 1\n1\n0 0 0\n$EndNodes\n"
                                                  "$Elements\n1 1 1 1\n3 1 6 1\n1 1 1 1 1 1 1\n$EndElements\n",
                                        "p.msh"),
                        "p.msh", "line 12", "element type 6");
}

TEST(GmshMalformed, UndefinedNodesAndDuplicates) {
  const std::string nodes = "$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n";
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + nodes + "$Elements\n1\n8 2 0 1 2 99\n$EndElements\n", "u.msh"),
                        "u.msh", "line 12", "element 8", "node tag 99");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + "$Nodes\n2\n1 0 0 0\n1 1 0 0\n$EndNodes\n", "u.msh"), "u.msh",
                        "line 7", "node tag 1 is defined twice");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + nodes + "$Elements\n1\n1 2 0 1 2 -3\n$EndElements\n", "u.msh"), "u.msh",
                        "line 12", "out of range");
}

TEST(GmshMalformed, NonFiniteCoordinates) {
  for (const char* bad : {"nan", "inf", "-inf", "1e999"}) {
    const std::string s = kHead22 + "$Nodes\n2\n1 0 0 0\n2 0 " + bad + " 0\n$EndNodes\n";
    EXPECT_ERROR_MENTIONS(read_gmsh_bytes(s, "n.msh"), "n.msh", "line 7", "node coordinate");
  }
}

TEST(GmshMalformed, InvertedElementAndOnlyPoints) {
  const std::string nodes = "$Nodes\n3\n1 0 0 0\n2 1 0 0\n3 0 1 0\n$EndNodes\n";
  // A clockwise triangle beside a counter-clockwise one (a mesh of clockwise elements alone is
  // reversed): det J < 0, found by Mesh::validate, whose message names the file.
  const std::string four = "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 1 1 0\n$EndNodes\n";
  EXPECT_ERROR_MENTIONS(
      read_gmsh_bytes(kHead22 + four + "$Elements\n2\n1 2 0 1 2 3\n7 2 0 2 3 4\n$EndElements\n", "inv.msh"), "inv.msh",
      "element 1 (triangle; number 7 in the file)", "inverted");
  // a repeated node: the message names the file's node tag beside the vertex index
  EXPECT_ERROR_MENTIONS(
      read_gmsh_bytes(kHead22 + four + "$Elements\n1\n5 2 0 2 4 2\n$EndElements\n", "rep.msh"), "rep.msh",
      "number 5 in the file", "vertex 0 (node 2 in the file) twice");  // node 2: the first used
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + nodes + "$Elements\n1\n1 15 0 1\n$EndElements\n", "pt.msh"), "pt.msh",
                        "only point elements");
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead22 + nodes + "$Elements\n0\n$EndElements\n", "none.msh"), "none.msh",
                        "no elements");
}

TEST(GmshMalformed, EntityBlocksV41) {
  // An element block whose entity dimension differs from its element type's.
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead41 + "$Nodes\n1 3 1 3\n2 1 0 3\n1\n2\n3\n0 0 0\n1 0 0\n0 1 0\n$EndNodes\n"
                                                  "$Elements\n1 1 1 1\n3 1 2 1\n1 1 2 3\n$EndElements\n",
                                        "b.msh"),
                        "b.msh", "line 16", "entity of dimension 3");
  // Blocks holding fewer nodes than declared.
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead41 + "$Nodes\n1 3 1 3\n2 1 0 1\n1\n0 0 0\n$EndNodes\n", "b.msh"), "b.msh",
                        "declares 3");
  // Partitioned meshes are refused.
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead41 + "$PartitionedEntities\n$EndPartitionedEntities\n", "b.msh"), "b.msh",
                        "line 4", "partitioned");
  // Truncated $Entities.
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(kHead41 + "$Entities\n0 0 1 0\n7 0 0 0 1 1 0 1\n", "b.msh"), "b.msh", "truncated");
}

// ---- malformed binary input ---------------------------------------------------------------

/// Offset of the first byte after "<section>\n".
std::size_t after(const std::string& bytes, const std::string& section) {
  const std::size_t at = bytes.find(section + "\n");
  EXPECT_NE(at, std::string::npos);
  return at + section.size() + 1;
}

TEST(GmshMalformed, SwappedByteOrder) {
  std::string b = slurp(data_path("cube_hex_v22_bin.msh"));
  const std::size_t at = b.find("2.2 1 8\n") + 8;
  std::int32_t one = 0;
  std::memcpy(&one, b.data() + at, 4);
  ASSERT_EQ(one, 1);
  const std::int32_t swapped = 0x01000000;
  std::memcpy(b.data() + at, &swapped, 4);
  const std::string where1 = "byte offset " + std::to_string(at) + ":";
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(b, "swap.msh"), "swap.msh", where1.c_str(),
                        "byte order");
  const std::int32_t junk = 7;
  std::memcpy(b.data() + at, &junk, 4);
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(b, "swap.msh"), "swap.msh", "byte offset", "marker");
}

TEST(GmshMalformed, TruncatedBinary) {
  for (const char* file : {"cube_hex_v22_bin.msh", "cube_tet_v41_bin.msh"}) {
    const std::string b = slurp(data_path(file));
    for (const char* section : {"$Nodes", "$Elements"}) {
      const std::string cut = b.substr(0, after(b, section) + 53);
      EXPECT_ERROR_MENTIONS(read_gmsh_bytes(cut, "cut.msh"), "cut.msh", "byte offset", "truncated");
    }
  }
}

TEST(GmshMalformed, HugeBinaryCounts) {
  std::string b = slurp(data_path("cube_tet_v41_bin.msh"));
  const std::size_t at = after(b, "$Nodes");
  const std::uint64_t huge = std::uint64_t(1) << 60;
  std::string b1 = b;
  std::memcpy(b1.data() + at + 8, &huge, 8);  // number of nodes
  const std::string where2 = "byte offset " + std::to_string(at + 8) + ":";
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(b1, "h.msh"), "h.msh", where2.c_str(),
                        "does not fit");
  std::string b2 = b;
  std::memcpy(b2.data() + at + 32 + 12, &huge, 8);  // nodes of the first block
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(b2, "h.msh"), "h.msh", "byte offset", "exceeds");
  std::string b3 = b;
  const std::size_t el = after(b, "$Elements");
  const std::int32_t prism = 6;
  std::memcpy(b3.data() + el + 32 + 8, &prism, 4);  // element type of the first block
  const std::string where3 = "byte offset " + std::to_string(el + 40) + ":";
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(b3, "t.msh"), "t.msh", where3.c_str(),
                        "element type 6");
}

TEST(GmshMalformed, BinaryUndefinedNodeAndNaN) {
  std::string b = slurp(data_path("cube_hex_v22_bin.msh"));
  const std::size_t nodes = after(b, "$Nodes");
  const std::size_t data = b.find('\n', nodes) + 1;  // after the node count line
  const double nan = std::nan("");
  std::string b1 = b;
  std::memcpy(b1.data() + data + 4, &nan, 8);  // x of the first node
  const std::string where4 = "byte offset " + std::to_string(data) + ":";
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(b1, "n.msh"), "n.msh", where4.c_str(),
                        "non-finite");
  std::string b2 = b;
  const std::size_t els = b.find('\n', after(b, "$Elements")) + 1;
  std::int32_t header[3];
  std::memcpy(header, b.data() + els, 12);
  const std::size_t first_node = els + 12 + 4 + 4 * std::size_t(header[2]);
  const std::int32_t bad = 123456;
  std::memcpy(b2.data() + first_node, &bad, 4);
  const std::string where5 = "byte offset " + std::to_string(first_node) + ":";
  EXPECT_ERROR_MENTIONS(read_gmsh_bytes(b2, "u.msh"), "u.msh", where5.c_str(),
                        "node tag 123456");
}

}  // namespace
