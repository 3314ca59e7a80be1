#pragma once
/// \file array.hpp
/// `Array<T, Rank>`: owning, labelled, reference-counted, shallow-copy array.
///
///     tessera::Array<double, 2> u("u", {nx, ny}, tessera::Space::Device);
///     auto v = u.view();                       // non-owning View for kernels
///     auto h = u.to_host();                    // host copy (or u itself if on the host)
///     tessera::deep_copy(w, u);                // element copy between any spaces
///
/// Copies share the allocation (shallow); the last copy frees it. Copies made inside a
/// kernel (including the copy a kernel launch makes of its lambda) never touch the
/// reference count: on the GPU the count is not reachable, on the CPU backends the
/// launch marks its threads as "inside a kernel" and copies there are untracked.

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/memory.hpp"
#include "tessera/core/view.hpp"

namespace tessera {

namespace detail {

/// Shared state of one allocation.
struct ArrayRecord {
  std::string label;
  Space space = Space::Host;
  void* ptr = nullptr;
  std::size_t bytes = 0;
  std::atomic<long> count{1};
};

/// Depth of kernel dispatch on this host thread (set by the CPU backends and by the
/// CUDA launch path while they copy functors). Non-zero: Array copies are untracked.
inline thread_local int kernel_depth = 0;

/// Number of reference-count operations performed so far (for tests and benchmarks).
inline std::atomic<long> refcount_ops{0};

/// RAII marker for "this host thread is dispatching or running a kernel".
struct KernelScope {
  KernelScope() { ++kernel_depth; }
  ~KernelScope() { --kernel_depth; }
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;
};

ArrayRecord* new_record(const std::string& label, Space space, std::size_t bytes);
void release_record(ArrayRecord* rec) noexcept;

}  // namespace detail

/// Owning, labelled, reference-counted multi-dimensional array (row-major).
/// `T` must be trivially copyable: the data moves between spaces with memcpy.
template <class T, int Rank = 1>
class Array {
  static_assert(std::is_trivially_copyable_v<T>, "tessera::Array<T> needs a trivially copyable T");

 public:
  using value_type = T;
  static constexpr int rank = Rank;

  /// An empty array (no allocation, size 0).
  Array() = default;

  /// Allocates a zero-initialised array of the given extents in `space`.
  Array(std::string label, const std::array<index_t, Rank>& extents, Space space = Space::Host) {
    allocate(std::move(label), extents, space);
  }

  /// Host array holding a copy of `values` (rank 1), moved to `space`.
  static Array from(std::string label, std::span<const T> values, Space space = Space::Host)
    requires(Rank == 1)
  {
    Array a(std::move(label), {static_cast<index_t>(values.size())}, space);
    if (!values.empty())
      detail::copy_bytes(a.data(), space, values.data(), Space::Host, values.size() * sizeof(T));
    return a;
  }

  TESSERA_HOST_DEVICE Array(const Array& o) : view_(o.view_), rec_(o.rec_) { retain(); }
  TESSERA_HOST_DEVICE Array(Array&& o) noexcept : view_(o.view_), rec_(o.rec_) {
#if !defined(TESSERA_DEVICE_CODE)
    o.rec_ = nullptr;
    o.view_ = View<T, Rank>();
#endif
  }
  TESSERA_HOST_DEVICE Array& operator=(const Array& o) {
    if (this != &o) {
      Array tmp(o);
      swap(tmp);
    }
    return *this;
  }
  TESSERA_HOST_DEVICE Array& operator=(Array&& o) noexcept {
    if (this != &o) {
      Array tmp(static_cast<Array&&>(o));
      swap(tmp);
    }
    return *this;
  }
  TESSERA_HOST_DEVICE ~Array() { release(); }

  /// Element or slice access, as View::operator().
  template <class... I>
  TESSERA_HOST_DEVICE decltype(auto) operator()(I... i) const {
    return view_(i...);
  }
  TESSERA_HOST_DEVICE T& operator[](index_t i) const { return view_[i]; }

  /// Non-owning views for kernels.
  TESSERA_HOST_DEVICE View<T, Rank> view() const { return view_; }
  TESSERA_HOST_DEVICE View<const T, Rank> cview() const { return view_; }
  TESSERA_HOST_DEVICE operator View<T, Rank>() const { return view_; }
  TESSERA_HOST_DEVICE operator View<const T, Rank>() const { return view_; }

  TESSERA_HOST_DEVICE T* data() const { return view_.data(); }
  TESSERA_HOST_DEVICE index_t size() const { return view_.size(); }
  TESSERA_HOST_DEVICE index_t extent(int d) const { return view_.extent(d); }
  std::array<index_t, Rank> extents() const { return view_.extents(); }
  std::size_t bytes() const { return static_cast<std::size_t>(size()) * sizeof(T); }
  bool allocated() const { return rec_ != nullptr; }
  const std::string& label() const {
    static const std::string none;
    return rec_ ? rec_->label : none;
  }
  Space space() const { return rec_ ? rec_->space : Space::Host; }
  /// Number of Arrays sharing this allocation (0 for an empty array).
  long use_count() const { return rec_ ? rec_->count.load(std::memory_order_relaxed) : 0; }

