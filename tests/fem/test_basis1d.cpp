// Tests of tessera/fem/basis1d.hpp: the 1-D Lagrange basis on GLL (and arbitrary) nodes.

#include <gtest/gtest.h>

#include "fem_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tessera/fem/basis1d.hpp"
#include "tessera/fem/quadrature.hpp"

using tessera::index_t;
using namespace tessera::fem;

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kMaxOrder = 16;

// Tolerances, scaled with the order p:
// - values: the barycentric formula is forward stable on GLL nodes, with error about
//   eps * (1 + Lebesgue constant) * max|f|; the GLL Lebesgue constant grows like
//   (2/pi) log p (< 3 for p <= 16). We allow 8 (p + 1) eps, i.e. a margin of ~10 for p = 16.
// - derivatives: rounding errors of size eps * Lambda in the values of a degree-p polynomial
//   are amplified by differentiation up to Markov's factor 2 p^2 on [0, 1]; we allow
//   8 (p + 1)^3 eps (2e-11 at p = 16), relative to max |f'| on [0, 1].
double value_tol(int p) { return 8.0 * (p + 1) * kEps; }
double deriv_tol(int p) { return 8.0 * (p + 1) * (p + 1) * (p + 1) * kEps; }

std::vector<double> random_points(int count, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(count));
  for (double& v : x) v = u(gen);
  return x;
}


}  // namespace

TEST(LagrangeBasis1D, GllNodesAndSizes) {
  for (int p = 1; p <= kMaxOrder; ++p) {
    const LagrangeBasis1D b(p);
    EXPECT_EQ(b.order(), p);
    EXPECT_EQ(b.size(), p + 1);
    const Rule1D gll = gauss_lobatto_legendre(p + 1);
    ASSERT_EQ(b.nodes().size(), gll.nodes.size());
    for (int i = 0; i <= p; ++i) EXPECT_EQ(b.nodes()[i], gll.nodes[i]);
    double wmax = 0;
    for (double w : b.barycentric_weights()) wmax = std::max(wmax, std::abs(w));
    EXPECT_EQ(wmax, 1.0);
  }
}

TEST(LagrangeBasis1D, KroneckerAtNodes) {
  for (int p = 1; p <= kMaxOrder; ++p) {
    const LagrangeBasis1D b(p);
    std::vector<double> nodes(b.nodes().begin(), b.nodes().end());
    const auto B = b.values(nodes);
    ASSERT_EQ(B.extent(0), p + 1);
    ASSERT_EQ(B.extent(1), p + 1);
    for (int q = 0; q <= p; ++q)
      for (int i = 0; i <= p; ++i) EXPECT_EQ(B(q, i), q == i ? 1.0 : 0.0) << "p = " << p;
  }
}

TEST(LagrangeBasis1D, PartitionOfUnity) {
  double worst_v = 0, worst_d = 0;
  for (int p = 1; p <= kMaxOrder; ++p) {
    const LagrangeBasis1D b(p);
    std::vector<double> x = random_points(200, 1234 + p);
    std::vector<double> nodes(b.nodes().begin(), b.nodes().end());
    x.insert(x.end(), nodes.begin(), nodes.end());
    const auto t = tabulate(b, x);
    for (index_t q = 0; q < t.B.extent(0); ++q) {
      double s = 0, ds = 0, scale = 0;
      for (int i = 0; i <= p; ++i) {
        s += t.B(q, i);
        ds += t.G(q, i);
        scale = std::max(scale, std::abs(t.G(q, i)));
      }
      EXPECT_NEAR(s, 1.0, value_tol(p)) << "p = " << p << " x = " << x[q];
      // Sum of phi_i' = 0 up to rounding relative to the size of the terms.
      EXPECT_LE(std::abs(ds), value_tol(p) * std::max(1.0, scale)) << "p = " << p << " x = " << x[q];
      worst_v = std::max(worst_v, std::abs(s - 1.0));
      worst_d = std::max(worst_d, std::abs(ds) / std::max(1.0, scale));
    }
  }
  std::cout << "[   info   ] partition of unity p=1..16: max |sum phi - 1| = " << worst_v
            << ", max |sum phi'| / max|phi'| = " << worst_d << "\n";
}

TEST(LagrangeBasis1D, ExactForPolynomialsUpToOrder) {
  // f(x) = (x - c)^m for m = 0..p with c = 0.3: interpolating at the nodes and evaluating
  // the interpolant and its derivative must reproduce f and f' at random points.
  double worst_v = 0, worst_d = 0;
  const double c = 0.3;
  for (int p = 1; p <= kMaxOrder; ++p) {
    const LagrangeBasis1D b(p);
    std::vector<double> x = random_points(200, 99 + p);
    // Points very close to nodes exercise the barycentric formula near its poles.
    for (double node : b.nodes()) {
      x.push_back(std::nextafter(node, 2.0));
      x.push_back(std::nextafter(node, -1.0));
      x.push_back(node + 1e-9);
    }
    std::vector<double> nodes(b.nodes().begin(), b.nodes().end());
    x.insert(x.end(), nodes.begin(), nodes.end());
    const auto t = tabulate(b, x);
    for (int m = 0; m <= p; ++m) {
      const double fmax = std::pow(std::max(c, 1.0 - c) + 2e-9, m);  // max |f| on [0,1] (plus the 1e-9 shifts)
      const double dfmax = m == 0 ? 1.0 : m * std::pow(std::max(c, 1.0 - c) + 2e-9, m - 1);
      for (index_t q = 0; q < t.B.extent(0); ++q) {
        double v = 0, dv = 0;
        for (int i = 0; i <= p; ++i) {
          const double fi = std::pow(nodes[i] - c, m);
          v += fi * t.B(q, i);
          dv += fi * t.G(q, i);
        }
        const double f = std::pow(x[q] - c, m);
        const double df = m == 0 ? 0.0 : m * std::pow(x[q] - c, m - 1);
        const double ev = std::abs(v - f) / fmax, ed = std::abs(dv - df) / dfmax;
        EXPECT_LE(ev, value_tol(p)) << "p = " << p << " m = " << m << " x = " << x[q];
        EXPECT_LE(ed, deriv_tol(p)) << "p = " << p << " m = " << m << " x = " << x[q];
        worst_v = std::max(worst_v, ev);
        worst_d = std::max(worst_d, ed);
      }
    }
  }
  std::cout << "[   info   ] polynomial reproduction p=1..16: max relative value error " << worst_v
            << ", max relative derivative error " << worst_d << "\n";
}

