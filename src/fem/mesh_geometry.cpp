// Mesh: validation and the geometry of the first-order element maps.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <vector>

#include "../core/repeats.hpp"
#include "tessera/core/error.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/quadrature.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

namespace {

double det_of(const std::array<std::array<double, 3>, 3>& J, int sdim, int d) {
  if (sdim == d) {
    if (d == 1) return J[0][0];
    if (d == 2) return J[0][0] * J[1][1] - J[0][1] * J[1][0];
    return J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
           J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
  }
  // Embedded: sqrt(det(J^T J)).
  double G[3][3] = {};
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < d; ++b)
      for (int r = 0; r < sdim; ++r) G[a][b] += J[r][a] * J[r][b];
  if (d == 1) return std::sqrt(G[0][0]);
  return std::sqrt(std::max(0.0, G[0][0] * G[1][1] - G[0][1] * G[1][0]));
}

std::string where(const std::string& source) { return source.empty() ? std::string("mesh") : source; }

}  // namespace

std::array<std::array<double, 3>, 3> Mesh::jacobian(index_t e, std::span<const double> xi) const {
  TESSERA_REQUIRE(e >= 0 && e < num_elements(), "fem::Mesh::jacobian: element ", e, " is out of range (", num_elements(),
                  " elements)");
  const Geometry g = element_geometry(e);
  TESSERA_REQUIRE(int(xi.size()) == fem::dim(g), "fem::Mesh::jacobian: a ", name(g), " needs ", fem::dim(g),
                  " reference coordinates, got ", xi.size());
  const int nv = fem::num_vertices(g), d = fem::dim(g);
  double val[8], grad[8 * 3];
  vertex_shape_functions(g, xi, val, std::span<double>(grad, std::size_t(nv * d)));
  const auto vs = element_vertices(e);
  std::array<std::array<double, 3>, 3> J{};
  // Differences to vertex 0: rounding scales with the element size, not the coordinates.
  for (int v = 1; v < nv; ++v)
    for (int r = 0; r < sdim_; ++r) {
      const double dxr = vertex(vs[std::size_t(v)], r) - vertex(vs[0], r);
      for (int c = 0; c < d; ++c) J[std::size_t(r)][std::size_t(c)] += dxr * grad[v * d + c];
    }
  return J;
}

std::array<double, 3> Mesh::map(index_t e, std::span<const double> xi) const {
  TESSERA_REQUIRE(e >= 0 && e < num_elements(), "fem::Mesh::map: element ", e, " is out of range (", num_elements(),
                  " elements)");
  const Geometry g = element_geometry(e);
  TESSERA_REQUIRE(int(xi.size()) == fem::dim(g), "fem::Mesh::map: a ", name(g), " needs ", fem::dim(g),
                  " reference coordinates, got ", xi.size());
  const int nv = fem::num_vertices(g);
  double val[8];
  vertex_shape_functions(g, xi, val);
  const auto vs = element_vertices(e);
  std::array<double, 3> x{};
  for (int v = 0; v < nv; ++v)
    for (int r = 0; r < sdim_; ++r) x[std::size_t(r)] += val[v] * vertex(vs[std::size_t(v)], r);
  return x;
}

double Mesh::det_jacobian(index_t e, std::span<const double> xi) const {
  return det_of(jacobian(e, xi), sdim_, fem::dim(element_geometry(e)));
}

double Mesh::element_measure(index_t e) const {
  const Geometry g = element_geometry(e);
  // Simplices are affine: det J is constant. Quads/hexes: det J is a polynomial of degree
  // <= 2 (quad: 1 per variable) / 2 per variable (hex), so a 2-point Gauss rule per
  // direction (degree 3) is exact when space_dim == dim.
  if (is_simplex(g) || g == Geometry::Segment) {
    const double c[3] = {0.25, 0.25, 0.25};
    return det_jacobian(e, std::span<const double>(c, std::size_t(fem::dim(g)))) * reference_volume(g);
  }
  static const QuadratureRule quad_rule = quadrature(Geometry::Quadrilateral, 3);
  static const QuadratureRule hex_rule = quadrature(Geometry::Hexahedron, 3);
  const QuadratureRule& rule = g == Geometry::Quadrilateral ? quad_rule : hex_rule;
  double s = 0;
  const int d = fem::dim(g);
  for (index_t q = 0; q < rule.size(); ++q) {
    double xi[3];
    for (int c = 0; c < d; ++c) xi[c] = rule.points(q, c);
    s += rule.weights(q) * det_jacobian(e, std::span<const double>(xi, std::size_t(d)));
  }
  return s;
}

