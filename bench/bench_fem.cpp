// tessera bench geometry: geometric factors at quadrature points (J, det J, J^-1,
// D = w det J J^-1 J^-T, w det J) against the copy bandwidth of the same run. Compiled by
// nvcc in CUDA builds so every case can run on the GPU.
//
// Quadrature: q = p + 2 Gauss points per direction (BP3's choice for stored-data diffusion),
// i.e. the rule of degree 2p + 3 (on simplices the default rule of that degree: symmetric up
// to degree 20 on triangles and 10 on tetrahedra, else collapsed with p + 2 per direction).
//
// Byte model of the kernel (double precision), per run:
//   read:    ne * nv * space_dim * 8   vertex coordinates (each element's once: the threads
//                                      of its points share them through the cache)
//          + nq * (nv * dim + 1) * 8   shape-function gradients and weights (once, cached)
//   written: ne * nq * 8 * (doubles per point of the arrays asked for):
//            J space_dim*dim, det J 1, J^-1 dim*space_dim, D dim(dim+1)/2, w det J 1
//            (3-D hexahedra, all: 26 doubles = 208 B per point; D only: 48 B per point).
// End-to-end rows (geometric_factors(): host gather, copies to the device, allocation,
// kernel, det J check) use the same byte count, so their GB/s shows what the host-side
// preparation costs against the kernel alone.
#include <algorithm>
#include <iomanip>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "bench_util.hpp"
#include "tessera/core.hpp"
#include "tessera/fem/geometric_factors.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/fem/quadrature.hpp"
#include "tessera/fem/reference_element.hpp"
#include "tessera/io/mesh_io.hpp"

