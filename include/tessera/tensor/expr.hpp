#pragma once
/// \file tensor/expr.hpp
/// Expression templates of tensor statements: indexed tensors (Ref), constants, + - * /,
/// unary minus, unary functions, pow and Sum. Every node is a small trivially copyable
/// struct holding raw pointers and ints only, so a whole statement is a device-copyable
/// functor; nodes carry their free indices as a compile-time bit mask.
///
///     K(i_, j_) = 2.0 * alpha * g(i_, j_) + beta(i_) * beta(j_);
///     Gamma(Sym<1,2>(), i_, j_, k_) =
///         0.5 * Sum(l_, Invg(i_, l_) * (dg(j_, l_)(k_) + dg(l_, k_)(j_) - dg(j_, k_)(l_)));

#include <cmath>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/core/exec.hpp"
#include "tessera/core/macros.hpp"
#include "tessera/tensor/index.hpp"
#include "tessera/tensor/layout.hpp"

namespace tessera::tensor {

template <class S, int... Dims>
class Field;

/// Values of the index letters while a statement is evaluated.
struct Env {
  int v[kNumLabels];
};

namespace detail {

/// Host-side description of one tensor operand (run-time checks, emitted source, byte counts).
struct OperandInfo {
  const double* data = nullptr;
  index_t n = 0;
  Space space = Space::Host;
  const char* label = "";
  int components = 0;
  bool allocated = false;
};

/// Set of (operand, stored component) pairs that a statement touches.
using TouchSet = std::set<std::pair<const double*, int>>;

/// Per-slot compile-time data of an indexed tensor.
struct SlotInfo {
  int label[4] = {-1, -1, -1, -1};
  int dim[4] = {0, 0, 0, 0};
  bool shifted[4] = {false, false, false, false};
  unsigned free = 0;
  bool repeated = false;  // an index letter appears twice
};

template <class... Slots>
constexpr SlotInfo make_slot_info() {
  SlotInfo s;
  int p = 0;
  ((s.label[p] = SlotTraits<Slots>::label, s.dim[p] = SlotTraits<Slots>::dim,
    s.shifted[p] = SlotTraits<Slots>::shifted, ++p),
   ...);
  for (int q = 0; q < p; ++q) {
    if (s.label[q] < 0) continue;
    if (s.free & (1u << s.label[q])) s.repeated = true;
    s.free |= 1u << s.label[q];
  }
  return s;
}

}  // namespace detail

/// Base of every expression node.
struct ExprTag {};

template <class T>
inline constexpr bool is_expr_v = std::is_base_of_v<ExprTag, std::remove_cvref_t<T>>;

template <class T>
inline constexpr bool is_scalar_field_v = false;
template <class S>
inline constexpr bool is_scalar_field_v<Field<S>> = true;

/// Operands of the arithmetic operators: expressions, rank-0 Fields (grid scalars),
/// and arithmetic values (constants).
template <class T>
concept ExprLike = is_expr_v<T> || is_scalar_field_v<std::remove_cvref_t<T>>;
template <class T>
concept Operand = ExprLike<T> || std::is_arithmetic_v<std::remove_cvref_t<T>>;

// ---------------------------------------------------------------- bound expressions
// On the CPU a statement binds its expression once per (component, chunk): every leaf
// becomes the pointer to its component and every Sum an array of bound terms, so that
// the inner loop over the grid is a plain vectorizable loop over pointers.
struct BoundConst {
  double v;
  TESSERA_HOST_DEVICE double operator()(index_t) const { return v; }
};
struct BoundLeaf {
  const double* p;
  TESSERA_HOST_DEVICE double operator()(index_t x) const { return p[x]; }
};
template <class Op, class A, class B>
struct BoundBinary {
  A a;
  B b;
  TESSERA_HOST_DEVICE double operator()(index_t x) const { return Op::apply(a(x), b(x)); }
};
template <class A>
struct BoundNeg {
  A a;
  TESSERA_HOST_DEVICE double operator()(index_t x) const { return -a(x); }
};
template <class Fn, class A>
struct BoundFunc {
  A a;
  TESSERA_HOST_DEVICE double operator()(index_t x) const { return Fn::apply(a(x)); }
};
template <class A, class B>
struct BoundPow {
  A a;
  B b;
  TESSERA_HOST_DEVICE double operator()(index_t x) const { return ::pow(a(x), b(x)); }
};
template <class A, int D>
struct BoundSum {
  A t[D];
  template <int... T>
  TESSERA_HOST_DEVICE double sum(index_t x, std::integer_sequence<int, T...>) const {
    return (... + t[T](x));
  }
  TESSERA_HOST_DEVICE double operator()(index_t x) const { return sum(x, std::make_integer_sequence<int, D>{}); }
};

// ---------------------------------------------------------------- leaves
/// A constant (a double in the expression).
struct Const : ExprTag {
  static constexpr unsigned free = 0;
  static constexpr int flops = 0;
  static constexpr bool marked = false;
  double value = 0;
  TESSERA_HOST_DEVICE double eval(const Env&, index_t) const { return value; }
  TESSERA_HOST_DEVICE BoundConst bind(const Env&) const { return {value}; }
  void collect(std::vector<detail::OperandInfo>&) const {}
  void touch(const Env&, detail::TouchSet&) const {}
  template <class P>
  std::string print(P& p) const {
    return p.constant(value);
  }
};

/// An indexed tensor: `g(i_, j_)`, `psi(i_ + 1, 0)`, `alpha()`. Marker is a Syms<...>
/// set when the seed's symmetry marker was given (allowed on the left-hand side only).
template <class F, class Marker, class... Slots>
struct Ref : ExprTag {
  using field_type = F;
  using marker = Marker;
  using layout = typename F::layout;
  static constexpr int R = static_cast<int>(sizeof...(Slots));
  static constexpr detail::SlotInfo slots = detail::make_slot_info<Slots...>();
  static constexpr unsigned free = slots.free;
  static constexpr bool marked = !std::is_same_v<Marker, NoSym>;
  static constexpr int flops = 0;

