#pragma once
/// \file operator.hpp
/// Matrix-free mass and diffusion operators of an H1Space, their diagonals, and a Jacobi-
/// preconditioned conjugate-gradient solver with Dirichlet conditions by elimination.
///
///     tessera::fem::H1Operator A(space, OperatorKind::Diffusion, exec);   // q = p + 2 Gauss
///     A.apply(x.cview(), y.view());                                     // y = A x (global vectors)
///     auto d = A.diagonal();                                            // for Jacobi
///
/// Quadrilaterals and hexahedra use one fused kernel per apply (gather, sum-factorized
/// interpolation, the stored factor w det J (mass) or D = w det J J^-1 J^-T (diffusion), the
/// transpose and an atomic scatter-add). Triangles and tetrahedra compose the interpolation
/// kernels (interpolate.hpp): values or reference gradients at the points, the point-wise
/// product, the transpose scatter-added into y (three launches, point data through memory).

#include <functional>
#include <vector>

#include "tessera/core/array.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/fem/geometric_factors.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/interpolate.hpp"

namespace tessera::fem {

/// Which bilinear form an H1Operator applies (each component of a vector field separately).
enum class OperatorKind {
  Mass,      ///< (u, v)
  Diffusion  ///< (grad u, grad v)
};
/// "mass" or "diffusion".
const char* name(OperatorKind k);

/// A matrix-free operator on the global vectors of an H1Space (see the file comment).
class H1Operator {
 public:
  /// The operator of `kind` on every element of space.mesh() (elements whose dimension is the
  /// mesh's), with a Gauss rule of `degree` on each geometry (default -1: 2p + 3, i.e. q = p + 2
  /// points per direction). Throws tessera::Error when a rule is too small to integrate the
  /// mass matrix exactly on affine elements (degree < 2p), or an element is inverted.
  /// `fused`: on quadrilaterals and hexahedra, one kernel per apply (Interpolator::apply_operator)
  /// instead of the three-launch composition (simplices always compose).
  H1Operator(const H1Space& space, OperatorKind kind, Exec exec = Exec::best(), int degree = -1,
             bool fused = true);

  OperatorKind kind() const { return kind_; }
  const Exec& exec() const { return exec_; }
  /// Number of rows: space.num_dofs().
  index_t size() const { return n_; }
  /// Quadrature degree used.
  int degree() const { return degree_; }

  /// y = A x (y overwritten); global vectors of size() entries in exec's memory space.
  void apply(View<const double, 1> x, View<double, 1> y) const;
  /// The diagonal of A (computed element by element from the basis tables, not assembled).
  Array<double, 1> diagonal() const;

 private:
  struct Part {
    Interpolator interp;
    GeometricFactors gf;
    Array<double, 2> B;  // (nq, nd) basis values at the points (exec's space), for the diagonal
    Array<double, 3> G;  // (nq, nd, dim) reference gradients
    mutable QuadratureData qd;
  };
  OperatorKind kind_;
  Exec exec_;
  bool fused_ = true;
  int degree_ = 0;
  index_t n_ = 0;
  std::vector<Part> parts_;
};

/// Options of cg().
struct CgOptions {
  double rel_tol = 1e-10;  ///< stop when ||r|| <= rel_tol ||b|| (preconditioned residual norm)
  int max_iters = 1000;
  /// Called after every iteration with (iteration, relative residual) when set.
  std::function<void(int, double)> monitor;
};

/// What cg() did.
struct CgResult {
  int iterations = 0;
  double rel_residual = 0;  ///< sqrt(r^T M^-1 r) / sqrt(b^T M^-1 b) at the end
  bool converged = false;
};

/// Jacobi-preconditioned conjugate gradients for A x = b, A symmetric positive definite,
/// applied by `apply(x, y)`; `inv_diag` holds 1 / diag(A). x is the initial guess and the
/// result. All vectors in exec's memory space. Does not throw on non-convergence: check
/// CgResult::converged.
CgResult cg(const std::function<void(View<const double, 1>, View<double, 1>)>& apply,
            View<const double, 1> inv_diag, View<const double, 1> b, View<double, 1> x, const Exec& exec,
            const CgOptions& options = {});

/// Dirichlet conditions by elimination: the operator x -> A (P x) + (I - P) x, where P zeroes
/// the constrained entries (sorted dof list), is symmetric positive definite on the whole
/// vector when A is on the free entries. constrained_apply runs it; eliminate_rhs turns b into
/// b_free - A_fc x_c on the free entries and x_c on the constrained ones, for the prescribed
/// values held in x's constrained entries.
class Constrained {
 public:
  Constrained(const H1Operator& A, const std::vector<index_t>& constrained_dofs);
  void apply(View<const double, 1> x, View<double, 1> y) const;
  /// Right-hand side of the constrained system for the values in x_bc (constrained entries).
  void eliminate_rhs(View<const double, 1> b, View<const double, 1> x_bc, View<double, 1> out) const;
  /// 1 / diagonal with 1 on the constrained entries.
  Array<double, 1> inverse_diagonal() const;

 private:
  const H1Operator* A_;
  Array<index_t, 1> dofs_;
  mutable Array<double, 1> tmp_;
};

}  // namespace tessera::fem
