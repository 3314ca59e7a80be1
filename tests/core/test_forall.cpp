// forall over ranges and Bounds<N>: results against host loops, every index visited
// exactly once, empty ranges, argument validation.
#include <cmath>
#include <vector>

#include "test_backends.hpp"

using namespace tessera;
using tessera::test::error_message;

namespace forall_kernels {

void axpy(const Exec& exec, double a, View<const double, 1> x, View<const double, 1> y, View<double, 1> z) {
  forall("tests/axpy", exec, x.size(), TESSERA_LAMBDA(index_t i) { z(i) = a * x(i) + y(i); });
}

/// seen(i) counts the calls with index i; calls(0) counts all calls.
void visit1(const Exec& exec, index_t n, View<int, 1> seen, View<int, 1> calls) {
  forall("tests/visit1", exec, n, TESSERA_LAMBDA(index_t i) {
    test::atomic_increment(&calls(0));
    if (i >= 0 && i < seen.size()) test::atomic_increment(&seen(i));
  });
}

// For Bounds<N>: seen(f) counts the calls whose indices have the row-major flat index
// f; bad(0) counts calls with an index outside its extent (which the flat index could hide).
void visit_b1(const Exec& exec, Bounds<1> b, View<int, 1> seen, View<int, 1> bad) {
  const int n0 = static_cast<int>(b.extent[0]);
  forall("tests/visit_b1", exec, b, TESSERA_LAMBDA(int i) {
    if (i < 0 || i >= n0) test::atomic_increment(&bad(0));
    else test::atomic_increment(&seen(i));
  });
}

void visit_b2(const Exec& exec, Bounds<2> b, View<int, 1> seen, View<int, 1> bad) {
  const int n0 = static_cast<int>(b.extent[0]), n1 = static_cast<int>(b.extent[1]);
  forall("tests/visit_b2", exec, b, TESSERA_LAMBDA(int i, int j) {
    if (i < 0 || i >= n0 || j < 0 || j >= n1) test::atomic_increment(&bad(0));
    else test::atomic_increment(&seen(static_cast<index_t>(i) * n1 + j));
  });
}

void visit_b3(const Exec& exec, Bounds<3> b, View<int, 1> seen, View<int, 1> bad) {
  const int n0 = static_cast<int>(b.extent[0]), n1 = static_cast<int>(b.extent[1]),
            n2 = static_cast<int>(b.extent[2]);
  forall("tests/visit_b3", exec, b, TESSERA_LAMBDA(int i, int j, int k) {
    if (i < 0 || i >= n0 || j < 0 || j >= n1 || k < 0 || k >= n2) test::atomic_increment(&bad(0));
    else test::atomic_increment(&seen((static_cast<index_t>(i) * n1 + j) * n2 + k));
  });
}

void visit_b4(const Exec& exec, Bounds<4> b, View<int, 1> seen, View<int, 1> bad) {
  const int n0 = static_cast<int>(b.extent[0]), n1 = static_cast<int>(b.extent[1]),
            n2 = static_cast<int>(b.extent[2]), n3 = static_cast<int>(b.extent[3]);
  forall("tests/visit_b4", exec, b, TESSERA_LAMBDA(int i, int j, int k, int l) {
    if (i < 0 || i >= n0 || j < 0 || j >= n1 || k < 0 || k >= n2 || l < 0 || l >= n3)
      test::atomic_increment(&bad(0));
    else
      test::atomic_increment(&seen(((static_cast<index_t>(i) * n1 + j) * n2 + k) * n3 + l));
  });
}

constexpr int kNumState = 4, kHalo = 2;

/// The seed's applyTendencies loop nest (RK stage update on halo'd 4-D arrays).
void apply_tendencies(const Exec& exec, View<double, 4> state2, double c0, View<const double, 4> state0, double c1,
                      View<const double, 4> state1, double ct, View<const double, 4> tend, int nz, int ny, int nx,
                      double dt) {
  const int hs = kHalo;
  forall("tests/apply_tendencies", exec, Bounds<4>{kNumState, nz, ny, nx}, TESSERA_LAMBDA(int l, int k, int j, int i) {
    state2(l, hs + k, hs + j, hs + i) = c0 * state0(l, hs + k, hs + j, hs + i) + c1 * state1(l, hs + k, hs + j, hs + i) +
                                        ct * dt * tend(l, k, j, i);
  });
}

}  // namespace forall_kernels

namespace {

/// Checks that seen[f] == 1 for every f and bad == 0, after a Bounds<N> visit.
void expect_each_once(const Array<int>& seen, const Array<int>& bad) {
  EXPECT_EQ(bad.to_vector()[0], 0) << "calls with an index outside the bounds";
  const auto s = seen.to_vector();
  index_t missing = 0, repeated = 0, first_wrong = -1;
  for (std::size_t f = 0; f < s.size(); ++f) {
    missing += s[f] == 0;
    repeated += s[f] > 1;
    if (s[f] != 1 && first_wrong < 0) first_wrong = static_cast<index_t>(f);
  }
  EXPECT_EQ(missing, 0) << "first wrong flat index " << first_wrong;
  EXPECT_EQ(repeated, 0) << "first wrong flat index " << first_wrong;
}

}  // namespace

