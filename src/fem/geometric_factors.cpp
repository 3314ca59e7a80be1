// Geometric factors at quadrature points: host-side gather of the element vertices and
// tabulation of the first-order shape-function gradients, then one forall over
// (element, point) on exec's backend. Compiled by nvcc in CUDA builds.
#include "tessera/fem/geometric_factors.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

#include "tessera/core/atomic.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/core/reduce.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

namespace geometric_factors_detail {

/// J(r, c) = d x_r / d xi_c of element e at point q, from the element's vertex coordinates
/// x (NV x SDIM, vertex-major) and the gradients g (NV x DIM) at the point. The sum runs over
/// the differences from vertex 0 (the shape-function gradients sum to zero), so the rounding
/// error is relative to the element's size, not to the magnitude of its coordinates.
/// NV = 0: a curved map whose node count nv is known at run time only (nv_rt).
template <int DIM, int SDIM, int NV>
TESSERA_INLINE void jacobian_at(const double* x, const double* g, double (&J)[SDIM][DIM], int nv_rt = NV) {
  const int nv = NV > 0 ? NV : nv_rt;
  for (int r = 0; r < SDIM; ++r)
    for (int c = 0; c < DIM; ++c) J[r][c] = 0.0;
  for (int v = 1; v < nv; ++v)
    for (int r = 0; r < SDIM; ++r) {
      const double d = x[v * SDIM + r] - x[r];
      for (int c = 0; c < DIM; ++c) J[r][c] += d * g[v * DIM + c];
    }
}

/// The inputs of one point: element e's coordinates and the gradients at point q (the
/// extents were fixed by GeometricFactorKernel: X (ne, nv, SDIM), G (nq, nv, DIM), nv = NV
/// or, for NV = 0, X's extent 1).
template <int DIM, int SDIM, int NV>
TESSERA_INLINE void jacobian_at(const View<const double, 3>& X, const View<const double, 3>& G, index_t e, int q,
                                double (&J)[SDIM][DIM]) {
  const int nv = NV > 0 ? NV : static_cast<int>(X.extent(1));
  jacobian_at<DIM, SDIM, NV>(X.data() + e * (nv * SDIM), G.data() + static_cast<index_t>(q) * (nv * DIM), J, nv);
}

/// Square J: the adjugate A (J^-1 = A / det) and det J.
template <int DIM>
TESSERA_INLINE double adjugate(const double (&J)[DIM][DIM], double (&A)[DIM][DIM]) {
  if constexpr (DIM == 1) {
    A[0][0] = 1.0;
    return J[0][0];
  } else if constexpr (DIM == 2) {
    A[0][0] = J[1][1];
    A[0][1] = -J[0][1];
    A[1][0] = -J[1][0];
    A[1][1] = J[0][0];
    return J[0][0] * J[1][1] - J[0][1] * J[1][0];
  } else {
    A[0][0] = J[1][1] * J[2][2] - J[1][2] * J[2][1];
    A[0][1] = J[0][2] * J[2][1] - J[0][1] * J[2][2];
    A[0][2] = J[0][1] * J[1][2] - J[0][2] * J[1][1];
    A[1][0] = J[1][2] * J[2][0] - J[1][0] * J[2][2];
    A[1][1] = J[0][0] * J[2][2] - J[0][2] * J[2][0];
    A[1][2] = J[0][2] * J[1][0] - J[0][0] * J[1][2];
    A[2][0] = J[1][0] * J[2][1] - J[1][1] * J[2][0];
    A[2][1] = J[0][1] * J[2][0] - J[0][0] * J[2][1];
    A[2][2] = J[0][0] * J[1][1] - J[0][1] * J[1][0];
    return J[0][0] * A[0][0] + J[0][1] * A[1][0] + J[0][2] * A[2][0];
  }
}

/// det J (square) or sqrt(det J^T J) (embedded) of element e at point q.
template <int DIM, int SDIM, int NV>
TESSERA_INLINE double det_at(const View<const double, 3>& X, const View<const double, 3>& G, index_t e, int q) {
  double J[SDIM][DIM];
  jacobian_at<DIM, SDIM, NV>(X, G, e, q, J);
  if constexpr (DIM == SDIM) {
    double A[DIM][DIM];
    return adjugate<DIM>(J, A);
  } else {
    double M[DIM][DIM];
    for (int i = 0; i < DIM; ++i)
      for (int j = 0; j < DIM; ++j) {
        double s = 0.0;
        for (int r = 0; r < SDIM; ++r) s += J[r][i] * J[r][j];
        M[i][j] = s;
      }
    double A[DIM][DIM];
    return sqrt(adjugate<DIM>(M, A));
  }
}

/// The (element, point) kernel: everything the flags ask for at one point.
template <int DIM, int SDIM, int NV>
struct PointKernel {
  View<const double, 3> X, G;
  View<const double, 1> w;
  View<double, 4> J, Jinv;
  View<double, 2> detJ, wdetJ;
  View<double, 3> D;
  bool want_J = false, want_det = false, want_inv = false, want_D = false, want_wdet = false;
  double* bad = nullptr;  // counts the points with det J <= 0 or not a number (check())
  bool concurrent = true;

