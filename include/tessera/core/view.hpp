#pragma once
/// \file view.hpp
/// `View<T, Rank>`: a non-owning, trivially copyable, row-major multi-dimensional view.
///
///     double buf[6];
///     tessera::View<double, 2> a(buf, 2, 3);   // 2 rows, 3 columns
///     a(1, 2) = 5.0;                           // element
///     tessera::View<double, 1> row = a(1);     // fewer indices: a slice (row 1)
///
/// With `TESSERA_BOUNDS_CHECK` defined every access checks its indices against the
/// extents, and (when the view knows its memory space) that host code does not touch
/// device memory and device code does not touch pageable host memory. A failure names
/// the array's label, the indices and the extents: on the host it throws tessera::Error,
/// on the GPU it prints the message and traps, which the launch check reports.

#include <array>
#include <cstddef>
#include <type_traits>

#include "tessera/core/exec.hpp"
#include "tessera/core/macros.hpp"

namespace tessera {

namespace detail {

/// Debug information a View carries in bounds-check builds.
struct ViewDebugInfo {
  static constexpr int kLabelChars = 32;
  char label[kLabelChars] = {0};
  /// -1: unknown (a view made from a raw pointer), else a tessera::Space value.
  signed char space = -1;

  TESSERA_INLINE void set_label(const char* s) {
    int i = 0;
    if (s)
      for (; s[i] != 0 && i < kLabelChars - 1; ++i) label[i] = s[i];
    label[i] = 0;
  }
};

/// Host side of a failed check: throws tessera::Error. Defined in src/core/errors.cpp.
[[noreturn]] void view_error_host(const ViewDebugInfo& info, int rank, const index_t* idx, int nidx,
                                  const index_t* ext, bool space_error);

/// Appends a string / an integer to a fixed buffer (usable in device code, no libc).
TESSERA_INLINE int put_str(char* buf, int pos, int cap, const char* s) {
  while (*s && pos < cap - 1) buf[pos++] = *s++;
  buf[pos] = 0;
  return pos;
}
TESSERA_INLINE int put_int(char* buf, int pos, int cap, index_t v) {
  char tmp[24];
  int n = 0;
  bool neg = v < 0;
  unsigned long long u = neg ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
  do {
    tmp[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u && n < 23);
  if (neg && pos < cap - 1) buf[pos++] = '-';
  while (n > 0 && pos < cap - 1) buf[pos++] = tmp[--n];
  buf[pos] = 0;
  return pos;
}

/// Device side of a failed check: prints one line and traps (the launch then fails,
/// and tessera's launch check names the kernel).
TESSERA_DEVICE inline void view_error_device(const ViewDebugInfo& info, int rank, const index_t* idx,
                                            int nidx, const index_t* ext, bool space_error) {
#if defined(TESSERA_DEVICE_CODE)
  char buf[320];
  int p = 0;
  if (space_error) {
    p = put_str(buf, p, 320, "tessera: array '");
    p = put_str(buf, p, 320, info.label);
    p = put_str(buf, p, 320, "' lives in pageable host memory and was accessed from a CUDA kernel");
  } else {
    p = put_str(buf, p, 320, "tessera: index (");
    for (int k = 0; k < nidx; ++k) {
      if (k) p = put_str(buf, p, 320, ", ");
      p = put_int(buf, p, 320, idx[k]);
    }
    p = put_str(buf, p, 320, ") out of bounds for array '");
    p = put_str(buf, p, 320, info.label);
    p = put_str(buf, p, 320, "' with extents (");
    for (int k = 0; k < rank; ++k) {
      if (k) p = put_str(buf, p, 320, ", ");
      p = put_int(buf, p, 320, ext[k]);
    }
    p = put_str(buf, p, 320, ")");
  }
  printf("%s [block %d thread %d]\n", buf, static_cast<int>(blockIdx.x), static_cast<int>(threadIdx.x));
  __trap();
#else
  (void)info, (void)rank, (void)idx, (void)nidx, (void)ext, (void)space_error;
#endif
}

TESSERA_INLINE void view_error(const ViewDebugInfo& info, int rank, const index_t* idx, int nidx,
                               const index_t* ext, bool space_error) {
#if defined(TESSERA_DEVICE_CODE)
  view_error_device(info, rank, idx, nidx, ext, space_error);
#else
  view_error_host(info, rank, idx, nidx, ext, space_error);
#endif
}

}  // namespace detail

/// Non-owning row-major view of `Rank` dimensions (1..8) with run-time extents.
/// Trivially copyable: capture it by value in kernel lambdas.
template <class T, int Rank>
class View {
  static_assert(Rank >= 1 && Rank <= 8, "tessera::View supports ranks 1 to 8");

 public:
  using value_type = std::remove_cv_t<T>;
  using element_type = T;
  static constexpr int rank = Rank;

  View() = default;

