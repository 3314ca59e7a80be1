// Global sparse assembly: the CSR matrix against the matrix-free operators, its structure,
// the physics' invariants, the fill modes and dispatches, Dirichlet elimination, load vectors.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "assembly_physics.hpp"
#include "fem_test_util.hpp"
#include "test_backends.hpp"
#include "tessera/fem/assembly.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/operator.hpp"

using namespace tessera;
using namespace tessera::fem;
using tessera::fem::test::random_vector;

namespace {

/// x += 0.1 y (z), ... : the elements become non-affine (bilinear / trilinear maps), still valid
/// (1-D meshes are only stretched).
void distort(Mesh& m) {
  auto x = m.coordinates();
  const int sd = m.space_dim();
  for (std::size_t v = 0; v + std::size_t(sd) - 1 < x.size(); v += std::size_t(sd)) {
    const double x0 = x[v], y0 = sd >= 2 ? x[v + 1] : 1.0, z0 = sd == 3 ? x[v + 2] : 1.0;
    x[v] = x0 + 0.1 * y0 * z0 * x0;
    if (sd >= 2) x[v + 1] = y0 + 0.12 * x0 * z0 * y0;
    if (sd == 3) x[v + 2] = z0 + 0.08 * x0 * y0 * z0;
  }
}

Mesh distorted(const std::string& spec) {
  Mesh m = generate_mesh(spec);
  distort(m);
  return m;
}

/// A 3 x 2 grid of unit squares: quadrilaterals in column 0, two triangles per square in
/// columns 1 and 2; attribute 1 for the quadrilaterals, 2 for the triangles.
Mesh mixed_tri_quad() {
  Mesh m(2);
  for (int j = 0; j <= 2; ++j)
    for (int i = 0; i <= 3; ++i) m.add_vertex({0.5 * i, 0.5 * j});
  const auto v = [](int i, int j) { return index_t(j * 4 + i); };
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 3; ++i) {
      if (i == 0) {
        m.add_element(Geometry::Quadrilateral, {v(i, j), v(i + 1, j), v(i + 1, j + 1), v(i, j + 1)}, 1);
      } else {
        m.add_element(Geometry::Triangle, {v(i, j), v(i + 1, j), v(i + 1, j + 1)}, 2);
        m.add_element(Geometry::Triangle, {v(i, j), v(i + 1, j + 1), v(i, j + 1)}, 2);
      }
    }
  distort(m);
  m.validate("mixed tri/quad");
  return m;
}

/// Two unit cubes side by side: a hexahedron (attribute 1) and six tetrahedra of the Kuhn split
/// (attribute 2). The shared face is a quadrilateral on one side and two triangles on the
/// other: the algebra (assembled = matrix-free) does not need conformity.
Mesh mixed_tet_hex() {
  Mesh m(3);
  for (int k = 0; k <= 1; ++k)
    for (int j = 0; j <= 1; ++j)
      for (int i = 0; i <= 2; ++i) m.add_vertex({double(i), double(j), double(k)});
  const auto v = [](int i, int j, int k) { return index_t((k * 2 + j) * 3 + i); };
  m.add_element(Geometry::Hexahedron,
                {v(0, 0, 0), v(1, 0, 0), v(1, 1, 0), v(0, 1, 0), v(0, 0, 1), v(1, 0, 1), v(1, 1, 1), v(0, 1, 1)}, 1);
  const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& p : perms) {
    int a[3] = {1, 0, 0};
    std::vector<index_t> t{v(1, 0, 0)};
    for (int s = 0; s < 3; ++s) {
      a[p[s]] += 1;
      if (s < 2) t.push_back(v(a[0] > 1 ? 2 : a[0] + (p[s] == 0 ? 0 : 0), a[1], a[2]));
    }
    t.push_back(v(2, 1, 1));
    // Orientation: swap two vertices when the volume is negative.
    const auto X = [&](index_t id, int c) { return m.vertex(id, c); };
    double e[3][3];
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) e[r][c] = X(t[std::size_t(r) + 1], c) - X(t[0], c);
    const double det = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
                       e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
                       e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
    if (det < 0) std::swap(t[1], t[2]);
    m.add_element(Geometry::Tetrahedron, t, 2);
  }
  distort(m);
  m.validate("mixed tet/hex");
  return m;
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

