#pragma once
/// \file h1_space.hpp
/// `H1Space`: the continuous order-p Lagrange space of a mesh: global numbering of the
/// nodes of every element, consistent across shared vertices, edges and faces.
///
///     tessera::fem::Mesh mesh = tessera::fem::generate_mesh("box:hex:10x10x10");
///     tessera::fem::H1Space space(mesh, 3);            // p = 3, scalar
///     space.num_dofs();                                // 31^3 = 29791
///     auto nodes = space.element_nodes(0);             // 64 global node ids, lattice order
///     auto fixed = space.boundary_dofs();              // every boundary attribute
///
/// Shared nodes. Element-local nodes follow the lattice order of reference_element.hpp.
/// A node on a shared entity is identified by a canonical key that does not depend on the
/// vertex order of the element it is seen from: a vertex by its mesh vertex; the nodes of an
/// edge by the edge and t, counted from the endpoint with the smaller mesh vertex id; the
/// nodes of a triangular face by the face and its barycentric integers ordered by ascending
/// vertex id; the nodes of a quadrilateral face by the face and (s, t) in the frame whose
/// origin is the face's smallest-id vertex and whose first axis points to the smaller-id of
/// that vertex's two neighbours on the face. Edges and faces are identified by their sorted
/// vertex ids.
///
/// Numbering (NodeOrdering): first touch: elements are visited in mesh order and their nodes
/// in lattice order; the first visit of a vertex, edge, face or element interior numbers all
/// of its nodes as one consecutive block (in the canonical order above). The nodes of an
/// element are then close together in memory, and so are those of neighbouring elements,
/// which is what kernels that run an element's nodes on neighbouring threads read.
/// `Interleaved` visits the elements' nodes local position by local position instead (every
/// element's node 0, then every element's node 1, ...), numbering each entity at its first
/// visit, node by node together with the entities that the same group of interleave_group
/// elements first meets there (an entity's nodes are then a stride apart): the nodes of
/// consecutive elements at one local position are then neighbours, which is what kernels that run one element per thread read (at p = 1, 2 on
/// hexahedra, and hexahedron mass at p = 2 in the global apply). `Auto`, the default, takes
/// what the kernels of the space's backend read best (auto_ordering): for the GPU Interleaved
/// up to p = 2, first touch at p = 3 and SharedFirst from p = 4 (docs/benchmarks/operators.md);
/// for the CPU backends Interleaved at every order, since their batched kernels put consecutive
/// elements in the lanes of a vector (docs/benchmarks/cpu.md). `ByEntity` numbers all vertices (in mesh order), then all
/// edge nodes, face nodes and element interiors. `SharedFirst` is the first-touch numbering
/// with the nodes that one element uses alone (its interior, and its nodes on the exterior that
/// no other element touches) moved after all the others, each group keeping its order:
/// exclusive_from() is then where they start, and a fused operator stores their results
/// instead of adding them atomically, and its zero fill skips them.
///
/// Vector fields (components > 1) are component-major: dof(c, n) = c * num_nodes() + n.
///
/// The space keeps a pointer to the mesh, which must outlive it.

#include <array>
#include <span>
#include <utility>
#include <vector>

#include "tessera/core/exec.hpp"
#include "tessera/core/macros.hpp"
#include "tessera/fem/mesh.hpp"

namespace tessera::fem {

/// Largest number of global nodes an H1Space numbers: the element restriction stores node
/// ids as 32-bit integers (int32).
inline constexpr index_t max_h1_nodes = index_t{2147483647};

/// Layout of an H1Space's global nodes (see the file comment).
enum class NodeOrdering {
  FirstTouch,  ///< element by element, each entity's nodes numbered at its first visit
  ByEntity,    ///< vertices, then edges, then faces, then element interiors
  Interleaved,  ///< local node by local node across the elements (every element's node 0, then
                ///< every element's node 1, ...), each entity's nodes numbered at its first
                ///< visit, spread among those of its group (interleave_group): consecutive
                ///< elements' nodes at one local position are then neighbours
  SharedFirst,  ///< FirstTouch, then the nodes used by one element only moved after all the others
  Auto          ///< the default: auto_ordering of the order and the backend
};

/// NodeOrdering::Interleaved numbers the entities that the elements of one group of this many
/// consecutive elements first meet at one local position together, node by node: node t of
/// the j-th of m such entities gets base + t m + j. Consecutive elements of a group then reach
/// every local position through consecutive ids, at any order (the CPU kernels' batches of 2,
/// 4 or 8 elements are such groups, or parts of one).
inline constexpr index_t interleave_group = 8;

/// The numbering NodeOrdering::Auto takes at order p for kernels on backend b: on the GPU
/// Interleaved up to p = 2, FirstTouch at p = 3, SharedFirst from p = 4; on the serial and
/// OpenMP backends Interleaved at every order.
NodeOrdering auto_ordering(int order, Backend b);

/// "first-touch", "by-entity", "interleaved", "shared-first" or "auto".
const char* name(NodeOrdering o);

/// The order-p H1 space of a mesh (see the file comment).
class H1Space {
 public:
  /// Numbers the nodes of `mesh` (which must outlive the space) for order p >= 1 and
  /// `components` >= 1 field components. Throws tessera::Error for p < 1, components < 1,
  /// a mesh without elements, an element with a vertex id out of range, a face (2-D: an
  /// edge) shared by more than two elements, or more than max_h1_nodes nodes. `backend`: where
  /// the kernels that read the space will mostly run, for NodeOrdering::Auto only (the space
  /// serves every backend whatever its numbering); by default the GPU where one is usable, else
  /// the CPU.
  H1Space(const Mesh& mesh, int order, int components = 1, NodeOrdering ordering = NodeOrdering::Auto,
          Backend backend = Exec::best().backend);

