// cpu_detail::make_batched: the inputs of the element-batched CPU operator from an H1Operator
// part (1-D tables on the rule's points, indices, stored factors, affine elements' factors).
#include <array>
#include <cmath>
#include <functional>
#include <span>

#include "../element_tables.hpp"  // element_vertices, reference_corners
#include "common.hpp"  // determinant, invert, packed_metric
#include "cpu_batched.hpp"
#include "tessera/core/error.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/basis1d.hpp"
#include "tessera/fem/geometric_factors.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/quadrature.hpp"
#include "tessera/fem/restriction.hpp"

namespace tessera::fem::cpu_detail {

namespace {

using Mat = std::array<std::array<double, 3>, 3>;

/// The Jacobian of mesh element id where it is the same at every corner of the reference
/// square or cube to 1e-14 relative to its largest entry (then the first-order map is affine
/// and J is that constant); false otherwise.
bool affine_jacobian(const Mesh& mesh, index_t id, int dim, Mat& J) {
  const std::array<double, 3> origin{0, 0, 0};
  J = mesh.jacobian(id, std::span<const double>(origin.data(), std::size_t(dim)));
  double scale = 0;
  for (int r = 0; r < dim; ++r)
    for (int c = 0; c < dim; ++c) scale = std::max(scale, std::abs(J[r][c]));
  for (int corner = 1; corner < (1 << dim); ++corner) {
    std::array<double, 3> xi{};
    for (int d = 0; d < dim; ++d) xi[std::size_t(d)] = (corner >> d) & 1;
    const Mat Jc = mesh.jacobian(id, std::span<const double>(xi.data(), std::size_t(dim)));
    for (int r = 0; r < dim; ++r)
      for (int c = 0; c < dim; ++c)
        if (std::abs(Jc[r][c] - J[r][c]) > 1e-14 * scale) return false;
  }
  return true;
}

}  // namespace

index_t affine_element_factors(const Mesh& mesh, const ElementRestriction& r, Geometry g, bool diffusion,
                               std::vector<double>& factor, std::vector<std::uint8_t>& affine) {
  factor.clear();
  affine.clear();
  const int dim = fem::dim(g);
  if (mesh.has_nodes() || mesh.space_dim() != dim || g == Geometry::Segment) return 0;
  const bool tensor = is_tensor(g);
  const int nf = diffusion ? dim * (dim + 1) / 2 : 1;
  const index_t ne = r.num_elements();
  factor.assign(std::size_t(ne) * nf, 0.0);
  affine.assign(std::size_t(ne), 0);
  index_t valid_affine = 0;
  const auto& ids = r.element_ids();
  for (index_t e = 0; e < ne; ++e) {
    Mat J;
    if (tensor && !affine_jacobian(mesh, ids[std::size_t(e)], dim, J)) continue;
    if (!tensor) {  // a straight-sided simplex: J is constant
      const std::array<double, 3> xi{0.25, 0.25, 0.25};
      J = mesh.jacobian(ids[std::size_t(e)], std::span<const double>(xi.data(), std::size_t(dim)));
    }
    double Jm[3][3] = {}, Ji[3][3] = {};
    for (int a = 0; a < dim; ++a)
      for (int b = 0; b < dim; ++b) Jm[a][b] = J[std::size_t(a)][std::size_t(b)];
    double* f = factor.data() + std::size_t(e) * nf;
    const double det = dim == 2 ? interp_detail::determinant<2>(Jm) : interp_detail::determinant<3>(Jm);
    if (!diffusion) {
      f[0] = det;
    } else if (dim == 2) {
      interp_detail::invert<2>(Jm, Ji);
      interp_detail::packed_metric<2>(Ji, det, f);
    } else {
      interp_detail::invert<3>(Jm, Ji);
      interp_detail::packed_metric<3>(Ji, det, f);
    }
    affine[std::size_t(e)] = 1;
    valid_affine += det > 0;
  }
  return valid_affine;
}

std::shared_ptr<const BatchedOperator> make_batched(const Mesh& mesh, const ElementRestriction& r, Geometry g, int p,
                                                    const QuadratureRule& rule_in, bool diffusion,
                                                    const std::function<GeometricFactors()>& factors, const Exec& exec,
                                                    bool compress, bool fixed_sizes, int max_colours, bool on_the_fly) {
  if (exec.on_device() || g == Geometry::Segment) return nullptr;
  if (on_the_fly && (mesh.has_nodes() || mesh.space_dim() != fem::dim(g))) return nullptr;  // the team kernels name it
  const QuadratureRule rule = rule_in.to_host();
  const int dim = fem::dim(g);
  const bool tensor = is_tensor(g);
  const int m = tensor ? rule.n1d : 0;
  TESSERA_REQUIRE(!tensor || (m > 0 && rule.size() == (dim == 2 ? m * m : m * m * m)),
                  "fem::cpu_detail::make_batched: the rule on the ", name(g), " is not a tensor product");
  std::vector<double> B, x1(static_cast<std::size_t>(m));
  Array<double, 2> D;
  BasisTables ts;  // simplices
  int n = 0;
  bool nodal = false;
  if (tensor) {
    for (int k = 0; k < m; ++k) x1[std::size_t(k)] = rule.points(k, 0);
    const BasisTables1D t = tabulate(H1Basis(g, p).basis_1d(), std::span<const double>(x1));
    n = static_cast<int>(t.B.extent(1));
    B.resize(std::size_t(n) * m);
    nodal = n == m;
    for (int i = 0; i < n; ++i)
      for (int q = 0; q < m; ++q) {
        B[std::size_t(i) * m + q] = t.B(q, i);
        if (std::abs(t.B(q, i) - (i == q ? 1.0 : 0.0)) > 1e-14) nodal = false;  // the points are the nodes
      }
    D = LagrangeBasis1D(x1).derivatives(std::span<const double>(x1));
  } else {
    ts = tabulate(H1Basis(g, p), rule);
  }
  BatchedInput in;
  in.tensor = tensor;
  in.dim = dim;
  in.comps = r.components();
  in.n1 = n;
  in.m1 = m;
  in.ne = r.num_elements();
  in.nn = r.num_nodes();
  in.idx = r.indices().data();
  in.B = B.data();
  in.D = D.data();
  if (!tensor) {
    in.nd = static_cast<int>(ts.B.extent(1));
    in.nq = static_cast<int>(ts.B.extent(0));
    in.Bs = ts.B.data();
    in.Gs = ts.G.data();
  }
  in.weights = rule.weights.data();
  in.nodal = nodal;
  in.diffusion = diffusion;
  in.fixed_sizes = fixed_sizes;
  in.max_colours = max_colours;

  // Affine elements: det J or det J J^-1 J^-T (packed), J the constant Jacobian.
  std::vector<double> factor;
  std::vector<std::uint8_t> affine;
  index_t valid_affine = 0;  // affine elements with det J > 0
  if (compress || on_the_fly) {
    valid_affine = affine_element_factors(mesh, r, g, diffusion, factor, affine);
    if (!affine.empty()) {
      in.element_factor = factor.data();
      in.element_affine = affine.data();
    }
  }
  // The per-point factors only where some element needs them: not on a mesh of valid affine
  // elements, compressed (a Cartesian box at p = 3 would compute 169 MB to keep 1.3 MB). An
  // element with det J <= 0 makes geometric_factors() name it.
  // On the fly: the vertices (checked: an inverted element is named) and the 1-D points; the
  // factor is computed at every point of the non-affine elements, never stored.
  Array<double, 3> vertices;
  if (on_the_fly) {
    vertices = interp_detail::element_vertices(mesh, g, rule, exec);
    in.on_the_fly = true;
    in.vertices = vertices.data();
    in.points = x1.data();
    interp_detail::reference_corners("fem::H1Operator", g, in.corner);
  }
  GeometricFactors gf;
  if (!on_the_fly && (!compress || valid_affine < in.ne)) {
    gf = factors();
    in.qdata = diffusion ? gf.D.data() : gf.wdetJ.data();
    TESSERA_REQUIRE(in.qdata != nullptr, "fem::cpu_detail::make_batched: no stored factors");
  }
  return std::make_shared<const BatchedOperator>(in, exec, compress);
}

}  // namespace tessera::fem::cpu_detail
