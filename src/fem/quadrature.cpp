// Quadrature rules on the reference elements: Gauss–Legendre, Gauss–Lobatto–Legendre and
// Gauss–Jacobi on [0, 1], tensor products and collapsed (Stroud conical) simplex rules. The
// tabulated symmetric simplex rules are in simplex_rules.cpp.
#include "tessera/fem/quadrature.hpp"

#include <cmath>
#include <limits>
#include <numbers>

namespace tessera::fem {

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

void require_points(const char* fn, int n, int min_n) {
  TESSERA_REQUIRE(n >= min_n && n <= max_points_1d, fn, ": number of points n = ", n,
                  " is out of range (valid: ", min_n, "..", max_points_1d, ")");
}

// P_n(t) and P_n'(t) for n >= 1 and t in (-1, 1), by the three-term recurrence
// (j + 1) P_{j+1} = (2j + 1) t P_j - j P_{j-1}.
void legendre_and_derivative(int n, double t, double& p, double& dp) {
  double p0 = 1.0, p1 = t;
  for (int j = 1; j < n; ++j) {
    const double p2 = ((2 * j + 1) * t * p1 - j * p0) / (j + 1);
    p0 = p1;
    p1 = p2;
  }
  p = p1;
  // (1 - t^2) P_n' = n (P_{n-1} - t P_n); 1 - t^2 is formed as a product to keep its
  // relative accuracy near the end points.
  dp = n * (p0 - t * p1) / ((1.0 - t) * (1.0 + t));
}

// P_n(t) for n >= 0.
double legendre(int n, double t) {
  if (n == 0) return 1.0;
  double p0 = 1.0, p1 = t;
  for (int j = 1; j < n; ++j) {
    const double p2 = ((2 * j + 1) * t * p1 - j * p0) / (j + 1);
    p0 = p1;
    p1 = p2;
  }
  return p1;
}

// Monic three-term recurrence p_{k+1} = (x - a_k) p_k - b_k p_{k-1} of the Jacobi weight
// (1 - x)^alpha x^beta on [0, 1] (k = 0..n-1; b_0 is unused), the square roots of b_k and
// the zeroth moment mu0 = B(alpha + 1, beta + 1).
struct JacobiRecurrence {
  std::vector<double> a, b, sqrt_b;
  double mu0 = 0;
};

JacobiRecurrence jacobi_recurrence(int n, double alpha, double beta) {
  JacobiRecurrence r;
  r.a.resize(n);
  r.b.assign(n, 0.0);
  r.sqrt_b.assign(n, 0.0);
  const double s = alpha + beta;
  // Coefficients of the weight (1 - t)^alpha (1 + t)^beta on [-1, 1], mapped to [0, 1] by
  // x = (1 + t) / 2: a' = (1 + a) / 2, b' = b / 4.
  r.a[0] = (beta + 1.0) / (s + 2.0);
  for (int k = 1; k < n; ++k) {
    const double t = 2.0 * k + s;
    const double ak = (beta * beta - alpha * alpha) / (t * (t + 2.0));
    r.a[k] = 0.5 * (1.0 + ak);
  }
  if (n > 1) r.b[1] = (1.0 + alpha) * (1.0 + beta) / ((2.0 + s) * (2.0 + s) * (3.0 + s));
  for (int k = 2; k < n; ++k) {
    const double t = 2.0 * k + s;
    r.b[k] = k * (k + alpha) * (k + beta) * (k + s) / (t * t * (t + 1.0) * (t - 1.0));
  }
  for (int k = 1; k < n; ++k) r.sqrt_b[k] = std::sqrt(r.b[k]);
  // mu0 = B(alpha + 1, beta + 1) >= B(101, 101) ~ 1e-61 for alpha, beta <= 100.
  if (s + 2.0 < 160.0)
    r.mu0 = std::tgamma(alpha + 1.0) * std::tgamma(beta + 1.0) / std::tgamma(s + 2.0);
  else
    r.mu0 = std::exp(std::lgamma(alpha + 1.0) + std::lgamma(beta + 1.0) - std::lgamma(s + 2.0));
  return r;
}

// Number of eigenvalues of the Jacobi matrix (diagonal a, squared off-diagonal b) below x
// (Sturm count from the LDL^T factorisation of J - x I).
int eigenvalues_below(const JacobiRecurrence& r, double x) {
  int count = 0;
  double d = 1.0;
  for (std::size_t k = 0; k < r.a.size(); ++k) {
    d = (r.a[k] - x) - (k > 0 ? r.b[k] / d : 0.0);
    if (d == 0.0) d = 1e-300;
    if (d < 0.0) ++count;
  }
  return count;
}

// At x: v = sqrt(b_n) p_n(x) (orthonormal p_n, up to its positive scale), dv = v'(x),
// christoffel = mu0 * sum_{k<n} p_k(x)^2 (mu0 divided by it is the Gauss weight at a node),
// and dchristoffel, its derivative. The polynomials are scaled by sqrt(mu0) (p_0 = 1) so
// that a tiny mu0 cannot overflow them.
void orthonormal_eval(const JacobiRecurrence& r, double x, double& v, double& dv, double& christoffel,
                      double& dchristoffel) {
  const int n = static_cast<int>(r.a.size());
  double p_prev = 0.0, dp_prev = 0.0;
  double p = 1.0, dp = 0.0;
  christoffel = p * p;
  dchristoffel = 0.0;
  for (int k = 0;; ++k) {
    const double next = (x - r.a[k]) * p - (k > 0 ? r.sqrt_b[k] * p_prev : 0.0);
    const double dnext = p + (x - r.a[k]) * dp - (k > 0 ? r.sqrt_b[k] * dp_prev : 0.0);
    if (k == n - 1) {
      v = next;
      dv = dnext;
      return;
    }
    p_prev = p;
    dp_prev = dp;
    p = next / r.sqrt_b[k + 1];
    dp = dnext / r.sqrt_b[k + 1];
    christoffel += p * p;
    dchristoffel += 2.0 * p * dp;
  }
}

Rule1D segment_rule(int n, QuadratureType type) {
  return type == QuadratureType::Gauss ? gauss_legendre(n) : gauss_lobatto_legendre(n);
}

int segment_degree(int n, QuadratureType type) { return type == QuadratureType::Gauss ? 2 * n - 1 : 2 * n - 3; }

index_t ipow_points(int n, int d) {
  index_t t = 1;
  for (int k = 0; k < d; ++k) t *= n;
  return t;
}

// Largest number of points per direction for a rule of dimension d.
int max_points_per_direction(int d) {
  int n = max_points_1d;
  auto total = [&](index_t m) {
    index_t t = 1;
    for (int k = 0; k < d; ++k) t *= m;
    return t;
  };
  while (n > 1 && total(n) > max_points_total) --n;
  return n;
}

QuadratureRule make_rule(Geometry g, QuadratureType type, int degree, int n1d, index_t npts) {
  QuadratureRule q;
  q.geom = g;
  q.type = type;
  q.family = is_simplex(g) ? QuadratureFamily::Collapsed : QuadratureFamily::Tensor;
  q.degree = degree;
  q.n1d = n1d;
  q.points = Array<double, 2>("fem::quadrature points", {npts, dim(g)});
  q.weights = Array<double, 1>("fem::quadrature weights", {npts});
  return q;
}

}  // namespace

