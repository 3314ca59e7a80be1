#pragma once
// Kernel bodies of the interpolation family (interpolate.hpp): sum factorization on
// quadrilaterals and hexahedra, dense tables on triangles and tetrahedra, forward
// (global vector -> quadrature points, gather fused) and transpose (points -> E-vector).
// Each body runs inside a team launch; the shared-memory carving here and the sizes in
// interp_shared() below must stay in the same order.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "tessera/core/async.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/core/team.hpp"
#include "tessera/fem/geometry.hpp"

// Full unrolling of the small fixed-size loops (nvcc's pragma; GCC's equivalent on the host).
#if defined(__CUDACC__)
#define TESSERA_INTERP_UNROLL _Pragma("unroll")
#define TESSERA_INTERP_UNROLL4 _Pragma("unroll 4")
#else
#define TESSERA_INTERP_UNROLL _Pragma("GCC unroll 8")
#define TESSERA_INTERP_UNROLL4
#endif
// TESSERA_INTERP_UNROLL4: the tensor contractions over run-time sizes are unrolled by 4 on the
// GPU so that several shared-memory loads are in flight per thread (H200: 5-10% faster values;
// the simplex loops were 10-18% slower with it and are left alone).

namespace tessera::fem::interp_detail {

/// Where an array at quadrature points lives: entry (e, c, d, q) at e*se + c*sc + d*sd + q.
struct PointMap {
  double* p = nullptr;
  index_t se = 0, sc = 0, sd = 0;
  TESSERA_HOST_DEVICE index_t at(index_t e, int c, int d, int q) const { return e * se + c * sc + d * sd + q; }
};

/// Everything a kernel reads (plain pointers: the functor is copied to the device).
struct Args {
  int dim = 0, sdim = 0, comps = 1, nd = 0, nq = 0, nd1 = 0, nq1 = 0, nv = 0;
  index_t ne = 0, nn = 0;
  const int* idx = nullptr;     // (ne, nd); fused operators: nullptr for E-vector input and output
  const double* Bt = nullptr;   // tensor (nd1, nq1); simplex forward (nd, nq), transpose (nq, nd)
  const double* Gt = nullptr;   // tensor (nd1, nq1); simplex forward (dim, nd, nq), transpose (dim, nq, nd)
  const double* Bq = nullptr;   // simplex fused operators: the transposed tables (nq, nd) and (dim, nq, nd),
  const double* Gq = nullptr;   // read by the transposed sums when the tables stay in device memory
  const double* x1d = nullptr;  // tensor: 1-D points (nq1)
  const double* Dq = nullptr;   // tensor: (nq1, nq1) D(a, r) = l_r'(x_a), Lagrange derivatives on the 1-D points
  bool nodal_points = false;    // tensor: the 1-D points are the nodes (B = I; Gauss-Lobatto with q = p + 1)
  bool mirror_symmetric = false;  // tensor: B and D are mirror-symmetric (the line kernels' even-odd form)
  const double* X = nullptr;    // (ne, nv, sdim) vertex coordinates (on-the-fly geometry)
  const double* Jinv = nullptr; // (ne, dim, sdim, nq) stored geometry
  bool values = false, ref_grads = false, grads = false;
  bool on_the_fly = true;
  bool tables_shared = true;    // simplex: tables copied to shared memory
  int chunk = 1;                // forward kernels: elements per item, processed one after the other
  const double* qdata = nullptr;  // fused operators: w det J (ne, nq) or D (ne, dim (dim + 1) / 2, nq)
  const double* wq = nullptr;     // fused operators, on-the-fly geometry or element_factors: the rule's weights (nq)
  bool element_factors = false;   // fused operators, stored: qdata holds one factor per element (ne, nf), without w
  double* y_out = nullptr;        // fused operators: global vector added into (stored into from owned_from on)
  bool concurrent = true;         // fused operators: atomic additions needed (not on the serial backend)
  int owned_from = 2147483647;    // fused operators: global nodes from this id on belong to one element (stored, not added)
  bool prefetch_qdata = false;    // fused operators: each element's stored data into L2 a step ahead
  bool merged_lines = false;      // fused operators: hex_diffusion_lines keeps T2 in dead buffers
  const double* u = nullptr;    // forward: global vector
  double* e_out = nullptr;      // transpose: E-vector (ne, comps, nd)
  PointMap v, rg, pg;           // values, reference gradients, gradients
  int corner[8][3] = {};        // reference vertex coordinates (0/1) of the first-order map
  // tensor: host copies of Bt, x1d and Dq, for the launches that put the 1-D tables in the
  // kernel's parameters (fill_line_tables); never read on the device
  const double* host_Bt = nullptr;
  const double* host_x1d = nullptr;
  const double* host_Dq = nullptr;
  const double* host_Gt = nullptr;  // tensor: host copy of Gt (nd1, nq1)
};

// ------------------------------------------------------------------ geometry at a point
// Templated on the dimension so that every small array stays in registers (runtime bounds
// would put them in local memory). Physical gradients need space_dim == dim.

/// J(r, c) = d x_r / d xi_c of a quadrilateral or hexahedron at xi from its vertices Xe
/// (vertex v at corner[v]).
template <int Dim>
TESSERA_HOST_DEVICE inline void tensor_jacobian(const Args& a, const double* Xe, const double* xi, double J[3][3]) {
  constexpr int NV = Dim == 2 ? 4 : 8;
TESSERA_INTERP_UNROLL
  for (int r = 0; r < Dim; ++r)
TESSERA_INTERP_UNROLL
    for (int c = 0; c < Dim; ++c) J[r][c] = 0;
  for (int v = 0; v < NV; ++v) {  // not unrolled: keeps the register count down
    double f[Dim], df[Dim];
TESSERA_INTERP_UNROLL
    for (int d = 0; d < Dim; ++d) {
      f[d] = a.corner[v][d] ? xi[d] : 1.0 - xi[d];
      df[d] = a.corner[v][d] ? 1.0 : -1.0;
    }
TESSERA_INTERP_UNROLL
    for (int c = 0; c < Dim; ++c) {
      double g = df[c];
TESSERA_INTERP_UNROLL
      for (int d = 0; d < Dim; ++d)
        if (d != c) g *= f[d];
TESSERA_INTERP_UNROLL
      for (int r = 0; r < Dim; ++r) J[r][c] += Xe[v * Dim + r] * g;
    }
  }
}

/// J of a triangle or tetrahedron (constant): J(r, c) = x_{c+1, r} - x_{0, r}.
template <int Dim, class T = double>
TESSERA_HOST_DEVICE inline void simplex_jacobian(const T* Xe, T J[3][3]) {
TESSERA_INTERP_UNROLL
  for (int r = 0; r < Dim; ++r)
TESSERA_INTERP_UNROLL
    for (int c = 0; c < Dim; ++c) J[r][c] = Xe[(c + 1) * Dim + r] - Xe[r];
}

/// Ji(c, r) = (J^-1)(c, r) (T: double or simd::vdouble).
template <int Dim, class T = double>
TESSERA_HOST_DEVICE inline void invert(const T J[3][3], T Ji[3][3]) {
  if constexpr (Dim == 2) {
    const T s = 1.0 / (J[0][0] * J[1][1] - J[0][1] * J[1][0]);
    Ji[0][0] = J[1][1] * s;
    Ji[0][1] = -J[0][1] * s;
    Ji[1][0] = -J[1][0] * s;
    Ji[1][1] = J[0][0] * s;
  } else {
    const T c00 = J[1][1] * J[2][2] - J[1][2] * J[2][1];
    const T c01 = J[1][2] * J[2][0] - J[1][0] * J[2][2];
    const T c02 = J[1][0] * J[2][1] - J[1][1] * J[2][0];
    const T s = 1.0 / (J[0][0] * c00 + J[0][1] * c01 + J[0][2] * c02);
    Ji[0][0] = c00 * s;
    Ji[1][0] = c01 * s;
    Ji[2][0] = c02 * s;
    Ji[0][1] = (J[0][2] * J[2][1] - J[0][1] * J[2][2]) * s;
    Ji[1][1] = (J[0][0] * J[2][2] - J[0][2] * J[2][0]) * s;
    Ji[2][1] = (J[0][1] * J[2][0] - J[0][0] * J[2][1]) * s;
    Ji[0][2] = (J[0][1] * J[1][2] - J[0][2] * J[1][1]) * s;
    Ji[1][2] = (J[0][2] * J[1][0] - J[0][0] * J[1][2]) * s;
    Ji[2][2] = (J[0][0] * J[1][1] - J[0][1] * J[1][0]) * s;
  }
}

/// det J (Dim = 2 or 3).
template <int Dim>
TESSERA_HOST_DEVICE inline double determinant(const double J[3][3]) {
  if constexpr (Dim == 2) return J[0][0] * J[1][1] - J[0][1] * J[1][0];
  else
    return J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) + J[0][1] * (J[1][2] * J[2][0] - J[1][0] * J[2][2]) +
           J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
}