/// The host copy of a CSR matrix as plain vectors.
struct HostCsr {
  std::vector<std::int64_t> off;
  std::vector<int> col;
  std::vector<double> val;
};
HostCsr host(const linalg::CsrMatrix& A) {
  const linalg::CsrMatrix h = A.to(Exec::serial());
  HostCsr r;
  r.off.assign(h.row_offsets().data(), h.row_offsets().data() + h.rows() + 1);
  r.col.assign(h.col_indices().data(), h.col_indices().data() + h.nnz());
  r.val.assign(h.values().data(), h.values().data() + h.nnz());
  return r;
}

std::vector<double> csr_apply(const linalg::CsrMatrix& A, const std::vector<double>& xh, const Exec& exec) {
  auto x = Array<double, 1>::from("x", std::span<const double>(xh), exec.space());
  Array<double, 1> y("y", {A.rows()}, exec.space());
  y.fill(std::nan(""));
  A.apply(x.cview(), y.view());
  return to_vector(y);
}

std::vector<double> op_apply(const H1Operator& op, const std::vector<double>& xh, const Exec& exec) {
  auto x = Array<double, 1>::from("x", std::span<const double>(xh), exec.space());
  Array<double, 1> y("y", {op.size()}, exec.space());
  y.fill(std::nan(""));
  op.apply(x.cview(), y.view());
  return to_vector(y);
}

/// Physical coordinates of every global node of a (scalar or vector) space: xyz[3 n + c].
std::vector<double> node_coordinates(const H1Space& space) {
  const Mesh& mesh = space.mesh();
  std::vector<double> xyz(3 * std::size_t(space.num_nodes()), 0.0);
  for (index_t e = 0; e < mesh.num_elements(); ++e) {
    const Geometry g = mesh.element_geometry(e);
    if (fem::dim(g) != mesh.dim()) continue;
    const H1Basis basis(g, space.order());
    const auto nodes = space.element_nodes(e);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      double xi[3] = {0, 0, 0};
      for (int d = 0; d < fem::dim(g); ++d) xi[d] = basis.nodes()(index_t(i), d);
      const auto x = mesh.map(e, std::span<const double>(xi, std::size_t(fem::dim(g))));
      for (int c = 0; c < 3; ++c) xyz[3 * std::size_t(nodes[i]) + std::size_t(c)] = x[std::size_t(c)];
    }
  }
  return xyz;
}

OperatorKind operator_kind(FormKind k) { return k == FormKind::Mass ? OperatorKind::Mass : OperatorKind::Diffusion; }

const char* kSpecs[] = {"box:tri:3x2:perturb=0.2", "box:quad:3x2", "box:tet:2x1x1", "box:hex:2x1x1"};

std::vector<Mesh> test_meshes() {
  std::vector<Mesh> out;
  for (const char* s : kSpecs) out.push_back(distorted(s));
  out.push_back(mixed_tri_quad());
  out.push_back(mixed_tet_hex());
  return out;
}

const char* mesh_names[] = {"tri", "quad", "tet", "hex", "tri+quad", "tet+hex"};

}  // namespace

// The pairs u <= v of an m x m upper triangle, enumerated row by row, each exactly once
// (the square root that finds the row is corrected at the rows' ends).
TEST(AssemblyPairs, SplitPairEnumeratesTheUpperTriangle) {
  for (int m : {1, 2, 3, 8, 27, 125, 729, 2187, 4913}) {
    int r = 0;
    for (int u = 0; u < m; ++u)
      for (int v = u; v < m; ++v, ++r) {
        int a, b;
        assembly_detail::split_pair(m, r, a, b);
        ASSERT_EQ(a, u) << "m " << m << " pair " << r;
        ASSERT_EQ(b, v) << "m " << m << " pair " << r;
      }
  }
}

class AssemblyTest : public tessera::test::BackendTest {};
TESSERA_INSTANTIATE_BACKENDS(AssemblyTest);

