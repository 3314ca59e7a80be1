// Mesh: validation and the geometry of the element maps (first-order from the vertices, or
// order k from the nodes).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

#include "../core/repeats.hpp"
#include "tessera/core/error.hpp"
#include "tessera/fem/basis.hpp"
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

// Tables of the order-k map of geometry g, built once: the gradients of the basis at the
// nodes (for det J at the nodes) and at the points of a rule of degree dim * k (det J of an
// order-k map is a polynomial of at most that degree, so measures are exact).
struct CurvedTables {
  const H1Basis* basis = nullptr;
  QuadratureRule rule;
  Array<double, 3> Gq, Gn;  // (points, nodes, dim)
};

const CurvedTables& curved_tables(Geometry g, int k) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, std::unique_ptr<CurvedTables>> cache;
  const H1Basis& basis = geometry_basis(g, k);
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[{static_cast<int>(g), k}];
  if (!slot) {
    auto t = std::make_unique<CurvedTables>();
    t->basis = &basis;
    t->rule = quadrature(g, fem::dim(g) * k).to_host();
    t->Gq = basis.gradients(t->rule.points);
    t->Gn = basis.gradients(basis.nodes());
    slot = std::move(t);
  }
  return *slot;
}

// J of the map with nodes x (n x sdim, node-major) and basis gradients grad (n x d): sums
// over the differences to node 0 (the gradients sum to zero), so that the rounding is
// relative to the element's size, not to its coordinates.
std::array<std::array<double, 3>, 3> nodal_jacobian(std::span<const double> x, int sdim, int d, const double* grad) {
  std::array<std::array<double, 3>, 3> J{};
  const std::size_t n = x.size() / std::size_t(sdim);
  for (std::size_t i = 1; i < n; ++i)
    for (int r = 0; r < sdim; ++r) {
      const double dxr = x[i * std::size_t(sdim) + std::size_t(r)] - x[std::size_t(r)];
      for (int c = 0; c < d; ++c) J[std::size_t(r)][std::size_t(c)] += dxr * grad[i * std::size_t(d) + std::size_t(c)];
    }
  return J;
}

}  // namespace

const H1Basis& geometry_basis(Geometry g, int k) {
  TESSERA_REQUIRE(k >= 1 && k <= max_geometry_order, "fem::geometry_basis: geometry order ", k, " is outside 1..",
                  max_geometry_order);
  static std::mutex mutex;
  static std::map<std::pair<int, int>, std::unique_ptr<H1Basis>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[{static_cast<int>(g), k}];
  if (!slot) slot = std::make_unique<H1Basis>(g, k);
  return *slot;
}

std::array<std::array<double, 3>, 3> Mesh::jacobian(index_t e, std::span<const double> xi) const {
  TESSERA_REQUIRE(e >= 0 && e < num_elements(), "fem::Mesh::jacobian: element ", e, " is out of range (", num_elements(),
                  " elements)");
  const Geometry g = element_geometry(e);
  TESSERA_REQUIRE(int(xi.size()) == fem::dim(g), "fem::Mesh::jacobian: a ", name(g), " needs ", fem::dim(g),
                  " reference coordinates, got ", xi.size());
  if (has_nodes()) {
    const H1Basis& b = geometry_basis(g, nodes_order_);
    std::vector<double> val(std::size_t(b.size())), grad(std::size_t(b.size() * b.dim()));
    b.eval(xi, val, grad);
    return nodal_jacobian(element_nodes(e), sdim_, fem::dim(g), grad.data());
  }
  const int nv = fem::num_vertices(g), d = fem::dim(g);
  double val[8], grad[8 * 3], x[8 * 3];
  vertex_shape_functions(g, xi, val, std::span<double>(grad, std::size_t(nv * d)));
  const auto vs = element_vertices(e);
  for (int v = 0; v < nv; ++v)
    for (int r = 0; r < sdim_; ++r) x[v * sdim_ + r] = vertex(vs[std::size_t(v)], r);
  // the vertices are the nodes of the first-order map
  return nodal_jacobian(std::span<const double>(x, std::size_t(nv * sdim_)), sdim_, d, grad);
}