/// J^-1 at point q of element e: from the stored factors, or from the vertices in Xe at the
/// reference point xi (tensor) / constant (simplex).
template <int Dim, bool Tensor>
TESSERA_HOST_DEVICE inline void inverse_jacobian(const Args& a, index_t e, int q, const double* Xe, const double* xi,
                                                 double Ji[3][3]) {
  if (!a.on_the_fly) {
TESSERA_INTERP_UNROLL
    for (int c = 0; c < Dim; ++c)
TESSERA_INTERP_UNROLL
      for (int r = 0; r < Dim; ++r) Ji[c][r] = a.Jinv[((e * Dim + c) * Dim + r) * a.nq + q];
    return;
  }
  double J[3][3];
  if constexpr (Tensor) tensor_jacobian<Dim>(a, Xe, xi, J);
  else simplex_jacobian<Dim>(Xe, J);
  invert<Dim>(J, Ji);
}

/// Loads the element's vertex coordinates into shared memory when the geometry is computed
/// on the fly (call for valid items only).
TESSERA_HOST_DEVICE inline void load_vertices(TeamContext& ctx, const Args& a, View<double, 1> Xe) {
  if (Xe.size() == 0) return;
  const index_t base = ctx.item() * a.nv * a.sdim;
  for (int n : ctx.item_threads(a.nv * a.sdim)) Xe[n] = a.X[base + n];
}

