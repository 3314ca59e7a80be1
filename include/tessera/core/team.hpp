#pragma once
/// \file team.hpp
/// Team launches: several items (elements) per block, threads per item in up to three
/// dimensions, and shared memory sized at launch and carved into Views.
///
///     Teams t{.items = num_elements, .items_per_block = 8, .threads = {q, q, 1},
///             .shared_per_item = SharedLayout().add<double>(d * d).bytes(),
///             .shared_common   = SharedLayout().add<double>(q * d).bytes()};
///     launch("fem/example", exec, t, TESSERA_LAMBDA(TeamContext& ctx) {
///       auto B = ctx.shared_common<double>(q, d);   // one copy per block
///       auto u = ctx.shared_item<double>(d, d);     // one copy per item
///       for (int i : ctx.block_threads(q * d)) B[i] = table(i);
///       if (ctx.valid()) for (int y : ctx.threads_y(d)) for (int x : ctx.threads_x(d)) u(y, x) = ...;
///       ctx.sync();
///       ...
///     });
///
/// Rules that make one body correct on every backend:
/// - call `sync()` and carve shared memory unconditionally (also when `!ctx.valid()`,
///   which happens in the partial last block);
/// - keep values that must survive a `sync()` in shared memory, not in local variables
///   (on the CPU the thread loops of one phase finish before the next phase starts);
/// - an item reads only its own buffers and the block's common buffers.
///
/// Item regions larger than shared memory: a functor that declares
/// `static constexpr bool items_may_spill = true` is launched on the GPU with its item regions
/// in device memory when they do not fit the block's shared memory (the common region stays
/// shared). Its buffers then cost L1/L2 traffic instead of shared-memory traffic, so this is for
/// the sizes no shared-memory layout can hold (the operators at the highest orders), not a
/// default. Such a functor cannot also declare max_registers.
///
/// GPU-only functors: one that declares `static constexpr bool gpu_only = true` is compiled for
/// the GPU alone in translation units that nvcc compiles: its CPU team loop is not
/// instantiated there (for large kernel bodies that loop is about half of the unit's compile
/// time), and launching it on a CPU backend from such a unit throws tessera::Error. In builds
/// without CUDA it runs on the CPU as any functor. Callers ask team_runs_on_cpu<F>() (forall.hpp)
/// and pick another kernel for the CPU backends where it is false.
///
/// Shared-memory layout: the common region first, then one region per item; each region
/// starts at a 128-byte boundary and each buffer carved from it at a 16-byte boundary
/// (SharedLayout computes the same sizes). CUDA: dynamic shared memory, raised above the
/// 48 KB default with cudaFuncSetAttribute when needed; CPU: one arena per OpenMP thread.

#include <cstddef>
#include <cstdio>

#include "tessera/core/macros.hpp"
#include "tessera/core/view.hpp"

namespace tessera {

/// Threads per item (x fastest).
struct Dim3 {
  int x = 1, y = 1, z = 1;
};

/// Shape of a team launch.
struct Teams {
  index_t items = 0;               ///< number of items (e.g. elements)
  int items_per_block = 1;         ///< items processed together by one block
  Dim3 threads{};                  ///< threads per item
  std::size_t shared_per_item = 0; ///< bytes of shared memory for each item
  std::size_t shared_common = 0;   ///< bytes shared by all items of a block
};

inline constexpr std::size_t kSharedRegionAlign = 128;
inline constexpr std::size_t kSharedBufferAlign = 16;

TESSERA_INLINE constexpr std::size_t align_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

/// Computes a shared-memory size with the same alignment rules as TeamContext's carving.
class SharedLayout {
 public:
  template <class T>
  constexpr SharedLayout& add(index_t count) {
    bytes_ = align_up(bytes_, kSharedBufferAlign) + static_cast<std::size_t>(count) * sizeof(T);
    return *this;
  }
  constexpr std::size_t bytes() const { return align_up(bytes_, kSharedBufferAlign); }