// A x equals the matrix-free operator's apply to 1e-12 relative (the same element integrals
// summed in another order; 1e-12 allows for the growth of the element matrices' entries with
// p), the diagonal equals the matrix-free diagonal, and the matrix is symmetric (each pair of
// mirrored entries is computed once; bitwise symmetric with the deterministic fill).
TEST_P(AssemblyTest, EqualsTheMatrixFreeOperatorOnEveryGeometry) {
  const auto meshes = test_meshes();
  for (std::size_t mi = 0; mi < meshes.size(); ++mi)
    for (FormKind kind : {FormKind::Mass, FormKind::Diffusion})
      for (int p = 1; p <= 4; ++p)
        for (int comps : {1, 2}) {
          if (meshes[mi].dim() == 3 && p == 4 && comps == 2) continue;  // covered by comps = 1 (time)
          SCOPED_TRACE(std::string(mesh_names[mi]) + " " + name(kind) + " p=" + std::to_string(p) +
                       " c=" + std::to_string(comps));
          const H1Space space(meshes[mi], p, comps);
          const MatrixAssembler a(space, kind, exec());
          const linalg::CsrMatrix A = a.assemble();
          ASSERT_EQ(A.rows(), space.num_dofs());
          const H1Operator op(space, operator_kind(kind), exec(), a.degree());
          const auto xh = random_vector(std::size_t(space.num_dofs()), unsigned(11 * p + comps));
          const auto ya = csr_apply(A, xh, exec());
          const auto yo = op_apply(op, xh, exec());
          const double tol = 1e-12 * std::max(1.0, max_abs(yo));
          for (std::size_t i = 0; i < ya.size(); ++i) ASSERT_NEAR(ya[i], yo[i], tol) << "row " << i;
          const auto da = to_vector(A.diagonal());
          const auto dm = to_vector(op.diagonal());
          for (std::size_t i = 0; i < da.size(); ++i) ASSERT_NEAR(da[i], dm[i], tol) << "diagonal " << i;
          // Symmetry: A(r, c) = A(c, r) for every stored entry (binary search of the transpose).
          const HostCsr h = host(A);
          const double vmax = max_abs(h.val);
          for (index_t r = 0; r < A.rows(); ++r)
            for (std::int64_t k = h.off[std::size_t(r)]; k < h.off[std::size_t(r) + 1]; ++k) {
              const int c = h.col[std::size_t(k)];
              const auto b = h.col.begin() + h.off[std::size_t(c)], e = h.col.begin() + h.off[std::size_t(c) + 1];
              const auto it = std::lower_bound(b, e, int(r));
              ASSERT_TRUE(it != e && *it == int(r)) << "(" << r << ", " << c << ") has no transpose entry";
              // Deterministic fills sum both mirrored entries' (identical) contributions in the
              // same order: bitwise equal. Atomic fills (the GPU's default) add them in the
              // order the atomics land: equal to rounding, a few ulps of the entry's size.
              const double v = h.val[std::size_t(k)], vt = h.val[std::size_t(it - h.col.begin())];
              if (a.fill_mode() == FillMode::Deterministic)
                ASSERT_EQ(v, vt) << "(" << r << ", " << c << ")";
              else
                ASSERT_NEAR(v, vt, 1e-14 * vmax) << "(" << r << ", " << c << ")";
            }
        }
}

// The pattern is the union over the elements of their node pairs (host-built), rows sorted,
// on mixed meshes; vector mass couples each component only with itself.
TEST_P(AssemblyTest, PatternEqualsTheHostBuiltUnion) {
  for (const Mesh& mesh : {mixed_tri_quad(), mixed_tet_hex()})
    for (int p : {1, 3}) {
      const H1Space space(mesh, p, 2);
      const MatrixAssembler a(space, FormKind::Mass, exec());
      std::vector<std::set<int>> rows(std::size_t(space.num_dofs()));
      for (index_t e = 0; e < mesh.num_elements(); ++e) {
        const auto nodes = space.element_nodes(e);
        for (int c = 0; c < 2; ++c)
          for (index_t i : nodes)
            for (index_t j : nodes) rows[std::size_t(space.dof(c, i))].insert(int(space.dof(c, j)));
      }
      const auto off = a.row_offsets().to_host();
      const auto col = a.col_indices().to_host();
      std::int64_t at = 0;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        ASSERT_EQ(off(index_t(r)), at) << "row " << r;
        for (int c : rows[r]) ASSERT_EQ(col(index_t(at++)), c) << "row " << r;
      }
      EXPECT_EQ(at, a.nnz());
      EXPECT_EQ(off(space.num_dofs()), a.nnz());
    }
}

