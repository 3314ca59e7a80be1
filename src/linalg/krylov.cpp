// Preconditioned CG, the Lanczos estimate of the largest eigenvalue of D^-1 A, Chebyshev
// smoothing. Launches kernels: compiled by nvcc in CUDA builds (src/linalg/sources.cmake).
#include "tessera/linalg/krylov.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/core/reduce.hpp"

namespace tessera::linalg {

namespace krylov_detail {

// Kernels live in free functions of a named namespace: nvcc accepts extended lambdas neither
// in constructors nor in private member functions.

/// z = r: CG without a preconditioner.
struct IdentityScale {
  TESSERA_HOST_DEVICE double operator()(index_t, double r) const { return r; }
};
/// z = inv_diag r: Jacobi.
struct DiagonalScale {
  View<const double, 1> inv_diag;
  TESSERA_HOST_DEVICE double operator()(index_t i, double r) const { return inv_diag(i) * r; }
};

/// The CG coefficients, for the Lanczos matrix of the eigenvalue estimate.
struct Coefficients {
  std::vector<double> alpha, beta;
};

void fill(const Exec& exec, View<double, 1> v, double value) {
  forall("linalg/fill", exec, v.size(), TESSERA_LAMBDA(index_t i) { v(i) = value; });
}

std::string breakdown_pAp(int it, double pAp) {
  return detail::concat("pcg: p^T A p = ", pAp, " at iteration ", it,
                        " (must be > 0): the operator is not symmetric positive definite");
}
std::string breakdown_rz(int it, double rz) {
  return detail::concat("pcg: r^T M r = ", rz, " at iteration ", it,
                        " (must be >= 0): the preconditioner is not positive definite");
}

/// Records a breakdown when r^T M r is negative or NaN at iteration `it`; true if it did.
bool rz_breaks(double rz, int it, CgResult& res, const char* what = "") {
  if (rz >= 0) return false;
  res.breakdown = true;
  res.rel_residual = std::numeric_limits<double>::quiet_NaN();
  res.message = breakdown_rz(it, rz) + what;
  return true;
}
/// Records a breakdown when p^T A p is not positive at iteration `it`; true if it did.
bool pAp_breaks(double pAp, int it, CgResult& res) {
  if (pAp > 0) return false;
  res.breakdown = true;
  res.message = breakdown_pAp(it, pAp);
  return true;
}

/// The checks of b^T M b before the first iteration: a negative value or NaN is a breakdown,
/// and b = 0 gives x = 0 (converged); true when the solve ends there (res says how).
bool finished_at_start(double bnorm2, const Exec& exec, View<double, 1> x, CgResult& res) {
  if (rz_breaks(bnorm2, 0, res, " (b^T M b)")) return true;
  if (bnorm2 == 0) {
    fill(exec, x, 0.0);
    res.converged = true;
    return true;
  }
  return false;
}

/// CG with a preconditioner that acts entry by entry (z_i = scale(i, r_i)), fused: no z vector,
/// z recomputed where it is used, r^T z reduced in the pass that updates r, x updated in the
/// pass that updates p (it still reads the old p). Records the coefficients when `coef` is set.
template <class Scale>
CgResult pcg_fused(const LinearOperator& A, const Scale& scale, View<const double, 1> b, View<double, 1> x,
                   const Exec& exec, const CgOptions& opt, Coefficients* coef) {
  const index_t n = b.size();
  Array<double, 1> r("pcg_r", {n}, exec.space()), p("pcg_p", {n}, exec.space()), Ap("pcg_Ap", {n}, exec.space());
  auto rv = r.view(), pv = p.view(), Apv = Ap.view();
  CgResult res;
  const double bnorm2 = transform_reduce(
      "linalg/cg_bnorm", exec, n, 0.0, TESSERA_LAMBDA(index_t i) { return b(i) * scale(i, b(i)); }, Plus{});
  if (finished_at_start(bnorm2, exec, x, res)) return res;
  const double bnorm = std::sqrt(bnorm2);
  A(x, Apv);
  double rz = transform_reduce(
      "linalg/cg_init", exec, n, 0.0,
      TESSERA_LAMBDA(index_t i) {
        const double ri = b(i) - Apv(i);
        const double zi = scale(i, ri);
        rv(i) = ri;
        pv(i) = zi;
        return ri * zi;
      },
      Plus{});
  if (rz_breaks(rz, 0, res)) return res;
  res.rel_residual = std::sqrt(rz) / bnorm;
  for (int it = 0; it < opt.max_iters && res.rel_residual > opt.rel_tol; ++it) {
    A(p.cview(), Apv);
    const double pAp = dot(exec, p.cview(), Ap.cview());
    if (pAp_breaks(pAp, it + 1, res)) break;
    const double alpha = rz / pAp;
    // r -= alpha A p, with r^T z reduced in the same pass
    const double rz_new = transform_reduce(
        "linalg/cg_update", exec, n, 0.0,
        TESSERA_LAMBDA(index_t i) {
          const double ri = rv(i) - alpha * Apv(i);
          rv(i) = ri;
          return ri * scale(i, ri);
        },
        Plus{});
    const double beta = rz_new / rz;
    if (coef) {
      coef->alpha.push_back(alpha);
      coef->beta.push_back(beta);
    }
    // x += alpha p (the old p), then p = z + beta p
    forall("linalg/cg_direction", exec, n, TESSERA_LAMBDA(index_t i) {
      const double pi = pv(i);
      x(i) += alpha * pi;
      pv(i) = scale(i, rv(i)) + beta * pi;
    });
    res.iterations = it + 1;
    if (rz_breaks(rz_new, it + 1, res)) break;
    rz = rz_new;
    res.rel_residual = std::sqrt(rz) / bnorm;
    if (opt.monitor) opt.monitor(res.iterations, res.rel_residual);
  }
  res.converged = !res.breakdown && res.rel_residual <= opt.rel_tol;
  return res;
}

/// CG with a general preconditioner (an operator z = M r).
CgResult pcg_general(const LinearOperator& A, const LinearOperator& M, View<const double, 1> b, View<double, 1> x,
                     const Exec& exec, const CgOptions& opt) {
  const index_t n = b.size();
  Array<double, 1> r("pcg_r", {n}, exec.space()), z("pcg_z", {n}, exec.space()), p("pcg_p", {n}, exec.space()),
      Ap("pcg_Ap", {n}, exec.space());
  auto rv = r.view(), zv = z.view(), pv = p.view(), Apv = Ap.view();
  CgResult res;
  M(b, zv);
  const double bnorm2 = dot(exec, b, z.cview());
  if (finished_at_start(bnorm2, exec, x, res)) return res;
  const double bnorm = std::sqrt(bnorm2);
  // From x = 0 (checked by one reduction) r = b and z = M b are known: no apply of A or M.
  const View<const double, 1> xc = x;
  const bool zero_start = dot(exec, xc, xc) == 0;
  double rz = bnorm2;
  if (zero_start) {
    forall("linalg/pcg_residual", exec, n, TESSERA_LAMBDA(index_t i) { rv(i) = b(i); });
  } else {
    A(x, Apv);
    forall("linalg/pcg_residual", exec, n, TESSERA_LAMBDA(index_t i) { rv(i) = b(i) - Apv(i); });
    M(r.cview(), zv);
    rz = dot(exec, r.cview(), z.cview());
  }
  if (rz_breaks(rz, 0, res)) return res;
  forall("linalg/pcg_first_direction", exec, n, TESSERA_LAMBDA(index_t i) { pv(i) = zv(i); });
  res.rel_residual = std::sqrt(rz) / bnorm;
  for (int it = 0; it < opt.max_iters && res.rel_residual > opt.rel_tol; ++it) {
    A(p.cview(), Apv);
    const double pAp = dot(exec, p.cview(), Ap.cview());
    if (pAp_breaks(pAp, it + 1, res)) break;
    const double alpha = rz / pAp;
    forall("linalg/pcg_update", exec, n, TESSERA_LAMBDA(index_t i) {
      x(i) += alpha * pv(i);
      rv(i) -= alpha * Apv(i);
    });
    res.iterations = it + 1;
    M(r.cview(), zv);
    const double rz_new = dot(exec, r.cview(), z.cview());
    if (rz_breaks(rz_new, it + 1, res)) break;
    const double beta = rz_new / rz;
    rz = rz_new;
    forall("linalg/pcg_direction", exec, n, TESSERA_LAMBDA(index_t i) { pv(i) = zv(i) + beta * pv(i); });
    res.rel_residual = std::sqrt(rz) / bnorm;
    if (opt.monitor) opt.monitor(res.iterations, res.rel_residual);
  }
  res.converged = !res.breakdown && res.rel_residual <= opt.rel_tol;
  return res;
}

/// Uniform double in [-1, 1) from (seed, i) by the splitmix64 finalizer: integer arithmetic
/// only, so every backend makes the same vector.
TESSERA_INLINE double hash_uniform(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + (i + 1) * 0xD1B54A32D192ED03ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;  // 2^53 values
}

void random_vector(const Exec& exec, View<double, 1> v, unsigned seed) {
  const std::uint64_t s = seed;
  forall("linalg/random_vector", exec, v.size(),
         TESSERA_LAMBDA(index_t i) { v(i) = hash_uniform(s, static_cast<std::uint64_t>(i)); });
}

/// One Chebyshev step after Ax = A x: d = c_old d + c_new D^-1 (b - A x) (d not read when
/// first), x += d.
void chebyshev_step(const Exec& exec, View<const double, 1> inv_diag, View<const double, 1> b,
                    View<const double, 1> Ax, View<double, 1> d, View<double, 1> x, double c_old, double c_new,
                    bool first) {
  forall("linalg/chebyshev_step", exec, b.size(), TESSERA_LAMBDA(index_t i) {
    const double zi = c_new * (inv_diag(i) * (b(i) - Ax(i)));
    const double di = first ? zi : c_old * d(i) + zi;
    d(i) = di;
    x(i) += di;
  });
}

void check_space(const char* who, const char* what, const Array<double, 1>& a, const Exec& exec) {
  TESSERA_REQUIRE(accessible(exec.backend, a.space()), who, ": ", what, " '", a.label(), "' lives in ",
                  to_string(a.space()), " memory, which the ", to_string(exec.backend),
                  " backend cannot use: move it to ", to_string(exec.space()));
}

}  // namespace krylov_detail

namespace kd = krylov_detail;

CgResult pcg(const LinearOperator& A, const LinearOperator& M, View<const double, 1> b, View<double, 1> x,
             const Exec& exec, const CgOptions& options) {
  TESSERA_REQUIRE(static_cast<bool>(A), "linalg::pcg: no operator A (an empty LinearOperator)");
  TESSERA_REQUIRE(x.size() == b.size(), "linalg::pcg: b has ", b.size(), " entries, x ", x.size());
  if (!M) return kd::pcg_fused(A, kd::IdentityScale{}, b, x, exec, options, nullptr);
  return kd::pcg_general(A, M, b, x, exec, options);
}

CgResult pcg_jacobi(const LinearOperator& A, View<const double, 1> inv_diag, View<const double, 1> b,
                    View<double, 1> x, const Exec& exec, const CgOptions& options) {
  TESSERA_REQUIRE(static_cast<bool>(A), "linalg::pcg_jacobi: no operator A (an empty LinearOperator)");
  TESSERA_REQUIRE(x.size() == b.size() && inv_diag.size() == b.size(), "linalg::pcg_jacobi: vectors of different ",
                  "sizes (b ", b.size(), ", x ", x.size(), ", inverse diagonal ", inv_diag.size(), ")");
  return kd::pcg_fused(A, kd::DiagonalScale{inv_diag}, b, x, exec, options, nullptr);
}

double largest_tridiagonal_eigenvalue(std::span<const double> diag, std::span<const double> off) {
  const std::size_t m = diag.size();
  TESSERA_REQUIRE(m > 0, "linalg::largest_tridiagonal_eigenvalue: an empty matrix");
  TESSERA_REQUIRE(off.size() + 1 == m, "linalg::largest_tridiagonal_eigenvalue: ", m, " diagonal entries need ",
                  m - 1, " off-diagonal ones, got ", off.size());
  // Gershgorin bounds
  double lo = std::numeric_limits<double>::max(), hi = std::numeric_limits<double>::lowest();
  for (std::size_t i = 0; i < m; ++i) {
    const double rad = (i > 0 ? std::abs(off[i - 1]) : 0.0) + (i + 1 < m ? std::abs(off[i]) : 0.0);
    lo = std::min(lo, diag[i] - rad);
    hi = std::max(hi, diag[i] + rad);
  }
  TESSERA_REQUIRE(std::isfinite(lo) && std::isfinite(hi),
                  "linalg::largest_tridiagonal_eigenvalue: the matrix holds a NaN or an infinity");
  const double scale = std::max(std::abs(lo), std::abs(hi));
  if (scale == 0) return 0.0;
  const double tiny = std::numeric_limits<double>::min() / std::numeric_limits<double>::epsilon();
  // Number of eigenvalues below s (the negative pivots of T - s I).
  auto below = [&](double s) {
    std::size_t count = 0;
    double q = 1.0;
    for (std::size_t i = 0; i < m; ++i) {
      q = diag[i] - s - (i > 0 ? off[i - 1] * off[i - 1] / q : 0.0);
      if (q == 0) q = -tiny;
      if (q < 0) ++count;
    }
    return count;
  };
  // Invariant: below(lo) < m (the largest eigenvalue is >= lo), below(hi) == m.
  lo -= 1e-15 * scale;
  hi += 1e-15 * scale;
  for (int k = 0; k < 200 && hi - lo > 4e-16 * scale; ++k) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    if (below(mid) == m)
      hi = mid;
    else
      lo = mid;
  }
  return 0.5 * (lo + hi);
}

