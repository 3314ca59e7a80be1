#pragma once
/// \file fe_errors.hpp
/// Host-side helpers of the solver commands (`tessera poisson`, `tessera thermoelastic`):
/// nodal interpolation of a function, and L2 and H1-seminorm errors of a finite-element field
/// against an exact solution.
///
///     auto exact = [](index_t e, const std::array<double, 3>& x, double* u, double* g) { ... };
///     const auto err = tessera::app::fe_errors(space, uh, exact);   // err.l2, err.h1
///
/// A field of an H1Space with c components is a host vector of space.num_dofs() values,
/// component-major (dof(c, n) = c * num_nodes + n), as H1Space numbers it. Only elements of
/// the mesh's dimension count (boundary faces are not elements of the space).

#include <array>
#include <cmath>
#include <functional>
#include <span>
#include <vector>

#include "tessera/fem/basis.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/quadrature.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::app {

/// The geometries a solver command integrates over (those of dimension 2 and 3).
inline constexpr fem::Geometry kFeGeometries[] = {fem::Geometry::Triangle, fem::Geometry::Quadrilateral,
                                                  fem::Geometry::Tetrahedron, fem::Geometry::Hexahedron};

/// An exact solution: for element e and physical point x, writes the `components` values to
/// value[c] and, when grad is not null, their gradients to grad[3 c + d] (d < mesh
/// dimension). The element lets the solution depend on the element's material (its attribute).
using ExactField = std::function<void(index_t e, const std::array<double, 3>& x, double* value, double* grad)>;

/// L2 norm and H1 seminorm of the error, summed over the components.
struct FeErrors {
  double l2 = 0;
  double h1 = 0;
};

/// Calls f(element, local node i, global node, physical position of the node) for every node
/// of every element of the space (shared nodes once per element that has them).
template <class F>
void for_each_element_node(const fem::H1Space& space, const F& f) {
  const fem::Mesh& mesh = space.mesh();
  for (fem::Geometry g : kFeGeometries) {
    if (mesh.num_elements(g) == 0 || fem::dim(g) != mesh.dim()) continue;
    const fem::H1Basis basis(g, space.order());
    for (index_t e : mesh.elements_of(g)) {
      const auto nodes = space.element_nodes(e);
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        double xi[3] = {0, 0, 0};
        for (int d = 0; d < basis.dim(); ++d) xi[d] = basis.nodes()(int(i), d);
        f(e, int(i), nodes[i], mesh.map(e, std::span<const double>(xi, std::size_t(basis.dim()))));
      }
    }
  }
}

/// The nodal interpolant of `exact` (space.num_dofs() values). A node shared by elements of
/// different materials takes the value seen from the last of them: exact solutions whose value
/// jumps across a material interface are not representable anyway.
inline std::vector<double> fe_interpolate(const fem::H1Space& space, const ExactField& exact) {
  std::vector<double> out(std::size_t(space.num_dofs()), 0.0);
  std::vector<double> v(std::size_t(space.components()));
  for_each_element_node(space, [&](index_t e, int, index_t n, const std::array<double, 3>& x) {
    exact(e, x, v.data(), nullptr);
    for (int c = 0; c < space.components(); ++c) out[std::size_t(space.dof(c, n))] = v[std::size_t(c)];
  });
  return out;
}

/// L2 and H1-seminorm errors of uh against `exact`, with a rule of degree 2p + 4 on every
/// element (host computation, the mesh's first-order map).
inline FeErrors fe_errors(const fem::H1Space& space, const std::vector<double>& uh, const ExactField& exact) {
  using namespace tessera::fem;
  const Mesh& mesh = space.mesh();
  const int dim = mesh.dim();
  const int nc = space.components();
  double el2 = 0, eh1 = 0;
  std::vector<double> uex(std::size_t(nc), 0.0);
  std::vector<double> gex(3 * std::size_t(nc), 0.0);
  for (Geometry g : kFeGeometries) {
    if (mesh.num_elements(g) == 0 || fem::dim(g) != dim) continue;
    const QuadratureRule rule = quadrature(g, 2 * space.order() + 4);
    const BasisTables t = tabulate(H1Basis(g, space.order()), rule);
    for (index_t e : mesh.elements_of(g)) {
      const auto nodes = space.element_nodes(e);
      for (int q = 0; q < rule.size(); ++q) {
        double xi[3] = {0, 0, 0};
        for (int d = 0; d < dim; ++d) xi[d] = rule.points(q, d);
        const std::span<const double> xs(xi, std::size_t(dim));
        const auto J = mesh.jacobian(e, xs);
        exact(e, mesh.map(e, xs), uex.data(), gex.data());
        // J^T (the transpose of the dim x dim block) and its determinant, for the physical
        // gradient g that solves J^T g = grad_xi u_h (Cramer's rule).
        double A[3][3];
        for (int r = 0; r < dim; ++r)
          for (int c = 0; c < dim; ++c) A[r][c] = J[std::size_t(c)][std::size_t(r)];
        const auto det3 = [](double M[3][3]) {
          return M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
                 M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0]);
        };
        const double w = rule.weights(q) * mesh.det_jacobian(e, xs);
        for (int c = 0; c < nc; ++c) {
          double v = 0, gref[3] = {0, 0, 0};
          for (std::size_t i = 0; i < nodes.size(); ++i) {
            const double ui = uh[std::size_t(space.dof(c, nodes[i]))];
            v += t.B(q, int(i)) * ui;
            for (int d = 0; d < dim; ++d) gref[d] += t.G(q, int(i), d) * ui;
          }
          double gph[3] = {0, 0, 0};
          if (dim == 2) {
            const double det = A[0][0] * A[1][1] - A[0][1] * A[1][0];
            gph[0] = (gref[0] * A[1][1] - A[0][1] * gref[1]) / det;
            gph[1] = (A[0][0] * gref[1] - gref[0] * A[1][0]) / det;
          } else {
            const double det = det3(A);
            for (int k = 0; k < 3; ++k) {
              double Mk[3][3];
              for (int r = 0; r < 3; ++r)
                for (int cc = 0; cc < 3; ++cc) Mk[r][cc] = cc == k ? gref[r] : A[r][cc];
              gph[k] = det3(Mk) / det;
            }
          }
          double diff_g = 0;
          for (int d = 0; d < dim; ++d) {
            const double dg = gph[d] - gex[3 * std::size_t(c) + std::size_t(d)];
            diff_g += dg * dg;
          }
          const double du = v - uex[std::size_t(c)];
          el2 += w * du * du;
          eh1 += w * diff_g;
        }
      }
    }
  }
  return {std::sqrt(el2), std::sqrt(eh1)};
}

}  // namespace tessera::app
