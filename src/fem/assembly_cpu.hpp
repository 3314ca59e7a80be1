#pragma once
// The assembly fill on the CPU backends (serial, OpenMP): simd::lanes elements of one group side
// by side, one per SIMD lane. Each row u of the element matrix is a reference-space vector K_u at
// the points (the form's factor applied to row u's basis function, lanes apart), and the row's
// entries are the table of the basis functions times it, T K_u: a small matrix product with
// vectors of lanes. Host code only (assembly_cpu.cpp, compiled for TESSERA_CPU_ARCH).

#include "assembly_physics.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/fem/assembly.hpp"

namespace tessera::fem::assembly_detail {

/// What the batched fill reads for one group (host arrays of its part).
struct BatchedGroup {
  FormKind kind = FormKind::Mass;
  int dim = 1;                    // reference dimension of the elements
  int nq = 0;                     // points per element
  EntryShape shape;               // npe, comps, full (elasticity), per_element
  const double* B = nullptr;      // (nq, npe)
  const double* G = nullptr;      // (nq, npe, dim)
  const double* w = nullptr;      // (part elements, nq) w det J: mass, elasticity
  const double* D = nullptr;      // (part elements, dim (dim + 1) / 2, nq) packed: diffusion
  const double* Jinv = nullptr;   // (part elements, dim, dim, nq): elasticity
  const int* elements = nullptr;  // the group's elements, indices into the part
  index_t count = 0;
  index_t first_entry = 0;
  Material material;
};

/// Computes the group's entries into `sink` (the same entries, to rounding, as the per-entry
/// kernel of GroupEntries); exec: Serial or OpenMP.
void fill_batched(const BatchedGroup& g, const EntrySink& sink, const Exec& exec);

}  // namespace tessera::fem::assembly_detail