// Deterministic fills are the same bits in every run and with either dispatch of the per-entry
// kernel (the GPU's; the CPU's with cpu_batched off); the CPU's batched driver equals them to
// roundoff, as the atomic fill does (1e-14 of the largest entry: the same few dozen terms
// summed in another order, with fused multiply-adds). Re-assembly with new materials equals a
// fresh assembler's matrix bitwise.
TEST_P(AssemblyTest, DeterministicFillIsBitwiseReproducibleAcrossDispatches) {
  for (const Mesh& mesh : {mixed_tri_quad(), mixed_tet_hex()})
    for (FormKind kind : {FormKind::Diffusion, FormKind::Elasticity}) {
      SCOPED_TRACE(name(kind));
      const H1Space space(mesh, 2, kind == FormKind::Elasticity ? mesh.dim() : 1);
      const MaterialTable mats{{1, {.conductivity = 2.0, .lambda = 3.0, .mu = 0.5}},
                               {2, {.conductivity = 0.25, .lambda = 1.0, .mu = 2.0}}};
      AssemblyOptions opt;
      opt.fill = FillMode::Deterministic;
      opt.cpu_batched = false;
      MatrixAssembler a(space, kind, exec(), mats, opt);
      const auto v1 = host(a.assemble()).val;
      const auto v2 = host(a.assemble()).val;
      a.set_dispatch(Dispatch::Functor);
      const auto v3 = host(a.assemble()).val;
      ASSERT_EQ(v1.size(), v2.size());
      EXPECT_EQ(0, std::memcmp(v1.data(), v2.data(), v1.size() * sizeof(double))) << "two driver runs differ";
      EXPECT_EQ(0, std::memcmp(v1.data(), v3.data(), v1.size() * sizeof(double))) << "driver and functor differ";
      if (!exec().on_device()) {
        AssemblyOptions batched = opt;
        batched.cpu_batched = true;
        const MatrixAssembler b(space, kind, exec(), mats, batched);
        const auto vb1 = host(b.assemble()).val, vb2 = host(b.assemble()).val;
        EXPECT_EQ(0, std::memcmp(vb1.data(), vb2.data(), vb1.size() * sizeof(double))) << "two batched runs differ";
        for (std::size_t i = 0; i < v1.size(); ++i) ASSERT_NEAR(vb1[i], v1[i], 1e-14 * max_abs(v1)) << "batched " << i;
      }
      a.set_fill_mode(FillMode::Atomic);
      for (Dispatch d : {Dispatch::Driver, Dispatch::Functor}) {
        a.set_dispatch(d);
        const auto va = host(a.assemble()).val;
        for (std::size_t i = 0; i < v1.size(); ++i) ASSERT_NEAR(va[i], v1[i], 1e-14 * max_abs(v1)) << name(d) << " " << i;
      }
      // Re-assembly: new coefficients into the same matrix.
      a.set_fill_mode(FillMode::Deterministic);
      a.set_dispatch(Dispatch::Driver);
      linalg::CsrMatrix A = a.assemble();
      const MaterialTable mats2{{1, {.conductivity = 7.0, .lambda = 1.5, .mu = 1.25}},
                                {2, {.conductivity = 0.5, .lambda = 2.5, .mu = 0.75}}};
      a.set_materials(mats2);
      a.fill(A);
      const MatrixAssembler fresh(space, kind, exec(), mats2, opt);
      const auto vf = host(fresh.assemble()).val;
      const auto vr = host(A).val;
      EXPECT_EQ(0, std::memcmp(vf.data(), vr.data(), vf.size() * sizeof(double))) << "re-assembly differs";
      EXPECT_GT(std::abs(vr[0] - v1[0]), 0.0) << "the coefficients did not change the matrix";
    }
}