const char* name(QuadratureType t) {
  switch (t) {
    case QuadratureType::Gauss: return "gauss";
    case QuadratureType::GaussLobatto: return "gauss-lobatto";
    case QuadratureType::GaussCollapsed: return "gauss-collapsed";
  }
  return "invalid-quadrature-type";
}

const char* name(QuadratureFamily f) {
  switch (f) {
    case QuadratureFamily::Tensor: return "tensor";
    case QuadratureFamily::Collapsed: return "collapsed";
    case QuadratureFamily::Symmetric: return "symmetric";
  }
  return "invalid-quadrature-family";
}

QuadratureRule QuadratureRule::clone(Space space) const {
  QuadratureRule q = *this;
  q.points = points.clone(space);
  q.weights = weights.clone(space);
  return q;
}

QuadratureRule QuadratureRule::to_device() const {
  return points.space() == Space::Device && weights.space() == Space::Device ? *this : clone(Space::Device);
}

QuadratureRule QuadratureRule::to_host() const {
  return points.space() != Space::Device && weights.space() != Space::Device ? *this : clone(Space::Host);
}

Rule1D gauss_legendre(int n) {
  require_points("gauss_legendre", n, 1);
  Rule1D r;
  r.nodes.assign(n, 0.0);
  r.weights.assign(n, 0.0);
  // Roots t of P_n on [-1, 1] in (0, 1), largest first; by symmetry they give the nodes
  // (1 + t) / 2 and (1 - t) / 2 on [0, 1], with weight 1 / ((1 - t^2) P_n'(t)^2).
  const int half = n / 2;
  for (int k = 0; k < half; ++k) {
    // Tricomi's approximation of the (k+1)-th largest root.
    const double theta = std::numbers::pi * (4.0 * (k + 1) - 1.0) / (4.0 * n + 2.0);
    double t = (1.0 - (n - 1.0) / (8.0 * n * n * n)) * std::cos(theta);
    double p = 0, dp = 0;
    for (int it = 0; it < 100; ++it) {
      legendre_and_derivative(n, t, p, dp);
      const double dt = p / dp;
      t -= dt;
      if (std::abs(dt) <= 2.0 * kEps) break;
    }
    legendre_and_derivative(n, t, p, dp);
    // t is the root rounded to double; delta = t - t* ~ P_n(t) / P_n'(t) is below half an ulp
    // of t but still carries information: 1 - t is exact (Sterbenz), so the small node
    // (1 - t + delta) / 2 gains relative accuracy, and the weight, whose logarithmic
    // derivative at a root is -2t / (1 - t^2), is moved to the true root to first order.
    const double delta = p / dp;
    const double one_minus_t2 = (1.0 - t) * (1.0 + t);
    const double w = (1.0 + 2.0 * t * delta / one_minus_t2) / (one_minus_t2 * dp * dp);
    r.nodes[k] = 0.5 * ((1.0 - t) + delta);
    r.nodes[n - 1 - k] = 0.5 * ((1.0 + t) - delta);
    r.weights[k] = w;
    r.weights[n - 1 - k] = w;
  }
  if (n % 2 == 1) {
    double p = 0, dp = 0;
    legendre_and_derivative(n, 0.0, p, dp);
    r.nodes[half] = 0.5;
    r.weights[half] = 1.0 / (dp * dp);
  }
  return r;
}

