// Team launches: items per block, thread loops in x/y/z, shared memory (common and per
// item), partial last blocks, large shared memory, and launch validation.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "test_backends.hpp"
#include "tessera/core/team_matmul.hpp"

using namespace tessera;
using tessera::test::error_message;

namespace team_kernels {

/// Shapes of one sweep launch.
struct SweepShape {
  int table_len;   // T: entries of the common table
  int nz, ny, nx;  // per-item buffer extents (larger than the thread extents: loops stride)
  int tx, ty;      // thread extents in x and y (for the thread's linear id)
  int cover_len;   // M: length of the item_threads loop
};

/// The kernel of the sweep test. Per block: load table -> common (block_threads), sync;
/// per valid item: fill buf(z, y, x) from in(item) and the table with thread loops and
/// tag(k) with an item_threads loop, sync; then one thread sums buf and tag into out(item),
/// records the block layout in info(item, .), and item_threads writes cover(item, m).
void sweep(const Exec& exec, const Teams& t, const SweepShape& s, View<const double, 1> table,
           View<const double, 1> in, View<double, 1> out, View<int, 2> info, View<int, 2> cover) {
  const int T = s.table_len, nz = s.nz, ny = s.ny, nx = s.nx, tx = s.tx, ty = s.ty, M = s.cover_len;
  launch("tests/team_sweep", exec, t, TESSERA_LAMBDA(TeamContext & ctx) {
    auto common = ctx.shared_common<double>(T);
    auto tag = ctx.shared_item<int>(3);  // 12 bytes: the next buffer starts 16-byte aligned
    auto buf = ctx.shared_item<double>(nz, ny, nx);
    for (int k : ctx.block_threads(T)) common(k) = table(k);
    ctx.sync();
    if (ctx.valid()) {
      const double u = in(ctx.item());
      for (int z : ctx.threads_z(nz))
        for (int y : ctx.threads_y(ny))
          for (int x : ctx.threads_x(nx)) buf(z, y, x) = u * common((x + 2 * y + 3 * z) % T) + (x - 2 * y + 3 * z);
      for (int k : ctx.item_threads(3)) tag(k) = 1000 * (k + 1);
    }
    ctx.sync();
    if (ctx.valid()) {
      const index_t item = ctx.item();
      if (ctx.thread_x() == 0 && ctx.thread_y() == 0 && ctx.thread_z() == 0) {
        double sum = tag(0) + tag(1) + tag(2);
        for (int z = 0; z < nz; ++z)
          for (int y = 0; y < ny; ++y)
            for (int x = 0; x < nx; ++x) sum += buf(z, y, x);
        out(item) = sum;
        info(item, 0) = static_cast<int>(ctx.block());
        info(item, 1) = ctx.local_item();
        info(item, 2) = ctx.items_per_block();
        info(item, 3) = ctx.threads_per_item();
        info(item, 4) = static_cast<int>(ctx.num_items());
      }
      const int r = ctx.thread_x() + tx * (ctx.thread_y() + ty * ctx.thread_z());
      for (int m : ctx.item_threads(M)) cover(item, m) = 1 + r;
    }
  });
}

/// One big common buffer of `bytes`, filled per block, sampled by each item.
void big_common(const Exec& exec, index_t items, int ipb, std::size_t bytes, View<double, 1> out) {
  const int n = static_cast<int>(bytes / sizeof(double));
  Teams t;
  t.items = items;
  t.items_per_block = ipb;
  t.threads = {64, 1, 1};
  t.shared_common = bytes;
  launch("tests/team_big_shared", exec, t, TESSERA_LAMBDA(TeamContext & ctx) {
    auto big = ctx.shared_common<double>(n);
    for (int k : ctx.block_threads(n)) big(k) = static_cast<double>(k % 1000) + 1000.0 * static_cast<double>(ctx.block());
    ctx.sync();
    if (ctx.valid() && ctx.thread_x() == 0) {
      double s = 0;
      for (int q = 0; q < 8; ++q) s += big(static_cast<int>((ctx.item() * 7919 + q * 1009 + (q == 7 ? n - 1 : 0)) % n));
      out(ctx.item()) = s;
    }
  });
}

/// Carves `per_item_doubles` doubles per item and `common_doubles` common doubles.
void carve(const Exec& exec, const Teams& t, int per_item_doubles, int common_doubles, View<double, 1> out) {
  launch("tests/team_carve", exec, t, TESSERA_LAMBDA(TeamContext & ctx) {
    auto c = ctx.shared_common<double>(common_doubles);
    auto b = ctx.shared_item<double>(per_item_doubles);
    if (ctx.valid()) {
      for (int i : ctx.threads_x(per_item_doubles)) b(i) = 1.0;
      for (int i : ctx.block_threads(common_doubles)) c(i) = 1.0;
      out(ctx.item()) = 1.0;
    }
  });
}

void count_items(const Exec& exec, const Teams& t, View<int, 1> calls) {
  launch("tests/team_count", exec, t, TESSERA_LAMBDA(TeamContext & ctx) {
    if (ctx.thread_x() == 0 && ctx.thread_y() == 0 && ctx.thread_z() == 0) test::atomic_increment(&calls(0));
  });
}

/// 24 running sums kept live across a loop (about 48 registers), for thread x.
TESSERA_HOST_DEVICE inline double many_sums(int x) {
  double s[24];
  for (int k = 0; k < 24; ++k) s[k] = x + k;
  for (int it = 0; it < 8; ++it)
    for (int k = 0; k < 24; ++k) s[k] = s[k] * 0.5 + s[(k + 1) % 24];
  double t = 0;
  for (int k = 0; k < 24; ++k) t += s[k] * (k + 1);
  return t;
}

/// many_sums per thread: with Cap > 0 the functor declares max_registers = Cap, with 0 none.
template <int Cap>
struct ManySums {
  static constexpr int max_registers = Cap;
  View<double, 1> out;
  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const {
    if (!ctx.valid()) return;  // the last block's second item (no barrier in this body)
    for (int x : ctx.threads_x(32)) out(ctx.item() * 32 + x) = many_sums(x);
  }
};

/// An item region larger than shared memory (items_may_spill): item i fills its n doubles with
/// v(i, k) = 1000 i + k + common(k % 32); after the barrier thread x sums the entries
/// k = x + 1, x + 1 + tx, ... (written by its neighbour: the barrier and the region are shared
/// by the item's threads) into out(i, x).
struct SpillingSums {
  static constexpr bool items_may_spill = true;
  View<double, 2> out;
  int n;
  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const {
    auto common = ctx.shared_common<double>(32);
    auto buf = ctx.shared_item<double>(n);
    for (int k : ctx.block_threads(32)) common(k) = 0.5 * k;
    ctx.sync();
    if (ctx.valid())
      for (int k : ctx.item_threads(n)) buf(k) = 1000.0 * ctx.item() + k + common(k % 32);
    ctx.sync();
    if (ctx.valid())
      for (int x : ctx.threads_x(static_cast<int>(out.extent(1)))) {
        double s = 0;
        for (int k = x + 1; k < n; k += static_cast<int>(out.extent(1))) s += buf(k);
        out(ctx.item(), x) = s;
      }
  }
};

/// A functor compiled for the GPU alone in CUDA units (gpu_only): out(i) = 2 i + 1.
struct GpuOnlyFill {
  static constexpr bool gpu_only = true;
  View<double, 1> out;
  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const {
    if (!ctx.valid()) return;
    for (int x : ctx.threads_x(1)) out(ctx.item() + x) = 2.0 * static_cast<double>(ctx.item()) + 1;
  }
};

/// team_matmul in a team launch: per item, out(item, o, c) = sum_k A(o, k) in(item, k, c) with
/// A(o, k) = a[o * so + k * sk], in(item, k, c) at in[item * per_item + k * ks + c * cs], the
/// input copied to shared memory first; results through a lambda (odd columns) or RowsOut
/// (out rows of o_stride, even columns: pairs).
template <int MaxK>
void matmul(const Exec& exec, const Teams& t, int no, int nk, int ncols, int so, int sk, int ks, int cs,
            int o_stride, View<const double, 1> a, View<const double, 1> in, View<double, 1> out) {
  const int per_item = nk * ks + ncols * cs;  // covers every entry read
  const int per_out = no * o_stride;
  launch("tests/team_matmul", exec, t, TESSERA_LAMBDA(TeamContext & ctx) {
    auto buf = ctx.shared_item<double>(per_item);
    auto res = ctx.shared_item<double>(per_out);
    TeamMatrix<MaxK> A;
    A.load(ctx, a.data(), no, nk, so, sk);
    if (ctx.valid())
      for (int i : ctx.item_threads(per_item)) buf(i) = in(ctx.item() * per_item + i);
    ctx.sync();
    if (ctx.valid()) {
      const auto col = [&](int c) { return &buf(c * cs); };
      if (ncols % 2 == 1) {
        double* o = out.data() + ctx.item() * per_out;
        team_matmul(ctx, A, ncols, ks, col, [&](int r, int c, double v) { o[r * o_stride + c] = v; });
      } else {
        team_matmul(ctx, A, ncols, ks, col, RowsOut{res.data(), o_stride});
      }
    }
    ctx.sync();
    if (ctx.valid() && ncols % 2 == 0)
      for (int i : ctx.item_threads(per_out)) out(ctx.item() * per_out + i) = res(i);
  });
}

}  // namespace team_kernels

