// Field functions as kernels: the nodal interpolant of a function and the L2 / H1 error norms
// (field_functions.hpp), on every backend, against values known in closed form.
#include <cmath>
#include <string>

#include "fem_test_util.hpp"
#include "test_backends.hpp"
#include "tessera/fem/field_functions.hpp"
#include "tessera/fem/mesh.hpp"

using namespace tessera;
using namespace tessera::fem;

namespace {

/// u = 1 + 2x - y + z / 2: in every mapped H1 space of order >= 1 (the element maps are the
/// first-order vertex maps), so its nodal interpolant is exact on perturbed meshes too.
struct Linear {
  TESSERA_HOST_DEVICE double operator()(const double* x, double* g) const {
    if (g) {
      g[0] = 2;
      g[1] = -1;
      g[2] = 0.5;
    }
    return 1 + 2 * x[0] - x[1] + 0.5 * x[2];
  }
};

/// u = x: ||u||_L2 on the unit box is sqrt(1/3), |u|_H1 is 1.
struct CoordX {
  TESSERA_HOST_DEVICE double operator()(const double* x, double* g) const {
    if (g) {
      g[0] = 1;
      g[1] = 0;
      g[2] = 0;
    }
    return x[0];
  }
};

/// u = sin(3x) cos(2y): smooth, not in any finite-element space.
struct Smooth {
  TESSERA_HOST_DEVICE double operator()(const double* x, double* g) const {
    if (g) {
      g[0] = 3 * ::cos(3 * x[0]) * ::cos(2 * x[1]);
      g[1] = -2 * ::sin(3 * x[0]) * ::sin(2 * x[1]);
      g[2] = 0;
    }
    return ::sin(3 * x[0]) * ::cos(2 * x[1]);
  }
};

const char* kSpecs[] = {"box:tri:4x4:perturb=0.2", "box:quad:4x4:perturb=0.2", "box:tet:2x2x2:perturb=0.2",
                        "box:hex:3x3x3:perturb=0.2"};

}  // namespace

class FieldFunctionsTest : public tessera::test::BackendTest {};
TESSERA_INSTANTIATE_BACKENDS(FieldFunctionsTest);

// The interpolant of a linear function is exact, so both error norms vanish (1e-12: round-off
// of sums over ~10^4 points of values of size 1).
TEST_P(FieldFunctionsTest, LinearFunctionsAreInterpolatedExactly) {
  for (const char* spec : kSpecs)
    for (int p : {1, 2, 3}) {
      SCOPED_TRACE(std::string(spec) + " p=" + std::to_string(p));
      const Mesh mesh = generate_mesh(spec);
      const H1Space space(mesh, p);
      Array<double, 1> u("u", {space.num_dofs()}, exec().space());
      u.fill(std::nan(""));  // poison: every entry must be written
      interpolate_function(space, Linear{}, u.view(), exec());
      const auto e = error_norms(space, u.cview(), Linear{}, exec());
      EXPECT_LT(e.l2, 1e-12);
      EXPECT_LT(e.h1, 1e-12);
    }
}

// With uh = 0 the norms are those of u = x over the unit box: sqrt(1/3) and 1. The rule
// (p + 2 points per direction) integrates x^2 det J exactly on these meshes, so 1e-13.
TEST_P(FieldFunctionsTest, NormsOfAKnownFunction) {
  for (const char* spec : kSpecs) {
    SCOPED_TRACE(spec);
    const Mesh mesh = generate_mesh(spec);
    const H1Space space(mesh, 2);
    Array<double, 1> z("z", {space.num_dofs()}, exec().space());
    z.fill(0.0);
    const auto e = error_norms(space, z.cview(), CoordX{}, exec());
    EXPECT_NEAR(e.l2, std::sqrt(1.0 / 3.0), 1e-13);
    EXPECT_NEAR(e.h1, 1.0, 1e-13);
  }
}

// The interpolation error of a smooth function falls at the rates p + 1 (L2) and p (H1) under
// refinement (observed rate within 0.3 of the theory on 8x8 -> 16x16 triangles and quads).
TEST_P(FieldFunctionsTest, InterpolationErrorConvergesAtTheOptimalRate) {
  for (const char* g : {"tri", "quad"})
    for (int p : {1, 2, 3}) {
      SCOPED_TRACE(std::string(g) + " p=" + std::to_string(p));
      double l2[2], h1[2];
      for (int l = 0; l < 2; ++l) {
        const int n = 8 << l;
        const Mesh mesh = generate_mesh(std::string("box:") + g + ":" + std::to_string(n) + "x" + std::to_string(n));
        const H1Space space(mesh, p);
        Array<double, 1> u("u", {space.num_dofs()}, exec().space());
        interpolate_function(space, Smooth{}, u.view(), exec());
        const auto e = error_norms(space, u.cview(), Smooth{}, exec());
        l2[l] = e.l2;
        h1[l] = e.h1;
      }
      EXPECT_NEAR(std::log2(l2[0] / l2[1]), p + 1, 0.3);
      EXPECT_NEAR(std::log2(h1[0] / h1[1]), p, 0.3);
    }
}

TEST_P(FieldFunctionsTest, BadInputIsRefusedWithAMessage) {
  const Mesh mesh = generate_mesh("box:quad:2x2");
  const H1Space vec(mesh, 2, 2);
  Array<double, 1> v("v", {vec.num_dofs()}, exec().space());
  EXPECT_ERROR_MENTIONS(interpolate_function(vec, Linear{}, v.view(), exec()), "2 components", "scalar");
  EXPECT_ERROR_MENTIONS(error_norms(vec, v.cview(), Linear{}, exec()), "2 components", "scalar");
  const H1Space s(mesh, 2);
  Array<double, 1> w("w", {s.num_dofs() + 1}, exec().space());
  EXPECT_ERROR_MENTIONS(interpolate_function(s, Linear{}, w.view(), exec()), "26 entries for 25 DOFs");
}
