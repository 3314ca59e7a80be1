// Tests of tessera/fem/geometry.hpp and tessera/fem/quadrature.hpp.
//
// Every rule is checked by integrating ALL monomials up to its degree against closed forms:
//   segment       int_0^1 x^a            = 1 / (a + 1)
//   quad / hex    products of the segment integrals
//   triangle      int x^a y^b            = a! b! / (a + b + 2)!
//   tetrahedron   int x^a y^b z^c        = a! b! c! / (a + b + c + 3)!
// The closed forms are evaluated in long double from exact integers.
//
// Tolerance: relative error <= 1e-13. A rule value is a sum of at most a few thousand
// products w_k * x_k^a * y_k^b * z_k^c; the weights are positive and so are the monomials
// on the reference elements, so there is no cancellation: each term carries O(a + b + c)
// roundings (powers, weight and node errors of a few ulp) and the sum adds O(log n) to O(n)
// more, each relative to a sum of positive terms. With degrees <= 127 and eps = 2.2e-16 that
// is a few 1e-14 in the worst case; 1e-13 leaves a margin of ~3 while still catching any
// wrong node or weight (those give errors of 1e-8 and more).

#include <gtest/gtest.h>

#include "fem_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/fem/geometry.hpp"
#include "tessera/fem/quadrature.hpp"

using tessera::index_t;
using namespace tessera::fem;

