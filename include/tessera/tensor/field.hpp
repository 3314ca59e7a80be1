#pragma once
/// \file tensor/field.hpp
/// `Field<Symmetry, Dims...>`: a tensor of rank sizeof...(Dims) (0 to 4) at every point of
/// a grid of N points, storing only its independent components, in ONE contiguous
/// allocation: component-major, each component contiguous over the grid (an
/// Array<double, 2> of extents {components, N}).
///
///     using namespace tessera::tensor;
///     Field<Sym<0,1>, 3, 3> g("g", n, Space::Device);       // g_ij, 6 components
///     Field<NoSym, 4> psi_t("psi_t", n);                     // a spacetime vector
///     Field<Sym<0,1>, 3, 3, 3> dg("dg", n);                  // d_k g_ij = dg(i_, j_)(k_)
///     Scalar alpha("alpha", n);                               // a grid scalar (rank 0)
///     g(i_, j_) = dg(i_, j_)(0);                              // one fused kernel
///
/// Derivatives (the seed's Tensor<Tensor<DataMesh>>) are Fields whose trailing slots are
/// the derivative indices; `dg(j_, l_)(k_)` is accepted and means `dg(j_, l_, k_)`.

#include <array>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "tessera/core/array.hpp"
#include "tessera/core/error.hpp"
#include "tessera/tensor/expr.hpp"
#include "tessera/tensor/layout.hpp"

namespace tessera::tensor {

template <class F, class Marker, class... Slots>
struct Partial;

template <class S, int... Dims>
class Field {
 public:
  using symmetry = typename detail::AsSyms<S>::type;
  using layout = Layout<S, Dims...>;
  static constexpr int rank = static_cast<int>(sizeof...(Dims));
  /// Number of independent (stored) components.
  static constexpr int components = layout::components;
  static_assert(((Dims == 3 || Dims == 4) && ...), "tensor: every index of a Field has dimension 3 or 4");

  Field() = default;
  /// A zero-initialised field of n grid points in `space`.
  Field(std::string label, index_t n, Space space = Space::Host)
      : data_(std::move(label), {static_cast<index_t>(components), n}, space) {}

  /// Grid points.
  index_t size() const { return data_.extent(1); }
  Space space() const { return data_.space(); }
  const std::string& label() const { return data_.label(); }
  /// The storage: extents {components, N}.
  const Array<double, 2>& array() const { return data_; }
  double* data() const { return data_.data(); }

  /// Stored component of a multi-index (host and device).
  TESSERA_HOST_DEVICE static constexpr int component_index(const std::array<int, rank>& idx) {
    int v[4] = {0, 0, 0, 0};
    for (int p = 0; p < rank; ++p) v[p] = idx[p];
    return layout::component(v);
  }
  /// The N values of the component of a multi-index (symmetric partners share one).
  template <class... I>
    requires(sizeof...(I) == rank && (std::is_integral_v<I> && ...))
  View<double, 1> component(I... idx) const {
    const std::array<int, rank> a{static_cast<int>(idx)...};
    for (int p = 0; p < rank; ++p)
      TESSERA_REQUIRE(a[p] >= 0 && a[p] < dims()[p], "Field '", label(), "': index ", a[p], " at position ", p,
                      " is outside 0..", dims()[p] - 1);
    return data_.view()(component_index(a));
  }
  static constexpr std::array<int, rank> dims() { return {Dims...}; }

  /// Host copy / device copy (new allocations unless already there).
  Field to_host() const { return Field(data_.to_host()); }
  Field to_device() const { return Field(data_.to_device()); }
  Field clone(Space space) const { return Field(data_.clone(space)); }

