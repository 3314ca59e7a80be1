// Tests of tessera/fem/basis.hpp: H1 Lagrange bases on the five reference elements, the
// warp & blend simplex nodes, the orthonormal basis and the tables at quadrature points.

#include <gtest/gtest.h>

#include "fem_test_util.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <vector>

#include "tessera/fem/basis.hpp"
#include "tessera/fem/quadrature.hpp"
#include "tessera/fem/reference_element.hpp"

using tessera::Array;
using tessera::index_t;
using namespace tessera::fem;

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kMaxTestOrder = 10;
constexpr Geometry kAll[] = {Geometry::Segment, Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron,
                             Geometry::Hexahedron};

// Bases are cached: the tests visit every (geometry, order) pair several times.
const H1Basis& basis_of(Geometry g, int p) {
  static std::map<std::pair<int, int>, std::unique_ptr<H1Basis>> cache;
  auto& b = cache[{static_cast<int>(g), p}];
  if (!b) b = std::make_unique<H1Basis>(g, p);
  return *b;
}

// Tolerance for values of the basis (and of interpolants, relative to max |f|).
// - tensor elements: products of the barycentric 1-D formula, forward stable on GLL nodes with
//   error ~ eps (1 + Lambda) per factor (Lambda < 3 for p <= 10); 8 (p + 1) dim eps leaves a
//   margin of ~10.
// - simplices: phi = psi V^-1, whose rounding error is bounded by ~ eps cond(V) times the
//   size of the entries; cond_1(V) <= 1.5e3 for p <= 10 (printed by VandermondeCondition),
//   and we allow 10 eps cond_1(V) (measured errors are ~100x smaller).
double value_tol(const H1Basis& b) {
  if (is_tensor(b.geometry())) return 8.0 * (b.order() + 1) * b.dim() * kEps;
  return 10.0 * b.vandermonde_condition() * kEps;
}
// Gradients: rounding errors of the values are amplified by differentiation up to Markov's
// factor (2 p^2 on [0, 1]; about 2 sqrt(2) p^2 on the reference simplices, whose width is
// 1/sqrt(2)); we allow 8 p^2 times the value tolerance.
double grad_tol(const H1Basis& b) { return 8.0 * b.order() * b.order() * value_tol(b); }

// Uniformly distributed points inside the reference element (simplices: sorted uniforms,
// x = u1, y = u2 - u1, z = u3 - u2).
std::vector<double> random_points(Geometry g, int count, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int d = dim(g);
  std::vector<double> x;
  for (int q = 0; q < count; ++q) {
    double r[3] = {u(gen), u(gen), u(gen)};
    if (is_simplex(g)) {
      for (int a = 1; a < d; ++a)  // insertion sort of d <= 3 values
        for (int c = a; c > 0 && r[c] < r[c - 1]; --c) std::swap(r[c], r[c - 1]);
      for (int c = d - 1; c > 0; --c) r[c] -= r[c - 1];
    }
    for (int c = 0; c < d; ++c) x.push_back(r[c]);
  }
  return x;
}

// Barycentric coordinates of a reference point (simplices): lambda_0 = 1 - sum x, lambda_v = x_{v-1}.
std::array<double, 4> barycentric(Geometry g, const double* x) {
  const int d = dim(g);
  std::array<double, 4> l{1.0, 0.0, 0.0, 0.0};
  for (int c = 0; c < d; ++c) l[c + 1] = x[c], l[0] -= x[c];
  return l;
}

// A random polynomial sum c_abc x^a y^b z^c of total degree <= p (simplices) or degree <= p in
// each variable (tensor elements), with coefficients uniform in [-1, 1].
struct RandomPolynomial {
  int d = 1;
  std::vector<std::array<int, 3>> exps;
  std::vector<double> coef;

  RandomPolynomial(Geometry g, int p, unsigned seed) : d(dim(g)) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (const auto& e : lattice_nodes(g, p)) {  // the lattice enumerates exactly these exponents
      exps.push_back(e);
      coef.push_back(u(gen));
    }
  }
  // Sum of |c|: bounds |f| on the reference element, where every monomial is <= 1.
  double scale() const {
    double s = 0;
    for (double c : coef) s += std::abs(c);
    return s;
  }
  static double pw(double x, int k) { return k == 0 ? 1.0 : std::pow(x, k); }
  double value(const double* x) const {
    double s = 0;
    for (std::size_t t = 0; t < exps.size(); ++t) {
      double m = coef[t];
      for (int c = 0; c < d; ++c) m *= pw(x[c], exps[t][c]);
      s += m;
    }
    return s;
  }
  double derivative(const double* x, int dir) const {
    double s = 0;
    for (std::size_t t = 0; t < exps.size(); ++t) {
      if (exps[t][dir] == 0) continue;
      double m = coef[t] * exps[t][dir];
      for (int c = 0; c < d; ++c) m *= c == dir ? pw(x[c], exps[t][c] - 1) : pw(x[c], exps[t][c]);
      s += m;
    }
    return s;
  }
};