TESSERA_HOST_DEVICE inline bool needs_vertices(const Args& a) { return a.grads && a.on_the_fly; }

/// Reference-gradient input of the transpose at point q: the reference gradients plus the
/// physical ones mapped back with J^-1 (the adjoint of du/dx = J^-T du/dxi): r[d], d < Dim.
template <int Dim, bool Tensor>
TESSERA_HOST_DEVICE inline void transpose_gradient_input(const Args& a, index_t e, int c, int q, const double* Xe,
                                                         const double* xi, double* r) {
TESSERA_INTERP_UNROLL
  for (int d = 0; d < Dim; ++d) r[d] = a.ref_grads ? a.rg.p[a.rg.at(e, c, d, q)] : 0.0;
  if (a.grads) {
    double Ji[3][3];
    inverse_jacobian<Dim, Tensor>(a, e, q, Xe, xi, Ji);
    double w[Dim];
TESSERA_INTERP_UNROLL
    for (int k = 0; k < Dim; ++k) w[k] = a.pg.p[a.pg.at(e, c, k, q)];
TESSERA_INTERP_UNROLL
    for (int d = 0; d < Dim; ++d) {
      double s = 0;
TESSERA_INTERP_UNROLL
      for (int k = 0; k < Dim; ++k) s += Ji[d][k] * w[k];
      r[d] += s;
    }
  }
}


// ------------------------------------------------------------------ pipelined gathers
// The forward kernels process `chunk` elements per item, one after the other, and gather the
// next element's nodal values while computing the current one: asynchronous copies from
// global to shared memory (cp.async on sm_80 and newer) into two buffers. At low order the
// kernels are latency-bound; this keeps a gather in flight during the contractions.

/// First element and number of elements of this item (0 for the unused slots of the last block).
struct ItemElements {
  index_t first;
  int count;
};
TESSERA_HOST_DEVICE inline ItemElements item_elements(const TeamContext& ctx, const Args& a) {
  const index_t first = ctx.item() * a.chunk;
  if (!ctx.valid()) return {first, 0};
  const index_t left = a.ne - first;
  return {first, left < a.chunk ? static_cast<int>(left) : a.chunk};
}

/// Loads the index maps (and, for on-the-fly geometry, the vertices) of the item's elements
/// into shared memory; ends with a barrier.
TESSERA_HOST_DEVICE inline void load_item_maps(TeamContext& ctx, const Args& a, const ItemElements& it,
                                               View<int, 1> idxs, View<double, 1> Xs) {
  if (a.idx)
    for (int n : ctx.item_threads(it.count * a.nd)) copy_async(ctx, &idxs[n], &a.idx[it.first * a.nd + n]);
  if (Xs.size() > 0) {
    const int nx = a.nv * a.sdim;
    for (int n : ctx.item_threads(it.count * nx)) copy_async(ctx, &Xs[n], &a.X[it.first * nx + n]);
  }
  async_commit();
  async_wait(false);
  ctx.sync();
}


/// Copies a tensor kernel's 1-D tables (G only when it has room) and 1-D points to the block's
/// shared buffers.
TESSERA_HOST_DEVICE inline void load_tensor_tables(TeamContext& ctx, const Args& a, View<double, 1> B,
                                                   View<double, 1> G, View<double, 1> xq) {
  for (int i : ctx.block_threads(a.nd1 * a.nq1)) {
    B[i] = a.Bt[i];
    if (G.size() > 0) G[i] = a.Gt[i];
  }
  for (int i : ctx.block_threads(a.nq1)) xq[i] = a.x1d[i];
}

/// The forward tensor kernels' walk over the item's (element, component) steps, the same
/// count for every item of the block (the steps contain barriers): the nodal values of step
/// st + 1 are copied into the other half of `ub` while step(valid, e, c, u, Xe) runs on step st.
/// Row > 0 (hexahedra): the values go to rows of Row entries, (nd1, nd1, Row), instead of nd1.
/// ahead(k, c, e) runs where the gather of step (k, c) of element e is issued, a step before
/// the step itself (the diffusion kernel's prefetch of its stored data). N1 > 0: the nodes per
/// direction fixed at compile time (a.nd1 must equal it), so that the node count and, with
/// Row, the division that places a node in its row are constants.
struct NothingAhead {
  TESSERA_HOST_DEVICE void operator()(int, int, index_t) const {}
};
template <int Row = 0, int N1 = 0, class Step, class Ahead = NothingAhead>
TESSERA_HOST_DEVICE void pipelined_steps(TeamContext& ctx, const Args& a, View<int, 1> idxs, View<double, 1> ub,
                                         View<double, 1> Xs, const Step& step, const Ahead& ahead = {}) {
  const int n1 = N1 > 0 ? N1 : a.nd1, nd = N1 > 0 ? N1 * N1 * N1 : a.nd, slot = Row > 0 ? n1 * n1 * Row : nd;
  const auto to = [&](int n) {  // where node n goes in its buffer
    if constexpr (Row > 0) {
      const int r = n / n1;
      return r * Row + (n - r * n1);
    } else {
      return n;
    }
  };
  const ItemElements it = item_elements(ctx, a);
  load_item_maps(ctx, a, it, idxs, Xs);
  const int steps = a.chunk * a.comps;
  const auto issue = [&](int st) {
    const int k = a.comps == 1 ? st : st / a.comps, c = st - k * a.comps;  // no division for scalars
    if (k < it.count) {
      if (a.idx)
        for (int n : ctx.item_threads(nd))
          copy_async(ctx, &ub[(st & 1) * slot + to(n)], &a.u[c * a.nn + idxs[k * nd + n]]);
      else  // element-level input: an E-vector (ne, comps, nd)
        for (int n : ctx.item_threads(nd))
          copy_async(ctx, &ub[(st & 1) * slot + to(n)], &a.u[((it.first + k) * a.comps + c) * nd + n]);
      ahead(k, c, it.first + k);
    }
    async_commit();
  };
  issue(0);
  for (int st = 0; st < steps; ++st) {
    if (st + 1 < steps) issue(st + 1);
    async_wait(st + 1 < steps);
    ctx.sync();
    const int el = a.comps == 1 ? st : st / a.comps, c = st - el * a.comps;
    step(el < it.count, it.first + el, c, &ub[(st & 1) * slot], Xs.size() ? &Xs[el * a.nv * a.sdim] : nullptr);
  }
}

