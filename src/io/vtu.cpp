// VTK XML UnstructuredGrid (.vtu): writer, and a reader of what the writer writes.
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
#include "tessera/fem/reference_element.hpp"

namespace tessera::io {
namespace {

// Raw appended data is written and read with memcpy: little-endian hosts only (x86-64, ARM64,
// POWER in little-endian mode), which is what byte_order="LittleEndian" promises.
static_assert(std::endian::native == std::endian::little, "tessera's VTU io assumes a little-endian host");
static_assert(sizeof(index_t) == 8 && sizeof(int) == 4, "VTU arrays are Int64 indices and Int32 attributes");

using fem::Geometry;

constexpr const char* kSpaceDimName = "tessera_space_dim";
constexpr const char* kAttributeName = "attribute";

// VTK cell type ids (vtkCellType.h). VTK's vertex order of these linear cells (the
// "Linear cell types" figure of VTK's file-format documentation) is the Gmsh order that
// fem::Mesh uses (reference_element.hpp), so connectivity is copied unchanged:
//   VTK_LINE 3        0-1.
//   VTK_TRIANGLE 5    0, 1, 2 counter-clockwise = Gmsh (0,0), (1,0), (0,1).
//   VTK_QUAD 9        0, 1, 2, 3 around the quad, counter-clockwise = Gmsh (0,0), (1,0), (1,1), (0,1).
//   VTK_TETRA 10      0, 1, 2 a triangle seen counter-clockwise from 3 (positive volume)
//                     = Gmsh (0,0,0), (1,0,0), (0,1,0), (0,0,1).
//   VTK_HEXAHEDRON 12 0-3 the bottom face counter-clockwise seen from the top, 4-7 the top face
//                     with 4 above 0 = Gmsh v0..v7 ((0,0,0), (1,0,0), (1,1,0), (0,1,0), then z = 1).
constexpr std::uint8_t vtk_cell_type(Geometry g) {
  switch (g) {
    case Geometry::Segment: return 3;
    case Geometry::Triangle: return 5;
    case Geometry::Quadrilateral: return 9;
    case Geometry::Tetrahedron: return 10;
    case Geometry::Hexahedron: return 12;
  }
  return 0;
}

std::optional<Geometry> geometry_of_vtk_cell_type(int t) {
  switch (t) {
    case 3: return Geometry::Segment;
    case 5: return Geometry::Triangle;
    case 9: return Geometry::Quadrilateral;
    case 10: return Geometry::Tetrahedron;
    case 12: return Geometry::Hexahedron;
    default: return std::nullopt;
  }
}

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
  const std::int32_t space_dim_value = sdim;

  std::vector<OutArray> point_data, cell_data;
  for (const VtuField& f : fields)
    (f.on_points ? point_data : cell_data).push_back({f.name, f.components, std::span<const double>(f.values)});
  cell_data.insert(cell_data.begin(), OutArray{kAttributeName, 1, attributes});
  const OutArray points_array{"Points", 3, std::span<const double>(points)};
  const OutArray cells[3] = {{"connectivity", 1, mesh.element_connectivity()},
                             {"offsets", 1, mesh.element_offsets().subspan(1)},  // VTK: end of each cell
                             {"types", 1, std::span<const std::uint8_t>(types)}};

  const bool ascii = options.encoding == VtuOptions::Encoding::Ascii;
  std::vector<const OutArray*> order;  // appended-data order = order in the XML
  std::uint64_t offset = 0;
  auto array = [&](const OutArray& a, const std::string& indent) {
    write_data_array(os, a, ascii, offset, indent);
    order.push_back(&a);
    offset += sizeof(std::uint64_t) + byte_size(a.data);
  };

