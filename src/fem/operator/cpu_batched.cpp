// The element-batched CPU operator (cpu_batched.hpp): simd::lanes elements per batch, one per
// lane, so that every arithmetic instruction of the sum factorization is a full vector
// whatever the order. Compiled for the build machine's instruction set (TESSERA_CPU_ARCH).
#include "cpu_batched.hpp"

#include "cpu_contract.hpp"
#include "cpu_geometry.hpp"  // VertexLines

#include "common.hpp"  // multilinear_coefficient

#include <algorithm>
#include <cmath>
#include <optional>

#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/core/simd.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace tessera::fem::cpu_detail {

namespace ia = interp_detail;

namespace {

struct Work {
  std::vector<vdouble> u, v, t0, t1, g0, g1, g2;
  explicit Work(std::size_t n) : u(n), v(n), t0(n), t1(n), g0(n), g1(n), g2(n) {}
};

/// g_a[q] = sum_b F(a, b) g_b[q] for the packed symmetric F (00, 01, (02,) 11, (12, 22)).
template <int Dim>
inline void apply_packed(const vdouble* F, vdouble* const* g, int q) {
  constexpr int k[3][3] = {{0, 1, 2}, {1, Dim == 2 ? 2 : 3, 4}, {2, 4, 5}};
  vdouble in[Dim], out[Dim];
  for (int a = 0; a < Dim; ++a) in[a] = g[a][q];
  for (int a = 0; a < Dim; ++a) {
    out[a] = F[k[a][0]] * in[0];
    for (int b = 1; b < Dim; ++b) out[a] = simd::fma(F[k[a][b]], in[b], out[a]);
  }
  for (int a = 0; a < Dim; ++a) g[a][q] = out[a];
}

}  // namespace

int BatchedOperator::lanes() { return W; }

}  // namespace tessera::fem::cpu_detail

namespace tessera::fem {
int cpu_simd_lanes() { return cpu_detail::BatchedOperator::lanes(); }
#if defined(TESSERA_CPU_ARCH_NAME)
const char* cpu_arch() { return TESSERA_CPU_ARCH_NAME; }
#else
const char* cpu_arch() { return ""; }
#endif
}  // namespace tessera::fem

