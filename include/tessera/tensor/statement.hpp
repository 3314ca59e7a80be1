#pragma once
/// \file tensor/statement.hpp
/// Execution of tensor statements: each statement is ONE kernel over
/// (left-hand-side independent components) x (grid points).
///
///     tensor::ExecScope on(exec);              // where statements run (default: by the
///                                              // left-hand side's space)
///     A(i_, j_) = B(i_) * C(j_);               // runs now
///     auto s = tensor::defer(A(i_, j_)) = B(i_) * C(j_);   // a Statement, run later
///     s.run(exec);
///
/// CUDA: one launch of (LHS components x N) threads, adjacent threads on adjacent grid
/// points, the components of a tile of grid points in adjacent blocks. CPU: one parallel
/// loop over chunks of grid points; in each, for every LHS component, a contiguous
/// vectorized loop (`omp simd`) over the chunk.

#include <algorithm>
#include <utility>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/core/array.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/core/memory.hpp"
#include "tessera/tensor/expr.hpp"
#include "tessera/tensor/field.hpp"

#if defined(TESSERA_DEVICE_CODE)
#define TESSERA_TENSOR_SIMD
#elif defined(_OPENMP)
#define TESSERA_TENSOR_SIMD _Pragma("omp simd")
#elif defined(__GNUC__) && !defined(__CUDACC__)
#define TESSERA_TENSOR_SIMD _Pragma("GCC ivdep")
#else
#define TESSERA_TENSOR_SIMD
#endif

namespace tessera::tensor {

/// The kind of assignment of a statement.
enum class AssignOp { Set, Add, Sub, Mul, Div };

inline const char* to_string(AssignOp op) {
  switch (op) {
    case AssignOp::Set: return " = ";
    case AssignOp::Add: return " += ";
    case AssignOp::Sub: return " -= ";
    case AssignOp::Mul: return " *= ";
    case AssignOp::Div: return " /= ";
  }
  return " ? ";
}

// ---------------------------------------------------------------- execution context
namespace detail {
inline thread_local const Exec* scoped_exec = nullptr;
}

/// Makes statements of this host thread run on `exec` while the scope lives.
class ExecScope {
 public:
  explicit ExecScope(const Exec& exec) : exec_(exec), prev_(detail::scoped_exec) { detail::scoped_exec = &exec_; }
  ~ExecScope() { detail::scoped_exec = prev_; }
  ExecScope(const ExecScope&) = delete;
  ExecScope& operator=(const ExecScope&) = delete;

 private:
  Exec exec_;
  const Exec* prev_;
};

/// The Exec a statement runs on: the innermost ExecScope, else CUDA for a left-hand
/// side in device memory and OpenMP for one in host memory.
inline Exec current_exec(Space lhs_space) {
  if (detail::scoped_exec) return *detail::scoped_exec;
  return lhs_space == Space::Device ? Exec::cuda() : Exec::openmp();
}

namespace detail {

/// Independent left-hand-side components of a statement: for each, the values of the
/// left-hand side's free indices (2 bits each, first free index lowest).
struct Plan {
  int count = 0;
  unsigned char combo[256] = {};
};

/// Free index letters of a left-hand side, in slot order.
struct LhsLabels {
  int n = 0;
  int label[4] = {-1, -1, -1, -1};
};
template <class L>
constexpr LhsLabels lhs_labels() {
  LhsLabels r;
  for (int p = 0; p < L::R; ++p)
    if (L::slots.label[p] >= 0) r.label[r.n++] = L::slots.label[p];
  return r;
}

template <AssignOp Op>
TESSERA_INLINE void apply(double& out, double v) {
  if constexpr (Op == AssignOp::Set)
    out = v;
  else if constexpr (Op == AssignOp::Add)
    out += v;
  else if constexpr (Op == AssignOp::Sub)
    out -= v;
  else if constexpr (Op == AssignOp::Mul)
    out *= v;
  else
    out /= v;
}

/// The kernel of one statement (trivially copyable pieces only: pointers and ints).
template <class L, AssignOp Op, class E>
struct StatementKernel {
  L lhs;
  E rhs;
  Plan plan;
  index_t n = 0;
  index_t chunk = 0;    // CPU: grid points per work item
  index_t nchunks = 0;  // CPU: work items
  bool gpu_small = true;  // GPU: thread indices fit 32 bits

