// VTK XML UnstructuredGrid (.vtu) writers: the mesh with vertex or cell data (write_vtu), and
// order-p H1 fields on VTK Lagrange cells (write_vtu_lagrange). The reader is vtu_read.cpp.
//
// Format reference: "VTK File Formats", section "XML File Formats" (VTKFile, UnstructuredGrid,
// Piece, PointData, CellData, Points, Cells, DataArray, AppendedData), and vtkCellType.h for
// the cell type ids.
#include "tessera/io/vtu.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <type_traits>
#include <utility>
#include <variant>

#include "tessera/core/error.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/reference_element.hpp"
#include "vtu_detail.hpp"

namespace tessera::io {
namespace {

// Raw appended data is written and read with memcpy: little-endian hosts only (x86-64, ARM64,
// POWER in little-endian mode), which is what byte_order="LittleEndian" promises.
static_assert(std::endian::native == std::endian::little, "tessera's VTU io assumes a little-endian host");
static_assert(sizeof(index_t) == 8 && sizeof(int) == 4, "VTU arrays are Int64 indices and Int32 attributes");

using fem::Geometry;

using namespace vtu_detail;

// ---- helpers shared by writer and reader -------------------------------------------------

template <class T>
constexpr const char* vtk_type_name() {
  if constexpr (std::is_same_v<T, double>) return "Float64";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "Int64";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "Int32";
  else return "UInt8";
}

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

// ---- writer ------------------------------------------------------------------------------

using ArraySpan = std::variant<std::span<const double>, std::span<const std::int64_t>,
                               std::span<const std::int32_t>, std::span<const std::uint8_t>>;

struct OutArray {
  std::string name;
  int components = 1;
  ArraySpan data;
};

std::size_t byte_size(const ArraySpan& a) {
  return std::visit([](auto s) { return s.size_bytes(); }, a);
}

const char* type_name(const ArraySpan& a) {
  return std::visit([](auto s) { return vtk_type_name<typename decltype(s)::value_type>(); }, a);
}

template <class T>
void append_number(std::string& out, T v) {
  char buf[64];
  std::to_chars_result r;
  if constexpr (std::is_same_v<T, double>) r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round trip
  else r = std::to_chars(buf, buf + sizeof buf, static_cast<std::int64_t>(v));
  out.append(buf, r.ptr);
}

void write_ascii_values(std::ostream& os, const ArraySpan& a, const std::string& indent) {
  std::visit(
      [&](auto s) {
        const std::size_t per_line = std::is_same_v<typename decltype(s)::value_type, double> ? 6 : 12;
        std::string line;
        for (std::size_t i = 0; i < s.size(); ++i) {
          if (i % per_line == 0) {
            if (i) line += '\n';
            line += indent;
            if (line.size() > (1u << 16)) {
              os << line;
              line.clear();
            }
          } else {
            line += ' ';
          }
          append_number(line, s[i]);
        }
        if (!s.empty()) line += '\n';
        os << line;
      },
      a);
}

void write_data_array(std::ostream& os, const OutArray& a, bool ascii, std::uint64_t offset, const std::string& indent) {
  os << indent << "<DataArray type=\"" << type_name(a.data) << "\" Name=\"" << xml_escape(a.name)
     << "\" NumberOfComponents=\"" << a.components << "\" format=\"" << (ascii ? "ascii" : "appended") << "\"";
  if (!ascii) {
    os << " offset=\"" << offset << "\"/>\n";
    return;
  }
  os << ">\n";
  write_ascii_values(os, a.data, indent + "  ");
  os << indent << "</DataArray>\n";
}

void check_fields(const fem::Mesh& mesh, std::span<const VtuField> fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const VtuField& f = fields[i];
    const std::string where = std::string("write_vtu: field ") + std::to_string(i) + " '" + f.name + "'";
    if (f.name.empty()) fail("write_vtu: field ", i, " has an empty name; give every field a name");
    if (f.components < 1) fail(where, ": ", f.components, " components; a field needs at least 1");
    if (!f.on_points && f.name == kAttributeName)
      fail(where, ": the cell-data name '", kAttributeName,
           "' is reserved for the element attributes, which are written anyway; rename the field");
    const index_t tuples = f.on_points ? mesh.num_vertices() : mesh.num_elements();
    const auto expected = static_cast<std::size_t>(tuples) * static_cast<std::size_t>(f.components);
    if (f.values.size() != expected)
      fail(where, ": ", f.values.size(), " values, expected ", expected, " (", f.components, " components x ", tuples,
           f.on_points ? " vertices" : " elements", ")");
    for (std::size_t j = 0; j < i; ++j)
      if (fields[j].on_points == f.on_points && fields[j].name == f.name)
        fail(where, ": the name is used by field ", j, " too (", f.on_points ? "point" : "cell",
             " data); field names must differ");
  }
}

void write_document(std::ostream& os, int sdim, const char* version, index_t np, index_t nc,
                    const std::vector<OutArray>& point_data, const std::vector<OutArray>& cell_data,
                    const OutArray& points_array, const OutArray (&cells)[3], const VtuOptions& options);

void write_vtu_stream(std::ostream& os, const fem::Mesh& mesh, std::span<const VtuField> fields,
                      const VtuOptions& options) {
  const int sdim = mesh.space_dim();
  if (sdim < 1 || sdim > 3) fail("write_vtu: the mesh has no space dimension (construct it with fem::Mesh(space_dim))");
  check_fields(mesh, fields);
  const index_t nv = mesh.num_vertices(), ne = mesh.num_elements();

  std::vector<double> points(static_cast<std::size_t>(nv) * 3, 0.0);
  for (index_t v = 0; v < nv; ++v)
    for (int c = 0; c < sdim; ++c) {
      const double x = mesh.vertex(v, c);
      if (!std::isfinite(x))
        fail("write_vtu: vertex ", v, " has a non-finite coordinate (", x, ") in direction ", c,
             "; fix the mesh before writing it");
      points[std::size_t(v * 3 + c)] = x;
    }
  std::vector<std::uint8_t> types(static_cast<std::size_t>(ne));
  for (index_t e = 0; e < ne; ++e) types[std::size_t(e)] = vtk_cell_type(mesh.element_geometry(e));
  static_assert(std::is_same_v<index_t, std::int64_t>);
  const std::span<const std::int32_t> attributes(reinterpret_cast<const std::int32_t*>(mesh.element_attributes().data()),
                                                 mesh.element_attributes().size());

  std::vector<OutArray> point_data, cell_data;
  for (const VtuField& f : fields)
    (f.on_points ? point_data : cell_data).push_back({f.name, f.components, std::span<const double>(f.values)});
  cell_data.insert(cell_data.begin(), OutArray{kAttributeName, 1, attributes});
  const OutArray points_array{"Points", 3, std::span<const double>(points)};
  const OutArray cells[3] = {{"connectivity", 1, mesh.element_connectivity()},
                             {"offsets", 1, mesh.element_offsets().subspan(1)},  // VTK: end of each cell
                             {"types", 1, std::span<const std::uint8_t>(types)}};

  write_document(os, sdim, "1.0", nv, ne, point_data, cell_data, points_array, cells, options);
}

// The document: field data (the space dimension), one piece with point data, cell data,
// points and cells; the arrays inline (ASCII) or raw in <AppendedData>.
void write_document(std::ostream& os, int sdim, const char* version, index_t np, index_t nc,
                    const std::vector<OutArray>& point_data, const std::vector<OutArray>& cell_data,
                    const OutArray& points_array, const OutArray (&cells)[3], const VtuOptions& options) {
  const std::int32_t space_dim_value = sdim;
  const bool ascii = options.encoding == VtuOptions::Encoding::Ascii;
  std::vector<const OutArray*> order;  // appended-data order = order in the XML
  std::uint64_t offset = 0;
  auto array = [&](const OutArray& a, const std::string& indent) {
    write_data_array(os, a, ascii, offset, indent);
    order.push_back(&a);
    offset += sizeof(std::uint64_t) + byte_size(a.data);
  };

  os << "<?xml version=\"1.0\"?>\n"
     << "<VTKFile type=\"UnstructuredGrid\" version=\"" << version << "\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
     << "  <UnstructuredGrid>\n"
     << "    <FieldData>\n"
     << "      <DataArray type=\"Int32\" Name=\"" << kSpaceDimName << "\" NumberOfTuples=\"1\" format=\"ascii\">"
     << space_dim_value << "</DataArray>\n"
     << "    </FieldData>\n"
     << "    <Piece NumberOfPoints=\"" << np << "\" NumberOfCells=\"" << nc << "\">\n";
  os << "      <PointData>\n";
  for (const OutArray& a : point_data) array(a, "        ");
  os << "      </PointData>\n      <CellData>\n";
  for (const OutArray& a : cell_data) array(a, "        ");
  os << "      </CellData>\n      <Points>\n";
  array(points_array, "        ");
  os << "      </Points>\n      <Cells>\n";
  for (const OutArray& a : cells) array(a, "        ");
  os << "      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n";
  if (!ascii) {
    os << "  <AppendedData encoding=\"raw\">\n   _";
    for (const OutArray* a : order) {
      const std::uint64_t n = byte_size(a->data);
      os.write(reinterpret_cast<const char*>(&n), sizeof n);
      std::visit([&](auto s) { os.write(reinterpret_cast<const char*>(s.data()), std::streamsize(s.size_bytes())); },
                 a->data);
    }
    os << "\n  </AppendedData>\n";
  }
  os << "</VTKFile>\n";
}

// ---- VTK Lagrange cells ----------------------------------------------------------------------
//
// Node order of VTK's Lagrange cells (VTK 9, XML file version >= 2.1; see vtkHigherOrder*
// in VTK and Kitware's "Modeling arbitrary-order Lagrange finite elements in VTK"), nodes
// equispaced on the reference cell [0,1]^d or the unit simplex:
// - curve: the 2 ends, then the interior nodes from x = 0 to 1.
// - quadrilateral (i, j the lattice indices): 4 corners counter-clockwise; the edges
//   (0,0)-(1,0), (1,0)-(1,1), (0,1)-(1,1), (0,0)-(0,1), each in increasing i or j; the
//   interior with i fastest.
// - hexahedron: 8 corners; the bottom (z = 0) edges as the quadrilateral's, the top (z = 1)
//   edges the same, then the 4 vertical edges at the corners (0,0), (1,0), (1,1), (0,1) (VTK
//   8 swapped the last two, and VTK 9 reads files of version < 2.1 in VTK 8's order); the faces x = 0, x = 1, y = 0, y = 1, z = 0, z = 1, each
//   with the lower of its two varying indices fastest; the interior with i fastest, then j, k.
// - triangle: 3 corners, the edges 0-1, 1-2, 2-0 each from its first corner, then the
//   interior nodes as a triangle of order p - 3 ordered the same way (recursively).
// - tetrahedron: 4 corners, the edges 0-1, 1-2, 2-0, 0-3, 1-3, 2-3 each from its first
//   corner, the faces (0,1,3), (1,2,3), (2,0,3), (0,2,1), each face's nodes as a triangle of
//   order p - 3 in barycentric coordinates given below, then the interior as a tetrahedron
//   of order p - 4 (recursively).

// Barycentric lattice index (b0, b1, b2), summing to n, of node `index` of VTK's order-n
// triangle; b0 / n and b1 / n are the reference coordinates.
std::array<int, 3> triangle_bary(int index, int n) {
  int lo = 0, hi = n;
  while (index != 0 && index >= 3 * n) {  // into the interior triangle of order n - 3
    index -= 3 * n;
    lo += 1;
    hi -= 2;
    n -= 3;
  }
  std::array<int, 3> b{};
  if (index < 3) {  // corner 0, 1, 2: b2, b0, b1 is the large one
    b[std::size_t(index)] = lo;
    b[std::size_t((index + 1) % 3)] = lo;
    b[std::size_t((index + 2) % 3)] = hi;
    return b;
  }
  const int k = index - 3, edge = k / (n - 1), step = k % (n - 1);
  b[std::size_t((edge + 1) % 3)] = lo;
  b[std::size_t((edge + 2) % 3)] = hi - 1 - step;
  b[std::size_t(edge)] = lo + 1 + step;
  return b;
}

// The same for VTK's order-n tetrahedron: (b0, b1, b2, b3), reference coordinates b0..b2 / n.
std::array<int, 4> tetrahedron_bary(int index, int n) {
  static constexpr int corner_axis[4] = {3, 0, 1, 2};  // the barycentric index that is large at each corner
  static constexpr int edges[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};
  static constexpr int face_axes[4][3] = {{0, 2, 3}, {2, 0, 1}, {2, 1, 3}, {1, 0, 3}};  // triangle b -> tet b
  static constexpr int face_zero[4] = {1, 3, 0, 2};  // the barycentric index that is 0 on the face
  int lo = 0, hi = n;
  while (index != 0 && n > 3 && index >= 2 * (n * n + 1)) {  // 2 (n^2 + 1) nodes on the surface
    index -= 2 * (n * n + 1);
    lo += 1;
    hi -= 3;
    n -= 4;
  }
  std::array<int, 4> b{lo, lo, lo, lo};
  if (index < 4) {
    b[std::size_t(corner_axis[index])] = hi;
    return b;
  }
  if (index - 4 < 6 * (n - 1)) {
    const int edge = (index - 4) / (n - 1), step = (index - 4) % (n - 1);
    b[std::size_t(corner_axis[edges[edge][0]])] += hi - lo - 1 - step;
    b[std::size_t(corner_axis[edges[edge][1]])] += 1 + step;
    return b;
  }
  const int per_face = (n - 2) * (n - 1) / 2;
  const int face = (index - 4 - 6 * (n - 1)) / per_face, k = (index - 4 - 6 * (n - 1)) % per_face;
  const std::array<int, 3> t = n == 3 ? std::array<int, 3>{0, 0, 0} : triangle_bary(k, n - 3);
  for (int i = 0; i < 3; ++i) b[std::size_t(face_axes[face][i])] = lo + 1 + t[std::size_t(i)];
  b[std::size_t(face_zero[face])] = lo;
  return b;
}

// Index of lattice node (i, j) of VTK's order-n quadrilateral.
int quad_index(int i, int j, int n) {
  const bool ib = i == 0 || i == n, jb = j == 0 || j == n;
  const int m = n - 1;
  if (ib && jb) return i ? (j ? 2 : 1) : (j ? 3 : 0);
  if (jb) return 4 + (j ? 2 * m : 0) + (i - 1);     // edges along i: 0 (j = 0), 2 (j = n)
  if (ib) return 4 + (i ? m : 3 * m) + (j - 1);     // edges along j: 1 (i = n), 3 (i = 0)
  return 4 + 4 * m + (i - 1) + m * (j - 1);
}

// Index of lattice node (i, j, k) of VTK's order-n hexahedron.
int hex_index(int i, int j, int k, int n) {
  const bool ib = i == 0 || i == n, jb = j == 0 || j == n, kb = k == 0 || k == n;
  const int m = n - 1, on = int(ib) + int(jb) + int(kb);
  if (on == 3) return (i ? (j ? 2 : 1) : (j ? 3 : 0)) + (k ? 4 : 0);
  if (on == 2) {
    if (!ib) return 8 + ((j ? 2 : 0) + (k ? 4 : 0)) * m + (i - 1);
    if (!jb) return 8 + ((i ? 1 : 3) + (k ? 4 : 0)) * m + (j - 1);
    return 8 + (8 + (i ? (j ? 2 : 1) : (j ? 3 : 0))) * m + (k - 1);
  }
  int base = 8 + 12 * m;
  if (on == 1) {
    if (ib) return base + (i ? m * m : 0) + (j - 1) + m * (k - 1);
    base += 2 * m * m;
    if (jb) return base + (j ? m * m : 0) + (i - 1) + m * (k - 1);
    base += 2 * m * m;
    return base + (k ? m * m : 0) + (i - 1) + m * (j - 1);
  }
  return base + 6 * m * m + (i - 1) + m * ((j - 1) + m * (k - 1));
}

// ---- Lagrange writer -------------------------------------------------------------------------

void check_lagrange_fields(const fem::Mesh& mesh, int p, std::span<const VtuSpaceField> fields,
                           std::span<const VtuFunctionField> functions) {
  std::vector<std::string> names;
  auto check_name = [&](const std::string& name, const std::string& where) {
    if (name.empty()) fail(where, " has an empty name; give every field a name");
    if (std::find(names.begin(), names.end(), name) != names.end())
      fail(where, ": the name is used by another field; field names must differ");
    names.push_back(name);
  };
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const VtuSpaceField& f = fields[i];
    const std::string where = "write_vtu_lagrange: field " + std::to_string(i) + " '" + f.name + "'";
    check_name(f.name, where);
    if (!f.space) fail(where, ": no space");
    if (&f.space->mesh() != &mesh) fail(where, ": its space is on another mesh than the one written");
    if (f.space->order() != p)
      fail(where, ": its space has order ", f.space->order(), ", the cells are written at order ", p);
    if (index_t(f.dofs.size()) != f.space->num_dofs())
      fail(where, ": ", f.dofs.size(), " values, expected ", f.space->num_dofs(), " (the space's DOFs)");
    if (f.components != 0 && f.components < f.space->components())
      fail(where, ": components = ", f.components, " is fewer than the space's ", f.space->components());
  }
  for (std::size_t i = 0; i < functions.size(); ++i) {
    const VtuFunctionField& f = functions[i];
    const std::string where = "write_vtu_lagrange: function field " + std::to_string(i) + " '" + f.name + "'";
    check_name(f.name, where);
    if (f.components < 1) fail(where, ": ", f.components, " components; a field needs at least 1");
    if (!f.function) fail(where, ": no function");
  }
}

