// libFuzzer entry point of the VTU reader: every input must either read as a mesh or be
// refused with tessera::Error; any other exception, a crash or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/io/vtu.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<tessera::io::VtuField> fields;
  try {
    const tessera::fem::Mesh mesh = tessera::io::read_vtu_bytes(bytes, "fuzz.vtu", &fields);
    // A mesh that was accepted must write and read back.
    tessera::io::read_vtu_bytes(tessera::io::write_vtu_string(mesh, fields), "fuzz-rewritten.vtu");
  } catch (const tessera::Error&) {
  }
  return 0;
}
