// Tests of tessera/fem/reference_element.hpp: topology of the reference elements and the
// classification of the order-p lattice nodes.

#include <gtest/gtest.h>

#include "fem_test_util.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "tessera/fem/geometry.hpp"
#include "tessera/fem/reference_element.hpp"

using tessera::index_t;
using namespace tessera::fem;

namespace {

constexpr Geometry kAll[] = {Geometry::Segment, Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron,
                             Geometry::Hexahedron};
constexpr int kMaxOrder = 8;

using Vec = std::array<double, 3>;
Vec sub(const Vec& a, const Vec& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec cross(const Vec& a, const Vec& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const Vec& a, const Vec& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

Vec centroid(Geometry g) {
  Vec c{0, 0, 0};
  for (int v = 0; v < num_vertices(g); ++v)
    for (int k = 0; k < 3; ++k) c[k] += reference_vertex(g, v)[k] / num_vertices(g);
  return c;
}

bool is_vertex_of(Geometry g, const std::array<int, 3>& L, int p, int v) {
  const auto V = reference_vertex(g, v);
  for (int c = 0; c < 3; ++c)
    if (L[c] != int(p * V[c])) return false;
  return true;
}

}  // namespace

TEST(ReferenceElement, Counts) {
  const int nv[] = {2, 3, 4, 4, 8}, ne[] = {1, 3, 4, 6, 12}, nf[] = {0, 1, 1, 4, 6};
  for (Geometry g : kAll) {
    const int i = static_cast<int>(g);
    EXPECT_EQ(num_vertices(g), nv[i]) << name(g);
    EXPECT_EQ(num_edges(g), ne[i]) << name(g);
    EXPECT_EQ(num_faces(g), nf[i]) << name(g);
  }
  // Euler characteristic of the 3-D elements' boundary surfaces: V - E + F = 2.
  for (Geometry g : {Geometry::Tetrahedron, Geometry::Hexahedron})
    EXPECT_EQ(num_vertices(g) - num_edges(g) + num_faces(g), 2) << name(g);
}

TEST(ReferenceElement, VerticesAreTheCornersOfTheReferenceElement) {
  for (Geometry g : kAll) {
    std::set<Vec> seen;
    for (int v = 0; v < num_vertices(g); ++v) {
      const Vec V = reference_vertex(g, v);
      for (int c = 0; c < 3; ++c) {
        EXPECT_TRUE(V[c] == 0.0 || V[c] == 1.0) << name(g) << " vertex " << v;
        if (c >= dim(g)) {
          EXPECT_EQ(V[c], 0.0) << name(g) << " vertex " << v;
        }
      }
      if (is_simplex(g)) {
        EXPECT_LE(V[0] + V[1] + V[2], 1.0) << name(g);
      }
      seen.insert(V);
    }
    EXPECT_EQ(int(seen.size()), num_vertices(g)) << name(g) << ": vertices are not distinct";
  }
}

TEST(ReferenceElement, EdgesAreDistinctPairsOfVertices) {
  for (Geometry g : kAll) {
    std::set<std::pair<int, int>> seen;
    for (int e = 0; e < num_edges(g); ++e) {
      const auto ev = edge_vertices(g, e);
      for (int k = 0; k < 2; ++k) {
        EXPECT_GE(ev[k], 0);
        EXPECT_LT(ev[k], num_vertices(g));
      }
      EXPECT_NE(ev[0], ev[1]);
      seen.insert({std::min(ev[0], ev[1]), std::max(ev[0], ev[1])});
      // Edges of the reference elements have length 1 (axis-aligned) or sqrt(2) (simplex diagonals).
      const Vec d = sub(reference_vertex(g, ev[1]), reference_vertex(g, ev[0]));
      const double len2 = dot(d, d);
      EXPECT_TRUE(len2 == 1.0 || (is_simplex(g) && len2 == 2.0)) << name(g) << " edge " << e;
    }
    EXPECT_EQ(int(seen.size()), num_edges(g)) << name(g) << ": edges are not distinct";
  }
}

TEST(ReferenceElement, FacesAreCoplanarAndOutward) {
  for (Geometry g : {Geometry::Tetrahedron, Geometry::Hexahedron}) {
    const Vec c = centroid(g);
    std::set<std::set<int>> seen;
    for (int f = 0; f < num_faces(g); ++f) {
      const auto fv = face_vertices(g, f);
      ASSERT_EQ(int(fv.size()), g == Geometry::Tetrahedron ? 3 : 4);
      EXPECT_EQ(face_geometry(g, f), g == Geometry::Tetrahedron ? Geometry::Triangle : Geometry::Quadrilateral);
      for (int v : fv) {
        EXPECT_GE(v, 0);
        EXPECT_LT(v, num_vertices(g));
      }
      seen.insert(std::set<int>(fv.begin(), fv.end()));
      const Vec A = reference_vertex(g, fv[0]);
      const Vec n = cross(sub(reference_vertex(g, fv[1]), A), sub(reference_vertex(g, fv[2]), A));
      EXPECT_GT(dot(n, n), 0.0) << name(g) << " face " << f << " is degenerate";
      // Coplanar: every vertex lies in the plane through A with normal n (exact: 0/1 coordinates).
      for (int v : fv) EXPECT_EQ(dot(n, sub(reference_vertex(g, v), A)), 0.0) << name(g) << " face " << f;
      // Outward: the right-hand-rule normal points away from the centroid.
      EXPECT_LT(dot(n, sub(c, A)), 0.0) << name(g) << " face " << f << " is not counter-clockwise from outside";
      // Quadrilateral faces: consecutive vertices are joined by edges of the element, and the
      // turn at every corner has the same orientation (a convex, non-self-intersecting loop).
      if (fv.size() == 4)
        for (int k = 0; k < 4; ++k) {
          const Vec P = reference_vertex(g, fv[k]), Q = reference_vertex(g, fv[(k + 1) % 4]),
                    R = reference_vertex(g, fv[(k + 2) % 4]);
          EXPECT_GT(dot(cross(sub(Q, P), sub(R, Q)), n), 0.0) << name(g) << " face " << f << " corner " << k;
        }
    }
    EXPECT_EQ(int(seen.size()), num_faces(g)) << name(g);
  }
}

TEST(ReferenceElement, EachEdgeIsInExactlyTwoFaces) {
  for (Geometry g : {Geometry::Tetrahedron, Geometry::Hexahedron}) {
    std::map<std::pair<int, int>, int> uses;
    for (int f = 0; f < num_faces(g); ++f) {
      const auto fv = face_vertices(g, f);
      const int m = int(fv.size());
      for (int k = 0; k < m; ++k) {
        const int a = fv[k], b = fv[(k + 1) % m];
        ++uses[{std::min(a, b), std::max(a, b)}];
      }
    }
    EXPECT_EQ(int(uses.size()), num_edges(g)) << name(g);
    for (int e = 0; e < num_edges(g); ++e) {
      const auto ev = edge_vertices(g, e);
      const auto key = std::make_pair(std::min(ev[0], ev[1]), std::max(ev[0], ev[1]));
      EXPECT_EQ(uses[key], 2) << name(g) << " edge " << e;
    }
  }
}

TEST(ReferenceElement, TwoDimensionalElementIsItsOwnFace) {
  for (Geometry g : {Geometry::Triangle, Geometry::Quadrilateral}) {
    const auto fv = face_vertices(g, 0);
    ASSERT_EQ(int(fv.size()), num_vertices(g));
    for (int v = 0; v < num_vertices(g); ++v) EXPECT_EQ(fv[v], v);
    EXPECT_EQ(face_geometry(g, 0), g);
    // Counter-clockwise (positive area): the z component of the cross product is positive.
    const Vec A = reference_vertex(g, 0);
    EXPECT_GT(cross(sub(reference_vertex(g, 1), A), sub(reference_vertex(g, 2), A))[2], 0.0) << name(g);
    // Edges follow the face's boundary loop.
    for (int e = 0; e < num_edges(g); ++e) {
      EXPECT_EQ(edge_vertices(g, e)[0], e) << name(g);
      EXPECT_EQ(edge_vertices(g, e)[1], (e + 1) % num_vertices(g)) << name(g);
    }
  }
}

TEST(ReferenceElement, BoundaryGeometry) {
  EXPECT_EQ(boundary_geometry(Geometry::Triangle), Geometry::Segment);
  EXPECT_EQ(boundary_geometry(Geometry::Quadrilateral), Geometry::Segment);
  EXPECT_EQ(boundary_geometry(Geometry::Tetrahedron), Geometry::Triangle);
  EXPECT_EQ(boundary_geometry(Geometry::Hexahedron), Geometry::Quadrilateral);
  EXPECT_ERROR_MENTIONS(boundary_geometry(Geometry::Segment), "segment");
}

TEST(ReferenceElement, LatticeNodes) {
  for (Geometry g : kAll)
    for (int p = 1; p <= kMaxOrder; ++p) {
      const auto L = lattice_nodes(g, p);
      const index_t n = p + 1;
      const index_t expected[] = {n, n * (n + 1) / 2, n * n, n * (n + 1) * (n + 2) / 6, n * n * n};
      EXPECT_EQ(num_nodes(g, p), expected[static_cast<int>(g)]) << name(g) << " p=" << p;
      ASSERT_EQ(index_t(L.size()), num_nodes(g, p)) << name(g) << " p=" << p;
      std::set<std::array<int, 3>> seen(L.begin(), L.end());
      EXPECT_EQ(seen.size(), L.size()) << name(g) << " p=" << p << ": repeated lattice points";
      for (std::size_t i = 0; i < L.size(); ++i) {
        for (int c = 0; c < 3; ++c) {
          EXPECT_GE(L[i][c], 0);
          EXPECT_LE(L[i][c], c < dim(g) ? p : 0);
        }
        if (is_simplex(g)) {
          EXPECT_LE(L[i][0] + L[i][1] + L[i][2], p);
        }
        // Order: k slowest, then j, then i fastest (lexicographic on (k, j, i)).
        if (i > 0) {
          const auto& a = L[i - 1];
          const auto& b = L[i];
          const std::array<int, 3> ka{a[2], a[1], a[0]}, kb{b[2], b[1], b[0]};
          EXPECT_LT(ka, kb) << name(g) << " p=" << p << " at " << i;
        }
      }
      // Tensor elements: node n = (k (p + 1) + j) (p + 1) + i.
      if (is_tensor(g)) {
        for (std::size_t i = 0; i < L.size(); ++i)
          EXPECT_EQ(index_t((L[i][2] * n + L[i][1]) * n + L[i][0]), index_t(i)) << name(g);
      }
    }
}

TEST(ReferenceElement, ClassifyNodeCountsPerEntity) {
  for (Geometry g : kAll)
    for (int p = 1; p <= kMaxOrder; ++p) {
      const int d = dim(g);
      std::map<std::pair<int, int>, int> count;  // (entity_dim, entity) -> nodes
      for (const auto& L : lattice_nodes(g, p)) {
        const NodeLocation loc = classify_node(g, p, L);
        ++count[{loc.entity_dim, loc.entity}];
      }
      const int q = p - 1;
      for (int v = 0; v < num_vertices(g); ++v)
        EXPECT_EQ((count[{0, v}]), 1) << name(g) << " p=" << p << " vertex " << v;
      // Edges (for the segment, edge 0 is the element itself: its interior).
      for (int e = 0; e < num_edges(g); ++e) EXPECT_EQ((count[{1, e}]), q) << name(g) << " p=" << p << " edge " << e;
      if (d >= 2)
        for (int f = 0; f < num_faces(g); ++f) {
          const int expected = face_geometry(g, f) == Geometry::Triangle ? q * (q - 1) / 2 : q * q;
          EXPECT_EQ((count[{2, f}]), expected) << name(g) << " p=" << p << " face " << f;
        }
      if (d == 3) {
        const int interior = g == Geometry::Hexahedron ? q * q * q : q * (q - 1) * (q - 2) / 6;
        EXPECT_EQ((count[{3, 0}]), interior) << name(g) << " p=" << p;
      }
      // No other entities appear.
      int total = 0;
      for (const auto& [key, c] : count) {
        const int maxdim = d == 1 ? 1 : d;
        EXPECT_LE(key.first, maxdim) << name(g);
        total += c;
      }
      EXPECT_EQ(total, num_nodes(g, p));
    }
}

TEST(ReferenceElement, ClassifyNodeCoordinatesReproduceTheNode) {
  for (Geometry g : kAll)
    for (int p = 1; p <= kMaxOrder; ++p)
      for (const auto& L : lattice_nodes(g, p)) {
        const NodeLocation loc = classify_node(g, p, L);
        std::array<int, 3> R{0, 0, 0};
        auto V = [&](int v) {
          const auto x = reference_vertex(g, v);
          return std::array<int, 3>{int(x[0]), int(x[1]), int(x[2])};
        };
        if (loc.entity_dim == 0) {
          EXPECT_TRUE(is_vertex_of(g, L, p, loc.entity)) << name(g);
          continue;
        } else if (loc.entity_dim == 1) {
          const auto ev = edge_vertices(g, loc.entity);
          const int t = loc.coords[0];
          EXPECT_GE(t, 1);
          EXPECT_LE(t, p - 1);
          for (int c = 0; c < 3; ++c) R[c] = p * V(ev[0])[c] + t * (V(ev[1])[c] - V(ev[0])[c]);
        } else if (loc.entity_dim == 2) {
          const auto fv = face_vertices(g, loc.entity);
          if (fv.size() == 3) {
            const auto& b = loc.coords;
            EXPECT_GE(b[0], 1);
            EXPECT_GE(b[1], 1);
            EXPECT_GE(b[2], 1);
            EXPECT_EQ(b[0] + b[1] + b[2], p);
            for (int c = 0; c < 3; ++c) R[c] = b[0] * V(fv[0])[c] + b[1] * V(fv[1])[c] + b[2] * V(fv[2])[c];
          } else {
            const int s = loc.coords[0], t = loc.coords[1];
            EXPECT_GE(s, 1);
            EXPECT_LE(s, p - 1);
            EXPECT_GE(t, 1);
            EXPECT_LE(t, p - 1);
            for (int c = 0; c < 3; ++c)
              R[c] = p * V(fv[0])[c] + s * (V(fv[1])[c] - V(fv[0])[c]) + t * (V(fv[3])[c] - V(fv[0])[c]);
          }
        } else {
          // Interior: no vertex coordinate of the element is shared (strictly inside).
          R = L;
          for (int c = 0; c < dim(g); ++c) {
            EXPECT_GT(L[c], 0) << name(g);
            EXPECT_LT(L[c], p) << name(g);
          }
          if (is_simplex(g)) {
            EXPECT_LT(L[0] + L[1] + L[2], p) << name(g);
          }
        }
        EXPECT_EQ(R, L) << name(g) << " p=" << p << " entity_dim " << loc.entity_dim << " entity " << loc.entity;
      }
}

// A lattice node on the boundary is never classified as interior, and the classification of
// a node on an edge shared by two faces names the edge (lowest dimension).
TEST(ReferenceElement, ClassifyNodePrefersLowestDimension) {
  const int p = 4;
  // Tetrahedron edge {3, 1} (edge 5): lattice (t', 0, p - t') with t' = p - t.
  const NodeLocation e = classify_node(Geometry::Tetrahedron, p, {1, 0, 3});
  EXPECT_EQ(e.entity_dim, 1);
  EXPECT_EQ(e.entity, 5);
  EXPECT_EQ(e.coords[0], 1);  // one step from vertex 3 towards vertex 1
  // Hexahedron point (0, 2, 2) lies on face {0, 4, 7, 3} (x = 0), face 2.
  const NodeLocation f = classify_node(Geometry::Hexahedron, p, {0, 2, 2});
  EXPECT_EQ(f.entity_dim, 2);
  EXPECT_EQ(f.entity, 2);
  const NodeLocation v = classify_node(Geometry::Hexahedron, p, {4, 4, 4});
  EXPECT_EQ(v.entity_dim, 0);
  EXPECT_EQ(v.entity, 6);
}

TEST(ReferenceElement, BadInput) {
  EXPECT_ERROR_MENTIONS(num_nodes(Geometry::Triangle, 0), "p = 0");
  EXPECT_ERROR_MENTIONS(lattice_nodes(Geometry::Hexahedron, -1), "p = -1");
  EXPECT_ERROR_MENTIONS(reference_vertex(Geometry::Triangle, 3), "index 3", "triangle", "0..2");
  EXPECT_ERROR_MENTIONS(edge_vertices(Geometry::Hexahedron, 12), "index 12", "hexahedron", "0..11");
  EXPECT_ERROR_MENTIONS(face_vertices(Geometry::Tetrahedron, -1), "index -1", "tetrahedron");
  EXPECT_ERROR_MENTIONS(face_vertices(Geometry::Segment, 0), "segment");
  EXPECT_ERROR_MENTIONS(face_geometry(Geometry::Hexahedron, 6), "index 6");
  EXPECT_ERROR_MENTIONS(num_vertices(static_cast<Geometry>(9)), "invalid Geometry", "9");
  EXPECT_ERROR_MENTIONS(classify_node(Geometry::Triangle, 3, {2, 2, 0}), "(2, 2, 0)", "not a lattice node",
                        "triangle");
  EXPECT_ERROR_MENTIONS(classify_node(Geometry::Quadrilateral, 3, {1, 1, 1}), "(1, 1, 1)", "not a lattice node");
  EXPECT_ERROR_MENTIONS(classify_node(Geometry::Hexahedron, 3, {4, 0, 0}), "not a lattice node");
  EXPECT_ERROR_MENTIONS(classify_node(Geometry::Tetrahedron, 0, {0, 0, 0}), "p = 0");
}
