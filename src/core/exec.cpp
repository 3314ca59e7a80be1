#include "tessera/core/exec.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "backend/cuda_api.hpp"
#include "tessera/core/error.hpp"

namespace tessera {

const char* to_string(Backend b) {
  switch (b) {
    case Backend::Serial: return "serial";
    case Backend::OpenMP: return "openmp";
    case Backend::Cuda: return "cuda";
  }
  return "?";
}

const char* to_string(Space s) {
  switch (s) {
    case Space::Host: return "host";
    case Space::HostPinned: return "host-pinned";
    case Space::Device: return "device";
  }
  return "?";
}

bool cuda_compiled() { return detail::cuda_api::compiled(); }
bool cuda_available() { return detail::cuda_api::device_count() > 0; }

int openmp_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

Exec Exec::cuda() {
  TESSERA_REQUIRE(cuda_compiled(), "the CUDA backend is not compiled into this build of tessera "
                                   "(reconfigure with -DTESSERA_CUDA=ON, or use --backend openmp)");
  TESSERA_REQUIRE(cuda_available(), "the CUDA backend is compiled in but no usable GPU was found "
                                    "(check nvidia-smi and CUDA_VISIBLE_DEVICES, or use --backend openmp)");
  return {Backend::Cuda};
}

Exec Exec::best() { return cuda_available() ? Exec{Backend::Cuda} : Exec{Backend::OpenMP}; }

Exec Exec::parse(std::string_view name) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "serial") return serial();
  if (s == "openmp" || s == "cpu" || s == "omp") return openmp();
  if (s == "cuda" || s == "gpu") return cuda();
  if (s == "auto" || s.empty()) return best();
  fail("unknown backend '", name, "': expected serial, openmp (cpu), cuda (gpu) or auto");
}

}  // namespace tessera