std::array<double, 3> Mesh::map(index_t e, std::span<const double> xi) const {
  TESSERA_REQUIRE(e >= 0 && e < num_elements(), "fem::Mesh::map: element ", e, " is out of range (", num_elements(),
                  " elements)");
  const Geometry g = element_geometry(e);
  TESSERA_REQUIRE(int(xi.size()) == fem::dim(g), "fem::Mesh::map: a ", name(g), " needs ", fem::dim(g),
                  " reference coordinates, got ", xi.size());
  if (has_nodes()) {
    const H1Basis& b = geometry_basis(g, nodes_order_);
    std::vector<double> val(std::size_t(b.size()));
    b.eval(xi, val);
    const auto x = element_nodes(e);
    std::array<double, 3> out{};
    for (std::size_t i = 0; i < val.size(); ++i)
      for (int r = 0; r < sdim_; ++r) out[std::size_t(r)] += val[i] * x[i * std::size_t(sdim_) + std::size_t(r)];
    return out;
  }
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
  if (has_nodes()) {
    TESSERA_REQUIRE(e >= 0 && e < num_elements(), "fem::Mesh::element_measure: element ", e, " is out of range (",
                    num_elements(), " elements)");
    const CurvedTables& t = curved_tables(g, nodes_order_);
    const int d = fem::dim(g);
    const auto x = element_nodes(e);
    double s = 0;
    for (index_t q = 0; q < t.rule.size(); ++q)
      s += t.rule.weights(q) * det_of(nodal_jacobian(x, sdim_, d, &t.Gq(q, 0, 0)), sdim_, d);
    return s;
  }
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
    if (has_nodes()) {
      const CurvedTables& t = curved_tables(g, nodes_order_);
      for (index_t i = 0; i < t.basis->size(); ++i) {
        const double d = det_of(nodal_jacobian(element_nodes(e), sdim_, fem::dim(g), &t.Gn(i, 0, 0)), sdim_, fem::dim(g));
        r[0] = std::min(r[0], d), r[1] = std::max(r[1], d);
      }
      continue;
    }
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

namespace {

// The size of an element for relative tolerances: the largest extent of its nodes.
double node_extent(std::span<const double> x, int sdim) {
  double h = 0;
  for (int r = 0; r < sdim; ++r) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::size_t i = std::size_t(r); i < x.size(); i += std::size_t(sdim)) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
    h = std::max(h, hi - lo);
  }
  return h;
}

template <class Name>
void validate_nodes(const Mesh& m, const std::string& src, const Name& elem) {
  const int sdim = m.space_dim(), order = m.nodes_order();
  // finite nodes, and the map at each reference vertex (a node of the lattice) equal to the
  // element's vertex: readers convert node sets by interpolation, which rounds, so the test
  // is relative (1e-8 of the element's extent)
  for (index_t e = 0; e < m.num_elements(); ++e) {
    const Geometry g = m.element_geometry(e);
    const auto x = m.element_nodes(e);
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!std::isfinite(x[i]))
        fail(src, ": ", elem(e), " has a non-finite coordinate ", i % std::size_t(sdim), " (", x[i], ") at its node ",
             i / std::size_t(sdim));
    const H1Basis& b = geometry_basis(g, order);
    const double tol = 1e-8 * node_extent(x, sdim);
    const auto vs = m.element_vertices(e);
    for (int v = 0; v < fem::num_vertices(g); ++v) {
      const auto xi = reference_vertex(g, v);
      const auto xm = m.map(e, std::span<const double>(xi.data(), std::size_t(b.dim())));
      double dist = 0;
      for (int r = 0; r < sdim; ++r) dist = std::max(dist, std::abs(xm[std::size_t(r)] - m.vertex(vs[std::size_t(v)], r)));
      if (!(dist <= tol))
        fail(src, ": ", elem(e), ": its order-", order, " map puts reference vertex ", v, " at a distance ", dist,
             " from its vertex ", vs[std::size_t(v)],
             "; the nodes must pass through the element's vertices (are the nodes in H1Basis order?)");
    }
  }
}

