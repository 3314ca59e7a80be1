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

/// The manufactured solution u = prod_d sin(pi x_d) over the mesh's dimensions.
double exact(int dim, const std::array<double, 3>& x, double* grad = nullptr) {
  const double pi = std::numbers::pi;
  double s[3], c[3], u = 1;
  for (int d = 0; d < dim; ++d) {
    s[d] = std::sin(pi * x[std::size_t(d)]);
    c[d] = std::cos(pi * x[std::size_t(d)]);
    u *= s[d];
  }
  if (grad)
    for (int d = 0; d < dim; ++d) {
      double g = pi * c[d];
      for (int k = 0; k < dim; ++k)
        if (k != d) g *= s[k];
      grad[d] = g;
    }
  return u;
}

struct Solved {
  index_t elements = 0, dofs = 0;
  int iterations = 0;
  bool converged = false;
  double rel_residual = 0, setup_s = 0, solve_s = 0, l2 = 0, h1 = 0, apply_ms = 0;
};

/// L2 and H1-seminorm errors of uh against the exact solution (rule of degree 2p + 4, host).
void errors(const H1Space& space, const std::vector<double>& uh, double& l2, double& h1) {
  const int dim = space.mesh().dim();
  const FeErrors err = fe_errors(space, uh, [dim](index_t, const std::array<double, 3>& x, double* u, double* g) {
    u[0] = exact(dim, x, g);
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

Solved solve(const PoissonOptions& opt, const Mesh& mesh, const Exec& exec, std::ostream& out, bool write) {
  Solved r;
  check_flat(mesh, opt.mesh);
  const auto t0 = Clock::now();
  const H1Space space(mesh, opt.order, 1);
  const int dim = mesh.dim();
  r.elements = mesh.num_elements();
  r.dofs = space.num_dofs();
  std::vector<double> un(std::size_t(space.num_nodes()), 0.0), fn(un.size(), 0.0);
  for_each_element_node(space, [&](index_t, int, index_t n, const std::array<double, 3>& x) {
    un[std::size_t(n)] = exact(dim, x);
    fn[std::size_t(n)] = dim * std::numbers::pi * std::numbers::pi * un[std::size_t(n)];
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
  const Constrained C(K, space.exterior_nodes());
  auto f = Array<double, 1>::from("poisson/f", std::span<const double>(fn), exec.space());
  auto ubc = Array<double, 1>::from("poisson/u_bc", std::span<const double>(un), exec.space());
  Array<double, 1> b("poisson/b", {r.dofs}, exec.space()), x("poisson/x", {r.dofs}, exec.space());
  M.apply(f.cview(), b.view());  // b = M I(f): the load vector of the interpolated source
  const auto inv = C.inverse_diagonal();
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
  // CG for the correction to the boundary data (Constrained::solve: the homogeneous system)
  const CgResult cr = C.solve(b.cview(), ubc.cview(), x.view(), co, inv.cview());
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
  errors(space, uh, r.l2, r.h1);
  if (write && !opt.output.empty()) {
    std::vector<io::VtuField> fields(3);
    fields[0] = {"u", 1, true, fe_vertex_values(space, uh)};
    fields[1] = {"u_exact", 1, true, std::vector<double>(std::size_t(mesh.num_vertices()))};
    for (index_t v = 0; v < mesh.num_vertices(); ++v) {
      std::array<double, 3> p{0, 0, 0};
      for (int d = 0; d < mesh.space_dim(); ++d) p[std::size_t(d)] = mesh.vertex(v, d);
      fields[1].values[std::size_t(v)] = exact(dim, p);
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
    out << "tessera poisson: -lap u = f, u = prod_d sin(pi x_d), Dirichlet data on the boundary, order " << opt.order << ", backend " << to_string(exec.backend)
        << ", quadrature " << rule << ", geometry " << opt.geometry << "\n";
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
                     {"l2_error", s.l2},          {"h1_error", s.h1}};
    if (l > 0) {
      j["l2_rate"] = std::log2(levels[std::size_t(l - 1)].l2 / s.l2);
      j["h1_rate"] = std::log2(levels[std::size_t(l - 1)].h1 / s.h1);
    }
    runs.push_back(j);
    if (!opt.json) {
      out << std::setprecision(4);
      out << "refine " << opt.refine + l << ": " << s.elements << " elements, " << s.dofs << " DOFs; CG "
          << s.iterations << " iterations" << (s.converged ? "" : " (NOT converged)") << ", relative residual "
          << s.rel_residual << "; setup " << s.setup_s << " s, solve " << s.solve_s << " s, apply " << s.apply_ms
          << " ms (" << s.dofs / (s.apply_ms * 1e6) << " GDOF/s); L2 error " << s.l2 << ", H1 error " << s.h1;
      if (l > 0) out << "; rates L2 " << j["l2_rate"].get<double>() << ", H1 " << j["h1_rate"].get<double>();
      out << "\n";
    }
  }
  if (opt.json) out << (runs.size() == 1 ? runs[0].dump() : runs.dump()) << "\n";
  if (nlev > 1) {
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
