// Load vectors: source values at quadrature points integrated against the basis, and the
// thermal-expansion load of linear elasticity (compiled by nvcc in CUDA builds).
#include <vector>

#include "assembly_physics.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/fem/assembly.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

namespace assembly_detail {
int form_degree(const Mesh& mesh, int p, FormKind kind, const AssemblyOptions& opt);
std::vector<Geometry> volume_geometries(const Mesh& mesh);
/// x(e, q, r) = sum_v N(q, v) X(e, v, r) for r < sdim.
void physical_points(const Exec& exec, View<const double, 3> X, View<const double, 2> N, int sdim,
                     View<double, 3> x) {
  const int nv = static_cast<int>(N.extent(1));
  forall("fem/load_points", exec, Bounds<2>{x.extent(0), x.extent(1)}, TESSERA_LAMBDA(index_t e, index_t q) {
    for (int r = 0; r < sdim; ++r) {
      double s = 0;
      for (int v = 0; v < nv; ++v) s += N(q, v) * X(e, v, r);
      x(e, q, r) = s;
    }
  });
}

}  // namespace assembly_detail

namespace ad = assembly_detail;

struct LoadAssembler::Impl {
  struct Part {
    QuadratureRule rule;
    ElementRestriction R;
    GeometricFactors gf;  // w det J and J^-1
    Array<double, 2> B;   // (nq, npe)
    Array<double, 3> G;   // (nq, npe, dim)
    LoadPoints points;
  };
  const H1Space* space = nullptr;
  Exec exec;
  AssemblyOptions opt;
  int degree = 0;
  std::vector<Part> parts;
};

LoadAssembler::LoadAssembler(const H1Space& space, Exec exec, const AssemblyOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.space = &space;
  m.exec = exec;
  m.opt = options;
  const Mesh& mesh = space.mesh();
  const int p = space.order();
  m.degree = ad::form_degree(mesh, p, FormKind::Mass, options);
  const bool embedded = mesh.space_dim() != mesh.dim();
  for (Geometry g : ad::volume_geometries(mesh)) {
    const QuadratureRule rule = quadrature(g, m.degree, options.quadrature);
    ElementRestriction R(space, g, exec);
    GeometricFactorKernel gk(mesh, g, rule, exec);
    GeometricFactors gf = gk.allocate(embedded ? GeometricFactorFlags::WDetJ
                                               : GeometricFactorFlags::WDetJ | GeometricFactorFlags::Jinv);
    gk.compute(gf, embedded ? GeometricFactorFlags::WDetJ : GeometricFactorFlags::WDetJ | GeometricFactorFlags::Jinv);
    gk.check();
    const BasisTables t = tabulate(H1Basis(g, p), rule);
    // Physical points: x(e, q) = sum_v N_v(xi_q) X(e, v), with the map's shape functions
    // (vertex ones, or a curved mesh's order-k basis) tabulated on the host.
    const index_t ne = R.num_elements();
    const int nq = static_cast<int>(rule.size()), sdim = mesh.space_dim();
    const Array<double, 2> N = map_shape_values(mesh, g, rule.points);
    Array<double, 2> Nd = exec.on_device() ? N.to_device() : N;
    LoadPoints lp{g, ne, nq, Array<double, 3>("fem/load points", {ne, nq, 3}, exec.space()),
                  Array<int, 1>("fem/load attributes", {ne})};
    ad::physical_points(exec, gk.coordinates().cview(), Nd.cview(), sdim, lp.x.view());
    std::vector<int> attr(static_cast<std::size_t>(ne));
    for (index_t k = 0; k < ne; ++k) attr[std::size_t(k)] = mesh.element_attribute(R.element_ids()[std::size_t(k)]);
    lp.attribute = Array<int, 1>::from("fem/load attributes", attr, exec.space());
    m.parts.push_back(Impl::Part{rule, std::move(R), std::move(gf), exec.on_device() ? t.B.to_device() : t.B,
                                 exec.on_device() ? t.G.to_device() : t.G, std::move(lp)});
  }
}

LoadAssembler::~LoadAssembler() = default;
LoadAssembler::LoadAssembler(LoadAssembler&&) noexcept = default;
LoadAssembler& LoadAssembler::operator=(LoadAssembler&&) noexcept = default;

int LoadAssembler::num_parts() const { return static_cast<int>(impl_->parts.size()); }
const LoadPoints& LoadAssembler::points(int part) const {
  TESSERA_REQUIRE(part >= 0 && part < num_parts(), "fem::LoadAssembler::points: part ", part, " of ", num_parts());
  return impl_->parts[std::size_t(part)].points;
}

std::vector<Array<double, 3>> LoadAssembler::allocate_source() const {
  std::vector<Array<double, 3>> out;
  for (const auto& p : impl_->parts)
    out.emplace_back("fem/load source", std::array<index_t, 3>{p.points.num_elements, impl_->space->components(),
                                                                p.points.num_points},
                     impl_->exec.space());
  return out;
}

