#pragma once
/// \file tuning.hpp
/// The tuning cache: launch parameters measured on a device (by `tessera tune ...`) and read
/// by kernels at run time, keyed by device name and kernel key.
///
/// The cache is one JSON file:
///
///     {"format": "tessera-tuning-1",
///      "devices": {"NVIDIA H100 80GB HBM3": {
///          "interpolate/hexahedron/p3/q64/c1/values/element-major/on-the-fly":
///              {"elements_per_block": 4, "time_ms": 0.21, "date": "2026-11-21"},
///          "operator/hexahedron/p4/q216/c1/diffusion/stored/global/kauto":
///              {"elements_per_block": 7, "elements_per_item": 1, "time_ms": 0.8, "date": "2026-11-26"}}}}
///
/// Location: the environment variable TESSERA_TUNING_CACHE when set (an empty value turns
/// the cache off), else $XDG_CACHE_HOME/tessera/tuning.json, else
/// $HOME/.cache/tessera/tuning.json. A missing file is an empty cache; a malformed one is
/// reported once on stderr and ignored (kernels then use their heuristics).

#include <map>
#include <optional>
#include <string>

#include "tessera/core/exec.hpp"

namespace tessera::tuning {

/// One measured choice.
struct Entry {
  int elements_per_block = 0;
  double time_ms = 0;
  std::string date;
  /// Elements each thread group walks one after the other, where the tuner chose that too
  /// (the fused operators; 0: not part of the entry, the kernel's own choice applies).
  int elements_per_item = 0;
};

/// The cache file in use ("" when the cache is turned off).
std::string cache_path();

/// The device name entries are keyed by for a backend: the GPU's name (cudaGetDeviceProperties)
/// for CUDA, "cpu-openmp-<threads>" or "cpu-serial" otherwise.
std::string device_key(const Exec& exec);

/// The cached entry for (device, key), read from cache_path() (the file is read once per
/// process and then kept in memory; reload() rereads it).
std::optional<Entry> lookup(const std::string& device, const std::string& key);

/// Adds or replaces entries of one device and writes the whole cache back to `path`
/// (default: cache_path()), creating its folder. Throws tessera::Error when the file cannot
/// be written or the cache is turned off and no path is given.
void store(const std::string& device, const std::map<std::string, Entry>& entries, const std::string& path = "");

/// Forgets the in-memory copy so that the next lookup rereads the file.
void reload();

}  // namespace tessera::tuning