void write_lagrange_stream(std::ostream& os, const fem::Mesh& mesh, int p, std::span<const VtuSpaceField> fields,
                           std::span<const VtuFunctionField> functions, const VtuOptions& options) {
  const int sdim = mesh.space_dim();
  if (sdim < 1 || sdim > 3) fail("write_vtu_lagrange: the mesh has no space dimension");
  if (p < 1) fail("write_vtu_lagrange: order ", p, "; the order must be at least 1");
  check_lagrange_fields(mesh, p, fields, functions);
  const index_t ne = mesh.num_elements();

  // Per geometry: VTK's reference nodes and each field's basis at them (one table per geometry:
  // every space has order p).
  struct PerGeometry {
    std::vector<std::array<double, 3>> ref;
    std::vector<double> B;  // B[j * nb + i] = phi_i(ref_j)
    index_t nb = 0;
  };
  std::array<std::optional<PerGeometry>, 5> per;
  auto geometry_data = [&](Geometry g) -> const PerGeometry& {
    auto& slot = per[std::size_t(static_cast<int>(g))];
    if (!slot) {
      PerGeometry d;
      d.ref = vtk_lagrange_nodes(g, p);
      if (g == Geometry::Hexahedron && p >= 2) {
        // The file says version 1.0 (meshio reads no later one): VTK 8's hexahedron order,
        // whose vertical edges at (0,1) and (1,1) are swapped, and which VTK 9 converts.
        const std::ptrdiff_t m = p - 1, e10 = 8 + 10 * m;
        std::swap_ranges(d.ref.begin() + e10, d.ref.begin() + e10 + m, d.ref.begin() + e10 + m);
      }
      if (!fields.empty()) {
        const fem::H1Basis basis(g, p);
        d.nb = basis.size();
        d.B.resize(d.ref.size() * std::size_t(d.nb));
        for (std::size_t j = 0; j < d.ref.size(); ++j)
          basis.eval(std::span<const double>(d.ref[j].data(), std::size_t(fem::dim(g))),
                     std::span<double>(d.B.data() + j * std::size_t(d.nb), std::size_t(d.nb)));
      }
      slot = std::move(d);
    }
    return *slot;
  };

  // Points: the mesh vertices at p = 1 (linear cells, shared points); at p >= 2 every cell
  // its own num_nodes(g, p) points.
  index_t np = p == 1 ? mesh.num_vertices() : 0;
  std::vector<std::int64_t> conn, offsets(static_cast<std::size_t>(ne));
  std::vector<std::uint8_t> types(static_cast<std::size_t>(ne));
  for (index_t e = 0; e < ne; ++e) {
    const Geometry g = mesh.element_geometry(e);
    if (p == 1) {
      types[std::size_t(e)] = vtk_cell_type(g);
    } else {
      types[std::size_t(e)] = vtk_lagrange_cell_type(g);
      np += fem::num_nodes(g, p);
    }
  }
  std::vector<double> points(std::size_t(np) * 3, 0.0);
  std::vector<std::vector<double>> values(fields.size() + functions.size());
  std::vector<int> width(values.size());
  for (std::size_t f = 0; f < fields.size(); ++f)
    width[f] = fields[f].components ? fields[f].components : fields[f].space->components();
  for (std::size_t f = 0; f < functions.size(); ++f) width[fields.size() + f] = functions[f].components;
  for (std::size_t f = 0; f < values.size(); ++f) values[f].assign(std::size_t(np) * std::size_t(width[f]), 0.0);

  std::vector<double> fv, here;
  index_t next = 0;
  for (index_t e = 0; e < ne; ++e) {
    const Geometry g = mesh.element_geometry(e);
    const PerGeometry& d = geometry_data(g);
    const auto verts = mesh.element_vertices(e);
    for (std::size_t j = 0; j < d.ref.size(); ++j) {
      const index_t pt = p == 1 ? verts[j] : next + index_t(j);
      conn.push_back(pt);
      std::array<double, 3> x{0, 0, 0};
      if (j < verts.size()) {  // a corner: the vertex itself, exactly
        for (int c = 0; c < sdim; ++c) x[std::size_t(c)] = mesh.vertex(verts[j], c);
      } else {
        x = mesh.map(e, std::span<const double>(d.ref[j].data(), std::size_t(fem::dim(g))));
        for (int c = sdim; c < 3; ++c) x[std::size_t(c)] = 0.0;
      }
      for (int c = 0; c < 3; ++c) {
        if (!std::isfinite(x[std::size_t(c)]))
          fail("write_vtu_lagrange: element ", e, " has a non-finite coordinate (", x[std::size_t(c)],
               ") at node ", j, "; fix the mesh before writing it");
        points[std::size_t(pt) * 3 + std::size_t(c)] = x[std::size_t(c)];
      }
      here.clear();
      for (std::size_t f = 0; f < fields.size(); ++f) {
        const fem::H1Space& S = *fields[f].space;
        const auto nodes = S.element_nodes(e);
        const double* B = d.B.data() + j * std::size_t(d.nb);
        for (int c = 0; c < width[f]; ++c) {
          double s = 0;
          if (c < S.components())
            for (std::size_t i = 0; i < nodes.size(); ++i) s += B[i] * fields[f].dofs[std::size_t(S.dof(c, nodes[i]))];
          values[f][std::size_t(pt) * std::size_t(width[f]) + std::size_t(c)] = s;
          here.push_back(s);
        }
      }
      for (std::size_t f = 0; f < functions.size(); ++f) {
        const std::size_t w = std::size_t(width[fields.size() + f]);
        fv.assign(w, 0.0);
        functions[f].function(e, x.data(), here.data(), fv.data());
        std::copy(fv.begin(), fv.end(), values[fields.size() + f].begin() + std::ptrdiff_t(std::size_t(pt) * w));
      }
    }
    next += index_t(d.ref.size());
    offsets[std::size_t(e)] = std::int64_t(conn.size());
  }

  static_assert(std::is_same_v<index_t, std::int64_t>);
  const std::span<const std::int32_t> attributes(reinterpret_cast<const std::int32_t*>(mesh.element_attributes().data()),
                                                 mesh.element_attributes().size());
  std::vector<OutArray> point_data, cell_data{OutArray{kAttributeName, 1, attributes}};
  for (std::size_t f = 0; f < values.size(); ++f)
    point_data.push_back({f < fields.size() ? fields[f].name : functions[f - fields.size()].name, width[f],
                          std::span<const double>(values[f])});
  const OutArray points_array{"Points", 3, std::span<const double>(points)};
  const OutArray cells[3] = {{"connectivity", 1, std::span<const std::int64_t>(conn)},
                             {"offsets", 1, std::span<const std::int64_t>(offsets)},
                             {"types", 1, std::span<const std::uint8_t>(types)}};
  write_document(os, sdim, "1.0", np, ne, point_data, cell_data, points_array, cells, options);
}

