// tessera poisson: -lap u = f (a manufactured solution, or f = 1), Dirichlet data on the whole
// boundary, matrix-free diffusion operator, multigrid or Jacobi CG (see docs/cli.md). Compiled
// by nvcc in CUDA builds (kernels for the source, the boundary data and the error norms).
#include "poisson.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <numbers>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "fe_errors.hpp"
#include "tessera/core.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/field_functions.hpp"
#include "tessera/fem/multigrid.hpp"
#include "tessera/fem/operator.hpp"
#include "tessera/fem/reference_element.hpp"
#include "tessera/io/mesh_io.hpp"
#include "tessera/io/vtu.hpp"
#include "usage_error.hpp"
#include "vtu_output.hpp"

namespace tessera::app {
namespace {

using namespace tessera::fem;
using Clock = std::chrono::steady_clock;

/// The operator options of --quadrature and --geometry (throws tessera::Error on bad values).
OperatorOptions operator_options(const PoissonOptions& opt) {
  OperatorOptions o;
  o.kernels = OperatorKernelChoice::from_environment();  // the comparison switches (docs/operators.md)
  require_usage(opt.geometry == "stored" || opt.geometry == "onthefly", "poisson: --geometry '", opt.geometry,
                "' is not one of stored, onthefly");
  o.geometry = opt.geometry == "stored" ? GeometrySource::Stored : GeometrySource::OnTheFly;
  std::string q = opt.quadrature, deg;
  if (const auto c = q.find(':'); c != std::string::npos) {
    deg = q.substr(c + 1);
    q = q.substr(0, c);
    require_usage(!deg.empty(), "poisson: --quadrature '", opt.quadrature, "': a degree must follow the ':'");
  } else if (!q.empty() && std::isdigit(static_cast<unsigned char>(q[0]))) {
    deg = q;
    q = "gauss";
  }
  require_usage(q == "gauss" || q == "gll" || q == "gauss-lobatto" || q == "collapsed" || q == "gauss-collapsed",
                "poisson: --quadrature '", opt.quadrature,
                "' is not gauss, gll, collapsed, a degree, or gauss:D / gll:D / collapsed:D");
  if (q == "gll" || q == "gauss-lobatto") o.quadrature = QuadratureType::GaussLobatto;
  if (q == "collapsed" || q == "gauss-collapsed") o.quadrature = QuadratureType::GaussCollapsed;
  if (!deg.empty()) {
    std::size_t used = 0;
    int d = -1;
    try {
      d = std::stoi(deg, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    require_usage(used == deg.size() && d >= 0, "poisson: --quadrature '", opt.quadrature,
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
/// solution). Callable in kernels (field_functions.hpp).
struct Problem {
  enum Kind : int { Exp, Sin, One };
  int kind = Exp;
  int dim = 3;
  static Problem of(const std::string& rhs, int dim) {
    return Problem{rhs == "one" ? One : rhs == "sin" ? Sin : Exp, dim};
  }
  TESSERA_HOST_DEVICE double u(const double* x, double* grad) const {
    if (kind == One) {
      if (grad)
        for (int d = 0; d < dim; ++d) grad[d] = 0;
      return 0;
    }
    if (kind == Exp) {
      const double a[3] = {1.0, 0.5, 0.25};
      double e = 0;
      for (int d = 0; d < dim; ++d) e += a[d] * x[d];
      const double v = ::exp(e);
      if (grad)
        for (int d = 0; d < dim; ++d) grad[d] = a[d] * v;
      return v;
    }
    const double pi = 3.14159265358979323846;
    double sn[3], cs[3], v = 1;
    for (int d = 0; d < dim; ++d) {
      sn[d] = ::sin(pi * x[d]);
      cs[d] = ::cos(pi * x[d]);
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
  TESSERA_HOST_DEVICE double f(const double* x) const {
    if (kind == One) return 1.0;
    if (kind == Exp) {
      const double a2 = dim == 1 ? 1.0 : dim == 2 ? 1.25 : 1.3125;  // sum of a_d^2
      return -a2 * u(x, nullptr);
    }
    const double pi = 3.14159265358979323846;
    return dim * pi * pi * u(x, nullptr);
  }
};

/// The exact solution and the source as the functors of field_functions.hpp.
struct ExactU {
  Problem pb;
  TESSERA_HOST_DEVICE double operator()(const double* x, double* grad) const { return pb.u(x, grad); }
};
struct SourceF {
  Problem pb;
  TESSERA_HOST_DEVICE double operator()(const double* x, double*) const { return pb.f(x); }
};

/// --progress: lines on stderr as the run goes, so that a long set-up or solve shows it is
/// alive. On a terminal the CG iteration is rewritten in place; elsewhere (a batch job's log)
/// it is a new line about once a second.
struct Progress {
  bool on = false;   ///< print at all
  bool tty = false;  ///< stderr is a terminal
  int level = 0;     ///< refinement level of the run (--refine + study level)
  static Progress of(const std::string& mode) {
    Progress p;
    p.tty = isatty(fileno(stderr));
    p.on = mode == "on" || (mode == "auto" && p.tty);
    return p;
  }
  void phase(const std::string& name, double seconds) const {
    if (on) std::fprintf(stderr, "tessera poisson: refine %d: %s done, %.3g s\n", level, name.c_str(), seconds);
  }
  void note(const std::string& what) const {
    if (on) std::fprintf(stderr, "tessera poisson: refine %d: %s\n", level, what.c_str());
  }
};

/// Wall times of the phases of one solve, in order (each ends with a fence, so device work is
/// counted in the phase that launched it).
struct Phases {
  std::vector<std::pair<std::string, double>> list;
  Clock::time_point last = Clock::now();
  const Progress* progress = nullptr;
  void mark(const char* name) {
    fence(name);
    const auto now = Clock::now();
    list.emplace_back(name, std::chrono::duration<double>(now - last).count());
    last = now;
    if (progress) progress->phase(name, list.back().second);
  }
  void restart() { last = Clock::now(); }
  double total() const {
    double s = 0;
    for (const auto& [n, t] : list) s += t;
    return s;
  }
};

struct Solved {
  Phases phases;
  index_t elements = 0, dofs = 0;
  int iterations = 0;
  bool converged = false;
  double rel_residual = 0, setup_s = 0, solve_s = 0, l2 = 0, h1 = 0, apply_ms = 0;
  index_t compressed_elements = 0;  // H1Operator::compressed_elements (one geometric factor per element)
  nlohmann::json cpu;  // the CPU's batched operator kernel (H1Operator::cpu_kernel), null elsewhere
  nlohmann::json mg;  // multigrid: levels, set-up split, V-cycle and coarse times
};


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

/// --mg-orders: "halve" or "" (the default levels p, ceil(p / 2), ..., 1), "step" (p, p - 1,
/// ..., 1) or a list "4,2,1".
std::vector<int> parse_orders(const std::string& s, int p) {
  std::vector<int> o;
  if (s.empty() || s == "halve") return o;
  if (s == "step") {
    for (int k = p; k >= 1; --k) o.push_back(k);
    return o;
  }
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
    require_usage(used == item.size() && !item.empty(), "poisson: --mg-orders: '", item, "' in '", s,
                  "' is not an integer");
    o.push_back(v);
    at = comma + 1;
  }
  return o;
}

Solved solve(const PoissonOptions& opt, const Mesh& mesh, const std::vector<const Mesh*>& coarser, const Exec& exec,
             std::ostream& out, const std::string& output, const Progress& progress) {
  Solved r;
  r.phases.progress = &progress;
  check_flat(mesh, opt.mesh);
  const auto t0 = Clock::now();
  r.phases.restart();
  const H1Space space(mesh, opt.order, 1, NodeOrdering::Auto, exec.backend);
  r.phases.mark("numbering");
  const int dim = mesh.dim();
  const Problem pb = Problem::of(opt.rhs, dim);
  r.elements = mesh.num_elements();
  r.dofs = space.num_dofs();
  // The source and the boundary data at the nodes, by a kernel
  Array<double, 1> f("poisson/f", {r.dofs}, exec.space()), ubc("poisson/u_bc", {r.dofs}, exec.space());
  interpolate_function(space, SourceF{pb}, f.view(), exec);
  interpolate_function(space, ExactU{pb}, ubc.view(), exec);
  const auto fv = f.cview();
  const double fmax = transform_reduce(
      "poisson/source_max", exec, r.dofs, 0.0, TESSERA_LAMBDA(index_t i) { return fabs(fv(i)); }, Max{});
  // The load vector is M I(f): where every node lies on a plane x_d = integer (f = 0 there),
  // e.g. p = 2 on a mesh with integer vertex coordinates, it is zero and so is the solution.
  if (fmax < 1e-12)
    std::fprintf(stderr,
                 "tessera: note: the source f = %d pi^2 u interpolated at the nodes is zero at every node (they lie "
                 "where u = prod sin(pi x_d) vanishes), so the load vector and the discrete solution are zero; "
                 "refine (--refine) or raise --order to see convergence\n",
                 dim);
  r.phases.mark("nodal_data");
  const OperatorOptions ko = operator_options(opt);
  // The load vector's mass matrix: the same rule, or Gauss q = p + 2 when the stiffness rule is
  // Gauss-Lobatto (inexact for the mass matrix, refused by H1Operator).
  OperatorOptions mo = ko;
  if (mo.quadrature == QuadratureType::GaussLobatto) {
    mo = OperatorOptions{-1, QuadratureType::Gauss, ko.geometry, true};
    mo.kernels = ko.kernels;
  }
  const H1Operator K(space, OperatorKind::Diffusion, exec, ko);
  const H1Operator M(space, OperatorKind::Mass, exec, mo);
  r.phases.mark("operators");
  const std::vector<index_t> fixed = space.exterior_nodes();
  const Constrained C(K, fixed);
  Array<double, 1> b("poisson/b", {r.dofs}, exec.space()), x("poisson/x", {r.dofs}, exec.space());
  M.apply(f.cview(), b.view());  // b = M I(f): the load vector of the interpolated source
  r.phases.mark("load_vector");
  const bool mg = opt.precond == "mg";
  Array<double, 1> inv;
  std::unique_ptr<Multigrid> mgp;
  if (mg) {
    MultigridOptions mo2;
    mo2.orders = parse_orders(opt.mg_orders, opt.order);
    mo2.smoother.degree = opt.smoother_degree;
    mo2.coarse = parse_coarse_solver(opt.coarse);
    mo2.coarse_tol = opt.coarse_tol;
    mo2.coarse_meshes = coarser;
    mgp = std::make_unique<Multigrid>(K, space, fixed, [](const H1Space& s) { return s.exterior_nodes(); }, mo2);
  } else {
    inv = C.inverse_diagonal();
  }
  r.phases.mark(mg ? "multigrid_setup" : "diagonal");
  r.setup_s = std::chrono::duration<double>(Clock::now() - t0).count();

  const bool tty = progress.on && progress.tty;
  auto last = Clock::now();
  CgOptions co;
  co.rel_tol = opt.tol;
  co.max_iters = opt.max_iters;
  co.monitor = [&](int it, double res) {
    if (!progress.on) return;
    if (std::chrono::duration<double>(Clock::now() - last).count() < (tty ? 0.5 : 1.0)) return;
    last = Clock::now();
    if (tty) std::fprintf(stderr, "\r  CG iteration %6d  relative residual %.3e", it, res);
    else {
      char line[96];
      std::snprintf(line, sizeof line, "CG iteration %d, relative residual %.3e", it, res);
      progress.note(line);
    }
  };
  const auto t1 = Clock::now();
  r.phases.restart();
  // CG for the correction to the boundary data (the homogeneous system)
  const CgResult cr = mg ? C.solve(b.cview(), ubc.cview(), x.view(), co, mgp->preconditioner())
                         : C.solve(b.cview(), ubc.cview(), x.view(), co, inv.cview());
  if (tty) std::fprintf(stderr, "\r%60s\r", "");  // the CG line, before the next progress line
  if (mg) {
    const auto& t = mgp->timings();
    nlohmann::json lv = nlohmann::json::array();
    for (const auto& L : mgp->levels())
      lv.push_back({{"order", L.order}, {"elements", L.elements}, {"dofs", L.dofs}, {"lambda_max", L.lambda_max}});
    r.mg = {{"levels", lv}, {"mesh_levels", coarser.size()}, {"coarse_solver", name(mgp->coarse_solver())}, {"smoother_degree", opt.smoother_degree},
            {"setup_levels_s", t.levels_s}, {"setup_smoothers_s", t.smoothers_s}, {"setup_transfers_s", t.transfers_s},
            {"setup_coarse_matrix_s", t.coarse_matrix_s}, {"setup_amg_s", t.coarse_setup_s},
            {"vcycles", t.cycles}, {"vcycle_s", t.vcycle_s}, {"coarse_s", t.coarse_s},
            {"coarse_cg_iterations_last", mgp->last_coarse_iterations()}};
  }
  r.phases.mark("solve");
  r.solve_s = std::chrono::duration<double>(Clock::now() - t1).count();
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
    r.compressed_elements = K.compressed_elements();
    const auto ck = K.cpu_kernel();
    if (ck.batched_elements > 0)
      r.cpu = {{"lanes", ck.lanes}, {"batched_elements", ck.batched_elements},
               {"compressed_elements", ck.compressed_elements}, {"geometry_bytes", ck.geometry_bytes},
               {"threads", ck.threads}};
  }
  r.phases.restart();
  {  // L2 and H1 errors (with f = 1: the norms of the solution), by kernels
    InterpolatorOptions io;  // TESSERA_CPU_BATCHED=0: the team kernels here too
    io.kernels = ko.kernels;
    const ErrorNorms en = error_norms(space, x.cview(), ExactU{pb}, exec, -1, io);
    r.l2 = en.l2;
    r.h1 = en.h1;
  }
  r.phases.mark("error_norms");
  if (!output.empty()) {
    // u (the order-p solution on VTK Lagrange cells at p >= 2), and u_exact and the error at
    // the same points.
    const std::vector<double> uh = x.to_vector();
    const io::VtuSpaceField u{"u", &space, uh};
    const io::VtuFunctionField exact[2] = {
        {"u_exact", 1, [pb](index_t, const double* p, const double*, double* v) { v[0] = pb.u(p, nullptr); }},
        {"error", 1, [pb](index_t, const double* p, const double* at, double* v) { v[0] = at[0] - pb.u(p, nullptr); }}};
    io::write_vtu_lagrange(output, mesh, opt.order, {&u, 1}, exact);
    const std::string what = opt.order == 1 ? "u, u_exact, error at the mesh vertices"
                                            : "u, u_exact, error on order-" + std::to_string(opt.order) +
                                                  " VTK Lagrange cells, every node a point";
    // with --json, stdout holds the JSON alone
    if (opt.json) std::fprintf(stderr, "wrote %s (%s)\n", output.c_str(), what.c_str());
    else out << "wrote " << output << " (" << what << ")\n";
  }
  if (!output.empty()) r.phases.mark("output");
  return r;
}

/// Refuses meshes the matrix-free operators do not handle, before anything is printed: 1-D
/// meshes (segments) have no H1Operator kernels.
void check_supported(const Mesh& mesh, const std::string& name) {
  TESSERA_REQUIRE(mesh.dim() >= 2, "poisson: mesh '", name, "' is 1-D (", mesh.num_elements(),
                  " segments); poisson's matrix-free operators work on triangles, quadrilaterals, tetrahedra and "
                  "hexahedra only: give a 2-D or 3-D mesh (tessera assemble builds mass and diffusion matrices "
                  "of 1-D meshes)");
}

/// Orders whose cost is known to be impractical: on triangles and tetrahedra the operator
/// applies dense tables of the basis gradients at the quadrature points (no sum factorization),
/// nodes x points x dim entries per geometry, and their size grows like p^6 on tetrahedra. Past
/// 10^6 entries (8 MB, more than a core's L2 cache; tetrahedra from p = 10) an apply costs
/// about 4 dim nodes points flops per element: say so, with the estimate, before the set-up.
void warn_impractical(const Mesh& mesh, const PoissonOptions& opt, const OperatorOptions& oo) {
  constexpr double kTableLimit = 1e6;
  for (const Geometry g : {Geometry::Triangle, Geometry::Tetrahedron}) {
    if (mesh.num_elements(g) == 0 || fem::dim(g) != mesh.dim()) continue;
    const double nodes = double(num_nodes(g, opt.order));
    double points = 0;
    try {
      const QuadratureRule q = quadrature(g, oo.degree >= 0 ? oo.degree : 2 * opt.order);
      points = double(q.size());
    } catch (const Error&) {
      continue;  // the operator refuses the rule itself, with its own message
    }
    const double table = nodes * points * fem::dim(g);
    if (table <= kTableLimit) continue;
    // uniform refinement multiplies the elements by 2^dim
    const double elements = double(mesh.num_elements(g)) * std::pow(double(1 << mesh.dim()), opt.refine);
    const double flops = 4.0 * table * elements;
    std::fprintf(stderr,
                 "tessera: warning: order %d on %s is known to be impractical: %.0f nodes and %.0f quadrature points "
                 "per element, a gradient table of %.3g entries (%.0f MB) applied without sum factorization, about "
                 "%.2g flops per operator apply on this mesh (a multigrid CG iteration does several): expect "
                 "seconds per iteration on a CPU; orders up to %d on %s, or hexahedra, run well\n",
                 opt.order, g == Geometry::Tetrahedron ? "tetrahedra" : "triangles", nodes, points, table,
                 table * 8 / 1e6, flops, g == Geometry::Tetrahedron ? 8 : 16,
                 g == Geometry::Tetrahedron ? "tetrahedra" : "triangles");
  }
}

}  // namespace

int run_poisson(const PoissonOptions& opt, std::ostream& out) {
  require_usage(opt.order >= 1, "poisson: order must be >= 1 (got ", opt.order, ")");
  require_usage(opt.tol > 0 && opt.tol < 1, "poisson: the CG tolerance must lie in (0, 1), got ", opt.tol);
  const OperatorOptions oo = operator_options(opt);  // bad values: refused before any mesh is read
  const std::string rule = std::string(name(oo.quadrature)) +
                           (oo.degree >= 0 ? " degree " + std::to_string(oo.degree) : "");
  const Exec exec = Exec::parse(opt.backend);
  if (!opt.output.empty()) check_vtu_output("poisson", opt.output);
  require_usage(opt.progress == "auto" || opt.progress == "on" || opt.progress == "off", "poisson: --progress '",
                opt.progress, "' is not one of auto, on, off");
  Progress progress = Progress::of(opt.progress);
  std::vector<Solved> levels;
  std::deque<fem::Mesh> meshes;  // a deque: the solver keeps pointers to its meshes
  const int nlev = opt.study > 0 ? opt.study + 1 : 1;
  // The mesh first: one that poisson cannot solve on is refused before the report starts
  const auto t_load = Clock::now();
  meshes.push_back(io::load_mesh(opt.mesh, 0));
  const double load_s = std::chrono::duration<double>(Clock::now() - t_load).count();
  check_supported(meshes[0], opt.mesh);
  warn_impractical(meshes[0], opt, oo);
  if (!opt.json) {
    const char* problem = opt.rhs == "one"   ? "-lap u = 1, u = 0 on the boundary"
                          : opt.rhs == "sin" ? "-lap u = f, u = prod_d sin(pi x_d), Dirichlet data on the boundary"
                                             : "-lap u = f, u = exp(x + y/2 + z/4), Dirichlet data on the boundary";
    out << "tessera poisson: " << problem << ", order " << opt.order << ", backend " << to_string(exec.backend)
        << ", quadrature " << rule << ", geometry " << opt.geometry << ", CG preconditioner "
        << (opt.precond == "mg" ? "p-multigrid" : "jacobi") << "\n" << std::flush;
  }
  nlohmann::json runs = nlohmann::json::array();
  std::vector<io::PvdEntry> collection;  // --output X.pvd: one .vtu per level
  int rc = 0;
  for (int l = 0; l < nlev; ++l) {
    // The refinement hierarchy: meshes[r] is the mesh refined r times; the coarser ones are
    // multigrid's mesh levels (the last --mg-mesh-levels of them).
    const auto tm = Clock::now();
    progress.level = opt.refine + l;
    while (int(meshes.size()) <= opt.refine + l) meshes.push_back(fem::refine_uniformly(meshes.back()));
    const fem::Mesh& mesh = meshes[std::size_t(opt.refine + l)];
    std::vector<const fem::Mesh*> coarser;
    const int avail = opt.refine + l;
    const int use = opt.mg_mesh_levels < 0 ? avail : std::min(avail, opt.mg_mesh_levels);
    for (int r = avail - use; r < avail; ++r) coarser.push_back(&meshes[std::size_t(r)]);
    const double mesh_s = std::chrono::duration<double>(Clock::now() - tm).count() + (l == 0 ? load_s : 0.0);
    progress.phase("mesh (" + std::to_string(mesh.num_elements()) + " elements)", mesh_s);
    // --output: the last level's .vtu, or with a .pvd every level's
    const std::string level_output = opt.output.empty()        ? std::string()
                                     : is_collection(opt.output) ? level_file(opt.output, opt.refine + l)
                                     : l == nlev - 1             ? opt.output
                                                                 : std::string();
    Solved s = solve(opt, mesh, coarser, exec, out, level_output, progress);
    if (!level_output.empty() && is_collection(opt.output))
      collection.push_back({double(opt.refine + l), std::filesystem::path(level_output).filename().string()});
    s.phases.list.insert(s.phases.list.begin(), {"mesh", mesh_s});
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
    j["compressed_elements"] = s.compressed_elements;
    if (!s.cpu.is_null()) j["cpu_kernel"] = s.cpu;
    nlohmann::json ph = nlohmann::json::object();
    for (const auto& [n, t] : s.phases.list) ph[n] = t;
    j["phases_s"] = ph;
    j["phases_total_s"] = s.phases.total();
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
          << " ms (" << s.dofs / (s.apply_ms * 1e6) << " GDOF/s";
      if (!s.cpu.is_null())
        out << "; " << s.cpu["lanes"].get<int>() << " elements per SIMD vector, "
            << std::lround(100.0 * double(s.cpu["compressed_elements"].get<index_t>()) /
                           double(std::max<index_t>(1, s.cpu["batched_elements"].get<index_t>())))
            << "% with one geometric factor per element";
      else if (s.compressed_elements > 0)  // the team kernels (GPU): every element or none
        out << "; one geometric factor per element";
      out << "); ";
      if (opt.rhs == "one") out << "solution L2 norm " << s.l2 << ", H1 seminorm " << s.h1;
      else out << "L2 error " << s.l2 << ", H1 error " << s.h1;
      if (l > 0 && opt.rhs != "one")
        out << "; rates L2 " << j["l2_rate"].get<double>() << ", H1 " << j["h1_rate"].get<double>();
      if (!s.mg.is_null()) {
        out << "\n  multigrid: levels (order/elements)";
        for (const auto& L : s.mg["levels"]) out << " " << L["order"].get<int>() << "/" << L["elements"].get<index_t>();
        if (s.mg["mesh_levels"].get<int>() == 0)
          out << " (order levels alone: the mesh was not made by --refine, or --mg-mesh-levels is 0)";
        out << ", coarse " << s.mg["coarse_solver"].get<std::string>() << "; setup: levels "
            << s.mg["setup_levels_s"].get<double>() << " s, smoothers " << s.mg["setup_smoothers_s"].get<double>()
            << " s, transfers " << s.mg["setup_transfers_s"].get<double>() << " s, coarse matrix "
            << s.mg["setup_coarse_matrix_s"].get<double>() << " s, AMG " << s.mg["setup_amg_s"].get<double>()
            << " s; " << s.mg["vcycles"].get<int>() << " V-cycles " << s.mg["vcycle_s"].get<double>()
            << " s (coarse " << s.mg["coarse_s"].get<double>() << " s)";
      }
      out << "\n  phases:";
      for (const auto& [n, t] : s.phases.list) out << " " << n << " " << t << " s,";
      out << " total " << s.phases.total() << " s";
      out << "\n" << std::flush;
    }
  }
  if (!collection.empty()) {
    io::write_pvd(opt.output, collection);
    if (opt.json) std::fprintf(stderr, "wrote %s (a collection of %zu .vtu files, time = refinement level)\n", opt.output.c_str(), collection.size());
    else out << "wrote " << opt.output << " (a collection of " << collection.size() << " .vtu files, time = refinement level)\n";
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
