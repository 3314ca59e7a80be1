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
/// Numbering. Element-local nodes follow the lattice order of reference_element.hpp. Global
/// nodes are laid out entity by entity: mesh vertices (used ones, in mesh order), then the
/// p - 1 nodes of every edge, then the nodes inside every face (3-D meshes), then the nodes
/// inside every element. Edges and faces are ordered by their sorted global vertex ids, and
/// the nodes on one of them in a frame fixed by those ids (from the smaller-id end of an
/// edge; barycentric integers sorted by vertex id on a triangle; origin at the smallest-id
/// corner and first axis towards its smaller-id neighbour on a quadrilateral), so two
/// elements sharing an entity agree whatever their own vertex order.
///
/// Vector fields (components > 1) are component-major: dof(c, n) = c * num_nodes() + n.
///
/// The space keeps a reference to the mesh, which must outlive it.

#include <span>
#include <vector>

#include "tessera/core/macros.hpp"
#include "tessera/fem/mesh.hpp"

namespace tessera::fem {

/// Largest number of global nodes an H1Space numbers: the element restriction stores node
/// ids as 32-bit integers.
inline constexpr index_t max_h1_nodes = index_t{2147483647};

/// The order-p H1 space of a mesh (see the file comment).
class H1Space {
 public:
  /// Numbers the nodes of `mesh` (which must outlive the space) for order p >= 1 and
  /// `components` >= 1 field components. Throws tessera::Error for p < 1, components < 1,
  /// a mesh without elements, a face shared by more than two elements, or more than
  /// max_h1_nodes nodes.
  H1Space(const Mesh& mesh, int order, int components = 1);

  const Mesh& mesh() const { return *mesh_; }
  int order() const { return order_; }
  int components() const { return components_; }
  /// Number of global (scalar) nodes.
  index_t num_nodes() const { return num_nodes_; }
  /// Number of degrees of freedom: num_nodes() * components().
  index_t num_dofs() const { return num_nodes_ * components_; }

  /// Global node ids of element e, in the lattice order of its geometry.
  std::span<const index_t> element_nodes(index_t e) const {
    return {nodes_.data() + offsets_[std::size_t(e)], std::size_t(offsets_[std::size_t(e) + 1] - offsets_[std::size_t(e)])};
  }
  /// CSR form of all element node lists: element e owns element_node_ids()[offsets[e]..offsets[e+1]).
  std::span<const index_t> element_offsets() const { return offsets_; }
  std::span<const index_t> element_node_ids() const { return nodes_; }

  /// Sorted global nodes on the mesh's boundary faces whose attribute is listed (all
  /// boundary faces when `attributes` is empty). Throws when a boundary face is not a face
  /// of any element.
  std::vector<index_t> boundary_nodes(std::span<const int> attributes = {}) const;
  /// boundary_nodes for every component: dof(c, n) for each such node, sorted.
  std::vector<index_t> boundary_dofs(std::span<const int> attributes = {}) const;
  /// Sorted global nodes on the faces (2-D: edges, 1-D: vertices) used by one element only:
  /// the boundary of the meshed domain whether or not boundary faces are stored.
  std::vector<index_t> exterior_nodes() const;

  /// Number of distinct edges and (3-D) faces of the mesh's elements.
  index_t num_edges() const { return index_t(edges_.size()); }
  index_t num_faces() const { return index_t(faces_.size()); }

 private:
  using Key = std::array<index_t, 4>;
  index_t edge_id(index_t a, index_t b) const;
  index_t face_id(Key sorted) const;
  void entity_nodes(Geometry g, std::span<const index_t> v, std::vector<index_t>& out) const;

  const Mesh* mesh_;
  int order_, components_;
  index_t num_nodes_ = 0;
  std::vector<index_t> vertex_node_;   // mesh vertex -> global node (-1: unused)
  std::vector<std::array<index_t, 2>> edges_;  // sorted vertex pairs, ascending
  std::vector<Key> faces_;             // sorted vertex ids (triangles padded with max), ascending
  std::vector<int> face_uses_, edge_uses_;
  index_t edge_base_ = 0, face_base_ = 0;
  std::vector<index_t> face_start_;    // first node of each face's interior (size faces + 1)
  std::vector<index_t> offsets_{0}, nodes_;
};

}  // namespace tessera::fem
