// libFuzzer target of the Gmsh MSH reader: tessera::Error is the only accepted outcome
// besides success; anything else (another exception, a crash, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/io/gmsh.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  try {
    const tessera::fem::Mesh mesh = tessera::io::read_gmsh_bytes(bytes, "fuzz.msh", &warnings);
    (void)mesh.num_elements();
  } catch (const tessera::Error&) {
  }
  return 0;
}
