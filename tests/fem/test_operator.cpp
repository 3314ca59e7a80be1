// Matrix-free mass and diffusion operators, their diagonals, CG with Dirichlet elimination.
// The operators here run the team kernels (the GPU's) on every backend
// (OperatorKernelChoice::cpu_batched = false), so that the CPU backends keep testing them
// without a GPU: all of them in builds without CUDA (CI's cpu and debug-asan builds); in CUDA
// builds the hexahedron kernels with compile-time sizes are compiled for the GPU only, and the
// CPU backends run the run-time-size kernel (compile_time_kernels_on). The CPU's
// element-batched kernel is tested in test_cpu_batched.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <numbers>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "test_backends.hpp"
#include "tessera/core/tuning.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/operator.hpp"
#include "tessera/fem/restriction.hpp"

using namespace tessera;
using namespace tessera::fem;

// From the internal src/fem/operator/*.hpp (declared here rather than included: that
// header would compile every kernel template into this file).
namespace tessera::fem::interp_detail {
bool operator_exact_sizes(const OperatorKernelChoice& choice, Geometry g, bool diffusion, int nd1, int nq1, bool nodal);
}
using tessera::fem::test::distorted_mesh;
using tessera::fem::test::random_vector;

namespace {
/// Options that keep the team kernels on the CPU backends too (see the file comment).
/// Whether the hexahedron kernels with compile-time sizes (bounded, exact, one thread per
/// element, columns) run on exec: everywhere in builds without CUDA; in CUDA builds on the GPU
/// only (gpu_only), the CPU backends' team path then running the run-time-size kernel.
bool compile_time_kernels_on(const Exec& exec) { return exec.on_device() || !cuda_compiled(); }

OperatorOptions team_options() {
  OperatorOptions o;
  o.kernels.cpu_batched = false;
  return o;
}

const char* kSpecs[] = {"box:tri:3x2:perturb=0.2", "box:quad:3x2:perturb=0.2", "box:tet:2x2x1:perturb=0.2",
                        "box:hex:2x2x1:perturb=0.2"};

/// (J^-1)(c, r) of a dim x dim Jacobian (J(r, c) = d x_r / d xi_c) and |det J|.
double inverse(int dim, const std::array<std::array<double, 3>, 3>& J, double Ji[3][3]) {
  if (dim == 2) {
    const double det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
    Ji[0][0] = J[1][1] / det;
    Ji[0][1] = -J[0][1] / det;
    Ji[1][0] = -J[1][0] / det;
    Ji[1][1] = J[0][0] / det;
    return std::abs(det);
  }
  const double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
                     J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                     J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      // cofactor of (j, i), divided by det
      const int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
      Ji[i][j] = (J[r0][c0] * J[r1][c1] - J[r0][c1] * J[r1][c0]) / det;
    }
  return std::abs(det);
}

/// y = A x and A's diagonal by quadrature on the host, independent of the kernels (mesh
/// Jacobians, H1Basis tables). With `matrix` (the default) each element matrix K is assembled
/// (nd^2 nq work) and applied; without, K x is summed point by point as
/// B_q^T (w D) (B_q x), the same quadrature in nd nq work, for the high orders where forming K
/// would dominate the test's time (p = 10: 1331^2 x 1728 products per element).
std::vector<double> assembled_apply(const H1Space& space, OperatorKind kind, int degree, const std::vector<double>& x,
                                    std::vector<double>* diag = nullptr,
                                    QuadratureType type = QuadratureType::Gauss, bool matrix = true) {
  const Mesh& mesh = space.mesh();
  std::vector<double> y(x.size(), 0.0);
  if (diag) diag->assign(x.size(), 0.0);
  for (Geometry g : {Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron, Geometry::Hexahedron}) {
    if (mesh.num_elements(g) == 0) continue;
    const int dim = fem::dim(g);
    const QuadratureRule rule = quadrature(g, degree, type);
    const H1Basis basis(g, space.order());
    const BasisTables t = tabulate(basis, rule);
    const int nd = int(basis.size());
    for (index_t e : mesh.elements_of(g)) {
      const auto nodes = space.element_nodes(e);
      const auto dof = [&](int c, int i) { return std::size_t(space.dof(c, nodes[std::size_t(i)])); };
      std::vector<double> K(matrix ? std::size_t(nd * nd) : 0, 0.0);
      for (int q = 0; q < rule.size(); ++q) {
        double xi[3] = {0, 0, 0};
        for (int d = 0; d < dim; ++d) xi[d] = rule.points(q, d);
        double Ji[3][3];
        const double w = rule.weights(q) * inverse(dim, mesh.jacobian(e, std::span<const double>(xi, std::size_t(dim))), Ji);
        std::vector<double> gp(std::size_t(nd * dim), 0.0);
        for (int i = 0; i < nd; ++i)
          for (int r = 0; r < dim; ++r)
            for (int c = 0; c < dim; ++c) gp[std::size_t(i * dim + r)] += t.G(q, i, c) * Ji[c][r];
        if (!matrix) {
          // the field (mass) or its physical gradient (diffusion) at q, then its test-function sums
          const bool mass = kind == OperatorKind::Mass;
          for (int c = 0; c < space.components(); ++c) {
            double f[3] = {0, 0, 0};
            for (int j = 0; j < nd; ++j)
              for (int r = 0; r < (mass ? 1 : dim); ++r)
                f[r] += (mass ? t.B(q, j) : gp[std::size_t(j * dim + r)]) * x[dof(c, j)];
            for (int i = 0; i < nd; ++i) {
              double v = 0, vd = 0;
              for (int r = 0; r < (mass ? 1 : dim); ++r) {
                const double phi = mass ? t.B(q, i) : gp[std::size_t(i * dim + r)];
                v += phi * f[r];
                vd += phi * phi;
              }
              y[dof(c, i)] += w * v;
              if (diag) (*diag)[dof(c, i)] += w * vd;
            }
          }
          continue;
        }
        for (int i = 0; i < nd; ++i)
          for (int j = 0; j < nd; ++j) {
            double v = 0;
            if (kind == OperatorKind::Mass) v = t.B(q, i) * t.B(q, j);
            else
              for (int r = 0; r < dim; ++r) v += gp[std::size_t(i * dim + r)] * gp[std::size_t(j * dim + r)];
            K[std::size_t(i * nd + j)] += w * v;
          }
      }
      if (!matrix) continue;
      for (int c = 0; c < space.components(); ++c)
        for (int i = 0; i < nd; ++i) {
          const auto di = dof(c, i);
          for (int j = 0; j < nd; ++j) y[di] += K[std::size_t(i * nd + j)] * x[dof(c, j)];
          if (diag) (*diag)[di] += K[std::size_t(i * nd + i)];
        }
    }
  }
  return y;
}

std::vector<double> to_vector(const Array<double, 1>& a) {
  const auto h = a.to_host();
  return std::vector<double>(h.data(), h.data() + h.size());
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

/// Sets an environment variable for a scope and restores it at its end, also when an assertion
/// returns early. `tuning`: the variable is TESSERA_TUNING_CACHE, re-read at each change.
class ScopedEnv {
 public:
  explicit ScopedEnv(const char* name, bool tuning = false) : name_(name), tuning_(tuning) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (old) old_ = old;
  }
  void set(const std::string& value) {
    setenv(name_, value.c_str(), 1);
    if (tuning_) tuning::reload();
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
    if (tuning_) tuning::reload();
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool tuning_, had_ = false;
  std::string old_;
};

/// Applies each operator to the same random vector (seed); every result must equal the first's:
/// the same element contributions summed in another order (roundoff ~1e-15 of the largest entry).
void expect_same_applies(const H1Space& space, const Exec& exec, std::initializer_list<const H1Operator*> ops,
                         unsigned seed) {
  const auto xh = random_vector(std::size_t(space.num_dofs()), seed);
  auto x = Array<double, 1>::from("x", std::span<const double>(xh), exec.space());
  std::vector<std::vector<double>> ys;
  for (const H1Operator* A : ops) {
    Array<double, 1> y("y", {space.num_dofs()}, exec.space());
    y.fill(std::nan(""));
    A->apply(x.cview(), y.view());
    ys.push_back(to_vector(y));
  }
  const double tol = 1e-13 * std::max(1.0, max_abs(ys[0]));
  for (std::size_t k = 1; k < ys.size(); ++k)
    for (std::size_t i = 0; i < ys[0].size(); ++i) ASSERT_NEAR(ys[k][i], ys[0][i], tol) << "operator " << k << ", row " << i;
}

}  // namespace

