// H1Space: global numbering of the order-p nodes of a mesh (see h1_space.hpp).
//
// Construction is linear in the mesh size apart from sorts of tiny buckets: the edges and
// faces of all elements are bucketed by their smallest vertex id (a counting sort), each
// bucket is sorted by the remaining vertex ids, and equal keys get one id. Buckets are
// visited in ascending order, so the ids are those of a lexicographic sort of the keys.
#include "tessera/fem/h1_space.hpp"

#include <algorithm>
#include <limits>
#include <sstream>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

namespace {

constexpr index_t pad = std::numeric_limits<index_t>::max();

// Edge and face tables of one geometry, read once (the reference_element functions
// validate their arguments on every call).
struct Topology {
  int dim = 0, nv = 0, ne = 0, nf = 0;
  int edge[12][2] = {};
  int face[6][4] = {};
  int face_size[6] = {};
};

Topology topology(Geometry g) {
  Topology t;
  t.dim = dim(g);
  t.nv = num_vertices(g);
  t.ne = num_edges(g);
  for (int k = 0; k < t.ne; ++k) {
    const auto ev = edge_vertices(g, k);
    t.edge[k][0] = ev[0], t.edge[k][1] = ev[1];
  }
  if (t.dim == 3) {
    t.nf = num_faces(g);
    for (int f = 0; f < t.nf; ++f) {
      const auto fv = face_vertices(g, f);
      t.face_size[f] = int(fv.size());
      for (std::size_t j = 0; j < fv.size(); ++j) t.face[f][j] = fv[j];
    }
  }
  return t;
}

enum NodeKind : unsigned char { kVertex, kEdge, kFace, kInterior };

// One lattice node of a geometry: where it lies (classify_node) and, for interior nodes,
// its rank among the element's interior nodes.
struct LocalNode {
  NodeKind kind;
  int entity;
  int rank;
  std::array<int, 3> coords;
};

struct LocalNodes {
  std::vector<LocalNode> nodes;
  int num_interior = 0;
};

LocalNodes local_nodes(Geometry g, int p) {
  LocalNodes ln;
  const int d = dim(g);
  for (const auto& L : lattice_nodes(g, p)) {
    const NodeLocation l = classify_node(g, p, L);
    LocalNode n{kVertex, l.entity, -1, l.coords};
    if (l.entity_dim == 0) n.kind = kVertex;
    // A segment's inner nodes are its edge's nodes: segments sharing both ends share them.
    else if (l.entity_dim == 1) n.kind = kEdge;
    else if (l.entity_dim == d) n.kind = kInterior, n.rank = ln.num_interior++;
    else n.kind = kFace;
    ln.nodes.push_back(n);
  }
  return ln;
}

// Nodes strictly inside an element of geometry g (a segment's inner nodes count as edge nodes).
index_t element_interior_nodes(Geometry g, int p) {
  const index_t q = p - 1;
  switch (g) {
    case Geometry::Segment: return 0;
    case Geometry::Triangle: return q * (q - 1) / 2;
    case Geometry::Quadrilateral: return q * q;
    case Geometry::Tetrahedron: return q * (q - 1) * (q - 2) / 6;
    case Geometry::Hexahedron: return q * q * q;
  }
  return 0;
}

index_t tri_face_nodes(int p) { return p >= 3 ? index_t(p - 1) * (p - 2) / 2 : 0; }
index_t quad_face_nodes(int p) { return index_t(p - 1) * (p - 1); }
index_t face_nodes(const std::array<index_t, 4>& key, int p) {
  return key[3] == pad ? tri_face_nodes(p) : quad_face_nodes(p);
}

// Sorts 3 or 4 ids ascending (triangles padded with `pad`, which sorts last).
std::array<index_t, 4> sorted_key(const index_t* v, int n) {
  std::array<index_t, 4> k{pad, pad, pad, pad};
  for (int i = 0; i < n; ++i) k[std::size_t(i)] = v[i];
  auto cs = [&](int i, int j) {
    if (k[std::size_t(j)] < k[std::size_t(i)]) std::swap(k[std::size_t(i)], k[std::size_t(j)]);
  };
  cs(0, 1), cs(2, 3), cs(0, 2), cs(1, 3), cs(1, 2);
  return k;
}

std::string face_text(const std::array<index_t, 4>& k) {
  std::ostringstream os;
  os << "(" << k[0] << ", " << k[1] << ", " << k[2];
  if (k[3] != pad) os << ", " << k[3];
  os << ")";
  return os.str();
}

// Canonical frame of a face seen from one element: maps the element's face coordinates to
// the face's own (see h1_space.hpp).
struct FaceFrame {
  index_t id = 0;
  bool tri = true;
  int rank[3] = {0, 0, 0};              // triangle: position of face vertex j in ascending id order
  int ox = 0, oy = 0, d1x = 0, d1y = 0, d2x = 0, d2y = 0;  // quadrilateral: origin and axes
};

FaceFrame face_frame(const index_t* G, int n, int p) {
  FaceFrame fr;
  fr.tri = n == 3;
  if (fr.tri) {
    for (int j = 0; j < 3; ++j)
      fr.rank[j] = int(G[(j + 1) % 3] < G[j]) + int(G[(j + 2) % 3] < G[j]);
    return fr;
  }
  // Face corners a, b, c, d sit at (0, 0), (1, 0), (1, 1), (0, 1) in units of p.
  static constexpr int corner[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  const int o = int(std::min_element(G, G + 4) - G);
  int n1 = (o + 1) % 4, n2 = (o + 3) % 4;
  if (G[n2] < G[n1]) std::swap(n1, n2);
  fr.ox = p * corner[o][0], fr.oy = p * corner[o][1];
  fr.d1x = corner[n1][0] - corner[o][0], fr.d1y = corner[n1][1] - corner[o][1];
  fr.d2x = corner[n2][0] - corner[o][0], fr.d2y = corner[n2][1] - corner[o][1];
  return fr;
}

// Offset of a face node (coordinates as classify_node gives them) within its face's block.
index_t face_offset(const FaceFrame& fr, const std::array<int, 3>& c, int p) {
  if (fr.tri) {
    int s[3];
    for (int j = 0; j < 3; ++j) s[fr.rank[j]] = c[std::size_t(j)];
    // Row jj = s[2] - 1 holds p - 2 - jj nodes, ii = s[1] - 1 along it.
    const index_t ii = s[1] - 1, jj = s[2] - 1;
    return jj * (p - 2) - jj * (jj - 1) / 2 + ii;
  }
  const int rs = c[0] - fr.ox, rt = c[1] - fr.oy;
  const int s2 = rs * fr.d1x + rt * fr.d1y, t2 = rs * fr.d2x + rt * fr.d2y;
  return index_t(t2 - 1) * (p - 1) + (s2 - 1);
}

// Bucket entries: the key without its smallest id, and the element-local instance.
struct EdgeEntry {
  index_t b, inst;
};
struct FaceEntry {
  std::array<index_t, 3> rest;
  index_t inst;
};

}  // namespace

const char* name(NodeOrdering o) {
  switch (o) {
    case NodeOrdering::FirstTouch: return "first-touch";
    case NodeOrdering::ByEntity: return "by-entity";
    case NodeOrdering::Interleaved: return "interleaved";
    case NodeOrdering::SharedFirst: return "shared-first";
    case NodeOrdering::Auto: return "auto";
  }
  return "invalid";
}

index_t H1Space::edge_id(index_t a, index_t b) const {
  const std::array<index_t, 2> k = a < b ? std::array<index_t, 2>{a, b} : std::array<index_t, 2>{b, a};
  const auto it = std::lower_bound(edges_.begin(), edges_.end(), k);
  if (it == edges_.end() || *it != k) return -1;
  return index_t(it - edges_.begin());
}

index_t H1Space::face_id(const Key& k) const {
  const auto it = std::lower_bound(faces_.begin(), faces_.end(), k);
  if (it == faces_.end() || *it != k) return -1;
  return index_t(it - faces_.begin());
}

NodeOrdering auto_ordering(int order, Backend b) {
  if (b != Backend::Cuda) return NodeOrdering::Interleaved;
  return order <= 2 ? NodeOrdering::Interleaved : order == 3 ? NodeOrdering::FirstTouch : NodeOrdering::SharedFirst;
}

H1Space::H1Space(const Mesh& mesh, int order, int components, NodeOrdering ordering, Backend backend)
    : mesh_(&mesh), order_(order), components_(components),
      ordering_(ordering == NodeOrdering::Auto ? auto_ordering(order, backend) : ordering) {
  if (order < 1) fail("fem::H1Space: order p = ", order, " is not supported; use p >= 1");
  if (components < 1) fail("fem::H1Space: components = ", components, "; a field has at least 1 component");
  if (mesh.num_elements() == 0) fail("fem::H1Space: the mesh has no elements; add elements or load a mesh first");
  if (ordering != NodeOrdering::FirstTouch && ordering != NodeOrdering::ByEntity &&
      ordering != NodeOrdering::Interleaved && ordering != NodeOrdering::SharedFirst && ordering != NodeOrdering::Auto)
    fail("fem::H1Space: invalid NodeOrdering value ", static_cast<int>(ordering));
  const int p = order;
  const index_t ne = mesh.num_elements(), nv = mesh.num_vertices();

  Topology topo[5];
  LocalNodes cache[5];
  bool cached[5] = {};
  index_t edge_instances = 0, face_instances = 0, interior_nodes = 0, local_total = 0;
  for (index_t e = 0; e < ne; ++e) {
    const Geometry g = mesh.element_geometry(e);
    const int gi = static_cast<int>(g);
    if (!cached[gi]) topo[gi] = topology(g), cached[gi] = true;
    const auto v = mesh.element_vertices(e);
    if (int(v.size()) != topo[gi].nv)
      fail("fem::H1Space: element ", e, " (", name(g), ") has ", v.size(), " vertices, expected ", topo[gi].nv);
    for (index_t x : v)
      if (x < 0 || x >= nv)
        fail("fem::H1Space: element ", e, " refers to vertex ", x, " of a mesh with ", nv,
             " vertices; check the mesh with Mesh::validate()");
    edge_instances += topo[gi].ne;
    face_instances += topo[gi].nf;
    interior_nodes += element_interior_nodes(g, p);
    local_total += fem::num_nodes(g, p);
  }

  // ---- edges: bucket by smaller vertex, sort each bucket by the larger ---------------------
  std::vector<index_t> edge_of(static_cast<std::size_t>(edge_instances));
  std::vector<int> edge_uses;
  {
    std::vector<index_t> start(std::size_t(nv) + 1, 0);
    for (index_t e = 0; e < ne; ++e) {
      const Topology& T = topo[static_cast<int>(mesh.element_geometry(e))];
      const auto v = mesh.element_vertices(e);
      for (int k = 0; k < T.ne; ++k) ++start[std::size_t(std::min(v[std::size_t(T.edge[k][0])], v[std::size_t(T.edge[k][1])]) + 1)];
    }
    for (index_t a = 0; a < nv; ++a) start[std::size_t(a + 1)] += start[std::size_t(a)];
    std::vector<EdgeEntry> bucket(static_cast<std::size_t>(edge_instances));
    {
      std::vector<index_t> pos(start.begin(), start.end() - 1);
      index_t inst = 0;
      for (index_t e = 0; e < ne; ++e) {
        const Topology& T = topo[static_cast<int>(mesh.element_geometry(e))];
        const auto v = mesh.element_vertices(e);
        for (int k = 0; k < T.ne; ++k, ++inst) {
          const index_t a = v[std::size_t(T.edge[k][0])], b = v[std::size_t(T.edge[k][1])];
          bucket[std::size_t(pos[std::size_t(std::min(a, b))]++)] = {std::max(a, b), inst};
        }
      }
    }
    for (index_t a = 0; a < nv; ++a) {
      const auto first = bucket.begin() + start[std::size_t(a)], last = bucket.begin() + start[std::size_t(a + 1)];
      std::sort(first, last, [](const EdgeEntry& x, const EdgeEntry& y) { return x.b < y.b || (x.b == y.b && x.inst < y.inst); });
      for (auto it = first; it != last; ++it) {
        if (it == first || it->b != (it - 1)->b) {
          edges_.push_back({a, it->b});
          edge_uses.push_back(0);
        }
        edge_of[std::size_t(it->inst)] = index_t(edges_.size()) - 1;
        ++edge_uses.back();
      }
    }
  }
  if (mesh.dim() == 2)
    for (std::size_t i = 0; i < edges_.size(); ++i)
      if (edge_uses[i] > 2)
        fail("fem::H1Space: the edge with vertices (", edges_[i][0], ", ", edges_[i][1], ") is shared by ", edge_uses[i],
             " elements; a conforming 2-D mesh shares an edge between at most two (check the mesh for "
             "duplicated or overlapping elements)");

  // ---- faces of 3-D elements: bucket by smallest vertex, sort by the other three ----------
  std::vector<index_t> face_of(static_cast<std::size_t>(face_instances));
  std::vector<int> face_uses;
  if (face_instances > 0) {
    std::vector<index_t> start(std::size_t(nv) + 1, 0);
    std::vector<FaceEntry> bucket(static_cast<std::size_t>(face_instances));
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<index_t> pos;
      if (pass == 1) {
        for (index_t a = 0; a < nv; ++a) start[std::size_t(a + 1)] += start[std::size_t(a)];
        pos.assign(start.begin(), start.end() - 1);
      }
      index_t inst = 0;
      for (index_t e = 0; e < ne; ++e) {
        const Topology& T = topo[static_cast<int>(mesh.element_geometry(e))];
        const auto v = mesh.element_vertices(e);
        for (int f = 0; f < T.nf; ++f, ++inst) {
          index_t fv[4];
          for (int j = 0; j < T.face_size[f]; ++j) fv[j] = v[std::size_t(T.face[f][j])];
          const Key k = sorted_key(fv, T.face_size[f]);
          if (pass == 0) ++start[std::size_t(k[0] + 1)];
          else bucket[std::size_t(pos[std::size_t(k[0])]++)] = {{k[1], k[2], k[3]}, inst};
        }
      }
    }
    for (index_t a = 0; a < nv; ++a) {
      const auto first = bucket.begin() + start[std::size_t(a)], last = bucket.begin() + start[std::size_t(a + 1)];
      std::sort(first, last, [](const FaceEntry& x, const FaceEntry& y) {
        return x.rest < y.rest || (x.rest == y.rest && x.inst < y.inst);
      });
      for (auto it = first; it != last; ++it) {
        if (it == first || it->rest != (it - 1)->rest) {
          faces_.push_back({a, it->rest[0], it->rest[1], it->rest[2]});
          face_uses.push_back(0);
        }
        face_of[std::size_t(it->inst)] = index_t(faces_.size()) - 1;
        ++face_uses.back();
      }
    }
    for (std::size_t f = 0; f < faces_.size(); ++f)
      if (face_uses[f] > 2)
        fail("fem::H1Space: the face with vertices ", face_text(faces_[f]), " is shared by ", face_uses[f],
             " elements; a conforming mesh shares a face between at most two (check the mesh for duplicated or "
             "overlapping elements)");
  }

