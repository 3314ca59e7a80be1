#pragma once
// Hexahedron mass kernels: by lines (hex_mass_lines, the default) and by small matrix products
// on the tensor cores (hex_mass_matmul, opt-in).

#include "lines.hpp"

namespace tessera::fem::interp_detail {

/// Bounded hexahedron mass operator by lines. Per (element, component) step: z, then y, by
/// lines along those directions into T1 (qz, j, i) and T2 (qz, qy, i; rows and planes of
/// mass_lines_layout, which also skews the item's buffers);
/// x, the point factor and the transposed x in place along T2's rows; the transposed y into
/// T1; the transposed z and the scatter. Stored w det J is copied to Ws (rows of
/// line_row(m1)) with cp.async during the z and y stages, once per element (on the GPU with
/// compile-time sizes up to kMassWeightRegsMax points: each thread's x line loaded into
/// registers at the start of the step instead); on the fly the
/// block keeps the rule's weights in Wq (the same rows) and det J comes from line_determinant.
/// N1, M1 > 0: the nodes and points per direction fixed at compile time (HexExact; they must
/// equal a.nd1, a.nq1), so that every stride and line length is a constant, and the thread
/// loops one pass where one_pass_lines says so.
/// ElementFactors (compile-time sizes, stored): a.qdata holds det J once per element
/// (Args::element_factors); the rule's weights take the place of w det J in the registers or
/// in Ws, loaded once before the first step, and each step multiplies them by its element's
/// det J (read at the step's start). Same buffers and launch shape as the per-point kernel.
template <bool OnTheFly, int MaxN, int N1 = 0, int M1 = 0, bool ElementFactors = false>
TESSERA_HOST_DEVICE void hex_mass_lines(TeamContext& ctx, const Args& a, const LineTables<MaxN>& t) {
  constexpr bool Exact = N1 > 0;
  static_assert(!ElementFactors || (Exact && !OnTheFly), "one factor per element: stored, compile-time sizes");
  constexpr bool Once = Exact && one_pass_lines<false, OnTheFly, MaxN, false>();
  // stored, one pass, on the GPU: each thread's x line of w det J in registers, loaded at the
  // start of the element's step (its latency hidden by the z and y stages)
#if defined(TESSERA_DEVICE_CODE)
  constexpr bool WRegs = mass_weights_in_registers(true, Exact, OnTheFly, M1);
#else
  constexpr bool WRegs = false;
#endif
  static_assert(!WRegs || Once, "the weights in registers need one line per thread");
  [[maybe_unused]] double wr[WRegs ? M1 : 1];
  const int n1 = Exact ? N1 : a.nd1, m1 = Exact ? M1 : a.nq1, nd = Exact ? N1 * N1 * N1 : a.nd,
            nq = Exact ? M1 * M1 * M1 : a.nq;
  const MassLinesLayout L = mass_lines_layout(n1, m1, Exact, OnTheFly);
  const int R = L.row, P2 = L.plane, Rw = line_row(m1);
  auto xq = ctx.shared_common<double>(OnTheFly ? m1 : 0);
  auto Wq = ctx.shared_common<double>(OnTheFly ? m1 * m1 * Rw : 0);
  carve_item_skew(ctx, L.skew);  // even (test MassLinesLayout): no odd part
  auto idxs = ctx.shared_item<int>(a.chunk * nd);
  auto ub = ctx.shared_item<double>(gather_buffers(a.chunk, a.comps) * nd);
  auto T1 = ctx.shared_item<double>(m1 * line_plane(n1, m1));
  auto T2 = ctx.shared_item<double>(m1 * P2);
  auto Xs = ctx.shared_item<double>(OnTheFly ? a.chunk * a.nv * a.sdim : 0);
  auto Xc = ctx.shared_item<double>(OnTheFly ? 8 * 3 : 0);
  auto Ws = ctx.shared_item<double>(OnTheFly || WRegs ? 0 : m1 * m1 * Rw);
  if constexpr (OnTheFly) {
    for (int i : ctx.block_threads(m1)) xq[i] = a.x1d[i];
    for (int q : ctx.block_threads(nq)) {  // once per block: a division per entry is affordable
      const int line = q / m1;
      Wq[line * Rw + (q - line * m1)] = a.wq[q];
    }
  }
  if constexpr (ElementFactors) {  // the weights, where the per-point kernel keeps w det J
    if constexpr (WRegs)
      item_lines<Once>(ctx, m1, m1, [&](int qz, int qy) {  // the x stage's (qz, qy), as below
        const double* w = &a.wq[(qz * m1 + qy) * m1];
TESSERA_INTERP_UNROLL
        for (int qx = 0; qx < M1; ++qx) wr[qx] = w[qx];
      });
    else
      item_lines<Once>(ctx, m1, m1, [&](int qy, int qx) {  // read after the steps' first barrier
        for (int qz = 0; qz < m1; ++qz) Ws[(qz * m1 + qy) * Rw + qx] = a.wq[(qz * m1 + qy) * m1 + qx];
      });
  }
  pipelined_steps<0, N1>(ctx, a, idxs, ub, Xs, [&](bool valid, index_t e, int c, const double* u, const double* Xe) {
    [[maybe_unused]] double det = 1;  // ElementFactors: this element's det J
    if constexpr (OnTheFly) {
      if (valid) multilinear_coefficients<3>(ctx, a, Xe, Xc.data());
    } else if constexpr (ElementFactors) {
      if (valid) det = a.qdata[e];
    } else if constexpr (WRegs) {
      if (valid && c == 0)  // the element's later components (steps) keep them
        item_lines<Once>(ctx, m1, m1, [&](int qz, int qy) {  // the x stage's (qz, qy): the same thread
          const double* w = &a.qdata[e * nq + (qz * m1 + qy) * m1];
TESSERA_INTERP_UNROLL
          for (int qx = 0; qx < M1; ++qx) wr[qx] = w[qx];
        });
    } else {
      if (valid && c == 0)  // the element's later components (steps) find it there
        item_lines<Once>(ctx, m1, m1, [&](int qy, int qx) {
          for (int qz = 0; qz < m1; ++qz)
            copy_async(ctx, &Ws[(qz * m1 + qy) * Rw + qx], &a.qdata[e * nq + (qz * m1 + qy) * m1 + qx]);
        });
      async_commit();
    }
    lines_forward_zy<MaxN, N1, M1, Once>(ctx, a, valid, t, u, T1.data(), T2.data(), R, P2);
    if constexpr (!OnTheFly && !WRegs && !ElementFactors) async_wait(false);
    ctx.sync();
    // x, the point factor and the transposed x along the rows of T2, in place
    if (valid)
      item_lines<Once>(ctx, m1, m1, [&](int qz, int qy) {
        double* row = &T2[qz * P2 + qy * R];
        const double* w = OnTheFly ? &Wq[(qz * m1 + qy) * Rw] : &Ws[(qz * m1 + qy) * Rw];
        const double* w_top = w + (m1 - 1);
        double d[3] = {};
        if constexpr (OnTheFly) line_determinant(Xc.data(), xq[qy], xq[qz], d);
        LinePairs<MaxN> in;
        in.load(row, 1, n1);
        auto v = pair_contract<1, MaxN, line_pairs<MaxN>(N1)>(t.Bf, in);
TESSERA_INTERP_UNROLL
        for (int qx = 0; qx < LinePairs<MaxN>::H; ++qx) {
          if (2 * qx >= m1) {  // past the line: the tables gave zeros, and w is not read
            v.lo[qx] = v.hi[qx] = 0;
            continue;
          }
          if constexpr (OnTheFly) {
            v.lo[qx] *= w[qx] * (d[0] + t.x[qx] * (d[1] + t.x[qx] * d[2]));
            v.hi[qx] *= w_top[-qx] * (d[0] + t.xr[qx] * (d[1] + t.xr[qx] * d[2]));
          } else if constexpr (WRegs) {  // 2 qx < M1 here; the bounds keep unreached indices in range
            v.lo[qx] *= det * wr[qx < M1 ? qx : 0];
            v.hi[qx] *= det * wr[qx < M1 ? M1 - 1 - qx : 0];
          } else {
            v.lo[qx] *= det * w[qx];
            v.hi[qx] *= det * w_top[-qx];
          }
        }
        in.set(v.lo, v.hi);
        pair_contract<1, MaxN, line_pairs<MaxN>(M1)>(t.Bt, in).store(row, 1, n1);
      });
    ctx.sync();
    const int* el_idxs = idxs.data() + (e - ctx.item() * a.chunk) * nd;  // this element's map
    lines_transpose_yz<MaxN, N1, M1, Once>(ctx, a, valid, t, T2.data(), T1.data(), R, P2, el_idxs, e, c);
  });
}

/// Hexahedron mass operator by small matrix products (team_matmul: on the GPU the double-
/// precision tensor cores, two warps per element). Per (element, component) step, each of the
/// six 1-D contractions is one product of the 1-D table (m1 x n1 forward, n1 x m1 transposed)
/// with the element's data viewed as a matrix whose columns are the lines of one direction:
///   z: T1(qz, j, i)  = sum_k B(k, qz) u(k, j, i)        into P (qz, n1 n1)
///   y: T2(qy, qz, i) = sum_j B(j, qy) T1(qz, j, i)      into Q (qy, m1 n1)
///   x: X(qz, qy, qx) = sum_i B(i, qx) T2(qy, qz, i)     into P (point order, rows of R)
/// then X times w det J point by point (stored: copied to W with cp.async during the forward
/// stages), and the transposes, Y(i, qz, qy) into Q, Z(j, i, qz) into P, the last one
/// scattered. MaxK (8 or 16) bounds n1 and m1.
template <bool OnTheFly, int MaxK>
TESSERA_HOST_DEVICE void hex_mass_matmul(TeamContext& ctx, const Args& a) {
  const int n1 = a.nd1, m1 = a.nq1, nd = a.nd, nq = a.nq, n2 = n1 * n1, mm = m1 * m1, mn = m1 * n1;
  const int R = hex_matmul_row(m1);
  auto xq = ctx.shared_common<double>(OnTheFly ? m1 : 0);
  auto idxs = ctx.shared_item<int>(a.chunk * nd);
  auto ub = ctx.shared_item<double>(gather_buffers(a.chunk, a.comps) * nd);
  auto P = ctx.shared_item<double>(hex_matmul_p_size(n1, m1));
  auto Q = ctx.shared_item<double>(hex_matmul_q_size(n1, m1));
  auto Xs = ctx.shared_item<double>(OnTheFly ? a.chunk * a.nv * a.sdim : 0);
  auto Xc = ctx.shared_item<double>(OnTheFly ? 8 * 3 : 0);
  auto W = ctx.shared_item<double>(OnTheFly ? 0 : nq);
  // output row strides of the products (hex_matmul_stride)
  const int s1 = hex_matmul_stride(n2), s2 = hex_matmul_stride(mn), s4 = hex_matmul_stride(mm), s5 = s2;
  if constexpr (OnTheFly)
    for (int i : ctx.block_threads(m1)) xq[i] = a.x1d[i];
  TeamMatrix<MaxK> Bf, Bb;            // Bf(q, i) = B(i, q) (nodes to points), Bb(i, q) = B(i, q)
  Bf.load(ctx, a.Bt, m1, n1, 1, m1);  // a.Bt is (nd1, nq1)
  Bb.load(ctx, a.Bt, n1, m1, m1, 1);
  // c / n from inv = 1 / n (columns of a product split in two): exact in single precision for these sizes
  const auto split = [](int c, float inv) { return static_cast<int>((static_cast<float>(c) + 0.5f) * inv); };
  const float inv_n = 1.0f / static_cast<float>(n1), inv_m = 1.0f / static_cast<float>(m1);
  double* p = P.data();
  double* qb = Q.data();
  pipelined_steps(ctx, a, idxs, ub, Xs, [&](bool valid, index_t e, int c, const double* u, const double* Xe) {
    if constexpr (OnTheFly) {
      if (valid) multilinear_coefficients<3>(ctx, a, Xe, Xc.data());
    } else {
      if (valid && c == 0)  // the element's later components (steps) find it there
        for (int q : ctx.item_threads(nq)) copy_async(ctx, &W[q], &a.qdata[e * nq + q]);
      async_commit();
    }
    if (valid)
      team_matmul(ctx, Bf, n2, n2, [&](int col) { return u + col; }, RowsOut{p, s1});
    ctx.sync();
    if (valid)
      team_matmul(ctx, Bf, mn, n1, [&](int col) { const int qz = split(col, inv_n); return p + qz * s1 + (col - qz * n1); },
                  RowsOut{qb, s2});
    ctx.sync();
    if (valid)  // columns (qy, qz); X(qz, qy, qx) at p[(qz * m1 + qy) * R + qx]
      team_matmul(ctx, Bf, mm, 1, [&](int col) { const int qy = split(col, inv_m); return qb + qy * s2 + (col - qy * m1) * n1; },
                  [&](int o, int col, double v) {
                    const int qy = split(col, inv_m);
                    p[((col - qy * m1) * m1 + qy) * R + o] = v;
                  });
    if constexpr (!OnTheFly) async_wait(false);
    ctx.sync();
    if (valid)
      for (int q : ctx.item_threads(nq)) {
        const int line = split(q, inv_m), qx = q - line * m1;  // line = qz * m1 + qy
        double F[1];
        if constexpr (OnTheFly) {
          const int qz = split(line, inv_m), qy = line - qz * m1;
          const double xi[3] = {xq[qx], xq[qy], xq[qz]};
          point_factor<3, false, true>(a, e, q, Xc.data(), xi, F);
        } else {
          F[0] = W[q];
        }
        p[line * R + qx] *= F[0];
      }
    ctx.sync();
    if (valid)  // columns (qz, qy)
      team_matmul(ctx, Bb, mm, 1, [&](int col) { return p + col * R; }, RowsOut{qb, s4});
    ctx.sync();
    if (valid)  // columns (i, qz)
      team_matmul(ctx, Bb, mn, 1, [&](int col) { const int i = split(col, inv_m); return qb + i * s4 + (col - i * m1) * m1; },
                  RowsOut{p, s5});
    ctx.sync();
    const int* el_idxs = idxs.data() + (e - ctx.item() * a.chunk) * nd;  // this element's map
    if (valid)  // columns (j, i)
      team_matmul(ctx, Bb, n2, 1, [&](int col) { const int j = split(col, inv_n); return p + j * s5 + (col - j * n1) * m1; },
                  [&](int o, int col, double v) { store_result(a, el_idxs, e, c, o * n2 + col, v); });
  });
}

}  // namespace tessera::fem::interp_detail
