// tessera thermoelastic: heat conduction, then linear elasticity loaded by the computed
// temperature, on mixed meshes with piecewise materials and a manufactured solution (see
// thermoelastic.hpp and docs/cli.md).
#include "thermoelastic.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <numbers>
#include <ostream>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fe_errors.hpp"
#include "tessera/core.hpp"
#include "tessera/fem/assembly.hpp"
#include "tessera/fem/operator.hpp"
#include "tessera/io/mesh_io.hpp"
#include "tessera/io/vtu.hpp"
#include "vtu_output.hpp"
#include "tessera/linalg/csr.hpp"
#include "usage_error.hpp"

namespace tessera::app {

using namespace tessera::fem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kPi = std::numbers::pi;

/// The built-in meshes and the others.
enum class Case { Square, Cube, Spec };

Case parse_case(const std::string& mesh) {
  if (mesh == "2d") return Case::Square;
  if (mesh == "3d") return Case::Cube;
  return Case::Spec;
}

/// Quadrant 1..4 of a cell whose lower corner has indices (i, j) of n per direction.
int quadrant(int i, int j, int n) { return 1 + (2 * i >= n ? 1 : 0) + (2 * j >= n ? 2 : 0); }

/// phi, its gradient and its Hessian at x: a product of one function per direction,
/// sin(2 pi x) sin(2 pi y) in 2-D, sin^2(2 pi x) sin(2 pi y) sin(pi z) in 3-D.
struct Phi {
  double v = 0;
  double g[3] = {0, 0, 0};
  double H[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  double lap() const { return H[0][0] + H[1][1] + H[2][2]; }
};

Phi phi(int dim, const std::array<double, 3>& x) {
  // f_d, f_d', f_d'' per direction
  double f[3] = {1, 1, 1}, f1[3] = {0, 0, 0}, f2[3] = {0, 0, 0};
  if (dim == 2) {
    for (int d = 0; d < 2; ++d) {
      const double s = std::sin(2 * kPi * x[std::size_t(d)]), c = std::cos(2 * kPi * x[std::size_t(d)]);
      f[d] = s;
      f1[d] = 2 * kPi * c;
      f2[d] = -4 * kPi * kPi * s;
    }
  } else {
    const double sx = std::sin(2 * kPi * x[0]);
    f[0] = sx * sx;
    f1[0] = 2 * kPi * std::sin(4 * kPi * x[0]);
    f2[0] = 8 * kPi * kPi * std::cos(4 * kPi * x[0]);
    f[1] = std::sin(2 * kPi * x[1]);
    f1[1] = 2 * kPi * std::cos(2 * kPi * x[1]);
    f2[1] = -4 * kPi * kPi * f[1];
    f[2] = std::sin(kPi * x[2]);
    f1[2] = kPi * std::cos(kPi * x[2]);
    f2[2] = -kPi * kPi * f[2];
  }
  Phi r;
  r.v = f[0] * f[1] * f[2];
  for (int i = 0; i < dim; ++i) {
    // product over the directions, with the derivatives a[d] (0, 1 or 2) of each factor
    const auto prod = [&](const int (&a)[3]) {
      double p = 1;
      for (int d = 0; d < 3; ++d) p *= a[d] == 0 ? f[d] : a[d] == 1 ? f1[d] : f2[d];
      return p;
    };
    int a[3] = {0, 0, 0};
    a[i] = 1;
    r.g[i] = prod(a);
    for (int j = 0; j < dim; ++j) {
      int b[3] = {0, 0, 0};
      b[i] += 1;
      b[j] += 1;
      r.H[i][j] = prod(b);
    }
  }
  return r;
}

/// Materials of the problem: the table for the assembly, and for the exact solution the
/// conductivity, shear modulus and beta / k of each attribute.
struct Materials {
  MaterialTable table;
  std::string describe;
};

/// The quadrant materials of the built-in meshes, or one material on every attribute.
Materials make_materials(Case c, const Mesh& mesh) {
  Materials m;
  if (c == Case::Spec) {
    std::set<int> attrs(mesh.element_attributes().begin(), mesh.element_attributes().end());
    for (int a : attrs)
      m.table[a] = Material{1.0, 1.0, kLameRatio * 1.0, 1.0, 0.1};
    m.describe = "k = 1, mu = 1, lambda = 1.5, alpha = 0.1 on every attribute";
    return m;
  }
  const double k[4] = {1.0, 4.0, 0.5, 2.0}, mu[4] = {1.0, 0.5, 2.0, 3.0}, alpha[4] = {0.1, 0.05, 0.2, 0.15};
  std::ostringstream os;
  os << "lambda = " << kLameRatio << " mu;";
  for (int q = 0; q < 4; ++q) {
    m.table[q + 1] = Material{1.0, k[q], kLameRatio * mu[q], mu[q], alpha[q]};
    os << (q ? ";" : "") << " quadrant " << q + 1 << ": k " << k[q] << ", mu " << mu[q] << ", alpha " << alpha[q];
  }
  m.describe = os.str();
  return m;
}

double beta_of(const Material& m) { return (3 * m.lambda + 2 * m.mu) * m.expansion; }

/// Refuses meshes the exact solution does not fit: dimension other than 2 or 3, vertices that
/// vary in a coordinate past the dimension.
void check_mesh(const Mesh& mesh, const std::string& name) {
  TESSERA_REQUIRE(mesh.dim() == 2 || mesh.dim() == 3, "thermoelastic: mesh '", name, "' is ", mesh.dim(),
                  "-dimensional; thermoelastic needs a 2-D or 3-D mesh");
  for (int c = mesh.dim(); c < mesh.space_dim(); ++c)
    for (index_t v = 1; v < mesh.num_vertices(); ++v)
      TESSERA_REQUIRE(mesh.vertex(v, c) == mesh.vertex(0, c), "thermoelastic: mesh '", name, "' is ", mesh.dim(),
                      "-dimensional but its vertices vary in coordinate ", "xyz"[c],
                      ": give a planar mesh in the x-y plane");
}

std::vector<double> to_host(const Array<double, 1>& a) { return a.to_vector(); }

/// One solved linear system.
struct SystemResult {
  std::vector<double> x;  // host copy of the solution
  CgResult cg;
  std::int64_t nnz = 0;
  double symbolic_ms = 0, fill_ms = 0, solve_ms = 0;
};

/// Assembles `kind` on `space`, eliminates the constrained DOFs (values from x_bc), solves by
/// Jacobi CG with the CSR product. b: the load vector (exec's space), overwritten.
SystemResult solve_system(const H1Space& space, FormKind kind, const Exec& exec, const MaterialTable& materials,
                          Array<double, 1>& b, const std::vector<index_t>& constrained,
                          const std::vector<double>& x_bc, const ThermoelasticOptions& opt) {
  SystemResult r;
  const MatrixAssembler assembler(space, kind, exec, materials);
  linalg::CsrMatrix A = assembler.assemble();
  r.symbolic_ms = assembler.timings().symbolic_ms;
  r.fill_ms = assembler.timings().fill_ms;
  r.nnz = assembler.nnz();
  const index_t n = space.num_dofs();
  auto cons = Array<index_t, 1>::from("thermoelastic/constrained", std::span<const index_t>(constrained), exec.space());
  auto xbc = Array<double, 1>::from("thermoelastic/x_bc", std::span<const double>(x_bc), exec.space());
  eliminate_dirichlet(A, cons.cview(), xbc.cview(), b.view());
  std::vector<double> inv = to_host(A.diagonal());
  for (auto& d : inv) d = d != 0 ? 1.0 / d : 1.0;
  auto inv_diag = Array<double, 1>::from("thermoelastic/inv_diag", std::span<const double>(inv), exec.space());
  Array<double, 1> x("thermoelastic/x", {n}, exec.space());
  CgOptions co;
  co.rel_tol = opt.tol;
  co.max_iters = opt.max_iters;
  const auto t0 = Clock::now();
  r.cg = cg([&](View<const double, 1> v, View<double, 1> y) { A.apply(v, y); }, inv_diag.cview(), b.cview(), x.view(),
            exec, co);
  fence("thermoelastic/solve");
  r.solve_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  r.x = to_host(x);
  return r;
}

/// Source values at the load points: f(attribute, x, values[components]) for every point of
/// every part, filled on the host and copied to exec's space.
template <class F>
std::vector<Array<double, 3>> source(const LoadAssembler& L, int components, const F& f) {
  std::vector<Array<double, 3>> src = L.allocate_source();
  std::vector<double> v(std::size_t(components), 0.0);
  for (int part = 0; part < L.num_parts(); ++part) {
    const LoadPoints& lp = L.points(part);
    const Array<double, 3> x = lp.x.to_host();
    const Array<int, 1> attr = lp.attribute.to_host();
    Array<double, 3> h = src[std::size_t(part)].to_host();
    for (index_t e = 0; e < lp.num_elements; ++e)
      for (int q = 0; q < lp.num_points; ++q) {
        f(attr(e), std::array<double, 3>{x(e, q, 0), x(e, q, 1), x(e, q, 2)}, v.data());
        for (int c = 0; c < components; ++c) h(e, c, q) = v[std::size_t(c)];
      }
    if (h.data() != src[std::size_t(part)].data()) deep_copy(src[std::size_t(part)], h);
  }
  return src;
}

struct Level {
  index_t elements = 0, t_dofs = 0, u_dofs = 0;
  std::int64_t t_nnz = 0, u_nnz = 0;
  int t_iters = 0, u_iters = 0;
  bool converged = true;
  double t_res = 0, u_res = 0;
  double setup_s = 0, assembly_ms = 0, solve_s = 0;
  FeErrors t_err, u_err;
  std::map<std::string, index_t> per_geometry;
};

Level solve_level(const ThermoelasticOptions& opt, Case c, const Mesh& mesh, const Exec& exec, std::ostream& out,
                  const std::string& output) {
  Level L;
  const auto t0 = Clock::now();
  const int dim = mesh.dim();
  L.elements = mesh.num_elements();
  for (Geometry g : kFeGeometries)
    if (mesh.num_elements(g) && fem::dim(g) == dim) L.per_geometry[name(g)] = mesh.num_elements(g);
  const Materials mats = make_materials(c, mesh);
  const H1Space ts(mesh, opt.order, 1, NodeOrdering::Auto, exec.backend), us(mesh, opt.order, dim, NodeOrdering::Auto, exec.backend);
  L.t_dofs = ts.num_dofs();
  L.u_dofs = us.num_dofs();
  // Exact solution; the material of element e through its attribute.
  std::map<int, Material> by_attr = mats.table;
  const auto mat = [&](int a) { return material_of(by_attr, a); };
  const double a_vec[3] = {1, 1, dim == 3 ? 1.0 : 0.0};
  const ExactField exact_T = [&](index_t e, const std::array<double, 3>& x, double* v, double* g) {
    const Phi p = phi(dim, x);
    const double k = mat(mesh.element_attribute(e)).conductivity;
    v[0] = p.v / k;
    if (g)
      for (int d = 0; d < dim; ++d) g[d] = p.g[d] / k;
  };
  const ExactField exact_u = [&](index_t e, const std::array<double, 3>& x, double* v, double* g) {
    const Phi p = phi(dim, x);
    const double mu = mat(mesh.element_attribute(e)).mu;
    for (int cc = 0; cc < dim; ++cc) {
      v[cc] = p.v * a_vec[cc] / mu;
      if (g)
        for (int d = 0; d < dim; ++d) g[3 * cc + d] = p.g[d] * a_vec[cc] / mu;
    }
  };
  // Constrained DOFs: the stored boundary faces of the built-in meshes (their hexahedron /
  // tetrahedron interface is not conforming, so its faces count as exterior), the exterior
  // nodes of other meshes; the exact values there.
  std::vector<index_t> t_cons, u_cons;
  if (c == Case::Spec) {
    t_cons = ts.exterior_nodes();
    for (int cc = 0; cc < dim; ++cc)
      for (index_t nd : t_cons) u_cons.push_back(us.dof(cc, nd));
    std::sort(u_cons.begin(), u_cons.end());
  } else {
    t_cons = ts.boundary_dofs();
    u_cons = us.boundary_dofs();
  }
  const std::vector<double> t_bc = fe_interpolate(ts, exact_T), u_bc = fe_interpolate(us, exact_u);
  // Heat: (k grad T, grad v) = (f_T, v), f_T = -lap phi.
  const LoadAssembler lt(ts, exec);
  Array<double, 1> bt =
      lt.assemble(source(lt, 1, [&](int, const std::array<double, 3>& x, double* v) { v[0] = -phi(dim, x).lap(); }));
  fence("thermoelastic/setup");
  L.setup_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const SystemResult rt = solve_system(ts, FormKind::Diffusion, exec, mats.table, bt, t_cons, t_bc, opt);
  // Elasticity: a_el(u, v) = (f_u, v) + (beta T_h, div v).
  const LoadAssembler lu(us, exec);
  const double r = kLameRatio;
  Array<double, 1> bu = lu.assemble(source(lu, dim, [&](int attr, const std::array<double, 3>& x, double* v) {
    const Phi p = phi(dim, x);
    const Material m = mat(attr);
    const double bk = beta_of(m) / m.conductivity;
    for (int i = 0; i < dim; ++i) {
      double Ha = 0;
      for (int j = 0; j < dim; ++j) Ha += p.H[i][j] * a_vec[j];
      v[i] = -((1 + r) * Ha + a_vec[i] * p.lap()) + bk * p.g[i];
    }
  }));
  {
    auto Th = Array<double, 1>::from("thermoelastic/T_h", std::span<const double>(rt.x), exec.space());
    const Array<double, 1> bth = lu.thermal_expansion_load(ts, Th.cview(), mats.table);
    std::vector<double> sum = to_host(bu);
    const std::vector<double> th = to_host(bth);
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += th[i];
    bu = Array<double, 1>::from("thermoelastic/b_u", std::span<const double>(sum), exec.space());
  }
  const SystemResult ru = solve_system(us, FormKind::Elasticity, exec, mats.table, bu, u_cons, u_bc, opt);
  L.t_nnz = rt.nnz;
  L.u_nnz = ru.nnz;
  L.t_iters = rt.cg.iterations;
  L.u_iters = ru.cg.iterations;
  L.t_res = rt.cg.rel_residual;
  L.u_res = ru.cg.rel_residual;
  L.converged = rt.cg.converged && ru.cg.converged;
  L.assembly_ms = rt.symbolic_ms + rt.fill_ms + ru.symbolic_ms + ru.fill_ms;
  L.solve_s = (rt.solve_ms + ru.solve_ms) / 1e3;
  L.t_err = fe_errors(ts, rt.x, exact_T);
  L.u_err = fe_errors(us, ru.x, exact_u);

  if (!output.empty()) {
    // T and u (3 components, so that ParaView sees a vector in 2-D too) on VTK Lagrange cells
    // at p >= 2, and their exact values at the same points.
    const io::VtuSpaceField fields[2] = {{"T", &ts, rt.x}, {"u", &us, ru.x, 3}};
    const io::VtuFunctionField exact[2] = {
        {"T_exact", 1,
         [&](index_t e, const double* x, const double*, double* v) { exact_T(e, {x[0], x[1], x[2]}, v, nullptr); }},
        {"u_exact", 3,
         [&](index_t e, const double* x, const double*, double* v) { exact_u(e, {x[0], x[1], x[2]}, v, nullptr); }}};
    io::write_vtu_lagrange(output, mesh, opt.order, fields, exact);
    const std::string what = std::string("T, T_exact, u, u_exact ") +
                             (opt.order == 1 ? "at the mesh vertices"
                                             : "on order-" + std::to_string(opt.order) + " VTK Lagrange cells") +
                             "; element attribute = material";
    if (opt.json) std::fprintf(stderr, "wrote %s (%s)\n", output.c_str(), what.c_str());
    else out << "wrote " << output << " (" << what << ")\n";
  }
  return L;
}

}  // namespace

Mesh thermoelastic_mesh_2d(int n) {
  TESSERA_REQUIRE(n >= 2 && n % 2 == 0, "thermoelastic: --n ", n,
                  " must be even and >= 2 (the quadrant interfaces x = 1/2, y = 1/2 must be cell faces)");
  const index_t nv = n + 1;
  Mesh m(2);
  m.reserve(nv * nv, 2 * index_t(n) * n, 4 * index_t(n));
  for (index_t j = 0; j < nv; ++j)
    for (index_t i = 0; i < nv; ++i) m.add_vertex({double(i) / n, double(j) / n});
  const auto V = [&](index_t i, index_t j) { return j * nv + i; };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const index_t a = V(i, j), b = V(i + 1, j), c = V(i + 1, j + 1), e = V(i, j + 1);
      const int q = quadrant(i, j, n);
      if (q == 1 || q == 4) {
        m.add_element(Geometry::Triangle, {a, b, c}, q);
        m.add_element(Geometry::Triangle, {a, c, e}, q);
      } else {
        m.add_element(Geometry::Quadrilateral, {a, b, c, e}, q);
      }
    }
  for (index_t j = 0; j < n; ++j) {
    m.add_boundary(Geometry::Segment, {V(0, j + 1), V(0, j)}, 1);
    m.add_boundary(Geometry::Segment, {V(n, j), V(n, j + 1)}, 1);
  }
  for (index_t i = 0; i < n; ++i) {
    m.add_boundary(Geometry::Segment, {V(i, 0), V(i + 1, 0)}, 1);
    m.add_boundary(Geometry::Segment, {V(i + 1, n), V(i, n)}, 1);
  }
  m.validate("thermoelastic 2-D mesh");
  return m;
}