namespace tessera::fem::cpu_detail {

double BatchedOperator::vector_access_share() const { return ix_.vector_access_share(); }

index_t BatchedOperator::interior_batches() const {
  index_t n = 0;
  for (const auto& v : interior_) n += index_t(v.size());
  return n;
}

BatchedOperator::BatchedOperator(const BatchedInput& in, const Exec& exec, bool compress)
    : tensor_(in.tensor), dim_(in.dim), comps_(in.comps), n1_(in.n1), m1_(in.m1), ne_(in.ne), nn_(in.nn),
      nodal_(in.nodal && in.tensor), diffusion_(in.diffusion), fixed_(in.fixed_sizes) {
  TESSERA_REQUIRE((dim_ == 2 || dim_ == 3) && ne_ >= 0 && comps_ >= 1 &&
                      (tensor_ ? n1_ >= 1 && m1_ >= 1 : in.nd >= 1 && in.nq >= 1 && in.Bs && in.Gs),
                  "fem::cpu_detail::BatchedOperator: unsupported sizes");
  nd_ = !tensor_ ? in.nd : dim_ == 2 ? n1_ * n1_ : n1_ * n1_ * n1_;
  nq_ = !tensor_ ? in.nq : dim_ == 2 ? m1_ * m1_ : m1_ * m1_ * m1_;
  nf_ = diffusion_ ? dim_ * (dim_ + 1) / 2 : 1;
  nb_ = (ne_ + W - 1) / W;
  if (!tensor_) {
    Bs_.assign(in.Bs, in.Bs + std::size_t(nq_) * nd_);
    Bst_.resize(Bs_.size());
    Gs_.resize(std::size_t(dim_) * nq_ * nd_);
    Gst_.resize(Gs_.size());
    for (int q = 0; q < nq_; ++q)
      for (int i = 0; i < nd_; ++i) {
        Bst_[std::size_t(i) * nq_ + q] = Bs_[std::size_t(q) * nd_ + i];
        for (int d = 0; d < dim_; ++d) {
          const double g = in.Gs[(std::size_t(q) * nd_ + i) * dim_ + d];
          Gs_[(std::size_t(d) * nq_ + q) * nd_ + i] = g;
          Gst_[(std::size_t(d) * nd_ + i) * nq_ + q] = g;
        }
      }
  }
  Bf_.resize(tensor_ ? std::size_t(m1_) * n1_ : 0);
  Bb_.resize(Bf_.size());
  for (int i = 0; i < n1_ && tensor_; ++i)
    for (int q = 0; q < m1_; ++q) Bf_[std::size_t(q) * n1_ + i] = Bb_[std::size_t(i) * m1_ + q] = in.B[i * m1_ + q];
  if (tensor_) Df_.assign(in.D, in.D + std::size_t(m1_) * m1_);
  Db_.resize(Df_.size());
  for (int a = 0; a < m1_; ++a)
    for (int r = 0; r < m1_; ++r) Db_[std::size_t(r) * m1_ + a] = Df_[std::size_t(a) * m1_ + r];
  if (in.weights) w_.assign(in.weights, in.weights + nq_);
  if (tensor_) {
    sign_[0] = mirror_parts(Bf_, m1_, n1_, eo_[0]);
    sign_[1] = mirror_parts(Bb_, n1_, m1_, eo_[1]);
    sign_[2] = mirror_parts(Df_, m1_, m1_, eo_[2]);
    sign_[3] = mirror_parts(Db_, m1_, m1_, eo_[3]);
  }

  if (tensor_ && diffusion_ && !w_.empty()) {
    // A d_a-weighted derivative pair D_a^T W D_a with W = w_x w_y w_z is K along a times the
    // weights along the other directions: c_k = w(k, 0, 0) / w(0, 0, 0), and wp_a(q) the weight
    // of q with its a-th index set to 0 (w(q) = c_{q_a} wp_a(q) up to a rounding).
    const int m = m1_;
    K_.assign(std::size_t(m) * m, 0.0);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j)
        for (int a = 0; a < m; ++a)
          K_[std::size_t(i) * m + j] += Df_[std::size_t(a) * m + i] * (w_[std::size_t(a)] / w_[0]) * Df_[std::size_t(a) * m + j];
    Ksign_ = mirror_parts(K_, m, m, Keo_);
    wp_.resize(std::size_t(dim_) * nq_);
    for (int a = 0; a < dim_; ++a) {
      int stride = 1;
      for (int k = 0; k < a; ++k) stride *= m;
      for (int q = 0; q < nq_; ++q) wp_[std::size_t(a) * nq_ + q] = w_[std::size_t(q - (q / stride % m) * stride)];
    }
  }

  ix_ = BatchIndices(in.idx, ne_, nd_);  // padded lanes repeat the last element (never scattered)

