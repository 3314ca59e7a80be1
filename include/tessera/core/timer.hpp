#pragma once
/// \file timer.hpp
/// Timing of device and host work for benchmarks.
///
///     tessera::Timer t(exec);
///     t.start();  ... launches ...  double ms = t.stop();   // waits for the work
///
/// On the CUDA backend it records events on the default stream around the work; on the
/// CPU backends it reads a steady clock.

#include <vector>

#include "tessera/core/exec.hpp"

namespace tessera {

class Timer {
 public:
  explicit Timer(const Exec& exec);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  void start();
  /// Milliseconds since start(); synchronizes with the device on CUDA.
  double stop();

 private:
  bool gpu_;
  void* a_ = nullptr;
  void* b_ = nullptr;
  double t0_ = 0;
};

/// Median of a sample (by value: the input is not reordered).
double median(std::vector<double> v);

}  // namespace tessera
