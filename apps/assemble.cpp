// tessera assemble: one bilinear form of an H1 space assembled into a CSR matrix by
// fem::MatrixAssembler; sizes, timings of the symbolic phase, the fill and a second fill, and
// the matrix as a Matrix Market file (see docs/cli.md).
#include "assemble.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core.hpp"
#include "tessera/fem/assembly.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/interpolate.hpp"
#include "tessera/io/mesh_io.hpp"
#include "tessera/linalg/csr.hpp"
#include "tessera/linalg/matrix_market.hpp"
#include "usage_error.hpp"

namespace tessera::app {

using namespace tessera::fem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr Geometry kVolumeGeometries[] = {Geometry::Segment, Geometry::Triangle, Geometry::Quadrilateral,
                                          Geometry::Tetrahedron, Geometry::Hexahedron};

/// --quadrature: gauss, gll, collapsed, a Gauss degree, gauss:D, gll:D or collapsed:D (throws
/// tessera::Error).
void parse_quadrature(const std::string& spec, AssemblyOptions& o) {
  std::string q = spec, deg;
  if (const auto c = q.find(':'); c != std::string::npos) {
    deg = q.substr(c + 1);
    q = q.substr(0, c);
    require_usage(!deg.empty(), "assemble: --quadrature '", spec, "': a degree must follow the ':'");
  } else if (!q.empty() && std::isdigit(static_cast<unsigned char>(q[0]))) {
    deg = q;
    q = "gauss";
  }
  require_usage(q == "gauss" || q == "gll" || q == "gauss-lobatto" || q == "collapsed" || q == "gauss-collapsed",
                "assemble: --quadrature '", spec, "' is not gauss, gll, collapsed, a degree, or gauss:D / gll:D / collapsed:D");
  o.quadrature = q == "gauss"                             ? QuadratureType::Gauss
                 : q == "gll" || q == "gauss-lobatto" ? QuadratureType::GaussLobatto
                                                      : QuadratureType::GaussCollapsed;
  if (!deg.empty()) {
    std::size_t used = 0;
    int d = -1;
    try {
      d = std::stoi(deg, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    require_usage(used == deg.size() && d >= 0, "assemble: --quadrature '", spec,
                  "': the degree must be a non-negative integer");
    o.degree = d;
  }
}

FillMode parse_fill(const std::string& s) {
  if (s == "deterministic") return FillMode::Deterministic;
  if (s == "atomic") return FillMode::Atomic;
  if (s == "auto") return FillMode::Auto;
  throw_usage("assemble: --fill '", s, "' is not one of deterministic, atomic, auto");
}

Dispatch parse_dispatch(const std::string& s) {
  if (s == "driver") return Dispatch::Driver;
  if (s == "functor") return Dispatch::Functor;
  throw_usage("assemble: --dispatch '", s, "' is not one of driver, functor");
}

/// One --material value: "ATTR:key=value[:key=value...]".
std::pair<int, Material> parse_material(const std::string& spec) {
  std::vector<std::string> parts;
  std::stringstream ss(spec);
  for (std::string w; std::getline(ss, w, ':');) parts.push_back(w);
  require_usage(parts.size() >= 2, "assemble: --material '", spec,
                "': expected ATTR:key=value[:key=value...] (keys density, conductivity, lambda, mu, expansion)");
  const auto number = [&](const std::string& w, const std::string& what) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(w, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    require_usage(used > 0 && used == w.size() && std::isfinite(v), "assemble: --material '", spec, "': ", what,
                  " '", w, "' is not a number");
    return v;
  };
  const double a = number(parts[0], "the attribute");
  require_usage(a == double(int(a)), "assemble: --material '", spec, "': the attribute '", parts[0],
                "' is not an integer");
  Material m;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    require_usage(eq != std::string::npos, "assemble: --material '", spec, "': '", parts[i],
                  "' is not key=value");
    const std::string key = parts[i].substr(0, eq);
    const double v = number(parts[i].substr(eq + 1), key);
    if (key == "density" || key == "rho") m.density = v;
    else if (key == "conductivity" || key == "k") m.conductivity = v;
    else if (key == "lambda") m.lambda = v;
    else if (key == "mu") m.mu = v;
    else if (key == "expansion" || key == "alpha") m.expansion = v;
    else
      throw_usage("assemble: --material '", spec, "': unknown key '", key,
           "' (known: density or rho, conductivity or k, lambda, mu, expansion or alpha)");
  }
  return {int(a), m};
}

/// A file that can be written, checked before the (possibly long) assembly.
void check_writable(const std::string& path, const char* option) {
  const bool existed = std::ifstream(path).good();
  {
    std::ofstream probe(path, std::ios::app);
    TESSERA_REQUIRE(probe.good(), "assemble: ", option, " '", path,
                    "' cannot be written (no such folder, or no permission); nothing was assembled");
  }
  if (!existed) std::remove(path.c_str());
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

}  // namespace

int run_assemble(const AssembleOptions& opt, std::ostream& out) {
  require_usage(opt.order >= 1, "assemble: --order must be >= 1 (got ", opt.order, ")");
  const FormKind kind = parse_form(opt.form);
  AssemblyOptions ao;
  parse_quadrature(opt.quadrature, ao);
  ao.fill = parse_fill(opt.fill);
  ao.dispatch = parse_dispatch(opt.dispatch);
  ao.cpu_batched = OperatorKernelChoice::from_environment().cpu_batched;  // TESSERA_CPU_BATCHED=0: per entry
  MaterialTable materials;
  for (const auto& s : opt.materials) {
    const auto [a, m] = parse_material(s);
    require_usage(!materials.count(a), "assemble: --material gives attribute ", a, " twice");
    materials[a] = m;
  }
  const Exec exec = Exec::parse(opt.backend);
  if (!opt.output.empty()) check_writable(opt.output, "--output");
  if (!opt.json.empty()) check_writable(opt.json, "--json");

  const auto t0 = Clock::now();
  const Mesh mesh = io::load_mesh(opt.mesh, opt.refine);
  const double load_ms = ms_since(t0);
  const int dim = mesh.dim();
  std::map<std::string, index_t> per_geometry;
  for (Geometry g : kVolumeGeometries) {
    if (mesh.num_elements(g) == 0 || fem::dim(g) != dim) continue;
    per_geometry[name(g)] = mesh.num_elements(g);
    TESSERA_REQUIRE(opt.order <= max_basis_order(g), "assemble: order ", opt.order, " is not available on ",
                    name(g), " elements (1..", max_basis_order(g), ")");
    TESSERA_REQUIRE(ao.quadrature != QuadratureType::GaussLobatto || is_tensor(g),
                    "assemble: --quadrature gll (Gauss-Lobatto) exists on quadrilaterals and hexahedra only; mesh '",
                    opt.mesh, "' has ", mesh.num_elements(g), " ", name(g), " elements (use gauss)");
  }
  TESSERA_REQUIRE(!per_geometry.empty(), "assemble: mesh '", opt.mesh, "' has no elements");
  TESSERA_REQUIRE(kind != FormKind::Elasticity || dim >= 2, "assemble: --form elasticity needs a 2-D or 3-D mesh; '",
                  opt.mesh, "' is ", dim, "-dimensional");
  require_usage(opt.components >= 0, "assemble: --components must be >= 1 (got ", opt.components, ")");
  const int components = opt.components > 0 ? opt.components : kind == FormKind::Elasticity ? dim : 1;
  {
    // every attribute needs a material when materials are given (checked again by the assembler)
    std::set<int> attrs;
    for (index_t e = 0; e < mesh.num_elements(); ++e)
      if (fem::dim(mesh.element_geometry(e)) == dim) attrs.insert(mesh.element_attribute(e));
    for (int a : attrs) (void)material_of(materials, a);
  }

  const auto t1 = Clock::now();
  const H1Space space(mesh, opt.order, components, NodeOrdering::Auto, exec.backend);
  const double space_ms = ms_since(t1);
  const MatrixAssembler assembler(space, kind, exec, materials, ao);
  const double symbolic_ms = assembler.timings().symbolic_ms;
  const auto t2 = Clock::now();
  linalg::CsrMatrix A = assembler.assemble();
  fence("assemble/assemble");
  const double assemble_ms = ms_since(t2);  // allocation of the values included
  const double fill_ms = assembler.timings().fill_ms;
  assembler.fill(A);
  const double refill_ms = assembler.timings().fill_ms;
  // Sum of all values: the total measure times density times components for the mass
  // form, 0 (to rounding) for diffusion and elasticity (constants are in their kernel).
  double sum = 0;
  for (double v : A.values_array().to_vector()) sum += v;

  std::string rule = name(ao.quadrature);
  rule += " degree " + std::to_string(assembler.degree());
  double write_ms = 0;
  if (!opt.output.empty()) {
    const auto t3 = Clock::now();
    linalg::write_matrix_market(A, opt.output, opt.symmetric);
    write_ms = ms_since(t3);
  }

  nlohmann::json groups = nlohmann::json::array();
  for (const AssemblyGroup& g : assembler.groups())
    groups.push_back({{"geometry", name(g.geometry)},
                      {"attribute", g.attribute},
                      {"elements", g.num_elements},
                      {"entries_per_element", g.entries_per_element}});
  // elements per batch of the CPU's batched fill (0: one entry at a time, as on the GPU)
  const int batched_lanes =
      !exec.on_device() && ao.cpu_batched && assembler.dispatch() == Dispatch::Driver ? assembly_fill_lanes() : 0;
  nlohmann::json j{{"mesh", opt.mesh},
                   {"refine", opt.refine},
                   {"order", opt.order},
                   {"form", name(kind)},
                   {"components", components},
                   {"backend", to_string(exec.backend)},
                   {"fill", name(assembler.fill_mode())},
                   {"dispatch", name(assembler.dispatch())},
                   {"cpu_batched_lanes", batched_lanes},
                   {"quadrature", rule},
                   {"elements", mesh.num_elements()},
                   {"elements_per_geometry", per_geometry},
                   {"groups", groups},
                   {"rows", A.rows()},
                   {"cols", A.cols()},
                   {"nnz", A.nnz()},
                   {"entries", assembler.num_entries()},
                   {"sum_of_values", sum},
                   {"load_ms", load_ms},
                   {"space_ms", space_ms},
                   {"symbolic_ms", symbolic_ms},
                   {"fill_ms", fill_ms},
                   {"assemble_ms", assemble_ms},
                   {"reassembly_ms", refill_ms}};
  if (!opt.output.empty()) {
    j["output"] = opt.output;
    j["write_ms"] = write_ms;
  }
  if (!opt.json.empty()) {
    std::ofstream f(opt.json, std::ios::app);
    f << j.dump() << "\n";
    TESSERA_REQUIRE(f.good(), "assemble: could not write --json '", opt.json, "'");
  }

  auto row = [&](const std::string& key) -> std::ostream& { return out << std::left << std::setw(16) << key; };
  out << std::setprecision(4);
  out << "tessera assemble: " << name(kind) << " form, order " << opt.order << ", " << components << " component"
      << (components > 1 ? "s" : "") << ", backend " << to_string(exec.backend) << "\n";
  row("mesh") << opt.mesh << (opt.refine ? ", refined " + std::to_string(opt.refine) + " times" : "") << ": "
              << mesh.num_elements() << " elements (";
  {
    const char* sep = "";
    for (const auto& [g, n] : per_geometry) out << std::exchange(sep, ", ") << g << " " << n;
  }
  out << ")\n";
  row("groups") << assembler.groups().size() << " (";
  {
    const char* sep = "";
    for (const AssemblyGroup& g : assembler.groups())
      out << std::exchange(sep, ", ") << name(g.geometry) << " attribute " << g.attribute << ": " << g.num_elements
          << " x " << g.entries_per_element;
  }
  out << " entries)\n";
  row("quadrature") << rule << "\n";
  row("fill, dispatch") << name(assembler.fill_mode()) << ", " << name(assembler.dispatch())
                        << (batched_lanes > 0 ? ", element-batched (" + std::to_string(batched_lanes) + " per batch)" : "")
                        << "\n";
  row("rows") << A.rows() << "\n";
  row("nnz") << A.nnz() << " (" << double(A.nnz()) / double(std::max<index_t>(A.rows(), 1)) << " per row)\n";
  row("entries") << assembler.num_entries() << " (" << double(assembler.num_entries()) / double(std::max<index_t>(A.nnz(), 1))
                 << " per non-zero)\n";
  row("sum of values") << sum << "\n";
  row("symbolic") << symbolic_ms << " ms\n";
  row("fill") << fill_ms << " ms (assemble() " << assemble_ms << " ms with the matrix allocation)\n";
  row("re-assembly") << refill_ms << " ms\n";
  if (!opt.output.empty()) out << "wrote " << opt.output << " (Matrix Market, " << (opt.symmetric ? "symmetric" : "general")
                               << ", " << write_ms << " ms)\n";
  return 0;
}

}  // namespace tessera::app
