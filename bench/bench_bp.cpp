// tessera bench bp / bench bk / tune operators: the CEED bake-off problems with the fused
// operator kernels.
//
// BP1 mass, scalar, q = p + 2 Gauss; BP2 its 3-component version; BP3 diffusion, scalar,
// q = p + 2 Gauss; BP4 its 3-component version; BP5 diffusion, scalar, q = p + 1 Gauss-Lobatto
// (collocated with the nodes); BP6 its 3-component version. BP: global vector -> global vector
// (gather and scatter fused); BK: the same per element, E-vector -> E-vector.
//
// Roofline bytes per apply (DESIGN.md), F factors per point (mass 1; diffusion 6 in 3-D, 3 in
// 2-D), index maps 4 bytes per element node:
//   BP stored:     elements * q^dim * 8 * F + elements * nd * 4 + DOFs * 16
//   BP stored, compressed (affine mesh, compress_geometry; the team kernels that read one
//   factor per element): elements * 8 * F + q^dim * 8 + elements * nd * 4 + DOFs * 16
//   (the CPU's batched kernel: the factors it keeps, per element or per point by batch)
//   BP on the fly: elements * vertices * dim * 8 + elements * nd * 4 + DOFs * 16
//   BK:            elements * nd * components * 16 + (stored) elements * q^dim * 8 * F
//                  or (on the fly) elements * vertices * dim * 8
// 'DOFs' counts every component. GDOF/s = DOFs / time.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "bench_util.hpp"
#include "tessera/core.hpp"
#include "tessera/core/tuning.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/operator.hpp"
#include "tessera/fem/reference_element.hpp"
#include "tessera/fem/restriction.hpp"