Rule1D gauss_jacobi(int n, double alpha, double beta) {
  require_points("gauss_jacobi", n, 1);
  TESSERA_REQUIRE(std::isfinite(alpha) && alpha > -1.0 && alpha <= 100.0, "gauss_jacobi: alpha = ", alpha,
                  " is out of range (valid: -1 < alpha <= 100)");
  TESSERA_REQUIRE(std::isfinite(beta) && beta > -1.0 && beta <= 100.0, "gauss_jacobi: beta = ", beta,
                  " is out of range (valid: -1 < beta <= 100)");
  const JacobiRecurrence rec = jacobi_recurrence(n, alpha, beta);
  Rule1D r;
  r.nodes.assign(n, 0.0);
  r.weights.assign(n, 0.0);
  double lo_start = 0.0;
  for (int k = 0; k < n; ++k) {
    // Bracket the k-th smallest eigenvalue of the Jacobi matrix (= the k-th node) by
    // bisection on the Sturm count, then polish it by Newton on the recurrence.
    double lo = lo_start, hi = 1.0;
    while (hi - lo > 1e-12) {
      const double mid = 0.5 * (lo + hi);
      if (mid <= lo || mid >= hi) break;
      if (eigenvalues_below(rec, mid) > k)
        hi = mid;
      else
        lo = mid;
    }
    lo_start = lo;
    double x = 0.5 * (lo + hi);
    // Newton may step slightly outside the (rounded) bracket; a wider guard is enough to
    // reject a step that heads for another root.
    const double guard_lo = lo - 1e-10, guard_hi = hi + 1e-10;
    double v = 0, dv = 0, christoffel = 0, dchristoffel = 0;
    for (int it = 0; it < 10; ++it) {
      orthonormal_eval(rec, x, v, dv, christoffel, dchristoffel);
      if (dv == 0.0) break;
      const double dx = v / dv;
      const double xn = x - dx;
      if (!(xn > guard_lo && xn < guard_hi)) break;
      x = xn;
      if (std::abs(dx) <= 2.0 * kEps) break;
    }
    orthonormal_eval(rec, x, v, dv, christoffel, dchristoffel);
    // x is the node rounded to double, off by delta ~ v / dv; the weight mu0 / christoffel is
    // moved to the true node to first order.
    const double delta = dv != 0.0 ? v / dv : 0.0;
    r.nodes[k] = x;
    r.weights[k] = rec.mu0 * (1.0 + delta * dchristoffel / christoffel) / christoffel;
  }
  return r;
}

