// The even-odd line products of the hexahedron line kernels (src/fem/operator/*.hpp):
// pair_table, LinePairs, pair_contract and LineHalves against the plain product, on the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "operator/kernels.hpp"
#include "tessera/core/exec.hpp"

namespace {
using namespace tessera::fem::interp_detail;

/// A random n x m table with T(n-1-k, m-1-o) = S T(k, o), stored at [k * m + o].
std::vector<double> mirrored_table(int n, int m, int S, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> T(n * m, 0.0);
  for (int k = 0; k < n; ++k)
    for (int o = 0; o < m; ++o) {
      const int kk = n - 1 - k, oo = m - 1 - o;
      if (kk * m + oo < k * m + o) T[k * m + o] = S * T[kk * m + oo];  // the mirror came first
      else if (kk == k && oo == o) T[k * m + o] = S > 0 ? u(rng) : 0.0;  // its own mirror
      else T[k * m + o] = u(rng);
    }
  return T;
}

/// line_product summing only the ceil(n / 2) input pairs of the line (pair_contract's K, as the
/// kernels with their sizes fixed at compile time call it), K chosen at run time.
template <int S, int MaxN, int K = 1>
void trimmed_product(const PairTable<MaxN>& P, const double* src, int ss, int n, double* dst, int ds, int m) {
  if constexpr (K <= (MaxN + 1) / 2) {
    if (line_pairs<MaxN>(n) == K) line_product<S, MaxN, K>(P, src, ss, n, dst, ds, m);
    else trimmed_product<S, MaxN, K + 1>(P, src, ss, n, dst, ds, m);
  }
}

/// Every table size up to the bound, both mirror signs, inputs with a stride and outputs with
/// another: the even-odd product equals the plain one to rounding (sums of at most 14 terms
/// of size 1: 1e-13 absolute is about 500 units in the last place).
template <int MaxN>
void expect_products_match() {
  std::mt19937 rng(7 + MaxN);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int S : {1, -1})
    for (int n = 1; n <= MaxN; ++n)
      for (int m = 1; m <= MaxN; ++m) {
        SCOPED_TRACE("bound " + std::to_string(MaxN) + " S " + std::to_string(S) + " n " + std::to_string(n) +
                     " m " + std::to_string(m));
        const std::vector<double> T = mirrored_table(n, m, S, rng);
        PairTable<MaxN> P;
        ASSERT_TRUE(mirror_symmetric([&](int k, int o) { return T[k * m + o]; }, n, m, S));
        pair_table<MaxN>(P, [&](int k, int o) { return T[k * m + o]; }, n, m, S);
        const int ss = 3, ds = 2;
        std::vector<double> src(n * ss), dst(m * ds + 1, -7.0);  // -7: written or not
        for (double& v : src) v = u(rng);
        // Exact (the compile-time-size kernels): the input pairs past n left out, not
        // multiplied by the table's zeros; the same result to rounding (the same sums)
        std::vector<double> exact(dst);
        if (S > 0) {
          line_product<1>(P, src.data(), ss, n, dst.data(), ds, m);
          trimmed_product<1, MaxN>(P, src.data(), ss, n, exact.data(), ds, m);
        } else {
          line_product<-1>(P, src.data(), ss, n, dst.data(), ds, m);
          trimmed_product<-1, MaxN>(P, src.data(), ss, n, exact.data(), ds, m);
        }
        for (int o = 0; o < m; ++o) {
          double ref = 0;
          for (int k = 0; k < n; ++k) ref += T[k * m + o] * src[k * ss];
          EXPECT_NEAR(dst[o * ds], ref, 1e-13) << "output " << o;
          EXPECT_NEAR(exact[o * ds], ref, 1e-13) << "output " << o << ", pairs past the line left out";
          EXPECT_EQ(dst[o * ds + 1], -7.0) << "written between the strided outputs";
          EXPECT_EQ(exact[o * ds + 1], -7.0) << "written between the strided outputs, pairs left out";
        }
        EXPECT_EQ(dst[m * ds], -7.0) << "written past the line";
        EXPECT_EQ(exact[m * ds], -7.0) << "written past the line, pairs left out";
      }
}

