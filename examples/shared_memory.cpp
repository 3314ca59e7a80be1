// forall without and with shared memory sized at run time: the two loops of the
// "ndview" write-up, in tessera's terms. The second version uses a team launch: each
// item gets a buffer whose size is a run-time value, carved into a View.
#include <cstdio>
#include <vector>

#include "tessera/core.hpp"

using namespace tessera;

int run(const Exec& exec) {
  const int n = 4;
  Array<int> squares("squares", {n}, exec.space());
  auto sq = squares.view();
  // 1. forall: one index per call.
  forall("examples/forall", exec, n, TESSERA_LAMBDA(index_t i) { sq(i) = static_cast<int>(i * i); });
  const auto a = squares.to_vector();

  // 2. shared memory: bytes chosen at run time (here: one int per thread of the item).
  const int buffer_len = n;  // a run-time value, like a polynomial order
  Array<int> out("out", {n}, exec.space());
  auto ov = out.view();
  launch("examples/forall_shared", exec,
         Teams{.items = 1, .items_per_block = 1, .threads = {buffer_len, 1, 1},
               .shared_per_item = SharedLayout().add<int>(buffer_len).bytes()},
         TESSERA_LAMBDA(TeamContext & ctx) {
           auto buffer = ctx.shared_item<int>(buffer_len);
           for (int i : ctx.threads_x(buffer_len)) buffer(i) = i * i;  // store in shared memory
           ctx.sync();
           for (int i : ctx.threads_x(buffer_len)) ov(i) = buffer(buffer_len - 1 - i);  // read another thread's
         });
  const auto b = out.to_vector();
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    std::printf("(%s) %d, %d, %d\n", to_string(exec.backend), i, a[i], b[n - 1 - i]);
    bad += a[i] != i * i || b[n - 1 - i] != i * i;
  }
  return bad;
}

int main() {
  int bad = run(Exec::serial()) + run(Exec::openmp());
  if (cuda_available())
    bad += run(Exec::cuda());
  else
    std::printf("(cuda) skipped: no GPU\n");
  return bad == 0 ? 0 : 1;
}
