#pragma once
/// \file tensor_test_util.hpp
/// Helpers of the tensor-layer tests: random Fields, host access, comparisons.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "test_backends.hpp"
#include "tessera/tensor.hpp"

namespace tessera::test {

/// A Field of `space` filled with random values in [lo, hi) (reproducible from seed).
template <class F>
F random_field(const std::string& label, index_t n, Space space, std::uint64_t seed, double lo = -1.0,
               double hi = 1.0) {
  F h(label, n, Space::Host);
  const auto v = random_doubles(static_cast<std::size_t>(F::components * n), seed, lo, hi);
  std::copy(v.begin(), v.end(), h.data());
  return space == Space::Host ? h : h.clone(space);
}

/// Host copy of a Field's storage.
template <class F>
std::vector<double> host_values(const F& f) {
  return f.array().to_vector();
}

/// Value of component `idx` at point x of a host vector holding a Field's storage.
template <class F>
double at(const std::vector<double>& v, index_t n, const std::array<int, F::rank>& idx, index_t x) {
  return v[static_cast<std::size_t>(F::component_index(idx) * n + x)];
}

/// Compares a Field (any space) with a reference of its storage: bit for bit on the
/// CPU, to `rel` relative on the GPU.
template <class F>
::testing::AssertionResult matches(const F& f, const std::vector<double>& ref, bool exact, double rel = 1e-14) {
  const auto got = host_values(f);
  if (got.size() != ref.size()) return ::testing::AssertionFailure() << "size " << got.size() << " vs " << ref.size();
  for (std::size_t q = 0; q < got.size(); ++q) {
    const bool ok = exact ? (got[q] == ref[q] || (std::isnan(got[q]) && std::isnan(ref[q])))
                          : std::abs(got[q] - ref[q]) <= rel * std::max(1.0, std::abs(ref[q]));
    if (!ok)
      return ::testing::AssertionFailure() << f.label() << ": element " << q << " (component " << q / f.size()
                                           << ", point " << q % f.size() << ") is " << got[q] << ", expected "
                                           << ref[q];
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tessera::test