namespace {

constexpr double kTol = 1e-13;

// C(n, k) exactly (every partial product is an integer below 2^64).
long double binom(int n, int k) {
  long double c = 1;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return c;
}

// Closed-form integral of x^e[0] y^e[1] z^e[2] over the reference element.
long double exact_monomial(Geometry g, const int* e) {
  switch (g) {
    case Geometry::Segment: return 1.0L / (e[0] + 1);
    case Geometry::Quadrilateral: return 1.0L / ((e[0] + 1.0L) * (e[1] + 1.0L));
    case Geometry::Hexahedron: return 1.0L / ((e[0] + 1.0L) * (e[1] + 1.0L) * (e[2] + 1.0L));
    case Geometry::Triangle: {
      const int s = e[0] + e[1];  // a! b! / (s + 2)! = 1 / (C(s, a) (s + 1) (s + 2))
      return 1.0L / (binom(s, e[0]) * (s + 1.0L) * (s + 2.0L));
    }
    case Geometry::Tetrahedron: {
      const int s = e[0] + e[1] + e[2];  // a! b! c! / (s + 3)! = 1 / (C(s, a) C(b + c, b) (s+1)(s+2)(s+3))
      return 1.0L / (binom(s, e[0]) * binom(e[1] + e[2], e[1]) * (s + 1.0L) * (s + 2.0L) * (s + 3.0L));
    }
  }
  return 0;
}

struct MonomialResult {
  double max_rel_err = 0;
  int count = 0;       // monomials checked
  std::string worst;   // exponents of the worst one
};

// Integrates every monomial with exponents e_c <= degree (tensor geometries: each exponent;
// simplices: total degree sum e_c <= degree) and returns the largest relative error.
MonomialResult check_monomials(const QuadratureRule& q, int degree) {
  const int d = q.dim();
  const int D = degree + 1;
  const bool tensor = is_tensor(q.geom);
  index_t nacc = 1;
  for (int c = 0; c < d; ++c) nacc *= D;
  std::vector<double> acc(static_cast<std::size_t>(nacc), 0.0);
  std::vector<double> pw(static_cast<std::size_t>(3 * D), 0.0);
  for (index_t k = 0; k < q.size(); ++k) {
    for (int c = 0; c < d; ++c) {
      double* p = &pw[c * D];
      p[0] = 1.0;
      for (int a = 1; a < D; ++a) p[a] = p[a - 1] * q.points(k, c);
    }
    const double w = q.weights(k);
    const double *px = &pw[0], *py = &pw[D], *pz = &pw[2 * D];
    if (d == 1) {
      for (int a = 0; a < D; ++a) acc[a] += w * px[a];
    } else if (d == 2) {
      for (int a = 0; a < D; ++a)
        for (int b = 0; b < D; ++b) acc[a * D + b] += w * px[a] * py[b];
    } else {
      for (int a = 0; a < D; ++a)
        for (int b = 0; b < D; ++b) {
          const double wab = w * px[a] * py[b];
          double* row = &acc[(static_cast<std::size_t>(a) * D + b) * D];
          for (int c = 0; c < D; ++c) row[c] += wab * pz[c];
        }
    }
  }
  MonomialResult r;
  for (index_t m = 0; m < nacc; ++m) {
    int e[3] = {0, 0, 0};
    index_t rem = m;
    for (int c = d - 1; c >= 0; --c) {
      e[c] = static_cast<int>(rem % D);
      rem /= D;
    }
    if (!tensor && e[0] + e[1] + e[2] > degree) continue;
    const long double exact = exact_monomial(q.geom, e);
    const double err = static_cast<double>(std::abs((acc[m] - exact) / exact));
    ++r.count;
    if (err > r.max_rel_err || r.worst.empty()) {
      r.max_rel_err = std::max(r.max_rel_err, err);
      std::ostringstream os;
      os << "(" << e[0];
      for (int c = 1; c < d; ++c) os << ", " << e[c];
      os << ")";
      r.worst = os.str();
    }
  }
  return r;
}

// All points inside the closed reference element; Gauss rules: strictly inside.
void expect_inside(const QuadratureRule& q, bool strict) {
  for (index_t k = 0; k < q.size(); ++k) {
    double sum = 0;
    for (int c = 0; c < q.dim(); ++c) {
      const double x = q.points(k, c);
      sum += x;
      if (strict) {
        ASSERT_GT(x, 0.0) << name(q.geom) << " point " << k << " coordinate " << c;
        if (is_tensor(q.geom)) {
          ASSERT_LT(x, 1.0) << name(q.geom) << " point " << k << " coordinate " << c;
        }
      } else {
        ASSERT_GE(x, 0.0) << name(q.geom) << " point " << k << " coordinate " << c;
        if (is_tensor(q.geom)) {
          ASSERT_LE(x, 1.0) << name(q.geom) << " point " << k << " coordinate " << c;
        }
      }
    }
    if (is_simplex(q.geom)) {
      if (strict) {
        ASSERT_LT(sum, 1.0) << name(q.geom) << " point " << k;
      } else {
        ASSERT_LE(sum, 1.0) << name(q.geom) << " point " << k;
      }
    }
  }
}

void expect_positive_weights(const QuadratureRule& q) {
  for (index_t k = 0; k < q.size(); ++k) ASSERT_GT(q.weights(k), 0.0) << name(q.geom) << " weight " << k;
}

// P_n(t) and P_n'(t) on [-1, 1] (test's own recurrences).
double legendre_p(int n, double t) {
  double p0 = 1, p1 = t;
  if (n == 0) return 1;
  for (int j = 1; j < n; ++j) {
    const double p2 = ((2 * j + 1) * t * p1 - j * p0) / (j + 1);
    p0 = p1;
    p1 = p2;
  }
  return p1;
}
double legendre_dp(int n, double t) {
  // P'_{j+1} = P'_{j-1} + (2j + 1) P_j
  double d0 = 0, d1 = 0;  // P'_{j-1}, P'_j
  if (n == 0) return 0;
  d1 = 1;                 // P'_1
  for (int j = 1; j < n; ++j) {
    const double d2 = d0 + (2 * j + 1) * legendre_p(j, t);
    d0 = d1;
    d1 = d2;
  }
  return d1;
}

// A degree-(degree + 1) polynomial in x alone that the rule integrates wrongly, and its
// exact integral over [0, 1]:
//   Gauss (n points, degree 2n - 1):       P*_n(x)^2, integral 1 / (2n + 1); P*_n vanishes at
//                                           every Gauss node, so the rule gives ~0.
//   Lobatto (n points, degree 2n - 3):     x (1 - x) (d/dx P*_{n-1})^2, integral
//                                           m (m + 1) / (2m + 1) with m = n - 1; zero at every node.
// (Monomials cannot show this for large n: the error of x^{2n} is ~ pi n / 16^n, below
// rounding from n ~ 13 on.)
double above_degree_relative_error(const QuadratureRule& q, int n, QuadratureType type) {
  double s = 0, exact = 0;
  const int m = n - 1;
  for (index_t k = 0; k < q.size(); ++k) {
    const double x = q.points(k, 0);
    double f;
    if (type == QuadratureType::Gauss) {
      const double p = legendre_p(n, 2 * x - 1);
      f = p * p;
    } else {
      const double dp = 2 * legendre_dp(m, 2 * x - 1);
      f = x * (1 - x) * dp * dp;
    }
    s += q.weights(k) * f;
  }
  exact = type == QuadratureType::Gauss ? 1.0 / (2 * n + 1) : m * (m + 1.0) / (2 * m + 1.0);
  // Other coordinates integrate to the volume of the remaining unit directions (1).
  return std::abs(s - exact) / exact;
}


void report(const char* what, double worst, const std::string& where) {
  std::cout << "[   info   ] " << what << ": max relative monomial error " << worst << " " << where << "\n";
  ::testing::Test::RecordProperty(what, std::to_string(worst));
}

}  // namespace

// ------------------------------------------------------------------------------- geometry