std::string where(Geometry g, int p) {
  std::ostringstream os;
  os << name(g) << " p=" << p;
  return os.str();
}

}  // namespace

TEST(H1Basis, SizesAndAccessors) {
  for (Geometry g : kAll)
    for (int p = 1; p <= kMaxTestOrder; ++p) {
      const H1Basis& b = basis_of(g, p);
      EXPECT_EQ(b.geometry(), g);
      EXPECT_EQ(b.order(), p);
      EXPECT_EQ(b.dim(), dim(g));
      EXPECT_EQ(b.size(), num_nodes(g, p)) << where(g, p);
      EXPECT_EQ(b.nodes().extent(0), b.size());
      EXPECT_EQ(b.nodes().extent(1), b.dim());
      EXPECT_EQ(b.nodes().space(), tessera::Space::Host);
    }
  EXPECT_EQ(max_basis_order(Geometry::Hexahedron), max_basis_order_1d);
  EXPECT_EQ(max_basis_order(Geometry::Triangle), max_simplex_order);
  EXPECT_GE(max_simplex_order, 20);
}

TEST(H1Basis, TensorNodesAreGllProducts) {
  for (Geometry g : {Geometry::Segment, Geometry::Quadrilateral, Geometry::Hexahedron})
    for (int p = 1; p <= kMaxTestOrder; ++p) {
      const H1Basis& b = basis_of(g, p);
      const auto x = gauss_lobatto_legendre(p + 1).nodes;
      const int n1 = p + 1, d = dim(g);
      for (index_t n = 0; n < b.size(); ++n) {
        const int ijk[3] = {int(n % n1), int(n / n1 % n1), int(n / n1 / n1)};
        for (int c = 0; c < d; ++c) EXPECT_EQ(b.nodes()(n, c), x[ijk[c]]) << where(g, p) << " node " << n;
      }
    }
}

TEST(H1Basis, PartitionOfUnity) {
  for (Geometry g : kAll)
    for (int p = 1; p <= kMaxTestOrder; ++p) {
      const H1Basis& b = basis_of(g, p);
      const auto pts = random_points(g, 16, 100 + p);
      const auto B = b.eval(pts);
      const auto G = b.gradients(pts);
      for (index_t q = 0; q < B.extent(0); ++q) {
        double s = 0, gs[3] = {0, 0, 0};
        for (index_t i = 0; i < b.size(); ++i) {
          s += B(q, i);
          for (int c = 0; c < b.dim(); ++c) gs[c] += G(q, i, c);
        }
        EXPECT_NEAR(s, 1.0, value_tol(b)) << where(g, p);
        for (int c = 0; c < b.dim(); ++c) EXPECT_NEAR(gs[c], 0.0, grad_tol(b)) << where(g, p) << " dir " << c;
      }
    }
}

TEST(H1Basis, Nodality) {
  for (Geometry g : kAll)
    for (int p = 1; p <= kMaxTestOrder; ++p) {
      const H1Basis& b = basis_of(g, p);
      const auto B = b.eval(b.nodes());
      double err = 0;
      for (index_t j = 0; j < b.size(); ++j)
        for (index_t i = 0; i < b.size(); ++i) err = std::max(err, std::abs(B(j, i) - (i == j ? 1.0 : 0.0)));
      EXPECT_LE(err, value_tol(b)) << where(g, p);
    }
}

// Centred differences (f(x + h e) - f(x - h e)) / 2h have truncation error h^2/6 |f'''| and
// rounding error ~ eps max|f| / h. For a degree-p polynomial on [0, 1], Markov's inequality
// bounds |f'''| <= 2^3 T_p'''(1) max|f| (8 * 63360 max|f| = 5e5 max|f| at p = 10), and
// max|phi_i| <= Lebesgue constant (< 10 for these nodes and orders). With h = 1e-5 the
// truncation error is <= 1.7e-11 * 5e5 * 10 = 8e-5 and the rounding error ~ 2e-10; we allow
// 1e-4 (1 + |grad|), far below the O(1) error of a wrong gradient.
TEST(H1Basis, GradientsMatchFiniteDifferences) {
  const double h = 1e-5;
  for (Geometry g : kAll)
    for (int p = 1; p <= kMaxTestOrder; ++p) {
      const H1Basis& b = basis_of(g, p);
      const int d = b.dim();
      auto pts = random_points(g, 4, 200 + p);
      // The vertices too: on the simplices they are the singular points of the collapsed
      // coordinates (the stencil leaves the element there, which is fine for polynomials).
      for (int v = 0; v < num_vertices(g); ++v) {
        const auto V = reference_vertex(g, v);
        for (int c = 0; c < d; ++c) pts.push_back(V[c]);
      }
      const auto G = b.gradients(pts);
      const index_t np = G.extent(0), n = b.size();
      std::vector<double> vp(n), vm(n);
      for (index_t q = 0; q < np; ++q)
        for (int c = 0; c < d; ++c) {
          std::vector<double> xp(pts.begin() + q * d, pts.begin() + (q + 1) * d), xm = xp;
          xp[c] += h, xm[c] -= h;
          b.eval(xp, vp);
          b.eval(xm, vm);
          for (index_t i = 0; i < n; ++i) {
            const double fd = (vp[i] - vm[i]) / (2 * h);
            ASSERT_NEAR(G(q, i, c), fd, 1e-4 * (1 + std::abs(fd)))
                << where(g, p) << " point " << q << " function " << i << " dir " << c;
          }
        }
    }
}