  /// A new array in `space` with a copy of the data (always a new allocation).
  Array clone(Space space) const {
    Array a(label(), extents(), space);
    if (size() > 0) detail::copy_bytes(a.data(), space, data(), this->space(), bytes());
    return a;
  }
  /// This array if it is host-accessible (host or pinned), else a host copy.
  Array to_host() const { return space() == Space::Device ? clone(Space::Host) : *this; }
  /// This array if it is on the device, else a device copy.
  Array to_device() const { return space() == Space::Device ? *this : clone(Space::Device); }

  /// Sets every element to `value` (on the array's own space).
  void fill(const T& value) {
    if (size() > 0) detail::fill_bytes(data(), space(), static_cast<std::size_t>(size()), &value, sizeof(T));
  }

  /// Reallocates to new extents, keeping the elements whose indices exist in both
  /// (new elements are zero). Other Arrays that shared the old allocation keep it.
  void resize(const std::array<index_t, Rank>& extents) {
    Array fresh(label(), extents, space());
    copy_overlap(fresh);
    *this = std::move(fresh);
  }

  /// The data as a std::vector (copied to the host first if needed).
  std::vector<T> to_vector() const {
    std::vector<T> out(static_cast<std::size_t>(size()));
    if (!out.empty()) detail::copy_bytes(out.data(), Space::Host, data(), space(), bytes());
    return out;
  }

 private:
  void allocate(std::string label, const std::array<index_t, Rank>& extents, Space space) {
    std::size_t n = 1;
    for (int d = 0; d < Rank; ++d) {
      TESSERA_REQUIRE(extents[d] >= 0, "Array '", label, "': extent ", d, " is negative (", extents[d], ")");
      n *= static_cast<std::size_t>(extents[d]);
    }
    rec_ = detail::new_record(label, space, n * sizeof(T));
    view_ = View<T, Rank>(static_cast<T*>(rec_->ptr), extents);
    view_.set_debug(rec_->label.c_str(), space);
  }

  void copy_overlap(Array& dst) const {
    if (!rec_) return;
    std::array<index_t, Rank> common{};
    index_t n_rows = 1;
    for (int d = 0; d < Rank; ++d) {
      common[d] = std::min(extent(d), dst.extent(d));
      if (d < Rank - 1) n_rows *= common[d];
    }
    const index_t run = common[Rank - 1];
    if (run == 0 || n_rows == 0) return;
    std::array<index_t, Rank> idx{};
    for (index_t r = 0; r < n_rows; ++r) {
      index_t rem = r;
      for (int d = Rank - 2; d >= 0; --d) {
        idx[d] = rem % common[d];
        rem /= common[d];
      }
      index_t so = 0, doff = 0;
      for (int d = 0; d < Rank; ++d) {
        so = so * extent(d) + idx[d];
        doff = doff * dst.extent(d) + idx[d];
      }
      detail::copy_bytes(dst.data() + doff, dst.space(), data() + so, space(), run * sizeof(T));
    }
  }

  TESSERA_HOST_DEVICE void swap(Array& o) noexcept {
    auto v = view_;
    view_ = o.view_;
    o.view_ = v;
    auto r = rec_;
    rec_ = o.rec_;
    o.rec_ = r;
  }
  TESSERA_HOST_DEVICE void retain() const {
#if !defined(TESSERA_DEVICE_CODE)
    if (rec_ && detail::kernel_depth == 0) {
      rec_->count.fetch_add(1, std::memory_order_relaxed);
      detail::refcount_ops.fetch_add(1, std::memory_order_relaxed);
    }
#endif
  }
  TESSERA_HOST_DEVICE void release() {
#if !defined(TESSERA_DEVICE_CODE)
    if (rec_ && detail::kernel_depth == 0) {
      detail::refcount_ops.fetch_add(1, std::memory_order_relaxed);
      detail::release_record(rec_);
    }
#endif
    rec_ = nullptr;
  }

  View<T, Rank> view_{};
  detail::ArrayRecord* rec_ = nullptr;
};

/// Copies all elements of `src` into `dst` (any spaces). The extents must match.
template <class T, int Rank>
void deep_copy(const Array<T, Rank>& dst, const Array<T, Rank>& src) {
  TESSERA_REQUIRE(dst.extents() == src.extents(), "deep_copy: extents of '", dst.label(), "' and '", src.label(),
                  "' differ");
  if (src.size() > 0) detail::copy_bytes(dst.data(), dst.space(), src.data(), src.space(), src.bytes());
}

}  // namespace tessera
