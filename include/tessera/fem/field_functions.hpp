#pragma once
/// \file field_functions.hpp
/// Functions of the physical coordinates on an H1 space, as kernels on every backend: the
/// nodal interpolant of a function, and the L2 and H1-seminorm errors of a finite-element
/// field against an exact solution.
///
///     struct Exact {   // a functor callable on the host and on the device
///       TESSERA_HOST_DEVICE double operator()(const double* x, double* grad) const {
///         const double u = exp(x[0]);
///         if (grad) { grad[0] = u; grad[1] = 0; grad[2] = 0; }
///         return u;
///       }
///     };
///     tessera::fem::H1Space space(mesh, 3);
///     Array<double, 1> u("u", {space.num_dofs()}, exec.space());
///     tessera::fem::interpolate_function(space, Exact{}, u.view(), exec);     // u = I(exact)
///     auto e = tessera::fem::error_norms(space, u.cview(), Exact{}, exec);    // e.l2, e.h1
///
/// The functor is copied into the kernels: it must be trivially copyable and its call operator
/// TESSERA_HOST_DEVICE (the translation unit that calls these templates is compiled by nvcc in
/// CUDA builds: list it with tessera_cuda_sources). It receives the physical point x (3
/// entries, those past the mesh's space dimension 0) and, where `grad` is not null, writes the
/// gradient's space-dimension entries.
///
/// Scalar spaces (one component). The element map is the mesh's (Mesh::map, as in
/// geometric_factors.hpp): the first-order map of the vertices, or the order-k map of a curved
/// mesh's nodes. Only elements of the mesh's dimension count.

#include <cmath>
#include <vector>

#include "tessera/core/array.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/core/reduce.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/geometric_factors.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/interpolate.hpp"
#include "tessera/fem/quadrature.hpp"
#include "tessera/fem/restriction.hpp"

