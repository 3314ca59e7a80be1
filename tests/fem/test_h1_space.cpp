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

// Vertex permutations of a reference element that keep its orientation (det J > 0): the
// even permutations of a simplex's vertices, the rotations of the square / cube (4 / 24).
std::vector<std::vector<int>> proper_rotations(Geometry g) {
  const int nv = num_vertices(g);
  std::vector<std::vector<int>> out;
  if (is_simplex(g) || g == Geometry::Segment) {
    std::vector<int> perm(static_cast<std::size_t>(nv));
    std::iota(perm.begin(), perm.end(), 0);
    do {
      int inversions = 0;
      for (int i = 0; i < nv; ++i)
        for (int j = i + 1; j < nv; ++j) inversions += perm[std::size_t(i)] > perm[std::size_t(j)];
      if (inversions % 2 == 0 || g == Geometry::Segment) out.push_back(perm);
    } while (std::next_permutation(perm.begin(), perm.end()));
    if (g == Geometry::Segment) out.resize(1);  // reversing a segment is a reflection
    return out;
  }
  // Tensor elements: closure of quarter turns about z (and x for the hexahedron), acting on
  // the reference vertices' coordinates in {0, 1}^d: new vertex i = old vertex at R(r_i).
  auto vertex_at = [&](std::array<double, 3> x) {
    for (int v = 0; v < nv; ++v)
      if (reference_vertex(g, v) == x) return v;
    return -1;
  };
  auto perm_of = [&](auto R) {
    std::vector<int> perm(static_cast<std::size_t>(nv));
    for (int i = 0; i < nv; ++i) perm[std::size_t(i)] = vertex_at(R(reference_vertex(g, i)));
    return perm;
  };
  std::vector<std::vector<int>> gens{perm_of([](std::array<double, 3> x) { return std::array<double, 3>{1 - x[1], x[0], x[2]}; })};
  if (g == Geometry::Hexahedron)
    gens.push_back(perm_of([](std::array<double, 3> x) { return std::array<double, 3>{x[0], 1 - x[2], x[1]}; }));
  std::vector<int> id(static_cast<std::size_t>(nv));
  std::iota(id.begin(), id.end(), 0);
  out.push_back(id);
  for (std::size_t k = 0; k < out.size(); ++k)
    for (const auto& gperm : gens) {
      std::vector<int> c(static_cast<std::size_t>(nv));
      for (int i = 0; i < nv; ++i) c[std::size_t(i)] = out[k][std::size_t(gperm[std::size_t(i)])];
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
  return out;
}

// The same mesh with every element's vertex list permuted by a random proper rotation: the
// same elements, seen from other local frames, so neighbours see shared edges and faces in
// every relative orientation.
Mesh rotated(const Mesh& m, unsigned seed) {
  std::mt19937 rng(seed);
  Mesh out(m.space_dim());
  for (index_t v = 0; v < m.num_vertices(); ++v) {
    std::vector<double> x(std::size_t(m.space_dim()));
    for (int c = 0; c < m.space_dim(); ++c) x[std::size_t(c)] = m.vertex(v, c);
    out.add_vertex(x);
  }
  for (index_t e = 0; e < m.num_elements(); ++e) {
    const auto rots = proper_rotations(m.element_geometry(e));
    const auto& r = rots[rng() % rots.size()];
    const auto v = m.element_vertices(e);
    std::vector<index_t> w(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) w[i] = v[std::size_t(r[i])];
    out.add_element(m.element_geometry(e), w, m.element_attribute(e));
  }
  for (index_t b = 0; b < m.num_boundary(); ++b) {
    const auto bv = m.boundary_vertices(b);
    out.add_boundary(m.boundary_geometry(b), std::vector<index_t>(bv.begin(), bv.end()), m.boundary_attribute(b));
  }
  return out;
}

// Largest distance between two physical positions of one global node, positions taken as
// the element maps of lattice / p (the true nodes are symmetric functions of the lattice
// point, so lattice points are a faithful stand-in). Also checks every node is reached.
double worst_node_mismatch(const Mesh& m, const H1Space& s) {
  const int p = s.order();
  std::vector<std::array<double, 3>> pos(std::size_t(s.num_nodes()));
  std::vector<char> seen(std::size_t(s.num_nodes()), 0);
  double worst = 0;
  for (index_t e = 0; e < m.num_elements(); ++e) {
    const auto L = lattice_nodes(m.element_geometry(e), p);
    const auto ids = s.element_nodes(e);
    EXPECT_EQ(ids.size(), L.size());
    for (std::size_t i = 0; i < L.size() && i < ids.size(); ++i) {
      const double xi[3] = {L[i][0] / double(p), L[i][1] / double(p), L[i][2] / double(p)};
      const auto x = m.map(e, std::span<const double>(xi, std::size_t(m.dim())));
      if (ids[i] < 0 || ids[i] >= s.num_nodes()) {
        ADD_FAILURE() << "node id " << ids[i] << " out of range";
        return 1e300;
      }
      const auto n = std::size_t(ids[i]);
      if (!seen[n]) {
        pos[n] = x, seen[n] = 1;
      } else {
        for (int c = 0; c < 3; ++c) worst = std::max(worst, std::abs(x[std::size_t(c)] - pos[n][std::size_t(c)]));
      }
    }
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), s.num_nodes()) << "every node belongs to an element";
  return worst;
}