  double* data = nullptr;
  index_t n = 0;
  int off[4] = {0, 0, 0, 0};  ///< fixed value, or offset of a symbolic index
  Space space = Space::Host;
  const char* label = "";
  bool allocated = false;

  /// Stored component addressed by the current index values.
  TESSERA_HOST_DEVICE int component(const Env& e) const {
    constexpr detail::SlotInfo S = detail::make_slot_info<Slots...>();
    int v[4] = {0, 0, 0, 0};
    for (int p = 0; p < R; ++p) v[p] = (S.label[p] >= 0 ? e.v[S.label[p]] : 0) + off[p];
    return layout::component(v);
  }
  TESSERA_HOST_DEVICE double eval(const Env& e, index_t x) const {
    return data[static_cast<index_t>(component(e)) * n + x];
  }
  TESSERA_HOST_DEVICE BoundLeaf bind(const Env& e) const { return {data + static_cast<index_t>(component(e)) * n}; }

  // Assignment: runs the statement (defined in statement.hpp).
  template <class E>
    requires Operand<E>
  void operator=(const E& rhs) const;
  void operator=(const Ref& rhs) const;
  template <class E>
    requires Operand<E>
  void operator+=(const E& rhs) const;
  template <class E>
    requires Operand<E>
  void operator-=(const E& rhs) const;
  template <class E>
    requires Operand<E>
  void operator*=(const E& rhs) const;
  template <class E>
    requires Operand<E>
  void operator/=(const E& rhs) const;

  Ref() = default;
  Ref(const Ref&) = default;

