#pragma once
/// \file assemble.hpp
/// `tessera assemble`: global CSR assembly of a bilinear form (mass, diffusion, elasticity)
/// of an order-p H1 space on a mesh, with its sizes and timings, and the matrix as a
/// Matrix Market file (docs/cli.md).

#include <iosfwd>
#include <string>
#include <vector>

namespace tessera::app {

struct AssembleOptions {
  std::string mesh;                ///< mesh file or generator spec
  int order = 1;                   ///< polynomial order p
  std::string form = "diffusion";  ///< mass | diffusion | elasticity
  int components = 0;              ///< field components; 0: 1 (mass, diffusion) or the mesh dimension (elasticity)
  int refine = 0;                  ///< uniform refinements of the mesh
  std::string backend = "cpu";     ///< serial | openmp | cpu | cuda | gpu | auto
  std::string fill = "auto";       ///< deterministic | atomic | auto
  std::string dispatch = "driver";  ///< driver | functor
  std::string quadrature = "gauss";  ///< gauss | gll | collapsed | a Gauss degree | gauss:D | gll:D | collapsed:D
  /// Materials "ATTR:key=value[:key=value...]" (keys density / rho, conductivity / k, lambda,
  /// mu, expansion / alpha); none: every attribute gets the defaults (all 1, alpha 0).
  std::vector<std::string> materials;
  std::string output;  ///< Matrix Market file of the matrix ("" = none)
  bool symmetric = false;  ///< write the output as a symmetric Matrix Market file (lower triangle)
  std::string json;    ///< append the report as one JSON line to this file ("" = none)
};

/// Assembles, prints the report; returns 0 (errors are thrown as tessera::Error).
int run_assemble(const AssembleOptions& opt, std::ostream& out);

}  // namespace tessera::app
