// ElementRestriction: gather and scatter-add kernels (compiled by nvcc in CUDA builds).
#include "tessera/fem/restriction.hpp"

#include <algorithm>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

namespace {

// Atomic double addition that works on every backend: atomicAdd on the GPU, an OpenMP
// atomic on the CPU (a plain addition when compiled without OpenMP).
TESSERA_HOST_DEVICE inline void atomic_add(double* p, double v) {
#if defined(__CUDA_ARCH__)
  atomicAdd(p, v);
#else
#pragma omp atomic update
  *p += v;
#endif
}

}  // namespace

const char* name(ScatterMethod m) {
  switch (m) {
    case ScatterMethod::Auto: return "auto";
    case ScatterMethod::Atomic: return "atomic";
    case ScatterMethod::TransposeGather: return "transpose-gather";
  }
  return "invalid";
}

ElementRestriction::ElementRestriction(const H1Space& space, Geometry g, Exec exec)
    : geom_(g), exec_(exec), nn_(space.num_nodes()), comps_(space.components()) {
  const Mesh& mesh = space.mesh();
  ids_ = mesh.elements_of(g);
  ne_ = index_t(ids_.size());
  if (ne_ == 0) fail("fem::ElementRestriction: the mesh has no ", name(g), " elements");
  npe_ = int(fem::num_nodes(g, space.order()));
  const index_t entries = ne_ * npe_;
  if (entries > index_t(2147483647))
    fail("fem::ElementRestriction: ", ne_, " ", name(g), " elements x ", npe_, " nodes = ", entries,
         " element-local entries exceed 2^31 - 1 (32-bit indices); split the mesh or lower the order");
  std::vector<int> idx(static_cast<std::size_t>(entries));
  for (index_t k = 0; k < ne_; ++k) {
    const auto nodes = space.element_nodes(ids_[std::size_t(k)]);
    for (int i = 0; i < npe_; ++i) idx[std::size_t(k * npe_ + i)] = int(nodes[std::size_t(i)]);
  }
  // Transposed map (counting sort by node: entries stay in ascending order per node).
  std::vector<index_t> off(std::size_t(nn_ + 1), 0);
  for (int n : idx) ++off[std::size_t(n) + 1];
  for (index_t n = 0; n < nn_; ++n) off[std::size_t(n + 1)] += off[std::size_t(n)];
  std::vector<int> ent(static_cast<std::size_t>(entries));
  {
    std::vector<index_t> pos(off.begin(), off.end() - 1);
    for (index_t j = 0; j < entries; ++j) ent[std::size_t(pos[std::size_t(idx[std::size_t(j)])]++)] = int(j);
  }
  const Space sp = exec.space();
  Array<int, 2> host("fem/restriction_indices", {ne_, index_t(npe_)});
  std::copy(idx.begin(), idx.end(), host.data());
  idx_ = sp == Space::Host ? host : host.clone(sp);
  t_offsets_ = Array<index_t, 1>::from("fem/restriction_transpose_offsets", std::span<const index_t>(off), sp);
  t_entries_ = Array<int, 1>::from("fem/restriction_transpose_entries", std::span<const int>(ent), sp);
}

void ElementRestriction::check(index_t global_size, const std::array<index_t, 3>& ext, const char* what) const {
  if (global_size != comps_ * nn_)
    fail("fem::ElementRestriction::", what, ": the global vector has ", global_size, " entries, expected components x nodes = ",
         comps_, " x ", nn_, " = ", comps_ * nn_);
  if (ext[0] != ne_ || ext[1] != comps_ || ext[2] != npe_)
    fail("fem::ElementRestriction::", what, ": the element-local array has extents (", ext[0], ", ", ext[1], ", ", ext[2],
         "), expected (elements, components, nodes per element) = (", ne_, ", ", comps_, ", ", npe_, ")");
}

void ElementRestriction::gather(View<const double, 1> global, View<double, 3> local) const {
  check(global.extent(0), {local.extent(0), local.extent(1), local.extent(2)}, "gather");
  const auto idx = idx_.cview();
  const index_t nn = nn_;
  const int npe = npe_, nc = comps_;
  forall("fem/restriction_gather", exec_, ne_ * npe, TESSERA_LAMBDA(index_t j) {
    const index_t k = j / npe;
    const int i = int(j - k * npe);
    const index_t n = idx(k, i);
    for (int c = 0; c < nc; ++c) local(k, c, i) = global(c * nn + n);
  });
}

void ElementRestriction::scatter_add(View<const double, 3> local, View<double, 1> global, ScatterMethod m) const {
  check(global.extent(0), {local.extent(0), local.extent(1), local.extent(2)}, "scatter_add");
  const index_t nn = nn_;
  const int npe = npe_, nc = comps_;
  if (m == ScatterMethod::Atomic) {
    const auto idx = idx_.cview();
    forall("fem/restriction_scatter_atomic", exec_, ne_ * npe, TESSERA_LAMBDA(index_t j) {
      const index_t k = j / npe;
      const int i = int(j - k * npe);
      const index_t n = idx(k, i);
      for (int c = 0; c < nc; ++c) atomic_add(&global(c * nn + n), local(k, c, i));
    });
    return;
  }
  const auto off = t_offsets_.cview();
  const auto ent = t_entries_.cview();
  forall("fem/restriction_scatter_transpose", exec_, nn, TESSERA_LAMBDA(index_t n) {
    const index_t b = off(n), e = off(n + 1);
    for (int c = 0; c < nc; ++c) {
      double s = 0;
      for (index_t t = b; t < e; ++t) {
        const index_t j = ent(t);
        const index_t k = j / npe;
        s += local(k, c, int(j - k * npe));
      }
      global(c * nn + n) += s;
    }
  });
}

}  // namespace tessera::fem