  // Geometry by batch: (NF, nq, W) per point, or (NF, W) once per element.
  storage_.resize(std::size_t(nb_));
  offset_.resize(std::size_t(nb_) + 1);
  std::size_t size = 0;
  for (index_t b = 0; b < nb_; ++b) {
    FactorStorage s = in.on_the_fly && tensor_ ? FactorStorage::Vertices : FactorStorage::Points;
    if ((compress || in.on_the_fly) && in.element_factor && in.element_affine && !w_.empty()) {
      bool affine = true, diagonal = diffusion_;
      for (int l = 0; l < W && b * W + l < ne_; ++l) {
        const index_t e = b * W + l;
        affine = affine && in.element_affine[e];
        if (diffusion_) {  // packed 00, 01, (02,) 11, (12, 22): the off-diagonal entries exactly zero
          const double* f = in.element_factor + e * nf_;
          const bool diag = dim_ == 2 ? f[1] == 0.0 : f[1] == 0.0 && f[2] == 0.0 && f[4] == 0.0;
          diagonal = diagonal && diag && tensor_;
        }
      }
      if (affine) s = diagonal ? FactorStorage::Diagonal : FactorStorage::Element;
    }
    storage_[b] = s;
    offset_[b] = size;
    const int ncoef = (1 << dim_) * dim_;
    size += std::size_t(s == FactorStorage::Points     ? nf_ * nq_
                        : s == FactorStorage::Element  ? nf_
                        : s == FactorStorage::Vertices ? ncoef
                                                       : dim_) *
            W;
    if (s == FactorStorage::Element || s == FactorStorage::Diagonal) compressed_ += std::min<index_t>(W, ne_ - b * W);
  }
  offset_[nb_] = size;
  geo_.assign(size, 0.0);
  ia::Args corners;  // multilinear_coefficient reads the reference corners only
  for (int v = 0; v < 8; ++v)
    for (int d = 0; d < 3; ++d) corners.corner[v][d] = in.corner[v][d];
  if (in.on_the_fly && tensor_) {
    TESSERA_REQUIRE(in.vertices && in.points && !w_.empty(), "fem::cpu_detail::BatchedOperator: on-the-fly geometry needs the vertices, points and weights");
    x1_.assign(in.points, in.points + m1_);
  }
  const int diag_k[3] = {0, dim_ == 2 ? 2 : 3, 5};  // packed positions of 00, 11, 22
  for (index_t b = 0; b < nb_; ++b) {
    double* g = geo_.data() + offset_[b];
    for (int l = 0; l < W; ++l) {
      const index_t e = std::min(b * W + l, ne_ - 1);
      if (storage_[b] == FactorStorage::Points) {
        for (int k = 0; k < nf_; ++k)
          for (int q = 0; q < nq_; ++q)
            g[(std::size_t(k) * nq_ + q) * W + l] = in.qdata[(std::size_t(e) * nf_ + k) * nq_ + q];
      } else if (storage_[b] == FactorStorage::Element) {
        for (int k = 0; k < nf_; ++k) g[k * W + l] = in.element_factor[e * nf_ + k];
      } else if (storage_[b] == FactorStorage::Vertices) {
        const int nv = 1 << dim_;
        const double* Xe = in.vertices + std::size_t(e) * nv * dim_;
        for (int t = 0; t < nv * dim_; ++t)
          g[t * W + l] = dim_ == 2 ? ia::multilinear_coefficient<2>(corners, Xe, t) : ia::multilinear_coefficient<3>(corners, Xe, t);
      } else {
        for (int d = 0; d < dim_; ++d) g[d * W + l] = in.element_factor[e * nf_ + diag_k[d]];
      }
    }
  }

