// ElementRestriction: gather and scatter-add kernels (compiled by nvcc in CUDA builds).
#include "tessera/fem/restriction.hpp"

#include <atomic>
#include <string>

#include "tessera/core/atomic.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

namespace restriction_detail {

/// Adds v to *p; atomically when `atomic` (core/atomic.hpp). The serial backend passes
/// atomic = false: nothing runs concurrently there.
TESSERA_INLINE void add_to(double* p, double v, bool atomic) { tessera::atomic_add(p, v, atomic); }

/// Calls f(k, i) for every element k < ne and local node i < npe. On the GPU one flat range
/// (adjacent threads get adjacent i) split with a 32-bit division, which is cheap there
/// (ne * npe < 2^31 is checked at construction); on the CPU a plain loop over i per element.
template <class F>
void for_entries(const char* label, const Exec& exec, index_t ne, int npe, const F& f) {
  if (exec.on_device()) {
    forall(label, exec, ne * npe, TESSERA_LAMBDA(index_t j) {
      const int jj = static_cast<int>(j);
      const int k = jj / npe;
      f(k, jj - k * npe);
    });
  } else {
    forall(label, exec, Bounds<2>{ne, npe}, f);
  }
}

/// Memory space of the allocation holding p (a Space value), or -1 when unknown.
int space_of(const void* p) { return detail::pointer_space(p); }

}  // namespace restriction_detail

namespace rd = restriction_detail;

const char* name(ScatterMethod m) {
  switch (m) {
    case ScatterMethod::Atomic: return "atomic";
    case ScatterMethod::TransposeGather: return "transpose-gather";
    case ScatterMethod::Auto: return "auto";
  }
  return "invalid";
}

ElementRestriction::ElementRestriction(const H1Space& space, Geometry g, Exec exec)
    : geom_(g), exec_(exec), nn_(space.num_nodes()), comps_(space.components()) {
  const Mesh& mesh = space.mesh();
  const int gi = static_cast<int>(g);
  if (gi < 0 || gi > 4) fail("fem::ElementRestriction: invalid Geometry value ", gi, " (valid: 0..4)");
  ids_ = mesh.elements_of(g);
  ne_ = index_t(ids_.size());
  if (ne_ == 0)
    fail("fem::ElementRestriction: the mesh has no ", name(g), " elements; build restrictions only for the geometries "
         "that Mesh::num_elements(g) reports");
  npe_ = int(fem::num_nodes(g, space.order()));
  const index_t entries = ne_ * npe_, local_size = entries * comps_;
  if (local_size > index_t(2147483647) || nn_ > max_h1_nodes)
    fail("fem::ElementRestriction: ", ne_, " ", name(g), " elements x ", comps_, " components x ", npe_,
         " nodes = ", local_size, " element-local entries exceed 2^31 - 1 (32-bit indices); split the mesh, lower "
         "the order or restrict fewer components at a time");

  // Host arrays first (written once, no intermediate copies), then moved to exec's space.
  Array<int, 2> idx("fem/restriction_indices", {ne_, index_t(npe_)});
  int* ip = idx.data();
  for (index_t k = 0; k < ne_; ++k) {
    const auto nodes = space.element_nodes(ids_[std::size_t(k)]);
    for (int i = 0; i < npe_; ++i) *ip++ = int(nodes[std::size_t(i)]);
  }
  // Transposed map by a counting sort on the node: entries stay ascending per node.
  Array<index_t, 1> off("fem/restriction_transpose_offsets", {nn_ + 1});
  Array<int, 1> ent("fem/restriction_transpose_entries", {entries});
  index_t* o = off.data();
  const int* id = idx.data();
  for (index_t j = 0; j < entries; ++j) ++o[id[j] + 1];
  for (index_t n = 0; n < nn_; ++n) o[n + 1] += o[n];
  // o[n] is the next free slot of node n; after the pass it is the end of n's run, which is
  // the start of n + 1's: shift back by one.
  const int stride = comps_ * npe_;
  for (index_t k = 0; k < ne_; ++k)
    for (int i = 0; i < npe_; ++i) ent.data()[o[id[k * npe_ + i]]++] = int(k * stride + i);
  for (index_t n = nn_; n > 0; --n) o[n] = o[n - 1];
  o[0] = 0;
  const Space sp = exec.space();
  idx_ = sp == Space::Host ? idx : idx.clone(sp);
  t_offsets_ = sp == Space::Host ? off : off.clone(sp);
  t_entries_ = sp == Space::Host ? ent : ent.clone(sp);
}

