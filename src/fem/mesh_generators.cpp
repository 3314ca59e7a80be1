// Mesh generators (structured boxes of every geometry, perturbed or not), uniform
// refinement, and the generator spec parser.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

namespace {

/// Largest accepted perturbation (fraction of the cell size per direction).
constexpr double max_perturb = 0.3;

// Uniform double in [0, 1) from two raw 32-bit draws (the distribution classes of <random>
// are implementation-defined; this is the same on every platform).
double uniform01(std::mt19937& g) {
  const std::uint64_t hi = g() >> 5, lo = g() >> 6;  // 27 + 26 bits
  return double((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}

// Smallest det J over the vertices of element e.
double min_vertex_det(const Mesh& m, index_t e) {
  const Geometry g = m.element_geometry(e);
  double d = 1e300;
  for (int v = 0; v < num_vertices(g); ++v) {
    const auto x = reference_vertex(g, v);
    d = std::min(d, m.det_jacobian(e, std::span<const double>(x.data(), std::size_t(dim(g)))));
  }
  return d;
}

void perturb_interior(Mesh& m, const std::array<int, 3>& n, const std::array<double, 3>& h, int d,
                      const BoxOptions& opt) {
  if (opt.perturb == 0) return;
  const index_t nv = m.num_vertices();
  std::vector<double> original(m.coordinates().begin(), m.coordinates().end());
  std::vector<char> interior(std::size_t(nv), 0);
  std::mt19937 gen(opt.seed);
  auto coords = m.coordinates();
  for (index_t v = 0; v < nv; ++v) {
    // Vertex (i, j, k) is interior when no index is on the box boundary.
    index_t r = v;
    bool in = true;
    for (int c = 0; c < d; ++c) {
      const index_t i = r % (n[std::size_t(c)] + 1);
      r /= (n[std::size_t(c)] + 1);
      if (i == 0 || i == n[std::size_t(c)]) in = false;
    }
    interior[std::size_t(v)] = in;
    for (int c = 0; c < d; ++c) {
      const double u = uniform01(gen);  // drawn for every vertex: the field does not depend on which are interior
      if (in) coords[std::size_t(v * d + c)] += opt.perturb * h[std::size_t(c)] * (2 * u - 1);
    }
  }
  // Undo displacements around elements that became inverted or too flat (det J below a
  // quarter of the unperturbed value), until none is left; unperturbed elements are valid.
  double ref = 1;
  for (int c = 0; c < d; ++c) ref *= h[std::size_t(c)];
  // (det J of every unperturbed element is this product: quads/hexes by construction,
  // triangles and Kuhn tets because their edges from vertex 0 are sums of cell edges.)
  for (int pass = 0; pass < 100; ++pass) {
    bool changed = false;
    for (index_t e = 0; e < m.num_elements(); ++e) {
      if (min_vertex_det(m, e) > 0.25 * ref) continue;
      for (index_t v : m.element_vertices(e))
        for (int c = 0; c < d; ++c) {
          auto& x = coords[std::size_t(v * d + c)];
          if (x != original[std::size_t(v * d + c)]) x = original[std::size_t(v * d + c)], changed = true;
        }
    }
    if (!changed) break;
  }
}

}  // namespace

Mesh box_mesh(Geometry g, std::array<int, 3> n, const BoxOptions& opt) {
  const int d = dim(g);
  for (int c = 0; c < d; ++c)
    if (n[std::size_t(c)] < 1)
      fail("fem::box_mesh: ", n[std::size_t(c)], " cells in direction ", c, " (need at least 1 per direction)");
  if (!(opt.perturb >= 0 && opt.perturb <= max_perturb))
    fail("fem::box_mesh: perturb = ", opt.perturb, " is outside [0, ", max_perturb,
         "] (the displacement of interior vertices as a fraction of the cell size; use a value in that range)");
  for (int c = 0; c < d; ++c)
    if (!(opt.size[std::size_t(c)] > 0 && std::isfinite(opt.size[std::size_t(c)])))
      fail("fem::box_mesh: box size ", opt.size[std::size_t(c)], " in direction ", c, " must be positive and finite");
  const index_t nx = n[0], ny = d > 1 ? n[1] : 1, nz = d > 2 ? n[2] : 1;
  const index_t cells = nx * ny * nz;
  if (cells > (index_t(1) << 31)) fail("fem::box_mesh: ", cells, " cells is more than this generator builds (2^31)");
  std::array<double, 3> h{opt.size[0] / double(nx), d > 1 ? opt.size[1] / double(ny) : 1, d > 2 ? opt.size[2] / double(nz) : 1};
  Mesh m(d);
  const index_t vx = nx + 1, vy = d > 1 ? ny + 1 : 1, vz = d > 2 ? nz + 1 : 1;
  const int per_cell = g == Geometry::Triangle ? 2 : g == Geometry::Tetrahedron ? 6 : 1;
  m.reserve(vx * vy * vz, cells * per_cell, 2 * (nx * ny + ny * nz + nx * nz) * 2);
  for (index_t k = 0; k < vz; ++k)
    for (index_t j = 0; j < vy; ++j)
      for (index_t i = 0; i < vx; ++i) {
        const double x[3] = {double(i) * h[0], double(j) * h[1], double(k) * h[2]};
        m.add_vertex(std::span<const double>(x, std::size_t(d)));
      }
  auto V = [&](index_t i, index_t j, index_t k) { return (k * vy + j) * vx + i; };

  switch (g) {
    case Geometry::Segment:
      for (index_t i = 0; i < nx; ++i) m.add_element(g, {i, i + 1});
      break;
    case Geometry::Quadrilateral:
    case Geometry::Triangle:
      for (index_t j = 0; j < ny; ++j)
        for (index_t i = 0; i < nx; ++i) {
          const index_t a = V(i, j, 0), b = V(i + 1, j, 0), c = V(i + 1, j + 1, 0), e = V(i, j + 1, 0);
          if (g == Geometry::Quadrilateral) {
            m.add_element(g, {a, b, c, e});
          } else {
            m.add_element(g, {a, b, c});
            m.add_element(g, {a, c, e});
          }
        }
      for (index_t j = 0; j < ny; ++j) {
        m.add_boundary(Geometry::Segment, {V(0, j + 1, 0), V(0, j, 0)}, 1);
        m.add_boundary(Geometry::Segment, {V(nx, j, 0), V(nx, j + 1, 0)}, 2);
      }
      for (index_t i = 0; i < nx; ++i) {
        m.add_boundary(Geometry::Segment, {V(i, 0, 0), V(i + 1, 0, 0)}, 3);
        m.add_boundary(Geometry::Segment, {V(i + 1, ny, 0), V(i, ny, 0)}, 4);
      }
      break;
    case Geometry::Hexahedron:
    case Geometry::Tetrahedron: {
      const bool hex = g == Geometry::Hexahedron;
      for (index_t k = 0; k < nz; ++k)
        for (index_t j = 0; j < ny; ++j)
          for (index_t i = 0; i < nx; ++i) {
            // Corner (a, b, c) of the cube, a, b, c in {0, 1}.
            auto C = [&](int a, int b, int c) { return V(i + a, j + b, k + c); };
            if (hex) {
              m.add_element(g, {C(0, 0, 0), C(1, 0, 0), C(1, 1, 0), C(0, 1, 0), C(0, 0, 1), C(1, 0, 1), C(1, 1, 1), C(0, 1, 1)});
              continue;
            }
            // Kuhn split along the diagonal (0,0,0)-(1,1,1): one tet per axis permutation;
            // every cube uses the same diagonal direction, so faces of neighbours match.
            static constexpr int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
            for (const auto& p : perms) {
              int a[3] = {0, 0, 0};
              index_t t[4];
              t[0] = C(0, 0, 0);
              a[p[0]] = 1;
              t[1] = C(a[0], a[1], a[2]);
              a[p[1]] = 1;
              t[2] = C(a[0], a[1], a[2]);
              t[3] = C(1, 1, 1);
              // Even permutations give a positive orientation with this vertex order.
              const bool even = (p[0] == 0 && p[1] == 1) || (p[0] == 1 && p[1] == 2) || (p[0] == 2 && p[1] == 0);
              if (!even) std::swap(t[1], t[2]);
              m.add_element(g, std::span<const index_t>(t, 4));
            }
          }
      // Boundary: each face square (p00, p10, p11, p01 in its own (u, v) axes, listed so that
      // the normal points out) becomes a quad, or two triangles split along p00-p11 as the
      // Kuhn tets split it (the diagonal joins the face's lowest and highest corners).
      auto face = [&](index_t p00, index_t p10, index_t p11, index_t p01, int attr, bool flip) {
        if (flip) std::swap(p10, p01);
        if (hex) {
          m.add_boundary(Geometry::Quadrilateral, {p00, p10, p11, p01}, attr);
        } else {
          m.add_boundary(Geometry::Triangle, {p00, p10, p11}, attr);
          m.add_boundary(Geometry::Triangle, {p00, p11, p01}, attr);
        }
      };
      for (index_t k = 0; k < nz; ++k)
        for (index_t j = 0; j < ny; ++j) {
          face(V(0, j, k), V(0, j + 1, k), V(0, j + 1, k + 1), V(0, j, k + 1), 1, true);
          face(V(nx, j, k), V(nx, j + 1, k), V(nx, j + 1, k + 1), V(nx, j, k + 1), 2, false);
        }
      for (index_t k = 0; k < nz; ++k)
        for (index_t i = 0; i < nx; ++i) {
          face(V(i, 0, k), V(i + 1, 0, k), V(i + 1, 0, k + 1), V(i, 0, k + 1), 3, false);
          face(V(i, ny, k), V(i + 1, ny, k), V(i + 1, ny, k + 1), V(i, ny, k + 1), 4, true);
        }
      for (index_t j = 0; j < ny; ++j)
        for (index_t i = 0; i < nx; ++i) {
          face(V(i, j, 0), V(i + 1, j, 0), V(i + 1, j + 1, 0), V(i, j + 1, 0), 5, true);
          face(V(i, j, nz), V(i + 1, j, nz), V(i + 1, j + 1, nz), V(i, j + 1, nz), 6, false);
        }
      break;
    }
  }
  perturb_interior(m, n, h, d, opt);
  return m;
}

namespace {

// Sorted, deduplicated keys with lookups by binary search: the new vertex of a key is
// base + its rank.
template <class Key>
struct KeySet {
  std::vector<Key> keys;
  void finish() {
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  index_t rank(const Key& k) const { return index_t(std::lower_bound(keys.begin(), keys.end(), k) - keys.begin()); }
};

using Edge = std::array<index_t, 2>;
using Quad = std::array<index_t, 4>;

Edge edge_key(index_t a, index_t b) { return a < b ? Edge{a, b} : Edge{b, a}; }
Quad quad_key(std::span<const index_t> v, const int* f) {
  Quad q{v[std::size_t(f[0])], v[std::size_t(f[1])], v[std::size_t(f[2])], v[std::size_t(f[3])]};
  std::sort(q.begin(), q.end());
  return q;
}

constexpr int quad_face[4] = {0, 1, 2, 3};

}  // namespace

Mesh refine_uniformly(const Mesh& mesh) {
  const int sdim = mesh.space_dim();
  TESSERA_REQUIRE(sdim > 0, "fem::refine_uniformly: the mesh is empty (no space dimension)");
  const index_t nv = mesh.num_vertices();
  // 1. Edges (elements and boundary faces) and quadrilateral faces.
  KeySet<Edge> edges;
  KeySet<Quad> quads;
  auto collect = [&](Geometry g, std::span<const index_t> v) {
    if (g == Geometry::Segment) {
      edges.keys.push_back(edge_key(v[0], v[1]));
      return;
    }
    for (int e = 0; e < num_edges(g); ++e) {
      const auto ev = edge_vertices(g, e);
      edges.keys.push_back(edge_key(v[std::size_t(ev[0])], v[std::size_t(ev[1])]));
    }
    if (g == Geometry::Quadrilateral) quads.keys.push_back(quad_key(v, quad_face));
    if (g == Geometry::Hexahedron)
      for (int f = 0; f < 6; ++f) quads.keys.push_back(quad_key(v, face_vertices(g, f).data()));
  };
  for (index_t e = 0; e < mesh.num_elements(); ++e) collect(mesh.element_geometry(e), mesh.element_vertices(e));
  for (index_t b = 0; b < mesh.num_boundary(); ++b) collect(mesh.boundary_geometry(b), mesh.boundary_vertices(b));
  edges.finish();
  quads.finish();
  const index_t edge_base = nv, quad_base = nv + index_t(edges.keys.size());
  const index_t hex_base = quad_base + index_t(quads.keys.size());

  Mesh out(sdim);
  const index_t nhex = mesh.num_elements(Geometry::Hexahedron);
  out.reserve(hex_base + nhex, mesh.num_elements() * (1 << mesh.dim()), mesh.num_boundary() * 4);
  auto X = [&](index_t v, int c) { return mesh.vertex(v, c); };
  std::array<double, 3> x{};
  auto add_avg = [&](std::span<const index_t> vs) {
    for (int c = 0; c < sdim; ++c) {
      double s = 0;
      for (index_t v : vs) s += X(v, c);
      x[std::size_t(c)] = s / double(vs.size());
    }
    out.add_vertex(std::span<const double>(x.data(), std::size_t(sdim)));
  };
  for (index_t v = 0; v < nv; ++v) {
    for (int c = 0; c < sdim; ++c) x[std::size_t(c)] = X(v, c);
    out.add_vertex(std::span<const double>(x.data(), std::size_t(sdim)));
  }
  for (const auto& e : edges.keys) add_avg(e);
  for (const auto& q : quads.keys) add_avg(q);
  for (index_t e = 0; e < mesh.num_elements(); ++e)
    if (mesh.element_geometry(e) == Geometry::Hexahedron) add_avg(mesh.element_vertices(e));

  auto mid = [&](index_t a, index_t b) { return edge_base + edges.rank(edge_key(a, b)); };
  index_t hex_count = 0;
  // 2. Children. `emit` adds an element or a boundary face.
  auto refine = [&](Geometry g, std::span<const index_t> v, int attr, bool boundary, index_t& hex_counter) {
    auto emit = [&](Geometry cg, std::initializer_list<index_t> cv) {
      if (boundary)
        out.add_boundary(cg, cv, attr);
      else
        out.add_element(cg, cv, attr);
    };
    switch (g) {
      case Geometry::Segment: {
        const index_t m = mid(v[0], v[1]);
        emit(g, {v[0], m});
        emit(g, {m, v[1]});
        break;
      }
      case Geometry::Triangle: {
        const index_t m01 = mid(v[0], v[1]), m12 = mid(v[1], v[2]), m20 = mid(v[2], v[0]);
        emit(g, {v[0], m01, m20});
        emit(g, {m01, v[1], m12});
        emit(g, {m20, m12, v[2]});
        emit(g, {m01, m12, m20});
        break;
      }
      case Geometry::Tetrahedron: {
        const index_t m01 = mid(v[0], v[1]), m02 = mid(v[0], v[2]), m03 = mid(v[0], v[3]);
        const index_t m12 = mid(v[1], v[2]), m13 = mid(v[1], v[3]), m23 = mid(v[2], v[3]);
        // Four corner tets: the parent scaled by 1/2 about a vertex (same orientation).
        emit(g, {v[0], m01, m02, m03});
        emit(g, {m01, v[1], m12, m13});
        emit(g, {m02, m12, v[2], m23});
        emit(g, {m03, m13, m23, v[3]});
        // The inner octahedron is cut along its shortest diagonal (Bey's m02-m13 on ties),
        // which keeps the children well shaped whatever the vertex order: Kuhn tets refine
        // into Kuhn tets. |m_ab - m_cd| = |v_a + v_b - v_c - v_d| / 2.
        auto diag2 = [&](int a, int b, int c, int d) {
          double s = 0;
          for (int k = 0; k < sdim; ++k) {
            const double t = X(v[std::size_t(a)], k) + X(v[std::size_t(b)], k) - X(v[std::size_t(c)], k) - X(v[std::size_t(d)], k);
            s += t * t;
          }
          return s;
        };
        const double d02 = diag2(0, 2, 1, 3), d01 = diag2(0, 1, 2, 3), d03 = diag2(0, 3, 1, 2);
        // The diagonal (p, q) and the other four midpoints in cyclic order around it.
        index_t p = m02, q = m13, c[4] = {m01, m12, m23, m03};
        const double tie = 1 + 1e-10;  // rounding must not break the symmetry of exact ties
        if (d01 * tie < d02 && d01 <= d03 * tie) {
          p = m01, q = m23, c[0] = m02, c[1] = m03, c[2] = m13, c[3] = m12;
        } else if (d03 * tie < d02 && d03 * tie < d01) {
          p = m03, q = m12, c[0] = m01, c[1] = m02, c[2] = m23, c[3] = m13;
        }
        // Children (p, q, c_i, c_i+1) all have the same orientation: the sign of the
        // first relative to the parent's decides the order for all four.
        auto det4 = [&](index_t a, index_t b2, index_t c2, index_t d) {
          // Signed volume (times 6) from the new mesh's vertices (midpoints included).
          double e[3][3];
          for (int k = 0; k < 3; ++k) {
            e[0][k] = out.vertex(b2, k) - out.vertex(a, k);
            e[1][k] = out.vertex(c2, k) - out.vertex(a, k);
            e[2][k] = out.vertex(d, k) - out.vertex(a, k);
          }
          return e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) - e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
                 e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
        };
        const bool same = sdim < 3 || (det4(p, q, c[0], c[1]) > 0) == (det4(v[0], v[1], v[2], v[3]) > 0);
        for (int i = 0; i < 4; ++i) {
          if (same)
            emit(g, {p, q, c[i], c[(i + 1) % 4]});
          else
            emit(g, {p, q, c[(i + 1) % 4], c[i]});
        }
        break;
      }
      case Geometry::Quadrilateral:
      case Geometry::Hexahedron: {
        // Lattice points (i, j, k) in {0, 1, 2}^dim of the element: corners, edge midpoints,
        // face centres and the cell centre.
        const bool hex = g == Geometry::Hexahedron;
        const int nk = hex ? 3 : 1;
        index_t P[3][3][3];
        auto corner = [&](int i, int j, int k) {  // i, j, k in {0, 2}
          for (int c = 0; c < num_vertices(g); ++c) {
            const auto r = reference_vertex(g, c);
            if (int(r[0]) * 2 == i && int(r[1]) * 2 == j && int(r[2]) * 2 == k) return v[std::size_t(c)];
          }
          return index_t(-1);
        };
        for (int k = 0; k < nk; ++k)
          for (int j = 0; j < 3; ++j)
            for (int i = 0; i < 3; ++i) {
              const int ones = (i == 1) + (j == 1) + (k == 1);
              if (ones == 0) {
                P[k][j][i] = corner(i, j, k);
              } else if (ones == 1) {
                const int a0[3] = {i == 1 ? 0 : i, j == 1 ? 0 : j, k == 1 ? 0 : k};
                const int a1[3] = {i == 1 ? 2 : i, j == 1 ? 2 : j, k == 1 ? 2 : k};
                P[k][j][i] = mid(corner(a0[0], a0[1], a0[2]), corner(a1[0], a1[1], a1[2]));
              } else if (ones == 2 || !hex) {
                std::array<index_t, 4> f;
                int t = 0;
                for (int b = 0; b < 2; ++b)
                  for (int a = 0; a < 2; ++a) {
                    int c[3] = {i, j, k}, s = 0;
                    for (int q = 0; q < 3; ++q)
                      if (c[q] == 1) c[q] = 2 * (s++ == 0 ? a : b);
                    f[std::size_t(t++)] = corner(c[0], c[1], c[2]);
                  }
                std::sort(f.begin(), f.end());
                P[k][j][i] = quad_base + quads.rank(f);
              } else {
                P[k][j][i] = hex_base + hex_counter;
              }
            }
        if (hex) ++hex_counter;
        for (int c = 0; c < (hex ? 2 : 1); ++c)
          for (int b = 0; b < 2; ++b)
            for (int a = 0; a < 2; ++a) {
              if (hex)
                emit(g, {P[c][b][a], P[c][b][a + 1], P[c][b + 1][a + 1], P[c][b + 1][a], P[c + 1][b][a], P[c + 1][b][a + 1],
                         P[c + 1][b + 1][a + 1], P[c + 1][b + 1][a]});
              else
                emit(g, {P[0][b][a], P[0][b][a + 1], P[0][b + 1][a + 1], P[0][b + 1][a]});
            }
        break;
      }
    }
  };
  for (index_t e = 0; e < mesh.num_elements(); ++e)
    refine(mesh.element_geometry(e), mesh.element_vertices(e), mesh.element_attribute(e), false, hex_count);
  index_t unused = 0;
  for (index_t b = 0; b < mesh.num_boundary(); ++b)
    refine(mesh.boundary_geometry(b), mesh.boundary_vertices(b), mesh.boundary_attribute(b), true, unused);
  if (!mesh.has_nodes()) return out;

  // 3. A curved parent: each child is an affine piece of the parent's reference element, so
  // its nodes are the parent's map at the images of its reference nodes, and its vertices
  // (new midpoints and centres included) move onto the curved map. The children have the
  // parent's order and describe the same curved domain.
  const int k = mesh.nodes_order(), nch = 1 << mesh.dim();
  std::vector<double> nodes;
  nodes.reserve(std::size_t(out.num_elements()) * std::size_t(num_nodes(mesh.element_geometry(0), k) * sdim));
  auto coords = out.coordinates();
  std::vector<std::pair<index_t, std::array<double, 3>>> ref;  // the parent's vertex ids -> reference points
  index_t hex_seen = 0;
  for (index_t e = 0; e < mesh.num_elements(); ++e) {
    const Geometry g = mesh.element_geometry(e);
    const int d = dim(g), nvg = num_vertices(g);
    const auto v = mesh.element_vertices(e);
    ref.clear();
    auto avg = [&](std::initializer_list<int> corners) {
      std::array<double, 3> r{};
      for (int c : corners)
        for (int q = 0; q < 3; ++q) r[std::size_t(q)] += reference_vertex(g, c)[std::size_t(q)] / double(corners.size());
      return r;
    };
    for (int c = 0; c < nvg; ++c) ref.push_back({v[std::size_t(c)], reference_vertex(g, c)});
    for (int ed = 0; ed < num_edges(g); ++ed) {
      const auto ev = edge_vertices(g, ed);
      ref.push_back({mid(v[std::size_t(ev[0])], v[std::size_t(ev[1])]), avg({ev[0], ev[1]})});
    }
    if (g == Geometry::Quadrilateral) ref.push_back({quad_base + quads.rank(quad_key(v, quad_face)), avg({0, 1, 2, 3})});
    if (g == Geometry::Hexahedron) {
      for (int f = 0; f < 6; ++f) {
        const auto fv = face_vertices(g, f);
        ref.push_back({quad_base + quads.rank(quad_key(v, fv.data())), avg({fv[0], fv[1], fv[2], fv[3]})});
      }
      ref.push_back({hex_base + hex_seen++, {0.5, 0.5, 0.5}});
    }
    const H1Basis& b = geometry_basis(g, k);
    for (index_t c = e * nch; c < (e + 1) * nch; ++c) {
      const auto cv = out.element_vertices(c);
      std::array<std::array<double, 3>, 8> r{};  // the child's vertices in the parent's reference element
      for (int i = 0; i < nvg; ++i) {
        const auto it = std::find_if(ref.begin(), ref.end(), [&](const auto& p) { return p.first == cv[std::size_t(i)]; });
        TESSERA_REQUIRE(it != ref.end(), "fem::refine_uniformly: vertex ", cv[std::size_t(i)], " of child ", c,
                        " is not a vertex, midpoint or centre of its parent ", e);
        r[std::size_t(i)] = it->second;
        const auto x = mesh.map(e, std::span<const double>(it->second.data(), std::size_t(d)));
        for (int q = 0; q < sdim; ++q) coords[std::size_t(cv[std::size_t(i)] * sdim + q)] = x[std::size_t(q)];
      }
      double val[8];
      for (index_t n = 0; n < b.size(); ++n) {
        double xi[3] = {0, 0, 0}, xp[3] = {0, 0, 0};
        for (int q = 0; q < d; ++q) xi[q] = b.nodes()(n, q);
        vertex_shape_functions(g, std::span<const double>(xi, std::size_t(d)), std::span<double>(val, std::size_t(nvg)));
        for (int i = 0; i < nvg; ++i)
          for (int q = 0; q < d; ++q) xp[q] += val[i] * r[std::size_t(i)][std::size_t(q)];
        const auto x = mesh.map(e, std::span<const double>(xp, std::size_t(d)));
        nodes.insert(nodes.end(), x.begin(), x.begin() + sdim);
      }
    }
  }
  out.set_nodes(k, std::move(nodes));
  return out;
}

namespace {

int parse_int(const std::string& spec, const std::string& s, const char* what) {
  int v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    fail("mesh spec '", spec, "': ", what, " '", s, "' is not an integer");
  return v;
}

double parse_double(const std::string& spec, const std::string& s, const char* what) {
  std::istringstream is(s);
  double v;
  if (!(is >> v) || !is.eof()) fail("mesh spec '", spec, "': ", what, " '", s, "' is not a number");
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t a = 0;
  while (true) {
    const auto b = s.find(sep, a);
    out.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) break;
    a = b + 1;
  }
  return out;
}

}  // namespace

namespace {

/// disk:<tri|quad>:<n>, annulus:quad:<n>, ball:<tet|hex>:<n>, each with [:order=<k>][:refine=<r>].
Mesh curved_spec(const std::string& spec, const std::vector<std::string>& parts) {
  const std::string& kind = parts[0];
  if (parts.size() < 3)
    fail("mesh spec '", spec, "': expected ", kind, ":<geometry>:<n>[:order=<k>][:refine=<r>]");
  const std::string& gs = parts[1];
  Geometry g = Geometry::Segment;
  if (gs == "tri" || gs == "triangle") g = Geometry::Triangle;
  else if (gs == "quad" || gs == "quadrilateral") g = Geometry::Quadrilateral;
  else if (gs == "tet" || gs == "tetrahedron") g = Geometry::Tetrahedron;
  else if (gs == "hex" || gs == "hexahedron") g = Geometry::Hexahedron;
  const bool ok = kind == "disk" ? (g == Geometry::Triangle || g == Geometry::Quadrilateral)
                  : kind == "ball" ? (g == Geometry::Tetrahedron || g == Geometry::Hexahedron)
                                   : g == Geometry::Quadrilateral;
  if (!ok)
    fail("mesh spec '", spec, "': geometry '", gs, "' does not mesh a ", kind, " (valid: ",
         kind == "disk" ? "tri, quad" : kind == "ball" ? "tet, hex" : "quad", ")");
  const int n = parse_int(spec, parts[2], "cell count");
  if (n < 1 || n > 1000) fail("mesh spec '", spec, "': n = ", n, " is outside 1..1000");
  int order = 2, refine = 0;
  for (std::size_t i = 3; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    const std::string key = parts[i].substr(0, eq), val = eq == std::string::npos ? "" : parts[i].substr(eq + 1);
    if (eq == std::string::npos || (key != "order" && key != "refine"))
      fail("mesh spec '", spec, "': option '", parts[i], "' is not order=<k> or refine=<r>");
    if (key == "order") {
      order = parse_int(spec, val, "order");
      if (order < 1 || order > max_geometry_order)
        fail("mesh spec '", spec, "': order=", order, " is outside 1..", max_geometry_order);
    } else {
      refine = parse_int(spec, val, "refine");
      if (refine < 0 || refine > 10) fail("mesh spec '", spec, "': refine=", refine, " is outside 0..10");
    }
  }
  Mesh m = kind == "disk" ? disk_mesh(g, n, order) : kind == "ball" ? ball_mesh(g, n, order) : annulus_mesh(n, order);
  for (int r = 0; r < refine; ++r) m = refine_uniformly(m);
  return m;
}

}  // namespace

Mesh generate_mesh(const std::string& spec) {
  const auto parts = split(spec, ':');
  if (!parts.empty() && (parts[0] == "disk" || parts[0] == "annulus" || parts[0] == "ball"))
    return curved_spec(spec, parts);
  if (parts.size() < 3 || parts[0] != "box")
    fail("mesh spec '", spec, "': expected box:<seg|tri|quad|tet|hex>:<N>[x<M>[x<K>]][:perturb=<f>][:seed=<u>]",
         "[:size=<a>x<b>x<c>][:refine=<r>], or disk:<tri|quad>:<n>, annulus:quad:<n>, ball:<tet|hex>:<n> with ",
         "[:order=<k>][:refine=<r>]");
  Geometry g;
  const std::string& gs = parts[1];
  if (gs == "seg" || gs == "segment") g = Geometry::Segment;
  else if (gs == "tri" || gs == "triangle") g = Geometry::Triangle;
  else if (gs == "quad" || gs == "quadrilateral") g = Geometry::Quadrilateral;
  else if (gs == "tet" || gs == "tetrahedron") g = Geometry::Tetrahedron;
  else if (gs == "hex" || gs == "hexahedron") g = Geometry::Hexahedron;
  else fail("mesh spec '", spec, "': unknown geometry '", gs, "' (valid: seg, tri, quad, tet, hex)");
  const int d = dim(g);
  const auto counts = split(parts[2], 'x');
  if (int(counts.size()) != 1 && int(counts.size()) != d)
    fail("mesh spec '", spec, "': '", parts[2], "' gives ", counts.size(), " cell counts; a ", name(g),
         " box takes 1 (the same in every direction) or ", d);
  std::array<int, 3> n{1, 1, 1};
  for (int c = 0; c < d; ++c) {
    n[std::size_t(c)] = parse_int(spec, counts[counts.size() == 1 ? 0 : std::size_t(c)], "cell count");
    if (n[std::size_t(c)] < 1) fail("mesh spec '", spec, "': cell count ", n[std::size_t(c)], " must be at least 1");
  }
  BoxOptions opt;
  int refine = 0;
  for (std::size_t i = 3; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    if (eq == std::string::npos)
      fail("mesh spec '", spec, "': option '", parts[i], "' is not key=value (keys: perturb, seed, size, refine)");
    const std::string key = parts[i].substr(0, eq), val = parts[i].substr(eq + 1);
    if (key == "perturb") {
      opt.perturb = parse_double(spec, val, "perturb");
    } else if (key == "seed") {
      const int s = parse_int(spec, val, "seed");
      if (s < 0) fail("mesh spec '", spec, "': seed ", s, " must be >= 0");
      opt.seed = unsigned(s);
    } else if (key == "size") {
      const auto sz = split(val, 'x');
      if (int(sz.size()) != 1 && int(sz.size()) != d)
        fail("mesh spec '", spec, "': size '", val, "' needs 1 or ", d, " extents");
      for (int c = 0; c < d; ++c) opt.size[std::size_t(c)] = parse_double(spec, sz[sz.size() == 1 ? 0 : std::size_t(c)], "size");
    } else if (key == "refine") {
      refine = parse_int(spec, val, "refine");
      if (refine < 0 || refine > 10) fail("mesh spec '", spec, "': refine=", refine, " is outside 0..10");
    } else {
      fail("mesh spec '", spec, "': unknown option '", key, "' (valid: perturb, seed, size, refine)");
    }
  }
  Mesh m;
  try {
    m = box_mesh(g, n, opt);
  } catch (const Error& e) {
    fail("mesh spec '", spec, "': ", e.what());
  }
  for (int r = 0; r < refine; ++r) m = refine_uniformly(m);
  return m;
}

}  // namespace tessera::fem