Array<double, 1> LoadAssembler::assemble(const std::vector<Array<double, 3>>& source) const {
  const Impl& m = *impl_;
  TESSERA_REQUIRE(source.size() == m.parts.size(), "fem::LoadAssembler::assemble: ", source.size(),
                  " source arrays for ", m.parts.size(), " parts (one per geometry: see allocate_source())");
  const int comps = m.space->components();
  Array<double, 1> b("fem/load vector", {m.space->num_dofs()}, m.exec.space());
  for (std::size_t i = 0; i < m.parts.size(); ++i) {
    const auto& p = m.parts[i];
    const index_t ne = p.points.num_elements;
    const int nq = p.points.num_points, npe = p.R.nodes_per_element();
    TESSERA_REQUIRE(source[i].extent(0) == ne && source[i].extent(1) == comps && source[i].extent(2) == nq,
                    "fem::LoadAssembler::assemble: source ", i, " has extents (", source[i].extent(0), ", ",
                    source[i].extent(1), ", ", source[i].extent(2), "), expected (", ne, ", ", comps, ", ", nq, ")");
    Array<double, 3> local("fem/load local", {ne, comps, npe}, m.exec.space());
    const auto f = source[i].cview();
    const auto B = p.B.cview();
    const auto w = p.gf.wdetJ.cview();
    auto l = local.view();
    forall("fem/load_integrate", m.exec, Bounds<3>{ne, comps, npe}, TESSERA_LAMBDA(index_t e, index_t c, index_t j) {
      double s = 0;
      for (int q = 0; q < nq; ++q) s = ad::madd(f(e, c, q) * w(e, q), B(q, j), s);
      l(e, c, j) = s;
    });
    p.R.scatter_add(local.cview(), b.view());
  }
  return b;
}

Array<double, 1> LoadAssembler::thermal_expansion_load(const H1Space& t_space, View<const double, 1> T,
                                                       const MaterialTable& materials) const {
  const Impl& m = *impl_;
  const Mesh& mesh = m.space->mesh();
  const int dim = mesh.dim(), comps = m.space->components();
  TESSERA_REQUIRE(comps == dim && mesh.space_dim() == dim, "fem::LoadAssembler::thermal_expansion_load: the space "
                  "has ", comps, " component(s) on a ", dim, "-dimensional mesh in ", mesh.space_dim(),
                  " dimensions; it needs one component per dimension");
  TESSERA_REQUIRE(&t_space.mesh() == &mesh && t_space.components() == 1,
                  "fem::LoadAssembler::thermal_expansion_load: the temperature space must be a scalar space on "
                  "the same mesh");
  TESSERA_REQUIRE(T.size() == t_space.num_dofs(), "fem::LoadAssembler::thermal_expansion_load: T has ", T.size(),
                  " entries, its space ", t_space.num_dofs(), " DOFs");
  Array<double, 1> b("fem/thermal load", {m.space->num_dofs()}, m.exec.space());
  for (const auto& p : m.parts) {
    const Geometry g = p.points.geometry;
    const index_t ne = p.points.num_elements;
    const int nq = p.points.num_points, npe = p.R.nodes_per_element();
    ElementRestriction RT(t_space, g, m.exec);
    const int npt = RT.nodes_per_element();
    Array<double, 3> Te("fem/thermal T local", {ne, 1, npt}, m.exec.space());
    RT.gather(T, Te.view());
    const BasisTables tt = tabulate(H1Basis(g, t_space.order()), p.rule);
    const Array<double, 2> BT = m.exec.on_device() ? tt.B.to_device() : tt.B;
    std::vector<double> beta(static_cast<std::size_t>(ne));
    for (index_t k = 0; k < ne; ++k) {
      const Material mat = material_of(materials, mesh.element_attribute(p.R.element_ids()[std::size_t(k)]));
      beta[std::size_t(k)] = (3 * mat.lambda + 2 * mat.mu) * mat.expansion;
    }
    const Array<double, 1> be = Array<double, 1>::from("fem/thermal beta", beta, m.exec.space());
    // T w det J at the points, once per element and point (not again for every test function)
    Array<double, 2> Tw("fem/thermal T at the points", {ne, nq}, m.exec.space());
    {
      const auto te = Te.cview();
      const auto bt = BT.cview();
      const auto w = p.gf.wdetJ.cview();
      auto tw = Tw.view();
      forall("fem/thermal_points", m.exec, Bounds<2>{ne, nq}, TESSERA_LAMBDA(index_t e, index_t q) {
        double tq = 0;
        for (int j = 0; j < npt; ++j) tq = ad::madd(bt(q, j), te(e, 0, j), tq);
        tw(e, q) = tq * w(e, q);
      });
    }
    Array<double, 3> local("fem/thermal local", {ne, comps, npe}, m.exec.space());
    const auto tw = Tw.cview();
    const auto G = p.G.cview();
    const auto Ji = p.gf.Jinv.cview();
    const auto bv = be.cview();
    auto l = local.view();
    forall("fem/thermal_load", m.exec, Bounds<3>{ne, comps, npe}, TESSERA_LAMBDA(index_t e, index_t c, index_t i) {
      double s = 0;
      for (int q = 0; q < nq; ++q) {
        double gc = 0;  // d phi_i / d x_c = sum_a G(q, i, a) J^-1(a, c)
        for (int a = 0; a < dim; ++a) gc = ad::madd(G(q, i, a), Ji(e, a, c, q), gc);
        s = ad::madd(tw(e, q), gc, s);
      }
      l(e, c, i) = bv(e) * s;
    });
    p.R.scatter_add(local.cview(), b.view());
  }
  return b;
}

}  // namespace tessera::fem