TEST(Geometry, Properties) {
  static_assert(dim(Geometry::Segment) == 1 && dim(Geometry::Triangle) == 2 && dim(Geometry::Quadrilateral) == 2 &&
                dim(Geometry::Tetrahedron) == 3 && dim(Geometry::Hexahedron) == 3);
  static_assert(reference_volume(Geometry::Tetrahedron) == 1.0 / 6.0);
  EXPECT_STREQ(name(Geometry::Segment), "segment");
  EXPECT_STREQ(name(Geometry::Triangle), "triangle");
  EXPECT_STREQ(name(Geometry::Quadrilateral), "quadrilateral");
  EXPECT_STREQ(name(Geometry::Tetrahedron), "tetrahedron");
  EXPECT_STREQ(name(Geometry::Hexahedron), "hexahedron");
  EXPECT_EQ(reference_volume(Geometry::Segment), 1.0);
  EXPECT_EQ(reference_volume(Geometry::Triangle), 0.5);
  EXPECT_EQ(reference_volume(Geometry::Quadrilateral), 1.0);
  EXPECT_EQ(reference_volume(Geometry::Hexahedron), 1.0);
  EXPECT_TRUE(is_simplex(Geometry::Triangle) && is_simplex(Geometry::Tetrahedron));
  EXPECT_FALSE(is_simplex(Geometry::Quadrilateral) || is_tensor(Geometry::Triangle));
  EXPECT_TRUE(is_tensor(Geometry::Segment) && is_tensor(Geometry::Quadrilateral) && is_tensor(Geometry::Hexahedron));
  std::ostringstream os;
  os << Geometry::Hexahedron;
  EXPECT_EQ(os.str(), "hexahedron");
  EXPECT_ERROR_MENTIONS((void)dim(static_cast<Geometry>(9)), "invalid Geometry", "9");
}

// ------------------------------------------------------------------------------- 1-D rules

TEST(GaussLegendre, MonomialsExactUpToDegree2nMinus1) {
  double worst = 0;
  std::string where;
  for (int n = 1; n <= 64; ++n) {
    const QuadratureRule q = quadrature_1d(n);
    ASSERT_EQ(q.size(), n);
    EXPECT_EQ(q.geom, Geometry::Segment);
    EXPECT_EQ(q.type, QuadratureType::Gauss);
    EXPECT_EQ(q.degree, 2 * n - 1);
    EXPECT_EQ(q.n1d, n);
    const MonomialResult r = check_monomials(q, q.degree);
    EXPECT_EQ(r.count, 2 * n);
    EXPECT_LE(r.max_rel_err, kTol) << "n = " << n << ", worst x^" << r.worst;
    if (r.max_rel_err > worst) worst = r.max_rel_err, where = "n = " + std::to_string(n) + " x^" + r.worst;
    expect_inside(q, true);
    expect_positive_weights(q);
    for (index_t k = 1; k < q.size(); ++k) EXPECT_LT(q.points(k - 1, 0), q.points(k, 0));
    // Symmetry about 1/2.
    for (index_t k = 0; k < q.size(); ++k) {
      EXPECT_NEAR(q.points(k, 0) + q.points(n - 1 - k, 0), 1.0, 2e-16);
      EXPECT_EQ(q.weights(k), q.weights(n - 1 - k));
    }
  }
  report("gauss-legendre n=1..64", worst, where);
}

TEST(GaussLegendre, NotExactOneDegreeAbove) {
  for (int n = 1; n <= 64; ++n) {
    const QuadratureRule q = quadrature_1d(n);
    EXPECT_GT(above_degree_relative_error(q, n, QuadratureType::Gauss), 0.5) << "n = " << n;
  }
}

TEST(GaussLegendre, AgreesWithGaussJacobiZeroZero) {
  for (int n = 1; n <= 64; ++n) {
    const Rule1D a = gauss_legendre(n), b = gauss_jacobi(n, 0.0, 0.0);
    for (int k = 0; k < n; ++k) {
      EXPECT_NEAR(a.nodes[k], b.nodes[k], 4e-16) << "n = " << n << " k = " << k;
      EXPECT_NEAR(a.weights[k] / b.weights[k], 1.0, 1e-13) << "n = " << n << " k = " << k;
    }
  }
}

TEST(GaussLegendre, LargestSizes) {
  for (int n : {100, 257, max_points_1d}) {
    const Rule1D r = gauss_legendre(n);
    double s = 0;
    for (int k = 0; k < n; ++k) {
      ASSERT_GT(r.weights[k], 0.0);
      if (k > 0) {
        ASSERT_LT(r.nodes[k - 1], r.nodes[k]);
      }
      s += r.weights[k];
    }
    EXPECT_NEAR(s, 1.0, 1e-13) << "n = " << n;
    EXPECT_GT(r.nodes[0], 0.0);
    EXPECT_LT(r.nodes[n - 1], 1.0);
  }
}

