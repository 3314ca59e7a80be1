#pragma once
// Private to the VTU writer (vtu.cpp) and reader (vtu_read.cpp): VTK cell type ids and the
// names tessera gives its own arrays.
#include <cstdint>
#include <optional>

#include "tessera/fem/reference_element.hpp"

namespace tessera::io::vtu_detail {

using fem::Geometry;

inline constexpr const char* kSpaceDimName = "tessera_space_dim";
inline constexpr const char* kAttributeName = "attribute";

// VTK cell type ids (vtkCellType.h). VTK's vertex order of these linear cells (the
// "Linear cell types" figure of VTK's file-format documentation) is the Gmsh order that
// fem::Mesh uses (reference_element.hpp), so connectivity is copied unchanged:
//   VTK_LINE 3        0-1.
//   VTK_TRIANGLE 5    0, 1, 2 counter-clockwise = Gmsh (0,0), (1,0), (0,1).
//   VTK_QUAD 9        0, 1, 2, 3 around the quad, counter-clockwise = Gmsh (0,0), (1,0), (1,1), (0,1).
//   VTK_TETRA 10      0, 1, 2 a triangle seen counter-clockwise from 3 (positive volume)
//                     = Gmsh (0,0,0), (1,0,0), (0,1,0), (0,0,1).
//   VTK_HEXAHEDRON 12 0-3 the bottom face counter-clockwise seen from the top, 4-7 the top face
//                     with 4 above 0 = Gmsh v0..v7 ((0,0,0), (1,0,0), (1,1,0), (0,1,0), then z = 1).
// The Lagrange cells (VTK_LAGRANGE_CURVE 68, _TRIANGLE 69, _QUADRILATERAL 70, _TETRAHEDRON 71,
// _HEXAHEDRON 72) list the same corners first, then the other nodes (vtk_lagrange_nodes).
constexpr std::uint8_t vtk_cell_type(Geometry g) {
  switch (g) {
    case Geometry::Segment: return 3;
    case Geometry::Triangle: return 5;
    case Geometry::Quadrilateral: return 9;
    case Geometry::Tetrahedron: return 10;
    case Geometry::Hexahedron: return 12;
  }
  return 0;
}

constexpr std::uint8_t vtk_lagrange_cell_type(Geometry g) {
  switch (g) {
    case Geometry::Segment: return 68;
    case Geometry::Triangle: return 69;
    case Geometry::Quadrilateral: return 70;
    case Geometry::Tetrahedron: return 71;
    case Geometry::Hexahedron: return 72;
  }
  return 0;
}

struct CellType {
  Geometry geometry;
  bool lagrange;
};

inline std::optional<CellType> geometry_of_vtk_cell_type(int t) {
  switch (t) {
    case 3: return CellType{Geometry::Segment, false};
    case 5: return CellType{Geometry::Triangle, false};
    case 9: return CellType{Geometry::Quadrilateral, false};
    case 10: return CellType{Geometry::Tetrahedron, false};
    case 12: return CellType{Geometry::Hexahedron, false};
    case 68: return CellType{Geometry::Segment, true};
    case 69: return CellType{Geometry::Triangle, true};
    case 70: return CellType{Geometry::Quadrilateral, true};
    case 71: return CellType{Geometry::Tetrahedron, true};
    case 72: return CellType{Geometry::Hexahedron, true};
    default: return std::nullopt;
  }
}

}  // namespace tessera::io::vtu_detail
