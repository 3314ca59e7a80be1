// tessera bench interpolate / tessera tune interpolate: values and gradients at quadrature
// points (fem::Interpolator) on ~1M-element perturbed meshes of each geometry, timed for every
// number of elements per block, against the copy bandwidth of the same run. Compiled by nvcc
// in CUDA builds so every case can run on the GPU.
//
// Rule: degree 2p (the Interpolator's default use): Gauss with p + 1 points per direction on
// quadrilaterals and hexahedra, the default simplex rule of degree 2p on triangles and
// tetrahedra (symmetric where tabulated; the header line of each case gives its points).
//
// Byte model (double precision), per launch (DESIGN.md: connectivity + nodal values actually
// gathered + output at quadrature points):
//   ne * nd * 4                        the element-to-node map (int32)
// + components * num_nodes * 8         each global value once
// + ne * nq * components * K * 8       the output, K = 1 (values), dim (reference gradients),
//                                      space_dim (gradients), summed over the kinds asked for
// + geometry for gradients: ne * nv * space_dim * 8 (vertices, on the fly) or
//   ne * nq * dim * space_dim * 8 (stored J^-1).
// Transpose (integrate) rows: the same point data read, ne * components * nd * 8 written.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "bench_util.hpp"
#include "tessera/core.hpp"
#include "tessera/core/tuning.hpp"
#include "tessera/fem/interpolate.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::bench {
namespace {

using fem::Eval;
using fem::Geometry;

Geometry parse_geometry(const std::string& s) {
  if (s == "tri" || s == "triangle") return Geometry::Triangle;
  if (s == "quad" || s == "quadrilateral") return Geometry::Quadrilateral;
  if (s == "tet" || s == "tetrahedron") return Geometry::Tetrahedron;
  if (s == "hex" || s == "hexahedron") return Geometry::Hexahedron;
  fail("bench interpolate: unknown geometry '", s, "' (valid: tri, quad, tet, hex)");
}

const char* short_name(Geometry g) {
  switch (g) {
    case Geometry::Triangle: return "tri";
    case Geometry::Quadrilateral: return "quad";
    case Geometry::Tetrahedron: return "tet";
    case Geometry::Hexahedron: return "hex";
    default: return "seg";
  }
}

/// femto's fixed elements-per-block table for p = 1, 2, 3 (0 above).
int femto_epb(Geometry g, int p) {
  static const int tri[] = {32, 16, 16}, quad[] = {32, 14, 8}, tet[] = {12, 8, 8}, hex[] = {8, 4, 2};
  if (p < 1 || p > 3) return 0;
  switch (g) {
    case Geometry::Triangle: return tri[p - 1];
    case Geometry::Quadrilateral: return quad[p - 1];
    case Geometry::Tetrahedron: return tet[p - 1];
    case Geometry::Hexahedron: return hex[p - 1];
    default: return 0;
  }
}

/// A generator spec with about `target` elements of geometry g (perturbed, seeded).
std::string mesh_spec(Geometry g, double target) {
  std::ostringstream o;
  o << "box:" << short_name(g) << ":";
  const auto n = [](double x) { return std::max(1L, std::lround(x)); };
  switch (g) {
    case Geometry::Triangle: {
      const long k = n(std::sqrt(target / 2));
      o << k << "x" << k;
      break;
    }
    case Geometry::Quadrilateral: {
      const long k = n(std::sqrt(target));
      o << k << "x" << k;
      break;
    }
    case Geometry::Tetrahedron: {
      const long k = n(std::cbrt(target / 6));
      o << k << "x" << k << "x" << k;
      break;
    }
    default: {
      const long k = n(std::cbrt(target));
      o << k << "x" << k << "x" << k;
    }
  }
  o << ":perturb=0.2:seed=1";
  return o.str();
}

double bytes_of(const fem::Interpolator& in, Eval what, bool transpose, fem::GeometrySource gs) {
  const double ne = double(in.num_elements()), nd = in.nodes_per_element(), nq = in.num_points(),
               c = in.components();
  const int dim = in.dim(), sd = in.space_dim();
  double k = 0;
  if (fem::has(what, Eval::Values)) k += 1;
  if (fem::has(what, Eval::ReferenceGradients)) k += dim;
  if (fem::has(what, Eval::Gradients)) k += sd;
  double b = ne * nq * c * k * 8;
  if (transpose) b += ne * c * nd * 8;
  else b += ne * nd * 4 + c * double(in.restriction().num_nodes()) * 8;
  if (fem::has(what, Eval::Gradients))
    b += gs == fem::GeometrySource::OnTheFly ? ne * fem::num_vertices(in.geometry()) * sd * 8 : ne * nq * dim * sd * 8;
  return b;
}

}  // namespace

