#pragma once
/// \file basis.hpp
/// `H1Basis`: nodal (Lagrange) bases of any order p >= 1 on the five reference elements,
/// and their tables at quadrature points.
///
///     tessera::fem::H1Basis basis(Geometry::Tetrahedron, 4);      // 35 nodes
///     auto rule = tessera::fem::quadrature(Geometry::Tetrahedron, 8);
///     auto t = tessera::fem::tabulate(basis, rule);                // t.B(q, i), t.G(q, i, d)
///
/// Local node i sits at lattice point lattice_nodes(g, p)[i] (reference_element.hpp):
/// - segment, quadrilateral, hexahedron: products of the 1-D Lagrange basis on the p + 1
///   Gauss–Lobatto–Legendre (GLL) points of [0, 1]; node n = (k (p + 1) + j) (p + 1) + i sits
///   at (x_i, x_j, x_k).
/// - triangle, tetrahedron: Warburton's warp & blend nodes (T. Warburton, "An explicit
///   construction of interpolation nodes on the simplex", J. Eng. Math. 56, 2006). Nodes on an
///   edge are the GLL points of that edge; the tetrahedron's nodes on each face are the
///   triangle's nodes mapped affinely onto the face; the node set is invariant under every
///   permutation of the vertices. The basis is evaluated through the orthonormal
///   (Proriol–Koornwinder–Dubiner) polynomials psi_m: phi_j(x) = sum_m psi_m(x) (V^-1)_mj with
///   the Vandermonde matrix V_im = psi_m(node_i), inverted once by LU with partial pivoting.

#include <span>
#include <vector>

#include "tessera/core/array.hpp"
#include "tessera/fem/basis1d.hpp"
#include "tessera/fem/geometry.hpp"
#include "tessera/fem/quadrature.hpp"

namespace tessera::fem {

/// Largest order H1Basis accepts on the triangle and the tetrahedron. At p = 20 the 1-norm
/// condition number of the warp & blend Vandermonde matrix is about 2e3 on the triangle and
/// 4e5 on the tetrahedron (1771 nodes), and phi_i(x_j) = delta_ij holds to ~5e-12; the set-up
/// (a dense O(n^3) inverse) then takes seconds, which grows quickly beyond.
inline constexpr int max_simplex_order = 20;

/// Largest order H1Basis accepts on `g`: max_basis_order_1d (basis1d.hpp) on the segment,
/// quadrilateral and hexahedron, max_simplex_order on the triangle and tetrahedron.
int max_basis_order(Geometry g);

/// The blend parameter alpha of Warburton's warp & blend construction used by
/// simplex_nodes(g, p): the optimised values of the paper's tables for p <= 15 (triangle:
/// minimal Lebesgue constant; tetrahedron: the paper's 3-D values), 5/3 (triangle) and
/// 1 (tetrahedron) above. alpha = 0 for p <= 2 (triangle) and p <= 3 (tetrahedron).
double warp_blend_alpha(Geometry g, int p);

/// Warp & blend nodes of the order-p triangle or tetrahedron, in the lattice order of
/// lattice_nodes(g, p): extents (num_nodes(g, p), dim(g)), reference coordinates.
/// `alpha` is the blend parameter of the element's interior. On the tetrahedron the faces
/// always carry the triangle's nodes (warp_blend_alpha(Triangle, p)), so that neighbouring
/// tetrahedra and triangles agree; `alpha` only blends them into the interior.
/// Edge nodes are placed exactly at the GLL points of the edge and vertices exactly at the
/// vertices.
Array<double, 2> warp_blend_nodes(Geometry g, int p, double alpha);

/// warp_blend_nodes(g, p, warp_blend_alpha(g, p)): the nodes of H1Basis on a simplex.
Array<double, 2> simplex_nodes(Geometry g, int p);

/// Equispaced nodes lattice / p of the order-p element (any geometry), extents
/// (num_nodes(g, p), dim(g)), in lattice order. For comparisons: H1Basis does not use them.
Array<double, 2> equispaced_nodes(Geometry g, int p);

/// The orthonormal polynomial basis of degree <= p on the reference element (orthonormal in
/// L2 of the reference element of geometry.hpp), num_nodes(g, p) functions:
/// - triangle / tetrahedron: the Proriol–Koornwinder–Dubiner polynomials of total degree
///   <= p, mode (i, j, k) in lattice order, built from Legendre and Jacobi P^(a,0)
///   polynomials of the collapsed coordinates; evaluated by recurrences on the homogeneous
///   (scaled) forms, so values and gradients are exact polynomials also at the collapsed
///   vertex (no division by 1 - y or 1 - z);
/// - segment / quadrilateral / hexahedron: products of the orthonormal Legendre polynomials
///   sqrt(2m + 1) P_m(2x - 1) of degree <= p in each variable, mode order as the nodes.
/// Writes the values at the point x (dim(g) coordinates) into `values` and, when `gradients`
/// is not empty, the gradients into gradients[m * dim(g) + d].
void orthonormal_basis(Geometry g, int p, std::span<const double> x, std::span<double> values,
                       std::span<double> gradients = {});

/// 1-norm condition number ||V||_1 ||V^-1||_1 of the Vandermonde matrix
/// V_im = psi_m(nodes(i, :)) of the orthonormal basis (orthonormal_basis) at the given
/// nodes (extents (num_nodes(g, p), dim(g))). Throws tessera::Error if V is singular.
double vandermonde_condition(Geometry g, int p, const Array<double, 2>& nodes);

/// Nodal H1 (continuous Lagrange) basis of order p on a reference element (see the file
/// comment for the nodes). Host-side: values and gradients are computed on the host.
class H1Basis {
 public:
  /// Order-p basis on `g`, p in 1..max_basis_order(g).
  H1Basis(Geometry g, int p);

