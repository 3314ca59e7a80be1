#pragma once
// The fused operator on quadrilaterals: run-time sizes, sum factorization through shared
// memory (the x and y stages shared with interpolation, interpolate_kernels.hpp, the point
// factor, the transposed stages).

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
    quad_stage_x<Diffusion>(ctx, valid, n1, m1, B.data(), G.data(), u, A.data(), Ag.data());
    quad_stage_y<Diffusion>(ctx, valid, n1, m1, B.data(), G.data(), A.data(), Ag.data(),
                            [&](int qx, int qy, double s, double gx, double gy) {
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
    });
    ctx.sync();
    // transposed: mass takes P0 back as a value; diffusion P0 along x and P1 along y
    quad_stage_yt<!Diffusion, Diffusion>(ctx, valid, n1, m1, B.data(), G.data(), P0.data(), P0.data(), P1.data(),
                                         A.data(), Ag.data());
    quad_stage_xt<Diffusion>(ctx, valid, n1, m1, B.data(), G.data(), A.data(), Ag.data(), [&](int n, double s) {
      store_result(a, &idxs[(e - ctx.item() * a.chunk) * nd], e, c, n, s);
    });
  });
}

}  // namespace tessera::fem::interp_detail
