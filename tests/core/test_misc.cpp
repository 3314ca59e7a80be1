// Exec parsing and construction, errors from kernel bodies, profiling, device info and
// switches, timers, and the error for a CUDA launch from a host-compiled unit.
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_backends.hpp"

using namespace tessera;
using tessera::test::error_message;

namespace misc_kernels {

/// Throws from the body at index `bad` (host code only: device code cannot throw).
void throw_at(const Exec& exec, index_t n, index_t bad, bool std_error) {
  forall("tests/throwing_body", exec, n, TESSERA_LAMBDA(index_t i) {
#if !defined(TESSERA_DEVICE_CODE)
    if (i == bad) {
      if (std_error) throw std::runtime_error("plain failure at " + std::to_string(i));
      fail("tessera failure at ", i);
    }
#else
    (void)i, (void)bad, (void)std_error;
#endif
  });
}

void throw_in_team(const Exec& exec, index_t items, index_t bad) {
  Teams t;
  t.items = items;
  t.items_per_block = 4;
  launch("tests/throwing_team", exec, t, TESSERA_LAMBDA(TeamContext & ctx) {
#if !defined(TESSERA_DEVICE_CODE)
    if (ctx.valid() && ctx.item() == bad) fail("team failure at item ", ctx.item());
#else
    (void)ctx, (void)bad;
#endif
  });
}

void scale(const char* label, const Exec& exec, View<double, 1> x, double a) {
  forall(label, exec, x.size(), TESSERA_LAMBDA(index_t i) { x(i) *= a; });
}

void fill_iota(const Exec& exec, View<double, 1> x) {
  forall("tests/iota", exec, x.size(), TESSERA_LAMBDA(index_t i) { x(i) = static_cast<double>(i); });
}

}  // namespace misc_kernels

// ------------------------------------------------------------------------- Exec

TEST(Exec, ParseNames) {
  EXPECT_EQ(Exec::parse("serial").backend, Backend::Serial);
  EXPECT_EQ(Exec::parse("openmp").backend, Backend::OpenMP);
  EXPECT_EQ(Exec::parse("OpenMP").backend, Backend::OpenMP);
  EXPECT_EQ(Exec::parse("cpu").backend, Backend::OpenMP);
  EXPECT_EQ(Exec::parse("omp").backend, Backend::OpenMP);
  const Backend best = cuda_available() ? Backend::Cuda : Backend::OpenMP;
  EXPECT_EQ(Exec::parse("auto").backend, best);
  EXPECT_EQ(Exec::parse("").backend, best);
  EXPECT_EQ(Exec::best().backend, best);

  const std::string msg = error_message([] { (void)Exec::parse("bogus"); });
  EXPECT_CONTAINS(msg, "'bogus'");
  EXPECT_CONTAINS(msg, "serial");  // it lists the valid names

  if (cuda_available()) {
    EXPECT_EQ(Exec::parse("cuda").backend, Backend::Cuda);
    EXPECT_EQ(Exec::parse("gpu").backend, Backend::Cuda);
  } else {
    EXPECT_CONTAINS(error_message([] { (void)Exec::parse("cuda"); }), "CUDA");
    EXPECT_CONTAINS(error_message([] { (void)Exec::parse("gpu"); }), "CUDA");
  }
}

TEST(Exec, CudaWithoutGpuThrowsClearly) {
  if (cuda_available()) {
    EXPECT_EQ(Exec::cuda().backend, Backend::Cuda);
    GTEST_SKIP() << "a GPU is present: the error path needs a machine or build without one";
  }
  const std::string msg = error_message([] { (void)Exec::cuda(); });
  EXPECT_CONTAINS(msg, "CUDA backend");
  EXPECT_CONTAINS(msg, cuda_compiled() ? "no usable GPU" : "not compiled");
  EXPECT_CONTAINS(msg, "openmp");  // what to do instead
}

