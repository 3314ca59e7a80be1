// Tests of read_vtu (io/vtu.hpp) on the encodings other tools write: ASCII, inline base64,
// appended raw and base64 data, zlib-compressed blocks, 32/64-bit headers, Int32/UInt32/Int64
// cells and Float32/Float64 points; documents made by a small encoder here, and files
// written by meshio (tests/io/data/meshio_*.vtu).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#if TESSERA_HAS_ZLIB
#include <zlib.h>
#endif

#include "fem_test_util.hpp"
#include "io_test_util.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/io/vtu.hpp"

namespace {

using tessera::index_t;
using tessera::fem::Geometry;
using tessera::fem::Mesh;

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (auto k = s.find(from); k != std::string::npos; k = s.find(from, k + to.size())) s.replace(k, from.size(), to);
  return s;
}

// ---- a small VTU encoder -------------------------------------------------------------------

std::string base64(const std::string& bytes) {
  static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t v = 0;
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    for (std::size_t k = 0; k < 3; ++k) v = (v << 8) | (k < n ? std::uint8_t(bytes[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) out += k <= n ? abc[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

struct Style {
  std::string format = "ascii";  // ascii, binary (inline base64), appended
  bool appended_base64 = false;
  bool zlib = false;
  bool header64 = true;
  bool separate_runs = true;     // base64: header and data encoded apart (VTK) or together (meshio)
  std::string int_type = "Int64";    // connectivity and offsets: Int32, UInt32, Int64
  std::string float_type = "Float64";  // points: Float32, Float64
  std::size_t block = 40;        // zlib block size (small: several blocks, the last one partial)
  bool information_key = false;  // ParaView's metadata inside the Points DataArray
};

template <class T>
void put_bytes(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

struct Encoder {
  Style st;
  std::string appended;

  std::string header_word(std::uint64_t v) const {
    std::string b;
    if (st.header64) put_bytes(b, v);
    else put_bytes(b, std::uint32_t(v));
    return b;
  }
  // Header and data of one binary array (compressed when asked).
  std::pair<std::string, std::string> pack(const std::string& data) const {
    if (!st.zlib) return {header_word(data.size()), data};
#if TESSERA_HAS_ZLIB
    std::string head, body;
    const std::size_t nb = (data.size() + st.block - 1) / st.block;
    head += header_word(nb) + header_word(st.block) + header_word(data.size() % st.block);
    for (std::size_t b = 0; b < nb; ++b) {
      const std::size_t n = std::min(st.block, data.size() - b * st.block);
      uLongf size = compressBound(uLong(n));
      std::string c(size, '\0');
      EXPECT_EQ(compress2(reinterpret_cast<Bytef*>(c.data()), &size,
                          reinterpret_cast<const Bytef*>(data.data() + b * st.block), uLong(n), 6),
                Z_OK);
      c.resize(size);
      head += header_word(size);
      body += c;
    }
    return {head, body};
#else
    ADD_FAILURE() << "zlib requested without zlib";
    return {};
#endif
  }
  // A <DataArray> with the values given as bytes of `type` (text: their ASCII form).
  std::string array(const std::string& type, const std::string& name, int comps, const std::string& bytes,
                    const std::string& text) {
    std::string a = "<DataArray type=\"" + type + "\" Name=\"" + name + "\" NumberOfComponents=\"" +
                    std::to_string(comps) + "\" format=\"" + st.format + "\"";
    const std::string info = st.information_key && name == "Points"
                                 ? "<InformationKey name=\"L2_NORM_RANGE\" location=\"vtkDataArray\" length=\"2\">"
                                   "<Value index=\"0\">0</Value><Value index=\"1\">2</Value></InformationKey>\n"
                                 : "";
    if (st.format == "ascii") return a + ">\n" + info + text + "\n</DataArray>\n";
    const auto [head, body] = pack(bytes);
    if (st.format == "binary") {
      const std::string enc = st.separate_runs ? base64(head) + base64(body) : base64(head + body);
      return a + ">\n" + info + enc + "\n</DataArray>\n";
    }
    a += " offset=\"" + std::to_string(appended.size()) + "\"";
    appended += st.appended_base64 ? (st.separate_runs ? base64(head) + base64(body) : base64(head + body)) : head + body;
    return info.empty() ? a + "/>\n" : a + ">\n" + info + "</DataArray>\n";
  }
};

template <class T>
std::pair<std::string, std::string> values(const std::vector<double>& v) {
  std::string bytes, text;
  for (double x : v) {
    put_bytes(bytes, T(x));
    std::ostringstream s;
    s.precision(17);
    s << +T(x) << ' ';  // +: a number also for 8-bit types
    text += s.str();
  }
  return {bytes, text};
}

template <class F>
std::pair<std::string, std::string> typed(const std::string& type, const std::vector<double>& v, F) {
  if (type == "Float32") return values<float>(v);
  if (type == "Float64") return values<double>(v);
  if (type == "Int32") return values<std::int32_t>(v);
  if (type == "UInt32") return values<std::uint32_t>(v);
  if (type == "UInt8") return values<std::uint8_t>(v);
  return values<std::int64_t>(v);
}

// The test mesh: 2 triangles and a quad in the plane z = 0, coordinates exact in Float32.
Mesh small_mesh() {
  Mesh m(2);
  const double xy[6][2] = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1.125}, {2, 1}};
  for (const auto& p : xy) m.add_vertex({p[0], p[1]});
  m.add_element(Geometry::Triangle, {0, 1, 4}, 3);
  m.add_element(Geometry::Triangle, {0, 4, 3}, 4);
  m.add_element(Geometry::Quadrilateral, {1, 2, 5, 4}, 7);
  return m;
}

std::string encode(const Mesh& mesh, const Style& st) {
  Encoder en{st, {}};
  std::vector<double> pts, conn, offs, types, attr, u;
  for (index_t v = 0; v < mesh.num_vertices(); ++v) {
    pts.insert(pts.end(), {mesh.vertex(v, 0), mesh.vertex(v, 1), 0.0});
    u.push_back(0.25 * double(v) - 1);
  }
  for (index_t e = 0; e < mesh.num_elements(); ++e) {
    for (index_t v : mesh.element_vertices(e)) conn.push_back(double(v));
    offs.push_back(double(conn.size()));
    types.push_back(mesh.element_geometry(e) == Geometry::Triangle ? 5 : 9);
    attr.push_back(mesh.element_attribute(e));
  }
  auto arr = [&](const std::string& type, const std::string& name, int comps, const std::vector<double>& v) {
    const auto [bytes, text] = typed(type, v, 0);
    return en.array(type, name, comps, bytes, text);
  };
  std::string doc = "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\"";
  if (st.header64) doc += " header_type=\"UInt64\"";  // absent: VTK's default UInt32
  if (st.zlib) doc += " compressor=\"vtkZLibDataCompressor\"";
  doc += ">\n<UnstructuredGrid>\n<Piece NumberOfPoints=\"6\" NumberOfCells=\"3\">\n<PointData>\n";
  // One statement per array: the appended data follows the document order.
  doc += arr("Float64", "u", 1, u);
  doc += "</PointData>\n<CellData>\n";
  doc += arr("Int32", "attribute", 1, attr);
  doc += "</CellData>\n<Points>\n";
  doc += arr(st.float_type, "Points", 3, pts);
  doc += "</Points>\n<Cells>\n";
  doc += arr(st.int_type, "connectivity", 1, conn);
  doc += arr(st.int_type, "offsets", 1, offs);
  doc += arr("UInt8", "types", 1, types);
  doc += "</Cells>\n</Piece>\n</UnstructuredGrid>\n";
  if (st.format == "appended")
    doc += std::string("<AppendedData encoding=\"") + (st.appended_base64 ? "base64" : "raw") + "\">\n_" + en.appended +
           "\n</AppendedData>\n";
  return doc + "</VTKFile>\n";
}

void expect_small_mesh(const Mesh& back, const std::vector<tessera::io::VtuField>& fields, const std::string& what) {
  const Mesh mesh = small_mesh();
  ASSERT_EQ(back.num_vertices(), mesh.num_vertices()) << what;
  ASSERT_EQ(back.num_elements(), mesh.num_elements()) << what;
  EXPECT_EQ(back.space_dim(), 2) << what;
  for (index_t v = 0; v < mesh.num_vertices(); ++v)
    for (int c = 0; c < 2; ++c) EXPECT_EQ(back.vertex(v, c), mesh.vertex(v, c)) << what << " vertex " << v;
  for (index_t e = 0; e < mesh.num_elements(); ++e) {
    EXPECT_EQ(back.element_geometry(e), mesh.element_geometry(e)) << what;
    const auto a = mesh.element_vertices(e), b = back.element_vertices(e);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << what << " element " << e;
  }
  (void)fields;
}

// Every combination of format, compression, header size and array types reads back.
TEST(VtuFormats, EveryEncodingReadsBack) {
  const Mesh mesh = small_mesh();
  int tried = 0;
  for (const char* format : {"ascii", "binary", "appended"})
    for (int b64 = 0; b64 < 2; ++b64)
      for (int zlib = 0; zlib < 2; ++zlib)
        for (int h64 = 0; h64 < 2; ++h64)
          for (const char* itype : {"Int32", "UInt32", "Int64"})
            for (const char* ftype : {"Float32", "Float64"})
              for (int runs = 0; runs < 2; ++runs) {
                Style st;
                st.format = format;
                st.appended_base64 = b64;
                st.zlib = zlib;
                st.header64 = h64;
                st.int_type = itype;
                st.float_type = ftype;
                st.separate_runs = runs;
                st.information_key = (tried % 3) == 0;
                if (st.format == "ascii" && (b64 || zlib || runs)) continue;
                if (st.format != "appended" && b64) continue;
#if !TESSERA_HAS_ZLIB
                if (zlib) continue;
#endif
                const std::string what = std::string(format) + (b64 ? " base64" : "") + (zlib ? " zlib" : "") +
                                         (h64 ? " UInt64" : " UInt32") + " header, " + itype + ", " + ftype +
                                         (runs ? ", separate base64 runs" : "");
                const std::string doc = encode(mesh, st);
                std::vector<tessera::io::VtuField> fields;
                const Mesh back = tessera::io::read_vtu_bytes(doc, "enc.vtu", &fields);
                expect_small_mesh(back, fields, what);
                for (index_t e = 0; e < 3; ++e) EXPECT_EQ(back.element_attribute(e), mesh.element_attribute(e)) << what;
                ASSERT_EQ(fields.size(), 1u) << what;
                for (index_t v = 0; v < 6; ++v) EXPECT_EQ(fields[0].values[std::size_t(v)], 0.25 * double(v) - 1) << what;
                ++tried;
              }
  EXPECT_GE(tried, 30);
}

TEST(VtuFormats, DamagedEncodedDataIsRefused) {
  const Mesh mesh = small_mesh();
  Style st;
  st.format = "binary";
  std::string doc = encode(mesh, st);
  const auto k = doc.find('>', doc.find("Name=\"Points\"")) + 3;
  doc[k] = '*';
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(doc, "b.vtu"), "b.vtu", "Points", "not a base64 character");
  st.format = "appended";
  st.appended_base64 = true;
  const std::string app = encode(mesh, st);
  // Cutting the base64 text short: the last array (the cell types) runs out.
  const auto b = app.find('_', app.find("<AppendedData")) + 1, e = app.find("\n</AppendedData>");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(app.substr(0, e - 4) + app.substr(e), "c.vtu"), "c.vtu",
                        "Cells/types", "truncated");
  EXPECT_GT(e, b);
  std::string other = encode(mesh, Style{});
  other.replace(other.find("byte_order"), 0, "compressor=\"vtkLZ4DataCompressor\" ");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(other, "d.vtu"), "d.vtu", "vtkLZ4DataCompressor", "not supported");
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(replace_all(encode(mesh, Style{}), "Float64", "Float16"), "e.vtu"),
                        "e.vtu", "unknown type Float16");
