// Element restriction: gather and scatter-add on every backend.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "test_backends.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/restriction.hpp"

using namespace tessera;
using namespace tessera::fem;

namespace {

const char* specs[] = {"box:tri:4x3:perturb=0.2", "box:quad:3x4:perturb=0.2", "box:tet:3x2x2:perturb=0.2",
                       "box:hex:2x3x2:perturb=0.2"};

using tessera::fem::test::random_vector;


}  // namespace

class RestrictionTest : public tessera::test::BackendTest {};
TESSERA_INSTANTIATE_BACKENDS(RestrictionTest);

TEST_P(RestrictionTest, GatherMatchesHostReferenceExactly) {
  const Exec exec = tessera::test::exec_for(GetParam());
  for (const char* spec : specs)
    for (int p : {1, 2, 4})
      for (int nc : {1, 3}) {
        SCOPED_TRACE(std::string(spec) + " p=" + std::to_string(p) + " components=" + std::to_string(nc));
        const Mesh mesh = generate_mesh(spec);
        const H1Space space(mesh, p, nc);
        const Geometry g = mesh.element_geometry(0);
        const ElementRestriction r(space, g, exec);
        const auto u = random_vector(std::size_t(space.num_dofs()), 7);
        auto gu = Array<double, 1>::from("u", std::span<const double>(u), exec.space());
        Array<double, 3> local("local", {r.num_elements(), nc, r.nodes_per_element()}, exec.space());
        local.fill(std::nan(""));  // poison: every entry must be written
        r.gather(gu.cview(), local.view());
        const auto h = local.to_host();
        for (index_t k = 0; k < r.num_elements(); ++k) {
          const auto nodes = space.element_nodes(r.element_ids()[std::size_t(k)]);
          for (int c = 0; c < nc; ++c)
            for (int i = 0; i < r.nodes_per_element(); ++i)
              ASSERT_EQ(h(k, c, i), u[std::size_t(c * space.num_nodes() + nodes[std::size_t(i)])]) << k << " " << c << " " << i;
        }
      }
}

TEST_P(RestrictionTest, ScatterOfOnesCountsMultiplicities) {
  const Exec exec = tessera::test::exec_for(GetParam());
  for (const char* spec : specs)
    for (int p : {1, 3})
      for (ScatterMethod m : {ScatterMethod::Atomic, ScatterMethod::TransposeGather, ScatterMethod::Auto}) {
        SCOPED_TRACE(std::string(spec) + " p=" + std::to_string(p) + " " + name(m));
        const Mesh mesh = generate_mesh(spec);
        const H1Space space(mesh, p, 2);
        const ElementRestriction r(space, mesh.element_geometry(0), exec);
        // Gather of ones, then scatter: each global entry counts its element-local copies.
        Array<double, 1> ones("ones", {space.num_dofs()}, exec.space());
        ones.fill(1.0);
        Array<double, 3> local("local", {r.num_elements(), 2, r.nodes_per_element()}, exec.space());
        r.gather(ones.cview(), local.view());
        Array<double, 1> y("y", {space.num_dofs()}, exec.space());
        y.fill(0.0);
        r.scatter_add(local.cview(), y.view(), m);
        std::vector<double> count(std::size_t(space.num_nodes()), 0);
        for (index_t e = 0; e < mesh.num_elements(); ++e)
          for (index_t n : space.element_nodes(e)) count[std::size_t(n)] += 1;
        const auto h = y.to_host();
        for (int c = 0; c < 2; ++c)
          for (index_t n = 0; n < space.num_nodes(); ++n)
            ASSERT_EQ(h(c * space.num_nodes() + n), count[std::size_t(n)]) << "node " << n << " component " << c;
        // Interior vertices of these boxes are shared by several elements: the test sees sharing.
        EXPECT_GT(*std::max_element(count.begin(), count.end()), 2.0);
      }
}