TEST(Exec, SpacesNamesAndAccessibility) {
  EXPECT_EQ(Exec::serial().space(), Space::Host);
  EXPECT_EQ(Exec::openmp().space(), Space::Host);
  EXPECT_EQ(test::exec_for(Backend::Cuda).space(), Space::Device);
  EXPECT_TRUE(test::exec_for(Backend::Cuda).on_device());
  EXPECT_FALSE(Exec::openmp().on_device());
  EXPECT_STREQ(to_string(Backend::Serial), "serial");
  EXPECT_STREQ(to_string(Backend::OpenMP), "openmp");
  EXPECT_STREQ(to_string(Backend::Cuda), "cuda");
  EXPECT_STREQ(to_string(Space::Host), "host");
  EXPECT_STREQ(to_string(Space::HostPinned), "host-pinned");
  EXPECT_STREQ(to_string(Space::Device), "device");
  EXPECT_TRUE(accessible(Backend::Serial, Space::Host));
  EXPECT_TRUE(accessible(Backend::OpenMP, Space::HostPinned));
  EXPECT_FALSE(accessible(Backend::OpenMP, Space::Device));
  EXPECT_TRUE(accessible(Backend::Cuda, Space::Device));
  EXPECT_TRUE(accessible(Backend::Cuda, Space::HostPinned));
  EXPECT_FALSE(accessible(Backend::Cuda, Space::Host));
  EXPECT_GE(openmp_threads(), 1);
#if defined(TESSERA_HAS_CUDA)
  EXPECT_TRUE(cuda_compiled());
#else
  EXPECT_FALSE(cuda_compiled());
  EXPECT_FALSE(cuda_available());
#endif
  if (!cuda_compiled()) {
    EXPECT_FALSE(cuda_available());
  }
}

// ----------------------------------------------------------------------- errors

TEST(Errors, FailAndRequire) {
  const std::string msg = error_message([] { fail("a", 1, '-', 2.5); });
  EXPECT_EQ(msg, "a1-2.5");
  EXPECT_NO_THROW(TESSERA_REQUIRE(1 + 1 == 2, "never"));
  EXPECT_EQ(error_message([] { TESSERA_REQUIRE(1 + 1 == 3, "n = ", 3); }), "n = 3");
  static_assert(std::is_base_of_v<std::runtime_error, Error>);
}

TEST(Errors, KernelBodyExceptionsNameTheKernel) {
  for (const Exec& e : test::cpu_execs()) {
    SCOPED_TRACE(to_string(e.backend));
    // Thrown from the middle of the range, on whichever OpenMP thread owns that index.
    std::string msg = error_message([&] { misc_kernels::throw_at(e, 100000, 77777, false); });
    EXPECT_CONTAINS(msg, "tessera failure at 77777");
    EXPECT_CONTAINS(msg, "[in kernel 'tests/throwing_body' on the " + std::string(to_string(e.backend)) + " backend]");
    // A std::exception that is not a tessera::Error becomes one, with the label.
    msg = error_message([&] { misc_kernels::throw_at(e, 1000, 0, true); });
    EXPECT_CONTAINS(msg, "plain failure at 0");
    EXPECT_CONTAINS(msg, "'tests/throwing_body'");
    msg = error_message([&] { misc_kernels::throw_in_team(e, 101, 100); });
    EXPECT_CONTAINS(msg, "team failure at item 100");
    EXPECT_CONTAINS(msg, "'tests/throwing_team'");
    // No exception: no error, and the thread state is clean for later launches.
    EXPECT_NO_THROW(misc_kernels::throw_at(e, 1000, -1, false));
    EXPECT_EQ(detail::kernel_depth, 0);
  }
}

