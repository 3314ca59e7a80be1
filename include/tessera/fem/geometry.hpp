#pragma once
/// \file geometry.hpp
/// `Geometry`: the reference elements of tessera's finite-element layer.
///
/// Reference elements (all coordinates in [0, 1]):
///
/// | Geometry      | dim | reference element                    | volume |
/// |---------------|-----|--------------------------------------|--------|
/// | Segment       | 1   | [0, 1]                               | 1      |
/// | Triangle      | 2   | {x, y >= 0, x + y <= 1}              | 1/2    |
/// | Quadrilateral | 2   | [0, 1]^2                             | 1      |
/// | Tetrahedron   | 3   | {x, y, z >= 0, x + y + z <= 1}       | 1/6    |
/// | Hexahedron    | 3   | [0, 1]^3                             | 1      |
///
/// Points on a reference element are stored with the x coordinate first.

#include <ostream>

#include "tessera/core/error.hpp"

namespace tessera::fem {

/// The shape of a reference element.
enum class Geometry { Segment, Triangle, Quadrilateral, Tetrahedron, Hexahedron };

/// Spatial dimension of the reference element: 1, 2 or 3.
constexpr int dim(Geometry g) {
  switch (g) {
    case Geometry::Segment: return 1;
    case Geometry::Triangle:
    case Geometry::Quadrilateral: return 2;
    case Geometry::Tetrahedron:
    case Geometry::Hexahedron: return 3;
  }
  fail("fem::dim: invalid Geometry value ", static_cast<int>(g), " (valid: 0..4)");
}

/// Lower-case name: "segment", "triangle", "quadrilateral", "tetrahedron", "hexahedron".
constexpr const char* name(Geometry g) {
  switch (g) {
    case Geometry::Segment: return "segment";
    case Geometry::Triangle: return "triangle";
    case Geometry::Quadrilateral: return "quadrilateral";
    case Geometry::Tetrahedron: return "tetrahedron";
    case Geometry::Hexahedron: return "hexahedron";
  }
  return "invalid-geometry";
}

/// Length / area / volume of the reference element: 1 for segment, quadrilateral and
/// hexahedron, 1/2 for the triangle, 1/6 for the tetrahedron.
constexpr double reference_volume(Geometry g) {
  switch (g) {
    case Geometry::Segment:
    case Geometry::Quadrilateral:
    case Geometry::Hexahedron: return 1.0;
    case Geometry::Triangle: return 1.0 / 2.0;
    case Geometry::Tetrahedron: return 1.0 / 6.0;
  }
  fail("fem::reference_volume: invalid Geometry value ", static_cast<int>(g), " (valid: 0..4)");
}

/// True for the triangle and the tetrahedron.
constexpr bool is_simplex(Geometry g) { return g == Geometry::Triangle || g == Geometry::Tetrahedron; }

/// True for the tensor-product elements: segment, quadrilateral and hexahedron.
constexpr bool is_tensor(Geometry g) {
  return g == Geometry::Segment || g == Geometry::Quadrilateral || g == Geometry::Hexahedron;
}

/// Writes name(g).
inline std::ostream& operator<<(std::ostream& os, Geometry g) { return os << name(g); }

}  // namespace tessera::fem
