#pragma once
// Sizes of tensor-product elements from their sizes per direction, for host and device code.

#include "tessera/core/macros.hpp"

namespace tessera::fem {

/// b^e for small e: nodes or points per element from those per direction (e = the dimension).
TESSERA_HOST_DEVICE constexpr int ipow(int b, int e) {
  int r = 1;
  for (int i = 0; i < e; ++i) r *= b;
  return r;
}

}  // namespace tessera::fem
