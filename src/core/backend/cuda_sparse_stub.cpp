// Stand-ins for the cuSPARSE products in builds without the CUDA backend.
#include "tessera/core/backend/sparse.hpp"
#include "tessera/core/error.hpp"

namespace tessera::detail::sparse {

namespace {
[[noreturn]] void no_cusparse(const char* what) {
  fail(what, " needs cuSPARSE, which this build of tessera does not contain (reconfigure with -DTESSERA_CUDA=ON, "
       "or use a CPU backend: Exec::serial() or Exec::openmp())");
}
}  // namespace

struct SparseMvHandle {};

bool sparse_compiled() { return false; }

SparseMvHandle* spmv_create(index_t, index_t, index_t, const void*, SparseIndex, const void*, SparseIndex,
                            const double*) {
  no_cusparse("a sparse matrix-vector product on the GPU");
}

void spmv(const char* label, SparseMvHandle*, double, const double*, double, double*) { no_cusparse(label); }

void spmv_destroy(SparseMvHandle*) noexcept {}

}  // namespace tessera::detail::sparse