TEST(LinePairs, EvenOddProductsEqualThePlainProducts) {
  expect_products_match<4>();
  expect_products_match<8>();
  expect_products_match<13>();  // an odd bound: H = 7 with a middle entry of its own
  expect_products_match<14>();
}

TEST(LinePairs, PairsFromHalvesEqualPairsFromMemory) {
  // LinePairs::set from the halves of a product's outputs (what the kernels feed the next
  // product) gives the same pairs as loading the whole line, middle entry included.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int m = 1; m <= 8; ++m) {
    std::vector<double> v(m);
    for (double& x : v) x = u(rng);
    LinePairs<8> loaded, set;
    loaded.load(v.data(), 1, m);
    double lo[4] = {}, hi[4] = {};
    for (int o = 0; 2 * o < m; ++o) {
      lo[o] = v[o];
      hi[o] = v[m - 1 - o];
    }
    set.set(lo, hi);
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(set.e[k], loaded.e[k]) << "m " << m << " k " << k;
      EXPECT_EQ(set.o[k], loaded.o[k]) << "m " << m << " k " << k;
    }
  }
}

TEST(LinePairs, RejectsATableThatIsNotMirrorSymmetric) {
  // mirror_symmetric (the Interpolator's set-up check) detects a deviation of 1e-6 in a table
  // of entries up to 1, and a line kernel launch for tables marked asymmetric stops with an error.
  std::mt19937 rng(11);
  std::vector<double> T = mirrored_table(5, 6, 1, rng);
  const auto table = [&](int k, int o) { return T[k * 6 + o]; };
  EXPECT_TRUE(mirror_symmetric(table, 5, 6, 1));
  EXPECT_FALSE(mirror_symmetric(table, 5, 6, -1)) << "the wrong mirror sign";
  T[1 * 6 + 2] += 1e-6;  // breaks T(3, 3) = T(1, 2)
  EXPECT_FALSE(mirror_symmetric(table, 5, 6, 1));
  Args a;
  a.nd1 = 5;
  a.nq1 = 6;
  a.mirror_symmetric = false;
  LineTables<6> t;
  try {
    fill_line_tables(t, a);
    FAIL() << "no error for tables that are not mirror-symmetric";
  } catch (const tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not mirror-symmetric"), std::string::npos) << e.what();
  }
}
}  // namespace

TEST(LinePlanes, YLinesOfT1FallEvenlyOverTheBanks) {
  // line_plane(n1, m1): T1's plane stride. The y lines' threads (qz, i), qz < m1, i < n1, touch
  // T1 at qz * stride + i, and a bank holds one double in 16: a stride is fair when no bank
  // takes more than ceil(m1 n1 / 16) of those entries (n1 n1 = 16 at p = 3 put all five qz in
  // one bank). line_plane must pad by less than 16, fit the m1 line_row(m1) doubles per plane
  // that the diffusion kernels lend T1 (or stay n1 n1), and be fair wherever a fair stride
  // below n1 n1 + 16 fits.
  const auto fair = [](int n1, int m1, int s) {
    int per_bank[16] = {};
    for (int qz = 0; qz < m1; ++qz)
      for (int i = 0; i < n1; ++i) ++per_bank[(qz * s + i) % 16];
    for (int b = 0; b < 16; ++b)
      if (per_bank[b] > (m1 * n1 + 15) / 16) return false;
    return true;
  };
  int unfair_before = 0;
  for (int n1 = 2; n1 <= 17; ++n1)
    for (int m1 = n1 - 1; m1 <= n1 + 2; ++m1) {
      const int s = line_plane(n1, m1), n2 = n1 * n1, room = m1 * line_row(m1);
      SCOPED_TRACE(testing::Message() << "n1 " << n1 << ", m1 " << m1 << ", stride " << s);
      EXPECT_GE(s, n2);
      EXPECT_LT(s, n2 + 16);
      if (s != n2) {
        EXPECT_LE(s, room);
      }
      bool possible = false;
      for (int t = n2; t < n2 + 16; ++t) possible = possible || (t <= room && fair(n1, m1, t));
      if (possible) {
        EXPECT_TRUE(fair(n1, m1, s));
      }
      unfair_before += !fair(n1, m1, n2);
    }
  EXPECT_GT(unfair_before, 20) << "the unpadded planes were unfair for many sizes";
  EXPECT_FALSE(fair(4, 5, 16));  // p = 3, q = p + 2: the case that measured 1.10x for BP1
  EXPECT_TRUE(fair(4, 5, line_plane(4, 5)));
}