Mesh thermoelastic_mesh_3d(int n) {
  TESSERA_REQUIRE(n >= 2 && n % 2 == 0, "thermoelastic: --n ", n,
                  " must be even and >= 2 (the interfaces x = 1/2, y = 1/2 must be cell faces)");
  const index_t nv = n + 1;
  Mesh m(3);
  const index_t cells = index_t(n) * n * n;
  m.reserve(nv * nv * nv, cells * 6, 6 * index_t(n) * n * 2);
  for (index_t k = 0; k < nv; ++k)
    for (index_t j = 0; j < nv; ++j)
      for (index_t i = 0; i < nv; ++i) m.add_vertex({double(i) / n, double(j) / n, double(k) / n});
  const auto V = [&](index_t i, index_t j, index_t k) { return (k * nv + j) * nv + i; };
  const auto hex_cell = [&](index_t i) { return 2 * i < n; };
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const auto C = [&](int a, int b, int c) { return V(i + a, j + b, k + c); };
        const int q = quadrant(i, j, n);
        if (hex_cell(i)) {
          m.add_element(Geometry::Hexahedron,
                        {C(0, 0, 0), C(1, 0, 0), C(1, 1, 0), C(0, 1, 0), C(0, 0, 1), C(1, 0, 1), C(1, 1, 1), C(0, 1, 1)}, q);
          continue;
        }
        // Kuhn split along the cell's (0,0,0)-(1,1,1) diagonal, one tetrahedron per axis
        // permutation, vertex order as fem::box_mesh (positive orientation).
        static constexpr int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        for (const auto& p : perms) {
          int a[3] = {0, 0, 0};
          index_t t[4];
          t[0] = C(0, 0, 0);
          a[p[0]] = 1;
          t[1] = C(a[0], a[1], a[2]);
          a[p[1]] = 1;
          t[2] = C(a[0], a[1], a[2]);
          t[3] = C(1, 1, 1);
          const bool even = (p[0] == 0 && p[1] == 1) || (p[0] == 1 && p[1] == 2) || (p[0] == 2 && p[1] == 0);
          if (!even) std::swap(t[1], t[2]);
          m.add_element(Geometry::Tetrahedron, std::span<const index_t>(t, 4), q);
        }
      }
  // Boundary faces, attribute 1: the square (p00, p10, p11, p01), listed so that the normal
  // points out, is a quadrilateral on a hexahedron cell and two triangles split along
  // p00-p11 (the face's lowest-highest diagonal, as the Kuhn tetrahedra split it) on a
  // tetrahedron cell.
  const auto face = [&](bool hex, index_t p00, index_t p10, index_t p11, index_t p01, bool flip) {
    if (flip) std::swap(p10, p01);
    if (hex) {
      m.add_boundary(Geometry::Quadrilateral, {p00, p10, p11, p01}, 1);
    } else {
      m.add_boundary(Geometry::Triangle, {p00, p10, p11}, 1);
      m.add_boundary(Geometry::Triangle, {p00, p11, p01}, 1);
    }
  };
  for (index_t k = 0; k < n; ++k)
    for (index_t j = 0; j < n; ++j) {
      face(hex_cell(0), V(0, j, k), V(0, j + 1, k), V(0, j + 1, k + 1), V(0, j, k + 1), true);
      face(hex_cell(n - 1), V(n, j, k), V(n, j + 1, k), V(n, j + 1, k + 1), V(n, j, k + 1), false);
    }
  for (index_t k = 0; k < n; ++k)
    for (index_t i = 0; i < n; ++i) {
      face(hex_cell(i), V(i, 0, k), V(i + 1, 0, k), V(i + 1, 0, k + 1), V(i, 0, k + 1), false);
      face(hex_cell(i), V(i, n, k), V(i + 1, n, k), V(i + 1, n, k + 1), V(i, n, k + 1), true);
    }
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      face(hex_cell(i), V(i, j, 0), V(i + 1, j, 0), V(i + 1, j + 1, 0), V(i, j + 1, 0), true);
      face(hex_cell(i), V(i, j, n), V(i + 1, j, n), V(i + 1, j + 1, n), V(i, j + 1, n), false);
    }
  m.validate("thermoelastic 3-D mesh");
  return m;
}

