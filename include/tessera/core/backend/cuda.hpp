#pragma once
/// \file backend/cuda.hpp
/// CUDA implementations of forall, team launches, reductions and scans. Included by
/// the dispatchers only when a translation unit is compiled by nvcc.

#if !defined(__CUDACC__)
#error "tessera/core/backend/cuda.hpp is for translation units compiled as CUDA"
#endif

#include <cuda_runtime.h>

#include <algorithm>
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
/// A device scratch buffer of at least `bytes`, reused between calls (default stream). Slot 0
/// serves reductions and scans, slot 1 the item regions of spilled team launches.
void* cuda_scratch(std::size_t bytes, int slot = 0);

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

/// f(i) for i in [0, n) on `stream` (a cudaStream_t; graph.hpp's capture records such
/// launches), blocks of block_size threads over a grid-stride loop. A null stream only loads
/// the kernel of F: lazy module loading must not happen inside a capture, so a capturing layer
/// calls it once with nullptr first. No synchronization (illegal while capturing).
template <class F>
__global__ void stream_forall_kernel(index_t n, F f) {
  const index_t step = static_cast<index_t>(gridDim.x) * blockDim.x;
  for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) f(i);
}
template <class F>
void cuda_forall_on_stream(const char* label, void* stream, index_t n, int block_size, const F& f) {
  if (!stream) {
    cudaFuncAttributes attr{};
    TESSERA_CUDA_CHECK(cudaFuncGetAttributes(&attr, stream_forall_kernel<F>));
    return;
  }
  TESSERA_REQUIRE(block_size >= 1 && block_size <= 1024, "kernel '", label, "': block_size ", block_size,
                  " is outside 1..1024");
  if (n <= 0) return;
  const index_t blocks = std::min<index_t>((n + block_size - 1) / block_size, index_t(1) << 30);
  KernelScope untracked;
  stream_forall_kernel<<<static_cast<unsigned>(blocks), block_size, 0, static_cast<cudaStream_t>(stream)>>>(n, f);
  TESSERA_CUDA_CHECK(cudaGetLastError());
}

/// This thread's place in a block: thread bt = x + tx * (y + ty * (z + tz * local)), the warp
/// layout of a (tx, ty, tz * items) block. team_block_dim launches that shape as a 3-D block
/// when blockDim.z's limit of 64 allows (then the coordinates are threadIdx's, with no integer
/// division, which costs about 25 instructions each at run-time divisors: 4-6% of a line
/// kernel's instructions at one element per warp pair), else as a flat block of bt (2x3x4
/// threads x 32 items) that the kernel divides out.
struct TeamThread {
  int x, y, z, local, bt;
};
__device__ inline TeamThread team_thread_flat(const TeamParams& p, int bt) {
  int rest = bt / p.tx;
  const int x = bt - rest * p.tx;
  const int y = rest % p.ty;
  rest /= p.ty;
  const int z = rest % p.tz;
  return {x, y, z, rest / p.tz, bt};
}
__device__ inline TeamThread team_thread(const TeamParams& p) {
  if (blockDim.x == static_cast<unsigned>(p.tx)) {  // 3-D; a flat block of one item thread row agrees
    const int x = static_cast<int>(threadIdx.x), y = static_cast<int>(threadIdx.y), zl = static_cast<int>(threadIdx.z);
    const int bt = x + p.tx * (y + p.ty * zl);
    if (p.tz == 1) return {x, y, 0, zl, bt};
    const int local = zl / p.tz;
    return {x, y, zl - local * p.tz, local, bt};
  }
  return team_thread_flat(p, static_cast<int>(threadIdx.x));
}
/// The block shape of a team launch of `threads` threads (see team_thread).
inline dim3 team_block_dim(const Teams& t, long long threads) {
  const long long zl = 1LL * t.threads.z * t.items_per_block;
  if (zl <= 64) return dim3(static_cast<unsigned>(t.threads.x), static_cast<unsigned>(t.threads.y),
                            static_cast<unsigned>(zl));
  return dim3(static_cast<unsigned>(threads));
}
/// Threads of this block.
__device__ inline int team_block_size() { return static_cast<int>(blockDim.x * blockDim.y * blockDim.z); }