  /// GPU: per LHS component, the right-hand side with every operand bound to its
  /// component's storage (as the CPU path binds per chunk) and the output pointer, built once
  /// on the host; without it every operand access would rank its component from the index
  /// values at every grid point.
  using Bound = decltype(std::declval<const E&>().bind(std::declval<const Env&>()));
  struct Entry {
    Bound r;
    double* out;
  };
  const Entry* table = nullptr;

  TESSERA_HOST_DEVICE Env env_of(int c) const {
    constexpr LhsLabels LL = lhs_labels<L>();
    Env e{};
    const unsigned bits = plan.combo[c];
    for (int q = 0; q < LL.n; ++q) e.v[LL.label[q]] = static_cast<int>((bits >> (2 * q)) & 3u);
    return e;
  }

  /// CPU: left-hand sides of at most this many stored components are written in one pass
  /// over the chunk with every component in the loop body (as a hand-written loop), larger
  /// ones one pass per component. Measured on the 2-core Xeon of docs/benchmarks/tensor.md:
  /// per-component passes ran Eq. 16 (9 components) and Eq. 21 (6) at 0.6-0.9 of the hand
  /// loop at N >= 10^6, for any chunk size from 16 KiB to 1 MiB; the passes stay best for
  /// the large, compute-heavier left-hand sides (Eq. 6, 18, the contractions: 1.5-4x the
  /// hand loop).
  static constexpr int kPointMajorMax = 9;

  template <int... c>
  void point_major(index_t lo, index_t hi, std::integer_sequence<int, c...>) const {
    const Bound r[] = {rhs.bind(env_of(c))...};
    double* const out[] = {(lhs.data + static_cast<index_t>(lhs.component(env_of(c))) * n)...};
    TESSERA_TENSOR_SIMD
    for (index_t x = lo; x < hi; ++x) (apply<Op>(out[c][x], r[c](x)), ...);
  }

  /// GPU: threads in tiles of kTile consecutive grid points, one point per thread;
  /// consecutive tiles take the LHS components of the same grid points in turn, so that inputs
  /// shared by several components are read from DRAM once and then from L2. (Four points per
  /// thread, each thread loading its table entry once, was slower on the H100: Eq. 6 0.68
  /// against 0.77 of the hand kernel at N = 10^6, Eq. 19 1.27 against 1.93.)
  static constexpr unsigned kTile = 128;
  /// Threads of the GPU launch.
  index_t gpu_threads() const { return static_cast<index_t>(plan.count) * ((n + kTile - 1) / kTile) * kTile; }

  TESSERA_HOST_DEVICE void operator()(index_t i) const {
#if defined(TESSERA_DEVICE_CODE)
    index_t c, x;
    if (gpu_small) {
      const unsigned ui = static_cast<unsigned>(i);
      const unsigned tile = ui / kTile, nc = static_cast<unsigned>(plan.count);
      const unsigned xb = tile / nc;
      c = tile - xb * nc;
      x = static_cast<index_t>(xb) * kTile + (ui % kTile);
    } else {
      const index_t tile = i / kTile, xb = tile / plan.count;
      c = tile - xb * plan.count;
      x = xb * kTile + i % kTile;
    }
    if (x >= n) return;
    const Entry& t = table[c];
    apply<Op>(t.out[x], t.r(x));
#else
    // CPU: one work item per chunk of grid points.
    const index_t lo = i * chunk, hi = lo + chunk < n ? lo + chunk : n;
    constexpr int C = L::layout::components;
    if constexpr (C <= kPointMajorMax) {
      if (plan.count == C) {  // small left-hand sides: one pass, every component per point
        point_major(lo, hi, std::make_integer_sequence<int, C>{});
        return;
      }
    }
    // Else for each LHS component a contiguous, vectorized loop over the chunk (inputs shared
    // by components stay in cache).
    for (int c = 0; c < plan.count; ++c) {
      const Env e = env_of(c);
      const auto r = rhs.bind(e);  // every leaf resolved to its component's pointer
      double* const out = lhs.data + static_cast<index_t>(lhs.component(e)) * n;
      TESSERA_TENSOR_SIMD
      for (index_t x = lo; x < hi; ++x) apply<Op>(out[x], r(x));
    }
#endif
  }
};

/// Text of an expression in the seed's notation (for messages).
struct TextPrinter {
  bool unroll_sums() const { return false; }
  std::string constant(double v) const {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
    return s;
  }
  template <class R>
  std::string leaf(const R& r) const {
    std::string s = std::string(r.label && *r.label ? r.label : "?") + "(";
    for (int p = 0; p < R::R; ++p) {
      if (p) s += ", ";
      const int lab = R::slots.label[p];
      if (lab < 0) {
        s += std::to_string(r.off[p]);
      } else {
        s += label_char(lab);
        s += "_";
        if (r.off[p]) s += "+" + std::to_string(r.off[p]);
      }
    }
    return s + ")";
  }
  std::string index_value(int) const { return {}; }
  void set_index_value(int, const std::string&) {}
};

[[noreturn]] inline void statement_error(const std::string& text, const std::string& what) {
  fail("tensor statement '", text, "': ", what);
}

}  // namespace detail

/// One tensor statement `lhs op rhs`, checked and planned; run() launches its kernel.
/// Holds raw pointers to the Fields' storage: the Fields must outlive the Statement.
template <class L, AssignOp Op, class E>
class Statement {
  static_assert(!L::slots.repeated, "tensor: an index appears twice on the left-hand side of the assignment");
  static_assert(!E::marked,
                "tensor: a symmetry marker Sym<...>() is only allowed on the left-hand side of an assignment");
  static_assert(Op == AssignOp::Mul || Op == AssignOp::Div || E::free == L::free || E::free == 0,
                "tensor: the free indices of the left-hand side and of the right-hand side differ");
  static_assert(!(Op == AssignOp::Mul || Op == AssignOp::Div) || E::free == 0,
                "tensor: *= and /= take a scalar right-hand side (no free indices)");

