#pragma once
/// \file thermoelastic.hpp
/// `tessera thermoelastic`: steady thermoelasticity on mixed meshes with a manufactured
/// solution (docs/cli.md). The heat equation -div(k grad T) = f_T is solved first; its
/// temperature T_h then loads linear elasticity, -div(sigma_el(u) - beta T I) = f_u with
/// beta = (3 lambda + 2 mu) alpha, through the thermal-expansion load (beta T_h, div v). Both
/// systems are assembled into CSR matrices (fem::MatrixAssembler), Dirichlet conditions are
/// eliminated and Jacobi CG solves them.
///
/// Meshes and materials:
/// - "2d" (default): the unit square of n x n cells in four quadrants (attribute 1: x < 1/2,
///   y < 1/2; 2: x > 1/2, y < 1/2; 3: x < 1/2, y > 1/2; 4: x > 1/2, y > 1/2), triangles (each
///   square split in two) in quadrants 1 and 4, quadrilaterals in 2 and 3, conforming. Exact
///   solution with phi = sin(2 pi x) sin(2 pi y): T = phi / k_q, u = phi (1, 1) / mu_q, which
///   keeps T, u, the heat flux and the traction continuous across the quadrants (phi vanishes
///   on x = 1/2 and y = 1/2).
/// - "3d": the unit cube of n x n x n cells, hexahedra for x < 1/2 and tetrahedra (each cube
///   split in six, as fem::box_mesh does) for x > 1/2, attribute = the quadrant of (x, y). The
///   interface x = 1/2 is not conforming (a quadrilateral face meets two triangles), so
///   phi = sin^2(2 pi x) sin(2 pi y) sin(pi z): it vanishes with its gradient on x = 1/2 (no
///   flux or traction crosses the non-conforming faces) and vanishes on y = 1/2 (the other
///   material interface) and on the boundary. u = phi (1, 1, 1) / mu_q.
/// - any other value: a mesh file or generator spec, one material on every attribute (k = 1,
///   mu = 1), the same formulas (by dimension), the exact values as Dirichlet data on the
///   exterior nodes; --study refines it uniformly.
/// One Lamé ratio lambda_q / mu_q = kLameRatio for all quadrants, so that the elastic stress of
/// u is the same in every quadrant: the sources f_T = -lap phi and f_u = -[(1 + r) H a + a lap
/// phi] + (beta_q / k_q) grad phi (H the Hessian of phi) follow.

#include <iosfwd>
#include <string>

#include "tessera/fem/mesh.hpp"

namespace tessera::app {

/// lambda / mu of every material of the built-in meshes.
inline constexpr double kLameRatio = 1.5;

struct ThermoelasticOptions {
  std::string mesh = "2d";      ///< "2d", "3d", or a generator spec / mesh file
  int order = 2;                ///< polynomial order p of both fields
  int n = 8;                    ///< built-in meshes: cells per direction at level 0 (even)
  int study = 0;                ///< levels after the first (n doubled, or one more refinement, each)
  std::string backend = "cpu";  ///< serial | openmp | cpu | cuda | gpu | auto
  double tol = 1e-12;           ///< CG relative tolerance of both solves
  int max_iters = 20000;        ///< CG iteration limit of each solve
  std::string output;           ///< .vtu file for T and u at the last level ("" = none)
  bool json = false;            ///< one JSON object per level (an array with --study)
};

/// The 2-D four-quadrant mesh of the unit square (see the file comment); n even, >= 2.
fem::Mesh thermoelastic_mesh_2d(int n);
/// The 3-D hexahedron / tetrahedron mesh of the unit cube (see the file comment); n even, >= 2.
fem::Mesh thermoelastic_mesh_3d(int n);

/// Solves, prints the report; returns 0, or 3 when a CG solve did not converge.
int run_thermoelastic(const ThermoelasticOptions& opt, std::ostream& out);

}  // namespace tessera::app
