// Interpolation at quadrature points and its transpose (compiled by nvcc in CUDA builds).
#include "tessera/fem/interpolate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "interpolate_internal.hpp"
#include "interpolate_kernels.hpp"
#include "element_tables.hpp"
#include "operator/cpu_interp.hpp"
#include "tessera/core/device.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/core/memory.hpp"
#include "tessera/core/tuning.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {


namespace ia = interp_detail;
using ia::check_vector;
using ia::item_threads;
using ia::kMaxBlockThreads;
using ia::kMaxSimplexThreads;
using ia::kSharedTableBytes;

namespace {

bool grads_of(Eval w) { return has(w, Eval::ReferenceGradients) || has(w, Eval::Gradients); }

}  // namespace

std::string name(Eval e) {
  std::string s;
  const auto add = [&](Eval f, const char* n) {
    if (!has(e, f)) return;
    if (!s.empty()) s += '+';
    s += n;
  };
  add(Eval::Values, "values");
  add(Eval::ReferenceGradients, "reference-gradients");
  add(Eval::Gradients, "gradients");
  return s.empty() ? "none" : s;
}

Eval parse_eval(const std::string& text) {
  Eval e = Eval::None;
  std::stringstream ss(text);
  std::string w;
  while (std::getline(ss, w, '+')) {
    if (w == "values" || w == "value") e = e | Eval::Values;
    else if (w == "reference-gradients" || w == "ref-grad" || w == "refgrad") e = e | Eval::ReferenceGradients;
    else if (w == "gradients" || w == "grad") e = e | Eval::Gradients;
    else
      fail("unknown evaluation '", w, "' in '", text,
           "' (valid: values, reference-gradients (ref-grad), gradients (grad), joined with '+')");
  }
  TESSERA_REQUIRE(e != Eval::None, "empty evaluation '", text, "' (valid: values, ref-grad, grad joined with '+')");
  return e;
}

const char* name(QuadLayout l) { return l == QuadLayout::ElementMajor ? "element-major" : "component-major"; }
const char* name(GeometrySource s) { return s == GeometrySource::OnTheFly ? "on-the-fly" : "stored"; }

std::string InterpolationKernel::key() const {
  std::ostringstream o;
  o << (transpose ? "integrate/" : "interpolate/") << fem::name(geom) << "/p" << order << "/q" << points << "/c"
    << components << "/" << name(what) << "/" << name(layout);
  if (has(what, Eval::Gradients)) o << "/" << name(geometry);
  if (threads_per_element > 0 && !is_tensor(geom)) o << "/t" << threads_per_element;
  if (!transpose) o << "/k" << elements_per_item;
  return o.str();
}


int interpolation_heuristic_epb(const InterpolationKernel& k) {
  const int d = dim(k.geom);
  const int nd = num_nodes(k.geom, k.order);
  const int nd1 = k.order + 1;
  const Dim3 t = item_threads(k.geom, nd, k.points, nd1, k.points_1d, k.threads_per_element);
  const int tpi = t.x * t.y * t.z;
  const int cap = d == 2 ? 32 : 16;
  return std::clamp((256 + tpi / 2) / tpi, 1, cap);
}

// ------------------------------------------------------------------ set-up

Interpolator::Interpolator(const H1Space& space, Geometry g, const QuadratureRule& rule, Exec exec,
                           InterpolatorOptions options)
    : ElementBase("fem::Interpolator", space, g, rule, exec), opt_(options) {
  TESSERA_REQUIRE(options.elements_per_block >= 0, "fem::Interpolator: elements_per_block must be >= 0 (0 = auto), got ",
                  options.elements_per_block);
  TESSERA_REQUIRE(options.elements_per_item >= 0, "fem::Interpolator: elements_per_item must be >= 0 (0 = auto), got ",
                  options.elements_per_item);
  TESSERA_REQUIRE(options.threads_per_element >= 0, "fem::Interpolator: threads_per_element must be >= 0 (0 = auto), got ",
                  options.threads_per_element);
  // on-the-fly geometry works from the vertices: a curved mesh reads stored J^-1 instead
  if (mesh_->has_nodes()) opt_.geometry = GeometrySource::Stored;
}

