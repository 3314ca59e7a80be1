// Reader of MFEM's mesh format v1.0 (v1.1 to v1.3 files holding its sections, and MFEM's
// INLINE Cartesian meshes); see tessera/io/mfem.hpp.
#include "tessera/io/mfem.hpp"

#include <array>
#include <charconv>
#include <climits>
#include <cstdint>
#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "high_order.hpp"
#include "tessera/fem/quadrature.hpp"
#include "tessera/fem/reference_element.hpp"
#include "text_reader.hpp"

namespace tessera::io {

using detail::printable;
using detail::TextReader;
using fem::Geometry;

namespace {

/// MFEM geometry code -> tessera geometry (-1: point, -2: unsupported).
int mfem_geometry(long long code) {
  switch (code) {
    case 0: return -1;
    case 1: return int(Geometry::Segment);
    case 2: return int(Geometry::Triangle);
    case 3: return int(Geometry::Quadrilateral);
    case 4: return int(Geometry::Tetrahedron);
    case 5: return int(Geometry::Hexahedron);
    default: return -2;
  }
}

/// The space of a `nodes` section: its order and its nodes' 1-D points on [0, 1] (p + 1 of
/// them, 0 and 1 included), from which MFEM places the nodes of every geometry.
struct NodeSpace {
  int order = 0;
  std::vector<double> cp;
};

/// The H1 collections tessera reads: `H1_<d>D_P<p>` (Gauss-Lobatto points), `H1@G_...` (the
/// same), `H1@U_...` (equispaced) and MFEM's older names Linear, Quadratic and Cubic
/// (equispaced). Returns the reason when `collection` is not one of them.
std::string node_space(std::string_view collection, int dim, NodeSpace& space) {
  int p = 0;
  bool equispaced = true;
  if (collection == "Linear" || collection == "Quadratic" || collection == "Cubic") {
    p = collection == "Linear" ? 1 : collection == "Quadratic" ? 2 : 3;
  } else if (collection.substr(0, 5) == "H1Pos") {
    return "is a positive (Bernstein) basis, whose coefficients are not points of the mesh; tessera reads nodal H1 "
           "collections (H1_..., H1@U_..., Linear, Quadratic, Cubic)";
  } else if (collection.substr(0, 3) == "H1_" || collection.substr(0, 3) == "H1@") {
    std::string_view rest = collection.substr(3);
    equispaced = false;
    if (collection[2] == '@') {
      if (rest.size() < 2 || rest[1] != '_') return "is not an H1 collection name tessera knows";
      if (rest[0] == 'U') equispaced = true;
      else if (rest[0] != 'G')
        return ::tessera::detail::concat("has the node family '", rest[0], "'; tessera reads Gauss-Lobatto (H1_... or "
                                         "H1@G_...) and equispaced (H1@U_...) nodes");
      rest = rest.substr(2);
    }
    int d = 0;
    const char* end = rest.data() + rest.size();
    auto [q, ec] = std::from_chars(rest.data(), end, d);
    if (ec != std::errc() || end - q < 3 || std::string_view(q, 3) != "D_P")
      return "is not an H1 collection name tessera knows (expected H1_<dim>D_P<order>)";
    auto [q2, ec2] = std::from_chars(q + 3, end, p);
    if (ec2 != std::errc() || q2 != end || p < 1)
      return "is not an H1 collection name tessera knows (expected H1_<dim>D_P<order>)";
    if (d != dim) return ::tessera::detail::concat("is a ", d, "-D collection, but the mesh is ", dim, "-D");
  } else {
    return "is not an H1 collection; tessera reads nodal H1 collections (H1_..., H1@U_..., Linear, Quadratic, Cubic): "
           "save the mesh with an H1 nodal space or as a straight mesh";
  }
  if (p > detail::kMaxReadOrder)
    return ::tessera::detail::concat("has order ", p, ", higher than the geometry orders tessera reads (1 to ",
                                     detail::kMaxReadOrder, ")");
  space.order = p;
  if (equispaced || p == 1) {
    for (int i = 0; i <= p; ++i) space.cp.push_back(double(i) / p);
  } else {
    space.cp = fem::gauss_lobatto_legendre(p + 1).nodes;
  }
  return {};
}

/// `s` without leading and trailing blanks.
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

/// Elements or boundary faces of the file, in file order.
struct Cells {
  std::vector<int> geometry, attribute;
  std::vector<index_t> vertices;  // flat, num_vertices(geometry) per cell
  std::vector<std::size_t> at;     // where each cell's line starts
  long long max_id = -1;           // largest vertex id used ...
  std::size_t max_id_at = 0;       // ... and where
  bool present = false;
};

struct MfemFile {
  MfemFile(std::string_view bytes, const std::string& name) : r(bytes, name, true) {}
  TextReader r;
  int dim = 0, sdim = 0;
  long long nv = -1;
  Cells elements, boundary;
  std::vector<double> coords;  // nv * sdim
  std::string collection;      // of the nodes, when the vertices came from there
  std::size_t collection_at = 0, nodes_at = 0;
  NodeSpace space;             // of the nodes
  std::vector<double> node_values;  // all nodes, as in the file
  int ordering = 0;            // 0 by nodes, 1 by vector dimension
  bool inline_mesh = false;    // "MFEM INLINE mesh v1.0": key = value lines, no sections
  bool attribute_sets = false, bdr_attribute_sets = false;  // sections seen

