// The tables of one geometry's elements at a rule's points, shared by Interpolator and
// FusedOperator (element_tables.hpp).
#include "element_tables.hpp"

#include <cmath>

#include "operator/lines.hpp"  // mirror_symmetric: the line kernels' precondition, checked once here
#include "tensor_sizes.hpp"  // ipow
#include "tessera/core/error.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/geometric_factors.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem::interp_detail {

std::shared_ptr<const ElementTables> make_tables(const char* who, const H1Space& space, Geometry g,
                                                 const QuadratureRule& rule_in, const Exec& exec, index_t ne) {
  TESSERA_REQUIRE(g == Geometry::Triangle || g == Geometry::Quadrilateral || g == Geometry::Tetrahedron ||
                      g == Geometry::Hexahedron,
                  who, ": geometry '", name(g),
                  "' is not supported (valid: triangle, quadrilateral, tetrahedron, hexahedron)");
  TESSERA_REQUIRE(rule_in.geom == g, who, ": the quadrature rule is on a '", name(rule_in.geom),
                  "', the elements are '", name(g), "'");
  auto out = std::make_shared<ElementTables>();
  ElementTables& T = *out;
  ElementSizes& s = T.sizes;
  const Mesh& mesh = space.mesh();
  T.rule = rule_in.to_host();
  const QuadratureRule& rule = T.rule;
  s.geom_ = g;
  s.p_ = space.order();
  s.dim_ = fem::dim(g);
  s.sdim_ = mesh.space_dim();
  s.comps_ = space.components();
  s.nd_ = num_nodes(g, s.p_);
  s.nq_ = static_cast<int>(rule.size());
  s.nv_ = num_vertices(g);
  s.ne_ = ne;
  s.nn_ = space.num_nodes();
  s.exclusive_from_ = space.exclusive_from();
  s.tensor_ = is_tensor(g);
  const int dim = s.dim_, nq = s.nq_, nd = s.nd_;
  TESSERA_REQUIRE(nq >= 1, who, ": the quadrature rule has no points");
  const H1Basis basis(g, s.p_);
  reference_corners(who, g, T.corners);
  if (!s.tensor_) {
    const BasisTables t = tabulate(basis, rule);
    Array<double, 2> Bt("interp_Bt", {nd, nq}), Bq("interp_Bq", {nq, nd});
    Array<double, 3> Gt("interp_Gt", {dim, nd, nq}), Gq("interp_Gq", {dim, nq, nd});
    for (int q = 0; q < nq; ++q)
      for (int i = 0; i < nd; ++i) {
        Bt(i, q) = t.B(q, i);
        Bq(q, i) = t.B(q, i);
        for (int d = 0; d < dim; ++d) {
          Gt(d, i, q) = t.G(q, i, d);
          Gq(d, q, i) = t.G(q, i, d);
        }
      }
    T.Bt = exec.on_device() ? Bt.to_device() : Bt;
    T.Gt = exec.on_device() ? Gt.to_device() : Gt;
    T.Bq = exec.on_device() ? Bq.to_device() : Bq;
    T.Gq = exec.on_device() ? Gq.to_device() : Gq;
    return out;
  }
  const int nd1 = s.nd1_ = s.p_ + 1;
  const int nq1 = s.nq1_ = rule.n1d;
  TESSERA_REQUIRE(nq1 >= 1 && ipow(nq1, dim) == nq, who, ": the rule on the ", name(g), " has ", nq,
                  " points and n1d = ", rule.n1d,
                  "; sum factorization needs a tensor-product rule (tensor_quadrature or quadrature())");
  std::vector<double> x1(std::size_t(nq1), 0.0);
  for (int i = 0; i < nq1; ++i) x1[std::size_t(i)] = rule.points(i, 0);
  for (int q = 0; q < nq; ++q) {
    int rem = q;
    for (int d = 0; d < dim; ++d) {
      const int i = rem % nq1;
      rem /= nq1;
      TESSERA_REQUIRE(rule.points(q, d) == x1[std::size_t(i)], who, ": point ", q, " of the rule on the ", name(g),
                      " is not in the lexicographic tensor-product order (x fastest) of its 1-D points");
    }
  }
  const BasisTables1D t = tabulate(basis.basis_1d(), std::span<const double>(x1));
  Array<double, 2> Bt("interp_B1t", {nd1, nq1});
  Array<double, 3> Gt("interp_G1t", {1, nd1, nq1});
  for (int i = 0; i < nd1; ++i)
    for (int q = 0; q < nq1; ++q) {
      Bt(i, q) = t.B(q, i);
      Gt(0, i, q) = t.G(q, i);
    }
  s.nodal_points_ = nd1 == nq1;
  for (int i = 0; i < nd1; ++i)
    for (int q = 0; q < nq1; ++q)  // the nodal basis at its own nodes: 0 or 1 up to rounding
      if (std::abs(Bt(i, q) - (i == q ? 1.0 : 0.0)) > 1e-14) s.nodal_points_ = false;
  T.Bt_host.assign(Bt.data(), Bt.data() + Bt.size());
  T.Gt_host.assign(Gt.data(), Gt.data() + Gt.size());
  T.x1d_host = x1;
  T.Bt = exec.on_device() ? Bt.to_device() : Bt;
  T.Gt = exec.on_device() ? Gt.to_device() : Gt;
  T.x1d = Array<double, 1>::from("interp_x1d", std::span<const double>(x1), exec.space());
  // D(a, r) = l_r'(x_a), the derivatives of the Lagrange basis on the 1-D points at those points
  const Array<double, 2> D = LagrangeBasis1D(x1).derivatives(std::span<const double>(x1));
  T.Dq_host.assign(D.data(), D.data() + D.size());
  // checked once here rather than at each launch of a line kernel (fill_line_tables)
  s.mirror_symmetric_ = mirror_symmetric([&](int i, int q) { return Bt(i, q); }, nd1, nq1, 1) &&
                        mirror_symmetric([&](int r, int q) { return D(q, r); }, nq1, nq1, -1);
  T.Dq = Array<double, 1>::from("interp_Dq", std::span<const double>(D.data(), std::size_t(D.size())), exec.space());
  return out;
}

