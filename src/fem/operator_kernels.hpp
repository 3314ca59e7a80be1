#pragma once
// Fused mass and diffusion operators on quadrilaterals and hexahedra: for each element, the
// gather (prefetched, as in the interpolation kernels), sum-factorized interpolation to the
// quadrature points, the point-wise factor (w det J, or the packed symmetric D = w det J
// J^-1 J^-T), the transposed contractions and an atomic scatter-add into y, in one launch.
// Shared buffers are reused between the forward and the transposed stages.

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "interpolate_kernels.hpp"
#include "tessera/core/atomic.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/team_matmul.hpp"

namespace tessera::fem::interp_detail {

/// The revision of the operator kernels, their shared layouts and their per-item rules
/// (operator_chunk), part of every tuning key (Interpolator::operator_key): counts that
/// `tessera tune operators` measured for earlier kernels are not reused, and the rules serve
/// until the next tuning. Raise it with every such change; 1 was the keys without it (before
/// 2026-11-29).
inline constexpr int kOperatorKernelRevision = 6;

using tessera::atomic_add;  // y[i] += v, atomically where threads run concurrently (core/atomic.hpp)

/// The first-order map of a quadrilateral (Dim 2) or hexahedron (Dim 3) in monomial form,
/// x_r(xi) = sum over subsets S of the directions of Xc[S * Dim + r] prod_{d in S} xi_d, from
/// the element's vertices Xe (vertex v at the reference corner a.corner[v]); item threads
/// share the 2^Dim * Dim coefficients. Its Jacobian then costs Dim * Dim * 2^(Dim-1) multiply-
/// adds per point instead of a sum over the vertices.
/// One of those coefficients, Xc[t] (t = S * Dim + r).
template <int Dim>
TESSERA_HOST_DEVICE inline double multilinear_coefficient(const Args& a, const double* Xe, int t) {
  const int S = t / Dim, r = t - S * Dim;
  double sum = 0;
  for (int v = 0; v < (1 << Dim); ++v) {
    double w = 1;
TESSERA_INTERP_UNROLL
    for (int d = 0; d < Dim; ++d) {
      const bool in_s = (S >> d) & 1, at_one = a.corner[v][d] != 0;
      w *= in_s ? (at_one ? 1.0 : -1.0) : (at_one ? 0.0 : 1.0);  // (1 - xi) or xi, split by degree
    }
    sum += w * Xe[v * Dim + r];
  }
  return sum;
}
template <int Dim>
TESSERA_HOST_DEVICE inline void multilinear_coefficients(TeamContext& ctx, const Args& a, const double* Xe,
                                                         double* Xc) {
  for (int t : ctx.item_threads((1 << Dim) * Dim)) Xc[t] = multilinear_coefficient<Dim>(a, Xe, t);
}

/// J(r, c) = d x_r / d xi_c at xi from the coefficients of multilinear_coefficients.
template <int Dim>
TESSERA_HOST_DEVICE inline void multilinear_jacobian(const double* Xc, const double* xi, double J[3][3]) {
TESSERA_INTERP_UNROLL
  for (int c = 0; c < Dim; ++c)
TESSERA_INTERP_UNROLL
    for (int r = 0; r < Dim; ++r) {
      double s = 0;
TESSERA_INTERP_UNROLL
      for (int S = 0; S < (1 << Dim); ++S)
        if ((S >> c) & 1) {
          double m = Xc[S * Dim + r];
TESSERA_INTERP_UNROLL
          for (int d = 0; d < Dim; ++d)
            if (d != c && ((S >> d) & 1)) m *= xi[d];
          s += m;
        }
      J[r][c] = s;
    }
}

/// The operator's factor at point q of element e into F: the packed symmetric
/// D = w det J J^-1 J^-T (Dim (Dim + 1) / 2 entries: 00, 01, (02,) 11, (12, 22)) for
/// diffusion, w det J for mass. Stored: read from a.qdata. On the fly: J of the first-order
/// map at the reference point xi from its monomial coefficients Xc (multilinear_coefficients),
/// w from a.wq.
/// F = s J^-1 J^-T packed (00, 01, 02, 11, 12, 22; in 2-D 00, 01, 11) from Ji = J^-1.
template <int Dim>
TESSERA_HOST_DEVICE inline void packed_metric(const double Ji[3][3], double s, double* F) {
  int k = 0;
TESSERA_INTERP_UNROLL
  for (int r = 0; r < Dim; ++r)
TESSERA_INTERP_UNROLL
    for (int c = r; c < Dim; ++c) {
      double t = 0;
TESSERA_INTERP_UNROLL
      for (int m = 0; m < Dim; ++m) t += Ji[r][m] * Ji[c][m];
      F[k++] = s * t;
    }
}

template <int Dim, bool Diffusion, bool OnTheFly>
TESSERA_HOST_DEVICE inline void point_factor(const Args& a, index_t e, int q, const double* Xc, const double* xi,
                                             double* F) {
  constexpr int NF = Diffusion ? Dim * (Dim + 1) / 2 : 1;
  if constexpr (!OnTheFly) {
TESSERA_INTERP_UNROLL
    for (int k = 0; k < NF; ++k) F[k] = a.qdata[(e * NF + k) * a.nq + q];
  } else {
    double J[3][3];
    multilinear_jacobian<Dim>(Xc, xi, J);
    const double wdet = a.wq[q] * determinant<Dim>(J);
    if constexpr (!Diffusion) {
      F[0] = wdet;
    } else {
      double Ji[3][3];
      invert<Dim>(J, Ji);
      packed_metric<Dim>(Ji, wdet, F);
    }
  }
}

/// s into global node g, component c: stored where the node belongs to this element alone
/// (g >= a.owned_from; OperatorScatter::StoreExclusive), else added atomically.
TESSERA_HOST_DEVICE inline void scatter_result(const Args& a, int c, int g, double s) {
  double* p = &a.y_out[c * a.nn + g];
  if (g >= a.owned_from) *p = s;
  else atomic_add(p, s, a.concurrent);
}

/// The operator's result s for local node i of element e, component c: scatter-added into the
/// global vector (scatter_result; Exclusive = false: always added, without the test, for the
/// one-thread-per-element kernels, which serve p <= 2 where the numbering keeps no nodes of one
/// element last), or stored into the E-vector (ne, comps, nd) when the kernel runs element by
/// element (a.idx == nullptr).
template <bool Exclusive = true>
TESSERA_HOST_DEVICE inline void store_result(const Args& a, const int* idxs, index_t e, int c, int i, double s) {
  if (a.idx) {
    if constexpr (Exclusive) scatter_result(a, c, idxs[i], s);
    else atomic_add(&a.y_out[c * a.nn + idxs[i]], s, a.concurrent);
  } else {
    a.y_out[(e * a.comps + c) * a.nd + i] = s;
  }
}

/// The stored point data of element e (nf numbers per point, a.nq points; an element's block
/// is contiguous) into L2 ahead of its use, by one thread of the item.
TESSERA_HOST_DEVICE inline void prefetch_point_data(const TeamContext& ctx, const Args& a, index_t e, int nf) {
  for (int i : ctx.item_threads(1)) {
    (void)i;
    prefetch_l2(a.qdata + e * nf * a.nq, sizeof(double) * nf * a.nq);
  }
}

/// Buffers of an item's gathered nodal values: two (the next step's gather in flight while this
/// one is computed; pipelined_steps) when the item walks several (element, component) steps,
/// one when it has a single step: a second buffer would never be read and costs an element's
/// nodal values of shared memory (at p = 9, 10 the difference between 2 and 3 blocks per SM for
/// diffusion). Interpolator::operator_shape sizes the layout with the same rule.
TESSERA_HOST_DEVICE constexpr int gather_buffers(int chunk, int comps) { return chunk * comps > 1 ? 2 : 1; }

/// Quadrilaterals: Diffusion selects the operator (else mass); OnTheFly computes the point
/// factors from the vertices instead of reading them.
template <bool Diffusion, bool OnTheFly>
TESSERA_HOST_DEVICE void quad_operator(TeamContext& ctx, const Args& a) {
  const int n1 = a.nd1, m1 = a.nq1, nd = a.nd, nq = a.nq;
  auto B = ctx.shared_common<double>(n1 * m1);
  auto G = ctx.shared_common<double>(Diffusion ? n1 * m1 : 0);
  auto xq = ctx.shared_common<double>(m1);
  auto idxs = ctx.shared_item<int>(a.chunk * nd);
  auto ub = ctx.shared_item<double>(gather_buffers(a.chunk, a.comps) * nd);
  auto A = ctx.shared_item<double>(n1 * m1);   // forward x stage; reused by the transposed y stage
  auto Ag = ctx.shared_item<double>(Diffusion ? n1 * m1 : 0);
  auto P0 = ctx.shared_item<double>(nq);       // point data: value or d/dxi_0
  auto P1 = ctx.shared_item<double>(Diffusion ? nq : 0);
  auto Xs = ctx.shared_item<double>(OnTheFly ? a.chunk * a.nv * a.sdim : 0);
  auto Xc = ctx.shared_item<double>(OnTheFly ? 4 * 2 : 0);  // read after the next barrier
  load_tensor_tables(ctx, a, B, G, xq);
  pipelined_steps(ctx, a, idxs, ub, Xs, [&](bool valid, index_t e, int c, const double* u, const double* Xe) {
    if (OnTheFly && valid) multilinear_coefficients<2>(ctx, a, Xe, Xc.data());
    if (valid)
      for (int j : ctx.threads_y(n1))
        for (int qx : ctx.threads_x(m1)) {
          double s = 0, g = 0;
          for (int i = 0; i < n1; ++i) {
            s += B[i * m1 + qx] * u[j * n1 + i];
            if (Diffusion) g += G[i * m1 + qx] * u[j * n1 + i];
          }
          A[j * m1 + qx] = s;
          if (Diffusion) Ag[j * m1 + qx] = g;
        }
    ctx.sync();
    if (valid)
      for (int qy : ctx.threads_y(m1))
        for (int qx : ctx.threads_x(m1)) {
          double s = 0, gx = 0, gy = 0;
          for (int j = 0; j < n1; ++j) {
            s += B[j * m1 + qy] * A[j * m1 + qx];
            if (Diffusion) {
              gx += B[j * m1 + qy] * Ag[j * m1 + qx];
              gy += G[j * m1 + qy] * A[j * m1 + qx];
            }
          }
          const int q = qy * m1 + qx;
          const double xi[3] = {xq[qx], xq[qy], 0.0};
          double F[3];
          point_factor<2, Diffusion, OnTheFly>(a, e, q, Xc.data(), xi, F);
          if (Diffusion) {
            P0[q] = F[0] * gx + F[1] * gy;
            P1[q] = F[1] * gx + F[2] * gy;
          } else {
            P0[q] = F[0] * s;
          }
        }
    ctx.sync();
    // transposed y stage: A(j, qx) = sum_qy B(qy, j) P0 (+ G(qy, j) P1); Ag(j, qx) = sum_qy B P0 for d/dxi_0
    if (valid)
      for (int j : ctx.threads_y(n1))
        for (int qx : ctx.threads_x(m1)) {
          double t0 = 0, t1 = 0;
          for (int qy = 0; qy < m1; ++qy) {
            if (Diffusion) {
              t0 += G[j * m1 + qy] * P1[qy * m1 + qx];
              t1 += B[j * m1 + qy] * P0[qy * m1 + qx];
            } else {
              t0 += B[j * m1 + qy] * P0[qy * m1 + qx];
            }
          }
          A[j * m1 + qx] = t0;
          if (Diffusion) Ag[j * m1 + qx] = t1;
        }
    ctx.sync();
    if (valid)
      for (int j : ctx.threads_y(n1))
        for (int i : ctx.threads_x(n1)) {
          double s = 0;
          for (int qx = 0; qx < m1; ++qx) {
            s += B[i * m1 + qx] * A[j * m1 + qx];
            if (Diffusion) s += G[i * m1 + qx] * Ag[j * m1 + qx];
          }
          store_result(a, &idxs[(e - ctx.item() * a.chunk) * nd], e, c, j * n1 + i, s);
        }
  });
}

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
/// kernels' even-odd form assumes it; the Interpolator checks it once at set-up
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
    return;
  }
