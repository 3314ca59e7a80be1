// Transfers between the H1 spaces of two orders (OrderTransfer) on every backend.
#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fem_test_util.hpp"
#include "test_backends.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/transfer.hpp"

using namespace tessera;
using namespace tessera::fem;

namespace {

using tessera::fem::test::random_vector;

const std::pair<int, int> order_pairs[] = {{1, 2}, {2, 4}, {1, 3}, {3, 4}};

/// A 3 x 2 grid of squares of side 0.5: quadrilaterals in column 0, two triangles per square
/// in columns 1 and 2; the two interior vertices moved, so the quadrilaterals next to them
/// are not parallelograms.
Mesh mixed_tri_quad() {
  Mesh m(2);
  for (int j = 0; j <= 2; ++j)
    for (int i = 0; i <= 3; ++i) {
      double x = 0.5 * i, y = 0.5 * j;
      if (j == 1 && i == 1) x += 0.06, y -= 0.04;
      if (j == 1 && i == 2) x -= 0.05, y += 0.03;
      m.add_vertex({x, y});
    }
  const auto v = [](int i, int j) { return index_t(j * 4 + i); };
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 3; ++i) {
      if (i == 0) {
        m.add_element(Geometry::Quadrilateral, {v(i, j), v(i + 1, j), v(i + 1, j + 1), v(i, j + 1)});
      } else {
        m.add_element(Geometry::Triangle, {v(i, j), v(i + 1, j), v(i + 1, j + 1)});
        m.add_element(Geometry::Triangle, {v(i, j), v(i + 1, j + 1), v(i, j + 1)});
      }
    }
  m.validate("mixed tri/quad");
  return m;
}

/// Perturbed meshes of every geometry (several elements per block and a partial last block
/// at these orders) and the mixed one.
std::vector<std::pair<std::string, Mesh>> perturbed_meshes() {
  std::vector<std::pair<std::string, Mesh>> out;
  for (const char* spec : {"box:seg:7:perturb=0.2", "box:tri:3x3:perturb=0.2", "box:quad:3x3:perturb=0.2",
                           "box:tet:3x2x2:perturb=0.2", "box:hex:3x3x2:perturb=0.2"})
    out.emplace_back(spec, generate_mesh(spec));
  out.emplace_back("mixed tri+quad", mixed_tri_quad());
  return out;
}

std::vector<double> to_vector(const Array<double, 1>& a) {
  const auto h = a.to_host();
  return std::vector<double>(h.data(), h.data() + h.size());
}

/// xf = P xc on `exec`, inputs and outputs on the host.
std::vector<double> prolong(const OrderTransfer& t, const std::vector<double>& xc, const Exec& exec) {
  const auto x = Array<double, 1>::from("xc", std::span<const double>(xc), exec.space());
  Array<double, 1> y("xf", {t.fine_size()}, exec.space());
  y.fill(tessera::test::kNaN);  // poison: every entry must be written
  t.prolong(x.cview(), y.view());
  return to_vector(y);
}

/// rc = P^T rf on `exec`.
std::vector<double> restrict_(const OrderTransfer& t, const std::vector<double>& rf, const Exec& exec) {
  const auto x = Array<double, 1>::from("rf", std::span<const double>(rf), exec.space());
  Array<double, 1> y("rc", {t.coarse_size()}, exec.space());
  y.fill(tessera::test::kNaN);
  t.restrict_(x.cview(), y.view());
  return to_vector(y);
}

/// A polynomial of total degree p in the physical coordinates, different per component.
double poly(int p, int c, const std::array<double, 3>& x) {
  double s = 0.3 + 0.1 * c;
  for (int i = 0; i <= p; ++i)
    for (int j = 0; i + j <= p; ++j)
      for (int k = 0; i + j + k <= p; ++k)
        s += (0.5 + 0.25 * ((i + 2 * j + 3 * k + c) % 5) - 0.6) * std::pow(x[0], i) * std::pow(x[1], j) *
             std::pow(x[2], k);
  return s;
}