  // Threads: contiguous ranges of batches; a batch whose nodes only its own range touches runs
  // in the first phase, the others by colours (batches of one colour share no node).
  threads_ = 1;
#if defined(_OPENMP)
  if (exec.backend == Backend::OpenMP) threads_ = std::max(1, std::min<int>(openmp_threads(), int(std::max<index_t>(nb_, 1))));
#else
  (void)exec;
#endif
  // one range per thread (more ranges, taken in any order, measured slower even on a machine
  // with one core busy: log/cpu-history.md)
  const int ranges = threads_;
  interior_.assign(std::size_t(ranges), {});
  if (threads_ == 1) {
    interior_[0].resize(std::size_t(nb_));
    for (index_t b = 0; b < nb_; ++b) interior_[0][std::size_t(b)] = b;
    mark_first_touches();
    return;
  }
  const auto range_of = [&](index_t b) { return int(b * ranges / nb_); };
  std::vector<int> owner(std::size_t(nn_), -1);  // range touching the node; -2: several
  for (index_t b = 0; b < nb_; ++b) {
    const int r = range_of(b);
    for (int i = 0; i < nd_; ++i)
      for (int l = 0; l < W; ++l) {
        int& o = owner[std::size_t(ix_.node(b, i, l))];
        o = o == -1 ? r : o == r ? r : -2;
      }
  }
  std::vector<index_t> rest;
  for (index_t b = 0; b < nb_; ++b) {
    const int r = range_of(b);
    bool own = true;
    for (int i = 0; i < nd_ && own; ++i)
      for (int l = 0; l < W && own; ++l) own = owner[std::size_t(ix_.node(b, i, l))] == r;
    if (own) interior_[std::size_t(r)].push_back(b);
    else rest.push_back(b);
  }
  // Greedy colouring of the rest: the lowest colour that none of the batch's nodes has yet.
  const int max_colours = std::clamp(in.max_colours, 1, 64);
  std::vector<std::uint64_t> used(std::size_t(nn_), 0);
  for (index_t b : rest) {
    std::uint64_t taken = 0;
    for (int i = 0; i < nd_; ++i)
      for (int l = 0; l < W; ++l) taken |= used[std::size_t(ix_.node(b, i, l))];
    int c = 0;
    while (c < max_colours && ((taken >> c) & 1)) ++c;
    if (c == max_colours) {  // every colour taken around this batch (nodes of very high valence): one thread runs it last
      last_.push_back(b);
      continue;
    }
    for (int i = 0; i < nd_; ++i)
      for (int l = 0; l < W; ++l) used[std::size_t(ix_.node(b, i, l))] |= 1ull << c;
    if (std::size_t(c) >= colour_.size()) colour_.resize(std::size_t(c) + 1);
    colour_[std::size_t(c)].push_back(b);
  }
  mark_first_touches();
}

