// Geometric factors at quadrature points on every backend: J, det J, J^-1, D and w det J
// against a host reference computed independently (central differences of the element map,
// Gaussian elimination), measures, identities, embedded elements, inverted elements and the
// agreement of every backend with the serial one.
#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "test_backends.hpp"
#include "tessera/fem/geometric_factors.hpp"
#include "tessera/fem/quadrature.hpp"

using namespace tessera;
using namespace tessera::fem;

namespace geometric_factors_test {

// ---- meshes built by hand ----------------------------------------------------------------

/// Corner offsets of the reference vertices in Gmsh order (written out here, not taken from
/// the library, so that the reference map below does not share its tables).
constexpr int kQuadCorner[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
constexpr int kHexCorner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                  {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};

/// fem::box_mesh with n cells per direction of [0, size[0]] x ...; interior vertices moved by
/// up to perturb * (cell size) per coordinate (triangles 2 per square, Kuhn tets 6 per cube).
Mesh box(Geometry g, int n, double perturb, unsigned seed = 7, std::array<double, 3> size = {1.0, 1.0, 1.0}) {
  BoxOptions o;
  o.perturb = perturb;
  o.seed = seed;
  o.size = size;
  return box_mesh(g, {n, n, n}, o);
}

/// The geometries with the mesh size used for them.
struct Case {
  Geometry g;
  int n;
  double perturb;
};
const std::vector<Case>& all_cases() {
  static const std::vector<Case> c{{Geometry::Segment, 6, 0.3},       {Geometry::Triangle, 3, 0.2},
                                   {Geometry::Quadrilateral, 3, 0.25}, {Geometry::Tetrahedron, 3, 0.12},
                                   {Geometry::Hexahedron, 3, 0.25}};
  return c;
}

// ---- independent host reference ---------------------------------------------------------

using Mat = std::array<std::array<double, 3>, 3>;

/// x(xi) - x(vertex 0) of element e, from the explicit affine / bilinear / trilinear formulas.
std::array<double, 3> ref_map(const Mesh& m, index_t e, const double* xi) {
  const auto vs = m.element_vertices(e);
  const int sd = m.space_dim();
  auto P = [&](int v, int r) { return m.vertex(vs[std::size_t(v)], r) - m.vertex(vs[0], r); };
  std::array<double, 3> x{0, 0, 0};
  const Geometry g = m.element_geometry(e);
  for (int r = 0; r < sd; ++r) {
    switch (g) {
      case Geometry::Segment: x[r] = P(1, r) * xi[0]; break;
      case Geometry::Triangle: x[r] = P(1, r) * xi[0] + P(2, r) * xi[1]; break;
      case Geometry::Tetrahedron: x[r] = P(1, r) * xi[0] + P(2, r) * xi[1] + P(3, r) * xi[2]; break;
      case Geometry::Quadrilateral: {
        const double lo = (1 - xi[0]) * P(0, r) + xi[0] * P(1, r), hi = (1 - xi[0]) * P(3, r) + xi[0] * P(2, r);
        x[r] = (1 - xi[1]) * lo + xi[1] * hi;
        break;
      }
      case Geometry::Hexahedron: {
        auto face = [&](int o) {
          const double lo = (1 - xi[0]) * P(o + 0, r) + xi[0] * P(o + 1, r);
          const double hi = (1 - xi[0]) * P(o + 3, r) + xi[0] * P(o + 2, r);
          return (1 - xi[1]) * lo + xi[1] * hi;
        };
        x[r] = (1 - xi[2]) * face(0) + xi[2] * face(4);
        break;
      }
    }
  }
  return x;
}

/// dx/dxi by central differences with step 1. The map is affine in each reference coordinate
/// separately (affine on simplices, multilinear otherwise), so the difference quotient is
/// exact for any step; step 1 keeps its rounding error at a few ulps of the element size.
Mat ref_jacobian(const Mesh& m, index_t e, const double* xi) {
  const int d = fem::dim(m.element_geometry(e));
  Mat J{};
  for (int c = 0; c < d; ++c) {
    double a[3] = {xi[0], xi[1], xi[2]}, b[3] = {xi[0], xi[1], xi[2]};
    a[c] += 1.0;
    b[c] -= 1.0;
    const auto xa = ref_map(m, e, a), xb = ref_map(m, e, b);
    for (int r = 0; r < m.space_dim(); ++r) J[r][c] = (xa[r] - xb[r]) / 2.0;
  }
  return J;
}

/// Solves A X = B (A n x n, B n x k) by Gaussian elimination with partial pivoting; returns
/// det A.
double solve(Mat A, int n, Mat& B, int k) {
  double det = 1.0;
  for (int c = 0; c < n; ++c) {
    int p = c;
    for (int r = c + 1; r < n; ++r)
      if (std::fabs(A[r][c]) > std::fabs(A[p][c])) p = r;
    if (p != c) {
      std::swap(A[p], A[c]);
      std::swap(B[p], B[c]);
      det = -det;
    }
    det *= A[c][c];
    for (int r = c + 1; r < n; ++r) {
      const double f = A[r][c] / A[c][c];
      for (int j = c; j < n; ++j) A[r][j] -= f * A[c][j];
      for (int j = 0; j < k; ++j) B[r][j] -= f * B[c][j];
    }
  }
  for (int c = n - 1; c >= 0; --c)
    for (int j = 0; j < k; ++j) {
      double s = B[c][j];
      for (int i = c + 1; i < n; ++i) s -= A[c][i] * B[i][j];
      B[c][j] = s / A[c][c];
    }
  return det;
}

struct RefPoint {
  Mat J{}, Jinv{}, D{};
  double det = 0;
};

/// Reference factors of element e at xi with weight w.
RefPoint reference(const Mesh& m, index_t e, const double* xi, double w) {
  const int d = fem::dim(m.element_geometry(e)), sd = m.space_dim();
  RefPoint p;
  p.J = ref_jacobian(m, e, xi);
  if (d == sd) {
    Mat I{};
    for (int i = 0; i < d; ++i) I[i][i] = 1.0;
    p.det = solve(p.J, d, I, d);
    p.Jinv = I;
  } else {
    // det: length of the tangent (1-D) or area of the parallelogram of the tangents (2-D).
    if (d == 1) {
      double s = 0;
      for (int r = 0; r < sd; ++r) s += p.J[r][0] * p.J[r][0];
      p.det = std::sqrt(s);
    } else {
      const auto& J = p.J;
      const double cx = J[1][0] * J[2][1] - J[2][0] * J[1][1], cy = J[2][0] * J[0][1] - J[0][0] * J[2][1],
                   cz = J[0][0] * J[1][1] - J[1][0] * J[0][1];
      p.det = std::sqrt(cx * cx + cy * cy + cz * cz);
    }
    // Pseudo-inverse: (J^T J) X = J^T.
    Mat M{}, Jt{};
    for (int i = 0; i < d; ++i) {
      for (int j = 0; j < d; ++j)
        for (int r = 0; r < sd; ++r) M[i][j] += p.J[r][i] * p.J[r][j];
      for (int r = 0; r < sd; ++r) Jt[i][r] = p.J[r][i];
    }
    solve(M, d, Jt, sd);
    p.Jinv = Jt;
  }
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      double s = 0;
      for (int r = 0; r < sd; ++r) s += p.Jinv[i][r] * p.Jinv[j][r];
      p.D[i][j] = w * p.det * s;
    }
  return p;
}

/// Host copies of a result, for reading.
struct HostFactors {
  Array<double, 4> J, Jinv;
  Array<double, 2> detJ, wdetJ;
  Array<double, 3> D;
  explicit HostFactors(const GeometricFactors& f)
      : J(f.J.to_host()), Jinv(f.Jinv.to_host()), detJ(f.detJ.to_host()), wdetJ(f.wdetJ.to_host()), D(f.D.to_host()) {}
};

double max_abs(const Mat& a) {
  double s = 0;
  for (const auto& row : a)
    for (double v : row) s = std::max(s, std::fabs(v));
  return s;
}

/// Largest relative error, max-norm over each point's matrix, of every array against the
/// reference; sets `worst_what` to the array that had it.
double compare_with_reference(const Mesh& m, Geometry g, const QuadratureRule& rule, const GeometricFactors& f,
                              const char*& worst_what) {
  const HostFactors h(f);
  const auto elems = m.elements_of(g);
  const int d = fem::dim(g), sd = m.space_dim(), nq = f.num_points;
  double worst = 0;
  auto note = [&](double err, const char* what) {
    if (!(err <= worst)) {  // also catches NaN
      worst = std::isnan(err) ? 1e300 : err;
      worst_what = what;
    }
  };
  for (index_t k = 0; k < index_t(elems.size()); ++k)
    for (int q = 0; q < nq; ++q) {
      double xi[3] = {0, 0, 0};
      for (int c = 0; c < d; ++c) xi[c] = rule.points(q, c);
      const RefPoint r = reference(m, elems[std::size_t(k)], xi, rule.weights(q));
      Mat J{}, Jinv{}, D{};
      for (int a = 0; a < sd; ++a)
        for (int c = 0; c < d; ++c) {
          J[a][c] = h.J(k, a, c, q) - r.J[a][c];
          Jinv[c][a] = h.Jinv(k, c, a, q) - r.Jinv[c][a];
        }
      for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) D[i][j] = h.D(k, packed_symmetric_index(d, i, j), q) - r.D[i][j];
      note(max_abs(J) / max_abs(r.J), "J");
      note(max_abs(Jinv) / max_abs(r.Jinv), "Jinv");
      note(max_abs(D) / max_abs(r.D), "D");
      note(std::fabs(h.detJ(k, q) - r.det) / std::fabs(r.det), "detJ");
      note(std::fabs(h.wdetJ(k, q) - rule.weights(q) * r.det) / std::fabs(rule.weights(q) * r.det), "wdetJ");
    }
  return worst;
}

