#pragma once
// Pieces every fused operator kernel uses: the first-order element map in monomial form and its
// Jacobian, the point factor (w det J or the packed symmetric D = w det J J^-1 J^-T, stored or
// computed on the fly), the scatter or store of an element's results, the L2 prefetch of
// stored point data.

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "../interpolate_kernels.hpp"
#include "tessera/core/atomic.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/team_matmul.hpp"

namespace tessera::fem::interp_detail {

/// The revision of the operator kernels, their shared layouts and their per-item rules
/// (FusedOperator::chunk), part of every tuning key (FusedOperator::key): counts that
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
/// One of those coefficients, Xc[t] (t = S * Dim + r). T: double, or the CPU's simd::vdouble
/// (one element per lane).
template <int Dim, class T = double>
TESSERA_HOST_DEVICE inline T multilinear_coefficient(const Args& a, const T* Xe, int t) {
  const int S = t / Dim, r = t - S * Dim;
  T sum{};
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
template <int Dim, class T = double>
TESSERA_HOST_DEVICE inline void multilinear_jacobian(const T* Xc, const double* xi, T J[3][3]) {
TESSERA_INTERP_UNROLL
  for (int c = 0; c < Dim; ++c)
TESSERA_INTERP_UNROLL
    for (int r = 0; r < Dim; ++r) {
      T s{};
TESSERA_INTERP_UNROLL
      for (int S = 0; S < (1 << Dim); ++S)
        if ((S >> c) & 1) {
          T m = Xc[S * Dim + r];
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

/// ElementFactors (stored, Args::element_factors; instances of their own, so that the kernels
/// reading per-point data keep their code): w_q times the element's one factor, (ne, NF).
template <int Dim, bool Diffusion, bool OnTheFly, bool ElementFactors = false>
TESSERA_HOST_DEVICE inline void point_factor(const Args& a, index_t e, int q, const double* Xc, const double* xi,
                                             double* F) {
  constexpr int NF = Diffusion ? Dim * (Dim + 1) / 2 : 1;
  if constexpr (ElementFactors) {
    static_assert(!OnTheFly);
    const double w = a.wq[q];
TESSERA_INTERP_UNROLL
    for (int k = 0; k < NF; ++k) F[k] = w * a.qdata[e * NF + k];
  } else if constexpr (!OnTheFly) {
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
/// diffusion). FusedOperator::shape sizes the layout with the same rule.
TESSERA_HOST_DEVICE constexpr int gather_buffers(int chunk, int comps) { return chunk * comps > 1 ? 2 : 1; }

}  // namespace tessera::fem::interp_detail
