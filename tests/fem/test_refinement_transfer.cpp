// RefinementTransfer: the prolongation between a mesh's H1 space and that of its uniform
// refinement reproduces the coarse space's functions, its transpose is exact, and a mesh that
// is not the refinement is refused.
#include <cmath>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "test_backends.hpp"
#include "tessera/fem/field_functions.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/refinement_transfer.hpp"

using namespace tessera;
using namespace tessera::fem;
using tessera::fem::test::random_vector;

namespace {

/// A quadratic in the physical coordinates: in the order-2 space of affine elements
/// (simplices, and unperturbed boxes), so its coarse interpolant prolongs to its fine one.
struct Quadratic {
  TESSERA_HOST_DEVICE double operator()(const double* x, double*) const {
    return 1 + x[0] - 2 * x[1] + 0.5 * x[2] + x[0] * x[1] - 0.7 * x[2] * x[2] + 0.3 * x[0] * x[0];
  }
};
/// A linear function: in every mapped space of order >= 1.
struct Linear {
  TESSERA_HOST_DEVICE double operator()(const double* x, double*) const { return 2 - x[0] + 3 * x[1] - x[2]; }
};

std::vector<double> host(const Array<double, 1>& a) {
  const auto h = a.to_host();
  return std::vector<double>(h.data(), h.data() + h.size());
}

/// max |P I_c(f) - I_f(f)| for the spaces of order p on `spec` and its refinement.
template <class F>
double prolongation_error(const char* spec, int p, const F& f, const Exec& exec) {
  const Mesh cm = generate_mesh(spec);
  const Mesh fm = refine_uniformly(cm);
  const H1Space cs(cm, p), fs(fm, p);
  const RefinementTransfer t(cs, fs, exec);
  Array<double, 1> uc("uc", {cs.num_dofs()}, exec.space()), uf("uf", {fs.num_dofs()}, exec.space()),
      pf("pf", {fs.num_dofs()}, exec.space());
  interpolate_function(cs, f, uc.view(), exec);
  interpolate_function(fs, f, uf.view(), exec);
  pf.fill(std::nan(""));
  t.prolong(uc.cview(), pf.view());
  const auto a = host(pf), b = host(uf);
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(a[i] - b[i]));
  return std::isnan(e) ? 1e300 : e;
}

}  // namespace

class RefinementTransferTest : public tessera::test::BackendTest {};
TESSERA_INSTANTIATE_BACKENDS(RefinementTransferTest);

// Linear functions on perturbed meshes of every geometry (p = 1, 2, 3), quadratics at p = 2, 3
// on affine meshes: the prolongation of the coarse interpolant is the fine interpolant to
// 1e-13 (values of size ~5, a sum of at most 27 products per entry).
TEST_P(RefinementTransferTest, ProlongationReproducesTheCoarseSpace) {
  for (const char* spec : {"box:tri:3x3:perturb=0.2", "box:quad:3x3:perturb=0.2", "box:tet:2x2x2:perturb=0.2",
                           "box:hex:2x2x2:perturb=0.2"})
    for (int p : {1, 2, 3}) {
      SCOPED_TRACE(std::string(spec) + " p=" + std::to_string(p));
      EXPECT_LT(prolongation_error(spec, p, Linear{}, exec()), 1e-13);
    }
  for (const char* spec : {"box:tri:3x3:perturb=0.2", "box:quad:3x3", "box:tet:2x2x2:perturb=0.2", "box:hex:2x2x2"})
    for (int p : {2, 3}) {
      SCOPED_TRACE(std::string(spec) + " quadratic p=" + std::to_string(p));
      EXPECT_LT(prolongation_error(spec, p, Quadratic{}, exec()), 1e-13);
    }
}

// (P x, y) = (x, P^T y) for random x, y (1e-13 relative: sums of ~10^3 products).
TEST_P(RefinementTransferTest, RestrictionIsTheTranspose) {
  for (const char* spec : {"box:tri:3x3:perturb=0.2", "box:hex:2x2x2:perturb=0.2"}) {
    SCOPED_TRACE(spec);
    const Mesh cm = generate_mesh(spec);
    const Mesh fm = refine_uniformly(cm);
    const H1Space cs(cm, 2), fs(fm, 2);
    const RefinementTransfer t(cs, fs, exec());
    const auto xh = random_vector(std::size_t(cs.num_dofs()), 1), yh = random_vector(std::size_t(fs.num_dofs()), 2);
    const auto x = Array<double, 1>::from("x", std::span<const double>(xh), exec().space());
    const auto y = Array<double, 1>::from("y", std::span<const double>(yh), exec().space());
    Array<double, 1> Px("Px", {fs.num_dofs()}, exec().space()), Pty("Pty", {cs.num_dofs()}, exec().space());
    t.prolong(x.cview(), Px.view());
    t.restrict_(y.cview(), Pty.view());
    const auto a = host(Px), b = host(Pty);
    double s1 = 0, s2 = 0, m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s1 += a[i] * yh[i], m += std::abs(a[i] * yh[i]);
    for (std::size_t i = 0; i < b.size(); ++i) s2 += xh[i] * b[i];
    EXPECT_NEAR(s1, s2, 1e-13 * m);
  }
}

TEST_P(RefinementTransferTest, AMeshThatIsNotTheRefinementIsRefused) {
  const Mesh cm = generate_mesh("box:quad:2x2");
  const Mesh other = generate_mesh("box:quad:4x4");  // same element count, other numbering
  const Mesh small = generate_mesh("box:quad:3x3");
  const H1Space cs(cm, 1), os(other, 1), ss(small, 1), c2(cm, 2);
  const Mesh fm = refine_uniformly(cm);
  const H1Space fs(fm, 1);
  EXPECT_ERROR_MENTIONS(RefinementTransfer(cs, os, exec()), "not the uniform refinement");
  EXPECT_ERROR_MENTIONS(RefinementTransfer(cs, ss, exec()), "9 elements", "not the uniform refinement");
  EXPECT_ERROR_MENTIONS(RefinementTransfer(c2, fs, exec()), "same order");
}
