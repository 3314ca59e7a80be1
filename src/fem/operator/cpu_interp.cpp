// The element-batched interpolation of the CPU backends (cpu_interp.hpp): a batch's nodal
// values gathered into vectors of simd::lanes elements, contracted by the stages shared with
// the batched operator (cpu_contract.hpp), J^-1 applied for all lanes at once (on the fly) or
// lane by lane (stored), and the point arrays written or read lane by lane.
#include "cpu_interp.hpp"

#include <algorithm>
#include <optional>

#include "common.hpp"  // Args, PointMap; multilinear_coefficient, simplex_jacobian, invert
#include "cpu_contract.hpp"
#include "cpu_geometry.hpp"  // VertexLines
#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace tessera::fem::cpu_detail {

namespace ia = interp_detail;

namespace {

constexpr int kBuffers = 8;

/// A thread's buffers: kBuffers batch arrays of e^dim vectors, and the batch's vertices.
struct Work {
  std::vector<vdouble> buf[kBuffers];
  std::vector<vdouble> X;
  Work(std::size_t n, std::size_t nx) : X(nx) {
    for (auto& v : buf) v.resize(n);
  }
  vdouble* operator[](int k) { return buf[k].data(); }
};

/// dst[q] = src[q][l], q < n: lane l of a batch array to one element's row.
inline void put_lane(const vdouble* src, int l, int n, double* dst) {
  const double* s = reinterpret_cast<const double*>(src) + l;
  for (int q = 0; q < n; ++q) dst[q] = s[std::size_t(q) * W];
}

/// dst[q][l] = src[q], q < n: one element's row into lane l of a batch array.
inline void get_lane(const double* src, int l, int n, vdouble* dst) {
  double* d = reinterpret_cast<double*>(dst) + l;
  for (int q = 0; q < n; ++q) d[std::size_t(q) * W] = src[q];
}

/// The element of lane l of batch b (padded lanes: the last element).
inline index_t lane_element(const ia::Args& a, index_t b, int l) { return std::min<index_t>(b * W + l, a.ne - 1); }

/// The batch's vertex coordinates, X[v * dim + r] (on-the-fly geometry; space_dim == dim).
void load_vertices(const ia::Args& a, index_t b, vdouble* X) {
  const int nx = a.nv * a.sdim;
  for (int l = 0; l < W; ++l) get_lane(a.X + lane_element(a, b, l) * nx, l, nx, X);
}

/// On-the-fly geometry of one batch, all lanes at once: from the vertices, the maps' monomial
/// coefficients (quadrilaterals, hexahedra: multilinear_coefficient, J line by line by
/// VertexLines) or the constant J^-1 (simplices).
template <int Dim>
struct BatchGeometry {
  bool tensor;
  const double* xq;  // the 1-D points
  int m;
  VertexLines<Dim> lines;
  vdouble Js[3][3];
  BatchGeometry(const ia::Args& a, index_t b, bool tensor_, const double* xq_, int m_, vdouble* X)
      : tensor(tensor_), xq(xq_), m(m_) {
    load_vertices(a, b, X);
    if (tensor) {
      for (int t = 0; t < VertexLines<Dim>::coefficients; ++t) lines.X[t] = ia::multilinear_coefficient<Dim>(a, X, t);
    } else {
      vdouble J[3][3];
      ia::simplex_jacobian<Dim>(X, J);
      ia::invert<Dim>(J, Js);
    }
  }
  /// J^-1 at point q; the points are visited in order (q = 0, 1, ...: each line from its start).
  void inverse(int q, vdouble Ji[3][3]) {
    if (!tensor) {
      for (int r = 0; r < Dim; ++r)
        for (int c = 0; c < Dim; ++c) Ji[r][c] = Js[r][c];
      return;
    }
    lines.inverse(lines.seek(xq, m, q), Ji);
  }
};

/// What a call evaluates: any gradient, physical gradients with J^-1 on the fly, the 1-D
/// points at the nodes (B = I, skipped).
struct Kinds {
  bool grads, otf, nodal;
  Kinds(const ia::Args& a, bool tensor)
      : grads(a.ref_grads || a.grads), otf(a.grads && a.on_the_fly), nodal(tensor && a.nodal_points) {}
};

}  // namespace

