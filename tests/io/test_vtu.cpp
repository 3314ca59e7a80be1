// Tests of the VTU writer/reader (io/vtu.hpp) and of read_mesh / load_mesh (io/mesh_io.hpp).
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "io_test_util.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/io/gmsh.hpp"
#include "tessera/io/mesh_io.hpp"
#include "tessera/io/mfem.hpp"
#include "tessera/io/vtu.hpp"

namespace {

using tessera::index_t;
using tessera::fem::Geometry;
using tessera::fem::Mesh;
using tessera::io::VtuField;
using tessera::io::VtuOptions;
using Encoding = tessera::io::VtuOptions::Encoding;

// Coordinates that have no short decimal form, so that an ASCII round trip that loses digits
// shows up as a mismatch.
double wobble(int k) { return 1e-3 * std::sqrt(2.0 + k) / 7.0; }

Mesh segment_mesh() {  // 1-D: 3 segments on [0, 3]
  Mesh m(1);
  for (int i = 0; i < 4; ++i) m.add_vertex({i + wobble(i)});
  for (index_t e = 0; e < 3; ++e) m.add_element(Geometry::Segment, {e, e + 1}, int(e) + 1);
  return m;
}

// A (nx+1) x (ny+1) grid of vertices in the unit square (perturbed slightly).
void add_grid(Mesh& m, int nx, int ny) {
  for (int j = 0; j <= ny; ++j)
    for (int i = 0; i <= nx; ++i) {
      const double x = double(i) / nx + wobble(i + 3 * j), y = double(j) / ny - wobble(2 * i + j);
      if (m.space_dim() == 2) m.add_vertex({x, y});
      else m.add_vertex({x, y, 0.0});
    }
}

Mesh triangle_mesh(int sdim = 2) {  // 2 x 2 squares, each split in 2 triangles
  Mesh m(sdim);
  add_grid(m, 2, 2);
  int attr = 1;
  for (index_t j = 0; j < 2; ++j)
    for (index_t i = 0; i < 2; ++i) {
      const index_t v0 = j * 3 + i, v1 = v0 + 1, v2 = v0 + 4, v3 = v0 + 3;
      m.add_element(Geometry::Triangle, {v0, v1, v2}, attr++);
      m.add_element(Geometry::Triangle, {v0, v2, v3}, attr++);
    }
  m.add_boundary(Geometry::Segment, {0, 1}, 7);  // not written: must not come back
  return m;
}

Mesh quad_mesh() {
  Mesh m(2);
  add_grid(m, 2, 2);
  for (index_t j = 0; j < 2; ++j)
    for (index_t i = 0; i < 2; ++i) {
      const index_t v0 = j * 3 + i;
      m.add_element(Geometry::Quadrilateral, {v0, v0 + 1, v0 + 4, v0 + 3}, int(10 + i + 2 * j));
    }
  return m;
}

Mesh mixed_mesh() {  // 2 quads and 4 triangles
  Mesh m(2);
  add_grid(m, 2, 2);
  m.add_element(Geometry::Quadrilateral, {0, 1, 4, 3}, 1);
  m.add_element(Geometry::Triangle, {1, 2, 5}, 2);
  m.add_element(Geometry::Triangle, {1, 5, 4}, 2);
  m.add_element(Geometry::Triangle, {3, 4, 7}, 3);
  m.add_element(Geometry::Triangle, {3, 7, 6}, 3);
  m.add_element(Geometry::Quadrilateral, {4, 5, 8, 7}, 4);
  return m;
}

// A 2 x 1 x 1 block of vertices, (x, y, z) = (i, j, k) plus a small perturbation.
void add_block(Mesh& m) {
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 3; ++i) m.add_vertex({i + wobble(i + j), j + wobble(k + 5), k - wobble(i + 2 * k)});
}
index_t block(int i, int j, int k) { return index_t(i + 3 * j + 6 * k); }

