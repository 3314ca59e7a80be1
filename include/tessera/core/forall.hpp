#pragma once
/// \file forall.hpp
/// `forall`: run a lambda for every index of a range or of a multi-dimensional box.
///
///     forall("core/axpy", exec, n, TESSERA_LAMBDA(index_t i) { y(i) += a * x(i); });
///     forall("core/update", exec, Bounds<4>{nv, nz, ny, nx},
///            TESSERA_LAMBDA(int v, int k, int j, int i) { s(v, k, j, i) = ...; });
///
/// The last index of a Bounds varies fastest (adjacent GPU threads get adjacent i).
/// A translation unit that launches on the CUDA backend must be compiled by nvcc
/// (in CMake: list it in tessera_add_cuda_sources or set LANGUAGE CUDA); launching
/// on CUDA from a unit compiled by the host compiler throws tessera::Error.

#include <limits>
#include <utility>

#include "tessera/core/backend/dispatch.hpp"

namespace tessera {

/// Extents of a collapsed loop nest; each loop runs from 0 to its extent.
template <int N>
struct Bounds {
  static_assert(N >= 1 && N <= 8, "Bounds supports 1 to 8 dimensions");
  index_t extent[N];

  template <class... E>
    requires(sizeof...(E) == N && (std::is_integral_v<E> && ...))
  constexpr Bounds(E... e) : extent{static_cast<index_t>(e)...} {}

  TESSERA_HOST_DEVICE index_t size() const {
    index_t n = 1;
    for (int d = 0; d < N; ++d) n *= extent[d];
    return n;
  }
};
template <class... E>
Bounds(E...) -> Bounds<static_cast<int>(sizeof...(E))>;

namespace detail {
/// Calls f(i0, ..., iN-1) for the flat index (row-major, last index fastest).
template <int N, class F, std::size_t... D>
TESSERA_INLINE void call_unpacked(const F& f, const Bounds<N>& b, index_t flat, std::index_sequence<D...>) {
  int idx[N];
  for (int d = N - 1; d >= 0; --d) {
    idx[d] = static_cast<int>(flat % b.extent[d]);
    flat /= b.extent[d];
  }
  f(idx[D]...);
}

/// CPU helper: runs the innermost loop of row `row` (the leading N-1 indices, flattened).
template <int N, class F, std::size_t... D>
inline void call_rows(const F& f, const Bounds<N>& b, index_t row, std::index_sequence<D...>) {
  int idx[N];
  for (int d = N - 2; d >= 0; --d) {
    idx[d] = static_cast<int>(row % b.extent[d]);
    row /= b.extent[d];
  }
  const int inner = static_cast<int>(b.extent[N - 1]);
  for (int i = 0; i < inner; ++i) f(idx[D]..., i);
}

template <int N, class F>
struct Unpack {
  Bounds<N> b;
  F f;
  TESSERA_HOST_DEVICE void operator()(index_t flat) const { call_unpacked(f, b, flat, std::make_index_sequence<N>{}); }
};
}  // namespace detail

/// Calls `f(i)` for i in [0, n) on exec's backend. `label` names the kernel in errors,
/// timers and NVTX ranges ("module/kernel").
template <class F>
void forall(const char* label, const Exec& exec, index_t n, const F& f) {
  TESSERA_REQUIRE(n >= 0, "forall '", label, "': negative range ", n);
  if (n == 0) return;
  detail::dispatch(
      label, exec, [&] { detail::cpu_parallel_for(label, exec.backend, n, f); },
      [&] {
#if defined(TESSERA_CUDA_DISPATCH)
        detail::cuda_forall(label, exec, n, f);
#endif
      });
}

/// Calls `f(i0, ..., iN-1)` (ints) for every index of the box, collapsed into one loop.
template <int N, class F>
void forall(const char* label, const Exec& exec, const Bounds<N>& bounds, const F& f) {
  for (int d = 0; d < N; ++d)
    TESSERA_REQUIRE(bounds.extent[d] >= 0 && bounds.extent[d] <= 0x7fffffff, "forall '", label, "': extent ", d,
                    " is ", bounds.extent[d], " (must be in 0..2^31-1)");
  if (bounds.size() == 0) return;
  if (exec.backend == Backend::Cuda) {
    // Wrapping f in Unpack copies it: a kernel copy, which must not touch Array counts.
    detail::KernelScope untracked;
    forall(label, exec, bounds.size(), detail::Unpack<N, F>{bounds, f});
    return;
  }
  // CPU: parallel over the leading indices, a plain (vectorizable) loop over the last.
  const index_t inner = bounds.extent[N - 1];
  detail::dispatch(
      label, exec,
      [&] {
        detail::cpu_parallel_for(label, exec.backend, bounds.size() / inner, [&](index_t row) {
          detail::call_rows(f, bounds, row, std::make_index_sequence<N - 1>{});
        });
      },
      [] {});
}

/// Whether a team launch of F from this translation unit can run on the CPU backends: false
/// for a functor that declares gpu_only (team.hpp) in a unit that nvcc compiles.
template <class F>
constexpr bool team_runs_on_cpu() {
#if defined(TESSERA_CUDA_DISPATCH)
  return !detail::team_gpu_only<F>();
#else
  return true;
#endif
}

/// Team launch: `f(TeamContext&)` runs for every item; see team.hpp for the rules.
/// Throws tessera::Error naming the label when the threads or the shared memory exceed
/// what the device allows, or when exec is a CPU backend and team_runs_on_cpu<F>() is false.
template <class F>
void launch(const char* label, const Exec& exec, const Teams& t, const F& f) {
  TESSERA_REQUIRE(t.items >= 0, "team launch '", label, "': negative item count ", t.items);
  TESSERA_REQUIRE(t.items_per_block >= 1, "team launch '", label, "': items_per_block must be >= 1 (got ",
                  t.items_per_block, ")");
  TESSERA_REQUIRE(t.threads.x >= 1 && t.threads.y >= 1 && t.threads.z >= 1, "team launch '", label,
                  "': thread extents must be >= 1 (got ", t.threads.x, "x", t.threads.y, "x", t.threads.z, ")");
  if (t.items == 0) return;
  detail::dispatch(
      label, exec,
      [&] {
        if constexpr (team_runs_on_cpu<F>()) detail::cpu_team_launch(label, exec.backend, t, f);
        else detail::gpu_only_on_cpu(label, exec.backend);
      },
      [&] {
#if defined(TESSERA_CUDA_DISPATCH)
        detail::cuda_team_launch(label, t, f);
#endif
      });
}

/// The most threads per block (items x threads per item) a team launch of F can use on exec:
/// on the CUDA backend the kernel's limit, which its register use sets (at most 1024); on the
/// CPU backends no limit (INT_MAX). For a functor whose item regions may spill to device
/// memory (team.hpp's items_may_spill), the limit of whichever of its two launches is lower.
/// Call it from code that nvcc compiles in CUDA builds.
template <class F>
int team_max_threads(const Exec& exec) {
#if defined(TESSERA_CUDA_DISPATCH)
  if (exec.backend == Backend::Cuda) return detail::cuda_team_max_threads<F>();
#endif
  (void)exec;
  return std::numeric_limits<int>::max();
}

}  // namespace tessera