template <int Dim, bool Store>
void BatchedOperator::run_batch(index_t b, const double* x, double* y, void* work) const {
  Work& wk = *static_cast<Work*>(work);
  const int n = n1_, m = m1_, nq = nq_;
  const FactorStorage st = storage_[std::size_t(b)];
  const double* geo = geo_.data() + offset_[std::size_t(b)];
  vdouble* u = wk.u.data();
  vdouble* v = nodal_ ? u : wk.v.data();
  const Mat Dm{Df_.data(), m, m, sign_[2], eo_[2].data()}, Dtm{Db_.data(), m, m, sign_[3], eo_[3].data()};
  std::optional<VertexLines<Dim>> lines;  // on the fly: the batch's maps (FactorStorage::Vertices)
  if (st == FactorStorage::Vertices) lines.emplace(geo);
  constexpr int NF = Dim * (Dim + 1) / 2;
  for (int c = 0; c < comps_; ++c) {
    const double* xc = x + std::size_t(c) * nn_;
    double* yc = y + std::size_t(c) * nn_;
    gather(ix_, b, xc, reinterpret_cast<double*>(u));
    if (!nodal_) tensor_apply<Dim>(fixed_, Mat{Bf_.data(), m, n, sign_[0], eo_[0].data()}, u, v, wk.t0.data(), wk.t1.data());
    vdouble* r = v;  // the point values to integrate against the test functions' values
    if (!diffusion_) {
      if (st == FactorStorage::Points) {
        for (int q = 0; q < nq; ++q) v[q] *= simd::load(geo + std::size_t(q) * W);
      } else if (st == FactorStorage::Vertices) {
        for (int q = 0; q < nq; ++q) {
          vdouble F;
          lines->point(x1_.data(), m, q, w_[std::size_t(q)], false, &F);
          v[q] *= F;
        }
      } else {
        const vdouble dj = simd::load(geo);
        for (int q = 0; q < nq; ++q) v[q] *= w_[std::size_t(q)] * dj;
      }
    } else if (st == FactorStorage::Diagonal && !K_.empty()) {
      // axis-aligned: sum over a of d_a K along a, times the other directions' weights
      vdouble* g[3] = {wk.g0.data(), wk.g1.data(), wk.g2.data()};
      const Mat Km{K_.data(), m, m, Ksign_, Keo_.data()};
      vdouble d[3];
      for (int a = 0; a < Dim; ++a) {
        derivative<Dim, false>(fixed_, a, Km, v, g[a]);
        d[a] = simd::load(geo + std::size_t(a) * W);
      }
      r = nodal_ ? wk.v.data() : u;  // u is free once the points' values are formed (v), unless v is u
      const double* wp = wp_.data();
      for (int q = 0; q < nq; ++q) {
        vdouble t = (wp[q] * d[0]) * g[0][q];
        for (int a = 1; a < Dim; ++a) t = simd::fma(wp[std::size_t(a) * nq + q] * d[a], g[a][q], t);
        r[q] = t;
      }
    } else {
      vdouble* g0 = wk.g0.data();
      vdouble* g1 = wk.g1.data();
      vdouble* g2 = wk.g2.data();
      derivative<Dim, false>(fixed_, 0, Dm, v, g0);
      derivative<Dim, false>(fixed_, 1, Dm, v, g1);
      if constexpr (Dim == 3) derivative<Dim, false>(fixed_, 2, Dm, v, g2);
      vdouble* g[3] = {g0, g1, g2};
      if (st == FactorStorage::Points) {  // stored per point: (factor, point, lane)
        for (int q = 0; q < nq; ++q) {
          vdouble F[6];
          for (int k = 0; k < NF; ++k) F[k] = simd::load(geo + (std::size_t(k) * nq + q) * W);
          apply_packed<Dim>(F, g, q);
        }
      } else if (st == FactorStorage::Vertices) {
        for (int q = 0; q < nq; ++q) {
          vdouble F[6];
          lines->point(x1_.data(), m, q, w_[std::size_t(q)], true, F);
          apply_packed<Dim>(F, g, q);
        }
      } else if (st == FactorStorage::Element) {  // w_q times the element's factor
        vdouble E[6];
        for (int k = 0; k < NF; ++k) E[k] = simd::load(geo + std::size_t(k) * W);
        for (int q = 0; q < nq; ++q) {
          apply_packed<Dim>(E, g, q);
          const double wq = w_[std::size_t(q)];
          for (int a = 0; a < Dim; ++a) g[a][q] *= wq;
        }
      } else {  // axis-aligned: the diagonal
        vdouble d[3];
        for (int a = 0; a < Dim; ++a) d[a] = simd::load(geo + std::size_t(a) * W);
        for (int q = 0; q < nq; ++q) {
          const double wq = w_[std::size_t(q)];
          for (int a = 0; a < Dim; ++a) g[a][q] *= wq * d[a];
        }
      }
      r = nodal_ ? wk.v.data() : u;  // u is free once the points' values are formed (v), unless v is u
      derivative<Dim, false>(fixed_, 0, Dtm, g0, r);
      derivative<Dim, true>(fixed_, 1, Dtm, g1, r);
      if constexpr (Dim == 3) derivative<Dim, true>(fixed_, 2, Dtm, g2, r);
    }
    vdouble* out = r;
    if (!nodal_) {
      out = r == u ? v : u;
      tensor_apply<Dim>(fixed_, Mat{Bb_.data(), n, m, sign_[1], eo_[1].data()}, r, out, wk.t0.data(), wk.t1.data());
    }
    scatter<Store>(ix_, b, reinterpret_cast<const double*>(out), yc);
  }
}

