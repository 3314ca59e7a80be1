// Generators of curved meshes: the disc, the annulus and the ball, each a straight multi-block
// mesh whose order-k nodes interpolate a smooth map of every block onto the curved domain.
#include <array>
#include <cmath>
#include <map>
#include <numbers>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

namespace {

using Point = std::array<double, 3>;

/// Half-width of the inner square / cube of the disc and the ball: the inner cells (0.8 / n
/// wide) and the outer ones (0.6 / n radially) are of similar size.
constexpr double kInner = 0.4;

/// Where the ball's tetrahedra put the added centre of an outer block's hexahedron: a quarter
/// of the way out radially (not half): the sphere-side tetrahedra then stay positive (det J
/// > 0 at every node for n >= 1, k = 1..3), which the hexahedron's centre does not achieve for
/// n <= 2, where the curved face's chord passes below it.
constexpr double kSteiner = 0.25;

/// Vertices of a straight mesh, merged by their exact coordinates: the blocks compute shared
/// points with the same formulas (and exact rotations), so equal points are bitwise equal.
struct VertexMerge {
  Mesh& mesh;
  std::map<Point, index_t> ids;
  index_t operator()(Point p) {
    for (double& c : p) c += 0.0;  // -0 -> +0
    const auto it = ids.find(p);
    if (it != ids.end()) return it->second;
    const index_t v = mesh.add_vertex(std::span<const double>(p.data(), std::size_t(mesh.space_dim())));
    ids.emplace(p, v);
    return v;
  }
};

/// (2 j - n) / n in [-1, 1], exactly antisymmetric: t(n - j) == -t(j).
double lattice_t(int j, int n) { return double(2 * j - n) / double(n); }

/// The outer blocks' frames: rotations (signed permutations of determinant 1) taking the
/// block on the +x side to the block m; in 2-D the four quarter turns.
Point rotate(int m, const Point& p, int dim, bool inverse) {
  const double x = p[0], y = p[1], z = p[2];
  if (dim == 2) {
    const int q = inverse ? (4 - m) % 4 : m;
    switch (q) {
      case 0: return {x, y, 0};
      case 1: return {-y, x, 0};
      case 2: return {-x, -y, 0};
      default: return {y, -x, 0};
    }
  }
  if (!inverse) {
    switch (m) {
      case 0: return {x, y, z};
      case 1: return {-x, -y, z};
      case 2: return {-y, x, z};
      case 3: return {y, -x, z};
      case 4: return {-z, y, x};
      default: return {z, y, -x};
    }
  }
  switch (m) {  // the transposes
    case 0: return {x, y, z};
    case 1: return {-x, -y, z};
    case 2: return {y, -x, z};
    case 3: return {-y, x, z};
    case 4: return {z, y, -x};
    default: return {-z, y, x};
  }
}

/// The smooth map of a block onto the disc / ball: identity on the inner block (-1); on an
/// outer block, in its +x frame, the point (x, x t[, x u]) with x in [a, 1] goes to the blend
/// (1 - s) (a, a t[, a u]) + s P(t[, u]), s = (x - a) / (1 - a), where P is the point of the
/// circle at angle t pi / 4 (the sphere: the normalised (1, tan(t pi / 4), tan(u pi / 4))).
Point block_map(int block, const Point& p, int dim) {
  if (block < 0) return p;
  const Point l = rotate(block, p, dim, true);
  const double a = kInner, s = (l[0] - a) / (1 - a), t = l[1] / l[0];
  const double q = std::numbers::pi / 4;
  Point out{};
  if (dim == 2) {
    out = {(1 - s) * a + s * std::cos(t * q), (1 - s) * a * t + s * std::sin(t * q), 0};
  } else {
    const double u = l[2] / l[0], ty = std::tan(t * q), tz = std::tan(u * q);
    const double r = std::sqrt(1 + ty * ty + tz * tz);
    out = {(1 - s) * a + s / r, (1 - s) * a * t + s * ty / r, (1 - s) * a * u + s * tz / r};
  }
  return rotate(block, out, dim, false);
}

/// Nodes of order k: each element's straight map at the basis nodes, through its block's map.
void curve(Mesh& m, const std::vector<int>& block, int k) {
  m.set_nodes(k, map_nodes(m, k));
  std::vector<double> nodes(m.nodes().begin(), m.nodes().end());
  const int sd = m.space_dim();
  for (index_t e = 0; e < m.num_elements(); ++e) {
    const auto x = m.element_nodes(e);
    const std::size_t off = std::size_t(x.data() - m.nodes().data());
    for (std::size_t i = 0; i < x.size(); i += std::size_t(sd)) {
      Point p{};
      for (int r = 0; r < sd; ++r) p[std::size_t(r)] = x[i + std::size_t(r)];
      const Point c = block_map(block[std::size_t(e)], p, sd);
      for (int r = 0; r < sd; ++r) nodes[off + i + std::size_t(r)] = c[std::size_t(r)];
    }
  }
  // the vertices follow the map (exact on the circle / sphere)
  auto coords = m.coordinates();
  std::vector<char> done(std::size_t(m.num_vertices()), 0);
  for (index_t e = 0; e < m.num_elements(); ++e) {
    const auto vs = m.element_vertices(e);
    for (std::size_t v = 0; v < vs.size(); ++v) {
      if (done[std::size_t(vs[v])]) continue;
      done[std::size_t(vs[v])] = 1;
      Point p{};
      for (int r = 0; r < sd; ++r) p[std::size_t(r)] = m.vertex(vs[v], r);
      const Point c = block_map(block[std::size_t(e)], p, sd);
      for (int r = 0; r < sd; ++r) coords[std::size_t(vs[v] * sd + r)] = c[std::size_t(r)];
    }
  }
  m.set_nodes(k, std::move(nodes));
}

void check_args(const char* what, int n, int order) {
  TESSERA_REQUIRE(n >= 1, "fem::", what, ": n = ", n, " must be at least 1");
  TESSERA_REQUIRE(order >= 1 && order <= max_geometry_order, "fem::", what, ": order ", order, " is outside 1..",
                  max_geometry_order);
}

}  // namespace

