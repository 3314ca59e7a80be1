// The hypre BoomerAMG bridge (host code; built with hypre when TESSERA_HYPRE is on).
#include "tessera/linalg/amg.hpp"

#include <chrono>
#include <numeric>
#include <vector>

#include "tessera/core/error.hpp"

#if defined(TESSERA_HAS_HYPRE)
#include <mpi.h>

#include <HYPRE.h>
#include <HYPRE_parcsr_ls.h>
#endif

namespace tessera::linalg {

#if defined(TESSERA_HAS_HYPRE)

bool amg_available() { return true; }

namespace {
/// Throws for a failed hypre call, naming it.
void check_hypre(HYPRE_Int err, const char* what) {
  if (err != 0) {
    char msg[256] = {0};
    HYPRE_DescribeError(err, msg);
    HYPRE_ClearAllErrors();
    fail("linalg::AmgPreconditioner: ", what, " failed (hypre error ", static_cast<long>(err), ": ", msg, ")");
  }
}

/// MPI (hypre needs it) and hypre, initialised once per process.
void init_once() {
  static const bool done = [] {
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) MPI_Init(nullptr, nullptr);
    HYPRE_Init();
    return true;
  }();
  (void)done;
}
}  // namespace

struct AmgPreconditioner::Impl {
  Exec exec;
  index_t n = 0;
  HYPRE_IJMatrix A = nullptr;
  HYPRE_IJVector b = nullptr, x = nullptr;
  HYPRE_ParCSRMatrix parA = nullptr;
  HYPRE_ParVector parb = nullptr, parx = nullptr;
  HYPRE_Solver amg = nullptr;
  std::vector<HYPRE_BigInt> rows;
  mutable std::vector<double> hb, hx;
  double setup_s = 0;

  ~Impl() {
    if (amg) HYPRE_BoomerAMGDestroy(amg);
    if (x) HYPRE_IJVectorDestroy(x);
    if (b) HYPRE_IJVectorDestroy(b);
    if (A) HYPRE_IJMatrixDestroy(A);
  }
};