int BatchedInterpolator::lanes() { return W; }

BatchedInterpolator::BatchedInterpolator(const ia::Args& a, bool tensor, bool fixed_sizes, const Exec& exec)
    : tensor_(tensor), fixed_(fixed_sizes), dim_(a.dim), n1_(a.nd1), m1_(a.nq1), nd_(a.nd), nq_(a.nq),
      ix_(a.idx, a.ne, a.nd) {
  TESSERA_REQUIRE((dim_ == 2 || dim_ == 3) && a.Bt && a.Gt && (!tensor || (n1_ >= 1 && m1_ >= 1 && a.x1d)),
                  "fem::cpu_detail::BatchedInterpolator: unsupported sizes");
  const auto table = [&](int k, std::vector<double> t, int rows, int cols) {
    tab_[k] = std::move(t);
    sign_[k] = tensor ? mirror_parts(tab_[k], rows, cols, eo_[k]) : 0;
  };
  if (tensor) {
    const int n = n1_, m = m1_;
    for (int k = 0; k < 2; ++k) {  // B, G: forward (m, n), back (n, m)
      const double* T = k == 0 ? a.Bt : a.Gt;
      std::vector<double> f(std::size_t(m) * n);
      for (int i = 0; i < n; ++i)
        for (int q = 0; q < m; ++q) f[std::size_t(q) * n + i] = T[i * m + q];
      table(k, std::move(f), m, n);
      table(2 + k, std::vector<double>(T, T + std::size_t(n) * m), n, m);
    }
    xq_.assign(a.x1d, a.x1d + m);
  } else {
    const int nd = nd_, nq = nq_;
    for (int k = 0; k <= dim_; ++k) {  // B, then G_d: forward (nq, nd), back (nd, nq)
      const double* T = k == 0 ? a.Bt : a.Gt + std::size_t(k - 1) * nd * nq;
      std::vector<double> f(std::size_t(nq) * nd);
      for (int i = 0; i < nd; ++i)
        for (int q = 0; q < nq; ++q) f[std::size_t(q) * nd + i] = T[std::size_t(i) * nq + q];
      table(k, std::move(f), nq, nd);
      table(4 + k, std::vector<double>(T, T + std::size_t(nd) * nq), nd, nq);
    }
  }
#if defined(_OPENMP)
  if (exec.backend == Backend::OpenMP) threads_ = std::max(1, std::min<int>(openmp_threads(), int(std::max<index_t>(ix_.nb, 1))));
#else
  (void)exec;
#endif
}

template <class F>
void BatchedInterpolator::each_batch(const F& run) const {
  const int e1 = std::max(n1_, m1_);
  const std::size_t n = !tensor_ ? std::size_t(std::max(nd_, nq_)) : std::size_t(dim_ == 2 ? e1 * e1 : e1 * e1 * e1);
  const std::size_t nx = 8 * 3;
  if (threads_ == 1) {
    Work w(n, nx);
    for (index_t b = 0; b < ix_.nb; ++b) run(b, &w);
    return;
  }
#if defined(_OPENMP)
#pragma omp parallel num_threads(threads_)
  {
    Work w(n, nx);
#pragma omp for schedule(static)
    for (index_t b = 0; b < ix_.nb; ++b) run(b, &w);
  }
#endif
}