Mesh hex_mesh() {
  Mesh m(3);
  add_block(m);
  for (int i = 0; i < 2; ++i)
    m.add_element(Geometry::Hexahedron,
                  {block(i, 0, 0), block(i + 1, 0, 0), block(i + 1, 1, 0), block(i, 1, 0), block(i, 0, 1),
                   block(i + 1, 0, 1), block(i + 1, 1, 1), block(i, 1, 1)},
                  i + 5);
  return m;
}

Mesh tet_mesh() {  // the first cube of the block in 6 positive tetrahedra around the diagonal 0-6
  Mesh m(3);
  add_block(m);
  const index_t c[8] = {block(0, 0, 0), block(1, 0, 0), block(1, 1, 0), block(0, 1, 0),
                        block(0, 0, 1), block(1, 0, 1), block(1, 1, 1), block(0, 1, 1)};
  const int tets[6][4] = {{0, 1, 2, 6}, {0, 2, 3, 6}, {0, 3, 7, 6}, {0, 7, 4, 6}, {0, 4, 5, 6}, {0, 5, 1, 6}};
  int attr = 1;
  for (const auto& t : tets) m.add_element(Geometry::Tetrahedron, {c[t[0]], c[t[1]], c[t[2]], c[t[3]]}, attr++);
  return m;
}

Mesh mesh_by_name(const std::string& name) {
  if (name == "segment") return segment_mesh();
  if (name == "triangle") return triangle_mesh();
  if (name == "triangle_in_3d") return triangle_mesh(3);
  if (name == "quadrilateral") return quad_mesh();
  if (name == "mixed") return mixed_mesh();
  if (name == "tetrahedron") return tet_mesh();
  if (name == "hexahedron") return hex_mesh();
  ADD_FAILURE() << "unknown mesh " << name;
  return Mesh(1);
}

// Fields of every kind: scalar and vector point data, cell data, special values.
std::vector<VtuField> make_fields(const Mesh& m) {
  std::vector<VtuField> f;
  VtuField u{"u", 1, true, {}};
  for (index_t v = 0; v < m.num_vertices(); ++v) u.values.push_back(std::sin(double(v)) * 1e5 + wobble(int(v)));
  VtuField w{"velocity <x&y>", 3, true, {}};  // a name that needs XML escaping
  for (index_t v = 0; v < 3 * m.num_vertices(); ++v) w.values.push_back(-1.0 / (1.0 + double(v)));
  VtuField c{"cell pair", 2, false, {}};
  for (index_t e = 0; e < 2 * m.num_elements(); ++e) c.values.push_back(std::exp(double(e)) * 1e-300);
  // Special values survive both encodings.
  w.values[0] = -0.0;
  w.values[1] = std::numeric_limits<double>::quiet_NaN();
  w.values[2] = -std::numeric_limits<double>::infinity();
  c.values[0] = std::numeric_limits<double>::denorm_min();
  f.push_back(std::move(u));
  f.push_back(std::move(c));
  f.push_back(std::move(w));
  return f;
}

// Same double, NaN matching NaN, and -0 distinguished from +0.
bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

void expect_same_mesh(const Mesh& a, const Mesh& b) {
  ASSERT_EQ(a.space_dim(), b.space_dim());
  EXPECT_EQ(a.dim(), b.dim());
  ASSERT_EQ(a.num_vertices(), b.num_vertices());
  ASSERT_EQ(a.num_elements(), b.num_elements());
  for (std::size_t i = 0; i < a.coordinates().size(); ++i)
    EXPECT_EQ(a.coordinates()[i], b.coordinates()[i]) << "coordinate " << i;  // exact: no rounding allowed
  for (index_t e = 0; e < a.num_elements(); ++e) {
    EXPECT_EQ(a.element_geometry(e), b.element_geometry(e)) << "element " << e;
    EXPECT_EQ(a.element_attribute(e), b.element_attribute(e)) << "element " << e;
    const auto va = a.element_vertices(e), vb = b.element_vertices(e);
    EXPECT_EQ(std::vector<index_t>(va.begin(), va.end()), std::vector<index_t>(vb.begin(), vb.end())) << "element " << e;
  }
}

