#pragma once
// On-the-fly geometry of the CPU's batched kernels (cpu_batched.cpp, cpu_interp.cpp): the
// first-order map of a batch of quadrilaterals or hexahedra, one element per lane, evaluated
// line by line at the points of a tensor-product rule. Included only by translation units
// compiled with the CPU kernels' flags (simd::vdouble's width is theirs).

#include "common.hpp"  // invert
#include "cpu_contract.hpp"  // vdouble, W

namespace tessera::fem::cpu_detail {

/// J (and from it J^-1, w det J or the packed w det J J^-1 J^-T) of a batch at the points,
/// from the map's monomial coefficients X[S Dim + r] (multilinear_coefficient: subset S of
/// the directions, row r). Along a line of points in direction x, J's first column is
/// constant and the others are affine in x, so `line` sums the coefficients once per line and
/// `jacobian` costs 2 (Dim - 1) multiply-adds per row instead of Dim 2^(Dim-1).
template <int Dim>
struct VertexLines {
  static constexpr int coefficients = (1 << Dim) * Dim;
  vdouble X[coefficients];
  vdouble c0[Dim]{}, a[Dim - 1][Dim]{}, b[Dim - 1][Dim]{};  // J(r, 0) = c0[r], J(r, 1 + k) = a[k][r] + b[k][r] x

  VertexLines() = default;
  /// From coefficients stored by lanes: Xc[t W + l].
  explicit VertexLines(const double* Xc) {
    for (int t = 0; t < coefficients; ++t) X[t] = simd::load(Xc + std::size_t(t) * W);
  }
  /// The line at y (and z).
  void line(double y, double z) {
    for (int r = 0; r < Dim; ++r) {
      const auto x = [&](int S) { return X[S * Dim + r]; };
      if constexpr (Dim == 2) {
        (void)z;
        c0[r] = x(1) + x(3) * y;
        a[0][r] = x(2), b[0][r] = x(3);
      } else {
        c0[r] = x(1) + x(3) * y + (x(5) + x(7) * y) * z;
        a[0][r] = x(2) + x(6) * z, b[0][r] = x(3) + x(7) * z;
        a[1][r] = x(4) + x(6) * y, b[1][r] = x(5) + x(7) * y;
      }
    }
  }
  /// Sets the line of point q (lexicographic, m points per direction x1) where q starts one;
  /// returns q's x.
  double seek(const double* x1, int m, int q) {
    const int qx = q % m;
    if (qx == 0) line(x1[(q / m) % m], Dim == 3 ? x1[q / (m * m)] : 0.0);
    return x1[qx];
  }
  void jacobian(double x, vdouble J[3][3]) const {
    for (int r = 0; r < Dim; ++r) {
      J[r][0] = c0[r];
      for (int k = 0; k < Dim - 1; ++k) J[r][1 + k] = simd::fma(x, b[k][r], a[k][r]);
    }
  }
  void inverse(double x, vdouble Ji[3][3]) const {
    vdouble J[3][3];
    jacobian(x, J);
    interp_detail::invert<Dim>(J, Ji);
  }
  /// w det J (mass) or the packed w det J J^-1 J^-T (diffusion: 00, 01, (02,) 11, (12, 22)) at
  /// x into F: the numbers the stored factors hold (geometric_factors) up to rounding.
  void factor(double x, double w, bool diffusion, vdouble* F) const {
    vdouble J[3][3];
    jacobian(x, J);
    const vdouble det = Dim == 2 ? J[0][0] * J[1][1] - J[0][1] * J[1][0]
                                 : J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) +
                                       J[0][1] * (J[1][2] * J[2][0] - J[1][0] * J[2][2]) +
                                       J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
    const vdouble wdet = w * det;
    if (!diffusion) {
      F[0] = wdet;
      return;
    }
    vdouble Ji[3][3];
    interp_detail::invert<Dim>(J, Ji);
    int k = 0;
    for (int r = 0; r < Dim; ++r)
      for (int c = r; c < Dim; ++c) {
        vdouble t = Ji[r][0] * Ji[c][0];
        for (int d = 1; d < Dim; ++d) t = simd::fma(Ji[r][d], Ji[c][d], t);
        F[k++] = wdet * t;
      }
  }
  /// factor at point q, its line set where q starts one.
  void point(const double* x1, int m, int q, double w, bool diffusion, vdouble* F) {
    factor(seek(x1, m, q), w, diffusion, F);
  }
};

}  // namespace tessera::fem::cpu_detail
