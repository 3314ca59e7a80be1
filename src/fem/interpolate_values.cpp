// Launches of the interpolation kernels without gradients (compiled by nvcc in CUDA builds,
// with the compiler's own register allocation: these kernels are latency-bound and need occupancy).
#include "interpolate_kernels.hpp"

#include "tessera/core/forall.hpp"

namespace tessera::fem::interp_detail {

void launch_family_values(const char* label, const Exec& exec, const Teams& t, Geometry g, bool transpose, const Args& a) {
  switch (g) {
    case Geometry::Quadrilateral:
      if (!transpose) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { quad_forward<false>(ctx, a); });
      else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { quad_transpose<false>(ctx, a); });
      break;
    case Geometry::Hexahedron:
      if (!transpose) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { hex_forward<false>(ctx, a); });
      else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { hex_transpose<false>(ctx, a); });
      break;
    case Geometry::Triangle:
      if (!transpose) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { simplex_forward<false, 2>(ctx, a); });
      else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { simplex_transpose<false, 2>(ctx, a); });
      break;
    default:
      if (!transpose) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { simplex_forward<false, 3>(ctx, a); });
      else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { simplex_transpose<false, 3>(ctx, a); });
      break;
  }
}

}  // namespace tessera::fem::interp_detail