// The fields of make_fields() as read back: point data first, then cell data, each in the
// order given.
// rel_tol = 0 asks for identical values.
void expect_same_fields(const std::vector<VtuField>& fields, const std::vector<VtuField>& back, double rel_tol = 0) {
  ASSERT_EQ(back.size(), 3u);
  const VtuField* expected[3] = {&fields[0], &fields[2], &fields[1]};
  for (int i = 0; i < 3; ++i) {
    const VtuField &f = *expected[i], &g = back[std::size_t(i)];
    EXPECT_EQ(g.name, f.name);
    EXPECT_EQ(g.components, f.components);
    EXPECT_EQ(g.on_points, f.on_points);
    ASSERT_EQ(g.values.size(), f.values.size()) << f.name;
    for (std::size_t k = 0; k < f.values.size(); ++k)
      EXPECT_TRUE(same_value(f.values[k], g.values[k]) ||
                  (std::isfinite(f.values[k]) && std::abs(f.values[k] - g.values[k]) <= rel_tol * std::abs(f.values[k])))
          << f.name << "[" << k << "]: " << f.values[k] << " vs " << g.values[k];
  }
}

const char* encoding_name(Encoding e) { return e == Encoding::Ascii ? "ascii" : "binary"; }

// A fresh path in the test's temporary directory.
std::string temp_path(const std::string& file) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string stem = std::string(info->test_suite_name()) + "_" + info->name();
  for (char& ch : stem)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  const auto dir = std::filesystem::path(::testing::TempDir()) / ("tessera_vtu_" + stem);
  std::filesystem::create_directories(dir);
  return (dir / file).string();
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  const auto k = s.find(from);
  EXPECT_NE(k, std::string::npos) << "'" << from << "' not in the document";
  if (k != std::string::npos) s.replace(k, from.size(), to);
  return s;
}

// ---- round trips -------------------------------------------------------------------------

class VtuRoundTrip : public ::testing::TestWithParam<std::tuple<std::string, Encoding>> {};

TEST_P(VtuRoundTrip, MeshAttributesAndFieldsComeBackIdentical) {
  const auto& [name, encoding] = GetParam();
  const Mesh mesh = mesh_by_name(name);
  ASSERT_NO_THROW(mesh.validate(name));  // the hand-made mesh itself is valid
  const std::vector<VtuField> fields = make_fields(mesh);
  const std::string path = temp_path(name + ".vtu");
  tessera::io::write_vtu(path, mesh, fields, VtuOptions{encoding});

  std::vector<VtuField> back_fields;
  const Mesh back = tessera::io::read_vtu(path, &back_fields);
  expect_same_mesh(mesh, back);
  EXPECT_EQ(back.num_boundary(), 0);  // boundary faces are not written
  expect_same_fields(fields, back_fields);
  // Reading from memory gives the same mesh as reading the file.
  expect_same_mesh(mesh, tessera::io::read_vtu_bytes(tessera::io::test::slurp(path), path));
}

INSTANTIATE_TEST_SUITE_P(AllGeometries, VtuRoundTrip,
                         ::testing::Combine(::testing::Values("segment", "triangle", "triangle_in_3d", "quadrilateral",
                                                              "mixed", "tetrahedron", "hexahedron"),
                                            ::testing::Values(Encoding::Ascii, Encoding::BinaryAppended)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + encoding_name(std::get<1>(info.param));
                         });

