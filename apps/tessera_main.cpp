// The tessera command-line tool.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <new>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "assemble.hpp"
#include "bench.hpp"
#include "cli_support.hpp"
#include "poisson.hpp"
#include "thermoelastic.hpp"
#include "usage_error.hpp"
#include "tessera/core.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/operator.hpp"
#include "tessera/fem/reference_element.hpp"
#include "tessera/io/gmsh.hpp"
#include "tessera/io/mesh_io.hpp"
#include "tessera/io/vtu.hpp"

namespace {

using namespace tessera::app;

int devices(std::ostream& out) {
  out << "tessera " << TESSERA_VERSION << "\n\nBackends in this build:\n";
  out << "  serial   yes\n";
  out << "  openmp   " << (tessera::openmp_threads() > 1 ? "yes" : "yes (1 thread)") << ", "
      << tessera::openmp_threads() << " threads\n";
  out << "  cuda     "
      << (!tessera::cuda_compiled() ? "not compiled in"
                                    : tessera::cuda_available() ? "yes" : "compiled in, no usable GPU")
      << "\n";
  out << "Default backend: " << tessera::to_string(tessera::Exec::best().backend) << "\n";
  out << "CPU operator kernels: " << tessera::fem::cpu_simd_lanes() << " elements per SIMD vector (compiled for "
      << (*tessera::fem::cpu_arch() ? std::string("-march=") + tessera::fem::cpu_arch()
                                     : std::string("the compiler's default instruction set"))
      << "; CMake option TESSERA_CPU_ARCH)\n";
  print_thread_settings(out);
  for (const auto& d : tessera::cuda_devices()) {
    out << "\nGPU " << d.id << ": " << d.name << " (compute capability " << d.cc_major << "." << d.cc_minor << ")\n"
        << "  multiprocessors           " << d.sm_count << "\n"
        << "  global memory             " << d.global_mem / (1 << 20) << " MiB\n"
        << "  datasheet bandwidth       " << static_cast<long>(d.peak_bandwidth_gbs) << " GB/s\n"
        << "  L2 cache                  " << d.l2_bytes / 1024 << " KiB\n"
        << "  shared memory per block   " << d.shared_per_block / 1024 << " KiB default, "
        << d.shared_per_block_optin / 1024 << " KiB opt-in (" << d.shared_per_block_optin << " bytes)\n"
        << "  shared memory per SM      " << d.shared_per_sm / 1024 << " KiB\n"
        << "  max threads per block     " << d.max_threads_per_block << "\n"
        << "  registers per SM          " << d.regs_per_sm << "\n";
  }
  return 0;
}

// ---- tessera info / convert ------------------------------------------------------------------

struct MeshOptions {
  std::string mesh;        ///< file or generator spec
  std::string out;         ///< output file (convert)
  int refine = 0;          ///< uniform refinements after loading
  bool json = false;       ///< info: one JSON object instead of text
  bool ascii = false;      ///< convert: ASCII VTU instead of binary
  int order = 0;           ///< info: order p of the H1 space to count (0 = none)
  int components = 1;      ///< info: field components of that space
};

/// A mesh and the seconds it took to read or generate (refinement included).
struct Loaded {
  tessera::fem::Mesh mesh;
  double seconds = 0;
  bool from_file = false;
};

Loaded load(const MeshOptions& opt) {
  Loaded l;
  std::error_code ec;
  l.from_file = std::filesystem::is_regular_file(opt.mesh, ec);
  const auto t0 = std::chrono::steady_clock::now();
  l.mesh = tessera::io::load_mesh(opt.mesh, opt.refine);
  l.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return l;
}

const char* measure_name(int dim) { return dim == 1 ? "length" : dim == 2 ? "area" : dim == 3 ? "volume" : "measure"; }

constexpr tessera::fem::Geometry kGeometries[] = {
    tessera::fem::Geometry::Segment, tessera::fem::Geometry::Triangle, tessera::fem::Geometry::Quadrilateral,
    tessera::fem::Geometry::Tetrahedron, tessera::fem::Geometry::Hexahedron};

std::string fmt(double x) {
  std::ostringstream os;
  os << std::setprecision(10) << x;
  return os.str();
}

/// The exterior of a mesh (its faces used by one element; 2-D: edges, 1-D: vertices), where
/// `poisson` puts its Dirichlet data, against the boundary faces the file stores.
struct BoundaryReport {
  tessera::index_t exterior = 0;          ///< faces used by one element
  tessera::index_t exterior_stored = 0;   ///< of those, the ones a stored boundary face covers
  tessera::index_t stored_interior = 0;   ///< stored boundary faces on faces of two elements
  tessera::index_t stored_elsewhere = 0;  ///< stored boundary faces that are no element's face
};

BoundaryReport boundary_report(const tessera::fem::Mesh& m) {
  using tessera::index_t;
  using Key = std::array<index_t, 4>;  // sorted vertex ids, padded with -1
  const auto key = [](auto&& ids) {
    Key k{-1, -1, -1, -1};
    std::size_t n = 0;
    for (index_t v : ids) k[n++] = v;
    std::sort(k.begin(), k.begin() + n);
    return k;
  };
  std::vector<Key> sides;
  for (index_t e = 0; e < m.num_elements(); ++e) {
    const auto g = m.element_geometry(e);
    const auto v = m.element_vertices(e);
    if (m.dim() == 1) {
      for (int k = 0; k < 2; ++k) sides.push_back(key(std::array<index_t, 1>{v[std::size_t(k)]}));
    } else if (m.dim() == 2) {
      for (int k = 0; k < tessera::fem::num_edges(g); ++k) {
        const auto ev = tessera::fem::edge_vertices(g, k);
        sides.push_back(key(std::array<index_t, 2>{v[std::size_t(ev[0])], v[std::size_t(ev[1])]}));
      }
    } else {
      for (int f = 0; f < tessera::fem::num_faces(g); ++f) {
        std::vector<index_t> ids;
        for (int lv : tessera::fem::face_vertices(g, f)) ids.push_back(v[std::size_t(lv)]);
        sides.push_back(key(ids));
      }
    }
  }
  std::sort(sides.begin(), sides.end());
  std::vector<Key> exterior;  // sorted
  for (std::size_t i = 0; i < sides.size();) {
    std::size_t j = i;
    while (j < sides.size() && sides[j] == sides[i]) ++j;
    if (j - i == 1) exterior.push_back(sides[i]);
    i = j;
  }
  BoundaryReport r;
  r.exterior = index_t(exterior.size());
  std::vector<char> covered(exterior.size(), 0);
  for (index_t b = 0; b < m.num_boundary(); ++b) {
    const Key k = key(m.boundary_vertices(b));
    const auto it = std::lower_bound(exterior.begin(), exterior.end(), k);
    if (it != exterior.end() && *it == k) covered[std::size_t(it - exterior.begin())] = 1;
    else if (std::binary_search(sides.begin(), sides.end(), k)) ++r.stored_interior;
    else ++r.stored_elsewhere;
  }
  for (char c : covered) r.exterior_stored += c;
  return r;
}

int info(const MeshOptions& opt, std::ostream& out) {
  const Loaded l = load(opt);
  const tessera::fem::Mesh& m = l.mesh;
  std::map<std::string, tessera::index_t> per_geometry;
  for (auto g : kGeometries)
    if (m.num_elements(g)) per_geometry[name(g)] = m.num_elements(g);
  std::map<int, tessera::index_t> attributes, boundary_attributes;
  for (tessera::index_t e = 0; e < m.num_elements(); ++e) ++attributes[m.element_attribute(e)];
  for (tessera::index_t b = 0; b < m.num_boundary(); ++b) ++boundary_attributes[m.boundary_attribute(b)];
  const bool has_elements = m.num_elements() > 0;
  const double measure = has_elements ? m.measure() : 0.0;
  const auto detj = has_elements ? m.det_jacobian_range() : std::array<double, 2>{0, 0};
  const auto box = m.num_vertices() ? m.bounding_box() : std::array<std::array<double, 3>, 2>{};
  const int sdim = m.space_dim();
  const BoundaryReport br = boundary_report(m);
  // Boundary conditions given per boundary attribute would leave part of the boundary out, while
  // poisson uses the whole exterior: say so. (1-D: boundary points are not stored.)
  if (m.dim() >= 2 && br.exterior_stored < br.exterior)
    std::cerr << "tessera: warning: the boundary faces of '" << opt.mesh << "' cover " << br.exterior_stored
              << " of its " << br.exterior << " exterior faces (faces of one element); poisson sets Dirichlet "
              << "data on every exterior face, whatever the boundary faces say\n";
  // H1 space of order p: its DOF count, boundary DOFs and the time to number it.
  tessera::index_t dofs = 0, boundary_dofs = 0;
  double space_seconds = 0;
  if (opt.order > 0) {
    const auto t0 = std::chrono::steady_clock::now();
    const tessera::fem::H1Space space(m, opt.order, opt.components);
    space_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    dofs = space.num_dofs();
    boundary_dofs = tessera::index_t(space.exterior_nodes().size()) * opt.components;
  }

  if (opt.json) {
    nlohmann::json j;
    j["mesh"] = opt.mesh;
    j["source"] = l.from_file ? "file" : "generator";
    j["refine"] = opt.refine;
    j["dimension"] = m.dim();
    j["space_dimension"] = sdim;
    j["vertices"] = m.num_vertices();
    j["elements"] = m.num_elements();
    j["elements_per_geometry"] = per_geometry;
    j["boundary_faces"] = m.num_boundary();
    nlohmann::json ba = nlohmann::json::object(), ea = nlohmann::json::object();
    for (auto [a, n] : boundary_attributes) ba[std::to_string(a)] = n;
    for (auto [a, n] : attributes) ea[std::to_string(a)] = n;
    j["boundary_faces_per_attribute"] = ba;
    j["exterior_faces"] = br.exterior;
    j["exterior_faces_with_boundary_face"] = br.exterior_stored;
    j["boundary_faces_on_interior_faces"] = br.stored_interior;
    j["boundary_faces_not_element_faces"] = br.stored_elsewhere;
    j["elements_per_attribute"] = ea;
    j["geometry_order"] = m.nodes_order() > 0 ? m.nodes_order() : 1;
    j["curved"] = m.has_nodes();
    j["measure"] = measure;
    j["measure_kind"] = measure_name(m.dim());
    j["det_j_min"] = detj[0];
    j["det_j_max"] = detj[1];
    j["bounding_box"] = {{"min", std::vector<double>(box[0].begin(), box[0].begin() + sdim)},
                         {"max", std::vector<double>(box[1].begin(), box[1].begin() + sdim)}};
    j["load_seconds"] = l.seconds;
    if (opt.order > 0) {
      j["order"] = opt.order;
      j["components"] = opt.components;
      j["h1_dofs"] = dofs;
      j["h1_exterior_dofs"] = boundary_dofs;
      j["h1_numbering_seconds"] = space_seconds;
    }
    out << j.dump() << "\n";
    return 0;
  }

  auto row = [&](const std::string& key) -> std::ostream& { return out << std::left << std::setw(20) << key; };
  row("mesh") << opt.mesh << (l.from_file ? " (file)" : " (generated)")
              << (opt.refine ? ", refined " + std::to_string(opt.refine) + " times" : "") << "\n";
  row("dimension") << m.dim() << "\n";
  row("space dimension") << sdim << "\n";
  row("vertices") << m.num_vertices() << "\n";
  row("elements") << m.num_elements();
  if (!per_geometry.empty()) {
    const char* sep = " (";
    for (const auto& [g, n] : per_geometry) out << std::exchange(sep, ", ") << g << " " << n;
    out << ")";
  }
  out << "\n";
  row("boundary faces") << m.num_boundary();
  if (!boundary_attributes.empty()) {
    const char* sep = " (attribute ";
    for (auto [a, n] : boundary_attributes) out << std::exchange(sep, ", ") << a << ": " << n;
    out << ")";
  }
  out << "\n";
  row("exterior faces") << br.exterior << " (" << (m.dim() == 1 ? "vertices" : m.dim() == 2 ? "edges" : "faces")
                        << " of one element: poisson's Dirichlet boundary)";
  if (m.dim() > 1 && br.exterior > 0)
    out << (br.exterior_stored == br.exterior ? ", all of them boundary faces"
                                              : ", " + std::to_string(br.exterior - br.exterior_stored) +
                                                    " of them without a boundary face");
  out << "\n";
  if (br.stored_interior || br.stored_elsewhere)
    row("") << br.stored_interior << " boundary faces lie between two elements, " << br.stored_elsewhere
            << " are no element's face\n";
  row("element attributes");
  {
    const char* sep = "";
    for (auto [a, n] : attributes) out << std::exchange(sep, ", ") << a << ": " << n;
  }
  out << "\n";
  row("geometry") << (m.has_nodes() ? "order " + std::to_string(m.nodes_order()) + " (curved: nodes per element)"
                                     : std::string("order 1 (the vertices)"))
                 << "\n";
  if (has_elements) {
    row(std::string("total ") + measure_name(m.dim())) << fmt(measure)
                                                       << (m.has_nodes() ? " (of the curved map)" : "") << "\n";
    row("det J") << "min " << fmt(detj[0]) << ", max " << fmt(detj[1])
                 << (m.has_nodes() ? " (at the nodes)" : "") << "\n";
  }
  if (m.num_vertices()) {
    row("bounding box");
    for (int c = 0; c < sdim; ++c) out << (c ? " x " : "") << "[" << fmt(box[0][c]) << ", " << fmt(box[1][c]) << "]";
    out << "\n";
  }
  row(l.from_file ? "read time" : "generation time") << fmt(l.seconds * 1e3) << " ms\n";
  if (opt.order > 0) {
    row("H1 DOFs") << dofs << " (order " << opt.order << ", " << opt.components << " component"
                   << (opt.components > 1 ? "s" : "") << "; " << boundary_dofs << " on the exterior)\n";
    row("numbering time") << fmt(space_seconds * 1e3) << " ms\n";
  }
  return 0;
}

int convert(const MeshOptions& opt, std::ostream& out) {
  const std::string ext = tessera::io::lower_extension(opt.out);
  if (ext != ".vtu" && ext != ".msh")
    tessera::fail("convert: output '", opt.out, "' does not end in .vtu or .msh; tessera writes VTK XML "
                  "UnstructuredGrid (.vtu) and Gmsh MSH 4.1 (.msh) files");
  if (opt.order > 1 && ext != ".vtu")
    tessera::fail("convert: --order ", opt.order, " writes VTK Lagrange cells, which only .vtu output has");
  const Loaded l = load(opt);
  if (ext == ".msh") {
    tessera::io::write_gmsh(opt.out, l.mesh);
    out << "wrote " << opt.out << " (Gmsh MSH 4.1, ASCII): " << l.mesh.num_vertices() << " vertices, "
        << l.mesh.num_elements() << " elements, " << l.mesh.num_boundary()
        << " boundary faces; physical tags = attributes\n";
    return 0;
  }
  tessera::io::VtuOptions vo;
  if (opt.ascii) vo.encoding = tessera::io::VtuOptions::Encoding::Ascii;
  if (opt.order > 1) {
    tessera::io::write_vtu_lagrange(opt.out, l.mesh, opt.order, {}, {}, vo);
    out << "wrote " << opt.out << ": " << l.mesh.num_elements() << " order-" << opt.order
        << " VTK Lagrange cells (boundary faces are not written to .vtu)\n";
    return 0;
  }
  tessera::io::write_vtu(opt.out, l.mesh, {}, vo);
  out << "wrote " << opt.out << ": " << l.mesh.num_vertices() << " vertices, " << l.mesh.num_elements()
      << " elements (boundary faces are not written to .vtu)\n";
  return 0;
}

void add_fem_bench_options(CLI::App* cmd, tessera::bench::FemOptions& o, bool components) {
  cmd->add_option("--backend", o.backend, "serial | openmp | cuda | auto")->check(backend_name())->capture_default_str();
  cmd->add_option("--mesh", o.mesh, "Generator spec (e.g. box:hex:32x32x32) or mesh file (.msh, .mesh, .vtu)")
      ->capture_default_str();
  cmd->add_option("--order", o.order, "Polynomial order p of the H1 space")
      ->check(in_range(1, 64))
      ->capture_default_str();
  if (components)
    cmd->add_option("--components", o.components, "Field components gathered per node")
        ->check(in_range(1, 64))
        ->capture_default_str();
  cmd->add_option("--reps", o.reps, "Timed repetitions (median reported)")
      ->check(in_range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--json", o.json, "Append results as JSON lines to this file");
}

}  // namespace

int main(int argc, char** argv) {
  default_wait_policy(argv);
  // --output "": refused (an empty name is a mistake, not "no output").
  const auto non_empty_output = [](const std::string& s) {
    if (s.empty()) return std::string("--output needs a file name (.vtu, or .pvd for a collection of the --study levels)");
    const std::string ext = tessera::io::lower_extension(s);
    return ext == ".vtu" || ext == ".pvd" ? std::string()
                                          : "'" + s + "' must name a .vtu file or a .pvd collection of the --study levels";
  };
  CLI::App app{"tessera: high-order finite-element kernels for GPUs and CPUs, order chosen at run time"};
  app.require_subcommand(1);
  bool profile = false, sync = false;
  app.add_flag("--profile", profile, "Time every kernel launch and print a per-label table at exit");
  app.add_flag("--sync-launches", sync,
               "Synchronize after every launch so that GPU errors name their kernel (also TESSERA_SYNC_LAUNCHES=1)");
  app.set_version_flag("--version", TESSERA_VERSION);

  auto* dev = app.add_subcommand("devices", "List backends and GPU properties");

  MeshOptions info_opt;
  auto* info_cmd = app.add_subcommand("info", "Describe a mesh file or generated mesh: sizes, attributes, measure, det J");
  info_cmd->add_option("mesh", info_opt.mesh, "Mesh file (.msh, .mesh, .vtu) or generator spec (e.g. box:tri:4x4)")
      ->required();
  info_cmd->add_option("--refine", info_opt.refine, "Uniform refinements after loading")
      ->check(in_range(0, 20))
      ->capture_default_str();
  info_cmd->add_flag("--json", info_opt.json, "Print one JSON object instead of text");
  info_cmd->add_option("--order", info_opt.order, "Also number the order-p H1 space and print its DOF count")
      ->check(in_range(1, 64));
  info_cmd->add_option("--components", info_opt.components, "Field components of that space")
      ->check(in_range(1, 64))
      ->capture_default_str();

  MeshOptions conv_opt;
  auto* conv_cmd = app.add_subcommand("convert", "Read a mesh file or generator spec and write it as .vtu or .msh");
  conv_cmd->add_option("in", conv_opt.mesh, "Mesh file (.msh, .mesh, .vtu) or generator spec")->required();
  conv_cmd->add_option("out", conv_opt.out, "Output file (.vtu, or .msh: Gmsh MSH 4.1 with boundary faces)")->required();
  conv_cmd->add_option("--refine", conv_opt.refine, "Uniform refinements before writing")
      ->check(in_range(0, 20))
      ->capture_default_str();
  conv_cmd->add_flag("--ascii", conv_opt.ascii, "Write numbers as text instead of raw appended binary");
  conv_cmd->add_option("--order", conv_opt.order, "Write .vtu as VTK Lagrange cells of this order (the element map at its nodes)")
      ->check(CLI::Range(1, 10));

  tessera::app::PoissonOptions pois;
  auto* pcmd = app.add_subcommand(
      "poisson", "Solve -lap u = f with Dirichlet data (manufactured solution or f = 1), multigrid-preconditioned CG: "
      "DOFs, iterations, times, errors");
  pcmd->add_option("--mesh", pois.mesh, "Generator spec or mesh file")->capture_default_str();
  pcmd->add_option("--order", pois.order, "Polynomial order p")->check(in_range(1, 16))->capture_default_str();
  pcmd->add_option("--refine", pois.refine, "Uniform refinements")->check(in_range(0, 10))->capture_default_str();
  pcmd->add_option("--backend", pois.backend, "serial | openmp | cpu | cuda | gpu | auto")
      ->check(backend_name())
      ->capture_default_str();
  pcmd->add_option("--quadrature", pois.quadrature,
                   "gauss (q = p + 2 points; symmetric rules on simplices), gll (Gauss-Lobatto q = p + 1, "
                   "collocated), collapsed (collapsed Gauss rules on simplices), a Gauss degree, or gauss:D / gll:D / "
                   "collapsed:D")
      ->capture_default_str();
  pcmd->add_option("--geometry", pois.geometry,
                   "Geometric factors: stored (computed at setup) or onthefly (recomputed in the kernels from "
                   "the vertices)")
      ->check(CLI::IsMember({"stored", "onthefly"}))
      ->capture_default_str();
  // (0, 1), checked by run_poisson (NaN included)
  pcmd->add_option("--tol", pois.tol, "CG relative tolerance (0 < tol < 1)")->capture_default_str();
  pcmd->add_option("--max-iters", pois.max_iters, "CG iteration limit")->check(in_range(1, 100000000))
      ->capture_default_str();
  pcmd->add_option("--output", pois.output,
                   "Write u, u_exact and the error to this .vtu file (VTK Lagrange cells at p >= 2), or with .pvd one "
                   ".vtu per --study level and a collection")
      ->check(non_empty_output);
  pcmd->add_flag("--json", pois.json, "Print JSON instead of text");
  pcmd->add_option("--study", pois.study, "Refine N more times and print the observed L2/H1 rates")
      ->check(in_range(0, 6));
  pcmd->add_option("--rhs", pois.rhs,
                   "Problem: exp (u = exp(x + y/2 + z/4), the default), sin (u = prod sin(pi x_d), an "
                   "eigenfunction of the Laplacian), one (f = 1, u = 0 on the boundary; reports the solution norm)")
      ->check(CLI::IsMember({"exp", "sin", "one"}))
      ->capture_default_str();
  pcmd->add_option("--precond", pois.precond, "CG preconditioner: mg (p-multigrid V-cycle) or jacobi")
      ->check(CLI::IsMember({"mg", "jacobi"}))
      ->capture_default_str();
  pcmd->add_option("--mg-orders", pois.mg_orders,
                   "Multigrid orders, fine to coarse: halve (p, ceil(p/2), ..., 1; the default), step (p, p-1, "
                   "..., 1) or a list such as 4,2,1");
  pcmd->add_option("--smoother-degree", pois.smoother_degree, "Chebyshev smoother degree (multigrid)")
      ->check(in_range(1, 20))
      ->capture_default_str();
  pcmd->add_option("--coarse", pois.coarse,
                   "Multigrid coarse solver: amg (hypre BoomerAMG), cg (Jacobi CG on the assembled p = 1 matrix), "
                   "auto (amg when the build has hypre and the coarsest level has 10,000 DOFs or more, else cg)")
      ->check(CLI::IsMember({"auto", "amg", "cg"}))
      ->capture_default_str();
  pcmd->add_option("--mg-mesh-levels", pois.mg_mesh_levels,
                   "Multigrid mesh levels: how many of the meshes that --refine made the mesh from serve as levels "
                   "(order 1), finest first; -1: all")
      ->check(in_range(-1, 10))
      ->capture_default_str();
  pcmd->add_option("--progress", pois.progress,
                   "Progress lines on stderr (each phase, the CG iteration): auto (when stderr is a terminal), on "
                   "(batch jobs too), off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  pcmd->add_option("--coarse-tol", pois.coarse_tol,
                   "Relative tolerance of the CG coarse solve (--coarse cg); the V-cycle is linear only up to it")
      ->check(in_range(1e-16, 0.5))
      ->capture_default_str();

  tessera::app::AssembleOptions asm_opt;
  auto* acmd = app.add_subcommand(
      "assemble", "Assemble a bilinear form (mass, diffusion, elasticity) into a CSR matrix: sizes, timings, .mtx");
  acmd->add_option("mesh", asm_opt.mesh, "Mesh file (.msh, .mesh, .vtu) or generator spec (e.g. box:tri:4x4)")
      ->required();
  acmd->add_option("--order", asm_opt.order, "Polynomial order p")->check(in_range(1, 64))->capture_default_str();
  acmd->add_option("--form", asm_opt.form, "mass | diffusion | elasticity")
      ->check(CLI::IsMember({"mass", "diffusion", "heat", "elasticity"}))
      ->capture_default_str();
  acmd->add_option("--components", asm_opt.components,
                   "Field components (default: 1 for mass and diffusion, the mesh dimension for elasticity)")
      ->check(in_range(1, 64));
  acmd->add_option("--refine", asm_opt.refine, "Uniform refinements after loading")
      ->check(in_range(0, 20))
      ->capture_default_str();
  acmd->add_option("--backend", asm_opt.backend, "serial | openmp | cpu | cuda | gpu | auto")
      ->check(backend_name())
      ->capture_default_str();
  acmd->add_option("--fill", asm_opt.fill,
                   "deterministic (buffered entries summed in a fixed order), atomic, auto (atomic on the GPU)")
      ->check(CLI::IsMember({"deterministic", "atomic", "auto"}))
      ->capture_default_str();
  acmd->add_option("--dispatch", asm_opt.dispatch,
                   "driver (one typed kernel per geometry and attribute) or functor (device virtual calls)")
      ->check(CLI::IsMember({"driver", "functor"}))
      ->capture_default_str();
  acmd->add_option("--quadrature", asm_opt.quadrature,
                   "gauss (q = p + 2 points; degree 2p on simplex meshes, symmetric rules there), gll "
                   "(Gauss-Lobatto q = p + 1), collapsed (collapsed Gauss rules on simplices), a Gauss degree, or "
                   "gauss:D / gll:D / collapsed:D")
      ->capture_default_str();
  acmd->add_option("--material", asm_opt.materials,
                   "ATTR:key=value[:key=value...] (keys density, conductivity, lambda, mu, expansion); repeat for "
                   "each attribute; once given, every attribute of the mesh needs one");
  acmd->add_option("--output", asm_opt.output, "Write the matrix to this Matrix Market (.mtx) file");
  acmd->add_flag("--symmetric", asm_opt.symmetric, "Write --output as a symmetric Matrix Market file (lower triangle)");
  acmd->add_option("--json", asm_opt.json, "Append the report as one JSON line to this file");

  tessera::app::ThermoelasticOptions te_opt;
  auto* tecmd = app.add_subcommand(
      "thermoelastic", "Heat conduction, then elasticity loaded by the temperature, on a mixed mesh: errors, rates");
  tecmd->add_option("--mesh", te_opt.mesh,
                    "2d (triangles and quadrilaterals in four material quadrants), 3d (hexahedra and tetrahedra), "
                    "or a generator spec / mesh file (one material)")
      ->capture_default_str();
  tecmd->add_option("--order", te_opt.order, "Polynomial order p of T and u")->check(in_range(1, 16))
      ->capture_default_str();
  tecmd->add_option("--n", te_opt.n, "2d / 3d: cells per direction at the first level (even)")
      ->check(in_range(2, 4096))
      ->capture_default_str();
  tecmd->add_option("--study", te_opt.study, "Levels after the first (n doubled or one more refinement each): rates")
      ->check(in_range(0, 6))
      ->capture_default_str();
  tecmd->add_option("--backend", te_opt.backend, "serial | openmp | cpu | cuda | gpu | auto")
      ->check(backend_name())
      ->capture_default_str();
  tecmd->add_option("--tol", te_opt.tol, "CG relative tolerance (0 < tol < 1)")->capture_default_str();
  tecmd->add_option("--max-iters", te_opt.max_iters, "CG iteration limit of each solve")
      ->check(in_range(1, 100000000))
      ->capture_default_str();
  tecmd->add_option("--output", te_opt.output,
                    "Write T, u and their exact values to this .vtu file (VTK Lagrange cells at p >= 2), or with .pvd "
                    "one .vtu per --study level and a collection")
      ->check(non_empty_output);
  tecmd->add_flag("--json", te_opt.json, "Print JSON instead of text");

  auto* bench = app.add_subcommand("bench", "Run a benchmark");
  bench->require_subcommand(1);
  tessera::bench::CoreOptions core;
  auto* bcore = bench->add_subcommand(
      "core", "forall/team-launch bandwidth vs. the copy bandwidth of the same run, launch overhead");
  bcore->add_option("--backend", core.backend, "serial | openmp | cuda | auto")
      ->check(backend_name())
      ->capture_default_str();
  bcore->add_option("--n", core.n, "Doubles per array (0: 2^27 on a GPU, 2^24 on a CPU)")
      ->check(at_least(0))
      ->capture_default_str();
  bcore->add_option("--reps", core.reps, "Timed repetitions (median reported)")
      ->check(in_range(1, 100000))
      ->capture_default_str();
  bcore->add_option("--json", core.json, "Append results as JSON lines to this file");

  tessera::bench::VtableOptions vtable_opt;
  auto* bvtable = bench->add_subcommand(
      "vtable", "Y += aX by N classes: typed, device virtual calls, switch, polymorphic driver (seed 003)");
  bvtable->add_option("--backend", vtable_opt.backend, "serial | openmp | cuda | auto")
      ->check(backend_name())
      ->capture_default_str();
  bvtable->add_option("--rows", vtable_opt.rows, "Rows m (0: 2^17 on a GPU, 2^14 on a CPU)")
      ->check(at_least(0))
      ->capture_default_str();
  bvtable->add_option("--cols", vtable_opt.cols, "Comma-separated columns n (default 16..4096 on a GPU, 16..1024 on a CPU)")
      ->check(number_list(true));
  bvtable->add_option("--classes", vtable_opt.classes, "Comma-separated numbers of classes N (1..32)")
      ->check(number_list(true))
      ->capture_default_str();
  bvtable->add_option("--divergence", vtable_opt.divergence, "Comma-separated divergence levels D (row i uses object i % D)")
      ->check(number_list(true))
      ->capture_default_str();
  bvtable->add_option("--reps", vtable_opt.reps, "Timed repetitions, median reported (0: 10 on a GPU, 5 on a CPU)")
      ->check(in_range(0, 100000))
      ->capture_default_str();
  bvtable->add_option("--json", vtable_opt.json, "Append results as JSON lines to this file");

  tessera::bench::AssemblyBenchOptions basm_opt;
  auto* basm = bench->add_subcommand(
      "assembly", "Global CSR assembly: symbolic, fill, re-assembly, fill roofline, SpMV vs matrix-free (seed 003)");
  basm->add_option("--backend", basm_opt.backend, "serial | openmp | cuda | auto")
      ->check(backend_name())
      ->capture_default_str();
  basm->add_option("--geometries", basm_opt.geometries, "Comma-separated: tri, quad, tet, hex")->capture_default_str();
  basm->add_option("--orders", basm_opt.orders, "Comma-separated orders (default 1..8, tetrahedra 1..6)")
      ->check(number_list(true));
  basm->add_option("--forms", basm_opt.forms, "Comma-separated: mass, diffusion, elasticity")->capture_default_str();
  basm->add_option("--dofs", basm_opt.dofs, "About this many scalar DOFs per mesh (0: 2e6 on a GPU, 2e5 on a CPU)")
      ->check(in_range(0.0, 1e9))
      ->capture_default_str();
  basm->add_option("--max-entries", basm_opt.max_entries,
                   "Largest number of element-matrix entries per mesh (0: 4e8 on a GPU, 2e7 on a CPU): the mesh "
                   "shrinks to fit")
      ->check(in_range(0.0, 1e12))
      ->capture_default_str();
  basm->add_option("--reps", basm_opt.reps, "Timed repetitions (median reported)")
      ->check(in_range(1, 100000))
      ->capture_default_str();
  basm->add_option("--fill", basm_opt.fill, "Comma-separated fill modes: deterministic, atomic")->capture_default_str();
  basm->add_option("--dispatch", basm_opt.dispatch, "Comma-separated: driver, functor")->capture_default_str();
  basm->add_option("--seed-mesh", basm_opt.seed_mesh, "Mesh of the Poisson application (none: skip it)")
      ->capture_default_str();
  basm->add_option("--seed-orders", basm_opt.seed_orders, "Orders of the Poisson application")
      ->check(number_list(true))
      ->capture_default_str();
  basm->add_option("--json", basm_opt.json, "Append results as JSON lines to this file");

  tessera::bench::FemOptions restriction_opt, geometry_opt;
  auto* brestr = bench->add_subcommand(
      "restriction", "Element restriction gather and scatter-add bandwidth vs. the copy bandwidth of the same run");
  add_fem_bench_options(brestr, restriction_opt, true);
  auto* bgeom = bench->add_subcommand(
      "geometry", "Geometric factors at quadrature points (J, det J, J^-1, w det J J^-1 J^-T): time and bandwidth");
  add_fem_bench_options(bgeom, geometry_opt, false);

  tessera::bench::TensorOptions tensor_opt;
  auto* btensor = bench->add_subcommand(
      "tensor", "Tensor statements over grids (one fused kernel each): effective bandwidth vs hand loops and copy");
  btensor->add_option("--backend", tensor_opt.backend, "serial | openmp | cuda | auto")
      ->check(backend_name())
      ->capture_default_str();
  btensor->add_option("--min", tensor_opt.min, "Smallest grid size")->check(at_least(1))->capture_default_str();
  btensor->add_option("--max", tensor_opt.max, "Largest grid size (0: 1e8 on a GPU, 1e7 on a CPU)")
      ->check(at_least(0))
      ->capture_default_str();
  btensor->add_option("--per-decade", tensor_opt.per_decade, "Grid sizes per decade (log spaced)")
      ->check(in_range(1, 20))
      ->capture_default_str();
  btensor->add_option("--sizes", tensor_opt.sizes, "Comma-separated grid sizes (overrides --min/--max)")
      ->check(number_list(false));
  btensor->add_option("--reps", tensor_opt.reps, "Timed repetitions (median reported)")
      ->check(in_range(1, 100000))
      ->capture_default_str();
  btensor->add_option("--json", tensor_opt.json, "Append results as JSON lines to this file");
  btensor->add_option("--statement", tensor_opt.statement,
                      "Run only the cases whose name contains this (eq10 .. eq21, eq6, contract1, gh)");
  btensor->add_option("--max-gb", tensor_opt.max_gb, "Memory cap in GB (0: half the host memory / 80% of the GPU's)")
      ->check(at_least(0));
  btensor->add_flag("!--no-graph", tensor_opt.graph, "Do not time the GH module as a CUDA graph");

  tessera::bench::InterpolateOptions interp_opt, tune_opt;
  const auto add_interp_options = [](CLI::App* cmd, tessera::bench::InterpolateOptions& o) {
    cmd->add_option("--backend", o.backend, "serial | openmp | cuda | auto")->check(backend_name())->capture_default_str();
    cmd->add_option("--geometries", o.geometries, "Comma-separated: tri, quad, tet, hex")->capture_default_str();
    cmd->add_option("--orders", o.orders, "Comma-separated polynomial orders")
        ->check(number_list(true))
        ->capture_default_str();
    cmd->add_option("--fields", o.fields, "Comma-separated: scalar, vector (dim components)")->capture_default_str();
    cmd->add_option("--what", o.what,
                    "Comma-separated kinds: values, ref-grad, grad (join with '+' to evaluate together)")
        ->capture_default_str();
    cmd->add_option("--elements", o.elements, "Elements per mesh for p <= 3 (higher p: fewer, about the same DOFs)")
        ->check(in_range(1.0, 1e9))
        ->capture_default_str();
    cmd->add_option("--max-epb", o.max_epb, "Largest elements per block swept (at most 32 in 2-D, 16 in 3-D)")
        ->check(in_range(1, 32))
        ->capture_default_str();
    cmd->add_flag("--transpose", o.transpose, "Also time the transpose (integrate)");
    cmd->add_flag("--stored-geometry", o.stored_geometry, "Gradients from stored J^-1 instead of on the fly");
    cmd->add_flag("--component-major", o.component_major, "Component-major output layout");
    cmd->add_option("--chunk", o.chunk, "Forward kernels: elements per thread group, one after the other (0: 512 / nodes, at most 8)")
        ->check(in_range(0, 64))
        ->capture_default_str();
    cmd->add_option("--threads", o.threads, "Triangles/tetrahedra: threads per element (0: max(nodes, points) up to 32)")
        ->check(in_range(0, 256))
        ->capture_default_str();
    cmd->add_option("--reps", o.reps, "Timed repetitions (median reported)")
        ->check(in_range(1, 100000))
        ->capture_default_str();
    cmd->add_option("--json", o.json, "Append results as JSON lines to this file");
    cmd->add_option("--cache", o.cache, "Tuning cache file (default: TESSERA_TUNING_CACHE or ~/.cache/tessera)");
  };
  auto* binterp = bench->add_subcommand(
      "interpolate", "Values/gradients at quadrature points: time vs elements per block, bandwidth vs copy");
  add_interp_options(binterp, interp_opt);
  tessera::bench::BpOptions bp_opt, bk_opt, tune_op_opt;
  const auto add_bp_options = [](CLI::App* cmd, tessera::bench::BpOptions& o, const char* family) {
    cmd->add_option("--backend", o.backend, "serial | openmp | cuda | auto")->check(backend_name())->capture_default_str();
    cmd->add_option("--orders", o.orders, "Comma-separated orders")
        ->check(number_list(true))
        ->capture_default_str();
    cmd->add_option("--problems", o.problems, std::string("Comma-separated ") + family + "1.." + family + "6")
        ->capture_default_str();
    cmd->add_option("--geometry", o.geometry, "stored, onthefly or both (comma-separated)")->capture_default_str();
    cmd->add_option("--elements", o.elements, "Mesh elements: hex | tet | quad | tri (box meshes)")
        ->check(CLI::IsMember({"hex", "tet", "quad", "tri"}))
        ->capture_default_str();
    cmd->add_option("--dofs", o.dofs, "About this many scalar DOFs per mesh")->check(in_range(1e2, 1e9))
        ->capture_default_str();
    cmd->add_option("--sizes", o.sizes, "Comma-separated DOF counts: a size sweep (overrides --dofs)")
        ->check(number_list(false));
    cmd->add_option("--reps", o.reps, "Timed repetitions (median)")->check(in_range(1, 100000))
        ->capture_default_str();
    cmd->add_option("--chunk", o.chunk, "Fused kernels: elements per thread group, one after the other (0: 512 / nodes, at most 8)")
        ->check(in_range(0, 64))
        ->capture_default_str();
    cmd->add_option("--ordering", o.ordering,
                    "Global node numbering of the H1 spaces (fem::NodeOrdering): auto (GPU: interleaved up to p = 2, "
                    "first-touch at p = 3, shared-first from p = 4; CPU: interleaved), first-touch, by-entity, interleaved or "
                    "shared-first (first touch, the nodes of one element last)")
        ->check(CLI::IsMember({"auto", "first-touch", "by-entity", "interleaved", "shared-first"}))
        ->capture_default_str();
    cmd->add_option("--json", o.json, "Append results as JSON lines to this file");
  };
  auto* bbp = bench->add_subcommand(
      "bp", "CEED BP1-BP6: operator apply and CG iteration, GDOF/s vs roofline, stored and on-the-fly geometry");
  add_bp_options(bbp, bp_opt, "bp");
  bbp->add_flag("--composed", bp_opt.composed,
                "Compose the interpolation kernels (values or gradients at the points, the point-wise product, the "
                "transpose: three launches) instead of the fused kernel, for comparisons");
  bbp->add_flag("--collapsed", bp_opt.collapsed,
                "Triangles and tetrahedra: the collapsed Gauss-Jacobi rules instead of the symmetric ones, for "
                "comparisons");
  bbp->add_option("--perturb", bp_opt.perturb,
                  "Box mesh: move interior vertices at random by up to this fraction of the element size "
                  "(0: the Cartesian box, whose elements are affine; e.g. 0.2 for general hexahedra)")
      ->check(in_range(0.0, 0.45));
  bbp->add_option("--points-extra", bp_opt.points_extra,
                  "BP1-BP4 on quadrilaterals and hexahedra: q = p + N Gauss points per direction (2: the CEED problems; 1: q = p + 1)")
      ->check(in_range(1, 4));
  bbp->add_flag("--full-geometry", bp_opt.full_geometry,
                "keep the factors at every point on affine elements too (no compressed geometry; on the GPU it applies to the hexahedron kernels of compile-time sizes or bounds), for comparisons");
  bbp->add_option("--cg-iters", bp_opt.cg_iters, "Jacobi-CG iterations timed per case (0: no CG)")
      ->check(in_range(0, 100000))
      ->capture_default_str();
  auto* bbk = bench->add_subcommand("bk", "CEED BK1-BK6: element-level operator apply (E-vector to E-vector)");
  bk_opt.problems = "bk1,bk2,bk3,bk4,bk5,bk6";
  bk_opt.element = true;
  add_bp_options(bbk, bk_opt, "bk");
  auto* tune = app.add_subcommand("tune", "Measure launch parameters on this device and store them in the tuning cache");
  tune->require_subcommand(1);
  auto* tinterp = tune->add_subcommand(
      "interpolate", "Sweep elements per block of every interpolation kernel and store the fastest");
  tune_opt.transpose = true;  // tune both directions by default
  tune_opt.reps = 5;
  add_interp_options(tinterp, tune_opt);
  auto* toper = tune->add_subcommand(
      "operators", "Sweep elements per block of the fused operator kernels (BP1-BP6) and store the fastest");
  tune_op_opt.tune = true;
  tune_op_opt.reps = 5;
  tune_op_opt.dofs = 2e6;
  add_bp_options(toper, tune_op_opt, "bp");
  toper->add_option("--cache", tune_op_opt.cache, "Tuning cache file (default: TESSERA_TUNING_CACHE or ~/.cache/tessera)");

  // Command-line mistakes: one line on stderr naming the option and the value, exit status 2.
  std::string path;
  if (const std::string msg = scan_arguments(app, argc, argv, path); !msg.empty()) {
    std::cerr << "tessera: error: " << msg << "\n";
    return kUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::cerr << "tessera: error: " << (path == "tessera" ? "" : path.substr(8) + ": ") << what << " (" << path
              << " --help)\n";
    return kUsage;
  }
  int rc = 0;
  try {
    if (sync) tessera::set_sync_launches(true);
    if (profile) tessera::profiling::enable();
    if (dev->parsed()) rc = devices(std::cout);
    if (info_cmd->parsed()) rc = info(info_opt, std::cout);
    if (conv_cmd->parsed()) rc = convert(conv_opt, std::cout);
    if (pcmd->parsed()) rc = tessera::app::run_poisson(pois, std::cout);
    if (acmd->parsed()) rc = tessera::app::run_assemble(asm_opt, std::cout);
    if (tecmd->parsed()) rc = tessera::app::run_thermoelastic(te_opt, std::cout);
    if (bcore->parsed()) rc = tessera::bench::run_core(core, std::cout);
    if (bvtable->parsed()) rc = tessera::bench::run_vtable(vtable_opt, std::cout);
    if (basm->parsed()) rc = tessera::bench::run_assembly(basm_opt, std::cout);
    if (brestr->parsed()) rc = tessera::bench::run_restriction(restriction_opt, std::cout);
    if (bgeom->parsed()) rc = tessera::bench::run_geometry(geometry_opt, std::cout);
    if (btensor->parsed()) rc = tessera::bench::run_tensor(tensor_opt, std::cout);
    if (binterp->parsed()) rc = tessera::bench::run_interpolate(interp_opt, std::cout);
    if (bbp->parsed()) rc = tessera::bench::run_bp(bp_opt, std::cout);
    if (bbk->parsed()) rc = tessera::bench::run_bp(bk_opt, std::cout);
    if (toper->parsed()) rc = tessera::bench::run_bp(tune_op_opt, std::cout);
    if (tinterp->parsed()) {
      tune_opt.tune = true;
      rc = tessera::bench::run_interpolate(tune_opt, std::cout);
    }
    // bench and tune: a warning where the machine was too busy for the fractions to mean anything
    tessera::bench::report_noise(std::cout);
    if (profile) {
      std::cout << "\nKernel timers:\n";
      tessera::profiling::print(std::cout);
    }
  } catch (const tessera::app::UsageError& e) {  // an option value the command checks itself
    std::cerr << "tessera: error: " << e.what() << "\n";
    return kUsage;
  } catch (const std::bad_alloc&) {
    std::cerr << "tessera: error: out of memory: the mesh or problem is too large for this machine (fewer "
                 "refinements, a lower order or a smaller mesh)\n";
    return kRuntime;
  } catch (const std::exception& e) {  // tessera::Error: unreadable input, unsupported mesh, ...
    std::cerr << "tessera: error: " << e.what() << "\n";
    return kRuntime;
  }
  return rc;
}
