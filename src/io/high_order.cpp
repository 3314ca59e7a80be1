// Curved element geometry for the mesh readers; see high_order.hpp.
#include "high_order.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "tessera/core/error.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::io::detail {

using fem::Geometry;

namespace {

using Point = std::array<double, 3>;

/// Vertices of the element of the lattice nodes one step inside an element with vertices `v`:
/// each vertex moves 1/p of the way along every edge leaving it (Gmsh lists the interior
/// nodes of a face or element as such an element of lower order).
std::vector<Point> inner_vertices(Geometry g, int p, const std::vector<Point>& v) {
  std::vector<Point> w = v;
  for (int e = 0; e < fem::num_edges(g); ++e) {
    const auto [a, b] = fem::edge_vertices(g, e);
    for (int c = 0; c < 3; ++c) {
      w[std::size_t(a)][std::size_t(c)] += (v[std::size_t(b)][std::size_t(c)] - v[std::size_t(a)][std::size_t(c)]) / p;
      w[std::size_t(b)][std::size_t(c)] += (v[std::size_t(a)][std::size_t(c)] - v[std::size_t(b)][std::size_t(c)]) / p;
    }
  }
  return w;
}

/// Interior nodes of an order-p element of geometry g are an element of order p - drop.
int interior_drop(Geometry g) {
  switch (g) {
    case Geometry::Triangle: return 3;
    case Geometry::Tetrahedron: return 4;
    default: return 2;  // segment, quadrilateral, hexahedron
  }
}

void append_gmsh_points(Geometry g, int p, const std::vector<Point>& v, std::vector<Point>& out) {
  if (p == 0) {  // one node, at the centre
    Point c{0, 0, 0};
    for (const Point& x : v)
      for (int k = 0; k < 3; ++k) c[std::size_t(k)] += x[std::size_t(k)] / double(v.size());
    out.push_back(c);
    return;
  }
  out.insert(out.end(), v.begin(), v.end());
  if (g == Geometry::Segment) {
    for (int t = 1; t < p; ++t) {
      Point x;
      for (int k = 0; k < 3; ++k) x[std::size_t(k)] = v[0][std::size_t(k)] + t * (v[1][std::size_t(k)] - v[0][std::size_t(k)]) / p;
      out.push_back(x);
    }
    return;
  }
  for (int e = 0; e < fem::num_edges(g); ++e) {
    const auto [a, b] = fem::edge_vertices(g, e);
    for (int t = 1; t < p; ++t) {
      Point x;
      for (int k = 0; k < 3; ++k)
        x[std::size_t(k)] = v[std::size_t(a)][std::size_t(k)] +
                            t * (v[std::size_t(b)][std::size_t(k)] - v[std::size_t(a)][std::size_t(k)]) / p;
      out.push_back(x);
    }
  }
  if (fem::dim(g) == 3) {
    for (int f = 0; f < fem::num_faces(g); ++f) {
      const Geometry fg = fem::face_geometry(g, f);
      const int q = p - interior_drop(fg);
      if (q < 0) continue;
      std::vector<Point> fv;
      for (int a : fem::face_vertices(g, f)) fv.push_back(v[std::size_t(a)]);
      append_gmsh_points(fg, q, inner_vertices(fg, p, fv), out);
    }
  }
  const int q = p - interior_drop(g);
  if (q >= 0) append_gmsh_points(g, q, inner_vertices(g, p, v), out);
}

std::vector<double> flatten(std::span<const Point> points, int dim) {
  std::vector<double> x;
  x.reserve(points.size() * std::size_t(dim));
  for (const Point& p : points)
    for (int d = 0; d < dim; ++d) x.push_back(p[std::size_t(d)]);
  return x;
}

}  // namespace

std::vector<std::array<double, 3>> gmsh_node_points(Geometry g, int p) {
  std::vector<Point> v;
  for (int i = 0; i < fem::num_vertices(g); ++i) v.push_back(fem::reference_vertex(g, i));
  std::vector<Point> out;
  append_gmsh_points(g, p, v, out);
  return out;
}

NodeTransfer::NodeTransfer(Geometry g, int from, std::span<const std::array<double, 3>> points, int to) {
  const int dim = fem::dim(g);
  const fem::H1Basis source(g, from);
  const int n = int(source.size());
  if (int(points.size()) != n)
    fail("NodeTransfer: ", points.size(), " points for ", n, " nodes of order ", from);
  // B(i, j) = phi_j(points_i) in the order-`from` H1Basis; its inverse maps values at the points
  // to values at the basis' nodes. Gauss-Jordan elimination with partial pivoting.
  const Array<double, 2> b = source.eval(std::span<const double>(flatten(points, dim)));
  std::vector<double> a(std::size_t(n * n)), inv(std::size_t(n * n), 0.0);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) a[std::size_t(i * n + j)] = b(i, j);
    inv[std::size_t(i * n + i)] = 1.0;
  }
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int r = c + 1; r < n; ++r)
      if (std::abs(a[std::size_t(r * n + c)]) > std::abs(a[std::size_t(piv * n + c)])) piv = r;
    if (std::abs(a[std::size_t(piv * n + c)]) < 1e-12)
      fail("NodeTransfer: the ", n, " points do not determine a polynomial of order ", from);
    if (piv != c)
      for (int k = 0; k < n; ++k) {
        std::swap(a[std::size_t(piv * n + k)], a[std::size_t(c * n + k)]);
        std::swap(inv[std::size_t(piv * n + k)], inv[std::size_t(c * n + k)]);
      }
    const double d = a[std::size_t(c * n + c)];
    for (int k = 0; k < n; ++k) a[std::size_t(c * n + k)] /= d, inv[std::size_t(c * n + k)] /= d;
    for (int r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = a[std::size_t(r * n + c)];
      if (f == 0.0) continue;
      for (int k = 0; k < n; ++k) {
        a[std::size_t(r * n + k)] -= f * a[std::size_t(c * n + k)];
        inv[std::size_t(r * n + k)] -= f * inv[std::size_t(c * n + k)];
      }
    }
  }
  // Nodes of order `to`: the order-`from` basis evaluated there (identity when to == from).
  n_from_ = n;
  if (to == from) {
    n_to_ = n;
    t_ = std::move(inv);
    return;
  }
  const fem::H1Basis target(g, to);
  const Array<double, 2>& y = target.nodes();
  const Array<double, 2> e = source.eval(y);
  n_to_ = int(target.size());
  t_.assign(std::size_t(n_to_ * n), 0.0);
  for (int i = 0; i < n_to_; ++i)
    for (int k = 0; k < n; ++k) {
      const double eik = e(i, k);
      if (eik == 0.0) continue;
      for (int j = 0; j < n; ++j) t_[std::size_t(i * n + j)] += eik * inv[std::size_t(k * n + j)];
    }
}

