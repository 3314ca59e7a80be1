#pragma once
/// \file device.hpp
/// GPU properties and run-time switches of the CUDA backend (no CUDA headers here).

#include <cstddef>
#include <string>
#include <vector>

namespace tessera {

/// Properties of one CUDA device, read with cudaGetDeviceProperties.
struct DeviceInfo {
  int id = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::size_t global_mem = 0;
  std::size_t shared_per_block = 0;        ///< default dynamic limit (48 KB)
  std::size_t shared_per_block_optin = 0;  ///< the most a block may opt in to
  std::size_t shared_per_sm = 0;
  std::size_t reserved_shared_per_block = 0;  ///< what the runtime keeps of each block's share
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int regs_per_sm = 0;
  std::size_t l2_bytes = 0;
  double peak_bandwidth_gbs = 0;  ///< 2 × memory clock × bus width (datasheet-style)
};

/// All CUDA devices visible to this process (empty without CUDA or GPU).
std::vector<DeviceInfo> cuda_devices();
/// The device CUDA launches run on. Throws tessera::Error when no GPU is usable.
const DeviceInfo& current_device();

/// Debug switch: synchronize after every launch so that asynchronous errors are
/// reported with the label of the kernel that caused them. Default: the environment
/// variable TESSERA_SYNC_LAUNCHES (set to 1 to enable).
void set_sync_launches(bool on);
bool sync_launches();

/// Blocks the host until all device work has finished; checks for errors. Returns at once
/// when no GPU is usable (CPU-only builds, or no device present).
void fence(const char* where = "tessera::fence");

}  // namespace tessera