template <bool Store>
void BatchedOperator::run_simplex_batch(index_t b, const double* x, double* y, void* work) const {
  Work& wk = *static_cast<Work*>(work);
  const int nd = nd_, nq = nq_;
  const FactorStorage st = storage_[std::size_t(b)];
  const double* geo = geo_.data() + offset_[std::size_t(b)];
  vdouble* u = wk.u.data();
  vdouble* out = wk.v.data();
  vdouble* g[3] = {wk.g0.data(), wk.g1.data(), wk.g2.data()};
  for (int c = 0; c < comps_; ++c) {
    const double* xc = x + std::size_t(c) * nn_;
    gather(ix_, b, xc, reinterpret_cast<double*>(u));
    if (!diffusion_) {
      contract_any<false>(fixed_, Mat{Bs_.data(), nq, nd, 0, nullptr}, u, g[0], 1, 1);
      if (st == FactorStorage::Points) {
        for (int q = 0; q < nq; ++q) g[0][q] *= simd::load(geo + std::size_t(q) * W);
      } else {
        const vdouble dj = simd::load(geo);
        for (int q = 0; q < nq; ++q) g[0][q] *= w_[std::size_t(q)] * dj;
      }
      contract_any<false>(fixed_, Mat{Bst_.data(), nd, nq, 0, nullptr}, g[0], out, 1, 1);
    } else {
      for (int d = 0; d < dim_; ++d) contract_any<false>(fixed_, Mat{Gs_.data() + std::size_t(d) * nq * nd, nq, nd, 0, nullptr}, u, g[d], 1, 1);
      // the packed factor's entry (a, b), a <= b: 00 01 (02) 11 (12 22)
      const auto k = [&](int a, int bb) { return a == 0 ? bb : dim_ == 2 ? 2 : a == 1 ? 2 + bb : 5; };
      for (int q = 0; q < nq; ++q) {
        vdouble gq[3], f[3];
        for (int a = 0; a < dim_; ++a) gq[a] = g[a][q];
        const double wq = st == FactorStorage::Points ? 1.0 : w_[std::size_t(q)];
        for (int a = 0; a < dim_; ++a) {
          vdouble s{};
          for (int bb = 0; bb < dim_; ++bb) {
            const int kk = a <= bb ? k(a, bb) : k(bb, a);
            const vdouble dab = st == FactorStorage::Points ? simd::load(geo + (std::size_t(kk) * nq + q) * W)
                                                            : simd::load(geo + std::size_t(kk) * W);
            s = simd::fma(dab, gq[bb], s);
          }
          f[a] = wq * s;
        }
        for (int a = 0; a < dim_; ++a) g[a][q] = f[a];
      }
      contract_any<false>(fixed_, Mat{Gst_.data(), nd, nq, 0, nullptr}, g[0], out, 1, 1);
      for (int d = 1; d < dim_; ++d) contract_any<true>(fixed_, Mat{Gst_.data() + std::size_t(d) * nd * nq, nd, nq, 0, nullptr}, g[d], out, 1, 1);
    }
    scatter<Store>(ix_, b, reinterpret_cast<const double*>(out), y + std::size_t(c) * nn_);
  }
}

template <class F>
void BatchedOperator::each_batch(const F& run) const {
  const int e1 = std::max(n1_, m1_);
  const std::size_t wsize = !tensor_ ? std::size_t(std::max(nd_, nq_)) : std::size_t(dim_ == 2 ? e1 * e1 : e1 * e1 * e1);
  if (threads_ == 1) {
    Work w(wsize);
    for (index_t b : interior_[0]) run(b, &w);
    return;
  }
#if defined(_OPENMP)
#pragma omp parallel num_threads(threads_)
  {
    Work w(wsize);
    const int nr = int(interior_.size());
#pragma omp for schedule(dynamic, 1) nowait
    for (int r = 0; r < nr; ++r)
      for (index_t b : interior_[std::size_t(r)]) run(b, &w);
    for (const auto& batches : colour_) {
#pragma omp barrier
      const index_t nbc = index_t(batches.size());
      // about 4 chunks per thread: a colour of a few dozen large batches (p >= 6) still splits
      const int chunk = int(std::clamp<index_t>(nbc / (4 * threads_), 1, 16));
#pragma omp for schedule(dynamic, chunk) nowait
      for (index_t k = 0; k < nbc; ++k) run(batches[std::size_t(k)], &w);
    }
    if (!last_.empty()) {
#pragma omp barrier
#pragma omp single nowait
      for (index_t b : last_) run(b, &w);
    }
  }
#endif
}

