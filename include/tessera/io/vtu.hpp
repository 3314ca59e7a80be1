#pragma once
/// \file vtu.hpp
/// Writers and a reader of VTK XML UnstructuredGrid files (.vtu), the format ParaView and VisIt
/// open directly: the mesh with vertex or cell data (write_vtu), order-p finite-element fields
/// on VTK Lagrange cells (write_vtu_lagrange), ParaView collections (write_pvd).
///
///     std::vector<double> u(mesh.num_vertices());                 // one value per vertex
///     tessera::io::VtuField f{"u", 1, true, u};
///     tessera::io::write_vtu("solution.vtu", mesh, {&f, 1});
///
///     std::vector<tessera::io::VtuField> fields;
///     tessera::fem::Mesh back = tessera::io::read_vtu("solution.vtu", &fields);
///
/// What is written:
/// - The vertices as `Points` (always 3 coordinates, as VTK requires; missing ones are 0) and
///   the mesh elements as cells: VTK types 3 (line), 5 (triangle), 9 (quad), 10 (tetra) and
///   12 (hexahedron). VTK's vertex order of these five cell types is the Gmsh order that
///   fem::Mesh uses, so connectivity is written unchanged.
/// - Element attributes as the Int32 cell-data array "attribute".
/// - The space dimension as the Int32 field-data array "tessera_space_dim", so that a 1-D or
///   2-D mesh reads back with its own number of coordinates.
/// - The given fields as Float64 point data (one tuple per vertex) or cell data (one tuple
///   per element).
/// - Boundary faces are **not** written: a mesh read back has none (VTK has no notion of
///   faces attached to a cell set; write the boundary as a mesh of its own if needed).
///
/// Encodings: BinaryAppended (the default) puts all arrays raw in one `<AppendedData
/// encoding="raw">` block, each array preceded by a UInt64 byte count (header_type="UInt64",
/// byte_order="LittleEndian"); Ascii writes the numbers in the XML (shortest decimal form that
/// reads back to the same double). Integers are Int64 (connectivity, offsets), UInt8 (cell
/// types) and Int32 (attributes); reals are Float64.
///
/// The reader (read_vtu) reads what the writers here write and what common tools write
/// (meshio, ParaView and VTK's XML writer):
/// - arrays as ASCII, inline base64 (format="binary") or appended data (encoding "raw" or
///   "base64"), with header_type UInt32 (VTK's default) or UInt64, uncompressed or
///   zlib-compressed (compressor="vtkZLibDataCompressor"; other compressors are refused, and
///   zlib-compressed files are refused with a clear message when tessera was built without
///   zlib);
/// - points and data of any numeric type (Int8 ... UInt64, Float32, Float64; read as double),
///   connectivity, offsets and types of any integer type whose values fit;
/// - cells of the five linear types, and the Lagrange cells 68 to 72 (curve, triangle,
///   quadrilateral, tetrahedron, hexahedron) of any order, read as first-order elements by
///   their corners. A file with Lagrange cells gives a mesh whose vertices are the cells'
///   corners, corners at the same position merged (so the per-cell points that
///   write_vtu_lagrange writes become one shared vertex again); point data is returned at
///   those vertices;
/// - arrays next to ParaView's <InformationKey> metadata, and field data other than
///   tessera's own (skipped).
/// Anything else (big-endian data, several pieces, other cell types or data types) is refused
/// with a tessera::Error naming the file, the line or byte offset and the problem. Every count
/// is checked against the bytes that are actually there before anything is allocated;
/// coordinates must be finite (field values may be NaN or infinite); the mesh is checked with
/// fem::Mesh::validate. A file without the "attribute" array reads with attribute 1 on every
/// element.
///
/// Non-finite field values round trip through tessera in both encodings, but VTK's own ASCII
/// parser reads "-inf" as +inf: prefer the binary encoding for such data.

#include <array>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/mesh.hpp"

