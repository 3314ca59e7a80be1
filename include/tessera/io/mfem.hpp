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
/// a `nodes` section, are read when the nodes' finite element collection is an H1 one
/// (H1_..., Linear, Quadratic, Cubic): MFEM numbers the vertex degrees of freedom of such a
/// space first, in vertex order, so the vertex positions are read from there and the mesh
/// becomes first-order (with a warning). Nodes in other collections (L2, NURBS, ...) are
/// refused.
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

/// Reads the MFEM mesh file at `path` (see the file comment). Warnings go to `warnings`, or
/// to std::cerr as "tessera: warning: ..." when it is null.
fem::Mesh read_mfem(const std::string& path, std::vector<std::string>* warnings = nullptr);

/// Reads an MFEM mesh file from memory; `name` stands for the file in messages.
fem::Mesh read_mfem_bytes(std::string_view bytes, const std::string& name,
                          std::vector<std::string>* warnings = nullptr);

}  // namespace tessera::io
