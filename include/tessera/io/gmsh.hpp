#pragma once
/// \file gmsh.hpp
/// Reader of Gmsh MSH files (formats 2.2 and 4.1, ASCII and binary) into a fem::Mesh, and a
/// writer of MSH 4.1 (ASCII).
///
///     std::vector<std::string> warnings;
///     tessera::fem::Mesh mesh = tessera::io::read_gmsh("square.msh", &warnings);
///
/// What is read:
/// - Elements: points, lines, triangles, quadrilaterals, tetrahedra and hexahedra (Gmsh
///   types 15, 1, 2, 3, 4, 5) and their complete Lagrange versions of order 2 to 4 (lines 8,
///   26, 27; triangles 9, 21, 23; quadrilaterals 10, 36, 37; tetrahedra 11, 29, 30; hexahedra
///   12, 92, 93). A mesh whose elements are of order k > 1 gets a curved geometry of order k
///   (fem::Mesh::set_nodes; elements of lower order in it are raised to k exactly): each
///   element's nodes, equispaced in Gmsh's node ordering, are interpolated at the H1Basis node
///   positions. The vertices are the corners. An element whose curved map folds (det J <= 0 at
///   a node or an interior lattice point) is refused, naming its tag and its line or byte
///   offset. Boundary faces of order > 1 are read by their corners. The incomplete
///   (serendipity) types (16, 17, 20, 22, 24, 39, ...) and orders 5 to 10 are refused, as are
///   prisms, pyramids and any other type. In ASCII files an element's line must hold exactly
///   its type's node count (else the error names the element and the line).
/// - An element listed again with the same type and nodes (MSH 2.2 lists an element once per
///   physical group) is read once, with its first listing's attribute (one warning).
/// - A 2-D mesh in the x-y plane whose elements all turn clockwise is read with every
///   element's vertex order reversed (one warning); a mix of both turns is refused as inverted.
/// - The mesh dimension is the highest element dimension. Elements of that dimension become
///   mesh elements, elements of one dimension less become boundary faces, lower ones are
///   skipped (a 1-D mesh therefore has no boundary faces: fem::Mesh has no point geometry).
/// - Attributes: the element's physical tag (MSH 2.2: its first tag; MSH 4.1: the first
///   physical tag of its entity in $Entities); when there is none (tag 0 or an entity
///   without physical tags), the elementary entity tag; when there is no tag at all, 1.
/// - Node tags may be sparse and unordered: only nodes that kept elements use become
///   vertices, numbered in increasing tag order.
/// - The space dimension is the mesh dimension, unless a coordinate beyond it is nonzero at
///   some vertex: then the mesh keeps 3 coordinates (an embedded mesh).
/// - MSH 2.2 $ParametricNodes (gmsh -save_parametric, ASCII) is read as $Nodes, the
///   parametric coordinates skipped.
/// - Sections other than $MeshFormat, $Entities, $Nodes and $Elements ($PhysicalNames,
///   $Periodic, $NodeData, ...) are skipped; partitioned files ($PartitionedEntities) are
///   refused.
/// - Binary files must have the reading machine's byte order (little-endian); files with
///   the other byte order are refused. The data size field must be 8.
///
/// Every malformed input throws tessera::Error naming the file, the line (ASCII) or byte
/// offset (binary) and the problem; the mesh is checked with fem::Mesh::validate.

#include <string>
#include <string_view>
#include <vector>

#include "tessera/fem/mesh.hpp"

namespace tessera::io {

/// Reads the Gmsh MSH file at `path` (see the file comment). Warnings (repeated elements,
/// reversed clockwise meshes, an ignored $Periodic section) go to `warnings`, or to std::cerr
/// as "tessera: warning: ..." when it is null.
fem::Mesh read_gmsh(const std::string& path, std::vector<std::string>* warnings = nullptr);

/// Reads a Gmsh MSH file from memory; `name` stands for the file in messages.
fem::Mesh read_gmsh_bytes(std::string_view bytes, const std::string& name,
                          std::vector<std::string>* warnings = nullptr);

/// Writes `mesh` as an ASCII Gmsh MSH 4.1 file: the vertices as nodes 1..n, the elements
/// and the boundary faces as Gmsh elements (types 1-5, fem::Mesh's vertex order), one
/// entity per (dimension, attribute) whose physical tag is the attribute, element blocks in
/// the mesh's order. read_gmsh reads it back to the same mesh (vertices, elements, boundary
/// faces and attributes, in the same order). Throws tessera::Error for an attribute below 1 (Gmsh physical
/// tags are positive), a non-finite coordinate or a file that cannot be written.
void write_gmsh(const std::string& path, const fem::Mesh& mesh);

/// The MSH 4.1 document of write_gmsh as a string.
std::string write_gmsh_string(const fem::Mesh& mesh);

}  // namespace tessera::io