/// The map from a's node ids to b's, element-local slot by slot, where it is a bijection (both
/// numberings describe the same sharing); empty where it is not.
std::vector<index_t> slot_bijection(const H1Space& a, const H1Space& b) {
  std::vector<index_t> to_b(std::size_t(a.num_nodes()), -1), to_a(std::size_t(b.num_nodes()), -1);
  if (a.num_nodes() != b.num_nodes() || a.element_node_ids().size() != b.element_node_ids().size()) return {};
  for (std::size_t k = 0; k < a.element_node_ids().size(); ++k) {
    const index_t i = a.element_node_ids()[k], j = b.element_node_ids()[k];
    index_t& x = to_b[std::size_t(i)];
    index_t& y = to_a[std::size_t(j)];
    if ((x >= 0 && x != j) || (y >= 0 && y != i)) return {};
    x = j, y = i;
  }
  if (std::count(to_b.begin(), to_b.end(), -1) != 0) return {};
  return to_b;
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
  // Every global node must be at one physical place, also when a random renumbering of the
  // vertices changes every edge and face key (and so every canonical frame).
  for (Geometry g : box_geometries)
    for (unsigned seed : {0u, 1u, 2u})
      for (int p : {1, 2, 3, 4, 5})
        for (NodeOrdering o : {NodeOrdering::FirstTouch, NodeOrdering::ByEntity, NodeOrdering::Interleaved,
                               NodeOrdering::SharedFirst}) {
          const Mesh base = perturbed_box(g, 3);
          const Mesh m = seed == 0 ? base : renumbered(base, seed);
          const H1Space s(m, p, 1, o);
          EXPECT_EQ(s.num_nodes(), ipow(3 * p + 1, dim(g)));
          // Two evaluations of the same first-order map at the same point: a few roundings of
          // O(1) coordinates; a wrong node would be off by a lattice spacing (>= 1/15).
          EXPECT_LT(worst_node_mismatch(m, s), 1e-14) << name(g) << " p=" << p << " seed " << seed << " " << name(o);
        }
}

