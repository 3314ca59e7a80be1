#pragma once
/// \file backend/sparse.hpp
/// Sparse matrix-vector products of the CUDA backend (cuSPARSE), declared without CUDA
/// headers so that layers above core can use them. Implemented by
/// src/core/backend/cuda_sparse.cu in CUDA builds and by cuda_sparse_stub.cpp otherwise
/// (where spmv_create() and spmv() throw tessera::Error).
///
///     auto* h = sparse::spmv_create(rows, cols, nnz, offsets, SparseIndex::Int32,
///                                   columns, SparseIndex::Int32, values);
///     sparse::spmv("app/spmv", h, 1.0, x, 0.0, y);   // y = A x, asynchronous (default stream)
///     sparse::spmv_destroy(h);
///
/// All pointers are device pointers. Row offsets and column indices must use the same index
/// width: cuSPARSE (12.6, CUDA 13) refuses 64-bit offsets with 32-bit columns in
/// cusparseCreateCsr with CUSPARSE_STATUS_NOT_SUPPORTED.

#include "tessera/core/macros.hpp"

namespace tessera::detail::sparse {

/// Width of the row offsets and column indices handed to spmv_create().
enum class SparseIndex { Int32, Int64 };

/// Opaque state of one CSR matrix on the GPU: the cuSPARSE handle, the matrix and vector
/// descriptors, and the SpMV work buffer. Created by spmv_create(), freed by spmv_destroy().
struct SparseMvHandle;

/// True when this build contains the cuSPARSE products (CUDA builds).
bool sparse_compiled();

/// Creates the cuSPARSE state for the CSR matrix (zero-based, columns sorted within each
/// row) held in the device arrays `row_offsets` (rows + 1 entries), `col_indices` and
/// `values` (nnz entries each). Needs rows >= 1 and nnz >= 1. The arrays must outlive the
/// handle; the values may change between products, the pattern may not. Throws
/// tessera::Error naming the cuSPARSE call and its status on failure.
SparseMvHandle* spmv_create(index_t rows, index_t cols, index_t nnz, const void* row_offsets,
                            SparseIndex offsets_type, const void* col_indices, SparseIndex col_type,
                            const double* values);

/// y = alpha A x + beta y with the device vectors x (cols entries) and y (rows entries),
/// by cusparseSpMV with CUSPARSE_SPMV_CSR_ALG1. With beta == 0, y is not read (NaN in y
/// does not propagate). `label` names the product in errors, timers and NVTX ranges. cuSPARSE documents bitwise run-to-run
/// reproducibility only for CUSPARSE_SPMV_CSR_ALG2. Asynchronous with respect to the host,
/// on the default stream like tessera's kernels; the work buffer grows when cuSPARSE asks
/// for more.
void spmv(const char* label, SparseMvHandle* handle, double alpha, const double* x, double beta, double* y);

/// Frees everything spmv_create() made (waits for the products still running). Null is
/// allowed; never throws.
void spmv_destroy(SparseMvHandle* handle) noexcept;

}  // namespace tessera::detail::sparse
