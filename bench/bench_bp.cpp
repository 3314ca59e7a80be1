// tessera bench bp: operator apply (global vector -> global vector) of the CEED bake-off
// problems on hexahedral meshes: BP1 mass scalar, BP2 mass 3 components, BP3 diffusion
// scalar, BP4 diffusion 3 components, all with q = p + 2 Gauss points per direction and stored
// quadrature data; the fused kernel and the three-launch composition side by side, against
// the copy bandwidth of the same run.
//
// Roofline bytes per apply (DESIGN.md, stored data): elements * q^3 * 8 * factors (6 for
// diffusion, 1 for mass) + elements * (p + 1)^3 * 4 (index map) + DOFs * 16 (x read, y
// written).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "bench_util.hpp"
#include "tessera/core.hpp"
#include "tessera/fem/operator.hpp"

namespace tessera::bench {

int run_bp(const BpOptions& opt, std::ostream& out) {
  TESSERA_REQUIRE(opt.reps >= 1, "bench bp: reps must be >= 1");
  TESSERA_REQUIRE(opt.dofs >= 1000, "bench bp: dofs must be >= 1000");
  const Exec exec = Exec::parse(opt.backend);
  std::vector<int> orders;
  {
    std::stringstream ss(opt.orders);
    std::string w;
    while (std::getline(ss, w, ','))
      if (!w.empty()) orders.push_back(std::stoi(w));
  }
  std::vector<int> bps;
  {
    std::stringstream ss(opt.problems);
    std::string w;
    while (std::getline(ss, w, ',')) {
      if (w.empty()) continue;
      const int k = std::stoi(w.substr(w.rfind('p') + 1));
      TESSERA_REQUIRE(k >= 1 && k <= 4, "bench bp: problem '", w, "' is not one of bp1..bp4");
      bps.push_back(k);
    }
  }
  std::string copy_label;
  const double copy_gbs = copy_bandwidth_gbs(exec, exec.on_device() ? index_t(1) << 27 : index_t(1) << 24, opt.reps,
                                             &copy_label);
  JsonLines json(opt.json);
  out << "## tessera bench bp — backend " << to_string(exec.backend) << ", " << describe(exec) << "\n\n"
      << "Operator apply, global to global, hexahedral meshes of about " << opt.dofs
      << " DOFs, q = p + 2 Gauss points, stored data; median of " << opt.reps << " applies after 2 warm-ups. "
      << "Copy reference (" << copy_label << "): " << std::fixed << std::setprecision(1) << copy_gbs << " GB/s.\n\n"
      << "| problem | p | elements | DOFs | fused ms | fused GDOF/s | % of roofline | composed ms | composed GDOF/s |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (int p : orders) {
    const int n = std::max(1, static_cast<int>(std::lround((std::cbrt(opt.dofs) - 1) / p)));
    std::ostringstream spec;
    spec << "box:hex:" << n << "x" << n << "x" << n;
    const fem::Mesh mesh = fem::generate_mesh(spec.str());
    for (int bp : bps) {
      const int comps = bp % 2 == 0 ? 3 : 1;
      const bool diffusion = bp >= 3;
      const fem::H1Space space(mesh, p, comps);
      const auto kind = diffusion ? fem::OperatorKind::Diffusion : fem::OperatorKind::Mass;
      const fem::H1Operator fused(space, kind, exec, -1, true);
      const fem::H1Operator composed(space, kind, exec, -1, false);
      Array<double> x("bp/x", {space.num_dofs()}, exec.space()), y("bp/y", {space.num_dofs()}, exec.space());
      fill_random(x, 1);
      const double tf = time_median(exec, opt.reps, [&] { fused.apply(x.cview(), y.view()); });
      const double tc = time_median(exec, opt.reps, [&] { composed.apply(x.cview(), y.view()); });
      const double ne = double(mesh.num_elements()), q3 = std::pow(p + 2, 3), n3 = std::pow(p + 1, 3);
      const double dofs = double(space.num_dofs());
      const double bytes = ne * q3 * 8 * (diffusion ? 6 : 1) + ne * n3 * 4 + dofs * 16;
      const double roof_gdofs = dofs / (bytes / (copy_gbs * 1e9)) / 1e9;
      const double gf = dofs / (tf * 1e6), gc = dofs / (tc * 1e6);
      out << "| BP" << bp << " | " << p << " | " << mesh.num_elements() << " | " << space.num_dofs() << " | "
          << std::setprecision(3) << tf << " | " << std::setprecision(2) << gf << " | " << std::setprecision(0)
          << 100 * gf / roof_gdofs << "% | " << std::setprecision(3) << tc << " | " << std::setprecision(2) << gc
          << " |\n";
      json.write({{"bench", "bp"}, {"backend", to_string(exec.backend)}, {"device", describe(exec)},
                  {"problem", bp}, {"order", p}, {"elements", mesh.num_elements()}, {"dofs", space.num_dofs()},
                  {"fused_ms", tf}, {"composed_ms", tc}, {"fused_gdofs", gf}, {"composed_gdofs", gc},
                  {"roofline_gdofs", roof_gdofs}, {"bytes", bytes}, {"copy_gbs", copy_gbs}});
    }
  }
  out.unsetf(std::ios::floatfield);
  return 0;
}

}  // namespace tessera::bench