/// The value of every component of the coarse field at every fine node, seen from every
/// element containing that node: the reference coarse basis at the fine element's reference
/// nodes. Compares `xf` with each of them.
void expect_coarse_field_at_fine_nodes(const H1Space& coarse, const H1Space& fine, const std::vector<double>& xc,
                                       const std::vector<double>& xf, double tol) {
  const Mesh& mesh = coarse.mesh();
  const int nc = coarse.components();
  for (Geometry g : {Geometry::Segment, Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron,
                     Geometry::Hexahedron}) {
    if (mesh.num_elements(g) == 0) continue;
    const H1Basis bc(g, coarse.order()), bf(g, fine.order());
    const Array<double, 2> B = bc.eval(bf.nodes());  // (fine nodes, coarse nodes)
    for (index_t e : mesh.elements_of(g)) {
      const auto cn = coarse.element_nodes(e);
      const auto fn = fine.element_nodes(e);
      for (int c = 0; c < nc; ++c)
        for (index_t i = 0; i < B.extent(0); ++i) {
          double ref = 0;
          for (index_t j = 0; j < B.extent(1); ++j) ref += B(i, j) * xc[std::size_t(coarse.dof(c, cn[std::size_t(j)]))];
          const double got = xf[std::size_t(fine.dof(c, fn[std::size_t(i)]))];
          ASSERT_NEAR(got, ref, tol) << name(g) << " element " << e << " component " << c << " fine node " << i;
        }
    }
  }
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
double abs_dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += std::abs(a[i] * b[i]);
  return s;
}

std::string label(const std::string& mesh, int pc, int pf, int nc) {
  return mesh + " p " + std::to_string(pc) + " -> " + std::to_string(pf) + ", components " + std::to_string(nc);
}

}  // namespace

class TransferTest : public tessera::test::BackendTest {};
TESSERA_INSTANTIATE_BACKENDS(TransferTest);

// (a) Each fine node gets the coarse field's value there, from whichever element it is seen;
// (c) a constant maps to the same constant; and the backend equals the serial one.
TEST_P(TransferTest, ProlongationInterpolatesTheCoarseField) {
  const Exec exec = this->exec();
  for (const auto& [spec, mesh] : perturbed_meshes())
    for (const auto& [pc, pf] : order_pairs)
      for (int nc : {1, 2}) {
        SCOPED_TRACE(label(spec, pc, pf, nc));
        const H1Space coarse(mesh, pc, nc), fine(mesh, pf, nc);
        const OrderTransfer t(coarse, fine, exec);
        ASSERT_EQ(t.coarse_size(), coarse.num_dofs());
        ASSERT_EQ(t.fine_size(), fine.num_dofs());
        const auto xc = random_vector(std::size_t(coarse.num_dofs()), 11);
        const auto xf = prolong(t, xc, exec);
        expect_coarse_field_at_fine_nodes(coarse, fine, xc, xf, 1e-13);

        std::vector<double> one(std::size_t(coarse.num_dofs()));
        for (int c = 0; c < nc; ++c)
          for (index_t n = 0; n < coarse.num_nodes(); ++n) one[std::size_t(coarse.dof(c, n))] = 0.7 * (c + 1);
        const auto of = prolong(t, one, exec);
        for (int c = 0; c < nc; ++c)
          for (index_t n = 0; n < fine.num_nodes(); ++n)
            ASSERT_NEAR(of[std::size_t(fine.dof(c, n))], 0.7 * (c + 1), 1e-14) << "constant, node " << n;

        if (exec.backend != Backend::Serial) {
          const OrderTransfer ts(coarse, fine, Exec::serial());
          const auto ref = prolong(ts, xc, Exec::serial());
          const auto rf = random_vector(std::size_t(fine.num_dofs()), 13);
          const auto rc = restrict_(t, rf, exec), rc_ref = restrict_(ts, rf, Exec::serial());
          for (std::size_t i = 0; i < xf.size(); ++i) ASSERT_NEAR(xf[i], ref[i], 1e-13) << "prolong, dof " << i;
          for (std::size_t i = 0; i < rc.size(); ++i) ASSERT_NEAR(rc[i], rc_ref[i], 1e-13) << "restrict_, dof " << i;
        }
      }
}

