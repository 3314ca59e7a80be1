// Array: labels, zero initialisation, shallow copies and reference counts, copies
// between spaces, fill, resize; and that kernels never touch the reference count.
#include <cstring>
#include <vector>

#include "test_backends.hpp"

using namespace tessera;
using tessera::test::error_message;

namespace array_kernels {

/// Reference-count operations of one launch, and the use count around it.
struct RefcountProbe {
  long ops = -1;
  long use_before = -1, use_after = -1;
};

// Each function below builds its kernel first (capturing the Array by value, which
// counts), then reads the counter around the launch alone. The body copies the Array
// again, as user code may.

RefcountProbe refcount_forall(const Exec& exec, Array<double> a) {
  auto body = TESSERA_LAMBDA(index_t i) {
    auto b = a;
    b(i) = 2.0 * static_cast<double>(i);
  };
  RefcountProbe p;
  p.use_before = a.use_count();
  const long before = detail::refcount_ops.load();
  forall("tests/refcount_forall", exec, a.size(), body);
  p.ops = detail::refcount_ops.load() - before;
  p.use_after = a.use_count();
  return p;
}

RefcountProbe refcount_bounds(const Exec& exec, Array<double, 2> a) {
  const int nj = static_cast<int>(a.extent(1));
  auto body = TESSERA_LAMBDA(int i, int j) {
    auto b = a;
    b(i, j) = static_cast<double>(i * nj + j);
  };
  RefcountProbe p;
  p.use_before = a.use_count();
  const long before = detail::refcount_ops.load();
  forall("tests/refcount_bounds", exec, Bounds<2>{a.extent(0), a.extent(1)}, body);
  p.ops = detail::refcount_ops.load() - before;
  p.use_after = a.use_count();
  return p;
}

RefcountProbe refcount_team(const Exec& exec, Array<double> a) {
  auto body = TESSERA_LAMBDA(TeamContext & ctx) {
    auto b = a;
    if (ctx.valid())
      for (int x : ctx.threads_x(1)) b(ctx.item() + x) = 3.0 * static_cast<double>(ctx.item());
  };
  Teams t;
  t.items = a.size();
  t.items_per_block = 4;
  t.threads = {32, 1, 1};
  RefcountProbe p;
  p.use_before = a.use_count();
  const long before = detail::refcount_ops.load();
  launch("tests/refcount_team", exec, t, body);
  p.ops = detail::refcount_ops.load() - before;
  p.use_after = a.use_count();
  return p;
}

double refcount_reduce(const Exec& exec, Array<double> a, long* ops) {
  auto map = TESSERA_LAMBDA(index_t i)->double {
    auto b = a;
    return b(i);
  };
  const long before = detail::refcount_ops.load();
  const double s = transform_reduce("tests/refcount_reduce", exec, a.size(), 0.0, map, Plus{});
  *ops = detail::refcount_ops.load() - before;
  return s;
}

}  // namespace array_kernels

namespace {
struct Triple {  // 12 bytes: not a size the device fill handles with words
  int a, b, c;
};
static_assert(sizeof(Triple) == 12);
struct Pair16 {
  double x, y;
};
}  // namespace

class ArrayTest : public test::BackendTest {};
class RefcountTest : public test::BackendTest {};

// ------------------------------------------------------------------ host basics

TEST(ArrayHost, LabelExtentsAndZeroInit) {
  Array<double, 2> a("grid", {3, 4});
  EXPECT_EQ(a.label(), "grid");
  EXPECT_EQ(a.extents(), (std::array<index_t, 2>{3, 4}));
  EXPECT_EQ(a.extent(0), 3);
  EXPECT_EQ(a.extent(1), 4);
  EXPECT_EQ(a.size(), 12);
  EXPECT_EQ(a.bytes(), 12 * sizeof(double));
  EXPECT_TRUE(a.allocated());
  EXPECT_EQ(a.space(), Space::Host);
  EXPECT_EQ(a.use_count(), 1);
  for (index_t i = 0; i < 3; ++i)
    for (index_t j = 0; j < 4; ++j) EXPECT_EQ(a(i, j), 0.0);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % 128, 0u);  // allocations are 128-byte aligned

  Array<double> empty;
  EXPECT_FALSE(empty.allocated());
  EXPECT_EQ(empty.size(), 0);
  EXPECT_EQ(empty.use_count(), 0);
  EXPECT_EQ(empty.label(), "");
  EXPECT_TRUE(empty.to_vector().empty());

  Array<int, 2> none("none", {0, 5});
  EXPECT_EQ(none.size(), 0);
  EXPECT_EQ(none.label(), "none");
}