  os << "<?xml version=\"1.0\"?>\n"
     << "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
     << "  <UnstructuredGrid>\n"
     << "    <FieldData>\n"
     << "      <DataArray type=\"Int32\" Name=\"" << kSpaceDimName << "\" NumberOfTuples=\"1\" format=\"ascii\">"
     << space_dim_value << "</DataArray>\n"
     << "    </FieldData>\n"
     << "    <Piece NumberOfPoints=\"" << nv << "\" NumberOfCells=\"" << ne << "\">\n";
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

// ---- reader: a small XML parser for the subset the writer uses ---------------------------

struct XmlElement {
  std::string_view name;
  std::vector<std::pair<std::string_view, std::string>> attributes;  // values unescaped
  std::string_view text;       // character content, when the element has no children
  std::size_t text_pos = 0;    // byte offset of text
  std::vector<XmlElement> children;
  std::size_t pos = 0;         // byte offset of '<'

  const std::string* attribute(std::string_view key) const {
    for (const auto& [k, v] : attributes)
      if (k == key) return &v;
    return nullptr;
  }
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':' ||
         c == '-' || c == '.';
}

class VtuReader {
 public:
  VtuReader(std::string_view bytes, const std::string& file) : s_(bytes), file_(file) {}

  fem::Mesh read(std::vector<VtuField>* fields);

 private:
  // Line number of byte offset pos (1-based), for messages about the XML part.
  std::size_t line_of(std::size_t pos) const {
    pos = std::min(pos, s_.size());
    if (appended_base_ != npos) pos = std::min(pos, appended_base_);
    return 1 + std::size_t(std::count(s_.begin(), s_.begin() + std::ptrdiff_t(pos), '\n'));
  }
  template <class... Args>
  [[noreturn]] void fail_at(std::size_t pos, Args&&... args) const {
    fail("read_vtu: ", file_, ":", line_of(pos), ": ", std::forward<Args>(args)...);
  }
  template <class... Args>
  [[noreturn]] void fail_file(Args&&... args) const {
    fail("read_vtu: ", file_, ": ", std::forward<Args>(args)...);
  }

  // XML
  void skip_space() {
    while (i_ < s_.size() && is_space(s_[i_])) ++i_;
  }
  bool starts(std::string_view t) const { return s_.substr(i_, t.size()) == t; }
  void skip_past(std::string_view end, std::size_t from, const char* what) {
    const std::size_t k = s_.find(end, i_);
    if (k == npos) fail_at(from, "unterminated ", what, " (no '", end, "' before the end of the file)");
    i_ = k + end.size();
  }
  void skip_misc() {  // whitespace, comments, processing instructions
    for (;;) {
      skip_space();
      if (starts("<!--")) skip_past("-->", i_, "comment");
      else if (starts("<?")) skip_past("?>", i_, "processing instruction");
      else return;
    }
  }
  std::string_view parse_name() {
    const std::size_t b = i_;
    while (i_ < s_.size() && is_name_char(s_[i_])) ++i_;
    if (i_ == b) fail_at(b, "expected an XML name at byte ", b);
    return s_.substr(b, i_ - b);
  }
  std::string unescape(std::string_view v, std::size_t pos) const;
  XmlElement parse_element(int depth);

  // VTK
  template <class T>
  std::vector<T> decode(const XmlElement& da, const std::string& what, index_t tuples, int components);
  index_t count_attribute(const XmlElement& e, const char* key) const;
  int components_of(const XmlElement& da, const std::string& what) const;
  const XmlElement* only_child(const XmlElement& e, std::string_view name, bool required) const;
  void check_trailer() const;

