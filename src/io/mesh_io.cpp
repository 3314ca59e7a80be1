// read_mesh / load_mesh: dispatch on file extension or generator spec.
#include "tessera/io/mesh_io.hpp"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "tessera/core/error.hpp"
#include "tessera/io/gmsh.hpp"
#include "tessera/io/mfem.hpp"
#include "tessera/io/vtu.hpp"

namespace tessera::io {

namespace {
constexpr const char* kSupported = ".msh (Gmsh), .mesh (MFEM), .vtu (VTK XML UnstructuredGrid)";
}  // namespace

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

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
  } else if (!spec.empty() && std::filesystem::is_directory(spec, ec)) {
    fail("load_mesh: '", spec, "' is a directory; give a mesh file (", kSupported, ") or a generator spec");
  } else {
    try {
      mesh = fem::generate_mesh(spec);
    } catch (const Error& e) {
      fail("load_mesh: no such file, and not a generator spec: '", spec, "' (", e.what(),
           "); give a mesh file (", kSupported, ") or a spec such as box:hex:4x4x4");
    }
  }
  // each refinement multiplies the elements by 2^dim: refuse, before allocating, a count that
  // no machine's memory holds (about 200 bytes per element and its vertices at least)
  const double grown = double(mesh.num_elements()) * std::pow(2.0, double(mesh.dim() * refine));
  if (grown > 4e9)
    fail("load_mesh: refining the ", mesh.num_elements(), " elements of '", spec, "' ", refine, " times gives ", grown,
         " elements (", grown * 200 / 1e12, " TB or more); refine fewer times");
  for (int r = 0; r < refine; ++r) mesh = fem::refine_uniformly(mesh);
  return mesh;
}

}  // namespace tessera::io