#endif
  for (int y : ctx.threads_y(ny))
    for (int x : ctx.threads_x(nx)) f(y, x);
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
/// Interpolator::operator_shape sizes the layout with it.
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
/// double longer. Interpolator::operator_shape keeps item_skew_room(skew) doubles for it.
TESSERA_HOST_DEVICE inline int carve_item_skew(TeamContext& ctx, int skew) {
  const int s = (ctx.local_item() * skew) % 16;
  ctx.shared_item<double>(s & ~1);
  return s & 1;
}

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
template <bool OnTheFly, int MaxN, int N1 = 0, int M1 = 0>
TESSERA_HOST_DEVICE void hex_mass_lines(TeamContext& ctx, const Args& a, const LineTables<MaxN>& t) {
  constexpr bool Exact = N1 > 0;
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
  pipelined_steps<0, N1>(ctx, a, idxs, ub, Xs, [&](bool valid, index_t e, int c, const double* u, const double* Xe) {
    if constexpr (OnTheFly) {
      if (valid) multilinear_coefficients<3>(ctx, a, Xe, Xc.data());
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
    if constexpr (!OnTheFly && !WRegs) async_wait(false);
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
            v.lo[qx] *= wr[qx < M1 ? qx : 0];
            v.hi[qx] *= wr[qx < M1 ? M1 - 1 - qx : 0];
          } else {
            v.lo[qx] *= w[qx];
            v.hi[qx] *= w_top[-qx];
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

/// The 1-D tables of hex_thread_element (N nodes, at most N + 1 points per direction), in the
/// kernel's parameters; read only with compile-time indices (unrolled loops).
template <int N>
struct ThreadElementTables {
  static constexpr int M = N + 1;  // the most points per direction
  double B[N][M] = {};  // B[i][q] = l_i(x_q); zero past nq1
  double G[N][M] = {};  // G[i][q] = l_i'(x_q)
  double x[M] = {};     // the 1-D points
};

/// Fills t from the host copies of the tables (Args::host_Bt, host_Gt, host_x1d).
template <int N>
inline void fill_thread_element_tables(ThreadElementTables<N>& t, const Args& a) {
  for (int i = 0; i < N; ++i)
    for (int q = 0; q < a.nq1; ++q) {
      t.B[i][q] = a.host_Bt[i * a.nq1 + q];
      t.G[i][q] = a.host_Gt[i * a.nq1 + q];
    }
  for (int q = 0; q < a.nq1; ++q) t.x[q] = a.host_x1d[q];
}

/// The row of an element's staged data in hex_thread_element: its point factors (stored) or
/// its vertices (on the fly), rounded up to an odd count of doubles so that the rows of a
/// warp's threads start in different banks.
TESSERA_HOST_DEVICE constexpr int thread_element_row(bool diffusion, bool on_the_fly, int nq) {
  return (on_the_fly ? 8 * 3 : (diffusion ? 6 : 1) * nq) | 1;
}
/// The row of an element's index map in hex_thread_element (odd for the same reason).
TESSERA_HOST_DEVICE constexpr int thread_element_map_row(int nd) { return nd | 1; }

/// An element's data in the one-thread-per-element kernels: its point factors (stored) or
/// vertices (on the fly), and its index map (ND entries; null element by element). With a
/// staged E-vector (thread_element_data's StageE, element by element on the GPU): ev, the
/// element's input row (comps x ND), which the kernel overwrites with its results for
/// thread_element_store to write out.
struct ThreadElementData {
  const double* f = nullptr;
  const int* idx = nullptr;
  double* ev = nullptr;
  double* ev_rows = nullptr;  // the block's rows of ev_row doubles
  int ev_row = 0;
};
struct NoEarlyWork {
  TESSERA_HOST_DEVICE void operator()(const ThreadElementData&) const {}
};
/// The block's elements in the one-thread-per-element kernels: consecutive, from `first`;
/// `count` of them (the last block's may be fewer than its threads).
struct ThreadElementBlock {
  index_t first;
  int count;
};
TESSERA_HOST_DEVICE inline ThreadElementBlock thread_element_block(const TeamContext& ctx, const Args& a) {
  const int epb = ctx.items_per_block();
  const index_t first = index_t(ctx.block()) * epb, left = a.ne - first;
  return {first, left < epb ? static_cast<int>(left) : epb};
}
/// Calls f(i, l, j) for the block's entries i < count * n of rows of n entries (element l,
/// entry j), spread over its threads. l = i / n from a single-precision reciprocal: exact for
/// i < 2^22 whatever n (checked exhaustively for n <= 4096; the quotient's error stays below
/// the 0.5 / n margin), which the block's rows in shared memory keep far below.
template <class F>
TESSERA_HOST_DEVICE inline void for_row_entries(TeamContext& ctx, int count, int n, const F& f) {
  const float inv = 1.0f / static_cast<float>(n);
  for (int i : ctx.block_threads(count * n)) {
    const int l = static_cast<int>((static_cast<float>(i) + 0.5f) * inv);
    f(i, l, i - l * n);
  }
}
/// The rows of the block's elements in the one-thread-per-element kernels: on the GPU the
/// block's elements are consecutive, so their index maps (or, with StageE, their E-vector rows)
/// and data are contiguous ranges, which all the block's threads copy together (coalesced)
/// into rows of the common region, one row per element (Interpolator::operator_shape sizes
/// it); the CPU reads them in place (a copy would be one more pass over memory). Sets d to
/// thread ctx.item()'s element. With Bulk (stored data, sm_90) a full block's data arrives in
/// one bulk copy (bulk_copy_start) into rows of exactly its length, 2-way bank-conflicted where
/// the odd rows are conflict-free: on the H100 it raised BK5 at p = 2 from 83% to 95% of the
/// roofline, for one thread's instruction instead of the block's row copies (the partial last
/// block copies by threads). With an Early callable the maps (E-vector rows) and the data
/// are two copy groups: early(d) runs once the first has arrived, while the second is still
/// on its way (a gather issued there overlaps it). Has barriers on the GPU, for every thread;
/// returns false for the threads past the last element.
template <int ND, bool StageE = false, bool Bulk = false, class Early = NoEarlyWork>
TESSERA_HOST_DEVICE inline bool thread_element_data(TeamContext& ctx, const Args& a, bool diffusion, bool on_the_fly,
                                                    ThreadElementData& d, const Early& early = {}) {
  const int per = on_the_fly ? 8 * 3 : (diffusion ? 6 : 1) * a.nq;  // staged doubles per element
#if defined(TESSERA_DEVICE_CODE)
  constexpr bool split = !std::is_same_v<Early, NoEarlyWork>;
  const int R = thread_element_row(diffusion, on_the_fly, a.nq), RI = thread_element_map_row(ND);
  const int CE = a.comps * ND, RE = StageE && !a.idx ? thread_element_map_row(CE) : 0;
  const int epb = ctx.items_per_block();
  auto bar = ctx.shared_common<unsigned long long>(Bulk ? 1 : 0);
  auto maps = ctx.shared_common<int>(a.idx ? epb * RI : 0);
  auto evs = ctx.shared_common<double>(epb * RE);
  auto rows = ctx.shared_common<double>(epb * R);
  const ThreadElementBlock blk = thread_element_block(ctx, a);
  const index_t first = blk.first;
  const int count = blk.count;
  // Bulk: a full block's stored data in one bulk copy, into rows of per doubles
  const std::size_t bytes = sizeof(double) * std::size_t(count) * per;
  const bool bulk = Bulk && bulk_copy_available() && !on_the_fly && count == epb && bytes < (std::size_t(1) << 31) &&
                    ((reinterpret_cast<std::uintptr_t>(a.qdata + first * per) | bytes |
                      reinterpret_cast<std::uintptr_t>(rows.data())) & 15) == 0;
  const int Rk = bulk ? per : R;
  const auto to_rows = [&](double* dst, int row, const double* src, int n) {
    for_row_entries(ctx, count, n, [&](int i, int l, int j) { copy_async(ctx, &dst[l * row + j], &src[first * n + i]); });
  };
  const auto data_rows = [&] {
    if (bulk)
      for (int i : ctx.block_threads(1)) {
        (void)i;
        bulk_copy_start(bar.data(), rows.data(), a.qdata + first * per, static_cast<unsigned>(bytes));
      }
    else
      to_rows(rows.data(), R, on_the_fly ? a.X : a.qdata, per);
  };
  if (a.idx)
    for (int k : ctx.block_threads(count * ND)) {
      const int l = k / ND;  // a compile-time divisor
      copy_async(ctx, &maps[l * RI + (k - l * ND)], &a.idx[first * ND + k]);
    }
  else if (RE > 0)
    to_rows(evs.data(), RE, a.u, CE);
  const bool valid = ctx.valid();
  if (valid) {
    d.f = &rows[ctx.local_item() * Rk];
    d.idx = a.idx ? &maps[ctx.local_item() * RI] : nullptr;
    d.ev = RE > 0 ? &evs[ctx.local_item() * RE] : nullptr;
  }
  d.ev_rows = RE > 0 ? evs.data() : nullptr;
  d.ev_row = RE;
  if constexpr (split) {
    async_commit();
    data_rows();
    async_commit();
    async_wait(true);
    ctx.sync();
    if (valid) early(d);
  } else {
    data_rows();
    async_commit();
  }
  async_wait(false);
  ctx.sync();
  if (bulk) bulk_copy_wait(bar.data());  // after a barrier: the mbarrier was initialized before it
  return valid;
#else
  if (!ctx.valid()) return false;
  d.f = (on_the_fly ? a.X : a.qdata) + ctx.item() * per;
  d.idx = a.idx ? a.idx + ctx.item() * ND : nullptr;
  early(d);
  return true;
#endif
}

/// Element by element on the GPU with a staged E-vector: after a barrier (every thread of the
/// block), the block's result rows (thread_element_data's ev, overwritten by the kernel) go to
/// the output E-vector together (coalesced). Nothing otherwise.
template <int ND>
TESSERA_HOST_DEVICE inline void thread_element_store(TeamContext& ctx, const Args& a, const ThreadElementData& d) {
#if defined(TESSERA_DEVICE_CODE)
  if (!d.ev_rows) return;
  ctx.sync();
  const ThreadElementBlock blk = thread_element_block(ctx, a);
  const index_t first = blk.first;
  const int CE = a.comps * ND;
  for_row_entries(ctx, blk.count, CE, [&](int i, int l, int j) { a.y_out[first * CE + i] = d.ev_rows[l * d.ev_row + j]; });
#else
  (void)ctx;
  (void)a;
  (void)d;
#endif
}

/// On the fly, the element's monomial coefficients (multilinear_coefficients) from its
/// vertices f, computed into Xr. With InRow, on the GPU, they then replace the vertices in the
/// element's staged row (this thread's own), whose address is returned: held in registers
/// across the element's points the diffusion kernels spilled (p = 2 with the points at the
/// nodes: 1200 bytes a thread, from the row 320; p = 1 with Gauss points 928 bytes, from the
/// row none), where mass does not (it ran 0.74-0.96x from the row). Else Xr itself.
template <bool InRow>
TESSERA_HOST_DEVICE inline const double* thread_element_coefficients(const Args& a, const double* f, double (&Xr)[24]) {
TESSERA_INTERP_UNROLL
  for (int k = 0; k < 24; ++k) Xr[k] = multilinear_coefficient<3>(a, f, k);
  if constexpr (!InRow) return Xr;
#if defined(TESSERA_DEVICE_CODE)
  volatile double* row = const_cast<double*>(f);
TESSERA_INTERP_UNROLL
  for (int k = 0; k < 24; ++k) row[k] = Xr[k];
  return f;
#else
  return Xr;
#endif
}

/// Hexahedra with N nodes per direction (instantiated for N = 2, p = 1, and N = 3 for mass in
/// the global apply; see operator_thread_element) and at most N + 1 points: one thread per
/// element, every intermediate in registers, its data staged by thread_element_data. Each
/// thread runs its element: the contractions go slab by slab in z and line by line in y, and
/// the transposed ones accumulate in the same loops. The gathered values, the result and the
/// scatter are per thread.
template <int N, bool Diffusion, bool OnTheFly>
TESSERA_HOST_DEVICE void hex_thread_element(TeamContext& ctx, const Args& a, const ThreadElementTables<N>& t) {
  constexpr int NF = Diffusion ? 6 : 1, M = N + 1, N2 = N * N, ND = N2 * N;
  const int m1 = a.nq1, nq = a.nq;
  const index_t e = ctx.item();
  ThreadElementData d;
  if (!thread_element_data<ND>(ctx, a, Diffusion, OnTheFly, d)) return;  // no barrier below
  const double* f = d.f;
  const int* idx = d.idx;
  double Xr[24];
  const double* Xc = OnTheFly ? thread_element_coefficients<Diffusion>(a, f, Xr) : nullptr;
  for (int c = 0; c < a.comps; ++c) {
    double u[ND], r[ND] = {};  // node (k, j, i) at (k * N + j) * N + i
TESSERA_INTERP_UNROLL
    for (int n = 0; n < ND; ++n) u[n] = a.idx ? a.u[c * a.nn + idx[n]] : a.u[(e * a.comps + c) * ND + n];
TESSERA_INTERP_UNROLL
    for (int qz = 0; qz < M; ++qz) {
      if (qz >= m1) break;
      // slab qz: s1 (j, i) values and d1 (j, i) z derivatives; ts1, td1 their transposed sums
      double s1[N2], d1[N2] = {}, ts1[N2] = {}, td1[N2] = {};
TESSERA_INTERP_UNROLL
      for (int n = 0; n < N2; ++n) {
        s1[n] = 0;
TESSERA_INTERP_UNROLL
        for (int k = 0; k < N; ++k) {
          s1[n] += t.B[k][qz] * u[k * N2 + n];
          if (Diffusion) d1[n] += t.G[k][qz] * u[k * N2 + n];
        }
      }
TESSERA_INTERP_UNROLL
      for (int qy = 0; qy < M; ++qy) {
        if (qy >= m1) break;
        // line (qz, qy) along x: s2 values, y2 y derivatives, z2 z derivatives; their transposed sums
        double s2[N] = {}, y2[N] = {}, z2[N] = {}, ts2[N] = {}, ty2[N] = {}, tz2[N] = {};
TESSERA_INTERP_UNROLL
        for (int i = 0; i < N; ++i)
TESSERA_INTERP_UNROLL
          for (int j = 0; j < N; ++j) {
            s2[i] += t.B[j][qy] * s1[j * N + i];
            if (Diffusion) {
              y2[i] += t.G[j][qy] * s1[j * N + i];
              z2[i] += t.B[j][qy] * d1[j * N + i];
            }
          }
TESSERA_INTERP_UNROLL
        for (int qx = 0; qx < M; ++qx) {
          if (qx >= m1) break;
          const int q = (qz * m1 + qy) * m1 + qx;
          double F[NF];
          if constexpr (OnTheFly) {
            const double xi[3] = {t.x[qx], t.x[qy], t.x[qz]};
            point_factor<3, Diffusion, true>(a, e, q, Xc, xi, F);
          } else {
TESSERA_INTERP_UNROLL
            for (int k = 0; k < NF; ++k) F[k] = f[k * nq + q];
          }
          if constexpr (Diffusion) {
            double gx = 0, gy = 0, gz = 0;
TESSERA_INTERP_UNROLL
            for (int i = 0; i < N; ++i) {
              gx += t.G[i][qx] * s2[i];
              gy += t.B[i][qx] * y2[i];
              gz += t.B[i][qx] * z2[i];
            }
            const double fx = F[0] * gx + F[1] * gy + F[2] * gz;
            const double fy = F[1] * gx + F[3] * gy + F[4] * gz;
            const double fz = F[2] * gx + F[4] * gy + F[5] * gz;
TESSERA_INTERP_UNROLL
            for (int i = 0; i < N; ++i) {
              ts2[i] += t.G[i][qx] * fx;
              ty2[i] += t.B[i][qx] * fy;
              tz2[i] += t.B[i][qx] * fz;
            }
          } else {
            double v = 0;
TESSERA_INTERP_UNROLL
            for (int i = 0; i < N; ++i) v += t.B[i][qx] * s2[i];
            v *= F[0];
TESSERA_INTERP_UNROLL
            for (int i = 0; i < N; ++i) ts2[i] += t.B[i][qx] * v;
          }
        }
TESSERA_INTERP_UNROLL
        for (int j = 0; j < N; ++j)
TESSERA_INTERP_UNROLL
          for (int i = 0; i < N; ++i) {
            ts1[j * N + i] += t.B[j][qy] * ts2[i];
            if (Diffusion) {
              ts1[j * N + i] += t.G[j][qy] * ty2[i];
              td1[j * N + i] += t.B[j][qy] * tz2[i];
            }
          }
      }
TESSERA_INTERP_UNROLL
      for (int k = 0; k < N; ++k)
TESSERA_INTERP_UNROLL
        for (int n = 0; n < N2; ++n) {
          r[k * N2 + n] += t.B[k][qz] * ts1[n];
          if (Diffusion) r[k * N2 + n] += t.G[k][qz] * td1[n];
        }
    }
TESSERA_INTERP_UNROLL
    for (int n = 0; n < ND; ++n) store_result<false>(a, idx, e, c, n, r[n]);
  }
}

/// Diffusion with the points at the nodes (Gauss-Lobatto, q = p + 1: B = I), N nodes per
/// direction (instantiated for N = 2, 3: p = 1, 2): one thread per element, the gathered values and
/// the result in registers. Stored: the element's D = w det J J^-1 J^-T staged by
/// thread_element_data (Bulk: in one bulk copy); on the fly: its vertices staged, their
/// monomial coefficients in the same row (thread_element_coefficients) and D computed at each
/// node (point_factor). StageE: element by element the E-vectors go through shared rows. At
/// node (z, y, x) the reference gradient takes N multiply-adds per direction along the node's
/// three lines, g = (sum_i G(i, x) u(z, y, i), sum_j G(j, y)
/// u(z, j, x), sum_k G(k, z) u(k, y, x)) with G(i, q) = l_i'(x_q), and the transposed
/// gradient of D g adds back along the same lines: 9 N multiply-adds per node in all.
template <int N, bool OnTheFly, bool StageE, bool Bulk>
TESSERA_HOST_DEVICE void hex_thread_element_nodal(TeamContext& ctx, const Args& a, const ThreadElementTables<N>& t) {
  constexpr int ND = N * N * N;
  const index_t e = ctx.item();
  double u[ND];  // node (z, y, x) at (z * N + y) * N + x
  const auto gather = [&](const ThreadElementData& d, int c) {
TESSERA_INTERP_UNROLL
    for (int n = 0; n < ND; ++n)
      u[n] = d.idx ? a.u[c * a.nn + d.idx[n]] : d.ev ? d.ev[c * ND + n] : a.u[(e * a.comps + c) * ND + n];
  };
  ThreadElementData d;
  // the first component's values are gathered while D (the vertices) is still arriving
  if (thread_element_data<ND, StageE, Bulk>(ctx, a, true, OnTheFly, d, [&](const ThreadElementData& dd) { gather(dd, 0); })) {
    double Xr[24];
    const double* Xc = OnTheFly ? thread_element_coefficients<true>(a, d.f, Xr) : nullptr;
    for (int c = 0; c < a.comps; ++c) {
      if (c > 0) gather(d, c);
      double r[ND] = {};
TESSERA_INTERP_UNROLL
      for (int z = 0; z < N; ++z)
TESSERA_INTERP_UNROLL
        for (int y = 0; y < N; ++y)
TESSERA_INTERP_UNROLL
          for (int x = 0; x < N; ++x) {
            double gx = 0, gy = 0, gz = 0;
TESSERA_INTERP_UNROLL
            for (int i = 0; i < N; ++i) {
              gx += t.G[i][x] * u[(z * N + y) * N + i];
              gy += t.G[i][y] * u[(z * N + i) * N + x];
              gz += t.G[i][z] * u[(i * N + y) * N + x];
            }
            double F[6];  // (00, 01, 02, 11, 12, 22)
            const int q = (z * N + y) * N + x;
            if constexpr (OnTheFly) {
              const double xi[3] = {t.x[x], t.x[y], t.x[z]};
              point_factor<3, true, true>(a, e, q, Xc, xi, F);
            } else {
TESSERA_INTERP_UNROLL
              for (int k = 0; k < 6; ++k) F[k] = d.f[k * ND + q];
            }
            const double fx = F[0] * gx + F[1] * gy + F[2] * gz;
            const double fy = F[1] * gx + F[3] * gy + F[4] * gz;
            const double fz = F[2] * gx + F[4] * gy + F[5] * gz;
TESSERA_INTERP_UNROLL
            for (int i = 0; i < N; ++i) {
              r[(z * N + y) * N + i] += t.G[i][x] * fx;
              r[(z * N + i) * N + x] += t.G[i][y] * fy;
              r[(i * N + y) * N + x] += t.G[i][z] * fz;
            }
          }
TESSERA_INTERP_UNROLL
      for (int n = 0; n < ND; ++n)
        if (d.ev) d.ev[c * ND + n] = r[n];  // component c's values are in u: its row is free
        else store_result<false>(a, d.idx, e, c, n, r[n]);
    }
  }
  thread_element_store<ND>(ctx, a, d);
}

/// The lanes of an element in hex_column_nodal: half a warp up to 16 columns (N <= 4), else a warp.
TESSERA_HOST_DEVICE constexpr int column_lanes(int n) { return n * n <= 16 ? 16 : 32; }
/// Whether hex_column_nodal with n nodes per direction stores the nodes of one element
/// (scatter_result) or adds every entry. It stores at n = 5 (p = 4, where NodeOrdering::Auto
/// numbers shared nodes first). At n = 4 (p = 3, first-touch numbering, no node ever stored) it
/// adds without the test: with it BP6 at p = 3 ran 0.97x stored and 0.98x on the fly (H100,
/// two rounds against cf34732; docs/benchmarks/operators.md).
TESSERA_HOST_DEVICE constexpr bool column_stores(int n) { return n >= 5; }

/// Diffusion with the points at the nodes (Gauss-Lobatto, q = p + 1) with N nodes per direction
/// (4, 5: p = 3, 4) on the GPU: one element per column_lanes(N) threads (half a warp at N = 4,
/// a warp with 25 of its lanes busy at N = 5), thread (y, x) keeping the element's z column of
/// values (z = 0..N-1) in registers. The x and y derivatives, and their transposes, read the
/// other columns' values by warp shuffles among the element's lanes; the z ones stay in the
/// thread: no shared memory and no barrier. Stored, the threads of a z slab read consecutive
/// doubles of each of D's 6 rows; on the fly the element's lanes form its 24 monomial
/// coefficients (two per lane) and pass them round by shuffles, and each thread computes D at
/// its N points; either way D is formed once for all components. a.chunk elements per item,
/// one after the other. Device code only: the CPU runs the kernel of the bound
/// (HexColumnNodal). Launched for several components only (operator_columns): on scalar
/// fields at p = 3 the point-column kernel, whose gathers are in flight while the previous
/// element is computed, was as fast or faster.
template <int N, bool OnTheFly>
TESSERA_HOST_DEVICE void hex_column_nodal(TeamContext& ctx, const Args& a, const ThreadElementTables<N>& t) {
#if defined(TESSERA_DEVICE_CODE)
  constexpr int S = N * N, ND = S * N, W = column_lanes(N);  // per z slab, per element; lanes
  // thread (y, x) of the element's W lanes; the lanes past S (N = 5: 25..31) take part in the
  // shuffles as lane S - 1 and store nothing
  const int lane = std::min(ctx.thread_x(), S - 1), x = lane % N, y = lane / N;
  const bool column = ctx.thread_x() < S;
  // this element's lanes: the block's items are consecutive runs of W threads
  const unsigned mask = W == 32 ? 0xFFFFFFFFu : 0xFFFFu << ((ctx.local_item() & 1) * 16);
  const auto from = [&](double v, int src) { return __shfl_sync(mask, v, src, W); };
  // table entries for this thread's x and y: Gc*[i] = G(i, x) (derivative at x of l_i),
  // Gr*[i] = G(x, i) (the transposed sum's weights); G(i, q) = l_i'(x_q)
  double Gcx[N], Gcy[N], Grx[N], Gry[N], xx = 0, xy = 0;
TESSERA_INTERP_UNROLL
  for (int k = 0; k < N; ++k) {
    if (k == x) xx = t.x[k];
    if (k == y) xy = t.x[k];
TESSERA_INTERP_UNROLL
    for (int i = 0; i < N; ++i) {
      if (k == x) {
        Gcx[i] = t.G[i][k];
        Grx[i] = t.G[k][i];
      }
      if (k == y) {
        Gcy[i] = t.G[i][k];
        Gry[i] = t.G[k][i];
      }
    }
  }
  const index_t first = ctx.item() * a.chunk;
#pragma unroll 1
  for (int j = 0; j < a.chunk; ++j) {
    // every thread of the half warp stays for the shuffles: past the last element it computes
    // the last one again and stores nothing
    const bool valid = first + j < a.ne;
    const index_t e = valid ? first + j : a.ne - 1;
    int id[N] = {};
    if (a.idx)
TESSERA_INTERP_UNROLL
      for (int z = 0; z < N; ++z) id[z] = a.idx[e * ND + z * S + lane];
    // D at the column's points, (00, 01, 02, 11, 12, 22), once for every component
    double F[N][6];
    if constexpr (OnTheFly) {
      const double* Xe = a.X + e * 24;
      // coefficient k from lane k % 16 (k < 16: its first, else its second)
      const int l16 = lane & 15;
      const double c0 = multilinear_coefficient<3>(a, Xe, l16);
      const double c1 = l16 < 8 ? multilinear_coefficient<3>(a, Xe, l16 + 16) : 0.0;
      double Xc[24];
TESSERA_INTERP_UNROLL
      for (int k = 0; k < 24; ++k) Xc[k] = from(k < 16 ? c0 : c1, k & 15);
TESSERA_INTERP_UNROLL
      for (int z = 0; z < N; ++z) {
        const double xi[3] = {xx, xy, t.x[z]};
        point_factor<3, true, true>(a, e, z * S + lane, Xc, xi, F[z]);
      }
    } else {
TESSERA_INTERP_UNROLL
      for (int z = 0; z < N; ++z)
TESSERA_INTERP_UNROLL
        for (int k = 0; k < 6; ++k) F[z][k] = a.qdata[(e * 6 + k) * ND + z * S + lane];
    }
#pragma unroll 1
    for (int c = 0; c < a.comps; ++c) {
      double u[N], r[N] = {}, fz[N];
TESSERA_INTERP_UNROLL
      for (int z = 0; z < N; ++z)
        u[z] = a.idx ? a.u[c * a.nn + id[z]] : a.u[(e * a.comps + c) * ND + z * S + lane];
TESSERA_INTERP_UNROLL
      for (int z = 0; z < N; ++z) {
        double gx = 0, gy = 0, gz = 0;
TESSERA_INTERP_UNROLL
        for (int i = 0; i < N; ++i) {
          gx += Gcx[i] * from(u[z], y * N + i);
          gy += Gcy[i] * from(u[z], i * N + x);
          gz += t.G[i][z] * u[i];
        }
        const double* D = F[z];
        const double fx = D[0] * gx + D[1] * gy + D[2] * gz;
        const double fy = D[1] * gx + D[3] * gy + D[4] * gz;
        fz[z] = D[2] * gx + D[4] * gy + D[5] * gz;
TESSERA_INTERP_UNROLL
        for (int i = 0; i < N; ++i) r[z] += Grx[i] * from(fx, y * N + i) + Gry[i] * from(fy, i * N + x);
      }
TESSERA_INTERP_UNROLL
      for (int z = 0; z < N; ++z)
TESSERA_INTERP_UNROLL
        for (int i = 0; i < N; ++i) r[z] += t.G[z][i] * fz[i];
      if (valid && column)
TESSERA_INTERP_UNROLL
        for (int z = 0; z < N; ++z) {
          if (!a.idx) a.y_out[(e * a.comps + c) * ND + z * S + lane] = r[z];
          else if constexpr (column_stores(N)) scatter_result(a, c, id[z], r[z]);
          else atomic_add(&a.y_out[c * a.nn + id[z]], r[z], a.concurrent);
        }
    }
  }
#else
  (void)ctx;
  (void)a;
  (void)t;
#endif
}

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
template <bool OnTheFly, int MaxN, bool Nodal, int N1 = 0, int M1 = 0>
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
  // Merged, an item needs m1 m1 Rn doubles less (Interpolator::operator_shape sizes both).
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
            point_factor<3, true, false>(a, e, q, nullptr, nullptr, F);
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
    // step (a.prefetch_qdata: stored, Gauss points, large blocks; run_operator decides, and
    // the instances that can never prefetch carry no code for it)
    if constexpr (!OnTheFly && !Nodal)
      if (a.prefetch_qdata && c == 0) prefetch_point_data(ctx, a, e, 6);
  });
}

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

/// Hexahedra: as quad_operator, in variants by MaxN, a compile-time bound on the nodes and
/// points per direction (0: run-time sizes, any p and q). With a bound every contraction loop
/// is unrolled, the Reused rows and columns live in registers, and diffusion takes collocated
/// gradients (colloc_*); docs/benchmarks/operators.md has the measurements. The bounded mass
/// kernels are hex_mass_lines. The run-time variant carries the x, y and z derivative parts
/// through shared buffers.
template <bool Diffusion, bool OnTheFly, int MaxN, bool Nodal = false>
TESSERA_HOST_DEVICE void hex_operator(TeamContext& ctx, const Args& a) {
  const int n1 = a.nd1, m1 = a.nq1, nd = a.nd, nq = a.nq;
  const int N = loop_bound<MaxN>(n1), M = loop_bound<MaxN>(m1);
  constexpr bool full = MaxN == 0;                     // run-time bounds: no predicate needed
  constexpr bool Split = Diffusion && MaxN == 0;       // derivative parts carried separately
  constexpr bool Colloc = Diffusion && MaxN > 0;       // collocated gradients
  static_assert(!Nodal || Colloc, "the points-at-the-nodes path is a collocated-gradient diffusion");
  static_assert(Diffusion || MaxN == 0, "the bounded mass kernels run by lines (hex_mass_lines)");
  constexpr Fetch d_fetch = HexPolicy<Diffusion, OnTheFly, MaxN, Nodal>::d_fetch;
  // rows of length S (row_length): B (n1, S), Dq (m1, S), A (n1, n1, S), C0 (n1, m1, S), P and
  // Vs (m1, m1, S); S = m1 in the run-time-size kernel
  constexpr int Row = HexPolicy<Diffusion, OnTheFly, MaxN, Nodal>::rows;
  constexpr int GatherRow = HexPolicy<Diffusion, OnTheFly, MaxN, Nodal>::gather_rows;
  const int S = row_length<Row>(m1), np = padded_points<Row>(a);
  auto B = ctx.shared_common<double>(n1 * S);
  auto G = ctx.shared_common<double>(Split ? n1 * m1 : 0);
  auto xq = ctx.shared_common<double>(m1);
  auto Dq = ctx.shared_common<double>(Colloc ? m1 * S : 0);
  auto idxs = ctx.shared_item<int>(a.chunk * nd);
  // the gathered nodal values; with the points at the nodes they are the point values, in rows
  // of GatherRow where gather_rows pads them
  auto ub = ctx.shared_item<double>(gather_buffers(a.chunk, a.comps) * (GatherRow > 0 ? n1 * n1 * GatherRow : nd));
  // x stage, reused by the transposed y stage; Colloc: also the point data P (3, np) between
  auto A = ctx.shared_item<double>(Colloc ? 3 * np : n1 * n1 * S);
  auto Ag = ctx.shared_item<double>(Split ? n1 * n1 * m1 : 0);
  // y stage, reused by the transposed z stage; Colloc: the point values Vs (np) before (not
  // with the points at the nodes: u holds them)
  auto C0 = ctx.shared_item<double>(Colloc ? (Nodal ? 0 : np) : n1 * m1 * S);
  auto C1 = ctx.shared_item<double>(Split ? n1 * m1 * m1 : 0);
  auto C2 = ctx.shared_item<double>(Split ? n1 * m1 * m1 : 0);
  auto P0 = ctx.shared_item<double>(MaxN == 0 ? nq : 0);  // point data of the run-time variant
  auto P1 = ctx.shared_item<double>(Split ? nq : 0);
  auto P2 = ctx.shared_item<double>(Split ? nq : 0);
  auto Xs = ctx.shared_item<double>(OnTheFly ? a.chunk * a.nv * a.sdim : 0);
  auto Xc = ctx.shared_item<double>(OnTheFly ? 8 * 3 : 0);  // read after the next barriers
  if constexpr (Row == 0) {
    load_tensor_tables(ctx, a, B, G, xq);
    if (Colloc)
      for (int i : ctx.block_threads(m1 * m1)) Dq[i] = a.Dq[i];
  } else {
    load_padded_rows(ctx, B.data(), a.Bt, n1, m1, S);
    for (int i : ctx.block_threads(m1)) xq[i] = a.x1d[i];
    if (Colloc) load_padded_rows(ctx, Dq.data(), a.Dq, m1, m1, S);
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
      // forward x: A(k, j, qx) = sum_i B(i, qx) u(k, j, i); Ag with G
      if (valid)
        for (int j : ctx.threads_y(n1))
          for (int qx : ctx.threads_x(m1)) {
            Reused<MaxN> b, g;
            b.load(&B[qx], S, n1);
            if (Split) g.load(&G[qx], m1, n1);
            for (int k : ctx.threads_z(n1)) {
              double s = 0, t = 0;
              const double* row = u + (k * n1 + j) * n1;
TESSERA_INTERP_UNROLL
              for (int i = 0; i < N; ++i)
                if (full || i < n1) {
                  s += b[i] * row[i];
                  if (Split) t += g[i] * row[i];
                }
              A[(k * n1 + j) * S + qx] = s;
              if (Split) Ag[(k * n1 + j) * m1 + qx] = t;
            }
          }
      ctx.sync();
      if constexpr (Colloc) {
        // A -> point values (C0's region) -> P (A's region) -> transposed gradient and z into C0
        if (valid)
          for (int qy : ctx.threads_y(m1))
            for (int qx : ctx.threads_x(m1)) colloc_values<MaxN, Row>(a, qx, qy, B.data(), A.data(), C0.data());
        ctx.sync();
        if (valid)
          for (int qy : ctx.threads_y(m1))
            for (int qx : ctx.threads_x(m1))
              colloc_gradient<OnTheFly, MaxN, Row, Row, d_fetch>(a, e, qx, qy, Dq.data(), xq.data(), Xc.data(),
                                                                   C0.data(), A.data());
        ctx.sync();
        if (valid)
          for (int qy : ctx.threads_y(m1))
            for (int qx : ctx.threads_x(m1))
              colloc_transpose<MaxN, Row, false>(a, e, c, el_idxs, qx, qy, B.data(), Dq.data(), A.data(), C0.data());
      } else {
        // forward y: C0(k, qy, qx) = sum_j B(j, qy) A(k, j, qx); C1 = B Ag (d/dx); C2 = G A (d/dy)
        if (valid)
          for (int qy : ctx.threads_y(m1))
            for (int qx : ctx.threads_x(m1)) {
              Reused<MaxN> b, g;
              b.load(&B[qy], m1, n1);
              if (Diffusion) g.load(&G[qy], m1, n1);
              for (int k : ctx.threads_z(n1)) {
                double s = 0, gx = 0, gy = 0;
TESSERA_INTERP_UNROLL
                for (int j = 0; j < N; ++j)
                  if (full || j < n1) {
                    const double aj = A[(k * n1 + j) * m1 + qx];
                    s += b[j] * aj;
                    if (Diffusion) {
                      gx += b[j] * Ag[(k * n1 + j) * m1 + qx];
                      gy += g[j] * aj;
                    }
                  }
                const int at = (k * m1 + qy) * m1 + qx;
                C0[at] = s;
                if (Diffusion) {
                  C1[at] = gx;
                  C2[at] = gy;
                }
              }
            }
        ctx.sync();
        // forward z and the point factor: the (qy, qx) column of C over k is reused for every qz
        if (valid)
          for (int qy : ctx.threads_y(m1))
            for (int qx : ctx.threads_x(m1)) {
              Reused<MaxN> c0, c1, c2;
              c0.load(&C0[qy * m1 + qx], m1 * m1, n1);
              if (Diffusion) {
                c1.load(&C1[qy * m1 + qx], m1 * m1, n1);
                c2.load(&C2[qy * m1 + qx], m1 * m1, n1);
              }
              for (int qz : ctx.threads_z(m1)) {
                double s = 0, gx = 0, gy = 0, gz = 0;
TESSERA_INTERP_UNROLL
                for (int k = 0; k < N; ++k)
                  if (full || k < n1) {
                    const double bk = B[k * m1 + qz];
                    s += bk * c0[k];
                    if (Diffusion) {
                      gx += bk * c1[k];
                      gy += bk * c2[k];
                      gz += G[k * m1 + qz] * c0[k];
                    }
                  }
                const int q = (qz * m1 + qy) * m1 + qx;
                const double xi[3] = {xq[qx], xq[qy], xq[qz]};
                double F[6];  // (00, 01, 02, 11, 12, 22)
                point_factor<3, Diffusion, OnTheFly>(a, e, q, Xc.data(), xi, F);
                if (Diffusion) {
                  P0[q] = F[0] * gx + F[1] * gy + F[2] * gz;
                  P1[q] = F[1] * gx + F[3] * gy + F[4] * gz;
                  P2[q] = F[2] * gx + F[4] * gy + F[5] * gz;
                } else {
                  P0[q] = F[0] * s;
                }
              }
            }
        ctx.sync();
        // transposed z: the (qy, qx) column of P over qz is reused for every k; C0 gets the value
        // and d/dz parts, C1 d/dx, C2 d/dy
        if (valid)
          for (int qy : ctx.threads_y(m1))
            for (int qx : ctx.threads_x(m1)) {
              Reused<MaxN> p0, p1, p2;
              p0.load(&P0[qy * m1 + qx], m1 * m1, m1);
              if (Diffusion) {
                p1.load(&P1[qy * m1 + qx], m1 * m1, m1);
                p2.load(&P2[qy * m1 + qx], m1 * m1, m1);
              }
              for (int k : ctx.threads_z(n1)) {
                double t0 = 0, t1 = 0, t2 = 0;
TESSERA_INTERP_UNROLL
                for (int qz = 0; qz < M; ++qz)
                  if (full || qz < m1) {
                    const double bk = B[k * m1 + qz];
                    if (Diffusion) {
                      t0 += G[k * m1 + qz] * p2[qz];
                      t1 += bk * p0[qz];
                      t2 += bk * p1[qz];
                    } else {
                      t0 += bk * p0[qz];
                    }
                  }
                const int at = (k * m1 + qy) * m1 + qx;
                C0[at] = t0;
                if (Diffusion) {
                  C1[at] = t1;
                  C2[at] = t2;
                }
              }
            }
      }
      ctx.sync();
      // transposed y into A (value/z and d/dy parts) and Ag (d/dx): the j rows of B and G reused
      if (valid)
        for (int j : ctx.threads_y(n1))
          for (int qx : ctx.threads_x(m1)) {
            Reused<MaxN> b, g;
            b.load(&B[j * S], 1, m1);
            if (Split) g.load(&G[j * m1], 1, m1);
            for (int k : ctx.threads_z(n1)) {
              double s0 = 0, s1 = 0;
TESSERA_INTERP_UNROLL
              for (int qy = 0; qy < M; ++qy)
                if (full || qy < m1) {
                  const int at = (k * m1 + qy) * S + qx;
                  s0 += b[qy] * C0[at];
                  if (Split) {
                    s0 += g[qy] * C2[at];
                    s1 += b[qy] * C1[at];
                  }
                }
              A[(k * n1 + j) * S + qx] = s0;
              if (Split) Ag[(k * n1 + j) * m1 + qx] = s1;
            }
          }
      ctx.sync();
      // transposed x and the scatter: the i rows of B and G reused
      if (valid)
        for (int j : ctx.threads_y(n1))
          for (int i : ctx.threads_x(n1)) {
            Reused<MaxN> b, g;
            b.load(&B[i * S], 1, m1);
            if (Split) g.load(&G[i * m1], 1, m1);
            for (int k : ctx.threads_z(n1)) {
              double s = 0;
              const int row = (k * n1 + j) * S;
TESSERA_INTERP_UNROLL
              for (int qx = 0; qx < M; ++qx)
                if (full || qx < m1) {
                  s += b[qx] * A[row + qx];
                  if (Split) s += g[qx] * Ag[row + qx];
                }
              store_result(a, el_idxs, e, c, (k * n1 + j) * n1 + i, s);
            }
          }
    });
  }
}