 private:
  std::size_t bytes_ = 0;
};

/// Strided integer range for thread loops: `for (int i : range) ...`.
struct StridedRange {
  int first, last, step;
  struct Iter {
    int i, step, last;
    TESSERA_HOST_DEVICE int operator*() const { return i; }
    TESSERA_HOST_DEVICE Iter& operator++() {
      i += step;
      return *this;
    }
    TESSERA_HOST_DEVICE bool operator!=(const Iter&) const { return i < last; }
  };
  TESSERA_HOST_DEVICE Iter begin() const { return {first, step, last}; }
  TESSERA_HOST_DEVICE Iter end() const { return {last, step, last}; }
};

namespace detail {
/// Launch parameters as the kernel sees them (region sizes already aligned).
struct TeamParams {
  index_t items;
  int items_per_block;
  int tx, ty, tz;
  std::size_t common_bytes;  // aligned to kSharedRegionAlign
  std::size_t item_bytes;    // aligned to kSharedRegionAlign
};

inline TeamParams make_team_params(const Teams& t) {
  return {t.items, t.items_per_block, t.threads.x, t.threads.y, t.threads.z,
          align_up(t.shared_common, kSharedRegionAlign), align_up(t.shared_per_item, kSharedRegionAlign)};
}
inline std::size_t team_shared_bytes(const TeamParams& p) {
  return p.common_bytes + static_cast<std::size_t>(p.items_per_block) * p.item_bytes;
}

/// F::max_registers, or 0 (no limit of its own).
template <class F>
constexpr int team_register_limit() {
  if constexpr (requires { F::max_registers; }) return F::max_registers;
  else return 0;
}

/// F::items_may_spill, or false.
template <class F>
constexpr bool team_items_may_spill() {
  if constexpr (requires { F::items_may_spill; }) return F::items_may_spill;
  else return false;
}

/// F::gpu_only, or false.
template <class F>
constexpr bool team_gpu_only() {
  if constexpr (requires { F::gpu_only; }) return F::gpu_only;
  else return false;
}

/// Host side of a shared-memory request over the launch's size (throws tessera::Error).
[[noreturn]] void shared_overflow_host(bool common, std::size_t requested, std::size_t capacity);
}  // namespace detail

/// What a team-launch body sees: its item, its thread, loops and shared memory.
class TeamContext {
 public:
  /// The common region at `arena`, the block's item regions after it.
  TESSERA_HOST_DEVICE TeamContext(const detail::TeamParams& p, unsigned char* arena, index_t block, int local_item,
                                  int x, int y, int z, int block_thread, int block_size)
      : p_(p), block_(block), local_(local_item), x_(x), y_(y), z_(z), block_thread_(block_thread),
        block_size_(block_size) {
    item_ = block * p.items_per_block + local_item;
    common_ = arena;
    item_mem_ = arena + p.common_bytes + static_cast<std::size_t>(local_item) * p.item_bytes;
  }
  /// The common region at `common`, the block's item regions at `items`: in shared memory
  /// (`items_shared`) or, in a spilled launch, in device memory.
  TESSERA_HOST_DEVICE TeamContext(const detail::TeamParams& p, unsigned char* common, unsigned char* items,
                                  bool items_shared, index_t block, int local_item, int x, int y, int z,
                                  int block_thread, int block_size)
      : p_(p), block_(block), local_(local_item), x_(x), y_(y), z_(z), block_thread_(block_thread),
        block_size_(block_size), items_shared_(items_shared) {
    item_ = block * p.items_per_block + local_item;
    common_ = common;
    item_mem_ = items + static_cast<std::size_t>(local_item) * p.item_bytes;
  }

  /// Global index of this item; meaningful only when valid().
  TESSERA_HOST_DEVICE index_t item() const { return item_; }
  /// False for the unused slots of the partial last block.
  TESSERA_HOST_DEVICE bool valid() const { return item_ < p_.items; }
  /// Index of this item within its block, in [0, items_per_block()).
  TESSERA_HOST_DEVICE int local_item() const { return local_; }
  TESSERA_HOST_DEVICE int items_per_block() const { return p_.items_per_block; }
  TESSERA_HOST_DEVICE index_t num_items() const { return p_.items; }
  TESSERA_HOST_DEVICE index_t block() const { return block_; }

  /// This thread's coordinates within the item, and the item's thread extents.
  TESSERA_HOST_DEVICE int thread_x() const { return x_; }
  TESSERA_HOST_DEVICE int thread_y() const { return y_; }
  TESSERA_HOST_DEVICE int thread_z() const { return z_; }
  TESSERA_HOST_DEVICE int threads_per_item() const { return p_.tx * p_.ty * p_.tz; }

