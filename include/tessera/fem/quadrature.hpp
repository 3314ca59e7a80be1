#pragma once
/// \file quadrature.hpp
/// Quadrature rules on the reference elements (see geometry.hpp), computed on the host in
/// double precision.
///
///     auto q  = tessera::fem::quadrature(Geometry::Hexahedron, 7);          // 4^3 Gauss points
///     auto l  = tessera::fem::quadrature_1d(5, QuadratureType::GaussLobatto);
///     double s = 0;
///     for (index_t k = 0; k < q.size(); ++k) s += q.weights(k) * f(q.points(k, 0), q.points(k, 1), q.points(k, 2));
///
/// Families:
/// - Gauss–Legendre (GL), n >= 1 points on [0, 1]: exact to degree 2n - 1; nodes by Newton
///   on the Legendre three-term recurrence from Tricomi's initial guess.
/// - Gauss–Lobatto–Legendre (GLL), n >= 2 points on [0, 1] including both end points:
///   exact to degree 2n - 3; interior nodes are the roots of P'_{n-1}, i.e. the
///   Gauss–Jacobi(1, 1) nodes.
/// - Gauss–Jacobi, weight (1 - x)^alpha x^beta on [0, 1]: exact to degree 2n - 1 for that
///   weight; initial guesses from the Jacobi matrix eigenvalues (Sturm bisection), then Newton
///   on the orthonormal recurrence; weights from the Christoffel function.
/// - Tensor rules on segment / quadrilateral / hexahedron: products of one 1-D rule; exact for
///   every polynomial of degree <= `degree` in each variable separately (so also for total
///   degree <= `degree`). Point k = (k_z * n + k_y) * n + k_x: x varies fastest.
/// - Symmetric rules on triangle / tetrahedron: fully symmetric (invariant under every
///   permutation of the vertices), positive weights, points strictly inside; tabulated for
///   the triangle at degrees 1..20 and the tetrahedron at degrees 1..10 (point sets of
///   Witherden and Vincent, 2015; see simplex_rules.cpp). A 6th-degree tetrahedron rule has 24
///   points where the collapsed one has 64. Gauss rules on simplices use them up to those
///   degrees (but for the triangle's degree 3, where the collapsed rule has fewer points).
/// - Collapsed rules on triangle / tetrahedron (Stroud conical products, Duffy map
///   x = u (1 - v) (1 - w), y = v (1 - w), z = w): Gauss–Legendre in u, Gauss–Jacobi(1, 0) in
///   v and Gauss–Jacobi(2, 0) in w (the weights absorb the Jacobian), n points per direction,
///   exact for total degree <= 2n - 1. Point order as for tensor rules (u fastest). Gauss
///   rules on simplices use them above the tabulated degrees, GaussCollapsed at every degree.
///
/// All weights of these rules are positive; Gauss points lie strictly inside the element.

#include <vector>

#include "tessera/core/array.hpp"
#include "tessera/fem/geometry.hpp"

namespace tessera::fem {

/// Which family of points quadrature() picks.
enum class QuadratureType {
  Gauss,         ///< Gauss–Legendre; on simplices the symmetric rule where tabulated, else collapsed
  GaussLobatto,  ///< Gauss–Lobatto–Legendre: includes the end points (tensor geometries only)
  GaussCollapsed ///< as Gauss, but always the collapsed rule on simplices (for comparisons)
};

/// "gauss", "gauss-lobatto" or "gauss-collapsed".
const char* name(QuadratureType t);

/// How a rule's points are laid out.
enum class QuadratureFamily {
  Tensor,     ///< segment / quadrilateral / hexahedron: products of one 1-D rule (n1d per direction)
  Collapsed,  ///< triangle / tetrahedron: collapsed Gauss–Jacobi product (n1d per direction)
  Symmetric   ///< triangle / tetrahedron: tabulated fully symmetric rule (no 1-D structure, n1d = 0)
};

/// "tensor", "collapsed" or "symmetric".
const char* name(QuadratureFamily f);

/// Largest number of points per direction any rule accepts.
inline constexpr int max_points_1d = 1024;
/// Largest total number of points of a tensor or collapsed rule (2^24).
inline constexpr index_t max_points_total = index_t{1} << 24;

/// A quadrature rule on a reference element: sum_k weights(k) f(points(k, :)) approximates
/// the integral of f over the element.
struct QuadratureRule {
  Geometry geom = Geometry::Segment;
  QuadratureType type = QuadratureType::Gauss;
  /// Layout of the points; only Tensor and Collapsed rules have n1d points per direction.
  QuadratureFamily family = QuadratureFamily::Tensor;
  /// Exactness: every polynomial of total degree <= degree is integrated exactly (tensor
  /// rules: also degree <= `degree` in each variable). This is the rule's true degree,
  /// which may exceed the degree asked of quadrature().
  int degree = 0;
  /// Points per direction of tensor and collapsed rules, which have n1d^dim(geom) points;
  /// 0 for symmetric rules (their size() is not a power).
  int n1d = 0;
  /// Coordinates, extents (size(), dim(geom)).
  Array<double, 2> points;
  /// Weights, extent size(); they sum to reference_volume(geom).
  Array<double, 1> weights;

