// Interpolation at quadrature points and its transpose, on every backend.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "test_backends.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/interpolate.hpp"

using namespace tessera;
using namespace tessera::fem;

namespace {

const Eval kAll = Eval::Values | Eval::ReferenceGradients | Eval::Gradients;

/// A box mesh of geometry g mapped by a global affine map x -> A x + b: every element is a
/// parallelogram / parallelepiped (affine element map), none is axis-aligned. On such meshes
/// a physical polynomial of total degree <= p lies in the order-p space of every geometry.
Mesh affine_box(Geometry g) {
  const char* spec = g == Geometry::Triangle        ? "box:tri:3x2"
                     : g == Geometry::Quadrilateral ? "box:quad:3x2"
                     : g == Geometry::Tetrahedron   ? "box:tet:2x2x1"
                                                    : "box:hex:2x2x1";
  Mesh m = generate_mesh(spec);
  const double A[3][3] = {{1.0, 0.3, 0.1}, {-0.2, 0.9, 0.15}, {0.1, 0.25, 1.1}};
  const double b[3] = {0.2, -0.1, 0.3};
  const int sd = m.space_dim();
  auto x = m.coordinates();
  for (index_t v = 0; v < m.num_vertices(); ++v) {
    double y[3] = {0, 0, 0};
    for (int r = 0; r < sd; ++r) {
      y[r] = b[r];
      for (int c = 0; c < sd; ++c) y[r] += A[r][c] * x[std::size_t(v * sd + c)];
    }
    for (int r = 0; r < sd; ++r) x[std::size_t(v * sd + r)] = y[r];
  }
  return m;
}

/// A randomly perturbed box (non-affine quadrilaterals and hexahedra).
Mesh perturbed_box(Geometry g, const char* size) {
  const std::string gname = g == Geometry::Triangle        ? "tri"
                            : g == Geometry::Quadrilateral ? "quad"
                            : g == Geometry::Tetrahedron   ? "tet"
                                                           : "hex";
  return generate_mesh("box:" + gname + ":" + size + ":perturb=0.25:seed=3");
}

/// A random polynomial of total degree <= p in sd variables, one per component.
struct Poly {
  int sd = 2, p = 1, comps = 1;
  std::vector<std::array<int, 3>> mono;
  std::vector<double> coef;  // (comps, monomials)

