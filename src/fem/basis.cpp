// H1 Lagrange bases on the reference elements: tensor products of the 1-D GLL basis, and
// nodal bases on the triangle and tetrahedron through the orthonormal Dubiner basis.
#include "tessera/fem/basis.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

namespace {

void check_geometry(Geometry g, const char* where) {
  const int v = static_cast<int>(g);
  TESSERA_REQUIRE(v >= 0 && v <= 4, where, ": invalid Geometry value ", v, " (valid: 0..4)");
}

// Scaled Jacobi polynomials S_n(y, s) = s^n P_n^(a,0)(2 y / s - 1), n = 0..nmax, and their
// partial derivatives with respect to y and s. S_n is a homogeneous polynomial of degree n
// in (y, s); the three-term recurrence of P_n^(a,0) multiplied by s^n gives
//   A_n S_n = (c1 (2y - s) + c2 s) S_{n-1} - c3 s^2 S_{n-2}
// with A_n = 2n(n+a)(2n+a-2), c1 = (2n+a-1)(2n+a)(2n+a-2), c2 = (2n+a-1) a^2,
// c3 = 2(n+a-1)(n-1)(2n+a), and S_0 = 1, S_1 = (a+2) y - s. No division by s anywhere.
void scaled_jacobi(int nmax, double a, double y, double s, double* S, double* Sy, double* Ss) {
  S[0] = 1.0, Sy[0] = 0.0, Ss[0] = 0.0;
  if (nmax == 0) return;
  S[1] = (a + 2.0) * y - s, Sy[1] = a + 2.0, Ss[1] = -1.0;
  for (int n = 2; n <= nmax; ++n) {
    const double A = 2.0 * n * (n + a) * (2.0 * n + a - 2.0);
    const double c1 = (2.0 * n + a - 1.0) * (2.0 * n + a) * (2.0 * n + a - 2.0);
    const double c2 = (2.0 * n + a - 1.0) * a * a;
    const double c3 = 2.0 * (n + a - 1.0) * (n - 1.0) * (2.0 * n + a);
    const double lin = c1 * (2.0 * y - s) + c2 * s;
    S[n] = (lin * S[n - 1] - c3 * s * s * S[n - 2]) / A;
    Sy[n] = (2.0 * c1 * S[n - 1] + lin * Sy[n - 1] - c3 * s * s * Sy[n - 2]) / A;
    Ss[n] = ((c2 - c1) * S[n - 1] + lin * Ss[n - 1] - 2.0 * c3 * s * S[n - 2] - c3 * s * s * Ss[n - 2]) / A;
  }
}

// Small dense LU factorisation with partial pivoting (row-major, in place).
class DenseLu {
 public:
  DenseLu(std::vector<double> a, index_t n) : a_(std::move(a)), piv_(static_cast<std::size_t>(n)), n_(n) {
    for (index_t k = 0; k < n; ++k) {
      index_t r = k;
      double best = std::abs(a_[k * n + k]);
      for (index_t i = k + 1; i < n; ++i)
        if (std::abs(a_[i * n + k]) > best) best = std::abs(a_[i * n + k]), r = i;
      piv_[k] = r;
      if (best == 0.0) {
        singular_ = true;
        return;
      }
      if (r != k)
        for (index_t j = 0; j < n; ++j) std::swap(a_[k * n + j], a_[r * n + j]);
      const double inv = 1.0 / a_[k * n + k];
      for (index_t i = k + 1; i < n; ++i) {
        const double m = a_[i * n + k] * inv;
        a_[i * n + k] = m;
        if (m == 0.0) continue;
        double* ri = &a_[i * n];
        const double* rk = &a_[k * n];
        for (index_t j = k + 1; j < n; ++j) ri[j] -= m * rk[j];
      }
    }
  }
  bool singular() const { return singular_; }

  // The inverse, row-major.
  std::vector<double> inverse() const {
    const index_t n = n_;
    // Solve A X = I column by column on a transposed buffer (row c of xt = column c of X).
    std::vector<double> xt(static_cast<std::size_t>(n * n), 0.0);
    std::vector<double> b(static_cast<std::size_t>(n));
    for (index_t c = 0; c < n; ++c) {
      std::fill(b.begin(), b.end(), 0.0);
      b[c] = 1.0;
      for (index_t k = 0; k < n; ++k) std::swap(b[k], b[piv_[k]]);
      for (index_t i = 0; i < n; ++i) {
        double s = b[i];
        for (index_t j = 0; j < i; ++j) s -= a_[i * n + j] * b[j];
        b[i] = s;
      }
      for (index_t i = n; i-- > 0;) {
        double s = b[i];
        for (index_t j = i + 1; j < n; ++j) s -= a_[i * n + j] * b[j];
        b[i] = s / a_[i * n + i];
      }
      std::copy(b.begin(), b.end(), xt.begin() + c * n);
    }
    std::vector<double> x(static_cast<std::size_t>(n * n));
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j < n; ++j) x[i * n + j] = xt[j * n + i];
    return x;
  }

