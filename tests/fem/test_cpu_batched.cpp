// The element-batched CPU operator (src/fem/operator/cpu_batched.*) against the team kernels
// (OperatorKernelChoice::cpu_batched = false, one element at a time), compressed geometry
// against per-point factors, OpenMP against serial.
//
// Tolerances: both kernels sum the same products in different orders (and the batched one
// with fused multiply-adds), so they agree to a few units of rounding of the largest partial
// sum; 1e-14 relative to max |y| leaves a factor ~20-50 over what was observed at p = 8.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "tessera/core/array.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/fem/geometric_factors.hpp"
#include "tessera/fem/operator.hpp"
#include "tessera/fem/quadrature.hpp"
#include "tessera/fem/restriction.hpp"
#include "operator/cpu_batched.hpp"  // internal (src/fem): the colour limit, the batches' ids

using namespace tessera;
using namespace tessera::fem;

namespace {

struct Case {
  OperatorKind kind;
  QuadratureType rule;
  int extra;  // q = p + 1 + extra points per direction
};

std::vector<double> apply_to(const H1Operator& A, const std::vector<double>& x) {
  auto xa = Array<double, 1>::from("x", std::span<const double>(x.data(), x.size()), Space::Host);
  Array<double, 1> y("y", {A.size()});
  for (index_t i = 0; i < A.size(); ++i) y(i) = std::nan("");  // poisoned: apply must overwrite
  A.apply(xa.cview(), y.view());
  return y.to_vector();
}

/// max |a - b| / max |b|
double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, std::abs(a[i] - b[i]));
    s = std::max(s, std::abs(b[i]));
  }
  return s > 0 ? d / s : d;
}

OperatorOptions options(const Case& c, int p, bool batched, bool compress = true, bool tensor = true,
                        GeometrySource geometry = GeometrySource::Stored) {
  OperatorOptions o;
  o.geometry = geometry;
  o.quadrature = c.rule;
  o.degree = c.rule == QuadratureType::GaussLobatto ? 2 * (p + c.extra) - 1 : 2 * (p + 1 + c.extra) - 1;
  if (!tensor) o.degree = 2 * p + c.extra;  // simplices: the exact degree 2p, and one more
  o.kernels.cpu_batched = batched;
  o.compress_geometry = compress;
  return o;
}

const Case kCases[] = {{OperatorKind::Mass, QuadratureType::Gauss, 1},
                       {OperatorKind::Mass, QuadratureType::Gauss, 0},
                       {OperatorKind::Diffusion, QuadratureType::Gauss, 1},
                       {OperatorKind::Diffusion, QuadratureType::Gauss, 0},
                       {OperatorKind::Diffusion, QuadratureType::GaussLobatto, 0}};

/// Batched against the team kernel on mesh, p = 1..pmax, every case, components 1 and 2.
void expect_batched_equals_team(const Mesh& mesh, int pmax, Exec exec, bool expect_compressed,
                                GeometrySource geometry = GeometrySource::Stored) {
  for (int p = 1; p <= pmax; ++p)
    for (int comps : {1, 2}) {
      if (comps == 2 && p > 3) continue;  // the component loop does not depend on the order
      H1Space space(mesh, p, comps);
      const auto x = test::random_vector(std::size_t(space.num_dofs()), 17u + unsigned(p));
      const bool tensor = is_tensor(mesh.element_geometry(0));
      for (const Case& c : kCases) {
        if (c.rule == QuadratureType::GaussLobatto && (c.kind == OperatorKind::Mass || !tensor)) continue;
        const H1Operator team(space, c.kind, exec, options(c, p, false, true, tensor, geometry));
        const H1Operator batched(space, c.kind, exec, options(c, p, true, true, tensor, geometry));
        const auto info = batched.cpu_kernel();
        ASSERT_EQ(info.batched_elements, mesh.num_elements());
        EXPECT_TRUE(info.lanes == 2 || info.lanes == 4 || info.lanes == 8) << info.lanes;
        EXPECT_EQ(team.cpu_kernel().batched_elements, 0);
        if (expect_compressed) EXPECT_EQ(info.compressed_elements, info.batched_elements);
        else EXPECT_EQ(info.compressed_elements, 0);
        // the diagonal from the batched kernel's own factors against the team operator's
        EXPECT_LE(rel_diff(batched.diagonal().to_vector(), team.diagonal().to_vector()), 1e-14)
            << "diagonal, " << name(c.kind) << " p = " << p << " comps " << comps;
        const double d = rel_diff(apply_to(batched, x), apply_to(team, x));
        EXPECT_LE(d, 1e-14) << name(c.kind) << " p = " << p << " q = p + " << (c.extra + (c.rule == QuadratureType::Gauss))
                            << (c.rule == QuadratureType::GaussLobatto ? " GLL" : " Gauss") << " comps " << comps
                            << " on " << to_string(exec.backend)
                            << (geometry == GeometrySource::OnTheFly ? ", on the fly" : "");
      }
    }
}

