#pragma once
// Hexahedron kernels without shared-memory stages per point: one thread per element at p = 1, 2
// (hex_thread_element, hex_thread_element_nodal) and one element per half warp or warp for
// diffusion with the points at the nodes at p = 3, 4 on several components (hex_column_nodal).

#include "common.hpp"

namespace tessera::fem::interp_detail {

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
/// into rows of the common region, one row per element (FusedOperator::shape sizes
/// it); the CPU reads them in place (a copy would be one more pass over memory). Sets d to
/// thread ctx.item()'s element. With Bulk (stored data, sm_90) a full block's data arrives in
/// one bulk copy (bulk_copy_start) into rows of exactly its length, 2-way bank-conflicted where
/// the odd rows are conflict-free: on the H100 it raised BK5 at p = 2 from 83% to 95% of the
/// roofline, for one thread's instruction instead of the block's row copies (the partial last
/// block copies by threads). With an Early callable the maps (E-vector rows) and the data
/// are two copy groups: early(d) runs once the first has arrived, while the second is still
/// on its way (a gather issued there overlaps it). Has barriers on the GPU, for every thread;
/// returns false for the threads past the last element. ElementFactors: the stored data is one
/// factor per element (Args::element_factors), (diffusion ? 6 : 1) doubles of the row.
template <int ND, bool StageE = false, bool Bulk = false, bool ElementFactors = false, class Early = NoEarlyWork>
TESSERA_HOST_DEVICE inline bool thread_element_data(TeamContext& ctx, const Args& a, bool diffusion, bool on_the_fly,
                                                    ThreadElementData& d, const Early& early = {}) {
  static_assert(!(ElementFactors && Bulk), "one factor per element: no bulk copy");
  // staged doubles per element
  const int per = on_the_fly ? 8 * 3 : (diffusion ? 6 : 1) * (ElementFactors ? 1 : a.nq);
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
/// scatter are per thread. ElementFactors (stored): the element's one factor (Args::
/// element_factors) in registers, times the rule's weight (a.wq, the same address for every
/// thread) at each point.
template <int N, bool Diffusion, bool OnTheFly, bool ElementFactors = false>
TESSERA_HOST_DEVICE void hex_thread_element(TeamContext& ctx, const Args& a, const ThreadElementTables<N>& t) {
  static_assert(!(ElementFactors && OnTheFly));
  constexpr int NF = Diffusion ? 6 : 1, M = N + 1, N2 = N * N, ND = N2 * N;
  const int m1 = a.nq1, nq = a.nq;
  const index_t e = ctx.item();
  ThreadElementData d;
  if (!thread_element_data<ND, false, false, ElementFactors>(ctx, a, Diffusion, OnTheFly, d)) return;  // no barrier below
  const double* f = d.f;
  [[maybe_unused]] double fe[NF];
  if constexpr (ElementFactors)
TESSERA_INTERP_UNROLL
    for (int k = 0; k < NF; ++k) fe[k] = f[k];
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
          } else if constexpr (ElementFactors) {
            const double w = a.wq[q];
TESSERA_INTERP_UNROLL
            for (int k = 0; k < NF; ++k) F[k] = w * fe[k];
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
/// ElementFactors (stored): the element's packed factor times the rule's weight at each node.
template <int N, bool OnTheFly, bool StageE, bool Bulk, bool ElementFactors = false>
TESSERA_HOST_DEVICE void hex_thread_element_nodal(TeamContext& ctx, const Args& a, const ThreadElementTables<N>& t) {
  static_assert(!(ElementFactors && OnTheFly));
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
  if (thread_element_data<ND, StageE, Bulk, ElementFactors>(ctx, a, true, OnTheFly, d,
                                                            [&](const ThreadElementData& dd) { gather(dd, 0); })) {
    double Xr[24];
    const double* Xc = OnTheFly ? thread_element_coefficients<true>(a, d.f, Xr) : nullptr;
    [[maybe_unused]] double fe[6];
    if constexpr (ElementFactors)
TESSERA_INTERP_UNROLL
      for (int k = 0; k < 6; ++k) fe[k] = d.f[k];
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
            } else if constexpr (ElementFactors) {
              const double w = a.wq[q];
TESSERA_INTERP_UNROLL
              for (int k = 0; k < 6; ++k) F[k] = w * fe[k];
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
  const auto from = [&](double v, int src) { return warp_shuffle(mask, v, src, W); };
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

}  // namespace tessera::fem::interp_detail