// Files stored in the repository (also the fuzzer's seeds) keep reading as the mesh and
// fields they were written from: the format read does not drift.
TEST(VtuRead, StoredFilesReadAsWritten) {
  const Mesh mesh = mixed_mesh();
  for (const char* file : {"vtu_mixed_ascii.vtu", "vtu_mixed_binary.vtu"}) {
    SCOPED_TRACE(file);
    std::vector<VtuField> fields;
    const Mesh back = tessera::io::read_vtu(tessera::io::test::data_path(file), &fields);
    expect_same_mesh(mesh, back);
    // The stored values came from std::sin and std::exp, which another C library may round
    // differently in the last bit: allow a few ulps (1e-14 relative). Coordinates use only
    // sqrt and arithmetic, which IEEE 754 rounds identically everywhere: exact above.
    expect_same_fields(make_fields(mesh), fields, 1e-14);
  }
}

TEST(VtuWrite, BoxMeshesOfEveryGeometryRoundTrip) {
  tessera::fem::BoxOptions opt;
  opt.perturb = 0.2;  // irregular coordinates, so that lost digits would show
  const std::pair<Geometry, std::array<int, 3>> cases[] = {{Geometry::Segment, {5, 0, 0}},
                                                           {Geometry::Triangle, {3, 4, 0}},
                                                           {Geometry::Quadrilateral, {4, 3, 0}},
                                                           {Geometry::Tetrahedron, {2, 3, 2}},
                                                           {Geometry::Hexahedron, {3, 2, 2}}};
  for (const auto& [g, n] : cases)
    for (Encoding enc : {Encoding::Ascii, Encoding::BinaryAppended}) {
      SCOPED_TRACE(std::string(name(g)) + " " + encoding_name(enc));
      const Mesh mesh = tessera::fem::box_mesh(g, n, opt);
      ASSERT_GT(mesh.num_elements(), 0);
      const std::string doc = tessera::io::write_vtu_string(mesh, {}, VtuOptions{enc});
      expect_same_mesh(mesh, tessera::io::read_vtu_bytes(doc, "box.vtu"));
    }
}

TEST(VtuWrite, DocumentFollowsTheVtkXmlLayout) {
  const Mesh mesh = mixed_mesh();
  const std::string bin = tessera::io::write_vtu_string(mesh);
  EXPECT_NE(bin.find("<VTKFile type=\"UnstructuredGrid\""), std::string::npos);
  EXPECT_NE(bin.find("byte_order=\"LittleEndian\""), std::string::npos);
  EXPECT_NE(bin.find("header_type=\"UInt64\""), std::string::npos);
  EXPECT_NE(bin.find("<AppendedData encoding=\"raw\">"), std::string::npos);
  EXPECT_NE(bin.find("NumberOfPoints=\"9\" NumberOfCells=\"6\""), std::string::npos);
  EXPECT_NE(bin.find("type=\"Int32\" Name=\"attribute\""), std::string::npos);
  EXPECT_NE(bin.find("type=\"Int64\" Name=\"connectivity\""), std::string::npos);
  EXPECT_NE(bin.find("type=\"UInt8\" Name=\"types\""), std::string::npos);
  // The cell types are the last appended array: VTK ids 9 (quad) and 5 (triangle).
  const auto end = bin.find("\n  </AppendedData>");
  ASSERT_NE(end, std::string::npos);
  const std::string types = bin.substr(end - 6, 6);
  EXPECT_EQ(std::vector<int>(types.begin(), types.end()), (std::vector<int>{9, 5, 5, 5, 5, 9}));

  const std::string ascii = tessera::io::write_vtu_string(mesh, {}, VtuOptions{Encoding::Ascii});
  EXPECT_EQ(ascii.find("AppendedData"), std::string::npos);
  EXPECT_NE(ascii.find("9 5 5 5 5 9"), std::string::npos);  // types
  EXPECT_NE(ascii.find("4 7 10 13 16 20"), std::string::npos);  // offsets: end of each cell
}