TEST(LagrangeBasis1D, ArbitraryNodesAndInterval) {
  // Unsorted equispaced nodes on [-1, 2]: the basis reproduces cubics there.
  const LagrangeBasis1D b(std::vector<double>{2.0, -1.0, 0.5, -0.25, 1.25});
  EXPECT_EQ(b.order(), 4);
  auto f = [](double x) { return 1 - 2 * x + 0.5 * x * x * x; };
  auto df = [](double x) { return -2 + 1.5 * x * x; };
  std::vector<double> v(5), d(5);
  for (double x : {-1.0, -0.9, 0.0, 0.3, 1.25, 1.7, 2.0}) {
    b.eval(x, v, d);
    double s = 0, ds = 0;
    for (int i = 0; i < 5; ++i) {
      s += f(b.nodes()[i]) * v[i];
      ds += f(b.nodes()[i]) * d[i];
    }
    EXPECT_NEAR(s, f(x), 1e-13) << "x = " << x;
    EXPECT_NEAR(ds, df(x), 1e-12) << "x = " << x;
  }
  // One node: the constant 1.
  const LagrangeBasis1D one(std::vector<double>{0.25});
  EXPECT_EQ(one.order(), 0);
  std::vector<double> v1(1), d1(1);
  for (double x : {0.0, 0.25, 0.9}) {
    one.eval(x, v1, d1);
    EXPECT_EQ(v1[0], 1.0);
    EXPECT_EQ(d1[0], 0.0);
  }
}

TEST(LagrangeBasis1D, TablesAtQuadraturePoints) {
  for (int p = 1; p <= kMaxOrder; ++p) {
    const LagrangeBasis1D b(p);
    const QuadratureRule rule = quadrature_1d(p + 2);  // exact to degree 2p + 3
    const BasisTables1D t = tabulate(b, rule);
    ASSERT_EQ(t.B.extent(0), p + 2);
    ASSERT_EQ(t.B.extent(1), p + 1);
    ASSERT_EQ(t.G.extent(0), p + 2);
    ASSERT_EQ(t.G.extent(1), p + 1);
    // values() / derivatives() give the same tables.
    std::vector<double> x(static_cast<std::size_t>(rule.size()));
    for (index_t q = 0; q < rule.size(); ++q) x[q] = rule.points(q, 0);
    const auto B = b.values(x), G = b.derivatives(x);
    for (index_t q = 0; q < rule.size(); ++q)
      for (int i = 0; i <= p; ++i) {
        EXPECT_EQ(B(q, i), t.B(q, i));
        EXPECT_EQ(G(q, i), t.G(q, i));
      }
    // int_0^1 phi_i' = phi_i(1) - phi_i(0) = delta_{i,p} - delta_{i,0} (GLL nodes include 0 and 1),
    // and the mass matrix M = B^T W B sums to 1 (= int 1).
    double msum = 0;
    for (int i = 0; i <= p; ++i) {
      double s = 0;
      for (index_t q = 0; q < rule.size(); ++q) s += rule.weights(q) * t.G(q, i);
      const double expected = (i == p ? 1.0 : 0.0) - (i == 0 ? 1.0 : 0.0);
      EXPECT_NEAR(s, expected, deriv_tol(p)) << "p = " << p << " i = " << i;
      for (int j = 0; j <= p; ++j)
        for (index_t q = 0; q < rule.size(); ++q) msum += rule.weights(q) * t.B(q, i) * t.B(q, j);
    }
    EXPECT_NEAR(msum, 1.0, value_tol(p));
  }
}

TEST(LagrangeBasis1D, ErrorsThrowWithMessage) {
  EXPECT_ERROR_MENTIONS(LagrangeBasis1D(0), "order p = 0", "valid: 1..64");
  EXPECT_ERROR_MENTIONS(LagrangeBasis1D(65), "order p = 65", "valid: 1..64");
  EXPECT_ERROR_MENTIONS(LagrangeBasis1D(std::vector<double>{}), "0 nodes", "valid: 1..65");
  EXPECT_ERROR_MENTIONS(LagrangeBasis1D(std::vector<double>{0.0, 0.5, 0.5, 1.0}), "not distinct", "0.5");
  EXPECT_ERROR_MENTIONS(LagrangeBasis1D(std::vector<double>{0.0, std::nan(""), 1.0}), "node 1", "not finite");
  const LagrangeBasis1D b(3);
  std::vector<double> small(3), ok(4);
  EXPECT_ERROR_MENTIONS(b.eval(0.5, small), "3 entries", "4 functions");
  EXPECT_ERROR_MENTIONS(b.eval(0.5, ok, small), "3 entries", "4 functions");
  EXPECT_ERROR_MENTIONS(tabulate(b, quadrature(Geometry::Quadrilateral, 3)), "quadrilateral", "segment rule");
}
