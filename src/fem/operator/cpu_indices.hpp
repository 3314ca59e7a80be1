#pragma once
// The element-to-node map of the element-batched CPU kernels (the operator, cpu_batched.hpp,
// and interpolation, cpu_interp.hpp) by batches of simd::lanes elements. Free of SIMD types, so
// that the kernels' headers can hold it; built, gathered and scattered in the translation units
// compiled with the CPU kernels' flags (cpu_contract.hpp).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/core/macros.hpp"

namespace tessera::fem::cpu_detail {

/// The node ids of every (batch, local node, lane), the lanes past the last element repeating
/// it (gathered, never scattered), stored by how they are accessed: where the lanes' ids are
/// one or two runs of consecutive ids, the runs' starts only; elsewhere every lane's id.
struct BatchIndices {
  int nd = 0, lanes = 1;
  index_t ne = 0, nb = 0;
  /// (nb, nd): lanes: the lanes' ids are consecutive from at[0] (one vector access); k in
  /// 1..lanes-1: lanes below k consecutive from at[0], lane l >= k at at[1] + l (two masked
  /// vector accesses); 0: one access per lane, their ids at ids[ids_from[b] + at[0] + l].
  std::vector<std::uint8_t> split;
  std::vector<int> at;                // (nb, nd, 2)
  std::vector<int> ids;               // the lanes' ids of the positions with split 0
  std::vector<std::size_t> ids_from;  // (nb): where batch b's start in ids
  /// (nb, nd), set by the kernel that runs the batches: bit l where lane l meets its node first
  /// in the order the batches run (its scatter may store instead of add)
  std::vector<std::uint8_t> first;

  BatchIndices() = default;
  /// From the map (ne, nd) of global node ids (cpu_contract.cpp).
  BatchIndices(const int* map, index_t ne, int nd);
  /// The node of local node i of lane l in batch b.
  int node(index_t b, int i, int l) const {
    const std::size_t k = std::size_t(b) * nd + i;
    const int s = split[k];
    const int* a = at.data() + 2 * k;
    return s == 0 ? ids[ids_from[std::size_t(b)] + std::size_t(a[0] + l)] : l < s ? a[0] + l : a[1] + l;
  }
  /// Elements of batch b that are not padding.
  int live(index_t b) const { return int(std::min<index_t>(lanes, ne - b * lanes)); }
  /// Share of the (batch, local node) accesses that are one or two vector accesses.
  double vector_access_share() const;
  std::size_t bytes() const {
    return split.size() + first.size() + (at.size() + ids.size()) * sizeof(int) + ids_from.size() * sizeof(std::size_t);
  }
};

}  // namespace tessera::fem::cpu_detail
