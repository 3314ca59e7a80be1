// sort_pairs: stable radix sort of (key, value) pairs on every backend.
#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "test_backends.hpp"
#include "tessera/core/sort.hpp"

using namespace tessera;

class SortTest : public tessera::test::BackendTest {};
TESSERA_INSTANTIATE_BACKENDS(SortTest);

// Against std::stable_sort of the same pairs: sizes with one and several chunks, few and many
// key bits, many equal keys (stability shows in the values, which start as the positions).
TEST_P(SortTest, EqualsStableSortOfTheSamePairs) {
  std::mt19937_64 rng(3);
  for (index_t n : {index_t(0), index_t(1), index_t(7), index_t(1000), index_t(200000)})
    for (int bits : {3, 17, 40, 64}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " bits=" + std::to_string(bits));
      std::vector<std::uint64_t> k(static_cast<std::size_t>(n));
      for (auto& x : k) x = bits == 64 ? rng() : rng() & ((std::uint64_t{1} << bits) - 1);
      std::vector<std::int64_t> v(static_cast<std::size_t>(n));
      std::iota(v.begin(), v.end(), 0);
      std::vector<std::size_t> order(static_cast<std::size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return k[a] < k[b]; });
      auto kd = Array<std::uint64_t, 1>::from("k", std::span<const std::uint64_t>(k), space());
      auto vd = Array<std::int64_t, 1>::from("v", std::span<const std::int64_t>(v), space());
      sort_pairs(exec(), kd.view(), vd.view(), bits);
      const auto kh = kd.to_host();
      const auto vh = vd.to_host();
      for (index_t i = 0; i < n; ++i) {
        ASSERT_EQ(kh(i), k[order[std::size_t(i)]]) << "key " << i;
        ASSERT_EQ(vh(i), std::int64_t(order[std::size_t(i)])) << "value " << i;
      }
    }
}

TEST_P(SortTest, BadArgumentsAreNamed) {
  Array<std::uint64_t, 1> k("k", {4}, space());
  Array<std::int64_t, 1> v("v", {3}, space());
  EXPECT_THROW(sort_pairs(exec(), k.view(), v.view()), Error);
  Array<std::int64_t, 1> v4("v", {4}, space());
  EXPECT_THROW(sort_pairs(exec(), k.view(), v4.view(), 0), Error);
  EXPECT_EQ(bits_for(1), 1);
  EXPECT_EQ(bits_for(1024), 10);
  EXPECT_EQ(bits_for(1025), 11);
}
