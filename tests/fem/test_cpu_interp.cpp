// The element-batched CPU interpolation (src/fem/operator/cpu_interp.*) against the team kernels
// (InterpolatorOptions::kernels.cpu_batched = false, one element at a time): interpolate, integrate and
// integrate_add on random input, every geometry, p = 1..8, Gauss and Gauss-Lobatto rules, 1 and
// 2 components, both layouts, stored and on-the-fly geometry, partial last batches, a mixed and
// a curved mesh, serial and OpenMP.
//
// Tolerance: both paths form the same products (the same tables, J^-1 of the same map) and
// sum them in a different order (the batched contractions four rows at a time or by even and
// odd parts, with fused multiply-adds; J on the fly from the map's monomial coefficients
// rather than a sum over the vertices), so they agree to a few units of rounding of the
// largest partial sum. The largest difference seen was 4.5e-15 (physical gradients on
// quadrilaterals at p = 8 with 8 Gauss points, on the fly), most are below 1e-15; 1e-14
// relative to the largest entry of each array still fails on any wrong entry or lane.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "tessera/core/array.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/interpolate.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/quadrature.hpp"

using namespace tessera;
using namespace tessera::fem;

namespace {

/// max |a - b| / max |b|
double rel_diff(const double* a, const double* b, std::size_t n) {
  double d = 0, s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    d = std::max(d, std::abs(a[i] - b[i]));
    s = std::max(s, std::abs(b[i]));
  }
  return s > 0 ? d / s : d;
}

template <int R>
double rel_diff(const Array<double, R>& a, const Array<double, R>& b) {
  EXPECT_EQ(a.size(), b.size());
  return rel_diff(a.data(), b.data(), std::size_t(std::min(a.size(), b.size())));
}

std::vector<Exec> host_backends() {
  std::vector<Exec> v{Exec::serial()};
  if (openmp_threads() > 1) v.push_back(Exec::openmp());
  return v;
}

template <int R>
void fill(Array<double, R>& a, double v) {
  std::fill(a.data(), a.data() + a.size(), v);
}

/// Batched against team kernels for one (space, geometry, rule, options): every kind alone and
/// all together, forward, transpose and the transpose added into a global vector.
void expect_equal_paths(const H1Space& space, Geometry g, const QuadratureRule& rule, InterpolatorOptions o,
                        const Exec& exec, const std::string& where) {
  o.kernels.cpu_batched = true;
  const Interpolator batched(space, g, rule, exec, o);
  o.kernels.cpu_batched = false;
  const Interpolator team(space, g, rule, exec, o);
  ASSERT_TRUE(batched.cpu_batched());
  ASSERT_FALSE(team.cpu_batched());
  const auto u = test::random_vector(std::size_t(space.num_dofs()), 7u + unsigned(space.order()));
  const auto ua = Array<double, 1>::from("u", std::span<const double>(u.data(), u.size()), Space::Host);
  std::vector<Eval> kinds{Eval::Values, Eval::ReferenceGradients};
  const bool physical = space.mesh().space_dim() == dim(g);
  if (physical) kinds.push_back(Eval::Gradients), kinds.push_back(Eval::Values | Eval::Gradients);
  kinds.push_back(physical ? Eval::Values | Eval::ReferenceGradients | Eval::Gradients
                           : Eval::Values | Eval::ReferenceGradients);
  for (Eval what : kinds) {
    const std::string at = where + ", " + name(what);
    QuadratureData qa = batched.allocate(what), qb = team.allocate(what);
    for (auto* arr : {&qa.values, &qa.reference_gradients, &qa.gradients}) fill(*arr, std::nan(""));
    batched.interpolate(ua.cview(), what, qa);
    team.interpolate(ua.cview(), what, qb);
    EXPECT_LE(rel_diff(qa.values, qb.values), 1e-14) << "values, " << at;
    EXPECT_LE(rel_diff(qa.reference_gradients, qb.reference_gradients), 1e-14) << "reference gradients, " << at;
    EXPECT_LE(rel_diff(qa.gradients, qb.gradients), 1e-14) << "gradients, " << at;
    // the transpose of random point data
    unsigned seed = 41;
    for (auto* arr : {&qb.values, &qb.reference_gradients, &qb.gradients}) {
      const auto r = test::random_vector(std::size_t(arr->size()), seed++);
      std::copy(r.begin(), r.end(), arr->data());
    }
    qa = qb;
    Array<double, 3> ea("ea", {batched.num_elements(), batched.components(), batched.nodes_per_element()});
    Array<double, 3> eb("eb", {team.num_elements(), team.components(), team.nodes_per_element()});
    fill(ea, std::nan(""));
    batched.integrate(qa, what, ea.view());
    team.integrate(qb, what, eb.view());
    EXPECT_LE(rel_diff(ea, eb), 1e-14) << "integrate, " << at;
    Array<double, 1> ya("ya", {space.num_dofs()}), yb("yb", {space.num_dofs()});
    fill(ya, 1.0), fill(yb, 1.0);
    batched.integrate_add(qa, what, ya.view());
    team.integrate_add(qb, what, yb.view());
    EXPECT_LE(rel_diff(ya, yb), 1e-14) << "integrate_add, " << at;
  }
}

