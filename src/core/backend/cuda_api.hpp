#pragma once
// Internal: the CUDA runtime services the rest of the library needs, without CUDA
// headers. Implemented by cuda_runtime.cu (CUDA builds) or cuda_stub.cpp.
#include <cstddef>

namespace tessera::detail::cuda_api {
bool compiled();
int device_count();  // 0 when no usable GPU (never throws)
void* malloc_device(std::size_t bytes, const char* label);
void* malloc_pinned(std::size_t bytes, const char* label);
void free_device(void* p) noexcept;
void free_pinned(void* p) noexcept;
/// Copy with cudaMemcpyDefault (unified addressing), then wait for it.
void copy(void* dst, const void* src, std::size_t bytes);
void fill(void* dst, std::size_t count, const void* pattern, std::size_t pattern_size);
void memset_zero(void* dst, std::size_t bytes);
float elapsed_ms(void* start, void* stop);
/// Memory space of the allocation holding p as a tessera::Space value, or -1 when the
/// runtime cannot tell (no GPU, managed memory).
int pointer_space(const void* p);
void* event_create();
void event_record(void* e);
void event_destroy(void* e) noexcept;
}  // namespace tessera::detail::cuda_api