template <bool Store>
void BatchedOperator::run_all(const double* x, double* y) const {
  if (nb_ == 0) return;
  const profiling::HostScope timed("fem/operator_cpu_batched", threads_ > 1 ? Backend::OpenMP : Backend::Serial);
  each_batch([&](index_t b, void* w) {
    if (!tensor_) run_simplex_batch<Store>(b, x, y, w);
    else if (dim_ == 2) run_batch<2, Store>(b, x, y, w);
    else run_batch<3, Store>(b, x, y, w);
  });
}

void BatchedOperator::apply_add(const double* x, double* y) const { run_all<false>(x, y); }

void BatchedOperator::apply(const double* x, double* y) const {
  TESSERA_REQUIRE(covers_, "fem::cpu_detail::BatchedOperator::apply: some node is in no batch; use apply_add on a zeroed y");
  run_all<true>(x, y);
}

void BatchedOperator::mark_first_touches() {
  // The order each_batch runs the batches in: a node that one range's batches touch alone is
  // met first by the first of that range's own batches to touch it (one thread runs them in
  // order, before any colour); every other node only by batches of the colours (one batch per
  // colour touches it, the colours one after the other) or of last_ (after them, in order).
  // Within a batch, local node by local node, lane by lane, as the scatter goes.
  static_assert(W <= 8, "BatchIndices::first holds one bit per lane in a byte");
  std::vector<char> seen(std::size_t(nn_), 0);
  ix_.first.assign(ix_.split.size(), 0);
  index_t met = 0;
  const auto visit = [&](index_t b) {
    const int live = ix_.live(b);
    for (int i = 0; i < nd_; ++i) {
      unsigned bits = 0;
      for (int l = 0; l < live; ++l) {
        char& s = seen[std::size_t(ix_.node(b, i, l))];
        if (!s) s = 1, bits |= 1u << l, ++met;
      }
      ix_.first[std::size_t(b) * nd_ + i] = std::uint8_t(bits);
    }
  };
  for (const auto& list : interior_)
    for (index_t b : list) visit(b);
  for (const auto& list : colour_)
    for (index_t b : list) visit(b);
  for (index_t b : last_) visit(b);
  covers_ = met == nn_;
}

