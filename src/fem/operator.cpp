// Matrix-free mass and diffusion operators, Jacobi-preconditioned CG (linalg::pcg_jacobi),
// Dirichlet elimination (compiled by nvcc in CUDA builds).
#include "tessera/fem/operator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/core/reduce.hpp"
#include "tessera/fem/basis.hpp"
#include "operator/cpu_batched.hpp"
#include "tensor_sizes.hpp"

namespace tessera::fem {

const char* name(OperatorKind k) { return k == OperatorKind::Mass ? "mass" : "diffusion"; }

namespace operator_detail {

/// Point-wise part of the operator on the data at quadrature points (element-major layout).
void pointwise(const Exec& exec, OperatorKind kind, const GeometricFactors& gf, int comps, QuadratureData& qd) {
  const index_t ne = gf.num_elements;
  const int nq = gf.num_points, dim = gf.dim;
  if (kind == OperatorKind::Mass) {
    auto v = qd.values.view();
    auto w = gf.wdetJ.cview();
    forall("fem/operator_mass_qf", exec, Bounds<3>{ne, comps, nq},
           TESSERA_LAMBDA(index_t e, index_t c, index_t q) { v(e, c, 0, q) *= w(e, q); });
    return;
  }
  auto g = qd.reference_gradients.view();
  auto D = gf.D.cview();
  forall("fem/operator_diffusion_qf", exec, Bounds<3>{ne, comps, nq}, TESSERA_LAMBDA(index_t e, index_t c, index_t q) {
    double in[3] = {0, 0, 0}, out[3] = {0, 0, 0};
    for (int a = 0; a < dim; ++a) in[a] = g(e, c, a, q);
    for (int a = 0; a < dim; ++a)
      for (int b = 0; b < dim; ++b) out[a] += D(e, packed_symmetric_index(dim, a, b), q) * in[b];
    for (int a = 0; a < dim; ++a) g(e, c, a, q) = out[a];
  });
}

/// On-the-fly diffusion, composed: the physical gradients at the points times w det J.
void scale_gradients(const Exec& exec, const GeometricFactors& gf, int comps, QuadratureData& qd) {
  auto g = qd.gradients.view();
  auto w = gf.wdetJ.cview();
  const int dim = gf.dim;
  forall("fem/operator_diffusion_qf_otf", exec, Bounds<3>{gf.num_elements, comps, gf.num_points},
         TESSERA_LAMBDA(index_t e, index_t c, index_t q) {
           for (int a = 0; a < dim; ++a) g(e, c, a, q) *= w(e, q);
         });
}

/// Element diagonals: d(e, c, i) = sum_q factor * (phi_i)^2 or grad phi_i . D grad phi_i.
void element_diagonal(const Exec& exec, OperatorKind kind, const GeometricFactors& gf, const Array<double, 2>& Bt,
                      const Array<double, 3>& Gt, View<double, 3> d) {
  const int nq = gf.num_points, dim = gf.dim, comps = static_cast<int>(d.extent(1)), nd = static_cast<int>(d.extent(2));
  const auto B = Bt.cview();
  const auto G = Gt.cview();
  const bool mass = kind == OperatorKind::Mass;
  const auto w = gf.wdetJ.cview();
  const auto D = gf.D.cview();
  forall("fem/operator_diagonal", exec, Bounds<2>{gf.num_elements, nd}, TESSERA_LAMBDA(index_t e, index_t i) {
    double s = 0;
    for (int q = 0; q < nq; ++q) {
      if (mass) {
        s += w(e, q) * B(q, i) * B(q, i);
      } else {
        for (int a = 0; a < dim; ++a)
          for (int b = 0; b < dim; ++b) s += G(q, i, a) * D(e, packed_symmetric_index(dim, a, b), q) * G(q, i, b);
      }
    }
    for (int c = 0; c < comps; ++c) d(e, c, i) = s;
  });
}

/// Per pair of directions (a, b), a <= b, in the packed order of GeometricFactors::D (mass: one
/// pair): the offset of a stage's 1-D table (B1^2, B1 G1 or G1^2) and the pair's factor.
struct DiagonalPairs {
  index_t table[6];
  double scale[6];
};

/// One stage of the sum-factorized diagonal on a chunk of ce elements and P pairs: the
/// contraction of the point index k of one direction of X(e, p, l, k, r) (element stride xs,
/// pair stride xp; l < L, k < m, r < R) with the pair's 1-D table M_p(k, i) (m x n, row-major):
/// Y(e, p, l, i, r) = sum_k X(e, p, l, k, r) M_p(k, i), Y contiguous. The directions are
/// contracted from the slowest (z) to the fastest (x): l runs over the node indices of the
/// directions done (slow), r over the point indices of those to do (fast), so the last stage
/// (R = 1) leaves the nodes in lexicographic order.
void diagonal_stage(const Exec& exec, index_t ce, int P, const double* x, index_t xs, index_t xp, int L, int m, int R,
                    const double* tab, DiagonalPairs pairs, int n, double* y) {
  const index_t yp = index_t(L) * n * R, ys = P * yp;
  // one output per index (adjacent GPU threads: adjacent r, coalesced), the sum in a register
  forall("fem/operator_diagonal_stage", exec, Bounds<5>{ce, P, L, n, R},
         TESSERA_LAMBDA(int e, int p, int l, int i, int r) {
           const double* xe = x + e * xs + p * xp + index_t(l) * m * R + r;
           const double* M = tab + pairs.table[p] + i;
           double s = 0;
           for (int k = 0; k < m; ++k) s += M[k * n] * xe[index_t(k) * R];
           y[e * ys + p * yp + (index_t(l) * n + i) * R + r] = s;
         });
}

/// The last stage (direction x, R = 1), summed over the pairs with their factors, into
/// d(e0 + e, 0, l n + i) of the element diagonals.
void diagonal_last_stage(const Exec& exec, index_t ce, index_t e0, int P, const double* x, index_t xs, index_t xp,
                         int L, int m, const double* tab, DiagonalPairs pairs, int n, View<double, 3> d) {
  forall("fem/operator_diagonal_last", exec, Bounds<3>{ce, L, n}, TESSERA_LAMBDA(int e, int l, int i) {
    double s = 0;
    for (int p = 0; p < P; ++p) {
      const double* xe = x + e * xs + p * xp + index_t(l) * m;
      const double* M = tab + pairs.table[p];
      double sp = 0;
      for (int k = 0; k < m; ++k) sp += xe[k] * M[k * n + i];
      s += pairs.scale[p] * sp;
    }
    d(e0 + e, 0, l * n + i) = s;
  });
}

/// Element diagonals on quadrilaterals and hexahedra (tensor-product basis and rule) by sum
/// factorization. With T_ad = G1 (the 1-D derivative table) if d == a else B1 (values),
/// grad phi_i at q has the components A_a = prod_d T_ad(q_d, i_d), so
///   diag(i) = sum_{a, b} sum_q D_ab(q) prod_d T_ad(q_d, i_d) T_bd(q_d, i_d),
/// for each pair a <= b (twice for a < b) a contraction of D_ab(e, q) with the 1-D tables
/// M_d = T_ad T_bd (B1^2, B1 G1 or G1^2), one direction per stage (one launch for all pairs);
/// mass: one pair, w det J and B1^2. O(dim^2 (m^dim n + ... + m n^dim)) per element instead of
/// O(n^dim m^dim dim^2), for n = p + 1 nodes and m points per direction. Elements in chunks
/// (temporaries of at most 2 x 32 MB on the GPU, 2 x 2 MB on the CPU, where they stay in
/// cache). `tables1d`: (3, m, n) B1^2, B1 G1, G1^2 in exec's space.
void tensor_element_diagonal(const Exec& exec, OperatorKind kind, const GeometricFactors& gf,
                             const Array<double, 3>& tables1d, View<double, 3> d) {
  const int dim = gf.dim, comps = static_cast<int>(d.extent(1)), nd = static_cast<int>(d.extent(2));
  const int m = static_cast<int>(tables1d.extent(1)), n = static_cast<int>(tables1d.extent(2));
  const index_t ne = gf.num_elements;
  const int nq = gf.num_points;
  TESSERA_REQUIRE((dim == 2 || dim == 3) && ipow(m, dim) == nq && ipow(n, dim) == nd, "fem::H1Operator::diagonal: ",
                  nq, " points and ", nd, " nodes per element are not the tensor products of ", m, " and ", n,
                  " in ", dim, " dimensions");
  const bool mass = kind == OperatorKind::Mass;
  const int P = mass ? 1 : num_packed_symmetric(dim);
  // the pairs in D's packed order (a <= b, row by row), each stage's table
  DiagonalPairs stage[3];
  for (int s = 0; s < dim; ++s) {
    int p = 0;
    for (int a = 0; a < (mass ? 1 : dim); ++a)
      for (int b = a; b < (mass ? 1 : dim); ++b, ++p) {
        const int t = mass ? 0 : int(s == a) + int(s == b);  // B1^2, B1 G1 or G1^2
        stage[s].table[p] = index_t(t) * m * n;
        stage[s].scale[p] = mass || a == b ? 1.0 : 2.0;
      }
  }
  // largest intermediate per pair (after the stages of directions dim - 1 .. s): n^(dim - s) m^s
  index_t tmp = 1;
  for (int s = dim - 1; s >= 1; --s) tmp = std::max<index_t>(tmp, index_t(ipow(n, dim - s)) * ipow(m, s));
  tmp *= P;
  const index_t budget = exec.on_device() ? index_t(32) << 20 : index_t(2) << 20;  // bytes per buffer
  const index_t chunk = std::clamp<index_t>(budget / (tmp * index_t(sizeof(double))), 1, std::max<index_t>(ne, 1));
  Array<double, 1> t0("operator_diagonal_t0", {chunk * tmp}, exec.space());
  Array<double, 1> t1("operator_diagonal_t1", {chunk * tmp}, exec.space());
  double* buf[2] = {t0.data(), t1.data()};
  const double* tab = tables1d.data();
  const double* src = mass ? gf.wdetJ.data() : gf.D.data();
  const index_t src_stride = index_t(P) * nq;
  for (index_t e0 = 0; e0 < ne; e0 += chunk) {
    const index_t ce = std::min(chunk, ne - e0);
    const double* x = src + e0 * src_stride;
    index_t xs = src_stride, xp = nq;
    int L = 1;
    for (int s = dim - 1; s >= 1; --s) {
      double* y = buf[s % 2];
      diagonal_stage(exec, ce, P, x, xs, xp, L, m, ipow(m, s), tab, stage[s], n, y);
      x = y;
      L *= n;
      xp = index_t(L) * ipow(m, s);
      xs = P * xp;
    }
    diagonal_last_stage(exec, ce, e0, P, x, xs, xp, L, m, tab, stage[0], n, d);
  }
  if (comps > 1)
    forall("fem/operator_diagonal_components", exec, Bounds<3>{ne, comps - 1, nd},
           TESSERA_LAMBDA(index_t e, index_t c, index_t i) { d(e, c + 1, i) = d(e, 0, i); });
}

void fill(const Exec& exec, View<double, 1> y, double v) {
  forall("fem/fill", exec, y.size(), TESSERA_LAMBDA(index_t i) { y(i) = v; });
}

}  // namespace operator_detail

namespace od = operator_detail;

H1Operator::H1Operator(const H1Space& space, OperatorKind kind, Exec exec, int degree, bool fused)
    : H1Operator(space, kind, exec, OperatorOptions{degree, QuadratureType::Gauss, GeometrySource::Stored, fused}) {}

H1Operator::H1Operator(const H1Space& space, OperatorKind kind, Exec exec, const OperatorOptions& options)
    : kind_(kind), exec_(exec), opt_(options), mesh_(&space.mesh()), n_(space.num_dofs()) {
  const Mesh& mesh = space.mesh();
  const int p = space.order();
  exclusive_from_ = space.exclusive_from();
  comps_ = space.components();
  const bool gll = opt_.quadrature == QuadratureType::GaussLobatto;
  // Default: q = p + 2 Gauss points per direction (degree 2p + 3) where the mesh has
  // quadrilaterals or hexahedra; on triangles and tetrahedra alone, degree 2p, exact for both
  // operators on their affine elements (2p + 3 would take 27 points for a linear tetrahedron).
  bool any_tensor = false;
  for (Geometry g : {Geometry::Quadrilateral, Geometry::Hexahedron})
    any_tensor = any_tensor || (mesh.num_elements(g) > 0 && fem::dim(g) == mesh.dim());
  // A curved mesh of order k adds dim (k - 1) to the simplices' degree (that of det J): the
  // mass matrix stays exact.
  const int curved = mesh.has_nodes() ? mesh.dim() * (mesh.nodes_order() - 1) : 0;
  degree_ = opt_.degree >= 0 ? opt_.degree : gll ? 2 * p - 1 : any_tensor ? 2 * p + 3 : 2 * p + curved;
  const bool mass = kind == OperatorKind::Mass;
  const int exact = mass ? 2 * p : std::max(0, 2 * p - 2);
  TESSERA_REQUIRE(degree_ >= exact, "fem::H1Operator (", name(kind), "): a quadrature of degree ", degree_,
                  " does not integrate the order-", p, " ", name(kind), " matrix exactly (degree >= ",
                  mass ? "2p = " : "2p - 2 = ", exact, " needed", gll && mass ? "; Gauss-Lobatto with q = p + 1 "
                  "points (degree 2p - 1) is exact for diffusion only" : "", ")");
  const bool otf = opt_.geometry == GeometrySource::OnTheFly;
  TESSERA_REQUIRE(!otf || !mesh.has_nodes(), "fem::H1Operator (", name(kind),
                  "): on-the-fly geometry recomputes J from the element vertices, which do not describe this "
                  "curved mesh (order-", mesh.nodes_order(), " nodes); use stored geometry (GeometrySource::Stored, "
                  "the default) on curved meshes");
  TESSERA_REQUIRE(opt_.elements_per_item >= 0 && opt_.elements_per_block >= 0,
                  "fem::H1Operator: elements per item and per block must be >= 0 (0: automatic), got ",
                  opt_.elements_per_item, " and ", opt_.elements_per_block);
  FusedOperatorOptions fo;
  fo.elements_per_item = opt_.elements_per_item;
  fo.simplex_tables = opt_.simplex_tables;
  fo.kernels = opt_.kernels;
  for (Geometry g : {Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron, Geometry::Hexahedron}) {
    if (mesh.num_elements(g) == 0 || fem::dim(g) != mesh.dim()) continue;
    const QuadratureRule rule = quadrature(g, degree_, opt_.quadrature);
    // the fused kernel where it fits, else the interpolation kernels composed
    std::optional<FusedOperator> op;
    std::optional<Interpolator> interp;
    if (opt_.fused) {
      op.emplace(space, g, rule, exec, fo);
      if (!op->fits(!mass, otf)) op.reset();
    }
    if (!op) {
      InterpolatorOptions io;
      io.use_tuning_cache = true;
      io.geometry = otf ? GeometrySource::OnTheFly : GeometrySource::Stored;
      io.elements_per_item = opt_.elements_per_item;
      io.simplex_tables = opt_.simplex_tables;
      io.kernels = opt_.kernels;
      interp.emplace(space, g, rule, exec, io);
    }
    const bool fused_part = op.has_value();
    // What apply reads: stored -> w det J or D; on the fly, fused -> nothing (the kernel
    // recomputes both); on the fly, composed -> w det J (J^-1 comes from the interpolator).
    // CPU backends: the element-batched kernel, which keeps its own copy of the factors (by
    // batch, or once per affine element: on a mesh of affine elements the per-point factors
    // are never computed; on the fly, the first-order map of the other elements); gf stays
    // empty (apply_element computes it once, the diagonal comes from the batched kernel).
    const auto stored = [&] {
      return geometric_factors(mesh, g, rule, exec, mass ? GeometricFactorFlags::WDetJ : GeometricFactorFlags::D);
    };
    const bool cpu_batched = fused_part && !exec.on_device() && opt_.kernels.cpu_batched;
    std::shared_ptr<const cpu_detail::BatchedOperator> batched;
    GeometricFactors gf;
    if (cpu_batched)
      batched = cpu_detail::make_batched(mesh, op->restriction(), g, p, rule, !mass, stored, exec,
                                         opt_.compress_geometry, opt_.kernels.exact, 64, otf);
    // The team kernels (GPU; CPU with cpu_batched = false) with compressed geometry: one factor
    // per element where every element is affine and the kernel that serves reads them
    // (FusedOperator::reads_element_factors); otherwise the factors at every point.
    Array<double, 1> element_factors;
    if (!batched && !otf && fused_part && opt_.compress_geometry && op->reads_element_factors(!mass)) {
      std::vector<double> factor;
      std::vector<std::uint8_t> affine;
      const index_t ne = op->num_elements();
      if (ne > 0 && cpu_detail::affine_element_factors(mesh, op->restriction(), g, !mass, factor, affine) == ne)
        element_factors = Array<double, 1>::from("operator_element_factors", factor, exec.space());
    }
    if (!batched && !otf) {
      if (element_factors.size() == 0) gf = stored();
    } else if (!fused_part)
      gf = geometric_factors(mesh, g, rule, exec, GeometricFactorFlags::WDetJ);
    else if (!batched)
      op->prepare(true);  // gathers the vertices once; names an inverted element
    const BasisTables t = tabulate(H1Basis(g, p), rule);
    const Eval what = mass ? Eval::Values : otf ? Eval::Gradients : Eval::ReferenceGradients;
    // Point buffers only for the composed path (the fused kernel keeps its point data in
    // shared memory): at 8M DOFs they would hold ~1 GB that the fused path never touches.
    QuadratureData qd = fused_part ? QuadratureData{} : interp->allocate(what);
    parts_.push_back(Part{std::move(op), std::move(interp), rule, std::move(gf),
                          exec.on_device() ? t.B.to_device() : t.B, exec.on_device() ? t.G.to_device() : t.G,
                          std::move(qd), std::move(batched), std::move(element_factors), {}, {}});
  }
  TESSERA_REQUIRE(!parts_.empty(), "fem::H1Operator: the mesh has no triangles, quadrilaterals, tetrahedra or "
                                   "hexahedra of its dimension");
  // Stores instead of additions for the nodes of one element, and no fill for them, where the
  // numbering keeps those nodes last (SharedFirst: Auto from p = 4, where it was measured) and
  // every part runs a fused kernel that stores them (not the one-thread-per-element kernels).
  const bool diffusion = kind_ == OperatorKind::Diffusion;
  store_exclusive_ = space.ordering() == NodeOrdering::SharedFirst &&
                     std::all_of(parts_.begin(), parts_.end(), [&](const Part& part) {
                       return part.fused() && !part.batched && part.op->stores_exclusive(diffusion);
                     });
}

void H1Operator::apply(View<const double, 1> x, View<double, 1> y) const {
  TESSERA_REQUIRE(x.size() == n_ && y.size() == n_, "fem::H1Operator::apply: vectors of ", x.size(), " and ",
                  y.size(), " entries, expected ", n_);
  // One part on the CPU's batched kernel that meets every node: it stores where it meets a
  // node first, so y needs no zero fill (a pass over y less).
  if (parts_.size() == 1 && parts_[0].batched && parts_[0].batched->covers_every_node()) {
    parts_[0].batched->apply(x.data(), y.data());
    return;
  }
  // With store_exclusive_, the nodes that one element uses alone (from exclusive_from_ on) are
  // stored by their element's kernel, so only the shared ones are zero filled. With the
  // SharedFirst numbering (the default from p = 4) against first touch, where nearly every node
  // is filled and added: H100, 8M DOFs, same run, p = 4..10, stored BP1-BP6 1.02-1.13x, on the
  // fly 1.01-1.10x (docs/benchmarks/operators.md, section "Shared nodes first ...")
  const OperatorScatter scatter = store_exclusive_ ? OperatorScatter::StoreExclusive : OperatorScatter::Add;
  if (store_exclusive_) {
    const index_t nodes = n_ / comps_;  // each component's nodes 0 .. exclusive_from_ - 1
    const int comps = comps_;
    double* yp = y.data();
    forall("fem/fill_shared", exec_, exclusive_from_, TESSERA_LAMBDA(index_t i) {
      for (int c = 0; c < comps; ++c) yp[c * nodes + i] = 0.0;
    });
  } else {
    od::fill(exec_, y, 0.0);
  }
  const bool otf = opt_.geometry == GeometrySource::OnTheFly;
  const bool diffusion = kind_ == OperatorKind::Diffusion;
  const Eval what = !diffusion ? Eval::Values : otf ? Eval::Gradients : Eval::ReferenceGradients;
  for (const Part& part : parts_) {
    if (part.batched) {
      part.batched->apply_add(x.data(), y.data());
      continue;
    }
    if (part.fused()) {
      const double* qdata = otf                             ? nullptr
                            : part.element_factors.size() > 0 ? part.element_factors.data()
                            : diffusion                       ? part.gf.D.data()
                                                              : part.gf.wdetJ.data();
      part.op->apply(plan_of(part, false), qdata, x, y, scatter);
      continue;
    }
    const Interpolator& in = *part.interp;
    in.interpolate(x, what, part.qd);
    if (otf && diffusion) od::scale_gradients(exec_, part.gf, in.components(), part.qd);
    else od::pointwise(exec_, kind_, part.gf, in.components(), part.qd);
    in.integrate_add(part.qd, what, y);
  }
}

void H1Operator::apply_element(View<const double, 3> xe, View<double, 3> ye) const {
  TESSERA_REQUIRE(parts_.size() == 1 && parts_[0].fused(),
                  "fem::H1Operator::apply_element: element-level applies need a mesh of one element type and "
                  "the fused kernels (OperatorOptions::fused; on the GPU, point data that fits shared memory)");
  const Part& part = parts_[0];
  const bool otf = opt_.geometry == GeometrySource::OnTheFly;
  const bool diffusion = kind_ == OperatorKind::Diffusion;
  // The batched kernel released the stored factors: computed again at the first element-level
  // apply and kept for the next ones.
  if ((part.batched || part.element_factors.size() > 0) && !otf &&
      (diffusion ? part.gf.D.size() : part.gf.wdetJ.size()) == 0)
    part.gf = geometric_factors(*mesh_, part.op->geometry(), part.rule, exec_,
                                diffusion ? GeometricFactorFlags::D : GeometricFactorFlags::WDetJ);
  const GeometricFactors& gf = part.gf;
  const double* qdata = otf ? nullptr : diffusion ? gf.D.data() : gf.wdetJ.data();
  part.op->apply_element(plan_of(part, true), qdata, xe, ye);
}

const OperatorPlan& H1Operator::plan_of(const Part& part, bool element) const {
  std::optional<OperatorPlan>& p = element ? part.element_plan : part.plan;
  if (!p) {
    p = part.op->plan(kind_ == OperatorKind::Diffusion, opt_.geometry == GeometrySource::OnTheFly, element,
                      opt_.elements_per_block);
    p->element_factors = !element && part.element_factors.size() > 0;  // apply_element reads gf
  }
  return *p;
}

namespace {
template <class Parts>
const FusedOperator* first_fused(const Parts& parts) {
  for (const auto& p : parts)
    if (p.fused()) return &*p.op;
  return nullptr;
}
}  // namespace

int H1Operator::elements_per_block(bool element, std::string* source) const {
  const FusedOperator* in = first_fused(parts_);
  if (!in) return 0;
  if (opt_.elements_per_block > 0) {
    if (source) *source = "option";
    return opt_.elements_per_block;
  }
  return in->elements_per_block(kind_ == OperatorKind::Diffusion, opt_.geometry == GeometrySource::OnTheFly, element,
                                source);
}

int H1Operator::max_elements_per_block(bool element) const {
  const FusedOperator* in = first_fused(parts_);
  return in ? in->max_elements_per_block(kind_ == OperatorKind::Diffusion, opt_.geometry == GeometrySource::OnTheFly,
                                         element)
            : 0;
}

int H1Operator::elements_per_item(bool element, std::string* source) const {
  const FusedOperator* in = first_fused(parts_);
  return in ? in->elements_per_item(kind_ == OperatorKind::Diffusion, opt_.geometry == GeometrySource::OnTheFly,
                                    element, source)
            : 0;
}

void H1Operator::set_elements_per_item(int k) {
  TESSERA_REQUIRE(k >= 0, "fem::H1Operator: elements per item must be >= 0 (0: automatic), got ", k);
  opt_.elements_per_item = k;
  for (Part& p : parts_) {
    if (p.op) p.op->set_elements_per_item(k);
    else p.interp->set_elements_per_item(k);
    p.forget_plans();
  }
}

std::string H1Operator::tuning_key(bool element) const {
  const FusedOperator* in = first_fused(parts_);
  return in ? in->key(kind_ == OperatorKind::Diffusion, opt_.geometry == GeometrySource::OnTheFly, element)
            : std::string();
}

void H1Operator::set_elements_per_block(int epb) {
  TESSERA_REQUIRE(epb >= 0, "fem::H1Operator: elements per block must be >= 0 (0: automatic), got ", epb);
  opt_.elements_per_block = epb;
  for (Part& p : parts_) p.forget_plans();
}

index_t H1Operator::compressed_elements() const {
  index_t n = 0;
  for (const Part& part : parts_)
    n += part.batched                         ? part.batched->compressed_elements()
         : part.element_factors.size() > 0 ? part.restriction().num_elements()
                                           : 0;
  return n;
}

H1Operator::CpuKernelInfo H1Operator::cpu_kernel() const {
  CpuKernelInfo info;
  for (const Part& part : parts_) {
    if (!part.batched) continue;
    const auto& b = *part.batched;
    const index_t ne = part.restriction().num_elements();
    info.batched_elements += ne;
    info.lanes = b.lanes();
    info.compressed_elements += b.compressed_elements();
    info.geometry_bytes += b.geometry_bytes();
    info.index_bytes += b.index_bytes();
    info.threads = std::max(info.threads, b.threads());
    info.shared_batches += b.batches() - b.interior_batches();
    info.colours = std::max(info.colours, b.colours());
    info.vector_access_share += b.vector_access_share() * double(ne);
  }
  if (info.batched_elements > 0) info.vector_access_share /= double(info.batched_elements);
  return info;
}

Array<double, 1> H1Operator::diagonal() const { return diagonal(true); }

Array<double, 1> operator_detail::naive_diagonal(const H1Operator& A) { return A.diagonal(false); }

Array<double, 1> H1Operator::diagonal(bool sum_factorized) const {
  Array<double, 1> d("operator_diagonal", {n_}, exec_.space());
  const bool mass = kind_ == OperatorKind::Mass;
  const auto flag = mass ? GeometricFactorFlags::WDetJ : GeometricFactorFlags::D;
  for (const Part& part : parts_) {
    if (part.batched && sum_factorized) {  // from the batched kernel's own factors
      part.batched->diagonal_add(d.data());
      continue;
    }
    const auto& r = part.restriction();
    Array<double, 3> de("operator_diagonal_e", {r.num_elements(), r.components(), r.nodes_per_element()},
                        exec_.space());
    // On the fly, apply holds no D (diffusion) or nothing at all (fused): computed here for
    // the once-per-solve diagonal and released.
    const bool have = mass ? part.gf.wdetJ.size() > 0 : part.gf.D.size() > 0;
    const Geometry g = part.rule.geom;
    const GeometricFactors gf = have ? part.gf : geometric_factors(*mesh_, g, part.rule, exec_, flag);
    if (sum_factorized && is_tensor(g)) {
      // the 1-D tables at the rule's 1-D points (the rule is a tensor product, x fastest, as
      // the Interpolator checked), as products B1^2, B1 G1, G1^2: (3, m, n)
      const QuadratureRule rule = part.rule.to_host();
      const int m = rule.n1d;
      std::vector<double> x1(static_cast<std::size_t>(m));
      for (int k = 0; k < m; ++k) x1[std::size_t(k)] = rule.points(k, 0);
      const BasisTables1D t = tabulate(H1Basis(g, part.order()).basis_1d(), std::span<const double>(x1));
      const int n = static_cast<int>(t.B.extent(1));
      Array<double, 3> tab("operator_diagonal_tables", {3, m, n});
      for (int k = 0; k < m; ++k)
        for (int i = 0; i < n; ++i) {
          tab(0, k, i) = t.B(k, i) * t.B(k, i);
          tab(1, k, i) = t.B(k, i) * t.G(k, i);
          tab(2, k, i) = t.G(k, i) * t.G(k, i);
        }
      od::tensor_element_diagonal(exec_, kind_, gf, exec_.on_device() ? tab.to_device() : tab, de.view());
    } else {
      od::element_diagonal(exec_, kind_, gf, part.B, part.G, de.view());
    }
    r.scatter_add(de.cview(), d.view());
  }
  return d;
}

// ------------------------------------------------------------------ CG

CgResult cg(const std::function<void(View<const double, 1>, View<double, 1>)>& apply, View<const double, 1> inv_diag,
            View<const double, 1> b, View<double, 1> x, const Exec& exec, const CgOptions& opt) {
  const index_t n = b.size();
  TESSERA_REQUIRE(x.size() == n && inv_diag.size() == n, "cg: vectors of different sizes (b ", n, ", x ", x.size(),
                  ", inverse diagonal ", inv_diag.size(), ")");
  CgResult res = linalg::pcg_jacobi(apply, inv_diag, b, x, exec, opt);
  TESSERA_REQUIRE(!res.breakdown, "fem::cg: ", res.message);
  return res;
}

// ------------------------------------------------------------------ Dirichlet elimination

Constrained::Constrained(const H1Operator& A, const std::vector<index_t>& dofs)
    : A_(&A),
      dofs_(Array<index_t, 1>::from("constrained_dofs", std::span<const index_t>(dofs), A.exec().space())),
      tmp_("constrained_tmp", {A.size()}, A.exec().space()) {
  for (index_t d : dofs)
    TESSERA_REQUIRE(d >= 0 && d < A.size(), "fem::Constrained: dof ", d, " is outside 0..", A.size() - 1);
}

void Constrained::apply(View<const double, 1> x, View<double, 1> y) const {
  const Exec& exec = A_->exec();
  auto t = tmp_.view();
  auto c = dofs_.cview();
  forall("fem/constrained_copy", exec, x.size(), TESSERA_LAMBDA(index_t i) { t(i) = x(i); });
  forall("fem/constrained_zero", exec, c.size(), TESSERA_LAMBDA(index_t k) { t(c(k)) = 0; });
  A_->apply(tmp_.cview(), y);
  forall("fem/constrained_identity", exec, c.size(), TESSERA_LAMBDA(index_t k) { y(c(k)) = x(c(k)); });
}

void Constrained::apply_homogeneous(View<const double, 1> x, View<double, 1> y) const {
  auto c = dofs_.cview();
  A_->apply(x, y);
  forall("fem/constrained_zero_rows", A_->exec(), c.size(), TESSERA_LAMBDA(index_t k) { y(c(k)) = 0; });
}

namespace {
/// out = b - A t for the lift t (x_bc on the constrained entries c, 0 elsewhere), left in t:
/// the common part of Constrained::eliminate_rhs and Constrained::solve. out may be b.
void lift_residual(const H1Operator& A, View<const index_t, 1> c, View<double, 1> t, View<const double, 1> b,
                   View<const double, 1> x_bc, View<double, 1> out) {
  const Exec& exec = A.exec();
  forall("fem/constrained_zero_all", exec, t.size(), TESSERA_LAMBDA(index_t i) { t(i) = 0; });
  forall("fem/constrained_bc", exec, c.size(), TESSERA_LAMBDA(index_t k) { t(c(k)) = x_bc(c(k)); });
  Array<double, 1> At("constrained_At", {A.size()}, exec.space());
  A.apply(t, At.view());
  auto a = At.cview();
  forall("fem/constrained_rhs", exec, b.size(), TESSERA_LAMBDA(index_t i) { out(i) = b(i) - a(i); });
}
}  // namespace

CgResult Constrained::solve(View<const double, 1> b, View<const double, 1> x_bc, View<double, 1> x,
                            const CgOptions& options, View<const double, 1> inv_diag) const {
  const Exec& exec = A_->exec();
  const index_t n = A_->size();
  TESSERA_REQUIRE(b.size() == n && x_bc.size() == n && x.size() == n, "fem::Constrained::solve: vectors of ",
                  b.size(), ", ", x_bc.size(), " and ", x.size(), " entries for an operator of ", n);
  TESSERA_REQUIRE(inv_diag.size() == 0 || inv_diag.size() == n, "fem::Constrained::solve: an inverse diagonal of ",
                  inv_diag.size(), " entries for an operator of ", n);
  auto c = dofs_.cview();
  // d = b - A t for the lift t (kept in tmp_, added at the end), 0 on the constrained entries
  Array<double, 1> d("constrained_d", {n}, exec.space());
  auto dv = d.view();
  lift_residual(*A_, c, tmp_.view(), b, x_bc, dv);
  forall("fem/constrained_rhs_zero", exec, c.size(), TESSERA_LAMBDA(index_t k) { dv(c(k)) = 0; });
  Array<double, 1> own;
  if (inv_diag.size() == 0) {
    own = inverse_diagonal();
    inv_diag = own.cview();
  }
  forall("fem/constrained_start", exec, n, TESSERA_LAMBDA(index_t i) { x(i) = 0; });
  // tmp_ holds the lift: the solver's applies must not use it (apply_homogeneous does not)
  const CgResult r = cg([&](View<const double, 1> a, View<double, 1> y) { apply_homogeneous(a, y); }, inv_diag,
                        d.cview(), x, exec, options);
  auto t = tmp_.cview();
  forall("fem/constrained_lift", exec, n, TESSERA_LAMBDA(index_t i) { x(i) += t(i); });
  return r;
}

CgResult Constrained::solve(View<const double, 1> b, View<const double, 1> x_bc, View<double, 1> x,
                            const CgOptions& options, const linalg::LinearOperator& M) const {
  const Exec& exec = A_->exec();
  const index_t n = A_->size();
  TESSERA_REQUIRE(b.size() == n && x_bc.size() == n && x.size() == n, "fem::Constrained::solve: vectors of ",
                  b.size(), ", ", x_bc.size(), " and ", x.size(), " entries for an operator of ", n);
  auto c = dofs_.cview();
  Array<double, 1> d("constrained_d", {n}, exec.space());
  auto dv = d.view();
  lift_residual(*A_, c, tmp_.view(), b, x_bc, dv);
  forall("fem/constrained_rhs_zero", exec, c.size(), TESSERA_LAMBDA(index_t k) { dv(c(k)) = 0; });
  forall("fem/constrained_start", exec, n, TESSERA_LAMBDA(index_t i) { x(i) = 0; });
  const CgResult r = linalg::pcg([&](View<const double, 1> a, View<double, 1> y) { apply_homogeneous(a, y); }, M,
                                 d.cview(), x, exec, options);
  TESSERA_REQUIRE(!r.breakdown, "fem::Constrained::solve: ", r.message);
  auto t = tmp_.cview();
  forall("fem/constrained_lift", exec, n, TESSERA_LAMBDA(index_t i) { x(i) += t(i); });
  return r;
}

void Constrained::eliminate_rhs(View<const double, 1> b, View<const double, 1> x_bc, View<double, 1> out) const {
  // out = b - A t for the lift t, and x_bc on the constrained entries
  auto c = dofs_.cview();
  lift_residual(*A_, c, tmp_.view(), b, x_bc, out);
  forall("fem/constrained_rhs_bc", A_->exec(), c.size(), TESSERA_LAMBDA(index_t k) { out(c(k)) = x_bc(c(k)); });
}

Array<double, 1> Constrained::inverse_diagonal() const {
  Array<double, 1> d = A_->diagonal();
  auto dv = d.view();
  auto c = dofs_.cview();
  forall("fem/inverse_diagonal", A_->exec(), d.size(), TESSERA_LAMBDA(index_t i) { dv(i) = 1.0 / dv(i); });
  forall("fem/constrained_diag_one", A_->exec(), c.size(), TESSERA_LAMBDA(index_t k) { dv(c(k)) = 1.0; });
  return d;
}

}  // namespace tessera::fem