namespace {

double big_common_expected(index_t item, int ipb, int n) {
  const double block = static_cast<double>(item / ipb);
  double s = 0;
  for (int q = 0; q < 8; ++q) {
    const int k = static_cast<int>((item * 7919 + q * 1009 + (q == 7 ? n - 1 : 0)) % n);
    s += static_cast<double>(k % 1000) + 1000.0 * block;
  }
  return s;
}

}  // namespace

class TeamTest : public test::BackendTest {};

TEST_P(TeamTest, SweepItemsPerBlockThreadsAndPartialBlocks) {
  // {1, 2, 65}: more than 64 threads in z per item (a CUDA block's z extent is at most 64).
  const Dim3 shapes[] = {{4, 1, 1}, {3, 5, 1}, {2, 3, 4}, {1, 2, 65}};
  const int ipbs[] = {1, 2, 3, 5, 8, 16, 32};
  const index_t item_counts[] = {1, 7, 100, 1001};
  int config = 0, refused = 0;
  for (const Dim3& th : shapes)
    for (int ipb : ipbs)
      for (index_t n : item_counts) {
        if (th.x * th.y * th.z * ipb > 1024) continue;  // over a GPU block's limit (tested below)
        ++config;
        SCOPED_TRACE(testing::Message() << "threads " << th.x << "x" << th.y << "x" << th.z << ", items_per_block "
                                        << ipb << ", items " << n);
        team_kernels::SweepShape s;
        s.table_len = 37;
        s.nz = th.z + 1;
        s.ny = th.y + 2;
        s.nx = th.x + 3;
        s.tx = th.x;
        s.ty = th.y;
        const int P = th.x * th.y * th.z;
        s.cover_len = 2 * P + 3;
        const int salt = config % 11;  // a table that differs between launches: stale shared data shows
        std::vector<double> htable(static_cast<std::size_t>(s.table_len));
        for (int k = 0; k < s.table_len; ++k) htable[static_cast<std::size_t>(k)] = k + salt;
        const auto hin_i = test::random_ints(static_cast<std::size_t>(n), 100 + static_cast<std::uint64_t>(config), -50, 50);
        const std::vector<double> hin(hin_i.begin(), hin_i.end());

        auto table = Array<double>::from("table", htable, space());
        auto in = Array<double>::from("in", hin, space());
        // One block's worth of padding after the items: invalid slots must not write there.
        const index_t padded = n + ipb;
        auto out = test::filled<double, 1>("out", {padded}, space(), test::kNaN);
        auto info = test::filled<int, 2>("info", {padded, 5}, space(), test::kPoisonInt);
        auto cover = test::filled<int, 2>("cover", {padded, s.cover_len}, space(), test::kPoisonInt);

        Teams t;
        t.items = n;
        t.items_per_block = ipb;
        t.threads = th;
        t.shared_common = SharedLayout().add<double>(s.table_len).bytes();
        t.shared_per_item = SharedLayout().add<int>(3).add<double>(s.nz * s.ny * s.nx).bytes();
        try {
          team_kernels::sweep(exec(), t, s, table.cview(), in.cview(), out.view(), info.view(), cover.view());
        } catch (const Error& e) {
          // A kernel that needs many registers (this one in bounds-check builds) may allow
          // fewer than 1024 threads per block; the launch must then refuse clearly. 256
          // always fit (255 registers x 256 threads = one SM's 64K registers).
          const std::string what = e.what();
          if (on_gpu() && P * ipb > 256 && what.find("exceed this kernel's limit") != std::string::npos) {
            ++refused;
            continue;
          }
          ADD_FAILURE() << what;  // inside the trace: names the configuration
          return;
        }

        const auto hout = out.to_vector();
        const auto hinfo = info.to_vector();
        const auto hcover = cover.to_vector();
        int wrong_out = 0, wrong_info = 0, wrong_cover = 0, padding_written = 0;
        for (index_t item = 0; item < padded; ++item) {
          const std::size_t it = static_cast<std::size_t>(item);
          if (item >= n) {  // past the last item: still poisoned
            padding_written += !std::isnan(hout[it]);
            for (int c = 0; c < 5; ++c) padding_written += hinfo[it * 5 + c] != test::kPoisonInt;
            for (int m = 0; m < s.cover_len; ++m)
              padding_written += hcover[it * s.cover_len + m] != test::kPoisonInt;
            continue;
          }
          // Host reference: all values are small integers, so every sum is exact in any order.
          double want = 1000.0 + 2000.0 + 3000.0;
          for (int z = 0; z < s.nz; ++z)
            for (int y = 0; y < s.ny; ++y)
              for (int x = 0; x < s.nx; ++x)
                want += hin[it] * htable[static_cast<std::size_t>((x + 2 * y + 3 * z) % s.table_len)] + (x - 2 * y + 3 * z);
          wrong_out += hout[it] != want;  // NaN (never written) counts as wrong
          const int want_info[5] = {static_cast<int>(item / ipb), static_cast<int>(item % ipb), ipb, P, static_cast<int>(n)};
          for (int c = 0; c < 5; ++c) wrong_info += hinfo[it * 5 + c] != want_info[c];
          // item_threads: each m handled by exactly one thread of the item, thread m % P
          // on the GPU; on the CPU one thread (id 0) runs every loop.
          for (int m = 0; m < s.cover_len; ++m) {
            const int owner = on_gpu() ? m % P : 0;
            wrong_cover += hcover[it * s.cover_len + m] != 1 + owner;
          }
        }
        EXPECT_EQ(wrong_out, 0);
        EXPECT_EQ(wrong_info, 0);
        EXPECT_EQ(wrong_cover, 0);
        EXPECT_EQ(padding_written, 0);
        if (wrong_out + wrong_info + wrong_cover + padding_written > 0) return;  // one failing configuration is enough
      }
  if (refused > 0)
    std::printf("note: %d of %d configurations were over this kernel's threads-per-block limit\n", refused, config);
}

