#pragma once
/// \file macros.hpp
/// Portability macros shared by every layer of tessera.

#if defined(__CUDACC__)
/// Marks a function callable from host and device code.
#define TESSERA_HOST_DEVICE __host__ __device__
/// Marks a device-only function.
#define TESSERA_DEVICE __device__
/// The lambda capture every kernel body uses: by value, callable on host and device.
#define TESSERA_LAMBDA [=] __host__ __device__
#else
#define TESSERA_HOST_DEVICE
#define TESSERA_DEVICE
#define TESSERA_LAMBDA [=]
#endif

#if defined(__CUDA_ARCH__)
/// Defined while compiling the device side of a CUDA translation unit.
#define TESSERA_DEVICE_CODE 1
#endif

#define TESSERA_INLINE inline TESSERA_HOST_DEVICE

#include <cstdint>

namespace tessera {
/// Signed index type used for extents, sizes and loop counters.
using index_t = std::int64_t;
}  // namespace tessera