template <int Dim>
void BatchedInterpolator::forward_batch(const ia::Args& a, index_t b, void* work) const {
  Work& w = *static_cast<Work*>(work);
  const int n = n1_, m = m1_, nq = nq_, live = ix_.live(b);
  const Kinds kind(a, tensor_);
  const auto M = [&](int t) { return Mat{tab_[t].data(), tensor_ ? m : nq, tensor_ ? n : nd_, sign_[t], eo_[t].data()}; };
  // B (or the identity at nodal points) and G along direction d
  const auto Bd = [&](int d, const vdouble* in, vdouble* out) -> const vdouble* {
    if (kind.nodal) return in;
    along<Dim, false>(fixed_, d, M(0), in, out, m, n);
    return out;
  };
  const auto Gd = [&](int d, const vdouble* in, vdouble* out) {
    along<Dim, false>(fixed_, d, M(1), in, out, m, n);
    return out;
  };
  std::optional<BatchGeometry<Dim>> geo;
  if (kind.otf) geo.emplace(a, b, tensor_, xq_.data(), m, w.X.data());
  for (int c = 0; c < a.comps; ++c) {
    vdouble* U = w[0];
    gather(ix_, b, a.u + std::size_t(c) * a.nn, reinterpret_cast<double*>(U));
    const vdouble* V = nullptr;
    vdouble* g[3] = {};
    if (!tensor_) {
      if (a.values) {
        contract_any<false>(fixed_, M(0), U, w[1], 1, 1);
        V = w[1];
      }
      for (int d = 0; d < Dim && kind.grads; ++d) {
        g[d] = w[2 + d];
        contract_any<false>(fixed_, M(1 + d), U, g[d], 1, 1);
      }
    } else if (!kind.grads) {
      if (kind.nodal) V = U;
      else tensor_apply<Dim>(fixed_, M(0), U, w[3], w[1], w[2]), V = w[3];
    } else if constexpr (Dim == 2) {
      // x: A = B u, Ag = G u; y: values B A, d/dx B Ag, d/dy G A (the team kernels' order)
      const vdouble* A = Bd(0, U, w[1]);
      const vdouble* Ag = Gd(0, U, w[2]);
      if (a.values) V = Bd(1, A, w[3]);
      g[0] = const_cast<vdouble*>(Bd(1, Ag, w[4]));
      g[1] = Gd(1, A, w[5]);
    } else {
      // x: A, Ag; y: C0 = B A, C1 = B Ag, C2 = G A; z: values B C0, derivatives B C1, B C2, G C0.
      // The buffers are chosen so that no output overwrites an input still needed, also where
      // the identity (nodal points) passes an input through.
      const vdouble* A = Bd(0, U, w[1]);
      const vdouble* Ag = Gd(0, U, w[2]);
      const vdouble* C0 = Bd(1, A, w[3]);
      const vdouble* C1 = Bd(1, Ag, w[4]);
      const vdouble* C2 = Gd(1, A, w[5]);
      if (a.values) V = Bd(2, C0, w[6]);
      g[0] = const_cast<vdouble*>(Bd(2, C1, w[7]));
      g[1] = const_cast<vdouble*>(Bd(2, C2, w[4]));
      g[2] = Gd(2, C0, w[1]);
    }
    for (int l = 0; l < live; ++l) {
      const index_t e = b * W + l;
      if (a.values) put_lane(V, l, nq, a.v.p + a.v.at(e, c, 0, 0));
      if (a.ref_grads)
        for (int d = 0; d < Dim; ++d) put_lane(g[d], l, nq, a.rg.p + a.rg.at(e, c, d, 0));
    }
    if (!a.grads) continue;
    if (kind.otf) {  // du/dx_r = sum_d du/dxi_d (J^-1)(d, r), all lanes at once, in place
      for (int q = 0; q < nq; ++q) {
        vdouble Ji[3][3];
        geo->inverse(q, Ji);
        vdouble r[Dim];
        for (int k = 0; k < Dim; ++k) {
          r[k] = g[0][q] * Ji[0][k];
          for (int d = 1; d < Dim; ++d) r[k] += g[d][q] * Ji[d][k];
        }
        for (int k = 0; k < Dim; ++k) g[k][q] = r[k];
      }
      for (int l = 0; l < live; ++l)
        for (int r = 0; r < Dim; ++r) put_lane(g[r], l, nq, a.pg.p + a.pg.at(b * W + l, c, r, 0));
      continue;
    }
    for (int l = 0; l < live; ++l) {  // stored J^-1 (ne, dim, dim, nq): lane by lane
      const index_t e = b * W + l;
      const double* Je = a.Jinv + e * Dim * Dim * nq;
      const double* gl[3];
      for (int d = 0; d < Dim; ++d) gl[d] = reinterpret_cast<const double*>(g[d]) + l;
      for (int r = 0; r < Dim; ++r) {
        double* out = a.pg.p + a.pg.at(e, c, r, 0);
        for (int q = 0; q < nq; ++q) {
          double s = gl[0][std::size_t(q) * W] * Je[r * nq + q];
          for (int d = 1; d < Dim; ++d) s += gl[d][std::size_t(q) * W] * Je[(d * Dim + r) * nq + q];
          out[q] = s;
        }
      }
    }
  }
}

