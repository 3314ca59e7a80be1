#pragma once
/// \file profiling.hpp
/// Per-label kernel timers. Off by default; `enable()` starts timing every launch.
///
///     tessera::profiling::enable();
///     ... launches ...
///     tessera::profiling::print(std::cout);     // label, backend, calls, total, mean, min, max
///
/// CPU launches are timed with a steady clock; CUDA launches with events around the
/// kernel (resolved when a report is asked for, which synchronizes the device).

#include <chrono>
#include <iosfwd>
#include <string>
#include <vector>

#include "tessera/core/exec.hpp"

namespace tessera::profiling {

struct Entry {
  std::string label;
  Backend backend = Backend::Serial;
  long calls = 0;
  double total_ms = 0, min_ms = 0, max_ms = 0;
};

void enable(bool on = true);
bool enabled();
/// Clears all timings (and drops pending GPU events).
void reset();
/// One entry per (label, backend), sorted by total time, largest first.
std::vector<Entry> report();
/// Writes report() as a Markdown table.
void print(std::ostream& os);

/// Times its scope as one CPU launch of `label` on `backend` when the timers are on (for host
/// code that runs its own loops instead of forall or launch).
class HostScope {
 public:
  HostScope(const char* label, Backend backend);
  ~HostScope();
  HostScope(const HostScope&) = delete;
  HostScope& operator=(const HostScope&) = delete;

 private:
  const char* label_;
  Backend backend_;
  bool on_;
  std::chrono::steady_clock::time_point t0_;
};

namespace detail {
/// Records one CPU launch.
void record_host(const char* label, Backend backend, double ms);
/// Opaque handle of a GPU timing in flight.
struct GpuTiming {
  void* start = nullptr;
  void* stop = nullptr;
};
/// Starts / finishes a GPU timing (records events on the default stream).
GpuTiming gpu_begin();
void gpu_end(const char* label, GpuTiming t);
/// Queues a finished GPU timing; resolved by report().
void record_gpu_pending(const char* label, GpuTiming t);
}  // namespace detail

}  // namespace tessera::profiling
