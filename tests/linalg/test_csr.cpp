// Tests of tessera::linalg::CsrMatrix and the COO conversions on every backend present.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "tessera/linalg/csr.hpp"
#include "test_backends.hpp"

namespace tessera::test {
namespace {

using linalg::CooMatrix;
using linalg::CsrMatrix;

/// A CSR matrix held on the host as plain vectors (the reference of every test).
struct HostCsr {
  index_t rows = 0, cols = 0;
  std::vector<std::int64_t> off{0};
  std::vector<int> col;
  std::vector<double> val;
};

/// Random pattern: each row is empty with probability 1/4, else holds each column with
/// probability `density`; values in [-1, 1).
HostCsr random_csr(index_t rows, index_t cols, double density, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0), v(-1.0, 1.0);
  HostCsr h;
  h.rows = rows;
  h.cols = cols;
  h.off.assign(1, 0);
  for (index_t r = 0; r < rows; ++r) {
    const bool empty = u(gen) < 0.25;
    for (index_t c = 0; c < cols && !empty; ++c)
      if (u(gen) < density) {
        h.col.push_back(static_cast<int>(c));
        h.val.push_back(v(gen));
      }
    h.off.push_back(static_cast<std::int64_t>(h.col.size()));
  }
  return h;
}

CsrMatrix make(const HostCsr& h, const Exec& exec) {
  const Space s = exec.space();
  return CsrMatrix(h.rows, h.cols, Array<std::int64_t, 1>::from("off", h.off, s), Array<int, 1>::from("col", h.col, s),
                   Array<double, 1>::from("val", h.val, s), exec);
}

/// Dense reference y = alpha A x + beta y0 (each row summed in column order), and the
/// magnitude |alpha| sum |a x| + |beta y0| of every row, which bounds the rounding error.
void reference(const HostCsr& h, const std::vector<double>& x, const std::vector<double>& y0, double alpha,
               double beta, std::vector<double>& y, std::vector<double>& scale) {
  std::vector<double> dense(static_cast<std::size_t>(h.rows * h.cols), 0.0);
  for (index_t r = 0; r < h.rows; ++r)
    for (auto k = h.off[r]; k < h.off[r + 1]; ++k) dense[r * h.cols + h.col[k]] = h.val[k];
  y.assign(static_cast<std::size_t>(h.rows), 0.0);
  scale.assign(static_cast<std::size_t>(h.rows), 0.0);
  for (index_t r = 0; r < h.rows; ++r) {
    double s = 0, m = 0;
    for (index_t c = 0; c < h.cols; ++c) {
      s += dense[r * h.cols + c] * x[c];
      m += std::abs(dense[r * h.cols + c] * x[c]);
    }
    y[r] = beta == 0.0 ? alpha * s : alpha * s + beta * y0[r];
    scale[r] = std::abs(alpha) * m + (beta == 0.0 ? 0.0 : std::abs(beta * y0[r]));
  }
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

class CsrTest : public BackendTest {};
TESSERA_INSTANTIATE_BACKENDS(CsrTest);

// Tolerance: each row sums at most 40 products, so any summation order (cuSPARSE's, or the
// dense reference's with its zeros) rounds by at most 40 eps times the row's sum of
// magnitudes; 64 eps leaves room for the final alpha / beta update.
constexpr double kTol = 64 * std::numeric_limits<double>::epsilon();

TEST_P(CsrTest, ApplyMatchesDenseProductOnRandomMatrices) {
  const double combos[][2] = {{1.0, 0.0}, {2.5, 0.0}, {1.0, 1.0}, {-0.5, 2.0}, {0.0, 3.0}, {1.5, -1.0}};
  std::mt19937_64 gen(42);
  for (int trial = 0; trial < 24; ++trial) {
    const index_t rows = static_cast<index_t>(gen() % 41), cols = static_cast<index_t>(gen() % 41);
    const double density = 0.05 + 0.5 * static_cast<double>(gen() % 100) / 100.0;
    const HostCsr h = random_csr(rows, cols, density, 1000 + trial);
    const CsrMatrix a = make(h, exec());
    const auto x = random_doubles(static_cast<std::size_t>(cols), 7 + trial);
    const auto y0 = random_doubles(static_cast<std::size_t>(rows), 99 + trial);
    auto xa = Array<double, 1>::from("x", x, space());
    for (const auto& ab : combos) {
      auto ya = Array<double, 1>::from("y", y0, space());
      a.apply(xa, ya, ab[0], ab[1]);
      std::vector<double> ref, scale;
      reference(h, x, y0, ab[0], ab[1], ref, scale);
      const auto got = ya.to_vector();
      for (index_t r = 0; r < rows; ++r)
        ASSERT_LE(std::abs(got[r] - ref[r]), kTol * scale[r] + 1e-300)
            << "trial " << trial << " (" << rows << " x " << cols << ", nnz " << a.nnz() << "), row " << r
            << ", alpha " << ab[0] << ", beta " << ab[1];
    }
  }
}

TEST_P(CsrTest, RepeatedApplyGivesTheSameBits) {
  const HostCsr h = random_csr(300, 200, 0.1, 5);
  const CsrMatrix a = make(h, exec());
  auto x = Array<double, 1>::from("x", random_doubles(200, 6), space());
  Array<double, 1> y1("y1", {300}, space()), y2("y2", {300}, space());
  a.apply(x, y1);
  a.apply(x, y2);
  EXPECT_TRUE(same_bits(y1.to_vector(), y2.to_vector()));
}

TEST_P(CsrTest, BetaZeroDoesNotReadY) {
  const HostCsr h = random_csr(37, 23, 0.3, 11);  // has empty rows: their result must be 0, not NaN
  const CsrMatrix a = make(h, exec());
  const auto x = random_doubles(23, 12);
  auto xa = Array<double, 1>::from("x", x, space());
  auto y = filled<double, 1>("y", {37}, space(), kNaN);
  a.apply(xa, y, 2.0, 0.0);
  std::vector<double> ref, scale;
  reference(h, x, std::vector<double>(37, 0.0), 2.0, 0.0, ref, scale);
  const auto got = y.to_vector();
  int empty_rows = 0;
  for (index_t r = 0; r < 37; ++r) {
    ASSERT_FALSE(std::isnan(got[r])) << "row " << r;
    EXPECT_LE(std::abs(got[r] - ref[r]), kTol * scale[r] + 1e-300) << "row " << r;
    if (h.off[r] == h.off[r + 1]) {
      EXPECT_EQ(got[r], 0.0);
      ++empty_rows;
    }
  }
  EXPECT_GT(empty_rows, 0);
}

TEST_P(CsrTest, ChangedValuesAreUsedByTheNextApply) {
  HostCsr h = random_csr(20, 20, 0.3, 3);
  CsrMatrix a = make(h, exec());
  const auto x = random_doubles(20, 4);
  auto xa = Array<double, 1>::from("x", x, space());
  Array<double, 1> y("y", {20}, space());
  a.apply(xa, y);  // creates the cached GPU state on CUDA
  for (auto& v : h.val) v *= -3.0;
  auto fresh = Array<double, 1>::from("v", h.val, space());
  detail::copy_bytes(a.values().data(), space(), fresh.data(), space(), fresh.bytes());
  a.apply(xa, y);
  std::vector<double> ref, scale;
  reference(h, x, std::vector<double>(20, 0.0), 1.0, 0.0, ref, scale);
  const auto got = y.to_vector();
  for (index_t r = 0; r < 20; ++r) EXPECT_LE(std::abs(got[r] - ref[r]), kTol * scale[r] + 1e-300) << "row " << r;
}

TEST_P(CsrTest, EmptyMatrices) {
  // 5 x 0: y = beta y, or 0 without reading y.
  const CsrMatrix a = make(HostCsr{5, 0, {0, 0, 0, 0, 0, 0}, {}, {}}, exec());
  EXPECT_EQ(a.nnz(), 0);
  Array<double, 1> x("x", {0}, space());
  auto y = filled<double, 1>("y", {5}, space(), kNaN);
  a.apply(x, y);
  for (double v : y.to_vector()) EXPECT_EQ(v, 0.0);
  y.fill(2.0);
  a.apply(x, y, 1.0, -1.5);
  for (double v : y.to_vector()) EXPECT_EQ(v, -3.0);
  // 4 x 6 without entries, 0 x 3 and the default 0 x 0.
  const CsrMatrix b = make(HostCsr{4, 6, {0, 0, 0, 0, 0}, {}, {}}, exec());
  auto x6 = Array<double, 1>::from("x6", random_doubles(6, 1), space());
  auto y4 = filled<double, 1>("y4", {4}, space(), kNaN);
  b.apply(x6, y4);
  for (double v : y4.to_vector()) EXPECT_EQ(v, 0.0);
  const CsrMatrix c = make(HostCsr{0, 3, {0}, {}, {}}, exec());
  Array<double, 1> x3("x3", {3}, space()), y0("y0", {0}, space());
  c.apply(x3, y0);
  const CsrMatrix d;
  EXPECT_EQ(d.rows(), 0);
  EXPECT_EQ(d.cols(), 0);
  d.apply(View<const double, 1>(), View<double, 1>());
  EXPECT_NO_THROW(d.check());
}

TEST_P(CsrTest, SizeMismatchesNameBothSizes) {
  const CsrMatrix a = make(random_csr(4, 6, 0.5, 1), exec());
  Array<double, 1> x5("x", {5}, space()), x6("x", {6}, space()), y3("y", {3}, space()), y4("y", {4}, space());
  const std::string mx = error_message([&] { a.apply(x5, y4); });
  EXPECT_CONTAINS(mx, "x has 5 entries");
  EXPECT_CONTAINS(mx, "4 x 6");
  EXPECT_CONTAINS(mx, "size cols = 6");
  const std::string my = error_message([&] { a.apply(x6, y3); });
  EXPECT_CONTAINS(my, "y has 3 entries");
  EXPECT_CONTAINS(my, "size rows = 4");
}

TEST_P(CsrTest, OverlappingVectorsAreRefused) {
  const CsrMatrix a = make(random_csr(6, 6, 0.5, 1), exec());
  Array<double, 1> v("v", {9}, space());
  const View<double, 1> x(v.data(), 6), y(v.data() + 3, 6);
  EXPECT_CONTAINS(error_message([&] { a.apply(x, y); }), "x and y overlap");
}

TEST_P(CsrTest, DiagonalPositionsAndDiagonal) {
  // 5 x 4: row 0 has (0,0); row 1 lacks its diagonal; row 2 has (2,2) last; row 3 is empty;
  // row 4 has no column 4 at all (rows > cols).
  const HostCsr h{5, 4, {0, 2, 4, 7, 7, 9}, {0, 3, 0, 2, 0, 1, 2, 1, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
  const CsrMatrix a = make(h, exec());
  const std::vector<std::int64_t> want = {0, -1, 6, -1, -1};
  EXPECT_EQ(a.diagonal_positions().to_vector(), want);
  EXPECT_EQ(a.diagonal_positions().size(), 5);
  EXPECT_EQ(a.diagonal_positions().space(), space());
  const std::vector<double> diag = {1, 0, 7, 0, 0};
  EXPECT_EQ(a.diagonal().to_vector(), diag);
  // Random matrices against a host search.
  for (int trial = 0; trial < 8; ++trial) {
    const HostCsr r = random_csr(30 + trial, 25, 0.3, 77 + trial);
    const CsrMatrix m = make(r, exec());
    std::vector<std::int64_t> pos(static_cast<std::size_t>(r.rows), -1);
    for (index_t i = 0; i < r.rows; ++i)
      for (auto k = r.off[i]; k < r.off[i + 1]; ++k)
        if (r.col[k] == i) pos[i] = k;
    EXPECT_EQ(m.diagonal_positions().to_vector(), pos) << "trial " << trial;
  }
}

TEST_P(CsrTest, CooRoundTrip) {
  const HostCsr h = random_csr(33, 17, 0.3, 21);
  const CsrMatrix a = make(h, exec());
  const CooMatrix coo = linalg::to_coo(a);
  EXPECT_EQ(coo.rows, 33);
  EXPECT_EQ(coo.cols, 17);
  EXPECT_EQ(coo.row.space(), space());
  ASSERT_EQ(coo.row.size(), a.nnz());
  const auto rows = coo.row.to_vector();
  for (index_t r = 0; r < h.rows; ++r)
    for (auto k = h.off[r]; k < h.off[r + 1]; ++k) EXPECT_EQ(rows[k], r);
  const CsrMatrix b = linalg::csr_from_coo(coo, exec());
  EXPECT_EQ(b.row_offsets_array().to_vector(), h.off);
  EXPECT_EQ(b.col_indices_array().to_vector(), h.col);
  EXPECT_TRUE(same_bits(b.values_array().to_vector(), h.val));
  EXPECT_EQ(b.space(), space());
}

TEST_P(CsrTest, CsrFromCooSortsAndSumsDuplicatesInInputOrder) {
  // Row 0 column 1 three times: 1e16 + 1 - 1e16 is 0 in input order (1e16 + 1 rounds to
  // 1e16), 1 in another order.
  const std::vector<std::int64_t> row = {2, 0, 0, 1, 0, 2, 0};
  const std::vector<int> col = {3, 1, 0, 2, 1, 0, 1};
  const std::vector<double> val = {5, 1e16, 7, 4, 1, 6, -1e16};
  CooMatrix coo{3, 4, Array<std::int64_t, 1>::from("r", row, space()), Array<int, 1>::from("c", col, space()),
                Array<double, 1>::from("v", val, space())};
  const CsrMatrix a = linalg::csr_from_coo(coo, exec());
  EXPECT_EQ(a.row_offsets_array().to_vector(), (std::vector<std::int64_t>{0, 2, 3, 5}));
  EXPECT_EQ(a.col_indices_array().to_vector(), (std::vector<int>{0, 1, 2, 0, 3}));
  EXPECT_EQ(a.values_array().to_vector(), (std::vector<double>{7, 0, 4, 6, 5}));
  EXPECT_NO_THROW(a.check());
}

TEST_P(CsrTest, CsrFromCooErrors) {
  CooMatrix bad{2, 3, Array<std::int64_t, 1>::from("r", std::vector<std::int64_t>{0, 2}, space()),
                Array<int, 1>::from("c", std::vector<int>{0, 1}, space()),
                Array<double, 1>::from("v", std::vector<double>{1, 2}, space())};
  const std::string m = error_message([&] { linalg::csr_from_coo(bad, exec()); });
  EXPECT_CONTAINS(m, "entry 1 is (2, 1)");
  EXPECT_CONTAINS(m, "2 x 3");
  bad.val = Array<double, 1>::from("v", std::vector<double>{1}, space());
  EXPECT_CONTAINS(error_message([&] { linalg::csr_from_coo(bad, exec()); }), "hold 2, 2 and 1 entries");
}

TEST_P(CsrTest, ToOtherBackendsAndBack) {
  const HostCsr h = random_csr(40, 31, 0.2, 8);
  const CsrMatrix a = make(h, exec());
  const auto x = random_doubles(31, 9);
  std::vector<Exec> targets = cpu_execs();
  if (cuda_available()) targets.push_back(Exec::cuda());
  for (const Exec& e : targets) {
    const CsrMatrix b = a.to(e);
    EXPECT_EQ(b.exec().backend, e.backend);
    EXPECT_EQ(b.space(), e.space());
    EXPECT_NE(b.values_array().data(), a.values_array().data());  // a new allocation
    const CsrMatrix c = b.to(exec());
    EXPECT_EQ(c.row_offsets_array().to_vector(), h.off);
    EXPECT_EQ(c.col_indices_array().to_vector(), h.col);
    EXPECT_TRUE(same_bits(c.values_array().to_vector(), h.val));
    EXPECT_EQ(c.diagonal_positions().to_vector(), a.diagonal_positions().to_vector());
    auto xb = Array<double, 1>::from("x", x, e.space());
    Array<double, 1> yb("y", {40}, e.space());
    b.apply(xb, yb);
    std::vector<double> ref, scale;
    reference(h, x, std::vector<double>(40, 0.0), 1.0, 0.0, ref, scale);
    const auto got = yb.to_vector();
    for (index_t r = 0; r < 40; ++r)
      EXPECT_LE(std::abs(got[r] - ref[r]), kTol * scale[r] + 1e-300) << to_string(e.backend) << " row " << r;
  }
}

TEST_P(CsrTest, CopiesAreDeepAndMovesEmptyTheSource) {
  const HostCsr h = random_csr(10, 10, 0.4, 2);
  CsrMatrix a = make(h, exec());
  CsrMatrix b = a;
  EXPECT_NE(b.values_array().data(), a.values_array().data());
  Array<double, 1> shared = b.values_array();  // a shallow handle of b's values
  shared.fill(0.0);
  EXPECT_TRUE(same_bits(a.values_array().to_vector(), h.val));
  CsrMatrix c = std::move(a);
  EXPECT_EQ(a.rows(), 0);
  EXPECT_EQ(a.nnz(), 0);
  EXPECT_EQ(a.row_offsets().size(), 1);  // a valid empty matrix: check() and to() work
  EXPECT_NO_THROW(a.check());
  EXPECT_EQ(a.to(exec()).rows(), 0);
  EXPECT_TRUE(same_bits(c.values_array().to_vector(), h.val));
  b = c;
  EXPECT_TRUE(same_bits(b.values_array().to_vector(), h.val));
  auto x = Array<double, 1>::from("x", random_doubles(10, 3), space());
  Array<double, 1> y1("y1", {10}, space()), y2("y2", {10}, space());
  c.apply(x, y1);  // c owns GPU state now; b must keep working after c goes
  b = std::move(c);
  b.apply(x, y2);
  EXPECT_TRUE(same_bits(y1.to_vector(), y2.to_vector()));
}

TEST_P(CsrTest, ConstructorChecksSizes) {
  const Space s = space();
  auto off = [&](std::vector<std::int64_t> v) { return Array<std::int64_t, 1>::from("off", v, s); };
  auto col = [&](std::vector<int> v) { return Array<int, 1>::from("col", v, s); };
  auto val = [&](std::vector<double> v) { return Array<double, 1>::from("val", v, s); };
  EXPECT_CONTAINS(error_message([&] { CsrMatrix(3, 3, off({0, 1, 2}), col({0, 1}), val({1, 2}), exec()); }),
                  "row_offsets has 3 entries, but a matrix of 3 rows needs rows + 1 = 4");
  EXPECT_CONTAINS(error_message([&] { CsrMatrix(2, 3, off({0, 1, 2}), col({0, 1}), val({1}), exec()); }),
                  "col_indices has 2 entries but values has 1");
  EXPECT_CONTAINS(error_message([&] { CsrMatrix(2, 3, off({0, 1, 3}), col({0, 1}), val({1, 2}), exec()); }),
                  "row_offsets[2] is 3 but col_indices and values hold 2 entries");
  EXPECT_CONTAINS(error_message([&] { CsrMatrix(2, 3, off({1, 1, 2}), col({0, 1}), val({1, 2}), exec()); }),
                  "row_offsets[0] is 1, must be 0");
  if (cuda_available() && !on_gpu()) {
    auto device_off = Array<std::int64_t, 1>::from("off", std::vector<std::int64_t>{0, 0}, Space::Device);
    EXPECT_CONTAINS(error_message([&] { CsrMatrix(1, 3, device_off, col({}), val({}), exec()); }), "cannot read");
  }
}

TEST_P(CsrTest, CheckNamesTheBadRow) {
  const Space s = space();
  // check() is also run by the constructor in bounds-check builds: construct inside the lambda.
  auto check = [&](index_t rows, index_t cols, std::vector<std::int64_t> o, std::vector<int> c) {
    return error_message([&] {
      std::vector<double> v(c.size(), 1.0);
      CsrMatrix m(rows, cols, Array<std::int64_t, 1>::from("off", o, s), Array<int, 1>::from("col", c, s),
                  Array<double, 1>::from("val", v, s), exec());
      m.check();
    });
  };
  EXPECT_CONTAINS(check(3, 3, {0, 2, 1, 3}, {0, 1, 2}), "row 1: row_offsets decrease from 2 to 1");
  EXPECT_CONTAINS(check(2, 3, {0, 1, 2}, {0, 3}), "row 1: column 3 at position 1 is outside 0..2");
  EXPECT_CONTAINS(check(2, 3, {0, 1, 2}, {-1, 0}), "row 0: column -1 at position 0 is outside 0..2");
  EXPECT_CONTAINS(check(2, 3, {0, 1, 3}, {0, 2, 1}), "row 1: column 1 at position 2 follows column 2");
  EXPECT_CONTAINS(check(2, 3, {0, 2, 3}, {1, 1, 0}), "row 0: column 1 at position 1 repeats column 1");
  EXPECT_NO_THROW(make(random_csr(20, 30, 0.3, 1), exec()).check());
}

TEST_P(CsrTest, VectorsInTheWrongSpaceAreRefused) {
  if (!cuda_available()) GTEST_SKIP() << "skipped: no GPU (host and device memory cannot be told apart)";
  const CsrMatrix a = make(random_csr(4, 4, 0.5, 1), exec());
  const Space other = on_gpu() ? Space::Host : Space::Device;
  Array<double, 1> x("x", {4}, other), y("y", {4}, space());
  EXPECT_CONTAINS(error_message([&] { a.apply(x, y); }), std::string("x lives in ") + to_string(other) + " memory");
}

}  // namespace
}  // namespace tessera::test
