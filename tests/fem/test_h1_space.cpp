// H1Space: DOF counts, consistency of shared nodes, continuity of interpolated fields,
// boundary nodes, errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/reference_element.hpp"

using namespace tessera;
using namespace tessera::fem;

namespace {

const Geometry box_geometries[] = {Geometry::Segment, Geometry::Triangle, Geometry::Quadrilateral,
                                   Geometry::Tetrahedron, Geometry::Hexahedron};

Mesh perturbed_box(Geometry g, int n) {
  BoxOptions o;
  o.perturb = 0.25;
  o.seed = 5;
  return box_mesh(g, {n, n, n}, o);
}

// The same mesh with its vertices renumbered by a random permutation: every edge and face
// key, and so every canonical frame, changes.
Mesh renumbered(const Mesh& m, unsigned seed) {
  std::vector<index_t> perm(std::size_t(m.num_vertices()));
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937 g(seed);
  std::shuffle(perm.begin(), perm.end(), g);
  std::vector<index_t> inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inv[std::size_t(perm[i])] = index_t(i);
  Mesh out(m.space_dim());
  for (std::size_t i = 0; i < perm.size(); ++i) {
    std::vector<double> x(std::size_t(m.space_dim()));
    for (int c = 0; c < m.space_dim(); ++c) x[std::size_t(c)] = m.vertex(perm[i], c);
    out.add_vertex(x);
  }
  for (index_t e = 0; e < m.num_elements(); ++e) {
    std::vector<index_t> v;
    for (index_t x : m.element_vertices(e)) v.push_back(inv[std::size_t(x)]);
    out.add_element(m.element_geometry(e), v, m.element_attribute(e));
  }
  for (index_t b = 0; b < m.num_boundary(); ++b) {
    std::vector<index_t> v;
    for (index_t x : m.boundary_vertices(b)) v.push_back(inv[std::size_t(x)]);
    out.add_boundary(m.boundary_geometry(b), v, m.boundary_attribute(b));
  }
  return out;
}

index_t ipow(index_t b, int e) {
  index_t r = 1;
  for (int i = 0; i < e; ++i) r *= b;
  return r;
}

}  // namespace

TEST(H1Space, DofCountsMatchClosedForms) {
  // A box of n^d cells has (n p + 1)^d nodes whatever the cells are split into: the nodes of
  // P_p on the triangles / Kuhn tets of a cell are the lattice points of the cell's Q_p grid.
  for (Geometry g : box_geometries)
    for (int p = 1; p <= 6; ++p)
      for (int nc : {1, 3}) {
        const int n = 3, d = dim(g);
        const Mesh m = box_mesh(g, {n, n, n});
        const H1Space s(m, p, nc);
        EXPECT_EQ(s.num_nodes(), ipow(n * p + 1, d)) << name(g) << " p=" << p;
        EXPECT_EQ(s.num_dofs(), nc * s.num_nodes());
        // Boundary: the nodes not strictly inside the box.
        if (d >= 2) {
          EXPECT_EQ(index_t(s.boundary_nodes().size()), ipow(n * p + 1, d) - ipow(n * p - 1, d)) << name(g) << " p=" << p;
          EXPECT_EQ(s.exterior_nodes(), s.boundary_nodes());
          EXPECT_EQ(index_t(s.boundary_dofs().size()), nc * index_t(s.boundary_nodes().size()));
        } else {
          EXPECT_EQ(s.exterior_nodes().size(), 2u);
        }
      }
}

TEST(H1Space, SharedNodesAgreeWhateverTheVertexNumbering) {
  // Every global node must be at one physical place: map each element's lattice point
  // (lattice / p, on the same entity as the true node) and compare all copies.
  for (Geometry g : box_geometries)
    for (unsigned seed : {0u, 1u, 2u})
      for (int p : {1, 2, 3, 4, 5}) {
        const Mesh base = perturbed_box(g, 3);
        const Mesh m = seed == 0 ? base : renumbered(base, seed);
        const H1Space s(m, p);
        std::vector<std::array<double, 3>> pos(std::size_t(s.num_nodes()));
        std::vector<char> seen(std::size_t(s.num_nodes()), 0);
        double worst = 0;
        for (index_t e = 0; e < m.num_elements(); ++e) {
          const auto L = lattice_nodes(m.element_geometry(e), p);
          const auto ids = s.element_nodes(e);
          ASSERT_EQ(ids.size(), L.size());
          for (std::size_t i = 0; i < L.size(); ++i) {
            const double xi[3] = {L[i][0] / double(p), L[i][1] / double(p), L[i][2] / double(p)};
            const auto x = m.map(e, std::span<const double>(xi, std::size_t(m.dim())));
            const auto n = std::size_t(ids[i]);
            ASSERT_LT(ids[i], s.num_nodes());
            if (!seen[n]) {
              pos[n] = x, seen[n] = 1;
            } else {
              for (int c = 0; c < 3; ++c) worst = std::max(worst, std::abs(x[std::size_t(c)] - pos[n][std::size_t(c)]));
            }
          }
        }
        // Two evaluations of the same first-order map at the same point: a few roundings.
        EXPECT_LT(worst, 1e-14) << name(g) << " p=" << p << " seed " << seed;
        EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), s.num_nodes()) << "every node belongs to an element";
      }
}

