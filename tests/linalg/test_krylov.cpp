// Tests of tessera::linalg's Krylov solvers (pcg, pcg_jacobi), the largest-eigenvalue estimate
// and the Chebyshev smoother on every backend present, against dense computations on the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "tessera/linalg/csr.hpp"
#include "tessera/linalg/krylov.hpp"
#include "test_backends.hpp"

namespace tessera::test {
namespace {

using linalg::CsrMatrix;
using linalg::LinearOperator;
using Dense = std::vector<std::vector<double>>;

/// A symmetric matrix held on the host both as CSR arrays and densely.
struct HostMatrix {
  index_t n = 0;
  std::vector<std::int64_t> off{0};
  std::vector<int> col;
  std::vector<double> val;
  Dense dense;
};

HostMatrix from_dense(const Dense& a) {
  HostMatrix h;
  h.n = static_cast<index_t>(a.size());
  h.dense = a;
  for (const auto& row : a) {
    for (std::size_t c = 0; c < row.size(); ++c)
      if (row[c] != 0) {
        h.col.push_back(static_cast<int>(c));
        h.val.push_back(row[c]);
      }
    h.off.push_back(static_cast<std::int64_t>(h.col.size()));
  }
  return h;
}

/// S L S for the 5-point Laplacian L of an nx x ny grid (Dirichlet: 4 on the diagonal, -1 to
/// each neighbour; ny = 1 gives the 1-D 2, -1 stencil) and a random diagonal S with entries in
/// [0.5, 2): symmetric positive definite with a varying diagonal, so that Jacobi matters.
HostMatrix scaled_laplacian(int nx, int ny, std::uint64_t seed) {
  const int n = nx * ny;
  const auto s = random_doubles(std::size_t(n), seed, 0.5, 2.0);
  Dense a(std::size_t(n), std::vector<double>(std::size_t(n), 0.0));
  const double centre = ny == 1 ? 2.0 : 4.0;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const int r = j * nx + i;
      a[r][r] = centre;
      if (i > 0) a[r][r - 1] = -1;
      if (i + 1 < nx) a[r][r + 1] = -1;
      if (j > 0) a[r][r - nx] = -1;
      if (j + 1 < ny) a[r][r + nx] = -1;
    }
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) a[r][c] *= s[r] * s[c];
  return from_dense(a);
}

CsrMatrix make(const HostMatrix& h, const Exec& exec) {
  const Space sp = exec.space();
  return CsrMatrix(h.n, h.n, Array<std::int64_t, 1>::from("off", h.off, sp), Array<int, 1>::from("col", h.col, sp),
                   Array<double, 1>::from("val", h.val, sp), exec);
}

LinearOperator op(const CsrMatrix& A) {
  return [&A](View<const double, 1> in, View<double, 1> out) { A.apply(in, out); };
}

std::vector<double> inverse_diagonal(const HostMatrix& h) {
  std::vector<double> d(std::size_t(h.n));
  for (index_t i = 0; i < h.n; ++i) d[std::size_t(i)] = 1.0 / h.dense[std::size_t(i)][std::size_t(i)];
  return d;
}

std::vector<double> matvec(const Dense& a, const std::vector<double>& x) {
  std::vector<double> y(a.size(), 0.0);
  for (std::size_t r = 0; r < a.size(); ++r)
    for (std::size_t c = 0; c < x.size(); ++c) y[r] += a[r][c] * x[c];
  return y;
}

double dotv(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

/// Dense solve by Gaussian elimination with partial pivoting.
std::vector<double> dense_solve(Dense a, std::vector<double> b) {
  const std::size_t n = b.size();
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t piv = k;
    for (std::size_t r = k + 1; r < n; ++r)
      if (std::abs(a[r][k]) > std::abs(a[piv][k])) piv = r;
    std::swap(a[k], a[piv]);
    std::swap(b[k], b[piv]);
    for (std::size_t r = k + 1; r < n; ++r) {
      const double f = a[r][k] / a[k][k];
      for (std::size_t c = k; c < n; ++c) a[r][c] -= f * a[k][c];
      b[r] -= f * b[k];
    }
  }
  std::vector<double> x(n);
  for (std::size_t k = n; k-- > 0;) {
    double s = b[k];
    for (std::size_t c = k + 1; c < n; ++c) s -= a[k][c] * x[c];
    x[k] = s / a[k][k];
  }
  return x;
}