// ------------------------------------------------------------------ triangles, tetrahedra

/// The most elements an item of simplex_operator takes at once.
inline constexpr int kSimplexMaxChunk = 4;

/// Row length of simplex_operator's tables in shared memory: the points padded to an odd count,
/// so that the transposed sums (thread i reading row i) fall in distinct banks.
TESSERA_HOST_DEVICE constexpr int simplex_table_row(int nq) { return nq | 1; }

/// Reads K consecutive doubles (16-byte aligned where K is even): by pairs on the GPU, so that
/// one shared-memory load serves two of simplex_operator's elements.
template <int K>
TESSERA_HOST_DEVICE inline void simplex_load_k(const double* p, double (&v)[K]) {
#if defined(TESSERA_DEVICE_CODE)
  if constexpr (K % 2 == 0) {
TESSERA_INTERP_UNROLL
    for (int k = 0; k < K; k += 2) {
      const double2 w = *reinterpret_cast<const double2*>(p + k);
      v[k] = w.x;
      v[k + 1] = w.y;
    }
  } else
#endif
  {
TESSERA_INTERP_UNROLL
    for (int k = 0; k < K; ++k) v[k] = p[k];
  }
}

/// Triangles and tetrahedra (Dim = 2, 3) with dense tables, one fused pass per item of K
/// elements (K = 1 or kSimplexMaxChunk; a.chunk <= K of them are the item's): gather the
/// elements' nodal values, the field (mass) or its reference gradient (diffusion) at every
/// point, times w det J or D (stored, or on the fly from the vertices: the map is affine, so
/// J is constant per element and D = w_q |det J| J^-1 J^-T), then the transposed sums into
/// store_result (always added: no node is stored). Each table entry read serves the item's K
/// elements, in registers. Tables in shared memory when a.tables_shared (rows of
/// simplex_table_row), else read from device memory: the forward sums from a.Bt / a.Gt
/// (nd, nq), the transposed ones from a.Bq / a.Gq (nq, nd), both coalesced. Mass reads only
/// B, diffusion only G.
template <bool Diffusion, bool OnTheFly, int Dim, int K>
TESSERA_HOST_DEVICE void simplex_operator_k(TeamContext& ctx, const Args& a) {
  constexpr int NF = Dim * (Dim + 1) / 2, NG = Diffusion ? Dim : 1;
  const int nd = a.nd, nq = a.nq, comps = a.comps;
  const bool shared = a.tables_shared;
  const int R = shared ? simplex_table_row(nq) : nq;
  auto T = ctx.shared_common<double>(shared ? NG * nd * R : 0);
  auto idxs = ctx.shared_item<int>(a.idx ? K * nd : 0);
  auto U = ctx.shared_item<double>(K * comps * nd);
  auto P = ctx.shared_item<double>(K * comps * NG * nq);
  auto Xs = ctx.shared_item<double>(OnTheFly ? K * a.nv * a.sdim : 0);
  auto M = ctx.shared_item<double>(OnTheFly ? K * NF : 0);
  if (shared) {
    const double* src = Diffusion ? a.Gt : a.Bt;
    for (int n : ctx.block_threads(NG * nd * nq)) T[(n / nq) * R + n % nq] = src[n];
  }
  const ItemElements it = item_elements(ctx, a);
  load_item_maps(ctx, a, it, idxs, Xs);  // ends with a barrier (the tables too)
  const int cnt = it.count;
  // U and P keep the item's K elements interleaved, element fastest: one vector load gives a
  // node's or a point's values for all of them (simplex_load_k). Elements past the count are
  // zero, so the sums run over all K without a test.
  for (int n : ctx.item_threads(K * nd)) {
    const int k = n / nd, i = n - k * nd;
    const index_t e = it.first + k;
    for (int c = 0; c < comps; ++c)
      U[(c * nd + i) * K + k] = k >= cnt ? 0.0 : a.idx ? a.u[c * a.nn + idxs[n]] : a.u[(e * comps + c) * nd + i];
  }
  if constexpr (OnTheFly)
    for (int k : ctx.item_threads(cnt)) {
      double J[3][3];
      simplex_jacobian<Dim>(&Xs[k * a.nv * a.sdim], J);
      const double det = determinant<Dim>(J), adet = det < 0 ? -det : det;
      if constexpr (Diffusion) {
        double Ji[3][3];
        invert<Dim>(J, Ji);
        packed_metric<Dim>(Ji, adet, &M[k * NF]);
      } else {
        M[k * NF] = adet;
      }
    }
  ctx.sync();
  // In device memory each sum reads the layout whose consecutive entries its threads take: on
  // the GPU (threads over q, then over i) (nd, nq) forward and (nq, nd) transposed; on the CPU,
  // where a thread's loop runs over i forward and over q transposed, the other way round.
#if defined(TESSERA_DEVICE_CODE)
  constexpr bool host = false;
#else
  constexpr bool host = true;
#endif
  const auto table = [&](int d, int i, int q, bool transposed) {
    if (shared) return T[(d * nd + i) * R + q];
    if (transposed != host) return (Diffusion ? a.Gq : a.Bq)[(d * nq + q) * nd + i];
    return (Diffusion ? a.Gt : a.Bt)[(d * nd + i) * nq + q];
  };
  const int pstride = nq * K;  // P: ((c * NG + d) * nq + q) * K + k
  for (int c = 0; c < comps; ++c)
    for (int q : ctx.item_threads(nq)) {
      double acc[K][NG] = {};
      for (int i = 0; i < nd; ++i) {
        double t[NG], u[K];
TESSERA_INTERP_UNROLL
        for (int d = 0; d < NG; ++d) t[d] = table(d, i, q, false);
        simplex_load_k<K>(&U[(c * nd + i) * K], u);
TESSERA_INTERP_UNROLL
        for (int k = 0; k < K; ++k)
TESSERA_INTERP_UNROLL
          for (int d = 0; d < NG; ++d) acc[k][d] += t[d] * u[k];
      }
TESSERA_INTERP_UNROLL
      for (int k = 0; k < K; ++k) {
        double* out = &P[(c * NG * nq + q) * K + k];
        if (k >= cnt) {
TESSERA_INTERP_UNROLL
          for (int d = 0; d < NG; ++d) out[d * pstride] = 0.0;
          continue;
        }
        const index_t e = it.first + k;
        double D[NF];
TESSERA_INTERP_UNROLL
        for (int f = 0; f < (Diffusion ? NF : 1); ++f)
          D[f] = OnTheFly ? a.wq[q] * M[k * NF + f] : a.qdata[(e * (Diffusion ? NF : 1) + f) * nq + q];
        if constexpr (Diffusion) {
          const double* g = acc[k];
          if constexpr (Dim == 2) {
            out[0] = D[0] * g[0] + D[1] * g[1];
            out[pstride] = D[1] * g[0] + D[2] * g[1];
          } else {
            out[0] = D[0] * g[0] + D[1] * g[1] + D[2] * g[2];
            out[pstride] = D[1] * g[0] + D[3] * g[1] + D[4] * g[2];
            out[2 * pstride] = D[2] * g[0] + D[4] * g[1] + D[5] * g[2];
          }
        } else {
          out[0] = D[0] * acc[k][0];
        }
      }
    }
  ctx.sync();
  for (int c = 0; c < comps; ++c)
    for (int i : ctx.item_threads(nd)) {
      double s[K] = {};
      for (int q = 0; q < nq; ++q) {
        // the table entries first, so that their loads (each behind the table lambda's
        // branches) are in flight together; the form that read one entry and then its sums
        // ran tetrahedra BP3 stored at p = 6..8 at 0.68-0.80x of the one before (H100)
        double t[NG];
TESSERA_INTERP_UNROLL
        for (int d = 0; d < NG; ++d) t[d] = table(d, i, q, true);
TESSERA_INTERP_UNROLL
        for (int d = 0; d < NG; ++d) {
          double v[K];
          simplex_load_k<K>(&P[((c * NG + d) * nq + q) * K], v);
TESSERA_INTERP_UNROLL
          for (int k = 0; k < K; ++k) s[k] += t[d] * v[k];
        }
      }
TESSERA_INTERP_UNROLL
      for (int k = 0; k < K; ++k)
        if (k < cnt) store_result<false>(a, a.idx ? &idxs[k * nd] : nullptr, it.first + k, c, i, s[k]);
    }
}