TEST_P(TeamTest, SmallMatrixProductsMatchTheHost) {
  // team_matmul on random data: A of several shapes up to MaxK x MaxK (8 and 16; on the GPU
  // the tensor-core path with two warps per item), columns of `in` strided both ways, odd and
  // even column counts (a lambda emit and RowsOut's paired stores), 7 items in blocks of 3 (a
  // partial last block). The host sums the same products in the same order of k; tensor
  // cores accumulate in another order, so the tolerance is 1e-14 of the sum of |terms|.
  struct Case {
    int maxk, no, nk, ncols, so, sk, ks, cs, o_stride;
  };
  for (const Case& k : {Case{8, 8, 7, 49, 1, 8, 49, 1, 56}, Case{8, 5, 8, 20, 9, 1, 1, 11, 24},
                        Case{16, 16, 13, 37, 1, 16, 1, 13, 37}, Case{16, 9, 16, 3, 17, 1, 3, 1, 3},
                        Case{16, 14, 15, 64, 15, 1, 64, 1, 72}}) {
    SCOPED_TRACE("MaxK " + std::to_string(k.maxk) + " A " + std::to_string(k.no) + "x" + std::to_string(k.nk) +
                 ", " + std::to_string(k.ncols) + " columns");
    const int items = 7;
    const int per_item = k.nk * k.ks + k.ncols * k.cs;
    const int per_out = k.no * k.o_stride;
    const auto ah = test::random_doubles(std::size_t(k.no * k.so + k.nk * k.sk), 21);
    const auto inh = test::random_doubles(std::size_t(items * per_item), 22);
    auto a = Array<double, 1>::from("a", std::span<const double>(ah), exec().space());
    auto in = Array<double, 1>::from("in", std::span<const double>(inh), exec().space());
    Array<double, 1> out("out", {index_t(items * per_out)}, exec().space());
    out.fill(std::nan(""));
    const Teams t{items, 3, {64, 1, 1}, SharedLayout().add<double>(per_item).add<double>(per_out).bytes(), 0};
    if (k.maxk == 8)
      team_kernels::matmul<8>(exec(), t, k.no, k.nk, k.ncols, k.so, k.sk, k.ks, k.cs, k.o_stride, a.cview(),
                              in.cview(), out.view());
    else
      team_kernels::matmul<16>(exec(), t, k.no, k.nk, k.ncols, k.so, k.sk, k.ks, k.cs, k.o_stride, a.cview(),
                               in.cview(), out.view());
    const auto got = out.to_host();
    for (int it = 0; it < items; ++it)
      for (int o = 0; o < k.no; ++o)
        for (int c = 0; c < k.ncols; ++c) {
          double s = 0, mag = 0;
          for (int kk = 0; kk < k.nk; ++kk) {
            const double term = ah[std::size_t(o * k.so + kk * k.sk)] * inh[std::size_t(it * per_item + kk * k.ks + c * k.cs)];
            s += term;
            mag += std::abs(term);
          }
          ASSERT_NEAR(got.data()[it * per_out + o * k.o_stride + c], s, 1e-14 * mag + 1e-300)
              << "item " << it << " (" << o << ", " << c << ")";
        }
  }
}