  /// Indexing with symbolic indices, offsets and fixed integers: an expression leaf, or
  /// the left-hand side of a statement. Fewer indices than the rank give a partially
  /// indexed field to be completed by a second call (`dg(j_, l_)(k_)`).
  template <class... Slots>
    requires(sizeof...(Slots) <= rank && (detail::SlotTraits<Slots>::valid && ...))
  auto operator()(Slots... s) const {
    if constexpr (sizeof...(Slots) == rank)
      return make_ref<NoSym>(s...);
    else
      return Partial<Field, NoSym, Slots...>{this, {s...}};
  }
  /// The same with the seed's symmetry marker first: `A(Sym<0,1>(), i_, j_)`.
  template <class M, class... Slots>
    requires(detail::is_symmetry_v<M> && sizeof...(Slots) == rank && (detail::SlotTraits<Slots>::valid && ...))
  auto operator()(M, Slots... s) const {
    return make_ref<typename detail::AsSyms<M>::type>(s...);
  }
  /// Anything else: a readable error.
  template <class... Slots>
    requires(sizeof...(Slots) > rank && !(detail::is_symmetry_v<Slots> || ...))
  void operator()(Slots...) const {
    static_assert(sizeof...(Slots) <= rank, "tensor: more indices than the rank of the Field");
  }

  template <class Marker, class... Slots>
  Ref<Field, Marker, Slots...> make_ref(Slots... s) const {
    static_assert(sizeof...(Slots) == rank, "tensor: the number of indices differs from the rank of the Field");
    check_slot_dims<Slots...>(std::make_index_sequence<sizeof...(Slots)>{});
    Ref<Field, Marker, Slots...> r;
    r.data = data_.data();
    r.n = size();
    r.space = space();
    r.label = data_.label().c_str();
    r.allocated = data_.allocated();
    int p = 0;
    ((r.off[p] = detail::SlotTraits<Slots>::offset(s), ++p), ...);
    check_ranges<Slots...>(r.off);
    return r;
  }

 private:
  explicit Field(Array<double, 2> a) : data_(std::move(a)) {}

  template <class... Slots, std::size_t... P>
  static constexpr void check_slot_dims(std::index_sequence<P...>) {
    [[maybe_unused]] constexpr int d[] = {Dims..., 0};
    (check_slot_dim<Slots, d[P]>(), ...);
  }
  template <class Slot, int SlotDim>
  static constexpr void check_slot_dim() {
    using T = detail::SlotTraits<Slot>;
    if constexpr (T::label >= 0 && !T::shifted)
      static_assert(T::dim == SlotDim,
                    "tensor: index dimension mismatch: a dimension-3 index (i_ .. p_) needs a dimension-3 slot and "
                    "a dimension-4 index (a_ .. f_) a dimension-4 slot (use i_ + 1 for the spatial part of a "
                    "spacetime slot)");
    if constexpr (T::label >= 0 && T::shifted)
      static_assert(T::dim <= SlotDim,
                    "tensor: index dimension mismatch: a shifted index runs past the dimension of its slot");
  }
  template <class... Slots>
  void check_ranges(const int* off) const {
    constexpr detail::SlotInfo SI = detail::make_slot_info<Slots...>();
    constexpr int d[] = {Dims..., 0};
    for (int p = 0; p < rank; ++p) {
      if (SI.label[p] < 0)
        TESSERA_REQUIRE(off[p] >= 0 && off[p] < d[p], "tensor: fixed index ", off[p], " at position ", p,
                        " of '", label(), "' is outside 0..", d[p] - 1);
      else
        TESSERA_REQUIRE(off[p] >= 0 && off[p] + SI.dim[p] <= d[p], "tensor: index ", label_char(SI.label[p]),
                        "_ + ", off[p], " at position ", p, " of '", label(), "' runs past its dimension ", d[p]);
    }
  }

  Array<double, 2> data_;
};

/// A grid scalar (rank 0).
using Scalar = Field<NoSym>;
/// A vector of dimension D.
template <int D>
using Vector = Field<NoSym, D>;

/// A partially indexed Field, completed by a second call: `dg(j_, l_)(k_)`.
template <class F, class Marker, class... Slots>
struct Partial {
  const F* field;
  std::tuple<Slots...> slots;
  template <class... More>
    requires(sizeof...(Slots) + sizeof...(More) == F::rank && (detail::SlotTraits<More>::valid && ...))
  auto operator()(More... more) const {
    return std::apply([&](auto... s) { return field->template make_ref<Marker>(s..., more...); }, slots);
  }
};

}  // namespace tessera::tensor
