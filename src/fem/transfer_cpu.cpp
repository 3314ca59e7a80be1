// OrderTransfer's tensor-product element kernel on the CPU backends, batched across SIMD lanes.
#include "transfer_cpu.hpp"

#include "tensor_sizes.hpp"

#include <algorithm>
#include <vector>

#include "operator/cpu_contract.hpp"
#include "tessera/core/backend/cpu.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"

namespace tessera::fem::transfer_detail {

using cpu_detail::Mat;
using cpu_detail::vdouble;
using cpu_detail::W;

namespace {

template <int Dim>
void run(const char* label, const Exec& exec, index_t ne, int m, int n, const Mat& M, int nc, const double* in,
         double* out, const int* fidx, const double* w, bool scale_in, bool scale_out) {
  const int ni = ipow(n, Dim), no = ipow(m, Dim), big = ipow(std::max(m, n), Dim);
  const index_t nb = (ne + W - 1) / W;
  detail::cpu_parallel_for(label, exec.backend, nb, [&](index_t b) {
    // per thread: the input, two partial contractions and the output of one batch
    thread_local std::vector<vdouble> buf;
    if (buf.size() < std::size_t(4 * big)) buf.resize(std::size_t(4 * big));
    vdouble *u = buf.data(), *t0 = u + big, *t1 = t0 + big, *o = t1 + big;
    const index_t k0 = b * W;
    const int lanes = int(std::min<index_t>(W, ne - k0));
    for (int c = 0; c < nc; ++c) {
      for (int i = 0; i < ni; ++i) {
        vdouble v{};
        for (int l = 0; l < lanes; ++l) {
          const index_t k = k0 + l;
          double x = in[(k * nc + c) * ni + i];
          if (scale_in) x *= w[fidx[k * ni + i]];
          v[l] = x;
        }
        u[i] = v;
      }
      cpu_detail::tensor_apply<Dim>(true, M, u, o, t0, t1);
      for (int i = 0; i < no; ++i)
        for (int l = 0; l < lanes; ++l) {
          const index_t k = k0 + l;
          double x = o[i][l];
          if (scale_out) x *= w[fidx[k * no + i]];
          out[(k * nc + c) * no + i] = x;
        }
    }
  });
}

}  // namespace

void apply_tensor_cpu(const char* label, const Exec& exec, index_t ne, int dim, int m, int n, const double* A,
                      int nc, const double* in, double* out, const int* fidx, const double* w, bool scale_in,
                      bool scale_out) {
  TESSERA_REQUIRE((dim == 2 || dim == 3) && m >= 1 && n >= 1 && nc >= 1 && !exec.on_device(),
                  "fem::OrderTransfer: the batched CPU transfer takes quadrilaterals or hexahedra on a CPU backend");
  if (ne <= 0) return;
  const profiling::HostScope timed(label, exec.backend);
  const std::vector<double> a(A, A + std::size_t(m) * n);
  std::vector<double> eo;
  const int sign = cpu_detail::mirror_parts(a, m, n, eo);
  const Mat M{a.data(), m, n, sign, eo.data()};
  if (dim == 2) run<2>(label, exec, ne, m, n, M, nc, in, out, fidx, w, scale_in, scale_out);
  else run<3>(label, exec, ne, m, n, M, nc, in, out, fidx, w, scale_in, scale_out);
}

}  // namespace tessera::fem::transfer_detail
