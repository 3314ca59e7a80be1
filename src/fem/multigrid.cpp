// Matrix-free p-multigrid: levels, Chebyshev smoothing, transfers, the assembled coarse level
// (compiled by nvcc in CUDA builds).
#include "tessera/fem/multigrid.hpp"

#include <chrono>

#include "tessera/core/device.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/fem/assembly.hpp"
#include "tessera/fem/refinement_transfer.hpp"
#include "tessera/fem/transfer.hpp"
#include "tessera/linalg/amg.hpp"

namespace tessera::fem {

const char* name(CoarseSolver c) {
  switch (c) {
    case CoarseSolver::Auto: return "auto";
    case CoarseSolver::Amg: return "amg";
    case CoarseSolver::Cg: return "cg";
  }
  return "?";
}

CoarseSolver parse_coarse_solver(const std::string& s) {
  if (s == "auto") return CoarseSolver::Auto;
  if (s == "amg") return CoarseSolver::Amg;
  if (s == "cg") return CoarseSolver::Cg;
  fail("unknown coarse solver '", s, "' (known: auto, amg, cg)");
}

namespace multigrid_detail {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// y(d) = 0 for every d in dofs.
void zero_entries(const Exec& exec, View<const index_t, 1> dofs, View<double, 1> y) {
  forall("fem/mg_zero_constrained", exec, dofs.size(), TESSERA_LAMBDA(index_t i) { y(dofs(i)) = 0; });
}

/// r = b - r (r holds A x on entry).
void residual(const Exec& exec, View<const double, 1> b, View<double, 1> r) {
  forall("fem/mg_residual", exec, r.size(), TESSERA_LAMBDA(index_t i) { r(i) = b(i) - r(i); });
}

/// x += y.
void add_to(const Exec& exec, View<const double, 1> y, View<double, 1> x) {
  forall("fem/mg_add", exec, x.size(), TESSERA_LAMBDA(index_t i) { x(i) += y(i); });
}

void set_zero(const Exec& exec, View<double, 1> x) {
  forall("fem/mg_fill", exec, x.size(), TESSERA_LAMBDA(index_t i) { x(i) = 0; });
}

/// out = inv .* in.
void scale(const Exec& exec, View<const double, 1> inv, View<const double, 1> in, View<double, 1> out) {
  forall("fem/mg_jacobi", exec, out.size(), TESSERA_LAMBDA(index_t i) { out(i) = inv(i) * in(i); });
}

/// inv = 1 / d.
void invert(const Exec& exec, View<const double, 1> d, View<double, 1> inv) {
  forall("fem/mg_inverse_diagonal", exec, inv.size(), TESSERA_LAMBDA(index_t i) { inv(i) = 1.0 / d(i); });
}

/// Default orders: p, ceil(p / 2), ..., 1.
std::vector<int> default_orders(int p) {
  std::vector<int> o{p};
  while (o.back() > 1) o.push_back((o.back() + 1) / 2);
  return o;
}

}  // namespace multigrid_detail

namespace md = multigrid_detail;

struct Multigrid::Impl {
  struct Level {
    std::unique_ptr<H1Space> own_space;
    const H1Space* space = nullptr;
    std::unique_ptr<H1Operator> own_op;
    const H1Operator* op = nullptr;
    std::unique_ptr<Constrained> C;
    Array<index_t, 1> fixed;
    std::unique_ptr<linalg::ChebyshevSmoother> smoother;
    std::unique_ptr<OrderTransfer> from_coarser;         // prolongation from the next (coarser) level: order
    std::unique_ptr<RefinementTransfer> h_from_coarser;  // or mesh
    void restrict_to_coarser(View<const double, 1> r, View<double, 1> rc) const {
      if (from_coarser) from_coarser->restrict_(r, rc);
      else h_from_coarser->restrict_(r, rc);
    }
    void prolong_from_coarser(View<const double, 1> xc, View<double, 1> x) const {
      if (from_coarser) from_coarser->prolong(xc, x);
      else h_from_coarser->prolong(xc, x);
    }
    mutable Array<double, 1> b, x, t;             // right-hand side, iterate, work
  };
  Exec exec;
  MultigridOptions opt;
  CoarseSolver coarse = CoarseSolver::Cg;
  std::vector<Level> levels;
  std::vector<MultigridLevel> info;
  linalg::CsrMatrix A0;  // the coarsest level, assembled, constraints eliminated
  Array<double, 1> A0_inv_diag;
  std::unique_ptr<linalg::AmgPreconditioner> amg;
  MultigridTimings timings;
  mutable int coarse_iters = 0;