std::vector<Exec> host_backends() {
  std::vector<Exec> v{Exec::serial()};
  if (openmp_threads() > 1) v.push_back(Exec::openmp());
  return v;
}

}  // namespace

// 3 x 3 x 2 = 18 elements: two full batches of 8 lanes and a partial one (any width up to 16).
TEST(CpuBatched, HexahedraEqualTheTeamKernelOnDistortedElements) {
  for (Exec exec : host_backends()) expect_batched_equals_team(test::distorted_mesh("box:hex:3x3x2"), 8, exec, false);
}

// The run-time contraction loops (the fixed-size ones switched off) at the sizes the fixed
// ones serve, and past them (p = 9: 10 and 11 points per direction run the loops either way).
TEST(CpuBatched, RunTimeContractionsEqualTheFixedSizeOnes) {
  const Mesh mesh = test::distorted_mesh("box:hex:3x1x3");
  for (int p : {1, 2, 4, 7, 9}) {
    H1Space space(mesh, p);
    const auto x = test::random_vector(std::size_t(space.num_dofs()), 29u);
    for (const Case& c : kCases) {
      if (c.kind == OperatorKind::Mass && c.rule == QuadratureType::GaussLobatto) continue;
      OperatorOptions loops = options(c, p, true);
      loops.kernels.exact = false;
      const auto a = apply_to(H1Operator(space, c.kind, Exec::serial(), loops), x);
      const auto b = apply_to(H1Operator(space, c.kind, Exec::serial(), options(c, p, true)), x);
      const auto t = apply_to(H1Operator(space, c.kind, Exec::serial(), options(c, p, false)), x);
      EXPECT_LE(rel_diff(a, b), 1e-14) << name(c.kind) << " p = " << p;
      EXPECT_LE(rel_diff(a, t), 1e-14) << name(c.kind) << " p = " << p;
    }
  }
}