// Physics invariants on distorted meshes: 1^T M 1 = measure; the Neumann Laplacian's rows sum
// to 0; for a linear displacement u = M x the elastic energy u^T A u equals
// measure * (lambda tr(eps)^2 + 2 mu eps:eps) (u is in the space; the integrand is constant);
// the rigid-body modes (3 in 2-D, 6 in 3-D) are in the kernel of the pure-Neumann matrix.
TEST_P(AssemblyTest, PhysicsInvariants) {
  const auto meshes = test_meshes();
  for (std::size_t mi = 0; mi < meshes.size(); ++mi)
    for (int p : {1, 2, 3}) {
      SCOPED_TRACE(std::string(mesh_names[mi]) + " p=" + std::to_string(p));
      const Mesh& mesh = meshes[mi];
      const int dim = mesh.dim();
      const double measure = mesh.measure();
      {
        const H1Space s(mesh, p);
        const auto M = MatrixAssembler(s, FormKind::Mass, exec()).assemble();
        const auto K = MatrixAssembler(s, FormKind::Diffusion, exec()).assemble();
        const std::vector<double> one(std::size_t(s.num_dofs()), 1.0);
        const auto m1 = csr_apply(M, one, exec());
        double sum = 0;
        for (double v : m1) sum += v;
        EXPECT_NEAR(sum, measure, 1e-13 * measure);
        const auto k1 = csr_apply(K, one, exec());
        const double kmax = max_abs(host(K).val);
        for (std::size_t i = 0; i < k1.size(); ++i) ASSERT_NEAR(k1[i], 0.0, 1e-13 * kmax) << "row " << i;
      }
      const H1Space v(mesh, p, dim);
      const double lambda = 1.7, mu = 0.6;
      const MatrixAssembler ea(v, FormKind::Elasticity, exec(), {{1, {.lambda = lambda, .mu = mu}},
                                                                  {2, {.lambda = lambda, .mu = mu}}});
      const auto A = ea.assemble();
      const auto xyz = node_coordinates(v);
      const index_t nn = v.num_nodes();
      const double Mx[3][3] = {{0.3, -0.2, 0.5}, {0.7, 0.1, -0.4}, {0.25, 0.6, -0.15}};
      std::vector<double> u(std::size_t(v.num_dofs()));
      for (index_t n = 0; n < nn; ++n)
        for (int c = 0; c < dim; ++c) {
          double s = 0;
          for (int d = 0; d < dim; ++d) s += Mx[c][d] * xyz[3 * std::size_t(n) + std::size_t(d)];
          u[std::size_t(v.dof(c, n))] = s;
        }
      const auto Au = csr_apply(A, u, exec());
      double energy = 0;
      for (std::size_t i = 0; i < u.size(); ++i) energy += u[i] * Au[i];
      double tr = 0, ee = 0;
      for (int c = 0; c < dim; ++c) {
        tr += Mx[c][c];
        for (int d = 0; d < dim; ++d) {
          const double e = 0.5 * (Mx[c][d] + Mx[d][c]);
          ee += e * e;
        }
      }
      const double expect = measure * (lambda * tr * tr + 2 * mu * ee);
      EXPECT_NEAR(energy, expect, 1e-11 * expect);
      // Rigid-body modes: translations and rotations (x_a e_b - x_b e_a).
      std::vector<std::vector<double>> modes;
      for (int c = 0; c < dim; ++c) {
        std::vector<double> r(u.size(), 0.0);
        for (index_t n = 0; n < nn; ++n) r[std::size_t(v.dof(c, n))] = 1;
        modes.push_back(r);
      }
      for (int a2 = 0; a2 < dim; ++a2)
        for (int b2 = a2 + 1; b2 < dim; ++b2) {
          std::vector<double> r(u.size(), 0.0);
          for (index_t n = 0; n < nn; ++n) {
            r[std::size_t(v.dof(b2, n))] = xyz[3 * std::size_t(n) + std::size_t(a2)];
            r[std::size_t(v.dof(a2, n))] = -xyz[3 * std::size_t(n) + std::size_t(b2)];
          }
          modes.push_back(r);
        }
      ASSERT_EQ(modes.size(), std::size_t(dim == 2 ? 3 : 6));
      const double amax = max_abs(host(A).val);
      for (std::size_t k = 0; k < modes.size(); ++k) {
        const auto Ar = csr_apply(A, modes[k], exec());
        // each row sums a few hundred entries of size <= amax times coordinates <= 2
        for (std::size_t i = 0; i < Ar.size(); ++i) ASSERT_NEAR(Ar[i], 0.0, 1e-12 * amax) << "mode " << k << " row " << i;
      }
    }
}

