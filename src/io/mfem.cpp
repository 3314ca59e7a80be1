// Reader of MFEM's mesh format v1.0; see tessera/io/mfem.hpp.
#include "tessera/io/mfem.hpp"

#include <climits>
#include <cstdint>
#include <utility>

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

/// Elements or boundary faces of the file, in file order.
struct Cells {
  std::vector<int> geometry, attribute;
  std::vector<index_t> vertices;  // flat, num_vertices(geometry) per cell
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
  std::string curved_from;     // collection of the nodes, when the vertices came from there

  void read_header();
  void read_cells(Cells& cells, bool is_boundary);
  void read_vertices();
  void read_nodes();
  fem::Mesh build(std::vector<std::string>* warnings);
};

void MfemFile::read_header() {
  if (r.at_end()) fail(r.name(), ": the file is empty; expected an MFEM mesh starting with 'MFEM mesh v1.0'");
  const std::size_t at = r.offset();
  const std::string_view header = r.rest_of_line();
  if (header == "MFEM mesh v1.0" || header == "MFEM mesh v1.1" || header == "MFEM mesh v1.2" ||
      header == "MFEM mesh v1.3")
    return;
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
  }
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
  if (collection.rfind("H1_", 0) != 0)
    r.fail_line(coll_at, "the mesh nodes are in the finite element collection '", printable(collection),
                "', from which tessera cannot take vertex positions; it reads vertex coordinates or H1_ nodes: save "
                "the mesh with an H1 nodal space or as a straight mesh");
  std::vector<double> values;
  while (!r.at_end() && r.peek_token() != "mfem_mesh_end") values.push_back(r.real("a node coordinate"));
  if (values.size() % std::size_t(vdim) != 0)
    r.fail_line(r.offset(), "the nodes section holds ", values.size(), " values, not a multiple of the vector dimension ",
                vdim, "; the file is truncated or corrupt");
  const std::size_t ndofs = values.size() / std::size_t(vdim);
  if (ndofs < std::size_t(nv))
    r.fail_line(nodes_at, "the nodes section holds ", ndofs, " nodes, fewer than the ", nv,
                " vertices; the file is truncated or corrupt");
  sdim = vdim;
  coords.resize(std::size_t(nv) * std::size_t(sdim));
  for (std::size_t v = 0; v < std::size_t(nv); ++v)
    for (std::size_t c = 0; c < std::size_t(sdim); ++c)
      coords[v * std::size_t(sdim) + c] = ordering == 0 ? values[c * ndofs + v] : values[v * std::size_t(vdim) + c];
  curved_from = collection;
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
  fem::Mesh mesh(sdim);
  mesh.reserve(index_t(nv), index_t(elements.geometry.size()), index_t(boundary.geometry.size()));
  for (long long v = 0; v < nv; ++v)
    mesh.add_vertex(std::span<const double>(coords.data() + v * sdim, std::size_t(sdim)));
  for (const Cells* c : {&elements, &boundary}) {
    std::size_t k = 0;
    for (std::size_t i = 0; i < c->geometry.size(); ++i) {
      const Geometry g = Geometry(c->geometry[i]);
      const std::size_t n = std::size_t(fem::num_vertices(g));
      const std::span<const index_t> vs(c->vertices.data() + k, n);
      if (c == &elements)
        mesh.add_element(g, vs, c->attribute[i]);
      else
        mesh.add_boundary(g, vs, c->attribute[i]);
      k += n;
    }
  }
  if (!curved_from.empty())
    detail::warn(warnings, ::tessera::detail::concat(name, ": the mesh is curved (nodes in ", curved_from,
                                                     "); it was read as a first-order mesh through its vertices"));
  detail::validate_mesh(mesh, name);
  return mesh;
}

}  // namespace

fem::Mesh read_mfem_bytes(std::string_view bytes, const std::string& name, std::vector<std::string>* warnings) {
  MfemFile f(bytes, name);
  f.read_header();
  while (!f.r.at_end()) {
    const std::string_view key = f.r.token("a section name");
    if (key == "dimension") {
      if (f.dim != 0) f.r.fail_token("a second 'dimension' section");
      f.dim = int(f.r.integer("the dimension", 1, 3));
    } else if (key == "elements") {
      f.read_cells(f.elements, false);
    } else if (key == "boundary") {
      f.read_cells(f.boundary, true);
    } else if (key == "vertices") {
      f.read_vertices();
    } else if (key == "mfem_mesh_end") {
      break;
    } else {
      f.r.fail_token("unexpected '", printable(key), "' where a section (dimension, elements, boundary, vertices) was "
                     "expected; tessera reads the sections of MFEM mesh v1.0 only (a count before this line may be wrong)");
    }
  }
  return f.build(warnings);
}

fem::Mesh read_mfem(const std::string& path, std::vector<std::string>* warnings) {
  const std::string bytes = detail::read_file(path, "read_mfem");
  return read_mfem_bytes(bytes, path, warnings);
}

}  // namespace tessera::io