void BatchedOperator::diagonal_add(double* d) const {
  if (nb_ == 0) return;
  const profiling::HostScope timed("fem/operator_cpu_batched_diagonal", threads_ > 1 ? Backend::OpenMP : Backend::Serial);
  // The tables of the squared basis functions, (nodes, points) row-major, contracted from the
  // points to the nodes: on quadrilaterals and hexahedra per direction B B, B G, G G (1-D, G the
  // derivative on the points, G = D B), on simplices per pair (a, b) of directions G_a G_b (B B
  // for mass).
  std::vector<std::vector<double>> tab;
  std::vector<std::vector<double>> eo;
  std::vector<int> sign;
  if (tensor_) {
    const int n = n1_, m = m1_;
    std::vector<double> G(std::size_t(m) * n, 0.0);  // G(q, i) = sum_r D(q, r) B(r, i)
    for (int q = 0; q < m; ++q)
      for (int i = 0; i < n; ++i)
        for (int r = 0; r < m; ++r) G[std::size_t(q) * n + i] += Df_[std::size_t(q) * m + r] * Bf_[std::size_t(r) * n + i];
    tab.assign(3, std::vector<double>(std::size_t(n) * m));
    for (int i = 0; i < n; ++i)
      for (int q = 0; q < m; ++q) {
        const double B = Bf_[std::size_t(q) * n + i], g = G[std::size_t(q) * n + i];
        tab[0][std::size_t(i) * m + q] = B * B;
        tab[1][std::size_t(i) * m + q] = B * g;
        tab[2][std::size_t(i) * m + q] = g * g;
      }
    eo.resize(3);
    sign.resize(3);
    for (int k = 0; k < 3; ++k) sign[std::size_t(k)] = mirror_parts(tab[std::size_t(k)], n, m, eo[std::size_t(k)]);
  } else {
    const int pairs = diffusion_ ? nf_ : 1;
    tab.assign(std::size_t(pairs), std::vector<double>(std::size_t(nd_) * nq_));
    int k = 0;
    for (int a = 0; a < (diffusion_ ? dim_ : 1); ++a)
      for (int bb = a; bb < (diffusion_ ? dim_ : 1); ++bb, ++k)
        for (int i = 0; i < nd_; ++i)
          for (int q = 0; q < nq_; ++q) {
            const double ta = diffusion_ ? Gst_[(std::size_t(a) * nd_ + i) * nq_ + q] : Bst_[std::size_t(i) * nq_ + q];
            const double tb = diffusion_ ? Gst_[(std::size_t(bb) * nd_ + i) * nq_ + q] : ta;
            tab[std::size_t(k)][std::size_t(i) * nq_ + q] = ta * tb;
          }
  }
  each_batch([&](index_t b, void* work) {
    Work& wk = *static_cast<Work*>(work);
    const FactorStorage st = storage_[std::size_t(b)];
    const double* geo = geo_.data() + offset_[std::size_t(b)];
    std::optional<VertexLines<2>> lines2;
    std::optional<VertexLines<3>> lines3;
    if (st == FactorStorage::Vertices && dim_ == 2) lines2.emplace(geo);
    if (st == FactorStorage::Vertices && dim_ == 3) lines3.emplace(geo);
    vdouble* f = wk.v.data();    // the pair's factor at the points
    vdouble* r = wk.u.data();    // the diagonal at the nodes
    for (int i = 0; i < nd_; ++i) r[i] = vdouble{};
    const int pairs_dim = diffusion_ ? dim_ : 1;
    int k = 0;
    for (int a = 0; a < pairs_dim; ++a)
      for (int c = a; c < pairs_dim; ++c, ++k) {
        if (st == FactorStorage::Diagonal && a != c) continue;  // zero off the diagonal
        const int kd = st == FactorStorage::Diagonal ? a : k;  // where the factor is
        const double twice = a == c ? 1.0 : 2.0;
        for (int q = 0; q < nq_; ++q) {
          if (st == FactorStorage::Vertices) {
            vdouble F[6];
            if (dim_ == 2) lines2->point(x1_.data(), m1_, q, w_[std::size_t(q)], diffusion_, F);
            else lines3->point(x1_.data(), m1_, q, w_[std::size_t(q)], diffusion_, F);
            f[q] = twice * F[kd];
            continue;
          }
          f[q] = st == FactorStorage::Points ? twice * simd::load(geo + (std::size_t(kd) * nq_ + q) * W)
                                             : (twice * w_[std::size_t(q)]) * simd::load(geo + std::size_t(kd) * W);
        }
        if (!tensor_) {
          contract_any<true>(fixed_, Mat{tab[std::size_t(k)].data(), nd_, nq_, 0, nullptr}, f, r, 1, 1);
          continue;
        }
        // direction d takes B B, B G or G G as a and c name it 0, 1 or 2 times
        const auto M = [&](int dir) {
          const int s = diffusion_ ? (a == dir) + (c == dir) : 0;  // mass: B B in every direction
          return Mat{tab[std::size_t(s)].data(), n1_, m1_, sign[std::size_t(s)], eo[std::size_t(s)].data()};
        };
        const int n = n1_, m = m1_;
        vdouble* t1 = wk.t0.data();
        vdouble* t2 = wk.t1.data();
        if (dim_ == 2) {
          contract_any<false>(fixed_, M(0), f, t1, m, 1);
          contract_any<true>(fixed_, M(1), t1, r, 1, n);
        } else {
          contract_any<false>(fixed_, M(0), f, t1, m * m, 1);
          contract_any<false>(fixed_, M(1), t1, t2, m, n);
          contract_any<true>(fixed_, M(2), t2, r, 1, n * n);
        }
      }
    for (int comp = 0; comp < comps_; ++comp) scatter(ix_, b, reinterpret_cast<const double*>(r), d + std::size_t(comp) * nn_);
  });
}

}  // namespace tessera::fem::cpu_detail