TEST_P(RestrictionTest, ScatterMethodsAgreeOnRandomData) {
  const Exec exec = tessera::test::exec_for(GetParam());
  for (const char* spec : specs)
    for (int p : {2, 3}) {
      SCOPED_TRACE(std::string(spec) + " p=" + std::to_string(p));
      const Mesh mesh = generate_mesh(spec);
      const H1Space space(mesh, p, 3);
      const ElementRestriction r(space, mesh.element_geometry(0), exec);
      const auto lv = random_vector(std::size_t(r.num_elements() * 3 * r.nodes_per_element()), 3);
      Array<double, 3> local("local", {r.num_elements(), 3, r.nodes_per_element()}, Space::Host);
      std::copy(lv.begin(), lv.end(), local.data());
      local = local.clone(exec.space());
      const auto y0 = random_vector(std::size_t(space.num_dofs()), 5);
      // Host reference: y0 + sum of the element-local copies, in element order.
      std::vector<double> ref(y0), mag(y0.size(), 0);
      for (index_t k = 0; k < r.num_elements(); ++k) {
        const auto nodes = space.element_nodes(r.element_ids()[std::size_t(k)]);
        for (int c = 0; c < 3; ++c)
          for (int i = 0; i < r.nodes_per_element(); ++i) {
            const double v = lv[std::size_t((k * 3 + c) * r.nodes_per_element() + i)];
            ref[std::size_t(c * space.num_nodes() + nodes[std::size_t(i)])] += v;
            mag[std::size_t(c * space.num_nodes() + nodes[std::size_t(i)])] += std::abs(v);
          }
      }
      for (ScatterMethod m : {ScatterMethod::Atomic, ScatterMethod::TransposeGather}) {
        auto y = Array<double, 1>::from("y", std::span<const double>(y0), exec.space());
        r.scatter_add(local.cview(), y.view(), m);
        const auto h = y.to_host();
        for (std::size_t n = 0; n < ref.size(); ++n)
          // Sums of at most ~24 terms in a different order: rounding <= 24 eps * sum |terms|.
          ASSERT_NEAR(h(index_t(n)), ref[n], 1e-14 * (mag[n] + std::abs(y0[n]) + 1)) << name(m) << " dof " << n;
      }
    }
}