// NodeOrdering::Interleaved numbers the nodes that a group of 8 consecutive elements first
// meets at one local position together, node by node, so that at every order the elements of a
// batch reach a local position through one run of consecutive ids, or two where the batch
// reaches into the next group (the upper faces, edges and vertices): with 16 elements per row
// every access of this mesh's full batches is one or two vector accesses (8 lanes: 12 full
// batches; 4 lanes likewise; with 2 lanes a pair that straddles two groups is two single
// accesses). The first-touch numbering gives none at p = 2.
TEST(CpuBatched, InterleavedNumberingTakesVectorAccessesAndEqualsTheTeamKernel) {
  const Mesh mesh = test::distorted_mesh("box:hex:16x2x3");
  for (int p : {1, 2, 3, 4}) {
    H1Space space(mesh, p, 1, NodeOrdering::Interleaved);
    const auto x = test::random_vector(std::size_t(space.num_dofs()), 31u);
    for (const Case& c : kCases) {
      if (c.kind == OperatorKind::Mass && c.rule == QuadratureType::GaussLobatto) continue;
      const H1Operator A(space, c.kind, Exec::serial(), options(c, p, true));
      const double share = A.cpu_kernel().vector_access_share;
      if (cpu_detail::BatchedOperator::lanes() > 2) EXPECT_EQ(share, 1.0) << p;
      else EXPECT_GT(share, 0.9) << p;  // 2 lanes: 0.94-0.96 (the pairs that straddle two groups go lane by lane)
      EXPECT_LE(rel_diff(apply_to(A, x), apply_to(H1Operator(space, c.kind, Exec::serial(), options(c, p, false)), x)),
                1e-14)
          << name(c.kind) << " p = " << p;
    }
    // first-touch numbering: consecutive elements' nodes are never consecutive ids at p = 2
    if (p == 2) {
      const H1Space first_touch(mesh, p, 1, NodeOrdering::FirstTouch);
      EXPECT_EQ(H1Operator(first_touch, OperatorKind::Mass, Exec::serial()).cpu_kernel().vector_access_share, 0.0);
    }
  }
}

// The batches' node ids (operator/cpu_indices.hpp): a local node whose lanes hold one run of
// consecutive ids keeps its start, two runs their starts, anything else every lane's id;
// node() gives back every id, and the padded lanes of a partial last batch (which repeat its
// last element) are never taken as a run.
TEST(CpuBatched, BatchIndicesKeepRunsAndGiveBackEveryId) {
  const int W = cpu_detail::BatchedOperator::lanes();
  const int nd = 4;
  const index_t ne = 3 * W + 1;
  std::vector<int> map(std::size_t(ne) * nd);
  for (index_t e = 0; e < ne; ++e) {
    const int lane = int(e % W);
    int* m = map.data() + std::size_t(e) * nd;
    m[0] = int(100 + e);                                    // one run
    m[1] = int(lane < W / 2 ? 1000 + e : 5000 + e);         // two runs, split at W / 2
    m[2] = int(7 * e + 3);                                  // every lane apart
    m[3] = lane < W / 2 ? int(10 + e) : lane - W / 2;       // two runs, the second too close to 0
  }
  const cpu_detail::BatchIndices ix(map.data(), ne, nd);
  ASSERT_EQ(ix.nb, 4);
  // with 2 lanes two runs are two single accesses: the per-lane path
  const int expected[4] = {W, W > 2 ? W / 2 : 0, 0, 0};
  for (index_t b = 0; b < ix.nb; ++b)
    for (int i = 0; i < nd; ++i) {
      EXPECT_EQ(int(ix.split[std::size_t(b) * nd + i]), b < 3 ? expected[i] : 0) << "batch " << b << " node " << i;
      for (int l = 0; l < W; ++l)
        EXPECT_EQ(ix.node(b, i, l), map[std::size_t(std::min<index_t>(b * W + l, ne - 1)) * nd + i])
            << "batch " << b << " node " << i << " lane " << l;
    }
  EXPECT_DOUBLE_EQ(ix.vector_access_share(), (W == 2 ? 3.0 : 6.0) / 16.0);
}

TEST(CpuBatched, QuadrilateralsEqualTheTeamKernelOnDistortedElements) {
  for (Exec exec : host_backends())
    expect_batched_equals_team(generate_mesh("box:quad:5x3:perturb=0.2:seed=2"), 8, exec, false);
}