TEST(GaussLobattoLegendre, MonomialsExactUpToDegree2nMinus3) {
  double worst = 0;
  std::string where;
  for (int n = 2; n <= 33; ++n) {
    const QuadratureRule q = quadrature_1d(n, QuadratureType::GaussLobatto);
    ASSERT_EQ(q.size(), n);
    EXPECT_EQ(q.type, QuadratureType::GaussLobatto);
    EXPECT_EQ(q.degree, 2 * n - 3);
    EXPECT_EQ(q.points(0, 0), 0.0);
    EXPECT_EQ(q.points(n - 1, 0), 1.0);
    const MonomialResult r = check_monomials(q, q.degree);
    EXPECT_EQ(r.count, 2 * n - 2);
    EXPECT_LE(r.max_rel_err, kTol) << "n = " << n << ", worst x^" << r.worst;
    if (r.max_rel_err > worst) worst = r.max_rel_err, where = "n = " + std::to_string(n) + " x^" + r.worst;
    expect_inside(q, false);
    expect_positive_weights(q);
    for (index_t k = 1; k < q.size(); ++k) EXPECT_LT(q.points(k - 1, 0), q.points(k, 0));
    for (index_t k = 0; k < q.size(); ++k) {
      EXPECT_NEAR(q.points(k, 0) + q.points(n - 1 - k, 0), 1.0, 2e-16);
      EXPECT_NEAR(q.weights(k) / q.weights(n - 1 - k), 1.0, 1e-14);
    }
    EXPECT_GT(above_degree_relative_error(q, n, QuadratureType::GaussLobatto), 0.5) << "n = " << n;
  }
  report("gauss-lobatto-legendre n=2..33", worst, where);
}

TEST(GaussLobattoLegendre, LargestSize) {
  const Rule1D r = gauss_lobatto_legendre(max_points_1d);
  double s = 0;
  for (int k = 0; k < max_points_1d; ++k) {
    ASSERT_GT(r.weights[k], 0.0);
    if (k > 0) {
        ASSERT_LT(r.nodes[k - 1], r.nodes[k]);
      }
    s += r.weights[k];
  }
  EXPECT_NEAR(s, 1.0, 1e-13);
}

TEST(GaussJacobi, WeightedMonomialsExact) {
  // int_0^1 (1 - x)^alpha x^(beta + a) dx = B(alpha + 1, beta + a + 1), built from
  // B(alpha + 1, beta + 1) by B(p, q + 1) = B(p, q) q / (p + q).
  const double params[][2] = {{0, 0}, {1, 0}, {2, 0}, {1, 1}, {0.5, -0.5}, {-0.5, -0.5}, {-0.75, 2.5}, {3, 1.5}};
  double worst = 0;
  std::string where;
  for (const auto& ab : params) {
    const double alpha = ab[0], beta = ab[1];
    for (int n = 1; n <= 30; ++n) {
      const Rule1D r = gauss_jacobi(n, alpha, beta);
      ASSERT_EQ(static_cast<int>(r.nodes.size()), n);
      long double exact = std::tgamma(static_cast<long double>(alpha) + 1) *
                          std::tgamma(static_cast<long double>(beta) + 1) /
                          std::tgamma(static_cast<long double>(alpha + beta) + 2);
      for (int a = 0; a <= 2 * n - 1; ++a) {
        if (a > 0) exact = exact * (beta + a) / (alpha + beta + a + 1);
        double s = 0;
        for (int k = 0; k < n; ++k) s += r.weights[k] * std::pow(r.nodes[k], a);
        const double err = static_cast<double>(std::abs((s - exact) / exact));
        EXPECT_LE(err, kTol) << "alpha = " << alpha << " beta = " << beta << " n = " << n << " a = " << a;
        if (err > worst) {
          worst = err;
          std::ostringstream os;
          os << "alpha = " << alpha << " beta = " << beta << " n = " << n << " x^" << a;
          where = os.str();
        }
      }
      for (int k = 0; k < n; ++k) {
        ASSERT_GT(r.weights[k], 0.0);
        ASSERT_GT(r.nodes[k], 0.0);
        ASSERT_LT(r.nodes[k], 1.0);
        if (k > 0) {
        ASSERT_LT(r.nodes[k - 1], r.nodes[k]);
      }
      }
    }
  }
  report("gauss-jacobi n=1..30", worst, where);
}

// ------------------------------------------------------------------------------- tensor rules

namespace {

void check_tensor_family(Geometry g, QuadratureType type, int max_requested) {
  double worst = 0;
  std::string where;
  int last_n = 0;
  for (int d = 0; d <= max_requested; ++d) {
    const QuadratureRule q = quadrature(g, d, type);
    const int n = type == QuadratureType::Gauss ? static_cast<int>(std::ceil((d + 1) / 2.0))
                                                : static_cast<int>(std::ceil((d + 3) / 2.0));
    index_t npts = 1;
    for (int c = 0; c < dim(g); ++c) npts *= n;
    ASSERT_EQ(q.n1d, n) << name(g) << " degree " << d;
    ASSERT_EQ(q.size(), npts);
    EXPECT_EQ(q.geom, g);
    EXPECT_EQ(q.type, type);
    EXPECT_EQ(q.degree, type == QuadratureType::Gauss ? 2 * n - 1 : 2 * n - 3);
    EXPECT_GE(q.degree, d);
    if (n == last_n) continue;  // the same rule as for d - 1
    last_n = n;
    const MonomialResult r = check_monomials(q, q.degree);
    EXPECT_LE(r.max_rel_err, kTol) << name(g) << " " << name(type) << " n = " << n << " worst " << r.worst;
    if (r.max_rel_err > worst) worst = r.max_rel_err, where = "n = " + std::to_string(n) + " exponents " + r.worst;
    expect_inside(q, type == QuadratureType::Gauss);
    expect_positive_weights(q);
    EXPECT_GT(above_degree_relative_error(q, n, type), 0.5) << name(g) << " n = " << n;
  }
  report((std::string(name(g)) + " " + name(type) + " degree 0.." + std::to_string(max_requested)).c_str(), worst,
         where);
}

}  // namespace