 public:
  using lhs_type = L;
  using rhs_type = E;
  static constexpr AssignOp op = Op;

  Statement(const L& lhs, const E& rhs) : lhs_(lhs), rhs_(rhs) {
    check_operands();
    check_marker();
    make_plan();
    if (reads_lhs_) check_alias();
  }

  /// Runs the statement on exec (one kernel).
  void run(const Exec& exec) const {
    check_spaces(exec);
    if (plan_.count == 0 || lhs_.n == 0) return;
    detail::StatementKernel<L, Op, E> k = kernel(exec);
    if (exec.backend == Backend::Cuda)
      forall("tensor/statement", exec, k.gpu_threads(), k);
    else
      forall("tensor/statement", exec, k.nchunks, k);
  }
  /// Runs the statement on current_exec().
  void run() const { run(current_exec(lhs_.space)); }

#if defined(__CUDACC__)
  /// Launches the kernel on a CUDA stream (used by Module's graph capture). With a null
  /// stream it only loads the kernel (done before a capture starts: lazy module loading
  /// must not happen inside a capture).
  void launch_on_stream(void* stream, int block_size) const {
    const Exec exec = Exec::cuda();
    check_spaces(exec);
    const auto k = kernel(exec);
    if (stream && (plan_.count == 0 || lhs_.n == 0)) return;
    tessera::detail::cuda_forall_on_stream("tensor/statement", stream, k.gpu_threads(), block_size, k);
  }
#endif

  /// Grid points.
  index_t points() const { return lhs_.n; }
  /// Independent left-hand-side components the kernel writes.
  int lhs_components() const { return plan_.count; }
  /// N_e of the seed's effective bandwidth: stored components read or written per grid
  /// point (each distinct (tensor, component) once; a += -= *= /= left-hand side twice).
  int components_moved() const {
    detail::TouchSet reads;
    for (int c = 0; c < plan_.count; ++c) rhs_.touch(env(c), reads);
    return static_cast<int>(reads.size()) + plan_.count * (Op == AssignOp::Set ? 1 : 2);
  }
  /// Floating-point operations per grid point (functions and pow count as one).
  double flops_per_point() const { return static_cast<double>(plan_.count) * (E::flops + (Op == AssignOp::Set ? 0 : 1)); }
  /// The statement in the seed's notation.
  std::string text() const {
    detail::TextPrinter p;
    return p.leaf(lhs_) + to_string(Op) + rhs_.print(p);
  }
  const L& lhs() const { return lhs_; }
  const E& rhs() const { return rhs_; }
  /// Values of the LHS free indices of independent component c (by letter).
  Env env(int c) const {
    detail::StatementKernel<L, Op, E> k{lhs_, rhs_, plan_};
    return k.env_of(c);
  }