// Simplices: dense tables, every straight-sided element affine (compressed); 2 x 2 x 1 boxes of
// 6 tetrahedra (24: three batches of 8) and 3 x 2 x 2 triangles (12: a partial batch).
TEST(CpuBatched, SimplicesEqualTheTeamKernel) {
  for (Exec exec : host_backends()) {
    expect_batched_equals_team(generate_mesh("box:tet:2x2x1:perturb=0.2:seed=4"), 8, exec, true);
    expect_batched_equals_team(generate_mesh("box:tri:3x2:perturb=0.2:seed=4"), 8, exec, true);
  }
  // per-point factors (compression off) on a curved mesh of triangles
  const Mesh disk = generate_mesh("disk:tri:1:order=2");
  for (int p : {1, 3}) {
    H1Space space(disk, p);
    const auto x = test::random_vector(std::size_t(space.num_dofs()), 23u);
    OperatorOptions team;
    team.kernels.cpu_batched = false;
    for (OperatorKind k : {OperatorKind::Mass, OperatorKind::Diffusion}) {
      const H1Operator A(space, k, Exec::serial());
      EXPECT_EQ(A.cpu_kernel().batched_elements, disk.num_elements());
      EXPECT_EQ(A.cpu_kernel().compressed_elements, 0);
      EXPECT_LE(rel_diff(apply_to(A, x), apply_to(H1Operator(space, k, Exec::serial(), team), x)), 1e-14) << p;
    }
  }
}

TEST(CpuBatched, AffineElementsAreCompressedAndEqualThePerPointFactors) {
  // A sheared box (parallelepipeds: general packed factors) and the unit box (diagonal ones).
  Mesh sheared = generate_mesh("box:hex:3x2x3");
  auto X = sheared.coordinates();
  for (std::size_t v = 0; v + 2 < X.size(); v += 3) {
    const double x = X[v], y = X[v + 1], z = X[v + 2];
    X[v] = x + 0.3 * y - 0.2 * z, X[v + 1] = y + 0.1 * z, X[v + 2] = 0.5 * z + 0.25 * x;
  }
  for (const Mesh* mesh : {&sheared}) expect_batched_equals_team(*mesh, 6, Exec::serial(), true);
  expect_batched_equals_team(generate_mesh("box:hex:2x3x3"), 6, Exec::serial(), true);
  expect_batched_equals_team(generate_mesh("box:quad:4x5"), 6, Exec::serial(), true);
  // compressed against uncompressed batches, and the bytes they read
  H1Space space(sheared, 3);
  const auto x = test::random_vector(std::size_t(space.num_dofs()), 5u);
  for (const Case& c : kCases) {
    const H1Operator full(space, c.kind, Exec::serial(), options(c, 3, true, false));
    const H1Operator compressed(space, c.kind, Exec::serial(), options(c, 3, true, true));
    EXPECT_EQ(full.cpu_kernel().compressed_elements, 0);
    EXPECT_EQ(compressed.cpu_kernel().compressed_elements, sheared.num_elements());
    EXPECT_LT(compressed.cpu_kernel().geometry_bytes * 10, full.cpu_kernel().geometry_bytes);
    EXPECT_LE(rel_diff(apply_to(compressed, x), apply_to(full, x)), 1e-14) << name(c.kind);
    EXPECT_LE(rel_diff(compressed.diagonal().to_vector(), operator_detail::naive_diagonal(full).to_vector()), 1e-14)
        << "diagonal, " << name(c.kind);
  }
}

TEST(CpuBatched, CurvedAndDistortedMeshesAreNotCompressed) {
  const Mesh disk = generate_mesh("disk:quad:2:order=2");
  H1Space space(disk, 2);
  const H1Operator A(space, OperatorKind::Diffusion, Exec::serial());
  EXPECT_EQ(A.cpu_kernel().batched_elements, disk.num_elements());
  EXPECT_EQ(A.cpu_kernel().compressed_elements, 0);
  // one distorted hexahedron among affine ones: only the batch holding it keeps per-point data
  Mesh box = generate_mesh("box:hex:4x4x4");
  auto X = box.coordinates();
  X[3 * std::size_t(box.num_vertices() / 2)] += 0.05;  // an interior vertex: its 8 hexahedra
  H1Space s2(box, 2);
  const H1Operator B(s2, OperatorKind::Diffusion, Exec::serial());
  const auto info = B.cpu_kernel();
  EXPECT_GT(info.compressed_elements, 0);
  EXPECT_LE(info.compressed_elements, box.num_elements() - 8);
  const auto x = test::random_vector(std::size_t(s2.num_dofs()), 9u);
  OperatorOptions team;
  team.kernels.cpu_batched = false;
  EXPECT_LE(rel_diff(apply_to(B, x), apply_to(H1Operator(s2, OperatorKind::Diffusion, Exec::serial(), team), x)), 1e-14);
}