  /// Thread loops: on the GPU they stride over the item's threads in x, y, z; on the
  /// CPU they are plain loops. `item_threads` spreads over all threads of the item,
  /// `block_threads` over all threads of the block (work done once per block, such as
  /// loading the common buffers; on the CPU only local item 0 runs it).
  TESSERA_HOST_DEVICE StridedRange threads_x(int n) const { return range(x_, n, p_.tx); }
  TESSERA_HOST_DEVICE StridedRange threads_y(int n) const { return range(y_, n, p_.ty); }
  TESSERA_HOST_DEVICE StridedRange threads_z(int n) const { return range(z_, n, p_.tz); }
  TESSERA_HOST_DEVICE StridedRange item_threads(int n) const {
    return range(x_ + p_.tx * (y_ + p_.ty * z_), n, threads_per_item());
  }
  TESSERA_HOST_DEVICE StridedRange block_threads(int n) const {
#if defined(TESSERA_DEVICE_CODE)
    return {block_thread_, n, block_size_};
#else
    return {0, local_ == 0 ? n : 0, 1};
#endif
  }

  /// Barrier over the block (no-op on the CPU).
  TESSERA_HOST_DEVICE void sync() const {
#if defined(TESSERA_DEVICE_CODE)
    __syncthreads();
#endif
  }

  /// Whether the item regions are in shared memory (false in a spilled launch, and for the CPU's
  /// arena): shared-memory-only operations such as cp.async must check it.
  TESSERA_HOST_DEVICE bool items_in_shared_memory() const {
#if defined(TESSERA_DEVICE_CODE)
    return items_shared_;
#else
    return false;
#endif
  }

  /// Carves the next buffer from this item's region of shared memory.
  template <class T, class... E>
  TESSERA_HOST_DEVICE View<T, static_cast<int>(sizeof...(E))> shared_item(E... extents) {
    return carve<T>(item_mem_, item_off_, p_.item_bytes, false, extents...);
  }
  /// Carves the next buffer from the block's common region.
  template <class T, class... E>
  TESSERA_HOST_DEVICE View<T, static_cast<int>(sizeof...(E))> shared_common(E... extents) {
    return carve<T>(common_, common_off_, p_.common_bytes, true, extents...);
  }

 private:
  TESSERA_HOST_DEVICE static StridedRange range(int first, int n, int step) {
#if defined(TESSERA_DEVICE_CODE)
    return {first, n, step};
#else
    (void)first, (void)step;
    return {0, n, 1};
#endif
  }

  template <class T, class... E>
  TESSERA_HOST_DEVICE View<T, static_cast<int>(sizeof...(E))> carve(unsigned char* base, std::size_t& off,
                                                                     std::size_t cap, bool common, E... extents) {
    std::size_t count = 1;
    ((count *= static_cast<std::size_t>(extents)), ...);
    const std::size_t start = align_up(off, kSharedBufferAlign);
    const std::size_t end = start + count * sizeof(T);
    if (end > cap) {
#if defined(TESSERA_DEVICE_CODE)
      printf("tessera: team launch asked for %llu bytes of %s shared memory; the launch gave %llu (fix Teams::%s)\n",
             static_cast<unsigned long long>(end), common ? "common" : "per-item",
             static_cast<unsigned long long>(cap), common ? "shared_common" : "shared_per_item");
      __trap();
#else
      detail::shared_overflow_host(common, end, cap);
#endif
    }
    off = end;
    View<T, static_cast<int>(sizeof...(E))> v(reinterpret_cast<T*>(base + start), extents...);
#if defined(TESSERA_DEVICE_CODE)
    v.set_debug(common ? "shared_common" : "shared_item", Space::Device);
#else
    v.set_debug(common ? "shared_common" : "shared_item", Space::Host);
#endif
    return v;
  }

  detail::TeamParams p_;
  index_t block_;
  index_t item_;
  int local_, x_, y_, z_, block_thread_, block_size_;
  unsigned char* common_;
  unsigned char* item_mem_;
  std::size_t common_off_ = 0, item_off_ = 0;
  bool items_shared_ = true;
};

}  // namespace tessera
