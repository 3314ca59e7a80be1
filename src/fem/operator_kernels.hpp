#pragma once
// Fused mass and diffusion operators on quadrilaterals and hexahedra: for each element, the
// gather (prefetched, as in the interpolation kernels), sum-factorized interpolation to the
// quadrature points, the point-wise factor (w det J, or the packed symmetric D = w det J
// J^-1 J^-T), the transposed contractions and an atomic scatter-add into y, in one launch.
// Shared buffers are reused between the forward and the transposed stages.

#include "interpolate_kernels.hpp"

namespace tessera::fem::interp_detail {

/// y[i] += v, atomically where threads run concurrently.
TESSERA_HOST_DEVICE inline void atomic_add(double* p, double v, bool concurrent) {
#if defined(TESSERA_DEVICE_CODE)
  (void)concurrent;
  atomicAdd(p, v);
#else
  if (concurrent) std::atomic_ref<double>(*p).fetch_add(v, std::memory_order_relaxed);
  else *p += v;
#endif
}

/// The first-order map of a quadrilateral (Dim 2) or hexahedron (Dim 3) in monomial form,
/// x_r(xi) = sum over subsets S of the directions of Xc[S * Dim + r] prod_{d in S} xi_d, from
/// the element's vertices Xe (vertex v at the reference corner a.corner[v]); item threads
/// share the 2^Dim * Dim coefficients. Its Jacobian then costs Dim * Dim * 2^(Dim-1) multiply-
/// adds per point instead of a sum over the vertices.
template <int Dim>
TESSERA_HOST_DEVICE inline void multilinear_coefficients(TeamContext& ctx, const Args& a, const double* Xe,
                                                         double* Xc) {
  constexpr int NV = 1 << Dim;
  for (int t : ctx.item_threads(NV * Dim)) {
    const int S = t / Dim, r = t - S * Dim;
    double sum = 0;
    for (int v = 0; v < NV; ++v) {
      double w = 1;
TESSERA_INTERP_UNROLL
      for (int d = 0; d < Dim; ++d) {
        const bool in_s = (S >> d) & 1, at_one = a.corner[v][d] != 0;
        w *= in_s ? (at_one ? 1.0 : -1.0) : (at_one ? 0.0 : 1.0);  // (1 - xi) or xi, split by degree
      }
      sum += w * Xe[v * Dim + r];
    }
    Xc[t] = sum;
  }
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
      int k = 0;
TESSERA_INTERP_UNROLL
      for (int r = 0; r < Dim; ++r)
TESSERA_INTERP_UNROLL
        for (int c = r; c < Dim; ++c) {
          double s = 0;
TESSERA_INTERP_UNROLL
          for (int m = 0; m < Dim; ++m) s += Ji[r][m] * Ji[c][m];
          F[k++] = wdet * s;
        }
    }
  }
}

/// The operator's result s for local node i of element e, component c: scatter-added into the
/// global vector, or stored into the E-vector (ne, comps, nd) when the kernel runs element by
/// element (a.idx == nullptr).
TESSERA_HOST_DEVICE inline void store_result(const Args& a, const int* idxs, index_t e, int c, int i, double s) {
  if (a.idx) atomic_add(&a.y_out[c * a.nn + idxs[i]], s, a.concurrent);
  else a.y_out[(e * a.comps + c) * a.nd + i] = s;
}

/// Stored factors: at the start of element e's step, hints the next element's factors (NF
/// numbers per point, contiguous) into the cache, so that the point stage does not wait for
/// DRAM.
template <int NF>
TESSERA_HOST_DEVICE inline void prefetch_next_factors(TeamContext& ctx, const Args& a, index_t e) {
  if (a.prefetch == 0 || e + 1 >= a.ne) return;
  const double* next = a.qdata + (e + 1) * NF * a.nq;
  const int lines = (NF * a.nq * 8 + 127) / 128 + 1;  // +1: the block need not start on a line
  for (int l : ctx.item_threads(lines)) prefetch(next + l * 16, a.prefetch == 2);
}