  Poly(int sd_, int p_, int comps_, unsigned seed) : sd(sd_), p(p_), comps(comps_) {
    for (int a = 0; a <= p; ++a)
      for (int b = 0; a + b <= p; ++b)
        for (int c = 0; a + b + c <= p; ++c)
          if (sd == 3 || c == 0) mono.push_back({a, b, c});
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    coef.resize(mono.size() * std::size_t(comps));
    for (auto& x : coef) x = u(gen);
  }
  static double pw(double x, int k) { return k == 0 ? 1.0 : std::pow(x, k); }
  double value(int c, const std::array<double, 3>& x) const {
    double s = 0;
    for (std::size_t m = 0; m < mono.size(); ++m)
      s += coef[std::size_t(c) * mono.size() + m] * pw(x[0], mono[m][0]) * pw(x[1], mono[m][1]) * pw(x[2], mono[m][2]);
    return s;
  }
  double derivative(int c, int r, const std::array<double, 3>& x) const {
    double s = 0;
    for (std::size_t m = 0; m < mono.size(); ++m) {
      const int k = mono[m][std::size_t(r)];
      if (k == 0) continue;
      double t = coef[std::size_t(c) * mono.size() + m] * k;
      for (int d = 0; d < 3; ++d) t *= d == r ? pw(x[std::size_t(d)], k - 1) : pw(x[std::size_t(d)], mono[m][std::size_t(d)]);
      s += t;
    }
    return s;
  }
};

/// Global vector of the nodal interpolant of `f` (node positions through the element maps).
std::vector<double> nodal_values(const H1Space& space, Geometry g, const Poly& f) {
  const Mesh& mesh = space.mesh();
  const H1Basis basis(g, space.order());
  std::vector<double> u(std::size_t(space.num_dofs()), 0.0);
  for (index_t e : mesh.elements_of(g)) {
    const auto nodes = space.element_nodes(e);
    for (int i = 0; i < int(nodes.size()); ++i) {
      double xi[3] = {0, 0, 0};
      for (int d = 0; d < basis.dim(); ++d) xi[d] = basis.nodes()(i, d);
      const auto x = mesh.map(e, std::span<const double>(xi, std::size_t(basis.dim())));
      for (int c = 0; c < space.components(); ++c) u[std::size_t(space.dof(c, nodes[std::size_t(i)]))] = f.value(c, x);
    }
  }
  return u;
}

using tessera::fem::test::random_vector;

/// Host copy of an array at quadrature points as a function (e, c, d, q) for either layout.
struct HostPoints {
  Array<double, 4> a;
  QuadLayout l;
  double operator()(index_t e, int c, int d, int q) const {
    return l == QuadLayout::ElementMajor ? a(e, c, d, q) : a(c, d, e, q);
  }
};

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

std::vector<double> flat(const Array<double, 4>& a) {
  const auto h = a.to_host();
  return std::vector<double>(h.data(), h.data() + h.size());
}
/// An array of the given extents holding `v` (row-major), in `space`.
Array<double, 4> array4(const std::vector<double>& v, std::array<index_t, 4> ext, Space space) {
  Array<double, 4> h("v", ext, Space::Host);
  std::copy(v.begin(), v.end(), h.data());
  return space == Space::Host ? h : h.clone(space);
}

std::vector<double> flat3(const Array<double, 3>& a) {
  const auto h = a.to_host();
  return std::vector<double>(h.data(), h.data() + h.size());
}

/// Checks that interpolating the nodal interpolant of a degree-p polynomial reproduces its
/// values, reference gradients and physical gradients at every point of a degree-2p rule.
void check_exactness(const Exec& exec, const Mesh& mesh, Geometry g, int p, int comps, int fdeg,
                     InterpolatorOptions opt) {
  SCOPED_TRACE(std::string(name(g)) + " p=" + std::to_string(p) + " components=" + std::to_string(comps) +
               " degree=" + std::to_string(fdeg) + " " + name(opt.layout) + " " + name(opt.geometry));
  const H1Space space(mesh, p, comps);
  const QuadratureRule rule = quadrature(g, 2 * p);
  const Interpolator interp(space, g, rule, exec, opt);
  const Poly f(mesh.space_dim(), fdeg, comps, 11u + unsigned(p));
  const auto uh = nodal_values(space, g, f);
  auto u = Array<double, 1>::from("u", std::span<const double>(uh), exec.space());
  QuadratureData qd = interp.allocate(kAll);
  qd.values.fill(std::nan(""));  // poison: every entry must be written
  qd.reference_gradients.fill(std::nan(""));
  qd.gradients.fill(std::nan(""));
  interp.interpolate(u.cview(), kAll, qd);
  const HostPoints V{qd.values.to_host(), opt.layout}, R{qd.reference_gradients.to_host(), opt.layout},
      P{qd.gradients.to_host(), opt.layout};
  const auto ids = mesh.elements_of(g);
  const int dim = fem::dim(g), sd = mesh.space_dim();
  // Expected values first, to scale the tolerances.
  std::vector<double> ev, er, ep;
  for (index_t k = 0; k < index_t(ids.size()); ++k)
    for (int q = 0; q < rule.size(); ++q) {
      double xi[3] = {0, 0, 0};
      for (int d = 0; d < dim; ++d) xi[d] = rule.points(q, d);
      const auto x = mesh.map(ids[std::size_t(k)], std::span<const double>(xi, std::size_t(dim)));
      const auto J = mesh.jacobian(ids[std::size_t(k)], std::span<const double>(xi, std::size_t(dim)));
      for (int c = 0; c < comps; ++c) {
        ev.push_back(f.value(c, x));
        for (int d = 0; d < dim; ++d) {
          double s = 0;
          for (int r = 0; r < sd; ++r) s += f.derivative(c, r, x) * J[std::size_t(r)][std::size_t(d)];
          er.push_back(s);
        }
        for (int r = 0; r < sd; ++r) ep.push_back(f.derivative(c, r, x));
      }
    }
  // Roundoff: nodal values carry ~1e-16 relative error, amplified by the Lebesgue constant
  // of the nodes (< 10 for these orders) and, for gradients, by the derivative matrices
  // (~p^2) and 1/h; 1e-10 of the largest magnitude leaves a wide margin while any wrong
  // table, index or Jacobian gives O(1) errors.
  const double tv = 1e-10 * std::max(1.0, max_abs(ev)), tr = 1e-10 * std::max(1.0, max_abs(er)),
               tp = 1e-10 * std::max(1.0, max_abs(ep));
  std::size_t iv = 0, ir = 0, ip = 0;
  for (index_t k = 0; k < index_t(ids.size()); ++k)
    for (int q = 0; q < rule.size(); ++q)
      for (int c = 0; c < comps; ++c) {
        ASSERT_NEAR(V(k, c, 0, q), ev[iv++], tv) << "value, element " << k << " point " << q << " component " << c;
        for (int d = 0; d < dim; ++d)
          ASSERT_NEAR(R(k, c, d, q), er[ir++], tr) << "reference gradient " << d << ", element " << k << " point " << q;
        for (int r = 0; r < sd; ++r)
          ASSERT_NEAR(P(k, c, r, q), ep[ip++], tp) << "gradient " << r << ", element " << k << " point " << q;
      }
}

int max_order(Geometry g) { return is_tensor(g) ? 8 : 6; }

const Geometry kGeoms[] = {Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron, Geometry::Hexahedron};

}  // namespace

