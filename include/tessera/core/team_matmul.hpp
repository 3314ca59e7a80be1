#pragma once
/// \file team_matmul.hpp
/// Small dense matrix products inside a team launch, computed by the threads of one item:
///
///     out(o, c) = sum_k A(o, k) in(k, c),   o < A.rows(), k < A.cols(), c < ncols
///
/// with A (at most MaxK x MaxK, MaxK a multiple of 8) held by the item across many products
/// (TeamMatrix), column c of `in` at `in_col(c)[k * k_stride]`, and each result handed to
/// `emit(o, c, value)`. Every thread of the item calls both functions with the same arguments.
///
///     TeamMatrix<8> A;
///     A.load(ctx, table, no, nk, no_stride, nk_stride);      // A(o, k) = table[o * so + k * sk]
///     if (ctx.valid())
///       team_matmul(ctx, A, ncols, k_stride, [&](int c) { return &in[c]; },
///                   [&](int o, int c, double v) { out[o * ncols + c] = v; });
///     ctx.sync();
///
/// On GPUs of compute capability 8.0 and later the items must be whole warps along x
/// (Teams::threads = {32 k, 1, 1}; another shape stops the kernel with a message), and the
/// products run on the double-precision tensor cores (mma.sync m8n8k4): A is held in
/// registers as 8 x 4 fragments, each warp takes its share of the columns 16 at a time, and
/// each step of 4 along k loads one entry of `in` per thread and tile of 8 columns and issues
/// one matrix instruction per tile and 8 rows of A. Older GPUs compute the same sums with one
/// thread per (o, c) pair, the CPU with plain loops. Entries of A past its size are zero, and
/// entries of `in` past k < A.cols() or c < ncols are never read. An emit with a member
/// `pair(o, c, v0, v1)` (RowsOut) takes two adjacent columns at once.

#include "tessera/core/macros.hpp"
#include "tessera/core/team.hpp"

namespace tessera {

/// A small matrix A(o, k) held by the threads of an item for team_matmul (see the file comment).
template <int MaxK>
class TeamMatrix {
  static_assert(MaxK > 0 && MaxK % 8 == 0, "TeamMatrix: MaxK must be a positive multiple of 8");

 public:
  static constexpr int kTiles = MaxK / 8;  ///< blocks of 8 rows
  static constexpr int kSteps = MaxK / 4;  ///< blocks of 4 columns (k)

  /// A(o, k) = src[o * so + k * sk] for o < no, k < nk (no, nk <= MaxK; checked by the caller).
  TESSERA_HOST_DEVICE void load(const TeamContext& ctx, const double* src, int no, int nk, int so, int sk) {
    src_ = src, no_ = no, nk_ = nk, so_ = so, sk_ = sk;
#if defined(TESSERA_DEVICE_CODE)
    const int lane = ctx.thread_x() & 31, g = lane >> 2, r = lane & 3;
#pragma unroll
    for (int t = 0; t < kTiles; ++t)
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        const int o = t * 8 + g, k = s * 4 + r;
        f_[t][s] = o < no && k < nk ? src[o * so + k * sk] : 0.0;
      }
#else
    (void)ctx;
#endif
  }
  TESSERA_HOST_DEVICE int rows() const { return no_; }
  TESSERA_HOST_DEVICE int cols() const { return nk_; }
  /// A(o, k) read from the source (o < rows(), k < cols()).
  TESSERA_HOST_DEVICE double operator()(int o, int k) const { return src_[o * so_ + k * sk_]; }

  // the fragments of mma.sync m8n8k4 (row-major A): this thread's A(t * 8 + lane / 4, s * 4 + lane % 4)
  double f_[kTiles][kSteps] = {};

 private:
  const double* src_ = nullptr;
  int no_ = 0, nk_ = 0, so_ = 0, sk_ = 0;
};

namespace detail {
#if defined(TESSERA_DEVICE_CODE) && __CUDA_ARCH__ >= 800
/// d (8 x 8, this thread's two entries) += a (8 x 4) b (4 x 8) over the warp, in double precision.
__device__ inline void mma_8x8x4(double (&d)[2], double a, double b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
               : "+d"(d[0]), "+d"(d[1])
               : "d"(a), "d"(b));
}
#endif