 private:
  std::vector<double> a_;
  std::vector<index_t> piv_;
  index_t n_;
  bool singular_ = false;
};

double norm1(const std::vector<double>& a, index_t n) {
  double best = 0.0;
  for (index_t j = 0; j < n; ++j) {
    double s = 0.0;
    for (index_t i = 0; i < n; ++i) s += std::abs(a[i * n + j]);
    best = std::max(best, s);
  }
  return best;
}

// Vandermonde matrix V(i, m) = psi_m(nodes(i, :)), row-major.
std::vector<double> vandermonde(Geometry g, int p, const Array<double, 2>& nodes_any) {
  const Array<double, 2> nodes = nodes_any.to_host();
  const index_t n = num_nodes(g, p);
  const int d = dim(g);
  TESSERA_REQUIRE(nodes.extent(0) == n && nodes.extent(1) == d, "fem::vandermonde_condition: nodes '", nodes.label(),
                  "' have extents (", nodes.extent(0), ", ", nodes.extent(1), "); the order-", p, " ", name(g),
                  " needs (", n, ", ", d, ")");
  std::vector<double> V(static_cast<std::size_t>(n * n));
  for (index_t i = 0; i < n; ++i) {
    const double x[3] = {nodes(i, 0), d > 1 ? nodes(i, 1) : 0.0, d > 2 ? nodes(i, 2) : 0.0};
    orthonormal_basis(g, p, std::span<const double>(x, d), std::span<double>(V.data() + i * n, n));
  }
  return V;
}

// Condition number ||V||_1 ||V^-1||_1, and V^-1 into *inverse when given.
double condition_and_inverse(Geometry g, int p, std::vector<double> V, std::vector<double>* inverse) {
  const index_t n = num_nodes(g, p);
  const double nv = norm1(V, n);
  DenseLu lu(std::move(V), n);
  TESSERA_REQUIRE(!lu.singular(), "fem::vandermonde_condition: the Vandermonde matrix of the order-", p, " ",
                  name(g), " nodes is singular (two nodes coincide, or the nodes lie on an algebraic curve of ",
                  "degree <= p); use unisolvent nodes such as simplex_nodes()");
  std::vector<double> inv = lu.inverse();
  const double c = nv * norm1(inv, n);
  if (inverse) *inverse = std::move(inv);
  return c;
}

}  // namespace

int max_basis_order(Geometry g) {
  check_geometry(g, "fem::max_basis_order");
  return is_simplex(g) ? max_simplex_order : max_basis_order_1d;
}

