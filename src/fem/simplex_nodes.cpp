// Interpolation nodes of the triangle and the tetrahedron: Warburton's warp & blend
// construction, written in barycentric coordinates.
//
// A lattice point has barycentric coordinates lambda = L / p. The 1-D warp moves the
// equispaced points of [-1, 1] to the GLL points; for an edge {a, b} of a triangle, the
// displacement along the edge at r = lambda_b - lambda_a is
//     w_ab = 4 lambda_a lambda_b warp(r) / (1 - r^2) (1 + (alpha lambda_c)^2)
// (c the opposite vertex) in units where the edge has length 2, i.e. lambda_b += w_ab / 2,
// lambda_a -= w_ab / 2. On the edge 4 lambda_a lambda_b = 1 - r^2, so the edge nodes become the
// GLL points. In the tetrahedron, each face f (opposite vertex a) contributes its triangle
// shift (with the face's barycentric coordinates) times the blend
//     (1 + (alpha lambda_a)^2) prod_{v in f} lambda_v / (lambda_v + lambda_a / 2).
// Everything is affine-invariant, so the nodes are computed on barycentric coordinates and
// mapped to the reference element at the end.
#include <array>
#include <cmath>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/quadrature.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

namespace {

// Optimised alpha for p = 1..15 (Warburton 2006, tables for the triangle and the tetrahedron).
constexpr double alpha_triangle[15] = {0.0000, 0.0000, 1.4152, 0.1001, 0.2751, 0.9800, 1.0999, 1.2832,
                                       1.3648, 1.4773, 1.4959, 1.5743, 1.5770, 1.6223, 1.6258};
constexpr double alpha_tetrahedron[15] = {0.0000, 0.0000, 0.0000, 0.1002, 1.1332, 1.5608, 1.3413, 1.2577,
                                          1.1603, 1.10153, 0.6080, 0.4523, 0.8856, 0.8717, 0.9655};

void check_simplex(Geometry g, int p, const char* where) {
  TESSERA_REQUIRE(is_simplex(g), where, ": geometry '", name(g), "' is not a simplex (triangle or tetrahedron)");
  TESSERA_REQUIRE(p >= 1 && p <= max_simplex_order, where, ": order p = ", p, " is out of range on the ", name(g),
                  " (valid: 1..", max_simplex_order, ")");
}

// warp(r) / (1 - r^2) on [-1, 1], where warp interpolates (GLL - equispaced) at the p + 1
// equispaced points of [-1, 1]. The end points have zero displacement, and the Lagrange
// polynomials of the interior points contain the factor (1 - r^2), so it cancels exactly:
//   l_i(r) / (1 - r^2) = prod_{j interior, j != i} (r - r_j) / (r_i - r_j) / (1 - r_i^2).
class ScaledWarp {
 public:
  explicit ScaledWarp(int p) {
    if (p < 3) return;  // p = 1, 2: GLL and equispaced points coincide
    const std::vector<double> gll = gauss_lobatto_legendre(p + 1).nodes;
    for (int i = 1; i < p; ++i) req_.push_back(-1.0 + 2.0 * i / p);
    for (int i = 1; i < p; ++i) {
      const double ri = req_[i - 1];
      double c = ((2.0 * gll[i] - 1.0) - ri) / (1.0 - ri * ri);
      for (int j = 1; j < p; ++j)
        if (j != i) c /= ri - req_[j - 1];
      coef_.push_back(c);
    }
  }

  double operator()(double r) const {
    double s = 0.0;
    const std::size_t n = req_.size();
    for (std::size_t i = 0; i < n; ++i) {
      double t = coef_[i];
      for (std::size_t j = 0; j < n; ++j)
        if (j != i) t *= r - req_[j];
      s += t;
    }
    return s;
  }

 private:
  std::vector<double> req_, coef_;
};

// The triangle shift d[0..2] (barycentric) of barycentric coordinates l[0..2] (which need not
// sum to 1: the tetrahedron evaluates it on its faces).
void triangle_shift(const ScaledWarp& warp, double alpha, const double l[3], double d[3]) {
  d[0] = d[1] = d[2] = 0.0;
  constexpr int edges[3][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}};  // a, b, opposite c
  for (const auto& e : edges) {
    const int a = e[0], b = e[1], c = e[2];
    const double ac = alpha * l[c];
    const double w = 4.0 * l[a] * l[b] * warp(l[b] - l[a]) * (1.0 + ac * ac);
    d[b] += 0.5 * w;
    d[a] -= 0.5 * w;
  }
}

// Reference coordinates sum_v lambda_v V_v (V_0 is the origin).
void to_reference(Geometry g, const double* lambda, double* x) {
  const int d = dim(g);
  for (int c = 0; c < d; ++c) x[c] = 0.0;
  for (int v = 1; v <= d; ++v) {
    const auto V = reference_vertex(g, v);
    for (int c = 0; c < d; ++c) x[c] += lambda[v] * V[c];
  }
}

