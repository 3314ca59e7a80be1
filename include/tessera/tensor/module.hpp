#pragma once
/// \file tensor/module.hpp
/// `Module`: a sequence of tensor statements run in order, and on the CUDA backend
/// captured once into a CUDA graph and replayed with one cudaGraphLaunch (no launch
/// gaps between many small kernels).
///
///     tensor::Module gh;
///     gh.add(tensor::defer(gI(i_, j_)) = ...).add(tensor::defer(...) = ...);
///     gh.capture(exec);     // CUDA: builds the graph (a translation unit compiled by nvcc)
///     gh.run(exec);         // CUDA: replays the graph; CPU: runs the statements in order

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/core/graph.hpp"
#include "tessera/tensor/statement.hpp"

namespace tessera::tensor {

class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&& o) noexcept { swap(o); }
  Module& operator=(Module&& o) noexcept {
    swap(o);
    return *this;
  }
  ~Module() { release(); }

  /// Appends a statement (copied: the Fields it uses must outlive the Module). Adding
  /// drops a captured graph.
  template <class St>
  Module& add(const St& s) {
    release();
    run_.push_back([s](const Exec& e) { s.run(e); });
#if defined(__CUDACC__)
    launch_.push_back([s](void* stream, int block) { s.launch_on_stream(stream, block); });
#else
    launch_.push_back(nullptr);
#endif
    return *this;
  }

  std::size_t size() const { return run_.size(); }

  /// On the CUDA backend: records every statement's kernel into one CUDA graph (the
  /// statements must have been added in a translation unit compiled by nvcc). On the
  /// CPU backends: nothing to do.
  void capture(const Exec& exec) {
    release();
    if (exec.backend != Backend::Cuda) return;
    for (const auto& f : launch_)
      TESSERA_REQUIRE(f != nullptr, "tensor::Module::capture: a statement was added in a translation unit not "
                                    "compiled by nvcc (list it in tessera_cuda_sources)");
    for (const auto& f : launch_) f(nullptr, exec.block_size);  // load the kernels first
    stream_ = tessera::detail::graph_stream_create();
    tessera::detail::graph_begin_capture(stream_);
    try {
      for (const auto& f : launch_) f(stream_, exec.block_size);
    } catch (...) {
      try {
        graph_ = tessera::detail::graph_end_capture(stream_);
      } catch (...) {
      }
      release();
      throw;
    }
    graph_ = tessera::detail::graph_end_capture(stream_);
  }
  bool captured() const { return graph_ != nullptr; }

  /// Runs the statements in order: the captured graph on CUDA when there is one, else
  /// one kernel per statement.
  void run(const Exec& exec) const {
    if (exec.backend == Backend::Cuda && graph_) {
      tessera::detail::graph_launch(graph_, stream_);
      return;
    }
    for (const auto& f : run_) f(exec);
  }

 private:
  void release() noexcept {
    if (graph_) tessera::detail::graph_destroy(graph_);
    if (stream_) tessera::detail::graph_stream_destroy(stream_);
    graph_ = nullptr;
    stream_ = nullptr;
  }
  void swap(Module& o) noexcept {
    std::swap(run_, o.run_);
    std::swap(launch_, o.launch_);
    std::swap(graph_, o.graph_);
    std::swap(stream_, o.stream_);
  }

  std::vector<std::function<void(const Exec&)>> run_;
  std::vector<std::function<void(void*, int)>> launch_;
  void* graph_ = nullptr;
  void* stream_ = nullptr;
};

}  // namespace tessera::tensor