/// Host reference: Jacobi CG (inv_diag empty: none) with pcg's stopping test; iterations.
int reference_cg_iterations(const Dense& a, const std::vector<double>& inv, const std::vector<double>& b, double tol,
                            int max_iters) {
  const std::size_t n = b.size();
  auto M = [&](const std::vector<double>& r) {
    std::vector<double> z(r);
    if (!inv.empty())
      for (std::size_t i = 0; i < n; ++i) z[i] *= inv[i];
    return z;
  };
  std::vector<double> x(n, 0.0), r(b), z = M(r), p = z;
  const double bnorm = std::sqrt(dotv(b, M(b)));
  double rz = dotv(r, z);
  int it = 0;
  while (it < max_iters && std::sqrt(rz) / bnorm > tol) {
    const auto Ap = matvec(a, p);
    const double alpha = rz / dotv(p, Ap);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * Ap[i];
    }
    z = M(r);
    const double rz_new = dotv(r, z);
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + rz_new / rz * p[i];
    rz = rz_new;
    ++it;
  }
  return it;
}

/// Eigenvalues (ascending) and orthonormal eigenvectors (columns of v) of the symmetric b, by
/// the cyclic Jacobi eigenvalue algorithm, swept until the off-diagonal part is below 1e-15 of
/// the matrix's norm.
void jacobi_eigen(Dense b, std::vector<double>& lambda, Dense& v) {
  const std::size_t n = b.size();
  v.assign(n, std::vector<double>(n, 0.0));
  for (std::size_t i = 0; i < n; ++i) v[i][i] = 1.0;
  double norm = 0;
  for (const auto& row : b)
    for (double x : row) norm += x * x;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t q = p + 1; q < n; ++q) off += 2 * b[p][q] * b[p][q];
    if (off <= 1e-30 * norm) break;
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t q = p + 1; q < n; ++q) {
        if (b[p][q] == 0) continue;
        const double theta = (b[q][q] - b[p][p]) / (2 * b[p][q]);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (std::size_t k = 0; k < n; ++k) {  // columns p, q
          const double bkp = b[k][p], bkq = b[k][q];
          b[k][p] = c * bkp - s * bkq;
          b[k][q] = s * bkp + c * bkq;
        }
        for (std::size_t k = 0; k < n; ++k) {  // rows p, q
          const double bpk = b[p][k], bqk = b[q][k];
          b[p][k] = c * bpk - s * bqk;
          b[q][k] = s * bpk + c * bqk;
        }
        for (std::size_t k = 0; k < n; ++k) {
          const double vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return b[i][i] < b[j][j]; });
  lambda.resize(n);
  Dense vs(n, std::vector<double>(n));
  for (std::size_t k = 0; k < n; ++k) {
    lambda[k] = b[order[k]][order[k]];
    for (std::size_t i = 0; i < n; ++i) vs[i][k] = v[i][order[k]];
  }
  v = vs;
}

/// Eigen decomposition of D^-1 A through the symmetric D^-1/2 A D^-1/2 = V diag(lambda) V^T.
struct Spectrum {
  std::vector<double> lambda;
  Dense v;
  std::vector<double> sqrt_d;  // D^1/2
};

Spectrum spectrum(const HostMatrix& h) {
  const std::size_t n = std::size_t(h.n);
  Spectrum s;
  s.sqrt_d.resize(n);
  for (std::size_t i = 0; i < n; ++i) s.sqrt_d[i] = std::sqrt(h.dense[i][i]);
  Dense b(n, std::vector<double>(n));
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < n; ++c) b[r][c] = h.dense[r][c] / (s.sqrt_d[r] * s.sqrt_d[c]);
  jacobi_eigen(b, s.lambda, s.v);
  return s;
}

