// libFuzzer target of the MFEM mesh reader: tessera::Error is the only accepted outcome
// besides success; anything else (another exception, a crash, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/io/mfem.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  try {
    const tessera::fem::Mesh mesh = tessera::io::read_mfem_bytes(bytes, "fuzz.mesh", &warnings);
    (void)mesh.num_elements();
  } catch (const tessera::Error&) {
  }
  return 0;
}