  /// The reference element.
  Geometry geometry() const { return geom_; }
  /// Polynomial order p.
  int order() const { return order_; }
  /// Number of basis functions (= nodes), num_nodes(g, p).
  index_t size() const { return size_; }
  /// Spatial dimension of the reference element.
  int dim() const { return dim_; }

  /// Reference coordinates of the nodes, extents (size(), dim()), host memory, lattice order.
  const Array<double, 2>& nodes() const { return nodes_; }

  /// The 1-D GLL basis whose products form a tensor basis (throws on the simplices).
  const LagrangeBasis1D& basis_1d() const;

  /// phi_i(x) for i < size() into `values` (size() entries) at one point x (dim() entries).
  void eval(std::span<const double> x, std::span<double> values) const;
  /// Values and gradients at one point: values[i] = phi_i(x),
  /// gradients[i * dim() + d] = d phi_i / d x_d (size() and size() * dim() entries).
  void eval(std::span<const double> x, std::span<double> values, std::span<double> gradients) const;

  /// B(q, i) = phi_i(points(q, :)), extents (npts, size()); points: (npts, dim()), any space.
  Array<double, 2> eval(const Array<double, 2>& points) const;
  /// The same for points stored contiguously, x of point q at points[q * dim() + d].
  Array<double, 2> eval(std::span<const double> points) const;
  /// G(q, i, d) = d phi_i / d x_d at points(q, :), extents (npts, size(), dim()).
  Array<double, 3> gradients(const Array<double, 2>& points) const;
  /// The same for points stored contiguously, x of point q at points[q * dim() + d].
  Array<double, 3> gradients(std::span<const double> points) const;

  /// 1-norm condition number ||V||_1 ||V^-1||_1 of the Vandermonde matrix of the nodes in
  /// the orthonormal basis (orthonormal_basis); for tensor elements that of the 1-D GLL
  /// nodes in the orthonormal Legendre polynomials (the tensor Vandermonde matrix is its
  /// Kronecker power, whose condition number is this value to the power dim()).
  double vandermonde_condition() const;

 private:
  void check_point(std::size_t ncoords, const char* where) const;

  Geometry geom_;
  int order_;
  int dim_;
  index_t size_;
  Array<double, 2> nodes_;
  std::vector<LagrangeBasis1D> basis1d_;  // one entry on tensor elements, none on simplices
  std::vector<double> inv_vandermonde_;  // simplices: (V^-1)(m, j) at [m * size_ + j]
  double condition_ = 0.0;
};

/// Values and gradients of an H1Basis at the points of a quadrature rule (host arrays).
struct BasisTables {
  /// B(q, i) = phi_i(x_q), extents (number of points, number of basis functions).
  Array<double, 2> B;
  /// G(q, i, d) = d phi_i / d x_d (x_q), extents (points, basis functions, dim).
  Array<double, 3> G;

  /// A copy on the device if the tables are not there already (throws tessera::Error when
  /// no CUDA backend is usable).
  BasisTables to_device() const { return {B.to_device(), G.to_device()}; }
};

/// Tables of `basis` at the points of `rule` (rule.geom must be basis.geometry(); the points
/// may live in any space, they are copied to the host to read).
BasisTables tabulate(const H1Basis& basis, const QuadratureRule& rule);

/// Tables of the 1-D factor of a tensor basis (segment, quadrilateral, hexahedron) at the
/// points of a segment rule, for sum-factorized kernels: B(q, i) = phi_i(x_q) of the 1-D
/// GLL basis. Throws for simplices and for rules on other geometries.
BasisTables1D tabulate_1d(const H1Basis& basis, const QuadratureRule& rule_1d);

}  // namespace tessera::fem
