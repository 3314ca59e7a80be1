#pragma once
/// \file tensor/index.hpp
/// Symbolic tensor indices (`i_`, `a_`, ...), offsets (`i_+1`) and symmetry markers
/// (`Sym<0,1>()`, `Sym<0,1>() && Sym<2,3>()`).
///
///     psi(i_ + 1, 0)                        // spatial index into a spacetime slot, fixed index 0
///     Gamma(Sym<1,2>(), i_, j_, k_) = ...   // left-hand side with a symmetry marker

#include <type_traits>

#include "tessera/core/macros.hpp"

namespace tessera::tensor {

/// Number of distinct index letters: i j k l m n o p (dimension 3), a b c d e f (dimension 4).
inline constexpr int kNumLabels = 14;

/// Dimension of the index with this label.
TESSERA_INLINE constexpr int label_dim(int label) { return label < 8 ? 3 : 4; }

/// The letter of a label, for messages and emitted source.
inline constexpr char label_char(int label) { return "ijklmnopabcdef"[label]; }

/// One symbolic index: runs over 0 .. dim-1 where it is free, is summed by Sum().
/// `Label` identifies the letter; the dimension follows from it.
template <int Label>
struct Index {
  static_assert(Label >= 0 && Label < kNumLabels, "tensor: unknown index label");
  static constexpr int label = Label;
  static constexpr int dim = label_dim(Label);
};

/// An index plus a constant offset (`i_ + 1`): the value of i plus 1, typically a spatial
/// index (0..2) addressing the spatial part (1..3) of a spacetime slot.
template <int Label>
struct Shifted {
  static constexpr int label = Label;
  static constexpr int dim = label_dim(Label);
  int offset = 0;
};

template <int L>
constexpr Shifted<L> operator+(Index<L>, int k) {
  return Shifted<L>{k};
}
template <int L>
constexpr Shifted<L> operator+(int k, Index<L>) {
  return Shifted<L>{k};
}
template <int L>
constexpr Shifted<L> operator+(Shifted<L> s, int k) {
  return Shifted<L>{s.offset + k};
}

inline constexpr Index<0> i_{};
inline constexpr Index<1> j_{};
inline constexpr Index<2> k_{};
inline constexpr Index<3> l_{};
inline constexpr Index<4> m_{};
inline constexpr Index<5> n_{};
inline constexpr Index<6> o_{};
inline constexpr Index<7> p_{};
inline constexpr Index<8> a_{};
inline constexpr Index<9> b_{};
inline constexpr Index<10> c_{};
inline constexpr Index<11> d_{};
inline constexpr Index<12> e_{};
inline constexpr Index<13> f_{};

// ---------------------------------------------------------------- slot kinds
namespace detail {
template <class T>
struct SlotTraits {
  static constexpr bool valid = std::is_integral_v<T>;  // a fixed integer index
  static constexpr int label = -1;
  static constexpr int dim = 0;
  static constexpr bool shifted = false;
  static constexpr int offset(const T& t) { return static_cast<int>(t); }
};
template <int L>
struct SlotTraits<Index<L>> {
  static constexpr bool valid = true;
  static constexpr int label = L;
  static constexpr int dim = label_dim(L);
  static constexpr bool shifted = false;
  static constexpr int offset(const Index<L>&) { return 0; }
};
template <int L>
struct SlotTraits<Shifted<L>> {
  static constexpr bool valid = true;
  static constexpr int label = L;
  static constexpr int dim = label_dim(L);
  static constexpr bool shifted = true;
  static constexpr int offset(const Shifted<L>& s) { return s.offset; }
};
}  // namespace detail

// ---------------------------------------------------------------- symmetries
/// Full symmetry among the index positions P (at least two, increasing): `Sym<0,1>`
/// for g_ij, `Sym<1,2>` for Γ^i_jk. As a value (`Sym<0,1>()`) it is the left-hand-side
/// marker of the seed's syntax; as a type it declares a Field's storage.
template <int... P>
struct Sym {
  static_assert(sizeof...(P) >= 2, "tensor: Sym<...> needs at least two index positions");
  static constexpr int n = sizeof...(P);
  static constexpr int pos[sizeof...(P)] = {P...};
  static constexpr bool increasing() {
    for (int q = 1; q < n; ++q)
      if (pos[q] <= pos[q - 1]) return false;
    return pos[0] >= 0;
  }
  static_assert(increasing(), "tensor: the positions of Sym<...> must be non-negative and increasing");
};

/// A set of symmetries: `Syms<>` (none), `Syms<Sym<0,1>, Sym<2,3>>` (A_(ij)(kl)).
template <class... S>
struct Syms {};

/// No symmetry.
using NoSym = Syms<>;

template <int... P, int... Q>
constexpr Syms<Sym<P...>, Sym<Q...>> operator&&(Sym<P...>, Sym<Q...>) {
  return {};
}
template <class... S, int... Q>
constexpr Syms<S..., Sym<Q...>> operator&&(Syms<S...>, Sym<Q...>) {
  return {};
}

namespace detail {
template <class T>
struct AsSyms;
template <class... S>
struct AsSyms<Syms<S...>> {
  using type = Syms<S...>;
};
template <int... P>
struct AsSyms<Sym<P...>> {
  using type = Syms<Sym<P...>>;
};
template <class T>
inline constexpr bool is_symmetry_v = false;
template <class... S>
inline constexpr bool is_symmetry_v<Syms<S...>> = true;
template <int... P>
inline constexpr bool is_symmetry_v<Sym<P...>> = true;

/// Partition of R index positions into symmetry classes: cls[p] = smallest position
/// of p's class (positions in a class take interchangeable values).
template <int R>
struct Classes {
  int cls[R > 0 ? R : 1] = {};
  bool out_of_range = false;
};

template <int R, int... P>
constexpr void add_sym(Classes<R>& c, Sym<P...>) {
  constexpr int pos[] = {P...};
  for (int q = 0; q < static_cast<int>(sizeof...(P)); ++q)
    if (pos[q] >= R) c.out_of_range = true;
  if (c.out_of_range) return;
  // Merge the classes of all positions into that of the smallest member.
  for (int q = 1; q < static_cast<int>(sizeof...(P)); ++q) {
    const int a = c.cls[pos[0]], b = c.cls[pos[q]];
    const int lo = a < b ? a : b, hi = a < b ? b : a;
    for (int r = 0; r < R; ++r)
      if (c.cls[r] == hi) c.cls[r] = lo;
  }
}

template <int R, class... S>
constexpr Classes<R> make_classes(Syms<S...>) {
  Classes<R> c;
  for (int r = 0; r < R; ++r) c.cls[r] = r;
  (add_sym<R>(c, S{}), ...);
  return c;
}
}  // namespace detail

}  // namespace tessera::tensor