// ------------------------------------------------------------------ quadrilaterals

// The four sum-factorization stages of a quadrilateral through shared memory, shared by the
// interpolation kernels below and the fused operator (operator/quad.hpp). Tables (n1 x m1):
// B(i, q) = B[i m1 + q], G the same for the derivative. The x stage and the transposed y stage
// end at a ctx.sync(); the others leave it to the caller.

/// Forward x stage: A(j, qx) = sum_i B(i, qx) u(j n1 + i) and, with Grads, Ag with G.
template <bool Grads>
TESSERA_HOST_DEVICE inline void quad_stage_x(TeamContext& ctx, bool valid, int n1, int m1, const double* B,
                                             const double* G, const double* u, double* A, double* Ag) {
  if (valid)
    for (int j : ctx.threads_y(n1))
      for (int qx : ctx.threads_x(m1)) {
        double s = 0, g = 0;
        TESSERA_INTERP_UNROLL4
        for (int i = 0; i < n1; ++i) {
          const double ui = u[j * n1 + i];
          s += B[i * m1 + qx] * ui;
          if (Grads) g += G[i * m1 + qx] * ui;
        }
        A[j * m1 + qx] = s;
        if (Grads) Ag[j * m1 + qx] = g;
      }
  ctx.sync();
}

/// Forward y stage: at each point (qx, qy), at(qx, qy, s, gx, gy) with s = sum_j B(j, qy)
/// A(j, qx) and, with Grads, gx = sum_j B(j, qy) Ag(j, qx), gy = sum_j G(j, qy) A(j, qx).
template <bool Grads, class At>
TESSERA_HOST_DEVICE inline void quad_stage_y(TeamContext& ctx, bool valid, int n1, int m1, const double* B,
                                             const double* G, const double* A, const double* Ag, const At& at) {
  if (valid)
    for (int qy : ctx.threads_y(m1))
      for (int qx : ctx.threads_x(m1)) {
        double s = 0, gx = 0, gy = 0;
        TESSERA_INTERP_UNROLL4
        for (int j = 0; j < n1; ++j) {
          const double b = B[j * m1 + qy];
          const double aj = A[j * m1 + qx];
          s += b * aj;
          if (Grads) {
            gx += b * Ag[j * m1 + qx];
            gy += G[j * m1 + qy] * aj;
          }
        }
        at(qx, qy, s, gx, gy);
      }
}

/// Transposed y stage from point data (q = qy m1 + qx): T0(j, qx) = sum_qy B(j, qy) V(q)
/// (Values) + G(j, qy) Y(q) (Grads), T1(j, qx) = sum_qy B(j, qy) X(q) (Grads): V a value,
/// X and Y the parts that the derivatives along x and y take back.
template <bool Values, bool Grads>
TESSERA_HOST_DEVICE inline void quad_stage_yt(TeamContext& ctx, bool valid, int n1, int m1, const double* B,
                                              const double* G, const double* V, const double* X, const double* Y,
                                              double* T0, double* T1) {
  if (valid)
    for (int j : ctx.threads_y(n1))
      for (int qx : ctx.threads_x(m1)) {
        double t0 = 0, t1 = 0;
        TESSERA_INTERP_UNROLL4
        for (int qy = 0; qy < m1; ++qy) {
          const double b = B[j * m1 + qy];
          if (Values) t0 += b * V[qy * m1 + qx];
          if (Grads) {
            t0 += G[j * m1 + qy] * Y[qy * m1 + qx];
            t1 += b * X[qy * m1 + qx];
          }
        }
        T0[j * m1 + qx] = t0;
        if (Grads) T1[j * m1 + qx] = t1;
      }
  ctx.sync();
}

/// Transposed x stage: at node (i, j), out(j n1 + i, s) with s = sum_qx B(i, qx) T0(j, qx)
/// (+ G(i, qx) T1(j, qx) with Grads).
template <bool Grads, class Out>
TESSERA_HOST_DEVICE inline void quad_stage_xt(TeamContext& ctx, bool valid, int n1, int m1, const double* B,
                                              const double* G, const double* T0, const double* T1, const Out& out) {
  if (valid)
    for (int j : ctx.threads_y(n1))
      for (int i : ctx.threads_x(n1)) {
        double s = 0;
        TESSERA_INTERP_UNROLL4
        for (int qx = 0; qx < m1; ++qx) {
          s += B[i * m1 + qx] * T0[j * m1 + qx];
          if (Grads) s += G[i * m1 + qx] * T1[j * m1 + qx];
        }
        out(j * n1 + i, s);
      }
}

