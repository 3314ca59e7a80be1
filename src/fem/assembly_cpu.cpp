// The element-batched assembly fill of the CPU backends (assembly_cpu.hpp). Compiled for the
// build machine's instruction set (TESSERA_CPU_ARCH) with multiply-add contraction.
#include "assembly_cpu.hpp"

#include <algorithm>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/core/simd.hpp"
#include "tessera/fem/geometric_factors.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace tessera::fem::assembly_detail {

namespace {

using simd::vdouble;
constexpr int W = simd::lanes;

/// out[s] = sum_r T[(j + s) R + r] K[r], s < Rows: Rows rows of the table against one vector of
/// lanes per point component, the accumulators in registers.
template <int Rows>
void rows_times(const double* T, int R, int j, const vdouble* K, vdouble* out) {
  vdouble acc[Rows];
  const double* t[Rows];
  for (int s = 0; s < Rows; ++s) {
    acc[s] = vdouble{};
    t[s] = T + std::size_t(j + s) * R;
  }
  for (int r = 0; r < R; ++r) {
    const vdouble k = K[r];
    for (int s = 0; s < Rows; ++s) acc[s] = simd::fma(t[s][r], k, acc[s]);
  }
  for (int s = 0; s < Rows; ++s) out[j + s] = acc[s];
}

/// out[j] = sum_r T[j R + r] K[r] for j0 <= j < n.
void table_times(const double* T, int R, int j0, int n, const vdouble* K, vdouble* out) {
  int j = j0;
  for (; j + 8 <= n; j += 8) rows_times<8>(T, R, j, K, out);
  if (j + 4 <= n) {
    rows_times<4>(T, R, j, K, out);
    j += 4;
  }
  if (j + 2 <= n) {
    rows_times<2>(T, R, j, K, out);
    j += 2;
  }
  if (j < n) rows_times<1>(T, R, j, K, out);
}

/// Per-thread buffers of one batch: its factors lane by lane, row u's vector, the row's entries
/// and the physical gradient of row u's basis function (elasticity).
struct Work {
  std::vector<vdouble> w, D, J, K, out, g;
};

}  // namespace

}  // namespace tessera::fem::assembly_detail

namespace tessera::fem {
int assembly_fill_lanes() { return simd::lanes; }
}  // namespace tessera::fem

