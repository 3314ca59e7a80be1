#pragma once
// --output of the solvers (poisson, thermoelastic): a .vtu file, or a .pvd collection with one
// .vtu file per level.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/io/mesh_io.hpp"

namespace tessera::app {

/// Checks --output before anything is solved: a .vtu or .pvd name in a folder that exists
/// and can be written (an empty name is refused: it is a mistake, not "no output").
inline void check_vtu_output(const char* command, const std::string& path) {
  TESSERA_REQUIRE(!path.empty(), command, ": --output needs a file name (.vtu, or .pvd for a collection of the ",
                  "--study levels)");
  const std::string ext = io::lower_extension(path);
  TESSERA_REQUIRE(ext == ".vtu" || ext == ".pvd", command, ": --output '", path,
                  "' must name a .vtu file (VTK XML unstructured grid) or a .pvd collection (one .vtu per level)");
  const bool existed = std::ifstream(path).good();
  {
    std::ofstream probe(path, std::ios::app);
    TESSERA_REQUIRE(probe.good(), command, ": --output '", path,
                    "' cannot be written (no such folder, or no permission); nothing was solved");
  }
  if (!existed) std::remove(path.c_str());
}

/// True when --output names a .pvd collection.
inline bool is_collection(const std::string& path) { return io::lower_extension(path) == ".pvd"; }

/// The .vtu file of level `level` of collection `pvd`: "<folder>/<stem>_<level>.vtu".
inline std::string level_file(const std::string& pvd, int level) {
  std::filesystem::path p(pvd);
  p.replace_filename(p.stem().string() + "_" + std::to_string(level) + ".vtu");
  return p.string();
}

}  // namespace tessera::app
