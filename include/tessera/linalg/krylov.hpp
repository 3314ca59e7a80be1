#pragma once
/// \file krylov.hpp
/// Preconditioned conjugate gradients, an estimate of the largest eigenvalue of D^-1 A
/// (Lanczos from the CG coefficients) and a Chebyshev smoother, for operators given as
/// functions (a CsrMatrix, a matrix-free operator, a multigrid cycle).
///
///     using namespace tessera;
///     linalg::LinearOperator A = [&](View<const double, 1> in, View<double, 1> out) { K.apply(in, out); };
///     auto inv_diag = ...;                                   // 1 / diag(A), in exec.space()
///     linalg::CgResult r = linalg::pcg_jacobi(A, inv_diag, b, x, exec);
///     if (!r.converged) std::cerr << r.message << "\n";
///
///     linalg::ChebyshevSmoother S(A, inv_diag, exec, {.degree = 3});
///     S.apply(b, x);                                         // x <- x + p(D^-1 A) D^-1 (b - A x)
///
/// Every vector lives in exec's memory space (device memory on the CUDA backend); the
/// reductions are tessera's deterministic ones, so a solve gives the same bits on every run
/// of one backend. Kernels run on exec; the operators are called on the host and must launch
/// their own kernels on exec's backend.

#include <functional>
#include <span>
#include <string>

#include "tessera/core/array.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/core/view.hpp"

