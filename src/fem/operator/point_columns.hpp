#pragma once
// Helpers of the bounded point-column hexahedron kernels (hex_points.hpp): reused table rows in
// registers, loop bounds fixed by the bucket, padded shared rows, the forward y and z stages
// along a thread's column.

#include "common.hpp"

namespace tessera::fem::interp_detail {

/// A 1-D table row or a data column that a thread reuses across its outer loop: with a
/// compile-time bound (MaxN > 0) copied into registers once, so that a multiply-add then loads
/// one operand from shared memory instead of two; with run-time sizes (MaxN == 0) read from
/// shared memory at every use.
template <int MaxN>
struct Reused {
  double v[MaxN > 0 ? MaxN : 1] = {};
  const double* p = nullptr;
  int stride = 0;
  /// Entries base[i * stride] for i < n.
  TESSERA_HOST_DEVICE void load(const double* base, int stride_, int n) {
    if constexpr (MaxN > 0) {
TESSERA_INTERP_UNROLL
      for (int i = 0; i < MaxN; ++i)
        if (i < n) v[i] = base[i * stride_];
    } else {
      p = base;
      stride = stride_;
    }
  }
  TESSERA_HOST_DEVICE double operator[](int i) const {
    if constexpr (MaxN > 0) return v[i];
    else return p[i * stride];
  }
};

/// Loop bound of the contractions: MaxN (unrolled, the run-time size n as a predicate) or n.
template <int MaxN>
TESSERA_HOST_DEVICE constexpr int loop_bound(int n) {
  return MaxN > 0 ? MaxN : n;
}

/// The row length of the shared buffers and 1-D tables along their innermost (point) index:
/// Row when a bounded kernel pads its rows to a compile-time length (Row = MaxN; HexPolicy::
/// rows), so that the addresses of an unrolled contraction are one register plus immediate
/// offsets; else m1 (Row = 0). The outer strides stay run-time products (one multiply per
/// outer step). With the run-time length every shared load of an unrolled contraction takes
/// its own address multiply-add (Nsight Compute on the H100, BP1 p = 6: 2.8 instructions
/// issued per cycle per SM, integer pipe the busiest), and padded rows freed registers.
template <int Row>
TESSERA_HOST_DEVICE constexpr int row_length(int m1) {
  return Row > 0 ? Row : m1;
}

/// Entries of one component of the point data (m1, m1, row_length): a.nq without padding.
template <int Row>
TESSERA_HOST_DEVICE inline int padded_points(const Args& a) {
  return Row > 0 ? a.nq1 * a.nq1 * Row : a.nq;
}

/// dst (rows, S) = src (rows, m1), the entries past m1 zero: a 1-D table in padded rows.
TESSERA_HOST_DEVICE inline void load_padded_rows(TeamContext& ctx, double* dst, const double* src, int rows, int m1,
                                                 int S) {
  for (int t : ctx.block_threads(rows * S)) {
    const int r = t / S, q = t - r * S;
    dst[t] = q < m1 ? src[r * m1 + q] : 0.0;
  }
}

/// Forward y along the thread's point column (qx, qy): c[k] = sum_j B(j, qy) A(k, j, qx) for
/// k < n1, from the x stage's A (k, j, qx).
template <int MaxN, int Row>
TESSERA_HOST_DEVICE inline void forward_y_column(const Args& a, int qx, int qy, const double* B, const double* A,
                                                 double (&c)[MaxN]) {
  const int n1 = a.nd1, S = row_length<Row>(a.nq1);
  Reused<MaxN> b;
  b.load(&B[qy], S, n1);
TESSERA_INTERP_UNROLL
  for (int k = 0; k < MaxN; ++k) {
    double s = 0;
    if (k < n1)
TESSERA_INTERP_UNROLL
      for (int j = 0; j < MaxN; ++j)
        if (j < n1) s += b[j] * A[(k * n1 + j) * S + qx];
    c[k] = s;
  }
}

/// Forward z at point qz of the column: sum_k B(k, qz) c[k].
template <int MaxN, int Row>
TESSERA_HOST_DEVICE inline double forward_z_point(const Args& a, const double* B, const double (&c)[MaxN], int qz) {
  double s = 0;
TESSERA_INTERP_UNROLL
  for (int k = 0; k < MaxN; ++k)
    if (k < a.nd1) s += B[k * row_length<Row>(a.nq1) + qz] * c[k];
  return s;
}

/// How the bounded diffusion kernels read the stored D of a thread's point column: inside the
/// z loop as each point needs it (InLoop), or one point ahead (Ahead: the next point's loads
/// are in flight while this point is computed). Loads inside the loop left each iteration
/// waiting on memory; the registers the early loads hold can cost occupancy instead, so the
/// choice is per bucket (HexPolicy; docs/benchmarks/operators.md has the measurements).
enum class Fetch { InLoop, Ahead };

}  // namespace tessera::fem::interp_detail
