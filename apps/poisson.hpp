#pragma once
/// \file poisson.hpp
/// `tessera poisson`: the Poisson problem (manufactured solution or f = 1), multigrid CG (docs/cli.md).

#include <iosfwd>
#include <string>

namespace tessera::app {

struct PoissonOptions {
  std::string mesh = "box:hex:12x12x12";  ///< generator spec or mesh file
  int order = 3;                          ///< polynomial order p
  int refine = 0;                         ///< uniform refinements of the mesh
  std::string backend = "cpu";            ///< serial | openmp | cpu | cuda | gpu | auto
  /// "gauss" (q = p + 2 points; symmetric rules on simplices), "gll" (Gauss-Lobatto, q = p + 1,
  /// collocated), "collapsed" (Gauss, collapsed rules on simplices), a Gauss degree ("7"), or a
  /// name with a degree ("gauss:7", "gll:9", "collapsed:6").
  std::string quadrature = "gauss";
  std::string geometry = "stored";        ///< geometric factors: stored or onthefly
  double tol = 1e-10;                     ///< CG relative tolerance
  int max_iters = 5000;                   ///< CG iteration limit
  std::string output;                     ///< .vtu file for u, u_exact, error ("" = none)
  bool json = false;                      ///< one JSON object (an array with --study)
  int study = 0;                          ///< refine this many more times and print the rates
  std::string rhs = "exp";                ///< exp | sin (manufactured solutions) | one (f = 1, u = 0 on the boundary)
  std::string precond = "mg";             ///< mg (p-multigrid V-cycle) | jacobi
  std::string mg_orders;                  ///< "4,2,1"; "": p, ceil(p/2), ..., 1
  int smoother_degree = 2;                ///< Chebyshev degree of the multigrid smoother
  std::string coarse = "auto";            ///< auto | amg | cg
  double coarse_tol = 1e-6;               ///< relative tolerance of the CG coarse solve
  int mg_mesh_levels = -1;                ///< coarser meshes of the --refine hierarchy used as levels (-1: all)
  /// Progress lines on stderr (each phase, the CG iterations): auto (when stderr is a terminal),
  /// on (also in batch jobs: a line per phase, the iteration about once a second) or off.
  std::string progress = "auto";
};

/// Solves, prints the report; returns 0, or 3 when CG did not converge.
int run_poisson(const PoissonOptions& opt, std::ostream& out);

}  // namespace tessera::app