TEST(H1Space, SharedNodesAgreeUnderElementRotations) {
  // Each element's vertex list permuted by a random orientation-preserving symmetry (even
  // permutations of simplices, the 4 / 24 rotations of the square / cube): neighbours see
  // their shared edges and faces in all relative orientations.
  EXPECT_EQ(proper_rotations(Geometry::Triangle).size(), 3u);
  EXPECT_EQ(proper_rotations(Geometry::Quadrilateral).size(), 4u);
  EXPECT_EQ(proper_rotations(Geometry::Tetrahedron).size(), 12u);
  EXPECT_EQ(proper_rotations(Geometry::Hexahedron).size(), 24u);
  for (Geometry g : {Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron, Geometry::Hexahedron})
    for (unsigned seed : {1u, 2u})
      for (int p = 1; p <= 5; ++p) {
        const Mesh m = renumbered(rotated(perturbed_box(g, 3), seed), seed + 10);
        ASSERT_NO_THROW(m.validate("rotated box")) << "rotations must keep det J > 0";
        const H1Space s(m, p);
        EXPECT_EQ(s.num_nodes(), ipow(3 * p + 1, dim(g))) << name(g) << " p=" << p;
        // Same tolerance argument as above.
        EXPECT_LT(worst_node_mismatch(m, s), 1e-14) << name(g) << " p=" << p << " seed " << seed;
        EXPECT_EQ(index_t(s.exterior_nodes().size()), ipow(3 * p + 1, dim(g)) - ipow(3 * p - 1, dim(g)));
      }
}

TEST(H1Space, InterleavedOrderingGivesEachGroupOneOrTwoRunsAtEveryLocalNode) {
  // Interleaved numbers the entities that a group of interleave_group consecutive elements first
  // meets at one local position together, node by node. On a box with rows of 16 elements (two
  // groups per row) the group's 8 ids at every local position are then one run of consecutive
  // ids, or two where the position reaches the next group (its upper faces, edges, vertices),
  // at every order; the block numbering before (each entity's nodes consecutive) gives p - 1
  // apart from p = 3 on. Fewer runs than that would be a wrong id, caught by the bijection.
  static_assert(interleave_group == 8);
  for (Geometry g : {Geometry::Quadrilateral, Geometry::Hexahedron})
    for (int p : {1, 2, 3, 4, 5}) {
      const Mesh m = box_mesh(g, {16, 2, 2});
      const H1Space il(m, p, 1, NodeOrdering::Interleaved);
      const std::size_t nd = il.element_nodes(0).size();
      int one = 0, two = 0, more = 0;
      for (index_t first = 0; first < m.num_elements(); first += 8)
        for (std::size_t l = 0; l < nd; ++l) {
          int runs = 1;
          for (index_t e = first + 1; e < first + 8; ++e) runs += il.element_nodes(e)[l] != il.element_nodes(e - 1)[l] + 1;
          (runs == 1 ? one : runs == 2 ? two : more) += 1;
        }
      EXPECT_EQ(more, 0) << name(g) << " p=" << p;
      EXPECT_GT(one, two) << name(g) << " p=" << p;
      const std::vector<index_t> to_il = slot_bijection(H1Space(m, p, 1, NodeOrdering::FirstTouch), il);
      EXPECT_FALSE(to_il.empty()) << name(g) << " p=" << p;
    }
}