// Elimination on the assembled matrix equals the matrix-free Constrained operator and its
// right-hand side, and keeps the matrix symmetric.
TEST_P(AssemblyTest, DirichletEliminationMatchesConstrained) {
  for (const Mesh& mesh : {mixed_tri_quad(), mixed_tet_hex()}) {
    const H1Space space(mesh, 2);
    MatrixAssembler a(space, FormKind::Diffusion, exec());
    linalg::CsrMatrix A = a.assemble();
    const H1Operator op(space, OperatorKind::Diffusion, exec(), a.degree());
    const std::vector<index_t> fixed = space.exterior_nodes();
    const Constrained C(op, fixed);
    const index_t n = space.num_dofs();
    const auto bh = random_vector(std::size_t(n), 5), xbh = random_vector(std::size_t(n), 6);
    auto b = Array<double, 1>::from("b", std::span<const double>(bh), exec().space());
    auto xbc = Array<double, 1>::from("xbc", std::span<const double>(xbh), exec().space());
    Array<double, 1> ref("ref", {n}, exec().space());
    C.eliminate_rhs(b.cview(), xbc.cview(), ref.view());
    auto dofs = Array<index_t, 1>::from("fixed", std::span<const index_t>(fixed), exec().space());
    eliminate_dirichlet(A, dofs.cview(), xbc.cview(), b.view());
    const auto got = to_vector(b), want = to_vector(ref);
    const double tol = 1e-12 * std::max(1.0, max_abs(want));
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << "rhs " << i;
    const auto xh = random_vector(std::size_t(n), 8);
    auto x = Array<double, 1>::from("x", std::span<const double>(xh), exec().space());
    Array<double, 1> yc("yc", {n}, exec().space());
    C.apply(x.cview(), yc.view());
    const auto ya = csr_apply(A, xh, exec()), yr = to_vector(yc);
    for (std::size_t i = 0; i < ya.size(); ++i) ASSERT_NEAR(ya[i], yr[i], tol) << "row " << i;
  }
}

// Load vectors: f = 1 sums to the measure; f = x equals M times the interpolant of x (x is in
// the space); the thermal load of T = 1 against v = x_c e_c is beta * measure.
TEST_P(AssemblyTest, LoadVectors) {
  const auto meshes = test_meshes();
  for (std::size_t mi = 0; mi < meshes.size(); ++mi) {
    SCOPED_TRACE(mesh_names[mi]);
    const Mesh& mesh = meshes[mi];
    const H1Space s(mesh, 2);
    const LoadAssembler L(s, exec());
    auto f = L.allocate_source();
    for (int part = 0; part < L.num_parts(); ++part) {
      const auto x = L.points(part).x.to_host();
      Array<double, 3> fh("f", {x.extent(0), 1, x.extent(1)});
      for (index_t e = 0; e < x.extent(0); ++e)
        for (index_t q = 0; q < x.extent(1); ++q) fh(e, 0, q) = x(e, q, 0);
      f[std::size_t(part)] = exec().on_device() ? fh.to_device() : fh;
    }
    const auto b = to_vector(L.assemble(f));
    const auto M = MatrixAssembler(s, FormKind::Mass, exec()).assemble();
    const auto xyz = node_coordinates(s);
    std::vector<double> xs(std::size_t(s.num_nodes()));
    for (std::size_t n = 0; n < xs.size(); ++n) xs[n] = xyz[3 * n];
    const auto Mx = csr_apply(M, xs, exec());
    for (std::size_t i = 0; i < b.size(); ++i) ASSERT_NEAR(b[i], Mx[i], 1e-13 * max_abs(Mx)) << "node " << i;
    auto ones = L.allocate_source();
    for (auto& a : ones) {
      Array<double, 3> h("one", a.extents());
      h.fill(1.0);
      a = exec().on_device() ? h.to_device() : h;
    }
    double sum = 0;
    for (double v : to_vector(L.assemble(ones))) sum += v;
    EXPECT_NEAR(sum, mesh.measure(), 1e-13 * mesh.measure());
    // Thermal load.
    const H1Space vs(mesh, 2, mesh.dim());
    const LoadAssembler Lv(vs, exec());
    Array<double, 1> T("T", {s.num_dofs()}, exec().space());
    T.fill(1.0);
    const MaterialTable mats{{1, {.lambda = 2.0, .mu = 0.5, .expansion = 0.1}},
                             {2, {.lambda = 2.0, .mu = 0.5, .expansion = 0.1}}};
    const double beta = (3 * 2.0 + 2 * 0.5) * 0.1;
    const auto tb = to_vector(Lv.thermal_expansion_load(s, T.cview(), mats));
    const auto vxyz = node_coordinates(vs);
    for (int c = 0; c < mesh.dim(); ++c) {
      double dotv = 0;
      for (index_t n = 0; n < vs.num_nodes(); ++n)
        dotv += tb[std::size_t(vs.dof(c, n))] * vxyz[3 * std::size_t(n) + std::size_t(c)];
      EXPECT_NEAR(dotv, beta * mesh.measure(), 1e-12 * beta * mesh.measure()) << "component " << c;
    }
  }
}

