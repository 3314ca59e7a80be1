// tessera bench vtable: seed 003's Y += a X experiment on polymorphism. Y and X are m x n
// row-major matrices; row i is done by one of N classes, all deriving from one interface with
// a virtual apply() and all doing the same work. Four ways to call them are timed against
// each other: a typed kernel, device virtual calls, a switch over the class id and the
// polymorphic driver (a host virtual call per class, each launching one typed kernel).
// Compiled by nvcc in CUDA builds: the classes' methods are __host__ __device__ and the
// objects are constructed on the device, so their vtables point to device code.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <memory>
#include <new>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "bench_util.hpp"
#include "tessera/core.hpp"

namespace tessera::bench {
namespace {

using Matrix = View<double, 2>;
using CMatrix = View<const double, 2>;

/// Number of distinct classes compiled in (the largest N).
constexpr int kMaxClasses = 32;
/// Bytes reserved per object in the object buffer.
constexpr std::size_t kSlot = 64;

/// The interface every class implements: row `row` of y += a x.
struct RowKernel {
  TESSERA_HOST_DEVICE virtual void apply(index_t row, Matrix y, CMatrix x, double a) const = 0;

 protected:
  /// Objects are destroyed through their concrete type (see destroy_objects).
  ~RowKernel() = default;
};

/// Class number `Idx`: the same work in every class, a distinct type and vtable each.
template <int Idx>
struct Impl final : RowKernel {
  TESSERA_HOST_DEVICE void apply(index_t row, Matrix y, CMatrix x, double a) const override {
    const index_t n = y.extent(1);
    for (index_t j = 0; j < n; ++j) y(row, j) += a * x(row, j);
  }
};

template <class T>
TESSERA_INLINE void destroy(const T* p) {
  p->~T();
}

/// Constructs objects 0..count-1 (object k of class Impl<k>) in `buf` and stores their
/// addresses, as base pointers, in `table`. Runs where the objects will be used.
template <int... I>
TESSERA_INLINE void construct_objects(unsigned char* buf, const RowKernel** table, int count,
                                      std::integer_sequence<int, I...>) {
  ((I < count ? (void)(table[I] = ::new (static_cast<void*>(buf + I * kSlot)) Impl<I>()) : (void)0), ...);
}

/// Destroys the objects made by construct_objects, each through its concrete type.
template <int... I>
TESSERA_INLINE void destroy_objects(const RowKernel* const* table, int count, std::integer_sequence<int, I...>) {
  ((I < count ? destroy(static_cast<const Impl<I>*>(table[I])) : (void)0), ...);
}

using AllClasses = std::make_integer_sequence<int, kMaxClasses>;

/// Builds objects 0..count-1 in `buf` with a one-thread kernel on exec's backend.
void build_objects(const Exec& exec, unsigned char* buf, const RowKernel** table, int count) {
  forall("bench/vtable_construct", exec, 1,
         TESSERA_LAMBDA(index_t) { construct_objects(buf, table, count, AllClasses{}); });
}

/// Destroys them with a one-thread kernel on exec's backend.
void tear_down_objects(const Exec& exec, const RowKernel* const* table, int count) {
  forall("bench/vtable_destroy", exec, 1, TESSERA_LAMBDA(index_t) { destroy_objects(table, count, AllClasses{}); });
}

/// A table of N objects of N classes, built and destroyed by kernels on exec's backend (on
/// the GPU their vtable pointers point to device code).
class ObjectTable {
 public:
  ObjectTable(const Exec& exec, int count)
      : exec_(exec),
        count_(count),
        buf_("bench/vtable_objects", {static_cast<index_t>(kMaxClasses * kSlot / sizeof(double))}, exec.space()),
        table_("bench/vtable_table", {kMaxClasses}, exec.space()) {
    build_objects(exec_, reinterpret_cast<unsigned char*>(buf_.data()), table_.data(), count_);
  }
  ~ObjectTable() {
    try {
      tear_down_objects(exec_, table_.data(), count_);
    } catch (...) {  // a destructor must not throw; a failed launch is reported by the next one
    }
  }
  ObjectTable(const ObjectTable&) = delete;
  ObjectTable& operator=(const ObjectTable&) = delete;

  const RowKernel* const* data() const { return table_.data(); }

