#pragma once
/// \file simd.hpp
/// A vector of doubles of the host's SIMD width, for the CPU kernels that run several elements
/// side by side, one per lane (fem's element-batched operator). Host code only.
///
///     using tessera::simd::vdouble;                 // simd::lanes doubles
///     vdouble a = simd::broadcast(2.0), b = simd::load(p);
///     a = simd::fma(s, b, a);                       // a + s * b, lane by lane
///
/// The width is fixed when the translation unit is compiled: 8 lanes where the compiler targets
/// AVX-512, 4 with AVX, else 2 (SSE2, NEON, or the compiler's scalar code for other targets).
/// The library compiles its batched kernels for the build machine's instruction set by default
/// (CMake option TESSERA_CPU_ARCH, see docs/cpu.md); every width gives the same results up to
/// rounding. Built on the vector extension of GCC and Clang (other compilers are refused here).

#if !defined(__GNUC__)
#error "tessera/core/simd.hpp needs the vector extension of GCC or Clang"
#endif

#include <cstring>

namespace tessera::simd {

#if defined(__AVX512F__)
inline constexpr int lanes = 8;
#elif defined(__AVX__)
inline constexpr int lanes = 4;
#else
inline constexpr int lanes = 2;
#endif

/// simd::lanes doubles, operated on lane by lane with + - * / (a double operand is broadcast).
typedef double vdouble __attribute__((vector_size(sizeof(double) * lanes)));

/// Every lane set to s.
inline vdouble broadcast(double s) { return vdouble{} + s; }
/// lanes consecutive doubles from p (no alignment needed).
inline vdouble load(const double* p) {
  vdouble v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
/// The lanes to lanes consecutive doubles at p (no alignment needed).
inline void store(double* p, vdouble v) { std::memcpy(p, &v, sizeof v); }
/// a * b + c lane by lane; one fused instruction where the target has FMA and the translation
/// unit allows contraction (-ffp-contract=fast; the batched kernels are compiled with it).
inline vdouble fma(double a, vdouble b, vdouble c) { return a * b + c; }
inline vdouble fma(vdouble a, vdouble b, vdouble c) { return a * b + c; }

}  // namespace tessera::simd