int run_interpolate(const InterpolateOptions& opt, std::ostream& out) {
  TESSERA_REQUIRE(opt.reps >= 1, "bench interpolate: reps must be >= 1 (got ", opt.reps, ")");
  TESSERA_REQUIRE(opt.elements >= 1, "bench interpolate: elements must be >= 1 (got ", opt.elements, ")");
  const Exec exec = Exec::parse(opt.backend);
  if (!opt.cache.empty()) {  // read and write this cache
    setenv("TESSERA_TUNING_CACHE", opt.cache.c_str(), 1);
    tuning::reload();
  }
  std::vector<Geometry> geoms;
  for (const auto& s : split(opt.geometries)) geoms.push_back(parse_geometry(s));
  std::vector<int> orders;
  for (const int p : split_ints(opt.orders, "--orders")) {
    TESSERA_REQUIRE(p >= 1, "bench interpolate: order ", p, " < 1");
    orders.push_back(p);
  }
  std::vector<bool> vector_fields;
  for (const auto& s : split(opt.fields)) {
    TESSERA_REQUIRE(s == "scalar" || s == "vector", "bench interpolate: unknown field kind '", s,
                    "' (valid: scalar, vector)");
    vector_fields.push_back(s == "vector");
  }
  std::vector<Eval> kinds;
  for (const auto& s : split(opt.what)) kinds.push_back(fem::parse_eval(s));
  fem::InterpolatorOptions iopt;
  iopt.geometry = opt.stored_geometry ? fem::GeometrySource::Stored : fem::GeometrySource::OnTheFly;
  iopt.layout = opt.component_major ? fem::QuadLayout::ComponentMajor : fem::QuadLayout::ElementMajor;
  iopt.threads_per_element = opt.threads;
  iopt.elements_per_item = opt.chunk;
  // TESSERA_CPU_BATCHED=0: the team kernels on the CPU (TESSERA_OPERATOR_EXACT=0: the batched
  // kernels' run-time contraction loops)
  iopt.kernels = fem::OperatorKernelChoice::from_environment();

  std::string copy_label;
  const double copy_gbs = copy_bandwidth_gbs(exec, exec.on_device() ? index_t(1) << 27 : index_t(1) << 24, opt.reps,
                                             &copy_label);
  const std::string device = tuning::device_key(exec);
  JsonLines json(opt.json);
  out << "## tessera " << (opt.tune ? "tune" : "bench") << " interpolate — backend " << to_string(exec.backend) << ", "
      << describe(exec) << "\n\n";
  out << "Rule of degree 2p (p + 1 points per direction on quads and hexes), layout " << fem::name(iopt.layout) << ", gradients with "
      << fem::name(iopt.geometry) << " geometry"
      << (exec.on_device() ? "" : iopt.kernels.cpu_batched ? ", CPU element-batched kernels (no elements per block)" : ", team kernels")
      << "; median of " << opt.reps
      << " runs after 2 warm-ups. Copy reference (" << copy_label << "): " << std::fixed << std::setprecision(1)
      << copy_gbs << " GB/s. Tuning cache: " << (tuning::cache_path().empty() ? "(off)" : tuning::cache_path())
      << ".\n\n";

  std::vector<std::string> summary;
  std::map<std::string, tuning::Entry> tuned;
  for (Geometry g : geoms) {
    for (int p : orders) {
      const int d = fem::dim(g);
      // Low orders on ~opt.elements elements; higher orders on fewer, at about the DOF count of p = 3.
      const double target = p <= 3 ? opt.elements : opt.elements * std::pow(3.0 / p, d);
      const std::string spec = mesh_spec(g, target);
      const auto t0 = std::chrono::steady_clock::now();
      const fem::Mesh mesh = fem::generate_mesh(spec);
      const auto rule = fem::quadrature(g, 2 * p);
      for (bool vec : vector_fields) {
        const int comps = vec ? d : 1;
        const fem::H1Space space(mesh, p, comps, fem::NodeOrdering::Auto, exec.backend);
        const fem::Interpolator interp(space, g, rule, exec, iopt);
        const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        Array<double> u("bench/u", {space.num_dofs()}, exec.space());
        fill_random(u, 3);
        // the CPU's batched kernels have no elements per block: one column
        const int cap = interp.cpu_batched() ? 1 : std::min(d == 2 ? 32 : 16, std::max(1, opt.max_epb));
        out << "### " << fem::name(g) << " p = " << p << ", " << (vec ? "vector" : "scalar") << " (" << comps
            << " components): mesh `" << spec << "`, " << interp.num_elements() << " elements, "
            << interp.num_points() << " points each, " << space.num_dofs() << " DOFs (set-up "
            << std::setprecision(1) << setup_s << " s)\n\n";
        out << "| kernel | what |";
        for (int e = 1; e <= cap; ++e) out << " " << e << " |";
        out << "\n|---|---|";
        for (int e = 1; e <= cap; ++e) out << "---:|";
        out << "\n";
        for (bool transpose : {false, true}) {
          if (transpose && !opt.transpose) continue;
          for (Eval what : kinds) {
            fem::QuadratureData qd = interp.allocate(what);
            Array<double, 3> ev;
            if (transpose) {
              for (auto* a : {&qd.values, &qd.reference_gradients, &qd.gradients})
                if (a->size()) {
                  Array<double> flat("bench/qd", {a->size()}, exec.space());
                  fill_random(flat, 5);
                  detail::copy_bytes(a->data(), a->space(), flat.data(), flat.space(), a->bytes());
                }
              ev = Array<double, 3>("bench/e", {interp.num_elements(), comps, interp.nodes_per_element()},
                                    exec.space());
            }
            const int maxfit = std::min(cap, interp.max_elements_per_block(what, transpose));
            std::vector<double> ms(std::size_t(cap) + 1, 0.0);
            out << "| " << (transpose ? "integrate" : "interpolate") << " | " << fem::name(what) << " |";
            const double bytes = bytes_of(interp, what, transpose, iopt.geometry);
            for (int e = 1; e <= cap; ++e) {
              if (e > maxfit) {
                out << " — |";
                continue;
              }
              ms[std::size_t(e)] = time_median(exec, opt.reps, [&] {
                if (transpose) interp.integrate_with(e, qd, what, ev.view());
                else interp.interpolate_with(e, u.cview(), what, qd);
              });
              out << " " << std::setprecision(1) << ms[std::size_t(e)] * 1e3 << " |";
              json.write({{"bench", "interpolate"}, {"row", "sweep"}, {"backend", to_string(exec.backend)},
                          {"device", describe(exec)}, {"geometry", fem::name(g)}, {"order", p},
                          {"components", comps}, {"what", fem::name(what)}, {"transpose", transpose},
                          {"elements", interp.num_elements()}, {"points", interp.num_points()},
                          {"epb", e}, {"median_ms", ms[std::size_t(e)]}, {"bytes", bytes},
                          {"copy_gbs", copy_gbs}});
            }
            out << "\n";
            int best = 1;
            for (int e = 1; e <= maxfit; ++e)
              if (ms[std::size_t(e)] < ms[std::size_t(best)]) best = e;
            const auto key = interp.kernel(what, transpose).key();
            if (opt.tune) tuned[key] = {best, ms[std::size_t(best)], today()};
            const int chosen = interp.elements_per_block(what, transpose);
            const std::string source = interp.elements_per_block_source(what, transpose);
            const auto time_at = [&](int e) {
              if (e >= 1 && e <= maxfit) return ms[std::size_t(e)];
              return time_median(exec, opt.reps, [&] {
                if (transpose) interp.integrate_with(e, qd, what, ev.view());
                else interp.interpolate_with(e, u.cview(), what, qd);
              });
            };
            const double t_chosen = interp.cpu_batched() ? ms[1] : time_at(chosen);  // one kernel whatever epb
            const int fe = interp.cpu_batched() ? 0 : std::min(femto_epb(g, p), interp.max_elements_per_block(what, transpose));
            const double t_femto = fe > 0 ? time_at(fe) : 0.0;
            const double gbs = bytes / (ms[std::size_t(best)] * 1e6);
            std::ostringstream s;
            s << std::fixed << "| " << short_name(g) << " | " << p << " | " << comps << " | "
              << (transpose ? "integrate " : "") << fem::name(what) << " | " << std::setprecision(1)
              << ms[std::size_t(best)] * 1e3 << " (" << best << ") | " << t_chosen * 1e3 << " (" << chosen << ", "
              << source << ") | ";
            if (fe > 0) s << t_femto * 1e3 << " (" << fe << ")";
            else s << "—";
            s << " | " << ms[1] * 1e3 << " | " << std::setprecision(1) << bytes / 1e6 << " | " << gbs << " | "
              << with_percent(percent_of(gbs, copy_gbs)) << " |";
            summary.push_back(s.str());
            json.write({{"bench", "interpolate"}, {"row", "summary"}, {"backend", to_string(exec.backend)},
                        {"device", describe(exec)}, {"geometry", fem::name(g)}, {"order", p}, {"components", comps},
                        {"what", fem::name(what)}, {"transpose", transpose}, {"elements", interp.num_elements()},
                        {"points", interp.num_points()}, {"dofs", space.num_dofs()}, {"best_epb", best},
                        {"best_ms", ms[std::size_t(best)]}, {"chosen_epb", chosen}, {"chosen_source", source},
                        {"chosen_ms", t_chosen}, {"femto_epb", fe}, {"femto_ms", t_femto}, {"epb1_ms", ms[1]},
                        {"bytes", bytes}, {"gbs", gbs}, {"copy_gbs", copy_gbs},
                        {"fraction_of_copy", gbs / copy_gbs}, {"layout", fem::name(iopt.layout)},
                        {"geometry_source", fem::name(iopt.geometry)}, {"key", key},
                        {"cpu_batched", interp.cpu_batched()}});
          }
        }
        out << "\n(µs per launch for 1, 2, ... elements per block; — : does not fit)\n\n";
      }
    }
  }
  out << "### Summary\n\n| geometry | p | components | what | best µs (epb) | chosen µs (epb, source) | femto table "
         "µs (epb) | 1 per block µs | MB moved | GB/s (best) | % of copy |\n"
         "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& s : summary) out << s << "\n";
  out << "\n";
  if (opt.tune) {
    tuning::store(device, tuned, opt.cache);
    out << "Wrote " << tuned.size() << " entries for '" << device << "' to "
        << (opt.cache.empty() ? tuning::cache_path() : opt.cache) << ".\n";
  }
  out.unsetf(std::ios::floatfield);
  return 0;
}

}  // namespace tessera::bench