int run_thermoelastic(const ThermoelasticOptions& opt, std::ostream& out) {
  require_usage(opt.order >= 1, "thermoelastic: --order must be >= 1 (got ", opt.order, ")");
  require_usage(opt.tol > 0 && opt.tol < 1, "thermoelastic: the CG tolerance must lie in (0, 1), got ", opt.tol);
  require_usage(opt.study >= 0, "thermoelastic: --study must be >= 0 (got ", opt.study, ")");
  const Case c = parse_case(opt.mesh);
  if (c != Case::Spec)
    require_usage(opt.n >= 2 && opt.n % 2 == 0, "thermoelastic: --n ", opt.n,
                  " must be even and >= 2 (the quadrant interfaces x = 1/2, y = 1/2 must be cell faces)");
  const Exec exec = Exec::parse(opt.backend);
  if (!opt.output.empty()) check_vtu_output("thermoelastic", opt.output);
  const auto level_mesh = [&](int l) {
    if (c == Case::Square) return thermoelastic_mesh_2d(opt.n << l);
    if (c == Case::Cube) return thermoelastic_mesh_3d(opt.n << l);
    Mesh m = io::load_mesh(opt.mesh, l);
    check_mesh(m, opt.mesh);
    return m;
  };
  const int nlev = opt.study + 1;
  const std::string mesh_name = c == Case::Square ? "2-D unit square: triangles in quadrants 1, 4, quadrilaterals in 2, 3"
                                : c == Case::Cube ? "3-D unit cube: hexahedra for x < 1/2, tetrahedra for x > 1/2"
                                                  : opt.mesh;
  nlohmann::json runs = nlohmann::json::array();
  std::vector<Level> levels;
  std::vector<io::PvdEntry> collection;  // --output X.pvd: one .vtu per level
  int rc = 0;
  for (int l = 0; l < nlev; ++l) {
    const Mesh mesh = level_mesh(l);
    if (l == 0 && !opt.json) {
      const Materials mats = make_materials(c, mesh);
      out << "tessera thermoelastic: -div(k grad T) = f_T, then -div(sigma(u) - beta T_h I) = f_u; " << mesh_name
          << "; order " << opt.order << ", backend " << to_string(exec.backend) << "\n"
          << "materials: " << mats.describe << "\n"
          << "exact: T = phi / k, u = phi a / mu, phi = "
          << (mesh.dim() == 2 ? "sin(2 pi x) sin(2 pi y), a = (1, 1)" : "sin^2(2 pi x) sin(2 pi y) sin(pi z), a = (1, 1, 1)")
          << std::endl;
    }
    // --output: the last level's .vtu, or with a .pvd every level's
    const std::string level_output = opt.output.empty()        ? std::string()
                                     : is_collection(opt.output) ? level_file(opt.output, l)
                                     : l == nlev - 1             ? opt.output
                                                                 : std::string();
    const Level s = solve_level(opt, c, mesh, exec, out, level_output);
    if (!level_output.empty() && is_collection(opt.output))
      collection.push_back({double(l), std::filesystem::path(level_output).filename().string()});
    levels.push_back(s);
    if (!s.converged) rc = 3;
    nlohmann::json j{{"mesh", opt.mesh},
                     {"level", l},
                     {"order", opt.order},
                     {"backend", to_string(exec.backend)},
                     {"elements", s.elements},
                     {"elements_per_geometry", s.per_geometry},
                     {"t_dofs", s.t_dofs},
                     {"u_dofs", s.u_dofs},
                     {"t_nnz", s.t_nnz},
                     {"u_nnz", s.u_nnz},
                     {"t_iterations", s.t_iters},
                     {"u_iterations", s.u_iters},
                     {"t_rel_residual", s.t_res},
                     {"u_rel_residual", s.u_res},
                     {"converged", s.converged},
                     {"setup_s", s.setup_s},
                     {"assembly_ms", s.assembly_ms},
                     {"solve_s", s.solve_s},
                     {"t_l2_error", s.t_err.l2},
                     {"t_h1_error", s.t_err.h1},
                     {"u_l2_error", s.u_err.l2},
                     {"u_h1_error", s.u_err.h1}};
    if (c != Case::Spec) j["n"] = opt.n << l;
    if (l > 0) {
      const Level& p = levels[std::size_t(l - 1)];
      j["t_l2_rate"] = std::log2(p.t_err.l2 / s.t_err.l2);
      j["u_l2_rate"] = std::log2(p.u_err.l2 / s.u_err.l2);
      j["t_h1_rate"] = std::log2(p.t_err.h1 / s.t_err.h1);
      j["u_h1_rate"] = std::log2(p.u_err.h1 / s.u_err.h1);
    }
    runs.push_back(j);
    if (!opt.json) {
      out << std::setprecision(4);
      out << "level " << l;
      if (c != Case::Spec) out << " (n = " << (opt.n << l) << ")";
      out << ": " << s.elements << " elements (";
      const char* sep = "";
      for (const auto& [g, k] : s.per_geometry) out << std::exchange(sep, ", ") << g << " " << k;
      out << "), T " << s.t_dofs << " DOFs, u " << s.u_dofs << " DOFs; assembly " << s.assembly_ms << " ms, CG "
          << s.t_iters << " + " << s.u_iters << " iterations" << (s.converged ? "" : " (NOT converged)") << ", solve "
          << s.solve_s << " s; L2 error T " << s.t_err.l2 << ", u " << s.u_err.l2 << "; H1 error T " << s.t_err.h1
          << ", u " << s.u_err.h1;
      if (l > 0)
        out << "; rates L2 T " << j["t_l2_rate"].get<double>() << ", u " << j["u_l2_rate"].get<double>() << "; H1 T "
            << j["t_h1_rate"].get<double>() << ", u " << j["u_h1_rate"].get<double>();
      out << std::endl;  // one line per level, flushed
    }
  }
  if (!collection.empty()) {
    io::write_pvd(opt.output, collection);
    if (opt.json) std::fprintf(stderr, "wrote %s (a collection of %zu .vtu files, time = level)\n", opt.output.c_str(), collection.size());
    else out << "wrote " << opt.output << " (a collection of " << collection.size() << " .vtu files, time = level)\n";
  }
  if (opt.json) out << (runs.size() == 1 ? runs[0].dump() : runs.dump()) << std::endl;
  if (rc != 0)
    std::fprintf(stderr, "tessera: error: CG did not reach the tolerance %.1e within %d iterations\n", opt.tol,
                 opt.max_iters);
  return rc;
}

}  // namespace tessera::app