// The documents parse as XML (ASCII as is; binary with the raw bytes taken out).
TEST(VtuWrite, DocumentIsWellFormedXml) {
  if (std::system("python3 -c 'import xml.etree.ElementTree' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 with xml.etree not available";
  const Mesh mesh = hex_mesh();
  const auto fields = make_fields(mesh);
  const std::string ascii = tessera::io::write_vtu_string(mesh, fields, VtuOptions{Encoding::Ascii});
  std::string bin = tessera::io::write_vtu_string(mesh, fields);
  const auto b = bin.find('_', bin.find("<AppendedData")), e = bin.find("\n  </AppendedData>");
  ASSERT_TRUE(b != std::string::npos && e != std::string::npos);
  bin.erase(b + 1, e - b - 1);
  for (const auto& [file, doc] : {std::pair{std::string("ascii.vtu"), ascii}, std::pair{std::string("bin.xml"), bin}}) {
    const std::string path = temp_path(file);
    std::ofstream(path, std::ios::binary) << doc;
    const std::string cmd = "python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' '" + path + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << file << " is not well-formed XML";
  }
}

TEST(VtuWrite, FieldSizeAndNameErrorsNameTheField) {
  const Mesh mesh = triangle_mesh();  // 9 vertices, 8 elements
  auto write = [&](VtuField f) { tessera::io::write_vtu_string(mesh, {&f, 1}); };
  EXPECT_ERROR_MENTIONS(write({"pressure", 1, true, std::vector<double>(8)}), "pressure", "8 values", "expected 9");
  EXPECT_ERROR_MENTIONS(write({"flux", 2, false, std::vector<double>(8)}), "flux", "expected 16", "elements");
  EXPECT_ERROR_MENTIONS(write({"v", 0, true, {}}), "'v'", "0 components");
  EXPECT_ERROR_MENTIONS(write({"", 1, true, std::vector<double>(9)}), "empty name");
  EXPECT_ERROR_MENTIONS(write({"attribute", 1, false, std::vector<double>(8)}), "attribute", "reserved");
  const VtuField twice[2] = {{"u", 1, true, std::vector<double>(9)}, {"u", 1, true, std::vector<double>(9)}};
  EXPECT_ERROR_MENTIONS(tessera::io::write_vtu_string(mesh, twice), "'u'", "field 0");
  // The same name on points and on cells is fine.
  const VtuField both[2] = {{"u", 1, true, std::vector<double>(9)}, {"u", 1, false, std::vector<double>(8)}};
  EXPECT_NO_THROW(tessera::io::write_vtu_string(mesh, both));
}

TEST(VtuWrite, RefusesNonFiniteCoordinatesAndUnwritablePaths) {
  Mesh mesh = triangle_mesh();
  mesh.coordinates()[5] = std::numeric_limits<double>::quiet_NaN();  // vertex 2, y
  EXPECT_ERROR_MENTIONS(tessera::io::write_vtu_string(mesh), "vertex 2", "non-finite");
  EXPECT_ERROR_MENTIONS(tessera::io::write_vtu("/nonexistent-dir/x/out.vtu", triangle_mesh()),
                        "/nonexistent-dir/x/out.vtu", "cannot open");
}

// ---- malformed input -----------------------------------------------------------------------

// Every prefix of a valid file is refused with a tessera::Error (no crash, no other exception).
TEST(VtuRead, EveryTruncationIsRefused) {
  const Mesh mesh = mixed_mesh();
  const auto fields = make_fields(mesh);
  for (Encoding enc : {Encoding::Ascii, Encoding::BinaryAppended}) {
    const std::string doc = tessera::io::write_vtu_string(mesh, fields, VtuOptions{enc});
    for (std::size_t n = 0; n + 1 < doc.size(); ++n) {
      const std::string cut = doc.substr(0, n);
      // Cutting only the final newline leaves a complete document.
      if (doc.find_first_not_of(" \n", n) == std::string::npos) continue;
      const std::string msg = tessera::fem::test::error_message([&] { tessera::io::read_vtu_bytes(cut, "cut.vtu"); });
      ASSERT_NE(msg.find("cut.vtu"), std::string::npos) << encoding_name(enc) << " prefix of " << n << " bytes: " << msg;
    }
  }
}

TEST(VtuRead, TruncatedAppendedDataSaysTruncated) {
  const Mesh mesh = hex_mesh();
  const std::string doc = tessera::io::write_vtu_string(mesh);
  const auto end = doc.find("\n  </AppendedData>");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(doc.substr(0, end - 10), "short.vtu"), "short.vtu", "truncated");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(doc.substr(0, doc.find('_', doc.find("<AppendedData")) + 20), "short.vtu"),
                        "short.vtu", "truncated");
}