class InterpolateTest : public tessera::test::BackendTest {};
TESSERA_INSTANTIATE_BACKENDS(InterpolateTest);

TEST_P(InterpolateTest, ReproducesPolynomialsOfDegreePOnAffineMeshes) {
  for (Geometry g : kGeoms) {
    const Mesh mesh = affine_box(g);
    for (int p = 1; p <= max_order(g); ++p) check_exactness(exec(), mesh, g, p, 1, p, {});
    check_exactness(exec(), mesh, g, 2, fem::dim(g), 2, {});
  }
}

TEST_P(InterpolateTest, ReproducesPolynomialsWithStoredGeometryAndComponentMajorLayout) {
  InterpolatorOptions opt;
  opt.geometry = GeometrySource::Stored;
  opt.layout = QuadLayout::ComponentMajor;
  for (Geometry g : kGeoms) {
    const Mesh mesh = affine_box(g);
    for (int p : {1, 3}) check_exactness(exec(), mesh, g, p, 2, p, opt);
  }
}

TEST_P(InterpolateTest, ReproducesLinearFieldsOnPerturbedMeshes) {
  // Non-affine quadrilaterals and hexahedra: the multilinear map keeps physical linear
  // functions in the space, so values and both gradients stay exact, with the Jacobian
  // varying from point to point (on the fly and stored).
  for (Geometry g : kGeoms) {
    const Mesh mesh = perturbed_box(g, fem::dim(g) == 2 ? "4x3" : "2x2x2");
    for (int p : {1, 2, 4}) {
      InterpolatorOptions opt;
      check_exactness(exec(), mesh, g, p, 1, 1, opt);
      opt.geometry = GeometrySource::Stored;
      check_exactness(exec(), mesh, g, p, 3, 1, opt);
    }
  }
}