  // ---- node count (checked before the numbering allocates) --------------------------------
  std::vector<char> used(std::size_t(nv), 0);
  std::vector<int> vertex_uses;
  if (mesh.dim() == 1) vertex_uses.assign(std::size_t(nv), 0);
  for (index_t x : mesh.element_connectivity()) {
    used[std::size_t(x)] = 1;
    if (!vertex_uses.empty()) ++vertex_uses[std::size_t(x)];
  }
  index_t total = std::count(used.begin(), used.end(), char(1)) + index_t(edges_.size()) * (p - 1) + interior_nodes;
  for (const Key& k : faces_) total += face_nodes(k, p);
  if (total > max_h1_nodes)
    fail("fem::H1Space: ", total, " nodes at order ", p, " exceed the ", max_h1_nodes,
         " that the 32-bit (int32) indices of the element restriction address; use a coarser mesh or a lower order");

  for (int gi = 0; gi < 5; ++gi)
    if (cached[gi]) cache[gi] = local_nodes(static_cast<Geometry>(gi), p);

  // ---- numbering ----------------------------------------------------------------------------
  vertex_node_.assign(std::size_t(nv), -1);
  edge_node_.assign(edges_.size(), -1);
  face_node_.assign(faces_.size(), -1);
  index_t n = 0;
  if (ordering == NodeOrdering::ByEntity) {
    for (index_t x = 0; x < nv; ++x)
      if (used[std::size_t(x)]) vertex_node_[std::size_t(x)] = n++;
    for (auto& b : edge_node_) b = n, n += p - 1;
    for (std::size_t f = 0; f < faces_.size(); ++f) face_node_[f] = n, n += face_nodes(faces_[f], p);
  }
  offsets_.assign(1, 0);
  offsets_.reserve(std::size_t(ne) + 1);
  nodes_.clear();
  nodes_.resize(std::size_t(local_total));
  index_t* out = nodes_.data();
  index_t edge_inst = 0, face_inst = 0;
  for (index_t e = 0; e < ne; ++e) {
    const Geometry g = mesh.element_geometry(e);
    const Topology& T = topo[static_cast<int>(g)];
    const LocalNodes& ln = cache[static_cast<int>(g)];
    const auto v = mesh.element_vertices(e);
    index_t eid[12];
    bool flip[12];
    for (int k = 0; k < T.ne; ++k) {
      eid[k] = edge_of[std::size_t(edge_inst + k)];
      flip[k] = v[std::size_t(T.edge[k][0])] > v[std::size_t(T.edge[k][1])];
    }
    FaceFrame frame[6];
    for (int f = 0; f < T.nf; ++f) {
      index_t G[4];
      for (int j = 0; j < T.face_size[f]; ++j) G[j] = v[std::size_t(T.face[f][j])];
      frame[f] = face_frame(G, T.face_size[f], p);
      frame[f].id = face_of[std::size_t(face_inst + f)];
    }
    if (T.dim == 3) {
      for (int f = 0; f < T.nf; ++f)
        if (face_uses[std::size_t(frame[f].id)] == 1) exterior_.push_back({e, f});
    } else if (T.dim == 2) {
      for (int k = 0; k < T.ne; ++k)
        if (edge_uses[std::size_t(eid[k])] == 1) exterior_.push_back({e, k});
    } else if (!vertex_uses.empty()) {
      for (int j = 0; j < T.nv; ++j)
        if (vertex_uses[std::size_t(v[std::size_t(j)])] == 1) exterior_.push_back({e, j});
    }
    edge_inst += T.ne;
    face_inst += T.nf;
    index_t interior_base = -1;
    for (const LocalNode& l : ln.nodes) {
      switch (l.kind) {
        case kVertex: {
          index_t& id = vertex_node_[std::size_t(v[std::size_t(l.entity)])];
          if (id < 0) id = n++;
          *out++ = id;
          break;
        }
        case kEdge: {
          index_t& base = edge_node_[std::size_t(eid[l.entity])];
          if (base < 0) base = n, n += p - 1;
          const int t = flip[l.entity] ? p - l.coords[0] : l.coords[0];
          *out++ = base + t - 1;
          break;
        }
        case kFace: {
          const FaceFrame& fr = frame[l.entity];
          index_t& base = face_node_[std::size_t(fr.id)];
          if (base < 0) base = n, n += fr.tri ? tri_face_nodes(p) : quad_face_nodes(p);
          *out++ = base + face_offset(fr, l.coords, p);
          break;
        }
        case kInterior: {
          if (interior_base < 0) interior_base = n, n += ln.num_interior;
          *out++ = interior_base + l.rank;
          break;
        }
      }
    }
    offsets_.push_back(index_t(out - nodes_.data()));
  }
  if (n != total)
    fail("fem::H1Space: internal error: numbered ", n, " nodes, counted ", total, " (please report this mesh)");
  num_nodes_ = n;
  if (ordering_ == NodeOrdering::Interleaved) interleave();
  // how many elements use each node, 2 standing for several
  std::vector<unsigned char> uses(static_cast<std::size_t>(n), 0);
  for (index_t id : nodes_) uses[std::size_t(id)] = static_cast<unsigned char>(std::min(2, uses[std::size_t(id)] + 1));
  if (ordering_ == NodeOrdering::SharedFirst) shared_first(uses);
  // where the trailing run of nodes used by one element starts (all of them with SharedFirst)
  exclusive_from_ = n;
  while (exclusive_from_ > 0 && uses[std::size_t(exclusive_from_ - 1)] == 1) --exclusive_from_;
}

