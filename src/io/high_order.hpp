#pragma once
// Curved (high-order) element geometry for the mesh readers: a file's node set of an element
// (Gmsh's equispaced nodes, MFEM's H1 nodes) is converted to the node positions of
// fem::H1Basis by Lagrange interpolation, and the result is checked for tangled elements.
#include <array>
#include <span>
#include <string>
#include <vector>

#include "tessera/fem/geometry.hpp"

namespace tessera::io::detail {

/// Highest geometry order the readers convert (Gmsh and MFEM elements of order 2 to 4).
inline constexpr int kMaxReadOrder = 4;

/// Reference coordinates (tessera's reference element, [0, 1] based) of Gmsh's order-p
/// Lagrange nodes of `g`, in Gmsh's node ordering: vertices, edge nodes (Gmsh's edge order and
/// direction, equispaced), then face interiors and the element interior, each listed
/// recursively as an element of lower order of the same kind.
std::vector<std::array<double, 3>> gmsh_node_points(fem::Geometry g, int p);

/// A linear map from the values of a map at a file's node set (`points`, order `from`) to its
/// values at the H1Basis(g, to) nodes (to >= from): exact for polynomials of order `from`.
class NodeTransfer {
 public:
  NodeTransfer() = default;
  /// Throws tessera::Error when the points do not determine a polynomial of order `from`.
  NodeTransfer(fem::Geometry g, int from, std::span<const std::array<double, 3>> points, int to);
  int num_from() const { return n_from_; }
  int num_to() const { return n_to_; }
  /// out (num_to() x ncomp, node-major) = T * values (num_from() x ncomp, node-major);
  /// `perm`, when given, says which row of `values` holds source point k.
  void apply(const double* values, int ncomp, double* out, const int* perm = nullptr) const;

 private:
  int n_from_ = 0, n_to_ = 0;
  std::vector<double> t_;  // n_to x n_from
};

/// Index i of `points` at `x` (within 1e-9), -1 when none: points are looked up sorted.
class PointIndex {
 public:
  explicit PointIndex(std::span<const std::array<double, 3>> points);
  int find(const std::array<double, 3>& x) const;

 private:
  std::vector<std::pair<std::array<long long, 3>, int>> keys_;
};

/// Permutation of the H1Basis(g, order) nodes (triangle or quadrilateral) under the swap of
/// the two reference coordinates, which is what reversing an element's vertex order (corner 0
/// kept, the others in the opposite turn) does to its nodes: new node n = old node perm[n].
std::vector<int> swap_xy_permutation(fem::Geometry g, int order);

/// Checks det J > 0 of an element of order `order` given by its H1Basis nodes (node-major,
/// `sdim` == dim(g) coordinates each) at the nodes and at an interior lattice of points; returns
/// an empty string when it holds, else a description ("det J = ... at reference point (...)").
class TangleCheck {
 public:
  TangleCheck(fem::Geometry g, int order);
  std::string check(const double* nodes) const;
  /// det J at the centre of the reference element (its sign is the element's turn).
  double centre_det(const double* nodes) const { return det(nodes, npts_); }

 private:
  double det(const double* nodes, int q) const;
  int dim_ = 0, n_ = 0, npts_ = 0;      // npts_ lattice points, then the centre
  std::vector<double> points_, grads_;  // grads_: (point, node, d)
};

}  // namespace tessera::io::detail