// Heat conduction across layers of conductivity 1, 10 and 0.1 (x < 1/3, < 2/3, else): with
// T = 0 at x = 0 and T = 1 at x = 1 the exact temperature is piecewise linear with a constant
// flux, which the discrete solution reproduces at every node (CG to 1e-14: 1e-11 leaves room
// for the condition number of the jump).
TEST_P(AssemblyTest, LayeredConductivityReproducesPiecewiseLinearSolution) {
  for (const char* spec : {"box:tri:6x3", "box:quad:6x2", "box:hex:6x1x1", "box:tet:3x1x1"})
    for (int p : {1, 2}) {
      SCOPED_TRACE(std::string(spec) + " p=" + std::to_string(p));
      Mesh mesh = generate_mesh(spec);
      const double k[3] = {1.0, 10.0, 0.1};
      for (index_t e = 0; e < mesh.num_elements(); ++e) {
        double cx = 0;
        const auto vs = mesh.element_vertices(e);
        for (index_t v : vs) cx += mesh.vertex(v, 0);
        cx /= double(vs.size());
        mesh.set_element_attribute(e, cx < 1.0 / 3 ? 1 : cx < 2.0 / 3 ? 2 : 3);
      }
      const H1Space space(mesh, p);
      const MaterialTable mats{{1, {.conductivity = k[0]}}, {2, {.conductivity = k[1]}}, {3, {.conductivity = k[2]}}};
      MatrixAssembler a(space, FormKind::Diffusion, exec(), mats);
      linalg::CsrMatrix A = a.assemble();
      const int bd[2] = {1, 2};  // x = 0 and x = 1
      const std::vector<index_t> fixed = space.boundary_dofs(std::span<const int>(bd, 2));
      const auto xyz = node_coordinates(space);
      const double q = 1.0 / (1.0 / 3 / k[0] + 1.0 / 3 / k[1] + 1.0 / 3 / k[2]);
      const auto exact = [&](double x) {
        double T = 0, left = 0;
        for (int l = 0; l < 3; ++l) {
          const double right = (l + 1) / 3.0, seg = std::min(std::max(x - left, 0.0), right - left);
          T += q * seg / k[l];
          left = right;
        }
        return T;
      };
      const index_t n = space.num_dofs();
      std::vector<double> xb(std::size_t(n), 0.0);
      for (index_t d : fixed) xb[std::size_t(d)] = exact(xyz[3 * std::size_t(d)]);
      auto xbc = Array<double, 1>::from("xbc", std::span<const double>(xb), exec().space());
      Array<double, 1> b("b", {n}, exec().space());
      auto dofs = Array<index_t, 1>::from("fixed", std::span<const index_t>(fixed), exec().space());
      eliminate_dirichlet(A, dofs.cview(), xbc.cview(), b.view());
      auto d = A.diagonal();
      Array<double, 1> inv("inv", {n}, exec().space());
      {
        const auto dh = to_vector(d);
        std::vector<double> ih(dh.size());
        for (std::size_t i = 0; i < dh.size(); ++i) ih[i] = 1.0 / dh[i];
        inv = Array<double, 1>::from("inv", std::span<const double>(ih), exec().space());
      }
      Array<double, 1> x("x", {n}, exec().space());
      CgOptions co;
      co.rel_tol = 1e-14;
      co.max_iters = 2000;
      const CgResult r = cg([&](View<const double, 1> in, View<double, 1> out) { A.apply(in, out); }, inv.cview(),
                            b.cview(), x.view(), exec(), co);
      ASSERT_TRUE(r.converged) << "CG: " << r.iterations << " iterations, residual " << r.rel_residual;
      const auto xs = to_vector(x);
      for (index_t i = 0; i < n; ++i)
        ASSERT_NEAR(xs[std::size_t(i)], exact(xyz[3 * std::size_t(i)]), 1e-11) << "node " << i;
    }
}