 private:
  detail::StatementKernel<L, Op, E> kernel(const Exec& exec) const {
    detail::StatementKernel<L, Op, E> k{lhs_, rhs_, plan_, lhs_.n, 0, 0};
    if (exec.backend != Backend::Cuda) {
      // Chunks whose working set (all components of all operands) is about 16 KiB, at
      // least 256 points: the inputs that several LHS components share stay in L1 between
      // the components' passes over the chunk (best or equal against 32, 64 and 256 KiB
      // on the 2-core Xeon of docs/benchmarks/tensor.md).
      const index_t per_point = 8 * static_cast<index_t>(std::max(1, ne_));
      k.chunk = std::clamp<index_t>((index_t(16) << 10) / per_point, 256, 8192) / 64 * 64;
      k.nchunks = (lhs_.n + k.chunk - 1) / k.chunk;
    } else {
      k.gpu_small = k.gpu_threads() <= index_t(0xffffffff);
      using Entry = typename detail::StatementKernel<L, Op, E>::Entry;
      if (table_.size() == 0) {  // built at the first GPU run, kept for the next ones
        std::vector<Entry> h(static_cast<std::size_t>(plan_.count));
        for (int c = 0; c < plan_.count; ++c) {
          const Env e = k.env_of(c);
          h[static_cast<std::size_t>(c)] = Entry{rhs_.bind(e), lhs_.data + static_cast<index_t>(lhs_.component(e)) * lhs_.n};
        }
        const std::size_t bytes = h.size() * sizeof(Entry);
        table_ = Array<unsigned char, 1>("tensor/statement_table", {static_cast<index_t>(bytes)}, Space::Device);
        tessera::detail::copy_bytes(table_.data(), Space::Device, h.data(), Space::Host, bytes);
      }
      k.table = reinterpret_cast<const Entry*>(table_.data());
    }
    return k;
  }

  void check_operands() {
    std::vector<detail::OperandInfo> ops;
    ops.push_back(lhs_.info());
    rhs_.collect(ops);
    // Working set per grid point (an upper bound of N_e: every component of every
    // distinct operand), for the CPU chunk size.
    std::vector<const double*> seen;
    for (const auto& o : ops) spaces_ |= 1u << static_cast<int>(o.space);
    for (std::size_t q = 1; q < ops.size(); ++q) reads_lhs_ = reads_lhs_ || ops[q].data == lhs_.data;
    for (const auto& o : ops)
      if (std::find(seen.begin(), seen.end(), o.data) == seen.end()) {
        seen.push_back(o.data);
        ne_ += o.components;
      }
    for (const auto& o : ops) {
      if (!o.allocated) detail::statement_error(text(), std::string("'") + o.label + "' has no storage (an empty Field)");
      if (o.n != lhs_.n)
        detail::statement_error(text(), "grid sizes differ: '" + std::string(lhs_.label) + "' has " +
                                            std::to_string(lhs_.n) + " points, '" + o.label + "' has " +
                                            std::to_string(o.n));
    }
  }

  void check_spaces(const Exec& exec) const {
    // Fast path: every memory space among the operands is reachable from the backend.
    bool ok = true;
    for (int sp = 0; sp < 3; ++sp)
      if ((spaces_ >> sp) & 1u) ok = ok && accessible(exec.backend, static_cast<Space>(sp));
    if (ok) return;
    std::vector<detail::OperandInfo> ops;
    ops.push_back(lhs_.info());
    rhs_.collect(ops);
    for (const auto& o : ops)
      if (!accessible(exec.backend, o.space))
        detail::statement_error(text(), std::string("host/device mismatch: '") + o.label + "' lives in " +
                                            tessera::to_string(o.space) + " memory but the statement runs on the " +
                                            tessera::to_string(exec.backend) +
                                            " backend (move it with to_device()/to_host(), or change the Exec)");
  }

  void check_marker() const {
    if constexpr (L::marked) {
      constexpr auto m = tessera::tensor::detail::make_classes<L::R>(typename L::marker{});
      static_assert(!m.out_of_range, "tensor: a position of the symmetry marker is not smaller than the rank");
      constexpr LayoutInfo info = L::layout::info;
      bool same = true;
      for (int p = 0; p < L::R; ++p) same = same && m.cls[p] == info.cls[p];
      if (!same)
        detail::statement_error(text(), "the symmetry marker on the left-hand side '" + std::string(lhs_.label) +
                                            "' disagrees with the symmetries its storage was declared with");
    }
  }