// (a) On affine elements a polynomial of degree pc in the physical coordinates lies in the
// coarse space: its coarse interpolant prolongs to its fine interpolant.
TEST_P(TransferTest, ProlongationReproducesPhysicalPolynomials) {
  const Exec exec = this->exec();
  for (const char* spec : {"box:seg:5:perturb=0.2", "box:tri:3x3:perturb=0.2", "box:quad:3x2", "box:tet:3x2x2:perturb=0.2",
                           "box:hex:3x2x2"}) {
    const Mesh mesh = generate_mesh(spec);
    for (const auto& [pc, pf] : order_pairs)
      for (int nc : {1, 2}) {
        SCOPED_TRACE(label(spec, pc, pf, nc));
        const H1Space coarse(mesh, pc, nc), fine(mesh, pf, nc);
        const OrderTransfer t(coarse, fine, exec);
        // The interpolant on a space: the polynomial at the physical position of every node.
        const auto interpolant = [&](const H1Space& s) {
          std::vector<double> v(std::size_t(s.num_dofs()));
          for (index_t e = 0; e < mesh.num_elements(); ++e) {
            const H1Basis b(mesh.element_geometry(e), s.order());
            const auto nodes = s.element_nodes(e);
            for (index_t i = 0; i < b.size(); ++i) {
              const auto x = mesh.map(e, std::span<const double>(&b.nodes()(i, 0), std::size_t(b.dim())));
              for (int c = 0; c < nc; ++c) v[std::size_t(s.dof(c, nodes[std::size_t(i)]))] = poly(pc, c, x);
            }
          }
          return v;
        };
        const auto xf = prolong(t, interpolant(coarse), exec);
        const auto ref = interpolant(fine);
        for (std::size_t i = 0; i < xf.size(); ++i) ASSERT_NEAR(xf[i], ref[i], 1e-13 * (1 + std::abs(ref[i]))) << "dof " << i;
      }
  }
}

// (b) (P x, y) = (x, P^T y) for random x and y.
TEST_P(TransferTest, RestrictionIsTheTransposeOnRandomVectors) {
  const Exec exec = this->exec();
  for (const auto& [spec, mesh] : perturbed_meshes())
    for (const auto& [pc, pf] : order_pairs)
      for (int nc : {1, 2}) {
        SCOPED_TRACE(label(spec, pc, pf, nc));
        const H1Space coarse(mesh, pc, nc), fine(mesh, pf, nc);
        const OrderTransfer t(coarse, fine, exec);
        const auto x = random_vector(std::size_t(coarse.num_dofs()), 3);
        const auto y = random_vector(std::size_t(fine.num_dofs()), 5);
        const auto px = prolong(t, x, exec), ry = restrict_(t, y, exec);
        const double a = dot(px, y), b = dot(x, ry);
        EXPECT_NEAR(a, b, 1e-13 * abs_dot(px, y)) << "(P x, y) = " << a << ", (x, P^T y) = " << b;
      }
}