void H1Space::renumber(const std::vector<index_t>& fresh) {
  for (index_t& id : nodes_) id = fresh[std::size_t(id)];
  for (auto* ids : {&vertex_node_, &edge_node_, &face_node_})
    for (index_t& id : *ids)
      if (id >= 0) id = fresh[std::size_t(id)];
}

void H1Space::shared_first(std::vector<unsigned char>& uses) {
  // A stable partition of the first-touch ids: the nodes of several elements, then those of one.
  // An entity's nodes are used by the same elements, so each entity's block stays whole.
  const index_t nn = num_nodes_;
  const index_t shared = std::count(uses.begin(), uses.end(), static_cast<unsigned char>(2));
  std::vector<index_t> fresh(static_cast<std::size_t>(nn));
  index_t a = 0, b = shared;
  for (index_t i = 0; i < nn; ++i) fresh[std::size_t(i)] = uses[std::size_t(i)] > 1 ? a++ : b++;
  renumber(fresh);
  std::fill(uses.begin(), uses.begin() + shared, static_cast<unsigned char>(2));
  std::fill(uses.begin() + shared, uses.end(), static_cast<unsigned char>(1));
}

void H1Space::interleave() {
  // The first-touch numbering gives each entity (vertex, edge, face, interior) one block of
  // consecutive ids: a block starts where an id is the lowest of its entity. Visiting the
  // element nodes position by position (every element's local node 0, then every element's
  // node 1, ...) renumbers each block at its first visit, together with the blocks of the same
  // size first visited at the same position by the elements of the same group of
  // interleave_group consecutive elements: node t of the j-th of those m blocks gets
  // base + t m + j, so that the elements of a group reach one position through neighbouring ids
  // whatever the size of the entity (the CPU kernels' batches of elements are such groups).
  const index_t nn = num_nodes_;
  std::vector<index_t> start(std::size_t(nn), -1);  // old id -> first old id of its block
  std::vector<index_t> size(std::size_t(nn), 0);    // at a block's first old id: its size
  const auto mark = [&](index_t base, index_t count) {
    for (index_t i = 0; i < count; ++i) start[std::size_t(base + i)] = base;
    size[std::size_t(base)] = count;
  };
  for (index_t id : vertex_node_)
    if (id >= 0) mark(id, 1);
  for (index_t id : edge_node_)
    if (id >= 0) mark(id, order_ - 1);
  for (std::size_t f = 0; f < faces_.size(); ++f)
    if (face_node_[f] >= 0) mark(face_node_[f], face_nodes(faces_[f], order_));
  // the rest are element interiors: each element's interior ids are one block from its lowest
  const index_t ne = index_t(offsets_.size()) - 1;
  std::size_t most = 0;
  for (index_t e = 0; e < ne; ++e) {
    const std::size_t a = std::size_t(offsets_[std::size_t(e)]), b = std::size_t(offsets_[std::size_t(e) + 1]);
    most = std::max(most, b - a);
    index_t low = -1, count = 0;
    for (std::size_t k = a; k < b; ++k)
      if (start[std::size_t(nodes_[k])] < 0) {
        low = low < 0 ? nodes_[k] : std::min(low, nodes_[k]);
        ++count;
      }
    if (count > 0) mark(low, count);
  }
  std::vector<index_t> fresh(std::size_t(nn), -1);  // old id -> new id
  std::vector<unsigned char> step(std::size_t(nn), 1);  // at a block's first old id: its new stride
  std::vector<char> met(std::size_t(nn), 0);
  index_t n = 0;
  std::vector<index_t> group;  // first old ids of the blocks numbered together
  const auto flush = [&] {
    const index_t m = index_t(group.size());
    if (m == 0) return;
    const index_t s = size[std::size_t(group[0])];
    for (index_t j = 0; j < m; ++j) {
      const index_t b = group[std::size_t(j)];
      for (index_t t = 0; t < s; ++t) fresh[std::size_t(b + t)] = n + t * m + j;
      step[std::size_t(b)] = static_cast<unsigned char>(m);
    }
    n += m * s;
    group.clear();
  };
  for (std::size_t l = 0; l < most; ++l) {
    index_t group_of = -1;  // the element group of the blocks in `group`
    for (index_t e = 0; e < ne; ++e) {
      const std::size_t k = std::size_t(offsets_[std::size_t(e)]) + l;
      if (k >= std::size_t(offsets_[std::size_t(e) + 1])) continue;
      const index_t b = start[std::size_t(nodes_[k])];
      if (met[std::size_t(b)]) continue;
      met[std::size_t(b)] = 1;
      if (!group.empty() && (e / interleave_group != group_of || index_t(group.size()) == interleave_group ||
                             size[std::size_t(group[0])] != size[std::size_t(b)]))
        flush();
      group_of = e / interleave_group;
      group.push_back(b);
    }
    flush();
  }
  if (n != nn)
    fail("fem::H1Space: internal error: interleaved ", n, " of ", nn, " nodes (please report this mesh)");
  const auto steps = [&](const std::vector<index_t>& base, std::vector<unsigned char>& out) {
    out.assign(base.size(), 1);
    for (std::size_t i = 0; i < base.size(); ++i)
      if (base[i] >= 0) out[i] = step[std::size_t(base[i])];
  };
  steps(edge_node_, edge_step_);
  steps(face_node_, face_step_);
  renumber(fresh);
}

