// VTK XML UnstructuredGrid (.vtu) reader: what tessera's writer writes and what common tools
// (meshio, ParaView/VTK) write: ASCII, inline base64 ("binary") and appended (raw or base64)
// arrays, zlib-compressed or not, 32- or 64-bit headers, any integer type for the cells and
// any numeric type for points and data.
//
// Format reference: "VTK File Formats", section "XML File Formats" (VTKFile, UnstructuredGrid,
// Piece, PointData, CellData, Points, Cells, DataArray, AppendedData; the binary header: one
// byte count, or for compressed data the block count, the block size, the size of the last
// block and the compressed size of each block), and vtkCellType.h for the cell type ids.
#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <type_traits>
#include <utility>

#if TESSERA_HAS_ZLIB
#include <zlib.h>
#endif

#include "tessera/core/error.hpp"
#include "tessera/io/vtu.hpp"
#include "vtu_detail.hpp"

namespace tessera::io {
namespace {

static_assert(std::endian::native == std::endian::little, "tessera's VTU io assumes a little-endian host");

using fem::Geometry;
using namespace vtu_detail;

// zlib's largest compression ratio is about 1032:1; a compressed file holds at most this many
// bytes of data per byte of file (bounds every count before anything is allocated).
constexpr std::uint64_t kMaxExpansion = 1040;

// The numeric types of VTK's DataArray type attribute.
enum class NumType { Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float32, Float64 };

std::optional<NumType> num_type(std::string_view s) {
  static constexpr std::pair<std::string_view, NumType> names[] = {
      {"Int8", NumType::Int8},     {"UInt8", NumType::UInt8},   {"Int16", NumType::Int16},
      {"UInt16", NumType::UInt16}, {"Int32", NumType::Int32},   {"UInt32", NumType::UInt32},
      {"Int64", NumType::Int64},   {"UInt64", NumType::UInt64}, {"Float32", NumType::Float32},
      {"Float64", NumType::Float64}, {"Char", NumType::Int8},   {"UChar", NumType::UInt8},
      {"vtkIdType", NumType::Int64}};
  for (const auto& [n, t] : names)
    if (n == s) return t;
  return std::nullopt;
}

std::size_t size_of(NumType t) {
  switch (t) {
    case NumType::Int8: case NumType::UInt8: return 1;
    case NumType::Int16: case NumType::UInt16: return 2;
    case NumType::Int32: case NumType::UInt32: case NumType::Float32: return 4;
    default: return 8;
  }
}

bool is_float(NumType t) { return t == NumType::Float32 || t == NumType::Float64; }
bool is_signed(NumType t) {
  return t == NumType::Int8 || t == NumType::Int16 || t == NumType::Int32 || t == NumType::Int64;
}

template <class T>
constexpr const char* target_name() {
  if constexpr (std::is_same_v<T, double>) return "a real";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "an Int64";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "an Int32";
  else return "a UInt8";
}

// Value k of a little-endian array of type t, as a double or as an integer (exact for every
// integer type: UInt64 values above INT64_MAX are reported as not fitting).
template <class V>
V load(const char* p, NumType t) {
  auto get = [p]<class S>(S) {
    S v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t) {
    case NumType::Int8: return V(get(std::int8_t{}));
    case NumType::UInt8: return V(get(std::uint8_t{}));
    case NumType::Int16: return V(get(std::int16_t{}));
    case NumType::UInt16: return V(get(std::uint16_t{}));
    case NumType::Int32: return V(get(std::int32_t{}));
    case NumType::UInt32: return V(get(std::uint32_t{}));
    case NumType::Int64: return V(get(std::int64_t{}));
    case NumType::UInt64: {
      const std::uint64_t u = get(std::uint64_t{});
      if constexpr (std::is_integral_v<V>) return u > std::uint64_t(std::numeric_limits<std::int64_t>::max()) ? V(-1) : V(u);
      else return V(u);
    }
    case NumType::Float32: return V(get(float{}));
    case NumType::Float64: return V(get(double{}));
  }
  return V{};
}

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

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
  void note_text(XmlElement& e, std::size_t b, std::size_t end) const {
    if (!e.text.empty()) return;
    for (std::size_t k = b; k < end; ++k)
      if (!is_space(s_[k])) {
        e.text = s_.substr(b, end - b);
        e.text_pos = b;
        return;
      }
  }
  std::string unescape(std::string_view v, std::size_t pos) const;
  XmlElement parse_element(int depth);