TEST(VtuRead, BadCountsAreRefused) {
  const Mesh mesh = quad_mesh();  // 9 points, 4 cells
  const std::string bin = tessera::io::write_vtu_string(mesh);
  const std::string ascii = tessera::io::write_vtu_string(mesh, {}, VtuOptions{Encoding::Ascii});
  for (const std::string* doc : {&bin, &ascii}) {
    EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(replace_once(*doc, "NumberOfPoints=\"9\"", "NumberOfPoints=\"10\""), "a.vtu"),
                          "a.vtu", "Points", "bad count");
    EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(replace_once(*doc, "NumberOfCells=\"4\"", "NumberOfCells=\"3\""), "a.vtu"),
                          "a.vtu", "bad count");
    // A count far beyond the file size is refused before anything is allocated.
    EXPECT_ERROR_MENTIONS(
        tessera::io::read_vtu_bytes(replace_once(*doc, "NumberOfPoints=\"9\"", "NumberOfPoints=\"999999999999999\""), "a.vtu"),
        "a.vtu", "NumberOfPoints", "bad count");
    EXPECT_ERROR_MENTIONS(
        tessera::io::read_vtu_bytes(replace_once(*doc, "NumberOfCells=\"4\"", "NumberOfCells=\"-4\""), "a.vtu"), "a.vtu",
        "NumberOfCells", "non-negative");
  }
  // Offsets that do not match the cell types.
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(replace_once(ascii, "4 8 12 16", "4 8 11 16"), "a.vtu"), "a.vtu",
                        "offsets[2] = 11", "expected 12");
  // A byte count in an appended header that disagrees with the declared size.
  std::string b = bin;
  const auto base = b.find('_', b.find("<AppendedData")) + 1;
  std::uint64_t n = 0;
  std::memcpy(&n, b.data() + base, 8);
  n += 8;
  std::memcpy(b.data() + base, &n, 8);
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(b, "a.vtu"), "a.vtu", "byte count", "bad count");
}

TEST(VtuRead, UnknownCellTypeIsRefused) {
  const Mesh mesh = mixed_mesh();
  const std::string ascii = tessera::io::write_vtu_string(mesh, {}, VtuOptions{Encoding::Ascii});
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(replace_once(ascii, "9 5 5 5 5 9", "9 5 5 7 5 9"), "c.vtu"), "c.vtu",
                        "cell 3", "unknown VTK cell type 7");
  std::string bin = tessera::io::write_vtu_string(mesh);
  bin[bin.find("\n  </AppendedData>") - 1] = 13;  // the last cell's type: a pyramid
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(bin, "c.vtu"), "c.vtu", "cell 5", "unknown VTK cell type 13");
}

