#include "tessera/core/profiling.hpp"

#include <algorithm>
#include <iomanip>
#include <map>
#include <mutex>
#include <ostream>

#include "backend/cuda_api.hpp"

namespace tessera::profiling {
namespace {
struct Pending {
  std::string label;
  detail::GpuTiming t;
};
struct State {
  std::mutex mutex;
  bool on = false;
  std::map<std::pair<std::string, Backend>, Entry> entries;
  std::vector<Pending> pending;
};
State& state() {
  static State s;
  return s;
}
void add(State& s, const std::string& label, Backend b, double ms) {
  Entry& e = s.entries[{label, b}];
  if (e.calls == 0) {
    e.label = label;
    e.backend = b;
    e.min_ms = e.max_ms = ms;
  }
  ++e.calls;
  e.total_ms += ms;
  e.min_ms = std::min(e.min_ms, ms);
  e.max_ms = std::max(e.max_ms, ms);
}
void resolve(State& s) {
  for (auto& p : s.pending) {
    add(s, p.label, Backend::Cuda, tessera::detail::cuda_api::elapsed_ms(p.t.start, p.t.stop));
    tessera::detail::cuda_api::event_destroy(p.t.start);
    tessera::detail::cuda_api::event_destroy(p.t.stop);
  }
  s.pending.clear();
}
}  // namespace

HostScope::HostScope(const char* label, Backend backend)
    : label_(label), backend_(backend), on_(enabled()),
      t0_(on_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {}

HostScope::~HostScope() {
  if (on_)
    detail::record_host(label_, backend_,
                        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count());
}

void enable(bool on) { state().on = on; }
bool enabled() { return state().on; }

void reset() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  for (auto& p : s.pending) {
    tessera::detail::cuda_api::event_destroy(p.t.start);
    tessera::detail::cuda_api::event_destroy(p.t.stop);
  }
  s.pending.clear();
  s.entries.clear();
}

std::vector<Entry> report() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  resolve(s);
  std::vector<Entry> out;
  for (auto& [k, e] : s.entries) out.push_back(e);
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.total_ms > b.total_ms; });
  return out;
}

void print(std::ostream& os) {
  auto r = report();
  os << "| kernel | backend | calls | total ms | mean ms | min ms | max ms |\n"
     << "|---|---|---:|---:|---:|---:|---:|\n";
  os << std::fixed << std::setprecision(4);
  for (const auto& e : r)
    os << "| " << e.label << " | " << to_string(e.backend) << " | " << e.calls << " | " << e.total_ms << " | "
       << e.total_ms / e.calls << " | " << e.min_ms << " | " << e.max_ms << " |\n";
  os.unsetf(std::ios::floatfield);
}

namespace detail {
void record_host(const char* label, Backend backend, double ms) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  add(s, label, backend, ms);
}
void record_gpu_pending(const char* label, GpuTiming t) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.pending.push_back({label, t});
  if (s.pending.size() > 4096) resolve(s);  // bound the number of live events
}
}  // namespace detail
}  // namespace tessera::profiling