  // Bytes of an array: a window of the file (raw appended data) or base64 text decoded on
  // demand; `pos` is the byte offset of the next character for messages.
  struct Source {
    std::string_view text;  // raw bytes, or base64 characters
    bool base64 = false;
    std::size_t base = 0;   // file offset of text[0]
    std::size_t k = 0;      // next character of text
    std::uint32_t acc = 0;
    int bits = 0;
  };
  // Appends n bytes from the source to out; a short source is a truncated file.
  void take(Source& src, std::size_t n, std::string& out, const std::string& what) const;
  std::uint64_t take_header_word(Source& src, const std::string& what) const;
  // The uncompressed payload of one array (header, then data; inflated when compressed).
  std::string payload(Source& src, std::uint64_t nbytes, const std::string& what) const;

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
  std::size_t appended_end_ = 0;      // end of the last raw appended array read
  std::size_t appended_text_end_ = npos;  // base64 appended data: where </AppendedData> starts
  bool header_uint64_ = false;        // VTK's default header_type is UInt32
  bool appended_seen_ = false;
  bool appended_base64_ = false;
  bool compressed_ = false;
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
  std::size_t text_end = i_, segment = i_;
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
    // Text next to child elements (a DataArray's numbers next to ParaView's <InformationKey>
    // children): the first non-blank run is the element's text.
    note_text(e, segment, lt);
    e.children.push_back(parse_element(depth + 1));
    if (appended_seen_) return e;
    segment = i_;
  }
  if (!e.children.empty()) note_text(e, segment, text_end);
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
  // Every value takes at least one byte in every encoding (a byte of compressed data at most
  // kMaxExpansion).
  if (std::uint64_t(n) > std::uint64_t(s_.size()) * (compressed_ ? kMaxExpansion : 1))
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

void VtuReader::take(Source& src, std::size_t n, std::string& out, const std::string& what) const {
  if (!src.base64) {
    if (src.text.size() - src.k < n)
      fail_file("truncated data: ", what, " needs ", n, " bytes from byte ", src.base + src.k, ", the file ends after ",
                src.text.size() - src.k);
    out.append(src.text.substr(src.k, n));
    src.k += n;
    return;
  }
  // base64: whitespace is skipped; '=' pads a group, after which a new base64 run may follow
  // (VTK and meshio encode the header and the data as separate runs).
  const std::size_t want = out.size() + n;
  while (out.size() < want) {
    if (src.k >= src.text.size())
      fail_file("truncated base64 data: ", what, " ends at byte ", src.base + src.k, " with ", want - out.size(),
                " of its bytes missing (bad count or truncated file)");
    const char c = src.text[src.k++];
    if (is_space(c)) continue;
    if (c == '=') {
      src.acc = 0;
      src.bits = 0;
      continue;
    }
    const int v = base64_value(c);
    if (v < 0)
      fail_file("base64 data of ", what, ": byte ", src.base + src.k - 1, " ('", std::string(1, c),
                "') is not a base64 character");
    src.acc = (src.acc << 6) | std::uint32_t(v);
    src.bits += 6;
    if (src.bits >= 8) {
      src.bits -= 8;
      out.push_back(char((src.acc >> src.bits) & 0xffu));
    }
  }
}

std::uint64_t VtuReader::take_header_word(Source& src, const std::string& what) const {
  std::string b;
  take(src, header_uint64_ ? 8 : 4, b, what);
  if (header_uint64_) {
    std::uint64_t v;
    std::memcpy(&v, b.data(), 8);
    return v;
  }
  std::uint32_t v;
  std::memcpy(&v, b.data(), 4);
  return v;
}

std::string VtuReader::payload(Source& src, std::uint64_t nbytes, const std::string& what) const {
  std::string out;
  const std::size_t at = src.base + src.k;
  if (!compressed_) {
    const std::uint64_t n = take_header_word(src, what);
    if (n != nbytes)
      fail_file("data of ", what, " (byte ", at, "): byte count ", n, " in the header, expected ", nbytes,
                " (bad count)");
    take(src, std::size_t(nbytes), out, what);
    return out;
  }
  // Compressed: [number of blocks, block size, size of the last block (0: a full block),
  // compressed size of each block], then the blocks, each inflated on its own.
  const std::uint64_t nblocks = take_header_word(src, what), block = take_header_word(src, what),
                      last = take_header_word(src, what);
  const std::uint64_t last_size = last ? last : block;
  // (Checked in this order, the product cannot overflow: nblocks - 1 blocks fit in nbytes.)
  if (nblocks > s_.size() || last > block || (nblocks > 1 && (block == 0 || nblocks - 1 > nbytes / block)) ||
      (nblocks ? (nblocks - 1) * block + last_size : 0) != nbytes)
    fail_file("compressed data of ", what, " (byte ", at, "): ", nblocks, " blocks of ", block, " bytes, the last ",
              last_size, ", do not hold the expected ", nbytes, " bytes (bad count)");
  std::vector<std::uint64_t> csize(static_cast<std::size_t>(nblocks));
  std::uint64_t total = 0;
  for (auto& c : csize) {
    c = take_header_word(src, what);
    total += std::min<std::uint64_t>(c, s_.size() + 1);
    if (total > s_.size())
      fail_file("compressed data of ", what, " (byte ", at, "): the compressed block sizes exceed the file (bad count)");
  }
  out.reserve(std::size_t(nbytes));
  std::string packed;
  for (std::size_t b = 0; b < csize.size(); ++b) {
    packed.clear();
    take(src, std::size_t(csize[b]), packed, what);
    const std::uint64_t want = b + 1 == csize.size() ? last_size : block;
#if TESSERA_HAS_ZLIB
    const std::size_t o = out.size();
    out.resize(o + std::size_t(want));
    uLongf got = uLongf(want);
    const int rc = uncompress(reinterpret_cast<Bytef*>(out.data() + o), &got,
                              reinterpret_cast<const Bytef*>(packed.data()), uLong(packed.size()));
    if (rc != Z_OK || got != want)
      fail_file("compressed data of ", what, " (byte ", at, "): block ", b, " does not inflate to ", want,
                " bytes (zlib: ", rc == Z_OK ? "wrong size" : zError(rc), "; corrupt or truncated file)");
#else
    (void)want;
    fail_file("file is zlib-compressed and tessera was built without zlib (rebuild with zlib, e.g. the Debian package ",
              "zlib1g-dev, or save the file uncompressed)");
#endif
  }
  return out;
}

template <class T>
std::vector<T> VtuReader::decode(const XmlElement& da, const std::string& what, index_t tuples, int components) {
  if (da.name != "DataArray") fail_at(da.pos, "unexpected <", da.name, "> where a <DataArray> (", what, ") belongs");
  for (const XmlElement& c : da.children)  // ParaView's array metadata; not data
    if (c.name != "InformationKey") fail_at(c.pos, what, ": unexpected <", c.name, "> inside <DataArray>");
  const std::string* type = da.attribute("type");
  if (!type) fail_at(da.pos, what, ": <DataArray> has no type attribute");
  const std::optional<NumType> t = num_type(*type);
  if (!t)
    fail_at(da.pos, what, ": unknown type ", *type, " (tessera reads Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, ",
            "UInt64, Float32 and Float64 arrays)");
  if (std::is_integral_v<T> && is_float(*t))
    fail_at(da.pos, what, ": type ", *type, ", expected an integer type");
  if (const int nc = components_of(da, what); nc != components)
    fail_at(da.pos, what, ": NumberOfComponents=", nc, ", expected ", components);
  const std::uint64_t limit = std::uint64_t(s_.size()) * (compressed_ ? kMaxExpansion : 1);
  if (tuples < 0 || std::uint64_t(tuples) > limit / std::uint64_t(components))
    fail_at(da.pos, what, ": ", tuples, " tuples of ", components, " components is more than a file of ", s_.size(),
            " bytes can hold (bad count)");
  const std::size_t count = std::size_t(tuples) * std::size_t(components);
  const std::string* format = da.attribute("format");
  if (!format) fail_at(da.pos, what, ": <DataArray> has no format attribute");
  std::vector<T> out;
  out.reserve(count);
  // Converts one value to T: integers must fit (cell data, connectivity, offsets, types).
  auto put = [&](auto v, auto&& where) {
    if constexpr (std::is_integral_v<T>) {
      if (v < std::int64_t(std::numeric_limits<T>::min()) || v > std::int64_t(std::numeric_limits<T>::max()))
        where(std::string("value ") + std::to_string(v) + " does not fit in " + target_name<T>());
    }
    out.push_back(T(v));
  };
  if (*format == "ascii") {
    if (count > da.text.size()) fail_at(da.pos, what, ": expected ", count, " values, the text holds fewer (bad count)");
    const char* p = da.text.data();
    const char* end = p + da.text.size();
    for (;;) {
      while (p < end && is_space(*p)) ++p;
      if (p == end) break;
      const char* b = p;
      while (p < end && !is_space(*p)) ++p;
      const std::size_t pos = da.text_pos + std::size_t(b - da.text.data());
      const std::string_view tok(b, std::size_t(p - b));
      if (out.size() == count) fail_at(pos, what, ": more than the expected ", count, " values (bad count)");
      if (is_float(*t)) {
        double v = 0;
        const auto r = std::from_chars(b, p, v);
        if (r.ec != std::errc() || r.ptr != p) fail_at(pos, what, ": '", tok, "' is not a number");
        out.push_back(T(v));
      } else {
        std::int64_t v = 0;
        const auto r = std::from_chars(b, p, v);
        const std::uint64_t bits = 8 * size_of(*t);
        const bool fits = is_signed(*t) ? bits == 64 || (v >= -(std::int64_t(1) << (bits - 1)) &&
                                                         v < (std::int64_t(1) << (bits - 1)))
                                        : v >= 0 && (bits == 64 || v < (std::int64_t(1) << bits));
        if (r.ec != std::errc() || r.ptr != p || !fits)
          fail_at(pos, what, ": '", tok, "' is not an integer of type ", *type);
        put(v, [&](const std::string& m) { fail_at(pos, what, ": ", m); });
      }
    }
    if (out.size() != count) fail_at(da.pos, what, ": ", out.size(), " values, expected ", count, " (bad count)");
    return out;
  }
  Source src;
  std::string label = what;
  if (*format == "binary") {
    src.text = da.text;
    src.base = da.text_pos;
    src.base64 = true;
    label += " (inline base64)";
  } else if (*format == "appended") {
    if (!appended_seen_) fail_at(da.pos, what, ": format=\"appended\" but the file has no <AppendedData> block (missing piece)");
    const std::string* off = da.attribute("offset");
    if (!off) fail_at(da.pos, what, ": format=\"appended\" without an offset attribute");
    std::uint64_t o = 0;
    const auto r = std::from_chars(off->data(), off->data() + off->size(), o);
    if (r.ec != std::errc() || r.ptr != off->data() + off->size())
      fail_at(da.pos, what, ": offset=\"", *off, "\" is not a non-negative integer");
    src.base = appended_base_;
    src.base64 = appended_base64_;
    src.text = appended_base64_ ? s_.substr(appended_base_, appended_text_end_ - appended_base_) : s_.substr(appended_base_);
    if (o >= src.text.size())
      fail_file("truncated appended data: the header of ", what, " (offset ", o, ", byte ", appended_base_ + o,
                ") lies past the end of the file (", s_.size(), " bytes)");
    src.k = std::size_t(o);
  } else {
    fail_at(da.pos, what, ": unknown format=\"", *format, "\" (expected ascii, binary or appended)");
  }
  const std::size_t sz = size_of(*t);
  const std::string bytes = payload(src, std::uint64_t(count) * sz, label);
  if (*format == "appended" && !appended_base64_) appended_end_ = std::max(appended_end_, src.base + src.k);
  for (std::size_t k = 0; k < count; ++k) {
    const char* p = bytes.data() + k * sz;
    if constexpr (std::is_integral_v<T>)
      put(load<std::int64_t>(p, *t), [&](const std::string& m) { fail_file(what, "[", k, "]: ", m); });
    else
      out.push_back(load<double>(p, *t));
  }
  return out;
}

void VtuReader::check_trailer() const {
  if (!appended_seen_) return;
  std::size_t k = appended_base64_ ? appended_text_end_ : std::max(appended_end_, appended_base_);
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

// The order p of a Lagrange cell of geometry g with n nodes, or 0 when no order has n nodes.
int lagrange_order(Geometry g, std::int64_t n) {
  for (int p = 1;; ++p) {
    const index_t m = fem::num_nodes(g, p);
    if (m == n) return p;
    if (m > n || p > (1 << 20)) return 0;
  }
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
  if (order && *order != "LittleEndian")
    fail_at(root.pos, "<VTKFile> byte_order=\"", *order, "\": tessera reads LittleEndian files only");
  if (const std::string* c = root.attribute("compressor")) {
    if (*c != "vtkZLibDataCompressor")
      fail_at(root.pos, "compressor=\"", *c, "\" is not supported; tessera reads zlib-compressed ",
              "(vtkZLibDataCompressor) or uncompressed files");
#if !TESSERA_HAS_ZLIB
    fail_at(root.pos, "file is zlib-compressed and tessera was built without zlib (rebuild with zlib, e.g. the ",
            "Debian package zlib1g-dev, or save the file uncompressed)");
#endif
    compressed_ = true;
  }
  if (const std::string* h = root.attribute("header_type")) {
    if (*h != "UInt64" && *h != "UInt32") fail_at(root.pos, "unknown header_type=\"", *h, "\" (expected UInt32 or UInt64)");
    header_uint64_ = *h == "UInt64";
  }
  const XmlElement* grid = only_child(root, "UnstructuredGrid", true);
  for (const XmlElement& c : root.children)
    if (c.name != "UnstructuredGrid" && c.name != "AppendedData")
      fail_at(c.pos, "unexpected <", c.name, "> in <VTKFile>");
  if (const XmlElement* app = only_child(root, "AppendedData", false)) {
    const std::string* enc = app->attribute("encoding");
    if (!enc || (*enc != "raw" && *enc != "base64"))
      fail_at(app->pos, "<AppendedData encoding=\"", enc ? *enc : "", "\">: expected raw or base64");
    appended_base64_ = *enc == "base64";
    if (appended_base64_) {
      appended_text_end_ = s_.find("</AppendedData>", appended_base_);
      if (appended_text_end_ == npos)
        fail_file("truncated file: no </AppendedData> after the base64 appended data (byte ", appended_base_, ")");
    }
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
  bool lagrange = false;
  std::int64_t total = 0;
  for (std::size_t c = 0; c < types.size(); ++c) {
    const auto ct = geometry_of_vtk_cell_type(types[c]);
    if (!ct)
      fail_file("cell ", c, " has unknown VTK cell type ", int(types[c]),
                "; tessera reads 3 (line), 5 (triangle), 9 (quad), 10 (tetra), 12 (hexahedron) and the Lagrange ",
                "cells 68 to 72 (curve, triangle, quadrilateral, tetrahedron, hexahedron; read by their corners)");
    const Geometry g = ct->geometry;
    geom[c] = g;
    mesh_dim = std::max(mesh_dim, fem::dim(g));
    if (!ct->lagrange) {
      total += fem::num_vertices(g);
      if (offsets[c] != total)
        fail_file("Cells/offsets[", c, "] = ", offsets[c], ", expected ", total, " (a ", fem::name(g), " has ",
                  fem::num_vertices(g), " vertices; bad count)");
      continue;
    }
    lagrange = true;
    if (offsets[c] < total)
      fail_file("Cells/offsets[", c, "] = ", offsets[c], " is below the previous offset ", total, " (bad count)");
    const std::int64_t n = offsets[c] - total;
    // All cells together hold at most as many nodes as the file can (which also bounds the
    // work of lagrange_order).
    const std::int64_t limit = std::int64_t(s_.size()) * std::int64_t(compressed_ ? kMaxExpansion : 1);
    if (n < fem::num_vertices(g) || n > limit - total || !lagrange_order(g, n))
      fail_file("Cells/offsets[", c, "] = ", offsets[c], ": Lagrange ", fem::name(g), " cell ", c, " would have ", n,
                " nodes, which no order has (bad count)");
    total = offsets[c];
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

  // The mesh's vertices: every point, or with Lagrange cells the cells' corners alone (the
  // other nodes belong to no first-order element), corners at the same position merged
  // (writers give each Lagrange cell points of its own).
  std::vector<index_t> vertex_of(static_cast<std::size_t>(np));  // point -> mesh vertex
  std::vector<index_t> point_of;                     // mesh vertex -> point
  if (!lagrange) {
    for (index_t v = 0; v < np; ++v) vertex_of[std::size_t(v)] = v;
  } else {
    std::fill(vertex_of.begin(), vertex_of.end(), index_t(-1));
    std::map<std::array<double, 3>, index_t> at;
    for (std::size_t c = 0; c < geom.size(); ++c) {
      const std::int64_t b = c ? offsets[c - 1] : 0;
      for (int k = 0; k < fem::num_vertices(geom[c]); ++k) {
        const auto p = std::size_t(conn[std::size_t(b + k)]);
        if (vertex_of[p] >= 0) continue;
        const std::array<double, 3> x{xyz[3 * p], xyz[3 * p + 1], xyz[3 * p + 2]};
        const auto [it, fresh] = at.emplace(x, index_t(point_of.size()));
        if (fresh) point_of.push_back(index_t(p));
        vertex_of[p] = it->second;
      }
    }
    for (VtuField& f : found_fields) {
      if (!f.on_points) continue;
      std::vector<double> kept;
      kept.reserve(point_of.size() * std::size_t(f.components));
      for (index_t p : point_of)
        for (int c = 0; c < f.components; ++c) kept.push_back(f.values[std::size_t(p) * std::size_t(f.components) + std::size_t(c)]);
      f.values = std::move(kept);
    }
  }
  const index_t nv = lagrange ? index_t(point_of.size()) : np;

  fem::Mesh mesh(sdim);
  mesh.reserve(nv, nc);
  for (index_t v = 0; v < nv; ++v) {
    const index_t p = lagrange ? point_of[std::size_t(v)] : v;
    mesh.add_vertex(std::span<const double>(xyz.data() + p * 3, std::size_t(sdim)));
  }
  std::vector<index_t> corners;
  for (std::size_t c = 0; c < geom.size(); ++c) {
    const std::int64_t b = c ? offsets[c - 1] : 0;
    corners.clear();
    for (int k = 0; k < fem::num_vertices(geom[c]); ++k) corners.push_back(vertex_of[std::size_t(conn[std::size_t(b + k)])]);
    mesh.add_element(geom[c], corners, attributes[c]);
  }
  mesh.validate(file_);
  if (fields) *fields = std::move(found_fields);
  return mesh;
}

}  // namespace

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