double estimate_largest_eigenvalue(const LinearOperator& A, View<const double, 1> inv_diag, index_t n,
                                   const Exec& exec, int iterations, unsigned seed) {
  TESSERA_REQUIRE(static_cast<bool>(A), "linalg::estimate_largest_eigenvalue: no operator A (an empty LinearOperator)");
  TESSERA_REQUIRE(n >= 1, "linalg::estimate_largest_eigenvalue: n = ", n, " (must be >= 1)");
  TESSERA_REQUIRE(inv_diag.size() == n, "linalg::estimate_largest_eigenvalue: an inverse diagonal of ",
                  inv_diag.size(), " entries for n = ", n);
  TESSERA_REQUIRE(iterations >= 1, "linalg::estimate_largest_eigenvalue: iterations = ", iterations,
                  " (must be >= 1)");
  Array<double, 1> v("eig_start", {n}, exec.space()), x("eig_x", {n}, exec.space());
  kd::random_vector(exec, v.view(), seed);
  // Stop before CG converges to rounding (n small): past that point the coefficients are noise.
  CgOptions opt;
  opt.rel_tol = 1e-12;
  opt.max_iters = iterations;
  kd::Coefficients c;
  const CgResult r = kd::pcg_fused(A, kd::DiagonalScale{inv_diag}, v.cview(), x.view(), exec, opt, &c);
  TESSERA_REQUIRE(!r.breakdown, "linalg::estimate_largest_eigenvalue: ", r.message,
                  " (A and the inverse diagonal must be symmetric positive definite)");
  TESSERA_REQUIRE(!c.alpha.empty(), "linalg::estimate_largest_eigenvalue: no CG step was taken (the start vector "
                                    "is zero in the inverse diagonal's norm: is inv_diag zero?)");
  // Lanczos matrix of the preconditioned CG: T_jj = 1/alpha_j + beta_{j-1}/alpha_{j-1},
  // T_j,j+1 = sqrt(beta_j) / alpha_j.
  const std::size_t m = c.alpha.size();
  std::vector<double> diag(m), off(m - 1);
  for (std::size_t j = 0; j < m; ++j) {
    diag[j] = 1.0 / c.alpha[j] + (j > 0 ? c.beta[j - 1] / c.alpha[j - 1] : 0.0);
    if (j + 1 < m) off[j] = std::sqrt(c.beta[j]) / c.alpha[j];
  }
  const double lambda = largest_tridiagonal_eigenvalue(diag, off);
  TESSERA_REQUIRE(lambda > 0 && std::isfinite(lambda), "linalg::estimate_largest_eigenvalue: the estimate is ",
                  lambda, ": A or the inverse diagonal is not positive definite");
  return lambda;
}