// Simplex gradients at the vertices by the collapsed-coordinate basis must equal those of the
// same basis evaluated through interior points converging to the vertex (the gradients are
// polynomials, hence continuous): compare with a point 1e-11 inside along the median.
TEST(H1Basis, SimplexGradientsAtVerticesAreContinuous) {
  for (Geometry g : {Geometry::Triangle, Geometry::Tetrahedron})
    for (int p = 1; p <= kMaxTestOrder; ++p) {
      const H1Basis& b = basis_of(g, p);
      const int d = b.dim();
      const index_t n = b.size();
      std::vector<double> v(n), gv(n * d), w(n), gw(n * d);
      for (int vert = 0; vert < num_vertices(g); ++vert) {
        const auto V = reference_vertex(g, vert);
        std::vector<double> x(V.begin(), V.begin() + d), y(d);
        const double centroid = 1.0 / (d + 1), t = 1e-11;
        for (int c = 0; c < d; ++c) y[c] = (1 - t) * x[c] + t * centroid;
        b.eval(x, v, gv);
        b.eval(y, w, gw);
        for (index_t i = 0; i < n * d; ++i) {
          ASSERT_TRUE(std::isfinite(gv[i])) << where(g, p) << " vertex " << vert;
          // |grad phi(x) - grad phi(y)| <= |x - y| max|Hessian| <= 1e-11 * (8 p^2)^2 * 10 = 6.4e-5
          // at p = 10 (Markov factor 8 p^2 per derivative, max|phi| < 10).
          EXPECT_NEAR(gv[i], gw[i], 1e-4 * (1 + std::abs(gv[i]))) << where(g, p) << " vertex " << vert;
        }
      }
    }
}

TEST(H1Basis, ReproducesPolynomialsOfDegreeP) {
  for (Geometry g : kAll)
    for (int p = 1; p <= kMaxTestOrder; ++p) {
      const H1Basis& b = basis_of(g, p);
      const int d = b.dim();
      const RandomPolynomial f(g, p, 300 + p);
      std::vector<double> u(b.size());
      for (index_t i = 0; i < b.size(); ++i) u[i] = f.value(&b.nodes()(i, 0));
      const auto pts = random_points(g, 8, 400 + p);
      const auto B = b.eval(pts);
      const auto G = b.gradients(pts);
      // The interpolant's error is the basis' error times sum |u_i| <= n max|f| <= n * scale.
      const double n = double(b.size()), s = f.scale();
      for (index_t q = 0; q < B.extent(0); ++q) {
        double val = 0, gr[3] = {0, 0, 0};
        for (index_t i = 0; i < b.size(); ++i) {
          val += u[i] * B(q, i);
          for (int c = 0; c < d; ++c) gr[c] += u[i] * G(q, i, c);
        }
        const double* x = &pts[q * d];
        EXPECT_NEAR(val, f.value(x), n * s * value_tol(b)) << where(g, p);
        for (int c = 0; c < d; ++c) EXPECT_NEAR(gr[c], f.derivative(x, c), n * s * grad_tol(b)) << where(g, p);
      }
    }
}

// A polynomial of degree p + 1 is not reproduced: the tests above could not pass on an
// interpolant that ignores the nodes.
TEST(H1Basis, DoesNotReproduceDegreePPlusOne) {
  for (Geometry g : kAll) {
    const int p = 3;
    const H1Basis& b = basis_of(g, p);
    std::vector<double> u(b.size());
    for (index_t i = 0; i < b.size(); ++i) u[i] = std::pow(b.nodes()(i, 0), p + 1);
    const double x[3] = {0.3, 0.2, 0.1};
    std::vector<double> v(b.size());
    b.eval(std::span<const double>(x, b.dim()), v);
    double val = 0;
    for (index_t i = 0; i < b.size(); ++i) val += u[i] * v[i];
    // The interpolation error of x^4 at x = 0.3 is O(1e-3); far above rounding.
    EXPECT_GT(std::abs(val - std::pow(0.3, p + 1)), 1e-5) << name(g);
  }
}

