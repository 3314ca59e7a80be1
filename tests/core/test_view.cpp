// View: indexing, extents, slicing, const conversion; bounds checking on the host, in
// CPU kernels and (in a child process) in CUDA kernels.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <type_traits>
#include <vector>

#include "test_backends.hpp"

using namespace tessera;
using tessera::test::error_message;

namespace view_kernels {

/// Writes v(i + 1) for every i of v: the last iteration is one past the end.
void write_past_end(const Exec& exec, Array<double> a) {
  auto v = a.view();
  forall("tests/oob_write", exec, v.size(), TESSERA_LAMBDA(index_t i) { v(i + 1) = 1.0; });
}

/// In a bounds-check build on the CUDA backend, runs write_past_end in this (child)
/// process, then exits with the device's message and the launch error on stderr.
void device_oob_child() {
  ::dup2(::fileno(stderr), ::fileno(stdout));  // the device printf goes to stdout
  set_sync_launches(true);                     // so that the launch check names the kernel
  try {
    Array<double> a("grid", {100}, Space::Device);
    write_past_end(Exec::cuda(), a);
    fence("tests/device_oob");
    std::fprintf(stderr, "no error was raised\n");
  } catch (const Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "caught: %s\n", e.what());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(1);
}

}  // namespace view_kernels

// ------------------------------------------------------------------------- View

TEST(View, RowMajorIndexingExtentsAndSize) {
  std::vector<double> buf(2 * 3 * 4);
  View<double, 3> v(buf.data(), 2, 3, 4);
  EXPECT_EQ(v.extent(0), 2);
  EXPECT_EQ(v.extent(1), 3);
  EXPECT_EQ(v.extent(2), 4);
  EXPECT_EQ(v.size(), 24);
  EXPECT_FALSE(v.empty());
  EXPECT_EQ(v.extents(), (std::array<index_t, 3>{2, 3, 4}));
  EXPECT_EQ(v.data(), buf.data());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        // Row-major: the last index is contiguous.
        EXPECT_EQ(&v(i, j, k), buf.data() + (i * 3 + j) * 4 + k);
        v(i, j, k) = 100 * i + 10 * j + k;
      }
  for (index_t f = 0; f < v.size(); ++f) EXPECT_EQ(&v[f], buf.data() + f);
  EXPECT_EQ(buf[(1 * 3 + 2) * 4 + 3], 123.0);

  // The std::array constructor gives the same view.
  View<double, 3> w(buf.data(), std::array<index_t, 3>{2, 3, 4});
  EXPECT_EQ(&w(1, 2, 3), &v(1, 2, 3));

  View<double, 2> empty(buf.data(), 0, 5);
  EXPECT_EQ(empty.size(), 0);
  EXPECT_TRUE(empty.empty());
  View<double, 1> dflt;
  EXPECT_EQ(dflt.size(), 0);
  EXPECT_EQ(dflt.data(), nullptr);
}

TEST(View, SlicingWithFewerIndices) {
  std::vector<double> buf(2 * 3 * 4, 0.0);
  View<double, 3> v(buf.data(), 2, 3, 4);

  View<double, 2> s = v(1);  // rank 3 -> rank 2
  static_assert(std::is_same_v<decltype(v(1)), View<double, 2>>);
  EXPECT_EQ(s.extent(0), 3);
  EXPECT_EQ(s.extent(1), 4);
  EXPECT_EQ(s.data(), &v(1, 0, 0));

  View<double, 1> r = s(2);  // rank 2 -> rank 1
  static_assert(std::is_same_v<decltype(v(1, 2)), View<double, 1>>);
  EXPECT_EQ(r.extent(0), 4);
  EXPECT_EQ(r.data(), &v(1, 2, 0));
  EXPECT_EQ(v(1, 2).data(), r.data());  // two indices at once: the same row

  // Writes through slices are visible in the parent.
  r(3) = 7.5;
  s(0, 1) = -2.0;
  EXPECT_EQ(v(1, 2, 3), 7.5);
  EXPECT_EQ(v(1, 0, 1), -2.0);
  EXPECT_EQ(buf[(1 * 3 + 2) * 4 + 3], 7.5);
  // ... and nothing else changed.
  int nonzero = 0;
  for (double x : buf) nonzero += x != 0.0;
  EXPECT_EQ(nonzero, 2);
}

