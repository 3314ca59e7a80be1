#pragma once
/// \file mesh_io.hpp
/// One entry point for every mesh source tessera knows: mesh files of the supported formats
/// and the generator specs of fem::generate_mesh.
///
///     auto a = tessera::io::read_mesh("beam-hex.mesh");        // by extension
///     auto b = tessera::io::load_mesh("box:tri:4x4", 2);        // generator, refined twice
///     auto c = tessera::io::load_mesh("square.msh");            // an existing file
///
/// Supported extensions (case-insensitive): .msh (Gmsh, io/gmsh.hpp), .mesh (MFEM,
/// io/mfem.hpp), .vtu (VTK XML, io/vtu.hpp).

#include <string>

#include "tessera/fem/mesh.hpp"

namespace tessera::io {

/// The extension of `path` in lower case, with its dot (".vtu"), or "" when it has none.
std::string lower_extension(const std::string& path);

/// Reads the mesh file at `path`, choosing the reader by extension: .msh -> read_gmsh,
/// .mesh -> read_mfem, .vtu -> read_vtu. Reader warnings go to std::cerr. Throws
/// tessera::Error for another extension (the message lists the supported ones) and for
/// whatever the reader refuses.
fem::Mesh read_mesh(const std::string& path);

/// A mesh from `spec`: read_mesh(spec) when `spec` names an existing file, else
/// fem::generate_mesh(spec); then refined uniformly `refine` times (refine >= 0). Throws
/// tessera::Error saying both ("no such file, and not a generator spec") when `spec` is
/// neither.
fem::Mesh load_mesh(const std::string& spec, int refine = 0);

}  // namespace tessera::io