// (a) The node of lattice point L lies on the entity classify_node reports (and in its interior).
TEST(H1Basis, NodesLieOnTheirEntities) {
  const double tol = 4 * kEps;  // vertices and edges are placed exactly; faces by affine maps of O(1) numbers
  for (Geometry g : kAll)
    for (int p = 1; p <= kMaxTestOrder; ++p) {
      const H1Basis& b = basis_of(g, p);
      const int d = b.dim();
      const auto lattice = lattice_nodes(g, p);
      for (index_t i = 0; i < b.size(); ++i) {
        const NodeLocation loc = classify_node(g, p, lattice[i]);
        const double* x = &b.nodes()(i, 0);
        // Vertices of the entity.
        std::vector<int> verts;
        if (loc.entity_dim == 0) verts = {loc.entity};
        else if (loc.entity_dim == 1) verts = {edge_vertices(g, loc.entity)[0], edge_vertices(g, loc.entity)[1]};
        else if (loc.entity_dim == 2 && d == 3) {
          const auto fv = face_vertices(g, loc.entity);
          verts.assign(fv.begin(), fv.end());
        } else
          for (int v = 0; v < num_vertices(g); ++v) verts.push_back(v);
        if (is_simplex(g)) {
          const auto l = barycentric(g, x);
          for (int v = 0; v <= d; ++v) {
            const bool in = std::find(verts.begin(), verts.end(), v) != verts.end();
            if (!in) EXPECT_NEAR(l[v], 0.0, tol) << where(g, p) << " node " << i << " vertex " << v;
            else if (verts.size() > 1) EXPECT_GT(l[v], 1e-3) << where(g, p) << " node " << i << " vertex " << v;
            else EXPECT_NEAR(l[v], 1.0, tol) << where(g, p) << " node " << i;
          }
        } else {
          // Tensor entities are axis-aligned: a coordinate the entity's vertices share is fixed,
          // the others lie strictly inside (0, 1).
          for (int c = 0; c < d; ++c) {
            const double c0 = reference_vertex(g, verts[0])[c];
            bool shared = true;
            for (int v : verts) shared = shared && reference_vertex(g, v)[c] == c0;
            if (shared) EXPECT_EQ(x[c], c0) << where(g, p) << " node " << i << " coord " << c;
            else {
              EXPECT_GT(x[c], 0.0) << where(g, p) << " node " << i;
              EXPECT_LT(x[c], 1.0) << where(g, p) << " node " << i;
            }
          }
        }
      }
    }
}

// (b) Edge nodes are the GLL points of [0, 1] placed along the edge: lattice t on edge {a, b}
// sits at V_a + x_GLL[t] (V_b - V_a).
TEST(H1Basis, EdgeNodesAreGllPoints) {
  for (Geometry g : kAll)
    for (int p = 2; p <= kMaxTestOrder; ++p) {
      const H1Basis& b = basis_of(g, p);
      const auto x = gauss_lobatto_legendre(p + 1).nodes;
      const auto lattice = lattice_nodes(g, p);
      int count = 0;
      for (index_t i = 0; i < b.size(); ++i) {
        const NodeLocation loc = classify_node(g, p, lattice[i]);
        if (loc.entity_dim != 1) continue;  // (the segment's interior nodes lie on its edge 0)
        const auto ev = edge_vertices(g, loc.entity);
        const auto A = reference_vertex(g, ev[0]), B = reference_vertex(g, ev[1]);
        const int t = loc.coords[0];
        for (int c = 0; c < dim(g); ++c)
          // 1 ulp of 1: x_GLL[t] is computed by a subtraction 1 - x on reversed edges.
          EXPECT_NEAR(b.nodes()(i, c), A[c] + x[t] * (B[c] - A[c]), kEps)
              << where(g, p) << " node " << i << " edge " << loc.entity << " t " << t;
        ++count;
      }
      EXPECT_EQ(count, num_edges(g) * (p - 1)) << where(g, p);
    }
}

