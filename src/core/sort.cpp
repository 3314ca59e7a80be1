// Stable radix sort of (key, value) pairs (compiled by nvcc in CUDA builds).
#include "tessera/core/sort.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "tessera/core/array.hpp"
#include "tessera/core/backend/dispatch.hpp"
#include "tessera/core/error.hpp"

#if defined(TESSERA_CUDA_DISPATCH)
#include <cub/device/device_radix_sort.cuh>
#endif

namespace tessera {

int bits_for(std::uint64_t n) {
  int b = 1;
  while (b < 64 && (std::uint64_t{1} << b) < n) ++b;
  return b;
}

namespace {

constexpr int kDigitBits = 8;
constexpr int kBuckets = 1 << kDigitBits;

/// One LSD pass of `shift` from (ki, vi) into (ko, vo), chunk by chunk. Returns false (and
/// writes nothing) when every key has the same digit: the pass would not move anything.
template <class V>
bool radix_pass(Backend backend, const std::uint64_t* ki, const V* vi, std::uint64_t* ko, V* vo, index_t n, int shift,
                index_t nchunks) {
  std::vector<std::array<index_t, kBuckets>> hist(static_cast<std::size_t>(nchunks));
  const auto chunk_range = [&](index_t c) {
    return std::array<index_t, 2>{n * c / nchunks, n * (c + 1) / nchunks};
  };
  detail::cpu_parallel_for("core/sort_pairs", backend, nchunks, [&](index_t c) {
    auto& h = hist[static_cast<std::size_t>(c)];
    h.fill(0);
    const auto [lo, hi] = chunk_range(c);
    for (index_t i = lo; i < hi; ++i) ++h[(ki[i] >> shift) & (kBuckets - 1)];
  });
  // Exclusive offsets: digit-major, then chunk order (stable).
  index_t total = 0;
  int used = 0;
  for (int d = 0; d < kBuckets; ++d) {
    index_t digit_total = 0;
    for (auto& h : hist) {
      const index_t cnt = h[static_cast<std::size_t>(d)];
      h[static_cast<std::size_t>(d)] = total;
      total += cnt;
      digit_total += cnt;
    }
    used += digit_total > 0;
  }
  if (used <= 1) return false;
  detail::cpu_parallel_for("core/sort_pairs", backend, nchunks, [&](index_t c) {
    auto& off = hist[static_cast<std::size_t>(c)];
    const auto [lo, hi] = chunk_range(c);
    for (index_t i = lo; i < hi; ++i) {
      const index_t at = off[(ki[i] >> shift) & (kBuckets - 1)]++;
      ko[at] = ki[i];
      vo[at] = vi[i];
    }
  });
  return true;
}

template <class V>
void cpu_sort_pairs(Backend backend, View<std::uint64_t, 1> keys, View<V, 1> values, int key_bits) {
  const index_t n = keys.size();
  Array<std::uint64_t, 1> k2("core/sort_pairs keys", {n});
  Array<V, 1> v2("core/sort_pairs values", {n});
  std::uint64_t* ka = keys.data();
  V* va = values.data();
  std::uint64_t* kb = k2.data();
  V* vb = v2.data();
  // A few chunks per thread; the result does not depend on the count (the sort is stable).
  const index_t nchunks = std::max<index_t>(1, std::min<index_t>(n / 16384, 4 * openmp_threads()));
  for (int shift = 0; shift < key_bits; shift += kDigitBits) {
    if (radix_pass(backend, ka, va, kb, vb, n, shift, nchunks)) {
      std::swap(ka, kb);
      std::swap(va, vb);
    }
  }
  if (ka != keys.data()) {
    std::copy(ka, ka + n, keys.data());
    std::copy(va, va + n, values.data());
  }
}

#if defined(TESSERA_CUDA_DISPATCH)
template <class V>
void cuda_sort_pairs(View<std::uint64_t, 1> keys, View<V, 1> values, int key_bits) {
  const index_t n = keys.size();
  Array<std::uint64_t, 1> k2("core/sort_pairs keys", {n}, Space::Device);
  Array<V, 1> v2("core/sort_pairs values", {n}, Space::Device);
  cub::DoubleBuffer<std::uint64_t> kb(keys.data(), k2.data());
  cub::DoubleBuffer<V> vb(values.data(), v2.data());
  std::size_t temp = 0;
  TESSERA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp, kb, vb, n, 0, key_bits));
  Array<unsigned char, 1> scratch("core/sort_pairs scratch", {static_cast<index_t>(temp)}, Space::Device);
  {
    detail::CudaLaunchScope scope("core/sort_pairs");
    TESSERA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.data(), temp, kb, vb, n, 0, key_bits));
    detail::cuda_check_launch("core/sort_pairs");
  }
  if (kb.Current() != keys.data()) {
    TESSERA_CUDA_CHECK(cudaMemcpy(keys.data(), kb.Current(), sizeof(std::uint64_t) * n, cudaMemcpyDeviceToDevice));
    TESSERA_CUDA_CHECK(cudaMemcpy(values.data(), vb.Current(), sizeof(V) * n, cudaMemcpyDeviceToDevice));
  }
}
#endif

template <class V>
void sort_pairs_impl(const Exec& exec, View<std::uint64_t, 1> keys, View<V, 1> values, int key_bits) {
  TESSERA_REQUIRE(keys.size() == values.size(), "tessera::sort_pairs: ", keys.size(), " keys but ", values.size(),
                  " values");
  TESSERA_REQUIRE(key_bits >= 1 && key_bits <= 64, "tessera::sort_pairs: key_bits must be in 1..64, got ", key_bits);
  if (keys.size() <= 1) return;
  detail::dispatch(
      "core/sort_pairs", exec, [&] { cpu_sort_pairs(exec.backend, keys, values, key_bits); },
      [&] {
#if defined(TESSERA_CUDA_DISPATCH)
        cuda_sort_pairs(keys, values, key_bits);
#endif
      });
}

}  // namespace

void sort_pairs(const Exec& exec, View<std::uint64_t, 1> keys, View<std::int64_t, 1> values, int key_bits) {
  sort_pairs_impl(exec, keys, values, key_bits);
}
void sort_pairs(const Exec& exec, View<std::uint64_t, 1> keys, View<std::int32_t, 1> values, int key_bits) {
  sort_pairs_impl(exec, keys, values, key_bits);
}

}  // namespace tessera