template <bool Grads>
TESSERA_HOST_DEVICE void quad_forward(TeamContext& ctx, const Args& a) {
  const int n1 = a.nd1, m1 = a.nq1, nd = a.nd;
  auto B = ctx.shared_common<double>(n1 * m1);
  auto G = ctx.shared_common<double>(Grads ? n1 * m1 : 0);
  auto xq = ctx.shared_common<double>(m1);
  auto idxs = ctx.shared_item<int>(a.chunk * nd);
  auto ub = ctx.shared_item<double>(2 * nd);
  auto A = ctx.shared_item<double>(n1 * m1);
  auto Ag = ctx.shared_item<double>(Grads ? n1 * m1 : 0);
  auto Xs = ctx.shared_item<double>(needs_vertices(a) ? a.chunk * a.nv * a.sdim : 0);
  load_tensor_tables(ctx, a, B, G, xq);
  pipelined_steps(ctx, a, idxs, ub, Xs, [&](bool valid, index_t e, int c, const double* u, const double* Xe) {
    quad_stage_x<Grads>(ctx, valid, n1, m1, B.data(), G.data(), u, A.data(), Ag.data());
    quad_stage_y<Grads>(ctx, valid, n1, m1, B.data(), G.data(), A.data(), Ag.data(),
                        [&](int qx, int qy, double s, double gx, double gy) {
      const int q = qy * m1 + qx;
      if (a.values) a.v.p[a.v.at(e, c, 0, q)] = s;
      if (Grads) {
        if (a.ref_grads) {
          a.rg.p[a.rg.at(e, c, 0, q)] = gx;
          a.rg.p[a.rg.at(e, c, 1, q)] = gy;
        }
        if (a.grads) {
          const double xi[3] = {xq[qx], xq[qy], 0.0};
          double Ji[3][3];
          inverse_jacobian<2, true>(a, e, q, Xe, xi, Ji);
TESSERA_INTERP_UNROLL
          for (int r = 0; r < 2; ++r) a.pg.p[a.pg.at(e, c, r, q)] = gx * Ji[0][r] + gy * Ji[1][r];
        }
      }
    });
  });
}

template <bool Grads>
TESSERA_HOST_DEVICE void quad_transpose(TeamContext& ctx, const Args& a) {
  const int n1 = a.nd1, m1 = a.nq1, nq = a.nq;
  auto B = ctx.shared_common<double>(n1 * m1);
  auto G = ctx.shared_common<double>(Grads ? n1 * m1 : 0);
  auto xq = ctx.shared_common<double>(m1);
  auto In0 = ctx.shared_item<double>(nq);
  auto In1 = ctx.shared_item<double>(Grads ? nq : 0);
  auto In2 = ctx.shared_item<double>(Grads ? nq : 0);
  auto T0 = ctx.shared_item<double>(n1 * m1);
  auto T1 = ctx.shared_item<double>(Grads ? n1 * m1 : 0);
  auto Xe = ctx.shared_item<double>(needs_vertices(a) ? a.nv * a.sdim : 0);
  load_tensor_tables(ctx, a, B, G, xq);
  const bool valid = ctx.valid();
  const index_t e = ctx.item();
  if (valid) load_vertices(ctx, a, Xe);
  ctx.sync();
  for (int c = 0; c < a.comps; ++c) {
    if (valid)
      for (int q : ctx.item_threads(nq)) {
        In0[q] = a.values ? a.v.p[a.v.at(e, c, 0, q)] : 0.0;
        if (Grads) {
          const int qx = q % m1, qy = q / m1;
          const double xi[3] = {xq[qx], xq[qy], 0.0};
          double r[2];
          transpose_gradient_input<2, true>(a, e, c, q, Xe.data(), xi, r);
          In1[q] = r[0];
          In2[q] = r[1];
        }
      }
    ctx.sync();
    quad_stage_yt<true, Grads>(ctx, valid, n1, m1, B.data(), G.data(), In0.data(), In1.data(), In2.data(), T0.data(),
                               T1.data());
    quad_stage_xt<Grads>(ctx, valid, n1, m1, B.data(), G.data(), T0.data(), T1.data(),
                         [&](int n, double s) { a.e_out[(e * a.comps + c) * a.nd + n] = s; });
  }
}

// ------------------------------------------------------------------ hexahedra