TEST_P(InterpolateTest, MatchesSerialBackendOnRandomInput) {
  // GPU and OpenMP against serial on random data: same operation order per element, so
  // OpenMP is bitwise equal; the GPU may contract a*b+c into FMAs, hence 1e-13 relative.
  for (Geometry g : kGeoms)
    for (int p : {1, 3, 5}) {
      SCOPED_TRACE(std::string(name(g)) + " p=" + std::to_string(p));
      const Mesh mesh = perturbed_box(g, fem::dim(g) == 2 ? "5x4" : "3x2x2");
      const H1Space space(mesh, p, 2);
      const QuadratureRule rule = quadrature(g, 2 * p);
      const auto uh = random_vector(std::size_t(space.num_dofs()), 5);
      const Interpolator ref(space, g, rule, Exec::serial());
      const Interpolator run(space, g, rule, exec());
      auto u0 = Array<double, 1>::from("u", std::span<const double>(uh), Space::Host);
      auto u1 = Array<double, 1>::from("u", std::span<const double>(uh), exec().space());
      auto a = ref.allocate(kAll);
      auto b = run.allocate(kAll);
      ref.interpolate(u0.cview(), kAll, a);
      run.interpolate(u1.cview(), kAll, b);
      const double tol = on_gpu() ? 1e-13 : 0.0;
      for (auto [x, y] : {std::pair{&a.values, &b.values}, std::pair{&a.reference_gradients, &b.reference_gradients},
                          std::pair{&a.gradients, &b.gradients}}) {
        const auto hx = flat(*x), hy = flat(*y);
        const double scale = std::max(1.0, max_abs(hx));
        for (std::size_t i = 0; i < hx.size(); ++i) ASSERT_NEAR(hy[i], hx[i], tol * scale) << i;
      }
      // The transpose of random point data.
      QuadratureData in0 = ref.allocate(kAll), in1 = run.allocate(kAll);
      for (auto [x, y, s] : {std::tuple{&in0.values, &in1.values, 1u}, std::tuple{&in0.reference_gradients,
                             &in1.reference_gradients, 2u}, std::tuple{&in0.gradients, &in1.gradients, 3u}}) {
        const auto r = random_vector(std::size_t(x->size()), s);
        *x = array4(r, x->extents(), Space::Host);
        *y = x->clone(exec().space());
      }
      Array<double, 3> e0("e0", {ref.num_elements(), 2, ref.nodes_per_element()}, Space::Host);
      Array<double, 3> e1("e1", {ref.num_elements(), 2, ref.nodes_per_element()}, exec().space());
      e1.fill(std::nan(""));
      ref.integrate(in0, kAll, e0.view());
      run.integrate(in1, kAll, e1.view());
      const auto h0 = flat3(e0), h1 = flat3(e1);
      const double scale = std::max(1.0, max_abs(h0));
      for (std::size_t i = 0; i < h0.size(); ++i) ASSERT_NEAR(h1[i], h0[i], tol * scale) << i;
    }
}

TEST_P(InterpolateTest, TransposeIsTheAdjoint) {
  // <I u, v> = <u, R^T I^T v> for random u and v, for each kind of output and both layouts.
  for (Geometry g : kGeoms)
    for (QuadLayout l : {QuadLayout::ElementMajor, QuadLayout::ComponentMajor})
      for (GeometrySource gs : {GeometrySource::OnTheFly, GeometrySource::Stored})
        for (Eval w : {Eval::Values, Eval::ReferenceGradients, Eval::Gradients, kAll}) {
          SCOPED_TRACE(std::string(name(g)) + " " + name(l) + " " + name(gs) + " " + name(w));
          const Mesh mesh = perturbed_box(g, fem::dim(g) == 2 ? "3x3" : "2x2x2");
          const H1Space space(mesh, 2, 2);
          InterpolatorOptions opt;
          opt.layout = l;
          opt.geometry = gs;
          const Interpolator interp(space, g, quadrature(g, 5), exec(), opt);
          const auto uh = random_vector(std::size_t(space.num_dofs()), 21);
          auto u = Array<double, 1>::from("u", std::span<const double>(uh), exec().space());
          QuadratureData iu = interp.allocate(w), v = interp.allocate(w);
          interp.interpolate(u.cview(), w, iu);
          double lhs = 0;
          unsigned seed = 40;
          for (auto [x, y] : {std::pair{&iu.values, &v.values}, std::pair{&iu.reference_gradients,
                              &v.reference_gradients}, std::pair{&iu.gradients, &v.gradients}}) {
            if (x->size() == 0) continue;
            const auto r = random_vector(std::size_t(y->size()), seed++);
            *y = array4(r, y->extents(), exec().space());
            const auto hx = flat(*x);
            for (std::size_t i = 0; i < r.size(); ++i) lhs += hx[i] * r[i];
          }
          Array<double, 1> y("y", {space.num_dofs()}, exec().space());
          interp.integrate_add(v, w, y.view());
          const auto hy = y.to_host();
          double rhs = 0;
          for (std::size_t i = 0; i < uh.size(); ++i) rhs += uh[i] * hy(index_t(i));
          // Two sums of ~1e3 products of O(1) terms in different orders: 1e-12 relative to
          // the sum of magnitudes would still be far above roundoff; use the value scale.
          EXPECT_NEAR(lhs, rhs, 1e-11 * std::max(1.0, std::abs(lhs)));
        }
}