 private:
  Exec exec_;
  int count_;
  Array<double> buf_;
  Array<const RowKernel*> table_;
};

/// Calls f(Impl<id>{}) with a `switch` over cases 0..Cases-1 (a larger id does nothing).
#define TESSERA_VT_CASE(k) \
  case k:                  \
    if constexpr (k < Cases) f(Impl<k>{}); \
    break;
template <int Cases, class F>
TESSERA_INLINE void with_class(int id, const F& f) {
  switch (id) {
    TESSERA_VT_CASE(0) TESSERA_VT_CASE(1) TESSERA_VT_CASE(2) TESSERA_VT_CASE(3)
    TESSERA_VT_CASE(4) TESSERA_VT_CASE(5) TESSERA_VT_CASE(6) TESSERA_VT_CASE(7)
    TESSERA_VT_CASE(8) TESSERA_VT_CASE(9) TESSERA_VT_CASE(10) TESSERA_VT_CASE(11)
    TESSERA_VT_CASE(12) TESSERA_VT_CASE(13) TESSERA_VT_CASE(14) TESSERA_VT_CASE(15)
    TESSERA_VT_CASE(16) TESSERA_VT_CASE(17) TESSERA_VT_CASE(18) TESSERA_VT_CASE(19)
    TESSERA_VT_CASE(20) TESSERA_VT_CASE(21) TESSERA_VT_CASE(22) TESSERA_VT_CASE(23)
    TESSERA_VT_CASE(24) TESSERA_VT_CASE(25) TESSERA_VT_CASE(26) TESSERA_VT_CASE(27)
    TESSERA_VT_CASE(28) TESSERA_VT_CASE(29) TESSERA_VT_CASE(30) TESSERA_VT_CASE(31)
    default:
      break;
  }
}
#undef TESSERA_VT_CASE

/// The switch variant with `Cases` cases: row i calls the concrete class ids(i).
template <int Cases>
void run_switch(const Exec& exec, Matrix y, CMatrix x, double a, const int* ids) {
  forall("bench/vtable_switch", exec, y.extent(0), TESSERA_LAMBDA(index_t i) {
    with_class<Cases>(ids[i], [&](const auto& k) { k.apply(i, y, x, a); });
  });
}

/// The switch over N cases, N rounded up to a power of two (1, 2, 4, ..., 32).
void run_switch_n(int n_classes, const Exec& exec, Matrix y, CMatrix x, double a, const int* ids) {
  if (n_classes <= 1) return run_switch<1>(exec, y, x, a, ids);
  if (n_classes <= 2) return run_switch<2>(exec, y, x, a, ids);
  if (n_classes <= 4) return run_switch<4>(exec, y, x, a, ids);
  if (n_classes <= 8) return run_switch<8>(exec, y, x, a, ids);
  if (n_classes <= 16) return run_switch<16>(exec, y, x, a, ids);
  return run_switch<32>(exec, y, x, a, ids);
}

// ---- the polymorphic driver: a host virtual call per group, one typed launch each ----

/// A parallel region: its launch policy and functor, executed by a host virtual call.
struct Node {
  virtual ~Node() = default;
  virtual void execute() const = 0;
};

/// Launch policy of a node: the backend and the range of (grouped) rows it covers.
struct RowRange {
  Exec exec;
  index_t begin = 0, end = 0;
};

/// Typed functor: row begin + i of the grouped matrices, done by class K.
template <class K>
struct RowsFunctor {
  Matrix y;
  CMatrix x;
  double a;
  index_t begin;
  TESSERA_HOST_DEVICE void operator()(index_t i) const { K{}.apply(begin + i, y, x, a); }
};

template <class K>
struct TypedNode final : Node {
  TypedNode(RowRange p, RowsFunctor<K> f) : policy(p), functor(f) {}
  void execute() const override {
    forall("bench/vtable_driver", policy.exec, policy.end - policy.begin, functor);
  }
  RowRange policy;
  RowsFunctor<K> functor;
};

template <int... I>
std::unique_ptr<Node> make_node_of(int cls, RowRange policy, Matrix y, CMatrix x, double a,
                                   std::integer_sequence<int, I...>) {
  std::unique_ptr<Node> node;
  ((cls == I ? (void)(node = std::make_unique<TypedNode<Impl<I>>>(
                          policy, RowsFunctor<Impl<I>>{y, x, a, policy.begin})) : (void)0), ...);
  return node;
}

// ---- data, reset and check ----

/// Fills v with multiples of 2^-10 in [-1, 1) from a hash of (seed, index), so that every
/// Y0 + k a X (a = 1/2) is exact and results compare bit for bit.
void fill_exact(const Exec& exec, Matrix v, std::uint64_t seed) {
  const index_t n = v.extent(1);
  forall("bench/vtable_fill", exec, Bounds<2>{v.extent(0), n}, TESSERA_LAMBDA(int r, int j) {
    std::uint64_t z = seed + (static_cast<std::uint64_t>(r) * n + j + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v(r, j) = (static_cast<double>(z >> 53) - 1024.0) / 1024.0;
  });
}

/// dst(r, :) = src(map[r], :).
void gather_rows(const Exec& exec, Matrix dst, CMatrix src, const index_t* map) {
  forall("bench/vtable_gather", exec, Bounds<2>{dst.extent(0), dst.extent(1)},
         TESSERA_LAMBDA(int r, int j) { dst(r, j) = src(map[r], j); });
}

/// Entries of y that differ from y0 + ka x (rows of y0, x taken through map).
index_t count_mismatches(const Exec& exec, CMatrix y, CMatrix y0, CMatrix x, const index_t* map, double ka) {
  const index_t n = y.extent(1);
  return transform_reduce(
      "bench/vtable_check", exec, y.size(), index_t(0),
      TESSERA_LAMBDA(index_t f)->index_t {
        const index_t r = f / n, j = f - r * n, s = map[r];
        return y(r, j) == y0(s, j) + ka * x(s, j) ? 0 : 1;
      },
      Plus{});
}

struct Combo {
  int classes, divergence;
};

struct Result {
  Combo c;
  index_t cols;
  double copy_gbs;  // copy reference at this footprint
  double us[4];
  int launches;  // of the driver
};

constexpr const char* kVariants[4] = {"typed", "virtual", "switch", "driver"};

std::string fmt(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

}  // namespace

int run_vtable(const VtableOptions& opt, std::ostream& out) {
  const Exec exec = Exec::parse(opt.backend);
  const bool gpu = exec.on_device();
  const Space sp = exec.space();
  const index_t m = opt.rows > 0 ? opt.rows : (gpu ? index_t(1) << 17 : index_t(1) << 14);
  const int reps = opt.reps > 0 ? opt.reps : (gpu ? 10 : 5);
  TESSERA_REQUIRE(m <= 0x7fffffff, "bench vtable: --rows ", m, " is too large (at most 2^31-1)");

  std::vector<int> cols_list;
  if (opt.cols.empty()) {
    for (int n = 16; n <= (gpu ? 4096 : 1024); n *= 2) cols_list.push_back(n);
  } else {
    cols_list = split_ints(opt.cols, "--cols");
  }
  TESSERA_REQUIRE(!cols_list.empty(), "bench vtable: --cols '", opt.cols, "' names no column count");
  for (int n : cols_list)
    TESSERA_REQUIRE(n >= 1, "bench vtable: --cols: every column count must be >= 1 (got ", n, ")");

  std::vector<int> ns = split_ints(opt.classes, "--classes"), ds = split_ints(opt.divergence, "--divergence");
  TESSERA_REQUIRE(!ns.empty(), "bench vtable: --classes '", opt.classes, "' names no class count");
  TESSERA_REQUIRE(!ds.empty(), "bench vtable: --divergence '", opt.divergence, "' names no divergence level");
  for (int n : ns)
    TESSERA_REQUIRE(n >= 1 && n <= kMaxClasses, "bench vtable: --classes: ", n, " is outside 1..", kMaxClasses,
                    " (the number of classes compiled in)");
  for (int d : ds) TESSERA_REQUIRE(d >= 1, "bench vtable: --divergence: ", d, " must be >= 1");
  std::sort(ns.begin(), ns.end());
  ns.erase(std::unique(ns.begin(), ns.end()), ns.end());
  std::sort(ds.begin(), ds.end());
  ds.erase(std::unique(ds.begin(), ds.end()), ds.end());

  // The seed's two sweeps: every N at the smallest D, then every D <= max N at max N.
  std::vector<Combo> combos;
  std::vector<int> skipped;
  for (int n : ns)
    if (n >= ds.front()) combos.push_back({n, ds.front()});
  for (int d : ds) {
    if (d > ns.back()) {
      skipped.push_back(d);
      continue;
    }
    if (d != ds.front()) combos.push_back({ns.back(), d});
  }
  TESSERA_REQUIRE(!combos.empty(), "bench vtable: no divergence level D <= number of classes N; D = ", ds.front(),
                  " needs at least ", ds.front(), " classes (--classes)");

  std::string copy_label;

  const double a = 0.5;
  const double ka = (reps + 2) * a;  // time_median runs fn reps + 2 times
  std::vector<Result> results;

  for (int n : cols_list) {
    Array<double, 2> X("bench/vtable_X", {m, n}, sp), Y0("bench/vtable_Y0", {m, n}, sp),
        Y("bench/vtable_Y", {m, n}, sp), Xg("bench/vtable_X_grouped", {m, n}, sp);
    fill_exact(exec, X.view(), 1);
    fill_exact(exec, Y0.view(), 2);
    // The copy reference of this footprint (one m x n matrix), so that cache effects match.
    const double copy_gbs = copy_bandwidth_gbs(exec, m * n, reps, &copy_label);
    if (const auto at = copy_label.find(" (reference)"); at != std::string::npos) copy_label.erase(at);
    std::vector<index_t> iota(static_cast<std::size_t>(m));
    for (index_t i = 0; i < m; ++i) iota[i] = i;
    const auto ident = Array<index_t>::from("bench/vtable_rows", std::span<const index_t>(iota), sp);

    for (const Combo& c : combos) {
      const index_t D = c.divergence;
      Result res{c, n, copy_gbs, {0, 0, 0, 0}, 0};

      // Row i is done by object i % D, which is of class i % D.
      std::vector<int> ids_h(static_cast<std::size_t>(m));
      for (index_t i = 0; i < m; ++i) ids_h[i] = static_cast<int>(i % D);
      const auto ids = Array<int>::from("bench/vtable_ids", std::span<const int>(ids_h), sp);

      // The driver's grouping (outside the timing): a copy of X and Y whose rows are sorted
      // by class, each class's rows contiguous; `perm` maps a grouped row to its row.
      std::vector<index_t> perm_h;
      perm_h.reserve(static_cast<std::size_t>(m));
      std::vector<std::pair<index_t, index_t>> groups;  // (class, first grouped row)
      for (index_t k = 0; k < std::min(D, m); ++k) {
        groups.push_back({k, static_cast<index_t>(perm_h.size())});
        for (index_t i = k; i < m; i += D) perm_h.push_back(i);
      }
      const auto perm = Array<index_t>::from("bench/vtable_perm", std::span<const index_t>(perm_h), sp);
      gather_rows(exec, Xg.view(), X.cview(), perm.data());

      // Y must be Y0 + k a X after the k runs (rows through `map` for the grouped copy).
      const auto check = [&](int variant, const Array<index_t>& map) {
        const index_t bad = count_mismatches(exec, Y.cview(), Y0.cview(), X.cview(), map.data(), ka);
        if (bad == 0) return;
        const auto y = Y.to_vector(), y0 = Y0.to_vector(), x = X.to_vector();
        const auto mp = map.to_vector();
        for (index_t f = 0; f < m * n; ++f) {
          const index_t r = f / n, j = f % n, s = mp[r];
          const double want = y0[s * n + j] + ka * x[s * n + j];
          if (y[f] != want)
            TESSERA_REQUIRE(false, "bench vtable: variant '", kVariants[variant], "' (N = ", c.classes, ", D = ", D,
                            ", n = ", n, ", backend ", to_string(exec.backend), ") gives a wrong Y: ", bad, " of ",
                            m * n, " entries differ from Y0 + k a X (k = ", reps + 2, ", a = ", a, "); first at row ",
                            s, ", column ", j, ": ", y[f], " instead of ", want);
        }
        TESSERA_REQUIRE(false, "bench vtable: variant '", kVariants[variant], "': the device check found ", bad,
                        " wrong entries but the host copy agrees with Y0 + k a X");
      };

      auto yv = Y.view();
      auto xv = X.cview();
      const double av = a;

      // 1. typed: the concrete class called directly.
      gather_rows(exec, Y.view(), Y0.cview(), ident.data());
      res.us[0] = 1e3 * time_median(exec, reps, [&] {
                    forall("bench/vtable_typed", exec, m,
                           TESSERA_LAMBDA(index_t i) { Impl<0>{}.apply(i, yv, xv, av); });
                  });
      check(0, ident);

      // 2. virtual: objects built where they are used, called through the base pointer.
      {
        ObjectTable objects(exec, c.classes);
        const RowKernel* const* table = objects.data();
        gather_rows(exec, Y.view(), Y0.cview(), ident.data());
        res.us[1] = 1e3 * time_median(exec, reps, [&] {
                      forall("bench/vtable_virtual", exec, m,
                             TESSERA_LAMBDA(index_t i) { table[i % D]->apply(i, yv, xv, av); });
                    });
        check(1, ident);
      }

      // 3. switch: a class id per row, a switch over the N concrete types.
      gather_rows(exec, Y.view(), Y0.cview(), ident.data());
      res.us[2] = 1e3 * time_median(exec, reps, [&] { run_switch_n(c.classes, exec, yv, xv, av, ids.data()); });
      check(2, ident);

      // 4. driver: one node per class present, each launching its typed kernel on its rows.
      {
        std::vector<std::unique_ptr<Node>> nodes;
        for (std::size_t g = 0; g < groups.size(); ++g) {
          const index_t begin = groups[g].second;
          const index_t end = g + 1 < groups.size() ? groups[g + 1].second : m;
          nodes.push_back(make_node_of(static_cast<int>(groups[g].first), RowRange{exec, begin, end}, Y.view(),
                                       Xg.cview(), a, AllClasses{}));
        }
        res.launches = static_cast<int>(nodes.size());
        gather_rows(exec, Y.view(), Y0.cview(), perm.data());
        res.us[3] = 1e3 * time_median(exec, reps, [&] {
                      for (const auto& node : nodes) node->execute();
                    });
        check(3, perm);
      }
      results.push_back(res);
    }
  }

  // Report: grouped by (N, D), rows by n.
  out << "## tessera bench vtable — backend " << to_string(exec.backend) << ", " << describe(exec) << "\n\n";
  out << "Y += a X on " << m << " x n doubles (row-major); row i is done by object i % D of a table of N objects of N "
         "classes (the same work in each). Median of "
      << reps << " runs after 2 warm-ups; 24 bytes per entry (read x, read and write y); copy reference: "
      << copy_label << " of one m x n matrix. Every result checked against Y0 + k a X.\n\n";
  out << "typed: the concrete class called directly; virtual: objects constructed "
      << (gpu ? "on the device" : "on the host") << ", `table[i % D]->apply(...)`; switch: a class id per row and a "
      << "switch over the N cases; driver: rows grouped by class in a permuted copy of X and Y, one typed launch per "
         "class through a host virtual call (D launches). Times in µs (ratio to typed), GB/s (% of copy).\n\n";
  out << "| N | D | n | MB | copy GB/s | typed µs | virtual µs | switch µs | driver µs | typed GB/s | virtual GB/s | switch GB/s "
         "| driver GB/s |\n";
  out << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  JsonLines js(opt.json);
  const nlohmann::json meta{{"bench", "vtable"},
                            {"backend", to_string(exec.backend)},
                            {"device", gpu ? current_device().name : std::string("cpu")},
                            {"rows", m},
                            {"reps", reps},
                            {"date", today()}};
  for (const Combo& c : combos) {
    for (const Result& r : results) {
      if (r.c.classes != c.classes || r.c.divergence != c.divergence) continue;
      const double bytes = 24.0 * static_cast<double>(m) * static_cast<double>(r.cols);
      out << "| " << c.classes << " | " << c.divergence << " | " << r.cols << " | " << fmt(bytes / 1e6, 1) << " | "
          << fmt(r.copy_gbs, 1);
      for (int v = 0; v < 4; ++v) {
        out << " | " << fmt(r.us[v], 1);
        if (v > 0) out << " (" << fmt(r.us[v] / r.us[0], 2) << "x)";
      }
      for (int v = 0; v < 4; ++v) {
        const double gbs = bytes / r.us[v] / 1e3;
        out << " | " << fmt(gbs, 1) << " (" << with_percent(percent_of(gbs, r.copy_gbs)) << ")";
        auto j = meta;
        j.update({{"classes", c.classes},
                  {"divergence", c.divergence},
                  {"cols", r.cols},
                  {"variant", kVariants[v]},
                  {"median_us", r.us[v]},
                  {"ratio_to_typed", r.us[v] / r.us[0]},
                  {"bytes", bytes},
                  {"gbs", gbs},
                  {"fraction_of_copy", gbs / r.copy_gbs},
                  {"copy_gbs", r.copy_gbs},
                  {"launches", v == 3 ? r.launches : 1},
                  {"check", "ok"}});
        js.write(j);
      }
      out << " |\n";
    }
  }
  if (!skipped.empty()) {
    out << "\nSkipped divergence levels larger than the largest N (" << ns.back() << "):";
    for (int d : skipped) out << " " << d;
    out << ".\n";
  }
  return 0;
}

}  // namespace tessera::bench