TEST(ArrayHost, ShallowCopySharesDataAndCounts) {
  Array<double> a("shared", {10});
  EXPECT_EQ(a.use_count(), 1);
  {
    Array<double> b = a;
    EXPECT_EQ(a.use_count(), 2);
    EXPECT_EQ(b.use_count(), 2);
    EXPECT_EQ(b.data(), a.data());
    EXPECT_EQ(b.label(), "shared");
    b(3) = 5.0;
    EXPECT_EQ(a(3), 5.0);
    Array<double> c;
    c = b;  // copy assignment
    EXPECT_EQ(a.use_count(), 3);
    Array<double> d = std::move(c);  // a move does not add an owner
    EXPECT_EQ(a.use_count(), 3);
    EXPECT_FALSE(c.allocated());
    EXPECT_EQ(c.data(), nullptr);
    c = a;
    Array<double>& alias = c;
    c = alias;  // self-assignment keeps the count
    EXPECT_EQ(a.use_count(), 4);
  }
  EXPECT_EQ(a.use_count(), 1);
  EXPECT_EQ(a(3), 5.0);

  // Assigning another array releases the old one.
  Array<double> other("other", {2});
  Array<double> x = a;
  EXPECT_EQ(a.use_count(), 2);
  x = other;
  EXPECT_EQ(a.use_count(), 1);
  EXPECT_EQ(other.use_count(), 2);
}

TEST(ArrayHost, FromSpanAndToVector) {
  const std::vector<double> values = test::random_doubles(1001, 7);
  auto a = Array<double>::from("from", values);
  EXPECT_EQ(a.label(), "from");
  EXPECT_EQ(a.size(), 1001);
  EXPECT_EQ(a.to_vector(), values);
  EXPECT_NE(a.data(), values.data());  // a copy, not a view of the vector
  for (index_t i = 0; i < a.size(); ++i) EXPECT_EQ(a(i), values[static_cast<std::size_t>(i)]);

  auto e = Array<int>::from("empty", std::vector<int>{});
  EXPECT_EQ(e.size(), 0);
  EXPECT_TRUE(e.to_vector().empty());
}

TEST(ArrayHost, NegativeExtentThrows) {
  const std::string msg = error_message([] { Array<double, 2> a("neg", {3, -2}); });
  EXPECT_CONTAINS(msg, "'neg'");
  EXPECT_CONTAINS(msg, "negative");
  EXPECT_CONTAINS(msg, "-2");
}

TEST(ArrayHost, DeviceMemoryWithoutGpuThrows) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is present: this tests the build or machine without one";
  const std::string msg = error_message([] { Array<double> d("dev", {16}, Space::Device); });
  EXPECT_CONTAINS(msg, "'dev'");
  EXPECT_CONTAINS(msg, "device memory");
  EXPECT_CONTAINS(error_message([] { Array<double> p("pin", {16}, Space::HostPinned); }), "pinned");
  Array<double> h("h", {4});
  EXPECT_CONTAINS(error_message([&] { (void)h.to_device(); }), "'h'");
}

TEST(ArrayHost, ResizeKeepsOtherOwnersAllocation) {
  Array<int, 2> a("r", {2, 2});
  a(1, 1) = 9;
  Array<int, 2> b = a;
  a.resize({3, 3});
  EXPECT_NE(a.data(), b.data());
  EXPECT_EQ(b.extents(), (std::array<index_t, 2>{2, 2}));
  EXPECT_EQ(b(1, 1), 9);
  EXPECT_EQ(a(1, 1), 9);
  EXPECT_EQ(a.use_count(), 1);
  EXPECT_EQ(b.use_count(), 1);
  a(1, 1) = 1;
  EXPECT_EQ(b(1, 1), 9);
}

// ------------------------------------------------------------ on every backend

TEST_P(ArrayTest, ZeroInitialisedInBackendSpace) {
  // Dirty a block of the same size first, so that a reused allocation would show.
  { test::filled<double, 2>("dirty", {37, 29}, space(), 3.5); }
  Array<double, 2> a("zeros", {37, 29}, space());
  EXPECT_EQ(a.space(), space());
  for (double x : a.to_vector()) ASSERT_EQ(x, 0.0);
  Array<int> b("zeros_int", {1001}, space());
  for (int x : b.to_vector()) ASSERT_EQ(x, 0);
}