/// Chebyshev polynomial T_k(y) by the three-term recurrence.
double chebyshev_t(int k, double y) {
  double t0 = 1, t1 = y;
  if (k == 0) return t0;
  for (int j = 1; j < k; ++j) {
    const double t2 = 2 * y * t1 - t0;
    t0 = t1;
    t1 = t2;
  }
  return t1;
}

/// z = inv r: a Jacobi preconditioner as a general operator (a kernel: kept out of test bodies).
void scale_kernel(const Exec& exec, View<const double, 1> inv, View<const double, 1> r, View<double, 1> z) {
  forall("test/jacobi", exec, r.size(), TESSERA_LAMBDA(index_t i) { z(i) = inv(i) * r(i); });
}

/// out = NaN everywhere: an operator that fails.
void nan_kernel(const Exec& exec, View<double, 1> out) {
  const double nan = kNaN;
  forall("test/nan", exec, out.size(), TESSERA_LAMBDA(index_t i) { out(i) = nan; });
}

class KrylovTest : public BackendTest {
 protected:
  Array<double, 1> device(const std::vector<double>& v, const char* label = "v") const {
    return Array<double, 1>::from(label, v, space());
  }
};

TEST_P(KrylovTest, PcgJacobiSolvesTheLaplacianWithTheReferenceIterationCount) {
  for (auto [nx, ny] : {std::pair{40, 1}, std::pair{12, 10}}) {
    const HostMatrix h = scaled_laplacian(nx, ny, 7 + nx);
    const CsrMatrix A = make(h, exec());
    const auto inv = inverse_diagonal(h);
    const auto b = random_doubles(std::size_t(h.n), 11);
    const auto exact = dense_solve(h.dense, b);
    auto bd = device(b, "b"), invd = device(inv, "inv"), x = device(std::vector<double>(std::size_t(h.n), 0.0));
    linalg::CgOptions opt;
    opt.rel_tol = 1e-12;
    int monitored = 0;
    opt.monitor = [&](int it, double res) {
      EXPECT_EQ(it, monitored + 1);
      EXPECT_GE(res, 0);
      monitored = it;
    };
    const auto r = linalg::pcg_jacobi(op(A), invd.cview(), bd.cview(), x.view(), exec(), opt);
    ASSERT_TRUE(r.converged) << r.iterations << " iterations, residual " << r.rel_residual << " " << r.message;
    EXPECT_FALSE(r.breakdown);
    EXPECT_TRUE(r.message.empty());
    EXPECT_EQ(monitored, r.iterations);
    EXPECT_LE(r.rel_residual, 1e-12);
    // the iterates differ from the host's by rounding only (another summation order on the
    // GPU): the counts agree but where the last residual straddles the tolerance
    const int ref = reference_cg_iterations(h.dense, inv, b, 1e-12, 1000);
    EXPECT_LE(std::abs(r.iterations - ref), 1) << "reference " << ref << ", pcg_jacobi " << r.iterations;
    // residual 1e-12 (Jacobi-weighted) and a condition number below 1e4 here: the error is at
    // most about 1e-8 of the solution's size
    const auto xs = x.to_vector();
    const double tol = 1e-8 * max_abs(exact);
    for (std::size_t i = 0; i < xs.size(); ++i) ASSERT_NEAR(xs[i], exact[i], tol) << nx << "x" << ny << " entry " << i;
  }
}