namespace tessera::linalg {

/// A linear operator: out = A in (out overwritten). `in` and `out` do not overlap and live in
/// the memory space of the Exec of the solver that calls it.
using LinearOperator = std::function<void(View<const double, 1> in, View<double, 1> out)>;

/// Options of pcg() and pcg_jacobi().
struct CgOptions {
  /// Stop when sqrt(r^T z) <= rel_tol sqrt(b^T M b), z = M r: the preconditioned residual
  /// norm relative to its value for the initial guess x = 0.
  double rel_tol = 1e-10;
  int max_iters = 1000;  ///< at most this many iterations (each one operator apply)
  /// Called after every iteration with (iteration, relative residual) when set.
  std::function<void(int, double)> monitor;
};

/// What pcg() did.
struct CgResult {
  int iterations = 0;       ///< iterations done (operator applies after the initial residual's)
  double rel_residual = 0;  ///< sqrt(r^T M r) / sqrt(b^T M b) at the end
  bool converged = false;   ///< rel_residual <= rel_tol
  /// The iteration stopped because p^T A p <= 0, r^T M r < 0 or a NaN appeared (A or M is
  /// not symmetric positive definite, or the operator produced NaN); x holds the last iterate.
  bool breakdown = false;
  std::string message;  ///< on breakdown: which quantity, its value and the iteration; else ""
};

/// Preconditioned conjugate gradients for A x = b, A symmetric positive definite, with the
/// symmetric positive definite preconditioner z = M r (M empty: the identity). x is the
/// initial guess and the result. Stopping test and residual: see CgOptions and CgResult.
/// Does not throw when the iteration does not converge or breaks down: check
/// CgResult::converged and CgResult::breakdown. Throws tessera::Error for vectors of
/// different sizes. b = 0 gives x = 0 (converged, 0 iterations).
///
/// Per iteration: one apply of A and of M, one reduction (p^T A p), one pass updating x and
/// r, one reduction (r^T z) and one pass for p. With M empty the identity is fused into the
/// passes (no z vector). Set-up: one apply of M for b^T M b, and, unless x = 0 on entry
/// (one reduction checks), one apply of A and one of M for the initial residual.
CgResult pcg(const LinearOperator& A, const LinearOperator& M, View<const double, 1> b, View<double, 1> x,
             const Exec& exec, const CgOptions& options = {});

/// pcg() with the Jacobi preconditioner M = diag(inv_diag) (inv_diag = 1 / diag(A), positive),
/// fused: z = inv_diag r is never stored, it is recomputed where it is used, r^T z is reduced
/// in the pass that updates r, and x is updated in the pass that updates p (80 bytes per
/// entry and iteration besides the operator and p^T A p).
CgResult pcg_jacobi(const LinearOperator& A, View<const double, 1> inv_diag, View<const double, 1> b,
                    View<double, 1> x, const Exec& exec, const CgOptions& options = {});

/// Estimate of the largest eigenvalue of D^-1 A, A symmetric positive definite with the
/// positive diagonal D = 1 / inv_diag (n rows): `iterations` steps of Jacobi CG for A x = v
/// from x = 0, v a pseudo-random vector in [-1, 1)^n made from `seed` by an integer hash of
/// (seed, i) (the same vector on every backend), then the largest eigenvalue of the Lanczos
/// tridiagonal matrix of the CG coefficients (largest_tridiagonal_eigenvalue). It lies below
/// the true value (a Ritz value) and approaches it quickly: 10 iterations give a few percent
/// on Laplacians; multiply by a safety factor for smoothers. Fewer steps are taken when CG
/// converges first (n small). Throws tessera::Error for sizes that do not match, iterations
/// < 1, n < 1, and when A or D^-1 is found not positive definite (a non-positive p^T A p or
/// estimate, a NaN), naming the value.
double estimate_largest_eigenvalue(const LinearOperator& A, View<const double, 1> inv_diag, index_t n,
                                   const Exec& exec, int iterations = 10, unsigned seed = 1);

/// Largest eigenvalue of the symmetric tridiagonal matrix with diagonal `diag` (m entries)
/// and off-diagonal `off` (m - 1 entries), by bisection on the Sturm sequence counts, to
/// about 1e-15 of the matrix's Gershgorin bound. On the host. Throws tessera::Error for
/// m = 0 or an off-diagonal of the wrong length.
double largest_tridiagonal_eigenvalue(std::span<const double> diag, std::span<const double> off);

/// Options of ChebyshevSmoother. The smoothed interval is [lower, upper] with
/// upper = upper_factor * lambda, lower = upper / range, lambda the estimate of the largest
/// eigenvalue of D^-1 A (estimate_largest_eigenvalue with eig_iterations steps).
struct ChebyshevOptions {
  int degree = 2;             ///< operator applies per smoothing step (the polynomial degree of the error), >= 1
  double range = 15.0;        ///< upper / lower, > 1
  double upper_factor = 1.1;  ///< safety factor on the eigenvalue estimate (which lies below the truth), > 0
  int eig_iterations = 10;    ///< CG steps of the eigenvalue estimate, >= 1
  unsigned seed = 1;          ///< seed of the estimate's start vector
};

/// Chebyshev smoothing for A x = b, A symmetric positive definite, with the Jacobi scaling
/// D^-1 = diag(inv_diag): apply(b, x) sets x <- x + p(D^-1 A) D^-1 (b - A x), where the error
/// polynomial 1 - t p(t) is the Chebyshev polynomial of degree `degree` scaled to 1 at t = 0,
/// smallest on [lower, upper]: T_k((theta - t) / delta) / T_k(theta / delta), theta and delta
/// the interval's centre and half width; on [lower, upper] the D-norm of the error shrinks by
/// at least 1 / T_k(theta / delta). It is computed by the three-term recurrence of the
/// Chebyshev semi-iteration (one apply of A and one fused pass per step: `degree` applies).
///
/// apply is a fixed linear map of (b, x); with x = 0 on entry it is x = p(D^-1 A) D^-1 b, a
/// symmetric operator in b (so it serves as a multigrid smoother inside CG).
///
/// The eigenvalue estimate runs once, in the constructor. The work vectors are allocated
/// there too; apply allocates nothing. Because apply uses them, one smoother must not be
/// applied from several host threads at once; copies share them (Arrays are shallow), so the
/// same holds for a smoother and its copies.
class ChebyshevSmoother {
 public:
  /// Throws tessera::Error for an empty A, inv_diag not in exec's memory space or empty,
  /// degree < 1, range <= 1, upper_factor <= 0, eig_iterations < 1, and a non-positive
  /// eigenvalue estimate (A not symmetric positive definite), naming the problem.
  ChebyshevSmoother(LinearOperator A, Array<double, 1> inv_diag, const Exec& exec,
                    const ChebyshevOptions& options = {});

  /// x <- x + p(D^-1 A) D^-1 (b - A x) (see the class comment). b and x have size() entries in
  /// exec's memory space and do not overlap; throws tessera::Error naming the sizes otherwise.
  ///
  /// With `zero_guess` the input x is taken as 0 whatever it holds (it is overwritten): the
  /// first step then needs no apply of A, so the smoothing costs degree - 1 applies.
  void apply(View<const double, 1> b, View<double, 1> x, bool zero_guess = false) const;

  index_t size() const { return n_; }            ///< number of rows
  double lambda_max() const { return lambda_; }  ///< the eigenvalue estimate of D^-1 A
  double lower() const { return lower_; }        ///< lower end of the smoothed interval
  double upper() const { return upper_; }        ///< upper end: upper_factor * lambda_max()
  int degree() const { return opt_.degree; }     ///< applies of A per apply()
  const ChebyshevOptions& options() const { return opt_; }
  const Exec& exec() const { return exec_; }

 private:
  LinearOperator A_;
  Array<double, 1> inv_diag_;
  Exec exec_;
  ChebyshevOptions opt_;
  index_t n_ = 0;
  double lambda_ = 0, lower_ = 0, upper_ = 0;
  mutable Array<double, 1> Ax_, d_;  // A x and the update direction
};

}  // namespace tessera::linalg