  /// The mesh this space numbers.
  const Mesh& mesh() const { return *mesh_; }
  /// Polynomial order p.
  int order() const { return order_; }
  /// Number of field components (1 for a scalar field).
  int components() const { return components_; }
  /// Layout of the global nodes.
  NodeOrdering ordering() const { return ordering_; }  ///< never Auto: the numbering it chose
  /// Number of global (scalar) nodes.
  index_t num_nodes() const { return num_nodes_; }
  /// Number of degrees of freedom: num_nodes() * components().
  index_t num_dofs() const { return num_nodes_ * components_; }
  /// Degree of freedom of component c at global node n: c * num_nodes() + n.
  index_t dof(int c, index_t n) const { return index_t(c) * num_nodes_ + n; }

  /// Global node ids of element e, in the lattice order of its geometry.
  std::span<const index_t> element_nodes(index_t e) const {
    return {nodes_.data() + offsets_[std::size_t(e)], std::size_t(offsets_[std::size_t(e) + 1] - offsets_[std::size_t(e)])};
  }
  /// CSR offsets of the element node lists (num_elements + 1 entries): element e owns
  /// element_node_ids()[offsets[e] .. offsets[e + 1]).
  std::span<const index_t> element_offsets() const { return offsets_; }
  /// Global node ids of all elements, concatenated in element order (host memory).
  std::span<const index_t> element_node_ids() const { return nodes_; }

  /// Sorted global nodes on the mesh's stored boundary faces whose attribute is listed (all
  /// boundary faces when `attributes` is empty): the nodes of each face's vertices, edges
  /// and (3-D) interior. Throws when a boundary face is not a face of any element.
  std::vector<index_t> boundary_nodes(std::span<const int> attributes = {}) const;
  /// boundary_nodes for every component: dof(c, n) for each such node, sorted.
  std::vector<index_t> boundary_dofs(std::span<const int> attributes = {}) const;
  /// Sorted global nodes on the faces (2-D: edges, 1-D: vertices) used by one element only:
  /// the boundary of the meshed domain whether or not boundary faces are stored.
  std::vector<index_t> exterior_nodes() const;

  /// Every node from this id on is used by one element only (in any numbering: the start of
  /// the trailing run of such nodes; with SharedFirst all of them): a fused operator stores
  /// their results instead of adding them. num_nodes() when the last node is shared.
  index_t exclusive_from() const { return exclusive_from_; }

  /// Number of distinct edges of the mesh's elements.
  index_t num_edges() const { return index_t(edges_.size()); }
  /// Number of distinct faces of the mesh's 3-D elements (0 for 1-D and 2-D meshes).
  index_t num_faces() const { return index_t(faces_.size()); }

 private:
  using Key = std::array<index_t, 4>;
  index_t edge_id(index_t a, index_t b) const;
  index_t face_id(const Key& sorted) const;
  void entity_nodes(Geometry g, std::span<const index_t> v, std::vector<index_t>& out) const;
  void interleave();  // NodeOrdering::Interleaved, from the first-touch numbering
  // NodeOrdering::SharedFirst from the first-touch numbering and its use counts (1: one
  // element, 2: several), which follow the new ids
  void shared_first(std::vector<unsigned char>& uses);
  void renumber(const std::vector<index_t>& fresh);  // node ids (element lists, entity blocks) old -> fresh[old]

  const Mesh* mesh_;
  int order_, components_;
  NodeOrdering ordering_;
  index_t num_nodes_ = 0;
  index_t exclusive_from_ = 0;
  std::vector<index_t> vertex_node_;           // mesh vertex -> global node (-1: in no element)
  std::vector<std::array<index_t, 2>> edges_;  // sorted vertex pairs, ascending
  std::vector<index_t> edge_node_;             // first node of each edge's p - 1 nodes
  std::vector<Key> faces_;                     // sorted vertex ids (triangles padded), ascending
  std::vector<index_t> face_node_;             // first node of each face's interior nodes
  // Interleaved: the stride between an edge's / a face's consecutive nodes (empty: 1)
  std::vector<unsigned char> edge_step_, face_step_;
  std::vector<std::pair<index_t, int>> exterior_;  // (element, local face / edge / vertex) used once
  std::vector<index_t> offsets_{0}, nodes_;
};

}  // namespace tessera::fem