template <class F>
__device__ inline void team_body(const TeamParams& p, const F& f) {
  extern __shared__ __align__(128) unsigned char tessera_team_smem[];
  const TeamThread t = team_thread(p);
  TeamContext ctx(p, tessera_team_smem, blockIdx.x, t.local, t.x, t.y, t.z, t.bt, team_block_size());
  f(ctx);
}

template <class F>
__global__ void team_kernel(TeamParams p, F f) {
  team_body(p, f);
}

/// The team kernel of a launch whose item regions do not fit shared memory (a functor with
/// items_may_spill): the common region stays in shared memory, the item regions of this block
/// are `items` + blockIdx.x * items_per_block * item_bytes in device memory, and the block
/// strides over the launch's `blocks` (the grid holds only as many blocks as can be resident,
/// so the device memory is bounded by what runs at once and stays in L2 as far as it can).
template <class F>
__global__ void team_kernel_spilled(TeamParams p, F f, unsigned char* items, index_t blocks) {
  extern __shared__ __align__(128) unsigned char tessera_team_smem[];
  // always a flat block: the kernels that spill (p >= 13 operators) need 324+ threads per item,
  // and the 3-D path's extra code took one of them from 167 to 204 registers, which allow only
  // 256 threads per block
  const TeamThread t = team_thread_flat(p, static_cast<int>(threadIdx.x));
  unsigned char* mine = items + static_cast<std::size_t>(blockIdx.x) * p.items_per_block * p.item_bytes;
  for (index_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    TeamContext ctx(p, tessera_team_smem, mine, false, b, t.local, t.x, t.y, t.z, t.bt, team_block_size());
    f(ctx);
    __syncthreads();  // the next block's item may overwrite what a slower thread still reads
  }
}

/// The team kernel of a functor that declares `static constexpr int max_registers = N` (N > 0):
/// compiled with at most N registers per thread (__maxnreg__), so that a kernel just over an
/// occupancy step can be held under it at the price of a few spills.
template <class F, int N>
__global__ void __maxnreg__(N) team_kernel_limited(TeamParams p, F f) {
  team_body(p, f);
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
  // spilled launches: resident blocks per SM for the last (threads, shared bytes) asked
  long long occupancy_threads = -1;
  std::size_t occupancy_smem = 0;
  int blocks_per_sm = 0;
};

/// The most threads per block a team launch of F can use (its registers decide). For F with
/// items_may_spill, the lower of its two kernels' limits: which one a launch takes depends on
/// the shared memory it asks, and the spilled one's register use can differ.
template <class F>
int cuda_team_max_threads() {
  cudaFuncAttributes attr{};
  TESSERA_CUDA_CHECK(cudaFuncGetAttributes(&attr, team_kernel_for<F>()));
  int limit = attr.maxThreadsPerBlock;
  if constexpr (team_items_may_spill<F>()) {
    TESSERA_CUDA_CHECK(cudaFuncGetAttributes(&attr, &team_kernel_spilled<F>));
    limit = std::min(limit, attr.maxThreadsPerBlock);
  }
  return limit;
}

inline void check_team_threads(const char* label, const Teams& t, long long threads, int max_threads,
                               const DeviceInfo& dev) {
  if (threads > max_threads)
    fail("team launch '", label, "': ", threads, " threads per block (", t.threads.x, "x", t.threads.y, "x",
         t.threads.z, " per item x ", t.items_per_block, " items) exceed this kernel's limit of ", max_threads, " on ",
         dev.name, " (1024 at most; fewer when a kernel uses many registers); use fewer items per block");
}