struct TensorRule {
  QuadratureType type;
  int extra;  // points per direction: p + extra
};
const TensorRule kTensorRules[] = {{QuadratureType::Gauss, 1},
                                   {QuadratureType::Gauss, 2},
                                   {QuadratureType::Gauss, 0},
                                   {QuadratureType::GaussLobatto, 1},
                                   {QuadratureType::GaussLobatto, 2}};

/// Every order up to pmax, every rule, 1 and 2 components, both layouts and geometry sources.
void expect_equal_on(const Mesh& mesh, int pmax, const Exec& exec) {
  const Geometry g = mesh.element_geometry(0);
  for (int p = 1; p <= pmax; ++p)
    for (int comps : {1, 2}) {
      if (comps == 2 && p > 3 && p != pmax) continue;  // the component loop does not depend on the order
      const H1Space space(mesh, p, comps);
      std::vector<std::pair<QuadratureRule, std::string>> rules;
      if (is_tensor(g)) {
        for (const TensorRule& r : kTensorRules) {
          const int n = p + r.extra;
          if (n < (r.type == QuadratureType::GaussLobatto ? 2 : 1)) continue;
          rules.emplace_back(tensor_quadrature(g, quadrature_1d(n, r.type)),
                             std::string(r.type == QuadratureType::Gauss ? "Gauss" : "GLL") + " q = " +
                                 std::to_string(n));
        }
      } else {
        rules.emplace_back(quadrature(g, 2 * p), "degree 2p");
        rules.emplace_back(collapsed_quadrature(g, p + 1), "collapsed q = p + 1");
      }
      for (const auto& [rule, rname] : rules)
        for (QuadLayout layout : {QuadLayout::ElementMajor, QuadLayout::ComponentMajor})
          for (GeometrySource gs : {GeometrySource::OnTheFly, GeometrySource::Stored}) {
            if (layout == QuadLayout::ComponentMajor && gs == GeometrySource::OnTheFly && comps == 1) continue;
            InterpolatorOptions o;
            o.layout = layout;
            o.geometry = gs;
            expect_equal_paths(space, g, rule, o, exec,
                               std::string(name(g)) + " p = " + std::to_string(p) + " " + rname + " comps " +
                                   std::to_string(comps) + " " + name(layout) + " " + name(gs) + " on " +
                                   to_string(exec.backend));
          }
    }
}

}  // namespace

// 3 x 3 x 2 = 18 hexahedra: two full batches of 8 lanes and a partial one (any width up to 16),
// trilinear (det J varies inside each element).
TEST(CpuInterp, HexahedraEqualTheTeamKernels) {
  for (const Exec& exec : host_backends()) expect_equal_on(test::distorted_mesh("box:hex:3x3x2"), 8, exec);
}

TEST(CpuInterp, QuadrilateralsEqualTheTeamKernels) {
  for (const Exec& exec : host_backends()) expect_equal_on(generate_mesh("box:quad:5x3:perturb=0.2:seed=2"), 8, exec);
}

// 2 x 2 x 1 boxes of 6 tetrahedra (24: three batches of 8) and 3 x 2 x 2 triangles (12: a
// partial batch).
TEST(CpuInterp, SimplicesEqualTheTeamKernels) {
  for (const Exec& exec : host_backends()) {
    expect_equal_on(generate_mesh("box:tet:2x2x1:perturb=0.2:seed=4"), 6, exec);
    expect_equal_on(generate_mesh("box:tri:3x2:perturb=0.2:seed=4"), 8, exec);
  }
}