class OperatorTest : public tessera::test::BackendTest {};
TESSERA_INSTANTIATE_BACKENDS(OperatorTest);

/// Applies A (built with `opt`) to a random vector and compares y and the diagonal with the
/// host-assembled matrix.
void expect_matches_assembled(const H1Space& space, OperatorKind kind, const Exec& exec, const OperatorOptions& opt,
                              bool matrix = true) {
  const H1Operator A(space, kind, exec, opt);
  const auto xh = random_vector(std::size_t(space.num_dofs()), 3);
  auto x = Array<double, 1>::from("x", std::span<const double>(xh), exec.space());
  Array<double, 1> y("y", {space.num_dofs()}, exec.space());
  y.fill(std::nan(""));
  A.apply(x.cview(), y.view());
  std::vector<double> dref;
  const auto ref = assembled_apply(space, kind, A.degree(), xh, &dref, opt.quadrature, matrix);
  const auto got = to_vector(y);
  // Same sums in another order: roundoff ~1e-15 of the largest entry; 1e-12 allows for the
  // conditioning of the element matrices at p = 4.
  const double tol = 1e-12 * std::max(1.0, max_abs(ref)) * 10;
  for (std::size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(got[i], ref[i], tol) << "row " << i;
  const auto d = to_vector(A.diagonal());
  for (std::size_t i = 0; i < d.size(); ++i)
    ASSERT_NEAR(d[i], dref[i], 1e-12 * std::max(1.0, max_abs(dref)) * 10) << "diagonal " << i;
}

/// One operator configuration of the variant tests: order, quadrature degree (-1: the default),
/// rule and components.
struct OperatorCase {
  int p, degree = -1;
  QuadratureType type = QuadratureType::Gauss;
  int comps = 1;
};

/// expect_matches_assembled with the point-by-point reference for every case on `mesh`: mass
/// (not with Gauss-Lobatto points, which do not integrate it exactly) and diffusion, stored and
/// on the fly.
void expect_cases_match_assembled(const Mesh& mesh, const std::vector<OperatorCase>& cases, const Exec& exec,
                                  const OperatorKernelChoice& kernels = {}) {
  for (const OperatorCase& k : cases)
    for (OperatorKind kind : {OperatorKind::Mass, OperatorKind::Diffusion})
      for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
        if (kind == OperatorKind::Mass && k.type == QuadratureType::GaussLobatto) continue;
        SCOPED_TRACE(std::string(name(kind)) + " p=" + std::to_string(k.p) + " degree " + std::to_string(k.degree) +
                     " c=" + std::to_string(k.comps) + " " + name(gs) +
                     (k.type == QuadratureType::GaussLobatto ? " Gauss-Lobatto" : ""));
        const H1Space space(mesh, k.p, k.comps);
        OperatorOptions opt = team_options();
        opt.degree = k.degree;
        opt.geometry = gs;
        opt.quadrature = k.type;
        opt.kernels = kernels;
        opt.kernels.cpu_batched = false;
        expect_matches_assembled(space, kind, exec, opt, /*matrix=*/false);
      }
}

/// BK: y = R^T (A_e (R x)) must equal the global apply (the same kernel without the fused
/// gather and scatter), on a random x; the E-vector output is poisoned first.
void expect_element_apply_matches_global(const H1Space& space, OperatorKind kind, const Exec& exec,
                                         const OperatorOptions& opt) {
  const H1Operator A(space, kind, exec, opt);
  Geometry g = Geometry::Hexahedron;  // the mesh's one element type
  for (Geometry h : {Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron, Geometry::Hexahedron})
    if (space.mesh().num_elements(h) > 0) g = h;
  const ElementRestriction R(space, g, exec);
  const int comps = space.components();
  const auto xh = random_vector(std::size_t(space.num_dofs()), 7);
  auto x = Array<double, 1>::from("x", std::span<const double>(xh), exec.space());
  Array<double, 3> xe("xe", {R.num_elements(), comps, R.nodes_per_element()}, exec.space());
  Array<double, 3> ye("ye", {R.num_elements(), comps, R.nodes_per_element()}, exec.space());
  ye.fill(std::nan(""));
  R.gather(x.cview(), xe.view());
  A.apply_element(xe.cview(), ye.view());
  Array<double, 1> y1("y1", {space.num_dofs()}, exec.space()), y2("y2", {space.num_dofs()}, exec.space());
  y1.fill(0.0);
  R.scatter_add(ye.cview(), y1.view());
  A.apply(x.cview(), y2.view());
  const auto a = to_vector(y1), b = to_vector(y2);
  // the same element contributions summed in another order
  const double tol = 1e-13 * std::max(1.0, max_abs(b));
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], tol) << "row " << i;
}

TEST_P(OperatorTest, EqualsAssembledMatricesAndDiagonals) {
  for (const char* spec : kSpecs)
    for (OperatorKind kind : {OperatorKind::Mass, OperatorKind::Diffusion})
      for (int p : {1, 2, 4})
        for (int comps : {1, 3})
          for (bool fused : {true, false})
            for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
              SCOPED_TRACE(std::string(spec) + " " + name(kind) + " p=" + std::to_string(p) +
                           " c=" + std::to_string(comps) + (fused ? " fused " : " composed ") + name(gs));
              const Mesh mesh = distorted_mesh(spec);
              const H1Space space(mesh, p, comps);
              OperatorOptions opt = team_options();
              opt.degree = p == 2 ? 2 * p : 2 * p + 3;  // the minimum and the default
              opt.fused = fused;
              opt.geometry = gs;
              expect_matches_assembled(space, kind, exec(), opt);
            }
}

/// The sum-factorized diagonal() of quadrilaterals and hexahedra equals the element-by-element
/// loop over every point and table entry (operator_detail::naive_diagonal) entry by entry to
/// 1e-12 relative (every entry is positive): the same sums in another order.
void expect_diagonal_equals_naive(const H1Space& space, OperatorKind kind, const Exec& exec,
                                  const OperatorOptions& opt, double* worst) {
  const H1Operator A(space, kind, exec, opt);
  const auto d = to_vector(A.diagonal());
  const auto ref = to_vector(operator_detail::naive_diagonal(A));
  ASSERT_EQ(d.size(), ref.size());
  for (std::size_t i = 0; i < d.size(); ++i) {
    ASSERT_GT(ref[i], 0.0) << "diagonal " << i;
    ASSERT_NEAR(d[i], ref[i], 1e-12 * ref[i]) << "diagonal " << i;
    *worst = std::max(*worst, std::abs(d[i] - ref[i]) / ref[i]);
  }
}

TEST_P(OperatorTest, SumFactorizedDiagonalEqualsTheNaiveOne) {
  // perturbed quadrilaterals and hexahedra (the generator moves the interior vertices), orders
  // 1..5, Gauss and Gauss-Lobatto rules with the default number of points and the fewest that
  // the operator accepts (Gauss diffusion: p points per direction, fewer than the p + 1 nodes;
  // Gauss-Lobatto mass: p + 2), stored and on-the-fly geometry, 1 and 3 components
  double worst = 0;
  for (const char* spec : {"box:quad:3x3:perturb=0.2", "box:hex:3x3x3:perturb=0.2"}) {
    const Mesh mesh = generate_mesh(spec);
    for (int p = 1; p <= 5; ++p)
      for (int comps : {1, 3}) {
        const H1Space space(mesh, p, comps);
        for (OperatorKind kind : {OperatorKind::Mass, OperatorKind::Diffusion})
          for (QuadratureType type : {QuadratureType::Gauss, QuadratureType::GaussLobatto})
            for (bool fewest : {false, true})
              for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
                const bool mass = kind == OperatorKind::Mass;
                OperatorOptions opt = team_options();
                opt.quadrature = type;
                opt.geometry = gs;
                // Gauss-Lobatto mass needs degree 2p (the default 2p - 1 is refused)
                if (fewest) opt.degree = mass ? 2 * p : std::max(0, 2 * p - 2);
                else if (mass && type == QuadratureType::GaussLobatto) opt.degree = 2 * p + 2;
                SCOPED_TRACE(std::string(spec) + " " + name(kind) + " p=" + std::to_string(p) + " c=" +
                             std::to_string(comps) + " " + name(type) + " degree " + std::to_string(opt.degree) +
                             " " + name(gs));
                expect_diagonal_equals_naive(space, kind, exec(), opt, &worst);
                if (HasFatalFailure()) return;
              }
      }
  }
  std::printf("largest relative difference from the naive diagonal: %.2e\n", worst);
}