namespace tessera::bench {
namespace {

using fem::GeometricFactorFlags;

struct GeometryRow {
  std::string name;
  double bytes = 0;  // per run, from the byte model
  double ms = 0;     // median
};

/// Doubles written per quadrature point for the flags.
int doubles_per_point(GeometricFactorFlags f, int dim, int sdim) {
  int n = 0;
  if (fem::has(f, GeometricFactorFlags::J)) n += sdim * dim;
  if (fem::has(f, GeometricFactorFlags::DetJ)) n += 1;
  if (fem::has(f, GeometricFactorFlags::Jinv)) n += dim * sdim;
  if (fem::has(f, GeometricFactorFlags::D)) n += fem::num_packed_symmetric(dim);
  if (fem::has(f, GeometricFactorFlags::WDetJ)) n += 1;
  return n;
}

}  // namespace

int run_geometry(const FemOptions& opt, std::ostream& out) {
  TESSERA_REQUIRE(opt.order >= 1, "bench geometry: order must be >= 1 (got ", opt.order, ")");
  TESSERA_REQUIRE(opt.reps >= 1, "bench geometry: reps must be >= 1 (got ", opt.reps, ")");
  const Exec exec = Exec::parse(opt.backend);
  const int reps = opt.reps;
  const fem::Mesh mesh = io::load_mesh(opt.mesh);
  TESSERA_REQUIRE(mesh.num_elements() > 0, "bench geometry: mesh '", opt.mesh, "' has no elements");
  const int q1d = opt.order + 2;  // BP3: q = p + 2 points per direction
  const int degree = 2 * q1d - 1;

  std::string copy_label;
  const double copy_gbs = copy_bandwidth_gbs(exec, exec.on_device() ? index_t(1) << 27 : index_t(1) << 24, reps,
                                             &copy_label);

  JsonLines json(opt.json);
  out << "## tessera bench geometry — backend " << to_string(exec.backend) << ", " << describe(exec) << "\n\n";
  out << "Mesh `" << opt.mesh << "`, order p = " << opt.order << ", q = p + 2 = " << q1d
      << " Gauss points per direction; median of " << reps << " runs after 2 warm-ups. Copy reference ("
      << copy_label << "): " << std::fixed << std::setprecision(1) << copy_gbs << " GB/s.\n\n";
  out << "Bytes: vertex coordinates read once per element + the arrays written (8 B per double per "
         "point); end-to-end rows count the same bytes.\n\n";

  int rc = 0;
  for (fem::Geometry g : {fem::Geometry::Segment, fem::Geometry::Triangle, fem::Geometry::Quadrilateral,
                          fem::Geometry::Tetrahedron, fem::Geometry::Hexahedron}) {
    if (mesh.num_elements(g) == 0 || fem::dim(g) != mesh.dim()) continue;
    const auto rule = fem::quadrature(g, degree);
    const int dim = fem::dim(g), sdim = mesh.space_dim(), nv = fem::num_vertices(g);
    const index_t ne = mesh.num_elements(g), nq = rule.size();
    const double points = static_cast<double>(ne) * static_cast<double>(nq);
    const double read_bytes = 8.0 * (static_cast<double>(ne) * nv * sdim + static_cast<double>(nq) * (nv * dim + 1));
    auto bytes_for = [&](GeometricFactorFlags f) { return read_bytes + 8.0 * points * doubles_per_point(f, dim, sdim); };

    if (exec.on_device()) {
      // Kernel-only output plus one end-to-end result must fit at once.
      const double need = 2 * bytes_for(GeometricFactorFlags::All);
      const double have = static_cast<double>(current_device().global_mem);
      TESSERA_REQUIRE(need < 0.9 * have, "bench geometry: ", name(g), "s of mesh '", opt.mesh, "' at order ",
                      opt.order, " need about ", need / 1e9, " GB of GPU memory, the device has ", have / 1e9,
                      " GB; use a smaller mesh or order");
    }

    std::vector<GeometryRow> rows;
    const double setup_ms = time_median(exec, reps, [&] { fem::GeometricFactorKernel k(mesh, g, rule, exec); });
    const fem::GeometricFactorKernel kernel(mesh, g, rule, exec);
    kernel.check();
    double measure = 0;
    const struct {
      const char* name;
      GeometricFactorFlags flags;
    } variants[] = {{"all (J, det J, J^-1, D, w det J)", GeometricFactorFlags::All},
                    {"D only", GeometricFactorFlags::D},
                    {"w det J only", GeometricFactorFlags::WDetJ}};
    for (const auto& v : variants) {
      fem::GeometricFactors res = kernel.allocate(v.flags);
      const double ms = time_median(exec, reps, [&] { kernel.compute(res, v.flags); });
      rows.push_back({std::string(v.name) + ", kernel only", bytes_for(v.flags), ms});
      if (v.flags == GeometricFactorFlags::WDetJ) {
        Array<double, 1> flat("bench/wdetJ", {res.wdetJ.size()}, exec.space());
        detail::copy_bytes(flat.data(), flat.space(), res.wdetJ.data(), res.wdetJ.space(), res.wdetJ.bytes());
        measure = sum(exec, flat);
      }
    }
    rows.push_back({"det J check (min reduction), kernel only", read_bytes,
                    time_median(exec, reps, [&] { (void)kernel.min_det(); })});
    for (const auto& v : variants) {
      if (v.flags == GeometricFactorFlags::WDetJ) continue;
      const double ms = time_median(exec, reps, [&] { (void)fem::geometric_factors(mesh, g, rule, exec, v.flags); });
      rows.push_back({std::string(v.name) + ", end to end", bytes_for(v.flags), ms});
    }

    out << "### " << name(g) << ": " << ne << " elements, " << nq << " points each (" << std::setprecision(3)
        << points / 1e6 << " M points)\n\n";
    out << "| case | GB/s | % of copy | G points/s | median ms |\n|---|---:|---:|---:|---:|\n";
    nlohmann::json meta{{"bench", "geometry"},   {"backend", to_string(exec.backend)},
                        {"device", describe(exec)}, {"mesh", opt.mesh},
                        {"order", opt.order},       {"geometry", name(g)},
                        {"elements", ne},           {"points_per_element", nq},
                        {"q1d", q1d},               {"reps", reps}};
    for (const auto& r : rows) {
      const double gbs = r.bytes / r.ms / 1e6;
      const double pps = points / (r.ms * 1e-3);
      out << "| " << r.name << " | " << std::setprecision(1) << gbs << " | " << percent_of(gbs, copy_gbs, 1) << " | "
          << std::setprecision(3) << pps / 1e9 << " | " << r.ms << " |\n";
      auto j = meta;
      j.update({{"case", r.name}, {"bytes", r.bytes}, {"median_ms", r.ms}, {"gbs", gbs},
                {"fraction_of_copy", gbs / copy_gbs}, {"copy_gbs", copy_gbs}, {"points_per_s", pps}});
      json.write(j);
    }
    out << "\nHost-side preparation alone (gather of the vertex coordinates, shape-function gradients, "
           "copies to the backend's memory): "
        << std::setprecision(3) << setup_ms << " ms. sum of w det J (mesh measure) = " << std::setprecision(12)
        << measure << "\n\n";
    auto j = meta;
    j.update({{"case", "host preparation"}, {"median_ms", setup_ms}, {"measure", measure}});
    json.write(j);
    if (!(measure > 0)) rc = 1;
  }
  out.unsetf(std::ios::floatfield);
  return rc;
}

}  // namespace tessera::bench
