#pragma once
/// \file restriction.hpp
/// `ElementRestriction`: gather of global degrees of freedom into element-local arrays and
/// the transpose, scatter-add, for the elements of one geometry of an H1Space, on every
/// backend.
///
///     tessera::fem::ElementRestriction r(space, Geometry::Hexahedron, exec);
///     Array<double, 3> local("u_e", {r.num_elements(), space.components(), r.nodes_per_element()}, exec.space());
///     r.gather(u.cview(), local.view());            // local(e, c, i) = u(c * num_nodes + node(e, i))
///     r.scatter_add(local.cview(), y.view());        // y(c * num_nodes + node(e, i)) += local(e, c, i)
///
/// Scatter-add has two methods: `Atomic` (one thread per element-local node, atomic
/// additions on the GPU and under OpenMP) and `TransposeGather` (the transposed map in CSR
/// form: one thread per global node sums its element-local copies in ascending element
/// order; no atomics, and the result does not depend on the backend's thread schedule, so
/// it is bitwise reproducible). `Auto` picks the faster measured method: `Atomic` on the
/// GPU (1.4x faster than the transpose gather for 1M hexahedra at p = 3 on the H100),
/// `TransposeGather` on the CPU (docs/benchmarks/fem.md). Ask for `TransposeGather`
/// explicitly where bitwise reproducibility matters.
///
/// Index arrays are 32-bit (int32): the space's nodes and the element-local entries
/// (elements x components x nodes per element) must stay below 2^31.

#include <vector>

#include "tessera/core/array.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/fem/h1_space.hpp"

namespace tessera::fem {

/// How scatter_add sums element-local values into global ones (see the file comment).
enum class ScatterMethod {
  Atomic,           ///< one thread per element-local node, atomic additions
  TransposeGather,  ///< one thread per global node over the transposed map; deterministic
  Auto              ///< the faster measured method: Atomic on the GPU, TransposeGather on the CPU
};

/// "atomic", "transpose-gather" or "auto".
const char* name(ScatterMethod m);

/// Element restriction of an H1Space for one geometry (see the file comment).
class ElementRestriction {
 public:
  /// The restriction for the elements of geometry g (in mesh.elements_of(g) order), with
  /// index arrays in exec's memory space. Throws when the mesh has no element of geometry g
  /// or when the element-local entries exceed 2^31 - 1. The space's node numbering is
  /// copied: the restriction does not refer to the space afterwards.
  ElementRestriction(const H1Space& space, Geometry g, Exec exec = Exec::best());

  /// Geometry of the restricted elements.
  Geometry geometry() const { return geom_; }
  /// Backend the kernels run on.
  const Exec& exec() const { return exec_; }
  /// Number of restricted elements.
  index_t num_elements() const { return ne_; }
  /// Nodes per element: num_nodes(geometry(), p).
  int nodes_per_element() const { return npe_; }
  /// Field components of the space.
  int components() const { return comps_; }
  /// Global scalar nodes of the space (the stride between components of a global vector).
  index_t num_nodes() const { return nn_; }
  /// Mesh element index of each restricted element (host).
  const std::vector<index_t>& element_ids() const { return ids_; }
  /// indices()(k, i): global node of local node i of the k-th element (exec's space).
  const Array<int, 2>& indices() const { return idx_; }

  /// local(k, c, i) = global(c * num_nodes() + indices()(k, i)). `global` has
  /// components() * num_nodes() entries, `local` extents (num_elements(), components(),
  /// nodes_per_element()); both must be readable by exec's backend.
  void gather(View<const double, 1> global, View<double, 3> local) const;
  /// global(c * num_nodes() + indices()(k, i)) += local(k, c, i) for every entry, summed by
  /// method m. Extents and memory spaces as for gather.
  void scatter_add(View<const double, 3> local, View<double, 1> global, ScatterMethod m = ScatterMethod::Auto) const;

 private:
  void check(const char* what, const void* global_data, index_t global_size, const void* local_data,
             const std::array<index_t, 3>& local_ext) const;

  Geometry geom_;
  Exec exec_;
  index_t ne_ = 0, nn_ = 0;
  int npe_ = 0, comps_ = 1;
  std::vector<index_t> ids_;
  Array<int, 2> idx_;
  // Transposed map: the element-local copies of node n are at flat offsets
  // t_entries_[t_offsets_[n] .. t_offsets_[n + 1]) of component 0 of the local array
  // (k * components * npe + i, ascending); component c adds c * npe.
  Array<index_t, 1> t_offsets_;
  Array<int, 1> t_entries_;
};

}  // namespace tessera::fem
