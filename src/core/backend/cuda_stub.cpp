// Stand-ins for the CUDA runtime services in builds without the CUDA backend.
#include "cuda_api.hpp"
#include "tessera/core/device.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/graph.hpp"
#include "tessera/core/profiling.hpp"

namespace tessera {
namespace detail::cuda_api {
namespace {
[[noreturn]] void no_cuda(const char* what, const char* label) {
  fail(what, " for Array '", label, "' needs the CUDA backend, which this build of tessera does not contain "
       "(reconfigure with -DTESSERA_CUDA=ON)");
}
}  // namespace
bool compiled() { return false; }
int device_count() { return 0; }
void* malloc_device(std::size_t, const char* label) { no_cuda("device memory", label); }
void* malloc_pinned(std::size_t, const char* label) { no_cuda("pinned host memory", label); }
void free_device(void*) noexcept {}
void free_pinned(void*) noexcept {}
void copy(void*, const void*, std::size_t) { fail("device copy requested in a build without CUDA"); }
void fill(void*, std::size_t, const void*, std::size_t) { fail("device fill requested in a build without CUDA"); }
void memset_zero(void*, std::size_t) { fail("device memset requested in a build without CUDA"); }
float elapsed_ms(void*, void*) { return 0; }
int pointer_space(const void*) { return -1; }
void event_destroy(void*) noexcept {}
void* event_create() { fail("CUDA events requested in a build without CUDA"); }
void event_record(void*) {}
}  // namespace detail::cuda_api

namespace detail {
namespace {
[[noreturn]] void no_cuda_graphs() {
  fail("CUDA streams and graphs need the CUDA backend, and this build of tessera has none");
}
}  // namespace
void* graph_stream_create() { no_cuda_graphs(); }
void graph_stream_destroy(void*) noexcept {}
void graph_begin_capture(void*) { no_cuda_graphs(); }
void* graph_end_capture(void*) { no_cuda_graphs(); }
void graph_launch(void*, void*) { no_cuda_graphs(); }
void graph_destroy(void*) noexcept {}
}  // namespace detail

namespace profiling::detail {
GpuTiming gpu_begin() { return {}; }
void gpu_end(const char*, GpuTiming) {}
}  // namespace profiling::detail

std::vector<DeviceInfo> cuda_devices() { return {}; }
const DeviceInfo& current_device() { fail("no CUDA device: this build of tessera has no CUDA backend"); }
void fence(const char*) {}
}  // namespace tessera
