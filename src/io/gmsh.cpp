// Reader of Gmsh MSH 2.2 and 4.1 files (ASCII and binary); see tessera/io/gmsh.hpp.
#include "tessera/io/gmsh.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>

#include "../core/repeats.hpp"
#include "high_order.hpp"
#include "tessera/fem/reference_element.hpp"
#include "text_reader.hpp"

namespace tessera::io {

using detail::printable;
using detail::TextReader;
using fem::Geometry;

namespace {

constexpr long long kMaxTag = (1LL << 62);  // node and element tags: 0 .. 2^62
constexpr long long kIntMin = INT_MIN, kIntMax = INT_MAX;

/// What tessera knows about a Gmsh element type.
struct ElementType {
  int type = 0;         // Gmsh type number
  int dim = 0;          // 0 (point) .. 3
  int geometry = -1;    // fem::Geometry as int, -1 for a point
  int corners = 0;      // vertices kept
  int nodes = 0;        // nodes stored in the file
  const char* name = "";
};

// Gmsh element types (Gmsh reference manual, "MSH file format"): the first-order ones and
// their higher-order (Lagrange and serendipity) versions, whose first nodes are the corners
// in first-order order.
constexpr int S = int(Geometry::Segment), T = int(Geometry::Triangle), Q = int(Geometry::Quadrilateral),
              Te = int(Geometry::Tetrahedron), H = int(Geometry::Hexahedron);
constexpr ElementType kTypes[] = {
    {15, 0, -1, 1, 1, "1-node point"},
    {1, 1, S, 2, 2, "2-node line"},
    {8, 1, S, 2, 3, "3-node second-order line"},
    {26, 1, S, 2, 4, "4-node third-order line"},
    {27, 1, S, 2, 5, "5-node fourth-order line"},
    {28, 1, S, 2, 6, "6-node fifth-order line"},
    {2, 2, T, 3, 3, "3-node triangle"},
    {9, 2, T, 3, 6, "6-node second-order triangle"},
    {20, 2, T, 3, 9, "9-node third-order incomplete triangle"},
    {21, 2, T, 3, 10, "10-node third-order triangle"},
    {22, 2, T, 3, 12, "12-node fourth-order incomplete triangle"},
    {23, 2, T, 3, 15, "15-node fourth-order triangle"},
    {24, 2, T, 3, 15, "15-node fifth-order incomplete triangle"},
    {25, 2, T, 3, 21, "21-node fifth-order triangle"},
    {3, 2, Q, 4, 4, "4-node quadrangle"},
    {10, 2, Q, 4, 9, "9-node second-order quadrangle"},
    {16, 2, Q, 4, 8, "8-node second-order quadrangle"},
    {36, 2, Q, 4, 16, "16-node third-order quadrangle"},
    {37, 2, Q, 4, 25, "25-node fourth-order quadrangle"},
    {4, 3, Te, 4, 4, "4-node tetrahedron"},
    {11, 3, Te, 4, 10, "10-node second-order tetrahedron"},
    {29, 3, Te, 4, 20, "20-node third-order tetrahedron"},
    {30, 3, Te, 4, 35, "35-node fourth-order tetrahedron"},
    {31, 3, Te, 4, 56, "56-node fifth-order tetrahedron"},
    {5, 3, H, 8, 8, "8-node hexahedron"},
    {12, 3, H, 8, 27, "27-node second-order hexahedron"},
    {17, 3, H, 8, 20, "20-node second-order hexahedron"},
    {92, 3, H, 8, 64, "64-node third-order hexahedron"},
    {93, 3, H, 8, 125, "125-node fourth-order hexahedron"},
    // orders up to 10 (and the incomplete, serendipity, versions): corners first as well
    {62, 1, S, 2, 7, "7-node sixth-order line"},
    {63, 1, S, 2, 8, "8-node seventh-order line"},
    {64, 1, S, 2, 9, "9-node eighth-order line"},
    {65, 1, S, 2, 10, "10-node ninth-order line"},
    {66, 1, S, 2, 11, "11-node tenth-order line"},
    {42, 2, T, 3, 28, "28-node sixth-order triangle"},
    {43, 2, T, 3, 36, "36-node seventh-order triangle"},
    {44, 2, T, 3, 45, "45-node eighth-order triangle"},
    {45, 2, T, 3, 55, "55-node ninth-order triangle"},
    {46, 2, T, 3, 66, "66-node tenth-order triangle"},
    {52, 2, T, 3, 18, "18-node sixth-order incomplete triangle"},
    {53, 2, T, 3, 21, "21-node seventh-order incomplete triangle"},
    {54, 2, T, 3, 24, "24-node eighth-order incomplete triangle"},
    {55, 2, T, 3, 27, "27-node ninth-order incomplete triangle"},
    {56, 2, T, 3, 30, "30-node tenth-order incomplete triangle"},
    {38, 2, Q, 4, 36, "36-node fifth-order quadrangle"},
    {47, 2, Q, 4, 49, "49-node sixth-order quadrangle"},
    {48, 2, Q, 4, 64, "64-node seventh-order quadrangle"},
    {49, 2, Q, 4, 81, "81-node eighth-order quadrangle"},
    {50, 2, Q, 4, 100, "100-node ninth-order quadrangle"},
    {51, 2, Q, 4, 121, "121-node tenth-order quadrangle"},
    {39, 2, Q, 4, 12, "12-node third-order incomplete quadrangle"},
    {40, 2, Q, 4, 16, "16-node fourth-order incomplete quadrangle"},
    {41, 2, Q, 4, 20, "20-node fifth-order incomplete quadrangle"},
    {57, 2, Q, 4, 24, "24-node sixth-order incomplete quadrangle"},
    {58, 2, Q, 4, 28, "28-node seventh-order incomplete quadrangle"},
    {59, 2, Q, 4, 32, "32-node eighth-order incomplete quadrangle"},
    {60, 2, Q, 4, 36, "36-node ninth-order incomplete quadrangle"},
    {61, 2, Q, 4, 40, "40-node tenth-order incomplete quadrangle"},
    {71, 3, Te, 4, 84, "84-node sixth-order tetrahedron"},
    {72, 3, Te, 4, 120, "120-node seventh-order tetrahedron"},
    {73, 3, Te, 4, 165, "165-node eighth-order tetrahedron"},
    {74, 3, Te, 4, 220, "220-node ninth-order tetrahedron"},
    {75, 3, Te, 4, 286, "286-node tenth-order tetrahedron"},
    {137, 3, Te, 4, 16, "16-node third-order incomplete tetrahedron"},
    {32, 3, Te, 4, 22, "22-node fourth-order incomplete tetrahedron"},
    {33, 3, Te, 4, 28, "28-node fifth-order incomplete tetrahedron"},
    {79, 3, Te, 4, 34, "34-node sixth-order incomplete tetrahedron"},
    {80, 3, Te, 4, 40, "40-node seventh-order incomplete tetrahedron"},
    {81, 3, Te, 4, 46, "46-node eighth-order incomplete tetrahedron"},
    {82, 3, Te, 4, 52, "52-node ninth-order incomplete tetrahedron"},
    {83, 3, Te, 4, 58, "58-node tenth-order incomplete tetrahedron"},
    {94, 3, H, 8, 216, "216-node fifth-order hexahedron"},
    {95, 3, H, 8, 343, "343-node sixth-order hexahedron"},
    {96, 3, H, 8, 512, "512-node seventh-order hexahedron"},
    {97, 3, H, 8, 729, "729-node eighth-order hexahedron"},
    {98, 3, H, 8, 1000, "1000-node ninth-order hexahedron"},
    {99, 3, H, 8, 32, "32-node third-order incomplete hexahedron"},
    {100, 3, H, 8, 44, "44-node fourth-order incomplete hexahedron"},
    {101, 3, H, 8, 56, "56-node fifth-order incomplete hexahedron"},
    {102, 3, H, 8, 68, "68-node sixth-order incomplete hexahedron"},
    {103, 3, H, 8, 80, "80-node seventh-order incomplete hexahedron"},
    {104, 3, H, 8, 92, "92-node eighth-order incomplete hexahedron"},
    {105, 3, H, 8, 104, "104-node ninth-order incomplete hexahedron"},
};

const ElementType* find_type(long long type) {
  for (const ElementType& t : kTypes)
    if (t.type == type) return &t;
  return nullptr;
}

/// Order of the Lagrange geometry of a type tessera reads (1 to 4), 0 for the others: orders
/// 5 to 10 and the incomplete (serendipity) types, whose nodes do not form a Lagrange set.
int geometry_order(const ElementType& t) {
  switch (t.type) {
    case 15: case 1: case 2: case 3: case 4: case 5: return 1;
    case 8: case 9: case 10: case 11: case 12: return 2;
    case 26: case 21: case 36: case 29: case 92: return 3;
    case 27: case 23: case 37: case 30: case 93: return 4;
    default: return 0;
  }
}

/// Why a known type is not read (empty when it is).
std::string unread_type(const ElementType& t) {
  if (geometry_order(t) > 0) return {};
  const std::string_view name = t.name;
  if (name.find("incomplete") != std::string_view::npos || t.type == 16 || t.type == 17)
    return ::tessera::detail::concat("element type ", t.type, " (", t.name, ") is an incomplete (serendipity) element, "
                                     "which tessera does not read: mesh with complete Lagrange elements "
                                     "(Mesh.SecondOrderIncomplete = 0), or first-order ones");
  return ::tessera::detail::concat("element type ", t.type, " (", t.name, ") has a geometry of order higher than tessera "
                                   "reads (", detail::kMaxReadOrder, "): mesh with Mesh.ElementOrder <= ",
                                   detail::kMaxReadOrder);
}

/// Why a Gmsh element type is not read.
std::string unsupported_type(long long type) {
  std::string what;
  switch (type) {
    case 6: what = " (6-node prism)"; break;
    case 7: what = " (5-node pyramid)"; break;
    case 13: what = " (18-node second-order prism)"; break;
    case 14: what = " (14-node second-order pyramid)"; break;
    case 18: what = " (15-node second-order prism)"; break;
    case 19: what = " (13-node second-order pyramid)"; break;
    default: what = ""; break;
  }
  return ::tessera::detail::concat("element type ", type, what,
                        " is not supported: tessera reads points, lines, triangles, quadrangles, tetrahedra and hexahedra "
                        "(Gmsh types 15, 1, 2, 3, 4, 5 and their complete higher-order versions up to order 4); remesh without that element "
                        "type or remove it from the physical groups");
}

/// Node tag -> index of the node in reading order; dense below a limit, hashed above.
class NodeMap {
 public:
  void init(long long declared) { dense_limit_ = 2 * declared + 1024; }
  /// Inserts tag -> index; returns false when the tag is already present.
  bool insert(long long tag, index_t index) {
    if (tag >= 0 && tag < dense_limit_) {
      if (std::size_t(tag) >= dense_.size()) dense_.resize(std::max<std::size_t>(std::size_t(tag) + 1, 2 * dense_.size()), -1);
      if (dense_[std::size_t(tag)] >= 0) return false;
      dense_[std::size_t(tag)] = index;
      return true;
    }
    return sparse_.emplace(tag, index).second;
  }
  /// Index of `tag`, -1 when absent.
  index_t find(long long tag) const {
    if (tag >= 0 && tag < dense_limit_) return std::size_t(tag) < dense_.size() ? dense_[std::size_t(tag)] : -1;
    const auto it = sparse_.find(tag);
    return it == sparse_.end() ? -1 : it->second;
  }