template <bool Grads>
TESSERA_HOST_DEVICE void hex_forward(TeamContext& ctx, const Args& a) {
  const int n1 = a.nd1, m1 = a.nq1, nd = a.nd;
  auto B = ctx.shared_common<double>(n1 * m1);
  auto G = ctx.shared_common<double>(Grads ? n1 * m1 : 0);
  auto xq = ctx.shared_common<double>(m1);
  auto idxs = ctx.shared_item<int>(a.chunk * nd);
  auto ub = ctx.shared_item<double>(2 * nd);
  auto A = ctx.shared_item<double>(n1 * n1 * m1);
  auto Ag = ctx.shared_item<double>(Grads ? n1 * n1 * m1 : 0);
  auto C0 = ctx.shared_item<double>(n1 * m1 * m1);
  auto C1 = ctx.shared_item<double>(Grads ? n1 * m1 * m1 : 0);
  auto C2 = ctx.shared_item<double>(Grads ? n1 * m1 * m1 : 0);
  auto Xs = ctx.shared_item<double>(needs_vertices(a) ? a.chunk * a.nv * a.sdim : 0);
  load_tensor_tables(ctx, a, B, G, xq);
  pipelined_steps(ctx, a, idxs, ub, Xs, [&](bool valid, index_t e, int c, const double* u, const double* Xe) {
    // x: A(k, j, qx) = sum_i B(qx, i) u(k, j, i)
    if (valid)
      for (int k : ctx.threads_z(n1))
        for (int j : ctx.threads_y(n1))
          for (int qx : ctx.threads_x(m1)) {
            double s = 0, g = 0;
            const int row = (k * n1 + j) * n1;
            TESSERA_INTERP_UNROLL4
            for (int i = 0; i < n1; ++i) {
              const double ui = u[row + i];
              s += B[i * m1 + qx] * ui;
              if (Grads) g += G[i * m1 + qx] * ui;
            }
            A[(k * n1 + j) * m1 + qx] = s;
            if (Grads) Ag[(k * n1 + j) * m1 + qx] = g;
          }
    ctx.sync();
    // y: C(k, qy, qx) = sum_j B(qy, j) A(k, j, qx)
    if (valid)
      for (int k : ctx.threads_z(n1))
        for (int qy : ctx.threads_y(m1))
          for (int qx : ctx.threads_x(m1)) {
            double s = 0, gx = 0, gy = 0;
            TESSERA_INTERP_UNROLL4
            for (int j = 0; j < n1; ++j) {
              const double b = B[j * m1 + qy];
              const double aj = A[(k * n1 + j) * m1 + qx];
              s += b * aj;
              if (Grads) {
                gx += b * Ag[(k * n1 + j) * m1 + qx];
                gy += G[j * m1 + qy] * aj;
              }
            }
            C0[(k * m1 + qy) * m1 + qx] = s;
            if (Grads) {
              C1[(k * m1 + qy) * m1 + qx] = gx;
              C2[(k * m1 + qy) * m1 + qx] = gy;
            }
          }
    ctx.sync();
    // z and output
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
              if (Grads) {
                gx += b * C1[at];
                gy += b * C2[at];
                gz += G[k * m1 + qz] * C0[at];
              }
            }
            const int q = (qz * m1 + qy) * m1 + qx;
            if (a.values) a.v.p[a.v.at(e, c, 0, q)] = s;
            if (Grads) {
              if (a.ref_grads) {
                a.rg.p[a.rg.at(e, c, 0, q)] = gx;
                a.rg.p[a.rg.at(e, c, 1, q)] = gy;
                a.rg.p[a.rg.at(e, c, 2, q)] = gz;
              }
              if (a.grads) {
                const double xi[3] = {xq[qx], xq[qy], xq[qz]};
                double Ji[3][3];
                inverse_jacobian<3, true>(a, e, q, Xe, xi, Ji);
TESSERA_INTERP_UNROLL
                for (int r = 0; r < 3; ++r) a.pg.p[a.pg.at(e, c, r, q)] = gx * Ji[0][r] + gy * Ji[1][r] + gz * Ji[2][r];
              }
            }
          }
  });
}