/// Sum of all entries of a host-readable copy of `a`.
template <int R>
double host_sum(const Array<double, R>& a) {
  double s = 0;
  for (double v : a.to_vector()) s += v;
  return s;
}

}  // namespace geometric_factors_test

namespace gft = geometric_factors_test;

class GeometricFactorsTest : public tessera::test::BackendTest {};
TESSERA_INSTANTIATE_BACKENDS(GeometricFactorsTest);

// Relative tolerance 1e-14 against the reference: both sides build J from vertex differences
// (a few roundings of relative size 2^-53 each), and det / inverse / D add a few more scaled
// by the condition number of J, which is below 10 on these perturbed elements: the expected
// difference is ~1e-15, and 1e-14 leaves a factor of ~10.
TEST_P(GeometricFactorsTest, MatchesIndependentReferenceOnPerturbedBoxes) {
  for (const auto& c : gft::all_cases()) {
    SCOPED_TRACE(name(c.g));
    const Mesh m = gft::box(c.g, c.n, c.perturb);
    const auto rule = quadrature(c.g, 5);
    const auto f = geometric_factors(m, c.g, rule, exec());
    EXPECT_EQ(f.geom, c.g);
    EXPECT_EQ(f.num_elements, m.num_elements());
    EXPECT_EQ(f.num_points, rule.size());
    EXPECT_EQ(f.dim, dim(c.g));
    EXPECT_EQ(f.space_dim, dim(c.g));
    EXPECT_EQ(f.J.space(), space());
    EXPECT_EQ(f.D.space(), space());
    EXPECT_EQ(f.D.extent(1), dim(c.g) * (dim(c.g) + 1) / 2);
    const char* what = "";
    EXPECT_LE(gft::compare_with_reference(m, c.g, rule, f, what), 1e-14) << "worst array: " << what;
  }
}

