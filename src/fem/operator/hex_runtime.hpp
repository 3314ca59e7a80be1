#pragma once
// The hexahedron operator with no size known at compile time (any p and q): each 1-D stage runs
// one thread per pair of free indices, and each thread computes a tile of kRuntimeTile outputs
// along the third index, so that an entry read from shared memory serves the whole tile.
// Diffusion takes collocated gradients (values to the points, then the 1-D derivative matrix of
// the points), and with the points at the nodes (B = I) skips the value stages.

#include "common.hpp"

namespace tessera::fem::interp_detail {

/// Outputs per thread and stage of the run-time-size kernel.
inline constexpr int kRuntimeTile = 4;

/// A tile's entries first + t, clamped to n - 1 (the tail re-reads the last entry instead of
/// testing); only the entries below n are stored.
struct RuntimeTile {
  int first, n;
  TESSERA_HOST_DEVICE int at(int t) const { return first + t < n ? first + t : n - 1; }
  TESSERA_HOST_DEVICE bool stores(int t) const { return first + t < n; }
};

/// f(y, x, tile) over the item's threads: y < ny, x < nx, tiles of kRuntimeTile along nz.
template <class F>
TESSERA_HOST_DEVICE inline void runtime_tiles(TeamContext& ctx, int ny, int nx, int nz, const F& f) {
  for (int y : ctx.threads_y(ny))
    for (int x : ctx.threads_x(nx))
      for (int zt : ctx.threads_z((nz + kRuntimeTile - 1) / kRuntimeTile)) f(y, x, RuntimeTile{zt * kRuntimeTile, nz});
}

/// The element buffers of the run-time-size kernel, in carving order; FusedOperator::
/// shape sizes the same list.
struct RuntimeSizes {
  int A, C, V, P;  // x stage (n1, n1, m1); y stage (n1, m1, m1); point values (m1^3); point data
};
TESSERA_HOST_DEVICE inline RuntimeSizes runtime_sizes(bool diffusion, bool nodal, int n1, int m1) {
  const int q = m1 * m1 * m1, skip = diffusion && nodal;  // B = I: no value stages
  return {skip ? 0 : n1 * n1 * m1, skip ? 0 : n1 * m1 * m1, diffusion && !nodal ? q : 0, (diffusion ? 3 : 1) * q};
}

/// One stage: out(y, x, z, sum_r term(y, x, z, r)) for y < ny, x < nx, z < nz, r < K, each
/// thread a tile along z (entries of term that do not depend on z are read once per tile);
/// nothing where !valid (an item past the last element).
template <class Term, class Out>
TESSERA_HOST_DEVICE inline void runtime_stage(TeamContext& ctx, bool valid, int ny, int nx, int nz, int K,
                                              const Term& term, const Out& out) {
  if (!valid) return;
  runtime_tiles(ctx, ny, nx, nz, [&](int y, int x, RuntimeTile z) {
    double s[kRuntimeTile] = {};
    for (int r = 0; r < K; ++r)
TESSERA_INTERP_UNROLL
      for (int t = 0; t < kRuntimeTile; ++t) s[t] += term(y, x, z.at(t), r);
TESSERA_INTERP_UNROLL
    for (int t = 0; t < kRuntimeTile; ++t)
      if (z.stores(t)) out(y, x, z.at(t), s[t]);
  });
}

/// The three value stages to the points: u (n1, n1, n1) -> A -> C -> at(qz, qy, qx, value),
/// with barriers between them.
template <class At>
TESSERA_HOST_DEVICE inline void runtime_to_points(TeamContext& ctx, const Args& a, bool valid, const double* B,
                                                  const double* u, double* A, double* C, const At& at) {
  const int n1 = a.nd1, m1 = a.nq1;
  runtime_stage(  // A(k, j, qx) = sum_i B(i, qx) u(k, j, i)
      ctx, valid, n1, m1, n1, n1, [&](int j, int qx, int k, int i) { return B[i * m1 + qx] * u[(k * n1 + j) * n1 + i]; },
      [&](int j, int qx, int k, double v) { A[(k * n1 + j) * m1 + qx] = v; });
  ctx.sync();
  runtime_stage(  // C(k, qy, qx) = sum_j B(j, qy) A(k, j, qx)
      ctx, valid, m1, m1, n1, n1, [&](int qy, int qx, int k, int j) { return B[j * m1 + qy] * A[(k * n1 + j) * m1 + qx]; },
      [&](int qy, int qx, int k, double v) { C[(k * m1 + qy) * m1 + qx] = v; });
  ctx.sync();
  runtime_stage(  // sum_k B(k, qz) C(k, qy, qx)
      ctx, valid, m1, m1, m1, n1, [&](int qy, int qx, int qz, int k) { return B[k * m1 + qz] * C[(k * m1 + qy) * m1 + qx]; },
      [&](int qy, int qx, int qz, double v) { at(qz, qy, qx, v); });
}

/// The transposed value stages: X (m1, m1, m1) at the points -> C -> A -> the element's result
/// at node (k, j, i) (store_result).
TESSERA_HOST_DEVICE inline void runtime_from_points(TeamContext& ctx, const Args& a, bool valid, const double* B,
                                                    const double* X, double* C, double* A, const int* idxs, index_t e,
                                                    int c) {
  const int n1 = a.nd1, m1 = a.nq1;
  runtime_stage(  // C(k, qy, qx) = sum_qz B(k, qz) X(qz, qy, qx)
      ctx, valid, m1, m1, n1, m1, [&](int qy, int qx, int k, int qz) { return B[k * m1 + qz] * X[(qz * m1 + qy) * m1 + qx]; },
      [&](int qy, int qx, int k, double v) { C[(k * m1 + qy) * m1 + qx] = v; });
  ctx.sync();
  runtime_stage(  // A(k, j, qx) = sum_qy B(j, qy) C(k, qy, qx)
      ctx, valid, n1, m1, n1, m1, [&](int j, int qx, int k, int qy) { return B[j * m1 + qy] * C[(k * m1 + qy) * m1 + qx]; },
      [&](int j, int qx, int k, double v) { A[(k * n1 + j) * m1 + qx] = v; });
  ctx.sync();
  runtime_stage(  // sum_qx B(i, qx) A(k, j, qx)
      ctx, valid, n1, n1, n1, m1, [&](int j, int i, int k, int qx) { return B[i * m1 + qx] * A[(k * n1 + j) * m1 + qx]; },
      [&](int j, int i, int k, double v) { store_result(a, idxs, e, c, (k * n1 + j) * n1 + i, v); });
}

/// Hexahedron mass (Diffusion = false) and diffusion, stored or on-the-fly geometry, nd1 nodes
/// and nq1 points per direction at run time. Shared: B, D (diffusion), the 1-D points; per item
/// the maps, the gathered values, then runtime_sizes' buffers, the vertices.
template <bool Diffusion, bool OnTheFly>
TESSERA_HOST_DEVICE void hex_operator_runtime(TeamContext& ctx, const Args& a) {
  constexpr int T = kRuntimeTile;
  const int n1 = a.nd1, m1 = a.nq1, nd = a.nd;
  const bool nodal = Diffusion && a.nodal_points;
  const RuntimeSizes z = runtime_sizes(Diffusion, a.nodal_points, n1, m1);
  auto B = ctx.shared_common<double>(n1 * m1);
  auto D = ctx.shared_common<double>(Diffusion ? m1 * m1 : 0);
  auto xq = ctx.shared_common<double>(m1);
  auto idxs = ctx.shared_item<int>(a.chunk * nd);
  auto ub = ctx.shared_item<double>(gather_buffers(a.chunk, a.comps) * nd);
  auto A = ctx.shared_item<double>(z.A);
  auto C = ctx.shared_item<double>(z.C);
  auto V = ctx.shared_item<double>(z.V);
  auto P = ctx.shared_item<double>(z.P);
  auto Xs = ctx.shared_item<double>(OnTheFly ? a.chunk * a.nv * a.sdim : 0);
  auto Xc = ctx.shared_item<double>(OnTheFly ? 8 * 3 : 0);
  for (int i : ctx.block_threads(n1 * m1)) B[i] = a.Bt[i];
  if (Diffusion)
    for (int i : ctx.block_threads(m1 * m1)) D[i] = a.Dq[i];
  for (int i : ctx.block_threads(m1)) xq[i] = a.x1d[i];
  const int q3 = m1 * m1 * m1;
  pipelined_steps(ctx, a, idxs, ub, Xs, [&](bool valid, index_t e, int c, const double* u, const double* Xe) {
    if (OnTheFly && valid) multilinear_coefficients<3>(ctx, a, Xe, Xc.data());
    const int* el_idxs = idxs.data() + (e - ctx.item() * a.chunk) * nd;
    const auto factor = [&](int qz, int qy, int qx, double* F) {
      const double xi[3] = {xq[qx], xq[qy], xq[qz]};
      point_factor<3, Diffusion, OnTheFly>(a, e, (qz * m1 + qy) * m1 + qx, Xc.data(), xi, F);
    };
    if constexpr (!Diffusion) {
      runtime_to_points(ctx, a, valid, B.data(), u, A.data(), C.data(), [&](int qz, int qy, int qx, double v) {
        double F[1];
        factor(qz, qy, qx, F);
        P[(qz * m1 + qy) * m1 + qx] = F[0] * v;
      });
      ctx.sync();
      runtime_from_points(ctx, a, valid, B.data(), P.data(), C.data(), A.data(), el_idxs, e, c);
    } else {
      // the values at the points: the gathered ones where the points are the nodes
      if (!nodal) {
        runtime_to_points(ctx, a, valid, B.data(), u, A.data(), C.data(),
                          [&](int qz, int qy, int qx, double v) { V[(qz * m1 + qy) * m1 + qx] = v; });
        ctx.sync();
      }
      if (OnTheFly && nodal) ctx.sync();  // Xc is read at the points
      const double* Vp = nodal ? u : V.data();
      // P(r, q) = (D grad v)_r at the points, grad v by the derivative matrix D(a, r) = l_r'(x_a)
      if (valid)
        runtime_tiles(ctx, m1, m1, m1, [&](int qy, int qx, RuntimeTile zt) {
          double gx[T] = {}, gy[T] = {}, gz[T] = {};
          for (int r = 0; r < m1; ++r) {
            const double dx = D[qx * m1 + r], dy = D[qy * m1 + r], vz = Vp[(r * m1 + qy) * m1 + qx];
TESSERA_INTERP_UNROLL
            for (int t = 0; t < T; ++t) {
              const int qz = zt.at(t);
              gx[t] += dx * Vp[(qz * m1 + qy) * m1 + r];
              gy[t] += dy * Vp[(qz * m1 + r) * m1 + qx];
              gz[t] += D[qz * m1 + r] * vz;
            }
          }
TESSERA_INTERP_UNROLL
          for (int t = 0; t < T; ++t)
            if (zt.stores(t)) {
              const int qz = zt.at(t), q = (qz * m1 + qy) * m1 + qx;
              double F[6];  // (00, 01, 02, 11, 12, 22)
              factor(qz, qy, qx, F);
              P[q] = F[0] * gx[t] + F[1] * gy[t] + F[2] * gz[t];
              P[q3 + q] = F[1] * gx[t] + F[3] * gy[t] + F[4] * gz[t];
              P[2 * q3 + q] = F[2] * gx[t] + F[4] * gy[t] + F[5] * gz[t];
            }
        });
      ctx.sync();
      // the transposed gradient at the points: the result where the points are the nodes, else
      // into V (dead since the gradients) for the transposed value stages
      runtime_stage(
          ctx, valid, m1, m1, m1, m1,
          [&](int qy, int qx, int qz, int r) {
            return D[r * m1 + qx] * P[(qz * m1 + qy) * m1 + r] + D[r * m1 + qy] * P[q3 + (qz * m1 + r) * m1 + qx] +
                   D[r * m1 + qz] * P[2 * q3 + (r * m1 + qy) * m1 + qx];
          },
          [&](int qy, int qx, int qz, double v) {
            const int q = (qz * m1 + qy) * m1 + qx;
            if (nodal) store_result(a, el_idxs, e, c, q, v);
            else V[q] = v;
          });
      if (!nodal) {
        ctx.sync();
        runtime_from_points(ctx, a, valid, B.data(), V.data(), C.data(), A.data(), el_idxs, e, c);
      }
    }
  });
}

}  // namespace tessera::fem::interp_detail
