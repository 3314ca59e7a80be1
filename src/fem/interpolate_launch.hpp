#pragma once
// The launches of the interpolation kernels, one template for the kernels with (G = true) and
// without (G = false) gradients; interpolate_values.cpp and interpolate_grads.cpp each
// instantiate one, so that the two sets compile with different register limits. nvcc needs a
// public enclosing function for extended lambdas, hence a free function.
#include "interpolate_kernels.hpp"

#include "tessera/core/forall.hpp"

namespace tessera::fem::interp_detail {

template <bool G>
void launch_family(const char* label, const Exec& exec, const Teams& t, Geometry g, bool transpose, const Args& a) {
  switch (g) {
    case Geometry::Quadrilateral:
      if (!transpose) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { quad_forward<G>(ctx, a); });
      else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { quad_transpose<G>(ctx, a); });
      break;
    case Geometry::Hexahedron:
      if (!transpose) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { hex_forward<G>(ctx, a); });
      else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { hex_transpose<G>(ctx, a); });
      break;
    case Geometry::Triangle:
      if (!transpose) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { simplex_forward<G, 2>(ctx, a); });
      else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { simplex_transpose<G, 2>(ctx, a); });
      break;
    default:
      if (!transpose) launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { simplex_forward<G, 3>(ctx, a); });
      else launch(label, exec, t, TESSERA_LAMBDA(TeamContext & ctx) { simplex_transpose<G, 3>(ctx, a); });
      break;
  }
}

}  // namespace tessera::fem::interp_detail