// The matrices themselves: column j of P (prolongation of the unit vector e_j) against row j
// of P^T (restriction of every unit vector), entry by entry, on small meshes.
TEST_P(TransferTest, RestrictionMatrixIsTheTransposedProlongationMatrix) {
  const Exec exec = this->exec();
  std::vector<std::pair<std::string, Mesh>> meshes;
  for (const char* spec : {"box:seg:3:perturb=0.2", "box:tri:2x2:perturb=0.2", "box:quad:3x3:perturb=0.2",
                           "box:tet:1", "box:hex:2x2x1"})
    meshes.emplace_back(spec, generate_mesh(spec));
  meshes.emplace_back("mixed tri+quad", mixed_tri_quad());
  for (const auto& [spec, mesh] : meshes) {
    SCOPED_TRACE(label(spec, 1, 3, 2));
    const H1Space coarse(mesh, 1, 2), fine(mesh, 3, 2);
    const OrderTransfer t(coarse, fine, exec);
    const std::size_t nc = std::size_t(coarse.num_dofs()), nf = std::size_t(fine.num_dofs());
    std::vector<double> P(nf * nc), R(nc * nf);  // P(i, j) at [i * nc + j]; R = P^T at [j * nf + i]
    std::vector<double> e(nc, 0.0);
    for (std::size_t j = 0; j < nc; ++j) {
      e[j] = 1;
      const auto col = prolong(t, e, exec);
      for (std::size_t i = 0; i < nf; ++i) P[i * nc + j] = col[i];
      e[j] = 0;
    }
    std::vector<double> f(nf, 0.0);
    for (std::size_t i = 0; i < nf; ++i) {
      f[i] = 1;
      const auto col = restrict_(t, f, exec);
      for (std::size_t j = 0; j < nc; ++j) R[j * nf + i] = col[j];
      f[i] = 0;
    }
    for (std::size_t i = 0; i < nf; ++i)
      for (std::size_t j = 0; j < nc; ++j)
        ASSERT_NEAR(R[j * nf + i], P[i * nc + j], 1e-15) << "fine dof " << i << ", coarse dof " << j;
    // The components do not mix, and the rows of P sum to 1 (constants are reproduced).
    for (std::size_t i = 0; i < nf; ++i) {
      double s = 0;
      for (std::size_t j = 0; j < nc; ++j) s += P[i * nc + j];
      ASSERT_NEAR(s, 1.0, 1e-14) << "row " << i;
    }
  }
}

// (d) Refused inputs name the problem.
TEST_P(TransferTest, BadInputsAreRefused) {
  const Exec exec = this->exec();
  const Mesh mesh = generate_mesh("box:quad:2"), other = generate_mesh("box:quad:2");
  const H1Space c1(mesh, 1), c2(mesh, 2), f3(mesh, 3), v3(mesh, 3, 2), o3(other, 3);
  EXPECT_ERROR_MENTIONS(OrderTransfer(c1, o3, exec), "different Mesh objects", "same mesh");
  EXPECT_ERROR_MENTIONS(OrderTransfer(c1, v3, exec), "1 components", "2", "same number of components");
  EXPECT_ERROR_MENTIONS(OrderTransfer(f3, c1, exec), "coarse order (3)", "lower than the fine order (1)");
  EXPECT_ERROR_MENTIONS(OrderTransfer(c2, c2, exec), "coarse order (2)", "lower than the fine order (2)");
  // Order 0 cannot be a space at all: H1Space refuses it before a transfer sees it.
  EXPECT_THROW(H1Space(mesh, 0), tessera::Error);

  const OrderTransfer t(c1, f3, exec);
  Array<double, 1> xc("xc", {c1.num_dofs()}, exec.space()), xf("xf", {f3.num_dofs()}, exec.space());
  Array<double, 1> bad("bad", {c1.num_dofs() + 1}, exec.space());
  xc.fill(0.0);
  xf.fill(0.0);
  EXPECT_ERROR_MENTIONS(t.prolong(bad.cview(), xf.view()), "prolong", "input has 10 entries", "coarse space's 9");
  EXPECT_ERROR_MENTIONS(t.prolong(xc.cview(), bad.view()), "prolong", "output has 10 entries", "fine space's 49");
  EXPECT_ERROR_MENTIONS(t.restrict_(bad.cview(), xc.view()), "restrict_", "input has 10 entries", "fine space's 49");
  EXPECT_ERROR_MENTIONS(t.restrict_(xf.cview(), bad.view()), "restrict_", "output has 10 entries",
                        "coarse space's 9");
  if (exec.backend == Backend::Cuda) {
    Array<double, 1> host("host", {c1.num_dofs()}, Space::Host);
    host.fill(0.0);
    EXPECT_ERROR_MENTIONS(t.prolong(host.cview(), xf.view()), "prolong", "input lives in", "cuda backend");
  }
}