  TESSERA_HOST_DEVICE void operator()(int e, int q) const {
    double Jm[SDIM][DIM];
    jacobian_at<DIM, SDIM, NV>(X, G, e, q, Jm);
    // Square J: P = adj J, so J^-1 = P / det and D = w det (P P^T) / det^2 = w (P P^T) / det.
    // Embedded J: A = adj (J^T J), det^2 = det (J^T J), so the pseudo-inverse is
    // (J^T J)^-1 J^T = P / det^2 with P = A J^T, and D = w det (J^T J)^-1 = w A / det.
    double P[DIM][SDIM], A[DIM][DIM], det;
    if constexpr (DIM == SDIM) {
      det = adjugate<DIM>(Jm, P);
    } else {
      double M[DIM][DIM];
      for (int i = 0; i < DIM; ++i)
        for (int j = 0; j < DIM; ++j) {
          double s = 0.0;
          for (int r = 0; r < SDIM; ++r) s += Jm[r][i] * Jm[r][j];
          M[i][j] = s;
        }
      det = sqrt(adjugate<DIM>(M, A));
    }
    if (bad && !(det > 0)) atomic_add(bad, 1.0, concurrent);  // rare: no contention
    if (want_J)
      for (int r = 0; r < SDIM; ++r)
        for (int c = 0; c < DIM; ++c) J(e, r, c, q) = Jm[r][c];
    if (want_det) detJ(e, q) = det;
    const double wq = w(q);
    if (want_wdet) wdetJ(e, q) = wq * det;
    const double inv_det = 1.0 / det;
    if (want_inv) {
      if constexpr (DIM == SDIM) {
        for (int i = 0; i < DIM; ++i)
          for (int r = 0; r < SDIM; ++r) Jinv(e, i, r, q) = P[i][r] * inv_det;
      } else {
        const double s2 = inv_det * inv_det;
        for (int i = 0; i < DIM; ++i)
          for (int r = 0; r < SDIM; ++r) {
            double s = 0.0;
            for (int k = 0; k < DIM; ++k) s += A[i][k] * Jm[r][k];
            Jinv(e, i, r, q) = s * s2;
          }
      }
    }
    if (want_D) {
      const double d_scale = wq * inv_det;
      int k = 0;
      for (int i = 0; i < DIM; ++i)
        for (int j = i; j < DIM; ++j) {
          double s;
          if constexpr (DIM == SDIM) {
            s = 0.0;
            for (int r = 0; r < DIM; ++r) s += P[i][r] * P[j][r];
          } else {
            s = A[i][j];
          }
          D(e, k++, q) = s * d_scale;
        }
    }
  }
};

/// det J at flat point index i = e * nq + q; NaN maps to -infinity so that a minimum finds it.
template <int DIM, int SDIM, int NV>
struct DetMap {
  View<const double, 3> X, G;
  int nq = 1;
  TESSERA_HOST_DEVICE double operator()(index_t i) const {
    const index_t e = i / nq;
    const int q = static_cast<int>(i - e * nq);
    const double d = det_at<DIM, SDIM, NV>(X, G, e, q);
    return d == d ? d : -std::numeric_limits<double>::infinity();
  }
};

template <int DIM, int SDIM, int NV>
void launch_points(const Exec& exec, const PointKernel<DIM, SDIM, NV>& k, index_t ne, int nq) {
  forall("fem/geometric_factors", exec, Bounds<2>{ne, nq}, k);
}

template <int DIM, int SDIM, int NV>
double reduce_min_det(const Exec& exec, const DetMap<DIM, SDIM, NV>& m, index_t n) {
  return transform_reduce("fem/geometric_factors_min_det", exec, n, std::numeric_limits<double>::infinity(), m,
                          Min{});
}

/// Calls f(integral_constant DIM, integral_constant SDIM, integral_constant NV) for the
/// run-time geometry g and space dimension sdim (dim(g) <= sdim <= 3): one instance per
/// element shape, so that every loop of the kernel has compile-time bounds; curved maps
/// (nodes of order k) get NV = 0, the node count then comes from the arrays.
template <class F>
void with_shape(Geometry g, int sdim, bool curved, const F& f) {
  using std::integral_constant;
  using I0 = integral_constant<int, 0>;
  using I1 = integral_constant<int, 1>;
  using I2 = integral_constant<int, 2>;
  using I3 = integral_constant<int, 3>;
  using I4 = integral_constant<int, 4>;
  using I8 = integral_constant<int, 8>;
  if (curved && dim(g) <= sdim) {
    if (dim(g) == 1) return sdim == 1 ? f(I1{}, I1{}, I0{}) : sdim == 2 ? f(I1{}, I2{}, I0{}) : f(I1{}, I3{}, I0{});
    if (dim(g) == 2) return sdim == 2 ? f(I2{}, I2{}, I0{}) : f(I2{}, I3{}, I0{});
    return f(I3{}, I3{}, I0{});
  }
  switch (g) {
    case Geometry::Segment:
      if (sdim == 1) return f(I1{}, I1{}, I2{});
      if (sdim == 2) return f(I1{}, I2{}, I2{});
      if (sdim == 3) return f(I1{}, I3{}, I2{});
      break;
    case Geometry::Triangle:
      if (sdim == 2) return f(I2{}, I2{}, I3{});
      if (sdim == 3) return f(I2{}, I3{}, I3{});
      break;
    case Geometry::Quadrilateral:
      if (sdim == 2) return f(I2{}, I2{}, I4{});
      if (sdim == 3) return f(I2{}, I3{}, I4{});
      break;
    case Geometry::Tetrahedron:
      if (sdim == 3) return f(I3{}, I3{}, I4{});
      break;
    case Geometry::Hexahedron:
      if (sdim == 3) return f(I3{}, I3{}, I8{});
      break;
  }
  fail("fem::geometric_factors: no ", name(g), " elements in a ", sdim, "-D space");
}

}  // namespace geometric_factors_detail