void write_file(const std::string& path, const char* who, const std::string& doc) {
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  if (!os) fail(who, ": cannot open '", path, "' for writing (", std::strerror(errno), "); check the directory");
  os.write(doc.data(), std::streamsize(doc.size()));
  os.close();
  if (!os) fail(who, ": writing '", path, "' failed (", std::strerror(errno), "); disk full?");
}

}  // namespace

std::vector<std::array<double, 3>> vtk_lagrange_nodes(fem::Geometry g, int p) {
  if (p < 1) fail("vtk_lagrange_nodes: order ", p, "; the order must be at least 1");
  const index_t n = fem::num_nodes(g, p);
  std::vector<std::array<double, 3>> x(std::size_t(n), std::array<double, 3>{0, 0, 0});
  const double h = 1.0 / p;
  switch (g) {
    case Geometry::Segment:
      x[1][0] = 1.0;
      for (int i = 1; i < p; ++i) x[std::size_t(i + 1)][0] = i * h;
      break;
    case Geometry::Quadrilateral:
      for (int j = 0; j <= p; ++j)
        for (int i = 0; i <= p; ++i) x[std::size_t(quad_index(i, j, p))] = {i * h, j * h, 0.0};
      break;
    case Geometry::Hexahedron:
      for (int k = 0; k <= p; ++k)
        for (int j = 0; j <= p; ++j)
          for (int i = 0; i <= p; ++i) x[std::size_t(hex_index(i, j, k, p))] = {i * h, j * h, k * h};
      break;
    case Geometry::Triangle:
      for (index_t k = 0; k < n; ++k) {
        const auto b = triangle_bary(int(k), p);
        x[std::size_t(k)] = {b[0] * h, b[1] * h, 0.0};
      }
      break;
    case Geometry::Tetrahedron:
      for (index_t k = 0; k < n; ++k) {
        const auto b = tetrahedron_bary(int(k), p);
        x[std::size_t(k)] = {b[0] * h, b[1] * h, b[2] * h};
      }
      break;
  }
  return x;
}