TEST(H1Space, NodeOrderings) {
  for (Geometry g : box_geometries)
    for (int p : {1, 2, 4}) {
      const Mesh m = renumbered(box_mesh(g, {3, 3, 3}), 7);
      const H1Space ft(m, p, 1, NodeOrdering::FirstTouch), be(m, p, 1, NodeOrdering::ByEntity);
      EXPECT_EQ(ft.ordering(), NodeOrdering::FirstTouch);
      // the default for the GPU: interleaved up to p = 2, first touch at p = 3, shared first from
      // p = 4; for the CPU backends interleaved at every order; without a backend, the GPU's
      // where one is usable
      const auto gpu = [&](int q) { return H1Space(m, q, 1, NodeOrdering::Auto, Backend::Cuda).ordering(); };
      EXPECT_EQ(gpu(p), p <= 2 ? NodeOrdering::Interleaved : NodeOrdering::SharedFirst);
      EXPECT_EQ(gpu(3), NodeOrdering::FirstTouch);
      for (Backend b : {Backend::Serial, Backend::OpenMP})
        for (int q : {p, 3}) {
          EXPECT_EQ(H1Space(m, q, 1, NodeOrdering::Auto, b).ordering(), NodeOrdering::Interleaved);
          EXPECT_EQ(auto_ordering(q, b), NodeOrdering::Interleaved);
        }
      EXPECT_EQ(H1Space(m, p).ordering(), auto_ordering(p, Exec::best().backend));
      ASSERT_EQ(ft.num_nodes(), be.num_nodes());
      // First touch: element 0 reaches all of its nodes first, so they are 0 .. npe - 1.
      const auto e0 = ft.element_nodes(0);
      std::vector<index_t> first(e0.begin(), e0.end());
      std::sort(first.begin(), first.end());
      for (std::size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i], index_t(i)) << name(g) << " p=" << p;
      // By entity: the vertex nodes come first, in mesh order.
      const auto verts = m.element_vertices(0);
      const auto L = lattice_nodes(g, p);
      for (std::size_t i = 0; i < L.size(); ++i) {
        const NodeLocation loc = classify_node(g, p, L[i]);
        if (loc.entity_dim == 0)
          EXPECT_EQ(be.element_nodes(0)[i], verts[std::size_t(loc.entity)]) << "box meshes use every vertex";
        else
          EXPECT_GE(be.element_nodes(0)[i], m.num_vertices());
      }
      // Both orderings describe the same sharing: element-local slot by slot, the map from
      // first-touch ids to by-entity ids is a bijection.
      const std::vector<index_t> to_be = slot_bijection(ft, be);
      EXPECT_FALSE(to_be.empty()) << name(g) << " p=" << p;
    }
}

TEST(H1Space, SharedFirstPutsTheNodesOfOneElementLastAndExclusiveFromFindsThem) {
  // SharedFirst: the nodes of several elements get the ids below exclusive_from(), those of one
  // element (interiors, and exterior nodes no other element touches) the ids from it on, each
  // group in first-touch order; the sharing is that of first touch (a slot-by-slot bijection)
  // and the boundary node lists map onto each other. In any other numbering exclusive_from() is
  // where the trailing run of single-element nodes starts.
  for (Geometry g : box_geometries)
    for (int p : {1, 2, 3, 4}) {
      const Mesh m = renumbered(box_mesh(g, {3, 2, 3}), 9);
      const H1Space ft(m, p, 1, NodeOrdering::FirstTouch), sf(m, p, 1, NodeOrdering::SharedFirst);
      EXPECT_STREQ(name(sf.ordering()), "shared-first");
      ASSERT_EQ(ft.num_nodes(), sf.num_nodes());
      const auto uses = [&](const H1Space& s) {
        std::vector<int> u(std::size_t(s.num_nodes()), 0);
        for (index_t id : s.element_node_ids()) ++u[std::size_t(id)];
        return u;
      };
      const std::vector<int> us = uses(sf), uf = uses(ft);
      const index_t shared = std::count_if(us.begin(), us.end(), [](int k) { return k > 1; });
      EXPECT_EQ(sf.exclusive_from(), shared) << name(g) << " p=" << p;
      for (index_t i = 0; i < sf.num_nodes(); ++i)
        ASSERT_EQ(us[std::size_t(i)] > 1, i < shared) << name(g) << " p=" << p << " node " << i;
      // a box of quadrilaterals or hexahedra: each corner of the box belongs to one element
      if (g == Geometry::Quadrilateral || g == Geometry::Hexahedron) {
        EXPECT_LT(sf.exclusive_from(), sf.num_nodes()) << name(g) << " p=" << p;
      }
      // first touch: the last nodes are the last element's that no earlier element reached;
      // exclusive_from() is the first of the run of single-element nodes at the end
      index_t run = ft.num_nodes();
      while (run > 0 && uf[std::size_t(run - 1)] == 1) --run;
      EXPECT_EQ(ft.exclusive_from(), run) << name(g) << " p=" << p;
      // each group keeps the first-touch order
      const std::vector<index_t> to_sf = slot_bijection(ft, sf);
      ASSERT_FALSE(to_sf.empty()) << name(g) << " p=" << p;
      index_t last_shared = -1, last_own = shared - 1;
      for (index_t i = 0; i < ft.num_nodes(); ++i) {
        index_t& last = uf[std::size_t(i)] > 1 ? last_shared : last_own;
        EXPECT_EQ(to_sf[std::size_t(i)], last + 1) << name(g) << " p=" << p << " first-touch node " << i;
        last = to_sf[std::size_t(i)];
      }
      std::vector<index_t> bf, bs(sf.boundary_nodes());
      for (index_t id : ft.boundary_nodes()) bf.push_back(to_sf[std::size_t(id)]);
      std::sort(bf.begin(), bf.end());
      EXPECT_EQ(bf, bs) << name(g) << " p=" << p;
    }
}

