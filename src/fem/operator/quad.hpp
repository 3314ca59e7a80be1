#pragma once
// The fused operator on quadrilaterals: run-time sizes, sum factorization through shared
// memory (the x and y stages of contraction_stages.hpp, the point factor, the transposes).

#include "common.hpp"

namespace tessera::fem::interp_detail {

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

}  // namespace tessera::fem::interp_detail
