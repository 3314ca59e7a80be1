#pragma once
// The CPU execution of OrderTransfer's element kernel on quadrilaterals and hexahedra (serial
// and OpenMP): simd::lanes elements side by side, one per lane, through the batched
// contractions of the CPU operator (operator/cpu_contract.hpp); defined in transfer_cpu.cpp,
// compiled with the CPU kernels' flags.

#include "tessera/core/exec.hpp"
#include "tessera/core/macros.hpp"  // index_t

namespace tessera::fem::transfer_detail {

/// out(k, c, :) = (A ⊗ A (⊗ A)) in(k, c, :) for the ne elements and nc components of dim = 2
/// or 3, A (m, n) row-major (n input and m output nodes per direction, lexicographic local
/// nodes); the input scaled by w(fidx(k, i)) first (scale_in) or the output after (scale_out).
/// in and out are (ne, nc, n^dim) and (ne, nc, m^dim), fidx (ne, fine nodes per element), all in
/// host memory.
void apply_tensor_cpu(const char* label, const Exec& exec, index_t ne, int dim, int m, int n, const double* A,
                      int nc, const double* in, double* out, const int* fidx, const double* w, bool scale_in,
                      bool scale_out);

}  // namespace tessera::fem::transfer_detail
