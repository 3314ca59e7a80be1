// The interpolation kernels without gradients (compiled by nvcc in CUDA builds, with the
// compiler's own register allocation: these kernels are latency-bound and need occupancy).
#include "interpolate_launch.hpp"

namespace tessera::fem::interp_detail {

void launch_family_values(const char* label, const Exec& exec, const Teams& t, Geometry g, bool transpose,
                          const Args& a) {
  launch_family<false>(label, exec, t, g, transpose, a);
}

}  // namespace tessera::fem::interp_detail