void orthonormal_basis(Geometry g, int p, std::span<const double> x, std::span<double> values,
                       std::span<double> gradients) {
  check_geometry(g, "fem::orthonormal_basis");
  const int d = dim(g);
  TESSERA_REQUIRE(p >= 0 && p <= max_basis_order(g), "fem::orthonormal_basis: degree p = ", p,
                  " is out of range on the ", name(g), " (valid: 0..", max_basis_order(g), ")");
  TESSERA_REQUIRE(x.size() == static_cast<std::size_t>(d), "fem::orthonormal_basis: the point has ", x.size(),
                  " coordinates; the ", name(g), " needs ", d);
  const std::size_t n = p == 0 ? 1 : static_cast<std::size_t>(num_nodes(g, p));
  TESSERA_REQUIRE(values.size() >= n, "fem::orthonormal_basis: values span has ", values.size(), " entries, the ",
                  name(g), " of degree ", p, " has ", n, " modes");
  const bool grad = !gradients.empty();
  TESSERA_REQUIRE(!grad || gradients.size() >= n * d, "fem::orthonormal_basis: gradients span has ",
                  gradients.size(), " entries, needs ", n * d);

  constexpr int max_n = 65;
  double S[3][max_n], Sy[3][max_n], Ss[3][max_n];
  if (is_tensor(g)) {
    for (int c = 0; c < d; ++c) {
      scaled_jacobi(p, 0.0, x[c], 1.0, S[c], Sy[c], Ss[c]);
      for (int m = 0; m <= p; ++m) {
        const double f = std::sqrt(2.0 * m + 1.0);
        S[c][m] *= f, Sy[c][m] *= f;
      }
    }
    const int kmax = d == 3 ? p : 0, jmax = d >= 2 ? p : 0;
    std::size_t m = 0;
    for (int k = 0; k <= kmax; ++k)
      for (int j = 0; j <= jmax; ++j)
        for (int i = 0; i <= p; ++i, ++m) {
          const double vy = d >= 2 ? S[1][j] : 1.0, vz = d == 3 ? S[2][k] : 1.0;
          values[m] = S[0][i] * vy * vz;
          if (!grad) continue;
          gradients[m * d] = Sy[0][i] * vy * vz;
          if (d >= 2) gradients[m * d + 1] = S[0][i] * Sy[1][j] * vz;
          if (d == 3) gradients[m * d + 2] = S[0][i] * vy * Sy[2][k];
        }
    return;
  }

  // Simplices: psi_ijk = c A_i(x, 1 - y - z) B_ij(y, 1 - z) C_ijk(z, 1) with A = S^(0),
  // B = S^(2i+1), C = S^(2i+2j+2) (C = 1 on the triangle).
  const double X = x[0], Y = x[1], Z = d == 3 ? x[2] : 0.0;
  scaled_jacobi(p, 0.0, X, 1.0 - Y - Z, S[0], Sy[0], Ss[0]);
  std::size_t m = 0;
  if (d == 2) {
    // Mode order = lattice order: i fastest, then j. Precompute B for each i.
    std::vector<std::vector<double>> Bi(static_cast<std::size_t>(p + 1)), Byi(Bi.size());
    for (int i = 0; i <= p; ++i) {
      Bi[i].resize(static_cast<std::size_t>(p - i + 1)), Byi[i].resize(Bi[i].size());
      std::vector<double> tmp(Bi[i].size());
      scaled_jacobi(p - i, 2.0 * i + 1.0, Y, 1.0, Bi[i].data(), Byi[i].data(), tmp.data());
    }
    for (int j = 0; j <= p; ++j)
      for (int i = 0; i <= p - j; ++i, ++m) {
        const double c = std::sqrt(2.0 * (2 * i + 1) * (i + j + 1));
        const double a = S[0][i], ay = Sy[0][i], as = Ss[0][i];
        const double b = Bi[i][j], by = Byi[i][j];
        values[m] = c * a * b;
        if (!grad) continue;
        gradients[m * 2] = c * ay * b;
        gradients[m * 2 + 1] = c * (-as * b + a * by);
      }
    return;
  }
  // Tetrahedron: order i fastest, then j, then k.
  const int np1 = p + 1;
  std::vector<double> Bt(static_cast<std::size_t>(np1 * np1)), Byt(Bt.size()), Bst(Bt.size());
  for (int i = 0; i <= p; ++i)
    scaled_jacobi(p - i, 2.0 * i + 1.0, Y, 1.0 - Z, &Bt[i * np1], &Byt[i * np1], &Bst[i * np1]);
  std::vector<double> Ct(static_cast<std::size_t>(np1 * np1)), Czt(Ct.size()), Cst(Ct.size());
  for (int ij = 0; ij <= p; ++ij)  // C depends on i + j only
    scaled_jacobi(p - ij, 2.0 * ij + 2.0, Z, 1.0, &Ct[ij * np1], &Czt[ij * np1], &Cst[ij * np1]);
  for (int k = 0; k <= p; ++k)
    for (int j = 0; j <= p - k; ++j)
      for (int i = 0; i <= p - j - k; ++i, ++m) {
        const double c = std::sqrt((2.0 * i + 1) * (2.0 * i + 2 * j + 2) * (2.0 * i + 2 * j + 2 * k + 3));
        const double a = S[0][i], ay = Sy[0][i], as = Ss[0][i];
        const double b = Bt[i * np1 + j], by = Byt[i * np1 + j], bs = Bst[i * np1 + j];
        const double cc = Ct[(i + j) * np1 + k], cz = Czt[(i + j) * np1 + k];
        values[m] = c * a * b * cc;
        if (!grad) continue;
        gradients[m * 3] = c * ay * b * cc;
        gradients[m * 3 + 1] = c * (-as * b + a * by) * cc;
        gradients[m * 3 + 2] = c * ((-as * b - a * bs) * cc + a * b * cz);
      }
}