class ForallTest : public test::BackendTest {};

TEST_P(ForallTest, AxpyMatchesHostLoop) {
  for (index_t n : {index_t{1}, index_t{1000003}}) {
    SCOPED_TRACE(n);
    const auto hx = test::random_doubles(static_cast<std::size_t>(n), 1);
    const auto hy = test::random_doubles(static_cast<std::size_t>(n), 2);
    const double a = 0.7315;
    auto x = Array<double>::from("x", hx, space());
    auto y = Array<double>::from("y", hy, space());
    auto z = test::filled<double, 1>("z", {n}, space(), test::kNaN);
    forall_kernels::axpy(exec(), a, x.cview(), y.cview(), z.view());
    const auto hz = z.to_vector();
    index_t bad = 0, first = -1;
    for (std::size_t i = 0; i < hz.size(); ++i) {
      // Exact either way: one rounding of a*x+y (fused multiply-add, as nvcc emits
      // by default) or two (separate multiply and add).
      const bool ok = hz[i] == std::fma(a, hx[i], hy[i]) || hz[i] == a * hx[i] + hy[i];
      if (!ok && first < 0) first = static_cast<index_t>(i);
      bad += !ok;
    }
    EXPECT_EQ(bad, 0) << "first mismatch at " << first << ": " << (first >= 0 ? hz[first] : 0.0);
  }
}

TEST_P(ForallTest, EveryIndexOnceOddSizes) {
  for (index_t n : {index_t{1}, index_t{7}, index_t{1000003}}) {
    SCOPED_TRACE(n);
    Array<int> seen("seen", {n}, space()), calls("calls", {1}, space());
    forall_kernels::visit1(exec(), n, seen.view(), calls.view());
    EXPECT_EQ(calls.to_vector()[0], n);
    const auto s = seen.to_vector();
    index_t wrong = 0;
    for (int c : s) wrong += c != 1;
    EXPECT_EQ(wrong, 0);
  }
}

TEST_P(ForallTest, EmptyRangesCallNothing) {
  Array<int> seen("seen", {1}, space()), calls("calls", {1}, space());
  forall_kernels::visit1(exec(), 0, seen.view(), calls.view());
  EXPECT_EQ(calls.to_vector()[0], 0);
  forall_kernels::visit_b2(exec(), Bounds<2>{0, 5}, seen.view(), calls.view());
  forall_kernels::visit_b2(exec(), Bounds<2>{5, 0}, seen.view(), calls.view());
  forall_kernels::visit_b4(exec(), Bounds<4>{3, 4, 0, 2}, seen.view(), calls.view());
  EXPECT_EQ(calls.to_vector()[0], 0);
  EXPECT_EQ(seen.to_vector()[0], 0);
}

TEST_P(ForallTest, InvalidRangesThrow) {
  Array<int> seen("seen", {1}, space()), calls("calls", {1}, space());
  const std::string msg = error_message([&] { forall_kernels::visit1(exec(), -1, seen.view(), calls.view()); });
  EXPECT_CONTAINS(msg, "'tests/visit1'");
  EXPECT_CONTAINS(msg, "negative");
  const std::string msg2 = error_message([&] { forall_kernels::visit_b2(exec(), Bounds<2>{3, -2}, seen.view(), calls.view()); });
  EXPECT_CONTAINS(msg2, "'tests/visit_b2'");
  EXPECT_CONTAINS(msg2, "-2");
  const std::string msg3 =
      error_message([&] { forall_kernels::visit_b2(exec(), Bounds<2>{1, index_t{1} << 31}, seen.view(), calls.view()); });
  EXPECT_CONTAINS(msg3, "extent 1");
  EXPECT_EQ(calls.to_vector()[0], 0);
}

TEST_P(ForallTest, Bounds1VisitsEachIndexOnce) {
  for (int n : {1, 1000}) {
    const Bounds<1> b{n};
    Array<int> seen("seen", {b.size()}, space()), bad("bad", {1}, space());
    forall_kernels::visit_b1(exec(), b, seen.view(), bad.view());
    expect_each_once(seen, bad);
  }
}

TEST_P(ForallTest, Bounds2VisitsEachIndexOnce) {
  for (const Bounds<2>& b : {Bounds<2>{37, 129}, Bounds<2>{1, 1}, Bounds<2>{1000, 1}, Bounds<2>{1, 1000}}) {
    SCOPED_TRACE(testing::Message() << b.extent[0] << "x" << b.extent[1]);
    Array<int> seen("seen", {b.size()}, space()), bad("bad", {1}, space());
    forall_kernels::visit_b2(exec(), b, seen.view(), bad.view());
    expect_each_once(seen, bad);
  }
}