TEST_P(OperatorTest, GaussLobattoCollocatedDiffusionEqualsAssembled) {
  // BP5/BP6: q = p + 1 Gauss-Lobatto points (the basis nodes), exact for diffusion on affine
  // elements only; both geometry sources, scalar and 3 components.
  for (const char* spec : {"box:quad:3x2:perturb=0.2", "box:hex:2x2x1:perturb=0.2"})
    for (int p : {1, 3, 5})
      for (int comps : {1, 3})
        for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
          SCOPED_TRACE(std::string(spec) + " p=" + std::to_string(p) + " c=" + std::to_string(comps) + " " + name(gs));
          const Mesh mesh = distorted_mesh(spec);
          const H1Space space(mesh, p, comps);
          OperatorOptions opt = team_options();
          opt.quadrature = QuadratureType::GaussLobatto;
          opt.geometry = gs;
          expect_matches_assembled(space, OperatorKind::Diffusion, exec(), opt);
        }
}

TEST_P(OperatorTest, ElementLevelApplyScattersToTheGlobalApply) {
  // BK: y = R^T (A_e (R x)) must equal the global apply (the same kernel, without the fused
  // gather and scatter); the E-vector output is poisoned first. Gauss-Lobatto diffusion takes
  // the hexahedron kernel's path for points at the nodes.
  for (const char* spec : {"box:quad:3x2:perturb=0.2", "box:hex:2x2x1:perturb=0.2"})
    for (const auto& [kind, gll] : {std::pair{OperatorKind::Mass, false}, std::pair{OperatorKind::Diffusion, false},
                                    std::pair{OperatorKind::Diffusion, true}})
      for (int comps : {1, 3})
        for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
          SCOPED_TRACE(std::string(spec) + " " + name(kind) + (gll ? " (Gauss-Lobatto)" : "") +
                       " c=" + std::to_string(comps) + " " + name(gs));
          const Mesh mesh = distorted_mesh(spec);
          const H1Space space(mesh, 3, comps);
          OperatorOptions opt = team_options();
          opt.geometry = gs;
          if (gll) opt.quadrature = QuadratureType::GaussLobatto;
          expect_element_apply_matches_global(space, kind, exec(), opt);
        }
  // triangles and tetrahedra (simplex_operator), 1 and 4 elements per item
  for (const char* spec : {"box:tri:3x2:perturb=0.2", "box:tet:2x2x1:perturb=0.2"})
    for (OperatorKind kind : {OperatorKind::Mass, OperatorKind::Diffusion})
      for (int comps : {1, 3})
        for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly})
          for (int k : {1, 4}) {
            SCOPED_TRACE(std::string(spec) + " " + name(kind) + " c=" + std::to_string(comps) + " " + name(gs) +
                         " k=" + std::to_string(k));
            const Mesh mesh = distorted_mesh(spec);
            const H1Space space(mesh, 3, comps);
            OperatorOptions opt = team_options();
            opt.geometry = gs;
            opt.elements_per_item = k;
            expect_element_apply_matches_global(space, kind, exec(), opt);
          }
  // the composed path has no element-level apply
  const Mesh tets = generate_mesh("box:tet:2x2x1");
  const H1Space space(tets, 2, 1);
  OperatorOptions composed = team_options();
  composed.fused = false;
  const H1Operator A(space, OperatorKind::Mass, exec(), composed);
  Array<double, 3> xe("xe", {12, 1, 10}, exec().space());
  EXPECT_ERROR_MENTIONS(A.apply_element(xe.cview(), xe.view()), "fused kernels");
}

TEST_P(OperatorTest, FusedSimplexKernelEqualsComposedAndAssembled) {
  // simplex_operator against the three-launch composition and the host-assembled matrices on
  // meshes of several blocks with a partial last item: 1 element per item, 4 (the rule where
  // the point data is small), 3 (a partial item in every item) and 8 (taken as 4); the table in
  // shared and in device memory (the CPU reads it in place with Auto). p = 6 on tetrahedra:
  // 84 nodes, 343 points (device-memory tables on the GPU with Auto: 3 x 84 x 343 doubles).
  struct Case {
    const char* spec;
    int p;
  };
  for (const Case& t : {Case{"box:tri:5x3:perturb=0.2", 1}, Case{"box:tri:5x3:perturb=0.2", 4},
                        Case{"box:tet:3x2x2:perturb=0.2", 1}, Case{"box:tet:3x2x2:perturb=0.2", 3},
                        Case{"box:tet:2x1x1:perturb=0.2", 6}})
    for (OperatorKind kind : {OperatorKind::Mass, OperatorKind::Diffusion})
      for (int comps : {1, 3})
        for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
          SCOPED_TRACE(std::string(t.spec) + " p=" + std::to_string(t.p) + " " + name(kind) +
                       " c=" + std::to_string(comps) + " " + name(gs));
          const Mesh mesh = distorted_mesh(t.spec);
          const H1Space space(mesh, t.p, comps);
          OperatorOptions opt = team_options();
          opt.geometry = gs;
          expect_matches_assembled(space, kind, exec(), opt);
          std::vector<H1Operator> ops;
          opt.fused = false;
          ops.emplace_back(space, kind, exec(), opt);
          opt.fused = true;
          // (p = 6: a table of 84 x 343 doubles (mass) or three (diffusion) is past the GPU's
          // shared memory: TableMemory::Shared would be refused there)
          for (TableMemory tm : {t.p < 6 ? TableMemory::Shared : TableMemory::Auto, TableMemory::Global})
            for (int k : {1, 3, 4, 8}) {
              opt.simplex_tables = tm;
              opt.elements_per_item = k;
              ops.emplace_back(space, kind, exec(), opt);
            }
          expect_same_applies(space, exec(), {&ops[0], &ops[1], &ops[2], &ops[3], &ops[4], &ops[5], &ops[6], &ops[7],
                                              &ops[8]},
                              11);
        }
}

TEST_P(OperatorTest, SymmetricAndCollapsedSimplexRulesApplyAlike) {
  // The default simplex rules are the symmetric ones (fewer points); both they and the
  // collapsed rules (QuadratureType::GaussCollapsed) of degree 2p integrate mass and diffusion
  // exactly on straight-sided elements, so the two operators differ by roundoff only.
  for (const char* spec : {"box:tri:4x3:perturb=0.2", "box:tet:2x2x2:perturb=0.2"})
    for (int p = 1; p <= 4; ++p)
      for (OperatorKind kind : {OperatorKind::Mass, OperatorKind::Diffusion})
        for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
          SCOPED_TRACE(std::string(spec) + " p=" + std::to_string(p) + " " + name(kind) + " " + name(gs));
          const Mesh mesh = generate_mesh(spec);
          const H1Space space(mesh, p, 1);
          OperatorOptions opt = team_options();
          opt.geometry = gs;
          const H1Operator A(space, kind, exec(), opt);
          opt.quadrature = QuadratureType::GaussCollapsed;
          const H1Operator B(space, kind, exec(), opt);
          ASSERT_EQ(A.degree(), B.degree());
          const Geometry g = mesh.dim() == 2 ? Geometry::Triangle : Geometry::Tetrahedron;
          EXPECT_LT(quadrature(g, A.degree()).size(), quadrature(g, B.degree(), QuadratureType::GaussCollapsed).size());
          expect_same_applies(space, exec(), {&A, &B}, 5);
        }
}