void H1Space::entity_nodes(Geometry g, std::span<const index_t> v, std::vector<index_t>& out) const {
  const int p = order_;
  for (index_t x : v) {
    const index_t id = x >= 0 && x < index_t(vertex_node_.size()) ? vertex_node_[std::size_t(x)] : -1;
    if (id < 0) fail("vertex ", x, " belongs to no element");
    out.push_back(id);
  }
  auto add_edge = [&](index_t a, index_t b) {
    const index_t eid = edge_id(a, b);
    if (eid < 0) fail("its edge (", a, ", ", b, ") is not an edge of any element");
    const index_t step = edge_step_.empty() ? 1 : edge_step_[std::size_t(eid)];
    for (int t = 0; t < p - 1; ++t) out.push_back(edge_node_[std::size_t(eid)] + t * step);
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
    const Key k = sorted_key(v.data(), int(v.size()));
    const index_t f = face_id(k);
    if (f < 0) fail("it is not a face of any element");
    const index_t nf = face_nodes(k, p);
    const index_t step = face_step_.empty() ? 1 : face_step_[std::size_t(f)];
    for (index_t i = 0; i < nf; ++i) out.push_back(face_node_[std::size_t(f)] + i * step);
  }
}

std::vector<index_t> H1Space::boundary_nodes(std::span<const int> attributes) const {
  std::vector<index_t> out;
  const Mesh& m = *mesh_;
  for (index_t b = 0; b < m.num_boundary(); ++b) {
    if (!attributes.empty() &&
        std::find(attributes.begin(), attributes.end(), m.boundary_attribute(b)) == attributes.end())
      continue;
    const Geometry g = m.boundary_geometry(b);
    const auto v = m.boundary_vertices(b);
    if (int(v.size()) != fem::num_vertices(g) || g == Geometry::Tetrahedron || g == Geometry::Hexahedron)
      fail("fem::H1Space::boundary_nodes: boundary face ", b, " is a ", name(g), " with ", v.size(),
           " vertices, which cannot bound a ", m.dim(), "-D mesh");
    try {
      entity_nodes(g, v, out);
    } catch (const Error& err) {
      std::ostringstream verts;
      for (std::size_t j = 0; j < v.size(); ++j) verts << (j ? ", " : "") << v[j];
      fail("fem::H1Space::boundary_nodes: boundary face ", b, " (", name(g), " (", verts.str(), "), attribute ",
           m.boundary_attribute(b), "): ", err.what(), "; boundary faces must be faces of the mesh's elements");
    }
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
    for (index_t n : nodes) out.push_back(dof(c, n));
  return out;
}

std::vector<index_t> H1Space::exterior_nodes() const {
  std::vector<index_t> out;
  const Mesh& m = *mesh_;
  for (const auto& [e, j] : exterior_) {
    const Geometry g = m.element_geometry(e);
    const auto v = m.element_vertices(e);
    const int d = dim(g);
    if (d == 1) {
      out.push_back(vertex_node_[std::size_t(v[std::size_t(j)])]);
    } else if (d == 2) {
      const auto ev = edge_vertices(g, j);
      const index_t ab[2] = {v[std::size_t(ev[0])], v[std::size_t(ev[1])]};
      entity_nodes(Geometry::Segment, ab, out);
    } else {
      const auto fv = face_vertices(g, j);
      index_t fvert[4];
      for (std::size_t k = 0; k < fv.size(); ++k) fvert[k] = v[std::size_t(fv[k])];
      entity_nodes(face_geometry(g, j), std::span<const index_t>(fvert, fv.size()), out);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace tessera::fem