TEST_P(KrylovTest, PcgWithAnOperatorPreconditionerAndWithoutOne) {
  const HostMatrix h = scaled_laplacian(9, 8, 3);
  const CsrMatrix A = make(h, exec());
  const auto inv = inverse_diagonal(h);
  const auto b = random_doubles(std::size_t(h.n), 12);
  const auto x0 = random_doubles(std::size_t(h.n), 13);  // a nonzero initial guess
  const auto exact = dense_solve(h.dense, b);
  auto bd = device(b, "b"), invd = device(inv, "inv");
  linalg::CgOptions opt;
  opt.rel_tol = 1e-12;
  const Exec ex = exec();
  const LinearOperator M = [&](View<const double, 1> r, View<double, 1> z) { scale_kernel(ex, invd.cview(), r, z); };
  auto x1 = device(x0, "x1"), x2 = device(x0, "x2"), x3 = device(x0, "x3");
  const auto r1 = linalg::pcg(op(A), M, bd.cview(), x1.view(), ex, opt);
  const auto r2 = linalg::pcg_jacobi(op(A), invd.cview(), bd.cview(), x2.view(), ex, opt);
  const auto r3 = linalg::pcg(op(A), {}, bd.cview(), x3.view(), ex, opt);
  ASSERT_TRUE(r1.converged && r2.converged && r3.converged)
      << r1.iterations << " " << r2.iterations << " " << r3.iterations;
  // the same iteration as the fused Jacobi CG, in other passes (the same to rounding)
  EXPECT_LE(std::abs(r1.iterations - r2.iterations), 1);
  // all three reach the dense solution (residual 1e-12, condition number below 1e4)
  for (const auto* x : {&x1, &x2, &x3}) {
    const auto xs = x->to_vector();
    for (std::size_t i = 0; i < xs.size(); ++i) ASSERT_NEAR(xs[i], exact[i], 1e-8 * max_abs(exact)) << "entry " << i;
  }
  // from x = 0 the unpreconditioned count is the host's
  auto x4 = device(std::vector<double>(std::size_t(h.n), 0.0), "x4");
  const auto r4 = linalg::pcg(op(A), {}, bd.cview(), x4.view(), ex, opt);
  EXPECT_LE(std::abs(r4.iterations - reference_cg_iterations(h.dense, {}, b, 1e-12, 1000)), 1);
  // b = 0: x = 0 at once
  auto zero = device(std::vector<double>(std::size_t(h.n), 0.0), "zero");
  auto x5 = device(x0, "x5");
  const auto r5 = linalg::pcg(op(A), M, zero.cview(), x5.view(), ex, opt);
  EXPECT_TRUE(r5.converged);
  EXPECT_EQ(r5.iterations, 0);
  EXPECT_EQ(max_abs(x5.to_vector()), 0.0);
  // max_iters bounds the work and converged says so
  opt.max_iters = 3;
  auto x6 = device(std::vector<double>(std::size_t(h.n), 0.0), "x6");
  const auto r6 = linalg::pcg(op(A), M, bd.cview(), x6.view(), ex, opt);
  EXPECT_EQ(r6.iterations, 3);
  EXPECT_FALSE(r6.converged);
  EXPECT_FALSE(r6.breakdown);
}

