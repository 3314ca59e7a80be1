// tessera bench core: the portable kernel layer against the copy bandwidth of the
// same run. Compiled by nvcc in CUDA builds so every case can run on the GPU.
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iomanip>
#include <ostream>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "bench_util.hpp"
#include "tessera/core.hpp"

namespace tessera::bench {
namespace {

struct Row {
  std::string name;
  double bytes = 0;  // per run
  double ms = 0;     // median
};

}  // namespace

int run_core(const CoreOptions& opt, std::ostream& out) {
  const Exec exec = Exec::parse(opt.backend);
  const bool gpu = exec.on_device();
  const index_t n = opt.n > 0 ? opt.n : (gpu ? index_t(1) << 27 : index_t(1) << 24);
  const Space sp = exec.space();
  const int reps = opt.reps;

  Array<double> a("bench/a", {n}, sp), b("bench/b", {n}, sp), c("bench/c", {n}, sp);
  fill_random(b, 1);
  fill_random(c, 2);
  fill_random(a, 3);
  auto av = a.view();
  auto bv = b.cview();
  auto cv = c.cview();
  const double s = 0.5;
  std::vector<Row> rows;
  const double dn = static_cast<double>(n);

  // Reference: the runtime's own copy (cudaMemcpy device to device, or memmove).
  // On the CPU the reference is memcpy run by every OpenMP thread on its own chunk.
  if (gpu) {
    rows.push_back({"cudaMemcpy D2D (reference)", 16 * dn, time_median(exec, reps, [&] { deep_copy(a, b); })});
  } else {
    const index_t chunks = 64;
    rows.push_back({"memcpy, threaded chunks (reference)", 16 * dn, time_median(exec, reps, [&] {
                      detail::cpu_parallel_for("bench/memcpy", exec.backend, chunks, [&](index_t k) {
                        const index_t lo = n * k / chunks, hi = n * (k + 1) / chunks;
                        std::memcpy(a.data() + lo, b.data() + lo, (hi - lo) * sizeof(double));
                      });
                    })});
  }
  const double copy_gbs = rows.back().bytes / rows.back().ms / 1e6;

  rows.push_back({"forall copy", 16 * dn, time_median(exec, reps, [&] {
                    forall("bench/copy", exec, n, TESSERA_LAMBDA(index_t i) { av(i) = bv(i); });
                  })});
  rows.push_back({"forall triad a=b+s*c", 24 * dn, time_median(exec, reps, [&] {
                    forall("bench/triad", exec, n, TESSERA_LAMBDA(index_t i) { av(i) = bv(i) + s * cv(i); });
                  })});
  // Same triad written as a 2-D Bounds loop (collapsed indices).
  {
    const index_t inner = 1024, outer = n / inner;
    rows.push_back({"forall Bounds<2> triad", 24.0 * outer * inner, time_median(exec, reps, [&] {
                      forall("bench/triad2d", exec, Bounds<2>{outer, inner}, TESSERA_LAMBDA(int j, int i) {
                        const index_t k = static_cast<index_t>(j) * inner + i;
                        av(k) = bv(k) + s * cv(k);
                      });
                    })});
  }
  // Team launch: 128 values per item, 4 items per block, staged through shared memory.
  {
    const int per = 128;
    Teams t{.items = n / per, .items_per_block = 4, .threads = {per, 1, 1},
            .shared_per_item = SharedLayout().add<double>(per).bytes(), .shared_common = 0};
    rows.push_back({"team copy via shared (4 items/block)", 16.0 * t.items * per, time_median(exec, reps, [&] {
                      launch("bench/team_copy", exec, t, TESSERA_LAMBDA(TeamContext & ctx) {
                        auto buf = ctx.shared_item<double>(per);
                        const index_t base = ctx.item() * per;
                        if (ctx.valid())
                          for (int i : ctx.threads_x(per)) buf(i) = bv(base + i);
                        ctx.sync();
                        if (ctx.valid())
                          for (int i : ctx.threads_x(per)) av(base + i) = buf(per - 1 - i);
                      });
                    })});
  }
  double dot_result = 0;
  rows.push_back({"dot(b, c)", 16 * dn, time_median(exec, reps, [&] { dot_result = dot(exec, bv, cv); })});

  // Launch overhead: back-to-back empty launches, timed as a batch.
  const int batch = gpu ? 2000 : 200;
  const double empty_team_us = 1e3 / batch * time_median(exec, std::max(5, reps / 4), [&] {
    for (int k = 0; k < batch; ++k)
      launch("bench/empty_team", exec, Teams{.items = 1, .items_per_block = 1, .threads = {32, 1, 1}},
             TESSERA_LAMBDA(TeamContext&){});
  });
  const double empty_forall_us = 1e3 / batch * time_median(exec, std::max(5, reps / 4), [&] {
    for (int k = 0; k < batch; ++k) forall("bench/empty_forall", exec, 1, TESSERA_LAMBDA(index_t){});
  });

  // Arrays captured by kernels: count reference-count operations during the launches
  // and compare the time with the View version of the same triad.
  long ops_during = -1;
  double array_capture_ms = 0;
  {
    Array<double> A = a, B = b, C = c;  // host-side copies: these do count
    auto kernel = TESSERA_LAMBDA(index_t i) {
      Array<double> local = A;  // a copy inside the kernel: must stay untracked
      local(i) = B(i) + s * C(i);
    };
    const long before = detail::refcount_ops.load();
    array_capture_ms = time_median(exec, reps, [&] { forall("bench/triad_array", exec, n, kernel); });
    ops_during = detail::refcount_ops.load() - before;
  }

  out << "## tessera bench core — backend " << to_string(exec.backend);
  if (gpu) {
    const auto& d = current_device();
    out << ", " << d.name << " (" << d.sm_count << " SMs, datasheet " << std::fixed << std::setprecision(0)
        << d.peak_bandwidth_gbs << " GB/s)";
  } else {
    out << ", " << openmp_threads() << " OpenMP threads";
  }
  out << "\n\n" << n << " doubles per array (" << std::setprecision(2) << dn * 8 / (1 << 30)
      << " GiB), median of " << reps << " runs after 2 warm-ups.\n\n";
  out << std::fixed << "| case | GB/s | % of copy | median ms |\n|---|---:|---:|---:|\n";
  nlohmann::json meta{{"bench", "core"},
                      {"backend", to_string(exec.backend)},
                      {"device", gpu ? current_device().name : std::string("cpu")},
                      {"n", n},
                      {"reps", reps}};
  std::ofstream js;
  if (!opt.json.empty()) {
    js.open(opt.json, std::ios::app);
    TESSERA_REQUIRE(js, "cannot open JSON output file '", opt.json, "'");
  }
  for (const auto& r : rows) {
    const double gbs = r.bytes / r.ms / 1e6;
    out << "| " << r.name << " | " << std::setprecision(1) << gbs << " | " << percent_of(gbs, copy_gbs, 1) << " | "
        << std::setprecision(3) << r.ms << " |\n";
    if (js) {
      auto j = meta;
      j.update({{"case", r.name}, {"bytes", r.bytes}, {"median_ms", r.ms}, {"gbs", gbs},
                {"fraction_of_copy", gbs / copy_gbs}, {"copy_gbs", copy_gbs}});
      js << j.dump() << "\n";
    }
  }
  const double arr_gbs = 24 * dn / array_capture_ms / 1e6;
  out << "| forall triad capturing Arrays | " << std::setprecision(1) << arr_gbs << " | "
      << percent_of(arr_gbs, copy_gbs, 1) << " | " << std::setprecision(3) << array_capture_ms << " |\n\n";
  out << std::setprecision(2) << "Empty launch, back-to-back (" << batch << " launches): team " << empty_team_us
      << " us, forall " << empty_forall_us << " us per launch.\n";
  out << "Reference-count operations during " << reps + 2
      << " launches whose lambda captures three Arrays and copies one per index: " << ops_during << ".\n";
  out << std::setprecision(6) << "dot(b, c) = " << dot_result << "\n";
  if (js) {
    auto j = meta;
    j.update({{"case", "launch_overhead"}, {"empty_team_us", empty_team_us}, {"empty_forall_us", empty_forall_us},
              {"refcount_ops_during_launches", ops_during}, {"array_capture_gbs", arr_gbs},
              {"copy_gbs", copy_gbs}});
    js << j.dump() << "\n";
  }
  out.unsetf(std::ios::floatfield);
  return ops_during == 0 ? 0 : 1;
}

}  // namespace tessera::bench