/// simplex_operator_k with one element per item, or up to kSimplexMaxChunk (a.chunk).
template <bool Diffusion, bool OnTheFly, int Dim>
TESSERA_HOST_DEVICE void simplex_operator(TeamContext& ctx, const Args& a) {
  if (a.chunk <= 1) simplex_operator_k<Diffusion, OnTheFly, Dim, 1>(ctx, a);
  else simplex_operator_k<Diffusion, OnTheFly, Dim, kSimplexMaxChunk>(ctx, a);
}

/// The smallest hexahedron bucket bound (4, 6, ..., 16) that holds n nodes or points per
/// direction, 0 past 16 (operator_bound without its TESSERA_OPERATOR_BOUND override).
TESSERA_HOST_DEVICE constexpr int hex_bound_for(int n) { return n <= 4 ? 4 : n <= 16 ? (n + 1) / 2 * 2 : 0; }

/// The compile-time bound on the nodes and points per direction of the hexahedron operator
/// variant that serves these sizes (4, 6, 8, 10, 12, 14 or 16), or 0 for the run-time-size variant
/// (larger sizes and quadrilaterals). For comparisons, TESSERA_OPERATOR_BOUND=0 forces the
/// run-time variant and TESSERA_OPERATOR_BOUND=b the smallest bound of at least b that fits. The
/// bounded variants run one thread per (qy, qx) point column (threads z = 1), with their own
/// shared-memory layout (Interpolator::operator_shape mirrors it).
int operator_bound(Geometry g, int nd1, int nq1);
/// Whether the hexahedron operator for these sizes is diffusion with the points at the nodes at
/// p = 3 or 4 (4 or 5 nodes and points per direction) on a field of several components, which
/// on the GPU runs one element per half warp or warp (hex_column_nodal: no shared memory); not
/// when TESSERA_OPERATOR_BOUND is set. On the CPU the kernel of its bound serves it.
bool operator_columns(Geometry g, bool diffusion, int nd1, int nq1, bool nodal, int comps);
/// Whether the hexahedron operator for these sizes runs one thread per element: p = 1 with 2
/// or 3 points per direction (hex_thread_element with N = 2; with the points at the nodes,
/// diffusion: hex_thread_element_nodal), diffusion at p = 2 with the points at the nodes
/// (hex_thread_element_nodal with N = 3) and, in the global apply (not `element`), mass at
/// p = 2 with at most 4 points per direction (hex_thread_element with N = 3); not when
/// TESSERA_OPERATOR_BOUND is set (comparisons with the bounded kernels) or the opt-in matrix
/// products are chosen. Its launches take one element per item and block-wide rows in the
/// common region (Interpolator::operator_shape).
bool operator_thread_element(Geometry g, bool diffusion, int nd1, int nq1, bool nodal, bool element);
/// The shared rows of the one-thread-per-element kernel that launch_operator picks for these
/// sizes (operator_thread_element), as its functor declares them: whether element by element
/// it stages the E-vectors (thread_element_data's StageE) and whether its stored data may
/// arrive in a bulk copy (Bulk: an mbarrier in the common region). Interpolator::
/// operator_shape sizes the common region with them. global_block: the elements per block it
/// runs fastest with in the global apply where that is not Interpolator::
/// operator_elements_per_block's general rule (0: the rule).
struct ThreadElementLayout {
  bool stages_evector;
  bool bulk;
  int global_block;
};
ThreadElementLayout operator_thread_element_layout(Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1,
                                                   bool nodal_points, int comps, bool element);