TEST_P(TeamTest, LargeCommonSharedMemory) {
  // CUDA: just under the opt-in limit (above the 48 KB default, so the launch must raise
  // the kernel's limit); CPU: a ~200 KB arena.
  const std::size_t bytes = on_gpu() ? current_device().shared_per_block_optin - 1024 : 200 * 1024;
  if (on_gpu()) {
    ASSERT_GT(bytes, std::size_t{48 * 1024});
  }
  const int n = static_cast<int>(bytes / sizeof(double));
  for (int ipb : {1, 3}) {
    const index_t items = 301;
    auto out = test::filled<double, 1>("out", {items}, space(), test::kNaN);
    team_kernels::big_common(exec(), items, ipb, bytes, out.view());
    const auto h = out.to_vector();
    int wrong = 0;
    for (index_t i = 0; i < items; ++i) wrong += h[static_cast<std::size_t>(i)] != big_common_expected(i, ipb, n);
    EXPECT_EQ(wrong, 0) << "items_per_block " << ipb;
  }
}

TEST_P(TeamTest, ItemRegionsOverSharedMemorySpillToDeviceMemory) {
  // Per-item regions of ~1.1x the opt-in shared memory (CUDA; 240 KB on the CPU), two items of
  // 512 threads per block: on the GPU the item regions go to device memory, and with 2000
  // items the 1000 blocks outnumber the resident ones, so each block strides over several.
  const std::size_t bytes = on_gpu() ? current_device().shared_per_block_optin * 11 / 10 : 240 * 1024;
  const int n = static_cast<int>(bytes / sizeof(double)), tx = 512;
  const index_t items = 2000;
  Teams t;
  t.items = items;
  t.items_per_block = 2;
  t.threads = {tx, 1, 1};
  t.shared_common = SharedLayout().add<double>(32).bytes();
  t.shared_per_item = SharedLayout().add<double>(n).bytes();
  auto out = test::filled<double, 2>("out", {items, tx}, space(), test::kNaN);
  launch("tests/team_spill", exec(), t, team_kernels::SpillingSums{out.view(), n});
  const auto h = out.to_vector();
  int wrong = 0;
  for (index_t i = 0; i < items; ++i)
    for (int x = 0; x < tx; ++x) {
      double s = 0;  // the same sum in the same order: exact equality
      for (int k = x + 1; k < n; k += tx) s += 1000.0 * static_cast<double>(i) + k + 0.5 * (k % 32);
      wrong += h[static_cast<std::size_t>(i * tx + x)] != s;
    }
  EXPECT_EQ(wrong, 0);
  if (on_gpu()) {
    // the common region is not spilled: over the limit it still fails, naming the limit
    t.shared_common = current_device().shared_per_block_optin + 16;
    const std::string msg =
        error_message([&] { launch("tests/team_spill", exec(), t, team_kernels::SpillingSums{out.view(), n}); });
    EXPECT_CONTAINS(msg, std::to_string(current_device().shared_per_block_optin));
    EXPECT_CONTAINS(msg, "common region");
  }
}

