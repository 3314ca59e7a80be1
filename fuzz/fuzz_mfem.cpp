// libFuzzer target of the MFEM mesh reader: tessera::Error is the only accepted outcome
// besides success; anything else (another exception, a crash, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/io/mfem.hpp"

namespace {
// An inline mesh gives its size, not its cells: "nx = 1000" three times is a valid request for
// a billion hexahedra that a 70-byte input makes, and its allocation would stop the fuzzer at
// its memory limit without any bug. Inputs of that kind whose numbers multiply past 20000 are
// skipped; the reader's checks of the counts stay covered below that.
bool large_inline_mesh(std::string_view bytes) {
  if (bytes.find("INLINE") == std::string_view::npos) return false;
  double product = 1;
  for (std::size_t i = 0; i < bytes.size();) {
    if (bytes[i] < '0' || bytes[i] > '9') {
      ++i;
      continue;
    }
    double v = 0;
    for (; i < bytes.size() && bytes[i] >= '0' && bytes[i] <= '9'; ++i) v = v * 10 + (bytes[i] - '0');
    product *= v > 1 ? v : 1;
    if (product > 20000) return true;
  }
  return false;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (large_inline_mesh(bytes)) return 0;
  std::vector<std::string> warnings;
  try {
    const tessera::fem::Mesh mesh = tessera::io::read_mfem_bytes(bytes, "fuzz.mesh", &warnings);
    (void)mesh.num_elements();
  } catch (const tessera::Error&) {
  }
  return 0;
}