/// Quadrilaterals: Diffusion selects the operator (else mass); OnTheFly computes the point
/// factors from the vertices instead of reading them.
template <bool Diffusion, bool OnTheFly>
TESSERA_HOST_DEVICE void quad_operator(TeamContext& ctx, const Args& a) {
  const int n1 = a.nd1, m1 = a.nq1, nd = a.nd, nq = a.nq;
  auto B = ctx.shared_common<double>(n1 * m1);
  auto G = ctx.shared_common<double>(Diffusion ? n1 * m1 : 0);
  auto xq = ctx.shared_common<double>(m1);
  auto idxs = ctx.shared_item<int>(a.chunk * nd);
  auto ub = ctx.shared_item<double>(2 * nd);
  auto A = ctx.shared_item<double>(n1 * m1);   // forward x stage; reused by the transposed y stage
  auto Ag = ctx.shared_item<double>(Diffusion ? n1 * m1 : 0);
  auto P0 = ctx.shared_item<double>(nq);       // point data: value or d/dxi_0
  auto P1 = ctx.shared_item<double>(Diffusion ? nq : 0);
  auto Xs = ctx.shared_item<double>(OnTheFly ? a.chunk * a.nv * a.sdim : 0);
  auto Xc = ctx.shared_item<double>(OnTheFly ? 4 * 2 : 0);  // read after the next barrier
  load_tensor_tables(ctx, a, B, G, xq);
  pipelined_steps(ctx, a, idxs, ub, Xs, [&](bool valid, index_t e, int c, const double* u, const double* Xe) {
    if (!OnTheFly && valid && c == 0) prefetch_next_factors<Diffusion ? 3 : 1>(ctx, a, e);
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

/// Hexahedra: as quad_operator.
template <bool Diffusion, bool OnTheFly>
TESSERA_HOST_DEVICE void hex_operator(TeamContext& ctx, const Args& a) {
  const int n1 = a.nd1, m1 = a.nq1, nd = a.nd, nq = a.nq;
  auto B = ctx.shared_common<double>(n1 * m1);
  auto G = ctx.shared_common<double>(Diffusion ? n1 * m1 : 0);
  auto xq = ctx.shared_common<double>(m1);
  auto idxs = ctx.shared_item<int>(a.chunk * nd);
  auto ub = ctx.shared_item<double>(2 * nd);
  auto A = ctx.shared_item<double>(n1 * n1 * m1);  // x stage; reused by the transposed y stage
  auto Ag = ctx.shared_item<double>(Diffusion ? n1 * n1 * m1 : 0);
  auto C0 = ctx.shared_item<double>(n1 * m1 * m1);  // y stage; reused by the transposed z stage
  auto C1 = ctx.shared_item<double>(Diffusion ? n1 * m1 * m1 : 0);
  auto C2 = ctx.shared_item<double>(Diffusion ? n1 * m1 * m1 : 0);
  auto P0 = ctx.shared_item<double>(nq);
  auto P1 = ctx.shared_item<double>(Diffusion ? nq : 0);
  auto P2 = ctx.shared_item<double>(Diffusion ? nq : 0);
  auto Xs = ctx.shared_item<double>(OnTheFly ? a.chunk * a.nv * a.sdim : 0);
  auto Xc = ctx.shared_item<double>(OnTheFly ? 8 * 3 : 0);  // read after the next barriers
  load_tensor_tables(ctx, a, B, G, xq);
  pipelined_steps(ctx, a, idxs, ub, Xs, [&](bool valid, index_t e, int c, const double* u, const double* Xe) {
    if (!OnTheFly && valid && c == 0) prefetch_next_factors<Diffusion ? 6 : 1>(ctx, a, e);
    if (OnTheFly && valid) multilinear_coefficients<3>(ctx, a, Xe, Xc.data());
    if (valid)
      for (int k : ctx.threads_z(n1))
        for (int j : ctx.threads_y(n1))
          for (int qx : ctx.threads_x(m1)) {
            double s = 0, g = 0;
            const int row = (k * n1 + j) * n1;
            TESSERA_INTERP_UNROLL4
            for (int i = 0; i < n1; ++i) {
              s += B[i * m1 + qx] * u[row + i];
              if (Diffusion) g += G[i * m1 + qx] * u[row + i];
            }
            A[(k * n1 + j) * m1 + qx] = s;
            if (Diffusion) Ag[(k * n1 + j) * m1 + qx] = g;
          }
    ctx.sync();
    if (valid)
      for (int k : ctx.threads_z(n1))
        for (int qy : ctx.threads_y(m1))
          for (int qx : ctx.threads_x(m1)) {
            double s = 0, gx = 0, gy = 0;
            TESSERA_INTERP_UNROLL4
            for (int j = 0; j < n1; ++j) {
              const double b = B[j * m1 + qy], aj = A[(k * n1 + j) * m1 + qx];
              if (Diffusion) {
                gx += b * Ag[(k * n1 + j) * m1 + qx];
                gy += G[j * m1 + qy] * aj;
              }
              s += b * aj;
            }
            const int at = (k * m1 + qy) * m1 + qx;
            C0[at] = s;
            if (Diffusion) {
              C1[at] = gx;
              C2[at] = gy;
            }
          }
    ctx.sync();
    if (valid)
      for (int qz : ctx.threads_z(m1))
        for (int qy : ctx.threads_y(m1))
          for (int qx : ctx.threads_x(m1)) {
            double s = 0, gx = 0, gy = 0, gz = 0;
            TESSERA_INTERP_UNROLL4
            for (int k = 0; k < n1; ++k) {
              const double b = B[k * m1 + qz];
              const int at = (k * m1 + qy) * m1 + qx;
              s += b * C0[at];
              if (Diffusion) {
                gx += b * C1[at];
                gy += b * C2[at];
                gz += G[k * m1 + qz] * C0[at];
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
    ctx.sync();
    // transposed z stage into C0 (value and d/dz part), C1 (d/dx), C2 (d/dy)
    if (valid)
      for (int k : ctx.threads_z(n1))
        for (int qy : ctx.threads_y(m1))
          for (int qx : ctx.threads_x(m1)) {
            double t0 = 0, t1 = 0, t2 = 0;
            TESSERA_INTERP_UNROLL4
            for (int qz = 0; qz < m1; ++qz) {
              const int at = (qz * m1 + qy) * m1 + qx;
              if (Diffusion) {
                t0 += G[k * m1 + qz] * P2[at];
                t1 += B[k * m1 + qz] * P0[at];
                t2 += B[k * m1 + qz] * P1[at];
              } else {
                t0 += B[k * m1 + qz] * P0[at];
              }
            }
            const int at = (k * m1 + qy) * m1 + qx;
            C0[at] = t0;
            if (Diffusion) {
              C1[at] = t1;
              C2[at] = t2;
            }
          }
    ctx.sync();
    // transposed y stage into A (value/z and d/dy parts) and Ag (d/dx)
    if (valid)
      for (int k : ctx.threads_z(n1))
        for (int j : ctx.threads_y(n1))
          for (int qx : ctx.threads_x(m1)) {
            double s0 = 0, s1 = 0;
            TESSERA_INTERP_UNROLL4
            for (int qy = 0; qy < m1; ++qy) {
              const int at = (k * m1 + qy) * m1 + qx;
              s0 += B[j * m1 + qy] * C0[at];
              if (Diffusion) {
                s0 += G[j * m1 + qy] * C2[at];
                s1 += B[j * m1 + qy] * C1[at];
              }
            }
            A[(k * n1 + j) * m1 + qx] = s0;
            if (Diffusion) Ag[(k * n1 + j) * m1 + qx] = s1;
          }
    ctx.sync();
    if (valid)
      for (int k : ctx.threads_z(n1))
        for (int j : ctx.threads_y(n1))
          for (int i : ctx.threads_x(n1)) {
            double s = 0;
            const int row = (k * n1 + j) * m1;
            TESSERA_INTERP_UNROLL4
            for (int qx = 0; qx < m1; ++qx) {
              s += B[i * m1 + qx] * A[row + qx];
              if (Diffusion) s += G[i * m1 + qx] * Ag[row + qx];
            }
            store_result(a, &idxs[(e - ctx.item() * a.chunk) * nd], e, c, (k * n1 + j) * n1 + i, s);
          }
  });
}

/// Hexahedra with at most MaxN nodes and points per direction (a compile-time bound: every
/// contraction loop is unrolled to MaxN with the run-time size as a predicate). Each thread
/// keeps the 1-D table row or the data column that is the same for all its iterations of the
/// outer loop in registers, so that a multiply-add loads one operand from shared memory
/// instead of two. Same stages, buffers and results as hex_operator.
template <bool Diffusion, bool OnTheFly, int MaxN>
TESSERA_HOST_DEVICE void hex_operator_fixed(TeamContext& ctx, const Args& a) {
  const int n1 = a.nd1, m1 = a.nq1, nd = a.nd, nq = a.nq;
  auto B = ctx.shared_common<double>(n1 * m1);
  auto G = ctx.shared_common<double>(Diffusion ? n1 * m1 : 0);
  auto xq = ctx.shared_common<double>(m1);
  auto idxs = ctx.shared_item<int>(a.chunk * nd);
  auto ub = ctx.shared_item<double>(2 * nd);
  auto A = ctx.shared_item<double>(n1 * n1 * m1);
  auto Ag = ctx.shared_item<double>(Diffusion ? n1 * n1 * m1 : 0);
  auto C0 = ctx.shared_item<double>(n1 * m1 * m1);
  auto C1 = ctx.shared_item<double>(Diffusion ? n1 * m1 * m1 : 0);
  auto C2 = ctx.shared_item<double>(Diffusion ? n1 * m1 * m1 : 0);
  auto P0 = ctx.shared_item<double>(nq);
  auto P1 = ctx.shared_item<double>(Diffusion ? nq : 0);
  auto P2 = ctx.shared_item<double>(Diffusion ? nq : 0);
  auto Xs = ctx.shared_item<double>(OnTheFly ? a.chunk * a.nv * a.sdim : 0);
  auto Xc = ctx.shared_item<double>(OnTheFly ? 8 * 3 : 0);  // read after the next barriers
  load_tensor_tables(ctx, a, B, G, xq);
  pipelined_steps(ctx, a, idxs, ub, Xs, [&](bool valid, index_t e, int c, const double* u, const double* Xe) {
    if (!OnTheFly && valid && c == 0) prefetch_next_factors<Diffusion ? 6 : 1>(ctx, a, e);
    if (OnTheFly && valid) multilinear_coefficients<3>(ctx, a, Xe, Xc.data());
    // forward x: A(k, j, qx) = sum_i B(i, qx) u(k, j, i); Ag with G
    if (valid)
      for (int j : ctx.threads_y(n1))
        for (int qx : ctx.threads_x(m1)) {
          double b[MaxN] = {}, g[MaxN] = {};
TESSERA_INTERP_UNROLL
          for (int i = 0; i < MaxN; ++i)
            if (i < n1) {
              b[i] = B[i * m1 + qx];
              if (Diffusion) g[i] = G[i * m1 + qx];
            }
          for (int k : ctx.threads_z(n1)) {
            double s = 0, t = 0;
            const double* row = u + (k * n1 + j) * n1;
TESSERA_INTERP_UNROLL
            for (int i = 0; i < MaxN; ++i)
              if (i < n1) {
                s += b[i] * row[i];
                if (Diffusion) t += g[i] * row[i];
              }
            A[(k * n1 + j) * m1 + qx] = s;
            if (Diffusion) Ag[(k * n1 + j) * m1 + qx] = t;
          }
        }
    ctx.sync();
    // forward y: C0(k, qy, qx) = sum_j B(j, qy) A(k, j, qx); C1 = B Ag (d/dx); C2 = G A (d/dy)
    if (valid)
      for (int qy : ctx.threads_y(m1))
        for (int qx : ctx.threads_x(m1)) {
          double b[MaxN] = {}, g[MaxN] = {};
TESSERA_INTERP_UNROLL
          for (int j = 0; j < MaxN; ++j)
            if (j < n1) {
              b[j] = B[j * m1 + qy];
              if (Diffusion) g[j] = G[j * m1 + qy];
            }
          for (int k : ctx.threads_z(n1)) {
            double s = 0, gx = 0, gy = 0;
TESSERA_INTERP_UNROLL
            for (int j = 0; j < MaxN; ++j)
              if (j < n1) {
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
    // forward z and the point factor: the (qy, qx) column of C over k stays in registers
    if (valid)
      for (int qy : ctx.threads_y(m1))
        for (int qx : ctx.threads_x(m1)) {
          double c0[MaxN] = {}, c1[MaxN] = {}, c2[MaxN] = {};
TESSERA_INTERP_UNROLL
          for (int k = 0; k < MaxN; ++k)
            if (k < n1) {
              const int at = (k * m1 + qy) * m1 + qx;
              c0[k] = C0[at];
              if (Diffusion) {
                c1[k] = C1[at];
                c2[k] = C2[at];
              }
            }
          for (int qz : ctx.threads_z(m1)) {
            double s = 0, gx = 0, gy = 0, gz = 0;
TESSERA_INTERP_UNROLL
            for (int k = 0; k < MaxN; ++k)
              if (k < n1) {
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
    // transposed z: the (qy, qx) column of P over qz stays in registers; C0 gets the value and
    // d/dz parts, C1 d/dx, C2 d/dy
    if (valid)
      for (int qy : ctx.threads_y(m1))
        for (int qx : ctx.threads_x(m1)) {
          double p0[MaxN] = {}, p1[MaxN] = {}, p2[MaxN] = {};
TESSERA_INTERP_UNROLL
          for (int qz = 0; qz < MaxN; ++qz)
            if (qz < m1) {
              const int at = (qz * m1 + qy) * m1 + qx;
              p0[qz] = P0[at];
              if (Diffusion) {
                p1[qz] = P1[at];
                p2[qz] = P2[at];
              }
            }
          for (int k : ctx.threads_z(n1)) {
            double t0 = 0, t1 = 0, t2 = 0;
TESSERA_INTERP_UNROLL
            for (int qz = 0; qz < MaxN; ++qz)
              if (qz < m1) {
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
    ctx.sync();
    // transposed y into A (value/z and d/dy parts) and Ag (d/dx): the j row of B and G in registers
    if (valid)
      for (int j : ctx.threads_y(n1))
        for (int qx : ctx.threads_x(m1)) {
          double b[MaxN] = {}, g[MaxN] = {};
TESSERA_INTERP_UNROLL
          for (int qy = 0; qy < MaxN; ++qy)
            if (qy < m1) {
              b[qy] = B[j * m1 + qy];
              if (Diffusion) g[qy] = G[j * m1 + qy];
            }
          for (int k : ctx.threads_z(n1)) {
            double s0 = 0, s1 = 0;
TESSERA_INTERP_UNROLL
            for (int qy = 0; qy < MaxN; ++qy)
              if (qy < m1) {
                const int at = (k * m1 + qy) * m1 + qx;
                s0 += b[qy] * C0[at];
                if (Diffusion) {
                  s0 += g[qy] * C2[at];
                  s1 += b[qy] * C1[at];
                }
              }
            A[(k * n1 + j) * m1 + qx] = s0;
            if (Diffusion) Ag[(k * n1 + j) * m1 + qx] = s1;
          }
        }
    ctx.sync();
    // transposed x and the scatter: the i row of B and G in registers
    if (valid)
      for (int j : ctx.threads_y(n1))
        for (int i : ctx.threads_x(n1)) {
          double b[MaxN] = {}, g[MaxN] = {};
TESSERA_INTERP_UNROLL
          for (int qx = 0; qx < MaxN; ++qx)
            if (qx < m1) {
              b[qx] = B[i * m1 + qx];
              if (Diffusion) g[qx] = G[i * m1 + qx];
            }
          for (int k : ctx.threads_z(n1)) {
            double s = 0;
            const int row = (k * n1 + j) * m1;
TESSERA_INTERP_UNROLL
            for (int qx = 0; qx < MaxN; ++qx)
              if (qx < m1) {
                s += b[qx] * A[row + qx];
                if (Diffusion) s += g[qx] * Ag[row + qx];
              }
            store_result(a, &idxs[(e - ctx.item() * a.chunk) * nd], e, c, (k * n1 + j) * n1 + i, s);
          }
        }
  });
}

/// Launches the fused operator of geometry g (quadrilateral or hexahedron); a.on_the_fly
/// selects the geometry source.
void launch_operator(const char* label, const Exec& exec, const Teams& t, Geometry g, bool diffusion, const Args& a);
/// The most threads per block the kernel that launch_operator picks for these sizes can use
/// (its register use sets it on the GPU; INT_MAX on the CPU).
int operator_max_threads(const Exec& exec, Geometry g, bool diffusion, bool on_the_fly, int nd1, int nq1);

}  // namespace tessera::fem::interp_detail