  void coarse_solve(View<const double, 1> b, View<double, 1> x) const;
  void cycle(std::size_t l, View<const double, 1> b, View<double, 1> x) const;
};

void Multigrid::Impl::coarse_solve(View<const double, 1> b, View<double, 1> x) const {
  const auto t0 = std::chrono::steady_clock::now();
  if (coarse == CoarseSolver::Amg) {
    amg->apply(b, x);
  } else {
    md::set_zero(exec, x);
    linalg::CgOptions co;
    co.rel_tol = opt.coarse_tol;
    co.max_iters = opt.coarse_max_iters;
    const auto inv = A0_inv_diag.cview();
    const Exec e = exec;
    const linalg::CsrMatrix& A = A0;
    const auto r = linalg::pcg([&A](View<const double, 1> in, View<double, 1> out) { A.apply(in, out); },
                               [inv, e](View<const double, 1> in, View<double, 1> out) { md::scale(e, inv, in, out); },
                               b, x, exec, co);
    coarse_iters = r.iterations;
  }
  timings.coarse_s += md::seconds_since(t0);
}

void Multigrid::Impl::cycle(std::size_t l, View<const double, 1> b, View<double, 1> x) const {
  if (l + 1 == levels.size()) return coarse_solve(b, x);
  const Level& L = levels[l];
  const Level& Lc = levels[l + 1];
  L.smoother->apply(b, x, true);  // pre-smoothing from x = 0 (one apply fewer)
  L.C->apply(x, L.t.view());
  md::residual(exec, b, L.t.view());
  L.restrict_to_coarser(L.t.cview(), Lc.b.view());
  md::zero_entries(exec, Lc.fixed.cview(), Lc.b.view());
  cycle(l + 1, Lc.b.cview(), Lc.x.view());
  L.prolong_from_coarser(Lc.x.cview(), L.t.view());
  md::zero_entries(exec, L.fixed.cview(), L.t.view());
  md::add_to(exec, L.t.cview(), x);
  L.smoother->apply(b, x);  // post-smoothing: the same polynomial, so the cycle is symmetric
}

Multigrid::Multigrid(const H1Operator& fine, const H1Space& fine_space, const std::vector<index_t>& fine_constrained,
                     const std::function<std::vector<index_t>(const H1Space&)>& constrained_of,
                     const MultigridOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.exec = fine.exec();
  m.opt = options;
  TESSERA_REQUIRE(fine.kind() == OperatorKind::Diffusion, "fem::Multigrid: the operator is ", name(fine.kind()),
                  "; multigrid serves the diffusion operator");
  const int p = fine_space.order();
  std::vector<int> orders = options.orders.empty() ? md::default_orders(p) : options.orders;
  TESSERA_REQUIRE(orders.front() == p, "fem::Multigrid: the orders must start with the fine order ", p, " (got ",
                  orders.front(), ")");
  for (std::size_t i = 1; i < orders.size(); ++i)
    TESSERA_REQUIRE(orders[i] >= 1 && orders[i] < orders[i - 1], "fem::Multigrid: the orders must decrease to >= 1 (",
                    orders[i - 1], " then ", orders[i], ")");
  m.coarse = options.coarse;  // Auto is resolved once the coarsest level's size is known
  TESSERA_REQUIRE(m.coarse != CoarseSolver::Amg || linalg::amg_available(),
                  "fem::Multigrid: the AMG coarse solver needs hypre, and this build of tessera has none (install "
                  "libhypre-dev and configure with -DTESSERA_HYPRE=ON, or use the CG coarse solver)");
  const Space sp = m.exec.space();
  auto t0 = std::chrono::steady_clock::now();
  OperatorOptions oo = fine.options();
  oo.degree = -1;  // each order its default rule of the fine operator's type
  TESSERA_REQUIRE(options.coarse_meshes.empty() || orders.back() == 1,
                  "fem::Multigrid: with coarse meshes the orders must end at 1 (the mesh levels are order 1), got ",
                  orders.back());
  // the mesh of each level: the fine mesh for the orders, then the coarser meshes
  std::vector<const Mesh*> level_mesh(orders.size(), &fine_space.mesh());
  for (auto it = options.coarse_meshes.rbegin(); it != options.coarse_meshes.rend(); ++it) {
    TESSERA_REQUIRE(*it != nullptr, "fem::Multigrid: a coarse mesh is null");
    level_mesh.push_back(*it);
    orders.push_back(1);
  }
  for (std::size_t l = 0; l < orders.size(); ++l) {
    Impl::Level L;
    std::vector<index_t> fixed;
    if (l == 0) {
      L.space = &fine_space;
      L.op = &fine;
      fixed = fine_constrained;
    } else {
      L.own_space = std::make_unique<H1Space>(*level_mesh[l], orders[l], fine_space.components(), NodeOrdering::Auto,
                                               m.exec.backend);
      L.space = L.own_space.get();
      fixed = constrained_of(*L.space);
      if (l + 1 < orders.size()) {
        L.own_op = std::make_unique<H1Operator>(*L.space, OperatorKind::Diffusion, m.exec, oo);
        L.op = L.own_op.get();
      }
    }
    if (L.op) L.C = std::make_unique<Constrained>(*L.op, fixed);
    L.fixed = Array<index_t, 1>::from("fem/mg constrained", fixed, sp);
    const index_t n = L.space->num_dofs();
    L.b = Array<double, 1>("fem/mg b", {n}, sp);
    L.x = Array<double, 1>("fem/mg x", {n}, sp);
    L.t = Array<double, 1>("fem/mg t", {n}, sp);
    m.levels.push_back(std::move(L));
  }
  m.timings.levels_s = md::seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  for (std::size_t l = 0; l + 1 < m.levels.size(); ++l) {
    Impl::Level& L = m.levels[l];
    const Constrained* C = L.C.get();
    L.smoother = std::make_unique<linalg::ChebyshevSmoother>(
        [C](View<const double, 1> in, View<double, 1> out) { C->apply(in, out); }, C->inverse_diagonal(), m.exec,
        options.smoother);
  }
  m.timings.smoothers_s = md::seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  for (std::size_t l = 0; l + 1 < m.levels.size(); ++l) {
    if (level_mesh[l] == level_mesh[l + 1])
      m.levels[l].from_coarser = std::make_unique<OrderTransfer>(*m.levels[l + 1].space, *m.levels[l].space, m.exec);
    else
      m.levels[l].h_from_coarser =
          std::make_unique<RefinementTransfer>(*m.levels[l + 1].space, *m.levels[l].space, m.exec);
  }
  m.timings.transfers_s = md::seconds_since(t0);
  // The coarsest level: its matrix assembled, the constraints eliminated.
  t0 = std::chrono::steady_clock::now();
  {
    Impl::Level& L = m.levels.back();
    AssemblyOptions ao;
    ao.quadrature = oo.quadrature;
    const MatrixAssembler a(*L.space, FormKind::Diffusion, m.exec, {}, ao);
    m.A0 = a.assemble();
    Array<double, 1> zero("fem/mg zero", {L.space->num_dofs()}, sp);
    Array<double, 1> rhs("fem/mg rhs", {L.space->num_dofs()}, sp);
    eliminate_dirichlet(m.A0, L.fixed.cview(), zero.cview(), rhs.view());
    const auto d = m.A0.diagonal();
    m.A0_inv_diag = Array<double, 1>("fem/mg coarse inverse diagonal", {L.space->num_dofs()}, sp);
    md::invert(m.exec, d.cview(), m.A0_inv_diag.view());
  }
  fence("fem/mg coarse matrix");
  m.timings.coarse_matrix_s = md::seconds_since(t0);
  if (m.coarse == CoarseSolver::Auto)
    m.coarse = linalg::amg_available() && m.levels.back().space->num_dofs() >= options.amg_min_coarse_dofs ? CoarseSolver::Amg
                                                                                                : CoarseSolver::Cg;
  if (m.coarse == CoarseSolver::Amg) {
    t0 = std::chrono::steady_clock::now();
    m.amg = std::make_unique<linalg::AmgPreconditioner>(m.A0);
    m.timings.coarse_setup_s = md::seconds_since(t0);
  }
  for (std::size_t l = 0; l < m.levels.size(); ++l)
    m.info.push_back(MultigridLevel{orders[l], level_mesh[l]->num_elements(), m.levels[l].space->num_dofs(),
                                    m.levels[l].smoother ? m.levels[l].smoother->lambda_max() : 0.0});
}

Multigrid::~Multigrid() = default;
Multigrid::Multigrid(Multigrid&&) noexcept = default;
Multigrid& Multigrid::operator=(Multigrid&&) noexcept = default;

void Multigrid::apply(View<const double, 1> r, View<double, 1> z) const {
  const Impl& m = *impl_;
  TESSERA_REQUIRE(r.size() == m.levels.front().space->num_dofs() && z.size() == r.size(),
                  "fem::Multigrid::apply: vectors of ", r.size(), " and ", z.size(), " entries for ",
                  m.levels.front().space->num_dofs(), " DOFs");
  const auto t0 = std::chrono::steady_clock::now();
  m.cycle(0, r, z);
  fence("fem/mg cycle");
  m.timings.vcycle_s += md::seconds_since(t0);
  ++m.timings.cycles;
}

linalg::LinearOperator Multigrid::preconditioner() const {
  return [this](View<const double, 1> r, View<double, 1> z) { apply(r, z); };
}

const std::vector<MultigridLevel>& Multigrid::levels() const { return impl_->info; }
const MultigridTimings& Multigrid::timings() const { return impl_->timings; }
CoarseSolver Multigrid::coarse_solver() const { return impl_->coarse; }
int Multigrid::last_coarse_iterations() const { return impl_->coarse_iters; }

}  // namespace tessera::fem