TEST_P(OperatorTest, ThreadPerElementHexahedraOverManyBlocksEqualAssembled) {
  // p = 1 hexahedra with at most 3 points per direction run one thread per element
  // (hex_thread_element), a block's elements staged together: 7x6x5 = 210 elements span several
  // blocks with a partial last one (32-128 elements per block on the GPU, 64 on the CPU), which
  // the 4-element meshes of the other tests never do. Mass and diffusion (q = p + 2 Gauss, and
  // q = p + 1 Gauss-Lobatto, the points at the nodes), stored and on the fly, 1 and 3
  // components; then the element-level apply against the global one on the same mesh. At p = 2
  // diffusion with the points at the nodes runs one thread per element too
  // (hex_thread_element_nodal; on the GPU element by element its values and results go through
  // shared rows, and stored data of a full block arrives in one bulk copy, of the partial last
  // block by the threads), and so does mass in the global apply (hex_thread_element with N =
  // 3); the other p = 2 cases the line kernels: checked here on many blocks too.
  const Mesh mesh = distorted_mesh("box:hex:7x6x5:perturb=0.2");
  for (int p : {1, 2})
    for (const auto& [kind, gll] : {std::pair{OperatorKind::Mass, false}, std::pair{OperatorKind::Diffusion, false},
                                    std::pair{OperatorKind::Diffusion, true}})
      for (int comps : {1, 3})
        for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
          SCOPED_TRACE(std::string(name(kind)) + " p=" + std::to_string(p) + (gll ? " (Gauss-Lobatto)" : "") +
                       " c=" + std::to_string(comps) + " " + name(gs));
          const H1Space space(mesh, p, comps);
          OperatorOptions opt = team_options();
          opt.geometry = gs;
          if (gll) opt.quadrature = QuadratureType::GaussLobatto;
          for (bool element : {false, true}) {
            // p = 2 mass only in the global apply
            const bool thread_element =
                compile_time_kernels_on(exec()) && (p == 1 || gll || (kind == OperatorKind::Mass && !element));
            std::string src;
            (void)H1Operator(space, kind, exec(), opt).elements_per_item(element, &src);
            EXPECT_EQ(src == "one thread per element", thread_element) << src << (element ? " (element level)" : "");
          }
          expect_matches_assembled(space, kind, exec(), opt);
          expect_element_apply_matches_global(space, kind, exec(), opt);
        }
}

TEST_P(OperatorTest, GaussLobattoDiffusionAtOrdersThreeAndFourOverManyBlocksEqualsAssembled) {
  // p = 3, 4 diffusion with the points at the nodes on a 3-component field runs, on the GPU, one
  // element per half warp (p = 3) or warp (p = 4, 25 of its lanes busy): hex_column_nodal,
  // shuffles between the threads of an element, no shared memory; scalar fields keep the other
  // kernels. 210 elements over many blocks with a partial last one; at p = 3, 3 elements per
  // block leave a warp half empty (its shuffles name one half only); 3 elements per item walk
  // them one after the other. At p = 4 (1 or 2 elements per block) 36 elements are many blocks
  // too, and keep the host reference short. Stored and on the fly, 1 and 3 components, the
  // global and the element-level apply. Its rule on the GPU, 2 elements per item and 4 per
  // block at p = 3, 1 at p = 4, tells which kernel the automatic choice took.
  ScopedEnv cache("TESSERA_TUNING_CACHE", /*tuning=*/true);
  cache.set("");  // the rules alone
  for (int p : {3, 4})
  for (int comps : {1, 3})
    for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly})
      for (const auto& [k, epb] : {std::pair{0, 0}, std::pair{1, 3}, std::pair{3, 2}}) {
        if (p == 4 && epb == 3) continue;  // whole warps at p = 4: the half-empty case is p = 3's
#if defined(__SANITIZE_ADDRESS__)
        if (k != 0) continue;  // the launch variants matter on the GPU; under AddressSanitizer the host reference takes minutes
#endif
        SCOPED_TRACE(testing::Message() << "p=" << p << " c=" << comps << " " << name(gs) << ", per item " << k
                                        << ", per block " << epb);
        const Mesh mesh = distorted_mesh(p == 3 ? "box:hex:7x6x5:perturb=0.2" : "box:hex:4x3x3:perturb=0.2");
        const H1Space space(mesh, p, comps);
        OperatorOptions opt = team_options();
        opt.geometry = gs;
        opt.quadrature = QuadratureType::GaussLobatto;
        opt.elements_per_item = k;
        opt.elements_per_block = epb;
        if (k == 0 && exec().on_device()) {
          const H1Operator A(space, OperatorKind::Diffusion, exec(), opt);
          std::string src;
          EXPECT_EQ(A.elements_per_item(false, &src) == 2 && A.elements_per_block(false, &src) == (p == 3 ? 4 : 1),
                    comps == 3);
        }
        expect_matches_assembled(space, OperatorKind::Diffusion, exec(), opt);
        expect_element_apply_matches_global(space, OperatorKind::Diffusion, exec(), opt);
      }
}

TEST_P(OperatorTest, InterleavedNumberingEqualsAssembled) {
  // NodeOrdering::Interleaved renumbers the nodes local position by local position, so the
  // lanes of a one-thread-per-element warp gather and scatter neighbouring addresses: the
  // operators (one thread per element at p = 1 and with Gauss-Lobatto points at p = 2, the line
  // kernels at p = 2, 3) equal the assembled ones there as in the first-touch numbering.
  const Mesh mesh = distorted_mesh("box:hex:7x6x5:perturb=0.2");
  for (int p : {1, 2, 3})
    for (const auto& [kind, gll] : {std::pair{OperatorKind::Mass, false}, std::pair{OperatorKind::Diffusion, true}})
      for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
        SCOPED_TRACE(std::string(name(kind)) + " p=" + std::to_string(p) + (gll ? " (Gauss-Lobatto)" : "") + " " +
                     name(gs));
        const H1Space space(mesh, p, 1, NodeOrdering::Interleaved);
        OperatorOptions opt = team_options();
        opt.geometry = gs;
        if (gll) opt.quadrature = QuadratureType::GaussLobatto;
        expect_matches_assembled(space, kind, exec(), opt);
      }
}

TEST_P(OperatorTest, SharedFirstNumberingStoresTheNodesOfOneElement) {
  // With the nodes of one element numbered last (NodeOrdering::SharedFirst), the fused kernels
  // store those nodes' results instead of adding them and H1Operator::apply zero fills only the
  // shared nodes: y is poisoned with NaN first, so a node that no kernel stores stays NaN, and
  // a node stored twice (or stored where it should be added) differs from the assembled matrix.
  // Every hexahedron kernel family: the line kernels, the point-column kernel (Gauss diffusion
  // at p = 2), the half-warp kernel for several components with the points at the nodes
  // (p = 3, 4), quadrilaterals, and one thread per element (p = 1, 2), which adds every entry:
  // H1Operator then fills every node. The reference sums the host quadrature point by point
  // (the element matrices took most of this test's 108 s under AddressSanitizer).
  for (const char* spec : {"box:hex:4x3x2", "box:quad:6x5:perturb=0.2"}) {
    const Mesh mesh = distorted_mesh(spec);
    for (int p : {1, 2, 3, 4})
      for (int comps : {1, 3})
        for (const auto& [kind, gll] : {std::pair{OperatorKind::Mass, false}, std::pair{OperatorKind::Diffusion, false},
                                        std::pair{OperatorKind::Diffusion, true}})
          for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
            if (comps > 1 && (p < 3 || gs == GeometrySource::OnTheFly)) continue;  // keeps the run short
            SCOPED_TRACE(std::string(spec) + " " + name(kind) + " p=" + std::to_string(p) + " c=" +
                         std::to_string(comps) + (gll ? " (Gauss-Lobatto)" : "") + " " + name(gs));
            const H1Space space(mesh, p, comps, NodeOrdering::SharedFirst);
            ASSERT_LT(space.exclusive_from(), space.num_nodes());
            OperatorOptions opt = team_options();
            opt.geometry = gs;
            if (gll) opt.quadrature = QuadratureType::GaussLobatto;
            expect_matches_assembled(space, kind, exec(), opt, /*matrix=*/false);
          }
  }
}