TEST(TensorQuadrature, QuadrilateralGauss) { check_tensor_family(Geometry::Quadrilateral, QuadratureType::Gauss, 32); }
TEST(TensorQuadrature, QuadrilateralLobatto) {
  check_tensor_family(Geometry::Quadrilateral, QuadratureType::GaussLobatto, 32);
}
TEST(TensorQuadrature, HexahedronGauss) { check_tensor_family(Geometry::Hexahedron, QuadratureType::Gauss, 32); }
TEST(TensorQuadrature, HexahedronLobatto) { check_tensor_family(Geometry::Hexahedron, QuadratureType::GaussLobatto, 32); }
TEST(TensorQuadrature, SegmentFactoryMatchesQuadrature1d) {
  for (int d = 0; d <= 40; ++d) {
    for (QuadratureType t : {QuadratureType::Gauss, QuadratureType::GaussLobatto}) {
      const QuadratureRule a = quadrature(Geometry::Segment, d, t);
      const QuadratureRule b = quadrature_1d(a.n1d, t);
      ASSERT_EQ(a.size(), b.size());
      EXPECT_GE(a.degree, d);
      EXPECT_LE(a.degree, d + 1);
      for (index_t k = 0; k < a.size(); ++k) {
        EXPECT_EQ(a.points(k, 0), b.points(k, 0));
        EXPECT_EQ(a.weights(k), b.weights(k));
      }
    }
  }
}

TEST(TensorQuadrature, PointOrderXFastest) {
  const QuadratureRule r1 = quadrature_1d(3, QuadratureType::GaussLobatto);
  const QuadratureRule q = tensor_quadrature(Geometry::Hexahedron, r1);
  ASSERT_EQ(q.size(), 27);
  for (int kz = 0; kz < 3; ++kz)
    for (int ky = 0; ky < 3; ++ky)
      for (int kx = 0; kx < 3; ++kx) {
        const index_t k = (kz * 3 + ky) * 3 + kx;
        EXPECT_EQ(q.points(k, 0), r1.points(kx, 0));
        EXPECT_EQ(q.points(k, 1), r1.points(ky, 0));
        EXPECT_EQ(q.points(k, 2), r1.points(kz, 0));
        EXPECT_EQ(q.weights(k), r1.weights(kx) * r1.weights(ky) * r1.weights(kz));
      }
  EXPECT_EQ(q.degree, 3);
  EXPECT_EQ(q.type, QuadratureType::GaussLobatto);
}

// ------------------------------------------------------------------------------- simplex rules

namespace {

void check_simplex_family(Geometry g, int max_requested) {
  double worst = 0;
  std::string where;
  int last_n = 0;
  for (int d = 0; d <= max_requested; ++d) {
    const QuadratureRule q = quadrature(g, d, QuadratureType::GaussCollapsed);
    const int n = static_cast<int>(std::ceil((d + 1) / 2.0));
    index_t npts = 1;
    for (int c = 0; c < dim(g); ++c) npts *= n;
    ASSERT_EQ(q.n1d, n) << name(g) << " degree " << d;
    ASSERT_EQ(q.size(), npts);
    EXPECT_EQ(q.family, QuadratureFamily::Collapsed);
    EXPECT_EQ(q.geom, g);
    EXPECT_EQ(q.degree, 2 * n - 1);
    EXPECT_GE(q.degree, d);
    if (n == last_n) continue;
    last_n = n;
    const MonomialResult r = check_monomials(q, q.degree);
    EXPECT_LE(r.max_rel_err, kTol) << name(g) << " n = " << n << " worst " << r.worst;
    if (r.max_rel_err > worst) worst = r.max_rel_err, where = "n = " + std::to_string(n) + " exponents " + r.worst;
    expect_inside(q, true);
    expect_positive_weights(q);

    // Not exact one degree above: the last coordinate (y on the triangle, z on the
    // tetrahedron) of every point is a node of the collapsed direction's Gauss–Jacobi rule,
    // so f = prod_j (s - s_j)^2 (degree 2n) vanishes at every point, while its integral is
    // positive (computed with the n + 1 point rule, exact to degree 2n + 1).
    const int last = dim(g) - 1;
    const Rule1D gj = gauss_jacobi(n, g == Geometry::Triangle ? 1.0 : 2.0, 0.0);
    auto f = [&](const QuadratureRule& rule, index_t k) {
      double v = 1;
      for (double s : gj.nodes) v *= (rule.points(k, last) - s);
      return v * v;
    };
    const QuadratureRule ref = collapsed_quadrature(g, n + 1);
    double got = 0, exact = 0;
    for (index_t k = 0; k < q.size(); ++k) got += q.weights(k) * f(q, k);
    for (index_t k = 0; k < ref.size(); ++k) exact += ref.weights(k) * f(ref, k);
    EXPECT_GT(exact, 0.0);
    EXPECT_GT(std::abs(got - exact), 0.5 * exact) << name(g) << " n = " << n;
  }
  report((std::string(name(g)) + " collapsed degree 0.." + std::to_string(max_requested)).c_str(), worst, where);
}

}  // namespace

