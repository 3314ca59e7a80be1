// CSR and COO sparse matrices: construction, checks, conversions and products.
// Launches kernels: compiled by nvcc in CUDA builds (src/linalg/sources.cmake).
#include "tessera/linalg/csr.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "tessera/core/backend/sparse.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/core/memory.hpp"

namespace tessera::linalg {

namespace csr_kernels {

// Kernels live in free functions: nvcc accepts extended lambdas neither in constructors
// nor in private member functions.

void diagonal_positions(const Exec& exec, index_t rows, index_t cols, View<const std::int64_t, 1> off,
                        View<const int, 1> col, View<std::int64_t, 1> out) {
  forall("linalg/csr_diagonal_positions", exec, rows, TESSERA_LAMBDA(index_t r) {
    const std::int64_t end = off(r + 1);
    std::int64_t lo = off(r), hi = end, pos = -1;
    if (r < cols) {
      const int target = static_cast<int>(r);
      while (lo < hi) {  // first position whose column is >= r
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (col(mid) < target)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (lo < end && col(lo) == target) pos = lo;
    }
    out(r) = pos;
  });
}

void gather_diagonal(const Exec& exec, index_t rows, View<const std::int64_t, 1> pos, View<const double, 1> val,
                     View<double, 1> out) {
  forall("linalg/csr_diagonal", exec, rows, TESSERA_LAMBDA(index_t r) {
    const std::int64_t p = pos(r);
    out(r) = p >= 0 ? val(p) : 0.0;
  });
}

void spmv_rows(const Exec& exec, index_t rows, View<const std::int64_t, 1> off, View<const int, 1> col,
               View<const double, 1> val, View<const double, 1> x, View<double, 1> y, double alpha, double beta) {
  forall("linalg/csr_spmv", exec, rows, TESSERA_LAMBDA(index_t r) {
    double s = 0.0;
    const std::int64_t end = off(r + 1);
    for (std::int64_t k = off(r); k < end; ++k) s += val(k) * x(col(k));
    y(r) = beta == 0.0 ? alpha * s : alpha * s + beta * y(r);
  });
}

/// y = beta y (0 when beta == 0, without reading y): the product of a matrix without entries.
void scale(const Exec& exec, index_t rows, View<double, 1> y, double beta) {
  forall("linalg/csr_spmv_empty", exec, rows, TESSERA_LAMBDA(index_t r) { y(r) = beta == 0.0 ? 0.0 : beta * y(r); });
}

void narrow_offsets(const Exec& exec, index_t n, View<const std::int64_t, 1> in, View<int, 1> out) {
  forall("linalg/csr_offsets_to_int32", exec, n, TESSERA_LAMBDA(index_t i) { out(i) = static_cast<int>(in(i)); });
}

void widen_columns(const Exec& exec, index_t n, View<const int, 1> in, View<std::int64_t, 1> out) {
  forall("linalg/csr_columns_to_int64", exec, n, TESSERA_LAMBDA(index_t i) { out(i) = in(i); });
}

void expand_rows(const Exec& exec, index_t rows, View<const std::int64_t, 1> off, View<std::int64_t, 1> row) {
  forall("linalg/csr_to_coo", exec, rows, TESSERA_LAMBDA(index_t r) {
    const std::int64_t end = off(r + 1);
    for (std::int64_t k = off(r); k < end; ++k) row(k) = r;
  });
}

}  // namespace csr_kernels

// ------------------------------------------------------------------ GPU state

struct CsrMatrix::GpuState {
  detail::sparse::SparseMvHandle* handle = nullptr;
  Array<int, 1> offsets32;          // when nnz and rows are below 2^31
  Array<std::int64_t, 1> cols64;    // otherwise
  ~GpuState() { detail::sparse::spmv_destroy(handle); }
};

void CsrMatrix::GpuStateDeleter::operator()(GpuState* s) const noexcept { delete s; }

CsrMatrix::GpuState& CsrMatrix::gpu_state() const {
  if (gpu_) return *gpu_;
  std::unique_ptr<GpuState, GpuStateDeleter> s(new GpuState);
  using detail::sparse::SparseIndex;
  // TESSERA_CSR_INDEX64=1 takes the 64-bit path for every matrix (to test it on small ones).
  const char* force = std::getenv("TESSERA_CSR_INDEX64");
  const bool index64 = (force && std::strcmp(force, "1") == 0) || nnz_ > INT_MAX || rows_ > INT_MAX;
  if (!index64) {
    s->offsets32 = Array<int, 1>("csr_row_offsets_int32", {rows_ + 1}, space());
    csr_kernels::narrow_offsets(exec_, rows_ + 1, row_offsets_.cview(), s->offsets32.view());
    s->handle = detail::sparse::spmv_create(rows_, cols_, nnz_, s->offsets32.data(), SparseIndex::Int32,
                                            col_indices_.data(), SparseIndex::Int32, values_.data());
  } else {
    s->cols64 = Array<std::int64_t, 1>("csr_col_indices_int64", {nnz_}, space());
    csr_kernels::widen_columns(exec_, nnz_, col_indices_.cview(), s->cols64.view());
    s->handle = detail::sparse::spmv_create(rows_, cols_, nnz_, row_offsets_.data(), SparseIndex::Int64,
                                            s->cols64.data(), SparseIndex::Int64, values_.data());
  }
  gpu_ = std::move(s);
  return *gpu_;
}

// ------------------------------------------------------------------ construction

namespace {

template <class T>
T element(const Array<T, 1>& a, index_t i) {
  T v{};
  detail::copy_bytes(&v, Space::Host, a.data() + i, a.space(), sizeof(T));
  return v;
}

template <class T>
void require_readable(const Array<T, 1>& a, const char* what, const Exec& exec) {
  TESSERA_REQUIRE(accessible(exec.backend, a.space()), "CsrMatrix: ", what, " ('", a.label(), "') live in ",
                  to_string(a.space()), " memory, which the ", to_string(exec.backend),
                  " backend cannot read; copy them with clone(exec.space()) first");
}

}  // namespace

CsrMatrix::CsrMatrix() : row_offsets_("csr_row_offsets", {1}, Space::Host) {}

CsrMatrix::CsrMatrix(index_t rows, index_t cols, Array<std::int64_t, 1> row_offsets, Array<int, 1> col_indices,
                     Array<double, 1> values, const Exec& exec)
    : rows_(rows),
      cols_(cols),
      nnz_(col_indices.size()),
      row_offsets_(std::move(row_offsets)),
      col_indices_(std::move(col_indices)),
      values_(std::move(values)),
      exec_(exec) {
  TESSERA_REQUIRE(rows_ >= 0 && cols_ >= 0, "CsrMatrix: negative size ", rows_, " x ", cols_);
  TESSERA_REQUIRE(cols_ <= INT_MAX, "CsrMatrix: ", cols_,
                  " columns do not fit the 32-bit column indices (at most 2147483647 columns)");
  TESSERA_REQUIRE(row_offsets_.size() == rows_ + 1, "CsrMatrix: row_offsets has ", row_offsets_.size(),
                  " entries, but a matrix of ", rows_, " rows needs rows + 1 = ", rows_ + 1);
  TESSERA_REQUIRE(values_.size() == nnz_, "CsrMatrix: col_indices has ", nnz_, " entries but values has ",
                  values_.size(), "; both need one entry per stored element (nnz)");
  // (Empty col_indices / values may be unallocated Arrays: their space does not matter.)
  require_readable(row_offsets_, "row_offsets", exec_);
  if (col_indices_.allocated()) require_readable(col_indices_, "col_indices", exec_);
  if (values_.allocated()) require_readable(values_, "values", exec_);
  const bool one_space = (!col_indices_.allocated() || col_indices_.space() == row_offsets_.space()) &&
                         (!values_.allocated() || values_.space() == row_offsets_.space());
  TESSERA_REQUIRE(one_space, "CsrMatrix: row_offsets, col_indices and values must live in one memory space (they are in ",
                  to_string(row_offsets_.space()), ", ", to_string(col_indices_.space()), " and ",
                  to_string(values_.space()), " memory)");
  const std::int64_t first = element(row_offsets_, 0);
  const std::int64_t last = element(row_offsets_, rows_);
  TESSERA_REQUIRE(first == 0, "CsrMatrix: row_offsets[0] is ", first, ", must be 0 (offsets are zero-based)");
  TESSERA_REQUIRE(last == nnz_, "CsrMatrix: row_offsets[", rows_, "] is ", last, " but col_indices and values hold ",
                  nnz_, " entries; the last offset must equal nnz");
#if defined(TESSERA_BOUNDS_CHECK)
  check();
#endif
  diagonal_positions_ = Array<std::int64_t, 1>("csr_diagonal_positions", {rows_}, row_offsets_.space());
  csr_kernels::diagonal_positions(exec_, rows_, cols_, row_offsets_.cview(), col_indices_.cview(),
                                  diagonal_positions_.view());
}

CsrMatrix::CsrMatrix(const CsrMatrix& other) : CsrMatrix(other.to(other.exec_)) {}

CsrMatrix& CsrMatrix::operator=(const CsrMatrix& other) {
  if (this != &other) *this = other.to(other.exec_);
  return *this;
}

CsrMatrix::CsrMatrix(CsrMatrix&& other) noexcept
    : rows_(other.rows_),
      cols_(other.cols_),
      nnz_(other.nnz_),
      row_offsets_(std::move(other.row_offsets_)),
      col_indices_(std::move(other.col_indices_)),
      values_(std::move(other.values_)),
      diagonal_positions_(std::move(other.diagonal_positions_)),
      exec_(other.exec_),
      gpu_(std::move(other.gpu_)) {
  other.make_empty();
}

CsrMatrix& CsrMatrix::operator=(CsrMatrix&& other) noexcept {
  if (this != &other) {
    gpu_.reset();  // frees the cuSPARSE state of the old matrix before its arrays go
    rows_ = other.rows_;
    cols_ = other.cols_;
    nnz_ = other.nnz_;
    row_offsets_ = std::move(other.row_offsets_);
    col_indices_ = std::move(other.col_indices_);
    values_ = std::move(other.values_);
    diagonal_positions_ = std::move(other.diagonal_positions_);
    exec_ = other.exec_;
    gpu_ = std::move(other.gpu_);
    other.make_empty();
  }
  return *this;
}

CsrMatrix::~CsrMatrix() = default;

void CsrMatrix::make_empty() noexcept {
  gpu_.reset();
  rows_ = cols_ = nnz_ = 0;
  // One zero offset, as in a default-constructed matrix (8 bytes: if even that cannot be
  // allocated, the process cannot go on anyway).
  row_offsets_ = Array<std::int64_t, 1>("csr_row_offsets", {1}, Space::Host);
  col_indices_ = Array<int, 1>();
  values_ = Array<double, 1>();
  diagonal_positions_ = Array<std::int64_t, 1>();
  exec_ = Exec::serial();
}

// ------------------------------------------------------------------ queries and products

Array<double, 1> CsrMatrix::diagonal() const {
  Array<double, 1> d("csr_diagonal", {rows_}, space());
  csr_kernels::gather_diagonal(exec_, rows_, diagonal_positions_.cview(), values_.cview(), d.view());
  return d;
}

namespace {

bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return false;
  const auto pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

void require_reachable(const void* p, const char* name, const Exec& exec) {
  const int s = detail::pointer_space(p);
  if (s < 0) return;  // this build cannot tell (no GPU): nothing to check
  TESSERA_REQUIRE(accessible(exec.backend, static_cast<Space>(s)), "CsrMatrix::apply: ", name, " lives in ",
                  to_string(static_cast<Space>(s)), " memory, which the ", to_string(exec.backend),
                  " backend of the matrix cannot use; pass a vector in ", to_string(exec.space()),
                  " memory (Array::clone(exec.space()), or move the matrix with to(exec))");
}

}  // namespace

void CsrMatrix::apply(View<const double, 1> x, View<double, 1> y, double alpha, double beta) const {
  TESSERA_REQUIRE(x.size() == cols_, "CsrMatrix::apply: x has ", x.size(), " entries but the matrix is ", rows_,
                  " x ", cols_, "; y = alpha A x + beta y needs x of size cols = ", cols_, " and y of size rows = ",
                  rows_);
  TESSERA_REQUIRE(y.size() == rows_, "CsrMatrix::apply: y has ", y.size(), " entries but the matrix is ", rows_,
                  " x ", cols_, "; y = alpha A x + beta y needs y of size rows = ", rows_, " and x of size cols = ",
                  cols_);
  TESSERA_REQUIRE(!overlap(x.data(), static_cast<std::size_t>(x.size()) * sizeof(double), y.data(),
                           static_cast<std::size_t>(y.size()) * sizeof(double)),
                  "CsrMatrix::apply: x and y overlap in memory; the product needs a separate output vector");
  if (rows_ == 0) return;
  if (cols_ > 0) require_reachable(x.data(), "x", exec_);
  require_reachable(y.data(), "y", exec_);
  if (nnz_ == 0) {
    csr_kernels::scale(exec_, rows_, y, beta);
    return;
  }
  if (exec_.backend == Backend::Cuda) {
    detail::sparse::spmv("linalg/csr_spmv", gpu_state().handle, alpha, x.data(), beta, y.data());
    return;
  }
  csr_kernels::spmv_rows(exec_, rows_, row_offsets_.cview(), col_indices_.cview(), values_.cview(), x, y, alpha,
                         beta);
}

CsrMatrix CsrMatrix::to(const Exec& exec) const {
  const Space s = exec.space();
  return CsrMatrix(rows_, cols_, row_offsets_.clone(s), col_indices_.clone(s), values_.clone(s), exec);
}

void CsrMatrix::check() const {
  const std::vector<std::int64_t> off = row_offsets_.to_vector();
  const std::vector<int> col = col_indices_.to_vector();
  TESSERA_REQUIRE(static_cast<index_t>(off.size()) == rows_ + 1, "CsrMatrix::check: row_offsets has ", off.size(),
                  " entries, a matrix of ", rows_, " rows needs ", rows_ + 1);
  TESSERA_REQUIRE(off[0] == 0, "CsrMatrix::check: row_offsets[0] is ", off[0], ", must be 0");
  for (index_t r = 0; r < rows_; ++r) {
    const std::int64_t b = off[static_cast<std::size_t>(r)], e = off[static_cast<std::size_t>(r) + 1];
    TESSERA_REQUIRE(e >= b, "CsrMatrix::check: row ", r, ": row_offsets decrease from ", b, " to ", e,
                    " (row offsets must never decrease)");
    TESSERA_REQUIRE(e <= nnz_, "CsrMatrix::check: row ", r, ": row offset ", e, " is past the ", nnz_,
                    " stored entries");
    for (std::int64_t k = b; k < e; ++k) {
      const int c = col[static_cast<std::size_t>(k)];
      TESSERA_REQUIRE(c >= 0 && c < cols_, "CsrMatrix::check: row ", r, ": column ", c, " at position ", k,
                      " is outside 0..", cols_ - 1);
      if (k > b) {
        const int prev = col[static_cast<std::size_t>(k) - 1];
        TESSERA_REQUIRE(c > prev, "CsrMatrix::check: row ", r, ": column ", c, " at position ", k,
                        (c == prev ? " repeats column " : " follows column "), prev,
                        "; columns must be sorted ascending and unique within a row (csr_from_coo sorts and sums "
                        "duplicates)");
      }
    }
  }
  TESSERA_REQUIRE(off[static_cast<std::size_t>(rows_)] == nnz_, "CsrMatrix::check: row_offsets[", rows_, "] is ",
                  off[static_cast<std::size_t>(rows_)], " but the matrix stores ", nnz_, " entries");
}

// ------------------------------------------------------------------ COO

CooMatrix to_coo(const CsrMatrix& a) {
  const Space s = a.space();
  CooMatrix coo;
  coo.rows = a.rows();
  coo.cols = a.cols();
  coo.row = Array<std::int64_t, 1>("coo_row", {a.nnz()}, s);
  csr_kernels::expand_rows(a.exec(), a.rows(), a.row_offsets(), coo.row.view());
  coo.col = a.col_indices_array().clone(s);
  coo.val = a.values_array().clone(s);
  return coo;
}

CsrMatrix csr_from_coo(const CooMatrix& coo, const Exec& exec) {
  const index_t n = coo.row.size();
  TESSERA_REQUIRE(coo.col.size() == n && coo.val.size() == n, "csr_from_coo: row, col and val hold ", n, ", ",
                  coo.col.size(), " and ", coo.val.size(), " entries; they need one each per entry");
  TESSERA_REQUIRE(coo.rows >= 0 && coo.cols >= 0, "csr_from_coo: negative size ", coo.rows, " x ", coo.cols);
  TESSERA_REQUIRE(coo.cols <= INT_MAX, "csr_from_coo: ", coo.cols,
                  " columns do not fit the 32-bit column indices (at most 2147483647 columns)");
  const std::vector<std::int64_t> row = coo.row.to_vector();
  const std::vector<int> col = coo.col.to_vector();
  const std::vector<double> val = coo.val.to_vector();
  const auto rows = static_cast<std::size_t>(coo.rows);
  // Counting sort by row (stable: equal rows keep their input order).
  std::vector<std::int64_t> count(rows + 1, 0);
  for (std::size_t k = 0; k < row.size(); ++k) {
    TESSERA_REQUIRE(row[k] >= 0 && row[k] < coo.rows && col[k] >= 0 && col[k] < coo.cols, "csr_from_coo: entry ", k,
                    " is (", row[k], ", ", col[k], ") but the matrix is ", coo.rows, " x ", coo.cols,
                    " (indices are zero-based)");
    ++count[static_cast<std::size_t>(row[k]) + 1];
  }
  std::partial_sum(count.begin(), count.end(), count.begin());
  std::vector<std::int64_t> order(row.size());
  {
    std::vector<std::int64_t> next(count.begin(), count.end() - 1);
    for (std::size_t k = 0; k < row.size(); ++k) order[static_cast<std::size_t>(next[row[k]]++)] = static_cast<std::int64_t>(k);
  }
  // Within each row: stable sort by column, then sum runs of equal columns in input order.
  std::vector<std::int64_t> off(rows + 1, 0);
  std::vector<int> out_col;
  std::vector<double> out_val;
  out_col.reserve(row.size());
  out_val.reserve(row.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const auto b = order.begin() + count[r], e = order.begin() + count[r + 1];
    std::stable_sort(b, e, [&](std::int64_t i, std::int64_t j) {
      return col[static_cast<std::size_t>(i)] < col[static_cast<std::size_t>(j)];
    });
    for (auto it = b; it != e; ++it) {
      const int c = col[static_cast<std::size_t>(*it)];
      const double v = val[static_cast<std::size_t>(*it)];
      if (it != b && c == out_col.back())
        out_val.back() += v;
      else {
        out_col.push_back(c);
        out_val.push_back(v);
      }
    }
    off[r + 1] = static_cast<std::int64_t>(out_col.size());
  }
  const Space s = exec.space();
  return CsrMatrix(coo.rows, coo.cols, Array<std::int64_t, 1>::from("csr_row_offsets", off, s),
                   Array<int, 1>::from("csr_col_indices", out_col, s),
                   Array<double, 1>::from("csr_values", out_val, s), exec);
}

}  // namespace tessera::linalg