// The run-time contraction loops (OperatorKernelChoice::exact = false) against the fixed-size
// ones and the team kernels, at sizes the fixed ones serve and past them.
TEST(CpuInterp, RunTimeContractionsEqualTheFixedSizeOnes) {
  const Mesh mesh = test::distorted_mesh("box:hex:3x1x3");
  for (int p : {1, 3, 8, 9}) {
    const H1Space space(mesh, p);
    InterpolatorOptions loops;
    loops.kernels.exact = false;
    expect_equal_paths(space, Geometry::Hexahedron, quadrature(Geometry::Hexahedron, 2 * p + 1), loops,
                       Exec::serial(), "run-time loops, p = " + std::to_string(p));
  }
}

// A mixed mesh: each geometry's interpolator on its own elements, quadrilaterals and triangles.
TEST(CpuInterp, MixedMeshEqualsTheTeamKernels) {
  Mesh m(2);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 5; ++i) m.add_vertex({double(i) + (i == 2 && j == 1 ? 0.2 : 0.0), double(j) + 0.1 * i * j});
  for (int j = 0; j < 2; ++j) {
    for (int i = 0; i < 2; ++i) m.add_element(Geometry::Quadrilateral, {j * 5 + i, j * 5 + i + 1, j * 5 + i + 6, j * 5 + i + 5});
    for (int i = 2; i < 4; ++i) {
      m.add_element(Geometry::Triangle, {j * 5 + i, j * 5 + i + 1, j * 5 + i + 6});
      m.add_element(Geometry::Triangle, {j * 5 + i, j * 5 + i + 6, j * 5 + i + 5});
    }
  }
  for (int p = 1; p <= 4; ++p)
    for (int comps : {1, 2}) {
      const H1Space space(m, p, comps);
      for (Geometry g : {Geometry::Quadrilateral, Geometry::Triangle})
        for (GeometrySource gs : {GeometrySource::OnTheFly, GeometrySource::Stored}) {
          InterpolatorOptions o;
          o.geometry = gs;
          expect_equal_paths(space, g, quadrature(g, 2 * p + 1), o, Exec::serial(),
                             std::string("mixed, ") + name(g) + " p = " + std::to_string(p));
        }
    }
}

// Curved meshes: J^-1 of the order-k map, stored (the Interpolator reads it whatever the option).
TEST(CpuInterp, CurvedMeshesEqualTheTeamKernels) {
  for (const char* spec : {"disk:quad:2:order=3", "disk:tri:1:order=2", "ball:hex:1:order=2"}) {
    const Mesh mesh = generate_mesh(spec);
    const Geometry g = mesh.element_geometry(0);
    for (int p : {1, 2, 4})
      for (const Exec& exec : host_backends())
        expect_equal_paths(H1Space(mesh, p), g, quadrature(g, 2 * p + 1), {}, exec,
                           std::string(spec) + " p = " + std::to_string(p));
  }
}

// Elements per block and per item do not apply to the batched kernels: every value gives the
// same result, and bad input keeps its errors.
TEST(CpuInterp, ElementsPerBlockDoNotChangeTheBatchedResultAndBadInputIsNamed) {
  const Mesh mesh = test::distorted_mesh("box:hex:3x2x2");
  const H1Space space(mesh, 3);
  const Interpolator in(space, Geometry::Hexahedron, quadrature(Geometry::Hexahedron, 7), Exec::serial());
  const auto u = test::random_vector(std::size_t(space.num_dofs()), 3u);
  const auto ua = Array<double, 1>::from("u", std::span<const double>(u.data(), u.size()), Space::Host);
  QuadratureData a = in.allocate(Eval::Gradients), b = in.allocate(Eval::Gradients);
  in.interpolate_with(1, ua.cview(), Eval::Gradients, a);
  in.interpolate_with(7, ua.cview(), Eval::Gradients, b);
  EXPECT_EQ(rel_diff(a.gradients, b.gradients), 0.0);
  QuadratureData wrong = in.allocate(Eval::Values);
  EXPECT_ERROR_MENTIONS(in.interpolate(ua.cview(), Eval::Gradients, wrong), "QuadratureData::gradients", "extents");
  Array<double, 3> e("e", {in.num_elements(), 1, in.nodes_per_element() - 1});
  EXPECT_ERROR_MENTIONS(in.integrate(a, Eval::Gradients, e.view()), "E-vector", "extents");
  Array<double, 1> short_u("u", {space.num_dofs() - 1});
  EXPECT_THROW(in.interpolate(short_u.cview(), Eval::Gradients, a), Error);
}