TEST(H1Space, InterleavedOrderingNumbersLocalNodeByLocalNode) {
  // Interleaved: every element's local node 0 is numbered before any element's node 1, and so
  // on, each entity's nodes a fixed stride apart (the entity node lists follow it), and the
  // sharing is that of first touch (a slot-by-slot bijection).
  for (Geometry g : box_geometries)
    for (int p : {1, 2, 3, 4}) {
      const Mesh m = renumbered(box_mesh(g, {3, 2, 3}), 5);
      const H1Space ft(m, p, 1, NodeOrdering::FirstTouch), il(m, p, 1, NodeOrdering::Interleaved);
      EXPECT_EQ(il.ordering(), NodeOrdering::Interleaved);
      EXPECT_STREQ(name(il.ordering()), "interleaved");
      ASSERT_EQ(ft.num_nodes(), il.num_nodes());
      const index_t ne = m.num_elements();
      const std::size_t nd = il.element_nodes(0).size();
      // the highest id reached after local node l of all elements is below the lowest id first
      // reached at local node l + 1
      index_t high = -1;
      std::vector<char> met(std::size_t(il.num_nodes()), 0);
      bool ordered = true;
      for (std::size_t l = 0; l < nd; ++l) {
        index_t low = il.num_nodes(), top = high;
        for (index_t e = 0; e < ne; ++e) {
          const index_t id = il.element_nodes(e)[l];
          if (!met[std::size_t(id)]) low = std::min(low, id), top = std::max(top, id);
          met[std::size_t(id)] = 1;
        }
        if (low < il.num_nodes()) ordered = ordered && low > high;
        high = top;
      }
      // up to p = 2 every entity has at most one node, so the numbering is strictly local node
      // by local node; from p = 3 a block met at node l also holds ids that later positions reach
      if (p <= 2) {
        EXPECT_TRUE(ordered) << name(g) << " p=" << p;
      }
      EXPECT_EQ(il.element_nodes(0)[0], 0);
      const std::vector<index_t> to_il = slot_bijection(ft, il);
      ASSERT_FALSE(to_il.empty()) << name(g) << " p=" << p;
      // the boundary (entity node lists, from the blocks) maps to the same nodes
      std::vector<index_t> bf, bi;
      for (index_t id : ft.boundary_nodes()) bf.push_back(to_il[std::size_t(id)]);
      for (index_t id : il.boundary_nodes()) bi.push_back(id);
      std::sort(bf.begin(), bf.end());
      std::sort(bi.begin(), bi.end());
      EXPECT_EQ(bf, bi) << name(g) << " p=" << p;
    }
}