double Mesh::measure() const {
  double s = 0;
  for (index_t e = 0; e < num_elements(); ++e) s += element_measure(e);
  return s;
}

std::array<double, 2> Mesh::det_jacobian_range() const {
  std::array<double, 2> r{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (index_t e = 0; e < num_elements(); ++e) {
    const Geometry g = element_geometry(e);
    for (int v = 0; v < fem::num_vertices(g); ++v) {
      const auto x = reference_vertex(g, v);
      const double d = det_jacobian(e, std::span<const double>(x.data(), std::size_t(fem::dim(g))));
      r[0] = std::min(r[0], d), r[1] = std::max(r[1], d);
    }
  }
  return r;
}

std::array<std::array<double, 3>, 2> Mesh::bounding_box() const {
  std::array<std::array<double, 3>, 2> b{};
  for (int c = 0; c < 3; ++c) {
    b[0][std::size_t(c)] = c < sdim_ ? std::numeric_limits<double>::infinity() : 0;
    b[1][std::size_t(c)] = c < sdim_ ? -std::numeric_limits<double>::infinity() : 0;
  }
  for (index_t v = 0; v < num_vertices(); ++v)
    for (int c = 0; c < sdim_; ++c) {
      b[0][std::size_t(c)] = std::min(b[0][std::size_t(c)], vertex(v, c));
      b[1][std::size_t(c)] = std::max(b[1][std::size_t(c)], vertex(v, c));
    }
  return b;
}

void Mesh::validate(const std::string& source, std::span<const long long> element_ids,
                    std::span<const long long> vertex_ids) const {
  // Checks in the order documented in mesh.hpp: ids, repeated vertices, coordinates,
  // dimensions, orientation, repeated elements.
  const std::string src = where(source);
  const index_t nv = num_vertices();
  // "element 9 (tetrahedron)", with the source's own number where the reader gave it
  const auto elem = [&](index_t e) {
    const bool own = std::size_t(num_elements()) == element_ids.size() && e >= 0 && e < num_elements();
    return detail::concat("element ", e, " (", name(element_geometry(e)),
                          own ? detail::concat("; number ", element_ids[std::size_t(e)], " in the file") : std::string(), ")");
  };
  const auto vert = [&](index_t v) {
    const bool own = std::size_t(nv) == vertex_ids.size() && v >= 0 && v < nv;
    return detail::concat("vertex ", v, own ? detail::concat(" (node ", vertex_ids[std::size_t(v)], " in the file)") : std::string());
  };
  auto check_ids = [&](bool element, index_t i, Geometry g, std::span<const index_t> vs) {
    // the name only on failure (a string per element would slow large meshes down)
    const auto it = [&] { return element ? elem(i) : detail::concat("boundary face ", i, " (", name(g), ")"); };
    for (std::size_t a = 0; a < vs.size(); ++a) {
      if (vs[a] < 0 || vs[a] >= nv)
        fail(src, ": ", it(), " refers to vertex ", vs[a], ", which is out of range (the mesh has ", nv, " vertices)");
      for (std::size_t b = 0; b < a; ++b)
        if (vs[a] == vs[b]) fail(src, ": ", it(), " uses ", vert(vs[a]), " twice");
    }
  };
  for (index_t e = 0; e < num_elements(); ++e) check_ids(true, e, element_geometry(e), element_vertices(e));
  for (index_t b = 0; b < num_boundary(); ++b) check_ids(false, b, boundary_geometry(b), boundary_vertices(b));
  for (index_t v = 0; v < nv; ++v)
    for (int c = 0; c < sdim_; ++c)
      if (!std::isfinite(vertex(v, c)))
        fail(src, ": ", vert(v), " has a non-finite coordinate ", c, " (", vertex(v, c), ")");
  for (index_t e = 0; e < num_elements(); ++e) {
    const Geometry g = element_geometry(e);
    if (fem::dim(g) != dim_)
      fail(src, ": element ", e, " is a ", name(g), " (", fem::dim(g), "-D) in a ", dim_,
           "-D mesh; mixed meshes may combine only geometries of one dimension");
  }
  for (index_t b = 0; b < num_boundary(); ++b) {
    const Geometry g = boundary_geometry(b);
    if (fem::dim(g) != dim_ - 1)
      fail(src, ": boundary face ", b, " is a ", name(g), " (", fem::dim(g), "-D), but the boundary of a ", dim_,
           "-D mesh has dimension ", dim_ - 1);
  }
  if (sdim_ == dim_) {  // embedded elements have no orientation
    // det J at every vertex: the first element with det J <= 0 somewhere is named, with how
    // many of its vertices are affected (all: a vertex order of negative orientation; some: a
    // tangled element) and how many elements of the mesh are bad
    struct Bad {
      index_t e = -1;
      int v = -1, negative = 0, zero = 0, vertices = 0;  // v: the vertex of the smallest det J
      double d = 0;
    } first;
    index_t bad = 0;
    for (index_t e = 0; e < num_elements(); ++e) {
      const Geometry g = element_geometry(e);
      Bad b{e, -1, 0, 0, fem::num_vertices(g), 0};
      for (int v = 0; v < b.vertices; ++v) {
        const auto x = reference_vertex(g, v);
        const double d = det_jacobian(e, std::span<const double>(x.data(), std::size_t(fem::dim(g))));
        if (d > 0) continue;
        d < 0 ? ++b.negative : ++b.zero;
        if (b.v < 0 || d < b.d) b = Bad{e, v, b.negative, b.zero, b.vertices, d};
      }
      if (b.v >= 0 && bad++ == 0) first = b;
    }
    if (bad > 0) {
      const std::string others =
          bad > 1 ? detail::concat(" (", bad, " elements of the mesh have det J <= 0 at a vertex)") : std::string();
      const std::string at = detail::concat("det J = ", first.d, " at its vertex ", first.v);
      if (first.negative == first.vertices)
        fail(src, ": ", elem(first.e), " is inverted: ", at, ", negative at all its ", first.vertices,
             " vertices; list the vertices in Gmsh order with positive orientation", others);
      if (first.negative > 0)
        fail(src, ": ", elem(first.e), " is inverted at ", first.negative, " of its ", first.vertices,
             " vertices (tangled): ", at, "; no vertex order mends a tangled element: repair or regenerate the mesh",
             others);
      fail(src, ": ", elem(first.e), " is degenerate: ", at,
           first.zero > 1 ? detail::concat(" and zero or undefined at ", first.zero - 1, " other vertices") : std::string(),
           others);
    }
  }
  // repeated elements (the same vertices in any order): the sorted vertex ids, hashed
  const auto sorted = [&](index_t e) {
    const auto vs = element_vertices(e);
    std::array<index_t, 8> k{};
    k.fill(-1);
    for (std::size_t i = 0; i < vs.size() && i < k.size(); ++i) {  // insertion sort of at most 8 ids
      std::size_t j = i;
      for (; j > 0 && k[j - 1] > vs[i]; --j) k[j] = k[j - 1];
      k[j] = vs[i];
    }
    return k;
  };
  std::vector<std::pair<std::uint64_t, index_t>> h(static_cast<std::size_t>(num_elements()));
  for (index_t e = 0; e < num_elements(); ++e) {
    std::uint64_t x = detail::kHashSeed;
    for (index_t v : sorted(e)) x = detail::hash_mix(x, std::uint64_t(v));
    h[std::size_t(e)] = {x, e};
  }
  detail::for_each_repeat(std::move(h), [&](index_t a, index_t b) { return sorted(a) == sorted(b); },
                          [&](index_t later, index_t earlier) -> bool {
                            fail(src, ": ", elem(later), " has the same vertices as ", elem(earlier),
                                 ": a repeated element (the mesh would count its volume twice)");
                          });
}

}  // namespace tessera::fem
