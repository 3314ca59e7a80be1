// Host-side error paths of core: bounds checks, shared-memory overflows, kernel bodies.
#include <exception>
#include <sstream>

#include "tessera/core/backend/cpu.hpp"
#include "tessera/core/backend/dispatch.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/team.hpp"
#include "tessera/core/view.hpp"

namespace tessera::detail {

void view_error_host(const ViewDebugInfo& info, int rank, const index_t* idx, int nidx, const index_t* ext,
                     bool space_error) {
  std::ostringstream os;
  const char* label = info.label[0] ? info.label : "(unlabelled view)";
  if (space_error) {
    os << "array '" << label << "' lives in device memory and was accessed from host code; "
       << "copy it with to_host() or access it inside a kernel on the CUDA backend";
  } else {
    os << "index (";
    for (int k = 0; k < nidx; ++k) os << (k ? ", " : "") << idx[k];
    os << ") out of bounds for array '" << label << "' with extents (";
    for (int k = 0; k < rank; ++k) os << (k ? ", " : "") << ext[k];
    os << ")";
  }
  throw Error(os.str());
}

void shared_overflow_host(bool common, std::size_t requested, std::size_t capacity) {
  fail("team launch asked for ", requested, " bytes of ", common ? "common" : "per-item",
       " shared memory but the launch gave ", capacity, " (increase Teams::",
       common ? "shared_common" : "shared_per_item", "; SharedLayout computes it)");
}

void rethrow_kernel_error(const char* label, Backend backend, std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    throw Error(concat(ex.what(), " [in kernel '", label, "' on the ", to_string(backend), " backend]"));
  }
}

void cuda_not_in_this_unit(const char* label) {
  fail("kernel '", label, "': the CUDA backend was requested, but this translation unit was compiled by the host "
       "compiler; compile it as CUDA (CMake: tessera_cuda_sources(<files>)) or run on the openmp backend");
}

void gpu_only_on_cpu(const char* label, Backend backend) {
  fail("team launch '", label, "': this kernel is compiled for the GPU only in CUDA builds (its functor declares "
       "gpu_only), so it cannot run on the ", to_string(backend), " backend; pick a kernel that "
       "team_runs_on_cpu allows there, or run on the cuda backend");
}

}  // namespace tessera::detail