TEST_P(ArrayTest, CloneToHostToDeviceRoundTrip) {
  const std::vector<double> values = test::random_doubles(777, 11);
  auto src = Array<double>::from("src", values, space());
  EXPECT_EQ(src.space(), space());
  EXPECT_EQ(src.to_vector(), values);

  auto host = src.clone(Space::Host);
  EXPECT_NE(host.data(), src.data());
  EXPECT_EQ(host.label(), "src");
  EXPECT_EQ(host.space(), Space::Host);
  EXPECT_EQ(host.to_vector(), values);
  host(0) = 1e300;  // a deep copy: the source keeps its value
  EXPECT_EQ(src.to_vector()[0], values[0]);

  auto h = src.to_host();
  EXPECT_EQ(h.space(), Space::Host);
  EXPECT_EQ(h.to_vector(), values);
  if (on_gpu()) {
    EXPECT_NE(h.data(), src.data());
    auto d = h.to_device();
    EXPECT_EQ(d.space(), Space::Device);
    EXPECT_NE(d.data(), h.data());
    EXPECT_EQ(d.to_device().data(), d.data());  // already on the device: shared
    EXPECT_EQ(d.to_host().to_vector(), values);
    // Pinned host memory is host-accessible: to_host() shares it.
    auto pinned = d.clone(Space::HostPinned);
    EXPECT_EQ(pinned.space(), Space::HostPinned);
    EXPECT_EQ(pinned.to_host().data(), pinned.data());
    EXPECT_EQ(pinned(5), values[5]);
    EXPECT_EQ(pinned.to_device().to_vector(), values);
  } else {
    // Already host-accessible: to_host() shares the allocation.
    EXPECT_EQ(h.data(), src.data());
    EXPECT_EQ(src.use_count(), 2);
  }
}

TEST_P(ArrayTest, DeepCopyBetweenSpaces) {
  const std::vector<double> values = test::random_doubles(1000, 12);
  auto hsrc = Array<double>::from("hsrc", values);
  Array<double> dst("dst", {1000}, space());
  deep_copy(dst, hsrc);
  EXPECT_EQ(dst.to_vector(), values);
  Array<double> dst2("dst2", {1000}, space());
  deep_copy(dst2, dst);  // within the backend's space
  Array<double> back("back", {1000});
  deep_copy(back, dst2);
  EXPECT_EQ(back.to_vector(), values);
  EXPECT_NE(back.data(), hsrc.data());

  Array<double, 2> m1("m1", {2, 3}, space()), m2("m2", {3, 2}, space());
  const std::string msg = error_message([&] { deep_copy(m1, m2); });
  EXPECT_CONTAINS(msg, "extents");
  EXPECT_CONTAINS(msg, "'m1'");
  EXPECT_CONTAINS(msg, "'m2'");
}

TEST_P(ArrayTest, FillAnyElementSize) {
  for (index_t n : {1, 1001}) {
    SCOPED_TRACE(n);
    Array<double> d("fill_d", {n}, space());
    d.fill(-2.25);
    for (double x : d.to_vector()) ASSERT_EQ(x, -2.25);

    Array<int, 2> i("fill_i", {n, 3}, space());
    i.fill(-123456);
    for (int x : i.to_vector()) ASSERT_EQ(x, -123456);

    const Triple t{1, -2, 0x7fffffff};
    Array<Triple> s("fill_s", {n}, space());
    s.fill(t);
    for (const Triple& x : s.to_vector()) {
      ASSERT_EQ(x.a, t.a);
      ASSERT_EQ(x.b, t.b);
      ASSERT_EQ(x.c, t.c);
    }

    const Pair16 p{0.5, -7.0};
    Array<Pair16> q("fill_q", {n}, space());
    q.fill(p);
    for (const Pair16& x : q.to_vector()) {
      ASSERT_EQ(x.x, p.x);
      ASSERT_EQ(x.y, p.y);
    }
  }
  Array<double> none("fill_none", {0}, space());
  EXPECT_NO_THROW(none.fill(1.0));
}