 private:
  long long dense_limit_ = 1024;
  std::vector<index_t> dense_;
  std::unordered_map<long long, index_t> sparse_;
};

/// The state of one file being read.
struct GmshFile {
  explicit GmshFile(std::string_view bytes, const std::string& name) : r(bytes, name) {}
  TextReader r;
  int major = 0;  // 2 or 4
  bool binary = false;
  bool have_nodes = false, have_elements = false;
  bool periodic = false;  // a $Periodic section was skipped

  // nodes in reading order
  std::vector<long long> node_tags;
  std::vector<double> xyz;
  NodeMap node_map;

  // elements in reading order
  std::vector<const ElementType*> el_type;
  std::vector<long long> el_id;  // the element tags
  std::vector<int> el_attr;       // MSH 2.2: the attribute; MSH 4.1: the entity tag
  std::vector<index_t> el_nodes;  // all nodes of each element (corners first), indices into node_tags
  std::vector<std::size_t> el_at;  // where each element starts in the file (line or byte offset)

  // MSH 4.1 entities: (dim, tag) -> first physical tag (0 when none)
  std::map<std::pair<int, int>, int> entity_physical;

  void read();
  void read_format();
  void skip_section(std::string_view section);
  void expect_end(std::string_view section, const char* hint);
  void read_nodes_22();
  void read_parametric_nodes_22();
  void read_elements_22();
  void read_entities_41();
  std::pair<long long, long long> block_header_41(const std::string& item, std::size_t bin_item_bytes,
                                                  std::size_t ascii_item_bytes);
  void read_nodes_41();
  void read_elements_41();
  void add_node(long long tag, const double* x, std::size_t where);
  index_t node_index(long long tag, long long element, std::size_t where);
  const ElementType* element_type(long long type, std::size_t where);
  void node_on_line(std::size_t at, std::size_t eol, long long id, const ElementType* t, int k);
  void line_ends(std::size_t at, std::size_t eol, long long id, const ElementType* t);
  std::vector<double> curved_nodes(int order, const std::vector<char>& keep, int dim, int sdim, bool reverse,
                                   std::span<const long long> element_tags);
  fem::Mesh build(std::vector<std::string>* warnings);

