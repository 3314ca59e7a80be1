// CUDA runtime services of tessera: memory, device properties, launch checks,
// NVTX, scratch buffers and GPU timers. The only compiled CUDA source of core.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "cuda_api.hpp"
#include "tessera/core/backend/cuda.hpp"
#include "tessera/core/device.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/graph.hpp"
#include "tessera/core/profiling.hpp"

namespace tessera {
namespace detail {

void cuda_fail(cudaError_t err, const char* what, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so later calls can proceed
  fail("CUDA error ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ") in ", what, " at ", file, ":", line);
}

void cuda_check_launch(const char* label) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    fail("kernel '", label, "' failed to launch: ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")");
  if (sync_launches()) {
    err = cudaDeviceSynchronize();
    if (err != cudaSuccess)
      fail("kernel '", label, "' failed: ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")");
  }
}

void nvtx_push(const char* label) { nvtxRangePushA(label); }
void nvtx_pop() { nvtxRangePop(); }

void* cuda_scratch(std::size_t bytes, int slot) {
  static void* ptr[2] = {nullptr, nullptr};
  static std::size_t cap[2] = {0, 0};
  TESSERA_REQUIRE(slot == 0 || slot == 1, "cuda_scratch: slot ", slot, " is not 0 or 1");
  if (bytes > cap[slot]) {
    if (ptr[slot]) TESSERA_CUDA_CHECK(cudaFree(ptr[slot]));  // waits for the kernels still using it
    ptr[slot] = nullptr;
    cap[slot] = 0;
    const std::size_t want = (bytes + 4095) / 4096 * 4096;
    const cudaError_t err = cudaMalloc(&ptr[slot], want);
    if (err != cudaSuccess) {
      cudaGetLastError();
      fail("device scratch buffer of ", want, " bytes: cudaMalloc failed (", cudaGetErrorString(err), ")");
    }
    cap[slot] = want;
  }
  return ptr[slot];
}

namespace cuda_api {
bool compiled() { return true; }

int device_count() {
  static int n = [] {
    int c = 0;
    if (cudaGetDeviceCount(&c) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return c;
  }();
  return n;
}

void* malloc_device(std::size_t bytes, const char* label) {
  TESSERA_REQUIRE(device_count() > 0, "Array '", label, "': device memory requested but no GPU is usable");
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    fail("Array '", label, "': cudaMalloc of ", bytes, " bytes failed (", cudaGetErrorString(err), "); ", free_b,
         " of ", total_b, " bytes free on the device");
  }
  return p;
}

void* malloc_pinned(std::size_t bytes, const char* label) {
  TESSERA_REQUIRE(device_count() > 0, "Array '", label, "': pinned host memory needs a usable GPU");
  void* p = nullptr;
  cudaError_t err = cudaMallocHost(&p, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    fail("Array '", label, "': cudaMallocHost of ", bytes, " bytes failed (", cudaGetErrorString(err), ")");
  }
  return p;
}

void free_device(void* p) noexcept { cudaFree(p); }
void free_pinned(void* p) noexcept { cudaFreeHost(p); }

void copy(void* dst, const void* src, std::size_t bytes) {
  TESSERA_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
}

void memset_zero(void* dst, std::size_t bytes) { TESSERA_CUDA_CHECK(cudaMemset(dst, 0, bytes)); }

template <class W>
__global__ void fill_kernel(W* dst, std::size_t count, W value) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] = value;
}

template <class W>
void fill_words(void* dst, std::size_t count, const void* pattern) {
  W w;
  std::memcpy(&w, pattern, sizeof(W));
  const unsigned grid = static_cast<unsigned>(std::min<std::size_t>((count + 255) / 256, 65535u * 16));
  fill_kernel<<<grid, 256>>>(static_cast<W*>(dst), count, w);
  cuda_check_launch("core/fill");
}

void fill(void* dst, std::size_t count, const void* pattern, std::size_t size) {
  switch (size) {
    case 1: return fill_words<unsigned char>(dst, count, pattern);
    case 2: return fill_words<unsigned short>(dst, count, pattern);
    case 4: return fill_words<unsigned>(dst, count, pattern);
    case 8: return fill_words<unsigned long long>(dst, count, pattern);
    case 16: return fill_words<ulonglong2>(dst, count, pattern);
    default: {
      // Other sizes: byte-wise pattern built on the host, then one copy.
      std::string host(count * size, '\0');
      for (std::size_t i = 0; i < count; ++i) std::memcpy(host.data() + i * size, pattern, size);
      copy(dst, host.data(), host.size());
    }
  }
}