template <bool Grads>
TESSERA_HOST_DEVICE void hex_transpose(TeamContext& ctx, const Args& a) {
  const int n1 = a.nd1, m1 = a.nq1, nq = a.nq;
  auto B = ctx.shared_common<double>(n1 * m1);
  auto G = ctx.shared_common<double>(Grads ? n1 * m1 : 0);
  auto xq = ctx.shared_common<double>(m1);
  auto In0 = ctx.shared_item<double>(nq);
  auto In1 = ctx.shared_item<double>(Grads ? nq : 0);
  auto In2 = ctx.shared_item<double>(Grads ? nq : 0);
  auto In3 = ctx.shared_item<double>(Grads ? nq : 0);
  auto T0 = ctx.shared_item<double>(n1 * m1 * m1);
  auto T1 = ctx.shared_item<double>(Grads ? n1 * m1 * m1 : 0);
  auto T2 = ctx.shared_item<double>(Grads ? n1 * m1 * m1 : 0);
  auto S0 = ctx.shared_item<double>(n1 * n1 * m1);
  auto S1 = ctx.shared_item<double>(Grads ? n1 * n1 * m1 : 0);
  auto Xe = ctx.shared_item<double>(needs_vertices(a) ? a.nv * a.sdim : 0);
  load_tensor_tables(ctx, a, B, G, xq);
  const bool valid = ctx.valid();
  const index_t e = ctx.item();
  if (valid) load_vertices(ctx, a, Xe);
  ctx.sync();
  for (int c = 0; c < a.comps; ++c) {
    if (valid)
      for (int q : ctx.item_threads(nq)) {
        In0[q] = a.values ? a.v.p[a.v.at(e, c, 0, q)] : 0.0;
        if (Grads) {
          const int qx = q % m1, qy = (q / m1) % m1, qz = q / (m1 * m1);
          const double xi[3] = {xq[qx], xq[qy], xq[qz]};
          double r[3];
          transpose_gradient_input<3, true>(a, e, c, q, Xe.data(), xi, r);
          In1[q] = r[0];
          In2[q] = r[1];
          In3[q] = r[2];
        }
      }
    ctx.sync();
    // z^T: T(k, qy, qx) = sum_qz B(qz, k) In(qz, qy, qx)   (+ G for the z derivative)
    if (valid)
      for (int k : ctx.threads_z(n1))
        for (int qy : ctx.threads_y(m1))
          for (int qx : ctx.threads_x(m1)) {
            double t0 = 0, t1 = 0, t2 = 0;
            TESSERA_INTERP_UNROLL4
            for (int qz = 0; qz < m1; ++qz) {
              const double b = B[k * m1 + qz];
              const int at = (qz * m1 + qy) * m1 + qx;
              t0 += b * In0[at];
              if (Grads) {
                t0 += G[k * m1 + qz] * In3[at];
                t1 += b * In1[at];
                t2 += b * In2[at];
              }
            }
            T0[(k * m1 + qy) * m1 + qx] = t0;
            if (Grads) {
              T1[(k * m1 + qy) * m1 + qx] = t1;
              T2[(k * m1 + qy) * m1 + qx] = t2;
            }
          }
    ctx.sync();
    // y^T: S(k, j, qx) = sum_qy B(qy, j) T(k, qy, qx)   (+ G for the y derivative)
    if (valid)
      for (int k : ctx.threads_z(n1))
        for (int j : ctx.threads_y(n1))
          for (int qx : ctx.threads_x(m1)) {
            double s0 = 0, s1 = 0;
            TESSERA_INTERP_UNROLL4
            for (int qy = 0; qy < m1; ++qy) {
              const double b = B[j * m1 + qy];
              const int at = (k * m1 + qy) * m1 + qx;
              s0 += b * T0[at];
              if (Grads) {
                s0 += G[j * m1 + qy] * T2[at];
                s1 += b * T1[at];
              }
            }
            S0[(k * n1 + j) * m1 + qx] = s0;
            if (Grads) S1[(k * n1 + j) * m1 + qx] = s1;
          }
    ctx.sync();
    // x^T and output
    if (valid)
      for (int k : ctx.threads_z(n1))
        for (int j : ctx.threads_y(n1))
          for (int i : ctx.threads_x(n1)) {
            double s = 0;
            const int row = (k * n1 + j) * m1;
            TESSERA_INTERP_UNROLL4
            for (int qx = 0; qx < m1; ++qx) {
              s += B[i * m1 + qx] * S0[row + qx];
              if (Grads) s += G[i * m1 + qx] * S1[row + qx];
            }
            a.e_out[(e * a.comps + c) * a.nd + (k * n1 + j) * n1 + i] = s;
          }
  }
}

// ------------------------------------------------------------------ triangles, tetrahedra