// On-the-fly geometry: the batched kernel computes J at every point of a non-affine element
// from its first-order map (no stored factors) and takes the per-element factor of affine
// ones (every straight-sided simplex); against the team kernels' on-the-fly path.
TEST(CpuBatched, OnTheFlyGeometryEqualsTheTeamKernel) {
  constexpr GeometrySource otf = GeometrySource::OnTheFly;
  for (Exec exec : host_backends()) {
    // randomly perturbed vertices: every monomial of the trilinear map, xyz included (the smooth
    // distortion of test::distorted_mesh leaves that one zero in every element)
    expect_batched_equals_team(generate_mesh("box:hex:3x3x2:perturb=0.2:seed=5"), 8, exec, false, otf);
    expect_batched_equals_team(generate_mesh("box:quad:5x3:perturb=0.2:seed=2"), 8, exec, false, otf);
  }
  expect_batched_equals_team(generate_mesh("box:hex:2x3x3"), 4, Exec::serial(), true, otf);
  expect_batched_equals_team(generate_mesh("box:tet:2x2x1:perturb=0.2:seed=4"), 6, Exec::serial(), true, otf);
  expect_batched_equals_team(generate_mesh("box:tri:3x2:perturb=0.2:seed=4"), 6, Exec::serial(), true, otf);
}

// On the fly against stored factors (geometric_factors sums the vertices' shape derivatives, the
// batched kernel evaluates the map's monomial form: the same J up to rounding, hence 1e-13),
// on a mesh where one interior vertex makes 8 hexahedra non-affine: only their batches compute
// J at the points; the geometry kept is a few numbers per element, not per point.
TEST(CpuBatched, OnTheFlyGeometryEqualsStoredFactorsAndKeepsNoPointData) {
  Mesh box = generate_mesh("box:hex:4x4x4");
  auto X = box.coordinates();
  X[3 * std::size_t(box.num_vertices() / 2)] += 0.05;
  const Mesh distorted = test::distorted_mesh("box:hex:4x3x3");
  for (const Mesh* mesh : {static_cast<const Mesh*>(&box), &distorted})
    for (int p : {2, 5}) {
      H1Space space(*mesh, p);
      const auto x = test::random_vector(std::size_t(space.num_dofs()), 41u + unsigned(p));
      for (const Case& c : kCases) {
        if (c.kind == OperatorKind::Mass && c.rule == QuadratureType::GaussLobatto) continue;
        const H1Operator stored(space, c.kind, Exec::serial(), options(c, p, true, false));
        const H1Operator otf(space, c.kind, Exec::serial(), options(c, p, true, true, true, GeometrySource::OnTheFly));
        const auto info = otf.cpu_kernel();
        ASSERT_EQ(info.batched_elements, mesh->num_elements());
        if (mesh == &box) {
          EXPECT_GT(info.compressed_elements, 0);
          EXPECT_LE(info.compressed_elements, mesh->num_elements() - 8);
        } else {
          EXPECT_EQ(info.compressed_elements, 0);
        }
        // at most 2^3 * 3 coefficients per element (and a partial batch's padded lanes), against
        // 6 q^3 (diffusion) stored factors per element
        EXPECT_LE(info.geometry_bytes, std::size_t(mesh->num_elements() + 16) * 24 * sizeof(double));
        if (c.kind == OperatorKind::Diffusion) {  // mass at p = 2 stores q^3 = 27..64 numbers: about as many
          EXPECT_LT(info.geometry_bytes * 4, stored.cpu_kernel().geometry_bytes) << "p = " << p;
        }
        EXPECT_LE(rel_diff(apply_to(otf, x), apply_to(stored, x)), 1e-13) << name(c.kind) << " p = " << p;
        EXPECT_LE(rel_diff(otf.diagonal().to_vector(), stored.diagonal().to_vector()), 1e-13)
            << "diagonal, " << name(c.kind) << " p = " << p;
      }
    }
}

