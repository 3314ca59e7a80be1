#pragma once
// Pieces shared by the interpolation launches (interpolate.cpp) and the fused operator's launch
// planning (operator/apply.cpp): limits, the threads per element, the vector checks.
#include <algorithm>
#include <cstddef>

#include "tessera/core/error.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/core/team.hpp"
#include "tessera/core/memory.hpp"
#include "tessera/fem/geometry.hpp"

namespace tessera::fem::interp_detail {

/// Simplex tables up to this size are copied to shared memory once per block; larger ones
/// are read from global memory (through the L1/L2 caches).
inline constexpr std::size_t kSharedTableBytes = 48 * 1024;
/// Threads per element of the simplex kernels at most (more points loop).
inline constexpr int kMaxSimplexThreads = 256;
/// Threads per block the elements-per-block choice stays within (below the 1024 limit, so
/// that kernels using more than 64 registers per thread still launch).
inline constexpr int kMaxBlockThreads = 512;
/// Smallest block of stored point data per element (bytes) that the operators prefetch into L2.
inline constexpr std::size_t kPrefetchBytes = 20 * 1024;

/// Threads per element of a kernel. Quadrilaterals and hexahedra: (T, T, 1), T = max(p + 1,
/// points per direction) capped at 32 x 16, hexahedra looping over z (measured on the H200: a
/// (T, T, T) block was 1.2-1.9x slower for T >= 3, because fewer elements per SM then have
/// their gathers in flight; for T = 2 it is faster and used). Simplices: `threads` when given, else max(nodes, points) up to 32.
inline Dim3 item_threads(Geometry g, int nd, int nq, int nd1, int nq1, int threads = 0) {
  if (is_tensor(g)) {
    const int t = std::max(nd1, nq1);
    const int tx = std::min(t, 32);
    if (dim(g) == 3 && t <= 2) return {t, t, t};  // H200, p = 1: (2, 2, 2) 1.07-1.4x faster than (2, 2, 1)
    return {tx, std::min(t, std::max(1, kMaxBlockThreads / tx)), 1};
  }
  if (threads > 0) return {std::min(threads, kMaxSimplexThreads), 1, 1};
  return {std::min(std::max(nd, nq), 32), 1, 1};
}

/// Throws naming `where` (e.g. "Interpolator::interpolate") when a vector has other than `want`
/// entries or lives in memory that exec's backend cannot read.
inline void check_vector(const Exec& exec, const char* where, const char* what, const void* p, index_t size, index_t want) {
  if (size != want)
    fail("fem::", where, ": the ", what, " has ", size, " entries, expected ", want);
  const int s = detail::pointer_space(p);
  if (s >= 0 && !accessible(exec.backend, static_cast<Space>(s)))
    fail("fem::", where, ": the ", what, " lives in ", to_string(static_cast<Space>(s)),
         " memory, which the ", to_string(exec.backend), " backend cannot read; allocate it in ",
         to_string(exec.space()), " memory");
}

}  // namespace tessera::fem::interp_detail
