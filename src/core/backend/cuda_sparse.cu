// cuSPARSE products of tessera's CUDA backend: CSR matrix-vector products through the
// generic API (cusparseSpMV), with the handle, the descriptors and the work buffer kept
// per matrix. The only source of tessera that names cuSPARSE.
#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstddef>

#include "tessera/core/backend/cuda.hpp"
#include "tessera/core/backend/sparse.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/profiling.hpp"

namespace tessera::detail::sparse {

struct SparseMvHandle {
  cusparseHandle_t handle = nullptr;
  cusparseConstSpMatDescr_t matrix = nullptr;
  cusparseDnVecDescr_t x = nullptr;  // never written: cuSPARSE only reads x
  cusparseDnVecDescr_t y = nullptr;
  void* buffer = nullptr;
  std::size_t buffer_bytes = 0;
  index_t rows = 0, cols = 0;
};

namespace {

/// Throws tessera::Error for a failed cuSPARSE call: the call, the status name and text.
void check_status(cusparseStatus_t status, const char* call, const char* where) {
  if (status == CUSPARSE_STATUS_SUCCESS) return;
  fail(where, ": ", call, " failed with ", cusparseGetErrorName(status), " (", cusparseGetErrorString(status),
       ")");
}

#define TESSERA_CUSPARSE_CHECK(call, where) check_status((call), #call, (where))

cusparseIndexType_t index_type(SparseIndex t) {
  return t == SparseIndex::Int32 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
}

/// Frees what `h` holds (each part may be missing). Never throws.
void release(SparseMvHandle* h) noexcept {
  if (!h) return;
  if (h->buffer) cudaFree(h->buffer);  // cudaFree waits for the products using it
  if (h->x) cusparseDestroyDnVec(h->x);
  if (h->y) cusparseDestroyDnVec(h->y);
  if (h->matrix) cusparseDestroySpMat(h->matrix);
  if (h->handle) cusparseDestroy(h->handle);
  delete h;
}

}  // namespace

bool sparse_compiled() { return true; }

SparseMvHandle* spmv_create(index_t rows, index_t cols, index_t nnz, const void* row_offsets,
                            SparseIndex offsets_type, const void* col_indices, SparseIndex col_type,
                            const double* values) {
  constexpr const char* where = "cuSPARSE CSR setup";
  TESSERA_REQUIRE(rows >= 1 && cols >= 1 && nnz >= 1, where, ": needs at least one row, column and entry (got ",
                  rows, " x ", cols, " with ", nnz, " entries); handle empty matrices without cuSPARSE");
  TESSERA_REQUIRE(offsets_type == col_type, where,
                  ": row offsets and column indices must have the same index width (cuSPARSE refuses "
                  "mixed 32/64-bit CSR indices)");
  auto* h = new SparseMvHandle;
  h->rows = rows;
  h->cols = cols;
  try {
    TESSERA_CUSPARSE_CHECK(cusparseCreate(&h->handle), where);
    TESSERA_CUSPARSE_CHECK(cusparseCreateConstCsr(&h->matrix, rows, cols, nnz, row_offsets, col_indices, values,
                                                  index_type(offsets_type), index_type(col_type),
                                                  CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
                           where);
  } catch (...) {
    release(h);
    throw;
  }
  return h;
}

void spmv(const char* label, SparseMvHandle* h, double alpha, const double* x, double beta, double* y) {
  TESSERA_REQUIRE(h != nullptr, label, ": no cuSPARSE state (spmv_create was not called)");
  // Vector descriptors are made on first use and then only re-pointed.
  if (!h->x) {
    TESSERA_CUSPARSE_CHECK(cusparseCreateDnVec(&h->x, h->cols, const_cast<double*>(x), CUDA_R_64F), label);
  } else {
    TESSERA_CUSPARSE_CHECK(cusparseDnVecSetValues(h->x, const_cast<double*>(x)), label);
  }
  if (!h->y) {
    TESSERA_CUSPARSE_CHECK(cusparseCreateDnVec(&h->y, h->rows, y, CUDA_R_64F), label);
  } else {
    TESSERA_CUSPARSE_CHECK(cusparseDnVecSetValues(h->y, y), label);
  }
  constexpr cusparseSpMVAlg_t alg = CUSPARSE_SPMV_CSR_ALG1;
  std::size_t bytes = 0;
  TESSERA_CUSPARSE_CHECK(cusparseSpMV_bufferSize(h->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, h->matrix,
                                                 h->x, &beta, h->y, CUDA_R_64F, alg, &bytes),
                         label);
  if (bytes > h->buffer_bytes) {
    if (h->buffer) TESSERA_CUDA_CHECK(cudaFree(h->buffer));
    h->buffer = nullptr;
    h->buffer_bytes = 0;
    const cudaError_t err = cudaMalloc(&h->buffer, bytes);
    if (err != cudaSuccess) {
      cudaGetLastError();
      fail(label, ": cudaMalloc of the ", bytes, "-byte cusparseSpMV work buffer failed: ", cudaGetErrorName(err),
           " (", cudaGetErrorString(err), ")");
    }
    h->buffer_bytes = bytes;
  }
  nvtx_push(label);
  const bool timed = profiling::enabled();
  profiling::detail::GpuTiming t;
  if (timed) t = profiling::detail::gpu_begin();
  const cusparseStatus_t status = cusparseSpMV(h->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, h->matrix, h->x,
                                               &beta, h->y, CUDA_R_64F, alg, h->buffer);
  if (timed) profiling::detail::gpu_end(label, t);
  nvtx_pop();
  check_status(status, "cusparseSpMV", label);
  cuda_check_launch(label);
}

void spmv_destroy(SparseMvHandle* handle) noexcept { release(handle); }

}  // namespace tessera::detail::sparse