TEST_P(KrylovTest, BreakdownOnIndefiniteSystemsIsReported) {
  // diag(1, -1) with b = (1, 1): p^T A p = 0 at the first iteration
  const HostMatrix h = from_dense({{1, 0}, {0, -1}});
  const CsrMatrix A = make(h, exec());
  auto b = device({1, 1}, "b"), x = device({0, 0}, "x");
  const auto r = linalg::pcg(op(A), {}, b.cview(), x.view(), exec());
  EXPECT_TRUE(r.breakdown);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_CONTAINS(r.message, "p^T A p = 0");
  EXPECT_CONTAINS(r.message, "iteration 1");
  EXPECT_CONTAINS(r.message, "not symmetric positive definite");
  // Jacobi with the negative diagonal entry: b^T M b = 0, then r^T M r < 0 after one step
  const HostMatrix h2 = from_dense({{2, 0, 0}, {0, -1, 0}, {0, 0, 3}});
  const CsrMatrix A2 = make(h2, exec());
  auto b2 = device({1, 2, 1}, "b2"), x2 = device({0, 0, 0}, "x2"), inv2 = device(inverse_diagonal(h2), "inv2");
  const auto r2 = linalg::pcg_jacobi(op(A2), inv2.cview(), b2.cview(), x2.view(), exec());
  EXPECT_TRUE(r2.breakdown);
  EXPECT_CONTAINS(r2.message, "r^T M r = ");
  EXPECT_CONTAINS(r2.message, "iteration 0");
  // an operator that returns NaN
  const Exec ex = exec();
  const LinearOperator bad = [&](View<const double, 1>, View<double, 1> out) { nan_kernel(ex, out); };
  auto b3 = device({1, 2, 3}, "b3"), x3 = device({0, 0, 0}, "x3");
  const auto r3 = linalg::pcg(bad, {}, b3.cview(), x3.view(), ex);
  EXPECT_TRUE(r3.breakdown);
  EXPECT_CONTAINS(r3.message, "nan");
  // sizes that do not match are errors, not breakdowns
  auto x4 = device({0, 0}, "x4");
  EXPECT_CONTAINS(error_message([&] { linalg::pcg(op(A2), {}, b3.cview(), x4.view(), ex); }), "b has 3 entries, x 2");
  EXPECT_CONTAINS(error_message([&] { linalg::pcg_jacobi(op(A2), inv2.cview(), b3.cview(), x4.view(), ex); }),
                  "vectors of different sizes");
}

TEST_P(KrylovTest, LargestEigenvalueEstimateIsWithinFivePercent) {
  for (auto [nx, ny] : {std::pair{100, 1}, std::pair{12, 10}, std::pair{3, 1}}) {
    const HostMatrix h = scaled_laplacian(nx, ny, 21 + nx);
    const CsrMatrix A = make(h, exec());
    auto invd = device(inverse_diagonal(h), "inv");
    const double truth = spectrum(h).lambda.back();
    const double est = linalg::estimate_largest_eigenvalue(op(A), invd.cview(), h.n, exec());
    // a Ritz value: never above the truth (but for rounding), and 10 Lanczos steps find the
    // top of these spectra to a few percent (n = 3: exactly, CG ends after 3 steps)
    EXPECT_LE(est, truth * (1 + 1e-10)) << nx << "x" << ny;
    EXPECT_GE(est, 0.95 * truth) << nx << "x" << ny;
    if (h.n == 3) {
      EXPECT_NEAR(est, truth, 1e-8 * truth);
    }
    // more steps, closer
    const double est30 = linalg::estimate_largest_eigenvalue(op(A), invd.cview(), h.n, exec(), 30);
    EXPECT_GE(est30, est * (1 - 1e-12));
    EXPECT_LE(est30, truth * (1 + 1e-10));
    // the same start vector on every backend: the serial estimate to rounding
    const CsrMatrix As = make(h, Exec::serial());
    auto invs = Array<double, 1>::from("inv", inverse_diagonal(h));
    const double serial = linalg::estimate_largest_eigenvalue(op(As), invs.cview(), h.n, Exec::serial());
    EXPECT_NEAR(est, serial, 1e-10 * truth);
  }
}

TEST(Krylov, LargestTridiagonalEigenvalue) {
  // tridiag(-1, 2, -1) of size m: 2 + 2 cos(pi / (m + 1))
  for (int m : {1, 2, 5, 40}) {
    std::vector<double> d(std::size_t(m), 2.0), e(std::size_t(m - 1), -1.0);
    EXPECT_NEAR(linalg::largest_tridiagonal_eigenvalue(d, e), 2 + 2 * std::cos(std::numbers::pi / (m + 1)), 1e-13)
        << m;
  }
  std::vector<double> d{-3.0, -1.0}, e{0.0};
  EXPECT_NEAR(linalg::largest_tridiagonal_eigenvalue(d, e), -1.0, 1e-14);
  EXPECT_CONTAINS(error_message([] { linalg::largest_tridiagonal_eigenvalue({}, {}); }), "empty");
  std::vector<double> d2{1, 2};
  EXPECT_CONTAINS(error_message([&] { linalg::largest_tridiagonal_eigenvalue(d2, {}); }), "need 1 off-diagonal");
}

