// 1-D Lagrange basis: barycentric weights, values and derivatives, tables at points.
#include "tessera/fem/basis1d.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessera::fem {

namespace {

std::vector<double> gll_nodes(int order) {
  TESSERA_REQUIRE(order >= 1 && order <= max_basis_order_1d, "LagrangeBasis1D: order p = ", order,
                  " is out of range for Gauss–Lobatto–Legendre nodes (valid: 1..", max_basis_order_1d, ")");
  return gauss_lobatto_legendre(order + 1).nodes;
}

}  // namespace

LagrangeBasis1D::LagrangeBasis1D(int order) : LagrangeBasis1D(gll_nodes(order)) {}

LagrangeBasis1D::LagrangeBasis1D(std::vector<double> nodes) : nodes_(std::move(nodes)) {
  const std::size_t n = nodes_.size();
  TESSERA_REQUIRE(n >= 1 && n <= static_cast<std::size_t>(max_basis_order_1d) + 1, "LagrangeBasis1D: ", n,
                  " nodes given (valid: 1..", max_basis_order_1d + 1, ")");
  for (std::size_t i = 0; i < n; ++i)
    TESSERA_REQUIRE(std::isfinite(nodes_[i]), "LagrangeBasis1D: node ", i, " is not finite (", nodes_[i], ")");
  std::vector<double> sorted = nodes_;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 1; i < n; ++i)
    TESSERA_REQUIRE(sorted[i] > sorted[i - 1], "LagrangeBasis1D: the nodes are not distinct (", sorted[i],
                    " appears twice); Lagrange interpolation needs pairwise distinct nodes");

  weights_.assign(n, 1.0);
  if (n == 1) return;
  const double length = sorted[n - 1] - sorted[0];
  // Differences scaled by 4 / length (the inverse logarithmic capacity of the interval)
  // keep the products of n - 1 differences near 1 in magnitude.
  const double c = 4.0 / length;
  double wmax = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    double prod = 1.0;
    for (std::size_t k = 0; k < n; ++k)
      if (k != j) prod *= c * (nodes_[j] - nodes_[k]);
    weights_[j] = 1.0 / prod;
    wmax = std::max(wmax, std::abs(weights_[j]));
  }
  for (double& w : weights_) w /= wmax;
  // Treating |x - x_k| <= eps^2 * length as x == x_k changes phi by O(eps^2): far below
  // rounding, and it keeps w_k / (x - x_k) finite.
  const double eps = std::numeric_limits<double>::epsilon();
  tiny_ = eps * eps * length;
}

void LagrangeBasis1D::eval(double x, std::span<double> values) const {
  TESSERA_REQUIRE(values.size() >= nodes_.size(), "LagrangeBasis1D::eval: output span has ", values.size(),
                  " entries, the basis has ", nodes_.size(), " functions");
  const std::size_t n = nodes_.size();
  for (std::size_t k = 0; k < n; ++k) {
    if (n == 1 || std::abs(x - nodes_[k]) <= tiny_) {
      for (std::size_t i = 0; i < n; ++i) values[i] = i == k ? 1.0 : 0.0;
      return;
    }
  }
  double s = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    values[j] = weights_[j] / (x - nodes_[j]);
    s += values[j];
  }
  for (std::size_t j = 0; j < n; ++j) values[j] /= s;
}

void LagrangeBasis1D::eval(double x, std::span<double> values, std::span<double> derivatives) const {
  TESSERA_REQUIRE(derivatives.size() >= nodes_.size(), "LagrangeBasis1D::eval: derivative span has ",
                  derivatives.size(), " entries, the basis has ", nodes_.size(), " functions");
  eval(x, values);
  const std::size_t n = nodes_.size();
  if (n == 1) {
    derivatives[0] = 0.0;
    return;
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (std::abs(x - nodes_[k]) <= tiny_) {
      // Row k of the differentiation matrix; the diagonal by the negative-sum trick so that
      // the derivatives of a constant sum to zero.
      double diag = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        if (i == k) continue;
        derivatives[i] = (weights_[i] / weights_[k]) / (nodes_[k] - nodes_[i]);
        diag -= derivatives[i];
      }
      derivatives[k] = diag;
      return;
    }
  }
  // phi_i' = phi_i * sum_{j != i} 1 / (x - x_j). The sum excluding j = i is formed from
  // prefix and suffix sums, never by subtracting 1 / (x - x_i), which would cancel
  // catastrophically when x is close to x_i.
  double prefix = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    derivatives[i] = prefix;  // sum_{j < i}
    prefix += 1.0 / (x - nodes_[i]);
  }
  double suffix = 0.0;
  for (std::size_t i = n; i-- > 0;) {
    derivatives[i] = values[i] * (derivatives[i] + suffix);
    suffix += 1.0 / (x - nodes_[i]);
  }
}

Array<double, 2> LagrangeBasis1D::values(std::span<const double> points) const {
  const index_t np = static_cast<index_t>(points.size()), n = size();
  Array<double, 2> B("fem::basis1d B", {np, n});
  for (index_t q = 0; q < np; ++q) eval(points[q], std::span<double>(B.data() + q * n, n));
  return B;
}

Array<double, 2> LagrangeBasis1D::derivatives(std::span<const double> points) const {
  return tabulate(*this, points).G;
}

BasisTables1D tabulate(const LagrangeBasis1D& basis, std::span<const double> points) {
  const index_t np = static_cast<index_t>(points.size()), n = basis.size();
  BasisTables1D t{Array<double, 2>("fem::basis1d B", {np, n}), Array<double, 2>("fem::basis1d G", {np, n})};
  for (index_t q = 0; q < np; ++q)
    basis.eval(points[q], std::span<double>(t.B.data() + q * n, n), std::span<double>(t.G.data() + q * n, n));
  return t;
}

BasisTables1D tabulate(const LagrangeBasis1D& basis, const QuadratureRule& rule_1d) {
  TESSERA_REQUIRE(rule_1d.geom == Geometry::Segment, "tabulate: the quadrature rule is on a '", name(rule_1d.geom),
                  "'; a 1-D basis needs a segment rule");
  const QuadratureRule r = rule_1d.to_host();
  TESSERA_REQUIRE(r.points.extent(1) == 1 && r.points.extent(0) == r.size(),
                  "tabulate: the segment rule's points have extents (", r.points.extent(0), ", ", r.points.extent(1),
                  "); expected (", r.size(), ", 1)");
  std::vector<double> x(static_cast<std::size_t>(r.size()));
  for (index_t q = 0; q < r.size(); ++q) x[q] = r.points(q, 0);
  return tabulate(basis, x);
}

}  // namespace tessera::fem