Rule1D gauss_lobatto_legendre(int n) {
  require_points("gauss_lobatto_legendre", n, 2);
  Rule1D r;
  r.nodes.assign(n, 0.0);
  r.weights.assign(n, 0.0);
  // On [0, 1]: w_i = 1 / (n (n - 1) P_{n-1}(2 x_i - 1)^2); the interior nodes are the roots of
  // P'_{n-1}, i.e. the Gauss–Jacobi(1, 1) nodes. P_{n-1} is stationary there, so the weights
  // are insensitive to rounding in the nodes.
  const double scale = 1.0 / (static_cast<double>(n) * (n - 1));
  r.nodes[0] = 0.0;
  r.nodes[n - 1] = 1.0;
  r.weights[0] = scale;
  r.weights[n - 1] = scale;
  if (n > 2) {
    const Rule1D inner = gauss_jacobi(n - 2, 1.0, 1.0);
    for (int k = 0; k < n - 2; ++k) {
      const double x = inner.nodes[k];
      const double p = legendre(n - 1, 2.0 * x - 1.0);
      r.nodes[k + 1] = x;
      r.weights[k + 1] = scale / (p * p);
    }
  }
  return r;
}

QuadratureRule quadrature_1d(int n, QuadratureType type) {
  TESSERA_REQUIRE(type == QuadratureType::Gauss || type == QuadratureType::GaussLobatto,
                  "quadrature_1d: invalid QuadratureType value ", static_cast<int>(type),
                  " (valid: Gauss, GaussLobatto)");
  const int min_n = type == QuadratureType::Gauss ? 1 : 2;
  TESSERA_REQUIRE(n >= min_n && n <= max_points_1d, "quadrature_1d: number of points n = ", n,
                  " is out of range for ", name(type), " rules (valid: ", min_n, "..", max_points_1d, ")");
  const Rule1D r = segment_rule(n, type);
  QuadratureRule q = make_rule(Geometry::Segment, type, segment_degree(n, type), n, n);
  for (int i = 0; i < n; ++i) {
    q.points(i, 0) = r.nodes[i];
    q.weights(i) = r.weights[i];
  }
  return q;
}

QuadratureRule tensor_quadrature(Geometry g, const QuadratureRule& rule_1d) {
  TESSERA_REQUIRE(is_tensor(g), "tensor_quadrature: geometry '", name(g),
                  "' is not a tensor-product element (valid: segment, quadrilateral, hexahedron)");
  TESSERA_REQUIRE(rule_1d.geom == Geometry::Segment, "tensor_quadrature: the 1-D rule is on a '", name(rule_1d.geom),
                  "', it must be on a segment");
  const QuadratureRule r = rule_1d.to_host();
  const index_t n = r.size();
  TESSERA_REQUIRE(n >= 1 && r.points.extent(0) == n && r.points.extent(1) == 1,
                  "tensor_quadrature: the 1-D rule is malformed (", n, " weights, points of extents (",
                  r.points.extent(0), ", ", r.points.extent(1), "); expected (", n, ", 1) with n >= 1)");
  const int d = dim(g);
  const index_t nmax = max_points_per_direction(d);
  TESSERA_REQUIRE(n <= nmax, "tensor_quadrature: the 1-D rule has ", n, " points; a ", name(g),
                  " allows 1..", nmax, " per direction (at most ", max_points_total, " points in all)");
  index_t total = 1;
  for (int k = 0; k < d; ++k) total *= n;
  QuadratureRule q = make_rule(g, r.type, r.degree, static_cast<int>(n), total);
  for (index_t k = 0; k < total; ++k) {
    index_t rem = k;
    double w = 1.0;
    for (int c = 0; c < d; ++c) {  // c = 0 is x, the fastest index
      const index_t i = rem % n;
      rem /= n;
      q.points(k, c) = r.points(i, 0);
      w *= r.weights(i);
    }
    q.weights(k) = w;
  }
  return q;
}

