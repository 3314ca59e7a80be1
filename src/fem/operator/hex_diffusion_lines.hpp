#pragma once
// Hexahedron diffusion by lines (hex_diffusion_lines): derivative lines through each point,
// Gauss points or the points at the nodes (collocated).

#include "lines.hpp"

namespace tessera::fem::interp_detail {

/// One derivative line of hex_diffusion_lines in direction d (0: x, 1: y, 2: z) through the
/// point (y, x) of the other two directions (x lines: (qz, qy) = (x, y)): D (or with Transposed
/// D^T) along the line of src (point data in rows of sr) into dst (rows of R); in place when
/// dst is src.
template <int MaxN, bool Transposed, int K = (MaxN + 1) / 2>
TESSERA_HOST_DEVICE inline void derivative_line(const LineTables<MaxN>& t, int m1, int d, int y, int x,
                                                const double* src, int sr, double* dst, int R) {
  const auto at = [&](int r) { return d == 0 ? (x * m1 + y) * r : d == 1 ? y * m1 * r + x : y * r + x; };
  const auto step = [&](int r) { return d == 0 ? 1 : d == 1 ? r : m1 * r; };
  line_product<-1, MaxN, K>(Transposed ? t.Dt : t.Df, &src[at(sr)], step(sr), m1, &dst[at(R)], step(R), m1);
}

/// A thread's derivative lines through (y, x) in directions d0..2: direction d reads src + d *
/// src_step (rows of sr) and writes dst + d * dst_step (rows of R). OneAtATime keeps the loop
/// over the directions rolled on the GPU: unrolled, the compiler starts the loads of all three
/// lines at once (stored Gauss-Lobatto diffusion at bound 12: 139 registers, 89 rolled; at
/// bound 10 it spilled under its cap of 128). The Gauss kernels (two directions) keep theirs
/// unrolled: rolled, the one on the fly at bound 8 reached its cap and spilled.
template <int MaxN, bool Transposed, bool OneAtATime, int K = (MaxN + 1) / 2>
TESSERA_HOST_DEVICE inline void derivative_lines(const LineTables<MaxN>& t, int m1, int d0, int y, int x,
                                                 const double* src, int sr, int src_step, double* dst, int R,
                                                 int dst_step) {
#if defined(__CUDA_ARCH__)
#pragma unroll(OneAtATime ? 1 : 3)
#else
TESSERA_INTERP_UNROLL
#endif
  for (int d = d0; d < 3; ++d)
    derivative_line<MaxN, Transposed, K>(t, m1, d, y, x, src + d * src_step, sr, dst + d * dst_step, R);
}

/// Bounded hexahedron diffusion by lines (collocated gradients): the line tables' D(r, a) =
/// l_r'(x_a) takes the reference gradient on the points. Per (element, component) step:
/// - Gauss points (not Nodal): the values are interpolated to the points by z, y and x lines
///   (T1 (qz, j, i), T2 (qz, qy, i) in rows of line_row(n1), as hex_mass_lines) into V, and
///   the x line that produces a row of V also takes its x derivative;
/// - points at the nodes (Nodal, Gauss-Lobatto with q = p + 1): the gathered values, in rows
///   of MaxN + 1, are the point values;
/// then the derivatives along x, y and z lines into G (3, m1, m1, line_row(m1)), D = w det J
/// J^-1 J^-T applied point by point in place (stored, or from the vertices on the fly), the
/// transposed derivatives along the same lines in place, and their sum at each point: the
/// result at the nodes (Nodal), or transposed back by x, y and z lines and scattered.
/// N1, M1 > 0: the sizes fixed at compile time, as in hex_mass_lines (also one_pass_lines).
/// ElementFactors: stored data of one factor per element (Args::element_factors).
template <bool OnTheFly, int MaxN, bool Nodal, int N1 = 0, int M1 = 0, bool ElementFactors = false>
TESSERA_HOST_DEVICE void hex_diffusion_lines(TeamContext& ctx, const Args& a, const LineTables<MaxN>& t) {
  constexpr bool Exact = N1 > 0;
  constexpr bool Once = Exact && one_pass_lines<true, OnTheFly, MaxN, Nodal>();
  const int n1 = Exact ? N1 : a.nd1, m1 = Exact ? M1 : a.nq1, nd = Exact ? N1 * N1 * N1 : a.nd;
  // pair_contract's input pairs (KN: the Gauss kernels' interpolation only)
  [[maybe_unused]] constexpr int KN = line_pairs<MaxN>(N1);
  constexpr int KM = line_pairs<MaxN>(M1);
  const int R = line_row(m1), Rn = line_row(n1), np = m1 * m1 * R;
  constexpr int U = Nodal ? MaxN + 1 : 0;  // the gathered values' rows (Nodal: x lines read them)
  auto xq = ctx.shared_common<double>(OnTheFly ? m1 : 0);
  // the item's skew (diffusion_lines_skew): its odd part one double into each buffer of
  // doubles (8-byte accesses and 8-byte cp.async only)
  constexpr int Skew = diffusion_lines_skew(N1, M1, Exact, Nodal);
  const int odd = carve_item_skew(ctx, Skew);
  auto idxs = ctx.shared_item<int>(a.chunk * nd);
  const int nu = gather_buffers(a.chunk, a.comps) * (Nodal ? m1 * m1 * U : nd);
  const View<double, 1> ub(ctx.shared_item<double>(nu + (Skew & 1)).data() + odd, nu);
  // Gauss points: the buffers X (np entries), G0..G2 (G, np each) and, unless a.merged_lines,
  // T2s (m1 m1 Rn) hold every stage's data, each reused once it is dead (np >= m1 m1 Rn, and
  // np >= m1 line_plane(n1, m1), T1's planes):
  //   forward:    u -> T1 (X) -> T2 (T2s, merged: G1) -> V (X) and G0 -> G1, G2 (from V)
  //   transposed: G0..G2 -> T2 (T2s, merged: X) -> T1 (X, merged: G0) -> scattered
  // Merged, an item needs m1 m1 Rn doubles less (FusedOperator::shape sizes both).
  double* const X = ctx.shared_item<double>(Nodal ? 0 : np + (Skew & 1)).data() + odd;
  double* const G = ctx.shared_item<double>(3 * np + (Skew & 1)).data() + odd;
  double* const T2s = ctx.shared_item<double>(Nodal || a.merged_lines ? 0 : m1 * m1 * Rn + (Skew & 1)).data() + odd;
  double* const V = X;
  double* const T2f = a.merged_lines ? G + np : T2s;  // forward T2
  double* const T2t = a.merged_lines ? X : T2s;       // transposed T2
  double* const T1t = a.merged_lines ? G : X;         // transposed T1
  auto Xs = ctx.shared_item<double>(OnTheFly ? a.chunk * a.nv * a.sdim : 0);
  auto Xc = ctx.shared_item<double>(OnTheFly ? 8 * 3 : 0);
  if constexpr (OnTheFly)
    for (int i : ctx.block_threads(m1)) xq[i] = a.x1d[i];
  pipelined_steps<U, N1>(ctx, a, idxs, ub, Xs, [&](bool valid, index_t e, int c, const double* u, const double* Xe) {
    if (OnTheFly && valid) multilinear_coefficients<3>(ctx, a, Xe, Xc.data());
    const double* Vp = u;  // the point values, rows of vr
    int vr = U;
    if constexpr (!Nodal) {
      lines_forward_zy<MaxN, N1, M1, Once>(ctx, a, valid, t, u, X, T2f, Rn, m1 * Rn);
      ctx.sync();
      if (valid)  // x: V(qz, qy, qx), and its x derivative into G0; lines (qz, qy)
        item_lines<Once>(ctx, m1, m1, [&](int qz, int qy) {
          LinePairs<MaxN> in;
          in.load(&T2f[(qz * m1 + qy) * Rn], 1, n1);
          const auto v = pair_contract<1, MaxN, KN>(t.Bf, in);
          v.store(&V[(qz * m1 + qy) * R], 1, m1);
          in.set(v.lo, v.hi);  // the values' pairs (past m1 zeros: the tables' zeros)
          pair_contract<-1, MaxN, KM>(t.Df, in).store(&G[(qz * m1 + qy) * R], 1, m1);
        });
      ctx.sync();
      Vp = V;
      vr = R;
    }
    // the reference gradient G(d, qz, qy, qx) along lines in direction d (Gauss: x done)
    constexpr int d0 = Nodal ? 0 : 1;  // the first direction left
    if (valid)
      item_lines<Once>(ctx, m1, m1, [&](int y, int x) {
        derivative_lines<MaxN, false, Nodal, KM>(t, m1, d0, y, x, Vp, vr, 0, G, R, np);
      });
    ctx.sync();
    // D G at each point, in place
    if (valid)
      item_lines<Once>(ctx, m1, m1, [&](int qy, int qx) {
        for (int qz = 0; qz < m1; ++qz) {
          const int at = (qz * m1 + qy) * R + qx, q = (qz * m1 + qy) * m1 + qx;
          double F[6];  // (00, 01, 02, 11, 12, 22)
          if constexpr (OnTheFly) {
            const double xi[3] = {xq[qx], xq[qy], xq[qz]};
            point_factor<3, true, true>(a, e, q, Xc.data(), xi, F);
          } else {
            point_factor<3, true, false, ElementFactors>(a, e, q, nullptr, nullptr, F);
          }
          const double gx = G[at], gy = G[np + at], gz = G[2 * np + at];
          G[at] = F[0] * gx + F[1] * gy + F[2] * gz;
          G[np + at] = F[1] * gx + F[3] * gy + F[4] * gz;
          G[2 * np + at] = F[2] * gx + F[4] * gy + F[5] * gz;
        }
      });
    ctx.sync();
    // the transposed derivatives along the same lines, in place (Gauss: x below)
    if (valid)
      item_lines<Once>(ctx, m1, m1, [&](int y, int x) {
        derivative_lines<MaxN, true, Nodal, KM>(t, m1, d0, y, x, G, R, np, G, R, np);
      });
    ctx.sync();
    const int* el_idxs = idxs.data() + (e - ctx.item() * a.chunk) * nd;  // this element's map
    if constexpr (Nodal) {
      if (valid)
        item_lines<Once>(ctx, m1, m1, [&](int qy, int qx) {
          for (int qz = 0; qz < m1; ++qz) {
            const int at = (qz * m1 + qy) * R + qx;
            store_result(a, el_idxs, e, c, (qz * m1 + qy) * m1 + qx, G[at] + G[np + at] + G[2 * np + at]);
          }
        });
    } else {
      if (valid)  // x: the transposed x derivative plus the y and z parts, then B^T; lines (qz, qy)
        item_lines<Once>(ctx, m1, m1, [&](int qz, int qy) {
          const int row = (qz * m1 + qy) * R, top = row + m1 - 1;
          LinePairs<MaxN> in;
          in.load(&G[row], 1, m1);
          auto g = pair_contract<-1, MaxN, KM>(t.Dt, in);
TESSERA_INTERP_UNROLL
          for (int qx = 0; qx < LinePairs<MaxN>::H; ++qx) {
            if (2 * qx >= m1) {  // past the line (the tables gave zeros)
              g.lo[qx] = g.hi[qx] = 0;
              continue;
            }
            g.lo[qx] += G[np + row + qx] + G[2 * np + row + qx];
            g.hi[qx] += G[np + top - qx] + G[2 * np + top - qx];
          }
          in.set(g.lo, g.hi);
          pair_contract<1, MaxN, KM>(t.Bt, in).store(&T2t[(qz * m1 + qy) * Rn], 1, n1);
        });
      ctx.sync();
      lines_transpose_yz<MaxN, N1, M1, Once>(ctx, a, valid, t, T2t, T1t, Rn, m1 * Rn, el_idxs, e, c);
    }
  }, [&](int, int c, index_t e) {
    // the element's 6 numbers per point, read at the D G stage, reach L2 during the previous
    // step (a.prefetch_qdata: stored, Gauss points, large blocks; FusedOperator::plan decides, and
    // the instances that can never prefetch carry no code for it)
    if constexpr (!OnTheFly && !Nodal && !ElementFactors)
      if (a.prefetch_qdata && c == 0) prefetch_point_data(ctx, a, e, 6);
  });
}

}  // namespace tessera::fem::interp_detail