void write_vtu_lagrange(const std::string& path, const fem::Mesh& mesh, int order,
                        std::span<const VtuSpaceField> fields, std::span<const VtuFunctionField> functions,
                        const VtuOptions& options) {
  // The document first, so that an invalid mesh or field leaves no partial file behind.
  write_file(path, "write_vtu_lagrange", write_vtu_lagrange_string(mesh, order, fields, functions, options));
}

std::string write_vtu_lagrange_string(const fem::Mesh& mesh, int order, std::span<const VtuSpaceField> fields,
                                      std::span<const VtuFunctionField> functions, const VtuOptions& options) {
  std::ostringstream os(std::ios::binary);
  write_lagrange_stream(os, mesh, order, fields, functions, options);
  return std::move(os).str();
}

void write_pvd(const std::string& path, std::span<const PvdEntry> datasets) {
  std::ostringstream os;
  os << "<?xml version=\"1.0\"?>\n"
     << "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n";
  for (const PvdEntry& d : datasets) {
    if (!std::isfinite(d.time)) fail("write_pvd: '", d.file, "' has a non-finite time (", d.time, ")");
    std::string t;
    append_number(t, d.time);
    os << "    <DataSet timestep=\"" << t << "\" group=\"\" part=\"0\" file=\"" << xml_escape(d.file) << "\"/>\n";
  }
  os << "  </Collection>\n</VTKFile>\n";
  write_file(path, "write_pvd", os.str());
}


void write_vtu(const std::string& path, const fem::Mesh& mesh, std::span<const VtuField> fields,
               const VtuOptions& options) {
  // Build the document first, so that an invalid mesh or field leaves no partial file behind.
  const std::string doc = write_vtu_string(mesh, fields, options);
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  if (!os) fail("write_vtu: cannot open '", path, "' for writing (", std::strerror(errno), "); check the directory");
  os.write(doc.data(), std::streamsize(doc.size()));
  os.close();
  if (!os) fail("write_vtu: writing '", path, "' failed (", std::strerror(errno), "); disk full?");
}

std::string write_vtu_string(const fem::Mesh& mesh, std::span<const VtuField> fields, const VtuOptions& options) {
  std::ostringstream os(std::ios::binary);
  write_vtu_stream(os, mesh, fields, options);
  return std::move(os).str();
}

}  // namespace tessera::io
