#pragma once
/// \file bench_util.hpp
/// Helpers shared by the benchmarks: median timing, random fills, the copy-bandwidth
/// reference of the same run, and a JSON-lines sink.

#include <fstream>
#include <iosfwd>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core.hpp"

namespace tessera::bench {

/// Median time in ms of `reps` runs of fn on exec (two untimed warm-up runs first).
double time_median(const Exec& exec, int reps, const std::function<void()>& fn);

/// Fills `a` (any space) with uniform random values in [-1, 1) from `seed`.
void fill_random(const Array<double>& a, unsigned seed);

/// The copy reference of a run: cudaMemcpy device to device on a GPU, memcpy over one
/// chunk per OpenMP thread on a CPU, of `n` doubles; returns GB/s (read + write bytes).
/// `label` receives the reference's name.
double copy_bandwidth_gbs(const Exec& exec, index_t n, int reps, std::string* label = nullptr);
/// A STREAM-like triad a = b + s c over `n` doubles per array, one chunk per OpenMP thread
/// (the serial backend: one chunk); returns GB/s counting 24 bytes per index (two reads, one
/// write, as STREAM does). The CPU operators' roofline reference: like them it streams two
/// inputs and one output. Host backends only.
double triad_bandwidth_gbs(const Exec& exec, index_t n, int reps);

/// Overload and noise checks of a run. No kernel moves its bytes faster than the copy
/// reference of the same run allows, so a result more than kFasterThanCopy above it, or a copy
/// reference whose repetitions differ by more than kCopySpread, means that other work shared
/// the machine while the run was timed (or that the data stayed in a cache): a fraction of the
/// roofline then says nothing about the kernel.
inline constexpr double kFasterThanCopy = 1.2;  // 20%: timer and clock jitter of an idle machine
inline constexpr double kCopySpread = 2.0;      // slowest / fastest copy repetition

/// 100 * value / reference with `precision` decimals, or "noisy" when value is more than
/// kFasterThanCopy times the reference (counted for report_noise), or "n/a" when either is not
/// a finite positive number: never more than ~120%, never inf or nan.
std::string percent_of(double value, double reference, int precision = 0);

/// "87%" for a percent_of result that is a number; "noisy" and "n/a" stay as they are.
inline std::string with_percent(const std::string& s) {
  return !s.empty() && s[0] >= '0' && s[0] <= '9' ? s + "%" : s;
}

// report_noise (the check of all of a run's results) is declared in bench.hpp.

/// "NVIDIA H100 ... (132 SMs)" on a GPU, "N OpenMP threads" (or "serial") on a CPU.
std::string describe(const Exec& exec);
/// The non-empty items of a comma-separated list.
std::vector<std::string> split(const std::string& s);
/// The items of a comma-separated list of integers (numbers) for the option `what`; throws
/// tessera::Error naming the option and the item that is not one.
std::vector<int> split_ints(const std::string& s, const char* what);
std::vector<double> split_numbers(const std::string& s, const char* what);
/// Today's date (UTC) as YYYY-MM-DD.
std::string today();

/// Appends JSON objects, one per line, to a file; does nothing when the path is empty.
class JsonLines {
 public:
  explicit JsonLines(const std::string& path);
  void write(const nlohmann::json& j);

 private:
  std::ofstream file_;
};

}  // namespace tessera::bench
