// Runge-Kutta stage update on 4-D arrays (state variable, z, y, x with halos), the
// `applyTendencies` loop nest written once and run on every backend present.
//
//   state2(l, hs+k, hs+j, hs+i) = c0*state0(...) + c1*state1(...) + ct*dt*tend(l, k, j, i)
#include <cmath>
#include <cstdio>
#include <vector>

#include "tessera/core.hpp"

using namespace tessera;

namespace {
constexpr int kNumState = 4, kHalo = 2;

struct Domain {
  int nx, ny, nz;
  double dt;
};

void apply_tendencies(const Exec& exec, View<double, 4> state2, double c0, View<const double, 4> state0, double c1,
                      View<const double, 4> state1, double ct, View<const double, 4> tend, const Domain& dom) {
  const double dt = dom.dt;
  const int hs = kHalo;
  // for l, k, j, i: collapsed into one parallel loop, i fastest
  forall("examples/apply_tendencies", exec, Bounds<4>{kNumState, dom.nz, dom.ny, dom.nx},
         TESSERA_LAMBDA(int l, int k, int j, int i) {
           state2(l, hs + k, hs + j, hs + i) = c0 * state0(l, hs + k, hs + j, hs + i) +
                                               c1 * state1(l, hs + k, hs + j, hs + i) + ct * dt * tend(l, k, j, i);
         });
}

double run(const Exec& exec, const Domain& dom) {
  const Space sp = exec.space();
  const std::array<index_t, 4> full{kNumState, dom.nz + 2 * kHalo, dom.ny + 2 * kHalo, dom.nx + 2 * kHalo};
  Array<double, 4> s0("state0", full, sp), s1("state1", full, sp), s2("state2", full, sp);
  Array<double, 4> tend("tend", {kNumState, dom.nz, dom.ny, dom.nx}, sp);
  auto v0 = s0.view(), v1 = s1.view(), vt = tend.view();
  forall("examples/init_state", exec, Bounds<4>{full[0], full[1], full[2], full[3]},
         TESSERA_LAMBDA(int l, int k, int j, int i) {
           v0(l, k, j, i) = sin(0.1 * i + 0.2 * j + 0.3 * k + l);
           v1(l, k, j, i) = cos(0.1 * i - 0.2 * j + 0.3 * k - l);
         });
  forall("examples/init_tend", exec, Bounds<4>{kNumState, dom.nz, dom.ny, dom.nx},
         TESSERA_LAMBDA(int l, int k, int j, int i) { vt(l, k, j, i) = 1e-3 * (i + j + k + l); });
  apply_tendencies(exec, s2.view(), 0.75, s0.cview(), 0.25, s1.cview(), 0.25, tend.cview(), dom);
  const auto h = s2.to_host();
  double checksum = 0;
  for (index_t q = 0; q < h.size(); ++q) checksum += h[q];
  return checksum;
}
}  // namespace

int main() {
  const Domain dom{64, 48, 32, 0.5};
  std::vector<Exec> execs{Exec::serial(), Exec::openmp()};
  if (cuda_available()) execs.push_back(Exec::cuda());
  double ref = 0;
  for (const auto& e : execs) {
    const double c = run(e, dom);
    if (e.backend == Backend::Serial) ref = c;
    std::printf("%-7s checksum %.15g  (|diff| to serial %.2e)\n", to_string(e.backend), c, std::fabs(c - ref));
    // Same arithmetic per point; only the GPU's fused multiply-adds can differ in the last bits.
    if (std::fabs(c - ref) > 1e-9 * std::fabs(ref)) {
      std::printf("mismatch on %s\n", to_string(e.backend));
      return 1;
    }
  }
  if (!cuda_available()) std::printf("cuda    skipped: no GPU\n");
  return 0;
}