TEST_P(OperatorTest, StoreExclusiveIsRefusedByTheKernelsThatAdd) {
  // The one-thread-per-element kernels (hexahedra at p = 1, and mass at p = 2 in the global
  // apply) and the column kernel of Gauss-Lobatto diffusion with several components at p = 3
  // add every entry, so a caller that skipped the fill of the nodes of one element would read
  // garbage: FusedOperator::apply refuses StoreExclusive there, and accepts it where the kernel stores
  // (p = 3 scalar and p = 4 with 3 components, Gauss-Lobatto: the point-column and column kernels).
  const Mesh mesh = generate_mesh("box:hex:2x2x2");
  const auto rule = [](int p) { return quadrature(Geometry::Hexahedron, 2 * p + 3); };
  const auto lobatto = [](int p) { return quadrature(Geometry::Hexahedron, 2 * p - 1, QuadratureType::GaussLobatto); };
  const H1Space s1(mesh, 1, 1, NodeOrdering::SharedFirst), s3(mesh, 3, 1, NodeOrdering::SharedFirst);
  const H1Space v3(mesh, 3, 3, NodeOrdering::SharedFirst), v4(mesh, 4, 3, NodeOrdering::SharedFirst);
  // A CUDA build's CPU backends run the run-time-size kernel there, which stores everywhere.
  const bool adds = compile_time_kernels_on(exec());
  const FusedOperator i1(s1, Geometry::Hexahedron, rule(1), exec()), i3(s3, Geometry::Hexahedron, rule(3), exec());
  EXPECT_EQ(i1.stores_exclusive(false), !adds);
  EXPECT_TRUE(i3.stores_exclusive(false));
  EXPECT_TRUE(FusedOperator(s3, Geometry::Hexahedron, lobatto(3), exec()).stores_exclusive(true));
  EXPECT_EQ(FusedOperator(v3, Geometry::Hexahedron, lobatto(3), exec()).stores_exclusive(true), !adds);
  EXPECT_TRUE(FusedOperator(v4, Geometry::Hexahedron, lobatto(4), exec()).stores_exclusive(true));
  const GeometricFactors g1 = geometric_factors(mesh, Geometry::Hexahedron, rule(1), exec(), GeometricFactorFlags::WDetJ);
  Array<double, 1> x("x", {s1.num_dofs()}, exec().space()), y("y", {s1.num_dofs()}, exec().space());
  x.fill(1.0);
  y.fill(0.0);
  if (adds)
    EXPECT_ERROR_MENTIONS(i1.apply(false, g1.wdetJ.data(), x.cview(), y.view(), 0, OperatorScatter::StoreExclusive),
                          "StoreExclusive", "OperatorScatter::Add");
  else
    EXPECT_NO_THROW(i1.apply(false, g1.wdetJ.data(), x.cview(), y.view(), 0, OperatorScatter::StoreExclusive));
  EXPECT_NO_THROW(i1.apply(false, g1.wdetJ.data(), x.cview(), y.view(), 0, OperatorScatter::Add));
}

TEST_P(OperatorTest, PlanHoldsTheLaunchAndIsCheckedAgainstTheCall) {
  // FusedOperator::plan gathers the run-time rules once (H1Operator keeps its plans): its elements
  // per block and shared bytes are those the queries give, an explicit count is kept as the
  // option, and a plan of the other kind (element-level, on the fly) is refused by the apply.
  const Mesh mesh = generate_mesh("box:hex:2x2x2");
  const H1Space space(mesh, 3, 1);
  const FusedOperator in(space, Geometry::Hexahedron, quadrature(Geometry::Hexahedron, 9), exec());
  const OperatorPlan pl = in.plan(true, false, false);
  EXPECT_EQ(pl.elements_per_block, in.elements_per_block(true, false, false));
  EXPECT_EQ(pl.elements_per_item, in.elements_per_item(true, false, false));
  EXPECT_FALSE(pl.block_source.empty());
  EXPECT_EQ(detail::team_shared_bytes(detail::make_team_params(
                Teams{in.num_elements(), pl.elements_per_block, pl.threads, pl.item_bytes, pl.common_bytes})),
            in.shared_bytes(true, false, pl.elements_per_block));
  const OperatorPlan two = in.plan(true, false, false, 2);
  EXPECT_EQ(two.elements_per_block, 2);
  EXPECT_EQ(two.block_source, "option");
  const GeometricFactors g = geometric_factors(mesh, Geometry::Hexahedron, quadrature(Geometry::Hexahedron, 9), exec(),
                                               GeometricFactorFlags::D);
  Array<double, 1> x("x", {space.num_dofs()}, exec().space()), y("y", {space.num_dofs()}, exec().space());
  x.fill(1.0);
  y.fill(0.0);
  EXPECT_NO_THROW(in.apply(pl, g.D.data(), x.cview(), y.view()));
  EXPECT_ERROR_MENTIONS(in.apply(in.plan(true, false, true), g.D.data(), x.cview(), y.view()),
                        "fem::FusedOperator::apply", "element-level");
  EXPECT_ERROR_MENTIONS(in.apply(pl, nullptr, x.cview(), y.view()), "stored point data");
  EXPECT_ERROR_MENTIONS(FusedOperator(space, Geometry::Hexahedron, quadrature(Geometry::Quadrilateral, 9), exec()),
                        "fem::FusedOperator", "quadrilateral");
  // standing alone, the fused operator adds what H1Operator's apply (same rule, q = p + 2) gives
  const H1Operator A(space, OperatorKind::Diffusion, exec());
  Array<double, 1> Ax("Ax", {space.num_dofs()}, exec().space());
  A.apply(x.cview(), Ax.view());
  const std::vector<double> want = to_vector(Ax), got = to_vector(y);
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-12 * std::max(1.0, max_abs(want))) << "entry " << i;
}

TEST_P(OperatorTest, HexahedronKernelVariantsEqualAssembled) {
  // The fused hexahedron kernel has variants by the larger of nodes and points per direction
  // (<= 4, 6, 8, 10, 12, 14, 16, more; operator_bound): p = 5, 6 and 7, 8 (q = p + 2) fill the
  // third and fourth up to their bounds, p = 10 (12 points; 11 Gauss-Lobatto points in the
  // points-at-the-nodes instance) the fifth, p = 12 (14 points; 13 Gauss-Lobatto) the sixth,
  // p = 14 (16 points) and p = 15 with Gauss-Lobatto points (16 nodes) the seventh; the ctest
  // fem.operator_bound16 runs this test again with TESSERA_OPERATOR_BOUND=16 (read here through
  // OperatorKernelChoice::from_environment), every case but
  // the last on the bound-16 kernels. p = 2 with 17 points (degree 33) takes the run-time
  // kernel in both runs; the other tests cover the first two bounds (p = 1, 2, 4). The
  // reference is the host quadrature summed point by point, not through the element matrix:
  // that matrix costs (p + 1)^6 (p + 2)^3 products, minutes for p = 7, 8 in the
  // AddressSanitizer build (EqualsAssembledMatricesAndDiagonals checks the matrix route at
  // p <= 4). p >= 12 is left out of that build, where p = 12's six cases alone
  // add about a minute per backend; HighestOrders checks those kernels there.
  // p = 7, 10 and 14 also with 3 components (at bound 16 the largest buffers that must fit a
  // block's shared memory on the GPU): an item then walks one step per component of an
  // element, and stored mass keeps the element's w det J in shared memory across those steps
  // (hex_mass_lines).
  const Mesh mesh = distorted_mesh("box:hex:1x1x1");  // trilinear: see distorted_mesh
  constexpr QuadratureType kGauss = QuadratureType::Gauss, kLobatto = QuadratureType::GaussLobatto;
  std::vector<OperatorCase> cases = {{5}, {6}, {7}, {7, -1, kGauss, 3}, {8}, {10}, {10, -1, kGauss, 3}, {10, -1, kLobatto},
                                     {12}, {12, -1, kLobatto}, {14}, {14, -1, kGauss, 3}, {15, -1, kLobatto}, {2, 33}};
#if defined(__SANITIZE_ADDRESS__)
  std::erase_if(cases, [](const OperatorCase& k) { return k.p >= 12; });
#endif
  expect_cases_match_assembled(mesh, cases, exec(), OperatorKernelChoice::from_environment());
}