TEST(View, ConstConversionAndTrivialCopy) {
  static_assert(std::is_trivially_copyable_v<View<double, 3>>);
  static_assert(std::is_trivially_copyable_v<View<const int, 1>>);
  static_assert(std::is_convertible_v<View<double, 2>, View<const double, 2>>);
  static_assert(!std::is_convertible_v<View<const double, 2>, View<double, 2>>);
  static_assert(std::is_same_v<decltype(std::declval<View<const double, 1>>()(0)), const double&>);
  EXPECT_TRUE((std::is_trivially_copyable_v<View<double, 3>>));

  std::vector<double> buf{1, 2, 3, 4, 5, 6};
  View<double, 2> v(buf.data(), 2, 3);
  View<const double, 2> c = v;
  EXPECT_EQ(c.data(), v.data());
  EXPECT_EQ(c.extents(), v.extents());
  v(1, 2) = 42.0;
  EXPECT_EQ(c(1, 2), 42.0);

  // Array gives both kinds of view over its data.
  Array<double, 2> a("a", {2, 3});
  View<const double, 2> ca = a;
  EXPECT_EQ(ca.data(), a.data());
  EXPECT_EQ(a.cview().data(), a.view().data());
  EXPECT_EQ(a(1).extent(0), 3);  // Array slicing gives a View as well
}

// ------------------------------------------------------------------ bounds checks

TEST(BoundsCheck, HostIndexOutOfRangeNamesLabelIndicesAndExtents) {
  TESSERA_SKIP_WITHOUT_BOUNDS_CHECK();
  Array<double, 2> grid("grid", {3, 4});
  const std::string msg = error_message([&] { (void)grid(3, 7); });
  EXPECT_CONTAINS(msg, "index (3, 7)");
  EXPECT_CONTAINS(msg, "'grid'");
  EXPECT_CONTAINS(msg, "(3, 4)");

  // One bad index among good ones, negative indices, slices and flat access.
  EXPECT_CONTAINS(error_message([&] { (void)grid(2, 4); }), "index (2, 4)");
  EXPECT_CONTAINS(error_message([&] { (void)grid(-1, 0); }), "index (-1, 0)");
  EXPECT_CONTAINS(error_message([&] { (void)grid(3); }), "index (3)");
  EXPECT_CONTAINS(error_message([&] { (void)grid[12]; }), "index (12)");
  // In-range accesses, the last element included, do not throw.
  EXPECT_NO_THROW((void)grid(2, 3));
  EXPECT_NO_THROW((void)grid[11]);

  // A slice keeps the label.
  auto row = grid(1);
  EXPECT_CONTAINS(error_message([&] { (void)row(4); }), "'grid'");
  // A view over a raw pointer has no label and says so.
  double raw[2] = {0, 0};
  View<double, 1> rv(raw, 2);
  EXPECT_CONTAINS(error_message([&] { (void)rv(2); }), "unlabelled");
}

TEST(BoundsCheck, HostAccessOfDeviceArrayThrows) {
  TESSERA_SKIP_WITHOUT_BOUNDS_CHECK();
  TESSERA_SKIP_WITHOUT_GPU();
  Array<double> d("on_gpu", {8}, Space::Device);
  const std::string msg = error_message([&] { (void)d(0); });
  EXPECT_CONTAINS(msg, "device memory");
  EXPECT_CONTAINS(msg, "'on_gpu'");
  EXPECT_CONTAINS(error_message([&] { (void)d[3]; }), "device memory");
  // The host copy is fine.
  EXPECT_NO_THROW((void)d.to_host()(0));
}

TEST(BoundsCheck, OutOfBoundsInCpuKernelNamesKernel) {
  TESSERA_SKIP_WITHOUT_BOUNDS_CHECK();
  for (const Exec& e : test::cpu_execs()) {
    SCOPED_TRACE(to_string(e.backend));
    Array<double> a("grid", {1000});
    const std::string msg = error_message([&] { view_kernels::write_past_end(e, a); });
    EXPECT_CONTAINS(msg, "index (1000)");
    EXPECT_CONTAINS(msg, "'grid'");
    EXPECT_CONTAINS(msg, "[in kernel 'tests/oob_write'");
    EXPECT_CONTAINS(msg, to_string(e.backend));
  }
}

TEST(BoundsCheckDeathTest, OutOfBoundsInCudaKernelTraps) {
  TESSERA_SKIP_WITHOUT_BOUNDS_CHECK();
  TESSERA_SKIP_WITHOUT_GPU();
  // The trap ruins the CUDA context: run it in a freshly started child process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(view_kernels::device_oob_child(),
               "index \\(100\\) out of bounds for array 'grid'.*kernel 'tests/oob_write' failed");
}