QuadratureRule collapsed_quadrature(Geometry g, int n) {
  TESSERA_REQUIRE(is_simplex(g), "collapsed_quadrature: geometry '", name(g),
                  "' is not a simplex (valid: triangle, tetrahedron)");
  const int d = dim(g);
  const int nmax = max_points_per_direction(d);
  TESSERA_REQUIRE(n >= 1 && n <= nmax, "collapsed_quadrature: number of points per direction n = ", n,
                  " is out of range for a ", name(g), " (valid: 1..", nmax, ")");
  // Duffy map from the unit cube (u, v, w): x = u (1 - v) (1 - w), y = v (1 - w), z = w, with
  // Jacobian (1 - v) (1 - w)^2 (tetrahedron) or (1 - v) (triangle). The Jacobian factors are
  // the Gauss–Jacobi weights (1 - v)^1 and (1 - w)^2, so x^a y^b z^c becomes a polynomial of
  // degree a in u, a + b in v and a + b + c in w: exact when a + b + c <= 2n - 1.
  const Rule1D ru = gauss_legendre(n);
  const Rule1D rv = gauss_jacobi(n, 1.0, 0.0);
  const Rule1D rw = d == 3 ? gauss_jacobi(n, 2.0, 0.0) : Rule1D{{0.0}, {1.0}};
  const int nw = d == 3 ? n : 1;
  index_t total = static_cast<index_t>(n) * n * nw;
  QuadratureRule q = make_rule(g, QuadratureType::Gauss, 2 * n - 1, n, total);
  index_t k = 0;
  for (int l = 0; l < nw; ++l) {
    const double w = rw.nodes[l];
    for (int j = 0; j < n; ++j) {
      const double v = rv.nodes[j];
      for (int i = 0; i < n; ++i, ++k) {
        const double u = ru.nodes[i];
        q.points(k, 0) = u * (1.0 - v) * (1.0 - w);
        q.points(k, 1) = v * (1.0 - w);
        if (d == 3) q.points(k, 2) = w;
        q.weights(k) = ru.weights[i] * rv.weights[j] * rw.weights[l];
      }
    }
  }
  return q;
}

QuadratureRule quadrature(Geometry g, int degree, QuadratureType type) {
  TESSERA_REQUIRE(is_tensor(g) || is_simplex(g), "quadrature: invalid Geometry value ", static_cast<int>(g),
                  " (valid: segment, triangle, quadrilateral, tetrahedron, hexahedron)");
  TESSERA_REQUIRE(type == QuadratureType::Gauss || type == QuadratureType::GaussLobatto ||
                      type == QuadratureType::GaussCollapsed,
                  "quadrature: invalid QuadratureType value ", static_cast<int>(type),
                  " (valid: Gauss, GaussLobatto, GaussCollapsed)");
  TESSERA_REQUIRE(type != QuadratureType::GaussLobatto || is_tensor(g), "quadrature: Gauss–Lobatto rules are not available on a ",
                  name(g), " (valid geometries: segment, quadrilateral, hexahedron; use Gauss points: QuadratureType::Gauss, --quadrature gauss in the tessera tool)");
  // GaussCollapsed differs from Gauss on simplices only. Gauss on a simplex: the symmetric rule
  // unless the collapsed one has fewer points (only the triangle's degree 3: 4 against 6).
  if (type == QuadratureType::GaussCollapsed) {
    type = QuadratureType::Gauss;
  } else if (type == QuadratureType::Gauss && is_simplex(g) && degree >= 0 && degree <= max_symmetric_degree(g)) {
    QuadratureRule s = symmetric_quadrature(g, degree);
    const int n = (degree + 2) / 2;
    if (ipow_points(n, dim(g)) < s.size()) return collapsed_quadrature(g, n);
    return s;
  }
  const int nmax = max_points_per_direction(dim(g));
  const int max_degree = segment_degree(nmax, type);
  TESSERA_REQUIRE(degree >= 0 && degree <= max_degree, "quadrature: degree ", degree, " is out of range for ",
                  name(type), " rules on a ", name(g), " (valid: 0..", max_degree, "; at most ", nmax,
                  " points per direction)");
  // Fewest points per direction: 2n - 1 >= degree (Gauss), 2n - 3 >= degree (Lobatto).
  const int n = type == QuadratureType::Gauss ? (degree + 2) / 2 : (degree + 4) / 2;
  if (is_simplex(g)) return collapsed_quadrature(g, n);
  const QuadratureRule r1 = quadrature_1d(n, type);
  return g == Geometry::Segment ? r1 : tensor_quadrature(g, r1);
}

}  // namespace tessera::fem