TEST(Errors, CudaLaunchFromHostCompiledUnit) {
  if (test::kCudaUnit)
    GTEST_SKIP() << "this file is compiled by nvcc here; the host-compiler error is tested in builds without CUDA";
  Array<double> x("x", {10});
  const Exec cuda = test::exec_for(Backend::Cuda);  // not Exec::cuda(): that checks for a GPU first
  std::string msg = error_message([&] { misc_kernels::fill_iota(cuda, x.view()); });
  EXPECT_CONTAINS(msg, "CUDA");
  EXPECT_CONTAINS(msg, "'tests/iota'");
  EXPECT_CONTAINS(msg, "tessera_cuda_sources");
  EXPECT_CONTAINS(error_message([&] { misc_kernels::throw_in_team(cuda, 10, -1); }), "'tests/throwing_team'");
  EXPECT_CONTAINS(error_message([&] { (void)sum(cuda, x); }), "CUDA");
  EXPECT_CONTAINS(error_message([&] { (void)exclusive_scan(cuda, x, x); }), "CUDA");
  EXPECT_EQ(detail::kernel_depth, 0);
}

// -------------------------------------------------------------------- profiling

class ProfilingTest : public test::BackendTest {
 protected:
  void TearDown() override {
    profiling::enable(false);
    profiling::reset();
  }
};

TEST_P(ProfilingTest, CountsCallsPerLabel) {
  profiling::reset();
  profiling::enable();
  EXPECT_TRUE(profiling::enabled());
  Array<double> x("x", {100000}, space());
  for (int rep = 0; rep < 3; ++rep) {
    misc_kernels::scale("tests/profile_a", exec(), x.view(), 1.5);
    misc_kernels::scale("tests/profile_b", exec(), x.view(), 0.5);
  }
  const auto r = profiling::report();
  int found = 0;
  for (const auto& e : r) {
    if (e.label != "tests/profile_a" && e.label != "tests/profile_b") continue;
    ++found;
    EXPECT_EQ(e.backend, GetParam());
    EXPECT_EQ(e.calls, 3) << e.label;
    EXPECT_GE(e.total_ms, 0.0);
    EXPECT_LE(e.min_ms, e.max_ms);
    EXPECT_LE(e.max_ms, e.total_ms);
  }
  EXPECT_EQ(found, 2);
  for (std::size_t i = 1; i < r.size(); ++i) EXPECT_GE(r[i - 1].total_ms, r[i].total_ms);  // sorted, largest first

  std::ostringstream table;
  profiling::print(table);
  EXPECT_CONTAINS(table.str(), "tests/profile_a");
  EXPECT_CONTAINS(table.str(), to_string(GetParam()));

  profiling::reset();
  EXPECT_TRUE(profiling::report().empty());
  profiling::enable(false);
  EXPECT_FALSE(profiling::enabled());
  misc_kernels::scale("tests/profile_a", exec(), x.view(), 1.0);
  EXPECT_TRUE(profiling::report().empty());  // nothing recorded while disabled
}

TESSERA_INSTANTIATE_BACKENDS(ProfilingTest);

// ---------------------------------------------------------- device and switches

TEST(Device, SyncLaunchesToggles) {
  const bool initial = sync_launches();
  set_sync_launches(true);
  EXPECT_TRUE(sync_launches());
  set_sync_launches(false);
  EXPECT_FALSE(sync_launches());
  set_sync_launches(initial);
  EXPECT_EQ(sync_launches(), initial);
}

TEST(Device, InfoOrClearErrorWithoutGpu) {
  if (!cuda_available()) {
    EXPECT_TRUE(cuda_devices().empty());
    EXPECT_CONTAINS(error_message([] { (void)current_device(); }), "CUDA");
    return;
  }
  const auto all = cuda_devices();
  ASSERT_FALSE(all.empty());
  const DeviceInfo& d = current_device();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GE(d.shared_per_block_optin, d.shared_per_block);
  EXPECT_EQ(d.max_threads_per_block, 1024);
  EXPECT_GT(d.global_mem, std::size_t{0});
  EXPECT_NO_THROW(fence());
}

TEST(Timer, MedianAndHostTimer) {
  EXPECT_EQ(median({}), 0.0);
  EXPECT_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  Timer t(Exec::serial());
  t.start();
  Array<double> x("x", {1000});
  misc_kernels::fill_iota(Exec::serial(), x.view());
  EXPECT_GE(t.stop(), 0.0);
  EXPECT_EQ(x(999), 999.0);
}