void ElementRestriction::check(const char* what, const void* global_data, index_t global_size,
                               const void* local_data, const std::array<index_t, 3>& ext) const {
  if (global_size != comps_ * nn_)
    fail("fem::ElementRestriction::", what, " (", name(geom_), "): the global vector has ", global_size,
         " entries, expected components x nodes = ", comps_, " x ", nn_, " = ", comps_ * nn_,
         " (H1Space::num_dofs())");
  if (ext[0] != ne_ || ext[1] != comps_ || ext[2] != npe_)
    fail("fem::ElementRestriction::", what, " (", name(geom_), "): the element-local array has extents (", ext[0],
         ", ", ext[1], ", ", ext[2], "), expected (elements, components, nodes per element) = (", ne_, ", ", comps_,
         ", ", npe_, ")");
  const struct {
    const char* label;
    const void* p;
  } args[] = {{"global vector", global_data}, {"element-local array", local_data}};
  for (const auto& a : args) {
    const int s = rd::space_of(a.p);
    if (s >= 0 && !accessible(exec_.backend, static_cast<Space>(s)))
      fail("fem::ElementRestriction::", what, " (", name(geom_), "): the ", a.label, " lives in ",
           to_string(static_cast<Space>(s)), " memory, which the ", to_string(exec_.backend),
           " backend cannot read; allocate it in ", to_string(exec_.space()), " memory (Exec::space())");
  }
}

void ElementRestriction::gather(View<const double, 1> global, View<double, 3> local) const {
  check("gather", global.data(), global.extent(0), local.data(), {local.extent(0), local.extent(1), local.extent(2)});
  const auto idx = idx_.cview();
  const index_t nn = nn_;
  const int nc = comps_;
  rd::for_entries("fem/restriction_gather", exec_, ne_, npe_, TESSERA_LAMBDA(int k, int i) {
    const index_t n = idx(k, i);
    for (int c = 0; c < nc; ++c) local(k, c, i) = global(c * nn + n);
  });
}

void ElementRestriction::scatter_add(View<const double, 3> local, View<double, 1> global, ScatterMethod m) const {
  check("scatter_add", global.data(), global.extent(0), local.data(),
        {local.extent(0), local.extent(1), local.extent(2)});
  if (m != ScatterMethod::Atomic && m != ScatterMethod::TransposeGather && m != ScatterMethod::Auto)
    fail("fem::ElementRestriction::scatter_add: invalid ScatterMethod value ", static_cast<int>(m));
  const index_t nn = nn_;
  const int nc = comps_, npe = npe_;
  // Auto: atomics on the GPU (faster there: 0.61 vs 0.84 ms for 1M hexes at p = 3 on the
  // H100, docs/benchmarks/fem.md), the transpose gather on the CPU (faster there and free of
  // atomic contention).
  if (m == ScatterMethod::Auto) m = exec_.on_device() ? ScatterMethod::Atomic : ScatterMethod::TransposeGather;
  if (m == ScatterMethod::Atomic) {
    const auto idx = idx_.cview();
    const bool atomic = exec_.backend != Backend::Serial;
    rd::for_entries("fem/restriction_scatter_atomic", exec_, ne_, npe_, TESSERA_LAMBDA(int k, int i) {
      const index_t n = idx(k, i);
      for (int c = 0; c < nc; ++c) rd::add_to(&global(c * nn + n), local(k, c, i), atomic);
    });
    return;
  }
  const auto off = t_offsets_.cview();
  const auto ent = t_entries_.cview();
  const View<const double, 1> flat(local.data(), local.size());
  forall("fem/restriction_scatter_transpose", exec_, nn, TESSERA_LAMBDA(index_t n) {
    const index_t b = off(n), e = off(n + 1);
    if (b == e) return;  // a node of other geometries only (mixed meshes)
    for (int c = 0; c < nc; ++c) {
      double s = 0;
      for (index_t t = b; t < e; ++t) s += flat(c * npe + ent(t));
      global(c * nn + n) += s;
    }
  });
}

}  // namespace tessera::fem