void Interpolator::ensure_geometry() const {
  TESSERA_REQUIRE(sdim_ == dim_, "fem::Interpolator: physical gradients on ", name(geom_),
                  " elements need a mesh of space dimension ", dim_, " (this mesh has ", sdim_,
                  "); use reference gradients for embedded elements");
  if (opt_.geometry == GeometrySource::OnTheFly) {
    ensure_vertices();
  } else {
    if (Jinv_.size() > 0) return;
    Jinv_ = geometric_factors(*mesh_, geom_, tables_->rule, exec_, GeometricFactorFlags::Jinv).Jinv;
  }
}

void Interpolator::ensure_vertices() const {
  if (X_.size() == 0) X_ = ia::element_vertices(*mesh_, geom_, tables_->rule, exec_);
}

// ------------------------------------------------------------------ sizes and choices

std::size_t Interpolator::shared_bytes_parts(bool transpose, Eval what, std::size_t* common) const {
  const bool G = grads_of(what);
  const bool X = has(what, Eval::Gradients) && opt_.geometry == GeometrySource::OnTheFly;
  const int nx = X ? nv_ * sdim_ : 0;
  SharedLayout c, it;
  if (tensor_) {
    const int n1 = nd1_, m1 = nq1_;
    c.add<double>(n1 * m1).add<double>(G ? n1 * m1 : 0).add<double>(m1);
    if (dim_ == 2) {
      if (!transpose)
        it.add<int>(chunk() * nd_).add<double>(2 * nd_).add<double>(n1 * m1).add<double>(G ? n1 * m1 : 0)
            .add<double>(chunk() * nx);
      else
        it.add<double>(nq_).add<double>(G ? nq_ : 0).add<double>(G ? nq_ : 0).add<double>(n1 * m1)
            .add<double>(G ? n1 * m1 : 0).add<double>(nx);
    } else {
      if (!transpose)
        it.add<int>(chunk() * nd_).add<double>(2 * nd_).add<double>(n1 * n1 * m1)
            .add<double>(G ? n1 * n1 * m1 : 0).add<double>(n1 * m1 * m1).add<double>(G ? n1 * m1 * m1 : 0)
            .add<double>(G ? n1 * m1 * m1 : 0).add<double>(chunk() * nx);
      else
        it.add<double>(nq_).add<double>(G ? nq_ : 0).add<double>(G ? nq_ : 0).add<double>(G ? nq_ : 0)
            .add<double>(n1 * m1 * m1).add<double>(G ? n1 * m1 * m1 : 0).add<double>(G ? n1 * m1 * m1 : 0)
            .add<double>(n1 * n1 * m1).add<double>(G ? n1 * n1 * m1 : 0).add<double>(nx);
    }
  } else {
    const bool ts = tables_in_shared(what);
    c.add<double>(ts ? nd_ * nq_ : 0).add<double>(ts && G ? dim_ * nd_ * nq_ : 0);
    if (!transpose) it.add<int>(chunk() * nd_).add<double>(2 * comps_ * nd_).add<double>(chunk() * nx);
    else it.add<double>(comps_ * nq_).add<double>(G ? comps_ * dim_ * nq_ : 0).add<double>(nx);
  }
  *common = c.bytes();
  return it.bytes();
}

bool Interpolator::tables_in_shared(Eval what) const {
  if (tensor_) return true;
  switch (opt_.simplex_tables) {
    case TableMemory::Shared: return true;
    case TableMemory::Global: return false;
    case TableMemory::Auto: break;
  }
  const std::size_t bytes = std::size_t(nd_) * nq_ * (grads_of(what) ? 1 + dim_ : 1) * sizeof(double);
  return bytes <= kSharedTableBytes;
}

std::size_t Interpolator::shared_bytes(Eval what, bool transpose, int epb) const {
  std::size_t common = 0;
  const std::size_t item = shared_bytes_parts(transpose, what, &common);
  detail::TeamParams p = detail::make_team_params(
      Teams{ne_, epb, item_threads(geom_, nd_, nq_, nd1_, nq1_, opt_.threads_per_element), item, common});
  return detail::team_shared_bytes(p);
}

