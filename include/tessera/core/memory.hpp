#pragma once
/// \file memory.hpp
/// Raw allocation and copies between memory spaces (host, pinned host, device).
/// Backend-neutral declarations; the CUDA parts live in src/core/backend/.

#include <cstddef>
#include <string>

#include "tessera/core/exec.hpp"

namespace tessera::detail {

/// Allocates `bytes` in `space`, aligned to at least 128 bytes. Throws tessera::Error
/// naming `label`, the size and the reason (out of memory, no CUDA backend, ...).
void* allocate(Space space, std::size_t bytes, const std::string& label);
/// Frees memory from allocate(); never throws.
void deallocate(Space space, void* ptr) noexcept;
/// Copies `bytes` between any two spaces (synchronous with respect to the host).
void copy_bytes(void* dst, Space dst_space, const void* src, Space src_space, std::size_t bytes);
/// Writes `count` copies of the `pattern_size`-byte pattern to `dst`.
void fill_bytes(void* dst, Space space, std::size_t count, const void* pattern, std::size_t pattern_size);

/// Memory space of the allocation holding p as a Space value, or -1 when this build cannot
/// tell (no CUDA backend or no GPU: then all memory is host memory; managed memory).
int pointer_space(const void* p);

}  // namespace tessera::detail