TEST(VtuRead, NonFiniteCoordinatesAreRefused) {
  Mesh mesh(2);
  mesh.add_vertex({0.0, 0.0});
  mesh.add_vertex({1.0, 0.0});
  mesh.add_vertex({0.0, 0.125});  // the only 0.125 in the document
  mesh.add_element(Geometry::Triangle, {0, 1, 2});
  const std::string ascii = tessera::io::write_vtu_string(mesh, {}, VtuOptions{Encoding::Ascii});
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(replace_once(ascii, "0.125", "nan"), "n.vtu"), "n.vtu", "point 2",
                        "non-finite");
  std::string bin = tessera::io::write_vtu_string(mesh);
  const double y = 0.125, inf = std::numeric_limits<double>::infinity();
  const auto k = bin.find(std::string(reinterpret_cast<const char*>(&y), 8));
  ASSERT_NE(k, std::string::npos);
  std::memcpy(bin.data() + k, &inf, 8);
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(bin, "n.vtu"), "n.vtu", "point 2", "non-finite");
}

TEST(VtuRead, MissingPiecesAndForeignContentAreRefused) {
  const Mesh mesh = triangle_mesh();
  const std::string ascii = tessera::io::write_vtu_string(mesh, {}, VtuOptions{Encoding::Ascii});
  const std::string bin = tessera::io::write_vtu_string(mesh);
  auto without = [](std::string s, const std::string& open, const std::string& close) {
    const auto b = s.find(open), e = s.find(close, b);
    EXPECT_TRUE(b != std::string::npos && e != std::string::npos);
    s.erase(b, e + close.size() - b);
    return s;
  };
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(without(ascii, "<Cells>", "</Cells>"), "m.vtu"), "m.vtu",
                        "no <Cells>");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(without(ascii, "<Points>", "</Points>"), "m.vtu"), "m.vtu",
                        "no <Points>");
  EXPECT_ERROR_MENTIONS(
      tessera::io::read_vtu_bytes(without(ascii, "<DataArray type=\"Int64\" Name=\"offsets\"", "</DataArray>"), "m.vtu"),
      "m.vtu", "Name=\"offsets\"");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(bin.substr(0, bin.find("  <AppendedData")) + "</VTKFile>\n", "m.vtu"),
                        "m.vtu", "no <AppendedData>");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes("", "m.vtu"), "m.vtu", "empty");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes("$MeshFormat\n2.2 0 8\n", "m.vtu"), "m.vtu", "not a VTK XML file");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(replace_once(ascii, "UnstructuredGrid\"", "PolyData\""), "m.vtu"),
                        "m.vtu", "UnstructuredGrid");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(replace_once(bin, "LittleEndian", "BigEndian"), "m.vtu"), "m.vtu",
                        "LittleEndian");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(replace_once(ascii, "format=\"ascii\">\n", "format=\"binary\">\n"), "m.vtu"),
                        "m.vtu", "base64");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(replace_once(ascii, "</Piece>", "</Peace>"), "m.vtu"), "m.vtu",
                        "</Peace> closes <Piece>");
  // Appended data must sit directly in <VTKFile>.
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(replace_once(bin, "  </UnstructuredGrid>\n", ""), "m.vtu"), "m.vtu",
                        "child of <VTKFile>");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu("/no/such/dir/mesh.vtu"), "/no/such/dir/mesh.vtu", "cannot open");
}

TEST(VtuRead, MissingAttributeArrayMeansAttributeOne) {
  const Mesh mesh = quad_mesh();  // attributes 10..13
  std::string ascii = tessera::io::write_vtu_string(mesh, {}, VtuOptions{Encoding::Ascii});
  const auto b = ascii.find("<DataArray type=\"Int32\" Name=\"attribute\""), e = ascii.find("</DataArray>", b);
  ASSERT_TRUE(b != std::string::npos && e != std::string::npos);
  ascii.erase(b, e + 12 - b);
  const Mesh back = tessera::io::read_vtu_bytes(ascii, "noattr.vtu");
  ASSERT_EQ(back.num_elements(), 4);
  for (index_t i = 0; i < 4; ++i) EXPECT_EQ(back.element_attribute(i), 1);
}