/// One access of a line stage: the threads (y, x) with y < ny, x < nx each touch the double at
/// `at(y, x)` of their item's buffers.
struct Access {
  int ny, nx;
  std::function<long(int, int)> at;
};

/// Shared-memory wavefronts of `accesses` for a block of `items` items, each of T^2 threads
/// (y, x) laid one after the other. 8-byte accesses are served per half warp: each access
/// costs, per 16 lanes, the most distinct doubles that fall in one of the 16 eight-byte banks.
/// Item l's buffers start (l skew mod 16) doubles into its region; regions are 128-byte
/// multiples apart (TeamParams), here 4096 doubles.
long wavefronts(int T, int items, int skew, const std::vector<Access>& accesses) {
  const int per = T * T;
  long total = 0;
  for (const Access& s : accesses)
    for (int first = 0; first < items * per; first += 16) {
      std::vector<long> seen[16];
      int most = 0;
      for (int t = first; t < std::min(first + 16, items * per); ++t) {
        const int l = t / per, y = (t % per) / T, x = t % T;
        if (y >= s.ny || x >= s.nx) continue;
        const long a = 4096L * l + (l * skew) % 16 + s.at(y, x);
        std::vector<long>& b = seen[a % 16];
        if (std::find(b.begin(), b.end(), a) == b.end()) b.push_back(a);
        most = std::max(most, static_cast<int>(b.size()));
      }
      total += most;
    }
  return total;
}

/// The accesses of `count` lines along `step` from `start(y, x)` (a line product's loads or
/// stores), appended to `to`.
void add_lines(std::vector<Access>& to, int ny, int nx, int count, int step, std::function<long(int, int)> start) {
  for (int k = 0; k < count; ++k) to.push_back({ny, nx, [=](int y, int x) { return start(y, x) + long(k) * step; }});
}

/// The z and y stages of lines_forward_zy and lines_transpose_yz (u at 0, T1 at t1, T2 at t2 in
/// rows of R and planes of P2), forward or transposed.
void add_zy(std::vector<Access>& to, int n1, int m1, long u, long t1, long t2, int R, int P2, bool transposed) {
  const int P1 = line_plane(n1, m1), n2 = n1 * n1;
  if (!transposed) {
    add_lines(to, n1, n1, n1, n2, [=](int j, int i) { return u + j * n1 + i; });
    add_lines(to, n1, n1, m1, P1, [=](int j, int i) { return t1 + j * n1 + i; });
    add_lines(to, m1, n1, n1, n1, [=](int qz, int i) { return t1 + qz * P1 + i; });
    add_lines(to, m1, n1, m1, R, [=](int qz, int i) { return t2 + qz * P2 + i; });
  } else {
    add_lines(to, m1, n1, m1, R, [=](int qz, int i) { return t2 + qz * P2 + i; });
    add_lines(to, m1, n1, n1, n1, [=](int qz, int i) { return t1 + qz * P1 + i; });
    add_lines(to, n1, n1, m1, P1, [=](int j, int i) { return t1 + j * n1 + i; });
  }
}