TEST_P(TeamTest, GpuOnlyFunctorsRunOnTheGpuOrWithoutCudaAndNameTheBackendElsewhere) {
  // a CUDA build compiles gpu_only functors for the GPU alone; without CUDA they run on the CPU
  EXPECT_EQ(team_runs_on_cpu<team_kernels::GpuOnlyFill>(), !cuda_compiled());
  EXPECT_TRUE(team_runs_on_cpu<team_kernels::SpillingSums>());
  const index_t items = 1000;
  Teams t;
  t.items = items;
  t.items_per_block = 3;
  t.threads = {32, 1, 1};
  auto out = test::filled<double, 1>("out", {items}, space(), test::kNaN);
  if (!on_gpu() && !team_runs_on_cpu<team_kernels::GpuOnlyFill>()) {
    const std::string msg =
        error_message([&] { launch("tests/gpu_only", exec(), t, team_kernels::GpuOnlyFill{out.view()}); });
    EXPECT_CONTAINS(msg, "tests/gpu_only");
    EXPECT_CONTAINS(msg, "GPU only");
    EXPECT_CONTAINS(msg, to_string(exec().backend));
    int touched = 0;  // nothing ran: every entry keeps its poison
    for (double v : out.to_vector()) touched += !std::isnan(v);
    EXPECT_EQ(touched, 0);
    return;
  }
  launch("tests/gpu_only", exec(), t, team_kernels::GpuOnlyFill{out.view()});
  const auto h = out.to_vector();
  int wrong = 0;
  for (index_t i = 0; i < items; ++i) wrong += h[static_cast<std::size_t>(i)] != 2.0 * static_cast<double>(i) + 1;
  EXPECT_EQ(wrong, 0);
}

