#pragma once
/// \file backend/dispatch.hpp
/// Picks the backend implementation of a launch at run time and times it when
/// profiling is on. Internal to core.

#include <chrono>

#include "tessera/core/backend/cpu.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/core/profiling.hpp"

#if defined(__CUDACC__)
#include "tessera/core/backend/cuda.hpp"
#define TESSERA_CUDA_DISPATCH 1
#endif

namespace tessera::detail {

/// The error for a CUDA launch from a translation unit that nvcc did not compile.
[[noreturn]] void cuda_not_in_this_unit(const char* label);

/// The error for a team launch of a GPU-only functor (team.hpp) on a CPU backend.
[[noreturn]] void gpu_only_on_cpu(const char* label, Backend backend);

/// Runs `cpu()` or `gpu()` for exec's backend; `gpu` is called only in CUDA units.
template <class Cpu, class Gpu>
void dispatch(const char* label, const Exec& exec, const Cpu& cpu, const Gpu& gpu) {
  const bool timed = profiling::enabled();
  if (exec.backend != Backend::Cuda) {
    if (!timed) return cpu();
    const auto t0 = std::chrono::steady_clock::now();
    cpu();
    const std::chrono::duration<double, std::milli> dt = std::chrono::steady_clock::now() - t0;
    profiling::detail::record_host(label, exec.backend, dt.count());
    return;
  }
#if defined(TESSERA_CUDA_DISPATCH)
  if (!timed) return gpu();
  auto t = profiling::detail::gpu_begin();
  gpu();
  profiling::detail::gpu_end(label, t);
#else
  (void)gpu;
  cuda_not_in_this_unit(label);
#endif
}

}  // namespace tessera::detail
