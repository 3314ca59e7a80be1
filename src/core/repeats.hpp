#pragma once
// Internal: finding items that repeat an earlier one (the same key) in O(n log n) with 16
// bytes per item: a 64-bit hash per item, sorted, and a full comparison where hashes agree.
// The mesh checks (fem::Mesh::validate, the Gmsh reader) use it on millions of elements.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace tessera::detail {

/// FNV-1a step: mixes v into the hash h (start from kHashSeed).
inline constexpr std::uint64_t kHashSeed = 1469598103934665603ull;
inline std::uint64_t hash_mix(std::uint64_t h, std::uint64_t v) { return (h ^ v) * 1099511628211ull; }

/// items: (hash of the item's key, item), one per item, in any order. Calls
/// found(later, earlier) once for every item whose key equals that of an earlier item (the
/// lower one; equal(a, b) compares two keys in full); stops when found returns false.
template <class Item, class Equal, class Found>
void for_each_repeat(std::vector<std::pair<std::uint64_t, Item>> items, const Equal& equal, const Found& found) {
  std::sort(items.begin(), items.end());  // within one hash, ascending items
  for (std::size_t i = 1; i < items.size(); ++i)
    for (std::size_t j = i; j-- > 0 && items[j].first == items[i].first;)
      if (equal(items[j].second, items[i].second)) {
        if (!found(items[i].second, items[j].second)) return;
        break;
      }
}

}  // namespace tessera::detail