TEST_P(InterpolateTest, EveryElementsPerBlockGivesIdenticalResults) {
  // 37-ish elements: most block sizes leave a partial last block.
  for (Geometry g : kGeoms) {
    const Mesh mesh = perturbed_box(g, fem::dim(g) == 2 ? "5x4" : "3x2x1");
    const H1Space space(mesh, 2, 2);
    const Interpolator interp(space, g, quadrature(g, 4), exec());
    const auto uh = random_vector(std::size_t(space.num_dofs()), 8);
    auto u = Array<double, 1>::from("u", std::span<const double>(uh), exec().space());
    const int cap = std::min(fem::dim(g) == 2 ? 32 : 16, interp.max_elements_per_block(kAll, false));
    QuadratureData first = interp.allocate(kAll);
    interp.interpolate_with(1, u.cview(), kAll, first);
    Array<double, 3> e_first("e", {interp.num_elements(), 2, interp.nodes_per_element()}, exec().space());
    interp.integrate_with(1, first, kAll, e_first.view());
    const auto f0 = flat(first.values), f1 = flat(first.reference_gradients), f2 = flat(first.gradients),
               fe = flat3(e_first);
    for (int epb = 2; epb <= cap; ++epb) {
      SCOPED_TRACE(std::string(name(g)) + " epb=" + std::to_string(epb));
      QuadratureData qd = interp.allocate(kAll);
      qd.values.fill(std::nan(""));
      qd.reference_gradients.fill(std::nan(""));
      qd.gradients.fill(std::nan(""));
      interp.interpolate_with(epb, u.cview(), kAll, qd);
      ASSERT_EQ(flat(qd.values), f0);
      ASSERT_EQ(flat(qd.reference_gradients), f1);
      ASSERT_EQ(flat(qd.gradients), f2);
      Array<double, 3> e("e", {interp.num_elements(), 2, interp.nodes_per_element()}, exec().space());
      e.fill(std::nan(""));
      interp.integrate_with(epb, qd, kAll, e.view());
      ASSERT_EQ(flat3(e), fe);
    }
  }
}

TEST_P(InterpolateTest, SeparateKindsEqualTheCombinedLaunch) {
  // The values-only kernel (no gradient buffers) gives the same bits as the combined one.
  for (Geometry g : kGeoms) {
    const Mesh mesh = perturbed_box(g, fem::dim(g) == 2 ? "3x3" : "2x2x1");
    const H1Space space(mesh, 3, 1);
    const Interpolator interp(space, g, quadrature(g, 6), exec());
    const auto uh = random_vector(std::size_t(space.num_dofs()), 9);
    auto u = Array<double, 1>::from("u", std::span<const double>(uh), exec().space());
    QuadratureData all = interp.allocate(kAll), v = interp.allocate(Eval::Values),
                   r = interp.allocate(Eval::ReferenceGradients);
    interp.interpolate(u.cview(), kAll, all);
    interp.interpolate(u.cview(), Eval::Values, v);
    interp.interpolate(u.cview(), Eval::ReferenceGradients, r);
    EXPECT_EQ(flat(v.values), flat(all.values)) << name(g);
    EXPECT_EQ(flat(r.reference_gradients), flat(all.reference_gradients)) << name(g);
  }
}