// The triangle node of face barycentric integers (m0, m1, m2) (sum p), as barycentric
// coordinates of the face's vertices.
void triangle_node(const ScaledWarp& warp, double alpha, int p, const int m[3], double out[3]) {
  const double l[3] = {double(m[0]) / p, double(m[1]) / p, double(m[2]) / p};
  double d[3];
  triangle_shift(warp, alpha, l, d);
  for (int k = 0; k < 3; ++k) out[k] = l[k] + d[k];
}

}  // namespace

double warp_blend_alpha(Geometry g, int p) {
  check_simplex(g, p, "fem::warp_blend_alpha");
  if (g == Geometry::Triangle) return p <= 15 ? alpha_triangle[p - 1] : 5.0 / 3.0;
  return p <= 15 ? alpha_tetrahedron[p - 1] : 1.0;
}

Array<double, 2> equispaced_nodes(Geometry g, int p) {
  const index_t n = num_nodes(g, p);
  const int d = dim(g);
  Array<double, 2> x("fem::equispaced nodes", {n, d});
  const auto lattice = lattice_nodes(g, p);
  for (index_t i = 0; i < n; ++i)
    for (int c = 0; c < d; ++c) x(i, c) = double(lattice[i][c]) / p;
  return x;
}

Array<double, 2> warp_blend_nodes(Geometry g, int p, double alpha) {
  check_simplex(g, p, "fem::warp_blend_nodes");
  TESSERA_REQUIRE(std::isfinite(alpha) && alpha >= 0.0, "fem::warp_blend_nodes: blend parameter alpha = ", alpha,
                  " must be finite and >= 0");
  const int d = dim(g), nv = d + 1;
  const index_t n = num_nodes(g, p);
  const auto lattice = lattice_nodes(g, p);
  const ScaledWarp warp(p);
  const double alpha_face = warp_blend_alpha(Geometry::Triangle, p);
  const std::vector<double> gll = gauss_lobatto_legendre(p + 1).nodes;

  Array<double, 2> X("fem::warp & blend nodes", {n, d});
  for (index_t i = 0; i < n; ++i) {
    const auto& L = lattice[i];
    const NodeLocation loc = classify_node(g, p, L);
    double lambda[4] = {0, 0, 0, 0};
    if (loc.entity_dim == 0) {
      lambda[loc.entity] = 1.0;
    } else if (loc.entity_dim == 1) {
      // Exactly the GLL point x_t of the edge, measured from its first vertex.
      const auto ev = edge_vertices(g, loc.entity);
      const int t = loc.coords[0];
      double x[3];
      const auto A = reference_vertex(g, ev[0]), B = reference_vertex(g, ev[1]);
      for (int c = 0; c < d; ++c) x[c] = A[c] == B[c] ? A[c] : (B[c] > A[c] ? gll[t] : 1.0 - gll[t]);
      for (int c = 0; c < d; ++c) X(i, c) = x[c];
      continue;
    } else if (loc.entity_dim == 2 && g == Geometry::Tetrahedron) {
      // The triangle's node, mapped onto the face.
      const auto fv = face_vertices(g, loc.entity);
      const int m[3] = {loc.coords[0], loc.coords[1], loc.coords[2]};
      double mu[3];
      triangle_node(warp, alpha_face, p, m, mu);
      for (int k = 0; k < 3; ++k) lambda[fv[k]] = mu[k];
    } else if (g == Geometry::Triangle) {
      // Interior of the triangle (entity_dim 2 on a 2-D element).
      const int m[3] = {p - L[0] - L[1], L[0], L[1]};
      triangle_node(warp, alpha, p, m, lambda);
    } else {
      // Interior of the tetrahedron: blend the four face shifts.
      const int m[4] = {p - L[0] - L[1] - L[2], L[0], L[1], L[2]};
      double l[4], shift[4] = {0, 0, 0, 0};
      for (int v = 0; v < nv; ++v) l[v] = double(m[v]) / p;
      for (int a = 0; a < 4; ++a) {
        int f[3], k = 0;
        for (int v = 0; v < 4; ++v)
          if (v != a) f[k++] = v;
        const double lf[3] = {l[f[0]], l[f[1]], l[f[2]]};
        double s[3];
        triangle_shift(warp, alpha_face, lf, s);
        double blend = 1.0 + (alpha * l[a]) * (alpha * l[a]);
        for (int q = 0; q < 3; ++q) blend *= lf[q] / (lf[q] + 0.5 * l[a]);
        for (int q = 0; q < 3; ++q) shift[f[q]] += blend * s[q];
      }
      for (int v = 0; v < 4; ++v) lambda[v] = l[v] + shift[v];
    }
    double x[3];
    to_reference(g, lambda, x);
    for (int c = 0; c < d; ++c) X(i, c) = x[c];
  }
  return X;
}

Array<double, 2> simplex_nodes(Geometry g, int p) { return warp_blend_nodes(g, p, warp_blend_alpha(g, p)); }

}  // namespace tessera::fem