int Interpolator::max_elements_per_block(Eval what, bool transpose) const {
  if (!exec_.on_device()) return 64;
  const Dim3 t = item_threads(geom_, nd_, nq_, nd1_, nq1_, opt_.threads_per_element);
  const int tpi = t.x * t.y * t.z;
  int m = std::max(1, kMaxBlockThreads / tpi);
  const std::size_t limit = current_device().shared_per_block_optin;
  while (m > 1 && shared_bytes(what, transpose, m) > limit) --m;
  return m;
}

InterpolationKernel Interpolator::kernel(Eval what, bool transpose) const {
  InterpolationKernel k;
  k.geom = geom_;
  k.order = p_;
  k.points_1d = tensor_ ? nq1_ : 0;
  k.points = nq_;
  k.components = comps_;
  k.what = what;
  k.transpose = transpose;
  k.layout = opt_.layout;
  k.geometry = opt_.geometry;
  k.threads_per_element = opt_.threads_per_element;
  k.elements_per_item = transpose ? 1 : chunk();
  return k;
}

int Interpolator::choose_epb(Eval what, bool transpose, std::string* source) const {
  // The choice depends only on (what, transpose) for a given interpolator: computed once
  // (tuning-cache lookup, device queries) and kept, so that repeated calls do no host work.
  const std::size_t slot = (static_cast<unsigned>(what) & 7u) * 2 + (transpose ? 1 : 0);
  if (epb_cache_[slot] > 0) {
    if (source) *source = epb_source_[slot];
    return epb_cache_[slot];
  }
  int want = 0;
  std::string src;
  if (opt_.elements_per_block > 0) {
    want = opt_.elements_per_block;
    src = "option";
  } else {
    if (opt_.use_tuning_cache) {
      if (auto e = tuning::lookup(tuning::device_key(exec_), kernel(what, transpose).key())) {
        want = e->elements_per_block;
        src = "tuning cache";
      }
    }
    if (want == 0) {
      want = interpolation_heuristic_epb(kernel(what, transpose));
      src = "heuristic";
    }
  }
  const int m = max_elements_per_block(what, transpose);
  if (want > m) {
    want = m;
    src += " (reduced to fit)";
  }
  epb_cache_[slot] = want;
  epb_source_[slot] = src;
  if (source) *source = src;
  return want;
}

void Interpolator::set_elements_per_item(int k) {
  TESSERA_REQUIRE(k >= 0, "fem::Interpolator: elements_per_item must be >= 0 (0 = auto), got ", k);
  opt_.elements_per_item = k;
  epb_cache_.fill(0);  // the elements per block were chosen for the old count
}

int Interpolator::elements_per_block(Eval what, bool transpose) const { return choose_epb(what, transpose, nullptr); }

std::string Interpolator::elements_per_block_source(Eval what, bool transpose) const {
  std::string s;
  choose_epb(what, transpose, &s);
  return s;
}

// ------------------------------------------------------------------ checks

void Interpolator::check_what(Eval what, const char* where) const {
  TESSERA_REQUIRE(what != Eval::None && (static_cast<unsigned>(what) & ~7u) == 0, "fem::Interpolator::", where,
                  ": nothing (or an unknown flag) to evaluate: ", static_cast<unsigned>(what));
}

namespace {
std::array<index_t, 4> expected_extents(QuadLayout l, index_t ne, int comps, int k, int nq) {
  if (l == QuadLayout::ElementMajor) return {ne, comps, k, nq};
  return {comps, k, ne, nq};
}

ia::PointMap point_map(const Array<double, 4>& a, QuadLayout l, index_t ne, int comps, int k, int nq) {
  ia::PointMap m;
  m.p = const_cast<double*>(a.data());
  if (l == QuadLayout::ElementMajor) {
    m.sd = nq;
    m.sc = index_t(k) * nq;
    m.se = index_t(comps) * k * nq;
  } else {
    m.se = nq;
    m.sd = ne * nq;
    m.sc = index_t(k) * ne * nq;
  }
  return m;
}
}  // namespace

