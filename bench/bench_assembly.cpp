// tessera bench assembly: global CSR assembly (fem::MatrixAssembler) on box meshes: the
// symbolic phase, the numeric fill in each fill mode and dispatch, the re-assembly after new
// materials, a byte roofline of the fill against the copy bandwidth of the same run, and the
// SpMV of the assembled matrix next to the matrix-free apply of the same operator.
//
// Fill bytes (double precision), E element-matrix entries, N non-zeros, P quadrature points:
//   maps read            8 E          (entry -> CSR position, or CSR position -> entries)
//   values               8 N (deterministic: each written once), 16 E (atomic: read-modify-write)
//   geometric factors    8 P F, F = 1 (mass), dim (dim + 1) / 2 (diffusion), dim dim + 1 (elasticity)
//   entry buffer         16 E (deterministic: written, then read)
// SpMV bytes: 12 N (value and column) + 8 (rows + 1) (offsets) + 16 rows (x once, y).
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
#include "tessera/fem/assembly.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/interpolate.hpp"
#include "tessera/fem/operator.hpp"
#include "tessera/fem/quadrature.hpp"
#include "tessera/fem/reference_element.hpp"
#include "tessera/linalg/csr.hpp"

namespace tessera::bench {

namespace {

using fem::Geometry;

Geometry parse_geometry(const std::string& w) {
  if (w == "tri") return Geometry::Triangle;
  if (w == "quad") return Geometry::Quadrilateral;
  if (w == "tet") return Geometry::Tetrahedron;
  if (w == "hex") return Geometry::Hexahedron;
  fail("bench assembly: --geometries item '", w, "' is not one of tri, quad, tet, hex");
}

const char* short_name(Geometry g) {
  switch (g) {
    case Geometry::Triangle: return "tri";
    case Geometry::Quadrilateral: return "quad";
    case Geometry::Tetrahedron: return "tet";
    case Geometry::Hexahedron: return "hex";
    default: return "?";
  }
}

/// Default orders: 1..6 on tetrahedra, 1..8 elsewhere.
std::vector<int> default_orders(Geometry g) {
  std::vector<int> v;
  for (int p = 1; p <= (g == Geometry::Tetrahedron ? 6 : 8); ++p) v.push_back(p);
  return v;
}

/// Elements of a box mesh of n cells per direction.
double box_elements(Geometry g, int n) {
  const double c = fem::dim(g) == 3 ? double(n) * n * n : double(n) * n;
  return g == Geometry::Triangle ? 2 * c : g == Geometry::Tetrahedron ? 6 * c : c;
}

/// Cells per direction of a box mesh of about `dofs` scalar DOFs at order p, reduced until
/// the element-matrix entries fit `max_entries`.
int box_cells(Geometry g, int p, int components, double dofs, double max_entries) {
  const bool three = fem::dim(g) == 3;
  const double root = three ? std::cbrt(dofs) : std::sqrt(dofs);
  int n = std::max(1, static_cast<int>(std::lround((root - 1) / p)));
  const double nd = double(fem::H1Basis(g, p).size()) * components;
  while (n > 1 && box_elements(g, n) * nd * nd > max_entries) n = std::max(1, int(n * 0.9));
  return n;
}

std::string sig3(double v) {
  std::ostringstream o;
  o << std::setprecision(3) << v;
  return o.str();
}

/// Factors per quadrature point the fill reads.
double factors_per_point(fem::FormKind k, int dim) {
  switch (k) {
    case fem::FormKind::Mass: return 1;
    case fem::FormKind::Diffusion: return dim * (dim + 1) / 2.0;
    case fem::FormKind::Elasticity: return dim * dim + 1;
  }
  return 1;
}

/// New materials for every re-assembly (the values change, the pattern does not).
fem::MaterialTable materials(int rep) {
  const double s = 1.0 + 0.25 * (rep % 4);
  return {{1, fem::Material{s, s, 1.5 * s, s, 0}}};
}

}  // namespace

int run_assembly(const AssemblyBenchOptions& opt, std::ostream& out) {
  TESSERA_REQUIRE(opt.reps >= 1, "bench assembly: --reps must be >= 1");
  const Exec exec = Exec::parse(opt.backend);
  const double dofs = opt.dofs > 0 ? opt.dofs : exec.on_device() ? 2e6 : 2e5;
  const double max_entries = opt.max_entries > 0 ? opt.max_entries : exec.on_device() ? 4e8 : 2e7;
  TESSERA_REQUIRE(dofs >= 10, "bench assembly: --dofs must be >= 10, got ", dofs);
  std::vector<Geometry> geoms;
  for (const auto& w : split(opt.geometries)) geoms.push_back(parse_geometry(w));
  const std::vector<int> orders = split_ints(opt.orders, "--orders");
  for (int p : orders) TESSERA_REQUIRE(p >= 1, "bench assembly: --orders: ", p, " is not a positive order");
  std::vector<fem::FormKind> forms;
  for (const auto& w : split(opt.forms)) forms.push_back(fem::parse_form(w));
  std::vector<fem::FillMode> fills;
  for (const auto& w : split(opt.fill)) {
    TESSERA_REQUIRE(w == "deterministic" || w == "atomic", "bench assembly: --fill item '", w,
                    "' is not deterministic or atomic");
    fills.push_back(w == "atomic" ? fem::FillMode::Atomic : fem::FillMode::Deterministic);
  }
  std::vector<fem::Dispatch> dispatches;
  for (const auto& w : split(opt.dispatch)) {
    TESSERA_REQUIRE(w == "driver" || w == "functor", "bench assembly: --dispatch item '", w,
                    "' is not driver or functor");
    dispatches.push_back(w == "driver" ? fem::Dispatch::Driver : fem::Dispatch::Functor);
  }
  TESSERA_REQUIRE(!geoms.empty() && !forms.empty() && !fills.empty() && !dispatches.empty(),
                  "bench assembly: --geometries, --forms, --fill and --dispatch need at least one item each");

  // TESSERA_CPU_BATCHED=0: the per-entry kernel on the CPU too (the driver's batched fill otherwise)
  const bool cpu_batched = fem::OperatorKernelChoice::from_environment().cpu_batched;
  std::string copy_label;
  const double copy_gbs = copy_bandwidth_gbs(exec, exec.on_device() ? index_t(1) << 27 : index_t(1) << 24,
                                             std::max(opt.reps, 3), &copy_label);
  JsonLines json(opt.json);
  out << "## tessera bench assembly — backend " << to_string(exec.backend) << ", " << describe(exec) << "\n\n"
      << "Global CSR assembly on box meshes of about " << sig3(dofs) << " scalar DOFs (fewer where the element-matrix "
      << "entries would pass " << sig3(max_entries) << "); q = p + 2 Gauss points per direction (degree 2p on "
      << "simplices); fill and re-assembly (fill after set_materials): median of " << opt.reps << " runs after 2 "
      << "warm-ups. Fill roofline: maps 8 B/entry, values 8 B/nnz (atomic: 16 B/entry), geometric factors "
      << "8 B x factors per point, deterministic buffer 16 B/entry, at the copy bandwidth (" << copy_label << "): "
      << std::fixed << std::setprecision(1) << copy_gbs << " GB/s. SpMV: the assembled matrix (A.apply); MF: the "
      << "matrix-free H1Operator apply of the same operator (diffusion only); diff: ||A x - MF x|| / ||MF x||."
      << (exec.on_device() ? ""
          : cpu_batched ? " CPU fill of the driver: element-batched (" + std::to_string(fem::assembly_fill_lanes()) +
                              " elements per batch, one per SIMD lane); the functor dispatch: one entry at a time."
                        : " CPU fill: one entry at a time (TESSERA_CPU_BATCHED=0).")
      << "\n\n";
  out.unsetf(std::ios::floatfield);
  out << "| geometry | p | form | elements | DOFs | nnz | entries | symbolic ms | fill | dispatch | fill ms | "
         "re-asm ms | Melem/s | Gnnz/s | Gentries/s | GB/s | % roofline | SpMV ms | MF ms | diff |\n"
      << "|---|---:|---|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
      << std::flush;

  // diffusion SpMV and matrix-free times per geometry and order: the crossover summary
  std::map<Geometry, std::vector<std::array<double, 3>>> cross;  // (p, spmv, mf)
  for (Geometry g : geoms) {
    const std::vector<int> ps = orders.empty() ? default_orders(g) : orders;
    for (int p : ps) {
      if (p > fem::max_basis_order(g)) {
        out << "| " << short_name(g) << " | " << p << " | - | order above the basis' limit (" << fem::max_basis_order(g)
            << ") |\n";
        continue;
      }
      const int dim = fem::dim(g);
      for (fem::FormKind kind : forms) {
        const int comps = kind == fem::FormKind::Elasticity ? dim : 1;
        const int n = box_cells(g, p, comps, dofs, max_entries);
        const fem::Mesh mesh = fem::box_mesh(g, {n, n, n});
        const fem::H1Space space(mesh, p, comps, fem::NodeOrdering::Auto, exec.backend);
        fem::AssemblyOptions ao;
        ao.fill = fills.front();
        ao.dispatch = dispatches.front();
        ao.cpu_batched = cpu_batched;
        fem::MatrixAssembler a(space, kind, exec, {}, ao);
        const double symbolic_ms = a.timings().symbolic_ms;
        linalg::CsrMatrix A = a.assemble();
        const index_t ne = mesh.num_elements(), rows = A.rows();
        const double nnz = double(A.nnz()), entries = double(a.num_entries());
        const double nq = double(fem::quadrature(g, a.degree()).size());
        const double geo_bytes = 8.0 * ne * nq * factors_per_point(kind, dim);

        // SpMV of the assembled matrix and the matrix-free apply (diffusion)
        Array<double, 1> x("bench/assembly_x", {rows}, exec.space()), y("bench/assembly_y", {rows}, exec.space());
        fill_random(x, 3);
        const double spmv_ms = time_median(exec, opt.reps, [&] { A.apply(x.cview(), y.view()); });
        const double spmv_bytes = 12.0 * nnz + 8.0 * double(rows + 1) + 16.0 * double(rows);
        double mf_ms = -1, diff = -1;
        if (kind != fem::FormKind::Elasticity) {
          const fem::H1Operator K(space, kind == fem::FormKind::Mass ? fem::OperatorKind::Mass : fem::OperatorKind::Diffusion,
                                  exec);
          Array<double, 1> z("bench/assembly_z", {rows}, exec.space());
          mf_ms = time_median(exec, opt.reps, [&] { K.apply(x.cview(), z.view()); });
          A.apply(x.cview(), y.view());
          K.apply(x.cview(), z.view());
          const auto yh = y.to_vector(), zh = z.to_vector();
          double dn = 0, zn = 0;
          for (std::size_t i = 0; i < yh.size(); ++i) {
            dn += (yh[i] - zh[i]) * (yh[i] - zh[i]);
            zn += zh[i] * zh[i];
          }
          diff = zn > 0 ? std::sqrt(dn / zn) : std::sqrt(dn);
          if (kind == fem::FormKind::Diffusion) cross[g].push_back({double(p), spmv_ms, mf_ms});
        }

        for (fem::FillMode fm : fills)
          for (fem::Dispatch dp : dispatches) {
            a.set_fill_mode(fm);
            a.set_dispatch(dp);
            a.set_materials({});
            const double fill_ms = time_median(exec, opt.reps, [&] { a.fill(A); });
            int rep = 0;
            const double refill_ms = time_median(exec, opt.reps, [&] {
              a.set_materials(materials(rep++));
              a.fill(A);
            });
            const bool atomic = fm == fem::FillMode::Atomic;
            const double bytes = 8.0 * entries + geo_bytes + (atomic ? 16.0 * entries : 8.0 * nnz + 16.0 * entries);
            const double gbs = bytes / (fill_ms * 1e6);
            out << "| " << short_name(g) << " | " << p << " | " << fem::name(kind) << " | " << ne << " | " << rows
                << " | " << A.nnz() << " | " << a.num_entries() << " | " << sig3(symbolic_ms) << " | "
                << fem::name(fm) << " | " << fem::name(dp) << " | " << sig3(fill_ms) << " | " << sig3(refill_ms)
                << " | " << sig3(ne / (fill_ms * 1e3)) << " | " << sig3(nnz / (fill_ms * 1e6)) << " | "
                << sig3(entries / (fill_ms * 1e6)) << " | " << sig3(gbs) << " | " << percent_of(gbs, copy_gbs, 1)
                << "% | " << sig3(spmv_ms) << " | " << (mf_ms >= 0 ? sig3(mf_ms) : "-") << " | "
                << (diff >= 0 ? sig3(diff) : "-") << " |\n"
                << std::flush;
            nlohmann::json j{{"bench", "assembly"},
                             {"backend", to_string(exec.backend)},
                             {"device", describe(exec)},
                             {"geometry", short_name(g)},
                             {"order", p},
                             {"form", fem::name(kind)},
                             {"fill", fem::name(fm)},
                             {"dispatch", fem::name(dp)},
                             {"elements", ne},
                             {"dofs", rows},
                             {"nnz", A.nnz()},
                             {"entries", a.num_entries()},
                             {"quadrature_degree", a.degree()},
                             {"points_per_element", nq},
                             {"symbolic_ms", symbolic_ms},
                             {"fill_ms", fill_ms},
                             {"reassembly_ms", refill_ms},
                             {"elements_per_s", ne / (fill_ms * 1e-3)},
                             {"nnz_per_s", nnz / (fill_ms * 1e-3)},
                             {"entries_per_s", entries / (fill_ms * 1e-3)},
                             {"fill_bytes", bytes},
                             {"fill_gbs", gbs},
                             {"fraction_of_copy", gbs / copy_gbs},
                             {"copy_gbs", copy_gbs},
                             {"spmv_ms", spmv_ms},
                             {"spmv_gbs", spmv_bytes / (spmv_ms * 1e6)}};
            if (mf_ms >= 0) {
              j["matrix_free_ms"] = mf_ms;
              j["spmv_matrix_free_rel_diff"] = diff;
            }
            json.write(j);
          }
      }
    }
  }

  if (!cross.empty()) {
    out << "\nDiffusion, SpMV of the assembled matrix against the matrix-free apply (time ratio SpMV / MF; > 1: "
           "matrix-free faster):\n\n| geometry | SpMV / MF by p | matrix-free faster from p |\n|---|---|---:|\n";
    for (const auto& [g, v] : cross) {
      std::ostringstream row;
      int from = 0;
      for (const auto& c : v) {
        row << (row.tellp() > 0 ? ", " : "") << int(c[0]) << ": " << sig3(c[1] / c[2]);
        if (c[2] < c[1] && from == 0) from = int(c[0]);
        if (c[2] >= c[1]) from = 0;  // the first p from which matrix-free stays faster
      }
      out << "| " << short_name(g) << " | " << row.str() << " | " << (from ? std::to_string(from) : "-") << " |\n";
    }
  }

  // The seed's application: Poisson (diffusion) on a square of triangles, driver against
  // functor dispatch.
  if (!opt.seed_mesh.empty() && opt.seed_mesh != "none") {
    const fem::Mesh mesh = fem::generate_mesh(opt.seed_mesh);
    out << "\nPoisson (diffusion) on " << opt.seed_mesh << " (" << mesh.num_elements()
        << " elements): fill ms, polymorphic driver (one typed kernel per group) against device virtual calls\n\n"
        << "| p | DOFs | nnz | entries | symbolic ms | fill | driver ms | functor ms | functor / driver |\n"
        << "|---:|---:|---:|---:|---:|---|---:|---:|---:|\n";
    for (int p : split_ints(opt.seed_orders, "--seed-orders")) {
      const fem::H1Space space(mesh, p, 1, fem::NodeOrdering::Auto, exec.backend);
      fem::MatrixAssembler a(space, fem::FormKind::Diffusion, exec);
      linalg::CsrMatrix A = a.assemble();
      for (fem::FillMode fm : fills) {
        a.set_fill_mode(fm);
        double t[2] = {0, 0};
        for (int d = 0; d < 2; ++d) {
          a.set_dispatch(d == 0 ? fem::Dispatch::Driver : fem::Dispatch::Functor);
          t[d] = time_median(exec, opt.reps, [&] { a.fill(A); });
        }
        out << "| " << p << " | " << A.rows() << " | " << A.nnz() << " | " << a.num_entries() << " | "
            << sig3(a.timings().symbolic_ms) << " | " << fem::name(fm) << " | " << sig3(t[0]) << " | " << sig3(t[1])
            << " | " << sig3(t[1] / t[0]) << " |\n"
            << std::flush;
        json.write({{"bench", "assembly_seed"},
                    {"backend", to_string(exec.backend)},
                    {"device", describe(exec)},
                    {"mesh", opt.seed_mesh},
                    {"order", p},
                    {"fill", fem::name(fm)},
                    {"dofs", A.rows()},
                    {"nnz", A.nnz()},
                    {"entries", a.num_entries()},
                    {"symbolic_ms", a.timings().symbolic_ms},
                    {"driver_fill_ms", t[0]},
                    {"functor_fill_ms", t[1]}});
      }
    }
  }
  return 0;
}

}  // namespace tessera::bench