// The CPU's element-batched fill (simd::lanes elements per batch) equals the per-entry kernel
// to 1e-14 of the largest entry (each entry is the same sum over the points, in another order
// and with fused multiply-adds: a few units of roundoff of the largest terms) on every
// geometry of the mesh's dimension, p = 1..8 (hexahedra and tetrahedra to 6, elasticity to 4: the per-entry
// reference costs O(entries x points)), the three forms with two materials, scalar and
// 2-component spaces, both fill modes, distorted meshes whose element counts leave the last
// batch partial.
TEST_P(AssemblyTest, BatchedFillEqualsThePerEntryFill) {
  if (exec().on_device()) GTEST_SKIP() << "the batched fill is the CPU backends'";
  const char* specs[] = {"box:seg:11", "box:tri:3x2:perturb=0.2", "box:quad:3x3", "box:tet:1x1x2", "box:hex:3x1x1"};
  const MaterialTable mats{{1, {.density = 3.0, .conductivity = 2.0, .lambda = 3.0, .mu = 0.5}},
                           {2, {.density = 0.5, .conductivity = 0.25, .lambda = 1.0, .mu = 2.0}}};
  for (const char* spec : specs) {
    Mesh mesh = distorted(spec);
    for (index_t e = 0; e < mesh.num_elements(); ++e) mesh.set_element_attribute(e, 1 + int(e % 3 == 1));
    const Geometry g = mesh.element_geometry(0);
    const int pmax = g == Geometry::Tetrahedron ? 6 : g == Geometry::Hexahedron ? 6 : 8;
    for (int p = 1; p <= pmax; ++p)
      for (FormKind kind : {FormKind::Mass, FormKind::Diffusion, FormKind::Elasticity}) {
        const bool elastic = kind == FormKind::Elasticity;
        if (elastic && (p > 4 || mesh.dim() == 1)) continue;
        for (int comps : {1, 2}) {
          if (elastic && comps != 1) continue;
          const H1Space space(mesh, p, elastic ? mesh.dim() : comps);
          SCOPED_TRACE(std::string(spec) + " p=" + std::to_string(p) + " " + name(kind) + " comps " +
                       std::to_string(space.components()));
          AssemblyOptions ref_opt;
          ref_opt.cpu_batched = false;
          ref_opt.fill = FillMode::Deterministic;
          const auto ref = host(MatrixAssembler(space, kind, exec(), mats, ref_opt).assemble());
          const double tol = 1e-14 * max_abs(ref.val);
          for (FillMode mode : {FillMode::Deterministic, FillMode::Atomic}) {
            AssemblyOptions opt = ref_opt;
            opt.cpu_batched = true;
            opt.fill = mode;
            const auto got = host(MatrixAssembler(space, kind, exec(), mats, opt).assemble());
            ASSERT_EQ(ref.col, got.col);
            for (std::size_t i = 0; i < ref.val.size(); ++i) ASSERT_NEAR(got.val[i], ref.val[i], tol) << name(mode) << " " << i;
          }
        }
      }
  }
}

// On the GPU the matrix equals the serial backend's to 1e-13 of its largest entry.
TEST_P(AssemblyTest, EqualsTheSerialBackend) {
  if (GetParam() == Backend::Serial) GTEST_SKIP() << "the reference itself";
  for (const Mesh& mesh : {mixed_tri_quad(), mixed_tet_hex()})
    for (FormKind kind : {FormKind::Mass, FormKind::Diffusion, FormKind::Elasticity}) {
      const H1Space space(mesh, 3, kind == FormKind::Elasticity ? mesh.dim() : 1);
      const auto ref = host(MatrixAssembler(space, kind, Exec::serial()).assemble());
      const auto got = host(MatrixAssembler(space, kind, exec()).assemble());
      ASSERT_EQ(ref.col, got.col);
      const double tol = 1e-13 * max_abs(ref.val);
      for (std::size_t i = 0; i < ref.val.size(); ++i) ASSERT_NEAR(got.val[i], ref.val[i], tol) << name(kind) << " " << i;
    }
}

// Bad input names the problem.
TEST_P(AssemblyTest, BadInputIsRefusedWithAMessage) {
  const Mesh mesh = mixed_tri_quad();
  const H1Space scalar(mesh, 2);
  EXPECT_ERROR_MENTIONS(MatrixAssembler(scalar, FormKind::Elasticity, exec()), "elasticity", "1 component",
                        "one component per dimension");
  EXPECT_ERROR_MENTIONS(MatrixAssembler(scalar, FormKind::Diffusion, exec(), {{1, {}}}), "attribute 2",
                        "no material");
  AssemblyOptions low;
  low.degree = 1;
  EXPECT_ERROR_MENTIONS(MatrixAssembler(scalar, FormKind::Mass, exec(), {}, low), "degree 1", "exactly");
  EXPECT_ERROR_MENTIONS(parse_form("stiffness"), "unknown form 'stiffness'");
  MatrixAssembler a(scalar, FormKind::Mass, exec());
  const H1Space other(mesh, 1);
  linalg::CsrMatrix B = MatrixAssembler(other, FormKind::Mass, exec()).assemble();
  EXPECT_ERROR_MENTIONS(a.fill(B), "does not have this assembler's pattern");
}