  static constexpr std::size_t npos = std::string_view::npos;
  std::string_view s_;
  const std::string& file_;
  std::size_t i_ = 0;
  std::size_t appended_base_ = npos;  // offset of the first byte after '_' in <AppendedData>
  std::size_t appended_end_ = 0;      // end of the last appended array read
  bool header_uint64_ = false;
  bool appended_seen_ = false;
};

std::string VtuReader::unescape(std::string_view v, std::size_t pos) const {
  std::string out;
  out.reserve(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (v[k] != '&') {
      out += v[k];
      continue;
    }
    static constexpr std::pair<std::string_view, char> entities[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    bool found = false;
    for (const auto& [ent, c] : entities)
      if (v.substr(k, ent.size()) == ent) {
        out += c;
        k += ent.size() - 1;
        found = true;
        break;
      }
    if (!found) fail_at(pos, "unsupported character reference in attribute value '", v, "'");
  }
  return out;
}

XmlElement VtuReader::parse_element(int depth) {
  // Nesting deeper than any VTU file needs is refused (and keeps the recursion bounded).
  if (depth > 16) fail_at(i_, "XML elements nested more than 16 deep; not a VTU file");
  XmlElement e;
  e.pos = i_;
  if (i_ >= s_.size() || s_[i_] != '<') fail_at(i_, "expected '<'");
  ++i_;
  e.name = parse_name();
  for (;;) {
    skip_space();
    if (i_ >= s_.size()) fail_at(e.pos, "unexpected end of file inside the tag <", e.name, ">");
    if (starts("/>")) {
      i_ += 2;
      return e;
    }
    if (s_[i_] == '>') {
      ++i_;
      break;
    }
    const std::size_t apos = i_;
    const std::string_view key = parse_name();
    skip_space();
    if (i_ >= s_.size() || s_[i_] != '=') fail_at(apos, "attribute '", key, "' of <", e.name, "> has no '=value'");
    ++i_;
    skip_space();
    if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\''))
      fail_at(apos, "value of attribute '", key, "' of <", e.name, "> is not quoted");
    const char q = s_[i_++];
    const std::size_t vb = i_;
    const std::size_t ve = s_.find(q, vb);
    if (ve == npos) fail_at(apos, "unterminated value of attribute '", key, "' of <", e.name, ">");
    const std::string_view raw = s_.substr(vb, ve - vb);
    if (raw.find('<') != npos) fail_at(apos, "'<' in the value of attribute '", key, "' of <", e.name, ">");
    if (e.attribute(key)) fail_at(apos, "attribute '", key, "' repeated in <", e.name, ">");
    e.attributes.emplace_back(key, unescape(raw, apos));
    i_ = ve + 1;
  }
  if (e.name == "AppendedData") {
    if (depth != 1) fail_at(e.pos, "<AppendedData> must be a child of <VTKFile>");
    // Raw bytes follow the '_' up to the end of the data; the element ends the document
    // (checked once the arrays are read: check_trailer).
    skip_space();
    if (i_ >= s_.size() || s_[i_] != '_')
      fail_at(e.pos, "<AppendedData> must start with '_' followed by the raw bytes (truncated file?)");
    appended_base_ = i_ + 1;
    appended_seen_ = true;
    return e;
  }
  const std::size_t text_begin = i_;
  std::size_t text_end = i_;
  for (;;) {
    const std::size_t lt = s_.find('<', i_);
    if (lt == npos) fail_at(e.pos, "unexpected end of file inside <", e.name, "> (truncated file? no </", e.name, ">)");
    text_end = lt;
    i_ = lt;
    if (starts("<!--")) {
      skip_past("-->", lt, "comment");
      continue;
    }
    if (starts("</")) {
      i_ += 2;
      const std::string_view closing = parse_name();
      if (closing != e.name) fail_at(lt, "</", closing, "> closes <", e.name, "> (opened on line ", line_of(e.pos), ")");
      skip_space();
      if (i_ >= s_.size() || s_[i_] != '>') fail_at(lt, "malformed closing tag </", closing);
      ++i_;
      break;
    }
    if (starts("<!") || starts("<?")) fail_at(lt, "unexpected '", s_.substr(lt, 2), "' inside <", e.name, ">");
    e.children.push_back(parse_element(depth + 1));
    if (appended_seen_) return e;
  }
  if (e.children.empty()) {
    e.text = s_.substr(text_begin, text_end - text_begin);
    e.text_pos = text_begin;
  }
  return e;
}

index_t VtuReader::count_attribute(const XmlElement& e, const char* key) const {
  const std::string* v = e.attribute(key);
  if (!v) fail_at(e.pos, "<", e.name, "> has no ", key, " attribute");
  index_t n = -1;
  const auto r = std::from_chars(v->data(), v->data() + v->size(), n);
  if (r.ec != std::errc() || r.ptr != v->data() + v->size() || n < 0)
    fail_at(e.pos, "<", e.name, "> ", key, "=\"", *v, "\" is not a non-negative integer");
  // Every value takes at least one byte in either encoding.
  if (std::uint64_t(n) > s_.size())
    fail_at(e.pos, "<", e.name, "> ", key, "=", n, " is more than a file of ", s_.size(), " bytes can hold (bad count)");
  return n;
}

int VtuReader::components_of(const XmlElement& da, const std::string& what) const {
  const std::string* v = da.attribute("NumberOfComponents");
  if (!v) return 1;
  int n = 0;
  const auto r = std::from_chars(v->data(), v->data() + v->size(), n);
  if (r.ec != std::errc() || r.ptr != v->data() + v->size() || n < 1 || std::uint64_t(n) > s_.size())
    fail_at(da.pos, what, ": NumberOfComponents=\"", *v, "\" is not a positive integer (bad count)");
  return n;
}

const XmlElement* VtuReader::only_child(const XmlElement& e, std::string_view name, bool required) const {
  const XmlElement* found = nullptr;
  for (const XmlElement& c : e.children)
    if (c.name == name) {
      if (found) fail_at(c.pos, "<", e.name, "> has more than one <", name, ">");
      found = &c;
    }
  if (!found && required) fail_at(e.pos, "<", e.name, "> has no <", name, "> (missing piece of the file)");
  return found;
}

template <class T>
std::vector<T> VtuReader::decode(const XmlElement& da, const std::string& what, index_t tuples, int components) {
  if (da.name != "DataArray") fail_at(da.pos, "unexpected <", da.name, "> where a <DataArray> (", what, ") belongs");
  const std::string* type = da.attribute("type");
  if (!type) fail_at(da.pos, what, ": <DataArray> has no type attribute");
  if (*type != vtk_type_name<T>())
    fail_at(da.pos, what, ": type ", *type, ", expected ", vtk_type_name<T>(), " (tessera writes ", what, " as ",
            vtk_type_name<T>(), ")");
  if (const int nc = components_of(da, what); nc != components)
    fail_at(da.pos, what, ": NumberOfComponents=", nc, ", expected ", components);
  if (tuples < 0 || std::uint64_t(tuples) > s_.size() / std::uint64_t(components))
    fail_at(da.pos, what, ": ", tuples, " tuples of ", components, " components is more than a file of ", s_.size(),
            " bytes can hold (bad count)");
  const std::size_t count = std::size_t(tuples) * std::size_t(components);
  const std::string* format = da.attribute("format");
  if (!format) fail_at(da.pos, what, ": <DataArray> has no format attribute");
  std::vector<T> out;
  if (*format == "ascii") {
    if (!da.children.empty()) fail_at(da.pos, what, ": <DataArray> contains elements instead of numbers");
    if (count > da.text.size()) fail_at(da.pos, what, ": expected ", count, " values, the text holds fewer (bad count)");
    out.reserve(count);
    const char* p = da.text.data();
    const char* end = p + da.text.size();
    for (;;) {
      while (p < end && is_space(*p)) ++p;
      if (p == end) break;
      const char* b = p;
      while (p < end && !is_space(*p)) ++p;
      const std::size_t pos = da.text_pos + std::size_t(b - da.text.data());
      if (out.size() == count)
        fail_at(pos, what, ": more than the expected ", count, " values (bad count)");
      T value{};
      if constexpr (std::is_same_v<T, double>) {
        const auto r = std::from_chars(b, p, value);
        if (r.ec != std::errc() || r.ptr != p) fail_at(pos, what, ": '", std::string_view(b, std::size_t(p - b)), "' is not a number");
      } else {
        std::int64_t v = 0;
        const auto r = std::from_chars(b, p, v);
        if (r.ec != std::errc() || r.ptr != p || v < std::int64_t(std::numeric_limits<T>::min()) ||
            v > std::int64_t(std::numeric_limits<T>::max()))
          fail_at(pos, what, ": '", std::string_view(b, std::size_t(p - b)), "' is not an integer of type ",
                  vtk_type_name<T>());
        value = T(v);
      }
      out.push_back(value);
    }
    if (out.size() != count) fail_at(da.pos, what, ": ", out.size(), " values, expected ", count, " (bad count)");
    return out;
  }
  if (*format == "appended") {
    if (!appended_seen_) fail_at(da.pos, what, ": format=\"appended\" but the file has no <AppendedData> block (missing piece)");
    if (!header_uint64_)
      fail_at(da.pos, what, ": appended data needs header_type=\"UInt64\" on <VTKFile> (tessera reads 64-bit headers only)");
    const std::string* off = da.attribute("offset");
    if (!off) fail_at(da.pos, what, ": format=\"appended\" without an offset attribute");
    std::uint64_t o = 0;
    const auto r = std::from_chars(off->data(), off->data() + off->size(), o);
    if (r.ec != std::errc() || r.ptr != off->data() + off->size())
      fail_at(da.pos, what, ": offset=\"", *off, "\" is not a non-negative integer");
    const std::size_t avail = s_.size() - appended_base_;
    if (o > avail || avail - o < sizeof(std::uint64_t))
      fail_file("truncated appended data: the header of ", what, " (offset ", o, ", byte ", appended_base_ + o,
                ") lies past the end of the file (", s_.size(), " bytes)");
    std::uint64_t nbytes = 0;
    std::memcpy(&nbytes, s_.data() + appended_base_ + o, sizeof nbytes);
    if (nbytes != std::uint64_t(count) * sizeof(T))
      fail_file("appended data of ", what, " (byte ", appended_base_ + o, "): byte count ", nbytes, ", expected ",
                count * sizeof(T), " for ", count, " values of type ", vtk_type_name<T>(), " (bad count)");
    const std::size_t data = appended_base_ + std::size_t(o) + sizeof(std::uint64_t);
    if (nbytes > s_.size() - data)
      fail_file("truncated appended data: ", what, " needs ", nbytes, " bytes from byte ", data, ", the file ends after ",
                s_.size() - data);
    out.resize(count);
    if (count) std::memcpy(out.data(), s_.data() + data, count * sizeof(T));
    appended_end_ = std::max(appended_end_, data + count * sizeof(T));
    return out;
  }
  if (*format == "binary")
    fail_at(da.pos, what, ": inline base64 data (format=\"binary\") is not supported; tessera reads format=\"ascii\" ",
            "or raw \"appended\" data as tessera::io::write_vtu writes it");
  fail_at(da.pos, what, ": unknown format=\"", *format, "\" (expected ascii or appended)");
}

void VtuReader::check_trailer() const {
  if (!appended_seen_) return;
  std::size_t k = std::max(appended_end_, appended_base_);
  auto expect = [&](std::string_view tag) {
    while (k < s_.size() && is_space(s_[k])) ++k;
    if (s_.substr(k, tag.size()) != tag)
      fail_file("expected ", tag, " at byte ", k, " after the appended data (truncated file, or data that the offsets ",
                "and byte counts do not describe)");
    k += tag.size();
  };
  expect("</AppendedData>");
  expect("</VTKFile>");
  while (k < s_.size() && is_space(s_[k])) ++k;
  if (k != s_.size()) fail_file("unexpected bytes after </VTKFile> at byte ", k);
}

fem::Mesh VtuReader::read(std::vector<VtuField>* fields) {
  skip_misc();
  if (i_ >= s_.size()) fail_file("empty file: no <VTKFile> element");
  if (!starts("<VTKFile")) fail_at(i_, "the document does not start with <VTKFile>; not a VTK XML file");
  const XmlElement root = parse_element(0);
  if (!appended_seen_) {
    skip_misc();
    if (i_ != s_.size()) fail_at(i_, "unexpected content after </VTKFile>");
  }

  // <VTKFile>
  if (root.name != "VTKFile") fail_at(root.pos, "the root element is <", root.name, ">, expected <VTKFile>");
  const std::string* type = root.attribute("type");
  if (!type || *type != "UnstructuredGrid")
    fail_at(root.pos, "<VTKFile type=\"", type ? *type : "", "\">: tessera reads UnstructuredGrid (.vtu) files only");
  const std::string* order = root.attribute("byte_order");
  if (!order || *order != "LittleEndian")
    fail_at(root.pos, "<VTKFile> byte_order=\"", order ? *order : "", "\": tessera reads LittleEndian files only");
  if (root.attribute("compressor"))
    fail_at(root.pos, "compressed data (compressor=\"", *root.attribute("compressor"),
            "\") is not supported; save the file uncompressed");
  if (const std::string* h = root.attribute("header_type")) {
    if (*h != "UInt64" && *h != "UInt32") fail_at(root.pos, "unknown header_type=\"", *h, "\"");
    header_uint64_ = *h == "UInt64";
  }
  const XmlElement* grid = only_child(root, "UnstructuredGrid", true);
  for (const XmlElement& c : root.children)
    if (c.name != "UnstructuredGrid" && c.name != "AppendedData")
      fail_at(c.pos, "unexpected <", c.name, "> in <VTKFile>");
  if (const XmlElement* app = only_child(root, "AppendedData", false)) {
    const std::string* enc = app->attribute("encoding");
    if (!enc || *enc != "raw")
      fail_at(app->pos, "<AppendedData encoding=\"", enc ? *enc : "", "\">: tessera reads raw appended data only");
  }

  // <UnstructuredGrid>
  for (const XmlElement& c : grid->children)
    if (c.name != "Piece" && c.name != "FieldData") fail_at(c.pos, "unexpected <", c.name, "> in <UnstructuredGrid>");
  if (std::count_if(grid->children.begin(), grid->children.end(), [](const XmlElement& c) { return c.name == "Piece"; }) > 1)
    fail_at(grid->pos, "several <Piece> elements; tessera reads single-piece files only");
  const XmlElement* piece = only_child(*grid, "Piece", true);
  int declared_sdim = 0;
  if (const XmlElement* fd = only_child(*grid, "FieldData", false))
    for (const XmlElement& da : fd->children) {
      const std::string* nm = da.attribute("Name");
      if (da.name != "DataArray" || !nm || *nm != kSpaceDimName) continue;
      const auto v = decode<std::int32_t>(da, std::string("field data '") + kSpaceDimName + "'", 1, 1);
      if (v[0] < 1 || v[0] > 3) fail_at(da.pos, kSpaceDimName, " = ", v[0], " is not 1, 2 or 3");
      declared_sdim = v[0];
    }

  // <Piece>
  const index_t np = count_attribute(*piece, "NumberOfPoints");
  const index_t nc = count_attribute(*piece, "NumberOfCells");
  for (const XmlElement& c : piece->children)
    if (c.name != "PointData" && c.name != "CellData" && c.name != "Points" && c.name != "Cells")
      fail_at(c.pos, "unexpected <", c.name, "> in <Piece> (an UnstructuredGrid piece has PointData, CellData, ",
              "Points and Cells)");
  const XmlElement* points_el = only_child(*piece, "Points", true);
  const XmlElement* cells_el = only_child(*piece, "Cells", true);
  if (points_el->children.size() != 1) fail_at(points_el->pos, "<Points> must hold exactly one <DataArray>");
  const std::vector<double> xyz = decode<double>(points_el->children[0], "Points", np, 3);

  auto cell_array = [&](const char* name) -> const XmlElement& {
    const XmlElement* found = nullptr;
    for (const XmlElement& c : cells_el->children) {
      const std::string* nm = c.attribute("Name");
      if (nm && *nm == name) found = &c;
    }
    if (!found) fail_at(cells_el->pos, "<Cells> has no DataArray Name=\"", name, "\" (missing piece of the file)");
    return *found;
  };
  const std::vector<std::uint8_t> types = decode<std::uint8_t>(cell_array("types"), "Cells/types", nc, 1);
  const std::vector<std::int64_t> offsets = decode<std::int64_t>(cell_array("offsets"), "Cells/offsets", nc, 1);
  std::vector<Geometry> geom(types.size());
  int mesh_dim = 0;
  index_t total = 0;
  for (std::size_t c = 0; c < types.size(); ++c) {
    const auto g = geometry_of_vtk_cell_type(types[c]);
    if (!g)
      fail_file("cell ", c, " has unknown VTK cell type ", int(types[c]),
                "; tessera reads 3 (line), 5 (triangle), 9 (quad), 10 (tetra) and 12 (hexahedron)");
    geom[c] = *g;
    mesh_dim = std::max(mesh_dim, fem::dim(*g));
    total += fem::num_vertices(*g);
    if (offsets[c] != total)
      fail_file("Cells/offsets[", c, "] = ", offsets[c], ", expected ", total, " (a ", fem::name(*g), " has ",
                fem::num_vertices(*g), " vertices; bad count)");
  }
  const std::vector<std::int64_t> conn = decode<std::int64_t>(cell_array("connectivity"), "Cells/connectivity", total, 1);
  for (std::size_t k = 0; k < conn.size(); ++k)
    if (conn[k] < 0 || conn[k] >= np) {
      const auto c = std::upper_bound(offsets.begin(), offsets.end(), std::int64_t(k)) - offsets.begin();
      fail_file("cell ", c, " refers to point ", conn[k], ", but there are ", np, " points (0..", np - 1, ")");
    }

  std::vector<std::int32_t> attributes(std::size_t(nc), 1);
  std::vector<VtuField> found_fields;
  auto read_fields = [&](const XmlElement* data, bool on_points) {
    if (!data) return;
    for (const XmlElement& da : data->children) {
      const std::string* nm = da.attribute("Name");
      if (!nm || nm->empty()) fail_at(da.pos, on_points ? "<PointData>" : "<CellData>", " array without a Name");
      const std::string what = std::string(on_points ? "point" : "cell") + " data '" + *nm + "'";
      if (!on_points && *nm == kAttributeName) {
        attributes = decode<std::int32_t>(da, what, nc, 1);
        continue;
      }
      const int comps = components_of(da, what);
      VtuField f{*nm, comps, on_points, decode<double>(da, what, on_points ? np : nc, comps)};
      found_fields.push_back(std::move(f));
    }
  };
  read_fields(only_child(*piece, "PointData", false), true);
  read_fields(only_child(*piece, "CellData", false), false);
  check_trailer();

  // Space dimension: declared, or the largest of the mesh dimension and the last nonzero axis.
  int sdim = std::max(mesh_dim, 1);
  for (index_t v = 0; v < np; ++v)
    for (int c = 0; c < 3; ++c) {
      const double x = xyz[std::size_t(v * 3 + c)];
      if (!std::isfinite(x)) fail_file("point ", v, " has a non-finite coordinate (", x, ") in direction ", c);
      if (x != 0.0) {
        if (declared_sdim && c >= declared_sdim)
          fail_file("point ", v, " has coordinate ", c, " = ", x, ", but ", kSpaceDimName, " is ", declared_sdim);
        sdim = std::max(sdim, c + 1);
      }
    }
  if (declared_sdim) {
    if (declared_sdim < mesh_dim)
      fail_file(kSpaceDimName, " is ", declared_sdim, ", but the file has ", mesh_dim, "-D cells");
    sdim = declared_sdim;
  }

  fem::Mesh mesh(sdim);
  mesh.reserve(np, nc);
  for (index_t v = 0; v < np; ++v) mesh.add_vertex(std::span<const double>(xyz.data() + v * 3, std::size_t(sdim)));
  for (std::size_t c = 0; c < geom.size(); ++c) {
    const std::int64_t b = c ? offsets[c - 1] : 0;
    mesh.add_element(geom[c], std::span<const index_t>(conn.data() + b, std::size_t(offsets[c] - b)), attributes[c]);
  }
  mesh.validate(file_);
  if (fields) *fields = std::move(found_fields);
  return mesh;
}

}  // namespace

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

fem::Mesh read_vtu(const std::string& path, std::vector<VtuField>* fields) {
  std::ifstream is(path, std::ios::binary);
  if (!is) fail("read_vtu: cannot open '", path, "' (", std::strerror(errno), ")");
  std::ostringstream ss;
  ss << is.rdbuf();
  if (is.bad()) fail("read_vtu: reading '", path, "' failed (", std::strerror(errno), ")");
  const std::string bytes = std::move(ss).str();
  return read_vtu_bytes(bytes, path, fields);
}

fem::Mesh read_vtu_bytes(std::string_view bytes, const std::string& name, std::vector<VtuField>* fields) {
  return VtuReader(bytes, name).read(fields);
}

}  // namespace tessera::io
