// FusedOperator: its set-up (the tables from make_tables, the vertices and weights of
// on-the-fly geometry), the plan of a launch (elements per item and per block from the option,
// the tuning cache, else the rules below; the threads and shared memory of each family's
// layout: shape mirrors the carving in operator/*.hpp), the checks and the launches.
// docs/dev/operator-kernels.md describes the plan.
#include <algorithm>
#include <sstream>

#include "../element_tables.hpp"
#include "../interpolate_internal.hpp"
#include "hex_runtime.hpp"
#include "hex_thread.hpp"  // the layout rules of the families it plans for
#include "lines.hpp"
#include "plan.hpp"
#include "simplex.hpp"
#include "tessera/core/device.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/core/tuning.hpp"
#include "tessera/fem/fused_operator.hpp"

namespace tessera::fem {

namespace ia = interp_detail;
using ia::check_vector;
using ia::item_threads;
using ia::kMaxBlockThreads;
using ia::kPrefetchBytes;
using ia::kSharedTableBytes;

FusedOperator::FusedOperator(const H1Space& space, Geometry g, const QuadratureRule& rule, Exec exec,
                             FusedOperatorOptions options)
    : ElementBase("fem::FusedOperator", space, g, rule, exec), opt_(options) {
  opt_.kernels = ia::operator_choice_for(options.kernels, exec);
  TESSERA_REQUIRE(options.elements_per_item >= 0, "fem::FusedOperator: elements_per_item must be >= 0 (0 = auto), got ",
                  options.elements_per_item);
}

void FusedOperator::prepare(bool on_the_fly) const {
  if (!on_the_fly) return;
  TESSERA_REQUIRE(sdim_ == dim_, "fem::FusedOperator::apply: on-the-fly geometry on ", name(geom_),
                  " elements needs a mesh of space dimension ", dim_, " (this mesh has ", sdim_,
                  "); use stored quadrature data for embedded elements");
  if (X_.size() == 0) X_ = ia::element_vertices(*mesh_, geom_, tables_->rule, exec_);
  (void)weights();
}

const double* FusedOperator::weights() const {
  if (wq_.size() == 0) {
    Array<double, 1> w("operator_weights", {nq_});
    for (int q = 0; q < nq_; ++q) w(q) = tables_->rule.weights(q);
    wq_ = exec_.on_device() ? w.to_device() : w;
  }
  return wq_.data();
}

bool FusedOperator::reads_element_factors(bool diffusion) const {
  return tensor_ && ia::operator_element_factors(opt_.kernels, exec_, geom_, diffusion, nd1_, nq1_, nodal_points_, comps_);
}

/// The plan's element factors: stored data only, and a kernel that reads them.
void FusedOperator::check_element_factors(const OperatorPlan& plan) const {
  TESSERA_REQUIRE(!plan.element_factors || (!plan.on_the_fly && reads_element_factors(plan.diffusion)),
                  "fem::FusedOperator::apply: the plan asks for one factor per element (element_factors), but ",
                  plan.on_the_fly ? "the geometry is computed on the fly"
                                  : "the kernel for these sizes reads per-point data (reads_element_factors() is false)");
}

void FusedOperator::apply(bool diffusion, const double* qdata, View<const double, 1> x, View<double, 1> y,
                          int epb, OperatorScatter scatter) const {
  apply(plan(diffusion, qdata == nullptr, false, epb), qdata, x, y, scatter);
}

void FusedOperator::apply(const OperatorPlan& plan, const double* qdata, View<const double, 1> x,
                          View<double, 1> y, OperatorScatter scatter) const {
  TESSERA_REQUIRE(!plan.element && plan.on_the_fly == (qdata == nullptr),
                  "fem::FusedOperator::apply: the plan is for ", plan.element ? "element-level applies" : "",
                  plan.on_the_fly == (qdata == nullptr) ? "" : plan.on_the_fly ? "on-the-fly geometry, but point data was given"
                                                                               : "stored point data, but none was given");
  check_vector(exec_, "FusedOperator::apply", "input vector", x.data(), x.size(), index_t(comps_) * nn_);
  check_vector(exec_, "FusedOperator::apply", "output vector", y.data(), y.size(), index_t(comps_) * nn_);
  check_element_factors(plan);
  TESSERA_REQUIRE(scatter == OperatorScatter::Add || stores_exclusive(plan.diffusion),
                  "fem::FusedOperator::apply: OperatorScatter::StoreExclusive with a kernel that adds every "
                  "entry (", name(geom_), " p = ", p_, ", ", comps_, " component(s)); use OperatorScatter::Add");
  run(plan, qdata, x.data(), y.data(), scatter);
}

bool FusedOperator::stores_exclusive(bool diffusion) const {
  if (!tensor_ || ia::operator_thread_element(opt_.kernels, geom_, diffusion, nd1_, nq1_, nodal_points_, false)) return false;
  // the column kernel at p = 3 adds (column_stores); on the CPU the kernel of its bound serves
  // the same case and stores, but the answer must not depend on the backend
  return !ia::operator_columns(opt_.kernels, geom_, diffusion, nd1_, nq1_, nodal_points_, comps_) || ia::column_stores(nd1_);
}

void FusedOperator::apply_element(bool diffusion, const double* qdata, View<const double, 3> xe,
                                  View<double, 3> ye, int epb) const {
  apply_element(plan(diffusion, qdata == nullptr, true, epb), qdata, xe, ye);
}

void FusedOperator::apply_element(const OperatorPlan& plan, const double* qdata, View<const double, 3> xe,
                                  View<double, 3> ye) const {
  TESSERA_REQUIRE(plan.element && plan.on_the_fly == (qdata == nullptr),
                  "fem::FusedOperator::apply_element: the plan is for ", plan.element ? "" : "the global apply",
                  plan.on_the_fly == (qdata == nullptr) ? "" : plan.on_the_fly ? "on-the-fly geometry, but point data was given"
                                                                               : "stored point data, but none was given");
  check_element_factors(plan);
  const auto check = [&](const char* what, index_t e0, index_t e1, index_t e2, const void* data, index_t size) {
    if (e0 != ne_ || e1 != comps_ || e2 != nd_)
      fail("fem::FusedOperator::apply_element (", name(geom_), "): the ", what, " E-vector has extents (",
           e0, ", ", e1, ", ", e2, "), expected (elements, components, nodes per element) = (", ne_, ", ", comps_,
           ", ", nd_, ")");
    check_vector(exec_, "FusedOperator::apply_element", what, data, size, size);
  };
  check("input", xe.extent(0), xe.extent(1), xe.extent(2), xe.data(), xe.size());
  check("output", ye.extent(0), ye.extent(1), ye.extent(2), ye.data(), ye.size());
  run(plan, qdata, xe.data(), ye.data());
}

OperatorPlan FusedOperator::plan(bool diffusion, bool on_the_fly, bool element, int epb) const {
  OperatorPlan pl;
  pl.diffusion = diffusion;
  pl.on_the_fly = on_the_fly;
  pl.element = element;
  if (!tensor_) pl.tables_shared = simplex_tables_shared(diffusion);
  // The hexahedron diffusion line kernel with Gauss points prefetches each element's stored
  // data into L2 a step ahead where an element's block is at least kPrefetchBytes: on the H100
  // (8M DOFs, same run) BP3 p = 6..10 (24-64 KB per element) ran 1.13-1.22x faster, p = 2..5
  // (3-16 KB) 0.69-0.94x, and with the points at the nodes (BP5, BK5) 0.94-1.03x
  // (docs/benchmarks/operators.md). The kernels that do not prefetch ignore the flag.
  pl.prefetch_qdata = diffusion && !on_the_fly && !nodal_points_ && geom_ == Geometry::Hexahedron &&
                      exec_.on_device() && sizeof(double) * 6 * std::size_t(nq_) >= kPrefetchBytes;
  pl.merged_lines = merged_lines();
  pl.elements_per_item = elements_per_item(diffusion, on_the_fly, element, &pl.item_source);
  if (!tensor_) pl.elements_per_item = std::min(pl.elements_per_item, ia::kSimplexMaxChunk);
  if (epb > 0) {
    pl.block_source = "option";
  } else {
    epb = elements_per_block(diffusion, on_the_fly, element, &pl.block_source);
  }
  TESSERA_REQUIRE(epb >= 1, "fem::FusedOperator::apply: elements per block must be >= 1, got ", epb);
  pl.elements_per_block = epb;
  pl.threads = shape(diffusion, on_the_fly, element, &pl.item_bytes, &pl.common_bytes, epb);
  // the run-time-size kernels' element buffers go to device memory when they do not fit
  // (items_may_spill in operator/launch.cpp); the bounded ones must fit
  if (exec_.on_device() && !ia::operator_may_spill(opt_.kernels, geom_, diffusion, on_the_fly, nd1_, nq1_, nodal_points_, comps_, element)) {
    const std::size_t limit = current_device().shared_per_block_optin;
    const std::size_t need = shared_bytes(diffusion, on_the_fly, epb, element);
    if (need > limit)
      fail("fem::FusedOperator::apply (", name(geom_), ", p = ", p_, ", ", nq_, " points): ", epb,
           " elements per block need ", need, " bytes of shared memory, over the limit of ", limit, " bytes",
           epb > 1 ? "; use fewer elements per block" : "; this order and rule do not fit one element per block");
  }
  return pl;
}

void FusedOperator::run(const OperatorPlan& pl, const double* qdata, const double* x, double* y,
                        OperatorScatter scatter) const {
  ia::Args a;
  tables_->fill(a);
  a.ne = ne_;
  a.idx = restr_.indices().data();
  a.u = x;
  a.y_out = y;
  if (pl.element) a.idx = nullptr;
  a.qdata = qdata;
  a.on_the_fly = pl.on_the_fly;
  if (a.on_the_fly) {
    prepare(true);
    a.X = X_.data();
    a.wq = wq_.data();
  }
  a.concurrent = exec_.backend != Backend::Serial;
  if (!tensor_) {
    a.Bq = tables_->Bq.data();
    a.Gq = tables_->Gq.data();
    a.tables_shared = pl.tables_shared;
  }
  if (!pl.element && scatter == OperatorScatter::StoreExclusive) a.owned_from = static_cast<int>(exclusive_from_);
  a.prefetch_qdata = pl.prefetch_qdata;  // the element-factor instances carry no prefetch
  if (pl.element_factors) {
    a.element_factors = true;
    a.wq = weights();
  }
  a.merged_lines = pl.merged_lines;
  a.chunk = pl.elements_per_item;
  if (ne_ == 0) return;
  const Teams t{(ne_ + a.chunk - 1) / a.chunk, pl.elements_per_block, pl.threads, pl.item_bytes, pl.common_bytes};
  ia::launch_operator(opt_.kernels, pl.diffusion ? "fem/operator_diffusion" : "fem/operator_mass", exec_, t, geom_,
                      pl.diffusion, a);
}

namespace {
/// Items per block for threads_per_item threads each, aiming at target threads per block (the
/// rule elements_per_block ends with; simplex_item_threads sizes its blocks by it too).
int items_for_threads(int target, int threads_per_item) { return std::clamp(target / threads_per_item, 1, 16); }
/// Threads per block the rule aims at where no bound asks for fewer (simplices, and hexahedra
/// and quadrilaterals below bound 8 or at run-time sizes).
constexpr int kBlockThreads = 256;

/// Threads per item of the fused simplex kernel (nd nodes, nq points, item_bytes of shared
/// memory per item): all nodes and points at once up to 32 of them; past that whole warps, at
/// most 128 and at most 4 points or nodes per thread. Of those, the count with the fewest idle
/// lanes in the two sums (thread slots times their length: a forward sum takes nd table entries
/// per point, a transposed one nq per node), the larger on a tie. Where the tables are read
/// from device memory (dev: the GPU, else null) the share of busy lanes is scaled by the warps
/// per SM that the item buffers leave (blocks of items_for_threads items), over 32: those
/// reads wait on latency that only more warps hide. The blocks per SM are estimated from shared
/// memory, threads and the block limit only, not registers (54-76 per thread in these kernels
/// under sm_90, at most 3-4 blocks of 256 threads), as the rule was measured.
int simplex_item_threads(int nd, int nq, std::size_t item_bytes, bool tables_global, const DeviceInfo* dev) {
  const int m = std::max(nd, nq);
  if (m <= 32) return m;
  const auto warps = [](int n) { return (n + 31) / 32 * 32; };
  const int hi = std::min(warps(m), 128);
  int best = hi;
  double best_score = -1;
  for (int t = std::min(warps((m + 3) / 4), hi); t <= hi; t += 32) {
    double score = 2.0 * nd * nq / (double(t) * ((nq + t - 1) / t * nd + (nd + t - 1) / t * nq));
    if (tables_global && dev) {
      const int items = items_for_threads(kBlockThreads, t);
      const std::size_t block = items * item_bytes + dev->reserved_shared_per_block;
      const int blocks = static_cast<int>(std::min<std::size_t>(
          {std::size_t(dev->max_blocks_per_sm), dev->shared_per_sm / block, std::size_t(dev->max_threads_per_sm / (items * t))}));
      score *= std::min(1.0, blocks * items * t / 32 / 32.0);
    }
    if (score >= best_score * (1 - 1e-9)) {
      best = t;
      best_score = score;
    }
  }
  return best;
}
}  // namespace

bool FusedOperator::simplex_tables_shared(bool diffusion) const {
  switch (opt_.simplex_tables) {
    case TableMemory::Shared: return true;
    case TableMemory::Global: return false;
    case TableMemory::Auto: break;
  }
  // on the CPU the tables are read in place (a copy per block would only add work)
  const std::size_t bytes = sizeof(double) * (diffusion ? dim_ : 1) * nd_ * ia::simplex_table_row(nq_);
  return exec_.on_device() && bytes <= kSharedTableBytes;
}

bool FusedOperator::fits(bool diffusion, bool on_the_fly) const {
  if (!exec_.on_device() || tensor_) return true;  // the hexahedron kernels that may not fit spill (items_may_spill)
  return shared_bytes(diffusion, on_the_fly, 1, false) <= current_device().shared_per_block_optin &&
         shared_bytes(diffusion, on_the_fly, 1, true) <= current_device().shared_per_block_optin;
}

int FusedOperator::chunk(bool diffusion, bool on_the_fly) const {
  if (!tensor_) {
    // Simplices: kSimplexMaxChunk elements per item, so that each table entry read serves 4
    // elements; on the GPU only where their point data (the larger part of an item's buffers)
    // takes at most 32 KB, else 1. Not tuned.
    if (!exec_.on_device()) return ia::kSimplexMaxChunk;
    const std::size_t per_element = sizeof(double) * comps_ * (nd_ + (diffusion ? dim_ : 1) * nq_);
    return ia::kSimplexMaxChunk * per_element <= 32 * 1024 ? ia::kSimplexMaxChunk : 1;
  }
  if (exec_.on_device() && geom_ == Geometry::Hexahedron) {
    // Stored diffusion with at most 64 nodes (p <= 3): 2 elements per item, not 8. On the H100
    // (8M DOFs, same run) BP3 p = 2, 3 ran 1.14x faster, BP5 p = 3 1.11x, BP4 and BP6 p = 2, 3
    // 1.10-1.53x; BP5 p = 2 0.98x (leaving the points-at-the-nodes case at p = 2 out cost BP6
    // p = 2 14%), and on the fly 2 lost up to 4%. With Gauss points at p = 4 (125 nodes): 1;
    // since the line kernel's buffers were merged (d01f151) 4 per item left 2 blocks of 7
    // elements per SM where 1 per item fits 3: H200, same run, BP3 4 per item 0.97x of the tree
    // before the merge, 1 per item 1.17x of 4 (with the points at the nodes, BP5, 1 per item was
    // 0.98x of 4: left at 4). (docs/benchmarks/operators.md)
    // Stored diffusion with Gauss points at bound 6 (p = 3, 4 with q = p + 2): 1, with about 96
    // threads per block (elements_per_block). H100, 8M DOFs, tuner sweep of the
    // elements per item and per block: BP3 p = 3 1x1 0.882 ms, 1x4 0.892, the rule before (2 per
    // item, 5 per block) 0.955; p = 4 1x3 0.712, 1x7 (the rule before) 0.755
    // (docs/benchmarks/operators.md)
    if (gauss_diffusion_at_bound6(diffusion, on_the_fly)) return 1;
    // p = 3, 4 with the points at the nodes, several components (hex_column_nodal): 2 per
    // item; per block 4 at p = 3, 1 at p = 4 (elements_per_block). H100, 8M DOFs, BP6,
    // sweeps of the elements per item and per block: p = 3 stored 2x4 29.7 GDOF/s (1x8 27.0,
    // 4x4 28.9), on the fly 2x4 28.8 (1x8 25.6, 4x4 29.0); p = 4 stored 2x1 31.8 (2x2 31.5,
    // 2x4 30.8, 1x1 30.5, 2x8 28.1-28.8), on the fly 2x1 30.0 (2x2 29.7, 1x1 28.3)
    if (ia::operator_columns(opt_.kernels, geom_, diffusion, nd1_, nq1_, nodal_points_, comps_)) return 2;
    // Diffusion with the points at the nodes at p = 3, one component (several took the columns
    // above; the compile-time-size line kernel): 1 per item stored, 4 on the fly. H200, 8M DOFs, one sweep of 1, 2, 4 per item
    // (2 per block): BP5 stored 21.1, 20.3, 19.6 GDOF/s, on the fly 18.7, 19.2, 19.2 (8 per
    // item: 18.5) (docs/benchmarks/operators.md)
    if (diffusion && nodal_points_ && nd1_ == 4) return on_the_fly ? 4 : 1;
    if (diffusion && !on_the_fly && nd_ <= 64) return std::min(2, option_chunk());
    if (diffusion && !on_the_fly && nd_ <= 125 && !nodal_points_) return 1;
    if (single_nodal_diffusion(diffusion, on_the_fly)) return 1;
    // Stored scalar diffusion with the points at the nodes at p = 6 and 8 (7 and 9 per
    // direction; compile-time-size kernels): 2 per item, where 512 / nodes gives 1. H200, 8M
    // DOFs, one sweep of 1, 2, 4 per item: BP5 p = 6 1.08x, p = 8 1.14x of 1 per item; p = 5, 7,
    // 9, 10 0.82-0.96x (docs/benchmarks/operators.md)
    if (diffusion && !on_the_fly && nodal_points_ && comps_ == 1 && (nd1_ == 7 || nd1_ == 9)) return 2;
    // Stored mass at p = 3 with 5 points per direction (the bound-6 line kernel): 4 per item,
    // not 8. H100, 8M DOFs, tuner sweeps of 1, 2, 4, 8 per item (5 per block, the rule's, best
    // with each): BP1 0.359, 0.337, 0.332, 0.354 ms, BP2 0.905, 0.894, 0.898, 0.997 ms; on the
    // fly 8 stays (BP1 0.538, 0.461, 0.440, 0.434) (docs/benchmarks/operators.md)
    if (!diffusion && !on_the_fly && nd_ == 64 && nq1_ == 5) return 4;
    // On the fly with Gauss points from p = 6 (343 nodes), scalar fields: 2, where 512 / nodes
    // gives 1. H100, same run against 1: mass (BP1) p = 6..10 1.05-1.13x; diffusion (BP3) p =
    // 6..8 1.04-1.09x but p = 9, 10 0.90-0.92x (the second gather buffer costs a block per SM),
    // so diffusion stops at p = 8; with the points at the nodes (BP5) 0.97-1.03x: left at 1
    if (on_the_fly && !nodal_points_ && comps_ == 1 && nd_ >= 343 && (!diffusion || nd_ <= 729)) return 2;
  }
  return option_chunk();
}

bool FusedOperator::gauss_diffusion_at_bound6(bool diffusion, bool on_the_fly) const {
  // (one thread per element never serves bound 6: it takes at most 3 nodes, 4 points per direction)
  return exec_.on_device() && geom_ == Geometry::Hexahedron && diffusion && !on_the_fly && !nodal_points_ &&
         ia::operator_bound(opt_.kernels, geom_, nd1_, nq1_) == 6;
}

bool FusedOperator::single_nodal_diffusion(bool diffusion, bool on_the_fly) const {
  // Stored diffusion with the points at the nodes, scalar, p = 4, 5 (125 and 216 nodes): 1
  // element per item, 2 per block. H100, same run, 8M DOFs, against the rules before (5 per
  // block, 4 per item at p = 4; 7 and 2 at p = 5): BP5 p = 4 1.10x, p = 5 1.18x; 1 per item
  // gained 1.05-1.18x with any of 1, 2, 3, 4, 6 per block, 2 per item at most 1.08x, and the
  // tuner picked 1 per item for both on the H100 and the H200 (docs/benchmarks/operators.md)
  // Several components at p = 5 too (at p = 4 they run hex_column_nodal): H100, 8M DOFs, BP6
  // stored, tuner sweep: 1 x 2 0.833 ms against the rule before (2 per item) at its best per
  // block, 2 x 4, 0.916 (docs/benchmarks/operators.md)
  return exec_.on_device() && geom_ == Geometry::Hexahedron && diffusion && !on_the_fly && nodal_points_ &&
         nd_ >= 125 && nd_ <= 216;
}

bool FusedOperator::merged_lines() const {
  // From 6 points per direction. Same runs against separate T2 buffers (8M DOFs, stored unless
  // noted): H100 BP3 p = 4 1.20x, p = 10 1.12x, on the fly p = 9, 10 1.11x, 1.15x, BP4 p = 4, 6
  // 1.11x, 1.09x, BP3 p = 9 0.95x (H200: 1.13x); at p = 3 (5 points) BP4 0.92x
  // (docs/benchmarks/operators.md)
  return nq1_ >= 6;
}

int FusedOperator::elements_per_item(bool diffusion, bool on_the_fly, bool element,
                                     std::string* source) const {
  const int slot = (diffusion ? 4 : 0) + (on_the_fly ? 2 : 0) + (element ? 1 : 0);
  if (k_[slot] == 0) {
    // the option, else the tuning cache's choice, else the kernels' rule (chunk)
    int k = opt_.elements_per_item;
    std::string src = "option";
    if (ia::operator_thread_element(opt_.kernels, geom_, diffusion, nd1_, nq1_, nodal_points_, element)) {
      k = 1;
      src = "one thread per element";
    } else if (k == 0 && opt_.use_tuning_cache) {
      const auto e = tuning::lookup(tuning::device_key(exec_), key(diffusion, on_the_fly, element));
      if (e && e->elements_per_item > 0) {
        k = e->elements_per_item;
        src = "tuning cache";
      }
    }
    if (k == 0) {
      k = chunk(diffusion, on_the_fly);
      src = "heuristic";
    }
    k_[slot] = k;
    k_source_[slot] = src;
  }
  if (source) *source = k_source_[slot];
  return k_[slot];
}

void FusedOperator::set_elements_per_item(int k) {
  TESSERA_REQUIRE(k >= 0, "fem::FusedOperator: elements_per_item must be >= 0 (0 = auto), got ", k);
  opt_.elements_per_item = k;
  k_.fill(0);
  epb_.fill(0);  // the elements per block were chosen for the old count
}

Dim3 FusedOperator::shape(bool diffusion, bool on_the_fly, bool element, std::size_t* item,
                          std::size_t* common, int epb) const {
  if (ia::operator_thread_element(opt_.kernels, geom_, diffusion, nd1_, nq1_, nodal_points_, element)) {
    // hex_thread_element: the block's rows in the common region on the GPU (the CPU reads in place)
    *item = 0;
    *common = 0;
    // in thread_element_data's order: the bulk copy's mbarrier, maps, E-vector rows, data rows
    const ia::ThreadElementLayout l =
        ia::operator_thread_element_layout(opt_.kernels, geom_, diffusion, on_the_fly, nd1_, nq1_, nodal_points_, comps_, element);
    if (exec_.on_device())
      *common = SharedLayout()
                    .add<unsigned long long>(l.bulk ? 1 : 0)
                    .add<int>(element ? 0 : epb * ia::thread_element_map_row(nd_))
                    .add<double>(element && l.stages_evector ? epb * ia::thread_element_map_row(comps_ * nd_) : 0)
                    .add<double>(epb * ia::thread_element_row(diffusion, on_the_fly, nq_))
                    .bytes();
    return Dim3{1, 1, 1};
  }
  if (exec_.on_device() && ia::operator_columns(opt_.kernels, geom_, diffusion, nd1_, nq1_, nodal_points_, comps_)) {
    *item = 0;  // hex_column_nodal: registers and shuffles only
    *common = 0;
    return Dim3{ia::column_lanes(nd1_), 1, 1};
  }
  if (!tensor_) {  // simplex_operator's carving: tables; maps, values, point data, vertices, D / det J
    const int k = elements_per_item(diffusion, on_the_fly, element) <= 1 ? 1 : ia::kSimplexMaxChunk;
    const int ng = diffusion ? dim_ : 1, nf = dim_ * (dim_ + 1) / 2;
    const bool tables_shared = simplex_tables_shared(diffusion);
    *common = SharedLayout().add<double>(tables_shared ? ng * nd_ * ia::simplex_table_row(nq_) : 0).bytes();
    *item = SharedLayout()
                .add<int>(element ? 0 : k * nd_)
                .add<double>(k * comps_ * nd_)
                .add<double>(k * comps_ * ng * nq_)
                .add<double>(on_the_fly ? k * nv_ * sdim_ : 0)
                .add<double>(on_the_fly ? k * nf : 0)
                .bytes();
    // Threads per item: simplex_item_threads. Before it, every item past 32 nodes or points
    // took all of them in whole warps up to 128; its choices ran 0.96-1.51x of that rule on the
    // H100 (2M DOFs on tetrahedra, 4M on triangles, p = 3..8, BP1 and BP3, three alternating
    // rounds), within 5% of the best of 32, 64, 96 and 128 threads except on tetrahedra BP3 at
    // p = 5, 8 (0.89-0.94x of 96, as before). For comparisons OperatorKernelChoice::
    // simplex_threads sets the threads (128 gives the rule before) (docs/benchmarks/operators.md)
    const int m = std::max(nd_, nq_);
    const int forced = std::clamp(opt_.kernels.simplex_threads, 0, 128);
    if (forced > 0 && m > 32) return Dim3{std::min(forced, (m + 31) / 32 * 32), 1, 1};
    return Dim3{simplex_item_threads(nd_, nq_, *item, !tables_shared, exec_.on_device() ? &current_device() : nullptr), 1, 1};
  }
  const int n1 = nd1_, m1 = nq1_, D = diffusion, k = elements_per_item(diffusion, on_the_fly, element);
  const int nx = on_the_fly ? k * nv_ * sdim_ : 0;
  const bool bounded = ia::operator_bound(opt_.kernels, geom_, n1, m1) > 0;
  const bool nodal = D && nodal_points_;  // the points-at-the-nodes instances
  SharedLayout c, it;  // the order of the carving in operator/*.hpp
  if (dim_ == 2) {
    c.add<double>(n1 * m1).add<double>(D ? n1 * m1 : 0).add<double>(m1);
    it.add<int>(k * nd_).add<double>(ia::gather_buffers(k, comps_) * nd_).add<double>(n1 * m1)
        .add<double>(D ? n1 * m1 : 0)
        .add<double>(nq_).add<double>(D ? nq_ : 0).add<double>(nx).add<double>(on_the_fly ? 4 * 2 : 0);
  } else if (!bounded) {  // hex_operator_runtime's carving
    const ia::RuntimeSizes z = ia::runtime_sizes(diffusion, nodal_points_, n1, m1);
    c.add<double>(n1 * m1).add<double>(D ? m1 * m1 : 0).add<double>(m1);
    it.add<int>(k * nd_).add<double>(ia::gather_buffers(k, comps_) * nd_).add<double>(z.A).add<double>(z.C)
        .add<double>(z.V).add<double>(z.P).add<double>(nx).add<double>(on_the_fly ? 8 * 3 : 0);
  } else {
    const ia::OperatorRows rows = ia::operator_rows(opt_.kernels, exec_, geom_, diffusion, on_the_fly, n1, m1, nodal_points_, comps_, element);
    const int S = rows.points, np = m1 * m1 * S;
    const int ub = ia::gather_buffers(k, comps_) * n1 * n1 * rows.gathered;
    if (rows.matmul) {  // hex_mass_matmul: two warps per element
      c.add<double>(on_the_fly ? m1 : 0);
      it.add<int>(k * nd_).add<double>(ub).add<double>(ia::hex_matmul_p_size(n1, m1))
          .add<double>(ia::hex_matmul_q_size(n1, m1)).add<double>(nx).add<double>(on_the_fly ? 8 * 3 : 0)
          .add<double>(on_the_fly ? 0 : nq_);
      *item = it.bytes();
      *common = c.bytes();
      return Dim3{64, 1, 1};  // two warps per element
    }
    if (rows.lines && diffusion) {  // hex_diffusion_lines; with the points at the nodes the gathered
      // values are in rows of bound + 1, and the point values are those
      const int U = ia::operator_bound(opt_.kernels, geom_, n1, m1) + 1, pts = m1 * m1 * ia::line_row(m1);
      const int skew = ia::diffusion_lines_skew(n1, m1, rows.exact, nodal), odd = skew & 1;
      c.add<double>(on_the_fly ? m1 : 0);
      it.add<double>(ia::item_skew_room(skew)).add<int>(k * nd_)
          .add<double>(ia::gather_buffers(k, comps_) * (nodal ? m1 * m1 * U : nd_) + odd)
          .add<double>(nodal ? 0 : pts + odd).add<double>(3 * pts + odd)
          .add<double>(nodal || merged_lines() ? 0 : m1 * m1 * ia::line_row(n1) + odd)
          .add<double>(nx).add<double>(on_the_fly ? 8 * 3 : 0);
    } else if (rows.lines) {  // hex_mass_lines: the skew, maps, gathered values, T1, T2, vertices, w det J
      const ia::MassLinesLayout L = ia::mass_lines_layout(n1, m1, rows.exact, on_the_fly);
      const bool wregs = ia::mass_weights_in_registers(exec_.on_device(), rows.exact, on_the_fly, m1);
      c.add<double>(on_the_fly ? m1 : 0).add<double>(on_the_fly ? m1 * m1 * ia::line_row(m1) : 0);
      it.add<double>(ia::item_skew_room(L.skew)).add<int>(k * nd_).add<double>(ub)
          .add<double>(m1 * ia::line_plane(n1, m1)).add<double>(m1 * L.plane).add<double>(nx)
          .add<double>(on_the_fly ? 8 * 3 : 0).add<double>(on_the_fly || wregs ? 0 : m1 * m1 * ia::line_row(m1));
    } else {  // hex_operator (diffusion by point columns): B, xq, D; maps, gathered values, A / P, C0
      c.add<double>(n1 * S).add<double>(m1).add<double>(m1 * S);
      it.add<int>(k * nd_).add<double>(ub).add<double>(3 * np).add<double>(nodal ? 0 : np).add<double>(nx)
          .add<double>(on_the_fly ? 8 * 3 : 0);
    }
  }
  *item = it.bytes();
  *common = c.bytes();
  Dim3 t = item_threads(geom_, nd_, nq_, nd1_, nq1_, 0);
  if (dim_ == 3) t.z = 1;  // point columns, or tiles along the third index (hex_operator_runtime)
  // Past 16 nodes or points per direction (the run-time-size kernels) T x T threads can exceed
  // what the kernel's register use allows (256 for hex_operator_runtime: 18 x 18 = 324 at
  // p = 16, q = p + 2); the kernels stride over their work, so fewer rows of threads serve.
  // Every kernel runs 256 (at most 255 registers per thread), so only larger shapes ask.
  if (exec_.on_device() && t.x * t.y > 256) {
    const int limit = ia::operator_max_threads(opt_.kernels, exec_, geom_, diffusion, on_the_fly, nd1_, nq1_,
                                               nodal_points_, comps_, element);
    if (t.x * t.y > limit) t.y = std::max(1, limit / t.x);
  }
  return t;
}

std::size_t FusedOperator::shared_bytes(bool diffusion, bool on_the_fly, int epb, bool element) const {
  std::size_t item = 0, common = 0;
  const Dim3 th = shape(diffusion, on_the_fly, element, &item, &common, epb);
  return detail::team_shared_bytes(detail::make_team_params(Teams{std::max<index_t>(ne_, 1), epb, th, item, common}));
}

std::string FusedOperator::key(bool diffusion, bool on_the_fly, bool element) const {
  std::ostringstream o;
  o << "operator/" << fem::name(geom_) << "/p" << p_ << "/q" << nq_ << "/c" << comps_ << "/"
    << (diffusion ? "diffusion" : "mass") << "/" << (on_the_fly ? "on-the-fly" : "stored") << "/"
    << (element ? "element" : "global") << "/rev" << ia::kOperatorKernelRevision << "/k";
  if (opt_.elements_per_item > 0) o << opt_.elements_per_item;
  else o << "auto";
  return o.str();
}

int FusedOperator::max_elements_per_block(bool diffusion, bool on_the_fly, bool element) const {
  if (!exec_.on_device()) return 64;
  std::size_t item = 0, common = 0;
  const Dim3 t = shape(diffusion, on_the_fly, element, &item, &common);
  // the kernel's own limit (register use) can be below 512
  const int threads = std::min(
      kMaxBlockThreads, ia::operator_max_threads(opt_.kernels, exec_, geom_, diffusion, on_the_fly, nd1_, nq1_, nodal_points_, comps_, element));
  int m = std::max(1, threads / (t.x * t.y * t.z));
  const std::size_t limit = current_device().shared_per_block_optin;
  while (m > 1 && shared_bytes(diffusion, on_the_fly, m, element) > limit) --m;
  return m;
}

int FusedOperator::elements_per_block(bool diffusion, bool on_the_fly, bool element,
                                      std::string* source) const {
  const int slot = (diffusion ? 4 : 0) + (on_the_fly ? 2 : 0) + (element ? 1 : 0);
  if (epb_[slot] > 0) {
    if (source) *source = epb_source_[slot];
    return epb_[slot];
  }
  std::string src = "heuristic";
  std::size_t item = 0, common = 0;
  const Dim3 th = shape(diffusion, on_the_fly, element, &item, &common);
  // about 256 threads per block; fewer for the bounded hexahedron variants at bounds 8 to 12
  // (p = 5..10 with q = p + 2), whose register use leaves 2-3 blocks per SM: tuned on the H200,
  // 1-3 elements per block beat the 256-thread choice by up to 1.4x, and at p = 5 (49 threads
  // per element) 3 beat 2 (docs/benchmarks/operators.md)
  // Elements of 8-31 threads at bounds 4 and 6 (p = 1..3; p = 2..4 with the points at the
  // nodes): the fewest elements whose threads fill at least 80% of their warps' lanes (2-5
  // elements). Measured on the H100 at 8M DOFs against 256 threads per block: 1.04-1.13x; with
  // 36 threads (p = 4; p = 5 at the nodes) the rule's 3 elements lost 3-5% to 7, with 4 threads
  // (p = 1 at the nodes) 256 was as fast as any. GPU only: on the CPU the elements of a block
  // run one after the other.
  const int bound = ia::operator_bound(opt_.kernels, geom_, nd1_, nq1_);
  const int per = th.x * th.y * th.z;
  int want = 1;
  if (ia::operator_thread_element(opt_.kernels, geom_, diffusion, nd1_, nq1_, nodal_points_, element)) {
    // one thread per element: 128 (4 warps), or fewer where the block's staged rows pass 32 KB
    // (stored diffusion: 1.3 KB per element at q = 3), in whole warps, at least one
    const std::size_t row = shared_bytes(diffusion, on_the_fly, 1, element);
    want = exec_.on_device() ? std::clamp(static_cast<int>(32768 / row) / 32 * 32, 32, 128) : 64;
    // where the kernel declares its own choice for the global apply (HexThreadElementNodal on the fly)
    const int own = ia::operator_thread_element_layout(opt_.kernels, geom_, diffusion, on_the_fly, nd1_, nq1_, nodal_points_,
                                                       comps_, element).global_block;
    if (exec_.on_device() && !element && own > 0) want = own;
  } else if (exec_.on_device() && ia::operator_columns(opt_.kernels, geom_, diffusion, nd1_, nq1_, nodal_points_, comps_)) {
    want = nd1_ == 4 ? 4 : 1;  // hex_column_nodal (chunk has the measurements)
  } else if (ia::operator_matmul(opt_.kernels, geom_, diffusion, nd1_, nq1_)) {
    want = 2;  // two warps per element; 1-2 measured fastest on the H100 (p = 2..8)
  } else if (single_nodal_diffusion(diffusion, on_the_fly) &&
             elements_per_item(diffusion, on_the_fly, element) == 1) {
    want = 2;  // with its rule of 1 per item (single_nodal_diffusion)
  } else if (gauss_diffusion_at_bound6(diffusion, on_the_fly) &&
             elements_per_item(diffusion, on_the_fly, element) == 1) {
    want = (96 + per - 1) / per;  // with its rule of 1 per item (chunk): p = 3 4, p = 4 3
  } else if (exec_.on_device() && (bound == 4 || bound == 6) && per >= 8 && per < 32) {
    while (want < 16 && 5 * want * per < 4 * 32 * ((want * per + 31) / 32)) ++want;
  } else if (exec_.on_device() && on_the_fly && bound == 10 && (nq1_ == 9 || !diffusion)) {
    // On the fly at bound 10 with 9 points per direction, and mass with 10: 3 per block, not 1.
    // H100, 8M DOFs, tuner sweeps (the winner against the rule's pair, alternating): BP3 p = 7
    // 1.13x, BP4 p = 7 1.15x, BP2 p = 7 1.08x, BP5 and BP6 p = 8 1.06x, BP1 p = 8 1.07x, BP2
    // p = 8 1.05x; diffusion with 10 points (BP3, BP4 p = 8, BP5, BP6 p = 9) kept the rule's
    // (docs/benchmarks/operators.md)
    want = 3;
  } else {
    const int target = bound >= 10 ? 128 : bound == 8 ? 160 : kBlockThreads;
    want = items_for_threads(target, per);
  }
  if (opt_.use_tuning_cache) {
    if (auto e = tuning::lookup(tuning::device_key(exec_), key(diffusion, on_the_fly, element))) {
      want = e->elements_per_block;
      src = "tuning cache";
    }
  }
  const int m = max_elements_per_block(diffusion, on_the_fly, element);
  if (want > m) {
    want = m;
    src += ", reduced to fit";
  }
  // (whether one element fits is plan's check, made for the launch)
  epb_[slot] = want;
  epb_source_[slot] = src;
  if (source) *source = src;
  return want;
}

}  // namespace tessera::fem