double vandermonde_condition(Geometry g, int p, const Array<double, 2>& nodes) {
  check_geometry(g, "fem::vandermonde_condition");
  TESSERA_REQUIRE(p >= 1 && p <= max_basis_order(g), "fem::vandermonde_condition: order p = ", p,
                  " is out of range on the ", name(g), " (valid: 1..", max_basis_order(g), ")");
  return condition_and_inverse(g, p, vandermonde(g, p, nodes), nullptr);
}

H1Basis::H1Basis(Geometry g, int p) : geom_(g), order_(p) {
  check_geometry(g, "H1Basis");
  TESSERA_REQUIRE(p >= 1 && p <= max_basis_order(g), "H1Basis: order p = ", p, " is out of range on the ", name(g),
                  " (valid: 1..", max_basis_order(g), (is_simplex(g) ? ", max_simplex_order" : ", max_basis_order_1d"),
                  "); choose an order in that range");
  dim_ = fem::dim(g);
  size_ = num_nodes(g, p);
  if (is_tensor(g)) {
    basis1d_.emplace_back(p);
    const auto x = basis1d_[0].nodes();
    nodes_ = Array<double, 2>("fem::H1Basis nodes", {size_, dim_});
    const auto lattice = lattice_nodes(g, p);
    for (index_t i = 0; i < size_; ++i)
      for (int c = 0; c < dim_; ++c) nodes_(i, c) = x[lattice[i][c]];
    Array<double, 2> x1("fem::H1Basis 1-D nodes", {p + 1, 1});
    for (int i = 0; i <= p; ++i) x1(i, 0) = x[i];
    condition_ = fem::vandermonde_condition(Geometry::Segment, p, x1);
  } else {
    nodes_ = simplex_nodes(g, p);
    condition_ = condition_and_inverse(g, p, vandermonde(g, p, nodes_), &inv_vandermonde_);
  }
}

const LagrangeBasis1D& H1Basis::basis_1d() const {
  TESSERA_REQUIRE(!basis1d_.empty(), "H1Basis::basis_1d: the ", name(geom_),
                  " basis is not a tensor product; only segment, quadrilateral and hexahedron bases have a 1-D factor");
  return basis1d_[0];
}

double H1Basis::vandermonde_condition() const { return condition_; }

void H1Basis::check_point(std::size_t ncoords, const char* where) const {
  TESSERA_REQUIRE(ncoords == static_cast<std::size_t>(dim_), where, ": the point has ", ncoords,
                  " coordinates; the ", name(geom_), " basis needs ", dim_, " (x first)");
}

void H1Basis::eval(std::span<const double> x, std::span<double> values) const {
  eval(x, values, {});
}

void H1Basis::eval(std::span<const double> x, std::span<double> values, std::span<double> gradients) const {
  check_point(x.size(), "H1Basis::eval");
  const std::size_t n = static_cast<std::size_t>(size_);
  TESSERA_REQUIRE(values.size() >= n, "H1Basis::eval: values span has ", values.size(), " entries, the basis has ",
                  n, " functions");
  const bool grad = !gradients.empty();
  TESSERA_REQUIRE(!grad || gradients.size() >= n * dim_, "H1Basis::eval: gradients span has ", gradients.size(),
                  " entries, needs size() * dim() = ", n * dim_);
  if (!basis1d_.empty()) {
    const LagrangeBasis1D& b = basis1d_[0];
    const int np1 = order_ + 1;
    double v[3][max_basis_order_1d + 1], dv[3][max_basis_order_1d + 1];
    for (int c = 0; c < dim_; ++c) b.eval(x[c], std::span<double>(v[c], np1), std::span<double>(dv[c], np1));
    const int kmax = dim_ == 3 ? order_ : 0, jmax = dim_ >= 2 ? order_ : 0;
    std::size_t m = 0;
    for (int k = 0; k <= kmax; ++k)
      for (int j = 0; j <= jmax; ++j)
        for (int i = 0; i < np1; ++i, ++m) {
          const double vy = dim_ >= 2 ? v[1][j] : 1.0, vz = dim_ == 3 ? v[2][k] : 1.0;
          values[m] = v[0][i] * vy * vz;
          if (!grad) continue;
          gradients[m * dim_] = dv[0][i] * vy * vz;
          if (dim_ >= 2) gradients[m * dim_ + 1] = v[0][i] * dv[1][j] * vz;
          if (dim_ == 3) gradients[m * dim_ + 2] = v[0][i] * vy * dv[2][k];
        }
    return;
  }
  // Simplex: phi_j = sum_m psi_m (V^-1)_mj, likewise for the gradients.
  std::vector<double> psi(n), dpsi(grad ? n * dim_ : 0);
  orthonormal_basis(geom_, order_, x, psi, dpsi);
  std::fill(values.begin(), values.begin() + n, 0.0);
  if (grad) std::fill(gradients.begin(), gradients.begin() + n * dim_, 0.0);
  for (std::size_t m = 0; m < n; ++m) {
    const double* row = &inv_vandermonde_[m * n];
    const double pm = psi[m];
    for (std::size_t j = 0; j < n; ++j) values[j] += pm * row[j];
    if (!grad) continue;
    for (int c = 0; c < dim_; ++c) {
      const double g = dpsi[m * dim_ + c];
      for (std::size_t j = 0; j < n; ++j) gradients[j * dim_ + c] += g * row[j];
    }
  }
}