namespace gfd = geometric_factors_detail;

Array<double, 3> first_order_shape_gradients(Geometry g, const Array<double, 2>& points_any) {
  const Array<double, 2> points = points_any.to_host();
  const int d = dim(g), nv = num_vertices(g);
  TESSERA_REQUIRE(points.extent(1) == d, "fem::first_order_shape_gradients: points have ", points.extent(1),
                  " coordinates, a ", name(g), " needs ", d);
  const index_t nq = points.extent(0);
  Array<double, 3> G("fem/shape_gradients", {nq, nv, d});
  double xi[3], val[8];
  for (index_t q = 0; q < nq; ++q) {
    for (int c = 0; c < d; ++c) xi[c] = points(q, c);
    vertex_shape_functions(g, std::span<const double>(xi, std::size_t(d)), val,
                           std::span<double>(&G(q, 0, 0), std::size_t(nv * d)));
  }
  return G;
}

Array<double, 3> element_vertex_coordinates(const Mesh& mesh, Geometry g) {
  const std::vector<index_t> elements = mesh.elements_of(g);
  const index_t ne = static_cast<index_t>(elements.size());
  const int nv = num_vertices(g), sdim = mesh.space_dim();
  Array<double, 3> X("fem/element_vertex_coordinates", {ne, nv, sdim});
  const index_t nverts = mesh.num_vertices();
  for (index_t k = 0; k < ne; ++k) {
    const index_t e = elements[static_cast<std::size_t>(k)];
    const auto verts = mesh.element_vertices(e);
    for (int v = 0; v < nv; ++v) {
      const index_t id = verts[static_cast<std::size_t>(v)];
      TESSERA_REQUIRE(id >= 0 && id < nverts, "fem::geometric_factors: element ", e, " (", name(g), ") vertex ", v,
                      " has id ", id, ", outside 0..", nverts - 1, "; check the mesh (Mesh::validate)");
      for (int r = 0; r < sdim; ++r) X(k, v, r) = mesh.vertex(id, r);
    }
  }
  return X;
}