/// hex_mass_lines's five line stages for one step (layout L).
long mass_line_wavefronts(int n1, int m1, int items, MassLinesLayout L) {
  const long t1 = 2L * n1 * n1 * n1 + 2, t2 = t1 + m1 * line_plane(n1, m1) + 2;
  std::vector<Access> s;
  add_zy(s, n1, m1, 0, t1, t2, L.row, L.plane, false);
  for (int pass = 0; pass < 2; ++pass)  // the x stage reads and writes T2's rows
    add_lines(s, m1, m1, n1, 1, [=](int qz, int qy) { return t2 + qz * L.plane + qy * L.row; });
  add_zy(s, n1, m1, 0, t1, t2, L.row, L.plane, true);
  return wavefronts(std::max(n1, m1), items, L.skew, s);
}

/// hex_diffusion_lines's stages with Gauss points and separate T2 (fewer than 6 points per
/// direction) for one step: z, y, x (values and x derivative), the y and z derivative lines,
/// the point factors (read and write of the three components), the transposed derivative
/// lines, the transposed x, y and z.
long diffusion_line_wavefronts(int n1, int m1, int items, int skew) {
  const int R = line_row(m1), Rn = line_row(n1), np = m1 * m1 * R;
  const long X = 2L * n1 * n1 * n1 + 2, G = X + np + 2, T2 = G + 3L * np + 2;
  std::vector<Access> s;
  add_zy(s, n1, m1, 0, X, T2, Rn, m1 * Rn, false);
  const auto row = [=](long buf) { return [=](int qz, int qy) { return buf + (qz * m1 + qy) * long(R); }; };
  add_lines(s, m1, m1, n1, 1, [=](int qz, int qy) { return T2 + (qz * m1 + qy) * long(Rn); });
  add_lines(s, m1, m1, m1, 1, row(X));
  add_lines(s, m1, m1, m1, 1, row(G));
  for (int pass = 0; pass < 2; ++pass) {  // forward (from X) and transposed (in place)
    for (const long from : {pass == 0 ? X : G + np, G + np})
      add_lines(s, m1, m1, m1, R, [=](int y, int x) { return from + y * long(m1) * R + x; });
    for (const long from : {pass == 0 ? X : G + 2L * np, G + 2L * np})
      add_lines(s, m1, m1, m1, m1 * R, [=](int y, int x) { return from + y * long(R) + x; });
    if (pass == 0)
      for (int rw = 0; rw < 2; ++rw)
        for (int c = 0; c < 3; ++c)
          add_lines(s, m1, m1, m1, m1 * R, [=](int qy, int qx) { return G + c * long(np) + qy * R + qx; });
  }
  for (int c = 0; c < 3; ++c) add_lines(s, m1, m1, m1, 1, row(G + c * long(np)));
  add_lines(s, m1, m1, n1, 1, [=](int qz, int qy) { return T2 + (qz * m1 + qy) * long(Rn); });
  add_zy(s, n1, m1, 0, X, T2, Rn, m1 * Rn, true);
  return wavefronts(std::max(n1, m1), items, skew, s);
}