  /// Fails at the last ASCII token or at binary offset `where`.
  template <class... Args>
  [[noreturn]] void fail_at(std::size_t where, Args&&... args) const {
    if (binary)
      r.fail_offset(where, std::forward<Args>(args)...);
    else
      r.fail_line(where, std::forward<Args>(args)...);
  }
};

void GmshFile::read() {
  if (r.at_end()) fail(r.name(), ": the file is empty; expected a Gmsh MSH file starting with $MeshFormat");
  while (!r.at_end()) {
    const std::string_view tok = r.token("a section header");
    if (tok.front() != '$')
      r.fail_token("expected a section header such as $Nodes, found '", printable(tok),
                   "'; the file is not a Gmsh MSH file, or a count before this line is wrong");
    const std::string_view section = tok.substr(1);
    if (major == 0 && section != "MeshFormat")
      r.fail_token("the file does not start with a $MeshFormat section (found '", printable(tok),
                   "'); is it a Gmsh MSH file?");
    if (section == "MeshFormat") {
      if (major != 0) r.fail_token("a second $MeshFormat section");
      read_format();
    } else if (section == "Nodes" || (section == "ParametricNodes" && major == 2)) {
      if (have_nodes) r.fail_token("a second $Nodes or $ParametricNodes section; tessera reads files with one");
      if (section == "ParametricNodes") read_parametric_nodes_22();
      else if (major == 2) read_nodes_22();
      else read_nodes_41();
      have_nodes = true;
    } else if (section == "Elements") {
      if (have_elements) r.fail_token("a second $Elements section; tessera reads files with one");
      if (!have_nodes) r.fail_token("$Elements comes before $Nodes; the nodes must come first");
      if (major == 2) read_elements_22(); else read_elements_41();
      have_elements = true;
    } else if (section == "Entities" && major == 4) {
      if (!entity_physical.empty()) r.fail_token("a second $Entities section");
      read_entities_41();
    } else if (section == "PartitionedEntities") {
      r.fail_token("the mesh is partitioned ($PartitionedEntities); tessera reads unpartitioned meshes: save it "
                   "without partitions (e.g. gmsh -part 0 or Mesh.PartitionOldStyleMsh2 off)");
    } else if (section.substr(0, 3) == "End") {
      r.fail_token("'", printable(tok), "' without its opening section");
    } else {
      periodic = periodic || section == "Periodic";
      skip_section(section);
    }
  }
  if (major == 0) fail(r.name(), ": no $MeshFormat section; is it a Gmsh MSH file?");
  if (!have_nodes) fail(r.name(), ": no $Nodes section; the file is truncated or not a mesh");
  if (!have_elements) fail(r.name(), ": no $Elements section; the file is truncated or not a mesh");
}

void GmshFile::read_format() {
  r.end_line("$MeshFormat");
  const std::string_view version = r.token("the MSH version");
  if (version == "2.2" || version == "2.1" || version == "2")
    major = 2;
  else if (version == "4.1")
    major = 4;
  else
    r.fail_token("MSH version '", printable(version), "' is not supported; tessera reads versions 2.2 and 4.1: "
                 "re-save the mesh with gmsh -format msh22 or -format msh41");
  const long long type = r.integer("the file type (0 ASCII, 1 binary)", 0, 1);
  binary = type == 1;
  if (binary) r.set_binary();
  const long long data_size = r.integer("the data size", 0, 64);
  if (data_size != 8)
    r.fail_token("data size ", data_size, " is not supported; tessera reads files with 8-byte ",
                 major == 2 ? "reals" : "sizes", " (as Gmsh writes on 64-bit machines)");
  if (binary) {
    r.end_line("the $MeshFormat line");
    const std::size_t at = r.offset();
    const auto one = r.binary<std::int32_t>("the byte order marker");
    if (one == 0x01000000)
      r.fail_offset(at, "the binary file has the opposite byte order (big-endian) of this machine; tessera reads "
                        "binary MSH files of its own byte order only: convert it to ASCII with gmsh");
    if (one != 1) r.fail_offset(at, "the binary byte order marker is ", one, " instead of 1; the file is corrupt");
  }
  expect_end("MeshFormat", "the $MeshFormat section holds one line (version, file type, data size)");
}

void GmshFile::skip_section(std::string_view section) {
  const std::string end = "$End" + std::string(section);
  const std::size_t start = r.token_offset();
  const std::size_t at = r.bytes().find(end, r.offset());
  if (at == std::string_view::npos)
    r.fail_line(start, "section $", printable(section), " has no ", printable(end), "; the file is truncated");
  r.seek(at + end.size());
}

void GmshFile::expect_end(std::string_view section, const char* hint) {
  const std::string end = "$End" + std::string(section);
  const std::string_view tok = r.token(end.c_str());
  if (tok != end) r.fail_token("expected ", end, ", found '", printable(tok), "'; ", hint);
}

void GmshFile::add_node(long long tag, const double* x, std::size_t where) {
  for (int c = 0; c < 3; ++c)
    if (!std::isfinite(x[c])) fail_at(where, "node ", tag, " has a non-finite coordinate (", x[c], ")");
  if (!node_map.insert(tag, index_t(node_tags.size()))) fail_at(where, "node tag ", tag, " is defined twice");
  node_tags.push_back(tag);
  xyz.insert(xyz.end(), x, x + 3);
}

index_t GmshFile::node_index(long long tag, long long element, std::size_t where) {
  const index_t i = node_map.find(tag);
  if (i < 0) fail_at(where, "element ", element, " uses node tag ", tag, ", which $Nodes does not define");
  return i;
}

const ElementType* GmshFile::element_type(long long type, std::size_t where) {
  const ElementType* t = find_type(type);
  if (!t) fail_at(where, unsupported_type(type));
  const std::string why = unread_type(*t);
  if (!why.empty()) fail_at(where, why);
  return t;
}

// ASCII files list an element on one line: its tag, (2.2: type and tags,) then its nodes. A
// line that ends before the type's node count, or goes on after it, means that the node list
// does not match the element type; saying so beats reading the next element's numbers as nodes.
void GmshFile::node_on_line(std::size_t at, std::size_t eol, long long id, const ElementType* t, int k) {
  r.skip_space();
  if (r.offset() > eol || r.offset() >= r.bytes().size())
    r.fail_line(at, "element ", id, " of type ", t->type, " (", t->name, ") lists ", k, " node", k == 1 ? "" : "s",
                " on its line, but its type has ", t->nodes, ": the node list does not match the element type");
}

void GmshFile::line_ends(std::size_t at, std::size_t eol, long long id, const ElementType* t) {
  const std::string_view b = r.bytes();
  std::size_t p = r.offset();
  while (p < eol && p < b.size() && (b[p] == ' ' || b[p] == '\t' || b[p] == '\r')) ++p;
  if (p < eol && p < b.size())
    r.fail_line(at, "element ", id, " of type ", t->type, " (", t->name, ") lists more than the ", t->nodes,
                " nodes of its type on its line: the node list does not match the element type");
}

// ---- MSH 2.2 ------------------------------------------------------------------------------

void GmshFile::read_nodes_22() {
  r.end_line("$Nodes");
  const long long n = r.integer("the number of nodes", 0, LLONG_MAX);
  r.check_count(n, binary ? 28 : 8, "the number of nodes");
  node_map.init(n);
  node_tags.reserve(std::size_t(n));
  xyz.reserve(std::size_t(3 * n));
  if (binary) {
    r.end_line("the number of nodes");
    r.check_binary(std::uint64_t(n), 28, "$Nodes");
    for (long long i = 0; i < n; ++i) {
      const std::size_t at = r.offset();
      const long long tag = r.binary<std::int32_t>("a node tag");
      double x[3];
      for (double& c : x) c = r.binary<double>("a node coordinate");
      add_node(tag, x, at);
    }
  } else {
    for (long long i = 0; i < n; ++i) {
      const long long tag = r.integer("a node tag", 0, kMaxTag);
      const std::size_t at = r.token_offset();
      double x[3];
      for (double& c : x) c = r.real("a node coordinate");
      add_node(tag, x, at);
    }
  }
  expect_end("Nodes", "the number of nodes does not match the nodes listed");
}

// $ParametricNodes (gmsh -save_parametric): each node's line adds the dimension and tag of
// its entity and its 0-2 parametric coordinates, which tessera skips
void GmshFile::read_parametric_nodes_22() {
  r.end_line("$ParametricNodes");
  if (binary)
    r.fail_token("binary $ParametricNodes is not supported: save the mesh without -save_parametric, or as ASCII");
  const long long n = r.integer("the number of nodes", 0, LLONG_MAX);
  r.check_count(n, 12, "the number of nodes");
  node_map.init(n);
  node_tags.reserve(std::size_t(n));
  xyz.reserve(std::size_t(3 * n));
  for (long long i = 0; i < n; ++i) {
    const long long tag = r.integer("a node tag", 0, kMaxTag);
    const std::size_t at = r.token_offset();
    double x[3];
    for (double& c : x) c = r.real("a node coordinate");
    const long long dim = r.integer("the dimension of the node's entity", 0, 3);
    (void)r.integer("the node's entity tag", kIntMin, kIntMax);
    for (long long k = 0; k < (dim == 1 || dim == 2 ? dim : 0); ++k) (void)r.real("a parametric coordinate");
    add_node(tag, x, at);
  }
  expect_end("ParametricNodes", "the number of nodes does not match the nodes listed");
}

void GmshFile::read_elements_22() {
  r.end_line("$Elements");
  const long long n = r.integer("the number of elements", 0, LLONG_MAX);
  r.check_count(n, binary ? 16 : 8, "the number of elements");
  el_type.reserve(std::size_t(n));
  el_attr.reserve(std::size_t(n));
  if (binary) {
    r.end_line("the number of elements");
    long long done = 0;
    while (done < n) {
      const std::size_t at = r.offset();
      const long long type = r.binary<std::int32_t>("an element type");
      const long long count = r.binary<std::int32_t>("a number of elements");
      const long long ntags = r.binary<std::int32_t>("a number of tags");
      const ElementType* t = element_type(type, at);
      if (count < 1 || count > n - done)
        r.fail_offset(at + 4, "element block of ", count, " elements: expected 1 to ", n - done,
                      " (the elements left of the declared ", n, "); the file is corrupt");
      if (ntags < 0 || ntags > 1024) r.fail_offset(at + 8, "element block with ", ntags, " tags per element (expected 0 to 1024)");
      r.check_binary(std::uint64_t(count), std::uint64_t(4 * (1 + ntags + t->nodes)), "an element block");
      for (long long e = 0; e < count; ++e) {
        const std::size_t el_start = r.offset();
        const long long id = r.binary<std::int32_t>("an element tag");
        int tags[2] = {0, 0};
        for (long long k = 0; k < ntags; ++k) {
          const int v = r.binary<std::int32_t>("an element tag");
          if (k < 2) tags[k] = v;
        }
        for (int k = 0; k < t->nodes; ++k) {
          const std::size_t where = r.offset();
          const long long tag = r.binary<std::int32_t>("a node tag");
          el_nodes.push_back(node_index(tag, id, where));
        }
        el_type.push_back(t);
        el_id.push_back(id);
        el_at.push_back(el_start);
        el_attr.push_back(tags[0] != 0 ? tags[0] : (tags[1] != 0 ? tags[1] : 1));
      }
      done += count;
    }
  } else {
    for (long long e = 0; e < n; ++e) {
      const long long id = r.integer("an element tag", 0, kMaxTag);
      const std::size_t el_start = r.token_offset(), eol = r.bytes().find('\n', el_start);
      const long long type = r.integer("an element type", 0, kIntMax);
      const ElementType* t = element_type(type, r.token_offset());
      const long long ntags = r.integer("the number of element tags", 0, 1024);
      int tags[2] = {0, 0};
      for (long long k = 0; k < ntags; ++k) {
        const long long v = r.integer("an element tag", kIntMin, kIntMax);
        if (k < 2) tags[k] = int(v);
      }
      for (int k = 0; k < t->nodes; ++k) {
        node_on_line(el_start, eol, id, t, k);
        const long long tag = r.integer("a node tag", 0, kMaxTag);
        el_nodes.push_back(node_index(tag, id, r.token_offset()));
      }
      line_ends(el_start, eol, id, t);
      el_type.push_back(t);
      el_id.push_back(id);
      el_at.push_back(el_start);
      el_attr.push_back(tags[0] != 0 ? tags[0] : (tags[1] != 0 ? tags[1] : 1));
    }
  }
  expect_end("Elements", "the number of elements does not match the elements listed, or an element has the wrong "
                         "number of nodes for its type");
}

// ---- MSH 4.1 ------------------------------------------------------------------------------

void GmshFile::read_entities_41() {
  r.end_line("$Entities");
  long long counts[4];
  if (binary) {
    for (long long& c : counts) {
      const std::size_t at = r.offset();
      const std::uint64_t v = r.binary<std::uint64_t>("a number of entities");
      if (v > r.remaining() / 4) r.fail_offset(at, "number of entities ", v, " does not fit into the rest of the file; the count is wrong or the file is truncated");
      c = (long long)v;
    }
  } else {
    for (long long& c : counts) {
      c = r.integer("a number of entities", 0, LLONG_MAX);
      r.check_count(c, 10, "the number of entities");
    }
  }
  for (int dim = 0; dim < 4; ++dim) {
    for (long long i = 0; i < counts[dim]; ++i) {
      int tag = 0;
      long long nphys = 0;
      int first_phys = 0;
      if (binary) {
        tag = r.binary<std::int32_t>("an entity tag");
        for (int k = 0; k < (dim == 0 ? 3 : 6); ++k) r.binary<double>("an entity coordinate");
        const std::uint64_t np = r.binary<std::uint64_t>("a number of physical tags");
        r.check_binary(np, 4, "the physical tags of an entity");
        for (std::uint64_t k = 0; k < np; ++k) {
          const int p = r.binary<std::int32_t>("a physical tag");
          if (k == 0) first_phys = p;
        }
        nphys = (long long)np;
        if (dim > 0) {
          const std::uint64_t nb = r.binary<std::uint64_t>("a number of bounding entities");
          r.check_binary(nb, 4, "the bounding entities of an entity");
          for (std::uint64_t k = 0; k < nb; ++k) r.binary<std::int32_t>("a bounding entity tag");
        }
      } else {
        tag = int(r.integer("an entity tag", kIntMin, kIntMax));
        for (int k = 0; k < (dim == 0 ? 3 : 6); ++k) r.real("an entity coordinate");
        nphys = r.integer("a number of physical tags", 0, LLONG_MAX);
        r.check_count(nphys, 2, "the number of physical tags");
        for (long long k = 0; k < nphys; ++k) {
          const int p = int(r.integer("a physical tag", kIntMin, kIntMax));
          if (k == 0) first_phys = p;
        }
        if (dim > 0) {
          const long long nb = r.integer("a number of bounding entities", 0, LLONG_MAX);
          r.check_count(nb, 2, "the number of bounding entities");
          for (long long k = 0; k < nb; ++k) r.integer("a bounding entity tag", kIntMin, kIntMax);
        }
      }
      entity_physical[{dim, tag}] = nphys > 0 ? first_phys : 0;
    }
  }
  // An empty $Entities section still marks the section as read.
  entity_physical.emplace(std::pair<int, int>{-1, 0}, 0);
  expect_end("Entities", "the entity counts do not match the entities listed");
}

/// The header of a 4.1 $Nodes or $Elements section: number of blocks, number of items and the
/// tag range (skipped), with the counts checked against the rest of the file before anything
/// is allocated (an item takes at least bin_item_bytes in binary, ascii_item_bytes in ASCII).
std::pair<long long, long long> GmshFile::block_header_41(const std::string& item, std::size_t bin_item_bytes,
                                                          std::size_t ascii_item_bytes) {
  const std::string blocks = "the number of " + item + " blocks", items = "the number of " + item + "s";
  if (binary) {
    const std::size_t at = r.offset();
    const std::uint64_t b = r.binary<std::uint64_t>(blocks.c_str());
    const std::uint64_t nn = r.binary<std::uint64_t>(items.c_str());
    r.binary<std::uint64_t>(("the smallest " + item + " tag").c_str());
    r.binary<std::uint64_t>(("the largest " + item + " tag").c_str());
    if (b > r.remaining() / 20) r.fail_offset(at, "number of ", item, " blocks ", b, " does not fit into the rest of the file; the count is wrong or the file is truncated");
    if (nn > r.remaining() / bin_item_bytes) r.fail_offset(at + 8, "number of ", item, "s ", nn, " does not fit into the rest of the file; the count is wrong or the file is truncated");
    return {(long long)b, (long long)nn};
  }
  const long long nblocks = r.integer(blocks.c_str(), 0, LLONG_MAX);
  r.check_count(nblocks, 8, blocks.c_str());
  const long long n = r.integer(items.c_str(), 0, LLONG_MAX);
  r.check_count(n, ascii_item_bytes, items.c_str());
  r.integer(("the smallest " + item + " tag").c_str(), 0, LLONG_MAX);
  r.integer(("the largest " + item + " tag").c_str(), 0, LLONG_MAX);
  return {nblocks, n};
}

void GmshFile::read_nodes_41() {
  r.end_line("$Nodes");
  const auto [nblocks, n] = block_header_41("node", 32, 8);
  node_map.init(n);
  node_tags.reserve(std::size_t(n));
  xyz.reserve(std::size_t(3 * n));
  long long done = 0;
  std::vector<long long> tags;
  for (long long b = 0; b < nblocks; ++b) {
    long long edim = 0, param = 0, count = 0;
    const std::size_t block_at = binary ? r.offset() : 0;
    if (binary) {
      edim = r.binary<std::int32_t>("an entity dimension");
      r.binary<std::int32_t>("an entity tag");
      param = r.binary<std::int32_t>("the parametric flag");
      const std::uint64_t c = r.binary<std::uint64_t>("the number of nodes in a block");
      if (edim < 0 || edim > 3) r.fail_offset(block_at, "entity dimension ", edim, " is not 0 to 3");
      if (param != 0 && param != 1) r.fail_offset(block_at + 8, "parametric flag ", param, " is not 0 or 1");
      if (c > std::uint64_t(n - done))
        r.fail_offset(block_at + 12, "node block of ", c, " nodes exceeds the ", n - done,
                      " nodes left of the declared ", n);
      count = (long long)c;
    } else {
      edim = r.integer("an entity dimension", 0, 3);
      r.integer("an entity tag", kIntMin, kIntMax);
      param = r.integer("the parametric flag", 0, 1);
      count = r.integer("the number of nodes in a block", 0, n - done);
    }
    const int ncoord = 3 + (param ? int(edim) : 0);
    tags.clear();
    if (binary) {
      r.check_binary(std::uint64_t(count), std::uint64_t(8 + 8 * ncoord), "a node block");
      tags.resize(std::size_t(count));
      for (auto& t : tags) {
        const std::size_t at = r.offset();
        const std::uint64_t v = r.binary<std::uint64_t>("a node tag");
        if (v > std::uint64_t(kMaxTag)) r.fail_offset(at, "node tag ", v, " is out of range (at most 2^62)");
        t = (long long)v;
      }
      for (long long i = 0; i < count; ++i) {
        const std::size_t at = r.offset();
        double x[3];
        for (int c = 0; c < ncoord; ++c) {
          const double v = r.binary<double>("a node coordinate");
          if (c < 3) x[c] = v;
        }
        add_node(tags[std::size_t(i)], x, at);
      }
    } else {
      tags.resize(std::size_t(count));
      for (auto& t : tags) t = r.integer("a node tag", 0, kMaxTag);
      for (long long i = 0; i < count; ++i) {
        double x[3];
        std::size_t at = 0;
        for (int c = 0; c < ncoord; ++c) {
          const double v = r.real("a node coordinate");
          if (c == 0) at = r.token_offset();
          if (c < 3) x[c] = v;
        }
        add_node(tags[std::size_t(i)], x, at);
      }
    }
    done += count;
  }
  if (done != n) fail_at(r.offset(), "the node blocks hold ", done, " nodes, but the $Nodes header declares ", n);
  expect_end("Nodes", "the node counts do not match the nodes listed");
}

void GmshFile::read_elements_41() {
  r.end_line("$Elements");
  const auto [nblocks, n] = block_header_41("element", 16, 4);
  el_type.reserve(std::size_t(n));
  el_attr.reserve(std::size_t(n));
  long long done = 0;
  for (long long b = 0; b < nblocks; ++b) {
    long long edim = 0, etag = 0, type = 0, count = 0;
    const ElementType* t = nullptr;
    if (binary) {
      const std::size_t at = r.offset();
      edim = r.binary<std::int32_t>("an entity dimension");
      etag = r.binary<std::int32_t>("an entity tag");
      type = r.binary<std::int32_t>("an element type");
      const std::uint64_t c = r.binary<std::uint64_t>("the number of elements in a block");
      t = element_type(type, at + 8);
      if (edim != t->dim)
        r.fail_offset(at, "element block of type ", type, " (", t->name, ") on an entity of dimension ", edim);
      if (c > std::uint64_t(n - done))
        r.fail_offset(at + 12, "element block of ", c, " elements exceeds the ", n - done,
                      " elements left of the declared ", n);
      count = (long long)c;
      r.check_binary(std::uint64_t(count), std::uint64_t(8 * (1 + t->nodes)), "an element block");
    } else {
      edim = r.integer("an entity dimension", 0, 3);
      etag = r.integer("an entity tag", kIntMin, kIntMax);
      type = r.integer("an element type", 0, kIntMax);
      t = element_type(type, r.token_offset());
      if (edim != t->dim) r.fail_token("element block of type ", type, " (", t->name, ") on an entity of dimension ", edim);
      count = r.integer("the number of elements in a block", 0, n - done);
    }
    for (long long e = 0; e < count; ++e) {
      long long id = 0;
      std::size_t el_start = 0, eol = 0;
      if (binary) {
        el_start = r.offset();
        const std::uint64_t v = r.binary<std::uint64_t>("an element tag");
        id = v > std::uint64_t(kMaxTag) ? -1 : (long long)v;
      } else {
        id = r.integer("an element tag", 0, kMaxTag);
        el_start = r.token_offset();
        eol = r.bytes().find('\n', el_start);
      }
      for (int k = 0; k < t->nodes; ++k) {
        long long tag = 0;
        std::size_t where = 0;
        if (binary) {
          where = r.offset();
          const std::uint64_t v = r.binary<std::uint64_t>("a node tag");
          tag = v > std::uint64_t(kMaxTag) ? -1 : (long long)v;
        } else {
          node_on_line(el_start, eol, id, t, k);
          tag = r.integer("a node tag", 0, kMaxTag);
          where = r.token_offset();
        }
        el_nodes.push_back(node_index(tag, id, where));
      }
      if (!binary) line_ends(el_start, eol, id, t);
      el_type.push_back(t);
      el_id.push_back(id);
      el_at.push_back(el_start);
      el_attr.push_back(int(etag));
    }
    done += count;
  }
  if (done != n) fail_at(r.offset(), "the element blocks hold ", done, " elements, but the $Elements header declares ", n);
  expect_end("Elements", "the element counts do not match the elements listed, or an element has the wrong number "
                         "of nodes for its type");
}

// ---- the mesh -----------------------------------------------------------------------------

// Nodes of order `order` of the kept mesh elements (keep[e]), for Mesh::set_nodes: each
// element's file nodes, in Gmsh's ordering, interpolated at the H1Basis nodes; checked for
// tangled elements (det J <= 0) when the mesh is not embedded in a higher dimension.
std::vector<double> GmshFile::curved_nodes(int order, const std::vector<char>& keep, int dim, int sdim, bool reverse,
                                           std::span<const long long> element_tags) {
  struct PerType {
    detail::NodeTransfer transfer;
    std::vector<int> swap;  // reversed 2-D elements: node permutation
  };
  std::map<int, PerType> per_type;
  std::map<int, detail::TangleCheck> checks;  // by geometry
  std::vector<double> nodes, values, out;
  std::size_t k = 0, kept_index = 0;
  for (std::size_t e = 0; e < el_type.size(); k += std::size_t(el_type[e]->nodes), ++e) {
    if (!keep[e]) continue;
    const ElementType* t = el_type[e];
    const Geometry g = Geometry(t->geometry);
    auto it = per_type.find(t->type);
    if (it == per_type.end()) {
      const int from = geometry_order(*t);
      PerType pt;
      pt.transfer = detail::NodeTransfer(g, from, detail::gmsh_node_points(g, from), order);
      if (reverse) pt.swap = detail::swap_xy_permutation(g, order);
      it = per_type.emplace(t->type, std::move(pt)).first;
    }
    values.resize(std::size_t(t->nodes * sdim));
    for (int i = 0; i < t->nodes; ++i)
      for (int c = 0; c < sdim; ++c)
        values[std::size_t(i * sdim + c)] = xyz[std::size_t(3 * el_nodes[k + std::size_t(i)] + c)];
    out.resize(std::size_t(it->second.transfer.num_to() * sdim));
    it->second.transfer.apply(values.data(), sdim, out.data());
    const std::size_t first = nodes.size();
    if (reverse) {
      for (int n : it->second.swap) nodes.insert(nodes.end(), out.begin() + n * sdim, out.begin() + (n + 1) * sdim);
    } else {
      nodes.insert(nodes.end(), out.begin(), out.end());
    }
    if (sdim == dim) {
      auto c = checks.find(t->geometry);
      if (c == checks.end()) c = checks.emplace(t->geometry, detail::TangleCheck(g, order)).first;
      const std::string why = c->second.check(nodes.data() + first);
      if (!why.empty())
        fail_at(el_at[e], "element ", element_tags[kept_index], " (", t->name, ") is tangled: ", why,
                " (its curved edges or faces fold over); fix the mesh, e.g. with gmsh -optimize_ho");
    }
    ++kept_index;
  }
  return nodes;
}

fem::Mesh GmshFile::build(std::vector<std::string>* warnings) {
  const std::string& name = r.name();
  int dim = -1;
  for (const ElementType* t : el_type) dim = std::max(dim, t->dim);
  if (dim < 0) fail(name, ": the file has no elements; tessera needs elements of dimension 1 to 3");
  if (dim == 0) fail(name, ": the file has only point elements; tessera needs elements of dimension 1 to 3");

  // MSH 4.1: attributes from the entities' physical tags.
  if (major == 4) {
    for (std::size_t e = 0; e < el_type.size(); ++e) {
      const auto it = entity_physical.find({el_type[e]->dim, el_attr[e]});
      if (it != entity_physical.end() && it->second != 0) el_attr[e] = it->second;
    }
  }

  // Nodes of kept elements, numbered in increasing tag order.
  const int bdim = dim - 1;
  auto kept = [&](const ElementType* t) { return t->dim == dim || (bdim >= 1 && t->dim == bdim); };
  std::vector<char> used(node_tags.size(), 0);
  index_t nel = 0, nbd = 0;
  {
    std::size_t k = 0;
    for (const ElementType* t : el_type) {
      if (kept(t)) {
        for (int c = 0; c < t->corners; ++c) used[std::size_t(el_nodes[k + std::size_t(c)])] = 1;
        (t->dim == dim ? nel : nbd)++;
      }
      k += std::size_t(t->nodes);
    }
  }
  std::vector<index_t> order;
  for (std::size_t i = 0; i < used.size(); ++i)
    if (used[i]) order.push_back(index_t(i));
  std::sort(order.begin(), order.end(),
            [&](index_t a, index_t b) { return node_tags[std::size_t(a)] < node_tags[std::size_t(b)]; });
  std::vector<index_t> new_index(node_tags.size(), -1);
  for (std::size_t i = 0; i < order.size(); ++i) new_index[std::size_t(order[i])] = index_t(i);

  int sdim = dim;
  for (index_t v : order)
    for (int c = dim; c < 3; ++c)
      if (xyz[std::size_t(3 * v + c)] != 0.0) sdim = 3;

  // Element starts in el_nodes; an element repeated with the same type and nodes is read once:
  // MSH 2.2 lists an element once per physical group it belongs to.
  std::vector<std::size_t> start(el_type.size());
  {
    std::size_t k = 0;
    for (std::size_t e = 0; e < el_type.size(); ++e) start[e] = k, k += std::size_t(el_type[e]->nodes);
  }
  std::vector<char> repeat(el_type.size(), 0);
  long long repeats = 0;
  {  // a hash of (type, nodes) per kept element
    std::vector<std::pair<std::uint64_t, std::size_t>> h;
    h.reserve(el_type.size());
    for (std::size_t e = 0; e < el_type.size(); ++e) {
      if (!kept(el_type[e])) continue;
      std::uint64_t x = ::tessera::detail::hash_mix(::tessera::detail::kHashSeed, std::uint64_t(el_type[e]->type));
      for (int c = 0; c < el_type[e]->corners; ++c)
        x = ::tessera::detail::hash_mix(x, std::uint64_t(el_nodes[start[e] + std::size_t(c)]));
      h.emplace_back(x, e);
    }
    const auto same = [&](std::size_t a, std::size_t b) {
      return el_type[a] == el_type[b] &&
             std::equal(el_nodes.begin() + std::ptrdiff_t(start[a]),
                        el_nodes.begin() + std::ptrdiff_t(start[a] + std::size_t(el_type[a]->corners)),
                        el_nodes.begin() + std::ptrdiff_t(start[b]));
    };
    ::tessera::detail::for_each_repeat(std::move(h), same, [&](std::size_t later, std::size_t) {
      repeat[later] = 1;
      ++repeats;
      return true;
    });
  }
  // 2-D meshes in the x-y plane whose elements all turn clockwise (a clockwise curve loop, or a
  // surface whose normal points along -z) are reversed; a mix of both turns stays for
  // validate() to refuse (overlapping elements)
  bool reverse = false;
  if (dim == 2 && sdim == 2) {
    long long cw = 0, all = 0;
    for (std::size_t e = 0; e < el_type.size(); ++e) {
      const ElementType* t = el_type[e];
      if (t->dim != 2 || repeat[e]) continue;
      double area = 0;  // twice the signed area of the corner polygon
      for (int c = 0; c < t->corners; ++c) {
        const index_t a = el_nodes[start[e] + std::size_t(c)], b = el_nodes[start[e] + std::size_t((c + 1) % t->corners)];
        area += xyz[std::size_t(3 * a)] * xyz[std::size_t(3 * b + 1)] - xyz[std::size_t(3 * b)] * xyz[std::size_t(3 * a + 1)];
      }
      ++all;
      if (area < 0) ++cw;
    }
    reverse = all > 0 && cw == all;
  }

  fem::Mesh mesh(sdim);
  mesh.reserve(index_t(order.size()), nel, nbd);
  for (index_t v : order) mesh.add_vertex(std::span<const double>(xyz.data() + 3 * v, std::size_t(sdim)));
  index_t verts[8];
  std::vector<long long> element_tags, vertex_tags;  // for validate's messages
  element_tags.reserve(std::size_t(nel));
  vertex_tags.reserve(order.size());
  for (index_t v : order) vertex_tags.push_back(node_tags[std::size_t(v)]);
  for (std::size_t e = 0; e < el_type.size(); ++e) {
    const ElementType* t = el_type[e];
    if (kept(t) && !repeat[e] && t->dim == dim) element_tags.push_back(el_id[e]);
    if (kept(t) && !repeat[e]) {
      for (int c = 0; c < t->corners; ++c) {
        // reversed: corner 0 stays, the others in the opposite turn
        const int from = reverse && t->dim == 2 && c > 0 ? t->corners - c : c;
        verts[c] = new_index[std::size_t(el_nodes[start[e] + std::size_t(from)])];
      }
      const std::span<const index_t> vs(verts, std::size_t(t->corners));
      if (t->dim == dim)
        mesh.add_element(Geometry(t->geometry), vs, el_attr[e]);
      else
        mesh.add_boundary(Geometry(t->geometry), vs, el_attr[e]);
    }
  }
  if (repeats > 0)
    detail::warn(warnings, ::tessera::detail::concat(name, ": ", repeats, " elements repeat an earlier element's type "
                                          "and nodes (MSH 2.2 lists an element once per physical group): each was "
                                          "read once, with the attribute of its first listing"));
  if (reverse)
    detail::warn(warnings, ::tessera::detail::concat(name, ": every element turns clockwise in the x-y plane (a "
                                          "clockwise curve loop, or a surface normal along -z): their vertex order "
                                          "was reversed to counter-clockwise"));

  if (periodic)
    detail::warn(warnings, ::tessera::detail::concat(name, ": the $Periodic section (node pairs of periodic boundaries) "
                                          "was ignored: tessera reads the mesh as non-periodic, with those "
                                          "boundaries as boundaries"));
  // Curved geometry: the highest order of the mesh elements (lower ones are raised to it).
  int geo_order = 1;
  std::vector<char> keep(el_type.size(), 0);
  for (std::size_t e = 0; e < el_type.size(); ++e)
    if (el_type[e]->dim == dim && !repeat[e]) keep[e] = 1, geo_order = std::max(geo_order, geometry_order(*el_type[e]));
  if (geo_order > 1) mesh.set_nodes(geo_order, curved_nodes(geo_order, keep, dim, sdim, reverse, element_tags));
  detail::validate_mesh(mesh, name, element_tags, vertex_tags);
  return mesh;
}

}  // namespace

fem::Mesh read_gmsh_bytes(std::string_view bytes, const std::string& name, std::vector<std::string>* warnings) {
  GmshFile f(bytes, name);
  f.read();
  return f.build(warnings);
}

fem::Mesh read_gmsh(const std::string& path, std::vector<std::string>* warnings) {
  const std::string bytes = detail::read_file(path, "read_gmsh");
  return read_gmsh_bytes(bytes, path, warnings);
}

}  // namespace tessera::io
