// p-multigrid: the V-cycle is a symmetric linear operator, CG converges in few iterations
// whatever the order, both coarse solvers give the same solution, bad input is named.
#include <cmath>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "test_backends.hpp"
#include "tessera/fem/multigrid.hpp"
#include "tessera/linalg/amg.hpp"

using namespace tessera;
using namespace tessera::fem;
using tessera::fem::test::random_vector;

namespace {

std::vector<double> to_vector(const Array<double, 1>& a) {
  const auto h = a.to_host();
  return std::vector<double>(h.data(), h.data() + h.size());
}

/// A random vector with zeros at the constrained entries, in exec's space.
Array<double, 1> random_free(index_t n, const std::vector<index_t>& fixed, unsigned seed, const Exec& exec) {
  auto v = random_vector(std::size_t(n), seed);
  for (index_t k : fixed) v[std::size_t(k)] = 0;
  return Array<double, 1>::from("v", std::span<const double>(v), exec.space());
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

std::vector<index_t> exterior(const H1Space& s) { return s.exterior_nodes(); }

/// CG with the multigrid preconditioner on A u = b (b random on the free entries); returns the
/// iterations and the solution.
linalg::CgResult solve(const Constrained& C, const Multigrid& mg, const Array<double, 1>& b, Array<double, 1>& x,
                       const Exec& exec, double tol) {
  linalg::CgOptions o;
  o.rel_tol = tol;
  o.max_iters = 200;
  x.fill(0.0);
  return linalg::pcg([&C](View<const double, 1> in, View<double, 1> out) { C.apply_homogeneous(in, out); },
                     mg.preconditioner(), b.cview(), x.view(), exec, o);
}

const char* kSpecs[] = {"box:quad:6x6:perturb=0.2", "box:tri:5x5:perturb=0.2", "box:hex:4x4x4:perturb=0.2",
                        "box:tet:3x3x3:perturb=0.2"};

}  // namespace

class MultigridTest : public tessera::test::BackendTest {};
TESSERA_INSTANTIATE_BACKENDS(MultigridTest);

// (M a, b) = (a, M b) for the V-cycle M: pre- and post-smoothing with the same Chebyshev
// polynomial and an exact-transpose restriction make it symmetric; the coarse CG is linear
// only up to its tolerance, so it runs to 1e-13 here (1e-10 relative allows for that).
TEST_P(MultigridTest, VCycleIsSymmetric) {
  for (const char* spec : kSpecs) {
    SCOPED_TRACE(spec);
    const Mesh mesh = generate_mesh(spec);
    const H1Space space(mesh, 3);
    const H1Operator A(space, OperatorKind::Diffusion, exec());
    const auto fixed = exterior(space);
    MultigridOptions o;
    o.coarse = CoarseSolver::Cg;
    o.coarse_tol = 1e-13;
    const Multigrid mg(A, space, fixed, exterior, o);
    ASSERT_EQ(mg.levels().size(), 3u);  // 3, 2, 1
    const index_t n = space.num_dofs();
    const auto a = random_free(n, fixed, 1, exec()), b = random_free(n, fixed, 2, exec());
    Array<double, 1> Ma("Ma", {n}, exec().space()), Mb("Mb", {n}, exec().space());
    mg.apply(a.cview(), Ma.view());
    mg.apply(b.cview(), Mb.view());
    const double ab = dot(to_vector(Ma), to_vector(b)), ba = dot(to_vector(a), to_vector(Mb));
    EXPECT_NEAR(ab, ba, 1e-10 * std::abs(ab)) << "(Ma, b) = " << ab << ", (a, Mb) = " << ba;
    // and it is a useful preconditioner: (Ma, a) > 0
    EXPECT_GT(dot(to_vector(Ma), to_vector(a)), 0.0);
  }
}

// Iterations to 1e-6 stay small at every order on perturbed meshes of every geometry (Jacobi
// needs tens to hundreds here), and do not grow much under refinement.
TEST_P(MultigridTest, FewIterationsAtEveryOrder) {
  for (const char* spec : kSpecs)
    for (int p : {1, 2, 3, 4}) {
      SCOPED_TRACE(std::string(spec) + " p=" + std::to_string(p));
      const Mesh mesh = generate_mesh(spec);
      const H1Space space(mesh, p);
      const H1Operator A(space, OperatorKind::Diffusion, exec());
      const auto fixed = exterior(space);
      const Constrained C(A, fixed);
      const Multigrid mg(A, space, fixed, exterior);
      const auto b = random_free(space.num_dofs(), fixed, 3, exec());
      Array<double, 1> x("x", {space.num_dofs()}, exec().space());
      const auto r = solve(C, mg, b, x, exec(), 1e-6);
      ASSERT_TRUE(r.converged) << r.iterations << " iterations, residual " << r.rel_residual;
      EXPECT_LE(r.iterations, 15);
    }
}

// AMG and CG coarse solvers give the same solution to the solver tolerance (1e-9 relative for
// CG to 1e-11: the error is at most the condition number times the residual).
TEST_P(MultigridTest, CoarseSolversGiveTheSameSolution) {
  if (!linalg::amg_available()) GTEST_SKIP() << "skipped: this build has no hypre";
  const Mesh mesh = generate_mesh("box:hex:4x4x4:perturb=0.2");
  const H1Space space(mesh, 2);
  const H1Operator A(space, OperatorKind::Diffusion, exec());
  const auto fixed = exterior(space);
  const Constrained C(A, fixed);
  const auto b = random_free(space.num_dofs(), fixed, 4, exec());
  std::vector<std::vector<double>> xs;
  for (CoarseSolver cs : {CoarseSolver::Amg, CoarseSolver::Cg}) {
    MultigridOptions o;
    o.coarse = cs;
    const Multigrid mg(A, space, fixed, exterior, o);
    EXPECT_EQ(mg.coarse_solver(), cs);
    Array<double, 1> x("x", {space.num_dofs()}, exec().space());
    const auto r = solve(C, mg, b, x, exec(), 1e-11);
    ASSERT_TRUE(r.converged) << name(cs);
    xs.push_back(to_vector(x));
  }
  double m = 0;
  for (double v : xs[0]) m = std::max(m, std::abs(v));
  for (std::size_t i = 0; i < xs[0].size(); ++i) ASSERT_NEAR(xs[0][i], xs[1][i], 1e-9 * m) << "entry " << i;
}

// On the GPU the solution equals the serial backend's (1e-9 relative: both to CG tolerance 1e-11).
TEST_P(MultigridTest, EqualsTheSerialBackend) {
  if (GetParam() == Backend::Serial) GTEST_SKIP() << "the reference itself";
  const Mesh mesh = generate_mesh("box:tet:3x3x3:perturb=0.2");
  const H1Space space(mesh, 3);
  const auto fixed = exterior(space);
  std::vector<std::vector<double>> xs;
  for (const Exec& e : {Exec::serial(), exec()}) {
    const H1Operator A(space, OperatorKind::Diffusion, e);
    const Constrained C(A, fixed);
    MultigridOptions o;
    o.coarse = CoarseSolver::Cg;
    const Multigrid mg(A, space, fixed, exterior, o);
    const auto b = random_free(space.num_dofs(), fixed, 5, e);
    Array<double, 1> x("x", {space.num_dofs()}, e.space());
    ASSERT_TRUE(solve(C, mg, b, x, e, 1e-11).converged);
    xs.push_back(to_vector(x));
  }
  double m = 0;
  for (double v : xs[0]) m = std::max(m, std::abs(v));
  for (std::size_t i = 0; i < xs[0].size(); ++i) ASSERT_NEAR(xs[1][i], xs[0][i], 1e-9 * m) << "entry " << i;
}

TEST_P(MultigridTest, BadInputIsRefusedWithAMessage) {
  const Mesh mesh = generate_mesh("box:quad:3x3");
  const H1Space space(mesh, 3);
  const H1Operator A(space, OperatorKind::Diffusion, exec());
  const H1Operator M(space, OperatorKind::Mass, exec());
  const auto fixed = exterior(space);
  MultigridOptions o;
  o.orders = {2, 1};
  EXPECT_ERROR_MENTIONS(Multigrid(A, space, fixed, exterior, o), "must start with the fine order 3");
  o.orders = {3, 3, 1};
  EXPECT_ERROR_MENTIONS(Multigrid(A, space, fixed, exterior, o), "must decrease");
  EXPECT_ERROR_MENTIONS(Multigrid(M, space, fixed, exterior), "mass", "diffusion");
  EXPECT_ERROR_MENTIONS(parse_coarse_solver("direct"), "unknown coarse solver 'direct'");
  if (!linalg::amg_available()) {
    MultigridOptions a;
    a.coarse = CoarseSolver::Amg;
    EXPECT_ERROR_MENTIONS(Multigrid(A, space, fixed, exterior, a), "needs hypre");
  }
}

// Mesh levels: the p levels on the fine mesh, then the order-1 spaces of the meshes that
// uniform refinement made it from. The cycle stays symmetric and CG needs as few iterations
// as with the order levels alone, while the assembled level is 64 times smaller.
TEST_P(MultigridTest, MeshLevelsFromTheRefinementHierarchy) {
  for (const char* spec : {"box:quad:3x3:perturb=0.2", "box:tet:1x1x1", "box:hex:2x2x2:perturb=0.2"}) {
    SCOPED_TRACE(spec);
    const Mesh m0 = generate_mesh(spec);
    const Mesh m1 = refine_uniformly(m0);
    const Mesh m2 = refine_uniformly(m1);
    const H1Space space(m2, 2);
    const H1Operator A(space, OperatorKind::Diffusion, exec());
    const auto fixed = exterior(space);
    const Constrained C(A, fixed);
    MultigridOptions o;
    o.coarse = CoarseSolver::Cg;
    o.coarse_tol = 1e-13;
    o.coarse_meshes = {&m0, &m1};
    const Multigrid mg(A, space, fixed, exterior, o);
    ASSERT_EQ(mg.levels().size(), 4u);  // p = 2 and 1 on m2, then 1 on m1 and m0
    EXPECT_EQ(mg.levels()[2].elements, m1.num_elements());
    EXPECT_EQ(mg.levels()[3].elements, m0.num_elements());
    const index_t n = space.num_dofs();
    const auto a = random_free(n, fixed, 6, exec()), b = random_free(n, fixed, 7, exec());
    Array<double, 1> Ma("Ma", {n}, exec().space()), Mb("Mb", {n}, exec().space());
    mg.apply(a.cview(), Ma.view());
    mg.apply(b.cview(), Mb.view());
    const double ab = dot(to_vector(Ma), to_vector(b)), ba = dot(to_vector(a), to_vector(Mb));
    EXPECT_NEAR(ab, ba, 1e-10 * std::abs(ab));
    Array<double, 1> x("x", {n}, exec().space());
    const auto r = solve(C, mg, a, x, exec(), 1e-6);
    ASSERT_TRUE(r.converged);
    EXPECT_LE(r.iterations, 10);
  }
  // orders that do not end at 1 cannot hand over to order-1 mesh levels
  const Mesh m0 = generate_mesh("box:quad:2x2");
  const Mesh m1 = refine_uniformly(m0);
  const H1Space space(m1, 4);
  const H1Operator A(space, OperatorKind::Diffusion, exec());
  MultigridOptions o;
  o.orders = {4, 2};
  o.coarse_meshes = {&m0};
  EXPECT_ERROR_MENTIONS(Multigrid(A, space, exterior(space), exterior, o), "must end at 1");
}

// CoarseSolver::Auto: CG below MultigridOptions::amg_min_coarse_dofs coarse DOFs (hypre's set-up would cost more),
// AMG from there where the build has hypre.
TEST(MultigridCoarseChoice, AutoTakesCgOnSmallCoarseLevelsAndAmgOnLargeOnes) {
  const Exec exec = Exec::serial();
  const Mesh small = generate_mesh("box:hex:4x4x4");
  const H1Space s2(small, 2);
  const H1Operator A(s2, OperatorKind::Diffusion, exec);
  const Multigrid mg(A, s2, exterior(s2), exterior, MultigridOptions{});
  EXPECT_EQ(mg.coarse_solver(), CoarseSolver::Cg);  // 125 coarse DOFs
  if (!linalg::amg_available()) GTEST_SKIP() << "no hypre in this build: Auto is always CG";
  MultigridOptions o;
  o.amg_min_coarse_dofs = 125;  // the threshold is an option: from it on, AMG
  const Multigrid mg2(A, s2, exterior(s2), exterior, o);
  ASSERT_GE(mg2.levels().back().dofs, o.amg_min_coarse_dofs);
  EXPECT_EQ(mg2.coarse_solver(), CoarseSolver::Amg);
}
