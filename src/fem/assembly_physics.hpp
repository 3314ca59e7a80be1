#pragma once
// The physics of the assembled forms: one typed functor per form, computing one element-matrix
// entry from the basis tables and the geometric factors at the quadrature points. Internal to
// the assembly (assembly.cpp); compiled by nvcc in CUDA builds.

#include <cmath>

#include "tessera/core/atomic.hpp"
#include "tessera/core/macros.hpp"
#include "tessera/core/view.hpp"
#include "tessera/fem/geometric_factors.hpp"

namespace tessera::fem::assembly_detail {

/// a * b + c with one rounding on the GPU (an explicit fma, so the compiler cannot contract
/// differently in an inlined typed kernel and in a virtual call); two roundings on the CPU,
/// where the host compiler is not asked to contract (no FMA in the default x86-64 target).
TESSERA_INLINE double madd(double a, double b, double c) {
#if defined(TESSERA_DEVICE_CODE)
  return fma(a, b, c);
#else
  return a * b + c;
#endif
}

/// Layout of one element's matrix entries: blocks of npe x npe, entry ((b * npe) + i) * npe + j;
/// block b couples components (c, d): b = c * comps + d (full coupling) or b = c = d (one block
/// per component).
struct EntryShape {
  int npe = 0;
  int comps = 1;
  bool full = false;
  int per_element = 0;  ///< blocks * npe * npe
  /// The symmetric element matrix is computed by pairs u <= v of its rows: per element
  /// m (m + 1) / 2 pairs per symmetric block, m = comps * npe (full) or npe (one block per
  /// component, comps blocks).
  TESSERA_HOST_DEVICE int pairs_per_element() const {
    const int m = full ? comps * npe : npe;
    return full ? m * (m + 1) / 2 : comps * (m * (m + 1) / 2);
  }
};

/// Row u <= column v of pair r of the upper triangle of an m x m matrix, row by row
/// (row u holds m - u pairs).
TESSERA_INLINE void split_pair(int m, int r, int& u, int& v) {
  const double b = 2.0 * m + 1;
  int row = static_cast<int>((b - sqrt(b * b - 8.0 * r)) * 0.5);
  // the square root may land one row off near the rows' ends
  const auto start = [m](int x) { return x * m - x * (x - 1) / 2; };
  if (row < 0) row = 0;
  while (row > 0 && start(row) > r) --row;
  while (row + 1 < m && start(row + 1) <= r) ++row;
  u = row;
  v = row + (r - start(row));
}

/// Pair t (group-local) -> the element of the group, the components and nodes of the entry
/// (c, i; d, j) with (c, i) <= (d, j), and the group-local indices of the entry and its mirror.
TESSERA_INLINE void split_pair_entry(const EntryShape& s, index_t t, index_t& k, int& c, int& d, int& i, int& j,
                                     index_t& e1, index_t& e2) {
  const int per = s.pairs_per_element();
  k = t / per;
  int r = static_cast<int>(t - k * per);
  const int npe = s.npe;
  int u, v;
  if (s.full) {
    split_pair(s.comps * npe, r, u, v);
    c = u / npe;
    i = u - c * npe;
    d = v / npe;
    j = v - d * npe;
  } else {
    const int tri = npe * (npe + 1) / 2;
    c = d = r / tri;
    split_pair(npe, r - c * tri, i, j);
  }
  const index_t base = k * s.per_element;
  const int bij = s.full ? c * s.comps + d : c, bji = s.full ? d * s.comps + c : c;
  e1 = base + (index_t(bij) * npe + i) * npe + j;
  e2 = base + (index_t(bji) * npe + j) * npe + i;
}

/// Splits a group-local entry index into (element of the group, c, d, i, j).
TESSERA_INLINE void split_entry(const EntryShape& s, index_t t, index_t& k, int& c, int& d, int& i, int& j) {
  k = t / s.per_element;
  int r = static_cast<int>(t - k * s.per_element);
  const int npe2 = s.npe * s.npe;
  const int b = r / npe2;
  r -= b * npe2;
  i = r / s.npe;
  j = r - i * s.npe;
  if (s.full) {
    c = b / s.comps;
    d = b - c * s.comps;
  } else {
    c = d = b;
  }
}

/// density * sum_q B(q, i) B(q, j) w det J(k, q).
struct MassPhysics {
  View<const double, 2> B;  // (nq, npe)
  View<const double, 2> w;  // (ne, nq) w det J
  double coef = 1;
  TESSERA_HOST_DEVICE double operator()(index_t k, int, int, int i, int j) const {
    const int nq = static_cast<int>(B.extent(0));
    const index_t bs = B.extent(1);
    const double* Bi = &B(0, i);
    const double* Bj = &B(0, j);
    const double* wk = &w(k, 0);
    double s = 0;
    for (int q = 0; q < nq; ++q) s = madd(Bi[q * bs] * Bj[q * bs], wk[q], s);
    return coef * s;
  }
};

/// conductivity * sum_q G(q, i, :) . D(k, :, :, q) G(q, j, :), D = w det J J^-1 J^-T packed.
/// The dimension is a template parameter (2 or 3: the loops over it unroll); p and q are not.
template <int Dim>
struct DiffusionPhysics {
  View<const double, 3> G;  // (nq, npe, Dim)
  View<const double, 3> D;  // (ne, Dim (Dim + 1) / 2, nq)
  double coef = 1;
  TESSERA_HOST_DEVICE double operator()(index_t k, int, int, int i, int j) const {
    constexpr int np = Dim * (Dim + 1) / 2;
    const int nq = static_cast<int>(G.extent(0));
    const double* Dk = &D(k, 0, 0);
    const double* Gi = &G(0, i, 0);
    const double* Gj = &G(0, j, 0);
    const index_t gs = G.extent(1) * Dim;  // stride of q in G
    double s = 0;
    for (int q = 0; q < nq; ++q) {
      double d[np];
      for (int m = 0; m < np; ++m) d[m] = Dk[m * nq + q];
      const double* gi = Gi + q * gs;
      const double* gj = Gj + q * gs;
      for (int a = 0; a < Dim; ++a) {
        double dg = 0;
        for (int b = 0; b < Dim; ++b) dg = madd(d[packed_symmetric_index(Dim, a, b)], gj[b], dg);
        s = madd(gi[a], dg, s);
      }
    }
    return coef * s;
  }
};

/// Isotropic linear elasticity, block (c, d) of basis pair (i, j):
/// sum_q w det J [lambda g_i,c g_j,d + mu (g_i,d g_j,c + delta_cd g_i . g_j)], g = J^-T grad phi.
template <int Dim>
struct ElasticityPhysics {
  View<const double, 3> G;     // (nq, npe, Dim)
  View<const double, 4> Jinv;  // (ne, Dim, Dim, nq)
  View<const double, 2> w;     // (ne, nq)
  double lambda = 1, mu = 1;
  TESSERA_HOST_DEVICE double operator()(index_t k, int c, int d, int i, int j) const {
    const int nq = static_cast<int>(G.extent(0));
    const double* Jk = &Jinv(k, 0, 0, 0);
    const double* wk = &w(k, 0);
    const double* Gi = &G(0, i, 0);
    const double* Gj = &G(0, j, 0);
    const index_t gs = G.extent(1) * Dim;
    double s = 0;
    for (int q = 0; q < nq; ++q) {
      const double* gir = Gi + q * gs;
      const double* gjr = Gj + q * gs;
      double gi[Dim], gj[Dim];
      for (int x = 0; x < Dim; ++x) {
        gi[x] = 0;
        gj[x] = 0;
        for (int a = 0; a < Dim; ++a) {
          const double ji = Jk[(a * Dim + x) * nq + q];
          gi[x] = madd(gir[a], ji, gi[x]);
          gj[x] = madd(gjr[a], ji, gj[x]);
        }
      }
      double t;
      if (c == d) {
        double dot = 0;
        for (int x = 0; x < Dim; ++x) dot = madd(gi[x], gj[x], dot);
        t = madd(gi[d], gj[c], dot);
      } else {
        t = gi[d] * gj[c];
      }
      const double val = madd(lambda, gi[c] * gj[d], mu * t);
      s = madd(wk[q], val, s);
    }
    return s;
  }
};

/// A group's entries: the typed physics, the group's elements (indices into the geometry's
/// factors and restriction) and the entry layout.
template <class Physics>
struct GroupEntries {
  Physics physics;
  View<const int, 1> elements;
  EntryShape shape;
  /// The value of pair t (group-local) and the group-local indices of its entry and mirror.
  TESSERA_HOST_DEVICE double operator()(index_t t, index_t& e1, index_t& e2) const {
    index_t kk;
    int c, d, i, j;
    split_pair_entry(shape, t, kk, c, d, i, j, e1, e2);
    return physics(elements(kk), c, d, i, j);
  }
};

/// The polymorphic functor: the same entries behind a device-side virtual call.
struct EntryFunctor {
  TESSERA_HOST_DEVICE virtual double entry(index_t t, index_t& e1, index_t& e2) const = 0;
};

template <class Physics>
struct EntryFunctorOf final : EntryFunctor {
  GroupEntries<Physics> f;
  TESSERA_HOST_DEVICE explicit EntryFunctorOf(const GroupEntries<Physics>& g) : f(g) {}
  TESSERA_HOST_DEVICE double entry(index_t t, index_t& e1, index_t& e2) const override { return f(t, e1, e2); }
};

/// Where a computed entry goes: the buffer (deterministic) or its CSR position (atomic).
struct EntrySink {
  View<double, 1> entries;
  View<const std::int32_t, 1> pos;
  View<double, 1> values;
  bool atomic = false, concurrent = false;
  TESSERA_HOST_DEVICE void put(index_t t, double v) const {
    if (atomic) tessera::atomic_add(&values(pos(t)), v, concurrent);
    else entries(t) = v;
  }
  /// An entry and its mirror (the same entry on the diagonal).
  TESSERA_HOST_DEVICE void put_pair(index_t e1, index_t e2, double v) const {
    put(e1, v);
    if (e2 != e1) put(e2, v);
  }
};

}  // namespace tessera::fem::assembly_detail