TEST_P(ArrayTest, ResizeKeepsOverlappingContents) {
  const index_t n0 = 3, n1 = 4;
  auto pattern = [](index_t i, index_t j) { return static_cast<int>(100 * i + j + 1); };
  Array<int, 2> h("resized", {n0, n1});
  for (index_t i = 0; i < n0; ++i)
    for (index_t j = 0; j < n1; ++j) h(i, j) = pattern(i, j);
  Array<int, 2> a = on_gpu() ? h.to_device() : h.clone(Space::Host);

  auto check = [&](index_t e0, index_t e1, index_t kept0, index_t kept1) {
    EXPECT_EQ(a.extents(), (std::array<index_t, 2>{e0, e1}));
    EXPECT_EQ(a.label(), "resized");
    EXPECT_EQ(a.space(), space());
    const std::vector<int> v = a.to_vector();
    for (index_t i = 0; i < e0; ++i)
      for (index_t j = 0; j < e1; ++j) {
        const int want = (i < kept0 && j < kept1) ? pattern(i, j) : 0;
        ASSERT_EQ(v[static_cast<std::size_t>(i * e1 + j)], want) << "at (" << i << ", " << j << ")";
      }
  };
  a.resize({5, 6});  // grow both
  check(5, 6, n0, n1);
  a.resize({2, 3});  // shrink both
  check(2, 3, 2, 3);
  a.resize({4, 2});  // grow one, shrink the other
  check(4, 2, 2, 2);
  a.resize({0, 2});
  EXPECT_EQ(a.size(), 0);

  // Rank 3: the middle extent shrinks while the others grow.
  Array<int, 3> h3("r3", {2, 3, 4});
  for (index_t i = 0; i < 2; ++i)
    for (index_t j = 0; j < 3; ++j)
      for (index_t k = 0; k < 4; ++k) h3(i, j, k) = static_cast<int>(100 * i + 10 * j + k + 1);
  Array<int, 3> a3 = on_gpu() ? h3.to_device() : h3.clone(Space::Host);
  a3.resize({3, 2, 5});
  const auto v3 = a3.to_vector();
  for (index_t i = 0; i < 3; ++i)
    for (index_t j = 0; j < 2; ++j)
      for (index_t k = 0; k < 5; ++k) {
        const int want = (i < 2 && k < 4) ? static_cast<int>(100 * i + 10 * j + k + 1) : 0;
        ASSERT_EQ(v3[static_cast<std::size_t>((i * 2 + j) * 5 + k)], want);
      }
}

// ------------------------------------------------------------- reference counts

TEST(RefcountHost, HostCopiesAreCounted) {
  // The counter the kernel tests read does count host copies: one op per copy and
  // one per destruction.
  Array<double> a("counted", {4});
  const long before = detail::refcount_ops.load();
  { Array<double> b = a; }
  EXPECT_EQ(detail::refcount_ops.load() - before, 2);
  EXPECT_EQ(a.use_count(), 1);
}

TEST_P(RefcountTest, ForallDoesNotTouchRefcount) {
  const index_t n = index_t{1} << 20;
  Array<double> a("rc", {n}, space());
  const auto p = array_kernels::refcount_forall(exec(), a);
  EXPECT_EQ(p.ops, 0);
  EXPECT_EQ(p.use_after, p.use_before);
  EXPECT_EQ(a.use_count(), 1);
  const auto v = a.to_vector();  // the kernel ran and wrote through its copies
  for (index_t i = 0; i < n; ++i) ASSERT_EQ(v[static_cast<std::size_t>(i)], 2.0 * static_cast<double>(i));
}

TEST_P(RefcountTest, BoundsForallDoesNotTouchRefcount) {
  Array<double, 2> a("rc2", {1024, 1024}, space());
  const auto p = array_kernels::refcount_bounds(exec(), a);
  EXPECT_EQ(p.ops, 0);
  EXPECT_EQ(p.use_after, p.use_before);
  EXPECT_EQ(a.use_count(), 1);
  const auto v = a.to_vector();
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<double>(i));
}

TEST_P(RefcountTest, TeamLaunchDoesNotTouchRefcount) {
  const index_t n = index_t{1} << 20;
  Array<double> a("rc_team", {n}, space());
  const auto p = array_kernels::refcount_team(exec(), a);
  EXPECT_EQ(p.ops, 0);
  EXPECT_EQ(p.use_after, p.use_before);
  EXPECT_EQ(a.use_count(), 1);
  const auto v = a.to_vector();
  for (index_t i = 0; i < n; ++i) ASSERT_EQ(v[static_cast<std::size_t>(i)], 3.0 * static_cast<double>(i));
}

TEST_P(RefcountTest, ReductionDoesNotTouchRefcount) {
  auto a = Array<double>::from("rc_reduce", std::vector<double>(100000, 1.0), space());
  long ops = -1;
  EXPECT_EQ(array_kernels::refcount_reduce(exec(), a, &ops), 100000.0);  // a sum of ones is exact
  EXPECT_EQ(ops, 0);
  EXPECT_EQ(a.use_count(), 1);
}

TESSERA_INSTANTIATE_BACKENDS(ArrayTest);
TESSERA_INSTANTIATE_BACKENDS(RefcountTest);