/// hex_diffusion_lines's stages with the points at the nodes (m1 = n1, the gathered values the
/// point values, in rows of U = hex_bound_for(m1) + 1) for one step: the derivative lines along
/// x, y and z into G (3, m1, m1, line_row(m1)), the point factors, the transposed derivative
/// lines in place, and the sum of the three at each point.
long nodal_diffusion_line_wavefronts(int m1, int items, int skew) {
  const int R = line_row(m1), np = m1 * m1 * R, U = hex_bound_for(m1) + 1;
  const long G = 2L * m1 * m1 * U + 2;
  // direction d's lines in data at `from` with rows of r (derivative_line's map of threads to
  // lines; x lines: (qz, qy) = (x, y)), and component c's column (qy, qx) of G
  const auto line = [=](int d, long from, int r) {
    return [=](int y, int x) { return from + (d == 0 ? (x * m1 + y) * r : d == 1 ? y * m1 * r + x : y * r + x); };
  };
  const auto step = [=](int d, int r) { return d == 0 ? 1 : d == 1 ? r : m1 * r; };
  const auto column = [=](int c) { return [=](int qy, int qx) { return G + c * long(np) + qy * R + qx; }; };
  std::vector<Access> s;
  for (int d = 0; d < 3; ++d) {  // forward: from the gathered values into G
    add_lines(s, m1, m1, m1, step(d, U), line(d, 0, U));
    add_lines(s, m1, m1, m1, step(d, R), line(d, G + d * long(np), R));
  }
  for (int rw = 0; rw < 2; ++rw)  // the point factors: threads (qy, qx) down qz, three components
    for (int c = 0; c < 3; ++c) add_lines(s, m1, m1, m1, m1 * R, column(c));
  for (int d = 0; d < 3; ++d)  // transposed, in place
    for (int rw = 0; rw < 2; ++rw)
      add_lines(s, m1, m1, m1, step(d, R), line(d, G + d * long(np), R));
  for (int c = 0; c < 3; ++c) add_lines(s, m1, m1, m1, m1 * R, column(c));  // the sum
  return wavefronts(m1, items, skew, s);
}

/// diffusion_lines_skew: where it skews, the count falls at every block of 2..8 items, by at
/// least 7% from 3 (the rules give 4 stored, 5 on the fly at p = 3: 1364 -> 1262, 1664 -> 1512).
/// With the points at the nodes (p = 4, bound 6: rows of 7) by at least 5% from 2 items (the
/// rule's 5 on the fly: 1445 -> 1230).
TEST(DiffusionLinesSkew, TakesFewerSharedWavefronts) {
  int skewed = 0;
  for (int n1 = 2; n1 <= 6; ++n1)
    for (int m1 = n1; m1 <= n1 + 2 && m1 < 6; ++m1) {
      EXPECT_EQ(diffusion_lines_skew(n1, m1, false, false), 0) << "the run-time sizes have no skew";
      const int skew = diffusion_lines_skew(n1, m1, true, false);
      if (skew == 0) continue;
      ++skewed;
      for (int l = 0; l < 16; ++l) EXPECT_LE((l * skew) % 16, item_skew_room(skew));
      for (int items = 2; items <= 8; ++items) {
        const long before = diffusion_line_wavefronts(n1, m1, items, 0),
                   after = diffusion_line_wavefronts(n1, m1, items, skew);
        SCOPED_TRACE(testing::Message() << "n1 " << n1 << ", m1 " << m1 << ", " << items << " items: " << before
                                        << " -> " << after);
        EXPECT_LT(after, before);
        if (items >= 3) {
          EXPECT_LE(after * 100, before * 93);
        }
      }
    }
  EXPECT_EQ(skewed, 1) << "p = 3 with Gauss points";
  int nodal_skewed = 0;
  for (int m1 = 2; m1 <= 12; ++m1) {
    EXPECT_EQ(diffusion_lines_skew(m1, m1, false, true), 0) << "the run-time sizes have no skew";
    const int skew = diffusion_lines_skew(m1, m1, true, true);
    if (skew == 0) continue;
    ++nodal_skewed;
    for (int items = 2; items <= 8; ++items) {
      const long before = nodal_diffusion_line_wavefronts(m1, items, 0),
                 after = nodal_diffusion_line_wavefronts(m1, items, skew);
      SCOPED_TRACE(testing::Message() << "nodal m1 " << m1 << ", " << items << " items: " << before << " -> " << after);
      EXPECT_LE(after * 100, before * 95);
    }
  }
  EXPECT_EQ(nodal_skewed, 1) << "p = 4 with the points at the nodes";
  // no even skew does as well at p = 3 (what the odd offsets are for)
  for (int even = 0; even < 16; even += 2)
    EXPECT_GT(diffusion_line_wavefronts(4, 5, 4, even), diffusion_line_wavefronts(4, 5, 4, 9)) << even;
}