TEST(CpuBatched, MixedMeshRunsEveryPartBatched) {
  // [0,3] x [0,1]: two quadrilaterals and two triangles, one vertex moved
  Mesh m(2);
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 4; ++i) m.add_vertex({double(i) + (i == 1 && j == 1 ? 0.2 : 0.0), double(j)});
  m.add_element(Geometry::Quadrilateral, {0, 1, 5, 4});
  m.add_element(Geometry::Quadrilateral, {1, 2, 6, 5});
  m.add_element(Geometry::Triangle, {2, 3, 7});
  m.add_element(Geometry::Triangle, {2, 7, 6});
  for (int p = 1; p <= 4; ++p) {
    H1Space space(m, p);
    const auto x = test::random_vector(std::size_t(space.num_dofs()), 3u);
    OperatorOptions team;
    team.kernels.cpu_batched = false;
    for (OperatorKind k : {OperatorKind::Mass, OperatorKind::Diffusion}) {
      const H1Operator A(space, k, Exec::serial());
      EXPECT_EQ(A.cpu_kernel().batched_elements, 4);
      EXPECT_EQ(A.cpu_kernel().compressed_elements, 2);  // the triangles: the moved vertex is on both quadrilaterals
      EXPECT_LE(rel_diff(apply_to(A, x), apply_to(H1Operator(space, k, Exec::serial(), team), x)), 1e-14) << p;
    }
  }
}

TEST(CpuBatched, OpenMPSplitsSharedBatchesIntoColoursAndEqualsSerial) {
  if (openmp_threads() < 2) GTEST_SKIP() << "one OpenMP thread: nothing is shared between threads";
  const Mesh mesh = test::distorted_mesh("box:hex:6x5x7");
  for (int p : {1, 2, 5}) {
    H1Space space(mesh, p);
    const H1Operator omp(space, OperatorKind::Diffusion, Exec::openmp());
    const H1Operator ser(space, OperatorKind::Diffusion, Exec::serial());
    const auto info = omp.cpu_kernel();
    EXPECT_EQ(info.threads, std::min(openmp_threads(), int((mesh.num_elements() + info.lanes - 1) / info.lanes)));
    EXPECT_GT(info.shared_batches, 0);
    EXPECT_GE(info.colours, 2);
    EXPECT_EQ(ser.cpu_kernel().shared_batches, 0);
    const auto x = test::random_vector(std::size_t(space.num_dofs()), 11u);
    EXPECT_LE(rel_diff(apply_to(omp, x), apply_to(ser, x)), 1e-14) << p;
  }
  // tetrahedra around vertices of high valence (a refined ball), vector field
  const Mesh ball = generate_mesh("ball:tet:1:order=1:refine=1");
  H1Space space(ball, 2, 3);
  const auto x = test::random_vector(std::size_t(space.num_dofs()), 13u);
  for (OperatorKind k : {OperatorKind::Mass, OperatorKind::Diffusion}) {
    const H1Operator omp(space, k, Exec::openmp()), ser(space, k, Exec::serial());
    EXPECT_GT(omp.cpu_kernel().shared_batches, 0);
    EXPECT_LE(rel_diff(apply_to(omp, x), apply_to(ser, x)), 1e-14) << name(k);
  }
}