TEST(H1Space, ComponentMajorDofs) {
  const Mesh m = box_mesh(Geometry::Quadrilateral, {2, 3, 1});
  const H1Space s(m, 2, 3);
  EXPECT_EQ(s.num_dofs(), 3 * s.num_nodes());
  EXPECT_EQ(s.dof(2, 5), 2 * s.num_nodes() + 5);
  const int left[] = {1};
  const auto nodes = s.boundary_nodes(left);
  const auto dofs = s.boundary_dofs(left);
  ASSERT_EQ(dofs.size(), 3 * nodes.size());
  for (int c = 0; c < 3; ++c)
    for (std::size_t i = 0; i < nodes.size(); ++i) EXPECT_EQ(dofs[c * nodes.size() + i], s.dof(c, nodes[i]));
  EXPECT_TRUE(std::is_sorted(dofs.begin(), dofs.end()));
  // The x = 0 side of a 2 x 3 quad mesh at p = 2: 3 * 2 + 1 nodes, and they lie at x = 0.
  EXPECT_EQ(nodes.size(), 7u);
  for (index_t e = 0; e < m.num_elements(); ++e) {
    const auto L = lattice_nodes(Geometry::Quadrilateral, 2);
    const auto ids = s.element_nodes(e);
    for (std::size_t i = 0; i < L.size(); ++i) {
      const double xi[2] = {L[i][0] / 2.0, L[i][1] / 2.0};
      const double x = m.map(e, xi)[0];
      const bool listed = std::binary_search(nodes.begin(), nodes.end(), ids[i]);
      // Vertices on the side have x = 0 exactly and the map has no rounding there (only
      // products with 0 and with xi = 0): an exact comparison is safe.
      EXPECT_EQ(listed, x == 0.0) << "element " << e << " node " << i;
    }
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
  EXPECT_ERROR_MENTIONS(H1Space(bad, 1), "shared by 3 elements", "(0, 1, 2)");
  // Three triangles on one edge of a 2-D mesh.
  Mesh fan(2);
  fan.add_vertex({0, 0});
  fan.add_vertex({1, 0});
  fan.add_vertex({0.5, 1});
  fan.add_vertex({0.5, 2});
  fan.add_vertex({0.5, -1});
  fan.add_element(Geometry::Triangle, {0, 1, 2});
  fan.add_element(Geometry::Triangle, {0, 1, 3});
  fan.add_element(Geometry::Triangle, {1, 0, 4});
  EXPECT_ERROR_MENTIONS(H1Space(fan, 2), "edge with vertices (0, 1)", "shared by 3 elements");
  // Vertex ids out of range.
  Mesh dangling(2);
  dangling.add_vertex({0, 0});
  dangling.add_vertex({1, 0});
  dangling.add_vertex({0, 1});
  dangling.add_element(Geometry::Triangle, {0, 1, 2});
  dangling.add_element(Geometry::Triangle, {1, 7, 2});
  EXPECT_ERROR_MENTIONS(H1Space(dangling, 1), "element 1", "vertex 7", "validate");
  // More nodes than 32-bit restriction indices address: one hexahedron at p = 1290 has
  // 1291^3 > 2^31 - 1 nodes (refused before any per-node storage is allocated).
  Mesh hex(3);
  for (double z : {0.0, 1.0})
    for (double y : {0.0, 1.0})
      for (double x : {0.0, 1.0}) hex.add_vertex({x, y, z});
  hex.add_element(Geometry::Hexahedron, {0, 1, 3, 2, 4, 5, 7, 6});
  EXPECT_ERROR_MENTIONS(H1Space(hex, 1290), "2151685171 nodes", "2147483647", "32-bit");
  EXPECT_EQ(H1Space(hex, 3).num_nodes(), 64);
  // A boundary face that is no element's face.
  Mesh tri(2);
  tri.add_vertex({0, 0});
  tri.add_vertex({1, 0});
  tri.add_vertex({0, 1});
  tri.add_element(Geometry::Triangle, {0, 1, 2});
  tri.add_boundary(Geometry::Segment, {0, 1}, 4);
  EXPECT_EQ(H1Space(tri, 3).boundary_nodes().size(), 4u);
  tri.add_boundary(Geometry::Segment, {0, 0}, 5);
  EXPECT_ERROR_MENTIONS(H1Space(tri, 3).boundary_nodes(), "boundary face 1", "attribute 5", "not an edge of any element");
  const int only4[] = {4};
  EXPECT_EQ(H1Space(tri, 3).boundary_nodes(only4).size(), 4u) << "faces of other attributes are not looked at";
}
