#pragma once
/// \file basis1d.hpp
/// `LagrangeBasis1D`: the Lagrange polynomials of a set of nodes on a line, evaluated with
/// the barycentric formula, and their tables at quadrature points.
///
///     tessera::fem::LagrangeBasis1D basis(4);                      // 5 GLL nodes on [0, 1]
///     auto rule = tessera::fem::quadrature_1d(6);                  // 6 Gauss points
///     auto t = tessera::fem::tabulate(basis, rule);                // t.B(q, i), t.G(q, i)
///
/// phi_i(x) = (w_i / (x - x_i)) / sum_j (w_j / (x - x_j)) (second barycentric form) and
/// phi_i'(x) = phi_i(x) * sum_{j != i} 1 / (x - x_j); at a node x_k (and within eps^2 of it)
/// phi_i = delta_ik and phi_i'(x_k) is the differentiation-matrix entry
/// D_ki = (w_i / w_k) / (x_k - x_i), D_kk = -sum_{i != k} D_ki. Barycentric weights
/// w_j = 1 / prod_{k != j} (x_j - x_k) are computed with the node differences scaled by
/// 4 / (max - min), so they neither overflow nor underflow, and normalised to max |w_j| = 1.

#include <span>
#include <vector>

#include "tessera/core/array.hpp"
#include "tessera/fem/quadrature.hpp"

namespace tessera::fem {

/// Largest polynomial order a LagrangeBasis1D accepts.
inline constexpr int max_basis_order_1d = 64;

/// Lagrange basis phi_0..phi_p on p + 1 distinct nodes (phi_i(x_j) = delta_ij).
class LagrangeBasis1D {
 public:
  /// Order-p basis on the p + 1 Gauss–Lobatto–Legendre nodes of [0, 1] (p in 1..max_basis_order_1d).
  explicit LagrangeBasis1D(int order);
  /// Basis on the given nodes: 1..max_basis_order_1d + 1 finite, pairwise distinct values
  /// (any order, any interval).
  explicit LagrangeBasis1D(std::vector<double> nodes);

  /// Polynomial order p (number of nodes - 1).
  int order() const { return static_cast<int>(nodes_.size()) - 1; }
  /// Number of basis functions, p + 1.
  int size() const { return static_cast<int>(nodes_.size()); }
  /// The nodes x_i.
  std::span<const double> nodes() const { return nodes_; }
  /// The barycentric weights w_i (normalised to max |w_i| = 1).
  std::span<const double> barycentric_weights() const { return weights_; }

  /// phi_i(x) for i = 0..p into `values` (size() entries).
  void eval(double x, std::span<double> values) const;
  /// phi_i(x) and phi_i'(x) into `values` and `derivatives` (size() entries each).
  void eval(double x, std::span<double> values, std::span<double> derivatives) const;

  /// B(q, i) = phi_i(points[q]), extents (points.size(), size()).
  Array<double, 2> values(std::span<const double> points) const;
  /// G(q, i) = phi_i'(points[q]), extents (points.size(), size()).
  Array<double, 2> derivatives(std::span<const double> points) const;

 private:
  std::vector<double> nodes_;
  std::vector<double> weights_;
  double tiny_ = 0;  // |x - x_k| <= tiny_ counts as x == x_k
};

/// Values and first derivatives of a 1-D basis at a set of points (host arrays).
struct BasisTables1D {
  /// B(q, i) = phi_i(x_q), extents (number of points, number of basis functions).
  Array<double, 2> B;
  /// G(q, i) = phi_i'(x_q), same extents.
  Array<double, 2> G;

  /// A copy on the device if the tables are not there already (throws tessera::Error when
  /// no CUDA backend is usable).
  BasisTables1D to_device() const { return {B.to_device(), G.to_device()}; }
};

/// Tables of `basis` at the given points.
BasisTables1D tabulate(const LagrangeBasis1D& basis, std::span<const double> points);
/// Tables of `basis` at the points of a segment rule (any space; copied to the host to read).
BasisTables1D tabulate(const LagrangeBasis1D& basis, const QuadratureRule& rule_1d);

}  // namespace tessera::fem