TEST(SimplexQuadrature, Triangle) { check_simplex_family(Geometry::Triangle, 20); }
TEST(SimplexQuadrature, Tetrahedron) { check_simplex_family(Geometry::Tetrahedron, 16); }

TEST(SimplexQuadrature, HigherDegreesStayExact) {
  // Spot checks beyond the required ranges (above the symmetric tables: collapsed rules).
  for (auto [g, d] : {std::pair{Geometry::Triangle, 40}, std::pair{Geometry::Tetrahedron, 25}}) {
    const QuadratureRule q = quadrature(g, d);
    EXPECT_EQ(q.family, QuadratureFamily::Collapsed);
    const MonomialResult r = check_monomials(q, q.degree);
    EXPECT_LE(r.max_rel_err, kTol) << name(g) << " degree " << d << " worst " << r.worst;
    expect_positive_weights(q);
    expect_inside(q, true);
  }
}

// ------------------------------------------------------------------------------- symmetric simplex rules

namespace {

// Tolerance of the symmetric rules: 1e-14 relative. Their degrees are <= 20 and they have <= 79
// points; every term w_k x^a y^b z^c is positive (no cancellation) and carries at most
// ~ (a + b + c + 3) roundings of its product plus the ~1 ulp rounding of the tabulated
// generators and weights, amplified by the exponent (<= 20 ulp), so a sum of positive terms is
// off by at most ~ 25 eps ~ 6e-15 relative. A wrong digit anywhere in a table gives errors of
// 1e-10 and more.
constexpr double kSymTol = 1e-14;

// The error of the best monomial of degree d + 1 is at least 1e-7 for every table (computed
// in 40-digit arithmetic when they were converted), far above rounding.
constexpr double kNotExact = 1e-9;

// Barycentric coordinates of point k, sorted: equal for all points of one symmetry orbit.
std::vector<double> sorted_barycentric(const QuadratureRule& q, index_t k) {
  std::vector<double> l{1.0};
  for (int c = 0; c < q.dim(); ++c) {
    l.push_back(q.points(k, c));
    l[0] -= q.points(k, c);
  }
  std::sort(l.begin(), l.end());
  return l;
}

// Every permutation of the vertices maps the rule onto itself: each point's orbit (the points
// with the same sorted barycentric coordinates, up to rounding) has as many points as its
// coordinates have distinct permutations, all with one weight.
void expect_fully_symmetric(const QuadratureRule& q) {
  const index_t n = q.size();
  for (index_t k = 0; k < n; ++k) {
    const std::vector<double> lk = sorted_barycentric(q, k);
    // distinct permutations of lk: (dim + 1)! / prod (multiplicity!)
    int perms = 1;
    for (int i = 2; i <= q.dim() + 1; ++i) perms *= i;
    for (std::size_t i = 0; i < lk.size();) {
      std::size_t j = i;
      while (j < lk.size() && std::abs(lk[j] - lk[i]) < 1e-14) ++j;
      for (std::size_t m = 2; m <= j - i; ++m) perms /= static_cast<int>(m);
      i = j;
    }
    int same = 0;
    for (index_t m = 0; m < n; ++m) {
      const std::vector<double> lm = sorted_barycentric(q, m);
      bool eq = true;
      for (std::size_t i = 0; i < lk.size(); ++i) eq = eq && std::abs(lm[i] - lk[i]) < 1e-14;
      if (!eq) continue;
      ++same;
      EXPECT_NEAR(q.weights(m), q.weights(k), 1e-15 * q.weights(k)) << name(q.geom) << " degree " << q.degree;
    }
    EXPECT_EQ(same, perms) << name(q.geom) << " degree " << q.degree << " point " << k;
  }
}

void check_symmetric_family(Geometry g, int max_degree, const std::vector<std::pair<int, int>>& degree_points) {
  ASSERT_EQ(max_symmetric_degree(g), max_degree);
  double worst = 0;
  std::string where;
  std::vector<std::pair<int, int>> seen;
  for (int d = 0; d <= max_degree; ++d) {
    const QuadratureRule q = symmetric_quadrature(g, d);
    EXPECT_EQ(q.geom, g);
    EXPECT_EQ(q.family, QuadratureFamily::Symmetric);
    EXPECT_EQ(q.type, QuadratureType::Gauss);
    EXPECT_EQ(q.n1d, 0);
    EXPECT_GE(q.degree, d);
    ASSERT_EQ(q.points.extent(0), q.size());
    ASSERT_EQ(q.points.extent(1), dim(g));

    // quadrature()'s default on a simplex is this rule unless the collapsed rule of the same
    // degree has fewer points (the triangle's degree 3 only); from degree 4 on the symmetric
    // rule has fewer (degrees 0 and 1: both are the centroid; the tetrahedron's 3: 8 each).
    const QuadratureRule def = quadrature(g, d);
    const QuadratureRule col = quadrature(g, d, QuadratureType::GaussCollapsed);
    const bool collapsed_smaller = col.size() < q.size();
    EXPECT_EQ(collapsed_smaller, g == Geometry::Triangle && d == 3) << "degree " << d;
    EXPECT_EQ(def.family, collapsed_smaller ? QuadratureFamily::Collapsed : QuadratureFamily::Symmetric);
    EXPECT_EQ(def.size(), std::min(q.size(), col.size()));
    if (d >= 4) {
      EXPECT_LT(q.size(), col.size()) << name(g) << " degree " << d;
    }
    if (d <= 1) {
      EXPECT_EQ(q.size(), col.size());
    }

    if (!seen.empty() && seen.back().first == q.degree) continue;
    seen.emplace_back(q.degree, static_cast<int>(q.size()));

    const MonomialResult r = check_monomials(q, q.degree);
    EXPECT_LE(r.max_rel_err, kSymTol) << name(g) << " degree " << q.degree << " worst " << r.worst;
    if (r.max_rel_err > worst) worst = r.max_rel_err, where = "degree " + std::to_string(q.degree) + " exponents " + r.worst;
    // exact to degree q.degree (above), so a larger error over degree + 1 is in a monomial of
    // degree q.degree + 1: the stated degree is the true one
    const MonomialResult above = check_monomials(q, q.degree + 1);
    EXPECT_GT(above.max_rel_err, kNotExact) << name(g) << " degree " << q.degree << " is exact one degree higher";
    expect_positive_weights(q);
    expect_inside(q, true);
    double sum = 0;
    for (index_t k = 0; k < q.size(); ++k) sum += q.weights(k);
    EXPECT_NEAR(sum, reference_volume(g), kSymTol * reference_volume(g)) << name(g) << " degree " << q.degree;
    expect_fully_symmetric(q);
  }
  EXPECT_EQ(seen, degree_points) << name(g) << ": tabulated degrees and point counts";
  report((std::string(name(g)) + " symmetric degree 0.." + std::to_string(max_degree)).c_str(), worst, where);
}

}  // namespace

