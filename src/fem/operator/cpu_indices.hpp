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

/// (batch, local node, lane) node ids; the lanes past the last element repeat it (gathered,
/// never scattered).
struct BatchIndices {
  int nd = 0, lanes = 1;
  index_t ne = 0, nb = 0;
  std::vector<int> idx;                   // (nb, nd, lanes)
  std::vector<std::uint8_t> consecutive;  // (nb, nd): the lanes' nodes are consecutive ids (one vector access)

  BatchIndices() = default;
  /// From the map (ne, nd) of global node ids (cpu_contract.cpp).
  BatchIndices(const int* map, index_t ne, int nd);
  const int* batch(index_t b) const { return idx.data() + std::size_t(b) * nd * lanes; }
  /// Elements of batch b that are not padding.
  int live(index_t b) const { return int(std::min<index_t>(lanes, ne - b * lanes)); }
  /// Share of the (batch, local node) accesses that are one vector access.
  double vector_access_share() const;
};

}  // namespace tessera::fem::cpu_detail