TEST_P(TeamTest, LaunchValidation) {
  Array<int> calls("calls", {1}, space());
  Teams t;
  t.items = 10;
  t.items_per_block = 0;
  std::string msg = error_message([&] { team_kernels::count_items(exec(), t, calls.view()); });
  EXPECT_CONTAINS(msg, "'tests/team_count'");
  EXPECT_CONTAINS(msg, "items_per_block");

  t.items_per_block = 2;
  t.items = -3;
  msg = error_message([&] { team_kernels::count_items(exec(), t, calls.view()); });
  EXPECT_CONTAINS(msg, "'tests/team_count'");
  EXPECT_CONTAINS(msg, "-3");

  t.items = 10;
  t.threads = {4, 0, 1};
  msg = error_message([&] { team_kernels::count_items(exec(), t, calls.view()); });
  EXPECT_CONTAINS(msg, "thread extents");

  t.threads = {4, 2, 1};
  t.items = 0;  // nothing to do: no call
  team_kernels::count_items(exec(), t, calls.view());
  EXPECT_EQ(calls.to_vector()[0], 0);
  t.items = 10;  // and a valid launch works after the failed ones: one call per item
  t.items_per_block = 3;
  team_kernels::count_items(exec(), t, calls.view());
  EXPECT_EQ(calls.to_vector()[0], 12);  // 4 blocks x 3 items: invalid slots run the body too
}

TEST(TeamCpu, CarvingPastTheLaunchSizeThrows) {
  for (const Exec& e : test::cpu_execs()) {
    SCOPED_TRACE(to_string(e.backend));
    Array<double> out("out", {16});
    Teams t;
    t.items = 16;
    t.items_per_block = 2;
    t.shared_per_item = 64;  // the region is rounded up to 128 bytes: 16 doubles fit, 17 do not
    t.shared_common = 0;
    EXPECT_NO_THROW(team_kernels::carve(e, t, 16, 0, out.view()));
    std::string msg = error_message([&] { team_kernels::carve(e, t, 17, 0, out.view()); });
    EXPECT_CONTAINS(msg, "shared_per_item");
    EXPECT_CONTAINS(msg, "136");  // the bytes asked for
    EXPECT_CONTAINS(msg, "'tests/team_carve'");

    t.shared_common = 8;
    msg = error_message([&] { team_kernels::carve(e, t, 1, 17, out.view()); });
    EXPECT_CONTAINS(msg, "shared_common");
  }
}

