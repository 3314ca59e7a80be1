#pragma once
/// \file backend/cpu.hpp
/// Serial and OpenMP implementations of forall, team launches, reductions and scans.
/// Internal: use the dispatchers in forall.hpp, team.hpp and reduce.hpp.

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "tessera/core/array.hpp"
#include "tessera/core/team.hpp"

namespace tessera::detail {

/// Rethrows the exception of a CPU kernel body with the kernel label added.
[[noreturn]] void rethrow_kernel_error(const char* label, Backend backend, std::exception_ptr e);

/// Runs `body(i)` for i in [0, n) on the serial or OpenMP backend, with exceptions
/// from the body propagated to the caller (the first one, tagged with the label).
template <class Body>
void cpu_parallel_for(const char* label, Backend backend, index_t n, const Body& body) {
  if (backend == Backend::Serial) {
    KernelScope scope;
    try {
      for (index_t i = 0; i < n; ++i) body(i);
    } catch (...) {
      rethrow_kernel_error(label, backend, std::current_exception());
    }
    return;
  }
  std::exception_ptr first;
#if defined(_OPENMP)
#pragma omp parallel
  {
    KernelScope scope;
    // Static contiguous partition done by hand so that the exception handler sits
    // outside the hot loop (which stays vectorizable).
    const index_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    const index_t lo = n * t / nt, hi = n * (t + 1) / nt;
    try {
      for (index_t i = lo; i < hi; ++i) body(i);
    } catch (...) {
#pragma omp critical(tessera_kernel_error)
      if (!first) first = std::current_exception();
    }
  }
#else
  {
    KernelScope scope;
    try {
      for (index_t i = 0; i < n; ++i) body(i);
    } catch (...) {
      first = std::current_exception();
    }
  }
#endif
  if (first) rethrow_kernel_error(label, backend, first);
}

/// One reusable scratch arena per host thread (team launches' shared memory).
struct CpuArena {
  unsigned char* ptr = nullptr;
  std::size_t capacity = 0;
  ~CpuArena() { std::free(ptr); }
  unsigned char* get(std::size_t bytes) {
    if (bytes > capacity) {
      std::free(ptr);
      capacity = align_up(bytes, 4096);
      ptr = static_cast<unsigned char*>(std::aligned_alloc(kSharedRegionAlign, capacity));
      if (!ptr) fail("team launch: could not allocate a CPU arena of ", capacity, " bytes");
    }
    return ptr;
  }
};
inline thread_local CpuArena cpu_arena;

template <class F>
void cpu_team_launch(const char* label, Backend backend, const Teams& t, const F& f) {
  const TeamParams p = make_team_params(t);
  const std::size_t bytes = team_shared_bytes(p);
  const index_t blocks = (t.items + t.items_per_block - 1) / t.items_per_block;
  cpu_parallel_for(label, backend, blocks, [&](index_t b) {
    unsigned char* arena = cpu_arena.get(bytes);
#if defined(TESSERA_BOUNDS_CHECK)
    if (bytes > 0) std::memset(arena, 0xFF, bytes);  // poison: unset shared memory reads as NaN (no arena: null)
#endif
    for (int l = 0; l < p.items_per_block; ++l) {
      TeamContext ctx(p, arena, b, l, 0, 0, 0, 0, 1);
      f(ctx);
    }
  });
}

/// Fixed chunk size of CPU reductions and scans: results depend on n only, not on
/// the number of threads, so serial and OpenMP give the same bits.
inline constexpr index_t kCpuChunk = 4096;

template <class T, class Map, class Op>
T cpu_transform_reduce(const char* label, Backend backend, index_t n, T identity, const Map& map, const Op& op) {
  const index_t chunks = (n + kCpuChunk - 1) / kCpuChunk;
  std::vector<T> partial(static_cast<std::size_t>(chunks), identity);
  cpu_parallel_for(label, backend, chunks, [&](index_t c) {
    T acc = identity;
    const index_t end = (c + 1) * kCpuChunk < n ? (c + 1) * kCpuChunk : n;
    for (index_t i = c * kCpuChunk; i < end; ++i) acc = op(acc, map(i));
    partial[static_cast<std::size_t>(c)] = acc;
  });
  T acc = identity;
  for (const T& v : partial) acc = op(acc, v);
  return acc;
}

template <class T>
T cpu_exclusive_scan(const char* label, Backend backend, View<const T, 1> in, View<T, 1> out) {
  const index_t n = in.size();
  const index_t chunks = (n + kCpuChunk - 1) / kCpuChunk;
  std::vector<T> offset(static_cast<std::size_t>(chunks) + 1, T{});
  cpu_parallel_for(label, backend, chunks, [&](index_t c) {
    T acc{};
    const index_t end = (c + 1) * kCpuChunk < n ? (c + 1) * kCpuChunk : n;
    for (index_t i = c * kCpuChunk; i < end; ++i) acc += in[i];
    offset[static_cast<std::size_t>(c) + 1] = acc;
  });
  for (std::size_t c = 1; c < offset.size(); ++c) offset[c] += offset[c - 1];
  cpu_parallel_for(label, backend, chunks, [&](index_t c) {
    T acc = offset[static_cast<std::size_t>(c)];
    const index_t end = (c + 1) * kCpuChunk < n ? (c + 1) * kCpuChunk : n;
    for (index_t i = c * kCpuChunk; i < end; ++i) {
      const T v = in[i];  // read before write: in and out may alias
      out[i] = acc;
      acc += v;
    }
  });
  return offset.back();
}

}  // namespace tessera::detail