TEST_P(InterpolateTest, BadInputIsNamed) {
  const Mesh mesh = generate_mesh("box:hex:2x2x2");
  const H1Space space(mesh, 2, 1);
  EXPECT_ERROR_MENTIONS(Interpolator(space, Geometry::Hexahedron, quadrature(Geometry::Tetrahedron, 2), exec()),
                        "rule is on a 'tetrahedron'");
  EXPECT_ERROR_MENTIONS(Interpolator(space, Geometry::Tetrahedron, quadrature(Geometry::Tetrahedron, 2), exec()),
                        "tetrahedron");
  // A hexahedron rule whose points are not in tensor-product order.
  QuadratureRule shuffled = quadrature(Geometry::Hexahedron, 3).clone(Space::Host);
  for (int d = 0; d < 3; ++d) std::swap(shuffled.points(0, d), shuffled.points(1, d));
  EXPECT_ERROR_MENTIONS(Interpolator(space, Geometry::Hexahedron, shuffled, exec()), "tensor-product order");
  const Interpolator interp(space, Geometry::Hexahedron, quadrature(Geometry::Hexahedron, 4), exec());
  Array<double, 1> short_u("u", {space.num_dofs() - 1}, exec().space());
  QuadratureData qd = interp.allocate(Eval::Values);
  EXPECT_ERROR_MENTIONS(interp.interpolate(short_u.cview(), Eval::Values, qd), "global vector u", "entries");
  Array<double, 1> u("u", {space.num_dofs()}, exec().space());
  EXPECT_ERROR_MENTIONS(interp.interpolate(u.cview(), Eval::Gradients, qd), "QuadratureData::gradients",
                        "extents");
  EXPECT_ERROR_MENTIONS(interp.interpolate(u.cview(), Eval::None, qd), "nothing");
  Array<double, 3> e("e", {interp.num_elements(), 1, 3}, exec().space());
  EXPECT_ERROR_MENTIONS(interp.integrate(qd, Eval::Values, e.view()), "E-vector has extents");
  EXPECT_ERROR_MENTIONS(parse_eval("values+curl"), "unknown evaluation 'curl'");
  EXPECT_EQ(parse_eval("values+grad"), Eval::Values | Eval::Gradients);
  if (on_gpu()) {
    // p = 8 with 60 points per direction: one element needs ~0.3 MB of shared memory.
    const H1Space big(mesh, 8, 1);
    const Interpolator too_big(big, Geometry::Hexahedron, tensor_quadrature(Geometry::Hexahedron, quadrature_1d(60)),
                               exec());
    Array<double, 1> ub("u", {big.num_dofs()}, exec().space());
    QuadratureData qb = too_big.allocate(Eval::Values);
    EXPECT_ERROR_MENTIONS(too_big.interpolate(ub.cview(), Eval::Values, qb), "bytes of shared memory",
                          "do not fit one element per block");
  }
}

TEST_P(InterpolateTest, ElementsPerBlockChoiceIsReducedToFit) {
  if (!on_gpu()) GTEST_SKIP() << "skipped: no GPU (the shared-memory limit is a device property)";
  const Mesh mesh = generate_mesh("box:hex:2x2x2");
  const H1Space space(mesh, 8, 1);
  InterpolatorOptions opt;
  opt.elements_per_block = 16;
  const Interpolator interp(space, Geometry::Hexahedron, quadrature(Geometry::Hexahedron, 16), exec(), opt);
  const int epb = interp.elements_per_block(kAll);
  EXPECT_LT(epb, 16);
  EXPECT_LE(interp.shared_bytes(kAll, false, epb), current_device().shared_per_block_optin);
  EXPECT_NE(interp.elements_per_block_source(kAll).find("reduced to fit"), std::string::npos);
  Array<double, 1> u("u", {space.num_dofs()}, exec().space());
  QuadratureData qd = interp.allocate(kAll);
  EXPECT_NO_THROW(interp.interpolate(u.cview(), kAll, qd));
}