  /// The right-hand side reads the left-hand side's Field: each (component, point) of the
  /// kernel may read only the component it writes, or components no one writes.
  void check_alias() const {
    std::vector<bool> written(L::layout::components, false);
    for (int c = 0; c < plan_.count; ++c) written[lhs_.component(env(c))] = true;
    for (int c = 0; c < plan_.count; ++c) {
      const Env e = env(c);
      const int mine = lhs_.component(e);
      detail::TouchSet t;
      rhs_.touch(e, t);
      for (const auto& [p, comp] : t)
        if (p == lhs_.data && comp != mine && written[comp])
          detail::statement_error(text(), "the right-hand side reads component " + std::to_string(comp) + " of '" +
                                              std::string(lhs_.label) + "' while computing component " +
                                              std::to_string(mine) +
                                              ", and the statement writes both (a race): read from a copy");
    }
  }

  void make_plan() {
    constexpr detail::LhsLabels LL = detail::lhs_labels<L>();
    int total = 1;
    for (int q = 0; q < LL.n; ++q) total *= label_dim(LL.label[q]);
    std::vector<bool> seen(L::layout::components, false);
    for (int t = 0; t < total; ++t) {
      // first free index slowest (row-major over the LHS's free indices)
      Env e{};
      unsigned bits = 0;
      int rest = t;
      for (int q = LL.n - 1; q >= 0; --q) {
        const int d = label_dim(LL.label[q]);
        e.v[LL.label[q]] = rest % d;
        bits |= static_cast<unsigned>(rest % d) << (2 * q);
        rest /= d;
      }
      const int comp = lhs_.component(e);
      if (seen[comp]) continue;
      seen[comp] = true;
      plan_.combo[plan_.count++] = static_cast<unsigned char>(bits);
    }
  }

  L lhs_;
  E rhs_;
  detail::Plan plan_;
  int ne_ = 0;
  mutable Array<unsigned char, 1> table_;  // GPU: StatementKernel::Entry per LHS component
  unsigned spaces_ = 0;  // bit s: an operand lives in Space s
  bool reads_lhs_ = false;
};

template <AssignOp Op, class L, class R>
auto make_statement(const L& lhs, const R& rhs) {
  return Statement<L, Op, expr_t<R>>(lhs, to_expr(rhs));
}

/// A left-hand side whose assignments build Statements instead of running them.
template <class L>
struct Deferred {
  L lhs;
  template <class E>
    requires Operand<E>
  auto operator=(const E& rhs) const {
    return make_statement<AssignOp::Set>(lhs, rhs);
  }
  template <class E>
    requires Operand<E>
  auto operator+=(const E& rhs) const {
    return make_statement<AssignOp::Add>(lhs, rhs);
  }
  template <class E>
    requires Operand<E>
  auto operator-=(const E& rhs) const {
    return make_statement<AssignOp::Sub>(lhs, rhs);
  }
  template <class E>
    requires Operand<E>
  auto operator*=(const E& rhs) const {
    return make_statement<AssignOp::Mul>(lhs, rhs);
  }
  template <class E>
    requires Operand<E>
  auto operator/=(const E& rhs) const {
    return make_statement<AssignOp::Div>(lhs, rhs);
  }
};

/// `defer(A(i_, j_)) = expr` builds a Statement without running it.
template <class F, class M, class... S>
Deferred<Ref<F, M, S...>> defer(const Ref<F, M, S...>& lhs) {
  return {lhs};
}

// ---------------------------------------------------------------- Ref assignments
template <class F, class M, class... S>
template <class E>
  requires Operand<E>
void Ref<F, M, S...>::operator=(const E& rhs) const {
  make_statement<AssignOp::Set>(*this, rhs).run();
}
template <class F, class M, class... S>
void Ref<F, M, S...>::operator=(const Ref& rhs) const {
  make_statement<AssignOp::Set>(*this, rhs).run();
}
template <class F, class M, class... S>
template <class E>
  requires Operand<E>
void Ref<F, M, S...>::operator+=(const E& rhs) const {
  make_statement<AssignOp::Add>(*this, rhs).run();
}
template <class F, class M, class... S>
template <class E>
  requires Operand<E>
void Ref<F, M, S...>::operator-=(const E& rhs) const {
  make_statement<AssignOp::Sub>(*this, rhs).run();
}
template <class F, class M, class... S>
template <class E>
  requires Operand<E>
void Ref<F, M, S...>::operator*=(const E& rhs) const {
  make_statement<AssignOp::Mul>(*this, rhs).run();
}
template <class F, class M, class... S>
template <class E>
  requires Operand<E>
void Ref<F, M, S...>::operator/=(const E& rhs) const {
  make_statement<AssignOp::Div>(*this, rhs).run();
}

}  // namespace tessera::tensor