// (c1) The tetrahedron's nodes on each face are the triangle's nodes mapped affinely onto it:
// triangle node (i, j) goes to the tetrahedron's lattice point (p - i - j) V_a + i V_b + j V_c.
TEST(H1Basis, TetrahedronFacesCarryTriangleNodes) {
  for (int p = 1; p <= kMaxTestOrder; ++p) {
    const H1Basis& tri = basis_of(Geometry::Triangle, p);
    const H1Basis& tet = basis_of(Geometry::Tetrahedron, p);
    const auto tl = lattice_nodes(Geometry::Triangle, p);
    const auto kl = lattice_nodes(Geometry::Tetrahedron, p);
    std::map<std::array<int, 3>, index_t> index;
    for (index_t i = 0; i < index_t(kl.size()); ++i) index[kl[i]] = i;
    for (int f = 0; f < num_faces(Geometry::Tetrahedron); ++f) {
      const auto fv = face_vertices(Geometry::Tetrahedron, f);
      std::array<std::array<double, 3>, 3> V;
      for (int k = 0; k < 3; ++k) V[k] = reference_vertex(Geometry::Tetrahedron, fv[k]);
      for (index_t n = 0; n < index_t(tl.size()); ++n) {
        const int i = tl[n][0], j = tl[n][1];
        std::array<int, 3> L;
        for (int c = 0; c < 3; ++c) L[c] = int((p - i - j) * V[0][c] + i * V[1][c] + j * V[2][c]);
        ASSERT_TRUE(index.count(L)) << "p=" << p;
        const double xt = tri.nodes()(n, 0), yt = tri.nodes()(n, 1);
        for (int c = 0; c < 3; ++c) {
          const double mapped = (1 - xt - yt) * V[0][c] + xt * V[1][c] + yt * V[2][c];
          // Two affine evaluations of O(1) numbers: a few ulps.
          EXPECT_NEAR(tet.nodes()(index[L], c), mapped, 8 * kEps) << "p=" << p << " face " << f << " node " << n;
        }
      }
    }
  }
}

// (c2) The node sets are invariant under every permutation of the vertices: the affine map
// sending V_k to V_perm(k) maps the node of lattice L onto the node of the mapped lattice point.
TEST(H1Basis, SimplexNodesAreInvariantUnderVertexPermutations) {
  for (Geometry g : {Geometry::Triangle, Geometry::Tetrahedron})
    for (int p = 1; p <= kMaxTestOrder; ++p) {
      const H1Basis& b = basis_of(g, p);
      const int d = dim(g), nv = d + 1;
      const auto lattice = lattice_nodes(g, p);
      std::map<std::array<int, 3>, index_t> index;
      for (index_t i = 0; i < index_t(lattice.size()); ++i) index[lattice[i]] = i;
      std::vector<int> perm(nv);
      std::iota(perm.begin(), perm.end(), 0);
      int count = 0;
      do {
        ++count;
        for (index_t i = 0; i < b.size(); ++i) {
          // Barycentric integers of L, permuted: vertex k's weight goes to vertex perm[k].
          const auto& L = lattice[i];
          std::array<int, 4> m{p - L[0] - L[1] - L[2], L[0], L[1], L[2]}, pm{};
          for (int k = 0; k < nv; ++k) pm[perm[k]] = m[k];
          const std::array<int, 3> PL{pm[1], d > 1 ? pm[2] : 0, d > 2 ? pm[3] : 0};
          const auto l = barycentric(g, &b.nodes()(i, 0));
          std::array<double, 4> pl{};
          for (int k = 0; k < nv; ++k) pl[perm[k]] = l[k];
          for (int c = 0; c < d; ++c)
            // Exact symmetry up to rounding in the warp sums: ~10 ulps.
            EXPECT_NEAR(b.nodes()(index.at(PL), c), pl[c + 1], 1e-14) << where(g, p) << " node " << i;
        }
      } while (std::next_permutation(perm.begin(), perm.end()));
      EXPECT_EQ(count, d == 2 ? 6 : 24);
    }
}

TEST(H1Basis, OrthonormalBasisIsOrthonormal) {
  for (Geometry g : kAll)
    for (int p = 1; p <= 6; ++p) {
      const auto rule = quadrature(g, 2 * p);
      const index_t n = num_nodes(g, p);
      const int d = dim(g);
      std::vector<double> gram(n * n, 0.0), v(n);
      for (index_t q = 0; q < rule.size(); ++q) {
        orthonormal_basis(g, p, std::span<const double>(&rule.points(q, 0), d), v);
        for (index_t i = 0; i < n; ++i)
          for (index_t j = 0; j < n; ++j) gram[i * n + j] += rule.weights(q) * v[i] * v[j];
      }
      for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < n; ++j)
          // Exact quadrature of degree 2p; sums of O(n) terms of size O(1): 1e-12 is ~100 n eps.
          EXPECT_NEAR(gram[i * n + j], i == j ? 1.0 : 0.0, 1e-12) << where(g, p) << " (" << i << ", " << j << ")";
    }
}