  /// View over `data` with the given extents (all ≥ 0).
  template <class... E>
    requires(sizeof...(E) == Rank && (std::is_integral_v<E> && ...))
  TESSERA_HOST_DEVICE View(T* data, E... extents) : data_(data), ext_{static_cast<index_t>(extents)...} {}

  TESSERA_HOST_DEVICE View(T* data, const std::array<index_t, Rank>& extents) : data_(data) {
    for (int d = 0; d < Rank; ++d) ext_[d] = extents[d];
  }

  /// A `View<T>` converts to a `View<const T>`.
  template <class U>
    requires(std::is_same_v<const U, T> && !std::is_same_v<U, T>)
  TESSERA_HOST_DEVICE View(const View<U, Rank>& o) : data_(o.data_) {
    for (int d = 0; d < Rank; ++d) ext_[d] = o.ext_[d];
#if defined(TESSERA_BOUNDS_CHECK)
    dbg_ = o.dbg_;
#endif
  }

  /// Element access with all `Rank` indices.
  template <class... I>
    requires(sizeof...(I) == Rank && (std::is_integral_v<I> && ...))
  TESSERA_HOST_DEVICE T& operator()(I... i) const {
    const index_t idx[Rank] = {static_cast<index_t>(i)...};
#if defined(TESSERA_BOUNDS_CHECK)
    check(idx, Rank);
#endif
    index_t off = idx[0];
    for (int d = 1; d < Rank; ++d) off = off * ext_[d] + idx[d];
    return data_[off];
  }

  /// Fewer indices than the rank: the sub-view with the leading indices fixed.
  template <class... I>
    requires(sizeof...(I) >= 1 && sizeof...(I) < Rank && (std::is_integral_v<I> && ...))
  TESSERA_HOST_DEVICE View<T, Rank - static_cast<int>(sizeof...(I))> operator()(I... i) const {
    constexpr int K = static_cast<int>(sizeof...(I));
    const index_t idx[K] = {static_cast<index_t>(i)...};
#if defined(TESSERA_BOUNDS_CHECK)
    check(idx, K);
#endif
    index_t off = idx[0];
    for (int d = 1; d < K; ++d) off = off * ext_[d] + idx[d];
    index_t inner = 1;
    for (int d = K; d < Rank; ++d) inner *= ext_[d];
    View<T, Rank - K> s;
    s.data_ = data_ + off * inner;
    for (int d = K; d < Rank; ++d) s.ext_[d - K] = ext_[d];
#if defined(TESSERA_BOUNDS_CHECK)
    s.dbg_ = dbg_;
#endif
    return s;
  }

  /// Access by flat (row-major) index in [0, size()).
  TESSERA_HOST_DEVICE T& operator[](index_t flat) const {
#if defined(TESSERA_BOUNDS_CHECK)
    const index_t n = size();
    if (flat < 0 || flat >= n || space_mismatch())
      detail::view_error(dbg_, 1, &flat, 1, &n, space_mismatch());
#endif
    return data_[flat];
  }

  TESSERA_HOST_DEVICE T* data() const { return data_; }
  TESSERA_HOST_DEVICE index_t extent(int d) const { return ext_[d]; }
  TESSERA_HOST_DEVICE index_t size() const {
    index_t n = 1;
    for (int d = 0; d < Rank; ++d) n *= ext_[d];
    return n;
  }
  TESSERA_HOST_DEVICE bool empty() const { return size() == 0; }
  std::array<index_t, Rank> extents() const {
    std::array<index_t, Rank> e{};
    for (int d = 0; d < Rank; ++d) e[d] = ext_[d];
    return e;
  }

  /// Label and memory space (kept only in bounds-check builds; used for messages).
  TESSERA_HOST_DEVICE View& set_debug(const char* label, Space space) {
#if defined(TESSERA_BOUNDS_CHECK)
    dbg_.set_label(label);
    dbg_.space = static_cast<signed char>(space);
#else
    (void)label, (void)space;
#endif
    return *this;
  }

 private:
  template <class, int>
  friend class View;

#if defined(TESSERA_BOUNDS_CHECK)
  TESSERA_HOST_DEVICE bool space_mismatch() const {
#if defined(TESSERA_DEVICE_CODE)
    return dbg_.space == static_cast<signed char>(Space::Host);
#else
    return dbg_.space == static_cast<signed char>(Space::Device);
#endif
  }
  TESSERA_HOST_DEVICE void check(const index_t* idx, int n) const {
    bool bad = space_mismatch();
    for (int d = 0; d < n; ++d) bad = bad || idx[d] < 0 || idx[d] >= ext_[d];
    if (bad) detail::view_error(dbg_, Rank, idx, n, ext_, space_mismatch());
  }
  detail::ViewDebugInfo dbg_{};
#endif

  T* data_ = nullptr;
  index_t ext_[Rank] = {};
};

}  // namespace tessera
