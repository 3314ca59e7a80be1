#pragma once
/// \file csr.hpp
/// Sparse matrices in compressed sparse row (CSR) and coordinate (COO) form, and their
/// products with vectors on every backend (cuSPARSE on the GPU).
///
///     using namespace tessera;
///     // 2 x 3:  [ 1 0 2 ]
///     //         [ 0 3 0 ]
///     auto off  = Array<std::int64_t>::from("off", std::vector<std::int64_t>{0, 2, 3}, exec.space());
///     auto cols = Array<int>::from("cols", std::vector<int>{0, 2, 1}, exec.space());
///     auto vals = Array<double>::from("vals", std::vector<double>{1, 2, 3}, exec.space());
///     linalg::CsrMatrix A(2, 3, off, cols, vals, exec);
///     A.apply(x, y);                       // y = A x
///     A.apply(x, y, 2.0, 1.0);             // y = 2 A x + y
///
/// Index types: row offsets are 64-bit (more than 2^31 entries are allowed), column indices
/// 32-bit (at most 2^31 - 1 columns).

#include <cstdint>
#include <memory>

#include "tessera/core/array.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/core/view.hpp"

namespace tessera::linalg {

/// A sparse matrix in CSR form: the entries of row r are at positions
/// row_offsets[r] .. row_offsets[r + 1] - 1 of col_indices and values, their columns sorted
/// ascending and unique. All three arrays live in one memory space that the matrix's Exec
/// can read; every kernel of the matrix runs on that Exec.
///
/// The sparsity pattern (rows, columns, row offsets, column indices) is fixed at
/// construction: the diagonal positions and the GPU state are derived from it. The values
/// may be changed in place (values()), and the next product uses them.
///
/// Copies are deep: a copy owns new arrays on the same Exec (a copy of the values, the
/// pattern and the diagonal positions) and its own GPU state, so changing one matrix never
/// changes another. Moves transfer everything and leave the source an empty 0 x 0 matrix on the
/// serial backend (as a default-constructed one).
/// To share a matrix, share a reference or a pointer to it.
///
/// On the CUDA backend the first apply() creates the cuSPARSE handle, the matrix and vector
/// descriptors and the work buffer; later products reuse them, and the destructor frees
/// them. cuSPARSE 12 refuses CSR matrices whose row offsets and column indices differ in
/// width, so that state also holds a 32-bit copy of the row offsets ((rows + 1) × 4 bytes)
/// when nnz and rows are below 2^31, and otherwise a 64-bit copy of the column indices
/// (nnz × 8 bytes); the environment variable TESSERA_CSR_INDEX64=1 picks the latter for
/// every matrix (a test uses it). Because apply() updates that cached state, one matrix must not be
/// applied from several host threads at once.
class CsrMatrix {
 public:
  /// An empty 0 x 0 matrix on the serial backend.
  CsrMatrix();

  /// Takes (shares) the three arrays. Checks that row_offsets has rows + 1 entries,
  /// col_indices and values the same number (nnz), all three one memory space that
  /// `exec` can read, cols below 2^31, row_offsets[0] == 0 and row_offsets[rows] == nnz;
  /// throws tessera::Error naming what is wrong. The rest of the pattern (monotone
  /// offsets, sorted unique columns in range) is checked by check(), which the
  /// constructor also runs in builds with TESSERA_BOUNDS_CHECK. Computes the diagonal
  /// positions with a kernel on `exec`.
  CsrMatrix(index_t rows, index_t cols, Array<std::int64_t, 1> row_offsets, Array<int, 1> col_indices,
            Array<double, 1> values, const Exec& exec);

  /// Deep copy on the same Exec (see the class comment).
  CsrMatrix(const CsrMatrix& other);
  /// Replaces this matrix by a deep copy of `other`.
  CsrMatrix& operator=(const CsrMatrix& other);
  /// Moves the arrays and the GPU state; `other` becomes an empty 0 x 0 serial matrix.
  CsrMatrix(CsrMatrix&& other) noexcept;
  /// Frees this matrix's GPU state, then takes over `other` as the move constructor does.
  CsrMatrix& operator=(CsrMatrix&& other) noexcept;
  /// Frees the arrays (when no other Array shares them) and the cuSPARSE state.
  ~CsrMatrix();