TEST(SymmetricQuadrature, Triangle) {
  check_symmetric_family(Geometry::Triangle, 20,
                         {{1, 1}, {2, 3}, {4, 6}, {5, 7}, {6, 12}, {7, 15}, {8, 16}, {9, 19}, {10, 25}, {11, 28},
                          {12, 33}, {13, 37}, {14, 42}, {15, 49}, {17, 60}, {18, 67}, {19, 73}, {20, 79}});
}

TEST(SymmetricQuadrature, Tetrahedron) {
  check_symmetric_family(Geometry::Tetrahedron, 10,
                         {{1, 1}, {2, 4}, {3, 8}, {5, 14}, {6, 24}, {7, 35}, {8, 46}, {9, 59}, {10, 79}});
}

TEST(SymmetricQuadrature, CollapsedAboveTheTables) {
  // One degree above the tables quadrature() switches to the collapsed rule.
  for (auto [g, d] : {std::pair{Geometry::Triangle, 21}, std::pair{Geometry::Tetrahedron, 11}}) {
    const QuadratureRule q = quadrature(g, d);
    EXPECT_EQ(q.family, QuadratureFamily::Collapsed);
    EXPECT_EQ(q.n1d, (d + 2) / 2);
    EXPECT_GE(q.degree, d);
  }
  // Tensor geometries: GaussCollapsed is Gauss.
  const QuadratureRule a = quadrature(Geometry::Hexahedron, 5, QuadratureType::GaussCollapsed);
  const QuadratureRule b = quadrature(Geometry::Hexahedron, 5);
  EXPECT_EQ(a.family, QuadratureFamily::Tensor);
  EXPECT_EQ(a.type, QuadratureType::Gauss);
  ASSERT_EQ(a.size(), b.size());
  for (index_t k = 0; k < a.size(); ++k) EXPECT_EQ(a.weights(k), b.weights(k));
  EXPECT_STREQ(name(QuadratureType::GaussCollapsed), "gauss-collapsed");
  EXPECT_STREQ(name(QuadratureFamily::Symmetric), "symmetric");
  EXPECT_EQ(max_symmetric_degree(Geometry::Quadrilateral), 0);
}

// ------------------------------------------------------------------------------- copies

