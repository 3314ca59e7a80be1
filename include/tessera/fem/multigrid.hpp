#pragma once
/// \file multigrid.hpp
/// `Multigrid`: a matrix-free p-multigrid V-cycle for the diffusion operator of an H1 space
/// with Dirichlet conditions, as a linear preconditioner for CG.
///
///     tessera::fem::H1Operator A(space, OperatorKind::Diffusion, exec);
///     tessera::fem::Constrained C(A, fixed);
///     tessera::fem::Multigrid mg(A, space, fixed, [&](const H1Space& s) { return s.boundary_dofs(); });
///     auto r = tessera::linalg::pcg(op, mg.preconditioner(), b, x, exec, options);
///
/// Levels: the orders p -> ceil(p / 2) -> ... -> 1 on the same mesh (MultigridOptions::orders
/// gives others), each with its matrix-free H1Operator (the same geometry source and rule type
/// as the fine one), Dirichlet conditions by elimination (Constrained), and a Chebyshev
/// smoother on the operator's diagonal (linalg::ChebyshevSmoother: degree and range are
/// options, the largest eigenvalue estimated by a few CG steps). The transfers between
/// consecutive orders are OrderTransfer (transfer.hpp): interpolation and its exact transpose.
/// The coarsest level's matrix is assembled (MatrixAssembler) and solved by one BoomerAMG
/// V-cycle (hypre, where the build has it) or by CG preconditioned by Jacobi to a fixed
/// relative tolerance (CoarseSolver::Cg: linear up to that tolerance). Pre- and post-smoothing
/// with the same polynomial keep the V-cycle symmetric, so it serves inside CG.
///
/// Mesh (h) levels: with MultigridOptions::coarse_meshes (the meshes that uniform refinement
/// made the fine mesh from, coarsest first), the p = 1 level of the fine mesh is followed by
/// the p = 1 spaces of those meshes, finest to coarsest, with RefinementTransfer between
/// consecutive ones; the coarsest mesh's p = 1 matrix is then the assembled level.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/operator.hpp"
#include "tessera/linalg/krylov.hpp"

namespace tessera::fem {

/// How the coarsest level is solved (see the file comment).
enum class CoarseSolver {
  Auto,  ///< Amg when the build has hypre and the coarsest level has MultigridOptions::amg_min_coarse_dofs DOFs or more, else Cg
  Amg,   ///< one BoomerAMG V-cycle (hypre)
  Cg     ///< Jacobi-preconditioned CG on the assembled matrix to MultigridOptions::coarse_tol
};
/// "auto", "amg" or "cg".
const char* name(CoarseSolver c);
/// Parses "auto", "amg" or "cg"; throws tessera::Error otherwise.
CoarseSolver parse_coarse_solver(const std::string& s);

/// Options of Multigrid.
struct MultigridOptions {
  /// Orders of the levels, fine to coarse, starting with the fine space's order and
  /// decreasing (e.g. {4, 2, 1}); empty: p, ceil(p / 2), ..., 1.
  std::vector<int> orders;
  /// Coarser meshes for mesh (h) levels, coarsest first: refine_uniformly of the last one must
  /// be the fine space's mesh, and of each one the next (checked: RefinementTransfer throws
  /// otherwise). Empty: the order levels alone. The meshes must outlive the Multigrid.
  std::vector<const Mesh*> coarse_meshes;
  /// Smoothing on every level but the coarsest (degree, range, eigenvalue estimate).
  linalg::ChebyshevOptions smoother;
  CoarseSolver coarse = CoarseSolver::Auto;
  /// CoarseSolver::Auto takes BoomerAMG from this many DOFs on the coarsest level: below it,
  /// hypre's set-up (about 0.3 s with MPI's start-up on a 2-core machine) costs more than the
  /// CG coarse solves (the main job, 1,000 coarse DOFs: 0.03 s over 7 V-cycles, the same
  /// outer iterations). A set value, not a measured crossover.
  index_t amg_min_coarse_dofs = 10000;
  /// CoarseSolver::Cg: relative tolerance and iteration cap of the coarse CG.
  double coarse_tol = 1e-6;
  int coarse_max_iters = 500;
};

/// Set-up times of a Multigrid, seconds.
struct MultigridTimings {
  double levels_s = 0;         ///< spaces, operators, constraints
  double smoothers_s = 0;      ///< diagonals and eigenvalue estimates
  double transfers_s = 0;
  double coarse_matrix_s = 0;  ///< assembly and elimination of the coarsest level
  double coarse_setup_s = 0;   ///< AMG set-up (0 for CG)
  mutable double vcycle_s = 0;  ///< accumulated in apply()
  mutable double coarse_s = 0;  ///< of which the coarse solves
  mutable int cycles = 0;
};

/// One level as reported by Multigrid::levels().
struct MultigridLevel {
  int order = 0;
  index_t elements = 0;  ///< elements of the level's mesh
  index_t dofs = 0;
  double lambda_max = 0;  ///< the smoother's estimate (0 on the coarsest level)
};

/// The p-multigrid V-cycle (see the file comment).
class Multigrid {
 public:
  /// `fine` is the fine operator (a diffusion H1Operator of `fine_space`, kept by reference),
  /// `fine_constrained` its constrained DOFs (sorted), `constrained_of` gives the constrained
  /// DOFs of any coarser space of the same mesh (the same boundary). Throws tessera::Error for
  /// orders that do not start at the fine order or do not decrease, a mass operator, or an
  /// unavailable coarse solver.
  Multigrid(const H1Operator& fine, const H1Space& fine_space, const std::vector<index_t>& fine_constrained,
            const std::function<std::vector<index_t>(const H1Space&)>& constrained_of,
            const MultigridOptions& options = {});
  ~Multigrid();
  Multigrid(Multigrid&&) noexcept;
  Multigrid& operator=(Multigrid&&) noexcept;

  /// z = V-cycle(r) (z overwritten): a fixed linear, symmetric operation; r's constrained
  /// entries must be 0 (those of z are).
  void apply(View<const double, 1> r, View<double, 1> z) const;
  /// apply as a linalg::LinearOperator (this object must outlive it).
  linalg::LinearOperator preconditioner() const;

  const std::vector<MultigridLevel>& levels() const;
  const MultigridTimings& timings() const;
  CoarseSolver coarse_solver() const;  ///< never Auto
  /// Iterations of the last coarse CG solve (CoarseSolver::Cg), 0 otherwise.
  int last_coarse_iterations() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::fem
