#pragma once
// Hexahedron diffusion by point columns with a compile-time bound (one thread per (qy, qx) column,
// HexPolicy chooses lines or columns per bucket); run-time sizes are hex_runtime.hpp.

#include "lines.hpp"
#include "point_columns.hpp"

namespace tessera::fem::interp_detail {

// Bounded hexahedron diffusion by collocated gradients: the values are interpolated to the
// points (one tensor contraction per direction instead of two or three), the reference
// gradient is taken there with D(a, r) = l_r'(x_a), the derivative matrix of the Lagrange
// basis on the rule's 1-D points (exact: the values are polynomials of degree p <= q - 1),
// and the transposes run in reverse. Each thread keeps fewer values (about 3 q) in registers
// than with three gradient columns (6 (p + 1)), which is what limits its occupancy.

/// Forward y and z of the values along the thread's column: Vs(qz, qy, qx).
template <int MaxN, int Row>
TESSERA_HOST_DEVICE inline void colloc_values(const Args& a, int qx, int qy, const double* B, const double* A,
                                              double* Vs) {
  const int m1 = a.nq1, S = row_length<Row>(m1);
  double c[MaxN];
  forward_y_column<MaxN, Row>(a, qx, qy, B, A, c);
  for (int qz = 0; qz < m1; ++qz) Vs[(qz * m1 + qy) * S + qx] = forward_z_point<MaxN, Row>(a, B, c, qz);
}

/// The reference gradient of Vs (m1, m1, row_length<VsRow>: the point values, or the gathered
/// nodal values when the points are the nodes) at the points of the thread's column, times
/// D = w det J J^-1 J^-T: P (3, m1, m1, row_length<Row>), component r the coefficient of
/// d/dxi_r in the transpose.
template <bool OnTheFly, int MaxN, int Row, int VsRow, Fetch How>
TESSERA_HOST_DEVICE inline void colloc_gradient(const Args& a, index_t e, int qx, int qy, const double* Dq,
                                                const double* xq, const double* Xc, const double* Vs, double* P) {
  const int m1 = a.nq1, nq = a.nq, S = row_length<Row>(m1), np = padded_points<Row>(a);
  const int vs = row_length<VsRow>(m1);
  Reused<MaxN> v, dx, dy;
  v.load(&Vs[qy * vs + qx], m1 * vs, m1);  // the thread's own column over qz
  dx.load(&Dq[qx * S], 1, m1);             // D(qx, r)
  dy.load(&Dq[qy * S], 1, m1);
  constexpr bool ahead = !OnTheFly && How == Fetch::Ahead;
  double Fn[6] = {};  // Ahead: the next point's stored D
  // (The read of point_factor<3, true, false> written out: calling it here compiled the
  // points-at-the-nodes bound-6 kernel to 135 registers instead of 124, over an occupancy
  // step, and BP5 p = 4, 5 ran at 0.70-0.88x on the H100.)
  const auto load_D = [&](int qz, double* to) {
TESSERA_INTERP_UNROLL
    for (int k = 0; k < 6; ++k) to[k] = a.qdata[(e * 6 + k) * nq + (qz * m1 + qy) * m1 + qx];
  };
  if constexpr (ahead) load_D(0, Fn);
  for (int qz = 0; qz < m1; ++qz) {
    double F[6];  // (00, 01, 02, 11, 12, 22)
    if constexpr (ahead) {
TESSERA_INTERP_UNROLL
      for (int k = 0; k < 6; ++k) F[k] = Fn[k];
      if (qz + 1 < m1) load_D(qz + 1, Fn);
    }
    double gx = 0, gy = 0, gz = 0;
TESSERA_INTERP_UNROLL
    for (int r = 0; r < MaxN; ++r)
      if (r < m1) {
        gx += dx[r] * Vs[(qz * m1 + qy) * vs + r];
        gy += dy[r] * Vs[(qz * m1 + r) * vs + qx];
        gz += Dq[qz * S + r] * v[r];
      }
    const int q = (qz * m1 + qy) * m1 + qx;
    if constexpr (!ahead) {
      const double xi[3] = {xq[qx], xq[qy], xq[qz]};
      point_factor<3, true, OnTheFly>(a, e, q, Xc, xi, F);
    }
    const int at = Row > 0 ? (qz * m1 + qy) * S + qx : q;
    P[at] = F[0] * gx + F[1] * gy + F[2] * gz;
    P[np + at] = F[1] * gx + F[3] * gy + F[4] * gz;
    P[2 * np + at] = F[2] * gx + F[4] * gy + F[5] * gz;
  }
}

/// The transposed gradient at the thread's column, T(qz) = sum_r D(r, qx) P0(qz, qy, r) +
/// D(r, qy) P1(qz, r, qx) + D(r, qz) P2(r, qy, qx), and the transposed z contraction of T into
/// C0(k, qy, qx); when the points are the nodes (Nodal: B = I) T is the result at node
/// (qz, qy, qx) and goes to store_result.
template <int MaxN, int Row, bool Nodal>
TESSERA_HOST_DEVICE inline void colloc_transpose(const Args& a, index_t e, int c, const int* idxs, int qx, int qy,
                                                 const double* B, const double* Dq, const double* P, double* C0) {
  const int n1 = a.nd1, m1 = a.nq1, S = row_length<Row>(m1), np = padded_points<Row>(a);
  Reused<MaxN> dx, dy, p2;
  dx.load(&Dq[qx], S, m1);  // D(r, qx) over r
  dy.load(&Dq[qy], S, m1);
  p2.load(&P[2 * np + qy * S + qx], m1 * S, m1);  // own column over qz
  double w[MaxN];
TESSERA_INTERP_UNROLL
  for (int k = 0; k < MaxN; ++k) w[k] = 0;
  for (int qz = 0; qz < m1; ++qz) {
    double t = 0;
TESSERA_INTERP_UNROLL
    for (int r = 0; r < MaxN; ++r)
      if (r < m1)
        t += dx[r] * P[(qz * m1 + qy) * S + r] + dy[r] * P[np + (qz * m1 + r) * S + qx] + Dq[r * S + qz] * p2[r];
    if constexpr (Nodal) {
      store_result(a, idxs, e, c, (qz * m1 + qy) * m1 + qx, t);
    } else {
TESSERA_INTERP_UNROLL
      for (int k = 0; k < MaxN; ++k)
        if (k < n1) w[k] += B[k * S + qz] * t;
    }
  }
  if constexpr (!Nodal) {
TESSERA_INTERP_UNROLL
    for (int k = 0; k < MaxN; ++k)
      if (k < n1) C0[(k * m1 + qy) * S + qx] = w[k];
  }
}

/// Per-bucket choices of the bounded hexahedron kernels, each measured on the H100 at 8M DOFs
/// against the alternative (docs/benchmarks/operators.md):
/// - D one point ahead gained 40-54% on BP5 and 3-10% on BP3, except at bound 4 (BP3 -16%).
/// - max_registers = 128 (core's team_kernel_limited; a few spills) where the kernel would use
///   more: stored diffusion at bounds 8-12 (BP5 p = 6, 7 +11-15%, BP3 p = 10 +30%; not the
///   points-at-the-nodes bound 12, BP5 p = 10 -19%); on the fly, diffusion at bounds 8-12
///   (+4-39%, one case -2%) and the points-at-the-nodes bound 6 (+21-27%; at bounds 8-12 it
///   lost 8-14%). Tighter caps (diffusion at bounds 4 and 6 64-112) lost up to 28%. The diffusion
///   kernels by lines keep these caps (measured with them; none of them spills under it),
///   except stored Gauss diffusion at bound 8, capped at 96 since (122 -> 90 registers, no
///   spills; 8M DOFs, same-run comparisons: H100 BP3 p = 5 1.14x, p = 6 1.00x, BP4 p = 5 1.07x,
///   p = 6 0.99x; H200 BP3 1.15x, 1.04x, BP4 1.10x, 0.99x). At bound 10 (116 -> 96, no spills)
///   the H200 gained 1.03-1.05x on BP3 at p = 7, 8 but the H100 did not (BP3 1.02x, 0.98x, BP4
///   0.97x, 0.99x): uncapped there. The points-at-the-nodes bound 4 capped at 88 (stored) and 96
///   (on the fly), a few bytes spilled, lost: BP5 p = 3 0.97x and 0.85x (H200).
/// - mass on the fly: max_registers = 96 at bounds 8 and 10, 128 at bounds 12 and 14. In
///   even-odd form (pair_contract) it took 133, 138, 136 and 130 registers; capped (16-64 bytes
///   of spills) it ran BP1 on the fly 1.20-1.38x faster at p = 5..8 and 1.00-1.45x at p = 9..12
///   (H100, same-run comparisons). The stored mass kernels take 48-104 and need no cap. Gauss diffusion at
///   bound 14 (p = 11, 12) stays uncapped: capped at 128 it spilled 430-440 bytes and ran stored BP3 0.66-0.92x and on-the-fly
///   p = 12 0.75x of uncapped (on the fly p = 11 1.20x); uncapped it is never slower than the
///   run-time-size kernel it replaces.
/// - Rows padded to MaxN (rows, row_length) against run-time rows, same run: Gauss diffusion
///   1.03-1.88x at p = 3..12 (stored BP3 p = 10 1.62x, p = 11 1.88x; fewer registers: bound 12
///   296 -> 40 bytes spilled), on the fly also at bound 4 (p = 2 1.05x; stored p = 2 0.92x);
///   Gauss-Lobatto
///   (point data padded, gathered values not) stored at bound 10 1.04-1.07x, on the fly at
///   bound 12 1.29-1.73x, but on the fly at bound 10 0.53-0.75x (171 registers: 3 elements
///   per SM instead of 4); elsewhere within 3%. Gauss-Lobatto with the gathered values
///   padded too (gather_rows), against the point data alone: stored 1.02-1.68x at bounds
///   6-14 (p = 4..13; 0.97-1.02x at bound 4), on the fly 1.00-1.15x at bounds 6, 8 and 14,
///   but 0.66-0.87x at bounds 10 and 12.
/// - Mass runs by lines at every bound (hex_mass_lines; 1.00-1.65x of the point-column kernel).
///   Diffusion by lines (hex_diffusion_lines) against the point-column kernels, same run:
///   Gauss (BP3) stored 0.99-1.38x at p = 1..10 and 1.25x at p = 12, but 0.72x at p = 11
///   (bound 14: it keeps the point columns stored), 2.25-2.30x at p = 13, 14 (bound 16, BP3
///   and BP4; 255 registers, no spills), on the fly 1.03-1.33x at p = 1..12;
///   Gauss-Lobatto (BP5/BP6) from bound 6 stored 1.02-1.90x at p = 4..13 (another run) and
///   on the fly 1.08-2.06x at p = 4..12, but at bound 4 (p = 1..3) stored 0.77-0.99x and on
///   the fly 0.90-0.97x, where the columns stay.
template <bool Diffusion, bool OnTheFly, int MaxN, bool Nodal>
struct HexPolicy {
  static constexpr Fetch d_fetch = Nodal || MaxN != 4 ? Fetch::Ahead : Fetch::InLoop;
  /// The register cap of the kernel (0: none), one case per line of the list above.
  static constexpr int register_cap() {
    if constexpr (!Diffusion)  // mass: on the fly only
      return !OnTheFly ? 0 : MaxN == 8 || MaxN == 10 ? 96 : MaxN >= 12 ? 128 : 0;
    else if constexpr (OnTheFly)
      return (Nodal ? MaxN == 6 : MaxN >= 8 && MaxN < 14) ? 128 : 0;
    else if constexpr (Nodal)
      return MaxN >= 8 && MaxN < 12 ? 128 : 0;
    else  // stored Gauss: 96 at bound 8 (p = 5, 6; four blocks of three elements per SM at p = 5)
      return MaxN == 8 ? 96 : MaxN > 8 && MaxN < 14 ? 128 : 0;
  }
  static constexpr int max_registers = register_cap();
  /// Mass by lines (hex_mass_lines) at every bound; diffusion by lines (hex_diffusion_lines)
  /// except with the points at the nodes at bound 4 and stored Gauss diffusion at bound 14
  static constexpr bool lines = MaxN > 0 && (!Diffusion || (Nodal ? MaxN >= 6 : OnTheFly || MaxN != 14));
  static constexpr bool pad_rows() {
    if (MaxN == 0 || lines) return false;  // the line kernels lay out their own rows
    if (!Nodal) return OnTheFly || MaxN >= 6;
    return MaxN >= 6 && !(OnTheFly && MaxN == 10);
  }
  static constexpr bool padded = pad_rows();
  /// row_length's Row: MaxN where padded rows were measured faster, else 0 (run-time rows)
  static constexpr int rows = padded ? MaxN : 0;
  /// With the points at the nodes the gathered values are the point values: their rows padded
  /// too (pipelined_steps' Row), except on the fly at bound 12
  static constexpr int gather_rows = Nodal && padded && !(OnTheFly && MaxN == 12) ? MaxN : 0;
};

/// Bounded hexahedron diffusion by point columns (MaxN: the compile-time bound on the nodes and
/// points per direction; HexPolicy::lines false): every contraction loop unrolled, the Reused
/// rows and columns in registers, collocated gradients (colloc_*); docs/benchmarks/operators.md
/// has the measurements. Mass and the other bounded cases run by lines (hex_mass_lines,
/// hex_diffusion_lines), run-time sizes hex_operator_runtime.
template <bool Diffusion, bool OnTheFly, int MaxN, bool Nodal = false>
TESSERA_HOST_DEVICE void hex_operator(TeamContext& ctx, const Args& a) {
  static_assert(Diffusion && MaxN > 0, "hex_operator is the bounded diffusion kernel by point columns");
  const int n1 = a.nd1, m1 = a.nq1, nd = a.nd;
  constexpr Fetch d_fetch = HexPolicy<Diffusion, OnTheFly, MaxN, Nodal>::d_fetch;
  // rows of length S (row_length): B (n1, S), Dq (m1, S), A (n1, n1, S), P and Vs (m1, m1, S)
  constexpr int Row = HexPolicy<Diffusion, OnTheFly, MaxN, Nodal>::rows;
  constexpr int GatherRow = HexPolicy<Diffusion, OnTheFly, MaxN, Nodal>::gather_rows;
  const int S = row_length<Row>(m1), np = padded_points<Row>(a);
  auto B = ctx.shared_common<double>(n1 * S);
  auto xq = ctx.shared_common<double>(m1);
  auto Dq = ctx.shared_common<double>(m1 * S);
  auto idxs = ctx.shared_item<int>(a.chunk * nd);
  // the gathered nodal values; with the points at the nodes they are the point values, in rows
  // of GatherRow where gather_rows pads them
  auto ub = ctx.shared_item<double>(gather_buffers(a.chunk, a.comps) * (GatherRow > 0 ? n1 * n1 * GatherRow : nd));
  // x stage, reused by the transposed y stage; also the point data P (3, np) between
  auto A = ctx.shared_item<double>(3 * np);
  // y stage, reused by the transposed z stage; the point values Vs (np) before (not with the
  // points at the nodes: u holds them)
  auto C0 = ctx.shared_item<double>(Nodal ? 0 : np);
  auto Xs = ctx.shared_item<double>(OnTheFly ? a.chunk * a.nv * a.sdim : 0);
  auto Xc = ctx.shared_item<double>(OnTheFly ? 8 * 3 : 0);  // read after the next barriers
  if constexpr (Row == 0) {
    for (int i : ctx.block_threads(n1 * m1)) B[i] = a.Bt[i];
    for (int i : ctx.block_threads(m1)) xq[i] = a.x1d[i];
    for (int i : ctx.block_threads(m1 * m1)) Dq[i] = a.Dq[i];
  } else {
    load_padded_rows(ctx, B.data(), a.Bt, n1, m1, S);
    for (int i : ctx.block_threads(m1)) xq[i] = a.x1d[i];
    load_padded_rows(ctx, Dq.data(), a.Dq, m1, m1, S);
  }
  if constexpr (Nodal) {
    pipelined_steps<GatherRow>(ctx, a, idxs, ub, Xs, [&](bool valid, index_t e, int c, const double* u, const double* Xe) {
      // the points are the nodes (Gauss-Lobatto, q = p + 1, a.nodal_points): u holds the point
      // values, and the transposed gradient is the result
      if (OnTheFly) {
        if (valid) multilinear_coefficients<3>(ctx, a, Xe, Xc.data());
        ctx.sync();  // Xc is read at the points
      }
      const int* el_idxs = idxs.data() + (e - ctx.item() * a.chunk) * nd;  // this element's map
      if (valid)
        for (int qy : ctx.threads_y(m1))
          for (int qx : ctx.threads_x(m1))
            colloc_gradient<OnTheFly, MaxN, Row, GatherRow, d_fetch>(a, e, qx, qy, Dq.data(), xq.data(), Xc.data(), u,
                                                               A.data());
      ctx.sync();
      if (valid)
        for (int qy : ctx.threads_y(m1))
          for (int qx : ctx.threads_x(m1))
            colloc_transpose<MaxN, Row, true>(a, e, c, el_idxs, qx, qy, B.data(), Dq.data(), A.data(), C0.data());
    });
  } else {
    pipelined_steps(ctx, a, idxs, ub, Xs, [&](bool valid, index_t e, int c, const double* u, const double* Xe) {
      if (OnTheFly && valid) multilinear_coefficients<3>(ctx, a, Xe, Xc.data());
      const int* el_idxs = idxs.data() + (e - ctx.item() * a.chunk) * nd;  // this element's map
      // forward x: A(k, j, qx) = sum_i B(i, qx) u(k, j, i)
      if (valid)
        for (int j : ctx.threads_y(n1))
          for (int qx : ctx.threads_x(m1)) {
            Reused<MaxN> b;
            b.load(&B[qx], S, n1);
            for (int k : ctx.threads_z(n1)) {
              double s = 0;
              const double* row = u + (k * n1 + j) * n1;
TESSERA_INTERP_UNROLL
              for (int i = 0; i < MaxN; ++i)
                if (i < n1) s += b[i] * row[i];
              A[(k * n1 + j) * S + qx] = s;
            }
          }
      ctx.sync();
      // A -> point values (C0's region) -> P (A's region) -> transposed gradient and z into C0
      if (valid)
        for (int qy : ctx.threads_y(m1))
          for (int qx : ctx.threads_x(m1)) colloc_values<MaxN, Row>(a, qx, qy, B.data(), A.data(), C0.data());
      ctx.sync();
      if (valid)
        for (int qy : ctx.threads_y(m1))
          for (int qx : ctx.threads_x(m1))
            colloc_gradient<OnTheFly, MaxN, Row, Row, d_fetch>(a, e, qx, qy, Dq.data(), xq.data(), Xc.data(), C0.data(),
                                                               A.data());
      ctx.sync();
      if (valid)
        for (int qy : ctx.threads_y(m1))
          for (int qx : ctx.threads_x(m1))
            colloc_transpose<MaxN, Row, false>(a, e, c, el_idxs, qx, qy, B.data(), Dq.data(), A.data(), C0.data());
      ctx.sync();
      // transposed y into A: the j rows of B reused
      if (valid)
        for (int j : ctx.threads_y(n1))
          for (int qx : ctx.threads_x(m1)) {
            Reused<MaxN> b;
            b.load(&B[j * S], 1, m1);
            for (int k : ctx.threads_z(n1)) {
              double s = 0;
TESSERA_INTERP_UNROLL
              for (int qy = 0; qy < MaxN; ++qy)
                if (qy < m1) s += b[qy] * C0[(k * m1 + qy) * S + qx];
              A[(k * n1 + j) * S + qx] = s;
            }
          }
      ctx.sync();
      // transposed x and the scatter: the i rows of B reused
      if (valid)
        for (int j : ctx.threads_y(n1))
          for (int i : ctx.threads_x(n1)) {
            Reused<MaxN> b;
            b.load(&B[i * S], 1, m1);
            for (int k : ctx.threads_z(n1)) {
              double s = 0;
              const int row = (k * n1 + j) * S;
TESSERA_INTERP_UNROLL
              for (int qx = 0; qx < MaxN; ++qx)
                if (qx < m1) s += b[qx] * A[row + qx];
              store_result(a, el_idxs, e, c, (k * n1 + j) * n1 + i, s);
            }
          }
    });
  }
}

}  // namespace tessera::fem::interp_detail