TEST_P(ForallTest, Bounds3VisitsEachIndexOnce) {
  for (const Bounds<3>& b : {Bounds<3>{5, 17, 33}, Bounds<3>{1, 1, 1}, Bounds<3>{64, 1, 3}}) {
    SCOPED_TRACE(testing::Message() << b.extent[0] << "x" << b.extent[1] << "x" << b.extent[2]);
    Array<int> seen("seen", {b.size()}, space()), bad("bad", {1}, space());
    forall_kernels::visit_b3(exec(), b, seen.view(), bad.view());
    expect_each_once(seen, bad);
  }
}

TEST_P(ForallTest, Bounds4VisitsEachIndexOnce) {
  for (const Bounds<4>& b : {Bounds<4>{3, 4, 5, 67}, Bounds<4>{1, 3, 1, 7}, Bounds<4>{2, 1, 9, 1}}) {
    SCOPED_TRACE(testing::Message() << b.extent[0] << "x" << b.extent[1] << "x" << b.extent[2] << "x" << b.extent[3]);
    Array<int> seen("seen", {b.size()}, space()), bad("bad", {1}, space());
    forall_kernels::visit_b4(exec(), b, seen.view(), bad.view());
    expect_each_once(seen, bad);
  }
}

TEST_P(ForallTest, RkUpdateMatchesHostLoop) {
  using forall_kernels::kHalo;
  using forall_kernels::kNumState;
  const int nz = 5, ny = 7, nx = 33;
  const double c0 = 0.75, c1 = 0.25, ct = 0.25, dt = 0.5;
  const std::array<index_t, 4> full{kNumState, nz + 2 * kHalo, ny + 2 * kHalo, nx + 2 * kHalo};
  const std::array<index_t, 4> inner{kNumState, nz, ny, nx};
  const std::size_t nfull = static_cast<std::size_t>(full[0] * full[1] * full[2] * full[3]);
  const std::size_t ninner = static_cast<std::size_t>(kNumState * nz * ny * nx);

  const auto h0 = test::random_doubles(nfull, 3), h1 = test::random_doubles(nfull, 4);
  const auto ht = test::random_doubles(ninner, 5);
  Array<double, 4> s0("state0", full), s1("state1", full), tend("tend", inner);
  std::copy(h0.begin(), h0.end(), s0.data());
  std::copy(h1.begin(), h1.end(), s1.data());
  std::copy(ht.begin(), ht.end(), tend.data());
  auto d0 = s0.clone(space()), d1 = s1.clone(space()), dt_ = tend.clone(space());
  auto s2 = test::filled<double, 4>("state2", full, space(), test::kNaN);

  forall_kernels::apply_tendencies(exec(), s2.view(), c0, d0.cview(), c1, d1.cview(), ct, dt_.cview(), nz, ny, nx, dt);
  const auto out = s2.to_host();

  // The host loop, as in the seed.
  const int hs = kHalo;
  index_t bad = 0, halo_written = 0;
  for (int l = 0; l < kNumState; ++l)
    for (int k = 0; k < nz + 2 * hs; ++k)
      for (int j = 0; j < ny + 2 * hs; ++j)
        for (int i = 0; i < nx + 2 * hs; ++i) {
          const bool interior = k >= hs && k < nz + hs && j >= hs && j < ny + hs && i >= hs && i < nx + hs;
          const double got = out(l, k, j, i);
          if (!interior) {
            halo_written += !std::isnan(got);  // the update must not touch the halo
            continue;
          }
          const double want = c0 * s0(l, k, j, i) + c1 * s1(l, k, j, i) + ct * dt * tend(l, k - hs, j - hs, i - hs);
          // |terms| <= 1; contraction into FMAs (GPU) changes each of the three
          // roundings by at most 1 ulp of a value <= 1: 4 eps is ample and still tight.
          bad += !(std::fabs(got - want) <= 4 * std::numeric_limits<double>::epsilon());
        }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(halo_written, 0);
}

TEST_P(ForallTest, GpuBlockSizeIsUsedOrValidated) {
  const auto hx = test::random_doubles(1001, 6), hy = test::random_doubles(1001, 7);
  auto x = Array<double>::from("x", hx, space()), y = Array<double>::from("y", hy, space());
  auto z = test::filled<double, 1>("z", {1001}, space(), test::kNaN);
  Exec e = exec();
  e.block_size = 96;  // not a power of two
  forall_kernels::axpy(e, 2.0, x.cview(), y.cview(), z.view());
  const auto hz = z.to_vector();
  for (std::size_t i = 0; i < hz.size(); ++i) ASSERT_EQ(hz[i], 2.0 * hx[i] + hy[i]);  // 2*x is exact: no FMA question
  e.block_size = 0;
  if (on_gpu()) {
    EXPECT_CONTAINS(error_message([&] { forall_kernels::axpy(e, 2.0, x.cview(), y.cview(), z.view()); }), "block_size");
  } else {
    EXPECT_NO_THROW(forall_kernels::axpy(e, 2.0, x.cview(), y.cview(), z.view()));  // ignored on the CPU
  }
}

TESSERA_INSTANTIATE_BACKENDS(ForallTest);