// Condition numbers of the Vandermonde matrices (1-norm), p = 1..10.
// Bound: cond_1(V) <= n cond_2(V) and cond_2(V)^2 = cond_2(M), M = V^-T V^-1 the nodal mass
// matrix (psi is orthonormal). For nodes with a small Lebesgue constant the nodal mass matrix
// is well conditioned (its condition number grows like a low power of p, far below n^2 =
// number of nodes squared), so we assert cond_1(V) <= n^2 (n = number of nodes; for tensor
// elements the 1-D matrix with n = p + 1). Equispaced triangle nodes break this bound from
// p = 16 on (the comparison at p = 10 is in the next test).
TEST(H1Basis, VandermondeCondition) {
  std::ostringstream table;
  table << "Vandermonde 1-norm condition numbers (orthonormal basis; tensor elements: 1-D GLL)\n";
  table << std::setw(4) << "p";
  for (Geometry g : kAll) table << std::setw(15) << name(g);
  table << "\n";
  for (int p = 1; p <= kMaxTestOrder; ++p) {
    table << std::setw(4) << p;
    for (Geometry g : kAll) {
      const H1Basis& b = basis_of(g, p);
      const double c = b.vandermonde_condition();
      const double n = is_tensor(g) ? p + 1 : double(b.size());
      table << std::setw(15) << std::setprecision(4) << c;
      EXPECT_GE(c, 1.0) << where(g, p);
      EXPECT_LE(c, n * n) << where(g, p);
      if (is_simplex(g)) {
        // The same value through the free function on the basis' nodes.
        EXPECT_NEAR(vandermonde_condition(g, p, b.nodes()), c, 1e-10 * c) << where(g, p);
      }
    }
    table << "\n";
  }
  std::cout << table.str();
  RecordProperty("vandermonde_condition", table.str());
  // The tensor value is that of the 1-D GLL nodes.
  Array<double, 2> x1("x1", {6, 1});
  const auto gll = gauss_lobatto_legendre(6).nodes;
  for (int i = 0; i < 6; ++i) x1(i, 0) = gll[i];
  EXPECT_DOUBLE_EQ(basis_of(Geometry::Hexahedron, 5).vandermonde_condition(),
                   vandermonde_condition(Geometry::Segment, 5, x1));
}

TEST(H1Basis, WarpBlendBeatsEquispacedNodes) {
  const int p = 10;
  for (Geometry g : {Geometry::Triangle, Geometry::Tetrahedron}) {
    const double wb = basis_of(g, p).vandermonde_condition();
    const double eq = vandermonde_condition(g, p, equispaced_nodes(g, p));
    std::cout << name(g) << " p = " << p << ": cond_1(V) warp & blend " << wb << ", equispaced " << eq << "\n";
    RecordProperty(std::string(name(g)) + "_p10_equispaced_over_warp_blend", std::to_string(eq / wb));
    // Equispaced simplex nodes degrade exponentially; at p = 10 the triangle is already worse
    // by a factor of about 3, the tetrahedron by about 2 (asserted with some margin).
    EXPECT_GT(eq, (g == Geometry::Triangle ? 2.0 : 1.4) * wb) << name(g);
  }
}

namespace {

// Lebesgue constant max_x sum_i |l_i(x)| of the Lagrange basis of arbitrary nodes, estimated on
// the order-m lattice of the element. Independent of H1Basis: l(x) = V^-T psi(x), with V^-T
// formed by Gauss-Jordan elimination with partial pivoting here.
double lebesgue_estimate(Geometry g, int p, const Array<double, 2>& nodes, int m) {
  const int n = int(num_nodes(g, p)), d = dim(g);
  std::vector<double> A(n * n), I(n * n, 0.0), v(n);
  for (int i = 0; i < n; ++i) {
    orthonormal_basis(g, p, std::span<const double>(&nodes(i, 0), d), v);
    for (int k = 0; k < n; ++k) A[k * n + i] = v[k];  // A = V^T
    I[i * n + i] = 1.0;
  }
  for (int k = 0; k < n; ++k) {
    int r = k;
    for (int i = k + 1; i < n; ++i)
      if (std::abs(A[i * n + k]) > std::abs(A[r * n + k])) r = i;
    for (int j = 0; j < n; ++j) std::swap(A[k * n + j], A[r * n + j]), std::swap(I[k * n + j], I[r * n + j]);
    const double piv = A[k * n + k];
    for (int j = 0; j < n; ++j) A[k * n + j] /= piv, I[k * n + j] /= piv;
    for (int i = 0; i < n; ++i) {
      const double f = A[i * n + k];
      if (i == k || f == 0.0) continue;
      for (int j = 0; j < n; ++j) A[i * n + j] -= f * A[k * n + j], I[i * n + j] -= f * I[k * n + j];
    }
  }
  double best = 0;
  for (const auto& L : lattice_nodes(g, m)) {
    const double x[3] = {double(L[0]) / m, double(L[1]) / m, double(L[2]) / m};
    orthonormal_basis(g, p, std::span<const double>(x, d), v);
    double s = 0;
    for (int i = 0; i < n; ++i) {
      double li = 0;
      for (int k = 0; k < n; ++k) li += I[i * n + k] * v[k];
      s += std::abs(li);
    }
    best = std::max(best, s);
  }
  return best;
}

}  // namespace