TEST(H1Space, InterpolatedFieldIsContinuousAcrossEveryFace) {
  // Random global nodal values define a continuous piecewise polynomial only if neighbours
  // agree on the nodes of their shared face *and* place them at the same points. Evaluate
  // both sides at random points of every interior face (edge in 2-D) and compare.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> U(0, 1);
  for (Geometry g : {Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron, Geometry::Hexahedron})
    for (int p = 1; p <= 6; ++p) {
      const Mesh m = renumbered(perturbed_box(g, 2), 3 + unsigned(p));
      const H1Space s(m, p);
      const H1Basis basis(g, p);
      std::vector<double> u(std::size_t(s.num_nodes()));
      for (auto& x : u) x = 2 * U(rng) - 1;
      const int d = m.dim();
      auto value = [&](index_t e, const std::array<double, 3>& xi) {
        std::vector<double> phi(std::size_t(basis.size()));
        basis.eval(std::span<const double>(xi.data(), std::size_t(d)), phi);
        double v = 0;
        const auto ids = s.element_nodes(e);
        for (std::size_t i = 0; i < phi.size(); ++i) v += phi[i] * u[std::size_t(ids[i])];
        return v;
      };
      // Faces (edges in 2-D) keyed by sorted global vertex ids: first element seen, its face.
      std::map<std::vector<index_t>, std::pair<index_t, int>> first;
      int compared = 0;
      double worst = 0;
      for (index_t e = 0; e < m.num_elements(); ++e) {
        const auto v = m.element_vertices(e);
        const int nf = d == 3 ? num_faces(g) : num_edges(g);
        for (int f = 0; f < nf; ++f) {
          std::vector<int> local;
          if (d == 3) {
            const auto fv = face_vertices(g, f);
            local.assign(fv.begin(), fv.end());
          } else {
            const auto ev = edge_vertices(g, f);
            local = {ev[0], ev[1]};
          }
          std::vector<index_t> key;
          for (int lv : local) key.push_back(v[std::size_t(lv)]);
          std::sort(key.begin(), key.end());
          const auto it = first.find(key);
          if (it == first.end()) {
            first[key] = {e, f};
            continue;
          }
          // Points of the face as weights on its vertices, identified by global id: a
          // triangle/segment by barycentric weights, a quad by bilinear weights in a frame
          // fixed by the global ids (origin = smallest id, first axis = smaller neighbour).
          auto ref_point = [&](index_t el, int face, const std::vector<double>& w_by_gid) {
            const auto ev = m.element_vertices(el);
            std::vector<int> lv;
            if (d == 3) {
              const auto fv = face_vertices(g, face);
              lv.assign(fv.begin(), fv.end());
            } else {
              const auto e2 = edge_vertices(g, face);
              lv = {e2[0], e2[1]};
            }
            std::array<double, 3> xi{0, 0, 0};
            for (int a : lv) {
              const index_t gid = ev[std::size_t(a)];
              const double w = w_by_gid[std::size_t(std::find(key.begin(), key.end(), gid) - key.begin())];
              const auto r = reference_vertex(g, a);
              for (int c = 0; c < 3; ++c) xi[std::size_t(c)] += w * r[std::size_t(c)];
            }
            return xi;
          };
          for (int sample = 0; sample < 4; ++sample) {
            std::vector<double> w(key.size(), 0);
            if (key.size() == 4) {
              // Cyclic order of the quad face in the first element, as global ids.
              const auto fv = face_vertices(g, it->second.second);
              const auto e1v = m.element_vertices(it->second.first);
              index_t cyc[4];
              for (int j = 0; j < 4; ++j) cyc[j] = e1v[std::size_t(fv[std::size_t(j)])];
              const int o = int(std::min_element(cyc, cyc + 4) - cyc);
              int n1 = (o + 1) % 4, n2 = (o + 3) % 4;
              if (cyc[n2] < cyc[n1]) std::swap(n1, n2);
              const int opp = (o + 2) % 4;
              const double a = U(rng), b = U(rng);
              auto slot = [&](index_t gid) { return std::size_t(std::find(key.begin(), key.end(), gid) - key.begin()); };
              w[slot(cyc[o])] = (1 - a) * (1 - b), w[slot(cyc[n1])] = a * (1 - b);
              w[slot(cyc[n2])] = (1 - a) * b, w[slot(cyc[opp])] = a * b;
            } else {
              double sum = 0;
              for (auto& x : w) sum += (x = -std::log(U(rng) + 1e-300));
              for (auto& x : w) x /= sum;
            }
            const auto xi1 = ref_point(it->second.first, it->second.second, w);
            const auto xi2 = ref_point(e, f, w);
            const auto x1 = m.map(it->second.first, std::span<const double>(xi1.data(), std::size_t(d)));
            const auto x2 = m.map(e, std::span<const double>(xi2.data(), std::size_t(d)));
            for (int c = 0; c < d; ++c) ASSERT_NEAR(x1[std::size_t(c)], x2[std::size_t(c)], 1e-13) << "same physical point";
            worst = std::max(worst, std::abs(value(it->second.first, xi1) - value(e, xi2)));
            ++compared;
          }
        }
      }
      EXPECT_GT(compared, 0);
      // Nodal values are O(1) and the Lebesgue constants up to p = 6 are below ~20: a jump
      // would be O(1); agreement is limited by rounding in the basis evaluation (~1e-13).
      EXPECT_LT(worst, 1e-11) << name(g) << " p=" << p;
    }
}