/// Stores a pair of results of team_matmul: emit(o, c, v0) and emit(o, c + 1, v1) (c + 1 < n).
template <class Emit>
TESSERA_HOST_DEVICE inline void emit_pair(const Emit& emit, int o, int c, int n, double v0, double v1) {
  if constexpr (requires { emit.pair(o, c, v0, v1); }) {
    if (c + 1 < n) return emit.pair(o, c, v0, v1);
  }
  if (c < n) emit(o, c, v0);
  if (c + 1 < n) emit(o, c + 1, v1);
}
}  // namespace detail

/// An emit for team_matmul that stores out(o, c) at out[o * o_stride + c]; with an even
/// o_stride and a 16-byte aligned out, two columns at a time.
struct RowsOut {
  double* out;
  int o_stride;
  TESSERA_HOST_DEVICE void operator()(int o, int c, double v) const { out[o * o_stride + c] = v; }
  TESSERA_HOST_DEVICE void pair(int o, int c, double v0, double v1) const {
#if defined(TESSERA_DEVICE_CODE)
    if ((o_stride & 1) == 0) {
      struct alignas(16) Two {
        double x, y;
      };
      *reinterpret_cast<Two*>(&out[o * o_stride + c]) = Two{v0, v1};
      return;
    }
#endif
    out[o * o_stride + c] = v0;
    out[o * o_stride + c + 1] = v1;
  }
};

/// out(o, c) = sum_k A(o, k) in_col(c)[k * k_stride] for o < A.rows(), c < ncols, handed to
/// emit(o, c, value) (see the file comment). Every thread of the item calls it. On the GPU's
/// tensor cores an item of several warps splits the columns among them.
template <int MaxK, class InCol, class Emit>
TESSERA_HOST_DEVICE void team_matmul(const TeamContext& ctx, const TeamMatrix<MaxK>& A, int ncols, int k_stride,
                                     const InCol& in_col, const Emit& emit) {
  const int no = A.rows(), nk = A.cols();
#if defined(TESSERA_DEVICE_CODE) && __CUDA_ARCH__ >= 800
  {
    const int tpi = ctx.threads_per_item();
    if (tpi % 32 != 0 || ctx.thread_x() >= tpi) {
      printf("tessera: team_matmul needs items of whole warps in x on this GPU (Teams::threads = {32 k, 1, 1}), "
             "got %d threads\n", tpi);
      __trap();
    }
    using M = TeamMatrix<MaxK>;
    const int lane = ctx.thread_x() & 31, g = lane >> 2, r = lane & 3;
    const int warp = ctx.thread_x() >> 5, warps = tpi >> 5;
    // two tiles of 8 columns per pass: independent chains of matrix instructions in flight
    for (int c0 = 16 * warp; c0 < ncols; c0 += 16 * warps) {
      const double* col[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int c = c0 + 8 * h + g;
        col[h] = c < ncols ? in_col(c) : nullptr;
      }
      double acc[2][M::kTiles][2] = {};
#pragma unroll
      for (int s = 0; s < M::kSteps; ++s) {
        if (s * 4 >= nk) break;  // the same for the whole warp
        const int k = s * 4 + r;
        double b[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) b[h] = col[h] != nullptr && k < nk ? col[h][k * k_stride] : 0.0;
#pragma unroll
        for (int t = 0; t < M::kTiles; ++t)
          if (t * 8 < no)
#pragma unroll
            for (int h = 0; h < 2; ++h) detail::mma_8x8x4(acc[h][t], A.f_[t][s], b[h]);
      }
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int t = 0; t < M::kTiles; ++t) {
          const int o = t * 8 + g;
          if (o < no) detail::emit_pair(emit, o, c0 + 8 * h + 2 * r, ncols, acc[h][t][0], acc[h][t][1]);
        }
    }
  }
#elif defined(TESSERA_DEVICE_CODE)
  for (int oc : ctx.item_threads(no * ncols)) {
    const int c = oc / no, o = oc - c * no;
    const double* col = in_col(c);
    double s = 0;
    for (int k = 0; k < nk; ++k) s += A(o, k) * col[k * k_stride];
    emit(o, c, s);
  }
#else
  (void)ctx;
  for (int c = 0; c < ncols; ++c) {
    const double* col = in_col(c);
    for (int o = 0; o < no; ++o) {
      double s = 0;
      for (int k = 0; k < nk; ++k) s += A(o, k) * col[k * k_stride];
      emit(o, c, s);
    }
  }
#endif
}

}  // namespace tessera
