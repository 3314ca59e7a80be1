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
#if defined(__AVX__)
#include <immintrin.h>
#endif
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

#if defined(__AVX512F__)
/// The lanes from..to-1, less those in `except` (bit l), as a mask.
inline __mmask8 lane_mask(int from, int to, unsigned except = 0) {
  return __mmask8(((1u << to) - 1u) & ~((1u << from) - 1u) & ~except);
}
#elif defined(__AVX__)
inline __m256i lane_mask(int from, int to, unsigned except = 0) {
  long long k[4];
  for (int l = 0; l < 4; ++l) k[l] = from <= l && l < to && !((except >> l) & 1u) ? -1 : 0;
  return _mm256_set_epi64x(k[3], k[2], k[1], k[0]);
}
#endif

/// v with its lanes from..to-1 replaced by p[from..to-1] (the others are not read).
inline vdouble load_lanes(vdouble v, const double* p, int from, int to) {
#if defined(__AVX512F__)
  return vdouble(_mm512_mask_loadu_pd(__m512d(v), lane_mask(from, to), p));
#elif defined(__AVX__)
  const __m256i m = lane_mask(from, to);
  return vdouble(_mm256_blendv_pd(__m256d(v), _mm256_maskload_pd(p, m), _mm256_castsi256_pd(m)));
#else
  for (int l = from; l < to; ++l) v[l] = p[l];
  return v;
#endif
}

/// p[l] += v[l] for the lanes from..to-1, p[l] = v[l] for those of them in `store` (bit l);
/// no other entry of p is read or written, nor p[l] for the lanes in `store`.
inline void add_lanes(double* p, vdouble v, int from, int to, unsigned store) {
#if defined(__AVX512F__)
  const __m512d sum = _mm512_add_pd(_mm512_maskz_loadu_pd(lane_mask(from, to, store), p), __m512d(v));
  _mm512_mask_storeu_pd(p, lane_mask(from, to), _mm512_mask_mov_pd(sum, __mmask8(store), __m512d(v)));
#elif defined(__AVX__)
  const __m256i a = lane_mask(from, to, store);
  const __m256d sum = _mm256_add_pd(_mm256_maskload_pd(p, a), __m256d(v));
  _mm256_maskstore_pd(p, lane_mask(from, to), _mm256_blendv_pd(__m256d(v), sum, _mm256_castsi256_pd(a)));
#else
  for (int l = from; l < to; ++l) p[l] = ((store >> l) & 1u) ? v[l] : p[l] + v[l];
#endif
}

/// u(i, lane) = xc[node of local node i of the lane's element] for batch b.
inline void gather(const BatchIndices& ix, index_t b, const double* xc, double* u) {
  const std::size_t first = std::size_t(b) * ix.nd;
  const std::uint8_t* split = ix.split.data() + first;
  const int* at = ix.at.data() + 2 * first;
  const int* ids = ix.ids.data() + ix.ids_from[std::size_t(b)];
  for (int i = 0; i < ix.nd; ++i) {
    const int k = split[i], a = at[2 * i];
    vdouble t;
    if (k == W) {
      t = simd::load(xc + a);
    } else if (k > 0) {
      t = load_lanes(load_lanes(vdouble{}, xc + a, 0, k), xc + at[2 * i + 1], k, W);
    } else {
      for (int l = 0; l < W; ++l) t[l] = xc[ids[a + l]];
    }
    simd::store(u + std::size_t(i) * W, t);
  }
}

/// yc[node] += out(i, lane) for the live lanes of batch b; Store: yc[node] = out(i, lane) where
/// the batch meets the node first in the order the batches run (BatchIndices::first).
template <bool Store = false>
inline void scatter(const BatchIndices& ix, index_t b, const double* out, double* yc) {
  const std::size_t first = std::size_t(b) * ix.nd;
  const std::uint8_t* split = ix.split.data() + first;
  const std::uint8_t* meets = Store ? ix.first.data() + first : nullptr;
  const int* at = ix.at.data() + 2 * first;
  const int* ids = ix.ids.data() + ix.ids_from[std::size_t(b)];
  const int n = ix.live(b);
  for (int i = 0; i < ix.nd; ++i) {
    const double* t = out + std::size_t(i) * W;
    const int k = split[i], a = at[2 * i];
    const unsigned store = Store ? meets[i] : 0u;
    if (k == W && store == 0) {
      simd::store(yc + a, simd::load(yc + a) + simd::load(t));
    } else if (k == W) {
      add_lanes(yc + a, simd::load(t), 0, W, store);
    } else if (k > 0) {
      const vdouble v = simd::load(t);
      add_lanes(yc + a, v, 0, k, store);
      add_lanes(yc + at[2 * i + 1], v, k, W, store);
    } else {
      for (int l = 0; l < n; ++l) {
        double& y = yc[ids[a + l]];
        y = ((store >> l) & 1u) ? t[l] : y + t[l];
      }
    }
  }
}

}  // namespace tessera::fem::cpu_detail