Array<double, 2> H1Basis::eval(const Array<double, 2>& points) const {
  const Array<double, 2> h = points.to_host();
  TESSERA_REQUIRE(h.extent(1) == dim_, "H1Basis::eval: points '", h.label(), "' have ", h.extent(1),
                  " coordinates (extent 1); the ", name(geom_), " basis needs ", dim_);
  return eval(std::span<const double>(h.data(), static_cast<std::size_t>(h.size())));
}

Array<double, 2> H1Basis::eval(std::span<const double> points) const {
  TESSERA_REQUIRE(points.size() % dim_ == 0, "H1Basis::eval: ", points.size(),
                  " point coordinates is not a multiple of the dimension ", dim_, " of the ", name(geom_));
  const index_t np = static_cast<index_t>(points.size()) / dim_;
  Array<double, 2> B("fem::H1Basis B", {np, size_});
  for (index_t q = 0; q < np; ++q)
    eval(points.subspan(q * dim_, dim_), std::span<double>(B.data() + q * size_, size_));
  return B;
}

Array<double, 3> H1Basis::gradients(const Array<double, 2>& points) const {
  const Array<double, 2> h = points.to_host();
  TESSERA_REQUIRE(h.extent(1) == dim_, "H1Basis::gradients: points '", h.label(), "' have ", h.extent(1),
                  " coordinates (extent 1); the ", name(geom_), " basis needs ", dim_);
  return gradients(std::span<const double>(h.data(), static_cast<std::size_t>(h.size())));
}

Array<double, 3> H1Basis::gradients(std::span<const double> points) const {
  TESSERA_REQUIRE(points.size() % dim_ == 0, "H1Basis::gradients: ", points.size(),
                  " point coordinates is not a multiple of the dimension ", dim_, " of the ", name(geom_));
  const index_t np = static_cast<index_t>(points.size()) / dim_;
  Array<double, 3> G("fem::H1Basis G", {np, size_, dim_});
  std::vector<double> v(static_cast<std::size_t>(size_));
  for (index_t q = 0; q < np; ++q)
    eval(points.subspan(q * dim_, dim_), v, std::span<double>(G.data() + q * size_ * dim_, size_ * dim_));
  return G;
}

BasisTables tabulate(const H1Basis& basis, const QuadratureRule& rule) {
  TESSERA_REQUIRE(rule.geom == basis.geometry(), "tabulate: the quadrature rule is on a ", name(rule.geom),
                  " but the basis is on a ", name(basis.geometry()), "; use a rule of the basis' geometry");
  const QuadratureRule r = rule.to_host();
  const index_t nq = r.size(), n = basis.size();
  const int d = basis.dim();
  TESSERA_REQUIRE(r.points.extent(0) == nq && r.points.extent(1) == d, "tabulate: the rule's points have extents (",
                  r.points.extent(0), ", ", r.points.extent(1), "); expected (", nq, ", ", d, ")");
  BasisTables t{Array<double, 2>("fem::BasisTables B", {nq, n}), Array<double, 3>("fem::BasisTables G", {nq, n, d})};
  for (index_t q = 0; q < nq; ++q)
    basis.eval(std::span<const double>(r.points.data() + q * d, d), std::span<double>(t.B.data() + q * n, n),
               std::span<double>(t.G.data() + q * n * d, n * d));
  return t;
}

BasisTables1D tabulate_1d(const H1Basis& basis, const QuadratureRule& rule_1d) {
  TESSERA_REQUIRE(is_tensor(basis.geometry()), "tabulate_1d: the ", name(basis.geometry()),
                  " basis is not a tensor product; use tabulate() for simplices");
  return tabulate(basis.basis_1d(), rule_1d);
}

}  // namespace tessera::fem