template <int Dim>
void BatchedInterpolator::transpose_batch(const ia::Args& a, index_t b, void* work) const {
  Work& w = *static_cast<Work*>(work);
  const int n = n1_, m = m1_, nq = nq_, live = ix_.live(b);
  const Kinds kind(a, tensor_);
  const auto M = [&](int t) {  // the back tables: (n1, m1) or (nd, nq)
    return tensor_ ? Mat{tab_[t].data(), n, m, sign_[t], eo_[t].data()} : Mat{tab_[t].data(), nd_, nq, 0, nullptr};
  };
  std::optional<BatchGeometry<Dim>> geo;
  if (kind.otf) geo.emplace(a, b, tensor_, xq_.data(), m, w.X.data());
  for (int c = 0; c < a.comps; ++c) {
    // The point inputs, every lane (padded lanes read the last element): values in w0, the
    // reference-gradient input r_d (reference gradients plus J^-1 applied to the physical ones,
    // the adjoint of du/dx = J^-T du/dxi) in w1..w3; physical gradients on the fly in w4..w6.
    vdouble* In0 = w[0];
    vdouble* R[3] = {w[1], w[2], w[3]};
    for (int l = 0; l < W; ++l) {
      const index_t e = lane_element(a, b, l);
      if (a.values) get_lane(a.v.p + a.v.at(e, c, 0, 0), l, nq, In0);
      if (!kind.grads) continue;
      if (a.ref_grads)  // else a.grads sets r_d below
        for (int d = 0; d < Dim; ++d) get_lane(a.rg.p + a.rg.at(e, c, d, 0), l, nq, R[d]);
      if (a.grads && kind.otf)
        for (int k = 0; k < Dim; ++k) get_lane(a.pg.p + a.pg.at(e, c, k, 0), l, nq, w[4 + k]);
      if (a.grads && !kind.otf) {
        const double* Je = a.Jinv + e * Dim * Dim * nq;
        double* rl[3];
        for (int d = 0; d < Dim; ++d) rl[d] = reinterpret_cast<double*>(R[d]) + l;
        for (int q = 0; q < nq; ++q) {
          double p[3];
          for (int k = 0; k < Dim; ++k) p[k] = a.pg.p[a.pg.at(e, c, k, q)];
          for (int d = 0; d < Dim; ++d) {
            double s = Je[d * Dim * nq + q] * p[0];
            for (int k = 1; k < Dim; ++k) s += Je[(d * Dim + k) * nq + q] * p[k];
            double& r = rl[d][std::size_t(q) * W];
            r = a.ref_grads ? r + s : s;
          }
        }
      }
    }
    if (a.grads && kind.otf)
      for (int q = 0; q < nq; ++q) {
        vdouble Ji[3][3];
        geo->inverse(q, Ji);
        for (int d = 0; d < Dim; ++d) {
          vdouble s = Ji[d][0] * w[4][q];
          for (int k = 1; k < Dim; ++k) s += Ji[d][k] * w[4 + k][q];
          R[d][q] = a.ref_grads ? R[d][q] + s : s;
        }
      }
    const vdouble* out = nullptr;
    if (!tensor_) {
      // out = B^T values + sum_d G_d^T r_d
      vdouble* o = w[7];
      bool first = true;
      const auto add = [&](int k, const vdouble* in) {
        if (first) contract_any<false>(fixed_, M(k), in, o, 1, 1);
        else contract_any<true>(fixed_, M(k), in, o, 1, 1);
        first = false;
      };
      if (a.values) add(4, In0);
      for (int d = 0; d < Dim && kind.grads; ++d) add(5 + d, R[d]);
      out = o;
    } else if (!kind.grads) {
      if (kind.nodal) out = In0;
      else tensor_apply<Dim>(fixed_, M(2), In0, w[4], w[5], w[6]), out = w[4];
    } else {
      // The team kernels' order: the last direction first. In each direction the value-like
      // input takes B^T (the identity at nodal points) and the one of that direction's
      // derivative G^T, added into the same output.
      const auto BG = [&](int d, const vdouble* bin, const vdouble* gin, vdouble* o) -> const vdouble* {
        const vdouble* res = o;
        if (bin && kind.nodal) res = bin;  // o is bin's own buffer: G^T is added into it
        else if (bin) along<Dim, false>(fixed_, d, M(2), bin, o, m, n);
        if (gin) {
          if (bin) along<Dim, true>(fixed_, d, M(3), gin, const_cast<vdouble*>(res), m, n);
          else along<Dim, false>(fixed_, d, M(3), gin, o, m, n);
        }
        return res;
      };
      const auto Bt = [&](int d, const vdouble* in, vdouble* o) -> const vdouble* {
        if (kind.nodal) return in;
        along<Dim, false>(fixed_, d, M(2), in, o, m, n);
        return o;
      };
      const vdouble* V0 = a.values ? In0 : nullptr;
      if constexpr (Dim == 2) {
        const vdouble* T0 = BG(1, V0, R[1], kind.nodal && V0 ? In0 : w[4]);
        const vdouble* T1 = Bt(1, R[0], w[5]);
        out = BG(0, T0, T1, kind.nodal ? const_cast<vdouble*>(T0) : w[0]);
      } else {
        const vdouble* T0 = BG(2, V0, R[2], kind.nodal && V0 ? In0 : w[4]);
        const vdouble* T1 = Bt(2, R[0], w[5]);
        const vdouble* T2 = Bt(2, R[1], w[6]);
        const vdouble* S0 = BG(1, T0, T2, kind.nodal ? const_cast<vdouble*>(T0) : w[0]);
        const vdouble* S1 = Bt(1, T1, w[1]);
        out = BG(0, S0, S1, kind.nodal ? const_cast<vdouble*>(S0) : w[2]);
      }
    }
    for (int l = 0; l < live; ++l) put_lane(out, l, nd_, a.e_out + ((b * W + l) * a.comps + c) * nd_);
  }
}

void BatchedInterpolator::run(const ia::Args& a, bool transpose) const {
  if (ix_.nb == 0) return;
  const profiling::HostScope timed(transpose ? "fem/integrate_cpu_batched" : "fem/interpolate_cpu_batched",
                                   threads_ > 1 ? Backend::OpenMP : Backend::Serial);
  each_batch([&](index_t b, void* w) {
    if (transpose) dim_ == 2 ? transpose_batch<2>(a, b, w) : transpose_batch<3>(a, b, w);
    else dim_ == 2 ? forward_batch<2>(a, b, w) : forward_batch<3>(a, b, w);
  });
}

}  // namespace tessera::fem::cpu_detail