// Elements that are images of grid cells under x = A x0 + b have J = A h exactly (h the cell
// size) and det J = det(A) h^dim. The 1e-14 relative tolerance covers the rounding of the
// mapped vertex coordinates (|x| <= 4, so ~4e-16 absolute each, against J entries ~0.5) and
// of the differences the kernel forms: ~3e-15.
TEST_P(GeometricFactorsTest, AffinelyDistortedElementsHaveTheConstantJacobian) {
  const double A[3][3] = {{1.3, 0.4, -0.2}, {0.1, 0.9, 0.3}, {-0.25, 0.2, 1.1}};
  const double b[3] = {2.0, -1.0, 0.5};
  for (Geometry g : {Geometry::Quadrilateral, Geometry::Triangle, Geometry::Hexahedron, Geometry::Tetrahedron}) {
    SCOPED_TRACE(name(g));
    const int d = dim(g), n = 2;
    Mesh m = gft::box(g, n, 0.0);
    auto x = m.coordinates();
    for (index_t v = 0; v < m.num_vertices(); ++v) {
      double y[3] = {0, 0, 0};
      for (int r = 0; r < d; ++r) {
        y[r] = b[r];
        for (int c = 0; c < d; ++c) y[r] += A[r][c] * x[std::size_t(v * d + c)];
      }
      for (int r = 0; r < d; ++r) x[std::size_t(v * d + r)] = y[r];
    }
    const auto rule = quadrature(g, 3);
    const gft::HostFactors h(geometric_factors(m, g, rule, exec()));
    const double hcell = 1.0 / n;
    double det_ref = 1;  // det(A h), by the rule of Sarrus / the 2x2 formula
    if (d == 2) det_ref = (A[0][0] * A[1][1] - A[0][1] * A[1][0]) * hcell * hcell;
    if (d == 3)
      det_ref = (A[0][0] * (A[1][1] * A[2][2] - A[1][2] * A[2][1]) - A[0][1] * (A[1][0] * A[2][2] - A[1][2] * A[2][0]) +
                 A[0][2] * (A[1][0] * A[2][1] - A[1][1] * A[2][0])) *
                hcell * hcell * hcell;
    double worst = 0, worst_det = 0;
    for (index_t e = 0; e < m.num_elements(); ++e)
      for (int q = 0; q < int(rule.size()); ++q) {
        // Simplices: J = A h S with S the simplex's edge matrix in the cell (det S = 1 for
        // both splits, after orientation), so only det J is compared. Entries relative to
        // max |A| h = 1.3 h.
        if (is_tensor(g))
          for (int r = 0; r < d; ++r)
            for (int c = 0; c < d; ++c)
              worst = std::max(worst, std::fabs(h.J(e, r, c, q) - A[r][c] * hcell) / (1.3 * hcell));
        worst_det = std::max(worst_det, std::fabs(h.detJ(e, q) - det_ref) / std::fabs(det_ref));
      }
    EXPECT_LE(worst, 1e-14);
    EXPECT_LE(worst_det, 1e-14);
  }
}