TEST(QuadratureRule, CopiesAndSpaces) {
  const QuadratureRule q = quadrature(Geometry::Triangle, 4);
  EXPECT_EQ(q.dim(), 2);
  EXPECT_EQ(q.points.extent(0), q.size());
  EXPECT_EQ(q.points.extent(1), 2);
  const QuadratureRule h = q.to_host();
  EXPECT_EQ(h.points.data(), q.points.data());
  const QuadratureRule c = q.clone(tessera::Space::Host);
  EXPECT_NE(c.points.data(), q.points.data());
  for (index_t k = 0; k < q.size(); ++k) {
    EXPECT_EQ(c.points(k, 0), q.points(k, 0));
    EXPECT_EQ(c.points(k, 1), q.points(k, 1));
    EXPECT_EQ(c.weights(k), q.weights(k));
  }
  EXPECT_EQ(c.degree, q.degree);
  EXPECT_EQ(c.geom, q.geom);
  if (tessera::cuda_available()) {
    const QuadratureRule d = q.to_device();
    EXPECT_EQ(d.points.space(), tessera::Space::Device);
    const QuadratureRule back = d.to_host();
    for (index_t k = 0; k < q.size(); ++k) EXPECT_EQ(back.weights(k), q.weights(k));
  }
}

// ------------------------------------------------------------------------------- errors

TEST(QuadratureErrors, BadArgumentsThrowWithMessage) {
  EXPECT_ERROR_MENTIONS(quadrature(Geometry::Quadrilateral, -1), "degree -1", "valid: 0..");
  EXPECT_ERROR_MENTIONS(quadrature(Geometry::Triangle, -3), "degree -3", "triangle");
  EXPECT_ERROR_MENTIONS(quadrature(Geometry::Hexahedron, 100000), "degree 100000", "hexahedron", "valid: 0..511");
  EXPECT_ERROR_MENTIONS(quadrature(Geometry::Segment, 1 << 30), "degree 1073741824", "valid: 0..2047");
  EXPECT_ERROR_MENTIONS(quadrature(Geometry::Triangle, 3, QuadratureType::GaussLobatto), "Lobatto", "triangle");
  EXPECT_ERROR_MENTIONS(quadrature(static_cast<Geometry>(42), 2), "invalid Geometry", "42");
  EXPECT_ERROR_MENTIONS(quadrature(Geometry::Segment, 2, static_cast<QuadratureType>(5)), "invalid QuadratureType");

  EXPECT_ERROR_MENTIONS(quadrature_1d(0), "n = 0", "valid: 1..1024");
  EXPECT_ERROR_MENTIONS(quadrature_1d(-4), "n = -4");
  EXPECT_ERROR_MENTIONS(quadrature_1d(1, QuadratureType::GaussLobatto), "n = 1", "gauss-lobatto", "valid: 2..1024");
  EXPECT_ERROR_MENTIONS(quadrature_1d(max_points_1d + 1), "n = 1025", "valid: 1..1024");
  EXPECT_ERROR_MENTIONS(gauss_legendre(0), "gauss_legendre", "n = 0");
  EXPECT_ERROR_MENTIONS(gauss_lobatto_legendre(1), "gauss_lobatto_legendre", "n = 1", "valid: 2..");
  EXPECT_ERROR_MENTIONS(gauss_jacobi(0, 1, 0), "gauss_jacobi", "n = 0");
  EXPECT_ERROR_MENTIONS(gauss_jacobi(4, -1.0, 0), "alpha = -1", "-1 < alpha");
  EXPECT_ERROR_MENTIONS(gauss_jacobi(4, 0, std::nan("")), "beta = nan", "-1 < beta");

  EXPECT_ERROR_MENTIONS(symmetric_quadrature(Geometry::Quadrilateral, 3), "quadrilateral", "not a simplex");
  EXPECT_ERROR_MENTIONS(symmetric_quadrature(Geometry::Triangle, 21), "degree 21", "triangle", "valid: 0..20");
  EXPECT_ERROR_MENTIONS(symmetric_quadrature(Geometry::Tetrahedron, -1), "degree -1", "tetrahedron", "valid: 0..10");
  EXPECT_ERROR_MENTIONS(collapsed_quadrature(Geometry::Quadrilateral, 3), "quadrilateral", "not a simplex");
  EXPECT_ERROR_MENTIONS(collapsed_quadrature(Geometry::Tetrahedron, 0), "n = 0", "valid: 1..256");
  EXPECT_ERROR_MENTIONS(collapsed_quadrature(Geometry::Tetrahedron, 257), "n = 257", "valid: 1..256");
  EXPECT_ERROR_MENTIONS(tensor_quadrature(Geometry::Triangle, quadrature_1d(2)), "triangle", "not a tensor-product");
  EXPECT_ERROR_MENTIONS(tensor_quadrature(Geometry::Quadrilateral, quadrature(Geometry::Triangle, 2)),
                        "must be on a segment");
  EXPECT_ERROR_MENTIONS(tensor_quadrature(Geometry::Hexahedron, quadrature_1d(300)), "300 points", "1..256");
}