TEST_P(KrylovTest, ChebyshevAppliesItsPolynomialAndMeetsTheBound) {
  const HostMatrix h = scaled_laplacian(12, 10, 5);
  const std::size_t n = std::size_t(h.n);
  const CsrMatrix A = make(h, exec());
  const auto inv = inverse_diagonal(h);
  const Spectrum s = spectrum(h);
  auto invd = device(inv, "inv");
  auto zero = device(std::vector<double>(n, 0.0), "b");
  for (int degree = 1; degree <= 5; ++degree) {
    linalg::ChebyshevOptions o;
    o.degree = degree;
    const linalg::ChebyshevSmoother S(op(A), invd, exec(), o);
    EXPECT_EQ(S.degree(), degree);
    EXPECT_NEAR(S.upper(), 1.1 * S.lambda_max(), 1e-14 * S.upper());
    EXPECT_NEAR(S.lower(), S.upper() / 15.0, 1e-14 * S.upper());
    // the estimate is below the truth and 1.1 times it above: the whole top of the spectrum
    // lies in [lower, upper]
    ASSERT_GE(S.upper(), s.lambda.back());
    const double theta = 0.5 * (S.upper() + S.lower()), delta = 0.5 * (S.upper() - S.lower());
    const double bound = 1.0 / chebyshev_t(degree, theta / delta);
    // error e = D^-1/2 V c with random c over the whole spectrum; with b = 0 the smoother maps
    // e to q(D^-1 A) e, q(t) = T_k((theta - t) / delta) / T_k(theta / delta): c_j -> q(l_j) c_j
    const auto c = random_doubles(n, 100 + degree);
    std::vector<double> e(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) e[i] += s.v[i][j] * c[j];
      e[i] /= s.sqrt_d[i];
    }
    auto x = device(e, "x");
    S.apply(zero.cview(), x.view());
    const auto xe = x.to_vector();
    std::vector<double> c2(n, 0.0);  // V^T D^1/2 x
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < n; ++i) c2[j] += s.v[i][j] * s.sqrt_d[i] * xe[i];
    const double cnorm = std::sqrt(dotv(c, c));
    double high_in = 0, high_out = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double q = chebyshev_t(degree, (theta - s.lambda[j]) / delta) / chebyshev_t(degree, theta / delta);
      // degree applies of a matrix of norm ~ 16 and the host's eigenvectors (orthonormal to
      // ~1e-14): 1e-11 of the error's size
      ASSERT_NEAR(c2[j], q * c[j], 1e-11 * cnorm) << "degree " << degree << ", eigenvalue " << s.lambda[j];
      if (s.lambda[j] >= S.lower()) {
        high_in += c[j] * c[j];
        high_out += c2[j] * c2[j];
      }
    }
    // the part of the error in [lower, upper] shrinks (D-norm) at least by the Chebyshev
    // bound 1 / T_k(theta / delta), up to the rounding above
    ASSERT_GT(high_in, 0);
    EXPECT_LE(std::sqrt(high_out / high_in), bound * (1 + 1e-8) + 1e-10) << "degree " << degree;
  }
}

