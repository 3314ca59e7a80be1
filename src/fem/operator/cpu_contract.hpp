#pragma once
// The stages shared by the element-batched CPU kernels (the operator, cpu_batched.cpp, and
// interpolation, cpu_interp.cpp): contractions of a batch's arrays of simd::vdouble (one
// element per lane) along one direction, with the sizes 2..9 unrolled at compile time, and the
// batch layout of the element-to-node map with its gather and scatter. Include only from the
// translation units compiled with the CPU kernels' flags (TESSERA_CPU_ARCH, sources.cmake):
// simd::lanes is fixed there.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu_indices.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/core/simd.hpp"

namespace tessera::fem::cpu_detail {

using simd::vdouble;
inline constexpr int W = simd::lanes;

/// A matrix of the contractions: row-major entries, and where it has mirror symmetry (sign
/// 1 or -1; 0: none) its even and odd parts for the even-odd contraction (mirror_parts).
struct Mat {
  const double* a;
  int rows, cols;
  int sign;
  const double* eo;
};

/// out = M in (Add: out += M in) along one direction of a batch array: in has M.cols entries
/// along it, out M.rows; `inner` is the product of the extents of the faster directions,
/// `outer` that of the slower ones. fixed: the compile-time contraction for sizes 2..9 that
/// differ by at most 2 (by even and odd parts where M has them), else the run-time loops.
template <bool Add>
void contract_any(bool fixed, const Mat& M, const vdouble* in, vdouble* out, int outer, int inner);
extern template void contract_any<false>(bool, const Mat&, const vdouble*, vdouble*, int, int);
extern template void contract_any<true>(bool, const Mat&, const vdouble*, vdouble*, int, int);

/// M's even and odd parts (contract_any's eo) where A (rows x cols, row-major) has mirror
/// symmetry of sign 1 or -1 to 1e-14 relative to its largest entry; sign 0 and nothing else.
int mirror_parts(const std::vector<double>& A, int rows, int cols, std::vector<double>& eo);

/// Applies M (rows x cols) along every direction in turn (0 first) to a Dim-dimensional array of
/// extent cols per direction: in -> out with extent rows, through t0 and t1.
template <int Dim>
void tensor_apply(bool fixed, const Mat& M, const vdouble* in, vdouble* out, vdouble* t0, vdouble* t1) {
  const int rows = M.rows, cols = M.cols;
  if constexpr (Dim == 2) {
    contract_any<false>(fixed, M, in, t0, cols, 1);
    contract_any<false>(fixed, M, t0, out, 1, rows);
  } else {
    contract_any<false>(fixed, M, in, t0, cols * cols, 1);
    contract_any<false>(fixed, M, t0, t1, cols, rows);
    contract_any<false>(fixed, M, t1, out, 1, rows * rows);
  }
}

/// M along direction d of a Dim-dimensional array whose directions below d have extent
/// `fast` and above d extent `slow` (Add: added into out).
template <int Dim, bool Add>
void along(bool fixed, int d, const Mat& M, const vdouble* in, vdouble* out, int fast, int slow) {
  int inner = 1, outer = 1;
  for (int k = 0; k < d; ++k) inner *= fast;
  for (int k = d + 1; k < Dim; ++k) outer *= slow;
  contract_any<Add>(fixed, M, in, out, outer, inner);
}

/// The derivative along direction d of a Dim-dimensional array of extent m per direction (M =
/// D, m x m), or its transpose added in (Add, M = D^T).
template <int Dim, bool Add>
void derivative(bool fixed, int d, const Mat& M, const vdouble* in, vdouble* out) {
  along<Dim, Add>(fixed, d, M, in, out, M.rows, M.rows);
}

/// u(i, lane) = xc[node of local node i of the lane's element] for batch b.
inline void gather(const BatchIndices& ix, index_t b, const double* xc, double* u) {
  const int* ib = ix.batch(b);
  const std::uint8_t* run = ix.consecutive.data() + std::size_t(b) * ix.nd;
  for (int i = 0; i < ix.nd; ++i) {
    const int* g = ib + i * W;
    vdouble t;
    if (run[i]) {
      t = simd::load(xc + g[0]);
    } else {
      for (int l = 0; l < W; ++l) t[l] = xc[g[l]];
    }
    simd::store(u + std::size_t(i) * W, t);
  }
}

/// yc[node] += out(i, lane) for the live lanes of batch b.
inline void scatter(const BatchIndices& ix, index_t b, const double* out, double* yc) {
  const int* ib = ix.batch(b);
  const std::uint8_t* run = ix.consecutive.data() + std::size_t(b) * ix.nd;
  const int n = ix.live(b);
  for (int i = 0; i < ix.nd; ++i) {
    const int* g = ib + i * W;
    const double* t = out + std::size_t(i) * W;
    if (run[i]) {
      simd::store(yc + g[0], simd::load(yc + g[0]) + simd::load(t));
    } else {
      for (int l = 0; l < n; ++l) yc[g[l]] += t[l];
    }
  }
}

}  // namespace tessera::fem::cpu_detail