TEST(TeamCuda, SharedMemoryOverDeviceLimitThrows) {
  TESSERA_SKIP_WITHOUT_GPU();
  const std::size_t optin = current_device().shared_per_block_optin;
  Array<double> out("out", {4}, Space::Device);
  Teams t;
  t.items = 4;
  t.items_per_block = 1;
  t.threads = {32, 1, 1};
  t.shared_common = optin + 1;
  std::string msg = error_message([&] { team_kernels::carve(Exec::cuda(), t, 1, 1, out.view()); });
  EXPECT_CONTAINS(msg, "shared memory");
  EXPECT_CONTAINS(msg, std::to_string(optin));
  EXPECT_CONTAINS(msg, "'tests/team_carve'");

  // Per-item memory times items per block over the limit.
  t.shared_common = 0;
  t.items_per_block = 4;
  t.shared_per_item = optin / 4 + 128;
  msg = error_message([&] { team_kernels::carve(Exec::cuda(), t, 1, 1, out.view()); });
  EXPECT_CONTAINS(msg, "shared memory");
  EXPECT_CONTAINS(msg, std::to_string(optin));
}

TEST(TeamCuda, TooManyThreadsThrows) {
  TESSERA_SKIP_WITHOUT_GPU();
  Array<int> calls("calls", {1}, Space::Device);
  Teams t;
  t.items = 8;
  t.items_per_block = 1;
  t.threads = {32, 32, 2};  // 2048 threads per block
  std::string msg = error_message([&] { team_kernels::count_items(Exec::cuda(), t, calls.view()); });
  EXPECT_CONTAINS(msg, "'tests/team_count'");
  EXPECT_CONTAINS(msg, "2048 threads per block");
  EXPECT_CONTAINS(msg, "1024");
  t.threads = {256, 1, 1};
  t.items_per_block = 8;  // 256 x 8 = 2048 as well
  EXPECT_CONTAINS(error_message([&] { team_kernels::count_items(Exec::cuda(), t, calls.view()); }), "2048");
  // Exactly 1024 is fine.
  t.items_per_block = 4;
  team_kernels::count_items(Exec::cuda(), t, calls.view());
  EXPECT_EQ(calls.to_vector()[0], 8);
}

TEST(TeamCuda, MaxRegistersCapsTheKernel) {
  TESSERA_SKIP_WITHOUT_GPU();
#if defined(TESSERA_HAS_CUDA)
  using Capped = team_kernels::ManySums<32>;
  using Free = team_kernels::ManySums<0>;  // max_registers = 0: no limit of its own
  cudaFuncAttributes capped{}, free{};
  ASSERT_EQ(cudaFuncGetAttributes(&capped, detail::team_kernel_for<Capped>()), cudaSuccess);
  ASSERT_EQ(cudaFuncGetAttributes(&free, detail::team_kernel_for<Free>()), cudaSuccess);
  EXPECT_LE(capped.numRegs, 32);
  EXPECT_GT(free.numRegs, 32) << "the body no longer needs more than the cap: the check would pass without it";
  Teams t;
  t.items = 5;
  t.items_per_block = 2;
  t.threads = {32, 1, 1};
  for (int which = 0; which < 2; ++which) {
    Array<double> out("out", {5 * 32}, Space::Device);
    out.fill(std::nan(""));
    if (which == 0) launch("tests/many_sums_capped", Exec::cuda(), t, Capped{out.view()});
    else launch("tests/many_sums", Exec::cuda(), t, Free{out.view()});
    const auto h = out.to_vector();
    for (int i = 0; i < 5 * 32; ++i)  // the same operations in the same order: equal to roundoff
      ASSERT_NEAR(h[std::size_t(i)], team_kernels::many_sums(i % 32), 1e-12 * std::abs(team_kernels::many_sums(i % 32)))
          << (which == 0 ? "capped" : "free") << " entry " << i;
  }
#endif
}

TESSERA_INSTANTIATE_BACKENDS(TeamTest);
