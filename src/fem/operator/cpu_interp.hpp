#pragma once
// Interpolation at quadrature points and its transpose for the CPU backends (serial, OpenMP):
// simd::lanes elements side by side, one per lane; sum factorization on quadrilaterals and
// hexahedra, dense tables on triangles and tetrahedra; physical gradients with J^-1 from stored
// geometry or from the element's vertices, computed for all lanes at once. Host code only
// (operator/cpu_interp.cpp, compiled with the CPU kernels' flags), run by fem::Interpolator
// (InterpolatorOptions::kernels.cpu_batched) in place of the team kernels of interpolate_kernels.hpp.

#include <vector>

#include "cpu_indices.hpp"
#include "tessera/core/exec.hpp"

namespace tessera::fem::interp_detail {
struct Args;
}

namespace tessera::fem::cpu_detail {

class BatchedInterpolator {
 public:
  /// From the interpolator's arguments (interpolate_kernels.hpp): sizes, the element-to-node
  /// map, the forward tables (tensor: Bt and Gt (nd1, nq1); simplex: Bt (nd, nq), Gt (dim, nd,
  /// nq)) and the 1-D points, in host memory. fixed_sizes: the contractions of sizes 2..9
  /// unrolled at compile time (OperatorKernelChoice::exact); false: run-time loops.
  BatchedInterpolator(const interp_detail::Args& a, bool tensor, bool fixed_sizes, const Exec& exec);
  /// a.u (global vector) -> a.v, a.rg, a.pg as a.values, a.ref_grads, a.grads ask.
  void interpolate(const interp_detail::Args& a) const { run(a, false); }
  /// a.v, a.rg, a.pg -> a.e_out (elements, components, nodes), overwritten.
  void integrate(const interp_detail::Args& a) const { run(a, true); }
  /// Elements per batch, batches, threads.
  static int lanes();
  index_t batches() const { return ix_.nb; }
  int threads() const { return threads_; }

 private:
  bool tensor_, fixed_;
  int dim_, n1_, m1_, nd_, nq_, threads_ = 1;
  BatchIndices ix_;
  // tensor: 0 B (m1, n1), 1 G (m1, n1) forward; 2 B^T (n1, m1), 3 G^T (n1, m1) back;
  // simplex: 0 B (nq, nd), 1.. G_d (nq, nd) forward; 4 B^T (nd, nq), 5.. G_d^T (nd, nq) back
  std::vector<double> tab_[8], eo_[8];
  int sign_[8] = {};
  std::vector<double> xq_;  // tensor: the 1-D points

  void run(const interp_detail::Args& a, bool transpose) const;
  template <class F>
  void each_batch(const F& run) const;  // run(b, work) over every batch, on the threads
  template <int Dim>
  void forward_batch(const interp_detail::Args& a, index_t b, void* work) const;
  template <int Dim>
  void transpose_batch(const interp_detail::Args& a, index_t b, void* work) const;
};

}  // namespace tessera::fem::cpu_detail