/// Reads a kernel's attributes once and raises its dynamic shared-memory limit to `smem`.
template <class K>
void prepare_team_kernel(TeamKernelState& state, K kernel, std::size_t smem) {
  if (!state.init) {
    cudaFuncAttributes attr{};
    TESSERA_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    state.max_threads = attr.maxThreadsPerBlock;
    state.static_smem = attr.sharedSizeBytes;
    state.dynamic_limit = static_cast<std::size_t>(attr.maxDynamicSharedSizeBytes);
    state.init = true;
  }
  if (smem > state.dynamic_limit) {
    TESSERA_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    state.dynamic_limit = smem;
  }
}

/// The launch of team_kernel_spilled: common region shared, item regions in device memory.
template <class F>
void cuda_team_launch_spilled(const char* label, const Teams& t, const TeamParams& p, const F& f, long long threads,
                              index_t blocks) {
  static_assert(team_register_limit<F>() == 0, "a functor with items_may_spill cannot also declare max_registers");
  static TeamKernelState state;
  const auto kernel = &team_kernel_spilled<F>;
  const DeviceInfo& dev = current_device();
  prepare_team_kernel(state, kernel, p.common_bytes);
  check_team_threads(label, t, threads, state.max_threads, dev);
  if (threads != state.occupancy_threads || p.common_bytes != state.occupancy_smem) {  // not at every apply
    TESSERA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&state.blocks_per_sm, kernel,
                                                                     static_cast<int>(threads), p.common_bytes));
    state.occupancy_threads = threads;
    state.occupancy_smem = p.common_bytes;
  }
  const index_t grid = std::min<index_t>(blocks, static_cast<index_t>(std::max(state.blocks_per_sm, 1)) * dev.sm_count);
  auto* items = static_cast<unsigned char*>(
      cuda_scratch(static_cast<std::size_t>(grid) * p.items_per_block * p.item_bytes, 1));
  CudaLaunchScope scope(label);
  kernel<<<static_cast<unsigned>(grid), static_cast<unsigned>(threads), p.common_bytes>>>(p, f, items, blocks);
  cuda_check_launch(label);
}

template <class F>
void cuda_team_launch(const char* label, const Teams& t, const F& f) {
  static TeamKernelState state;  // per instantiation of this template, i.e. per kernel
  const auto kernel = team_kernel_for<F>();
  const TeamParams p = make_team_params(t);
  const long long threads = 1LL * t.threads.x * t.threads.y * t.threads.z * t.items_per_block;
  const DeviceInfo& dev = current_device();
  const std::size_t smem = team_shared_bytes(p);
  const index_t blocks = (t.items + t.items_per_block - 1) / t.items_per_block;
  TESSERA_REQUIRE(blocks <= 0x7fffffff, "team launch '", label, "': ", blocks, " blocks exceed the grid limit");
  prepare_team_kernel(state, kernel, 0);
  if (smem + state.static_smem > dev.shared_per_block_optin) {
    if constexpr (team_items_may_spill<F>())
      if (p.common_bytes + state.static_smem <= dev.shared_per_block_optin)
        return cuda_team_launch_spilled(label, t, p, f, threads, blocks);
    fail("team launch '", label, "': needs ", smem, " bytes of shared memory per block (", p.common_bytes,
         " common + ", t.items_per_block, " items x ", p.item_bytes, "), over the device limit of ",
         dev.shared_per_block_optin, " bytes (sharedMemPerBlockOptin of ", dev.name, "); use fewer items per block or smaller buffers",
         team_items_may_spill<F>() ? " (the item regions may go to device memory, but the common region alone is over)"
                                   : "");
  }
  check_team_threads(label, t, threads, state.max_threads, dev);
  prepare_team_kernel(state, kernel, smem);
  CudaLaunchScope scope(label);
  kernel<<<static_cast<unsigned>(blocks), team_block_dim(t, threads), smem>>>(p, f);
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