namespace tessera::fem::assembly_detail {

void fill_batched(const BatchedGroup& g, const EntrySink& sink, const Exec& exec) {
  const EntryShape& s = g.shape;
  const int npe = s.npe, nq = g.nq, dim = g.dim, comps = s.comps;
  const int np = dim * (dim + 1) / 2;
  const bool mass = g.kind == FormKind::Mass, elastic = g.kind == FormKind::Elasticity;
  TESSERA_REQUIRE(dim >= 1 && dim <= 3 && npe > 0 && nq > 0 && (!elastic || (s.full && comps == dim)),
                  "fem assembly (batched fill): unsupported group (dim ", dim, ", ", npe, " nodes, ", nq, " points, ",
                  comps, " components)");
  // The row table T (npe, R): R = nq for mass (values), nq dim (reference gradients) otherwise.
  const int R = mass ? nq : nq * dim;
  std::vector<double> T(std::size_t(npe) * R);
  for (int j = 0; j < npe; ++j)
    for (int q = 0; q < nq; ++q) {
      if (mass) T[std::size_t(j) * R + q] = g.B[std::size_t(q) * npe + j];
      else
        for (int a = 0; a < dim; ++a) T[std::size_t(j) * R + q * dim + a] = g.G[(std::size_t(q) * npe + j) * dim + a];
    }
  const index_t nb = (g.count + W - 1) / W;
  const Material& m = g.material;

  auto run = [&](index_t b, Work& wk) {
    const int live = static_cast<int>(std::min<index_t>(W, g.count - b * W));
    int el[W];
    for (int l = 0; l < W; ++l) el[l] = g.elements[b * W + std::min(l, live - 1)];  // padded lanes repeat
    // The batch's factors, lanes apart.
    auto lanes_of = [&](const double* src, int per, std::vector<vdouble>& dst) {
      dst.resize(std::size_t(per));
      for (int l = 0; l < W; ++l) {
        const double* e = src + std::size_t(el[l]) * per;
        for (int k = 0; k < per; ++k) dst[std::size_t(k)][l] = e[k];
      }
    };
    if (mass || elastic) lanes_of(g.w, nq, wk.w);
    if (!mass && !elastic) lanes_of(g.D, np * nq, wk.D);
    if (elastic) lanes_of(g.Jinv, dim * dim * nq, wk.J);
    wk.K.resize(std::size_t(R));
    wk.out.resize(std::size_t(npe));
    vdouble* K = wk.K.data();
    const index_t base0 = g.first_entry + b * W * index_t(s.per_element);
    // Writes row (c, i) against (d, j), j0 <= j < npe, and the mirrors, for the live lanes.
    auto write = [&](int bij, int bji, int i, int j0) {
      for (int l = 0; l < live; ++l) {
        const index_t base = base0 + index_t(l) * s.per_element;
        for (int j = j0; j < npe; ++j) {
          const double v = wk.out[std::size_t(j)][l];
          sink.put_pair(base + (index_t(bij) * npe + i) * npe + j, base + (index_t(bji) * npe + j) * npe + i, v);
        }
      }
    };
    if (!elastic) {
      // One block, the same for every component.
      for (int i = 0; i < npe; ++i) {
        if (mass) {
          const double c = m.density;
          for (int q = 0; q < nq; ++q) K[q] = (c * g.B[std::size_t(q) * npe + i]) * wk.w[std::size_t(q)];
        } else {
          const double c = m.conductivity;
          const vdouble* D = wk.D.data();
          for (int q = 0; q < nq; ++q) {
            const double* gi = g.G + (std::size_t(q) * npe + i) * dim;
            for (int a = 0; a < dim; ++a) {
              vdouble t{};
              for (int bb = 0; bb < dim; ++bb)
                t = simd::fma(c * gi[bb], D[std::size_t(packed_symmetric_index(dim, a, bb)) * nq + q], t);
              K[q * dim + a] = t;
            }
          }
        }
        table_times(T.data(), R, i, npe, K, wk.out.data());
        for (int c = 0; c < comps; ++c) write(c, c, i, i);
      }
      return;
    }
    // Elasticity: g_i = J^-T grad phi_i at each point; row (c, i) against block d is
    // sum_q w [lambda g_i,c g_j,d + mu (g_i,d g_j,c + delta_cd g_i . g_j)] = (T K)_j with
    // K(q, a) = sum_x J^-1(a, x) k(q, x), k(q, x) = w [lambda g_i,c delta_xd + mu g_i,d delta_xc
    // + mu delta_cd g_i,x].
    wk.g.resize(std::size_t(nq) * dim);
    const vdouble* J = wk.J.data();  // (a, x, q)
    auto jinv = [&](int a, int x, int q) -> const vdouble& { return J[(std::size_t(a) * dim + x) * nq + q]; };
    for (int i = 0; i < npe; ++i) {
      for (int q = 0; q < nq; ++q) {
        const double* gi = g.G + (std::size_t(q) * npe + i) * dim;
        for (int x = 0; x < dim; ++x) {
          vdouble t{};
          for (int a = 0; a < dim; ++a) t = simd::fma(gi[a], jinv(a, x, q), t);
          wk.g[std::size_t(q) * dim + x] = t;
        }
      }
      for (int c = 0; c < comps; ++c)
        for (int d = c; d < comps; ++d) {
          for (int q = 0; q < nq; ++q) {
            const vdouble* gq = &wk.g[std::size_t(q) * dim];
            const vdouble wq = wk.w[std::size_t(q)];
            vdouble k[3];
            for (int x = 0; x < dim; ++x) {
              vdouble v = c == d ? m.mu * gq[x] : vdouble{};
              if (x == d) v += m.lambda * gq[c];
              if (x == c) v += m.mu * gq[d];
              k[x] = wq * v;
            }
            for (int a = 0; a < dim; ++a) {
              vdouble t{};
              for (int x = 0; x < dim; ++x) t = simd::fma(jinv(a, x, q), k[x], t);
              K[q * dim + a] = t;
            }
          }
          const int j0 = d == c ? i : 0;
          table_times(T.data(), R, j0, npe, K, wk.out.data());
          write(c * comps + d, d * comps + c, i, j0);
        }
    }
  };

  const int threads =
      exec.backend == Backend::OpenMP ? std::max(1, std::min<int>(openmp_threads(), int(std::max<index_t>(nb, 1)))) : 1;
  const profiling::HostScope timed("fem/assembly_fill_batched", threads > 1 ? Backend::OpenMP : Backend::Serial);
  if (threads == 1) {
    Work wk;
    for (index_t b = 0; b < nb; ++b) run(b, wk);
    return;
  }
#if defined(_OPENMP)
#pragma omp parallel num_threads(threads)
  {
    Work wk;
#pragma omp for schedule(dynamic, 4)
    for (index_t b = 0; b < nb; ++b) run(b, wk);
  }
#endif
}

}  // namespace tessera::fem::assembly_detail
