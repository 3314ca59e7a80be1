#pragma once
// The line kernels' building blocks: 1-D tables in even-odd form in the kernel's parameters,
// the contraction of a whole 1-D line held in registers, the z-y forward and y-z transposed
// stages, and the shared-memory layouts (rows, planes, per-item skews) that the kernels carve
// and FusedOperator::shape sizes.

#include "common.hpp"

namespace tessera::fem::interp_detail {

// ------------------------------------------------------------------ line kernels
// A bounded mass kernel in which each thread owns a whole 1-D line of an element per stage:
// it loads the line's values once into registers and produces every output of the line from
// them, with the 1-D tables held in the kernel's parameters. On the GPU those sit in constant
// memory, and every thread of a warp uses the same table entry at the same time (the unrolled
// loops index the tables with compile-time offsets): each entry is one uniform load (ULDC),
// with no address arithmetic, and the line's values cost one shared-memory load per entry
// instead of one per multiply-add. The point-column kernel it replaced (one
// thread per (qx, qy) column, the tables in shared memory) spent about nine instructions per
// multiply-add (Nsight Compute, H100, BP1 p = 6: 12% of its instructions were DFMA, 30%
// address arithmetic); against it, in the same run (H100, 8M DOFs): BP1 and BP2 1.00-1.65x
// stored, 1.19-1.58x on the fly, p = 1..10.

// The line kernels contract in even-odd form. The 1-D nodes (Gauss-Lobatto) and points (Gauss
// or Gauss-Lobatto) lie symmetrically about the middle of [0, 1], so a 1-D table T(k, o) from
// n inputs to m outputs is mirror-symmetric, T(n-1-k, m-1-o) = S T(k, o) with S = +1 for the
// values B and S = -1 for the derivatives D. A line is then carried as its pairs
// e[k] = v[k] + v[n-1-k], o[k] = v[k] - v[n-1-k] (k < ceil(n / 2); a middle entry pairs with
// itself: e = 2 v, o = 0), and the outputs of each mirrored pair (o, m-1-o) come from two
// half-size products, E = Te e and O = To o: out[o] = E + O, out[m-1-o] = S (E - O). That is
// half the multiply-adds and half the table entries (the uniform loads in front of each
// multiply-add on the GPU) of the full product, for n + m additions.

/// A 1-D table of a line kernel in even-odd form (pair_table): v[0] the even part Te(k, o) and
/// v[1] the odd part To(k, o) at [k * H + o], H = ceil(MaxN / 2); zero past the sizes.
template <int MaxN>
struct PairTable {
  static constexpr int H = (MaxN + 1) / 2;
  double v[2][H * H] = {};
};

/// The 1-D tables of a line kernel, copied into the kernel's parameters at launch: B forward
/// (nodes to points) and transposed (points to nodes), D forward and transposed, and the 1-D
/// points x with their mirror images xr[o] = x[m-1-o]. Index them only with compile-time
/// indices (unrolled loops): a run-time index would make the compiler copy the struct to
/// local memory.
template <int MaxN>
struct LineTables {
  PairTable<MaxN> Bf = {}, Bt = {}, Df = {}, Dt = {};
  double x[MaxN] = {}, xr[MaxN] = {};
};

/// Whether T(k, o) (k < nin, o < nout) is mirror-symmetric with sign S, T(nin-1-k, nout-1-o) =
/// S T(k, o), to 1e-11 of its largest entry (the tables are computed, not exact). The line
/// kernels' even-odd form assumes it; make_tables checks it once at set-up
/// (Args::mirror_symmetric).
template <class Table>
inline bool mirror_symmetric(const Table& T, int nin, int nout, int S) {
  double scale = 0, asym = 0;
  for (int k = 0; k < nin; ++k)
    for (int o = 0; o < nout; ++o) {
      scale = std::max(scale, std::abs(T(k, o)));
      asym = std::max(asym, std::abs(T(nin - 1 - k, nout - 1 - o) - S * T(k, o)));
    }
  return asym <= 1e-11 * scale;
}

/// Fills P with the even-odd form of T(k, o) (k < nin inputs, o < nout outputs, S its mirror
/// sign, mirror_symmetric): Te(k, o) = c_k (T(k, o) + S T(k, nout-1-o)) / 2 and To(k, o) =
/// c_k (T(k, o) - S T(k, nout-1-o)) / 2, c_k = 1/2 for a middle input (whose pair counts it
/// twice), else 1.
template <int MaxN, class Table>
inline void pair_table(PairTable<MaxN>& P, const Table& T, int nin, int nout, int S) {
  constexpr int H = (MaxN + 1) / 2;
  for (int k = 0; 2 * k < nin; ++k)
    for (int o = 0; 2 * o < nout; ++o) {
      const double c = 2 * k + 1 == nin ? 0.25 : 0.5, mirror = S * T(k, nout - 1 - o);
      P.v[0][k * H + o] = c * (T(k, o) + mirror);
      P.v[1][k * H + o] = c * (T(k, o) - mirror);
    }
}

/// Fills t from the host copies of the tables (Args::host_Bt (nd1, nq1), host_Dq (nq1, nq1)
/// with D(r, q) = l_r'(x_q) at [q * nq1 + r], host_x1d).
template <int MaxN>
inline void fill_line_tables(LineTables<MaxN>& t, const Args& a) {
  const int n1 = a.nd1, m1 = a.nq1;
  const auto B = [&](int i, int q) { return a.host_Bt[i * m1 + q]; };
  const auto D = [&](int r, int q) { return a.host_Dq[q * m1 + r]; };
  TESSERA_REQUIRE(a.mirror_symmetric, "fem operator: the hexahedron line kernels need nodes and points placed "
                  "symmetrically on [0, 1] (their 1-D tables are not mirror-symmetric); choose a Gauss or "
                  "Gauss-Lobatto rule, or TESSERA_OPERATOR_BOUND=0 for the run-time-size kernel");
  pair_table<MaxN>(t.Bf, B, n1, m1, 1);
  pair_table<MaxN>(t.Bt, [&](int q, int i) { return B(i, q); }, m1, n1, 1);
  pair_table<MaxN>(t.Df, D, m1, m1, -1);
  pair_table<MaxN>(t.Dt, [&](int q, int r) { return D(r, q); }, m1, m1, -1);
  for (int q = 0; q < m1; ++q) {
    t.x[q] = a.host_x1d[q];
    t.xr[q] = a.host_x1d[m1 - 1 - q];
  }
}

/// The row length of a buffer that threads read along its rows, one row per thread: n rounded
/// up to an odd number, so that the rows of a warp's threads start in different banks.
TESSERA_HOST_DEVICE constexpr int line_row(int n) { return n | 1; }

/// The plane stride (doubles) of the line kernels' T1 (qz, j, i): n1 n1 raised to the next
/// value congruent to n1 or -n1 modulo 16, so that the threads (qz, i) of the y lines, which
/// read and write T1 at qz * stride + i, fall in consecutive banks (with planes of n1 n1 = 16
/// at p = 3 all five qz met in one bank). n1 n1 where m1 padded planes would not fit in the
/// m1 m1 line_row(m1) doubles that the diffusion kernels lend T1 (fewer points than nodes).
/// Closed form (no loop): the run-time-size kernels compute it at every step.
TESSERA_HOST_DEVICE constexpr int line_plane(int n1, int m1) {
  const int n2 = n1 * n1, a = n1 % 16, r = n2 % 16, up = (a - r + 16) % 16, down = (32 - a - r) % 16;
  const int s = n2 + (up < down ? up : down);
  return s <= m1 * line_row(m1) ? s : n2;
}

/// A line of up to MaxN entries in even-odd form: e[k] = v[k] + v[n-1-k], o[k] = v[k] -
/// v[n-1-k] for 2k < n, zero past.
template <int MaxN>
struct LinePairs {
  static constexpr int H = (MaxN + 1) / 2;
  double e[H], o[H];
  /// From v[k] = src[k * stride], k < n.
  TESSERA_HOST_DEVICE void load(const double* src, int stride, int n) {
    const double* hi = src + (n - 1) * stride;
TESSERA_INTERP_UNROLL
    for (int k = 0; k < H; ++k) {
      const bool in = 2 * k < n;
      const double a = in ? src[k * stride] : 0.0, b = in ? hi[-k * stride] : 0.0;
      e[k] = a + b;
      o[k] = a - b;
    }
  }
  /// From the two halves of a line: lo[k] = v[k], hi[k] = v[n-1-k].
  TESSERA_HOST_DEVICE void set(const double (&lo)[H], const double (&hi)[H]) {
TESSERA_INTERP_UNROLL
    for (int k = 0; k < H; ++k) {
      e[k] = lo[k] + hi[k];
      o[k] = lo[k] - hi[k];
    }
  }
};

/// The outputs of a line product in halves: lo[o] = out[o], hi[o] = out[m-1-o] for 2o < m
/// (the middle output, m odd, in both).
template <int MaxN>
struct LineHalves {
  static constexpr int H = (MaxN + 1) / 2;
  double lo[H], hi[H];
  /// dst[o * stride] = out[o] for o < m, each once.
  TESSERA_HOST_DEVICE void store(double* dst, int stride, int m) const {
    double* top = dst + (m - 1) * stride;
TESSERA_INTERP_UNROLL
    for (int o = 0; o < H; ++o) {
      if (2 * o < m) dst[o * stride] = lo[o];
      if (2 * o + 1 < m) top[-o * stride] = hi[o];
    }
  }
};

/// out = T in for a table in even-odd form with mirror sign S (pair_table): E = Te e, O = To o,
/// out[o] = E + O, out[m-1-o] = S (E - O). Straight-line code over the bound's half sizes
/// (the tables' zeros past the run-time sizes). K: the input pairs summed, ceil(n / 2) for the
/// kernels with their sizes fixed at compile time (the pairs past the line are left out instead
/// of multiplied by zeros; the outputs past it are dead code the compiler drops), else all.
template <int S, int MaxN, int K = (MaxN + 1) / 2>
TESSERA_HOST_DEVICE inline LineHalves<MaxN> pair_contract(const PairTable<MaxN>& T, const LinePairs<MaxN>& in) {
  constexpr int H = (MaxN + 1) / 2;
  double E[H], O[H];
TESSERA_INTERP_UNROLL
  for (int o = 0; o < H; ++o) {
    E[o] = T.v[0][o] * in.e[0];
    O[o] = T.v[1][o] * in.o[0];
  }
TESSERA_INTERP_UNROLL
  for (int k = 1; k < K; ++k)
TESSERA_INTERP_UNROLL
    for (int o = 0; o < H; ++o) {
      E[o] += T.v[0][k * H + o] * in.e[k];
      O[o] += T.v[1][k * H + o] * in.o[k];
    }
  LineHalves<MaxN> out;
TESSERA_INTERP_UNROLL
  for (int o = 0; o < H; ++o) {
    out.lo[o] = E[o] + O[o];
    out.hi[o] = S > 0 ? E[o] - O[o] : O[o] - E[o];
  }
  return out;
}

/// A whole line product from memory to memory: src (n inputs, stride ss) through T (mirror sign
/// S) into dst (m outputs, stride ds). In place when dst is src.
/// K: pair_contract's input pairs.
template <int S, int MaxN, int K = (MaxN + 1) / 2>
TESSERA_HOST_DEVICE inline void line_product(const PairTable<MaxN>& T, const double* src, int ss, int n, double* dst,
                                             int ds, int m) {
  LinePairs<MaxN> in;
  in.load(src, ss, n);
  pair_contract<S, MaxN, K>(T, in).store(dst, ds, m);
}

/// det J of a first-order hexahedron along its x line (eta, zeta), from the monomial
/// coefficients of multilinear_coefficients<3>: det J(xi) = d[0] + xi (d[1] + xi d[2]). The
/// column d/dxi of J does not depend on xi and the other two are linear in it, so that a line
/// costs one triple product's worth of set-up and each point two multiply-adds.
TESSERA_HOST_DEVICE inline void line_determinant(const double* Xc, double eta, double zeta, double d[3]) {
  double c0[3], a1[3], b1[3], a2[3], b2[3];  // J's columns: c0, a1 + xi b1, a2 + xi b2
TESSERA_INTERP_UNROLL
  for (int r = 0; r < 3; ++r) {  // Xc[S * 3 + r], S the set of directions (bit 0: xi)
    c0[r] = Xc[3 + r] + Xc[9 + r] * eta + (Xc[15 + r] + Xc[21 + r] * eta) * zeta;
    a1[r] = Xc[6 + r] + Xc[18 + r] * zeta;
    b1[r] = Xc[9 + r] + Xc[21 + r] * zeta;
    a2[r] = Xc[12 + r] + Xc[18 + r] * eta;
    b2[r] = Xc[15 + r] + Xc[21 + r] * eta;
  }
  const auto triple = [&](const double* u, const double* v) {  // c0 . (u x v)
    return c0[0] * (u[1] * v[2] - u[2] * v[1]) + c0[1] * (u[2] * v[0] - u[0] * v[2]) +
           c0[2] * (u[0] * v[1] - u[1] * v[0]);
  };
  d[0] = triple(a1, a2);
  d[1] = triple(a1, b2) + triple(b1, a2);
  d[2] = triple(b1, b2);
}

/// The input pairs of a line of n entries where n is fixed at compile time (n > 0), else every
/// pair of the bound (pair_contract's K).
template <int MaxN>
TESSERA_HOST_DEVICE constexpr int line_pairs(int n) { return n > 0 ? (n + 1) / 2 : (MaxN + 1) / 2; }

/// f(y, x) for y < ny, x < nx over the item's threads (threads_y, threads_x). Once: the item's
/// threads cover ny and nx (the launch shape of the kernels with compile-time sizes, which
/// launch_operator_exact checks), so that on the GPU each thread has at most one (y, x) and the
/// two loops are one test, without their counters and back branches.
template <bool Once, class F>
TESSERA_HOST_DEVICE inline void item_lines(const TeamContext& ctx, int ny, int nx, const F& f) {
#if defined(TESSERA_DEVICE_CODE)
  if constexpr (Once) {
    const int y = ctx.thread_y(), x = ctx.thread_x();
    if (y < ny && x < nx) f(y, x);
  } else
#endif
  {
    for (int y : ctx.threads_y(ny))
      for (int x : ctx.threads_x(nx)) f(y, x);
  }
}

/// Whether a line kernel with its sizes fixed at compile time runs its thread loops as one pass
/// (item_lines<true>). Measured on the H200 against the loops (8M DOFs, same runs; operators.md,
/// "One pass over the item's lines"): with this rule mass on the fly 1.00-1.26x, Gauss diffusion
/// on the fly 1.03-1.12x, stored mass 1.00-1.07x, stored diffusion at p = 7..10 1.05-1.06x; one
/// pass everywhere cost stored Gauss diffusion at bounds 4..8 (p = 2..6) 2-6% and
/// Gauss-Lobatto diffusion on the fly at bound 8 (p = 6, 7) 7-11%, so those keep the loops.
template <bool Diffusion, bool OnTheFly, int MaxN, bool Nodal>
TESSERA_HOST_DEVICE constexpr bool one_pass_lines() {
  if constexpr (!Diffusion) return true;
  else if constexpr (Nodal) return !OnTheFly;
  else return OnTheFly || MaxN >= 10;
}

/// The forward z and y stages of the line kernels, from the gathered values u (n1, n1, n1):
/// T1(qz, j, i) = sum_k B(k, qz) u(k, j, i) by lines (j, i), a barrier, and T2(qz, qy, i) =
/// sum_j B(j, qy) T1(qz, j, i) by lines (qz, i), in rows of Rn and planes of P2 >= m1 Rn
/// doubles (no barrier after).
/// N1, M1 > 0: the sizes fixed at compile time (HexExact), else a.nd1, a.nq1. Once: the thread
/// loops as one pass (item_lines; only with the sizes fixed).
template <int MaxN, int N1 = 0, int M1 = 0, bool Once = false>
TESSERA_HOST_DEVICE inline void lines_forward_zy(TeamContext& ctx, const Args& a, bool valid, const LineTables<MaxN>& t,
                                                 const double* u, double* T1, double* T2, int Rn, int P2) {
  constexpr bool Exact = N1 > 0;
  static_assert(!Once || Exact, "one pass needs the compile-time sizes");
  const int n1 = Exact ? N1 : a.nd1, m1 = Exact ? M1 : a.nq1, n2 = n1 * n1, P1 = line_plane(n1, m1);
  if (valid)
    item_lines<Once>(ctx, n1, n1, [&](int j, int i) {
      line_product<1, MaxN, line_pairs<MaxN>(N1)>(t.Bf, &u[j * n1 + i], n2, n1, &T1[j * n1 + i], P1, m1);
    });
  ctx.sync();
  if (valid)
    item_lines<Once>(ctx, m1, n1, [&](int qz, int i) {
      line_product<1, MaxN, line_pairs<MaxN>(N1)>(t.Bf, &T1[qz * P1 + i], n1, n1, &T2[qz * P2 + i], Rn, m1);
    });
}

/// The transposed y and z stages of the line kernels and the scatter: T1(qz, j, i) = sum_qy
/// B(j, qy) T2(qz, qy, i) by lines (qz, i), a barrier, and y(k, j, i) += sum_qz B(k, qz)
/// T1(qz, j, i) by lines (j, i) into store_result. T2 as lines_forward_zy leaves it.
template <int MaxN, int N1 = 0, int M1 = 0, bool Once = false>
TESSERA_HOST_DEVICE inline void lines_transpose_yz(TeamContext& ctx, const Args& a, bool valid, const LineTables<MaxN>& t,
                                                   const double* T2, double* T1, int Rn, int P2, const int* el_idxs,
                                                   index_t e, int c) {
  constexpr bool Exact = N1 > 0;
  static_assert(!Once || Exact, "one pass needs the compile-time sizes");
  const int n1 = Exact ? N1 : a.nd1, m1 = Exact ? M1 : a.nq1, n2 = n1 * n1, P1 = line_plane(n1, m1);
  if (valid)
    item_lines<Once>(ctx, m1, n1, [&](int qz, int i) {
      line_product<1, MaxN, line_pairs<MaxN>(M1)>(t.Bt, &T2[qz * P2 + i], Rn, m1, &T1[qz * P1 + i], n1, n1);
    });
  ctx.sync();
  if (valid)
    item_lines<Once>(ctx, n1, n1, [&](int j, int i) {
      LinePairs<MaxN> in;
      in.load(&T1[j * n1 + i], P1, m1);
      const auto out = pair_contract<1, MaxN, line_pairs<MaxN>(M1)>(t.Bt, in);
      const int top = ((n1 - 1) * n1 + j) * n1 + i;  // node (n1 - 1, j, i); k steps down by n2
TESSERA_INTERP_UNROLL
      for (int k = 0; k < LinePairs<MaxN>::H; ++k) {
        if (2 * k < n1) store_result(a, el_idxs, e, c, (k * n1 + j) * n1 + i, out.lo[k]);
        if (2 * k + 1 < n1) store_result(a, el_idxs, e, c, top - k * n2, out.hi[k]);
      }
    });
}

/// The row length of hex_mass_matmul's point data (qz, qy, qx): m1 rounded up to 4 mod 8, so
/// that the eight columns of a matrix step, read down their rows, fall in different banks.
TESSERA_HOST_DEVICE constexpr int hex_matmul_row(int m1) { return m1 <= 4 ? 4 : (m1 + 3) / 8 * 8 + 4; }
/// The row stride of a hex_mass_matmul product's output: n rounded up to 8 mod 16, so that the
/// 16-byte stores of a warp's 8 x 8 tiles spread over all banks.
TESSERA_HOST_DEVICE constexpr int hex_matmul_stride(int n) { return (n + 7) / 16 * 16 + 8; }
/// Doubles of hex_mass_matmul's P buffer (T1, the point data, Z) and Q buffer (T2, Y).
TESSERA_HOST_DEVICE constexpr int hex_matmul_p_size(int n1, int m1) {
  const int pts = m1 * m1 * hex_matmul_row(m1), t1 = m1 * hex_matmul_stride(n1 * n1),
            z = n1 * hex_matmul_stride(n1 * m1);
  return pts > t1 ? (pts > z ? pts : z) : (t1 > z ? t1 : z);
}
TESSERA_HOST_DEVICE constexpr int hex_matmul_q_size(int n1, int m1) {
  const int t2 = m1 * hex_matmul_stride(m1 * n1), y = n1 * hex_matmul_stride(m1 * m1);
  return t2 > y ? t2 : y;
}

/// The most points per direction for which the stored mass kernel with compile-time sizes keeps
/// each thread's x line of w det J in registers instead of copying it to shared memory (and
/// waiting for the copy, which also waits for the next step's gather). H200, 8M DOFs, three
/// rounds against the copy: BP1 1.03x, 1.02x at p = 3, 4 and BP2 1.04x, 1.03x; at p = 5 1.00x
/// and 1.02x; at p = 6 0.91x and 0.97x and at p = 10 0.94x (BP1), where the registers rose
/// (55 -> 68 at p = 6, 71 -> 94 at p = 10); p = 7..9 0.99-1.01x. So p = 3, 4 only.
inline constexpr int kMassWeightRegsMax = 6;

/// Whether hex_mass_lines keeps w det J in registers and carves no buffer for it: stored, on
/// the GPU, the kernel with compile-time sizes (which runs its thread loops as one pass for
/// mass, one_pass_lines), at most kMassWeightRegsMax points per direction.
/// FusedOperator::shape sizes the layout with it.
TESSERA_HOST_DEVICE constexpr bool mass_weights_in_registers(bool on_device, bool exact, bool on_the_fly, int m1) {
  return on_device && exact && !on_the_fly && m1 <= kMassWeightRegsMax;
}

/// Where hex_mass_lines puts T2 and its item region. T2 (qz, qy, i) has rows of `row` doubles
/// and planes of `plane`; the item's buffers start `skew` doubles times the block's local item
/// (modulo 16) into the region, so that the items that share a half warp's 16 lanes (8-byte
/// shared accesses are served per half warp) meet in other banks. Everywhere but below: rows
/// of line_row(n1), planes of m1 rows, no skew. Below: the compile-time sizes where the
/// choice measured faster. It was chosen by a count of the shared-memory wavefronts of the
/// five line stages (16 lanes, 16 eight-byte banks; items of max(n1, m1)^2 threads one after
/// the other) among rows n1..n1 + 8, planes up to 15 past m1 rows and even skews (the buffers
/// stay 16-byte aligned for the gather's cp.async); test MassLinesLayout has the count.
/// H200, 8M DOFs, two rounds against the plain layout (operators.md, "T2's rows and planes"):
/// - p = 3 (count 444 -> 384 per step at the rule's 5 elements per block): BP1 stored 1.10x,
///   on the fly 1.09x, BP2 1.10x and 1.07x;
/// - p = 4 (1052 -> 865): on the fly BP1 1.03x, BP2 1.04x, but stored 0.95x and 0.98x;
/// - p = 5, 7 (the count 22% and 5% lower): 0.98-1.03x; p = 9, 10 (15%, 19%; rows of 17 and
///   13): BP1 0.89-0.96x, so those keep the plain layout.
struct MassLinesLayout {
  int row, plane, skew;
};
TESSERA_HOST_DEVICE constexpr MassLinesLayout mass_lines_layout(int n1, int m1, bool exact, bool on_the_fly) {
  if (exact && m1 == n1 + 1 && n1 == 4) return {5, 36, 4};
  if (exact && m1 == n1 + 1 && n1 == 5 && on_the_fly) return {9, 54, 4};
  return {line_row(n1), m1 * line_row(n1), 0};
}
/// The skew of hex_diffusion_lines's items (as MassLinesLayout's; odd skews allowed: that
/// kernel moves only doubles, and offsets each buffer by the odd part). 9 at p = 3 with Gauss
/// points (compile-time sizes): the count of its stages' wavefronts (as for mass, with the
/// derivative lines, the point factors and the transposes; test DiffusionLinesSkew) falls
/// 7-10% at the rules' 4 (stored) and 5 (on the fly) elements per block, 1364 -> 1262 and
/// 1664 -> 1512 per step; no even skew gains more than 1% there, nor any skew 3% at p = 2, 4.
/// H200, 8M DOFs, three rounds against no skew: on the fly BP3 9.47 -> 10.4 GDOF/s (1.10x),
/// BP4 1.10x; stored BP3 1.00x, BP4 1.02x (operators.md, "T2's rows and planes").
/// Also 9 with the points at the nodes at p = 4 (5 per direction; the count falls 8% at the 2
/// elements per block of stored, 15% at the 5 of on the fly): on the fly BP5 1.17x against the
/// bound-6 kernel without it (operator_exact_sizes; stored keeps that kernel).
TESSERA_HOST_DEVICE constexpr int diffusion_lines_skew(int n1, int m1, bool exact, bool nodal) {
  return exact && ((!nodal && n1 == 4 && m1 == 5) || (nodal && n1 == 5 && m1 == 5)) ? 9 : 0;
}
/// The doubles an item region keeps before its buffers for a skew (mass_lines_layout,
/// diffusion_lines_skew): the largest (l skew) mod 16 over local items l up to 16.
TESSERA_HOST_DEVICE constexpr int item_skew_room(int skew) {
  int most = 0;
  for (int l = 0; l < 16; ++l) most = (l * skew) % 16 > most ? (l * skew) % 16 : most;
  return most;
}
/// Carves the item's skew, (l skew) mod 16 doubles for local item l, ahead of its buffers:
/// the even part as a buffer of its own (carves keep 16-byte alignment), and returns the odd
/// part (0 or 1), which a kernel that moves only doubles adds to each of its buffers, each one
/// double longer. FusedOperator::shape keeps item_skew_room(skew) doubles for it.
TESSERA_HOST_DEVICE inline int carve_item_skew(TeamContext& ctx, int skew) {
  const int s = (ctx.local_item() * skew) % 16;
  ctx.shared_item<double>(s & ~1);
  return s & 1;
}

}  // namespace tessera::fem::interp_detail