namespace tessera::fem {

/// The element geometry that a function of the physical coordinates needs, for the elements
/// of one geometry (mesh.elements_of(g) order) at given reference points, in exec's space.
struct ElementPoints {
  Geometry geom = Geometry::Triangle;
  int space_dim = 0;
  Array<double, 3> X;  ///< (ne, nv, space_dim): the map's nodes (vertices or curved nodes)
  Array<double, 2> N;  ///< (np, nv): the map's shape functions at the points
};

/// Gathers the elements' map nodes (element_map_nodes: the vertices, or a curved mesh's
/// nodes) and tabulates the map's shape functions at `ref_points` ((np, dim(g)), any space);
/// both copied to exec's space.
ElementPoints element_points(const Mesh& mesh, Geometry g, const Array<double, 2>& ref_points, const Exec& exec);

/// The geometries of the mesh's dimension that the mesh has.
std::vector<Geometry> volume_geometries(const Mesh& mesh);

/// For each element-local node (k, i) of the restriction: 1 when no earlier element holds the
/// node (`seen`, one flag per global node, marks the nodes of the elements already visited,
/// and is updated), else 0; (ne, npe) in exec's space. Makes a nodal write deterministic.
Array<unsigned char, 2> first_owner_flags(const H1Space& space, const ElementRestriction& r,
                                          std::vector<unsigned char>& seen, const Exec& exec);

namespace field_detail {

/// x = sum_v N(j, v) X(k, v, :), 3 entries (0 past space_dim).
template <class VX, class VN>
TESSERA_INLINE void map_point(const VX& X, const VN& N, int nv, int sd, index_t k, index_t j, double* x) {
  x[0] = x[1] = x[2] = 0;
  for (int v = 0; v < nv; ++v) {
    const double n = N(j, v);
    for (int r = 0; r < sd; ++r) x[r] += n * X(k, v, r);
  }
}

}  // namespace field_detail

/// u(n) = f(x_n) at every global node n of the scalar space (x_n the node's physical
/// position); every node is written once, by the first element that holds it, so the result
/// is the same on every run. u has space.num_dofs() entries in exec's memory space.
/// Throws tessera::Error for a vector space or a vector of the wrong size.
template <class F>
void interpolate_function(const H1Space& space, const F& f, View<double, 1> u, const Exec& exec) {
  TESSERA_REQUIRE(space.components() == 1, "fem::interpolate_function: the space has ", space.components(),
                  " components; only scalar spaces are supported");
  TESSERA_REQUIRE(u.size() == space.num_dofs(), "fem::interpolate_function: the vector has ", u.size(),
                  " entries for ", space.num_dofs(), " DOFs");
  std::vector<unsigned char> seen(static_cast<std::size_t>(space.num_nodes()), 0);
  for (Geometry g : volume_geometries(space.mesh())) {
    const ElementRestriction r(space, g, exec);
    const H1Basis basis(g, space.order());
    const ElementPoints ep = element_points(space.mesh(), g, basis.nodes(), exec);
    const Array<unsigned char, 2> own = first_owner_flags(space, r, seen, exec);
    const auto X = ep.X.cview();
    const auto N = ep.N.cview();
    const auto idx = r.indices().cview();
    const auto ow = own.cview();
    const int nv = static_cast<int>(ep.X.extent(1)), sd = ep.space_dim;
    const F fc = f;
    forall("fem/interpolate_function", exec, Bounds<2>{r.num_elements(), r.nodes_per_element()},
           TESSERA_LAMBDA(index_t k, index_t i) {
             if (!ow(k, i)) return;
             double x[3];
             field_detail::map_point(X, N, nv, sd, k, i, x);
             u(idx(k, i)) = fc(x, nullptr);
           });
  }
}

/// L2 norm and H1 seminorm of an error (or of a field).
struct ErrorNorms {
  double l2 = 0;
  double h1 = 0;
};

/// ||uh - u||_L2 and |uh - u|_H1 over the mesh, by the rule of `degree` on each element
/// (-1: 2p + 3, q = p + 2 Gauss points per direction on quadrilaterals and hexahedra), with
/// uh's values and gradients from the Interpolator kernels and u from `exact` at the mapped
/// points: one interpolation and two reductions per geometry on exec's backend. uh has
/// space.num_dofs() entries in exec's memory space. `options` are the interpolators' (e.g.
/// kernels.cpu_batched = false: the team kernels on the CPU). Throws tessera::Error for a vector space
/// or a vector of the wrong size.
template <class F>
ErrorNorms error_norms(const H1Space& space, View<const double, 1> uh, const F& exact, const Exec& exec,
                       int degree = -1, const InterpolatorOptions& options = {}) {
  TESSERA_REQUIRE(space.components() == 1, "fem::error_norms: the space has ", space.components(),
                  " components; only scalar spaces are supported");
  TESSERA_REQUIRE(uh.size() == space.num_dofs(), "fem::error_norms: the vector has ", uh.size(), " entries for ",
                  space.num_dofs(), " DOFs");
  const int deg = degree >= 0 ? degree : 2 * space.order() + 3;
  double l2 = 0, h1 = 0;
  for (Geometry g : volume_geometries(space.mesh())) {
    const QuadratureRule rule = quadrature(g, deg);
    const Interpolator interp(space, g, rule, exec, options);
    QuadratureData qd = interp.allocate(Eval::Values | Eval::Gradients);
    interp.interpolate(uh, Eval::Values | Eval::Gradients, qd);
    const GeometricFactors gf = geometric_factors(space.mesh(), g, rule, exec, GeometricFactorFlags::WDetJ);
    const ElementPoints ep = element_points(space.mesh(), g, rule.points, exec);
    const auto X = ep.X.cview();
    const auto N = ep.N.cview();
    const auto val = qd.values.cview();
    const auto grd = qd.gradients.cview();
    const auto w = gf.wdetJ.cview();
    const int nv = static_cast<int>(ep.X.extent(1)), sd = ep.space_dim;
    const index_t nq = interp.num_points();
    const F fc = exact;
    l2 += transform_reduce(
        "fem/error_norm_l2", exec, interp.num_elements() * nq, 0.0,
        TESSERA_LAMBDA(index_t t) {
          const index_t k = t / nq, q = t % nq;
          double x[3];
          field_detail::map_point(X, N, nv, sd, k, q, x);
          const double d = val(k, 0, 0, q) - fc(x, nullptr);
          return w(k, q) * d * d;
        },
        Plus{});
    h1 += transform_reduce(
        "fem/error_norm_h1", exec, interp.num_elements() * nq, 0.0,
        TESSERA_LAMBDA(index_t t) {
          const index_t k = t / nq, q = t % nq;
          double x[3], gr[3] = {0, 0, 0};
          field_detail::map_point(X, N, nv, sd, k, q, x);
          fc(x, gr);
          double s = 0;
          for (int r = 0; r < sd; ++r) {
            const double d = grd(k, 0, r, q) - gr[r];
            s += d * d;
          }
          return w(k, q) * s;
        },
        Plus{});
  }
  return ErrorNorms{std::sqrt(l2), std::sqrt(h1)};
}

}  // namespace tessera::fem
