// OperatorKernelChoice::from_environment: the comparison switches of `tessera bench`, `tune`
// and `poisson`, read once where those programs build their options.
#include <charconv>
#include <cstdlib>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/fem/interpolate.hpp"

namespace tessera::fem {

namespace {
/// The integer value of environment variable `name` in [lo, hi], or `fallback` when it is unset
/// or empty; throws naming the variable on anything else.
int env_int(const char* name, int lo, int hi, int fallback) {
  const char* e = std::getenv(name);
  if (!e || !*e) return fallback;
  const std::string text(e);
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    fail("environment variable ", name, "='", text, "' is not an integer in [", lo, ", ", hi, "]");
  return v;
}
}  // namespace

OperatorKernelChoice OperatorKernelChoice::from_environment() {
  OperatorKernelChoice c;
  c.bound = env_int("TESSERA_OPERATOR_BOUND", 0, 16, c.bound);
  c.exact = env_int("TESSERA_OPERATOR_EXACT", 0, 1, c.exact ? 1 : 0) != 0;
  c.matmul = env_int("TESSERA_OPERATOR_MATMUL", 0, 1, c.matmul ? 1 : 0) != 0;
  c.simplex_threads = env_int("TESSERA_SIMPLEX_THREADS", 0, 128, c.simplex_threads);
  c.cpu_batched = env_int("TESSERA_CPU_BATCHED", 0, 1, c.cpu_batched ? 1 : 0) != 0;
  return c;
}

}  // namespace tessera::fem