void ElementTables::fill(Args& a) const {
  const ElementSizes& s = sizes;
  const bool tensor = s.tensor_;
  a.dim = s.dim_;
  a.sdim = s.sdim_;
  a.comps = s.comps_;
  a.nd = s.nd_;
  a.nq = s.nq_;
  a.nd1 = s.nd1_;
  a.nq1 = s.nq1_;
  a.nv = s.nv_;
  a.nn = s.nn_;
  a.Bt = Bt.data();
  a.Gt = Gt.data();
  a.x1d = tensor ? x1d.data() : nullptr;
  a.host_Bt = tensor ? Bt_host.data() : nullptr;
  a.host_x1d = tensor ? x1d_host.data() : nullptr;
  a.host_Dq = tensor ? Dq_host.data() : nullptr;
  a.host_Gt = tensor ? Gt_host.data() : nullptr;
  a.Dq = tensor ? Dq.data() : nullptr;
  a.nodal_points = s.nodal_points_;
  a.mirror_symmetric = s.mirror_symmetric_;
  for (int v = 0; v < 8; ++v)
    for (int d = 0; d < 3; ++d) a.corner[v][d] = corners[v][d];
}

ElementBase::ElementBase(const char* who, const H1Space& space, Geometry g, const QuadratureRule& rule,
                         const Exec& exec)
    : exec_(exec), restr_(space, g, exec), mesh_(&space.mesh()),
      tables_(make_tables(who, space, g, rule, exec, restr_.num_elements())) {
  static_cast<ElementSizes&>(*this) = tables_->sizes;
}

void reference_corners(const char* who, Geometry g, int corner[8][3]) {
  for (int v = 0; v < num_vertices(g) && v < 8; ++v) {
    const auto x = reference_vertex(g, v);
    for (int d = 0; d < dim(g); ++d) {
      corner[v][d] = x[std::size_t(d)] > 0.5 ? 1 : 0;
      TESSERA_REQUIRE(x[std::size_t(d)] == 0.0 || x[std::size_t(d)] == 1.0, who, ": reference vertex not at a 0/1 corner");
    }
  }
}

Array<double, 3> element_vertices(const Mesh& mesh, Geometry g, const QuadratureRule& rule, const Exec& exec) {
  const GeometricFactorKernel k(mesh, g, rule, exec);
  k.check();  // inverted elements are named here rather than producing infinities
  return k.coordinates();
}

}  // namespace tessera::fem::interp_detail