Mesh disk_mesh(Geometry g, int n, int order) {
  check_args("disk_mesh", n, order);
  TESSERA_REQUIRE(g == Geometry::Quadrilateral || g == Geometry::Triangle, "fem::disk_mesh: ", name(g),
                  "s cannot mesh a disc (triangle or quadrilateral)");
  Mesh m(2);
  VertexMerge vid{m, {}};
  std::vector<int> block;
  const double a = kInner;
  auto quad = [&](int b, index_t v0, index_t v1, index_t v2, index_t v3) {
    if (g == Geometry::Quadrilateral) {
      m.add_element(g, {v0, v1, v2, v3});
      block.push_back(b);
    } else {
      m.add_element(g, {v0, v1, v2});
      m.add_element(g, {v0, v2, v3});
      block.push_back(b), block.push_back(b);
    }
  };
  // inner square: (a t_i, a t_j)
  auto inner = [&](int i, int j) { return vid({a * lattice_t(i, n), a * lattice_t(j, n), 0}); };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) quad(-1, inner(i, j), inner(i + 1, j), inner(i + 1, j + 1), inner(i, j + 1));
  // outer blocks: (x_i, x_i t_j) in the block's frame, x_i from a to 1
  for (int b = 0; b < 4; ++b) {
    auto outer = [&](int i, int j) {
      const double x = i == 0 ? a : a + (1 - a) * double(i) / double(n);
      return vid(rotate(b, {x, x * lattice_t(j, n), 0}, 2, false));
    };
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) quad(b, outer(i, j), outer(i + 1, j), outer(i + 1, j + 1), outer(i, j + 1));
    for (int j = 0; j < n; ++j) m.add_boundary(Geometry::Segment, {outer(n, j), outer(n, j + 1)}, 1);
  }
  curve(m, block, order);
  return m;
}

Mesh annulus_mesh(int n, int order) {
  check_args("annulus_mesh", n, order);
  const double r0 = 0.5, r1 = 1.0;
  const int na = 8 * n;
  Mesh m(2);
  const double two_pi = 2 * std::numbers::pi;
  for (int j = 0; j < na; ++j)
    for (int i = 0; i <= n; ++i) {
      const double r = r0 + (r1 - r0) * double(i) / double(n), th = two_pi * double(j) / double(na);
      m.add_vertex({r * std::cos(th), r * std::sin(th)});
    }
  auto V = [&](int i, int j) { return index_t((j % na) * (n + 1) + i); };
  for (int j = 0; j < na; ++j)
    for (int i = 0; i < n; ++i) m.add_element(Geometry::Quadrilateral, {V(i, j), V(i + 1, j), V(i + 1, j + 1), V(i, j + 1)});
  for (int j = 0; j < na; ++j) {
    m.add_boundary(Geometry::Segment, {V(0, j + 1), V(0, j)}, 1);
    m.add_boundary(Geometry::Segment, {V(n, j), V(n, j + 1)}, 2);
  }
  // nodes from the polar coordinates of each element's (r, theta) rectangle
  const H1Basis& b = geometry_basis(Geometry::Quadrilateral, order);
  std::vector<double> nodes;
  nodes.reserve(std::size_t(m.num_elements() * b.size() * 2));
  for (int j = 0; j < na; ++j)
    for (int i = 0; i < n; ++i)
      for (index_t q = 0; q < b.size(); ++q) {
        const double r = r0 + (r1 - r0) * (double(i) + b.nodes()(q, 0)) / double(n);
        const double th = two_pi * (double(j) + b.nodes()(q, 1)) / double(na);
        nodes.push_back(r * std::cos(th));
        nodes.push_back(r * std::sin(th));
      }
  m.set_nodes(order, std::move(nodes));
  return m;
}

