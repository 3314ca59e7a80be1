// H1Space: global numbering of the order-p nodes of a mesh (see h1_space.hpp).
#include "tessera/fem/h1_space.hpp"

#include <algorithm>
#include <limits>

#include "tessera/core/error.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

namespace {

constexpr index_t pad = std::numeric_limits<index_t>::max();

// Per geometry: the lattice nodes, where each lies, and the rank of interior nodes.
struct LocalNodes {
  std::vector<NodeLocation> loc;
  std::vector<int> interior_rank;  // -1 unless the node is inside the element
  int num_interior = 0;
};

LocalNodes local_nodes(Geometry g, int p) {
  LocalNodes ln;
  const int d = dim(g);
  for (const auto& L : lattice_nodes(g, p)) {
    const NodeLocation l = classify_node(g, p, L);
    // Segment interiors are edge nodes (a 1-D mesh's edges are its elements, never shared).
    const bool interior = d >= 2 && l.entity_dim == d;
    ln.interior_rank.push_back(interior ? ln.num_interior++ : -1);
    ln.loc.push_back(l);
  }
  return ln;
}

index_t tri_interior(int p) { return index_t(p - 1) * (p - 2) / 2; }
index_t quad_interior(int p) { return index_t(p - 1) * (p - 1); }

}  // namespace

index_t H1Space::edge_id(index_t a, index_t b) const {
  const std::array<index_t, 2> k = a < b ? std::array<index_t, 2>{a, b} : std::array<index_t, 2>{b, a};
  const auto it = std::lower_bound(edges_.begin(), edges_.end(), k);
  if (it == edges_.end() || *it != k) return -1;
  return index_t(it - edges_.begin());
}

index_t H1Space::face_id(Key k) const {
  const auto it = std::lower_bound(faces_.begin(), faces_.end(), k);
  if (it == faces_.end() || *it != k) return -1;
  return index_t(it - faces_.begin());
}

