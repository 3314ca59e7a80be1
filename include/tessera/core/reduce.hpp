#pragma once
/// \file reduce.hpp
/// Deterministic reductions and an exclusive scan.
///
///     double s = tessera::sum(exec, x);           // x: Array<double> or View<const double,1>
///     double d = tessera::dot(exec, x, y);
///     double m = tessera::transform_reduce("app/norm_inf", exec, n, 0.0,
///                    TESSERA_LAMBDA(index_t i) { return fabs(x(i)); }, tessera::Max{});
///
/// For a given backend and size the result is the same bits every run: the CPU
/// backends combine fixed 4096-element chunks in order (so serial and OpenMP agree);
/// the GPU uses a grid whose shape depends on n only and a fixed-order tree.
/// exclusive_scan is exact for integers everywhere and bitwise reproducible for
/// floating point on the CPU backends; on the GPU (CUB) a floating-point scan can
/// differ in the last bit between runs.

#include <limits>

#include "tessera/core/forall.hpp"

namespace tessera {

/// Reduction operators (usable on host and device).
struct Plus {
  template <class T>
  TESSERA_HOST_DEVICE T operator()(const T& a, const T& b) const { return a + b; }
};
struct Min {
  template <class T>
  TESSERA_HOST_DEVICE T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
struct Max {
  template <class T>
  TESSERA_HOST_DEVICE T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};

/// op-reduction of map(i) for i in [0, n), starting from `identity`.
template <class T, class Map, class Op>
T transform_reduce(const char* label, const Exec& exec, index_t n, T identity, const Map& map, const Op& op) {
  TESSERA_REQUIRE(n >= 0, "reduction '", label, "': negative size ", n);
  T result = identity;
  if (n == 0) return result;
  detail::dispatch(
      label, exec, [&] { result = detail::cpu_transform_reduce(label, exec.backend, n, identity, map, op); },
      [&] {
#if defined(TESSERA_CUDA_DISPATCH)
        result = detail::cuda_transform_reduce(label, n, identity, map, op);
#endif
      });
  return result;
}

namespace detail {
template <class T>
struct ReadView {
  View<const T, 1> v;
  TESSERA_HOST_DEVICE T operator()(index_t i) const { return v[i]; }
};
template <class T>
struct MulViews {
  View<const T, 1> a, b;
  TESSERA_HOST_DEVICE T operator()(index_t i) const { return a[i] * b[i]; }
};
}  // namespace detail

template <class T>
T sum(const Exec& exec, View<const T, 1> v) {
  return transform_reduce("core/sum", exec, v.size(), T{}, detail::ReadView<T>{v}, Plus{});
}
template <class T>
T min(const Exec& exec, View<const T, 1> v) {
  TESSERA_REQUIRE(v.size() > 0, "tessera::min of an empty view");
  return transform_reduce("core/min", exec, v.size(), std::numeric_limits<T>::max(), detail::ReadView<T>{v}, Min{});
}
template <class T>
T max(const Exec& exec, View<const T, 1> v) {
  TESSERA_REQUIRE(v.size() > 0, "tessera::max of an empty view");
  return transform_reduce("core/max", exec, v.size(), std::numeric_limits<T>::lowest(), detail::ReadView<T>{v},
                          Max{});
}
template <class T>
T dot(const Exec& exec, View<const T, 1> a, View<const T, 1> b) {
  TESSERA_REQUIRE(a.size() == b.size(), "tessera::dot: sizes differ (", a.size(), " and ", b.size(), ")");
  return transform_reduce("core/dot", exec, a.size(), T{}, detail::MulViews<T>{a, b}, Plus{});
}
template <class T>
T sum(const Exec& e, const Array<T, 1>& a) { return sum(e, a.cview()); }
template <class T>
T min(const Exec& e, const Array<T, 1>& a) { return min(e, a.cview()); }
template <class T>
T max(const Exec& e, const Array<T, 1>& a) { return max(e, a.cview()); }
template <class T>
T dot(const Exec& e, const Array<T, 1>& a, const Array<T, 1>& b) { return dot(e, a.cview(), b.cview()); }

/// out[i] = in[0] + ... + in[i-1] (out[0] = 0); returns the total. `in` and `out` may
/// be the same view. Integer and floating-point T.
template <class T>
T exclusive_scan(const Exec& exec, View<const T, 1> in, View<T, 1> out) {
  TESSERA_REQUIRE(in.size() == out.size(), "exclusive_scan: sizes differ (", in.size(), " and ", out.size(), ")");
  T total{};
  if (in.size() == 0) return total;
  detail::dispatch(
      "core/exclusive_scan", exec,
      [&] { total = detail::cpu_exclusive_scan<T>("core/exclusive_scan", exec.backend, in, out); },
      [&] {
#if defined(TESSERA_CUDA_DISPATCH)
        total = detail::cuda_exclusive_scan<T>("core/exclusive_scan", in, out);
#endif
      });
  return total;
}
template <class T>
T exclusive_scan(const Exec& e, const Array<T, 1>& in, const Array<T, 1>& out) {
  return exclusive_scan(e, in.cview(), out.view());
}

}  // namespace tessera
