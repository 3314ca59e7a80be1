#pragma once
/// \file amg.hpp
/// `AmgPreconditioner`: one V-cycle of hypre's BoomerAMG on a CsrMatrix, a fixed linear
/// operation (one cycle, zero initial guess, symmetric smoothing), for use inside CG or as the
/// coarse solve of a multigrid method.
///
///     if (tessera::linalg::amg_available()) {
///       tessera::linalg::AmgPreconditioner amg(A);   // set-up (host)
///       amg.apply(r, z);                             // z = one V-cycle applied to r
///     }
///
/// hypre is an optional dependency (CMake option TESSERA_HYPRE, on when hypre is found; Debian:
/// libhypre-dev). It runs on the host: on the GPU backend apply() copies r to the host and z
/// back (meant for small coarse matrices). hypre needs MPI: the first AmgPreconditioner calls
/// MPI_Init when the program has not, and works on MPI_COMM_SELF.

#include <memory>

#include "tessera/linalg/csr.hpp"

namespace tessera::linalg {

/// True when this build of tessera has hypre.
bool amg_available();

/// Options of AmgPreconditioner (hypre's names in brackets).
struct AmgOptions {
  double strong_threshold = 0.25;  ///< [StrongThreshold] 0.25 suits 2-D, 0.5 3-D problems
  int coarsen_type = 10;           ///< [CoarsenType] 10: HMIS
  int interp_type = 6;             ///< [InterpType] 6: extended+i
  int relax_type = 6;              ///< [RelaxType] 6: hybrid symmetric Gauss-Seidel (a symmetric cycle)
  int agg_levels = 0;              ///< [AggNumLevels] levels of aggressive coarsening
  int max_elements = 4;            ///< [PMaxElmts] interpolation entries per row
};

/// One BoomerAMG V-cycle as a linear operator (see the file comment).
class AmgPreconditioner {
 public:
  /// Builds the hierarchy of the square matrix A (copied to hypre on the host). Throws
  /// tessera::Error when tessera was built without hypre (naming the CMake option), or when
  /// hypre's set-up fails.
  explicit AmgPreconditioner(const CsrMatrix& A, const AmgOptions& options = {});
  ~AmgPreconditioner();
  AmgPreconditioner(const AmgPreconditioner&) = delete;
  AmgPreconditioner& operator=(const AmgPreconditioner&) = delete;
  /// z = one V-cycle on r (z overwritten; both in the matrix's memory space).
  void apply(View<const double, 1> r, View<double, 1> z) const;
  /// Seconds the set-up took.
  double setup_seconds() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::linalg