// The optimised blend parameters pay off in the Lebesgue constant, which is what Warburton's
// alpha minimises on the triangle: optimised alpha <= alpha = 0 < equispaced.
TEST(H1Basis, WarpBlendLebesgueConstants) {
  for (int p = 6; p <= 10; ++p) {
    const Geometry g = Geometry::Triangle;
    const int m = 60;  // 1891 sample points; the estimate is a lower bound, within ~2% here
    const double opt = lebesgue_estimate(g, p, basis_of(g, p).nodes(), m);
    const double a0 = lebesgue_estimate(g, p, warp_blend_nodes(g, p, 0.0), m);
    const double eq = lebesgue_estimate(g, p, equispaced_nodes(g, p), m);
    std::cout << "triangle p = " << p << ": Lebesgue constant >= " << opt << " (alpha = 0: " << a0
              << ", equispaced: " << eq << ")\n";
    EXPECT_LT(opt, a0) << "p=" << p;
    EXPECT_LT(2 * opt, eq) << "p=" << p;
    // The paper's optimised p = 10 triangle has a Lebesgue constant of about 6.7.
    if (p == 10) {
      EXPECT_LT(opt, 7.0);
    }
  }
  // Same ordering on the tetrahedron at p = 6 (coarser sampling: 1771 points).
  const Geometry t = Geometry::Tetrahedron;
  const double opt = lebesgue_estimate(t, 6, basis_of(t, 6).nodes(), 20);
  const double eq = lebesgue_estimate(t, 6, equispaced_nodes(t, 6), 20);
  EXPECT_LT(opt, eq);
}

// The largest supported simplex order stays accurate (the tetrahedron at p = 20 takes seconds
// to set up, so the triangle stands in for it here).
TEST(H1Basis, LargestTriangleOrderIsAccurate) {
  const H1Basis b(Geometry::Triangle, max_simplex_order);
  const auto B = b.eval(b.nodes());
  double err = 0;
  for (index_t j = 0; j < b.size(); ++j)
    for (index_t i = 0; i < b.size(); ++i) err = std::max(err, std::abs(B(j, i) - (i == j ? 1.0 : 0.0)));
  EXPECT_LE(err, value_tol(b));  // 10 eps cond_1(V), cond_1(V) ~ 2e3 here
  const auto pts = random_points(Geometry::Triangle, 8, 11);
  const auto V = b.eval(pts);
  for (index_t q = 0; q < V.extent(0); ++q) {
    double s = 0;
    for (index_t i = 0; i < b.size(); ++i) s += V(q, i);
    EXPECT_NEAR(s, 1.0, value_tol(b));
  }
}

TEST(H1Basis, WarpBlendParameters) {
  // alpha is chosen per order; the tetrahedron's faces use the triangle's distribution, and
  // alpha = 0 is the pure warp (still GLL on edges).
  EXPECT_DOUBLE_EQ(warp_blend_alpha(Geometry::Triangle, 1), 0.0);
  EXPECT_GT(warp_blend_alpha(Geometry::Triangle, 10), 1.0);
  EXPECT_GT(warp_blend_alpha(Geometry::Tetrahedron, 6), 1.0);
  const auto a = warp_blend_nodes(Geometry::Triangle, 6, 0.0);
  const auto b = simplex_nodes(Geometry::Triangle, 6);
  double diff = 0;
  for (index_t i = 0; i < a.extent(0); ++i)
    for (int c = 0; c < 2; ++c) diff = std::max(diff, std::abs(a(i, c) - b(i, c)));
  EXPECT_GT(diff, 1e-4);  // alpha changes interior nodes
}

TEST(H1Basis, TabulateMatchesEval) {
  for (Geometry g : kAll)
    for (int p : {1, 4}) {
      const H1Basis& b = basis_of(g, p);
      const auto rule = quadrature(g, 2 * p);
      const BasisTables t = tabulate(b, rule);
      ASSERT_EQ(t.B.extent(0), rule.size());
      ASSERT_EQ(t.B.extent(1), b.size());
      ASSERT_EQ(t.G.extent(2), b.dim());
      const auto B = b.eval(rule.points);
      const auto G = b.gradients(rule.points);
      for (index_t q = 0; q < rule.size(); ++q)
        for (index_t i = 0; i < b.size(); ++i) {
          EXPECT_EQ(t.B(q, i), B(q, i));
          for (int c = 0; c < b.dim(); ++c) EXPECT_EQ(t.G(q, i, c), G(q, i, c));
        }
      // sum_q w_q sum_i phi_i(x_q) = volume of the element (partition of unity).
      double vol = 0;
      for (index_t q = 0; q < rule.size(); ++q)
        for (index_t i = 0; i < b.size(); ++i) vol += rule.weights(q) * t.B(q, i);
      EXPECT_NEAR(vol, reference_volume(g), 1e-13) << where(g, p);  // rounding of O(n nq) terms
    }
}