H1Space::H1Space(const Mesh& mesh, int order, int components) : mesh_(&mesh), order_(order), components_(components) {
  if (order < 1) fail("fem::H1Space: order p = ", order, " is not supported (p >= 1)");
  if (components < 1) fail("fem::H1Space: components = ", components, " (need at least 1)");
  if (mesh.num_elements() == 0) fail("fem::H1Space: the mesh has no elements");
  const int p = order;
  const index_t ne = mesh.num_elements(), nv = mesh.num_vertices();

  // 1. Vertices used by elements, in mesh order.
  vertex_node_.assign(std::size_t(nv), -1);
  for (index_t v : mesh.element_connectivity()) {
    if (v < 0 || v >= nv) fail("fem::H1Space: an element refers to vertex ", v, " of a mesh with ", nv, " vertices (validate the mesh)");
    vertex_node_[std::size_t(v)] = 0;
  }
  index_t n = 0;
  for (auto& id : vertex_node_)
    if (id == 0) id = n++;

  // 2. Edges and (3-D) faces of all elements, keyed by sorted global vertex ids.
  std::vector<Key> face_keys;
  for (index_t e = 0; e < ne; ++e) {
    const Geometry g = mesh.element_geometry(e);
    const auto v = mesh.element_vertices(e);
    for (int k = 0; k < fem::num_edges(g); ++k) {
      const auto ev = edge_vertices(g, k);
      const index_t a = v[std::size_t(ev[0])], b = v[std::size_t(ev[1])];
      edges_.push_back(a < b ? std::array<index_t, 2>{a, b} : std::array<index_t, 2>{b, a});
    }
    if (dim(g) == 3)
      for (int f = 0; f < fem::num_faces(g); ++f) {
        const auto fv = face_vertices(g, f);
        Key k{pad, pad, pad, pad};
        for (std::size_t i = 0; i < fv.size(); ++i) k[i] = v[std::size_t(fv[i])];
        std::sort(k.begin(), k.end());
        face_keys.push_back(k);
      }
  }
  std::sort(edges_.begin(), edges_.end());
  {
    // Uses per edge (for exterior_nodes in 2-D), then deduplicate.
    std::vector<std::array<index_t, 2>> uniq;
    for (std::size_t i = 0; i < edges_.size();) {
      std::size_t j = i;
      while (j < edges_.size() && edges_[j] == edges_[i]) ++j;
      uniq.push_back(edges_[i]);
      edge_uses_.push_back(int(j - i));
      i = j;
    }
    edges_.swap(uniq);
  }
  std::sort(face_keys.begin(), face_keys.end());
  for (std::size_t i = 0; i < face_keys.size();) {
    std::size_t j = i;
    while (j < face_keys.size() && face_keys[j] == face_keys[i]) ++j;
    if (j - i > 2)
      fail("fem::H1Space: the face with vertices (", face_keys[i][0], ", ", face_keys[i][1], ", ", face_keys[i][2],
           face_keys[i][3] == pad ? std::string() : ", " + std::to_string(face_keys[i][3]), ") is shared by ", j - i,
           " elements; a conforming mesh shares a face between at most two");
    faces_.push_back(face_keys[i]);
    face_uses_.push_back(int(j - i));
    i = j;
  }

  // 3. Node layout: vertices, edges, faces, element interiors.
  edge_base_ = n;
  n += index_t(edges_.size()) * (p - 1);
  face_base_ = n;
  face_start_.assign(faces_.size() + 1, 0);
  for (std::size_t f = 0; f < faces_.size(); ++f)
    face_start_[f + 1] = face_start_[f] + (faces_[f][3] == pad ? tri_interior(p) : quad_interior(p));
  n += face_start_.back();

  LocalNodes cache[5];
  bool cached[5] = {};
  offsets_.reserve(std::size_t(ne) + 1);
  std::size_t total = 0;
  for (index_t e = 0; e < ne; ++e) total += std::size_t(fem::num_nodes(mesh.element_geometry(e), p));
  nodes_.reserve(total);
  for (index_t e = 0; e < ne; ++e) {
    const Geometry g = mesh.element_geometry(e);
    const int gi = static_cast<int>(g);
    if (!cached[gi]) cache[gi] = local_nodes(g, p), cached[gi] = true;
    const LocalNodes& ln = cache[gi];
    const auto v = mesh.element_vertices(e);
    const index_t interior_base = n;
    for (std::size_t i = 0; i < ln.loc.size(); ++i) {
      const NodeLocation& l = ln.loc[i];
      index_t id = -1;
      if (ln.interior_rank[i] >= 0) {
        id = interior_base + ln.interior_rank[i];
      } else if (l.entity_dim == 0) {
        id = vertex_node_[std::size_t(v[std::size_t(l.entity)])];
      } else if (l.entity_dim == 1) {
        const auto ev = edge_vertices(g, l.entity);
        const index_t a = v[std::size_t(ev[0])], b = v[std::size_t(ev[1])];
        const int t = a < b ? l.coords[0] : p - l.coords[0];
        id = edge_base_ + edge_id(a, b) * (p - 1) + (t - 1);
      } else {  // a face of a 3-D element
        const auto fv = face_vertices(g, l.entity);
        Key k{pad, pad, pad, pad};
        for (std::size_t j = 0; j < fv.size(); ++j) k[j] = v[std::size_t(fv[j])];
        std::sort(k.begin(), k.end());
        const index_t f = face_id(k);
        index_t offset;
        if (fv.size() == 3) {
          // Barycentric integers ordered by ascending global vertex id.
          std::array<std::pair<index_t, int>, 3> bc;
          for (int j = 0; j < 3; ++j) bc[std::size_t(j)] = {v[std::size_t(fv[std::size_t(j)])], l.coords[std::size_t(j)]};
          std::sort(bc.begin(), bc.end());
          const index_t ii = bc[1].second - 1, jj = bc[2].second - 1, rows = p - 2;
          offset = jj * rows - jj * (jj - 1) / 2 + ii;
        } else {
          // Corners a=(0,0), b=(p,0), c=(p,p), d=(0,p) in the face's (s, t) coordinates.
          static constexpr int corner[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
          index_t G[4];
          for (int j = 0; j < 4; ++j) G[j] = v[std::size_t(fv[std::size_t(j)])];
          const int o = int(std::min_element(G, G + 4) - G);
          int n1 = (o + 1) % 4, n2 = (o + 3) % 4;
          if (G[n2] < G[n1]) std::swap(n1, n2);
          const int rs = l.coords[0] - p * corner[o][0], rt = l.coords[1] - p * corner[o][1];
          const int s2 = (rs * (corner[n1][0] - corner[o][0]) + rt * (corner[n1][1] - corner[o][1]));
          const int t2 = (rs * (corner[n2][0] - corner[o][0]) + rt * (corner[n2][1] - corner[o][1]));
          offset = index_t(t2 - 1) * (p - 1) + (s2 - 1);
        }
        id = face_base_ + face_start_[std::size_t(f)] + offset;
      }
      nodes_.push_back(id);
    }
    n += ln.num_interior;
    offsets_.push_back(index_t(nodes_.size()));
  }
  if (n > max_h1_nodes)
    fail("fem::H1Space: ", n, " nodes at order ", p, " exceed the ", max_h1_nodes,
         " that 32-bit restriction indices address; use a coarser mesh or a lower order");
  num_nodes_ = n;
}

void H1Space::entity_nodes(Geometry g, std::span<const index_t> v, std::vector<index_t>& out) const {
  const int p = order_;
  for (index_t x : v) {
    const index_t id = x >= 0 && x < index_t(vertex_node_.size()) ? vertex_node_[std::size_t(x)] : -1;
    if (id < 0) fail("fem::H1Space: boundary vertex ", x, " belongs to no element");
    out.push_back(id);
  }
  auto add_edge = [&](index_t a, index_t b) {
    const index_t eid = edge_id(a, b);
    if (eid < 0) fail("fem::H1Space: boundary edge (", a, ", ", b, ") is not an edge of any element");
    for (int t = 0; t < p - 1; ++t) out.push_back(edge_base_ + eid * (p - 1) + t);
  };
  if (g == Geometry::Segment) {
    add_edge(v[0], v[1]);
    return;
  }
  for (int k = 0; k < fem::num_edges(g); ++k) {
    const auto ev = edge_vertices(g, k);
    add_edge(v[std::size_t(ev[0])], v[std::size_t(ev[1])]);
  }
  if (mesh_->dim() == 3) {
    Key k{pad, pad, pad, pad};
    for (std::size_t j = 0; j < v.size(); ++j) k[j] = v[j];
    std::sort(k.begin(), k.end());
    const index_t f = face_id(k);
    if (f < 0) fail("fem::H1Space: a boundary ", name(g), " is not a face of any element");
    for (index_t i = face_start_[std::size_t(f)]; i < face_start_[std::size_t(f) + 1]; ++i) out.push_back(face_base_ + i);
  }
}

std::vector<index_t> H1Space::boundary_nodes(std::span<const int> attributes) const {
  std::vector<index_t> out;
  const Mesh& m = *mesh_;
  for (index_t b = 0; b < m.num_boundary(); ++b) {
    if (!attributes.empty() &&
        std::find(attributes.begin(), attributes.end(), m.boundary_attribute(b)) == attributes.end())
      continue;
    entity_nodes(m.boundary_geometry(b), m.boundary_vertices(b), out);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<index_t> H1Space::boundary_dofs(std::span<const int> attributes) const {
  const auto nodes = boundary_nodes(attributes);
  std::vector<index_t> out;
  out.reserve(nodes.size() * std::size_t(components_));
  for (int c = 0; c < components_; ++c)
    for (index_t n : nodes) out.push_back(index_t(c) * num_nodes_ + n);
  return out;
}

std::vector<index_t> H1Space::exterior_nodes() const {
  std::vector<index_t> out;
  const Mesh& m = *mesh_;
  if (m.dim() == 1) {
    std::vector<int> uses(vertex_node_.size(), 0);
    for (index_t v : m.element_connectivity()) ++uses[std::size_t(v)];
    for (std::size_t v = 0; v < uses.size(); ++v)
      if (uses[v] == 1) out.push_back(vertex_node_[v]);
    return out;
  }
  for (index_t e = 0; e < m.num_elements(); ++e) {
    const Geometry g = m.element_geometry(e);
    const auto v = m.element_vertices(e);
    if (dim(g) == 2) {
      for (int k = 0; k < fem::num_edges(g); ++k) {
        const auto ev = edge_vertices(g, k);
        const index_t a = v[std::size_t(ev[0])], b = v[std::size_t(ev[1])];
        if (edge_uses_[std::size_t(edge_id(a, b))] == 1) {
          const index_t ab[2] = {a, b};
          entity_nodes(Geometry::Segment, ab, out);
        }
      }
    } else {
      for (int f = 0; f < fem::num_faces(g); ++f) {
        const auto fv = face_vertices(g, f);
        index_t fvert[4];
        Key k{pad, pad, pad, pad};
        for (std::size_t j = 0; j < fv.size(); ++j) fvert[j] = k[j] = v[std::size_t(fv[j])];
        std::sort(k.begin(), k.end());
        if (face_uses_[std::size_t(face_id(k))] == 1)
          entity_nodes(face_geometry(g, f), std::span<const index_t>(fvert, fv.size()), out);
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace tessera::fem
