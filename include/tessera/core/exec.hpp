#pragma once
/// \file exec.hpp
/// Backends, memory spaces and the execution policy `Exec` passed to every launch.

#include <string>
#include <string_view>

namespace tessera {

/// Where a kernel runs. Chosen at run time; one build may hold all three.
enum class Backend { Serial, OpenMP, Cuda };

/// Where an Array's memory lives.
enum class Space {
  Host,        ///< pageable host memory (malloc)
  HostPinned,  ///< page-locked host memory (cudaMallocHost), readable by the device
  Device       ///< GPU global memory (cudaMalloc)
};

/// Human-readable names: "serial", "openmp", "cuda" / "host", "host-pinned", "device".
const char* to_string(Backend b);
const char* to_string(Space s);

/// True when this build of the library contains the CUDA backend.
bool cuda_compiled();
/// True when the CUDA backend is compiled in and at least one GPU is usable.
bool cuda_available();
/// Number of OpenMP threads the OpenMP backend uses (1 without OpenMP).
int openmp_threads();

/// Execution policy: which backend runs a launch, plus tuning knobs.
///
///     auto exec = tessera::Exec::best();            // CUDA if a GPU is present, else OpenMP
///     auto cpu  = tessera::Exec::parse("openmp");   // from a command-line string
struct Exec {
  Backend backend = Backend::Serial;
  /// Threads per block for `forall` on the GPU (ignored on the CPU); each thread
  /// handles two indices. 128 measured best for streaming kernels on the H100.
  int block_size = 128;

  static Exec serial() { return {Backend::Serial}; }
  static Exec openmp() { return {Backend::OpenMP}; }
  /// Throws tessera::Error if the CUDA backend is not compiled in or no GPU is present.
  static Exec cuda();
  /// CUDA when a GPU is usable, else OpenMP.
  static Exec best();
  /// "serial", "openmp", "cpu" (= openmp), "cuda", "gpu" (= cuda) or "auto" (= best()).
  static Exec parse(std::string_view name);

  /// The memory space kernels of this backend read and write.
  Space space() const { return backend == Backend::Cuda ? Space::Device : Space::Host; }
  bool on_device() const { return backend == Backend::Cuda; }
};

/// Can code running on `b` dereference memory of space `s`?
inline bool accessible(Backend b, Space s) {
  if (b == Backend::Cuda) return s != Space::Host;
  return s != Space::Device;
}

}  // namespace tessera