int pointer_space(const void* p) {
  if (p == nullptr || device_count() == 0) return -1;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: clear it so that the next launch check does not see it
    return -1;
  }
  switch (attr.type) {
    case cudaMemoryTypeUnregistered: return static_cast<int>(Space::Host);
    case cudaMemoryTypeHost: return static_cast<int>(Space::HostPinned);
    case cudaMemoryTypeDevice: return static_cast<int>(Space::Device);
    default: return -1;  // managed memory: readable everywhere
  }
}

float elapsed_ms(void* start, void* stop) {
  float ms = 0;
  TESSERA_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(stop)));
  TESSERA_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(stop)));
  return ms;
}
void event_destroy(void* e) noexcept {
  if (e) cudaEventDestroy(static_cast<cudaEvent_t>(e));
}
void* event_create() {
  cudaEvent_t e;
  TESSERA_CUDA_CHECK(cudaEventCreate(&e));
  return e;
}
void event_record(void* e) { TESSERA_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(e))); }
}  // namespace cuda_api

// ---- streams and graph capture (graph.hpp)
void* graph_stream_create() {
  cudaStream_t s = nullptr;
  TESSERA_CUDA_CHECK(cudaStreamCreate(&s));
  return s;
}
void graph_stream_destroy(void* stream) noexcept {
  if (stream) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}
void graph_begin_capture(void* stream) {
  TESSERA_CUDA_CHECK(cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), cudaStreamCaptureModeThreadLocal));
}
void* graph_end_capture(void* stream) {
  cudaGraph_t graph = nullptr;
  TESSERA_CUDA_CHECK(cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (err != cudaSuccess) cuda_fail(err, "cudaGraphInstantiate", __FILE__, __LINE__);
  return exec;
}
void graph_launch(void* graph, void* stream) {
  TESSERA_CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), static_cast<cudaStream_t>(stream)));
}
void graph_destroy(void* graph) noexcept {
  if (graph) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph));
}

}  // namespace detail

namespace profiling::detail {
GpuTiming gpu_begin() {
  GpuTiming t{tessera::detail::cuda_api::event_create(), tessera::detail::cuda_api::event_create()};
  tessera::detail::cuda_api::event_record(t.start);
  return t;
}
void gpu_end(const char* label, GpuTiming t) {
  tessera::detail::cuda_api::event_record(t.stop);
  record_gpu_pending(label, t);
}
}  // namespace profiling::detail

std::vector<DeviceInfo> cuda_devices() {
  std::vector<DeviceInfo> out;
  for (int d = 0; d < detail::cuda_api::device_count(); ++d) {
    cudaDeviceProp p{};
    TESSERA_CUDA_CHECK(cudaGetDeviceProperties(&p, d));
    DeviceInfo i;
    i.id = d;
    i.name = p.name;
    i.cc_major = p.major;
    i.cc_minor = p.minor;
    i.sm_count = p.multiProcessorCount;
    i.global_mem = p.totalGlobalMem;
    i.shared_per_block = p.sharedMemPerBlock;
    i.shared_per_block_optin = p.sharedMemPerBlockOptin;
    i.shared_per_sm = p.sharedMemPerMultiprocessor;
    i.reserved_shared_per_block = p.reservedSharedMemPerBlock;
    i.max_threads_per_block = p.maxThreadsPerBlock;
    i.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    i.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
    i.regs_per_sm = p.regsPerMultiprocessor;
    i.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
    int clock_khz = 0, bus_bits = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, d);
    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, d);
    i.peak_bandwidth_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    out.push_back(i);
  }
  return out;
}

const DeviceInfo& current_device() {
  static std::once_flag once;
  static std::vector<DeviceInfo> all;
  std::call_once(once, [] { all = cuda_devices(); });
  TESSERA_REQUIRE(!all.empty(), "no usable CUDA device (check nvidia-smi and CUDA_VISIBLE_DEVICES)");
  int d = 0;
  TESSERA_CUDA_CHECK(cudaGetDevice(&d));
  TESSERA_REQUIRE(d >= 0 && d < static_cast<int>(all.size()), "CUDA device id ", d, " out of range");
  return all[static_cast<std::size_t>(d)];
}

void fence(const char* where) {
  if (detail::cuda_api::device_count() == 0) return;  // no usable GPU: no device work to wait for
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess)
    fail(where, ": device error ", cudaGetErrorName(err), " (", cudaGetErrorString(err),
         "); set TESSERA_SYNC_LAUNCHES=1 to find the kernel that caused it");
}

}  // namespace tessera