int map_num_nodes(const Mesh& mesh, Geometry g) {
  return mesh.has_nodes() ? static_cast<int>(num_nodes(g, mesh.nodes_order())) : num_vertices(g);
}

Array<double, 3> element_map_nodes(const Mesh& mesh, Geometry g) {
  if (!mesh.has_nodes()) return element_vertex_coordinates(mesh, g);
  const std::vector<index_t> elements = mesh.elements_of(g);
  const index_t ne = static_cast<index_t>(elements.size());
  const int n = map_num_nodes(mesh, g), sdim = mesh.space_dim();
  Array<double, 3> X("fem/element_map_nodes", {ne, n, sdim});
  for (index_t k = 0; k < ne; ++k) {
    const auto x = mesh.element_nodes(elements[static_cast<std::size_t>(k)]);
    std::copy(x.begin(), x.end(), &X(k, 0, 0));
  }
  return X;
}

Array<double, 2> map_shape_values(const Mesh& mesh, Geometry g, const Array<double, 2>& points_any) {
  const Array<double, 2> points = points_any.to_host();
  const int d = dim(g);
  TESSERA_REQUIRE(points.extent(1) == d, "fem::map_shape_values: points have ", points.extent(1), " coordinates, a ",
                  name(g), " needs ", d);
  if (mesh.has_nodes()) return geometry_basis(g, mesh.nodes_order()).eval(points);
  const index_t np = points.extent(0);
  const int nv = num_vertices(g);
  Array<double, 2> N("fem/map_shape_values", {np, nv});
  double xi[3] = {0, 0, 0};
  for (index_t j = 0; j < np; ++j) {
    for (int c = 0; c < d; ++c) xi[c] = points(j, c);
    vertex_shape_functions(g, std::span<const double>(xi, std::size_t(d)), std::span<double>(&N(j, 0), std::size_t(nv)));
  }
  return N;
}

Array<double, 3> map_shape_gradients(const Mesh& mesh, Geometry g, const Array<double, 2>& points_any) {
  if (!mesh.has_nodes()) return first_order_shape_gradients(g, points_any);
  const Array<double, 2> points = points_any.to_host();
  TESSERA_REQUIRE(points.extent(1) == dim(g), "fem::map_shape_gradients: points have ", points.extent(1),
                  " coordinates, a ", name(g), " needs ", dim(g));
  return geometry_basis(g, mesh.nodes_order()).gradients(points);
}

GeometricFactorKernel::GeometricFactorKernel(const Mesh& mesh, Geometry g, const QuadratureRule& rule, Exec exec)
    : exec_(exec), geom_(g) {
  dim_ = fem::dim(g);
  sdim_ = mesh.space_dim();
  curved_ = mesh.has_nodes();
  TESSERA_REQUIRE(rule.geom == g, "fem::geometric_factors: the quadrature rule is on a ", name(rule.geom),
                  " but the elements are ", name(g), "s; pass a rule made for ", name(g), " (fem::quadrature(",
                  name(g), ", degree))");
  TESSERA_REQUIRE(sdim_ >= dim_, "fem::geometric_factors: ", name(g), "s (", dim_,
                  "-D) do not fit in a mesh with space dimension ", sdim_);
  TESSERA_REQUIRE(rule.size() > 0 && rule.size() <= std::numeric_limits<int>::max(),
                  "fem::geometric_factors: the quadrature rule has ", rule.size(), " points (need 1..2^31-1)");
  nq_ = static_cast<int>(rule.size());
  elements_ = mesh.elements_of(g);
  const index_t ne = num_elements();
  TESSERA_REQUIRE(ne <= std::numeric_limits<int>::max(), "fem::geometric_factors: ", ne, " ", name(g),
                  "s exceed the kernel's 2^31-1 elements; split the mesh");
  if (curved_) {
    TESSERA_REQUIRE(sdim_ >= dim_, "fem::geometric_factors: ", name(g), "s do not fit in a ", sdim_, "-D mesh");
  }
  nv_ = map_num_nodes(mesh, g);

  // the vertices and first-order gradients, or the nodes and the order-k basis' gradients
  const Array<double, 3> X = element_map_nodes(mesh, g);
  const QuadratureRule host_rule = rule.to_host();
  const Array<double, 3> G = map_shape_gradients(mesh, g, host_rule.points);
  points_host_ = host_rule.points;

  const Space sp = exec_.space();
  X_ = sp == Space::Host ? X : X.clone(sp);
  G_ = sp == Space::Host ? G : G.clone(sp);
  w_ = host_rule.weights.space() == sp ? host_rule.weights : host_rule.weights.clone(sp);
}