TEST_P(OperatorTest, HexahedronKernelsWithSizesFixedAtCompileTimeEqualAssembled) {
  // Some sizes run the line kernels with the nodes and points per direction fixed at compile
  // time (HexExact; operator_exact_sizes), on every backend: q = p + 2 mass at p = 3..10 and
  // diffusion at p = 2..10, and Gauss-Lobatto diffusion with the points at the nodes at
  // p = 3..10 (on the CPU stored Gauss diffusion at p <= 5, on the GPU stored Gauss-Lobatto at
  // p = 4, 5 and 10, and at p = 3, 4 several components (the column kernel), take other kernels
  // instead).
  // Their input products leave out the tables' zero pairs (q = p + 2 at odd p has one pair
  // fewer than the bound). Up to p = 6 each case with 1 component and 3 elements per item, and
  // with 3 components and 1 per item, stored and on the fly, over 12 trilinear elements
  // (several items and blocks), against the host quadrature summed point by point. From p = 7
  // the host reference costs ~(p + 1)^3 (p + 2)^3 per element (and a debug build with the
  // sanitizers runs it ~60x slower), so 2 elements and one of the four component and geometry
  // pairs per order, in turn over p = 7..10: 1 component with 2 elements per item, 3
  // components with 1 per item (partial items are the lower orders' cases).
  const Mesh mesh = distorted_mesh("box:hex:3x2x2");
  const Mesh small = distorted_mesh("box:hex:2x1x1");
  struct Case {
    OperatorKind kind;
    int p;
    QuadratureType type;
  };
  std::vector<Case> cases;
  for (int p = 3; p <= 10; ++p) cases.push_back({OperatorKind::Mass, p, QuadratureType::Gauss});
  for (int p = 2; p <= 10; ++p) cases.push_back({OperatorKind::Diffusion, p, QuadratureType::Gauss});
  for (int p = 3; p <= 10; ++p) cases.push_back({OperatorKind::Diffusion, p, QuadratureType::GaussLobatto});
  for (const Case& k : cases) {
    const bool nodal = k.type == QuadratureType::GaussLobatto;
    const int nq1 = nodal ? k.p + 1 : k.p + 2;
    ASSERT_TRUE(interp_detail::operator_exact_sizes(OperatorKernelChoice{}, Geometry::Hexahedron,
                                                    k.kind == OperatorKind::Diffusion, k.p + 1, nq1, nodal))
        << name(k.kind) << " p = " << k.p << " no longer takes a compile-time-size kernel: this test would not reach it";
    for (int comps : {1, 3})
      for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
        // p = 7: 1 component stored, 8: 3 on the fly, 9: 1 on the fly, 10: 3 stored
        if (k.p >= 7 && (comps == 1) != (k.p % 2 == 1)) continue;
        if (k.p >= 7 && (gs == GeometrySource::Stored) != (k.p == 7 || k.p == 10)) continue;
        SCOPED_TRACE(std::string(name(k.kind)) + " p=" + std::to_string(k.p) + (nodal ? " Gauss-Lobatto" : " Gauss") +
                     " c=" + std::to_string(comps) + " " + name(gs));
        const H1Space space(k.p >= 7 ? small : mesh, k.p, comps);
        OperatorOptions opt = team_options();
        opt.geometry = gs;
        opt.quadrature = k.type;
        opt.elements_per_item = comps == 1 ? (k.p >= 7 ? 2 : 3) : 1;
        expect_matches_assembled(space, k.kind, exec(), opt, /*matrix=*/false);
      }
  }
}

TEST_P(OperatorTest, QuadrilateralHigherOrdersEqualAssembled) {
  // Quadrilaterals run one run-time-size kernel (quad_operator) at every order; the tests above
  // reach p = 5 (7 points per direction). Here p = 6, 7, 10 and 14 with q = p + 2 (8, 9, 12
  // and 16 points: at 8, 12 and 16 the table rows start in the same shared-memory banks on
  // the GPU), Gauss-Lobatto diffusion at p = 7 and 14, and 3 components at p = 7, stored and
  // on the fly on perturbed (bilinear) elements, against the host quadrature summed point by
  // point.
  constexpr QuadratureType kGauss = QuadratureType::Gauss, kLobatto = QuadratureType::GaussLobatto;
  expect_cases_match_assembled(distorted_mesh("box:quad:3x2:perturb=0.2"),
                               {{6}, {7}, {7, -1, kGauss, 3}, {7, -1, kLobatto}, {10}, {14}, {14, -1, kLobatto}}, exec());
}

TEST_P(OperatorTest, HexahedronMassByLinesAndByMatrixProductsEqualAssembled) {
  // The hexahedron mass operator has two bounded kernel families: by lines (hex_mass_lines,
  // the default) and by small matrix products (hex_mass_matmul, on the GPU's tensor cores).
  // OperatorKernelChoice::matmul selects either on every backend, so both bodies are checked on
  // every backend: p = 1..3 and 6 (at most 8 nodes or points per direction: MaxK = 8), p = 7 and
  // 10 (MaxK = 16), 1 and 3 components (3: an item walks one step per component), stored and on
  // the fly on a trilinear mesh (distorted_mesh), and a Gauss rule with fewer points than
  // q = p + 2 (degree 2p: q = p + 1).
  const Mesh mesh = distorted_mesh("box:hex:2x2x1");
  struct Case {
    int p, degree, comps;
  };
  for (bool matmul : {false, true})
    for (const Case& k : {Case{1, -1, 1}, Case{2, -1, 3}, Case{3, 6, 1}, Case{6, -1, 1}, Case{7, -1, 3}, Case{10, -1, 1}})
      for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
#if defined(__SANITIZE_ADDRESS__)
        if (k.p == 10) continue;  // minutes under AddressSanitizer; p = 7 covers MaxK = 16 there
#endif
        SCOPED_TRACE(std::string("matmul=") + (matmul ? "1" : "0") + " p=" + std::to_string(k.p) + " degree " +
                     std::to_string(k.degree) + " c=" + std::to_string(k.comps) + " " + name(gs));
        const H1Space space(mesh, k.p, k.comps);
        OperatorOptions opt = team_options();
        opt.kernels.matmul = matmul;
        opt.degree = k.degree;
        opt.geometry = gs;
        // the point-by-point host reference from p = 6 (the element matrices cost minutes
        // under AddressSanitizer there)
        expect_matches_assembled(space, OperatorKind::Mass, exec(), opt, /*matrix=*/k.p < 6);
      }
}

TEST(OperatorKernelChoiceTest, FromEnvironmentReadsTheSwitchesAndRefusesBadValues) {
  // The library reads no environment by itself: only from_environment does, where a program
  // asks for it (bench, tune, poisson).
  ScopedEnv bound("TESSERA_OPERATOR_BOUND"), exact("TESSERA_OPERATOR_EXACT"), matmul("TESSERA_OPERATOR_MATMUL"),
      threads("TESSERA_SIMPLEX_THREADS");
  unsetenv("TESSERA_OPERATOR_BOUND");
  unsetenv("TESSERA_OPERATOR_EXACT");
  unsetenv("TESSERA_OPERATOR_MATMUL");
  unsetenv("TESSERA_SIMPLEX_THREADS");
  const OperatorKernelChoice d = OperatorKernelChoice::from_environment();
  EXPECT_EQ(d.bound, -1);
  EXPECT_TRUE(d.exact);
  EXPECT_FALSE(d.matmul);
  EXPECT_EQ(d.simplex_threads, 0);
  bound.set("16");
  exact.set("0");
  matmul.set("1");
  threads.set("96");
  const OperatorKernelChoice c = OperatorKernelChoice::from_environment();
  EXPECT_EQ(c.bound, 16);
  EXPECT_FALSE(c.exact);
  EXPECT_TRUE(c.matmul);
  EXPECT_EQ(c.simplex_threads, 96);
  // with a bound forced, the compile-time-size kernels do not serve (the comparison's point)
  EXPECT_TRUE(interp_detail::operator_exact_sizes(d, Geometry::Hexahedron, true, 5, 6, false));
  EXPECT_FALSE(interp_detail::operator_exact_sizes(c, Geometry::Hexahedron, true, 5, 6, false));
  for (const char* bad : {"abc", "17", "-1", "4x", " 4"}) {
    bound.set(bad);
    EXPECT_ERROR_MENTIONS(OperatorKernelChoice::from_environment(), "TESSERA_OPERATOR_BOUND", bad);
  }
}

/// A box of hexahedra sheared into parallelepipeds (affine maps, every Jacobian entry nonzero).
Mesh sheared_box(const std::string& spec) {
  Mesh m = generate_mesh(spec);
  auto X = m.coordinates();
  for (std::size_t v = 0; v + 2 < X.size(); v += 3) {
    const double x = X[v], y = X[v + 1], z = X[v + 2];
    X[v] = x + 0.3 * y - 0.2 * z, X[v + 1] = y + 0.1 * z, X[v + 2] = 0.5 * z + 0.25 * x;
  }
  return m;
}