TEST(H1Space, MixedTriangleQuadMesh) {
  Mesh m(2);
  for (double y : {0.0, 1.0})
    for (double x : {0.0, 1.0, 2.0}) m.add_vertex({x, y});
  m.add_element(Geometry::Triangle, {0, 1, 4});
  m.add_element(Geometry::Triangle, {0, 4, 3});
  m.add_element(Geometry::Quadrilateral, {1, 2, 5, 4});
  for (int p = 1; p <= 6; ++p) {
    const H1Space s(m, p);
    EXPECT_EQ(s.num_nodes(), (2 * p + 1) * (p + 1)) << "p=" << p;
    // The edge x = 1 (vertices 1, 4) is shared: its nodes appear in triangle 0 and the quad.
    const auto t = s.element_nodes(0), q = s.element_nodes(2);
    std::vector<index_t> a(t.begin(), t.end()), b(q.begin(), q.end());
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::vector<index_t> common;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
    EXPECT_EQ(int(common.size()), p + 1) << "p=" << p;
    EXPECT_EQ(index_t(s.exterior_nodes().size()), 6 * p);
  }
}

TEST(H1Space, BoundaryNodesByAttribute) {
  const Mesh m = box_mesh(Geometry::Hexahedron, {2, 3, 4});
  const int p = 2;
  const H1Space s(m, p);
  // Face x = 0 (attribute 1): (3p + 1)(4p + 1) nodes; faces x = 0 and y = 0 share an edge.
  const int a1[] = {1}, a13[] = {1, 3};
  EXPECT_EQ(s.boundary_nodes(a1).size(), std::size_t((3 * p + 1) * (4 * p + 1)));
  EXPECT_EQ(s.boundary_nodes(a13).size(), std::size_t((3 * p + 1) * (4 * p + 1) + (2 * p + 1) * (4 * p + 1) - (4 * p + 1)));
  const int none[] = {42};
  EXPECT_TRUE(s.boundary_nodes(none).empty());
}

TEST(H1Space, Errors) {
  const Mesh m = box_mesh(Geometry::Quadrilateral, {2, 2, 1});
  EXPECT_ERROR_MENTIONS(H1Space(m, 0), "order p = 0");
  EXPECT_ERROR_MENTIONS(H1Space(m, 1, 0), "components = 0");
  EXPECT_ERROR_MENTIONS(H1Space(Mesh(2), 1), "no elements");
  // Three tets on one face: not conforming.
  Mesh bad(3);
  bad.add_vertex({0, 0, 0});
  bad.add_vertex({1, 0, 0});
  bad.add_vertex({0, 1, 0});
  bad.add_vertex({0, 0, 1});
  bad.add_vertex({0, 0, -1});
  bad.add_vertex({0.2, 0.2, 1});
  bad.add_element(Geometry::Tetrahedron, {0, 1, 2, 3});
  bad.add_element(Geometry::Tetrahedron, {0, 2, 1, 4});
  bad.add_element(Geometry::Tetrahedron, {0, 1, 2, 5});
  EXPECT_ERROR_MENTIONS(H1Space(bad, 1), "shared by 3 elements");
}