TEST_P(InterpolateTest, SimplexThreadsPerElementGiveIdenticalResults) {
  // Fewer threads than points or nodes loop; every choice computes the same sums in the same order.
  for (Geometry g : {Geometry::Triangle, Geometry::Tetrahedron}) {
    const Mesh mesh = perturbed_box(g, fem::dim(g) == 2 ? "4x3" : "2x2x1");
    const H1Space space(mesh, 3, 2);
    const auto rule = quadrature(g, 6);
    const auto uh = random_vector(std::size_t(space.num_dofs()), 12);
    auto u = Array<double, 1>::from("u", std::span<const double>(uh), exec().space());
    const Interpolator ref(space, g, rule, exec());
    QuadratureData a = ref.allocate(kAll);
    ref.interpolate(u.cview(), kAll, a);
    Array<double, 3> ea("e", {ref.num_elements(), 2, ref.nodes_per_element()}, exec().space());
    ref.integrate(a, kAll, ea.view());
    for (int t : {1, 2, 5, 64}) {
      SCOPED_TRACE(std::string(name(g)) + " threads=" + std::to_string(t));
      InterpolatorOptions opt;
      opt.threads_per_element = t;
      const Interpolator run(space, g, rule, exec(), opt);
      QuadratureData b = run.allocate(kAll);
      b.gradients.fill(std::nan(""));
      run.interpolate(u.cview(), kAll, b);
      EXPECT_EQ(flat(b.values), flat(a.values));
      EXPECT_EQ(flat(b.gradients), flat(a.gradients));
      EXPECT_EQ(flat(b.reference_gradients), flat(a.reference_gradients));
      Array<double, 3> eb("e", {ref.num_elements(), 2, ref.nodes_per_element()}, exec().space());
      run.integrate(b, kAll, eb.view());
      EXPECT_EQ(flat3(eb), flat3(ea));
    }
  }
}

TEST_P(InterpolateTest, ElementsPerItemGiveIdenticalResults) {
  // The forward kernels walk `elements_per_item` elements per thread group with a prefetched
  // gather; every value (with partial last items) must give the bits of one element per item.
  for (Geometry g : kGeoms) {
    const Mesh mesh = perturbed_box(g, fem::dim(g) == 2 ? "5x3" : "3x2x1");
    const H1Space space(mesh, 2, 2);
    const auto rule = quadrature(g, 4);
    const auto uh = random_vector(std::size_t(space.num_dofs()), 13);
    auto u = Array<double, 1>::from("u", std::span<const double>(uh), exec().space());
    InterpolatorOptions one;
    one.elements_per_item = 1;
    const Interpolator ref(space, g, rule, exec(), one);
    QuadratureData a = ref.allocate(kAll);
    ref.interpolate(u.cview(), kAll, a);
    for (int k : {2, 3, 7, 64})
      for (int epb : {1, 3}) {
        SCOPED_TRACE(std::string(name(g)) + " elements_per_item=" + std::to_string(k) + " epb=" + std::to_string(epb));
        InterpolatorOptions opt;
        opt.elements_per_item = k;
        const Interpolator run(space, g, rule, exec(), opt);
        QuadratureData b = run.allocate(kAll);
        b.values.fill(std::nan(""));
        b.gradients.fill(std::nan(""));
        run.interpolate_with(epb, u.cview(), kAll, b);
        EXPECT_EQ(flat(b.values), flat(a.values));
        EXPECT_EQ(flat(b.reference_gradients), flat(a.reference_gradients));
        EXPECT_EQ(flat(b.gradients), flat(a.gradients));
      }
  }
}