TEST_P(OperatorTest, CompressedGeometryOnTheTeamKernelsEqualsThePerPointFactors) {
  // compress_geometry on the team kernels (the GPU's; on the CPU backends of builds without
  // CUDA the same instances where the CPU runs them): one factor per element where every
  // element is affine and the kernel reads it.
  // Against the same operator with the factors at every point: the same sums with each factor
  // rounded once instead of computed at each point, so equal to 1e-14 of the largest entry.
  // p = 1..8, Gauss (q = p + 2) and Gauss-Lobatto points, 1 and 3 components; a sheared box
  // (general packed factors; 7 x 5 x 3 elements over several blocks with a partial last one)
  // and a box of quadrilaterals (p <= 6, one component: one kernel serves them all); diffusion
  // and mass; and the bound-12 bucket of Gauss-Lobatto diffusion (p = 10 on the GPU, 11).
  const std::vector<int> orders{1, 2, 3, 4, 5, 6, 7, 8, 10, 11};
  const Mesh hex = sheared_box("box:hex:7x5x3");
  const Mesh quad = generate_mesh("box:quad:5x4");
  const auto max_entry = [](const std::vector<double>& v) { return max_abs(v); };
  for (const OperatorKind kind : {OperatorKind::Diffusion, OperatorKind::Mass})
  for (const Mesh* mesh : {&hex, &quad})
    for (int p : orders)
      for (bool gll : {false, true})
        for (int comps : {1, 3}) {
          if (mesh == &quad && (p > 6 || comps > 1)) continue;  // quadrilaterals: the run-time kernel alone
          const bool mass = kind == OperatorKind::Mass;
          if (mass && gll) continue;  // q = p + 1 Gauss-Lobatto points do not integrate the mass matrix
          if (p > 8 && (mass || !gll || comps > 1)) continue;  // past 8: the bound-12 bucket alone
          SCOPED_TRACE(std::string(mass ? "mass " : "diffusion ") + (mesh == &hex ? "hex" : "quad") + " p=" + std::to_string(p) +
                       (gll ? " Gauss-Lobatto" : " Gauss") + " c=" + std::to_string(comps));
          const H1Space space(*mesh, p, comps);
          OperatorOptions full = team_options();
          if (gll) full.quadrature = QuadratureType::GaussLobatto;
          full.compress_geometry = false;
          OperatorOptions compressed = full;
          compressed.compress_geometry = true;
          const H1Operator A(space, kind, exec(), compressed);
          const H1Operator B(space, kind, exec(), full);
          EXPECT_EQ(B.compressed_elements(), 0);
          // the instances that read them: one thread per element (p = 1; p = 2 mass and
          // Gauss-Lobatto diffusion), the compile-time sizes and the buckets of Gauss-Lobatto
          // diffusion: every case but the column kernel (several components, Gauss-Lobatto
          // points at p = 3, 4) and, on the CPU, diffusion with Gauss points at p = 2..5
          if (mesh == &hex && compile_time_kernels_on(exec())) {
            const bool columns = gll && comps > 1 && (p == 3 || p == 4);
            const bool reads = (mass || p == 1 || gll) ? !columns : (exec().on_device() || p >= 6);
            EXPECT_EQ(A.compressed_elements(), reads ? mesh->num_elements() : 0);
          }
          const auto xh = random_vector(std::size_t(space.num_dofs()), 11u + unsigned(p));
          auto x = Array<double, 1>::from("x", std::span<const double>(xh), exec().space());
          std::vector<std::vector<double>> ys;
          for (const H1Operator* op : {&A, &B}) {
            Array<double, 1> y("y", {space.num_dofs()}, exec().space());
            y.fill(std::nan(""));
            op->apply(x.cview(), y.view());
            ys.push_back(to_vector(y));
          }
          const double tol = 1e-14 * max_entry(ys[1]);
          for (std::size_t i = 0; i < ys[1].size(); ++i) ASSERT_NEAR(ys[0][i], ys[1][i], tol) << "row " << i;
          // the element-level apply and the diagonal read the per-point factors: they still serve
          if (mesh == &hex && p == 3) {
            const auto d = to_vector(A.diagonal()), dref = to_vector(B.diagonal());
            for (std::size_t i = 0; i < d.size(); ++i) ASSERT_NEAR(d[i], dref[i], 1e-14 * max_abs(dref)) << "diagonal " << i;
            expect_element_apply_matches_global(space, kind, exec(), compressed);
          }
        }
  // not on distorted elements, nor with one distorted element among affine ones
  const Mesh distorted = distorted_mesh("box:hex:3x3x2:perturb=0.2");
  Mesh almost = generate_mesh("box:hex:4x4x4");
  auto X = almost.coordinates();
  X[3 * std::size_t(almost.num_vertices() / 2)] += 0.05;  // an interior vertex: its 8 hexahedra
  for (const Mesh* mesh : {&distorted, static_cast<const Mesh*>(&almost)}) {
    const H1Space space(*mesh, 3);
    for (const OperatorKind kind : {OperatorKind::Diffusion, OperatorKind::Mass})
      EXPECT_EQ(H1Operator(space, kind, exec(), team_options()).compressed_elements(), 0);
  }
}

TEST_P(OperatorTest, HighestOrdersIntegrateExactlyAndMatchTheSerialBackend) {
  // p = 12 on hexahedra takes the bound-14 kernel, p = 13 the bound-16 kernel, p = 16 (18
  // points) the run-time-size kernel; on the GPU the latter's element buffers (diffusion with
  // q = p + 2 from p = 15) are over a block's shared memory and live in device memory
  // (items_may_spill). A host-assembled reference costs nd^2 nq per element here (4913^2 x
  // 5832 at p = 16), so the checks are exact integrals and the serial backend instead:
  // - the mesh tiles the unit cube (interior vertex perturbed, faces shared), so with
  //   trilinear geometry and exact quadrature 1^T M 1 = 1 and, for the nodal interpolant of
  //   the linear u = x (exact in Q_p), u^T A u = int |grad x|^2 = 1; A 1 = 0;
  // - on the other backends A x equals the serial backend's for random x.
  // Roundoff: sums of ~10^4-10^5 terms of size ~1: 1e-11 relative.
  const Mesh mesh = generate_mesh("box:hex:2x2x2:perturb=0.2");
  for (int p : {12, 13, 16}) {
    const H1Space space(mesh, p, 1);
    const H1Basis basis(Geometry::Hexahedron, p);
    const std::size_t n = std::size_t(space.num_dofs());
    std::vector<double> ux(n, 0.0), ones(n, 1.0);
    for (index_t e = 0; e < mesh.num_elements(); ++e) {
      const auto nodes = space.element_nodes(e);
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        const double xi[3] = {basis.nodes()(int(i), 0), basis.nodes()(int(i), 1), basis.nodes()(int(i), 2)};
        ux[std::size_t(nodes[i])] = mesh.map(e, std::span<const double>(xi, 3))[0];
      }
    }
    const auto xr = random_vector(n, 11);
    for (OperatorKind kind : {OperatorKind::Mass, OperatorKind::Diffusion})
      for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
        SCOPED_TRACE(std::string(name(kind)) + " p=" + std::to_string(p) + " " + name(gs));
        OperatorOptions opt = team_options();
        opt.geometry = gs;
        const H1Operator A(space, kind, exec(), opt);
        const auto apply = [&](const H1Operator& op, const Exec& ex, const std::vector<double>& xh) {
          auto x = Array<double, 1>::from("x", std::span<const double>(xh), ex.space());
          Array<double, 1> y("y", {space.num_dofs()}, ex.space());
          y.fill(std::nan(""));
          op.apply(x.cview(), y.view());
          return to_vector(y);
        };
        const auto dot_h = [](const std::vector<double>& a, const std::vector<double>& b) {
          double s = 0;
          for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
          return s;
        };
        if (kind == OperatorKind::Mass) {
          EXPECT_NEAR(dot_h(ones, apply(A, exec(), ones)), 1.0, 1e-11) << "1^T M 1, the volume";
        } else {
          EXPECT_NEAR(dot_h(ux, apply(A, exec(), ux)), 1.0, 1e-11) << "u^T A u for u = x";
          EXPECT_LT(max_abs(apply(A, exec(), ones)), 1e-11) << "A 1";
        }
        const auto y = apply(A, exec(), xr);
        if (exec().backend == Backend::Serial) continue;
        const H1Operator S(space, kind, Exec::serial(), opt);
        const auto ys = apply(S, Exec::serial(), xr);
        const double tol = 1e-11 * std::max(1.0, max_abs(ys));
        for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], ys[i], tol) << "row " << i;
      }
  }
}