AmgPreconditioner::AmgPreconditioner(const CsrMatrix& M, const AmgOptions& o) : impl_(std::make_unique<Impl>()) {
  TESSERA_REQUIRE(M.rows() == M.cols(), "linalg::AmgPreconditioner: the matrix is ", M.rows(), " x ", M.cols(),
                  ", not square");
  TESSERA_REQUIRE(M.rows() < 0x7fffffff && M.nnz() < 0x7fffffff, "linalg::AmgPreconditioner: ", M.rows(),
                  " rows and ", M.nnz(), " non-zeros exceed hypre's 32-bit indices in this build");
  init_once();
  const auto t0 = std::chrono::steady_clock::now();
  Impl& m = *impl_;
  m.exec = M.exec();
  m.n = M.rows();
  const CsrMatrix h = M.space() == Space::Device ? M.to(Exec::serial()) : CsrMatrix(M);
  const HYPRE_BigInt last = static_cast<HYPRE_BigInt>(m.n) - 1;
  check_hypre(HYPRE_IJMatrixCreate(MPI_COMM_SELF, 0, last, 0, last, &m.A), "HYPRE_IJMatrixCreate");
  check_hypre(HYPRE_IJMatrixSetObjectType(m.A, HYPRE_PARCSR), "HYPRE_IJMatrixSetObjectType");
  std::vector<HYPRE_Int> counts(static_cast<std::size_t>(m.n));
  const auto off = h.row_offsets();
  for (index_t r = 0; r < m.n; ++r) counts[std::size_t(r)] = static_cast<HYPRE_Int>(off[r + 1] - off[r]);
  check_hypre(HYPRE_IJMatrixSetRowSizes(m.A, counts.data()), "HYPRE_IJMatrixSetRowSizes");
  check_hypre(HYPRE_IJMatrixInitialize(m.A), "HYPRE_IJMatrixInitialize");
  m.rows.resize(static_cast<std::size_t>(m.n));
  std::iota(m.rows.begin(), m.rows.end(), HYPRE_BigInt{0});
  std::vector<HYPRE_BigInt> cols(static_cast<std::size_t>(h.nnz()));
  for (index_t k = 0; k < h.nnz(); ++k) cols[std::size_t(k)] = h.col_indices()[k];
  check_hypre(HYPRE_IJMatrixSetValues(m.A, static_cast<HYPRE_Int>(m.n), counts.data(), m.rows.data(), cols.data(),
                                      h.values().data()),
              "HYPRE_IJMatrixSetValues");
  check_hypre(HYPRE_IJMatrixAssemble(m.A), "HYPRE_IJMatrixAssemble");
  check_hypre(HYPRE_IJMatrixGetObject(m.A, reinterpret_cast<void**>(&m.parA)), "HYPRE_IJMatrixGetObject");
  for (HYPRE_IJVector* v : {&m.b, &m.x}) {
    check_hypre(HYPRE_IJVectorCreate(MPI_COMM_SELF, 0, last, v), "HYPRE_IJVectorCreate");
    check_hypre(HYPRE_IJVectorSetObjectType(*v, HYPRE_PARCSR), "HYPRE_IJVectorSetObjectType");
    check_hypre(HYPRE_IJVectorInitialize(*v), "HYPRE_IJVectorInitialize");
    check_hypre(HYPRE_IJVectorAssemble(*v), "HYPRE_IJVectorAssemble");
  }
  check_hypre(HYPRE_IJVectorGetObject(m.b, reinterpret_cast<void**>(&m.parb)), "HYPRE_IJVectorGetObject");
  check_hypre(HYPRE_IJVectorGetObject(m.x, reinterpret_cast<void**>(&m.parx)), "HYPRE_IJVectorGetObject");
  check_hypre(HYPRE_BoomerAMGCreate(&m.amg), "HYPRE_BoomerAMGCreate");
  HYPRE_BoomerAMGSetPrintLevel(m.amg, 0);
  HYPRE_BoomerAMGSetMaxIter(m.amg, 1);
  HYPRE_BoomerAMGSetTol(m.amg, 0.0);
  HYPRE_BoomerAMGSetStrongThreshold(m.amg, o.strong_threshold);
  HYPRE_BoomerAMGSetCoarsenType(m.amg, o.coarsen_type);
  HYPRE_BoomerAMGSetInterpType(m.amg, o.interp_type);
  HYPRE_BoomerAMGSetRelaxType(m.amg, o.relax_type);
  HYPRE_BoomerAMGSetAggNumLevels(m.amg, o.agg_levels);
  HYPRE_BoomerAMGSetPMaxElmts(m.amg, o.max_elements);
  check_hypre(HYPRE_BoomerAMGSetup(m.amg, m.parA, m.parb, m.parx), "HYPRE_BoomerAMGSetup");
  m.hb.resize(static_cast<std::size_t>(m.n));
  m.hx.resize(static_cast<std::size_t>(m.n));
  m.setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

AmgPreconditioner::~AmgPreconditioner() = default;

void AmgPreconditioner::apply(View<const double, 1> r, View<double, 1> z) const {
  const Impl& m = *impl_;
  TESSERA_REQUIRE(r.size() == m.n && z.size() == m.n, "linalg::AmgPreconditioner::apply: vectors of ", r.size(),
                  " and ", z.size(), " entries for a matrix of ", m.n, " rows");
  const bool dev = m.exec.on_device();
  if (dev) {
    Array<double, 1> hr("linalg/amg r", {m.n});
    detail::copy_bytes(hr.data(), Space::Host, r.data(), Space::Device, sizeof(double) * std::size_t(m.n));
    std::copy(hr.data(), hr.data() + m.n, m.hb.begin());
  } else {
    std::copy(r.data(), r.data() + m.n, m.hb.begin());
  }
  std::fill(m.hx.begin(), m.hx.end(), 0.0);
  const auto n = static_cast<HYPRE_Int>(m.n);
  check_hypre(HYPRE_IJVectorSetValues(m.b, n, m.rows.data(), m.hb.data()), "HYPRE_IJVectorSetValues");
  check_hypre(HYPRE_IJVectorSetValues(m.x, n, m.rows.data(), m.hx.data()), "HYPRE_IJVectorSetValues");
  HYPRE_BoomerAMGSolve(m.amg, m.parA, m.parb, m.parx);  // one cycle: "not converged" is expected
  HYPRE_ClearAllErrors();
  check_hypre(HYPRE_IJVectorGetValues(m.x, n, m.rows.data(), m.hx.data()), "HYPRE_IJVectorGetValues");
  if (dev) detail::copy_bytes(z.data(), Space::Device, m.hx.data(), Space::Host, sizeof(double) * std::size_t(m.n));
  else std::copy(m.hx.begin(), m.hx.end(), z.data());
}

double AmgPreconditioner::setup_seconds() const { return impl_->setup_s; }

#else

bool amg_available() { return false; }

struct AmgPreconditioner::Impl {};

AmgPreconditioner::AmgPreconditioner(const CsrMatrix&, const AmgOptions&) {
  fail("linalg::AmgPreconditioner: this build of tessera has no hypre. Install hypre (Debian: libhypre-dev) and "
       "configure with -DTESSERA_HYPRE=ON, or use the CG coarse solver (--coarse cg)");
}
AmgPreconditioner::~AmgPreconditioner() = default;
void AmgPreconditioner::apply(View<const double, 1>, View<double, 1>) const {}
double AmgPreconditioner::setup_seconds() const { return 0; }

#endif

}  // namespace tessera::linalg