TEST(VtuRead, BadConnectivityIsRefused) {
  const Mesh mesh = quad_mesh();  // connectivity starts "0 1 4 3"
  const std::string ascii = tessera::io::write_vtu_string(mesh, {}, VtuOptions{Encoding::Ascii});
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(replace_once(ascii, "0 1 4 3", "0 1 40 3"), "k.vtu"), "k.vtu",
                        "cell 0", "point 40", "9 points");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(replace_once(ascii, "0 1 4 3", "0 1 4 x"), "k.vtu"), "k.vtu",
                        "'x' is not an integer");
  // The space dimension declared in the file is checked against the coordinates.
  const std::string planar = tessera::io::write_vtu_string(hex_mesh(), {}, VtuOptions{Encoding::Ascii});
  EXPECT_ERROR_MENTIONS(
      tessera::io::read_vtu_bytes(replace_once(planar, "format=\"ascii\">3</DataArray>", "format=\"ascii\">2</DataArray>"),
                                  "k.vtu"),
      "k.vtu", "tessera_space_dim is 2");
}

// ---- read_mesh / load_mesh -------------------------------------------------------------------

TEST(MeshIo, ReadMeshDispatchesOnTheExtension) {
  const Mesh mesh = mixed_mesh();
  const std::string path = temp_path("mixed.VTU");  // extensions are case-insensitive
  tessera::io::write_vtu(path, mesh);
  expect_same_mesh(mesh, tessera::io::read_mesh(path));

  const std::string data = TESSERA_IO_TEST_DATA;
  const Mesh gmsh = tessera::io::read_mesh(data + "/square_tri_v22.msh");
  expect_same_mesh(tessera::io::read_gmsh(data + "/square_tri_v22.msh"), gmsh);
  EXPECT_GT(gmsh.num_elements(), 0);
  const Mesh mfem = tessera::io::read_mesh(data + "/mfem_square.mesh");
  expect_same_mesh(tessera::io::read_mfem(data + "/mfem_square.mesh"), mfem);
  EXPECT_EQ(mfem.num_elements(), 2);

  EXPECT_ERROR_MENTIONS(tessera::io::read_mesh("part.stl"), "part.stl", "'.stl'", ".msh", ".mesh", ".vtu");
  EXPECT_ERROR_MENTIONS(tessera::io::read_mesh("README"), "README", "no extension", ".vtu");
  // A supported extension on a missing file: the reader's own error, naming the file.
  EXPECT_ERROR_MENTIONS(tessera::io::read_mesh("/no/such/mesh.vtu"), "/no/such/mesh.vtu");
}

TEST(MeshIo, LoadMeshReadsFilesAndGeneratorSpecs) {
  const Mesh mesh = quad_mesh();  // 4 quads
  const std::string path = temp_path("quads.vtu");
  tessera::io::write_vtu(path, mesh);
  expect_same_mesh(mesh, tessera::io::load_mesh(path));
  // One uniform refinement splits each quad in 4.
  EXPECT_EQ(tessera::io::load_mesh(path, 1).num_elements(), 16);

  const Mesh gen = tessera::io::load_mesh("box:tri:2x3");
  EXPECT_EQ(gen.num_elements(), 2 * 2 * 3);  // 2 triangles per square
  EXPECT_EQ(gen.dim(), 2);
  EXPECT_EQ(tessera::io::load_mesh("box:tri:2x3", 2).num_elements(), 2 * 2 * 3 * 16);
}

TEST(MeshIo, LoadMeshErrorsSayBoth) {
  EXPECT_ERROR_MENTIONS(tessera::io::load_mesh("no/such/file.msh"), "no such file, and not a generator spec",
                        "no/such/file.msh");
  EXPECT_ERROR_MENTIONS(tessera::io::load_mesh("box:pyramid:2x2x2"), "no such file, and not a generator spec",
                        "box:pyramid:2x2x2");
  EXPECT_ERROR_MENTIONS(tessera::io::load_mesh("box:tri:2x2", -1), "refine = -1");
}

}  // namespace