// A non-affine element: the unit cube with vertex 6 moved to (1.5, 1.4, 1.3). J, det J and
// the rest are checked against the reference (1e-14: see the first test).
TEST_P(GeometricFactorsTest, NonAffineHexahedronAndQuadrilateralMatchTheReference) {
  {
    Mesh m(3);
    for (int v = 0; v < 8; ++v) {
      double x[3] = {double(gft::kHexCorner[v][0]), double(gft::kHexCorner[v][1]), double(gft::kHexCorner[v][2])};
      if (v == 6) x[0] = 1.5, x[1] = 1.4, x[2] = 1.3;
      m.add_vertex(std::span<const double>(x, 3));
    }
    m.add_element(Geometry::Hexahedron, {0, 1, 2, 3, 4, 5, 6, 7});
    const auto rule = quadrature(Geometry::Hexahedron, 7);
    const auto f = geometric_factors(m, Geometry::Hexahedron, rule, exec());
    const char* what = "";
    EXPECT_LE(gft::compare_with_reference(m, Geometry::Hexahedron, rule, f, what), 1e-14) << what;
    // det J varies over a non-affine element.
    const auto det = f.detJ.to_vector();
    EXPECT_GT(*std::max_element(det.begin(), det.end()) - *std::min_element(det.begin(), det.end()), 0.1);
  }
  {
    Mesh m(2);
    m.add_vertex({0.0, 0.0});
    m.add_vertex({2.0, 0.1});
    m.add_vertex({1.7, 1.9});
    m.add_vertex({-0.2, 1.0});
    m.add_element(Geometry::Quadrilateral, {0, 1, 2, 3});
    const auto rule = quadrature(Geometry::Quadrilateral, 7);
    const auto f = geometric_factors(m, Geometry::Quadrilateral, rule, exec());
    const char* what = "";
    EXPECT_LE(gft::compare_with_reference(m, Geometry::Quadrilateral, rule, f, what), 1e-14) << what;
  }
}

// sum_e sum_q w_q det J = volume of the box, exactly for these rules (det J of a multilinear
// map has degree <= 2 per variable, constant on simplices; rules of degree >= 3 integrate it
// exactly). Tolerance 1e-12 relative: each of the <= 6000 positive terms carries a few ulps,
// so the sum is within 6000 * 2^-53 ~ 7e-13 of the exact volume.
TEST_P(GeometricFactorsTest, WeightedDeterminantsSumToTheBoxVolume) {
  const std::array<double, 3> size{2.0, 1.5, 0.5};
  for (const auto& c : gft::all_cases()) {
    SCOPED_TRACE(name(c.g));
    const Mesh m = gft::box(c.g, c.n, c.perturb, 11, size);
    const auto f = geometric_factors(m, c.g, quadrature(c.g, 3), exec(),
                                     GeometricFactorFlags::WDetJ | GeometricFactorFlags::DetJ);
    double volume = 1;
    for (int k = 0; k < dim(c.g); ++k) volume *= size[std::size_t(k)];
    EXPECT_NEAR(gft::host_sum(f.wdetJ), volume, 1e-12 * volume);
    // The same with the library's own reduction on the backend.
    Array<double, 1> flat("flat", {f.wdetJ.size()}, space());
    detail::copy_bytes(flat.data(), space(), f.wdetJ.data(), f.wdetJ.space(), f.wdetJ.bytes());
    EXPECT_NEAR(sum(exec(), flat), volume, 1e-12 * volume);
  }
}

