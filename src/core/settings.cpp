#include <atomic>
#include <cstdlib>
#include <cstring>

#include "tessera/core/device.hpp"

namespace tessera {
namespace {
std::atomic<bool>& sync_flag() {
  static std::atomic<bool> flag{[] {
    const char* v = std::getenv("TESSERA_SYNC_LAUNCHES");
    return v && *v && std::strcmp(v, "0") != 0;
  }()};
  return flag;
}
}  // namespace
void set_sync_launches(bool on) { sync_flag() = on; }
bool sync_launches() { return sync_flag(); }
}  // namespace tessera