void NodeTransfer::apply(const double* values, int ncomp, double* out, const int* perm) const {
  for (int i = 0; i < n_to_; ++i)
    for (int c = 0; c < ncomp; ++c) {
      double s = 0;
      for (int j = 0; j < n_from_; ++j)
        s += t_[std::size_t(i * n_from_ + j)] * values[std::size_t((perm ? perm[j] : j) * ncomp + c)];
      out[std::size_t(i * ncomp + c)] = s;
    }
}

namespace {
std::array<long long, 3> point_key(const std::array<double, 3>& x) {
  return {std::llround(x[0] * 1e9), std::llround(x[1] * 1e9), std::llround(x[2] * 1e9)};
}
}  // namespace

PointIndex::PointIndex(std::span<const std::array<double, 3>> points) {
  for (std::size_t i = 0; i < points.size(); ++i) keys_.emplace_back(point_key(points[i]), int(i));
  std::sort(keys_.begin(), keys_.end());
}

int PointIndex::find(const std::array<double, 3>& x) const {
  // Rounding may put a point next to its key: try the neighbours of each coordinate.
  const std::array<long long, 3> k = point_key(x);
  for (long long dx = -1; dx <= 1; ++dx)
    for (long long dy = -1; dy <= 1; ++dy)
      for (long long dz = -1; dz <= 1; ++dz) {
        const std::array<long long, 3> q{k[0] + dx, k[1] + dy, k[2] + dz};
        const auto it = std::lower_bound(keys_.begin(), keys_.end(), std::make_pair(q, -1));
        if (it != keys_.end() && it->first == q) return it->second;
      }
  return -1;
}

std::vector<int> swap_xy_permutation(Geometry g, int order) {
  const fem::H1Basis basis(g, order);
  const Array<double, 2>& x = basis.nodes();
  std::vector<Point> pts;
  for (index_t i = 0; i < basis.size(); ++i) pts.push_back({x(i, 0), x(i, 1), 0.0});
  const PointIndex index(pts);
  std::vector<int> perm(pts.size());
  for (std::size_t i = 0; i < pts.size(); ++i) {
    perm[i] = index.find({pts[i][1], pts[i][0], 0.0});
    if (perm[i] < 0) fail("swap_xy_permutation: the order-", order, " nodes are not symmetric");
  }
  return perm;
}

TangleCheck::TangleCheck(Geometry g, int order) : dim_(fem::dim(g)) {
  const fem::H1Basis basis(g, order);
  n_ = int(basis.size());
  // An equispaced lattice of order 2k (vertices included) over the element.
  const int m = 2 * order;
  for (const std::array<int, 3>& l : fem::lattice_nodes(g, m))
    for (int d = 0; d < dim_; ++d) points_.push_back(double(l[std::size_t(d)]) / m);
  npts_ = int(points_.size()) / dim_;
  // and the centre: the mean of the vertices
  for (int d = 0; d < dim_; ++d) {
    double c = 0;
    for (int v = 0; v < fem::num_vertices(g); ++v) c += fem::reference_vertex(g, v)[std::size_t(d)];
    points_.push_back(c / fem::num_vertices(g));
  }
  const Array<double, 3> gr = basis.gradients(std::span<const double>(points_));
  grads_.resize(std::size_t((npts_ + 1) * n_ * dim_));
  for (int q = 0; q <= npts_; ++q)
    for (int i = 0; i < n_; ++i)
      for (int d = 0; d < dim_; ++d) grads_[std::size_t((q * n_ + i) * dim_ + d)] = gr(q, i, d);
}

double TangleCheck::det(const double* nodes, int q) const {
  double j[3][3] = {};  // j[c][d] = d x_c / d xi_d
  for (int i = 0; i < n_; ++i)
    for (int c = 0; c < dim_; ++c)
      for (int d = 0; d < dim_; ++d)
        j[c][d] += nodes[std::size_t(i * dim_ + c)] * grads_[std::size_t((q * n_ + i) * dim_ + d)];
  if (dim_ == 1) return j[0][0];
  if (dim_ == 2) return j[0][0] * j[1][1] - j[0][1] * j[1][0];
  return j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1]) - j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0]) +
         j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0]);
}

std::string TangleCheck::check(const double* nodes) const {
  for (int q = 0; q < npts_; ++q) {
    const double det = this->det(nodes, q);
    if (!(det > 0)) {
      std::ostringstream s;
      s << "det J = " << det << " <= 0 at reference point (";
      for (int d = 0; d < dim_; ++d) s << (d ? ", " : "") << points_[std::size_t(q * dim_ + d)];
      s << ")";
      return s.str();
    }
  }
  return {};
}

}  // namespace tessera::io::detail