TEST_P(OperatorTest, TuningCacheChoosesElementsPerItemAndBlock) {
  // `tessera tune operators` stores the fastest (elements per item, elements per block) pair
  // under the operator's automatic key; a new operator of the same kind then walks that many
  // elements per item (not for an entry under an earlier kernel revision's key), and an
  // explicit option still wins. 3 per item is a count no rule
  // chooses, so it can only come from the cache; the results must not depend on it.
  const std::string path =
      ::testing::TempDir() + "tessera_operator_tuning_" + std::to_string(static_cast<int>(GetParam())) + ".json";
  std::remove(path.c_str());
  ScopedEnv cache("TESSERA_TUNING_CACHE", /*tuning=*/true);
  cache.set(path);
  const Mesh mesh = distorted_mesh("box:hex:3x3x2");
  for (OperatorKind kind : {OperatorKind::Mass, OperatorKind::Diffusion}) {
    SCOPED_TRACE(name(kind));
    const H1Space space(mesh, 3, 1);  // p = 3: no one-thread-per-element kernel (those take 1 per item)
    const H1Operator A0(space, kind, exec());
    std::string src;
    const int k0 = A0.elements_per_item(false, &src);
    EXPECT_EQ(src, "heuristic");
    EXPECT_NE(k0, 3);
    EXPECT_TRUE(A0.tuning_key().ends_with("/kauto")) << A0.tuning_key();
    // an entry under the key of an earlier kernel revision was measured for other kernels
    std::string earlier = A0.tuning_key();
    const std::size_t rev = earlier.find("/rev");
    ASSERT_NE(rev, std::string::npos) << earlier;
    earlier.replace(rev, earlier.find('/', rev + 1) - rev, "/rev1");
    ASSERT_NE(earlier, A0.tuning_key());
    tuning::store(tuning::device_key(exec()), {{earlier, tuning::Entry{2, 1.0, "2026-11-26", 3}}});
    const H1Operator Aearlier(space, kind, exec());
    EXPECT_EQ(Aearlier.elements_per_item(false, &src), k0);
    EXPECT_EQ(src, "heuristic");
    tuning::store(tuning::device_key(exec()), {{A0.tuning_key(), tuning::Entry{2, 1.0, "2026-11-26", 3}}});
    const H1Operator A1(space, kind, exec());
    EXPECT_EQ(A1.elements_per_item(false, &src), 3);
    EXPECT_EQ(src, "tuning cache");
    EXPECT_EQ(A1.elements_per_block(false, &src), 2);
    EXPECT_EQ(src, "tuning cache");
    OperatorOptions opt = team_options();
    opt.elements_per_item = 1;
    const H1Operator A2(space, kind, exec(), opt);
    EXPECT_EQ(A2.elements_per_item(false, &src), 1);
    EXPECT_EQ(src, "option");
    EXPECT_NE(A2.tuning_key(), A0.tuning_key());  // the cache's pair was measured for another count
    expect_same_applies(space, exec(), {&A0, &A1, &A2}, 11);
  }
  std::remove(path.c_str());
}

TEST_P(OperatorTest, GaussLobattoDiffusionElementsPerItemFollowTheRulesAtOrdersThreeToEight) {
  // The rules for diffusion with the points at the nodes on GPU hexahedra:
  //  - p = 3: one component (the compile-time-size line kernel) 1 element per item stored, 4 on
  //    the fly (H200 sweep); 3 components run hex_column_nodal, 2 per item;
  //  - p = 4, 5, stored: 1 element per item and 2 per block (measured 1.11x / 1.19x on the
  //    H100 for scalars, 1.16x for 3 components at p = 5); not for 3 components at p = 4 (one
  //    element per warp, hex_column_nodal: 2 per item);
  //  - p = 6, 8, stored, one component: 2 per item where 512 / nodes gives 1 (measured 1.07x and
  //    1.14x on the H200); p = 7 and 3 components stay at 1.
  // On the CPU, and on the fly from p = 4, 512 / nodes (8 at p = 3, 4 at p = 4, 2 at p = 5, 1
  // from p = 6). Whatever the count, the apply must equal the one with another count fixed by
  // the option.
  ScopedEnv cache("TESSERA_TUNING_CACHE", /*tuning=*/true);
  cache.set("");  // the rules alone
  const Mesh mesh = distorted_mesh("box:hex:3x2x2");
  const bool gpu = exec().on_device();
  for (int p = 3; p <= 8; ++p)
    for (int comps : {1, 3})
      for (GeometrySource gs : {GeometrySource::Stored, GeometrySource::OnTheFly}) {
        const bool stored = gs == GeometrySource::Stored;
        if (!stored && p != 3 && p != 6) continue;  // on the fly: the p = 3 rule, one control
        SCOPED_TRACE(testing::Message() << "p = " << p << ", components " << comps << ", " << name(gs));
        const H1Space space(mesh, p, comps);
        OperatorOptions opt = team_options();
        opt.quadrature = QuadratureType::GaussLobatto;
        opt.geometry = gs;
        const H1Operator A(space, OperatorKind::Diffusion, exec(), opt);
        std::string src;
        const int k = A.elements_per_item(false, &src), chunk = std::clamp(512 / ((p + 1) * (p + 1) * (p + 1)), 1, 8);
        EXPECT_EQ(src, "heuristic");
        const bool columns = gpu && (p == 3 || p == 4) && comps > 1;
        int expected = chunk;
        if (columns) expected = 2;
        else if (gpu && p == 3) expected = stored ? 1 : 4;
        else if (gpu && stored && p <= 5) expected = 1;
        else if (gpu && stored && p >= 6) expected = comps == 1 && p != 7 ? 2 : 1;
        EXPECT_EQ(k, expected);
        if (gpu && stored && p <= 5 && !columns) {
          EXPECT_EQ(A.elements_per_block(false, &src), 2);
        }
        opt.elements_per_item = k == 1 ? std::max(chunk, 2) : 1;
        const H1Operator B(space, OperatorKind::Diffusion, exec(), opt);
        expect_same_applies(space, exec(), {&A, &B}, 21 + unsigned(p));
      }
}

TEST_P(OperatorTest, RejectsGaussLobattoCollocatedMass) {
  const Mesh mesh = generate_mesh("box:hex:2x2x1");
  const H1Space space(mesh, 3, 1);
  OperatorOptions opt = team_options();
  opt.quadrature = QuadratureType::GaussLobatto;
  EXPECT_ERROR_MENTIONS(H1Operator(space, OperatorKind::Mass, exec(), opt), "degree 5", "2p = 6",
                        "exact for diffusion only");
}

TEST_P(OperatorTest, IsSymmetric) {
  for (const char* spec : kSpecs) {
    const Mesh mesh = generate_mesh(spec);
    const H1Space space(mesh, 3, 1);
    const H1Operator A(space, OperatorKind::Diffusion, exec());
    const auto xh = random_vector(std::size_t(space.num_dofs()), 5), zh = random_vector(std::size_t(space.num_dofs()), 6);
    auto x = Array<double, 1>::from("x", std::span<const double>(xh), exec().space());
    auto z = Array<double, 1>::from("z", std::span<const double>(zh), exec().space());
    Array<double, 1> Ax("Ax", {space.num_dofs()}, exec().space()), Az("Az", {space.num_dofs()}, exec().space());
    A.apply(x.cview(), Ax.view());
    A.apply(z.cview(), Az.view());
    const double a = dot(exec(), Ax.cview(), z.cview()), b = dot(exec(), x.cview(), Az.cview());
    EXPECT_NEAR(a, b, 1e-12 * std::max(1.0, std::abs(a))) << spec;
  }
}

TEST_P(OperatorTest, RejectsTooSmallQuadrature) {
  const Mesh mesh = generate_mesh("box:quad:2x2");
  const H1Space space(mesh, 3, 1);
  EXPECT_ERROR_MENTIONS(H1Operator(space, OperatorKind::Mass, exec(), 5), "degree 5", "2p = 6");
}
