#pragma once
/// \file reference_element.hpp
/// Topology of the reference elements and the local numbering of order-p nodes.
///
/// Vertices, edges and faces follow Gmsh's ordering, so the vertex lists of Gmsh (and MFEM,
/// which uses the same first-order ordering) elements map directly:
///
///     triangle       v0 (0,0)  v1 (1,0)  v2 (0,1)
///                    edges {0,1} {1,2} {2,0}
///     quadrilateral  v0 (0,0)  v1 (1,0)  v2 (1,1)  v3 (0,1)
///                    edges {0,1} {1,2} {2,3} {3,0}
///     tetrahedron    v0 (0,0,0) v1 (1,0,0) v2 (0,1,0) v3 (0,0,1)
///                    edges {0,1} {1,2} {2,0} {3,0} {3,2} {3,1}
///                    faces {0,2,1} {0,1,3} {0,3,2} {3,1,2}
///     hexahedron     v0 (0,0,0) v1 (1,0,0) v2 (1,1,0) v3 (0,1,0)
///                    v4 (0,0,1) v5 (1,0,1) v6 (1,1,1) v7 (0,1,1)
///                    edges {0,1} {0,3} {0,4} {1,2} {1,5} {2,3} {2,6} {3,7} {4,5} {4,7} {5,6} {6,7}
///                    faces {0,3,2,1} {0,1,5,4} {0,4,7,3} {1,2,6,5} {2,3,7,6} {4,5,6,7}
///
/// Faces are listed counter-clockwise seen from outside (outward normal by the right-hand
/// rule). The reference coordinates lie in [0, 1] (geometry.hpp); Gmsh's quadrilateral and
/// hexahedron use [-1, 1], which only changes the coordinates, not the ordering.
///
/// Order-p nodes (the degrees of freedom of H1 elements) are numbered by an integer lattice,
/// *not* Gmsh's high-order ordering:
/// - segment, quadrilateral, hexahedron: lattice (i, j, k) in [0, p]^dim, lexicographic with
///   i fastest: node n = (k (p + 1) + j) (p + 1) + i. The node sits at (x_i, x_j, x_k) where
///   x are the p + 1 Gauss–Lobatto–Legendre points of [0, 1]. This is the layout
///   sum-factorized kernels use.
/// - triangle, tetrahedron: lattice (i, j, k) with i, j, k >= 0 and i + j + k <= p (k = 0 on
///   the triangle), ordered with i fastest, then j, then k. Lattice point (i, j, k) is the
///   equispaced point (i, j, k) / p; the actual node is its image under the basis' node map
///   (warp and blend), which keeps nodes on the edge / face they belong to.
///
/// Every lattice node lies on exactly one entity of lowest dimension: a vertex, the interior
/// of an edge, the interior of a face or the interior of the element; `classify_node` says
/// which, and where on that entity, so that a space can number shared nodes consistently.

#include <array>
#include <span>
#include <vector>

#include "tessera/core/macros.hpp"
#include "tessera/fem/geometry.hpp"

namespace tessera::fem {

/// Number of vertices of the reference element (2, 3, 4, 4, 8).
int num_vertices(Geometry g);
/// Number of edges (1 for the segment itself, 3, 4, 6, 12).
int num_edges(Geometry g);
/// Number of faces (2-D elements: 1, the element itself; 3-D: 4 or 6; segment: 0).
int num_faces(Geometry g);

/// Reference coordinates of vertex v (dim(g) entries; the rest of the array is 0).
std::array<double, 3> reference_vertex(Geometry g, int v);
/// The two vertices of edge e, in Gmsh's order (for the segment, e = 0 is {0, 1}).
std::array<int, 2> edge_vertices(Geometry g, int e);
/// The vertices of face f of a 3-D element (3 or 4 entries, counter-clockwise seen from
/// outside); for a 2-D element, f = 0 is the element's own vertex list.
std::span<const int> face_vertices(Geometry g, int f);
/// Geometry of face f: Triangle or Quadrilateral.
Geometry face_geometry(Geometry g, int f);
/// Geometry of the faces of a 2-D or 3-D element's boundary: Triangle/Quadrilateral ->
/// Segment, Tetrahedron -> Triangle, Hexahedron -> Quadrilateral. Throws for the segment
/// (its boundary is points, which are not a Geometry).
Geometry boundary_geometry(Geometry g);

/// First-order (vertex) shape functions of g at reference point xi (dim(g) coordinates), in
/// Gmsh vertex order: values[v] = N_v(xi) (num_vertices(g) entries) and, when `gradients` is
/// not empty, gradients[v * dim(g) + c] = dN_v / dxi_c. Simplices: N_0 = 1 - sum xi,
/// N_v = xi_k for the vertex at e_k; quadrilateral and hexahedron: N_v = prod_k (a_k ? xi_k :
/// 1 - xi_k) for the vertex at a. These define the element maps of Mesh.
void vertex_shape_functions(Geometry g, std::span<const double> xi, std::span<double> values,
                            std::span<double> gradients = {});

/// Number of order-p nodes: (p + 1)^dim on tensor elements, (p + 1)(p + 2)/2 on the
/// triangle, (p + 1)(p + 2)(p + 3)/6 on the tetrahedron. Throws for p < 1.
index_t num_nodes(Geometry g, int p);

/// Lattice coordinates (i, j, k) of the order-p nodes in local order (see the file comment).
std::vector<std::array<int, 3>> lattice_nodes(Geometry g, int p);

/// Where a lattice node lies.
struct NodeLocation {
  int entity_dim = 0;    ///< 0 vertex, 1 edge, 2 face, 3 element interior (2-D elements: 2 = interior)
  int entity = 0;        ///< index of the vertex / edge / face (0 for the interior)
  /// Integer coordinates of the node on its entity, relative to the entity's vertices in
  /// the order listed above:
  /// - edge {a, b}: coords[0] = t in 1..p-1, the node is t/p of the way from a to b;
  /// - triangular face {a, b, c}: barycentric integers (coords[0], coords[1], coords[2]) for
  ///   (a, b, c), each >= 1, summing to p;
  /// - quadrilateral face {a, b, c, d}: (s, t) in 1..p-1, s along a->b, t along a->d;
  /// - interior and vertices: unused (0).
  std::array<int, 3> coords{0, 0, 0};
};

/// Classifies a lattice node of the order-p element (one of lattice_nodes(g, p)).
NodeLocation classify_node(Geometry g, int p, std::array<int, 3> lattice);

}  // namespace tessera::fem