TEST(H1Basis, Tabulate1dFactorsTheTensorTables) {
  const int p = 3;
  const auto rule_1d = quadrature_1d(p + 2);
  for (Geometry g : {Geometry::Segment, Geometry::Quadrilateral, Geometry::Hexahedron}) {
    const H1Basis& b = basis_of(g, p);
    const BasisTables1D t1 = tabulate_1d(b, rule_1d);
    const BasisTables t = tabulate(b, tensor_quadrature(g, rule_1d));
    const int n1 = p + 1, q1 = p + 2, d = dim(g);
    for (index_t q = 0; q < t.B.extent(0); ++q)
      for (index_t i = 0; i < b.size(); ++i) {
        const int qi[3] = {int(q % q1), int(q / q1 % q1), int(q / q1 / q1)};
        const int ii[3] = {int(i % n1), int(i / n1 % n1), int(i / n1 / n1)};
        double v = 1;
        for (int c = 0; c < d; ++c) v *= t1.B(qi[c], ii[c]);
        EXPECT_NEAR(t.B(q, i), v, 1e-15) << name(g);  // the same products, up to 1 ulp of order
        for (int c = 0; c < d; ++c) {
          double gc = 1;
          for (int e = 0; e < d; ++e) gc *= e == c ? t1.G(qi[e], ii[e]) : t1.B(qi[e], ii[e]);
          EXPECT_NEAR(t.G(q, i, c), gc, 1e-13) << name(g);  // derivatives are O(p^2): a few ulps
        }
      }
  }
}

TEST(H1Basis, BadInput) {
  EXPECT_ERROR_MENTIONS(H1Basis(Geometry::Triangle, 0), "order", "p = 0", "triangle");
  EXPECT_ERROR_MENTIONS(H1Basis(Geometry::Hexahedron, 0), "order", "p = 0");
  EXPECT_ERROR_MENTIONS(H1Basis(Geometry::Tetrahedron, max_simplex_order + 1), "order", "21", "1..20");
  EXPECT_ERROR_MENTIONS(H1Basis(Geometry::Quadrilateral, max_basis_order_1d + 1), "order", "65", "1..64");
  EXPECT_ERROR_MENTIONS(H1Basis(static_cast<Geometry>(7), 2), "invalid Geometry", "7");

  const H1Basis& b = basis_of(Geometry::Triangle, 2);
  std::vector<double> v(b.size()), x3{0.1, 0.2, 0.3};
  EXPECT_ERROR_MENTIONS(b.eval(std::span<const double>(x3), v), "3 coordinates", "triangle", "needs 2");
  std::vector<double> small(2);
  const double x2[2] = {0.1, 0.2};
  EXPECT_ERROR_MENTIONS(b.eval(std::span<const double>(x2, 2), small), "values span", "2 entries", "6");
  Array<double, 2> pts3("pts3", {4, 3});
  EXPECT_ERROR_MENTIONS(b.eval(pts3), "pts3", "3 coordinates", "needs 2");
  EXPECT_ERROR_MENTIONS(b.gradients(pts3), "pts3", "3 coordinates", "needs 2");
  EXPECT_ERROR_MENTIONS(b.eval(std::span<const double>(x3)), "multiple of the dimension 2");
  EXPECT_ERROR_MENTIONS(tabulate(b, quadrature(Geometry::Quadrilateral, 2)), "quadrilateral", "triangle");
  EXPECT_ERROR_MENTIONS(tabulate_1d(b, quadrature_1d(3)), "triangle", "not a tensor product");
  EXPECT_ERROR_MENTIONS(b.basis_1d(), "not a tensor product");
  EXPECT_ERROR_MENTIONS(tabulate_1d(basis_of(Geometry::Hexahedron, 2), quadrature(Geometry::Quadrilateral, 2)),
                        "segment rule");
  EXPECT_ERROR_MENTIONS(simplex_nodes(Geometry::Hexahedron, 2), "not a simplex");
  EXPECT_ERROR_MENTIONS(warp_blend_nodes(Geometry::Triangle, 3, -1.0), "alpha", "-1");
  // Coincident nodes make the Vandermonde matrix singular.
  Array<double, 2> same("same", {3, 2});
  EXPECT_ERROR_MENTIONS(vandermonde_condition(Geometry::Triangle, 1, same), "singular");
  EXPECT_ERROR_MENTIONS(vandermonde_condition(Geometry::Triangle, 2, same), "extents", "(6, 2)");
}