// ------------------------------------------------------------------ Chebyshev

ChebyshevSmoother::ChebyshevSmoother(LinearOperator A, Array<double, 1> inv_diag, const Exec& exec,
                                     const ChebyshevOptions& options)
    : A_(std::move(A)), inv_diag_(std::move(inv_diag)), exec_(exec), opt_(options), n_(inv_diag_.size()) {
  const char* who = "linalg::ChebyshevSmoother";
  TESSERA_REQUIRE(static_cast<bool>(A_), who, ": no operator A (an empty LinearOperator)");
  TESSERA_REQUIRE(n_ >= 1, who, ": an empty inverse diagonal");
  kd::check_space(who, "the inverse diagonal", inv_diag_, exec_);
  TESSERA_REQUIRE(opt_.degree >= 1, who, ": degree ", opt_.degree, " (must be >= 1)");
  TESSERA_REQUIRE(opt_.range > 1, who, ": range ", opt_.range, " (upper / lower; must be > 1)");
  TESSERA_REQUIRE(opt_.upper_factor > 0, who, ": upper_factor ", opt_.upper_factor, " (must be > 0)");
  TESSERA_REQUIRE(opt_.eig_iterations >= 1, who, ": eig_iterations ", opt_.eig_iterations, " (must be >= 1)");
  try {
    lambda_ = estimate_largest_eigenvalue(A_, inv_diag_.cview(), n_, exec_, opt_.eig_iterations, opt_.seed);
  } catch (const Error& e) {
    fail(who, ": the estimate of the largest eigenvalue of D^-1 A failed (A must be symmetric positive definite): ",
         e.what());
  }
  upper_ = opt_.upper_factor * lambda_;
  lower_ = upper_ / opt_.range;
  Ax_ = Array<double, 1>("chebyshev_Ax", {n_}, exec_.space());
  d_ = Array<double, 1>("chebyshev_d", {n_}, exec_.space());
}

