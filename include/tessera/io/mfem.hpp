#pragma once
/// \file mfem.hpp
/// Reader of MFEM's mesh format ("MFEM mesh v1.0") into a fem::Mesh.
///
///     tessera::fem::Mesh mesh = tessera::io::read_mfem("beam-hex.mesh");
///
/// What is read: `dimension`, `elements` and `boundary` (attribute, geometry code, vertex
/// ids; codes 1 segment, 2 triangle, 3 square, 4 tetrahedron, 5 cube; code 0, points, is
/// skipped on the boundary of 1-D meshes; 6 prism and 7 pyramid are errors) and `vertices`
/// (count, space dimension, coordinates). MFEM's vertex orderings of these geometries are
/// Gmsh's, which tessera uses, so vertex lists are taken as they are.
///
/// Curved meshes, whose `vertices` section has only a count and which store coordinates in
/// a `nodes` section, keep their geometry when the nodes' collection is a nodal H1 one of
/// order 1 to 4: `H1_<d>D_P<k>` and `H1@G_...` (Gauss-Lobatto nodes), `H1@U_...` and the
/// older names `Linear`, `Quadratic`, `Cubic` (equispaced nodes), ordered by nodes
/// (`Ordering: 0`) or by vector dimension (1). The vertex positions are the first dofs (MFEM
/// numbers vertex dofs first); for k > 1 every element gets the order-k map of its nodes
/// (fem::Mesh::set_nodes), found in the global vector through MFEM's numbering (vertices,
/// then edges and faces in the order the elements first meet them, then element interiors)
/// and interpolated at the H1Basis node positions. Orders above 4, positive (`H1Pos`) and
/// other node families, a node count that does not fit the elements, and a curved element
/// that folds (det J <= 0) are errors naming the element or the section's line; nodes in
/// other collections (L2: MFEM's periodic meshes, NURBS, ...) are refused.
///
/// 2-D elements in the x-y plane that turn clockwise (their corners, or the centre of their
/// curved map) are read with the vertex order reversed, corner 0 first, and one warning
/// naming the file and the count.
///
/// Headers "MFEM mesh v1.1", "v1.2" and "v1.3" are accepted when the file holds only the
/// sections above, the named attribute sets of v1.3 (`attribute_sets`, `bdr_attribute_sets`:
/// checked and skipped) and the end marker "mfem_mesh_end"; other sections (parallel data,
/// ...) and the NC and NURBS formats are refused. The older collection names `Linear`,
/// `Quadratic` and `Cubic` are H1 ones; nodes in `L2_...` collections (MFEM's periodic
/// meshes) are refused. "MFEM INLINE mesh v1.0" files (type, nx, ny, nz, sx, sy, sz) are
/// built by fem::box_mesh, with MFEM's boundary attributes (docs/cli.md). Every malformed
/// input throws tessera::Error naming the file, the line and the problem; the mesh is checked
/// with fem::Mesh::validate.

#include <string>
#include <string_view>
#include <vector>

#include "tessera/fem/mesh.hpp"

namespace tessera::io {

/// Reads the MFEM mesh file at `path` (see the file comment). Warnings (clockwise elements
/// reversed, ignored inline keys) go to `warnings`, or to std::cerr as "tessera: warning: ..."
/// when it is null.
fem::Mesh read_mfem(const std::string& path, std::vector<std::string>* warnings = nullptr);

/// Reads an MFEM mesh file from memory; `name` stands for the file in messages.
fem::Mesh read_mfem_bytes(std::string_view bytes, const std::string& name,
                          std::vector<std::string>* warnings = nullptr);

}  // namespace tessera::io
