// Gmsh MSH 4.1 writer (ASCII): the mesh, its element and boundary-face attributes as
// physical tags.
//
// Format reference: Gmsh reference manual, section "MSH file format" (version 4.1):
// $MeshFormat, $Entities (points, curves, surfaces, volumes; each with a bounding box and its
// physical tags), $Nodes and $Elements in entity blocks; element types 1 (2-node line),
// 2 (triangle), 3 (quadrangle), 4 (tetrahedron), 5 (hexahedron), whose node order is the one
// fem::Mesh uses.
#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/io/gmsh.hpp"

namespace tessera::io {
namespace {

using fem::Geometry;

int gmsh_type(Geometry g) {
  switch (g) {
    case Geometry::Segment: return 1;
    case Geometry::Triangle: return 2;
    case Geometry::Quadrilateral: return 3;
    case Geometry::Tetrahedron: return 4;
    case Geometry::Hexahedron: return 5;
  }
  return 0;
}

void put(std::ostream& os, double v) {  // shortest decimal form that reads back to v
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  os.write(buf, r.ptr - buf);
}

// One entity per (dimension, attribute): its tag (1, 2, ... per dimension) and its physical
// tag (the attribute).
struct Entity {
  int tag = 0;
  int attribute = 0;
};

}  // namespace

std::string write_gmsh_string(const fem::Mesh& mesh) {
  const int sdim = mesh.space_dim(), dim = mesh.dim();
  if (sdim < 1 || sdim > 3) fail("write_gmsh: the mesh has no space dimension");
  if (mesh.num_elements() == 0) fail("write_gmsh: the mesh has no elements; nothing to write");
  std::array<std::map<int, Entity>, 4> entities;  // by dimension, then attribute
  auto add = [&](Geometry g, int attribute, bool boundary, index_t i) {
    if (attribute <= 0)
      fail("write_gmsh: ", boundary ? "boundary face " : "element ", i, " has attribute ", attribute,
           "; Gmsh physical tags are positive integers");
    auto& by_attr = entities[std::size_t(fem::dim(g))];
    Entity& en = by_attr[attribute];
    if (!en.tag) {
      en.tag = int(by_attr.size());
      en.attribute = attribute;
    }
  };
  for (index_t e = 0; e < mesh.num_elements(); ++e) add(mesh.element_geometry(e), mesh.element_attribute(e), false, e);
  for (index_t b = 0; b < mesh.num_boundary(); ++b)
    add(mesh.boundary_geometry(b), mesh.boundary_attribute(b), true, b);

  std::array<double, 3> lo{0, 0, 0}, hi{0, 0, 0};
  for (index_t v = 0; v < mesh.num_vertices(); ++v)
    for (int c = 0; c < sdim; ++c) {
      const double x = mesh.vertex(v, c);
      if (!std::isfinite(x))
        fail("write_gmsh: vertex ", v, " has a non-finite coordinate (", x, ") in direction ", c,
             "; fix the mesh before writing it");
      lo[std::size_t(c)] = v ? std::min(lo[std::size_t(c)], x) : x;
      hi[std::size_t(c)] = v ? std::max(hi[std::size_t(c)], x) : x;
    }

  std::ostringstream os;
  os << "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Entities\n";
  os << entities[0].size() << ' ' << entities[1].size() << ' ' << entities[2].size() << ' ' << entities[3].size() << '\n';
  for (int d = 0; d <= 3; ++d)
    for (const auto& [attr, en] : entities[std::size_t(d)]) {
      os << en.tag;
      for (int k = 0; k < (d == 0 ? 1 : 2); ++k)
        for (int c = 0; c < 3; ++c) {
          os << ' ';
          put(os, (k == 0 ? lo : hi)[std::size_t(c)]);
        }
      os << " 1 " << en.attribute;
      if (d > 0) os << " 0";  // no bounding entities
      os << '\n';
    }
  os << "$EndEntities\n";

  // All nodes in one block of the first entity of the mesh's dimension; tags 1..nv.
  const index_t nv = mesh.num_vertices();
  os << "$Nodes\n1 " << nv << " 1 " << nv << '\n'
     << dim << ' ' << entities[std::size_t(dim)].begin()->second.tag << " 0 " << nv << '\n';
  for (index_t v = 0; v < nv; ++v) os << v + 1 << '\n';
  for (index_t v = 0; v < nv; ++v) {
    for (int c = 0; c < 3; ++c) {
      if (c) os << ' ';
      put(os, c < sdim ? mesh.vertex(v, c) : 0.0);
    }
    os << '\n';
  }
  os << "$EndNodes\n";

  // Blocks are runs of consecutive elements (then boundary faces) with the same geometry and
  // attribute, so that the file keeps the mesh's order; tags 1, 2, ... in that order.
  struct Block {
    bool boundary;
    Geometry g;
    int attribute;
    index_t begin, end;
  };
  std::vector<Block> blocks;
  for (int boundary = 0; boundary < 2; ++boundary) {
    const index_t n = boundary ? mesh.num_boundary() : mesh.num_elements();
    for (index_t i = 0; i < n; ++i) {
      const Geometry g = boundary ? mesh.boundary_geometry(i) : mesh.element_geometry(i);
      const int a = boundary ? mesh.boundary_attribute(i) : mesh.element_attribute(i);
      if (!blocks.empty() && blocks.back().boundary == bool(boundary) && blocks.back().g == g &&
          blocks.back().attribute == a && blocks.back().end == i)
        ++blocks.back().end;
      else
        blocks.push_back({bool(boundary), g, a, i, i + 1});
    }
  }
  const index_t ntotal = mesh.num_elements() + mesh.num_boundary();
  os << "$Elements\n" << blocks.size() << ' ' << ntotal << " 1 " << ntotal << '\n';
  index_t tag = 0;
  for (const Block& b : blocks) {
    const int d = fem::dim(b.g);
    os << d << ' ' << entities[std::size_t(d)].at(b.attribute).tag << ' ' << gmsh_type(b.g) << ' ' << b.end - b.begin
       << '\n';
    for (index_t i = b.begin; i < b.end; ++i) {
      os << ++tag;
      for (index_t v : b.boundary ? mesh.boundary_vertices(i) : mesh.element_vertices(i)) os << ' ' << v + 1;
      os << '\n';
    }
  }
  os << "$EndElements\n";
  return std::move(os).str();
}

void write_gmsh(const std::string& path, const fem::Mesh& mesh) {
  const std::string doc = write_gmsh_string(mesh);  // first, so that errors leave no partial file
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  if (!os) fail("write_gmsh: cannot open '", path, "' for writing (", std::strerror(errno), "); check the directory");
  os.write(doc.data(), std::streamsize(doc.size()));
  os.close();
  if (!os) fail("write_gmsh: writing '", path, "' failed (", std::strerror(errno), "); disk full?");
}

}  // namespace tessera::io