// Jinv J = I (dim x dim) everywhere, and J Jinv = I when J is square. Tolerance: a product of
// dim terms, each with relative error of a few ulps of |J| |Jinv|: 16 * 2^-53 * dim * |J| |Jinv|.
TEST_P(GeometricFactorsTest, InverseTimesJacobianIsTheIdentity) {
  std::vector<std::pair<Mesh, Geometry>> meshes;
  for (const auto& c : gft::all_cases()) meshes.emplace_back(gft::box(c.g, c.n, c.perturb), c.g);
  {  // embedded: a bent strip of quadrilaterals in 3-D and a polyline in 2-D
    Mesh s(3);
    for (int i = 0; i <= 3; ++i)
      for (int j = 0; j <= 1; ++j) s.add_vertex({double(i), double(j), 0.3 * i * i + 0.2 * j * i});
    for (int i = 0; i < 3; ++i) s.add_element(Geometry::Quadrilateral, {2 * i, 2 * i + 2, 2 * i + 3, 2 * i + 1});
    meshes.emplace_back(std::move(s), Geometry::Quadrilateral);
    Mesh p(2);
    for (int i = 0; i <= 4; ++i) p.add_vertex({std::cos(0.4 * i), std::sin(0.4 * i)});
    for (int i = 0; i < 4; ++i) p.add_element(Geometry::Segment, {i, i + 1});
    meshes.emplace_back(std::move(p), Geometry::Segment);
  }
  for (const auto& [m, g] : meshes) {
    SCOPED_TRACE(std::string(name(g)) + " in " + std::to_string(m.space_dim()) + "-D");
    const gft::HostFactors h(geometric_factors(m, g, quadrature(g, 4), exec()));
    const int d = dim(g), sd = m.space_dim();
    double worst = 0;
    for (index_t e = 0; e < h.J.extent(0); ++e)
      for (index_t q = 0; q < h.J.extent(3); ++q) {
        double nJ = 0, nI = 0;
        for (int r = 0; r < sd; ++r)
          for (int c = 0; c < d; ++c) {
            nJ = std::max(nJ, std::fabs(h.J(e, r, c, q)));
            nI = std::max(nI, std::fabs(h.Jinv(e, c, r, q)));
          }
        const double tol = 16 * 1.1e-16 * sd * nJ * nI;
        for (int i = 0; i < d; ++i)
          for (int j = 0; j < d; ++j) {
            double s = 0;
            for (int r = 0; r < sd; ++r) s += h.Jinv(e, i, r, q) * h.J(e, r, j, q);
            worst = std::max(worst, std::fabs(s - (i == j)) / tol);
          }
        if (d == sd)
          for (int i = 0; i < d; ++i)
            for (int j = 0; j < d; ++j) {
              double s = 0;
              for (int c = 0; c < d; ++c) s += h.J(e, i, c, q) * h.Jinv(e, c, j, q);
              worst = std::max(worst, std::fabs(s - (i == j)) / tol);
            }
      }
    EXPECT_LE(worst, 1.0) << "error / tolerance";
  }
}

// D = w det J Jinv Jinv^T, from the returned Jinv, in both triangles (i, j) and (j, i) of the
// packed storage; D positive definite (Cholesky pivots > 0). Tolerance 1e-14 relative: the
// same operations in another order, a few ulps.
TEST_P(GeometricFactorsTest, DIsSymmetricPositiveDefinite) {
  for (const auto& c : gft::all_cases()) {
    SCOPED_TRACE(name(c.g));
    const Mesh m = gft::box(c.g, c.n, c.perturb);
    const auto rule = quadrature(c.g, 5);
    const gft::HostFactors h(geometric_factors(m, c.g, rule, exec()));
    const int d = dim(c.g);
    double worst = 0;
    int not_positive = 0;
    for (index_t e = 0; e < h.D.extent(0); ++e)
      for (int q = 0; q < int(rule.size()); ++q) {
        gft::Mat Dm{}, R{};
        for (int i = 0; i < d; ++i)
          for (int j = 0; j < d; ++j) {
            Dm[i][j] = h.D(e, packed_symmetric_index(d, i, j), q);
            for (int r = 0; r < d; ++r) R[i][j] += h.Jinv(e, i, r, q) * h.Jinv(e, j, r, q);
            R[i][j] *= h.wdetJ(e, q);
          }
        for (int i = 0; i < d; ++i)
          for (int j = 0; j < d; ++j) worst = std::max(worst, std::fabs(Dm[i][j] - R[i][j]) / gft::max_abs(R));
        // Cholesky
        for (int k = 0; k < d; ++k) {
          double p = Dm[k][k];
          for (int s = 0; s < k; ++s) p -= Dm[k][s] * Dm[k][s];
          if (!(p > 0)) {
            ++not_positive;
            break;
          }
          p = std::sqrt(p);
          Dm[k][k] = p;
          for (int i = k + 1; i < d; ++i) {
            double v = Dm[i][k];
            for (int s = 0; s < k; ++s) v -= Dm[i][s] * Dm[k][s];
            Dm[i][k] = v / p;
          }
        }
      }
    EXPECT_LE(worst, 1e-14);
    EXPECT_EQ(not_positive, 0);
  }
}