template <bool Grads, int Dim>
TESSERA_HOST_DEVICE void simplex_forward(TeamContext& ctx, const Args& a) {
  const int nd = a.nd, nq = a.nq;
  constexpr int dim = Dim;
  auto Bs = ctx.shared_common<double>(a.tables_shared ? nd * nq : 0);
  auto Gs = ctx.shared_common<double>(a.tables_shared && Grads ? dim * nd * nq : 0);
  const int nu = a.comps * nd;
  auto idxs = ctx.shared_item<int>(a.chunk * nd);
  auto ub = ctx.shared_item<double>(2 * nu);
  auto Xs = ctx.shared_item<double>(needs_vertices(a) ? a.chunk * a.nv * a.sdim : 0);
  if (a.tables_shared) {
    for (int i : ctx.block_threads(nd * nq)) Bs[i] = a.Bt[i];
    if (Grads)
      for (int i : ctx.block_threads(dim * nd * nq)) Gs[i] = a.Gt[i];
  }
  const double* B = a.tables_shared ? Bs.data() : a.Bt;
  const double* G = a.tables_shared ? Gs.data() : a.Gt;
  const ItemElements it = item_elements(ctx, a);
  load_item_maps(ctx, a, it, idxs, Xs);
  // One step per element (all components), the same count for every item of the block.
  const auto issue = [&](int st) {
    if (st < it.count)
      for (int n : ctx.item_threads(nd)) {
        const index_t gi = idxs[st * nd + n];
        for (int c = 0; c < a.comps; ++c) copy_async(ctx, &ub[(st & 1) * nu + c * nd + n], &a.u[c * a.nn + gi]);
      }
    async_commit();
  };
  issue(0);
  for (int st = 0; st < a.chunk; ++st) {
    if (st + 1 < a.chunk) issue(st + 1);
    async_wait(st + 1 < a.chunk);
    ctx.sync();
    if (st < it.count) {
    const index_t e = it.first + st;
    const double* u = &ub[(st & 1) * nu];
    const double* Xe = Xs.size() ? &Xs[st * a.nv * a.sdim] : nullptr;
  double Ji[3][3] = {};
  if (Grads && a.grads && a.on_the_fly) inverse_jacobian<Dim, false>(a, e, 0, Xe, nullptr, Ji);
  for (int q : ctx.item_threads(nq)) {
    if (Grads && a.grads && !a.on_the_fly) inverse_jacobian<Dim, false>(a, e, q, nullptr, nullptr, Ji);
    for (int c0 = 0; c0 < a.comps; c0 += 3) {
      double s[3] = {0, 0, 0};
      double g[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
      for (int i = 0; i < nd; ++i) {
        const double b = B[i * nq + q];
        double gi[3] = {0, 0, 0};
        if (Grads)
          for (int d = 0; d < 3; ++d)
            if (d < dim) gi[d] = G[(d * nd + i) * nq + q];
        for (int cc = 0; cc < 3; ++cc)
          if (c0 + cc < a.comps) {
            const double uc = u[(c0 + cc) * nd + i];
            s[cc] += b * uc;
            if (Grads)
              for (int d = 0; d < 3; ++d) g[cc][d] += gi[d] * uc;
          }
      }
      for (int cc = 0; cc < 3; ++cc) {
        const int c = c0 + cc;
        if (c >= a.comps) break;
        if (a.values) a.v.p[a.v.at(e, c, 0, q)] = s[cc];
        if (Grads) {
          if (a.ref_grads)
TESSERA_INTERP_UNROLL
            for (int d = 0; d < dim; ++d) a.rg.p[a.rg.at(e, c, d, q)] = g[cc][d];
          if (a.grads)
TESSERA_INTERP_UNROLL
            for (int r = 0; r < Dim; ++r) {
              double t = 0;
TESSERA_INTERP_UNROLL
              for (int d = 0; d < Dim; ++d) t += g[cc][d] * Ji[d][r];
              a.pg.p[a.pg.at(e, c, r, q)] = t;
            }
        }
      }
    }
  }
    }
    ctx.sync();  // this step's buffer is refilled by the prefetch at the top of the next step
  }
}

template <bool Grads, int Dim>
TESSERA_HOST_DEVICE void simplex_transpose(TeamContext& ctx, const Args& a) {
  const int nd = a.nd, nq = a.nq;
  constexpr int dim = Dim;
  auto Bs = ctx.shared_common<double>(a.tables_shared ? nd * nq : 0);
  auto Gs = ctx.shared_common<double>(a.tables_shared && Grads ? dim * nd * nq : 0);
  auto V = ctx.shared_item<double>(a.comps * nq);
  auto R = ctx.shared_item<double>(Grads ? a.comps * dim * nq : 0);
  auto Xe = ctx.shared_item<double>(needs_vertices(a) ? a.nv * a.sdim : 0);
  if (a.tables_shared) {
    for (int i : ctx.block_threads(nd * nq)) Bs[i] = a.Bt[i];
    if (Grads)
      for (int i : ctx.block_threads(dim * nd * nq)) Gs[i] = a.Gt[i];
  }
  const double* B = a.tables_shared ? Bs.data() : a.Bt;
  const double* G = a.tables_shared ? Gs.data() : a.Gt;
  const bool valid = ctx.valid();
  const index_t e = ctx.item();
  if (valid) load_vertices(ctx, a, Xe);
  ctx.sync();
  if (valid)
    for (int q : ctx.item_threads(nq))
      for (int c = 0; c < a.comps; ++c) {
        V[c * nq + q] = a.values ? a.v.p[a.v.at(e, c, 0, q)] : 0.0;
        if (Grads) {
          double r[Dim];
          transpose_gradient_input<Dim, false>(a, e, c, q, Xe.data(), nullptr, r);
TESSERA_INTERP_UNROLL
          for (int d = 0; d < dim; ++d) R[(c * dim + d) * nq + q] = r[d];
        }
      }
  ctx.sync();
  if (!valid) return;
  for (int i : ctx.item_threads(nd))
    for (int c0 = 0; c0 < a.comps; c0 += 3) {
      double s[3] = {0, 0, 0};
      for (int q = 0; q < nq; ++q) {
        const double b = B[q * nd + i];
        double gi[3] = {0, 0, 0};
        if (Grads)
          for (int d = 0; d < 3; ++d)
            if (d < dim) gi[d] = G[(d * nq + q) * nd + i];
        for (int cc = 0; cc < 3; ++cc)
          if (c0 + cc < a.comps) {
            const int c = c0 + cc;
            s[cc] += b * V[c * nq + q];
            if (Grads)
              for (int d = 0; d < 3; ++d)
                if (d < dim) s[cc] += gi[d] * R[(c * dim + d) * nq + q];
          }
      }
      for (int cc = 0; cc < 3; ++cc)
        if (c0 + cc < a.comps) a.e_out[(e * a.comps + c0 + cc) * nd + i] = s[cc];
    }
}

/// Launch the kernel of geometry g (forward or transpose); the lambdas live in their own
/// translation units (interpolate_values.cpp, interpolate_grads.cpp): nvcc needs a public
/// enclosing function for extended lambdas, and the two get different register limits.
void launch_family_values(const char* label, const Exec& exec, const Teams& t, Geometry g, bool transpose,
                          const Args& a);
void launch_family_grads(const char* label, const Exec& exec, const Teams& t, Geometry g, bool transpose,
                         const Args& a);

}  // namespace tessera::fem::interp_detail
