#pragma once
/// \file async.hpp
/// Asynchronous data movement and warp exchange inside team kernels (team.hpp), one source for
/// every backend: on the GPU the copy engines and shuffles of the architecture the code is
/// compiled for, on the CPU (and where the hardware lacks them) the plain equivalent.
///
///     tessera::copy_async(ctx, &buf[i], &x[i]);   // cp.async on sm_80+, a load elsewhere
///     tessera::async_commit();
///     ...                                          // compute on the previous buffer
///     tessera::async_wait(false);                  // this thread's copies have landed
///     ctx.sync();                                  // and everybody's
///
/// - copy_async / async_commit / async_wait: element copies global -> shared memory in groups.
/// - prefetch_l2: a hint that fetches a range into the GPU's L2 cache now.
/// - bulk_copy_start / bulk_copy_wait: one bulk copy completing on a shared-memory barrier
///   (sm_90), for rows that one thread issues for the block.
/// - warp_shuffle: a value from another lane of the same warp (device code only).

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#include <cuda_pipeline.h>
#endif

#include "tessera/core/macros.hpp"
#include "tessera/core/team.hpp"

namespace tessera {

/// dst = *src for dst in ctx's item region: asynchronously on the GPU (complete after
/// async_wait) when that region is in shared memory, at once otherwise (the CPU, and a launch
/// whose item regions went to device memory: cp.async writes shared memory only).
template <class T>
TESSERA_HOST_DEVICE inline void copy_async(const TeamContext& ctx, T* dst, const T* src) {
#if defined(TESSERA_DEVICE_CODE) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if (ctx.items_in_shared_memory()) __pipeline_memcpy_async(dst, src, sizeof(T));
  else *dst = *src;
#else
  (void)ctx;
  *dst = *src;
#endif
}
/// Closes the group of copies issued since the last commit.
TESSERA_HOST_DEVICE inline void async_commit() {
#if defined(TESSERA_DEVICE_CODE) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  __pipeline_commit();
#endif
}
/// Waits for this thread's copy groups except the newest one (`all_but_newest`) or all.
TESSERA_HOST_DEVICE inline void async_wait(bool all_but_newest) {
#if defined(TESSERA_DEVICE_CODE) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if (all_but_newest) __pipeline_wait_prior(1);
  else __pipeline_wait_prior(0);
#else
  (void)all_but_newest;
#endif
}

/// Asks the GPU's L2 cache to fetch [p, p + bytes) from device memory now, so that later loads
/// of it wait for L2, not DRAM: one bulk prefetch (sm_90: cp.async.bulk.prefetch.L2) where p
/// and bytes are multiples of 16, nothing otherwise and on the CPU. A hint: nothing waits for
/// it and results do not depend on it.
TESSERA_HOST_DEVICE inline void prefetch_l2(const void* p, std::size_t bytes) {
#if defined(TESSERA_DEVICE_CODE) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (((reinterpret_cast<std::uintptr_t>(p) | bytes) & 15) == 0 && bytes > 0 && bytes < (std::size_t(1) << 31))
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(static_cast<unsigned>(bytes)) : "memory");
#else
  (void)p;
  (void)bytes;
#endif
}

/// One bulk copy of `bytes` from global src to shared dst by the GPU's copy engine (sm_90
/// cp.async.bulk), completing on the shared mbarrier `bar`, which this call initializes for
/// one arrival: issued by one thread, waited for by all with bulk_copy_wait once the block has
/// synchronized after it (the initialization must precede every wait). src, dst and bytes
/// must be multiples of 16. Device code for sm_90 and newer only (bulk_copy_available).
TESSERA_HOST_DEVICE constexpr bool bulk_copy_available() {
#if defined(TESSERA_DEVICE_CODE) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return true;
#else
  return false;
#endif
}
TESSERA_HOST_DEVICE inline void bulk_copy_start(unsigned long long* bar, void* dst, const void* src, unsigned bytes) {
#if defined(TESSERA_DEVICE_CODE) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(d),
               "l"(src), "r"(bytes), "r"(b)
               : "memory");
#else
  (void)bar, (void)dst, (void)src, (void)bytes;
#endif
}
TESSERA_HOST_DEVICE inline void bulk_copy_wait(unsigned long long* bar) {
#if defined(TESSERA_DEVICE_CODE) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  unsigned done = 0;
  while (!done)
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(b)
        : "memory");
#else
  (void)bar;
#endif
}

/// The value `v` of lane `src` among the `width` lanes (a power of two up to 32) of this
/// thread's warp segment, for the lanes in `mask` (all of which must call it). Device code only:
/// the CPU runs one lane per item, so there is nothing to exchange.
TESSERA_HOST_DEVICE inline double warp_shuffle(unsigned mask, double v, int src, int width) {
#if defined(TESSERA_DEVICE_CODE)
  return __shfl_sync(mask, v, src, width);
#else
  (void)mask, (void)src, (void)width;
  return v;
#endif
}

}  // namespace tessera