Mesh ball_mesh(Geometry g, int n, int order) {
  check_args("ball_mesh", n, order);
  TESSERA_REQUIRE(g == Geometry::Hexahedron || g == Geometry::Tetrahedron, "fem::ball_mesh: ", name(g),
                  "s cannot mesh a ball (tetrahedron or hexahedron)");
  Mesh m(3);
  VertexMerge vid{m, {}};
  std::vector<int> block;
  const double a = kInner;
  // a hexahedron (Gmsh order); tetrahedra: 12 around an added centre, two per face, each face
  // cut along the diagonal through its smallest vertex id so that neighbours agree
  auto hex = [&](int b, const std::array<index_t, 8>& v, bool outer_face) {
    if (g == Geometry::Hexahedron) {
      m.add_element(g, v);
      block.push_back(b);
      if (outer_face) m.add_boundary(Geometry::Quadrilateral, {v[1], v[2], v[6], v[5]}, 1);
      return;
    }
    // the centre: the trilinear map of the hexahedron at (sc, 1/2, 1/2), sc along v0 -> v1
    // (the radial direction of the outer blocks; see kSteiner)
    const double sc = b < 0 ? 0.5 : kSteiner;
    Point c{};
    for (int i = 0; i < 8; ++i) {
      const auto r = reference_vertex(Geometry::Hexahedron, i);
      const double w = (r[0] > 0 ? sc : 1 - sc) * 0.25;
      for (int q = 0; q < 3; ++q) c[std::size_t(q)] += w * m.vertex(v[std::size_t(i)], q);
    }
    const index_t centre = vid(c);
    for (int f = 0; f < 6; ++f) {
      const auto fv = face_vertices(Geometry::Hexahedron, f);
      index_t q[4];
      for (int i = 0; i < 4; ++i) q[i] = v[std::size_t(fv[std::size_t(i)])];
      int s = 0;
      for (int i = 1; i < 4; ++i)
        if (q[i] < q[s]) s = i;
      // triangles (q_s, q_s+1, q_s+2) and (q_s, q_s+2, q_s+3): counter-clockwise from outside
      const index_t t[2][3] = {{q[s], q[(s + 1) % 4], q[(s + 2) % 4]}, {q[s], q[(s + 2) % 4], q[(s + 3) % 4]}};
      for (const auto& tri : t) {
        m.add_element(g, {tri[0], tri[2], tri[1], centre});  // centre inside: positive orientation
        block.push_back(b);
        if (outer_face && f == 3) m.add_boundary(Geometry::Triangle, {tri[0], tri[1], tri[2]}, 1);
      }
    }
  };
  auto inner = [&](int i, int j, int l) {
    return vid({a * lattice_t(i, n), a * lattice_t(j, n), a * lattice_t(l, n)});
  };
  for (int l = 0; l < n; ++l)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        hex(-1, {inner(i, j, l), inner(i + 1, j, l), inner(i + 1, j + 1, l), inner(i, j + 1, l), inner(i, j, l + 1),
                 inner(i + 1, j, l + 1), inner(i + 1, j + 1, l + 1), inner(i, j + 1, l + 1)},
            false);
  for (int b = 0; b < 6; ++b) {
    auto outer = [&](int i, int j, int l) {
      const double x = i == 0 ? a : a + (1 - a) * double(i) / double(n);
      return vid(rotate(b, {x, x * lattice_t(j, n), x * lattice_t(l, n)}, 3, false));
    };
    for (int l = 0; l < n; ++l)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          hex(b, {outer(i, j, l), outer(i + 1, j, l), outer(i + 1, j + 1, l), outer(i, j + 1, l), outer(i, j, l + 1),
                  outer(i + 1, j, l + 1), outer(i + 1, j + 1, l + 1), outer(i, j + 1, l + 1)},
              i == n - 1);
  }
  curve(m, block, order);
  return m;
}

}  // namespace tessera::fem
