#pragma once
/// \file atomic.hpp
/// `atomic_add`: an addition to memory that other threads of the same launch may update at
/// the same time.
///
///     forall("app/histogram", exec, n, TESSERA_LAMBDA(index_t i) {
///       tessera::atomic_add(&h(bin(i)), 1.0, concurrent);   // concurrent: exec is not serial
///     });
///
/// On the GPU it is `atomicAdd`; on the CPU an atomic read-modify-write when `concurrent`
/// (OpenMP), a plain addition otherwise (the serial backend runs nothing concurrently).

#include <atomic>

#include "tessera/core/macros.hpp"

namespace tessera {

/// *p += v, atomically where threads run concurrently (see the file comment).
TESSERA_HOST_DEVICE inline void atomic_add(double* p, double v, bool concurrent = true) {
#if defined(TESSERA_DEVICE_CODE)
  (void)concurrent;
  atomicAdd(p, v);
#else
  if (concurrent) std::atomic_ref<double>(*p).fetch_add(v, std::memory_order_relaxed);
  else *p += v;
#endif
}

}  // namespace tessera
