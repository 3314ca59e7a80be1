// CUDA graph helpers of tensor::Module. Compiled by nvcc in CUDA builds (see
// sources.cmake); without CUDA every helper throws tessera::Error.
#include "tessera/core/error.hpp"
#include "tessera/tensor/module.hpp"

#if defined(__CUDACC__)
#include "tessera/core/backend/cuda.hpp"
#endif

namespace tessera::tensor::detail {

#if defined(__CUDACC__)

void* graph_stream_create() {
  cudaStream_t s = nullptr;
  TESSERA_CUDA_CHECK(cudaStreamCreate(&s));
  return s;
}
void graph_stream_destroy(void* stream) noexcept {
  if (stream) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}
void graph_begin_capture(void* stream) {
  TESSERA_CUDA_CHECK(cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), cudaStreamCaptureModeThreadLocal));
}
void* graph_end_capture(void* stream) {
  cudaGraph_t graph = nullptr;
  TESSERA_CUDA_CHECK(cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (err != cudaSuccess) tessera::detail::cuda_fail(err, "cudaGraphInstantiate (tensor::Module)", __FILE__, __LINE__);
  return exec;
}
void graph_launch(void* graph, void* stream) {
  TESSERA_CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), static_cast<cudaStream_t>(stream)));
}
void graph_destroy(void* graph) noexcept {
  if (graph) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph));
}

#else

namespace {
[[noreturn]] void no_cuda() {
  fail("tensor::Module: CUDA graphs need the CUDA backend, and this build of tessera has none");
}
}  // namespace
void* graph_stream_create() { no_cuda(); }
void graph_stream_destroy(void*) noexcept {}
void graph_begin_capture(void*) { no_cuda(); }
void* graph_end_capture(void*) { no_cuda(); }
void graph_launch(void*, void*) { no_cuda(); }
void graph_destroy(void*) noexcept {}

#endif

}  // namespace tessera::tensor::detail