  detail::OperandInfo info() const { return {data, n, space, label, layout::components, allocated}; }
  void collect(std::vector<detail::OperandInfo>& out) const { out.push_back(info()); }
  void touch(const Env& e, detail::TouchSet& s) const { s.insert({data, component(e)}); }
  template <class P>
  std::string print(P& p) const {
    return p.leaf(*this);
  }
};

namespace detail {
template <class T>
struct ExprOf {
  using type = T;
};
template <class S>
struct ExprOf<Field<S>> {
  using type = Ref<Field<S>, NoSym>;
};
}  // namespace detail

/// Expression type of an operand (double -> Const, grid scalar -> Ref).
template <class T>
using expr_t = typename detail::ExprOf<std::conditional_t<std::is_arithmetic_v<std::remove_cvref_t<T>>, Const,
                                                          std::remove_cvref_t<T>>>::type;

template <class T>
expr_t<T> to_expr(const T& t) {
  if constexpr (std::is_arithmetic_v<T>) {
    Const c;
    c.value = static_cast<double>(t);
    return c;
  } else if constexpr (is_scalar_field_v<T>) {
    return t();
  } else {
    return t;
  }
}

// ---------------------------------------------------------------- operations
struct AddOp {
  static constexpr const char* sym = " + ";
  TESSERA_HOST_DEVICE static double apply(double a, double b) { return a + b; }
};
struct SubOp {
  static constexpr const char* sym = " - ";
  TESSERA_HOST_DEVICE static double apply(double a, double b) { return a - b; }
};
struct MulOp {
  static constexpr const char* sym = "*";
  TESSERA_HOST_DEVICE static double apply(double a, double b) { return a * b; }
};
struct DivOp {
  static constexpr const char* sym = "/";
  TESSERA_HOST_DEVICE static double apply(double a, double b) { return a / b; }
};

template <class Op, class A, class B>
struct Binary : ExprTag {
  // + and - require equal free indices (checked by the operators); keeping A's avoids a
  // second, confusing error at the assignment after a mismatch.
  static constexpr unsigned free =
      std::is_same_v<Op, AddOp> || std::is_same_v<Op, SubOp> ? A::free : (A::free | B::free);
  static constexpr bool marked = false;
  static constexpr int flops = A::flops + B::flops + 1;
  A a;
  B b;
  TESSERA_HOST_DEVICE double eval(const Env& e, index_t x) const { return Op::apply(a.eval(e, x), b.eval(e, x)); }
  TESSERA_HOST_DEVICE auto bind(const Env& e) const {
    return BoundBinary<Op, decltype(a.bind(e)), decltype(b.bind(e))>{a.bind(e), b.bind(e)};
  }
  void collect(std::vector<detail::OperandInfo>& out) const {
    a.collect(out);
    b.collect(out);
  }
  void touch(const Env& e, detail::TouchSet& s) const {
    a.touch(e, s);
    b.touch(e, s);
  }
  template <class P>
  std::string print(P& p) const {
    return "(" + a.print(p) + Op::sym + b.print(p) + ")";
  }
};

template <class A>
struct Neg : ExprTag {
  static constexpr unsigned free = A::free;
  static constexpr bool marked = false;
  static constexpr int flops = A::flops + 1;
  A a;
  TESSERA_HOST_DEVICE double eval(const Env& e, index_t x) const { return -a.eval(e, x); }
  TESSERA_HOST_DEVICE auto bind(const Env& e) const { return BoundNeg<decltype(a.bind(e))>{a.bind(e)}; }
  void collect(std::vector<detail::OperandInfo>& out) const { a.collect(out); }
  void touch(const Env& e, detail::TouchSet& s) const { a.touch(e, s); }
  template <class P>
  std::string print(P& p) const {
    return "(-" + a.print(p) + ")";
  }
};

/// A unary function applied component-wise.
template <class Fn, class A>
struct Func : ExprTag {
  static constexpr unsigned free = A::free;
  static constexpr bool marked = false;
  static constexpr int flops = A::flops + 1;  // counted as one operation
  A a;
  TESSERA_HOST_DEVICE double eval(const Env& e, index_t x) const { return Fn::apply(a.eval(e, x)); }
  TESSERA_HOST_DEVICE auto bind(const Env& e) const { return BoundFunc<Fn, decltype(a.bind(e))>{a.bind(e)}; }
  void collect(std::vector<detail::OperandInfo>& out) const { a.collect(out); }
  void touch(const Env& e, detail::TouchSet& s) const { a.touch(e, s); }
  template <class P>
  std::string print(P& p) const {
    return std::string(Fn::name) + "(" + a.print(p) + ")";
  }
};

template <class A, class B>
struct Pow : ExprTag {
  static constexpr unsigned free = A::free | B::free;
  static constexpr bool marked = false;
  static constexpr int flops = A::flops + B::flops + 1;  // counted as one operation
  A a;
  B b;
  TESSERA_HOST_DEVICE double eval(const Env& e, index_t x) const { return ::pow(a.eval(e, x), b.eval(e, x)); }
  TESSERA_HOST_DEVICE auto bind(const Env& e) const {
    return BoundPow<decltype(a.bind(e)), decltype(b.bind(e))>{a.bind(e), b.bind(e)};
  }
  void collect(std::vector<detail::OperandInfo>& out) const {
    a.collect(out);
    b.collect(out);
  }
  void touch(const Env& e, detail::TouchSet& s) const {
    a.touch(e, s);
    b.touch(e, s);
  }
  template <class P>
  std::string print(P& p) const {
    return "pow(" + a.print(p) + ", " + b.print(p) + ")";
  }
};

/// Sum over index L of A: term(0) + term(1) + ... (left to right, fully unrolled).
template <int L, class A>
struct SumNode : ExprTag {
  static constexpr unsigned free = A::free & ~(1u << L);
  static constexpr bool marked = false;
  static constexpr int D = label_dim(L);
  static constexpr int flops = D * A::flops + D - 1;
  A a;
  TESSERA_HOST_DEVICE double term(Env e, int t, index_t x) const {
    e.v[L] = t;
    return a.eval(e, x);
  }
  template <int... T>
  TESSERA_HOST_DEVICE double sum(const Env& e, index_t x, std::integer_sequence<int, T...>) const {
    return (... + term(e, T, x));  // left fold: ((t0 + t1) + t2) + ...
  }
  TESSERA_HOST_DEVICE double eval(const Env& e, index_t x) const {
    return sum(e, x, std::make_integer_sequence<int, D>{});
  }
  TESSERA_HOST_DEVICE auto bind(const Env& e) const {
    BoundSum<decltype(a.bind(e)), D> r;
    Env f = e;
    for (int t = 0; t < D; ++t) {
      f.v[L] = t;
      r.t[t] = a.bind(f);
    }
    return r;
  }
  void collect(std::vector<detail::OperandInfo>& out) const { a.collect(out); }
  void touch(const Env& e, detail::TouchSet& s) const {
    Env f = e;
    for (int t = 0; t < D; ++t) {
      f.v[L] = t;
      a.touch(f, s);
    }
  }
  template <class P>
  std::string print(P& p) const {
    if (!p.unroll_sums()) return std::string("Sum(") + label_char(L) + "_, " + a.print(p) + ")";
    std::string s = "(";
    const std::string saved = p.index_value(L);
    for (int t = 0; t < D; ++t) {
      p.set_index_value(L, std::to_string(t));
      if (t) s += " + ";
      s += a.print(p);
    }
    p.set_index_value(L, saved);
    return s + ")";
  }
};

// ---------------------------------------------------------------- checks
namespace detail {
template <class E>
constexpr void check_rhs_operand() {
  static_assert(!E::marked,
                "tensor: a symmetry marker Sym<...>() is only allowed on the left-hand side of an assignment");
}
}  // namespace detail

// ---------------------------------------------------------------- operators
template <class A, class B>
  requires(Operand<A> && Operand<B> && (ExprLike<A> || ExprLike<B>))
auto operator+(const A& a, const B& b) {
  using EA = expr_t<A>;
  using EB = expr_t<B>;
  detail::check_rhs_operand<EA>();
  detail::check_rhs_operand<EB>();
  static_assert(EA::free == EB::free, "tensor: the free indices of the operands of + differ");
  return Binary<AddOp, EA, EB>{{}, to_expr(a), to_expr(b)};
}

template <class A, class B>
  requires(Operand<A> && Operand<B> && (ExprLike<A> || ExprLike<B>))
auto operator-(const A& a, const B& b) {
  using EA = expr_t<A>;
  using EB = expr_t<B>;
  detail::check_rhs_operand<EA>();
  detail::check_rhs_operand<EB>();
  static_assert(EA::free == EB::free, "tensor: the free indices of the operands of - differ");
  return Binary<SubOp, EA, EB>{{}, to_expr(a), to_expr(b)};
}

/// Product: an outer product where the free indices differ (no implicit summation:
/// a repeated index is a component-wise product; contract with Sum).
template <class A, class B>
  requires(Operand<A> && Operand<B> && (ExprLike<A> || ExprLike<B>))
auto operator*(const A& a, const B& b) {
  using EA = expr_t<A>;
  using EB = expr_t<B>;
  detail::check_rhs_operand<EA>();
  detail::check_rhs_operand<EB>();
  return Binary<MulOp, EA, EB>{{}, to_expr(a), to_expr(b)};
}

template <class A, class B>
  requires(Operand<A> && Operand<B> && (ExprLike<A> || ExprLike<B>))
auto operator/(const A& a, const B& b) {
  using EA = expr_t<A>;
  using EB = expr_t<B>;
  detail::check_rhs_operand<EA>();
  detail::check_rhs_operand<EB>();
  static_assert(EB::free == 0, "tensor: the divisor must be a scalar (an expression without free indices)");
  return Binary<DivOp, EA, EB>{{}, to_expr(a), to_expr(b)};
}

template <class A>
  requires ExprLike<A>
auto operator-(const A& a) {
  using EA = expr_t<A>;
  detail::check_rhs_operand<EA>();
  return Neg<EA>{{}, to_expr(a)};
}

template <class A>
  requires ExprLike<A>
auto operator+(const A& a) {
  return to_expr(a);
}

/// Contraction: `Sum(k_, A(i_, k_) * B(k_))`. Nest Sums for several indices.
template <int L, class A>
  requires ExprLike<A>
auto Sum(Index<L>, const A& a) {
  using EA = expr_t<A>;
  detail::check_rhs_operand<EA>();
  static_assert((EA::free >> L) & 1u, "tensor: Sum(k_, expr): the summed index is not a free index of expr");
  return SumNode<L, EA>{{}, to_expr(a)};
}

template <class A, class B>
  requires(Operand<A> && Operand<B> && (ExprLike<A> || ExprLike<B>))
auto pow(const A& a, const B& b) {
  using EA = expr_t<A>;
  using EB = expr_t<B>;
  detail::check_rhs_operand<EA>();
  detail::check_rhs_operand<EB>();
  static_assert(EB::free == 0, "tensor: the exponent of pow must be a scalar");
  return Pow<EA, EB>{{}, to_expr(a), to_expr(b)};
}

#define TESSERA_TENSOR_UNARY(fname, impl)                                       \
  namespace fn {                                                                \
  struct fname {                                                                \
    static constexpr const char* name = #impl;                                  \
    TESSERA_HOST_DEVICE static double apply(double v) { return ::impl(v); }     \
  };                                                                            \
  }                                                                             \
  template <class A>                                                            \
    requires ExprLike<A>                                                        \
  auto fname(const A& a) {                                                      \
    using EA = expr_t<A>;                                                       \
    detail::check_rhs_operand<EA>();                                            \
    return Func<fn::fname, EA>{{}, to_expr(a)};                                 \
  }

TESSERA_TENSOR_UNARY(sqrt, sqrt)
TESSERA_TENSOR_UNARY(cbrt, cbrt)
TESSERA_TENSOR_UNARY(exp, exp)
TESSERA_TENSOR_UNARY(log, log)
TESSERA_TENSOR_UNARY(sin, sin)
TESSERA_TENSOR_UNARY(cos, cos)
TESSERA_TENSOR_UNARY(tan, tan)
TESSERA_TENSOR_UNARY(asin, asin)
TESSERA_TENSOR_UNARY(acos, acos)
TESSERA_TENSOR_UNARY(atan, atan)
TESSERA_TENSOR_UNARY(sinh, sinh)
TESSERA_TENSOR_UNARY(cosh, cosh)
TESSERA_TENSOR_UNARY(tanh, tanh)
TESSERA_TENSOR_UNARY(abs, fabs)
#undef TESSERA_TENSOR_UNARY

}  // namespace tessera::tensor