TEST_P(RestrictionTest, TransposeGatherIsBitwiseReproducible) {
  const Exec exec = tessera::test::exec_for(GetParam());
  const Mesh mesh = generate_mesh("box:hex:4:perturb=0.2");
  const H1Space space(mesh, 3);
  const ElementRestriction r(space, Geometry::Hexahedron, exec);
  const auto lv = random_vector(std::size_t(r.num_elements() * r.nodes_per_element()), 9);
  Array<double, 3> local("local", {r.num_elements(), 1, r.nodes_per_element()}, Space::Host);
  std::copy(lv.begin(), lv.end(), local.data());
  local = local.clone(exec.space());
  std::vector<std::vector<double>> runs;
  for (int k = 0; k < 3; ++k) {
    Array<double, 1> y("y", {space.num_dofs()}, exec.space());
    y.fill(0.0);
    r.scatter_add(local.cview(), y.view(), ScatterMethod::TransposeGather);
    runs.push_back(y.to_vector());
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
}

TEST_P(RestrictionTest, MixedMeshRestrictsEachGeometry) {
  const Exec exec = tessera::test::exec_for(GetParam());
  // Two unit squares side by side: the left one split into two triangles, the right a quad.
  Mesh mesh(2);
  for (double y : {0.0, 1.0})
    for (double x : {0.0, 1.0, 2.0}) mesh.add_vertex({x, y});
  mesh.add_element(Geometry::Triangle, {0, 1, 4});
  mesh.add_element(Geometry::Triangle, {0, 4, 3});
  mesh.add_element(Geometry::Quadrilateral, {1, 2, 5, 4});
  const int p = 3;
  const H1Space space(mesh, p);
  EXPECT_EQ(space.num_nodes(), (2 * p + 1) * (p + 1));
  const ElementRestriction tri(space, Geometry::Triangle, exec), quad(space, Geometry::Quadrilateral, exec);
  EXPECT_EQ(tri.num_elements(), 2);
  EXPECT_EQ(quad.num_elements(), 1);
  EXPECT_EQ(quad.element_ids(), std::vector<index_t>{2});
  Array<double, 1> ones("ones", {space.num_dofs()}, exec.space()), y("y", {space.num_dofs()}, exec.space());
  ones.fill(1.0);
  y.fill(0.0);
  for (const ElementRestriction* r : {&tri, &quad}) {
    Array<double, 3> local("local", {r->num_elements(), 1, r->nodes_per_element()}, exec.space());
    r->gather(ones.cview(), local.view());
    r->scatter_add(local.cview(), y.view());
  }
  // Nodes on the shared edge x = 1 (vertices 1 and 4 and the p - 1 between) are in 3 or 2
  // elements: total of the multiplicities = sum of nodes per element.
  const auto h = y.to_host();
  double total = 0;
  for (index_t n = 0; n < space.num_nodes(); ++n) total += h(n);
  EXPECT_EQ(total, 2.0 * (p + 1) * (p + 2) / 2 + (p + 1) * (p + 1));
}

TEST_P(RestrictionTest, RefusesWrongExtentsAndMissingGeometry) {
  const Exec exec = tessera::test::exec_for(GetParam());
  const Mesh mesh = generate_mesh("box:quad:2");
  const H1Space space(mesh, 2);
  EXPECT_ERROR_MENTIONS(ElementRestriction(space, Geometry::Triangle, exec), "no triangle elements");
  const ElementRestriction r(space, Geometry::Quadrilateral, exec);
  Array<double, 1> g("g", {space.num_dofs() + 1}, exec.space());
  Array<double, 3> l("l", {r.num_elements(), 1, r.nodes_per_element()}, exec.space());
  EXPECT_ERROR_MENTIONS(r.gather(g.cview(), l.view()), "global vector has", "expected components x nodes");
  Array<double, 1> g2("g", {space.num_dofs()}, exec.space());
  Array<double, 3> l2("l", {r.num_elements(), 2, r.nodes_per_element()}, exec.space());
  EXPECT_ERROR_MENTIONS(r.scatter_add(l2.cview(), g2.view()), "element-local array has extents", "(4, 1, 9)");
}

TEST_P(RestrictionTest, AutoPicksTheMeasuredMethodAndOrderingsAgree) {
  const Exec exec = tessera::test::exec_for(GetParam());
  // The same field restricted through both node orderings gives the same element values.
  const Mesh mesh = generate_mesh("box:tet:2x3x2:perturb=0.2");
  const int p = 3;
  const H1Space ft(mesh, p, 2), be(mesh, p, 2, NodeOrdering::ByEntity);
  const ElementRestriction rf(ft, Geometry::Tetrahedron, exec), rb(be, Geometry::Tetrahedron, exec);
  // A field given per (element, local node) slot through first-touch ids, carried over to
  // by-entity ids by the slot correspondence.
  const auto u = random_vector(std::size_t(ft.num_dofs()), 21);
  std::vector<double> ub(u.size(), 0);
  for (std::size_t k = 0; k < ft.element_node_ids().size(); ++k)
    for (int c = 0; c < 2; ++c)
      ub[std::size_t(be.dof(c, be.element_node_ids()[k]))] = u[std::size_t(ft.dof(c, ft.element_node_ids()[k]))];
  auto gu = Array<double, 1>::from("u", std::span<const double>(u), exec.space());
  auto gb = Array<double, 1>::from("ub", std::span<const double>(ub), exec.space());
  Array<double, 3> lf("lf", {rf.num_elements(), 2, rf.nodes_per_element()}, exec.space());
  Array<double, 3> lb("lb", {rb.num_elements(), 2, rb.nodes_per_element()}, exec.space());
  rf.gather(gu.cview(), lf.view());
  rb.gather(gb.cview(), lb.view());
  EXPECT_EQ(lf.to_vector(), lb.to_vector());
  // Auto is the transpose gather on the CPU (bitwise equal) and atomics on the GPU (equal up
  // to the summation order: at most ~20 terms of size <= 1, so 1e-14 absolute).
  Array<double, 1> y1("y1", {ft.num_dofs()}, exec.space()), y2("y2", {ft.num_dofs()}, exec.space());
  y1.fill(0.5);
  y2.fill(0.5);
  rf.scatter_add(lf.cview(), y1.view(), ScatterMethod::Auto);
  rf.scatter_add(lf.cview(), y2.view(), ScatterMethod::TransposeGather);
  if (!exec.on_device()) {
    EXPECT_EQ(y1.to_vector(), y2.to_vector());
  } else {
    const auto a = y1.to_vector(), b = y2.to_vector();
    for (std::size_t n = 0; n < a.size(); ++n) ASSERT_NEAR(a[n], b[n], 1e-14) << "dof " << n;
  }
}

TEST_P(RestrictionTest, RefusesArraysInAnotherMemorySpace) {
  // Needs device memory (on the CPU backends: to pass some; on CUDA: to be the right kind).
  if (!cuda_available()) GTEST_SKIP() << "skipped: no GPU";
  const Exec exec = tessera::test::exec_for(GetParam());
  const Mesh mesh = generate_mesh("box:quad:2");
  const H1Space space(mesh, 2);
  const ElementRestriction r(space, Geometry::Quadrilateral, exec);
  const Space wrong = exec.on_device() ? Space::Host : Space::Device;
  Array<double, 1> g_ok("g", {space.num_dofs()}, exec.space()), g_bad("g", {space.num_dofs()}, wrong);
  Array<double, 3> l_ok("l", {r.num_elements(), 1, r.nodes_per_element()}, exec.space());
  Array<double, 3> l_bad("l", {r.num_elements(), 1, r.nodes_per_element()}, wrong);
  EXPECT_ERROR_MENTIONS(r.gather(g_bad.cview(), l_ok.view()), "global vector lives in", to_string(wrong), "cannot read");
  EXPECT_ERROR_MENTIONS(r.scatter_add(l_bad.cview(), g_ok.view()), "element-local array lives in", to_string(wrong));
  EXPECT_NO_THROW(r.gather(g_ok.cview(), l_ok.view()));
}