GeometricFactors GeometricFactorKernel::allocate(GeometricFactorFlags flags) const {
  using F = GeometricFactorFlags;
  GeometricFactors out;
  out.geom = geom_;
  out.num_elements = num_elements();
  out.num_points = nq_;
  out.dim = dim_;
  out.space_dim = sdim_;
  const index_t ne = num_elements(), nq = nq_;
  const Space sp = exec_.space();
  if (has(flags, F::J)) out.J = Array<double, 4>("fem/geometric_factors/J", {ne, sdim_, dim_, nq}, sp);
  if (has(flags, F::DetJ)) out.detJ = Array<double, 2>("fem/geometric_factors/detJ", {ne, nq}, sp);
  if (has(flags, F::Jinv)) out.Jinv = Array<double, 4>("fem/geometric_factors/Jinv", {ne, dim_, sdim_, nq}, sp);
  if (has(flags, F::D)) out.D = Array<double, 3>("fem/geometric_factors/D", {ne, num_packed_symmetric(dim_), nq}, sp);
  if (has(flags, F::WDetJ)) out.wdetJ = Array<double, 2>("fem/geometric_factors/wdetJ", {ne, nq}, sp);
  return out;
}

namespace {

template <class T, int R>
void require_output(const Array<T, R>& a, const std::array<index_t, R>& ext, Space sp, const char* what) {
  TESSERA_REQUIRE(a.extents() == ext, "fem::GeometricFactorKernel::compute: output array ", what,
                  " has the wrong extents (not allocated for these flags?); use GeometricFactorKernel::allocate");
  TESSERA_REQUIRE(a.size() == 0 || accessible(sp == Space::Device ? Backend::Cuda : Backend::Serial, a.space()),
                  "fem::GeometricFactorKernel::compute: output array ", what, " lives in ", to_string(a.space()),
                  " memory, which the ", sp == Space::Device ? "cuda" : "cpu", " backend cannot write");
}

}  // namespace

void GeometricFactorKernel::compute(GeometricFactors& out, GeometricFactorFlags flags) const {
  compute_counting(out, flags, nullptr);
}

void GeometricFactorKernel::compute_counting(GeometricFactors& out, GeometricFactorFlags flags, double* bad) const {
  using F = GeometricFactorFlags;
  const index_t ne = num_elements(), nq = nq_;
  const Space sp = exec_.space();
  const bool wJ = has(flags, F::J), wdet = has(flags, F::DetJ), winv = has(flags, F::Jinv), wD = has(flags, F::D),
             wwd = has(flags, F::WDetJ);
  if (wJ) require_output(out.J, {ne, sdim_, dim_, nq}, sp, "J");
  if (wdet) require_output(out.detJ, {ne, nq}, sp, "detJ");
  if (winv) require_output(out.Jinv, {ne, dim_, sdim_, nq}, sp, "Jinv");
  if (wD) require_output(out.D, {ne, num_packed_symmetric(dim_), nq}, sp, "D");
  if (wwd) require_output(out.wdetJ, {ne, nq}, sp, "wdetJ");
  if (ne == 0) return;
  gfd::with_shape(geom_, sdim_, curved_, [&](auto dim_c, auto sdim_c, auto nv_c) {
    constexpr int DIM = decltype(dim_c)::value, SDIM = decltype(sdim_c)::value, NV = decltype(nv_c)::value;
    gfd::PointKernel<DIM, SDIM, NV> k;
    k.X = X_.cview();
    k.G = G_.cview();
    k.w = w_.cview();
    k.J = out.J.view();
    k.Jinv = out.Jinv.view();
    k.detJ = out.detJ.view();
    k.wdetJ = out.wdetJ.view();
    k.D = out.D.view();
    k.want_J = wJ;
    k.want_det = wdet;
    k.want_inv = winv;
    k.want_D = wD;
    k.want_wdet = wwd;
    k.bad = bad;
    k.concurrent = exec_.backend != Backend::Serial;
    gfd::launch_points<DIM, SDIM, NV>(exec_, k, ne, nq_);
  });
}

