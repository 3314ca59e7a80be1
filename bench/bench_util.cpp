// Shared benchmark helpers (compiled by nvcc in CUDA builds: they launch kernels).
#include "bench_util.hpp"
#include "bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <ostream>
#include <ctime>
#include <random>
#include <sstream>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::bench {

namespace {

/// What percent_of and copy_bandwidth_gbs saw since the last report_noise.
struct NoiseLog {
  int faster_than_copy = 0;   // results above kFasterThanCopy x the reference
  double worst_ratio = 0;     // the largest value / reference among them
  int not_finite = 0;         // results or references that were inf, nan or <= 0
  double copy_fastest_gbs = 0, copy_slowest_gbs = 0;  // the widest-spread copy reference
};
NoiseLog& noise() {
  static NoiseLog log;
  return log;
}

/// The times in ms of `reps` runs of fn (two untimed warm-up runs first).
std::vector<double> time_runs(const Exec& exec, int reps, const std::function<void()>& fn) {
  fn();  // warm-up (module load, first-touch, attribute setting)
  fn();
  std::vector<double> t;
  Timer timer(exec);
  for (int r = 0; r < reps; ++r) {
    timer.start();
    fn();
    t.push_back(timer.stop());
  }
  return t;
}

}  // namespace

double time_median(const Exec& exec, int reps, const std::function<void()>& fn) {
  return median(time_runs(exec, reps, fn));
}

std::string percent_of(double value, double reference, int precision) {
  if (!std::isfinite(value) || !std::isfinite(reference) || value <= 0 || reference <= 0) {
    ++noise().not_finite;
    return "n/a";
  }
  const double ratio = value / reference;
  if (ratio > kFasterThanCopy) {
    ++noise().faster_than_copy;
    noise().worst_ratio = std::max(noise().worst_ratio, ratio);
    return "noisy";
  }
  std::ostringstream os;
  os << std::fixed << std::setprecision(precision) << 100 * ratio;
  return os.str();
}

bool report_noise(std::ostream& out) {
  NoiseLog& n = noise();
  const bool spread = n.copy_slowest_gbs > 0 && n.copy_fastest_gbs > kCopySpread * n.copy_slowest_gbs;
  const bool noisy = n.faster_than_copy > 0 || spread;
  if (noisy) {
    out << "\nwarning: machine overloaded/noisy:";
    if (n.faster_than_copy > 0)
      out << " " << n.faster_than_copy << " result" << (n.faster_than_copy > 1 ? "s" : "")
          << " ran faster than the copy reference of the same run allows (up to " << std::setprecision(2)
          << n.worst_ratio << " times its bandwidth; shown as 'noisy' instead of a fraction)";
    if (spread)
      out << (n.faster_than_copy > 0 ? ";" : "") << " the copy reference varied from " << std::fixed
          << std::setprecision(1) << n.copy_slowest_gbs << " to " << n.copy_fastest_gbs
          << " GB/s over its repetitions";
    out.unsetf(std::ios::floatfield);
    out << ". Other work shared the machine while it was timed (or the data fit in a cache): rerun on an "
           "idle machine, with fewer OpenMP threads than free cores (tessera devices shows the thread "
           "settings)\n";
  }
  if (n.not_finite > 0)
    out << "note: " << n.not_finite << " fraction" << (n.not_finite > 1 ? "s" : "")
        << " could not be computed (a time of zero or an empty reference): shown as n/a\n";
  n = NoiseLog{};
  return noisy;
}

void fill_random(const Array<double>& a, unsigned seed) {
  std::vector<double> h(static_cast<std::size_t>(a.size()));
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& v : h) v = u(g);
  detail::copy_bytes(a.data(), a.space(), h.data(), Space::Host, a.bytes());
}