// Triangles in 3-D: det J is twice the triangle's area (the area factor of the reference
// triangle, area 1/2), and sum w det J is the surface area. Areas here come from the cross
// product of the edge vectors; 1e-14 relative covers a few roundings on each side.
TEST_P(GeometricFactorsTest, EmbeddedTrianglesGiveTheAreaFactor) {
  Mesh m(3);
  const int n = 4;
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> u(0.0, 0.4);
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) m.add_vertex({double(i) / n, double(j) / n, u(gen)});
  auto vid = [&](int i, int j) { return index_t(j * (n + 1) + i); };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      m.add_element(Geometry::Triangle, {vid(i, j), vid(i + 1, j), vid(i + 1, j + 1)});
      m.add_element(Geometry::Triangle, {vid(i, j), vid(i + 1, j + 1), vid(i, j + 1)});
    }
  const auto rule = quadrature(Geometry::Triangle, 4);
  const auto f = geometric_factors(m, Geometry::Triangle, rule, exec());
  EXPECT_EQ(f.space_dim, 3);
  EXPECT_EQ(f.dim, 2);
  EXPECT_EQ(f.J.extent(1), 3);
  EXPECT_EQ(f.Jinv.extent(2), 3);
  const gft::HostFactors h(f);
  double total = 0, worst = 0;
  for (index_t e = 0; e < m.num_elements(); ++e) {
    const auto vs = m.element_vertices(e);
    double a[3], b[3];
    for (int r = 0; r < 3; ++r) {
      a[r] = m.vertex(vs[1], r) - m.vertex(vs[0], r);
      b[r] = m.vertex(vs[2], r) - m.vertex(vs[0], r);
    }
    const double cx = a[1] * b[2] - a[2] * b[1], cy = a[2] * b[0] - a[0] * b[2], cz = a[0] * b[1] - a[1] * b[0];
    const double area = 0.5 * std::sqrt(cx * cx + cy * cy + cz * cz);
    total += area;
    for (int q = 0; q < int(rule.size()); ++q) worst = std::max(worst, std::fabs(h.detJ(e, q) - 2 * area) / (2 * area));
  }
  EXPECT_LE(worst, 1e-14);
  // Sum of 32 * 6 positive terms: 1e-13 relative covers 200 ulps of accumulation.
  EXPECT_NEAR(gft::host_sum(f.wdetJ), total, 1e-13 * total);
  EXPECT_GT(total, 1.0);  // not flat: the heights make the surface larger than its shadow
  // And the full comparison with the reference (pseudo-inverse, D) for the embedded case.
  const char* what = "";
  EXPECT_LE(gft::compare_with_reference(m, Geometry::Triangle, rule, f, what), 1e-14) << what;
}

// Segments in 2-D and 3-D: det J is the segment's length.
TEST_P(GeometricFactorsTest, EmbeddedSegmentsGiveTheirLength) {
  for (int sd : {2, 3}) {
    Mesh m(sd);
    const int n = 5;
    for (int i = 0; i <= n; ++i) {
      const double t = 0.5 * i;
      if (sd == 2) m.add_vertex({std::cos(t), std::sin(t)});
      else m.add_vertex({std::cos(t), std::sin(t), 0.3 * t});
    }
    for (int i = 0; i < n; ++i) m.add_element(Geometry::Segment, {i, i + 1});
    const auto rule = quadrature(Geometry::Segment, 3);
    const auto f = geometric_factors(m, Geometry::Segment, rule, exec());
    const gft::HostFactors h(f);
    double worst = 0;
    for (index_t e = 0; e < n; ++e) {
      double len2 = 0;
      for (int r = 0; r < sd; ++r) len2 += std::pow(m.vertex(e + 1, r) - m.vertex(e, r), 2);
      for (int q = 0; q < int(rule.size()); ++q)
        worst = std::max(worst, std::fabs(h.detJ(e, q) - std::sqrt(len2)) / std::sqrt(len2));
    }
    EXPECT_LE(worst, 1e-14);  // one square root and a few sums: a few ulps
    const char* what = "";
    EXPECT_LE(gft::compare_with_reference(m, Geometry::Segment, rule, f, what), 1e-14) << what;
  }
}