template <class Name>
void validate_curved_orientation(const Mesh& m, const std::string& src, const Name& elem) {
  const int sdim = m.space_dim(), order = m.nodes_order();
  // det J > 0 at every node and every point of the degree dim * k rule; the first element
  // that fails is named with where (all points negative: a reversed vertex order; some: a
  // tangled element, e.g. a boundary node pulled across the opposite side)
  index_t bad = 0, first = -1;
  int first_neg = 0, first_total = 0;
  double first_d = 0;
  std::string first_at;
  for (index_t e = 0; e < m.num_elements(); ++e) {
    const Geometry g = m.element_geometry(e);
    const CurvedTables& t = curved_tables(g, order);
    const int d = fem::dim(g);
    const auto x = m.element_nodes(e);
    const index_t nn = t.basis->size(), nq = t.rule.size();
    int neg = 0;
    double worst = std::numeric_limits<double>::infinity();
    index_t worst_i = -1;
    for (index_t i = 0; i < nn + nq; ++i) {
      const double* grad = i < nn ? &t.Gn(i, 0, 0) : &t.Gq(i - nn, 0, 0);
      const double dj = det_of(nodal_jacobian(x, sdim, d, grad), sdim, d);
      if (dj > 0) continue;
      ++neg;
      if (worst_i < 0 || dj < worst) worst = dj, worst_i = i;
    }
    if (neg == 0) continue;
    if (bad++ == 0) {
      first = e, first_neg = neg, first_total = int(nn + nq), first_d = worst;
      std::ostringstream at;
      const bool node = worst_i < nn;
      at << (node ? "node " : "quadrature point ") << (node ? worst_i : worst_i - nn) << " (xi = ";
      for (int c = 0; c < d; ++c)
        at << (c ? ", " : "") << (node ? t.basis->nodes()(worst_i, c) : t.rule.points(worst_i - nn, c));
      at << ")";
      first_at = at.str();
    }
  }
  if (bad == 0) return;
  const std::string others =
      bad > 1 ? detail::concat(" (", bad, " elements of the mesh have det J <= 0 somewhere)") : std::string();
  if (first_neg == first_total)
    fail(src, ": ", elem(first), " is inverted: its order-", order, " map has det J = ", first_d, " at ",
         first_at, " and det J <= 0 at all its ", first_total,
         " nodes and quadrature points; list the vertices and nodes with positive orientation", others);
  fail(src, ": ", elem(first), " is tangled: its order-", order, " map has det J = ", first_d, " <= 0 at ",
       first_at, " (", first_neg, " of its ", first_total,
       " nodes and quadrature points); move its curved nodes (a curved side must not cross the element), or refine "
       "the mesh before curving it",
       others);
}

}  // namespace

std::vector<double> map_nodes(const Mesh& mesh, int order, const PointMap& f) {
  TESSERA_REQUIRE(order >= 1 && order <= max_geometry_order, "fem::map_nodes: geometry order ", order,
                  " is outside 1..", max_geometry_order);
  const int sdim = mesh.space_dim();
  std::vector<double> out;
  for (index_t e = 0; e < mesh.num_elements(); ++e) {
    const Geometry g = mesh.element_geometry(e);
    const H1Basis& b = geometry_basis(g, order);
    for (index_t i = 0; i < b.size(); ++i) {
      std::array<double, 3> xi{};
      for (int c = 0; c < b.dim(); ++c) xi[std::size_t(c)] = b.nodes()(i, c);
      std::array<double, 3> x = mesh.map(e, std::span<const double>(xi.data(), std::size_t(b.dim())));
      if (f) x = f(x);
      out.insert(out.end(), x.begin(), x.begin() + sdim);
    }
  }
  return out;
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
  if (has_nodes()) validate_nodes(*this, src, elem);
  if (sdim_ == dim_ && has_nodes()) {
    validate_curved_orientation(*this, src, elem);
  } else if (sdim_ == dim_) {  // embedded elements have no orientation
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
