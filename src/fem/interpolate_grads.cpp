// Launches of the interpolation kernels with gradients (compiled by nvcc in CUDA builds with at
// most 128 registers per thread, so that 512-thread blocks always launch; see sources.cmake).
#include "interpolate_kernels.hpp"

#include "tessera/core/forall.hpp"

namespace tessera::fem::interp_detail {

void launch_family_grads(const char* label, const Exec& exec, const Teams& t, Geometry g, bool transpose, const Args& a) {
  switch (g) {
    case Geometry::Quadrilateral:
      if (!transpose) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { quad_forward<true>(ctx, a); });
      else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { quad_transpose<true>(ctx, a); });
      break;
    case Geometry::Hexahedron:
      if (!transpose) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { hex_forward<true>(ctx, a); });
      else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { hex_transpose<true>(ctx, a); });
      break;
    case Geometry::Triangle:
      if (!transpose) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { simplex_forward<true, 2>(ctx, a); });
      else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { simplex_transpose<true, 2>(ctx, a); });
      break;
    default:
      if (!transpose) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { simplex_forward<true, 3>(ctx, a); });
      else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { simplex_transpose<true, 3>(ctx, a); });
      break;
  }
}

}  // namespace tessera::fem::interp_detail