// An inverted element (listed clockwise) is named by its mesh index, with its det J, also
// when other geometries come first in the mesh's numbering.
TEST_P(GeometricFactorsTest, InvertedElementIsNamedInTheError) {
  Mesh m(2);
  for (int j = 0; j <= 1; ++j)
    for (int i = 0; i <= 4; ++i) m.add_vertex({double(i), double(j)});
  m.add_element(Geometry::Triangle, {0, 1, 6});       // 0
  m.add_element(Geometry::Quadrilateral, {1, 2, 7, 6});  // 1
  m.add_element(Geometry::Triangle, {0, 6, 5});       // 2
  m.add_element(Geometry::Quadrilateral, {2, 7, 8, 3});  // 3: clockwise, det J = -1
  m.add_element(Geometry::Quadrilateral, {3, 4, 9, 8});  // 4
  const auto rule = quadrature(Geometry::Quadrilateral, 3);
  EXPECT_ERROR_MENTIONS(geometric_factors(m, Geometry::Quadrilateral, rule, exec()), "element 3", "quadrilateral",
                        "det J = -1", "1 of 3");
  // The kernel object's minimum sees it as well.
  const GeometricFactorKernel k(m, Geometry::Quadrilateral, rule, exec());
  EXPECT_DOUBLE_EQ(k.min_det(), -1.0);
  // The triangles are fine.
  EXPECT_NO_THROW(geometric_factors(m, Geometry::Triangle, quadrature(Geometry::Triangle, 2), exec()));
}

// Degenerate elements (det J = 0) are refused too, square and embedded.
TEST_P(GeometricFactorsTest, DegenerateElementIsRefused) {
  Mesh m(2);
  m.add_vertex({0.0, 0.0});
  m.add_vertex({1.0, 0.0});
  m.add_vertex({0.0, 1.0});
  m.add_vertex({2.0, 0.0});
  m.add_element(Geometry::Triangle, {0, 1, 2});
  m.add_element(Geometry::Triangle, {0, 1, 3});  // collinear
  EXPECT_ERROR_MENTIONS(geometric_factors(m, Geometry::Triangle, quadrature(Geometry::Triangle, 1), exec()),
                        "element 1", "det J = 0");
  Mesh s(3);
  s.add_vertex({0.0, 0.0, 0.0});
  s.add_vertex({1.0, 1.0, 1.0});
  s.add_vertex({2.0, 2.0, 2.0});
  s.add_element(Geometry::Triangle, {0, 1, 2});
  EXPECT_ERROR_MENTIONS(geometric_factors(s, Geometry::Triangle, quadrature(Geometry::Triangle, 1), exec()),
                        "element 0", "det J = 0");
}

// Asking for fewer arrays leaves the others empty and computes the same values (same code,
// same operations: identical bits).
TEST_P(GeometricFactorsTest, FlagsSelectTheArrays) {
  const Mesh m = gft::box(Geometry::Hexahedron, 2, 0.2);
  const auto rule = quadrature(Geometry::Hexahedron, 5);
  const auto all = geometric_factors(m, Geometry::Hexahedron, rule, exec());
  const auto onlyD = geometric_factors(m, Geometry::Hexahedron, rule, exec(), GeometricFactorFlags::D);
  EXPECT_EQ(onlyD.J.size(), 0);
  EXPECT_EQ(onlyD.detJ.size(), 0);
  EXPECT_EQ(onlyD.Jinv.size(), 0);
  EXPECT_EQ(onlyD.wdetJ.size(), 0);
  ASSERT_EQ(onlyD.D.extents(), all.D.extents());
  EXPECT_EQ(onlyD.D.to_vector(), all.D.to_vector());
  const auto onlyW = geometric_factors(m, Geometry::Hexahedron, rule, exec(), GeometricFactorFlags::WDetJ);
  EXPECT_EQ(onlyW.D.size(), 0);
  EXPECT_EQ(onlyW.wdetJ.to_vector(), all.wdetJ.to_vector());
  EXPECT_TRUE(has(GeometricFactorFlags::All, GeometricFactorFlags::D | GeometricFactorFlags::J));
  EXPECT_FALSE(has(GeometricFactorFlags::D, GeometricFactorFlags::D | GeometricFactorFlags::J));
}

// Every backend equals the serial one. Same operations in the same order; the GPU compiler
// may fuse a multiply and an add (FMA), which changes a result by about one ulp per
// operation, amplified by the condition number (< 10) of J: 1e-14 relative covers that.
TEST_P(GeometricFactorsTest, MatchesTheSerialBackend) {
  for (const auto& c : gft::all_cases()) {
    SCOPED_TRACE(name(c.g));
    const Mesh m = gft::box(c.g, c.n, c.perturb, 3);
    const auto rule = quadrature(c.g, 6);
    const auto a = geometric_factors(m, c.g, rule, exec());
    const auto s = geometric_factors(m, c.g, rule, Exec::serial());
    auto rel = [](const auto& x, const auto& y) {
      const auto u = x.to_vector(), v = y.to_vector();
      EXPECT_EQ(u.size(), v.size());
      double scale = 0, diff = 0;
      for (std::size_t i = 0; i < std::min(u.size(), v.size()); ++i) {
        scale = std::max(scale, std::fabs(v[i]));
        diff = std::max(diff, std::fabs(u[i] - v[i]));
      }
      return diff / scale;
    };
    EXPECT_LE(rel(a.J, s.J), 1e-14);
    EXPECT_LE(rel(a.detJ, s.detJ), 1e-14);
    EXPECT_LE(rel(a.Jinv, s.Jinv), 1e-14);
    EXPECT_LE(rel(a.D, s.D), 1e-14);
    EXPECT_LE(rel(a.wdetJ, s.wdetJ), 1e-14);
  }
}