namespace tessera::io {

/// A field written with (or read back from) a mesh: point data, one tuple of `components`
/// values per mesh vertex, or cell data, one tuple per element. Tuples are stored one after
/// another (values[t * components + c]).
struct VtuField {
  std::string name;            ///< array name (not empty; "attribute" is reserved for cell data)
  int components = 1;          ///< values per tuple (>= 1)
  bool on_points = true;       ///< true: point data; false: cell data
  std::vector<double> values;  ///< components * (num_vertices or num_elements) values
};

/// Options of write_vtu.
struct VtuOptions {
  /// How arrays are stored: as text in the XML, or raw little-endian bytes appended after it.
  enum class Encoding { Ascii, BinaryAppended } encoding = Encoding::BinaryAppended;
};

/// Writes `mesh` and `fields` to the .vtu file at `path` (see the file comment). Throws
/// tessera::Error when a field has the wrong number of values, an empty, reserved or repeated
/// name or fewer than one component, when a coordinate is not finite, or when the file
/// cannot be written.
void write_vtu(const std::string& path, const fem::Mesh& mesh, std::span<const VtuField> fields = {},
               const VtuOptions& options = {});

/// Writes the .vtu document into a string instead of a file (same content as write_vtu).
std::string write_vtu_string(const fem::Mesh& mesh, std::span<const VtuField> fields = {},
                             const VtuOptions& options = {});

// ---- high-order output -----------------------------------------------------------------------

/// A finite-element field of an H1 space for write_vtu_lagrange: the DOF vector (host memory,
/// space->num_dofs() values in the space's layout, space->dof(c, node)).
struct VtuSpaceField {
  std::string name;                  ///< array name (not empty, unique among the fields)
  const fem::H1Space* space = nullptr;  ///< on the mesh written, of the order written
  std::span<const double> dofs;      ///< the field's DOF values
  /// Components written: 0 means the space's; more pads with zeros (e.g. 3 for a 2-D
  /// displacement, which ParaView then treats as a 3-D vector).
  int components = 0;
};

/// A field given as a function for write_vtu_lagrange (an exact solution, an error):
/// function(e, x, at, values) writes `components` values at the point x (3 coordinates, those
/// past the mesh's space dimension 0) of element e; `at` holds the VtuSpaceFields' values at
/// that point, one field after another (each with its written components).
struct VtuFunctionField {
  std::string name;
  int components = 1;
  std::function<void(index_t e, const double* x, const double* at, double* values)> function;
};

/// Writes order-`order` fields of H1 spaces on `mesh` as VTK Lagrange cells, so that ParaView
/// shows the order-p solution (and curved geometry where fem::Mesh::map is curved):
/// - order >= 2: every element is one VTK_LAGRANGE_CURVE (68), _TRIANGLE (69),
///   _QUADRILATERAL (70), _TETRAHEDRON (71) or _HEXAHEDRON (72) cell with num_nodes(g, order)
///   points of its own (points are per element, not shared: neighbouring cells repeat the
///   points of their common face, with the same position and, for continuous fields, the same
///   values). The points sit at VTK's equispaced reference nodes in VTK's node order
///   (vtk_lagrange_nodes), mapped with fem::Mesh::map (corners: the vertices themselves); the
///   values there are the fields' H1 expansions evaluated at those reference points (tessera's
///   own nodes are Gauss-Lobatto / warp & blend, VTK's are equispaced, so the values are
///   interpolated rather than copied). VTK interpolates them with its order-p Lagrange basis,
///   which reproduces the order-p field exactly.
/// - order 1: the mesh vertices as points and the linear cells, as write_vtu.
/// Also written: the element attributes (cell data "attribute") and the space dimension, as
/// write_vtu. The file declares version 1.0, the latest that meshio reads: hexahedra are
/// then written in VTK 8's node order (vtk_lagrange_nodes with the vertical edges at (0,1)
/// and (1,1) swapped), which VTK 9 and later convert to their own order on reading. Throws
/// tessera::Error for a field on another mesh or of another order, the wrong number of
/// values, an empty or repeated name, a non-finite point, or a file that cannot be written.
void write_vtu_lagrange(const std::string& path, const fem::Mesh& mesh, int order,
                        std::span<const VtuSpaceField> fields, std::span<const VtuFunctionField> functions = {},
                        const VtuOptions& options = {});

/// The document of write_vtu_lagrange as a string.
std::string write_vtu_lagrange_string(const fem::Mesh& mesh, int order, std::span<const VtuSpaceField> fields,
                                      std::span<const VtuFunctionField> functions = {},
                                      const VtuOptions& options = {});

/// Reference coordinates (3 entries, unused ones 0) of the nodes of VTK's order-p Lagrange
/// cell of geometry g, in VTK's node order (VTK 9 and later): equispaced lattice points i / p
/// on [0,1]^d or the unit simplex; the corners first, in the order of fem::Mesh (Gmsh's).
std::vector<std::array<double, 3>> vtk_lagrange_nodes(fem::Geometry g, int p);

/// One data set of a ParaView collection: its time (or level) and its file name (relative
/// to the .pvd file's folder, as ParaView reads it).
struct PvdEntry {
  double time = 0;
  std::string file;
};

/// Writes a ParaView collection (.pvd) listing `datasets`, one time step each.
void write_pvd(const std::string& path, std::span<const PvdEntry> datasets);

/// Reads a .vtu file (see the file comment). Point and cell data other than "attribute" go to
/// `fields` (in file order: point data first) when it is not null. Throws tessera::Error
/// naming the file and the problem.
fem::Mesh read_vtu(const std::string& path, std::vector<VtuField>* fields = nullptr);

/// Reads a .vtu document from memory; `name` stands for the file in messages.
fem::Mesh read_vtu_bytes(std::string_view bytes, const std::string& name, std::vector<VtuField>* fields = nullptr);

}  // namespace tessera::io
