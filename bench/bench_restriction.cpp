// tessera bench restriction: element restriction (gather, scatter-add by atomics and by the
// atomic-free transpose gather) against the copy bandwidth of the same run. Compiled by nvcc
// in CUDA builds so every case can run on the GPU.
//
// Byte model (double values, 32-bit indices), per run, with L = elements x nodes per element
// local entries, N global nodes and C components:
//   gather:            L * (4 index + 8 C local write) + N * 8 C global read (each global value
//                      read once: ideal cache reuse between elements sharing it)
//   scatter atomic:    L * (4 index + 8 C local read) + N * 16 C global read-modify-write
//   scatter transpose: N * 8 CSR offsets (64-bit) + L * (4 entry id + 8 C local read)
//                      + N * 16 C global read and write (scatter_add adds to the global
//                      vector, so it is read as well as written)
// These are lower bounds of the traffic; the fraction of the copy bandwidth they reach is
// the figure of merit. The mesh is a generator spec or a mesh file (io::load_mesh takes both).
#include <functional>
#include <iomanip>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "bench_util.hpp"
#include "tessera/core.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/restriction.hpp"
#include "tessera/io/mesh_io.hpp"

namespace tessera::bench {

int run_restriction(const FemOptions& opt, std::ostream& out) {
  TESSERA_REQUIRE(opt.order >= 1, "bench restriction: order must be >= 1 (got ", opt.order, ")");
  TESSERA_REQUIRE(opt.reps >= 1, "bench restriction: reps must be >= 1 (got ", opt.reps, ")");
  TESSERA_REQUIRE(opt.components >= 1, "bench restriction: components must be >= 1 (got ", opt.components, ")");
  const Exec exec = Exec::parse(opt.backend);
  Timer setup(Exec::serial());
  setup.start();
  const fem::Mesh mesh = io::load_mesh(opt.mesh);
  const double mesh_ms = setup.stop();
  setup.start();
  const fem::H1Space space(mesh, opt.order, opt.components);
  const double space_ms = setup.stop();
  const int nc = opt.components;
  const double copy_gbs = copy_bandwidth_gbs(exec, index_t(1) << (exec.on_device() ? 27 : 24), opt.reps);
  JsonLines js(opt.json);

  out << "## tessera bench restriction: " << describe(exec) << "\n\n"
      << "mesh " << opt.mesh << " (" << mesh.num_elements() << " elements, " << std::setprecision(3) << mesh_ms / 1e3
      << " s), p = " << opt.order << ", " << nc << " component(s): " << space.num_dofs() << " DOFs (" << fem::name(space.ordering())
      << " numbering " << space_ms / 1e3 << " s). Median of " << opt.reps << " runs after 2 warm-ups; copy reference "
      << std::fixed << std::setprecision(1) << copy_gbs << " GB/s.\n\n"
      << "| geometry | case | GB/s | % of copy | GDOF/s | median ms |\n|---|---|---:|---:|---:|---:|\n";
  for (fem::Geometry g : {fem::Geometry::Segment, fem::Geometry::Triangle, fem::Geometry::Quadrilateral,
                          fem::Geometry::Tetrahedron, fem::Geometry::Hexahedron}) {
    if (mesh.num_elements(g) == 0) continue;
    setup.start();
    const fem::ElementRestriction r(space, g, exec);
    const double restriction_ms = setup.stop();
    const double L = double(r.num_elements()) * r.nodes_per_element(), N = double(space.num_nodes());
    Array<double, 1> u("bench/u", {space.num_dofs()}, exec.space()), y("bench/y", {space.num_dofs()}, exec.space());
    Array<double, 3> local("bench/local", {r.num_elements(), nc, r.nodes_per_element()}, exec.space());
    fill_random(u, 1);
    y.fill(0.0);
    struct Case {
      const char* name;
      double bytes;
      std::function<void()> run;
    };
    const std::vector<Case> cases{
        {"gather", L * (4 + 8.0 * nc) + N * 8 * nc, [&] { r.gather(u.cview(), local.view()); }},
        {"scatter-add atomic", L * (4 + 8.0 * nc) + N * 16 * nc,
         [&] { r.scatter_add(local.cview(), y.view(), fem::ScatterMethod::Atomic); }},
        {"scatter-add transpose gather", N * 8 + L * (4 + 8.0 * nc) + N * 16 * nc,
         [&] { r.scatter_add(local.cview(), y.view(), fem::ScatterMethod::TransposeGather); }},
    };
    for (const auto& c : cases) {
      const double ms = time_median(exec, opt.reps, c.run);
      const double gbs = c.bytes / ms / 1e6, gdofs = double(space.num_dofs()) / ms / 1e6;
      out << "| " << fem::name(g) << " | " << c.name << " | " << std::setprecision(1) << gbs << " | "
          << percent_of(gbs, copy_gbs, 1) << " | " << std::setprecision(3) << gdofs << " | " << ms << " |\n";
      js.write({{"bench", "restriction"}, {"backend", to_string(exec.backend)}, {"device", describe(exec)},
                {"mesh", opt.mesh}, {"geometry", fem::name(g)}, {"elements", r.num_elements()}, {"order", opt.order},
                {"components", nc}, {"dofs", space.num_dofs()}, {"case", c.name}, {"bytes", c.bytes},
                {"median_ms", ms}, {"gbs", gbs}, {"gdofs", gdofs}, {"copy_gbs", copy_gbs},
                {"fraction_of_copy", gbs / copy_gbs}, {"ordering", fem::name(space.ordering())},
                {"numbering_ms", space_ms}, {"restriction_setup_ms", restriction_ms}});
    }
  }
  out << "\n";
  out.unsetf(std::ios::floatfield);
  return 0;
}

}  // namespace tessera::bench