  /// Number of rows.
  index_t rows() const { return rows_; }
  /// Number of columns.
  index_t cols() const { return cols_; }
  /// Number of stored entries.
  index_t nnz() const { return nnz_; }
  /// The backend every kernel of this matrix runs on.
  const Exec& exec() const { return exec_; }
  /// The memory space of the arrays.
  Space space() const { return row_offsets_.space(); }

  /// Row offsets (rows + 1 entries), column indices and values (nnz entries each), as views.
  View<const std::int64_t, 1> row_offsets() const { return row_offsets_.cview(); }
  View<const int, 1> col_indices() const { return col_indices_.cview(); }
  View<const double, 1> values() const { return values_.cview(); }
  /// The values, writable in place (the pattern is not).
  View<double, 1> values() { return values_.view(); }

  /// The arrays themselves. Arrays are shallow handles: do not change the row offsets or
  /// the column indices through them (the matrix's derived state would go stale).
  const Array<std::int64_t, 1>& row_offsets_array() const { return row_offsets_; }
  const Array<int, 1>& col_indices_array() const { return col_indices_; }
  const Array<double, 1>& values_array() const { return values_; }

  /// Position of entry (r, r) in row r for every row r, -1 where row r stores no diagonal
  /// entry (also for r >= cols). Computed at construction by a kernel (one binary search
  /// per row); in the matrix's memory space.
  const Array<std::int64_t, 1>& diagonal_positions() const { return diagonal_positions_; }

  /// The diagonal (rows entries, 0 where no diagonal entry is stored), in the matrix's
  /// memory space; computed by a kernel from the current values.
  Array<double, 1> diagonal() const;

  /// y = alpha A x + beta y. x has cols entries, y rows entries, both in memory the matrix's
  /// backend can read and write; x and y must not overlap. With beta == 0, y is not read
  /// (it may hold NaN). CUDA: cusparseSpMV (CUSPARSE_SPMV_CSR_ALG1), asynchronous on the
  /// default stream like every kernel. Serial and OpenMP: one loop per row summing its
  /// entries in column order, so the result does not depend on the thread count. Throws
  /// tessera::Error naming both sizes when x or y does not fit the matrix.
  void apply(View<const double, 1> x, View<double, 1> y, double alpha = 1.0, double beta = 0.0) const;

  /// A deep copy whose arrays live in `exec.space()` and whose kernels run on `exec`.
  CsrMatrix to(const Exec& exec) const;

  /// Checks the pattern on the host (copies it there first): row offsets start at 0, never
  /// decrease and end at nnz; columns lie in 0..cols-1 and are sorted ascending and unique
  /// within each row. Throws tessera::Error naming the first bad row.
  void check() const;

 private:
  struct GpuState;
  struct GpuStateDeleter {
    void operator()(GpuState* s) const noexcept;
  };
  /// Creates the cuSPARSE state on first use (CUDA only).
  GpuState& gpu_state() const;
  void make_empty() noexcept;

  index_t rows_ = 0, cols_ = 0, nnz_ = 0;
  Array<std::int64_t, 1> row_offsets_;
  Array<int, 1> col_indices_;
  Array<double, 1> values_;
  Array<std::int64_t, 1> diagonal_positions_;
  Exec exec_ = Exec::serial();
  mutable std::unique_ptr<GpuState, GpuStateDeleter> gpu_;
};

/// A sparse matrix as a list of (row, column, value) entries, zero-based, in any order;
/// duplicates are allowed (csr_from_coo sums them). The arrays may live on the host or
/// the device, all three in one space.
struct CooMatrix {
  index_t rows = 0, cols = 0;  ///< size of the matrix
  Array<std::int64_t, 1> row;  ///< row of each entry, in 0..rows-1
  Array<int, 1> col;           ///< column of each entry, in 0..cols-1
  Array<double, 1> val;        ///< value of each entry
};

/// The entries of `a` in row-major order (rows expanded by a kernel on a's Exec), in a's
/// memory space.
CooMatrix to_coo(const CsrMatrix& a);

/// The CSR matrix of the COO entries, on `exec`: entries sorted by (row, column), duplicates
/// summed in their input order (so the result does not depend on anything but the input).
/// The conversion runs on the host (the entries are copied there and the result is moved
/// to exec.space()); it takes O(nnz log(entries per row) + rows). Throws tessera::Error for
/// arrays of different lengths and for entries outside the matrix, naming the entry.
CsrMatrix csr_from_coo(const CooMatrix& coo, const Exec& exec);

}  // namespace tessera::linalg
