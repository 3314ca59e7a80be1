// tessera poisson: -lap u = f with a manufactured solution, Dirichlet data on the whole
// boundary, matrix-free diffusion operator and Jacobi CG (see docs/cli.md).
#include "poisson.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <numbers>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "fe_errors.hpp"
#include "tessera/core.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/multigrid.hpp"
#include "tessera/fem/operator.hpp"
#include "tessera/fem/reference_element.hpp"
#include "tessera/io/mesh_io.hpp"
#include "tessera/io/vtu.hpp"

namespace tessera::app {
namespace {

using namespace tessera::fem;
using Clock = std::chrono::steady_clock;

/// The operator options of --quadrature and --geometry (throws tessera::Error on bad values).
OperatorOptions operator_options(const PoissonOptions& opt) {
  OperatorOptions o;
  TESSERA_REQUIRE(opt.geometry == "stored" || opt.geometry == "onthefly", "poisson: --geometry '", opt.geometry,
                  "' is not one of stored, onthefly");
  o.geometry = opt.geometry == "stored" ? GeometrySource::Stored : GeometrySource::OnTheFly;
  std::string q = opt.quadrature, deg;
  if (const auto c = q.find(':'); c != std::string::npos) {
    deg = q.substr(c + 1);
    q = q.substr(0, c);
    TESSERA_REQUIRE(!deg.empty(), "poisson: --quadrature '", opt.quadrature, "': a degree must follow the ':'");
  } else if (!q.empty() && std::isdigit(static_cast<unsigned char>(q[0]))) {
    deg = q;
    q = "gauss";
  }
  TESSERA_REQUIRE(q == "gauss" || q == "gll" || q == "gauss-lobatto", "poisson: --quadrature '", opt.quadrature,
                  "' is not gauss, gll, a degree, or gauss:D / gll:D");
  if (q != "gauss") o.quadrature = QuadratureType::GaussLobatto;
  if (!deg.empty()) {
    std::size_t used = 0;
    int d = -1;
    try {
      d = std::stoi(deg, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    TESSERA_REQUIRE(used == deg.size() && d >= 0, "poisson: --quadrature '", opt.quadrature,
                    "': the degree must be a non-negative integer");
    o.degree = d;
  }
  return o;
}

/// The problem of --rhs: the exact solution u (and its gradient) and the source f = -lap u of
/// the manufactured solutions "exp" (u = exp(x + y / 2 + z / 4), not an eigenfunction of the
/// discrete operator) and "sin" (u = prod_d sin(pi x_d), an eigenfunction of the Laplacian:
/// CG converges in few iterations on a box whatever the preconditioner), or "one" (f = 1 and
/// u = 0 on the boundary, the problem of MFEM's example 26 and deal.II's step-37: no exact
/// solution).
struct Problem {
  std::string kind = "exp";
  int dim = 3;
  bool has_exact() const { return kind != "one"; }
  double u(const std::array<double, 3>& x, double* grad = nullptr) const {
    if (kind == "one") {
      if (grad)
        for (int d = 0; d < dim; ++d) grad[d] = 0;
      return 0;
    }
    if (kind == "exp") {
      const double a[3] = {1.0, 0.5, 0.25};
      double e = 0;
      for (int d = 0; d < dim; ++d) e += a[d] * x[std::size_t(d)];
      const double v = std::exp(e);
      if (grad)
        for (int d = 0; d < dim; ++d) grad[d] = a[d] * v;
      return v;
    }
    const double pi = std::numbers::pi;
    double sn[3], cs[3], v = 1;
    for (int d = 0; d < dim; ++d) {
      sn[d] = std::sin(pi * x[std::size_t(d)]);
      cs[d] = std::cos(pi * x[std::size_t(d)]);
      v *= sn[d];
    }
    if (grad)
      for (int d = 0; d < dim; ++d) {
        double g = pi * cs[d];
        for (int k = 0; k < dim; ++k)
          if (k != d) g *= sn[k];
        grad[d] = g;
      }
    return v;
  }
  double f(const std::array<double, 3>& x) const {
    if (kind == "one") return 1.0;
    if (kind == "exp") {
      const double a[3] = {1.0, 0.5, 0.25};
      double a2 = 0;
      for (int d = 0; d < dim; ++d) a2 += a[d] * a[d];
      return -a2 * u(x);
    }
    return dim * std::numbers::pi * std::numbers::pi * u(x);
  }
};

struct Solved {
  index_t elements = 0, dofs = 0;
  int iterations = 0;
  bool converged = false;
  double rel_residual = 0, setup_s = 0, solve_s = 0, l2 = 0, h1 = 0, apply_ms = 0;
  nlohmann::json mg;  // multigrid: levels, set-up split, V-cycle and coarse times
};

/// L2 and H1-seminorm errors of uh against the exact solution (rule of degree 2p + 4, host);
/// without an exact solution (--rhs one) the norms of uh.
void errors(const H1Space& space, const Problem& pb, const std::vector<double>& uh, double& l2, double& h1) {
  const FeErrors err = fe_errors(space, uh, [&pb](index_t, const std::array<double, 3>& x, double* u, double* g) {
    u[0] = pb.u(x, g);
  });
  l2 = err.l2;
  h1 = err.h1;
}

/// Refuses a mesh whose vertices have more coordinates than its dimension unless the extra
/// ones are constant (a planar 2-D mesh lifted to z = c): the exact solution and the operator
/// read the first dim() coordinates, so a surface mesh, or a 2-D mesh tilted out of the z = c
/// plane, would give meaningless results.
void check_flat(const Mesh& mesh, const std::string& name) {
  const int dim = mesh.dim(), sdim = mesh.space_dim();
  for (int c = dim; c < sdim; ++c)
    for (index_t v = 1; v < mesh.num_vertices(); ++v)
      TESSERA_REQUIRE(mesh.vertex(v, c) == mesh.vertex(0, c), "poisson: mesh '", name, "' is ", dim,
                      "-dimensional but its vertices vary in coordinate ", "xyz"[c], " (vertex 0: ",
                      mesh.vertex(0, c), ", vertex ", v, ": ", mesh.vertex(v, c), "): a surface or curve in ",
                      sdim, "-D space, or a tilted ", dim, "-D mesh. poisson solves on the domain the first ", dim,
                      " coordinates span; give a ", dim == 2 ? "planar mesh in the x-y plane" : "mesh along x",
                      " (for a 3-D domain from Gmsh, save its volume elements: a Physical Volume, or no physical ",
                      "groups at all)");
}

/// --mg-orders "4,2,1" (empty: the default levels).
std::vector<int> parse_orders(const std::string& s) {
  std::vector<int> o;
  std::size_t at = 0;
  while (at < s.size()) {
    const std::size_t comma = std::min(s.find(',', at), s.size());
    const std::string item = s.substr(at, comma - at);
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    TESSERA_REQUIRE(used == item.size() && !item.empty(), "poisson: --mg-orders: '", item, "' in '", s,
                    "' is not an integer");
    o.push_back(v);
    at = comma + 1;
  }
  return o;
}

/// Multigrid CG for the correction to the boundary data: d = b - A x_bc' on the free entries and
/// 0 on the constrained ones, CG from 0 preconditioned by the V-cycle (its iterates stay 0 on
/// the constrained entries), then x = x_bc' + correction.
CgResult solve_mg(const Constrained& C, const Multigrid& mg, const std::vector<index_t>& fixed, const Array<double, 1>& b,
                  const Array<double, 1>& ubc, Array<double, 1>& x, const Exec& exec, const CgOptions& co) {
  const index_t n = b.size();
  Array<double, 1> d("poisson/d", {n}, exec.space());
  C.eliminate_rhs(b.cview(), ubc.cview(), d.view());
  // x_bc' (the prescribed values, 0 elsewhere) and d with 0 at the constrained entries
  std::vector<double> dh(static_cast<std::size_t>(n)), xh(static_cast<std::size_t>(n), 0.0);
  {
    const auto dd = d.to_host();
    const auto uu = ubc.to_host();
    std::copy(dd.data(), dd.data() + n, dh.begin());
    for (index_t k : fixed) {
      xh[std::size_t(k)] = uu(k);
      dh[std::size_t(k)] = 0;
    }
  }
  d = Array<double, 1>::from("poisson/d", std::span<const double>(dh), exec.space());
  Array<double, 1> corr("poisson/correction", {n}, exec.space());
  const CgResult r = linalg::pcg([&C](View<const double, 1> in, View<double, 1> out) { C.apply_homogeneous(in, out); },
                                 mg.preconditioner(), d.cview(), corr.view(), exec, co);
  const auto ch = corr.to_host();
  for (index_t i = 0; i < n; ++i) xh[std::size_t(i)] += ch(i);
  x = Array<double, 1>::from("poisson/x", std::span<const double>(xh), exec.space());
  return r;
}

Solved solve(const PoissonOptions& opt, const Mesh& mesh, const Exec& exec, std::ostream& out, bool write) {
  Solved r;
  check_flat(mesh, opt.mesh);
  const auto t0 = Clock::now();
  const H1Space space(mesh, opt.order, 1);
  const int dim = mesh.dim();
  const Problem pb{opt.rhs, dim};
  r.elements = mesh.num_elements();
  r.dofs = space.num_dofs();
  std::vector<double> un(std::size_t(space.num_nodes()), 0.0), fn(un.size(), 0.0);
  for_each_element_node(space, [&](index_t, int, index_t n, const std::array<double, 3>& x) {
    un[std::size_t(n)] = pb.u(x);
    fn[std::size_t(n)] = pb.f(x);
  });
  // The load vector is M I(f): where every node lies on a plane x_d = integer (f = 0 there),
  // e.g. p = 2 on a mesh with integer vertex coordinates, it is zero and so is the solution.
  if (std::all_of(fn.begin(), fn.end(), [](double v) { return std::abs(v) < 1e-12; }))
    std::fprintf(stderr,
                 "tessera: note: the source f = %d pi^2 u interpolated at the nodes is zero at every node (they lie "
                 "where u = prod sin(pi x_d) vanishes), so the load vector and the discrete solution are zero; "
                 "refine (--refine) or raise --order to see convergence\n",
                 dim);
  const OperatorOptions ko = operator_options(opt);
  // The load vector's mass matrix: the same rule, or Gauss q = p + 2 when the stiffness rule is
  // Gauss-Lobatto (inexact for the mass matrix, refused by H1Operator).
  OperatorOptions mo = ko;
  if (mo.quadrature == QuadratureType::GaussLobatto) mo = OperatorOptions{-1, QuadratureType::Gauss, ko.geometry, true};
  const H1Operator K(space, OperatorKind::Diffusion, exec, ko);
  const H1Operator M(space, OperatorKind::Mass, exec, mo);
  const std::vector<index_t> fixed = space.exterior_nodes();
  const Constrained C(K, fixed);
  auto f = Array<double, 1>::from("poisson/f", std::span<const double>(fn), exec.space());
  auto ubc = Array<double, 1>::from("poisson/u_bc", std::span<const double>(un), exec.space());
  Array<double, 1> b("poisson/b", {r.dofs}, exec.space()), x("poisson/x", {r.dofs}, exec.space());
  M.apply(f.cview(), b.view());  // b = M I(f): the load vector of the interpolated source
  const bool mg = opt.precond == "mg";
  Array<double, 1> inv;
  std::unique_ptr<Multigrid> mgp;
  if (mg) {
    MultigridOptions mo2;
    mo2.orders = parse_orders(opt.mg_orders);
    mo2.smoother.degree = opt.smoother_degree;
    mo2.coarse = parse_coarse_solver(opt.coarse);
    mgp = std::make_unique<Multigrid>(K, space, fixed, [](const H1Space& s) { return s.exterior_nodes(); }, mo2);
  } else {
    inv = C.inverse_diagonal();
  }
  fence("poisson/setup");
  r.setup_s = std::chrono::duration<double>(Clock::now() - t0).count();

  const bool tty = isatty(fileno(stderr));
  auto last = Clock::now();
  CgOptions co;
  co.rel_tol = opt.tol;
  co.max_iters = opt.max_iters;
  co.monitor = [&](int it, double res) {
    if (!tty) return;
    if (std::chrono::duration<double>(Clock::now() - last).count() < 0.5) return;
    last = Clock::now();
    std::fprintf(stderr, "\r  CG iteration %6d  relative residual %.3e", it, res);
  };
  const auto t1 = Clock::now();
  // CG for the correction to the boundary data (the homogeneous system)
  const CgResult cr = mg ? solve_mg(C, *mgp, fixed, b, ubc, x, exec, co) : C.solve(b.cview(), ubc.cview(), x.view(), co, inv.cview());
  if (mg) {
    const auto& t = mgp->timings();
    nlohmann::json lv = nlohmann::json::array();
    for (const auto& L : mgp->levels()) lv.push_back({{"order", L.order}, {"dofs", L.dofs}, {"lambda_max", L.lambda_max}});
    r.mg = {{"levels", lv}, {"coarse_solver", name(mgp->coarse_solver())}, {"smoother_degree", opt.smoother_degree},
            {"setup_levels_s", t.levels_s}, {"setup_smoothers_s", t.smoothers_s}, {"setup_transfers_s", t.transfers_s},
            {"setup_coarse_matrix_s", t.coarse_matrix_s}, {"setup_amg_s", t.coarse_setup_s},
            {"vcycles", t.cycles}, {"vcycle_s", t.vcycle_s}, {"coarse_s", t.coarse_s}};
  }
  fence("poisson/solve");
  r.solve_s = std::chrono::duration<double>(Clock::now() - t1).count();
  if (tty) std::fprintf(stderr, "\r%60s\r", "");
  r.iterations = cr.iterations;
  r.converged = cr.converged;
  r.rel_residual = cr.rel_residual;
  {  // one operator apply, timed alone
    Array<double, 1> y("poisson/y", {r.dofs}, exec.space());
    K.apply(x.cview(), y.view());
    fence("poisson/apply");
    const auto ta = Clock::now();
    const int reps = 5;
    for (int k = 0; k < reps; ++k) K.apply(x.cview(), y.view());
    fence("poisson/apply");
    r.apply_ms = 1e3 * std::chrono::duration<double>(Clock::now() - ta).count() / reps;
  }
  const auto xh = x.to_host();
  const std::vector<double> uh(xh.data(), xh.data() + xh.size());
  errors(space, pb, uh, r.l2, r.h1);
  if (write && !opt.output.empty()) {
    std::vector<io::VtuField> fields(3);
    fields[0] = {"u", 1, true, fe_vertex_values(space, uh)};
    fields[1] = {"u_exact", 1, true, std::vector<double>(std::size_t(mesh.num_vertices()))};
    for (index_t v = 0; v < mesh.num_vertices(); ++v) {
      std::array<double, 3> p{0, 0, 0};
      for (int d = 0; d < mesh.space_dim(); ++d) p[std::size_t(d)] = mesh.vertex(v, d);
      fields[1].values[std::size_t(v)] = pb.u(p);
    }
    fields[2] = {"error", 1, true, fields[0].values};
    for (std::size_t v = 0; v < fields[2].values.size(); ++v) fields[2].values[v] -= fields[1].values[v];
    io::write_vtu(opt.output, mesh, fields);
    // with --json, stdout holds the JSON alone
    if (opt.json) std::fprintf(stderr, "wrote %s (u, u_exact, error at the mesh vertices)\n", opt.output.c_str());
    else out << "wrote " << opt.output << " (u, u_exact, error at the mesh vertices)\n";
  }
  return r;
}

/// --output: a .vtu name in a folder that exists and can be written, checked before the solve
/// (which may take long) rather than after it.
void check_output(const std::string& path) {
  TESSERA_REQUIRE(io::lower_extension(path) == ".vtu", "poisson: --output '", path, "' must name a .vtu file (VTK XML unstructured grid)");
  const bool existed = std::ifstream(path).good();
  {
    std::ofstream probe(path, std::ios::app);
    TESSERA_REQUIRE(probe.good(), "poisson: --output '", path,
                    "' cannot be written (no such folder, or no permission); nothing was solved");
  }
  if (!existed) std::remove(path.c_str());
}

}  // namespace

int run_poisson(const PoissonOptions& opt, std::ostream& out) {
  TESSERA_REQUIRE(opt.order >= 1, "poisson: order must be >= 1 (got ", opt.order, ")");
  TESSERA_REQUIRE(opt.tol > 0 && opt.tol < 1, "poisson: the CG tolerance must lie in (0, 1), got ", opt.tol);
  const OperatorOptions oo = operator_options(opt);  // bad values: refused before any mesh is read
  const std::string rule = std::string(oo.quadrature == QuadratureType::Gauss ? "gauss" : "gauss-lobatto") +
                           (oo.degree >= 0 ? " degree " + std::to_string(oo.degree) : "");
  const Exec exec = Exec::parse(opt.backend);
  if (!opt.output.empty()) check_output(opt.output);
  std::vector<Solved> levels;
  std::vector<fem::Mesh> meshes;
  const int nlev = opt.study > 0 ? opt.study + 1 : 1;
  if (!opt.json) {
    const char* problem = opt.rhs == "one"   ? "-lap u = 1, u = 0 on the boundary"
                          : opt.rhs == "sin" ? "-lap u = f, u = prod_d sin(pi x_d), Dirichlet data on the boundary"
                                             : "-lap u = f, u = exp(x + y/2 + z/4), Dirichlet data on the boundary";
    out << "tessera poisson: " << problem << ", order " << opt.order << ", backend " << to_string(exec.backend)
        << ", quadrature " << rule << ", geometry " << opt.geometry << ", CG preconditioner "
        << (opt.precond == "mg" ? "p-multigrid" : "jacobi") << "\n";
  }
  nlohmann::json runs = nlohmann::json::array();
  int rc = 0;
  for (int l = 0; l < nlev; ++l) {
    const fem::Mesh mesh = io::load_mesh(opt.mesh, opt.refine + l);
    const Solved s = solve(opt, mesh, exec, out, l == nlev - 1);
    levels.push_back(s);
    if (!s.converged) rc = 3;
    nlohmann::json j{{"mesh", opt.mesh},          {"refine", opt.refine + l},  {"order", opt.order},
                     {"backend", to_string(exec.backend)}, {"quadrature", rule}, {"geometry", opt.geometry},
                     {"elements", s.elements}, {"dofs", s.dofs},
                     {"iterations", s.iterations}, {"converged", s.converged}, {"rel_residual", s.rel_residual},
                     {"setup_s", s.setup_s},      {"solve_s", s.solve_s},      {"apply_ms", s.apply_ms},
                     {"gdofs_per_s_apply", s.dofs / (s.apply_ms * 1e6)},
                     {"gdofs_per_s_cg", s.iterations > 0 ? s.dofs * double(s.iterations) / (s.solve_s * 1e9) : 0.0},
                     {"rhs", opt.rhs},            {"precond", opt.precond}};
    if (opt.rhs == "one") {
      j["solution_l2_norm"] = s.l2;
      j["solution_h1_seminorm"] = s.h1;
    } else {
      j["l2_error"] = s.l2;
      j["h1_error"] = s.h1;
    }
    if (!s.mg.is_null()) j["multigrid"] = s.mg;
    if (l > 0 && opt.rhs != "one") {
      j["l2_rate"] = std::log2(levels[std::size_t(l - 1)].l2 / s.l2);
      j["h1_rate"] = std::log2(levels[std::size_t(l - 1)].h1 / s.h1);
    }
    runs.push_back(j);
    if (!opt.json) {
      out << std::setprecision(4);
      out << "refine " << opt.refine + l << ": " << s.elements << " elements, " << s.dofs << " DOFs; CG "
          << s.iterations << " iterations" << (s.converged ? "" : " (NOT converged)") << ", relative residual "
          << s.rel_residual << "; setup " << s.setup_s << " s, solve " << s.solve_s << " s, apply " << s.apply_ms
          << " ms (" << s.dofs / (s.apply_ms * 1e6) << " GDOF/s); ";
      if (opt.rhs == "one") out << "solution L2 norm " << s.l2 << ", H1 seminorm " << s.h1;
      else out << "L2 error " << s.l2 << ", H1 error " << s.h1;
      if (l > 0 && opt.rhs != "one")
        out << "; rates L2 " << j["l2_rate"].get<double>() << ", H1 " << j["h1_rate"].get<double>();
      if (!s.mg.is_null()) {
        out << "\n  multigrid: orders";
        for (const auto& L : s.mg["levels"]) out << " " << L["order"].get<int>();
        out << ", coarse " << s.mg["coarse_solver"].get<std::string>() << "; setup: levels "
            << s.mg["setup_levels_s"].get<double>() << " s, smoothers " << s.mg["setup_smoothers_s"].get<double>()
            << " s, transfers " << s.mg["setup_transfers_s"].get<double>() << " s, coarse matrix "
            << s.mg["setup_coarse_matrix_s"].get<double>() << " s, AMG " << s.mg["setup_amg_s"].get<double>()
            << " s; " << s.mg["vcycles"].get<int>() << " V-cycles " << s.mg["vcycle_s"].get<double>()
            << " s (coarse " << s.mg["coarse_s"].get<double>() << " s)";
      }
      out << "\n" << std::flush;
    }
  }
  if (opt.json) out << (runs.size() == 1 ? runs[0].dump() : runs.dump()) << "\n";
  if (nlev > 1 && opt.rhs != "one") {
    // At high orders the discretization error can fall to the level that the CG tolerance
    // leaves in the solution, and the observed rate then says more about --tol than the method
    const double rate = runs.back()["l2_rate"].get<double>();
    if (rate < opt.order + 1 - 0.5)
      std::fprintf(stderr,
                   "tessera: note: the last observed L2 rate, %.2f, is below p + 1 = %d; where the L2 error is "
                   "small (here %.2e), the algebraic error CG leaves at --tol %.1e can dominate it: rerun with a "
                   "smaller --tol (e.g. 1e-14) to see the discretization's rate\n",
                   rate, opt.order + 1, levels.back().l2, opt.tol);
  }
  if (rc != 0)
    std::fprintf(stderr, "tessera: error: CG did not reach the tolerance %.1e within %d iterations\n", opt.tol,
                 opt.max_iters);
  return rc;
}

}  // namespace tessera::app
