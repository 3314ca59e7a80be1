#include "tessera/core/memory.hpp"

#include <cstdlib>
#include <cstring>

#include "backend/cuda_api.hpp"
#include "tessera/core/array.hpp"
#include "tessera/core/error.hpp"

namespace tessera::detail {

void* allocate(Space space, std::size_t bytes, const std::string& label) {
  if (bytes == 0) return nullptr;
  switch (space) {
    case Space::Host: {
      void* p = std::aligned_alloc(128, (bytes + 127) / 128 * 128);
      TESSERA_REQUIRE(p, "Array '", label, "': out of host memory allocating ", bytes, " bytes");
      return p;
    }
    case Space::HostPinned: return cuda_api::malloc_pinned(bytes, label.c_str());
    case Space::Device: return cuda_api::malloc_device(bytes, label.c_str());
  }
  return nullptr;
}

void deallocate(Space space, void* ptr) noexcept {
  if (!ptr) return;
  switch (space) {
    case Space::Host: std::free(ptr); break;
    case Space::HostPinned: cuda_api::free_pinned(ptr); break;
    case Space::Device: cuda_api::free_device(ptr); break;
  }
}

void copy_bytes(void* dst, Space dst_space, const void* src, Space src_space, std::size_t bytes) {
  if (bytes == 0 || dst == src) return;
  if (dst_space != Space::Device && src_space != Space::Device)
    std::memmove(dst, src, bytes);
  else
    cuda_api::copy(dst, src, bytes);
}

void fill_bytes(void* dst, Space space, std::size_t count, const void* pattern, std::size_t pattern_size) {
  if (count == 0) return;
  if (space != Space::Device) {
    auto* d = static_cast<unsigned char*>(dst);
    for (std::size_t i = 0; i < count; ++i) std::memcpy(d + i * pattern_size, pattern, pattern_size);
    return;
  }
  cuda_api::fill(dst, count, pattern, pattern_size);
}

ArrayRecord* new_record(const std::string& label, Space space, std::size_t bytes) {
  auto* rec = new ArrayRecord;
  rec->label = label;
  rec->space = space;
  rec->bytes = bytes;
  try {
    rec->ptr = allocate(space, bytes, label);
    if (bytes) {
      if (space == Space::Device)
        cuda_api::memset_zero(rec->ptr, bytes);
      else
        std::memset(rec->ptr, 0, bytes);
    }
  } catch (...) {
    delete rec;
    throw;
  }
  return rec;
}

void release_record(ArrayRecord* rec) noexcept {
  if (rec->count.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    deallocate(rec->space, rec->ptr);
    delete rec;
  }
}

int pointer_space(const void* p) { return cuda_api::pointer_space(p); }

}  // namespace tessera::detail