TEST_P(KrylovTest, ChebyshevIsSymmetricFromZero) {
  const HostMatrix h = scaled_laplacian(11, 9, 8);
  const std::size_t n = std::size_t(h.n);
  const CsrMatrix A = make(h, exec());
  auto invd = device(inverse_diagonal(h), "inv");
  const auto a = random_doubles(n, 31), b = random_doubles(n, 32);
  auto ad = device(a, "a"), bd = device(b, "b");
  for (int degree = 1; degree <= 5; ++degree) {
    linalg::ChebyshevOptions o;
    o.degree = degree;
    const linalg::ChebyshevSmoother S(op(A), invd, exec(), o);
    auto sa = device(std::vector<double>(n, 0.0), "sa"), sb = device(std::vector<double>(n, 0.0), "sb");
    S.apply(ad.cview(), sa.view());
    S.apply(bd.cview(), sb.view());
    const auto sav = sa.to_vector(), sbv = sb.to_vector();
    // p(D^-1 A) D^-1 is symmetric; in floating point the two products differ by rounding in
    // degree applies and updates: 1e-12 of |S a| |b|
    const double scale = std::sqrt(dotv(sav, sav) * dotv(b, b));
    EXPECT_NEAR(dotv(sav, b), dotv(a, sbv), 1e-12 * scale) << "degree " << degree;
    // a second apply from the result continues the smoothing (linear in (b, x)): S(b, x) =
    // x + S(b - A x, 0)
    auto x = device(sav, "x");
    S.apply(ad.cview(), x.view());
    auto Asa = matvec(h.dense, sav);
    for (std::size_t i = 0; i < n; ++i) Asa[i] = a[i] - Asa[i];
    auto rd = device(Asa, "r"), y = device(std::vector<double>(n, 0.0), "y");
    S.apply(rd.cview(), y.view());
    const auto xv = x.to_vector(), yv = y.to_vector();
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_NEAR(xv[i], sav[i] + yv[i], 1e-12 * (max_abs(xv) + 1)) << "degree " << degree << " entry " << i;
    // zero_guess skips the first apply and ignores x's contents: the same bits as from x = 0
    auto z = device(b, "z");  // garbage to be ignored
    S.apply(ad.cview(), z.view(), true);
    const auto zv = z.to_vector();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(zv[i], sav[i]) << "degree " << degree << " entry " << i;
  }
}

TEST_P(KrylovTest, ChebyshevErrors) {
  const HostMatrix h = scaled_laplacian(5, 4, 2);
  const CsrMatrix A = make(h, exec());
  auto invd = device(inverse_diagonal(h), "inv");
  linalg::ChebyshevOptions o;
  o.degree = 0;
  EXPECT_CONTAINS(error_message([&] { linalg::ChebyshevSmoother(op(A), invd, exec(), o); }),
                  "degree 0 (must be >= 1)");
  o = {};
  o.range = 1.0;
  EXPECT_CONTAINS(error_message([&] { linalg::ChebyshevSmoother(op(A), invd, exec(), o); }), "range 1");
  EXPECT_CONTAINS(error_message([&] { linalg::ChebyshevSmoother(op(A), Array<double, 1>(), exec()); }),
                  "empty inverse diagonal");
  const linalg::ChebyshevSmoother S(op(A), invd, exec());
  EXPECT_EQ(S.size(), h.n);
  EXPECT_EQ(S.degree(), 2);
  auto small = device({0, 0, 0}, "small");
  EXPECT_CONTAINS(error_message([&] { S.apply(invd.cview(), small.view()); }), "b has 20 entries and x 3");
  // -A is negative definite: the estimate fails and names it
  HostMatrix neg = h;
  for (double& v : neg.val) v = -v;
  for (auto& row : neg.dense)
    for (double& v : row) v = -v;
  const CsrMatrix An = make(neg, exec());
  EXPECT_CONTAINS(error_message([&] { linalg::ChebyshevSmoother(op(An), invd, exec()); }), "not symmetric positive");
  EXPECT_CONTAINS(error_message([&] { linalg::estimate_largest_eigenvalue(op(A), invd.cview(), h.n + 1, exec()); }),
                  "an inverse diagonal of 20 entries for n = 21");
  EXPECT_CONTAINS(error_message([&] { linalg::estimate_largest_eigenvalue(op(A), invd.cview(), h.n, exec(), 0); }),
                  "iterations = 0");
  if (on_gpu()) {
    auto host = Array<double, 1>::from("host_inv", inverse_diagonal(h));
    EXPECT_CONTAINS(error_message([&] { linalg::ChebyshevSmoother(op(A), host, exec()); }), "cannot use");
  }
}

TESSERA_INSTANTIATE_BACKENDS(KrylovTest);

}  // namespace
}  // namespace tessera::test
