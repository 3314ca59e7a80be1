#pragma once
/// \file test_backends.hpp
/// Shared helpers of tessera's core unit tests: the backend-parameterized fixture,
/// skips with a reason, error-message checks, random inputs and poison values.
///
/// Kernel code (anything holding a TESSERA_LAMBDA) lives in free functions at namespace
/// scope, never in a TEST/TEST_P body: nvcc rejects extended __host__ __device__ lambdas
/// whose enclosing function is a private member, and gtest's TestBody() is one.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "tessera/core.hpp"

namespace tessera {
/// Lets GoogleTest print a Backend parameter by name.
inline void PrintTo(Backend b, std::ostream* os) { *os << to_string(b); }
}  // namespace tessera

namespace tessera::test {

/// Backends every backend-generic test runs on: serial, openmp, and cuda whenever the
/// CUDA backend is compiled in (its tests skip with "skipped: no GPU" when none is usable).
inline std::vector<Backend> backends() {
  std::vector<Backend> b{Backend::Serial, Backend::OpenMP};
  if (cuda_compiled()) b.push_back(Backend::Cuda);
  return b;
}

inline std::string backend_name(const ::testing::TestParamInfo<Backend>& info) {
  switch (info.param) {
    case Backend::Serial: return "Serial";
    case Backend::OpenMP: return "OpenMP";
    case Backend::Cuda: return "Cuda";
  }
  return "Unknown";
}

inline Exec exec_for(Backend b) {
  Exec e;
  e.backend = b;
  return e;
}

/// The CPU backends, for tests of behaviour that only the CPU backends have.
inline std::vector<Exec> cpu_execs() { return {Exec::serial(), Exec::openmp()}; }

/// Fixture of the backend-generic tests. SetUp skips the CUDA instance without a GPU.
class BackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::Cuda && !cuda_available()) GTEST_SKIP() << "skipped: no GPU";
  }
  Exec exec() const { return exec_for(GetParam()); }
  /// The memory space this backend's kernels use (Device on CUDA).
  Space space() const { return exec().space(); }
  bool on_gpu() const { return GetParam() == Backend::Cuda; }
};

inline constexpr bool kBoundsCheck =
#if defined(TESSERA_BOUNDS_CHECK)
    true;
#else
    false;
#endif

inline bool bounds_check_compiled() { return kBoundsCheck; }

/// True while this translation unit is compiled by nvcc.
inline constexpr bool kCudaUnit =
#if defined(__CUDACC__)
    true;
#else
    false;
#endif

/// Message of the tessera::Error that `f()` throws; "" (and a test failure) when it
/// throws nothing or another exception type.
template <class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected tessera::Error, got another std::exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected a tessera::Error, but nothing was thrown";
  return {};
}

inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << part << "\" not found in message:\n  " << text;
}

/// Random doubles in [lo, hi), reproducible from `seed`.
inline std::vector<double> random_doubles(std::size_t n, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

/// Random ints in [lo, hi], reproducible from `seed`.
inline std::vector<int> random_ints(std::size_t n, std::uint64_t seed, int lo, int hi) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
/// Poison of int outputs: a value no test writes.
inline constexpr int kPoisonInt = std::numeric_limits<int>::min();

/// An array of `space` with every element set to `value` (poison for outputs).
template <class T, int Rank>
Array<T, Rank> filled(const std::string& label, const std::array<index_t, Rank>& extents, Space space, T value) {
  Array<T, Rank> a(label, extents, space);
  a.fill(value);
  return a;
}

/// Host- and device-side "+1" that counts every visit exactly, also when two threads
/// would visit the same index (a bug these counters exist to find).
TESSERA_INLINE void atomic_increment(int* p) {
#if defined(TESSERA_DEVICE_CODE)
  atomicAdd(p, 1);
#else
  std::atomic_ref<int>(*p).fetch_add(1, std::memory_order_relaxed);
#endif
}

}  // namespace tessera::test

#define TESSERA_INSTANTIATE_BACKENDS(Suite)                                                      \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite, ::testing::ValuesIn(::tessera::test::backends()), \
                           ::tessera::test::backend_name)

#define TESSERA_SKIP_WITHOUT_GPU() \
  if (!::tessera::cuda_available()) GTEST_SKIP() << "skipped: no GPU"

// (A function call, not the constant: nvcc warns about the then unreachable test body.)
#define TESSERA_SKIP_WITHOUT_BOUNDS_CHECK() \
  if (!::tessera::test::bounds_check_compiled()) GTEST_SKIP() << "bounds checking not compiled in"

#define EXPECT_CONTAINS(text, part) EXPECT_TRUE(::tessera::test::contains((text), (part)))