// The shared batches past the colour limit run last on one thread: with one colour allowed,
// most shared batches take that path, and the result still equals the serial one.
TEST(CpuBatched, BatchesPastTheColourLimitRunLastAndEqualSerial) {
  if (openmp_threads() < 2) GTEST_SKIP() << "one OpenMP thread: nothing is shared between threads";
  const Mesh mesh = test::distorted_mesh("box:hex:6x5x7");
  H1Space space(mesh, 2);
  const QuadratureRule rule = quadrature(Geometry::Hexahedron, 7);
  const ElementRestriction R(space, Geometry::Hexahedron, Exec::serial());
  const auto gf = [&] { return geometric_factors(mesh, Geometry::Hexahedron, rule, Exec::serial(), GeometricFactorFlags::D); };
  const auto limited = cpu_detail::make_batched(mesh, R, Geometry::Hexahedron, 2, rule, true, gf, Exec::openmp(), true,
                                                true, 1);
  const auto serial = cpu_detail::make_batched(mesh, R, Geometry::Hexahedron, 2, rule, true, gf, Exec::serial(), true, true);
  ASSERT_TRUE(limited && serial);
  EXPECT_EQ(limited->colours(), 1);
  EXPECT_GT(limited->last_batches(), 0);
  const auto x = test::random_vector(std::size_t(space.num_dofs()), 37u);
  std::vector<double> a(x.size(), 0.0), b(x.size(), 0.0);
  limited->apply_add(x.data(), a.data());
  serial->apply_add(x.data(), b.data());
  EXPECT_LE(rel_diff(a, b), 1e-14);
}

// On a mesh of affine elements the per-point factors are never computed (the compressed batches
// do not read them); a distorted mesh computes them once, on the fly not at all; an inverted
// element is still named, by geometric_factors() or (on the fly) by the vertices' check.
TEST(CpuBatched, PerPointFactorsOnlyWhereAnElementNeedsThem) {
  const auto factor_launches = [](const Mesh& mesh, GeometrySource geometry = GeometrySource::Stored) {
    profiling::reset();
    profiling::enable();
    H1Space space(mesh, 2);
    OperatorOptions o;
    o.geometry = geometry;
    const H1Operator A(space, OperatorKind::Diffusion, Exec::serial(), o);
    profiling::enable(false);
    long calls = 0;
    for (const auto& e : profiling::report())
      if (e.label == "fem/geometric_factors") calls += e.calls;
    profiling::reset();
    return calls;
  };
  EXPECT_EQ(factor_launches(generate_mesh("box:hex:3x3x3")), 0);
  EXPECT_EQ(factor_launches(generate_mesh("box:tet:2x2x2")), 0);
  EXPECT_EQ(factor_launches(test::distorted_mesh("box:hex:3x3x3")), 1);
  EXPECT_EQ(factor_launches(test::distorted_mesh("box:hex:3x3x3"), GeometrySource::OnTheFly), 0);
  Mesh m(2);  // one triangle listed clockwise: affine, det J < 0
  m.add_vertex({0, 0});
  m.add_vertex({1, 0});
  m.add_vertex({0, 1});
  m.add_element(Geometry::Triangle, {0, 2, 1});
  H1Space space(m, 2);
  EXPECT_ERROR_MENTIONS(H1Operator(space, OperatorKind::Mass, Exec::serial()), "element 0", "det J");
  OperatorOptions otf;  // on the fly: the vertices' check names it
  otf.geometry = GeometrySource::OnTheFly;
  EXPECT_ERROR_MENTIONS(H1Operator(space, OperatorKind::Diffusion, Exec::serial(), otf), "element 0", "det J");
  Mesh hex = generate_mesh("box:hex:2x1x1");  // one hexahedron turned inside out by a vertex
  auto X = hex.coordinates();
  X[0] = 1.6;
  H1Space hspace(hex, 2);
  EXPECT_ERROR_MENTIONS(H1Operator(hspace, OperatorKind::Diffusion, Exec::serial(), otf), "det J");
}