// The kernel object: inputs in exec's space with the documented extents; repeated compute
// gives the same bits; min_det equals the smallest entry of detJ (same formula).
TEST_P(GeometricFactorsTest, KernelObjectComputesRepeatably) {
  const Mesh m = gft::box(Geometry::Quadrilateral, 3, 0.25);
  const auto rule = quadrature(Geometry::Quadrilateral, 5);
  const GeometricFactorKernel k(m, Geometry::Quadrilateral, rule, exec());
  EXPECT_EQ(k.coordinates().space(), space());
  EXPECT_EQ(k.coordinates().extents(), (std::array<index_t, 3>{9, 4, 2}));
  EXPECT_EQ(k.shape_gradients().extents(), (std::array<index_t, 3>{rule.size(), 4, 2}));
  auto out = k.allocate();
  out.detJ.fill(tessera::test::kNaN);
  k.compute(out);
  const auto first = out.detJ.to_vector();
  k.compute(out);
  EXPECT_EQ(out.detJ.to_vector(), first);
  // 1e-14: the reduction recomputes det J in another kernel; on a GPU its FMA choices may
  // differ by an ulp.
  EXPECT_NEAR(k.min_det(), *std::min_element(first.begin(), first.end()), 1e-14);
  EXPECT_NO_THROW(k.check());
  // Output arrays that do not fit are refused.
  auto other = GeometricFactorKernel(gft::box(Geometry::Quadrilateral, 2, 0.0), Geometry::Quadrilateral, rule,
                                     exec()).allocate();
  EXPECT_ERROR_MENTIONS(k.compute(other), "wrong extents", "allocate");
}

// The shape-function gradients reproduce linear functions: sum_v G(q, v, c) a_v = e_c for the
// reference vertices a_v, and sum_v G(q, v, c) = 0 (exact: sums of +-products of values in
// [0, 1] that cancel; 1e-15 allows one rounding).
TEST(GeometricFactorsShapes, GradientsReproduceTheIdentityMap) {
  const int corner_tri[3][2] = {{0, 0}, {1, 0}, {0, 1}};
  const int corner_tet[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (const auto& c : gft::all_cases()) {
    SCOPED_TRACE(name(c.g));
    const auto rule = quadrature(c.g, 5);
    const auto G = first_order_shape_gradients(c.g, rule.points);
    const int d = dim(c.g), nv = int(G.extent(1));
    auto coord = [&](int v, int r) -> double {
      switch (c.g) {
        case Geometry::Segment: return v;
        case Geometry::Triangle: return corner_tri[v][r];
        case Geometry::Tetrahedron: return corner_tet[v][r];
        case Geometry::Quadrilateral: return gft::kQuadCorner[v][r];
        case Geometry::Hexahedron: return gft::kHexCorner[v][r];
      }
      return 0;
    };
    for (index_t q = 0; q < rule.size(); ++q)
      for (int cc = 0; cc < d; ++cc) {
        double s = 0;
        for (int v = 0; v < nv; ++v) s += G(q, v, cc);
        EXPECT_NEAR(s, 0.0, 1e-15);
        for (int r = 0; r < d; ++r) {
          double t = 0;
          for (int v = 0; v < nv; ++v) t += G(q, v, cc) * coord(v, r);
          EXPECT_NEAR(t, r == cc ? 1.0 : 0.0, 1e-15);
        }
      }
  }
}

// Argument errors say what is wrong; a mesh without elements of the geometry gives empty
// arrays.
TEST_P(GeometricFactorsTest, ArgumentErrorsAndEmptySelections) {
  const Mesh m = gft::box(Geometry::Triangle, 2, 0.0);
  EXPECT_ERROR_MENTIONS(geometric_factors(m, Geometry::Triangle, quadrature(Geometry::Quadrilateral, 3), exec()),
                        "quadrature rule", "quadrilateral", "triangle");
  EXPECT_ERROR_MENTIONS(geometric_factors(m, Geometry::Hexahedron, quadrature(Geometry::Hexahedron, 3), exec()),
                        "hexahedron", "space dimension 2");
  const auto f = geometric_factors(m, Geometry::Quadrilateral, quadrature(Geometry::Quadrilateral, 3), exec());
  EXPECT_EQ(f.num_elements, 0);
  EXPECT_EQ(f.D.size(), 0);
  EXPECT_EQ(f.D.extent(1), 3);
}