  void read_header();
  void read_cells(Cells& cells, bool is_boundary);
  void skip_attribute_sets(bool is_boundary);
  std::string set_name(const char* section, long long i, long long n, std::size_t count_at);
  void read_vertices();
  void read_nodes();
  std::vector<double> curved_nodes(std::vector<char>& flip);
  fem::Mesh build(std::vector<std::string>* warnings);
  fem::Mesh read_inline(std::vector<std::string>* warnings);
};

void MfemFile::read_header() {
  if (r.at_end()) fail(r.name(), ": the file is empty; expected an MFEM mesh starting with 'MFEM mesh v1.0'");
  const std::size_t at = r.offset();
  const std::string_view header = r.rest_of_line();
  if (header == "MFEM mesh v1.0" || header == "MFEM mesh v1.1" || header == "MFEM mesh v1.2" ||
      header == "MFEM mesh v1.3")
    return;
  if (header == "MFEM INLINE mesh v1.0") {
    inline_mesh = true;
    return;
  }
  if (header.substr(0, 16) == "MFEM INLINE mesh")
    r.fail_line(at, "unsupported MFEM inline mesh version '", printable(header), "'; tessera reads 'MFEM INLINE mesh "
                "v1.0'");
  if (header.substr(0, 12) == "MFEM NC mesh")
    r.fail_line(at, "'", printable(header), "' is MFEM's nonconforming format, which tessera does not read; save "
                "the mesh as a conforming 'MFEM mesh v1.0'");
  if (header.substr(0, 15) == "MFEM NURBS mesh")
    r.fail_line(at, "'", printable(header), "' is MFEM's NURBS format, which tessera does not read");
  if (header.substr(0, 10) == "MFEM mesh ")
    r.fail_line(at, "unsupported MFEM mesh version '", printable(header), "'; tessera reads 'MFEM mesh v1.0' (and v1.1 "
                "to v1.3 files holding only the v1.0 sections)");
  r.fail_line(at, "expected the header 'MFEM mesh v1.0', found '", printable(header), "'; is it an MFEM mesh file?");
}

void MfemFile::read_cells(Cells& cells, bool is_boundary) {
  const char* what = is_boundary ? "boundary" : "elements";
  if (dim == 0) r.fail_token("section '", what, "' comes before 'dimension'");
  if (cells.present) r.fail_token("a second '", what, "' section");
  cells.present = true;
  const long long n = r.integer(is_boundary ? "the number of boundary faces" : "the number of elements", 0, LLONG_MAX);
  r.check_count(n, 6, is_boundary ? "the number of boundary faces" : "the number of elements");
  cells.geometry.reserve(std::size_t(n));
  cells.attribute.reserve(std::size_t(n));
  const int want_dim = is_boundary ? dim - 1 : dim;
  for (long long i = 0; i < n; ++i) {
    const int attr = int(r.integer("an attribute", 1, INT_MAX));
    const std::size_t at = r.token_offset();
    const long long code = r.integer("a geometry code", 0, INT_MAX);
    const int g = mfem_geometry(code);
    if (g == -2)
      r.fail_token("geometry code ", code, code == 6 ? " (prism)" : code == 7 ? " (pyramid)" : "",
                   " is not supported; tessera reads 1 segment, 2 triangle, 3 square, 4 tetrahedron, 5 cube");
    const int gdim = g == -1 ? 0 : fem::dim(Geometry(g));
    if (gdim != want_dim)
      r.fail_token(is_boundary ? "boundary face" : "element", " ", i, " has geometry code ", code, " of dimension ",
                   gdim, ", but a ", dim, "-D mesh needs ", is_boundary ? "boundary faces" : "elements",
                   " of dimension ", want_dim);
    const int nvert = g == -1 ? 1 : fem::num_vertices(Geometry(g));
    for (int k = 0; k < nvert; ++k) {
      const long long id = r.integer("a vertex id", 0, LLONG_MAX);
      if (g == -1) continue;  // points on the boundary of a 1-D mesh: not kept
      if (id > cells.max_id) cells.max_id = id, cells.max_id_at = r.token_offset();
      cells.vertices.push_back(index_t(id));
    }
    if (g == -1) continue;
    cells.geometry.push_back(g);
    cells.attribute.push_back(attr);
    cells.at.push_back(at);
  }
}

// `attribute_sets` and `bdr_attribute_sets` (MFEM mesh v1.3) name groups of element and
// boundary attributes: a count of sets, then per set a name (in double quotes, or one word),
// the number of attributes in the set and the attributes. tessera has no use for named sets,
// so the sections are only checked to be well formed and skipped. Files put a set's name,
// count and attributes on one line or on lines of their own, so after the name the numbers
// are read as tokens wherever the lines break.
void MfemFile::skip_attribute_sets(bool is_boundary) {
  const char* section = is_boundary ? "bdr_attribute_sets" : "attribute_sets";
  bool& seen = is_boundary ? bdr_attribute_sets : attribute_sets;
  if (seen) r.fail_token("a second '", section, "' section");
  seen = true;
  const long long n = r.integer("the number of attribute sets", 0, LLONG_MAX);
  const std::size_t count_at = r.token_offset();
  r.check_count(n, 3, "the number of attribute sets");  // a set: at least a name, a blank, a count
  for (long long i = 0; i < n; ++i) {
    const std::string name = set_name(section, i, n, count_at);
    const std::string of_set = "of the set '" + printable(name) + "' in '" + section + "'";
    const std::string count_what = "the number of attributes " + of_set;
    const long long k = r.integer(count_what.c_str(), 0, INT_MAX);
    r.check_count(k, 2, count_what.c_str());
    const std::string attr_what = "an attribute " + of_set;
    for (long long j = 0; j < k; ++j) r.integer(attr_what.c_str(), 1, INT_MAX);
  }
}

// Name of set i (of n) of an attribute-set section; `count_at` is where n was read.
std::string MfemFile::set_name(const char* section, long long i, long long n, std::size_t count_at) {
  r.skip_space();
  const std::size_t at = r.offset();
  const std::string_view bytes = r.bytes();
  if (at >= bytes.size())
    r.fail_line(at, "the file ends where the name of set ", i + 1, " of ", n, " in '", section,
                "' was expected; the file is truncated or the count of sets (line ", r.line_of(count_at),
                ") is wrong");
  if (bytes[at] == '"') {
    // A quoted name may hold blanks (and '#'); it must end on its line.
    const std::size_t close = bytes.find_first_of("\"\n", at + 1);
    if (close == std::string_view::npos || bytes[close] != '"')
      r.fail_line(at, "the name of set ", i + 1, " of ", n, " in '", section,
                  "' opens a double quote that is not closed on its line");
    r.seek(close + 1);
    return std::string(bytes.substr(at + 1, close - at - 1));
  }
  // Unquoted: one word. MFEM writes names quoted, so a section keyword or a number here means
  // that a count before it is wrong; saying so beats skipping into the next section.
  const std::string_view t = r.token("the name of a set");
  const bool keyword = t == "dimension" || t == "elements" || t == "boundary" || t == "vertices" ||
                       t == "nodes" || t == "attribute_sets" || t == "bdr_attribute_sets" || t == "mfem_mesh_end";
  long long number = 0;
  const bool numeric = std::from_chars(t.data(), t.data() + t.size(), number).ptr == t.data() + t.size();
  if (keyword || numeric)
    r.fail_token("expected the name of set ", i + 1, " of ", n, " in '", section, "', found ",
                 keyword ? "the section '" : "the number '", printable(t), "'; the count of sets (line ",
                 r.line_of(count_at), ") or the number of attributes of the set before may be wrong");
  return std::string(t);
}

void MfemFile::read_vertices() {
  if (dim == 0) r.fail_token("section 'vertices' comes before 'dimension'");
  if (nv >= 0) r.fail_token("a second 'vertices' section");
  nv = r.integer("the number of vertices", 0, LLONG_MAX);
  r.check_count(nv, 2, "the number of vertices");
  if (r.peek_token() == "nodes") {
    r.token("nodes");
    read_nodes();
    return;
  }
  sdim = int(r.integer("the space dimension", 1, 3));
  if (sdim < dim) r.fail_token("space dimension ", sdim, " is smaller than the mesh dimension ", dim);
  r.check_count(nv, std::size_t(2 * sdim), "the number of vertices");
  coords.reserve(std::size_t(nv * sdim));
  for (long long i = 0; i < nv * sdim; ++i) coords.push_back(r.real("a vertex coordinate"));
}

void MfemFile::read_nodes() {
  const std::size_t nodes_at = r.token_offset();
  auto expect = [&](const char* word) {
    const std::string_view t = r.token(word);
    if (t != word) r.fail_token("expected '", word, "' in the nodes section, found '", printable(t), "'");
  };
  expect("FiniteElementSpace");
  expect("FiniteElementCollection:");
  const std::string collection(r.token("the name of a finite element collection"));
  const std::size_t coll_at = r.token_offset();
  expect("VDim:");
  const int vdim = int(r.integer("the vector dimension", 1, 3));
  if (vdim < dim) r.fail_token("vector dimension ", vdim, " of the nodes is smaller than the mesh dimension ", dim);
  expect("Ordering:");
  const int ordering = int(r.integer("the ordering (0 by nodes, 1 by vector dimension)", 0, 1));
  // MFEM makes a mesh periodic by identifying the vertices of opposite sides and keeping each
  // element's true corner positions in discontinuous (L2) nodes, which belong to elements, not
  // vertices: there are no vertex positions to read. Saving the nodes in an H1 space would
  // undo the periodicity, so the message does not advise it.
  if (collection.substr(0, 3) == "L2_")
    r.fail_line(coll_at, "the mesh nodes are in the discontinuous (L2) collection '", printable(collection),
                "', which is how MFEM stores periodic meshes; tessera reads conforming, non-periodic meshes only");
  const std::string why = node_space(collection, dim, space);
  if (!why.empty()) r.fail_line(coll_at, "the mesh nodes' finite element collection '", printable(collection), "' ", why);
  std::vector<double> values;
  while (!r.at_end() && r.peek_token() != "mfem_mesh_end") values.push_back(r.real("a node coordinate"));
  if (values.size() % std::size_t(vdim) != 0)
    r.fail_line(r.offset(), "the nodes section holds ", values.size(), " values, not a multiple of the vector dimension ",
                vdim, "; the file is truncated or corrupt");
  const std::size_t ndofs = values.size() / std::size_t(vdim);
  if (ndofs < std::size_t(nv))
    r.fail_line(nodes_at, "the nodes section holds ", ndofs, " nodes, fewer than the ", nv,
                " vertices; the file is truncated or corrupt");
  // MFEM numbers the vertex dofs of an H1 space first, in vertex order: the vertex positions.
  sdim = vdim;
  coords.resize(std::size_t(nv) * std::size_t(sdim));
  for (std::size_t v = 0; v < std::size_t(nv); ++v)
    for (std::size_t c = 0; c < std::size_t(sdim); ++c)
      coords[v * std::size_t(sdim) + c] = ordering == 0 ? values[c * ndofs + v] : values[v * std::size_t(vdim) + c];
  this->collection = collection;
  this->ordering = ordering;
  collection_at = coll_at;
  this->nodes_at = nodes_at;
  node_values = std::move(values);
}

// "MFEM INLINE mesh v1.0": MFEM's description of a structured Cartesian mesh, lines
// `key = value` (a value may end with ';') with the keys type (segment, tri, quad, tet, hex,
// wedge, pyramid), nx, ny, nz (cells per direction) and sx, sy, sz (box lengths), all of the
// mesh's directions required. tessera builds the box with its own generator, fem::box_mesh,
// which splits cells into triangles and tetrahedra as MFEM does (each square along its
// (0,0)-(1,1) diagonal, each cube into the 6 Kuhn tetrahedra around its (0,0,0)-(1,1,1)
// diagonal); the element numbering is the generator's, the boundary attributes MFEM's
// (renumbered below; docs/cli.md).
fem::Mesh MfemFile::read_inline(std::vector<std::string>* warnings) {
  static constexpr std::array<std::string_view, 7> keys = {"type", "nx", "ny", "nz", "sx", "sy", "sz"};
  constexpr std::size_t absent = std::string_view::npos;
  std::array<std::string_view, 7> value{};
  std::array<std::size_t, 7> line_at;  // start of the line that gave each key
  line_at.fill(absent);
  while (!r.at_end()) {  // at_end skips blank and comment lines
    const std::size_t at = r.offset();
    std::string_view line = r.rest_of_line();
    line = trim(line.substr(0, line.find('#')));
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos)
      r.fail_line(at, "expected 'key = value' (keys: type, nx, ny, nz, sx, sy, sz), found '", printable(line), "'");
    const std::string_view key = trim(line.substr(0, eq));
    std::string_view v = trim(line.substr(eq + 1));
    if (!v.empty() && v.back() == ';') v = trim(v.substr(0, v.size() - 1));
    std::size_t k = 0;
    while (k < keys.size() && keys[k] != key) ++k;
    if (k == keys.size())
      r.fail_line(at, "unknown key '", printable(key), "' in an MFEM inline mesh (keys: type, nx, ny, nz, sx, sy, sz)");
    if (line_at[k] != absent)
      r.fail_line(at, "'", key, "' is given a second time (first on line ", r.line_of(line_at[k]), ")");
    if (v.empty()) r.fail_line(at, "'", key, " =' has no value");
    value[k] = v;
    line_at[k] = at;
  }
  const std::string& name = r.name();
  if (line_at[0] == absent)
    fail(name, ": the MFEM inline mesh has no 'type = ...' line (segment, tri, quad, tet or hex)");
  const std::string_view type = value[0];
  Geometry g;
  if (type == "segment") g = Geometry::Segment;
  else if (type == "tri") g = Geometry::Triangle;
  else if (type == "quad") g = Geometry::Quadrilateral;
  else if (type == "tet") g = Geometry::Tetrahedron;
  else if (type == "hex") g = Geometry::Hexahedron;
  else if (type == "wedge" || type == "pyramid")
    r.fail_line(line_at[0], "inline mesh type '", type, type == "wedge" ? "' (prism cells)" : "'",
                " is not supported; tessera builds inline meshes of type segment, tri, quad, tet or hex");
  else
    r.fail_line(line_at[0], "unknown inline mesh type '", printable(type),
                "' (MFEM's types: segment, tri, quad, tet, hex, wedge, pyramid)");
  const int d = fem::dim(g);
  std::array<int, 3> n{1, 1, 1};
  fem::BoxOptions box;
  for (int c = 0; c < 3; ++c) {
    const std::size_t kn = std::size_t(1 + c), ks = std::size_t(4 + c);
    if (c >= d) {
      // MFEM ignores the sizes of directions the mesh does not have; say so, in case the type is wrong.
      for (std::size_t k : {kn, ks})
        if (line_at[k] != absent)
          detail::warn(warnings, ::tessera::detail::concat(name, ", line ", r.line_of(line_at[k]), ": '", keys[k],
                                                           "' is ignored: a mesh of type '", type, "' is ", d, "-D"));
      continue;
    }
    for (std::size_t k : {kn, ks})
      if (line_at[k] == absent)
        r.fail_line(line_at[0], "an inline mesh of type '", type, "' needs '", keys[k], " = ...' (",
                    k == kn ? "the number of cells" : "the length of the box", " along ", "xyz"[c],
                    "), which the file does not give");
    // concat, not a chain of std::string operator+: GCC 12 reports -Wrestrict on the inlined
    // insert at the front of a temporary that such a chain starts with.
    const std::string cells_what = ::tessera::detail::concat("'", keys[kn], "', the number of cells along ", "xyz"[c],
                                                             " (a whole number, at least 1)");
    n[std::size_t(c)] = int(r.integer_at(value[kn], line_at[kn], cells_what.c_str(), 1, INT_MAX));
    const std::string length_what = ::tessera::detail::concat("'", keys[ks], "', the box length along ", "xyz"[c],
                                                              " (a positive finite number)");
    const double length = r.real_at(value[ks], line_at[ks], length_what.c_str());
    if (!(length > 0))
      r.fail_line(line_at[ks], "'", keys[ks], " = ", printable(value[ks]), "': the box length must be positive");
    box.size[std::size_t(c)] = length;
  }
  fem::Mesh mesh;
  try {
    mesh = fem::box_mesh(g, n, box);
  } catch (const Error& e) {  // too many cells
    r.fail_line(line_at[0], e.what());
  }
  // The generator numbers the box's sides 1 x = 0, 2 x = max, 3 y = 0, 4 y = max, 5 z = 0,
  // 6 z = max; MFEM's Cartesian meshes number them bottom first and then around: in 2-D
  // 1 y = 0, 2 x = max, 3 y = max, 4 x = 0; in 3-D 1 z = 0, 2 y = 0, 3 x = max, 4 y = max,
  // 5 x = 0, 6 z = max. Boundary conditions written for the MFEM file then land on the same sides.
  static constexpr int to_mfem_2d[5] = {0, 4, 2, 1, 3}, to_mfem_3d[7] = {0, 5, 3, 2, 4, 1, 6};
  if (d >= 2)
    for (index_t b = 0; b < mesh.num_boundary(); ++b) {
      const int a = mesh.boundary_attribute(b);
      mesh.set_boundary_attribute(b, d == 2 ? to_mfem_2d[a] : to_mfem_3d[a]);
    }
  detail::validate_mesh(mesh, name);
  return mesh;
}

fem::Mesh MfemFile::build(std::vector<std::string>* warnings) {
  const std::string& name = r.name();
  if (dim == 0) fail(name, ": no 'dimension' section; the file is truncated or not an MFEM mesh");
  if (!elements.present) fail(name, ": no 'elements' section; the file is truncated or not an MFEM mesh");
  if (nv < 0) fail(name, ": no 'vertices' section; the file is truncated or not an MFEM mesh");
  for (const Cells* c : {&elements, &boundary})
    if (c->max_id >= nv)
      r.fail_line(c->max_id_at, "vertex id ", c->max_id, " is out of range: the file has ", nv, " vertices (ids 0 to ",
                  nv - 1, ")");
  // 2-D elements in the x-y plane that turn clockwise (MFEM accepts both turns and fixes them
  // when it loads a mesh) get the opposite vertex order: corner 0 first, the others reversed.
  // The turn of a curved element is that of its map (its corners may turn the other way).
  std::vector<char> flip(elements.geometry.size(), 0);
  std::vector<double> nodes;
  if (space.order > 1) nodes = curved_nodes(flip);
  long long flipped = 0;
  for (char f : flip) flipped += f;
  if (dim == 2 && sdim == 2 && space.order <= 1) {
    std::size_t k = 0;
    for (std::size_t i = 0; i < elements.geometry.size(); ++i) {
      const int n = fem::num_vertices(Geometry(elements.geometry[i]));
      double area = 0;  // twice the signed area of the corner polygon
      for (int c = 0; c < n; ++c) {
        const std::size_t a = std::size_t(elements.vertices[k + std::size_t(c)]) * 2;
        const std::size_t b = std::size_t(elements.vertices[k + std::size_t((c + 1) % n)]) * 2;
        area += coords[a] * coords[b + 1] - coords[b] * coords[a + 1];
      }
      if (area < 0) flip[i] = 1, ++flipped;
      k += std::size_t(n);
    }
  }
  fem::Mesh mesh(sdim);
  mesh.reserve(index_t(nv), index_t(elements.geometry.size()), index_t(boundary.geometry.size()));
  for (long long v = 0; v < nv; ++v)
    mesh.add_vertex(std::span<const double>(coords.data() + v * sdim, std::size_t(sdim)));
  for (const Cells* c : {&elements, &boundary}) {
    std::size_t k = 0;
    index_t vs[8];
    for (std::size_t i = 0; i < c->geometry.size(); ++i) {
      const Geometry g = Geometry(c->geometry[i]);
      const int n = fem::num_vertices(g);
      const bool reverse = c == &elements && flip[i];
      for (int j = 0; j < n; ++j) vs[j] = c->vertices[k + std::size_t(reverse && j > 0 ? n - j : j)];
      if (c == &elements)
        mesh.add_element(g, std::span<const index_t>(vs, std::size_t(n)), c->attribute[i]);
      else
        mesh.add_boundary(g, std::span<const index_t>(vs, std::size_t(n)), c->attribute[i]);
      k += std::size_t(n);
    }
  }
  if (flipped > 0)
    detail::warn(warnings, ::tessera::detail::concat(name, ": ", flipped, " of the ", elements.geometry.size(),
                                                     " elements turn clockwise in the x-y plane: their vertex order "
                                                     "(and their nodes) was reversed to counter-clockwise"));
  if (space.order > 1) mesh.set_nodes(space.order, std::move(nodes));
  detail::validate_mesh(mesh, name);
  return mesh;
}

// ---- curved meshes: MFEM's numbering of the nodes ---------------------------------------------
//
// The `nodes` section holds a vector H1 field: its dofs are numbered vertices first (by vertex),
// then edges (p - 1 per edge, by edge), then, in 3-D, faces (their interior nodes, by face),
// then element interiors (by element). MFEM numbers edges and faces in the order in which it
// first meets them, going through the elements in file order and each element's edges and
// faces in its local order (tables below, from MFEM's reference elements). An edge's nodes
// run from its vertex of lower id to the other; a face's interior nodes lie in the frame of
// the vertices of the element that met it first, in that element's local face order. The
// node positions are those of MFEM's H1 elements: the 1-D points cp of the space along edges
// and, inside triangles and tetrahedra, the lattice point (i, j, k) at (cp_i, cp_j, cp_k) / w,
// w = cp_i + cp_j + cp_k + cp_l, l the remaining index.

constexpr int kTriEdges[3][2] = {{0, 1}, {1, 2}, {2, 0}};
constexpr int kQuadEdges[4][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
constexpr int kTetEdges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
constexpr int kHexEdges[12][2] = {{0, 1}, {1, 2}, {3, 2}, {0, 3}, {4, 5}, {5, 6},
                                  {7, 6}, {4, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
constexpr int kTetFaces[4][4] = {{1, 2, 3, -1}, {0, 3, 2, -1}, {0, 1, 3, -1}, {0, 2, 1, -1}};
constexpr int kHexFaces[6][4] = {{3, 2, 1, 0}, {0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}, {4, 5, 6, 7}};

std::span<const int[2]> mfem_edges(Geometry g) {
  switch (g) {
    case Geometry::Triangle: return kTriEdges;
    case Geometry::Quadrilateral: return kQuadEdges;
    case Geometry::Tetrahedron: return kTetEdges;
    case Geometry::Hexahedron: return kHexEdges;
    default: return {};  // segment: a 1-D mesh numbers no edges
  }
}

std::span<const int[4]> mfem_faces(Geometry g) {
  switch (g) {
    case Geometry::Tetrahedron: return kTetFaces;
    case Geometry::Hexahedron: return kHexFaces;
    default: return {};
  }
}

/// Interior nodes of MFEM's order-p H1 element of geometry g, in its dof order, in reference
/// coordinates (dim(g) used).
std::vector<std::array<double, 3>> interior_points(Geometry g, const NodeSpace& s) {
  const int p = s.order;
  const std::vector<double>& cp = s.cp;
  std::vector<std::array<double, 3>> x;
  switch (g) {
    case Geometry::Segment:
      for (int i = 1; i < p; ++i) x.push_back({cp[std::size_t(i)], 0, 0});
      break;
    case Geometry::Triangle:
      for (int j = 1; j < p; ++j)
        for (int i = 1; i + j < p; ++i) {
          const double w = cp[std::size_t(i)] + cp[std::size_t(j)] + cp[std::size_t(p - i - j)];
          x.push_back({cp[std::size_t(i)] / w, cp[std::size_t(j)] / w, 0});
        }
      break;
    case Geometry::Quadrilateral:
      for (int j = 1; j < p; ++j)
        for (int i = 1; i < p; ++i) x.push_back({cp[std::size_t(i)], cp[std::size_t(j)], 0});
      break;
    case Geometry::Tetrahedron:
      for (int k = 1; k < p; ++k)
        for (int j = 1; j + k < p; ++j)
          for (int i = 1; i + j + k < p; ++i) {
            const double w =
                cp[std::size_t(i)] + cp[std::size_t(j)] + cp[std::size_t(k)] + cp[std::size_t(p - i - j - k)];
            x.push_back({cp[std::size_t(i)] / w, cp[std::size_t(j)] / w, cp[std::size_t(k)] / w});
          }
      break;
    case Geometry::Hexahedron:
      for (int k = 1; k < p; ++k)
        for (int j = 1; j < p; ++j)
          for (int i = 1; i < p; ++i) x.push_back({cp[std::size_t(i)], cp[std::size_t(j)], cp[std::size_t(k)]});
      break;
  }
  return x;
}

// Each element's nodes in the H1Basis positions (node-major, sdim coordinates); a 2-D element of
// a plane mesh whose map turns clockwise is flagged in `flip` and its nodes are given for the
// reversed vertex order; tangled elements are refused.
std::vector<double> MfemFile::curved_nodes(std::vector<char>& flip) {
  const int p = space.order;
  const std::size_t ndofs = node_values.size() / std::size_t(sdim);
  const std::size_t ne = elements.geometry.size();
  auto key2 = [](index_t a, index_t b) { return std::pair<index_t, index_t>(std::min(a, b), std::max(a, b)); };
  // Edge and face numbers in MFEM's order of first appearance; a face keeps its first frame.
  std::map<std::pair<index_t, index_t>, index_t> edge_id;
  std::map<std::array<index_t, 4>, index_t> face_id;
  std::vector<std::array<index_t, 4>> face_frame;
  std::vector<std::size_t> start(ne + 1, 0);
  for (std::size_t e = 0; e < ne; ++e)
    start[e + 1] = start[e] + std::size_t(fem::num_vertices(Geometry(elements.geometry[e])));
  for (std::size_t e = 0; e < ne; ++e) {
    const index_t* v = elements.vertices.data() + start[e];
    const Geometry g = Geometry(elements.geometry[e]);
    const int nvert = fem::num_vertices(g);
    for (int a = 0; a < nvert; ++a)
      for (int b = a + 1; b < nvert; ++b)
        if (v[a] == v[b])
          r.fail_line(elements.at[e], "element ", e, " lists vertex ", v[a], " twice; a curved element needs distinct "
                      "vertices");
    for (const auto& ed : mfem_edges(g)) edge_id.emplace(key2(v[ed[0]], v[ed[1]]), index_t(edge_id.size()));
    for (const auto& f : mfem_faces(g)) {
      std::array<index_t, 4> frame{v[f[0]], v[f[1]], v[f[2]], f[3] < 0 ? index_t(-1) : v[f[3]]};
      std::array<index_t, 4> key = frame;
      std::sort(key.begin(), key.end());
      if (face_id.emplace(key, index_t(face_frame.size())).second) face_frame.push_back(frame);
    }
  }
  const std::size_t edge_dofs = std::size_t(p - 1);
  const std::size_t tri_face_dofs = std::size_t((p - 1) * (p - 2) / 2), quad_face_dofs = std::size_t((p - 1) * (p - 1));
  std::vector<std::size_t> face_start(face_frame.size() + 1, 0);
  for (std::size_t f = 0; f < face_frame.size(); ++f)
    face_start[f + 1] = face_start[f] + (face_frame[f][3] < 0 ? tri_face_dofs : quad_face_dofs);
  const std::size_t first_face = std::size_t(nv) + edge_id.size() * edge_dofs;
  const std::size_t first_interior = first_face + face_start.back();
  std::map<int, std::vector<std::array<double, 3>>> interior;  // by geometry
  std::size_t total = first_interior;
  for (std::size_t e = 0; e < ne; ++e) {
    auto it = interior.find(elements.geometry[e]);
    if (it == interior.end())
      it = interior.emplace(elements.geometry[e], interior_points(Geometry(elements.geometry[e]), space)).first;
    total += it->second.size();
  }
  if (total != ndofs)
    r.fail_line(nodes_at, "the nodes section holds ", ndofs, " nodes, but the order-", p, " space '",
                printable(collection), "' on these elements has ", total, " (", nv, " vertices, ", edge_id.size(),
                " edges, ", face_frame.size(), " faces); the file is truncated, or its elements do not match its nodes");
  auto value = [&](std::size_t dof, int c) {
    return ordering == 0 ? node_values[std::size_t(c) * ndofs + dof] : node_values[dof * std::size_t(sdim) + std::size_t(c)];
  };
  // Per geometry: the transfer from the first element's node points (any element's points are
  // the same set, listed in another order), the lookup of a point in that list, the checks.
  struct PerGeometry {
    detail::NodeTransfer transfer;
    std::vector<std::array<double, 3>> points;
    std::unique_ptr<detail::PointIndex> index;
    std::unique_ptr<detail::TangleCheck> check;
    std::vector<int> swap;
  };
  std::map<int, PerGeometry> per;
  std::vector<double> nodes, values, out;
  std::vector<std::array<double, 3>> pts;
  std::vector<int> perm;
  std::size_t interior_at = first_interior;
  for (std::size_t e = 0; e < ne; ++e) {
    const Geometry g = Geometry(elements.geometry[e]);
    const index_t* v = elements.vertices.data() + start[e];
    const int nvert = fem::num_vertices(g);
    // (dof, reference point) of each node of the element
    pts.clear();
    values.clear();
    auto add = [&](std::size_t dof, const std::array<double, 3>& x) {
      pts.push_back(x);
      for (int c = 0; c < sdim; ++c) values.push_back(value(dof, c));
    };
    auto vertex_of = [&](index_t id) {
      for (int a = 0; a < nvert; ++a)
        if (v[a] == id) return fem::reference_vertex(g, a);
      return std::array<double, 3>{};  // not reached: faces are made of the element's vertices
    };
    for (int a = 0; a < nvert; ++a) add(std::size_t(v[a]), fem::reference_vertex(g, a));
    for (const auto& ed : mfem_edges(g)) {
      const auto key = key2(v[ed[0]], v[ed[1]]);
      const std::size_t base = std::size_t(nv) + std::size_t(edge_id.at(key)) * edge_dofs;
      const std::array<double, 3> lo = vertex_of(key.first), hi = vertex_of(key.second);
      for (int t = 0; t + 1 < p; ++t) {
        const double s = space.cp[std::size_t(t + 1)];
        add(base + std::size_t(t), {lo[0] + s * (hi[0] - lo[0]), lo[1] + s * (hi[1] - lo[1]), lo[2] + s * (hi[2] - lo[2])});
      }
    }
    for (const auto& f : mfem_faces(g)) {
      std::array<index_t, 4> key{v[f[0]], v[f[1]], v[f[2]], f[3] < 0 ? index_t(-1) : v[f[3]]};
      std::sort(key.begin(), key.end());
      const index_t id = face_id.at(key);
      const std::array<index_t, 4>& frame = face_frame[std::size_t(id)];
      const bool tri = frame[3] < 0;
      const auto face_points = interior_points(tri ? Geometry::Triangle : Geometry::Quadrilateral, space);
      std::array<std::array<double, 3>, 4> corner{};
      for (int c = 0; c < (tri ? 3 : 4); ++c) corner[std::size_t(c)] = vertex_of(frame[std::size_t(c)]);
      for (std::size_t k = 0; k < face_points.size(); ++k) {
        const double x = face_points[k][0], y = face_points[k][1];
        const double w[4] = {tri ? 1 - x - y : (1 - x) * (1 - y), tri ? x : x * (1 - y), tri ? y : x * y,
                             tri ? 0 : (1 - x) * y};
        std::array<double, 3> q{0, 0, 0};
        for (int c = 0; c < 4; ++c)
          for (int d = 0; d < 3; ++d) q[std::size_t(d)] += w[c] * corner[std::size_t(c)][std::size_t(d)];
        add(first_face + face_start[std::size_t(id)] + k, q);
      }
    }
    const auto& inner = interior.at(elements.geometry[e]);
    for (std::size_t k = 0; k < inner.size(); ++k) add(interior_at + k, inner[k]);
    interior_at += inner.size();

    auto it = per.find(elements.geometry[e]);
    if (it == per.end()) {
      PerGeometry pg;
      pg.points = pts;
      pg.transfer = detail::NodeTransfer(g, p, pg.points, p);
      pg.index = std::make_unique<detail::PointIndex>(pg.points);
      if (sdim == dim) pg.check = std::make_unique<detail::TangleCheck>(g, p);  // (also gives the turn)
      if (dim == 2) pg.swap = detail::swap_xy_permutation(g, p);
      it = per.emplace(elements.geometry[e], std::move(pg)).first;
    }
    PerGeometry& pg = it->second;
    perm.assign(pts.size(), -1);
    for (std::size_t k = 0; k < pts.size(); ++k) {
      const int at = pg.index->find(pts[k]);
      if (at < 0 || perm[std::size_t(at)] >= 0)
        r.fail_line(elements.at[e], "element ", e, ": its nodes do not match MFEM's order-", p, " element");
      perm[std::size_t(at)] = int(k);
    }
    out.resize(std::size_t(pg.transfer.num_to() * sdim));
    pg.transfer.apply(values.data(), sdim, out.data(), perm.data());
    const std::size_t first = nodes.size();
    if (dim == 2 && pg.check && pg.check->centre_det(out.data()) < 0) flip[e] = 1;
    if (flip[e]) {
      for (int n : pg.swap) nodes.insert(nodes.end(), out.begin() + n * sdim, out.begin() + (n + 1) * sdim);
    } else {
      nodes.insert(nodes.end(), out.begin(), out.end());
    }
    if (pg.check) {
      const std::string why = pg.check->check(nodes.data() + first);
      if (!why.empty())
        r.fail_line(elements.at[e], "element ", e, " is tangled: ", why, " (its curved nodes, in the nodes section from "
                    "line ", r.line_of(nodes_at), ", fold it over)");
    }
  }
  return nodes;
}

}  // namespace

fem::Mesh read_mfem_bytes(std::string_view bytes, const std::string& name, std::vector<std::string>* warnings) {
  MfemFile f(bytes, name);
  f.read_header();
  if (f.inline_mesh) return f.read_inline(warnings);
  while (!f.r.at_end()) {
    const std::string_view key = f.r.token("a section name");
    if (key == "dimension") {
      if (f.dim != 0) f.r.fail_token("a second 'dimension' section");
      f.dim = int(f.r.integer("the dimension", 1, 3));
    } else if (key == "elements") {
      f.read_cells(f.elements, false);
    } else if (key == "boundary") {
      f.read_cells(f.boundary, true);
    } else if (key == "attribute_sets" || key == "bdr_attribute_sets") {
      // v1.3 sections; read in any version and place, as tessera reads the others.
      f.skip_attribute_sets(key == "bdr_attribute_sets");
    } else if (key == "vertices") {
      f.read_vertices();
    } else if (key == "mfem_mesh_end") {
      break;
    } else {
      f.r.fail_token("unexpected '", printable(key), "' where a section (dimension, elements, boundary, vertices, "
                     "attribute_sets, bdr_attribute_sets) was expected; tessera reads the sections of MFEM mesh v1.0 "
                     "and the attribute sets of v1.3 only (a count before this line may be wrong)");
    }
  }
  return f.build(warnings);
}

fem::Mesh read_mfem(const std::string& path, std::vector<std::string>* warnings) {
  const std::string bytes = detail::read_file(path, "read_mfem");
  return read_mfem_bytes(bytes, path, warnings);
}

}  // namespace tessera::io
