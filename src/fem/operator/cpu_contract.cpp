// The contractions and the batch layout shared by the element-batched CPU kernels
// (cpu_contract.hpp): compiled once with the CPU kernels' flags, so that the 204 instances of
// the fixed-size table are built in one translation unit.
#include "cpu_contract.hpp"

#include <array>
#include <cmath>
#include <utility>

namespace tessera::fem::cpu_detail {

namespace {

/// out = A in (Add: out += A in) along one direction of a batch array: in has `cols` entries
/// along it, out `rows`; `inner` is the product of the extents of the faster directions,
/// `outer` that of the slower ones. A is row-major (rows, cols). Four rows at a time: four
/// independent multiply-add chains per input load.
template <bool Add>
void contract(const double* A, int rows, int cols, const vdouble* in, vdouble* out, int outer, int inner) {
  for (int o = 0; o < outer; ++o) {
    const vdouble* ib = in + std::size_t(o) * cols * inner;
    vdouble* ob = out + std::size_t(o) * rows * inner;
    for (int i = 0; i < inner; ++i) {
      int r = 0;
      for (; r + 4 <= rows; r += 4) {
        const double* a = A + r * cols;
        vdouble s0{}, s1{}, s2{}, s3{};
        for (int c = 0; c < cols; ++c) {
          const vdouble v = ib[c * inner + i];
          s0 = simd::fma(a[c], v, s0);
          s1 = simd::fma(a[cols + c], v, s1);
          s2 = simd::fma(a[2 * cols + c], v, s2);
          s3 = simd::fma(a[3 * cols + c], v, s3);
        }
        vdouble* o0 = ob + r * inner + i;
        if constexpr (Add) {
          o0[0] += s0, o0[inner] += s1, o0[2 * inner] += s2, o0[3 * inner] += s3;
        } else {
          o0[0] = s0, o0[inner] = s1, o0[2 * inner] = s2, o0[3 * inner] = s3;
        }
      }
      for (; r < rows; ++r) {
        const double* a = A + r * cols;
        vdouble s{};
        for (int c = 0; c < cols; ++c) s = simd::fma(a[c], ib[c * inner + i], s);
        if constexpr (Add) ob[r * inner + i] += s;
        else ob[r * inner + i] = s;
      }
    }
  }
}

/// contract with the sizes fixed at compile time: A's entries broadcast once per call and
/// every loop unrolled, so that each line costs its loads, R C multiply-adds and R stores.
template <bool Add, int R, int C>
void contract_fixed(const double* A, const vdouble* in, vdouble* out, int outer, int inner) {
  vdouble a[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) a[r][c] = simd::broadcast(A[r * C + c]);
  for (int o = 0; o < outer; ++o) {
    const vdouble* ib = in + std::size_t(o) * C * inner;
    vdouble* ob = out + std::size_t(o) * R * inner;
    for (int i = 0; i < inner; ++i) {
      vdouble x[C];
      for (int c = 0; c < C; ++c) x[c] = ib[c * inner + i];
      for (int r = 0; r < R; ++r) {
        vdouble s = a[r][0] * x[0];
        for (int c = 1; c < C; ++c) s = simd::fma(a[r][c], x[c], s);
        if constexpr (Add) ob[r * inner + i] += s;
        else ob[r * inner + i] = s;
      }
    }
  }
}

/// contract_fixed for a matrix with mirror symmetry, A(R-1-r, C-1-c) = S A(r, c) (S = 1: values
/// at points symmetric about the middle; S = -1: derivatives), by even and odd parts: with
/// e_c = x_c + x_{C-1-c} and o_c = x_c - x_{C-1-c}, rows r and R-1-r are E_r + O_r and
/// S (E_r - O_r), E_r = sum_c Ae(r, c) e_c, O_r = sum_c Ao(r, c) o_c: half the multiply-adds,
/// the rest additions. EO holds Ae ((R+1)/2 x (C+1)/2, the middle column A(r, C/2) when C is
/// odd) then Ao ((R+1)/2 x C/2); see mirror_parts.
template <bool Add, int R, int C, int S>
void contract_mirror(const double* EO, const vdouble* in, vdouble* out, int outer, int inner) {
  constexpr int HR = (R + 1) / 2, HE = (C + 1) / 2, HO = C / 2;
  vdouble ae[HR][HE], ao[HR][HO > 0 ? HO : 1];
  for (int r = 0; r < HR; ++r) {
    for (int c = 0; c < HE; ++c) ae[r][c] = simd::broadcast(EO[r * HE + c]);
    for (int c = 0; c < HO; ++c) ao[r][c] = simd::broadcast(EO[HR * HE + r * HO + c]);
  }
  for (int o = 0; o < outer; ++o) {
    const vdouble* ib = in + std::size_t(o) * C * inner;
    vdouble* ob = out + std::size_t(o) * R * inner;
    for (int i = 0; i < inner; ++i) {
      vdouble e[HE], od[HO > 0 ? HO : 1];
      for (int c = 0; c < HO; ++c) {
        const vdouble x0 = ib[c * inner + i], x1 = ib[(C - 1 - c) * inner + i];
        e[c] = x0 + x1;
        od[c] = x0 - x1;
      }
      if constexpr (C % 2 == 1) e[HO] = ib[HO * inner + i];
      for (int r = 0; r < HR; ++r) {
        vdouble se = ae[r][0] * e[0], so{};
        for (int c = 1; c < HE; ++c) se = simd::fma(ae[r][c], e[c], se);
        for (int c = 0; c < HO; ++c) so = simd::fma(ao[r][c], od[c], so);
        const vdouble lo = se + so, hi = S > 0 ? se - so : so - se;
        vdouble* o0 = ob + r * inner + i;
        vdouble* o1 = ob + (R - 1 - r) * inner + i;
        if (R % 2 == 1 && r == HR - 1) {  // the middle row
          if constexpr (Add) *o0 += lo;
          else *o0 = lo;
        } else if constexpr (Add) {
          *o0 += lo, *o1 += hi;
        } else {
          *o0 = lo, *o1 = hi;
        }
      }
    }
  }
}


/// The compile-time contractions: rows and columns from 2 to kFixedMax that differ by at most 2
/// (q = p + 1 or p + 2 points, either direction, and the derivatives, rows = columns): the
/// mirror-symmetric ones of the tensor elements (both signs) and plain ones.
constexpr int kFixedMax = 9;
using ContractFn = void (*)(const double*, const vdouble*, vdouble*, int, int);
template <bool Add, int R, int C, int Kind>  // Kind 0 plain, 1 mirror S = 1, 2 mirror S = -1
constexpr ContractFn fixed_entry() {
  if constexpr (R < 2 || C < 2 || R - C > 2 || C - R > 2) return nullptr;
  else if constexpr (Kind == 0) return &contract_fixed<Add, R, C>;
  else return &contract_mirror<Add, R, C, Kind == 1 ? 1 : -1>;
}
constexpr int kSizes = kFixedMax + 1;
using FixedTable = std::array<std::array<std::array<ContractFn, 3>, kSizes>, kSizes>;
template <bool Add, int R, int... C>
constexpr void fixed_row(FixedTable& t, std::integer_sequence<int, C...>) {
  ((t[std::size_t(R)][std::size_t(C)] = {fixed_entry<Add, R, C, 0>(), fixed_entry<Add, R, C, 1>(), fixed_entry<Add, R, C, 2>()}),
   ...);
}
template <bool Add, int... R>
constexpr FixedTable fixed_table(std::integer_sequence<int, R...>) {  // row by row: short folds (Clang's limit)
  FixedTable t{};
  (fixed_row<Add, R>(t, std::make_integer_sequence<int, kSizes>{}), ...);
  return t;
}
template <bool Add>
constexpr FixedTable kFixed = fixed_table<Add>(std::make_integer_sequence<int, kSizes>{});

}  // namespace

/// The compile-time contraction for M's sizes (by even and odd parts where M has them),
/// else the run-time loops (contract).
template <bool Add>
void contract_any(bool fixed, const Mat& M, const vdouble* in, vdouble* out, int outer, int inner) {
  if (fixed && M.rows <= kFixedMax && M.cols <= kFixedMax) {
    const auto& f = kFixed<Add>[std::size_t(M.rows)][std::size_t(M.cols)];
    if (M.sign != 0 && f[M.sign > 0 ? 1 : 2]) return f[M.sign > 0 ? 1 : 2](M.eo, in, out, outer, inner);
    if (f[0]) return f[0](M.a, in, out, outer, inner);
  }
  contract<Add>(M.a, M.rows, M.cols, in, out, outer, inner);
}
template void contract_any<false>(bool, const Mat&, const vdouble*, vdouble*, int, int);
template void contract_any<true>(bool, const Mat&, const vdouble*, vdouble*, int, int);

/// M's even and odd parts (contract_mirror's EO) where A (rows x cols, row-major) has mirror
/// symmetry of sign 1 or -1 to 1e-14 relative to its largest entry; sign 0 and nothing else.
int mirror_parts(const std::vector<double>& A, int rows, int cols, std::vector<double>& eo) {
  double scale = 0;
  for (double v : A) scale = std::max(scale, std::abs(v));
  int sign = 0;
  for (int s : {1, -1}) {
    bool ok = true;
    for (int r = 0; r < rows && ok; ++r)
      for (int c = 0; c < cols && ok; ++c)
        ok = std::abs(A[std::size_t((rows - 1 - r) * cols + cols - 1 - c)] - s * A[std::size_t(r * cols + c)]) <= 1e-14 * scale;
    if (ok) {
      sign = s;
      break;
    }
  }
  eo.clear();
  if (sign == 0) return 0;
  const int HR = (rows + 1) / 2, HE = (cols + 1) / 2, HO = cols / 2;
  eo.assign(std::size_t(HR) * (HE + HO), 0.0);
  for (int r = 0; r < HR; ++r) {
    for (int c = 0; c < HO; ++c) {
      const double a = A[std::size_t(r * cols + c)], b = A[std::size_t(r * cols + cols - 1 - c)];
      eo[std::size_t(r * HE + c)] = 0.5 * (a + b);
      eo[std::size_t(HR * HE + r * HO + c)] = 0.5 * (a - b);
    }
    if (cols % 2 == 1) eo[std::size_t(r * HE + HO)] = A[std::size_t(r * cols + HO)];
  }
  return sign;
}

BatchIndices::BatchIndices(const int* map, index_t ne_, int nd_) : nd(nd_), lanes(W), ne(ne_), nb((ne_ + W - 1) / W) {
  // Where a full batch's lanes hold at most two runs of consecutive node ids at a local node
  // (consecutive elements of NodeOrdering::Interleaved, which numbers a group of elements
  // together, split where the batch reaches into the next group), its gather and scatter are
  // one or two vector accesses and its ids the runs' starts.
  split.assign(std::size_t(nb) * nd, 0);
  at.assign(std::size_t(nb) * nd * 2, 0);
  ids_from.assign(std::size_t(nb), 0);
  int g[64];
  static_assert(W <= 64);
  for (index_t b = 0; b < nb; ++b) {
    ids_from[std::size_t(b)] = ids.size();
    const bool full = (b + 1) * W <= ne;
    for (int i = 0; i < nd; ++i) {
      for (int l = 0; l < W; ++l) g[l] = map[std::size_t(std::min(b * W + l, ne - 1)) * nd + i];
      int k = 1;
      while (k < W && g[k] == g[0] + k) ++k;
      // two runs: the second access starts k entries before lane k's id; with 2 lanes two runs
      // are two single accesses, left to the per-lane path
      bool two = W > 2 && k < W && g[k] >= k;
      for (int l = k + 1; l < W && two; ++l) two = g[l] == g[k] + (l - k);
      const std::size_t pos = std::size_t(b) * nd + i;
      if (full && W > 1 && (k == W || two)) {
        split[pos] = std::uint8_t(k);
        at[2 * pos] = g[0];
        at[2 * pos + 1] = k < W ? g[k] - k : 0;
      } else {
        at[2 * pos] = int(ids.size() - ids_from[std::size_t(b)]);
        ids.insert(ids.end(), g, g + W);
      }
    }
  }
  ids.shrink_to_fit();
}

double BatchIndices::vector_access_share() const {
  if (split.empty()) return 0.0;
  std::size_t n = 0;
  for (std::uint8_t k : split) n += k > 0;
  return double(n) / double(split.size());
}

}  // namespace tessera::fem::cpu_detail
