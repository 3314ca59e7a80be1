// Shared benchmark helpers (compiled by nvcc in CUDA builds: they launch kernels).
#include "bench_util.hpp"

#include <cstring>
#include <ctime>
#include <random>
#include <sstream>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::bench {

double time_median(const Exec& exec, int reps, const std::function<void()>& fn) {
  fn();  // warm-up (module load, first-touch, attribute setting)
  fn();
  std::vector<double> t;
  Timer timer(exec);
  for (int r = 0; r < reps; ++r) {
    timer.start();
    fn();
    t.push_back(timer.stop());
  }
  return median(t);
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
  double ms = 0;
  if (exec.on_device()) {
    if (label) *label = "cudaMemcpy D2D (reference)";
    ms = time_median(exec, reps, [&] { deep_copy(a, b); });
  } else {
    if (label) *label = "memcpy, threaded chunks (reference)";
    const index_t chunks = 64;
    ms = time_median(exec, reps, [&] {
      detail::cpu_parallel_for("bench/memcpy", exec.backend, chunks, [&](index_t k) {
        const index_t lo = n * k / chunks, hi = n * (k + 1) / chunks;
        std::memcpy(a.data() + lo, b.data() + lo, (hi - lo) * sizeof(double));
      });
    });
  }
  return 16.0 * static_cast<double>(n) / ms / 1e6;
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