double copy_bandwidth_gbs(const Exec& exec, index_t n, int reps, std::string* label) {
  const Space sp = exec.space();
  Array<double> a("bench/copy_a", {n}, sp), b("bench/copy_b", {n}, sp);
  fill_random(b, 11);
  a.fill(0.0);
  std::vector<double> t;
  if (exec.on_device()) {
    if (label) *label = "cudaMemcpy D2D (reference)";
    t = time_runs(exec, reps, [&] { deep_copy(a, b); });
  } else {
    if (label) *label = "memcpy, threaded chunks (reference)";
    const index_t chunks = 64;
    t = time_runs(exec, reps, [&] {
      detail::cpu_parallel_for("bench/memcpy", exec.backend, chunks, [&](index_t k) {
        const index_t lo = n * k / chunks, hi = n * (k + 1) / chunks;
        std::memcpy(a.data() + lo, b.data() + lo, (hi - lo) * sizeof(double));
      });
    });
  }
  const auto gbs = [&](double ms) { return 16.0 * static_cast<double>(n) / ms / 1e6; };
  const auto [lo, hi] = std::minmax_element(t.begin(), t.end());
  NoiseLog& log = noise();  // keep the widest spread seen since the last report
  if (*lo > 0 && (log.copy_slowest_gbs == 0 || gbs(*lo) / gbs(*hi) > log.copy_fastest_gbs / log.copy_slowest_gbs)) {
    log.copy_fastest_gbs = gbs(*lo);
    log.copy_slowest_gbs = gbs(*hi);
  }
  return gbs(median(t));
}

double triad_bandwidth_gbs(const Exec& exec, index_t n, int reps) {
  TESSERA_REQUIRE(!exec.on_device(), "triad_bandwidth_gbs: host backends only");
  Array<double> a("bench/triad_a", {n}, exec.space()), b("bench/triad_b", {n}, exec.space()),
      c("bench/triad_c", {n}, exec.space());
  fill_random(b, 12);
  fill_random(c, 13);
  a.fill(0.0);
  const index_t chunks = 64;
  double* pa = a.data();
  const double* pb = b.data();
  const double* pc = c.data();
  const std::vector<double> t = time_runs(exec, reps, [&] {
    detail::cpu_parallel_for("bench/triad", exec.backend, chunks, [&](index_t k) {
      const index_t lo = n * k / chunks, hi = n * (k + 1) / chunks;
      for (index_t i = lo; i < hi; ++i) pa[i] = pb[i] + 3.0 * pc[i];
    });
  });
  return 24.0 * static_cast<double>(n) / median(t) / 1e6;
}

std::string describe(const Exec& exec) {
  std::ostringstream os;
  if (exec.on_device()) {
    const auto& d = current_device();
    os << d.name << " (" << d.sm_count << " SMs, datasheet " << static_cast<long>(d.peak_bandwidth_gbs) << " GB/s)";
  } else if (exec.backend == Backend::OpenMP) {
    os << openmp_threads() << " OpenMP threads";
  } else {
    os << "serial";
  }
  return os.str();
}

JsonLines::JsonLines(const std::string& path) {
  if (path.empty()) return;
  file_.open(path, std::ios::app);
  TESSERA_REQUIRE(file_, "cannot open JSON output file '", path, "'");
}

void JsonLines::write(const nlohmann::json& j) {
  if (file_.is_open()) file_ << j.dump() << "\n";
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string w;
  while (std::getline(ss, w, ','))
    if (!w.empty()) out.push_back(w);
  return out;
}

namespace {
template <class T, class Parse>
std::vector<T> split_parsed(const std::string& s, const char* what, const char* kind, const Parse& parse) {
  std::vector<T> out;
  for (const auto& w : split(s)) {
    std::size_t used = 0;
    T v{};
    try {
      v = parse(w, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    TESSERA_REQUIRE(used > 0 && used == w.size(), what, ": '", w, "' in '", s, "' is not ", kind);
    out.push_back(v);
  }
  return out;
}
}  // namespace

std::vector<int> split_ints(const std::string& s, const char* what) {
  return split_parsed<int>(s, what, "an integer", [](const std::string& w, std::size_t* u) { return std::stoi(w, u); });
}
std::vector<double> split_numbers(const std::string& s, const char* what) {
  return split_parsed<double>(s, what, "a number", [](const std::string& w, std::size_t* u) { return std::stod(w, u); });
}

std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

}  // namespace tessera::bench
