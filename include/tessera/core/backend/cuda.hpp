#pragma once
/// \file backend/cuda.hpp
/// CUDA implementations of forall, team launches, reductions and scans. Included by
/// the dispatchers only when a translation unit is compiled by nvcc.

#if !defined(__CUDACC__)
#error "tessera/core/backend/cuda.hpp is for translation units compiled as CUDA"
#endif

#include <cuda_runtime.h>

#include <cub/device/device_scan.cuh>

#include "tessera/core/array.hpp"
#include "tessera/core/device.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/team.hpp"

namespace tessera::detail {

/// Throws tessera::Error for a failed CUDA call: the call, the error's name and text.
void cuda_fail(cudaError_t err, const char* what, const char* file, int line);
/// After a launch: checks cudaGetLastError (and synchronizes when sync_launches()).
void cuda_check_launch(const char* label);
/// NVTX range around a launch.
void nvtx_push(const char* label);
void nvtx_pop();
/// A device scratch buffer of at least `bytes`, reused between calls (default stream).
void* cuda_scratch(std::size_t bytes);

}  // namespace tessera::detail

/// Checks a CUDA runtime call and throws tessera::Error naming it on failure.
#define TESSERA_CUDA_CHECK(call)                                                 \
  do {                                                                           \
    cudaError_t tessera_err_ = (call);                                           \
    if (tessera_err_ != cudaSuccess)                                             \
      ::tessera::detail::cuda_fail(tessera_err_, #call, __FILE__, __LINE__);     \
  } while (0)

namespace tessera::detail {

/// Each block covers 2 × blockDim.x consecutive indices, each thread two of them
/// (i and i + blockDim.x): two independent memory streams per thread. Measured on an
/// H100 for a double copy (docs/benchmarks/core.md): 101% of cudaMemcpy with 128
/// threads, against 94% for one index per thread in a grid-stride loop of 256.
template <class F>
__global__ void forall_kernel(index_t n, F f) {
  const index_t step = 2 * static_cast<index_t>(gridDim.x) * blockDim.x;
  for (index_t i = 2 * static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    f(i);
    if (i + blockDim.x < n) f(i + blockDim.x);
  }
}

inline unsigned grid_for(index_t n, int per_block) {
  const index_t g = (n + per_block - 1) / per_block;
  return static_cast<unsigned>(g < 0x7fffffff ? g : 0x7fffffff);
}

/// Scope for one CUDA launch: NVTX range, untracked Array copies of the functor,
/// and the error check that names the kernel.
struct CudaLaunchScope {
  const char* label;
  KernelScope untracked;
  explicit CudaLaunchScope(const char* l) : label(l) { nvtx_push(l); }
  ~CudaLaunchScope() { nvtx_pop(); }
};

template <class F>
void cuda_forall(const char* label, const Exec& exec, index_t n, const F& f) {
  TESSERA_REQUIRE(exec.block_size >= 1 && exec.block_size <= 1024, "kernel '", label, "': block_size ",
                  exec.block_size, " is outside 1..1024");
  CudaLaunchScope scope(label);
  forall_kernel<<<grid_for(n, 2 * exec.block_size), exec.block_size>>>(n, f);
  cuda_check_launch(label);
}

template <class F>
__device__ inline void team_body(const TeamParams& p, const F& f) {
  extern __shared__ __align__(128) unsigned char tessera_team_smem[];
  // A flat block, thread bt = x + tx * (y + ty * (z + tz * local)): the warp layout of a
  // (tx, ty, tz * items) block, without blockDim.z's limit of 64 (2x3x4 threads x 32 items).
  const int bt = static_cast<int>(threadIdx.x);
  int rest = bt / p.tx;
  const int x = bt - rest * p.tx;
  const int y = rest % p.ty;
  rest /= p.ty;
  const int z = rest % p.tz;
  const int local = rest / p.tz;
  TeamContext ctx(p, tessera_team_smem, blockIdx.x, local, x, y, z, bt, static_cast<int>(blockDim.x));
  f(ctx);
}

template <class F>
__global__ void team_kernel(TeamParams p, F f) {
  team_body(p, f);
}

/// The team kernel of a functor that declares `static constexpr int max_registers = N` (N > 0):
/// compiled with at most N registers per thread (__maxnreg__), so that a kernel just over an
/// occupancy step can be held under it at the price of a few spills.
template <class F, int N>
__global__ void __maxnreg__(N) team_kernel_limited(TeamParams p, F f) {
  team_body(p, f);
}

/// F::max_registers, or 0 (no limit of its own).
template <class F>
constexpr int team_register_limit() {
  if constexpr (requires { F::max_registers; }) return F::max_registers;
  else return 0;
}

/// The team kernel that runs F.
template <class F>
constexpr auto team_kernel_for() {
  if constexpr (team_register_limit<F>() > 0) return &team_kernel_limited<F, team_register_limit<F>()>;
  else return &team_kernel<F>;
}

/// Per-kernel cache of the attributes a launch needs (one per instantiation).
struct TeamKernelState {
  bool init = false;
  int max_threads = 0;
  std::size_t static_smem = 0;
  std::size_t dynamic_limit = 48 * 1024;
};

/// The most threads per block the team kernel of F can launch with (its registers decide).
template <class F>
int cuda_team_max_threads() {
  cudaFuncAttributes attr{};
  TESSERA_CUDA_CHECK(cudaFuncGetAttributes(&attr, team_kernel_for<F>()));
  return attr.maxThreadsPerBlock;
}

template <class F>
void cuda_team_launch(const char* label, const Teams& t, const F& f) {
  static TeamKernelState state;  // per instantiation of this template, i.e. per kernel
  const auto kernel = team_kernel_for<F>();
  if (!state.init) {
    cudaFuncAttributes attr{};
    TESSERA_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    state.max_threads = attr.maxThreadsPerBlock;
    state.static_smem = attr.sharedSizeBytes;
    state.dynamic_limit = static_cast<std::size_t>(attr.maxDynamicSharedSizeBytes);
    state.init = true;
  }
  const TeamParams p = make_team_params(t);
  const long long threads = 1LL * t.threads.x * t.threads.y * t.threads.z * t.items_per_block;
  const DeviceInfo& dev = current_device();
  if (threads > state.max_threads)
    fail("team launch '", label, "': ", threads, " threads per block (", t.threads.x, "x", t.threads.y, "x",
         t.threads.z, " per item x ", t.items_per_block, " items) exceed this kernel's limit of ", state.max_threads,
         " on ", dev.name, " (1024 at most; fewer when a kernel uses many registers); use fewer items per block");
  const std::size_t smem = team_shared_bytes(p);
  if (smem + state.static_smem > dev.shared_per_block_optin)
    fail("team launch '", label, "': needs ", smem, " bytes of shared memory per block (", p.common_bytes,
         " common + ", t.items_per_block, " items x ", p.item_bytes, "), over the device limit of ",
         dev.shared_per_block_optin, " bytes (sharedMemPerBlockOptin of ", dev.name,
         "); use fewer items per block or smaller buffers");
  if (smem > state.dynamic_limit) {
    TESSERA_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    state.dynamic_limit = smem;
  }
  const index_t blocks = (t.items + t.items_per_block - 1) / t.items_per_block;
  TESSERA_REQUIRE(blocks <= 0x7fffffff, "team launch '", label, "': ", blocks, " blocks exceed the grid limit");
  CudaLaunchScope scope(label);
  kernel<<<static_cast<unsigned>(blocks), static_cast<unsigned>(threads), smem>>>(p, f);
  cuda_check_launch(label);
}

inline constexpr int kReduceBlock = 256;
inline constexpr int kReduceMaxBlocks = 1024;

template <class T, class Map, class Op>
__global__ void reduce_kernel(index_t n, T identity, Map map, Op op, T* out) {
  __shared__ T s[kReduceBlock];
  T acc = identity;
  const index_t stride = static_cast<index_t>(gridDim.x) * kReduceBlock;
  for (index_t i = static_cast<index_t>(blockIdx.x) * kReduceBlock + threadIdx.x; i < n; i += stride)
    acc = op(acc, map(i));
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kReduceBlock / 2; w > 0; w >>= 1) {
    if (static_cast<int>(threadIdx.x) < w) s[threadIdx.x] = op(s[threadIdx.x], s[threadIdx.x + w]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

template <class T>
struct ReadPartial {
  const T* p;
  __host__ __device__ T operator()(index_t i) const { return p[i]; }
};

/// Two fixed-shape passes (grid size depends on n only): deterministic for a given n.
template <class T, class Map, class Op>
T cuda_transform_reduce(const char* label, index_t n, T identity, const Map& map, const Op& op) {
  const index_t want = (n + kReduceBlock * 4 - 1) / (kReduceBlock * 4);
  const int blocks = static_cast<int>(want < 1 ? 1 : (want > kReduceMaxBlocks ? kReduceMaxBlocks : want));
  T* partial = static_cast<T*>(cuda_scratch(sizeof(T) * (blocks + 1)));
  {
    CudaLaunchScope scope(label);
    reduce_kernel<<<blocks, kReduceBlock>>>(n, identity, map, op, partial);
    cuda_check_launch(label);
    reduce_kernel<<<1, kReduceBlock>>>(static_cast<index_t>(blocks), identity, ReadPartial<T>{partial}, op,
                                       partial + blocks);
    cuda_check_launch(label);
  }
  T result;
  TESSERA_CUDA_CHECK(cudaMemcpy(&result, partial + blocks, sizeof(T), cudaMemcpyDeviceToHost));
  return result;
}

template <class T>
T cuda_exclusive_scan(const char* label, View<const T, 1> in, View<T, 1> out) {
  const index_t n = in.size();
  TESSERA_REQUIRE(n < 0x7fffffff, "exclusive_scan '", label, "': ", n, " elements exceed 2^31-1");
  T last_in{};
  TESSERA_CUDA_CHECK(cudaMemcpy(&last_in, in.data() + (n - 1), sizeof(T), cudaMemcpyDeviceToHost));
  std::size_t temp = 0;
  TESSERA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp, in.data(), out.data(), static_cast<int>(n)));
  void* tmp = cuda_scratch(temp);
  {
    CudaLaunchScope scope(label);
    TESSERA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(tmp, temp, in.data(), out.data(), static_cast<int>(n)));
    cuda_check_launch(label);
  }
  T last_out{};
  TESSERA_CUDA_CHECK(cudaMemcpy(&last_out, out.data() + (n - 1), sizeof(T), cudaMemcpyDeviceToHost));
  return last_out + last_in;
}

}  // namespace tessera::detail