/// mass_lines_layout: where it departs from the plain layout (rows of line_row(n1), planes of
/// m1 rows, no skew; the run-time sizes always, the compile-time sizes mostly) it takes fewer
/// wavefronts in the count above at every block of 2..8 items (the rules give 5 at p = 3, 7 at
/// p = 4), it fits the buffer the kernel carves, and it keeps the gather's 16-byte alignment.
TEST(MassLinesLayout, TakesFewerSharedWavefrontsThanPlainRows) {
  int departs = 0;
  for (int n1 = 2; n1 <= 16; ++n1)
    for (int m1 = n1 - 1; m1 <= n1 + 2; ++m1)
      for (const bool on_the_fly : {false, true}) {
        const MassLinesLayout L = mass_lines_layout(n1, m1, true, on_the_fly),
                              plain = mass_lines_layout(n1, m1, false, on_the_fly);
        SCOPED_TRACE(testing::Message() << "n1 " << n1 << ", m1 " << m1 << (on_the_fly ? ", on the fly" : ", stored")
                                        << ": rows " << L.row << ", planes " << L.plane << ", skew " << L.skew);
        EXPECT_EQ(plain.row, line_row(n1));
        EXPECT_EQ(plain.plane, m1 * line_row(n1));
        EXPECT_EQ(plain.skew, 0);
        EXPECT_GE(L.row, n1);
        EXPECT_GE(L.plane, m1 * L.row);
        EXPECT_EQ(L.skew % 2, 0);
        for (int l = 0; l < 16; ++l) EXPECT_LE((l * L.skew) % 16, item_skew_room(L.skew));
        if (L.row == plain.row && L.plane == plain.plane && L.skew == 0) continue;
        ++departs;
        for (int items = 2; items <= 8; ++items) {
          const long before = mass_line_wavefronts(n1, m1, items, plain), after = mass_line_wavefronts(n1, m1, items, L);
          SCOPED_TRACE(testing::Message() << items << " items: " << before << " -> " << after);
          EXPECT_LT(after, before);
        }
      }
  EXPECT_EQ(departs, 3) << "p = 3 stored and on the fly, p = 4 on the fly";
  // p = 3 at the rule's 5 items per block: the count that picked it (444 -> 384)
  EXPECT_LT(mass_line_wavefronts(4, 5, 5, mass_lines_layout(4, 5, true, false)),
            mass_line_wavefronts(4, 5, 5, mass_lines_layout(4, 5, false, false)) * 9 / 10);
}

/// The kernels with their sizes fixed at compile time run each stage as one pass over the
/// item's threads (item_lines<true>), which needs max(n1, m1) threads per item in x and y:
/// a launch with fewer is refused with the sizes named, before anything runs.
TEST(LaunchShape, CompileTimeSizeKernelsRefuseTooFewThreadsPerItem) {
  using tessera::fem::Geometry;
  ASSERT_TRUE(operator_exact_sizes(tessera::fem::OperatorKernelChoice{}, Geometry::Hexahedron, false, 4, 5, false))
      << "q = p + 2 mass at p = 3 no longer takes a compile-time-size kernel";
  Args a;
  a.dim = a.sdim = 3;
  a.nd1 = 4;
  a.nq1 = 5;
  a.nd = 64;
  a.nq = 125;
  a.on_the_fly = false;
  for (const tessera::Dim3 threads : {tessera::Dim3{4, 5, 1}, tessera::Dim3{5, 4, 1}}) {
    tessera::Teams t;
    t.items = 1;
    t.threads = threads;
    try {
      launch_operator_exact(tessera::fem::OperatorKernelChoice{}, "test/launch-shape", tessera::Exec::serial(), t, false, a);
      ADD_FAILURE() << "a launch with " << threads.x << " x " << threads.y << " threads per item was accepted";
    } catch (const tessera::Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("needs at least 5 x 5 threads per element"), std::string::npos) << what;
      EXPECT_NE(what.find("4 nodes and 5 points per direction"), std::string::npos) << what;
    }
  }
}