#if TESSERA_HAS_ZLIB
  st.zlib = true;
  st.appended_base64 = false;
  std::string z = encode(mesh, st);
  // Flip a byte inside the first compressed block (past the headers): zlib's checksum fails.
  // The first array, u, is 48 bytes in 2 blocks: a header of 5 UInt64 words, then block 0.
  const auto block0 = z.find('_', z.find("<AppendedData")) + 1 + 5 * 8;
  z[block0 + 3] = char(z[block0 + 3] ^ 0x55);
  EXPECT_ERROR_MENTIONS(tessera::io::read_vtu_bytes(z, "z.vtu"), "z.vtu", "point data 'u'", "inflate");
#endif
}

// Files that meshio 5 writes (tests/io/data/make_meshio_samples.py made them from
// small_mesh): ASCII, base64 with UInt64 headers, and zlib with UInt32 headers, Int32 cells
// and Float32 points.
TEST(VtuFormats, MeshioFilesRead) {
  for (const char* f : {"meshio_ascii.vtu", "meshio_binary.vtu", "meshio_zlib32.vtu"}) {
#if !TESSERA_HAS_ZLIB
    if (std::string(f) == "meshio_zlib32.vtu") continue;
#endif
    std::vector<tessera::io::VtuField> fields;
    const Mesh back = tessera::io::read_vtu(tessera::io::test::data_path(f), &fields);
    expect_small_mesh(back, fields, f);
    ASSERT_EQ(fields.size(), 2u) << f;  // point data u, cell data "gmsh:physical"
    EXPECT_EQ(fields[0].name, "u");
    for (index_t v = 0; v < 6; ++v) EXPECT_EQ(fields[0].values[std::size_t(v)], 0.25 * double(v) - 1) << f;
    EXPECT_EQ(fields[1].values, (std::vector<double>{3, 4, 7})) << f;
  }
}

}  // namespace