void ChebyshevSmoother::apply(View<const double, 1> b, View<double, 1> x, bool zero_guess) const {
  TESSERA_REQUIRE(b.size() == n_ && x.size() == n_, "linalg::ChebyshevSmoother::apply: b has ", b.size(),
                  " entries and x ", x.size(), ", expected ", n_);
  // Chebyshev semi-iteration (Saad, Iterative Methods for Sparse Linear Systems, Alg. 12.1),
  // preconditioned by D^-1: theta, delta the centre and half width of [lower, upper],
  // sigma = theta / delta; d_1 = D^-1 r_0 / theta, d_k = rho_k rho_{k-1} d_{k-1} +
  // (2 rho_k / delta) D^-1 r_{k-1} with rho_1 = 1 / sigma, rho_k = 1 / (2 sigma - rho_{k-1}).
  const double theta = 0.5 * (upper_ + lower_), delta = 0.5 * (upper_ - lower_);
  const double sigma = theta / delta;
  double rho = 1.0 / sigma;
  const auto inv = inv_diag_.cview();
  for (int k = 0; k < opt_.degree; ++k) {
    if (k == 0 && zero_guess) {  // x = 0: A x = 0, and the step overwrites x
      auto ax = Ax_.view();
      forall("linalg/chebyshev_zero", exec_, n_, TESSERA_LAMBDA(index_t i) {
        ax(i) = 0;
        x(i) = 0;
      });
    } else {
      A_(View<const double, 1>(x), Ax_.view());
    }
    if (k == 0) {
      kd::chebyshev_step(exec_, inv, b, Ax_.cview(), d_.view(), x, 0.0, 1.0 / theta, true);
      continue;
    }
    const double rho_new = 1.0 / (2.0 * sigma - rho);
    kd::chebyshev_step(exec_, inv, b, Ax_.cview(), d_.view(), x, rho_new * rho, 2.0 * rho_new / delta, false);
    rho = rho_new;
  }
}

}  // namespace tessera::linalg
