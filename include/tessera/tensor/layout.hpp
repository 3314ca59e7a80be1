#pragma once
/// \file tensor/layout.hpp
/// Storage layout of a grid tensor: which stored component holds a given multi-index.
///
/// The index positions are split into symmetry classes (positions whose values may be
/// permuted freely). A class of k positions of dimension D holds C(D+k-1, k) independent
/// value sets, ranked by the combinatorial number system of the sorted values; the
/// component number is the mixed-radix number of these ranks, the class of position 0
/// most significant. Without symmetries this is plain row-major order; for a symmetric
/// 3x3 tensor the order is (00, 01, 11, 02, 12, 22).

#include "tessera/tensor/index.hpp"

namespace tessera::tensor {

/// Compile-time description of a layout (a literal type: usable as a local constexpr
/// value in device code, unlike static member arrays).
struct LayoutInfo {
  int rank = 0;
  int dim[4] = {1, 1, 1, 1};
  int cls[4] = {0, 1, 2, 3};  ///< smallest position of each position's class
  int ncls = 0;
  int first[4] = {};  ///< first position of class q
  int size[4] = {};   ///< positions in class q
  int count[4] = {};  ///< independent value sets of class q
  int weight[4] = {};
  int components = 1;
  bool dims_agree = true;
  bool out_of_range = false;
};

TESSERA_INLINE constexpr int binomial(int n, int r) {
  if (r < 0 || n < r) return 0;
  long long c = 1;
  for (int q = 1; q <= r; ++q) c = c * (n - r + q) / q;
  return static_cast<int>(c);
}

template <class S, int... Dims>
constexpr LayoutInfo make_layout() {
  constexpr int R = static_cast<int>(sizeof...(Dims));
  static_assert(R <= 4, "tensor: Field supports ranks 0 to 4");
  LayoutInfo L;
  L.rank = R;
  if constexpr (R > 0) {
    constexpr int d[] = {Dims...};
    constexpr auto c = detail::make_classes<R>(typename detail::AsSyms<S>::type{});
    L.out_of_range = c.out_of_range;
    for (int p = 0; p < R; ++p) {
      L.dim[p] = d[p];
      L.cls[p] = c.cls[p];
    }
    for (int p = 0; p < R; ++p) {
      if (L.cls[p] != p) {
        if (L.dim[p] != L.dim[L.cls[p]]) L.dims_agree = false;
        continue;
      }
      const int q = L.ncls++;
      L.first[q] = p;
      for (int r = p; r < R; ++r)
        if (L.cls[r] == p) ++L.size[q];
      L.count[q] = binomial(L.dim[p] + L.size[q] - 1, L.size[q]);
    }
    int w = 1;
    for (int q = L.ncls - 1; q >= 0; --q) {
      L.weight[q] = w;
      w *= L.count[q];
    }
    L.components = w;
  }
  return L;
}

/// Component number of the multi-index v (values in range) in layout L.
TESSERA_INLINE constexpr int component_of(const LayoutInfo& L, const int* v) {
  int comp = 0;
  for (int q = 0; q < L.ncls; ++q) {
    int s[4] = {0, 0, 0, 0};
    int k = 0;
    for (int p = L.first[q]; p < L.rank; ++p)
      if (L.cls[p] == L.first[q]) s[k++] = v[p];
    // insertion sort (k <= 4)
    for (int a = 1; a < k; ++a)
      for (int b = a; b > 0 && s[b - 1] > s[b]; --b) {
        const int t = s[b];
        s[b] = s[b - 1];
        s[b - 1] = t;
      }
    int rank = 0;
    for (int a = 0; a < k; ++a) rank += binomial(s[a] + a, a + 1);
    comp += rank * L.weight[q];
  }
  return comp;
}

/// Layout of a Field<S, Dims...> with its compile-time checks.
template <class S, int... Dims>
struct Layout {
  static_assert(detail::is_symmetry_v<S>, "tensor: the first parameter of Field is a symmetry (NoSym, Sym<...>, Syms<...>)");
  static constexpr LayoutInfo info = make_layout<S, Dims...>();
  static_assert(!info.out_of_range, "tensor: a position in Sym<...> is not smaller than the tensor's rank");
  static_assert(info.dims_agree, "tensor: symmetric index positions must have the same dimension");
  static constexpr int rank = info.rank;
  static constexpr int components = info.components;

  /// Component number of the multi-index (host and device).
  TESSERA_HOST_DEVICE static constexpr int component(const int* v) {
    constexpr LayoutInfo L = make_layout<S, Dims...>();
    if constexpr (L.ncls == L.rank) {
      // No symmetry: plain row-major (cheaper to compile than the general ranking).
      int comp = 0;
      for (int p = 0; p < L.rank; ++p) comp = comp * L.dim[p] + v[p];
      return comp;
    } else {
      return component_of(L, v);
    }
  }
};

}  // namespace tessera::tensor