double GeometricFactorKernel::min_det() const {
  const index_t n = num_elements() * nq_;
  if (n == 0) return std::numeric_limits<double>::infinity();
  double m = 0;
  gfd::with_shape(geom_, sdim_, curved_, [&](auto dim_c, auto sdim_c, auto nv_c) {
    constexpr int DIM = decltype(dim_c)::value, SDIM = decltype(sdim_c)::value, NV = decltype(nv_c)::value;
    gfd::DetMap<DIM, SDIM, NV> map{X_.cview(), G_.cview(), nq_};
    m = gfd::reduce_min_det<DIM, SDIM, NV>(exec_, map, n);
  });
  return m;
}

void GeometricFactorKernel::check() const {
  const double m = min_det();
  if (m > 0) return;
  // Error path: find the offending element on the host with the same formula.
  const Array<double, 3> X = X_.to_host(), G = G_.to_host();
  const index_t ne = num_elements();
  index_t worst = -1, bad = 0;
  int worst_q = 0;
  double worst_det = 0;
  gfd::with_shape(geom_, sdim_, curved_, [&](auto dim_c, auto sdim_c, auto nv_c) {
    constexpr int DIM = decltype(dim_c)::value, SDIM = decltype(sdim_c)::value, NV = decltype(nv_c)::value;
    for (index_t k = 0; k < ne; ++k) {
      bool element_bad = false;
      for (int q = 0; q < nq_; ++q) {
        const double d = gfd::det_at<DIM, SDIM, NV>(X.cview(), G.cview(), k, q);
        const bool nan = !(d == d);
        if (nan || d <= 0) element_bad = true;
        // The smallest det J wins; a NaN wins over every number.
        const bool take = worst < 0 || (!(worst_det != worst_det) && (nan || d < worst_det));
        if (take) {
          worst = k;
          worst_q = q;
          worst_det = d;
        }
      }
      if (element_bad) ++bad;
    }
  });
  std::ostringstream xi;
  xi << std::setprecision(6);
  for (int c = 0; c < dim_; ++c) xi << (c ? ", " : "") << points_host_(worst_q, c);
  fail("fem::geometric_factors: element ", elements_[static_cast<std::size_t>(worst)], " (", name(geom_),
       ", mesh numbering) has det J = ", worst_det, " <= 0 at quadrature point ", worst_q, " (xi = ", xi.str(), "); ",
       bad, " of ", ne, " ", name(geom_), "s have det J <= 0 or not finite. The element is inverted, degenerate or "
       "tangled: list its vertices in Gmsh order (reference_element.hpp; counter-clockwise in 2-D, positive volume "
       "in 3-D) and check its coordinates",
       curved_ ? " and its curved nodes (Mesh::validate tests det J at the nodes and a rule's points)"
               : " (Mesh::validate tests det J at the vertices only)");
}

GeometricFactors geometric_factors(const Mesh& mesh, Geometry g, const QuadratureRule& rule, Exec exec,
                                   GeometricFactorFlags flags) {
  const GeometricFactorKernel kernel(mesh, g, rule, exec);
  GeometricFactors out = kernel.allocate(flags);
  // The points with det J <= 0 are counted by the factors' kernel itself; check() (a second
  // pass over every point) runs only to name the element when there is one.
  Array<double, 1> bad("geometric_factors_bad", {1}, exec.space());
  bad.fill(0.0);
  kernel.compute_counting(out, flags, bad.data());
  if (bad.to_host()(0) > 0) kernel.check();
  return out;
}

}  // namespace tessera::fem
