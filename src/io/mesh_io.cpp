// read_mesh / load_mesh: dispatch on file extension or generator spec.
#include "tessera/io/mesh_io.hpp"

#include <cctype>
#include <filesystem>
#include <system_error>

#include "tessera/core/error.hpp"
#include "tessera/io/gmsh.hpp"
#include "tessera/io/mfem.hpp"
#include "tessera/io/vtu.hpp"

namespace tessera::io {

namespace {
constexpr const char* kSupported = ".msh (Gmsh), .mesh (MFEM), .vtu (VTK XML UnstructuredGrid)";

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}
}  // namespace

fem::Mesh read_mesh(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext == ".msh") return read_gmsh(path);
  if (ext == ".mesh") return read_mfem(path);
  if (ext == ".vtu") return read_vtu(path);
  fail("read_mesh: '", path, "' has ", ext.empty() ? std::string("no extension") : "the extension '" + ext + "'",
       ", which is not a supported mesh format; supported: ", kSupported);
}

fem::Mesh load_mesh(const std::string& spec, int refine) {
  if (refine < 0) fail("load_mesh: refine = ", refine, " for '", spec, "'; the number of refinements must be >= 0");
  std::error_code ec;
  fem::Mesh mesh;
  if (!spec.empty() && std::filesystem::is_regular_file(spec, ec)) {
    mesh = read_mesh(spec);
  } else {
    try {
      mesh = fem::generate_mesh(spec);
    } catch (const Error& e) {
      fail("load_mesh: no such file, and not a generator spec: '", spec, "' (", e.what(),
           "); give a mesh file (", kSupported, ") or a spec such as box:hex:4x4x4");
    }
  }
  for (int r = 0; r < refine; ++r) mesh = fem::refine_uniformly(mesh);
  return mesh;
}

}  // namespace tessera::io
