#include "tessera/core/timer.hpp"

#include <algorithm>
#include <chrono>

#include "backend/cuda_api.hpp"

namespace tessera {
namespace {
double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Timer::Timer(const Exec& exec) : gpu_(exec.backend == Backend::Cuda) {
  if (gpu_) {
    a_ = detail::cuda_api::event_create();
    b_ = detail::cuda_api::event_create();
  }
}
Timer::~Timer() {
  detail::cuda_api::event_destroy(a_);
  detail::cuda_api::event_destroy(b_);
}
void Timer::start() {
  if (gpu_)
    detail::cuda_api::event_record(a_);
  else
    t0_ = now_ms();
}
double Timer::stop() {
  if (!gpu_) return now_ms() - t0_;
  detail::cuda_api::event_record(b_);
  return detail::cuda_api::elapsed_ms(a_, b_);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace tessera