namespace tessera::bench {

namespace {

struct Problem {
  int number = 1;  // 1..6
  bool element = false;
  bool diffusion() const { return number >= 3; }
  int components() const { return number % 2 == 0 ? 3 : 1; }
  bool lobatto() const { return number >= 5; }
  std::string name() const { return (element ? "BK" : "BP") + std::to_string(number); }
};

Problem parse_problem(const std::string& w, bool element) {
  std::string l = w;
  for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool bk = l.rfind("bk", 0) == 0, bp = l.rfind("bp", 0) == 0;
  int k = 0;
  if ((bk || bp) && l.size() == 3 && l[2] >= '1' && l[2] <= '6') k = l[2] - '0';
  TESSERA_REQUIRE(k >= 1, "bench ", element ? "bk" : "bp", ": problem '", w, "' is not one of ",
                  element ? "bk1..bk6" : "bp1..bp6");
  return Problem{k, element};
}

fem::Geometry parse_elements(const std::string& e) {
  if (e == "hex") return fem::Geometry::Hexahedron;
  if (e == "tet") return fem::Geometry::Tetrahedron;
  if (e == "quad") return fem::Geometry::Quadrilateral;
  if (e == "tri") return fem::Geometry::Triangle;
  fail("bench bp: --elements '", e, "' is not one of hex, tet, quad, tri");
}

/// A structured box mesh of about `dofs` scalar DOFs at order p.
fem::Mesh box_mesh(fem::Geometry g, int p, double dofs, double perturb) {
  const bool three = fem::dim(g) == 3;
  const double root = three ? std::cbrt(dofs) : std::sqrt(dofs);
  const int n = std::max(1, static_cast<int>(std::lround((root - 1) / p)));
  std::ostringstream spec;
  spec << "box:" << (g == fem::Geometry::Hexahedron ? "hex" : g == fem::Geometry::Tetrahedron ? "tet"
                     : g == fem::Geometry::Quadrilateral ? "quad" : "tri")
       << ":" << n << "x" << n;
  if (three) spec << "x" << n;
  if (perturb > 0) spec << ":perturb=" << perturb << ":seed=1";
  return fem::generate_mesh(spec.str());
}

/// Three significant digits.
std::string sig3(double v) {
  std::ostringstream o;
  o << std::setprecision(3) << v;
  return o.str();
}

/// Elements per block to try in a sweep: 1, 2, 3, 4, 6, 8, 12, 16, ... up to `max`.
std::vector<int> sweep_values(int max) {
  std::vector<int> v;
  for (int b = 1; b <= max; b *= 2) {
    v.push_back(b);
    if (b >= 2 && b + b / 2 <= max) v.push_back(b + b / 2);
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

int run_bp(const BpOptions& opt, std::ostream& out) {
  TESSERA_REQUIRE(opt.reps >= 1, "bench bp: reps must be >= 1");
  const Exec exec = Exec::parse(opt.backend);
  const char* cmd = opt.tune ? "tune operators" : opt.element ? "bench bk" : "bench bp";
  std::vector<int> orders;
  for (int p : split_ints(opt.orders, "--orders")) orders.push_back(p);
  std::vector<Problem> problems;
  for (const auto& w : split(opt.problems)) problems.push_back(parse_problem(w, opt.element));
  std::vector<fem::GeometrySource> geoms;
  for (const auto& w : split(opt.geometry)) {
    TESSERA_REQUIRE(w == "stored" || w == "onthefly", cmd, ": --geometry '", w, "' is not stored or onthefly");
    geoms.push_back(w == "stored" ? fem::GeometrySource::Stored : fem::GeometrySource::OnTheFly);
  }
  std::vector<double> sizes;
  for (double d : split_numbers(opt.sizes, "--sizes")) sizes.push_back(d);
  if (sizes.empty()) sizes.push_back(opt.dofs);
  for (double d : sizes) TESSERA_REQUIRE(d >= 100, cmd, ": sizes must be >= 100 DOFs, got ", d);
  const fem::Geometry eg = parse_elements(opt.elements);
  const bool tensor = fem::is_tensor(eg);
  TESSERA_REQUIRE(!opt.composed || (!opt.element && !opt.tune), cmd,
                  ": --composed has no element-level apply and nothing to tune; use it with bench bp");

  fem::NodeOrdering ordering = fem::NodeOrdering::Auto;
  bool known = false;
  for (fem::NodeOrdering o : {fem::NodeOrdering::Auto, fem::NodeOrdering::FirstTouch, fem::NodeOrdering::ByEntity,
                              fem::NodeOrdering::Interleaved, fem::NodeOrdering::SharedFirst})
    if (opt.ordering == fem::name(o)) ordering = o, known = true;
  TESSERA_REQUIRE(known, cmd, ": unknown --ordering '", opt.ordering, "'; use auto, first-touch, by-entity, interleaved or shared-first");
  std::string copy_label;
  const double copy_gbs = copy_bandwidth_gbs(exec, exec.on_device() ? index_t(1) << 27 : index_t(1) << 24, opt.reps,
                                             &copy_label);
  // the roofline's bandwidth: the copy on the GPU, a STREAM-like triad on the CPU (the CPU's
  // memcpy may use non-temporal stores that the operators' loops do not)
  const double ref_gbs = exec.on_device() ? copy_gbs : triad_bandwidth_gbs(exec, index_t(1) << 24, opt.reps);
  JsonLines json(opt.json);
  out << "## tessera " << cmd << " — backend " << to_string(exec.backend) << ", " << describe(exec) << "\n\n"
      << (opt.element ? "Element-level apply (E-vector to E-vector)" : "Operator apply (global vector to global vector)")
      << " on " << opt.elements << " meshes; BP1/2 mass and BP3/4 diffusion with q = p + " << opt.points_extra << " Gauss points, BP5/6 "
      << "diffusion with q = p + 1 Gauss-Lobatto points; median of " << opt.reps << " runs after 2 warm-ups. "
      << "Copy reference (" << copy_label << "): " << std::fixed << std::setprecision(1) << copy_gbs << " GB/s"
      << (exec.on_device() ? std::string(". ")
                           : "; roofline bandwidth: STREAM-like triad a = b + s c, " + std::to_string(int(ref_gbs + 0.5)) +
                                 " GB/s. ")
      << (opt.perturb > 0 ? "Vertices perturbed by up to " + sig3(opt.perturb) + " of the element size. " : std::string())
      << "Node numbering: " << fem::name(ordering)
      << (ordering != fem::NodeOrdering::Auto ? ""
          : exec.on_device() ? " (interleaved up to p = 2, first-touch at p = 3, shared-first from p = 4)"
                             : " (interleaved at every order on the CPU)") << ".\n\n";
  // the comparison switches (TESSERA_OPERATOR_BOUND, ...), read once
  const fem::OperatorKernelChoice kernels = fem::OperatorKernelChoice::from_environment();
  if (opt.tune)
    out << "| problem | p | geometry | elements | DOFs | per item x per block: ms | best | was |\n"
        << "|---|---:|---|---:|---:|---|---:|---|\n";
  else
    out << "| problem | p | geometry | elements | DOFs | per block, per item | apply ms | GDOF/s | B/DOF | % roofline |"
        << (opt.element || opt.cg_iters == 0 ? "" : " CG it ms | CG GDOF/s |") << "\n"
        << "|---|---:|---|---:|---:|---|---:|---:|---:|---:|" << (opt.element || opt.cg_iters == 0 ? "" : "---:|---:|")
        << "\n";
  std::map<std::string, tuning::Entry> tuned;
  const std::string device = tuning::device_key(exec);
  for (double target : sizes)
    for (int p : orders) {
      const fem::Mesh mesh = box_mesh(eg, p, target, opt.perturb);
      const int dim = mesh.dim();
      std::map<int, std::unique_ptr<fem::H1Space>> spaces;
      for (const Problem& pr : problems) {
        if (pr.lobatto() && !tensor) {
          out << "| " << pr.name() << " | " << p << " | - | " << mesh.num_elements()
              << " | - | not available: Gauss-Lobatto rules exist on quadrilaterals and hexahedra only | | | | |"
              << (opt.element || opt.cg_iters == 0 ? "" : " | |") << "\n";
          continue;
        }
        // one space per component count and order (building one costs seconds at 8M DOFs)
        std::unique_ptr<fem::H1Space>& sp = spaces[pr.components()];
        if (!sp) sp = std::make_unique<fem::H1Space>(mesh, p, pr.components(), ordering, exec.backend);
        const fem::H1Space& space = *sp;
        const index_t ndofs = space.num_dofs();
        const index_t ne = mesh.num_elements();
        Array<double> x("bp/x", {ndofs}, exec.space()), y("bp/y", {ndofs}, exec.space());
        fill_random(x, 1);
        for (fem::GeometrySource gs : geoms) {
          fem::OperatorOptions oo;
          oo.kernels = kernels;
          oo.quadrature = pr.lobatto()                    ? fem::QuadratureType::GaussLobatto
                          : opt.collapsed && !tensor ? fem::QuadratureType::GaussCollapsed
                                                     : fem::QuadratureType::Gauss;
          oo.geometry = gs;
          oo.elements_per_item = opt.chunk;
          oo.fused = !opt.composed;
          oo.compress_geometry = !opt.full_geometry;
          // q = p + points_extra Gauss points per direction (simplices keep their default rule)
          if (!pr.lobatto() && tensor) oo.degree = 2 * (p + opt.points_extra) - 1;
          const auto kind = pr.diffusion() ? fem::OperatorKind::Diffusion : fem::OperatorKind::Mass;
          fem::H1Operator A(space, kind, exec, oo);
          const fem::QuadratureRule rule = fem::quadrature(eg, A.degree(), oo.quadrature);
          const double nq = static_cast<double>(rule.size());
          const double nd = static_cast<double>(fem::H1Basis(eg, p).size());
          const double factors = pr.diffusion() ? dim * (dim + 1) / 2 : 1;
          const double nv = fem::num_vertices(eg);
          const bool otf = gs == fem::GeometrySource::OnTheFly;
          // the CPU's batched kernel reads what it stores (one factor per element where compressed)
          // (the element-level apply of bench bk runs the team kernels: no batched figures)
          const auto cpu = opt.element ? fem::H1Operator::CpuKernelInfo{} : A.cpu_kernel();
          const bool batched = cpu.batched_elements > 0 && cpu.batched_elements == ne;  // every element
          // the team kernels (GPU) with compressed geometry: one factor per element and the weights;
          // the element-level apply (bench bk) reads the per-point factors
          const index_t compressed = opt.element ? 0 : A.compressed_elements();
          const bool team_compressed = !batched && !otf && compressed == ne && ne > 0;
          const double geo_bytes = batched         ? double(cpu.geometry_bytes)  // on the fly: the maps' coefficients
                                   : otf             ? ne * nv * dim * 8.0
                                   : team_compressed ? ne * 8.0 * factors + nq * 8.0
                                                     : ne * nq * 8.0 * factors;
          const double bytes = opt.element ? ne * nd * pr.components() * 16.0 + geo_bytes
                                           : geo_bytes + (batched ? double(cpu.index_bytes) : ne * nd * 4.0) + ndofs * 16.0;
          // E-vectors for BK, filled by gathering x.
          Array<double, 3> xe, ye;
          if (opt.element) {
            const fem::ElementRestriction R(space, eg, exec);
            xe = Array<double, 3>("bk/xe", {ne, pr.components(), R.nodes_per_element()}, exec.space());
            ye = Array<double, 3>("bk/ye", {ne, pr.components(), R.nodes_per_element()}, exec.space());
            R.gather(x.cview(), xe.view());
          }
          const auto apply = [&] {
            if (opt.element) A.apply_element(xe.cview(), ye.view());
            else A.apply(x.cview(), y.view());
          };
          const std::string gname = otf ? "on the fly" : "stored";
          if (opt.tune && batched) {
            // the CPU's batched kernel has no elements per block or item: nothing to store
            out << "| " << pr.name() << " | " << p << " | " << gname << " | " << ne << " | " << ndofs
                << " | batched x" << cpu.lanes << ": no elements per block or item to tune (TESSERA_CPU_BATCHED=0 "
                << "tunes the team kernels) | - | - |\n";
            continue;
          }
          if (opt.tune) {
            // every elements-per-block count at each elements-per-item count (1, 2, 4, 8, or
            // the one --chunk fixes), the fastest pair stored under the automatic key
            std::ostringstream row;
            double best_ms = 1e300;
            std::string was_src, was_k_src;
            const int was = A.elements_per_block(opt.element, &was_src);
            const int was_k = A.elements_per_item(opt.element, &was_k_src);  // --chunk where given
            int best = was, best_k = was_k;
            const auto timed = [&](int k, int b) {
              A.set_elements_per_item(k);
              A.set_elements_per_block(b);
              return time_median(exec, opt.reps, apply);
            };
            for (int k : opt.chunk > 0 ? std::vector<int>{opt.chunk} : std::vector<int>{1, 2, 4, 8}) {
              A.set_elements_per_item(k);
              const int kk = A.elements_per_item(opt.element);
              if (kk != k && opt.chunk == 0) continue;  // the kernel walks its own count (k = 1 times it)
              for (int b : sweep_values(A.max_elements_per_block(opt.element))) {
                const double t = timed(k, b);
                row << (row.tellp() > 0 ? ", " : "") << kk << "x" << b << ": " << std::setprecision(3) << t;
                if (t < best_ms) {
                  best_ms = t;
                  best = b;
                  best_k = k;
                }
              }
            }
            // The sweep's winner against the automatic choice once more, alternating, three
            // medians each: single sweeps picked pairs up to 8% slower than the automatic one
            // when run again (H200). The automatic pair stays unless the winner beats it by 1%.
            if (best_k != was_k || best != was) {
              std::vector<double> tw, tb;
              for (int r = 0; r < 3; ++r) {
                tw.push_back(timed(was_k, was));
                tb.push_back(timed(best_k, best));
              }
              std::sort(tw.begin(), tw.end());
              std::sort(tb.begin(), tb.end());
              row << "; again " << best_k << "x" << best << ": " << std::setprecision(3) << tb[1] << " against "
                  << was_k << "x" << was << ": " << tw[1];
              if (tb[1] > 0.99 * tw[1]) {
                best_k = was_k;
                best = was;
                best_ms = tw[1];
              } else {
                best_ms = tb[1];
              }
            }
            A.set_elements_per_block(0);
            A.set_elements_per_item(opt.chunk);  // the key the choice is stored under
            tuned[A.tuning_key(opt.element)] = tuning::Entry{best, best_ms, today(), opt.chunk > 0 ? 0 : best_k};
            out << "| " << pr.name() << " | " << p << " | " << gname << " | " << ne << " | " << ndofs << " | "
                << row.str() << " | " << best_k << "x" << best
                << " | " << was_k << "x" << was << " (" << was_k_src << "; " << was_src << ") |\n";
            json.write({{"bench", "tune_operators"}, {"backend", to_string(exec.backend)}, {"device", describe(exec)},
                        {"problem", pr.name()}, {"order", p}, {"geometry", gname}, {"dofs", ndofs},
                        {"key", A.tuning_key(opt.element)}, {"best_elements_per_block", best},
                        {"best_elements_per_item", best_k}, {"best_ms", best_ms},
                        {"was_elements_per_block", was}, {"was_elements_per_item", was_k}});
            continue;
          }
          std::string src, ksrc;
          const int epb = A.elements_per_block(opt.element, &src);
          const int kpi = A.elements_per_item(opt.element, &ksrc);
          const bool fused = epb > 0;  // 0: no fused part (--composed, or simplex point data past shared memory)
          const double t = time_median(exec, opt.reps, apply);
          const double gdofs = ndofs / (t * 1e6);
          const double roof = ndofs / (bytes / (ref_gbs * 1e9)) / 1e9;
          out << "| " << pr.name() << " | " << p << " | " << gname << " | " << ne << " | " << ndofs << " | "
              << (batched
                      ? "batched x" + std::to_string(cpu.lanes) + ", " +
                            std::to_string(int(100.0 * cpu.compressed_elements / std::max<index_t>(ne, 1) + 0.5)) + "% compressed"
                  : fused ? std::to_string(epb) + " (" + src + "), " + std::to_string(kpi) + " per item (" + ksrc + ")" +
                                (team_compressed ? ", compressed" : "")
                          : std::string("composed"))
              << " | "
              << std::setprecision(3) << t << " | " << sig3(gdofs) << " | " << std::setprecision(1)
              << bytes / ndofs << " | " << with_percent(percent_of(gdofs, roof)) << " |";
          nlohmann::json j{{"bench", opt.element ? "bk" : "bp"}, {"backend", to_string(exec.backend)},
                           {"ordering", fem::name(space.ordering())},
                           {"device", describe(exec)}, {"problem", pr.name()}, {"order", p},
                           {"elements_type", opt.elements}, {"geometry", gname}, {"elements", ne}, {"dofs", ndofs},
                           {"points_per_element", nq}, {"rule", fem::name(rule.family)},
                           {"elements_per_block", fused ? epb : 0},
                           {"elements_per_block_source", fused ? src : "composed"},
                           {"elements_per_item", fused ? kpi : 0}, {"elements_per_item_source", fused ? ksrc : "composed"},
                           {"apply_ms", t},
                           {"gdofs", gdofs}, {"bytes", bytes}, {"roofline_gdofs", roof},
                           {"fraction_of_roofline", gdofs / roof}, {"copy_gbs", copy_gbs},
                           {"roofline_gbs", ref_gbs}, {"perturb", opt.perturb},
                           {"cpu_batched_lanes", batched ? cpu.lanes : 0},
                           {"compressed_elements", compressed},
                           {"cpu_shared_batches", cpu.shared_batches}, {"cpu_colours", cpu.colours},
                           {"cpu_vector_access_share", cpu.vector_access_share}};
          if (!opt.element && opt.cg_iters > 0) {
            // Jacobi CG for a fixed number of iterations (tolerance 0), all vectors on the device.
            Array<double> inv = A.diagonal(), b("bp/b", {ndofs}, exec.space()), u("bp/u", {ndofs}, exec.space());
            auto iv = inv.view();
            forall("bench/bp_inverse", exec, ndofs, TESSERA_LAMBDA(index_t i) { iv(i) = 1.0 / iv(i); });
            fill_random(b, 2);
            // One iteration in the steady state: cg() with N iterations minus cg() with none (its
            // vectors, the first residual's apply and reductions), over N.
            const auto op = [&](View<const double, 1> a, View<double, 1> r) { A.apply(a, r); };
            const auto solve = [&](int iters) {
              fem::CgOptions co;
              co.rel_tol = 0;
              co.max_iters = iters;
              return time_median(exec, 5, [&] {
                u.fill(0.0);
                fem::cg(op, inv.cview(), b.cview(), u.view(), exec, co);
              });
            };
            const double t0 = solve(0);
            const double tcg = std::max(solve(opt.cg_iters) - t0, 0.0) / opt.cg_iters;
            out << " " << std::setprecision(3) << tcg << " | " << sig3(ndofs / (tcg * 1e6)) << " |";
            j.update({{"cg_iteration_ms", tcg}, {"cg_gdofs", ndofs / (tcg * 1e6)}, {"cg_iterations", opt.cg_iters},
                      {"cg_setup_ms", t0}});
          }
          out << "\n";
          json.write(j);
        }
      }
    }
  if (opt.tune) {
    tuning::store(device, tuned, opt.cache);
    out << "\nwrote " << tuned.size() << " entries for '" << device << "' to "
        << (opt.cache.empty() ? tuning::cache_path() : opt.cache) << "\n";
  }
  out.unsetf(std::ios::floatfield);
  return 0;
}

}  // namespace tessera::bench
