// The interpolation kernels with gradients (compiled by nvcc in CUDA builds with at most 128
// registers per thread, so that 512-thread blocks always launch; see sources.cmake).
#include "interpolate_launch.hpp"

namespace tessera::fem::interp_detail {

void launch_family_grads(const char* label, const Exec& exec, const Teams& t, Geometry g, bool transpose,
                         const Args& a) {
  launch_family<true>(label, exec, t, g, transpose, a);
}

}  // namespace tessera::fem::interp_detail
