#pragma once
// The fused operator on triangles and tetrahedra: dense tables (basis values and gradients at
// the points), one or kSimplexMaxChunk elements per item.

#include "common.hpp"

namespace tessera::fem::interp_detail {

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

}  // namespace tessera::fem::interp_detail