/// Whether the hexahedron mass operator runs by small matrix products (hex_mass_matmul) for
/// these sizes: n1, m1 <= 16 and TESSERA_OPERATOR_MATMUL=1 (opt-in, on every backend: on the
/// H100 it ran at 0.14-0.89x of the line kernels, docs/benchmarks/operators.md).
bool operator_matmul(Geometry g, bool diffusion, int nd1, int nq1);
/// Whether the hexahedron operator for these sizes runs its line kernel with the sizes fixed at
/// compile time (HexExact): q = p + 2 (n1 nodes, n1 + 1 points per direction) mass at p = 3..10
/// and diffusion at p = 2..10, and diffusion with the points at the nodes (nodal) at p = 3 and
/// 6..10; not when TESSERA_OPERATOR_BOUND is set, with the matrix products, or with
/// TESSERA_OPERATOR_EXACT=0 (comparisons). The one-thread-per-element and column kernels take
/// precedence where they serve (operator_thread_element, operator_columns). On the CPU stored
/// Gauss diffusion at p <= 5, on the GPU stored nodal diffusion at p = 10, keep the bound's
/// kernel (operator_exact_here in operator_kernels.cpp).
bool operator_exact_sizes(Geometry g, bool diffusion, int nd1, int nq1, bool nodal);
/// Launches the compile-time-size kernel of a.nd1, a.nq1 (operator_exact_sizes must hold), and
/// the most threads per block it can use (operator_kernels_exact.cpp: its own translation unit,
/// compiled beside operator_kernels.cpp). Every other query answers with the bound's kernel,
/// whose shared layout and launch shape it shares, except operator_rows: the nodal kernel at
/// p = 3 runs by lines where its bound's (4) runs point columns.
void launch_operator_exact(const char* label, const Exec& exec, const Teams& t, bool diffusion, const Args& a);
int operator_exact_max_threads(const Exec& exec, bool diffusion, bool on_the_fly, int nd1, int nq1, bool nodal);
/// Whether the kernel that launch_operator picks for these sizes declares items_may_spill
/// (core/team.hpp): its element buffers then go to device memory when they do not fit the
/// block's shared memory (the run-time-size kernels, above 16 nodes or points per direction:
/// diffusion from p = 15 with q = p + 2 and from p = 16 with Gauss-Lobatto points, on the GPU).
bool operator_may_spill(Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1, bool nodal_points, int comps,
                        bool element);
/// The row lengths (row_length) of the shared buffers of the kernel that launch_operator picks
/// for these sizes on exec: its point data (HexPolicy::rows, or nq1 where its rows are not padded)
/// and its gathered nodal values (HexPolicy::gather_rows, or nd1).
struct OperatorRows {
  int points;
  int gathered;
  bool lines;     // HexPolicy::lines: the kernel runs by lines (hex_mass_lines, hex_diffusion_lines), its own layout
  bool matmul;    // hex_mass_matmul, its own layout and two warps per element
  bool exact;     // the kernel with the sizes fixed at compile time (mass_lines_layout)
};
OperatorRows operator_rows(const Exec& exec, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1,
                           bool nodal_points, int comps, bool element);
/// Launches the fused operator of geometry g (any of the four; triangles and tetrahedra:
/// simplex_operator); a.on_the_fly selects the geometry source.
void launch_operator(const char* label, const Exec& exec, const Teams& t, Geometry g, bool diffusion, const Args& a);
/// The most threads per block the kernel that launch_operator picks for these sizes can use
/// (its register use sets it on the GPU; INT_MAX on the CPU).
int operator_max_threads(const Exec& exec, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1,
                         bool nodal_points, int comps, bool element);

}  // namespace tessera::fem::interp_detail
