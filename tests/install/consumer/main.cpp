// Runs a forall and a reduction through an installed tessera; exits non-zero on a wrong sum.
#include <cstdio>

#include <tessera/core.hpp>

int main() {
  const auto exec = tessera::Exec::best();
  const tessera::index_t n = 1000;
  tessera::Array<double> x("x", {n}, exec.space());
  auto v = x.view();
  tessera::forall("consumer/iota", exec, n, TESSERA_LAMBDA(tessera::index_t i) { v(i) = static_cast<double>(i); });
  const double s = tessera::sum(exec, x);
  std::printf("consumer on %s: sum = %.1f (expected %.1f)\n", tessera::to_string(exec.backend), s, n * (n - 1) / 2.0);
  return s == n * (n - 1) / 2.0 ? 0 : 1;
}