void Interpolator::check_data(const QuadratureData& d, Eval what, const char* where) const {
  TESSERA_REQUIRE(d.layout == opt_.layout, "fem::Interpolator::", where, ": the data has layout ", name(d.layout),
                  ", the interpolator was built for ", name(opt_.layout), " (use allocate())");
  const struct {
    Eval f;
    const Array<double, 4>* a;
    int k;
    const char* n;
  } parts[] = {{Eval::Values, &d.values, 1, "values"},
               {Eval::ReferenceGradients, &d.reference_gradients, dim_, "reference_gradients"},
               {Eval::Gradients, &d.gradients, sdim_, "gradients"}};
  for (const auto& p : parts) {
    if (!has(what, p.f)) continue;
    const auto want = expected_extents(opt_.layout, ne_, comps_, p.k, nq_);
    const auto got = p.a->extents();
    if (got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3])
      fail("fem::Interpolator::", where, " (", name(geom_), "): QuadratureData::", p.n, " has extents (", got[0], ", ",
           got[1], ", ", got[2], ", ", got[3], "), expected (", want[0], ", ", want[1], ", ", want[2], ", ", want[3],
           ") for the ", name(opt_.layout), " layout (use allocate())");
    if (!accessible(exec_.backend, p.a->space()))
      fail("fem::Interpolator::", where, ": QuadratureData::", p.n, " lives in ", to_string(p.a->space()),
           " memory, which the ", to_string(exec_.backend), " backend cannot read");
  }
}


QuadratureData Interpolator::allocate(Eval what) const {
  check_what(what, "allocate");
  QuadratureData d;
  d.layout = opt_.layout;
  const auto make = [&](const char* label, int k) {
    return Array<double, 4>(label, expected_extents(opt_.layout, ne_, comps_, k, nq_), exec_.space());
  };
  if (has(what, Eval::Values)) d.values = make("qd_values", 1);
  if (has(what, Eval::ReferenceGradients)) d.reference_gradients = make("qd_reference_gradients", dim_);
  if (has(what, Eval::Gradients)) d.gradients = make("qd_gradients", sdim_);
  return d;
}

// ------------------------------------------------------------------ launches

void Interpolator::fill_args(ia::Args& a) const {
  tables_->fill(a);
  a.ne = ne_;
  a.idx = restr_.indices().data();
  a.X = X_.size() ? X_.data() : nullptr;
  a.Jinv = Jinv_.size() ? Jinv_.data() : nullptr;
  a.on_the_fly = opt_.geometry == GeometrySource::OnTheFly;
}

void Interpolator::run(int epb, bool transpose, Eval what, const double* u, const QuadratureData& qd,
                       double* e_out) const {
  if (has(what, Eval::Gradients)) ensure_geometry();
  ia::Args a;
  fill_args(a);
  const bool simplex_t = transpose && !tensor_;
  if (simplex_t) {
    a.Bt = tables_->Bq.data();
    a.Gt = tables_->Gq.data();
  }
  a.values = has(what, Eval::Values);
  a.ref_grads = has(what, Eval::ReferenceGradients);
  a.grads = has(what, Eval::Gradients);
  a.tables_shared = tables_in_shared(what);
  a.u = u;
  a.e_out = e_out;
  if (a.values) a.v = point_map(qd.values, opt_.layout, ne_, comps_, 1, nq_);
  if (a.ref_grads) a.rg = point_map(qd.reference_gradients, opt_.layout, ne_, comps_, dim_, nq_);
  if (a.grads) a.pg = point_map(qd.gradients, opt_.layout, ne_, comps_, sdim_, nq_);
  if (cpu_batched()) {  // the element-batched kernels: no launch shape, epb does not apply
    if (ne_ == 0) return;
    if (!cpu_) {
      ia::Args f;
      fill_args(f);  // the forward tables
      cpu_ = std::make_shared<const cpu_detail::BatchedInterpolator>(f, tensor_, opt_.kernels.exact, exec_);
    }
    if (transpose) cpu_->integrate(a);
    else cpu_->interpolate(a);
    return;
  }

  std::size_t common = 0;
  const std::size_t item = shared_bytes_parts(transpose, what, &common);
  a.chunk = transpose ? 1 : chunk();
  const index_t items = (ne_ + a.chunk - 1) / a.chunk;
  const Teams t{items, epb, item_threads(geom_, nd_, nq_, nd1_, nq1_, opt_.threads_per_element), item, common};
  if (exec_.on_device()) {
    const std::size_t need = shared_bytes(what, transpose, epb);
    const std::size_t limit = current_device().shared_per_block_optin;
    if (need > limit)
      fail("fem::Interpolator (", name(geom_), ", p = ", p_, ", ", nq_, " points, ", comps_, " components, ",
           name(what), "): ", epb, " elements per block need ", need, " bytes of shared memory, over the limit of ",
           limit, " bytes of ", current_device().name,
           epb > 1 ? "; use fewer elements per block" : "; this order and rule do not fit one element per block");
  }
  if (ne_ == 0) return;
  const char* label = transpose ? "fem/integrate" : "fem/interpolate";
  if (grads_of(what)) ia::launch_family_grads(label, exec_, t, geom_, transpose, a);
  else ia::launch_family_values(label, exec_, t, geom_, transpose, a);
}

