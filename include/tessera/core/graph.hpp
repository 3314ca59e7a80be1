#pragma once
/// \file graph.hpp
/// CUDA streams and graph capture, for layers that record a sequence of launches once and
/// replay it with one call (tensor::Module). The handles are opaque (cudaStream_t and
/// cudaGraphExec_t on the CUDA backend). Without the CUDA backend, creating a stream or
/// capturing throws tessera::Error naming the missing backend; destroying a null handle is a
/// no-op everywhere.
///
///     void* s = tessera::detail::graph_stream_create();
///     tessera::detail::graph_begin_capture(s);
///     ...                                  // launches on s (cuda_forall_on_stream)
///     void* g = tessera::detail::graph_end_capture(s);
///     tessera::detail::graph_launch(g, s); // replay, as often as needed

namespace tessera::detail {

/// A new CUDA stream.
void* graph_stream_create();
void graph_stream_destroy(void* stream) noexcept;
/// Starts recording the launches made on `stream` (thread-local capture mode).
void graph_begin_capture(void* stream);
/// Ends the recording and returns the instantiated graph.
void* graph_end_capture(void* stream);
/// Replays `graph` on `stream`.
void graph_launch(void* graph, void* stream);
void graph_destroy(void* graph) noexcept;

}  // namespace tessera::detail
