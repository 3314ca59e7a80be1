#pragma once
/// \file vtu.hpp
/// Writer and reader of VTK XML UnstructuredGrid files (.vtu), the format ParaView and VisIt
/// open directly.
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
/// The reader reads what the writer writes, in either encoding, and refuses anything else
/// (compressed or base64 data, other cell types or data types, several pieces, ...) with a
/// tessera::Error naming the file and the problem. Every count is checked against the bytes
/// that are actually there before anything is allocated; coordinates must be finite (field
/// values may be NaN or infinite); the mesh is checked with fem::Mesh::validate. A file without
/// the "attribute" array reads with attribute 1 on every element.
///
/// Non-finite field values round trip through tessera in both encodings, but VTK's own ASCII
/// parser reads "-inf" as +inf: prefer the binary encoding for such data.

#include <span>
#include <string>
#include <string_view>
#include <vector>

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

/// Reads a .vtu file written by write_vtu. Point and cell data other than "attribute" go to
/// `fields` (in file order: point data first) when it is not null. Throws tessera::Error
/// naming the file and the problem.
fem::Mesh read_vtu(const std::string& path, std::vector<VtuField>* fields = nullptr);

/// Reads a .vtu document from memory; `name` stands for the file in messages.
fem::Mesh read_vtu_bytes(std::string_view bytes, const std::string& name, std::vector<VtuField>* fields = nullptr);

}  // namespace tessera::io