  /// Number of points.
  index_t size() const { return weights.size(); }
  /// Spatial dimension of the rule's points.
  int dim() const { return fem::dim(geom); }
  /// A copy whose arrays live in `space` (always new allocations).
  QuadratureRule clone(Space space) const;
  /// This rule if its arrays are on the device, else a device copy (throws tessera::Error
  /// when no CUDA backend is usable).
  QuadratureRule to_device() const;
  /// This rule if its arrays are host-accessible, else a host copy.
  QuadratureRule to_host() const;
};

/// Nodes (ascending) and weights of a 1-D rule, as plain vectors.
struct Rule1D {
  std::vector<double> nodes;
  std::vector<double> weights;
};

/// n-point Gauss–Legendre rule on [0, 1] (n in 1..max_points_1d).
Rule1D gauss_legendre(int n);

/// n-point Gauss–Lobatto–Legendre rule on [0, 1] (n in 2..max_points_1d); nodes 0 and 1
/// are exact.
Rule1D gauss_lobatto_legendre(int n);

/// n-point Gauss–Jacobi rule on [0, 1] for the weight (1 - x)^alpha x^beta
/// (n in 1..max_points_1d, alpha and beta finite, > -1 and <= 100). The weights sum to
/// B(alpha + 1, beta + 1).
Rule1D gauss_jacobi(int n, double alpha, double beta);

/// n-point rule on the segment [0, 1]: Gauss (n >= 1, degree 2n - 1) or Gauss–Lobatto
/// (n >= 2, degree 2n - 3); n <= max_points_1d.
QuadratureRule quadrature_1d(int n, QuadratureType type = QuadratureType::Gauss);

/// Tensor product of a segment rule on a segment, quadrilateral or hexahedron.
QuadratureRule tensor_quadrature(Geometry g, const QuadratureRule& rule_1d);

/// Collapsed (Stroud conical) rule on a triangle or tetrahedron with n points per
/// direction: exact to total degree 2n - 1.
QuadratureRule collapsed_quadrature(Geometry g, int n);

/// Highest degree of the tabulated symmetric rules on `g`: 20 (triangle), 10 (tetrahedron),
/// 0 for the other geometries.
int max_symmetric_degree(Geometry g);

/// The tabulated fully symmetric rule on a triangle or tetrahedron of the smallest degree
/// >= `degree` (degree in 0..max_symmetric_degree(g)). Its `degree` is the rule's true degree:
/// every monomial of that total degree is integrated exactly, some of the next is not.
/// Points per degree (a degree missing from a list takes the next one's rule):
///   triangle    1:1 2:3 4:6 5:7 6:12 7:15 8:16 9:19 10:25 11:28 12:33 13:37 14:42 15:49
///               17:60 18:67 19:73 20:79
///   tetrahedron 1:1 2:4 3:8 5:14 6:24 7:35 8:46 9:59 10:79
QuadratureRule symmetric_quadrature(Geometry g, int degree);

/// The rule of `type` on `g` that is exact to (at least) `degree`. Tensor geometries: the
/// fewest points per direction, Gauss n = ceil((degree + 1) / 2), Gauss–Lobatto
/// n = ceil((degree + 3) / 2). Simplices: Gauss gives symmetric_quadrature(g, degree) up to
/// max_symmetric_degree(g) (except where the collapsed rule has fewer points: the triangle's
/// degree 3, 4 points against 6) and collapsed_quadrature(g, ceil((degree + 1) / 2)) above;
/// GaussCollapsed always the collapsed rule (on tensor geometries it is Gauss). Throws
/// tessera::Error for degree < 0, for degrees that need more than max_points_1d points per
/// direction or max_points_total points, and for Gauss–Lobatto on a simplex.
QuadratureRule quadrature(Geometry g, int degree, QuadratureType type = QuadratureType::Gauss);

}  // namespace tessera::fem