void Interpolator::interpolate_with(int epb, View<const double, 1> u, Eval what, QuadratureData& out) const {
  check_what(what, "interpolate");
  TESSERA_REQUIRE(epb >= 1, "fem::Interpolator::interpolate: elements per block must be >= 1, got ", epb);
  check_vector(exec_, "Interpolator::interpolate", "global vector u", u.data(), u.size(), index_t(comps_) * nn_);
  check_data(out, what, "interpolate");
  run(epb, false, what, u.data(), out, nullptr);
}

void Interpolator::interpolate(View<const double, 1> u, Eval what, QuadratureData& out) const {
  check_what(what, "interpolate");
  interpolate_with(choose_epb(what, false, nullptr), u, what, out);
}

void Interpolator::integrate_with(int epb, const QuadratureData& in, Eval what, View<double, 3> e_out) const {
  check_what(what, "integrate");
  TESSERA_REQUIRE(epb >= 1, "fem::Interpolator::integrate: elements per block must be >= 1, got ", epb);
  check_data(in, what, "integrate");
  if (e_out.extent(0) != ne_ || e_out.extent(1) != comps_ || e_out.extent(2) != nd_)
    fail("fem::Interpolator::integrate (", name(geom_), "): the E-vector has extents (", e_out.extent(0), ", ",
         e_out.extent(1), ", ", e_out.extent(2), "), expected (elements, components, nodes per element) = (", ne_,
         ", ", comps_, ", ", nd_, ")");
  check_vector(exec_, "Interpolator::integrate", "E-vector", e_out.data(), e_out.size(), e_out.size());
  run(epb, true, what, nullptr, in, e_out.data());
}

void Interpolator::integrate(const QuadratureData& in, Eval what, View<double, 3> e_out) const {
  check_what(what, "integrate");
  integrate_with(choose_epb(what, true, nullptr), in, what, e_out);
}

void Interpolator::integrate_add(const QuadratureData& in, Eval what, View<double, 1> y) const {
  if (scratch_.size() == 0) scratch_ = Array<double, 3>("interp_scratch", {ne_, comps_, nd_}, exec_.space());
  integrate(in, what, scratch_.view());
  restr_.scatter_add(scratch_.cview(), y);
}

void interpolate(const H1Space& space, Geometry g, View<const double, 1> u, const QuadratureRule& rule, Eval what,
                 QuadratureData& out, Exec exec) {
  const Interpolator interp(space, g, rule, exec);
  const bool missing = (has(what, Eval::Values) && out.values.size() == 0) ||
                       (has(what, Eval::ReferenceGradients) && out.reference_gradients.size() == 0) ||
                       (has(what, Eval::Gradients) && out.gradients.size() == 0);
  if (missing) {
    QuadratureData fresh = interp.allocate(what);
    if (out.values.size() == 0) out.values = fresh.values;
    if (out.reference_gradients.size() == 0) out.reference_gradients = fresh.reference_gradients;
    if (out.gradients.size() == 0) out.gradients = fresh.gradients;
    out.layout = fresh.layout;
  }
  interp.interpolate(u, what, out);
}

}  // namespace tessera::fem
