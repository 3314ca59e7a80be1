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
/// Scatter-add has two methods: `Atomic` (one thread per local entry, atomic additions on the
/// GPU and under OpenMP) and `TransposeGather` (the transposed map in CSR form: one thread
/// per global node sums its element-local copies; no atomics, and the summation order is
/// fixed, so results are bitwise reproducible). `Auto` picks `TransposeGather`, the faster
/// of the two on the H100 (docs/benchmarks/fem.md).

#include <vector>

#include "tessera/core/array.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/fem/h1_space.hpp"

namespace tessera::fem {

/// How scatter_add sums element-local values into global ones.
enum class ScatterMethod { Auto, Atomic, TransposeGather };

/// "auto", "atomic" or "transpose-gather".
const char* name(ScatterMethod m);

/// Element restriction of an H1Space for one geometry (see the file comment).
class ElementRestriction {
 public:
  /// The restriction for the elements of geometry g (in mesh.elements_of(g) order), with
  /// index arrays in exec's memory space. Throws when the mesh has no element of geometry g
  /// or when the element-local entries exceed 2^31 - 1.
  ElementRestriction(const H1Space& space, Geometry g, Exec exec = Exec::best());

  Geometry geometry() const { return geom_; }
  const Exec& exec() const { return exec_; }
  index_t num_elements() const { return ne_; }
  int nodes_per_element() const { return npe_; }
  int components() const { return comps_; }
  /// Global scalar nodes of the space (the stride between components).
  index_t num_nodes() const { return nn_; }
  /// Mesh element index of each restricted element.
  const std::vector<index_t>& element_ids() const { return ids_; }
  /// indices()(k, i): global node of local node i of the k-th element (exec's space).
  const Array<int, 2>& indices() const { return idx_; }

  /// local(k, c, i) = global(c * num_nodes() + indices()(k, i)). `global` has
  /// components() * num_nodes() entries, `local` extents (num_elements(), components(),
  /// nodes_per_element()); both in exec's memory space.
  void gather(View<const double, 1> global, View<double, 3> local) const;
  /// global(c * num_nodes() + indices()(k, i)) += local(k, c, i), summed by method m.
  void scatter_add(View<const double, 3> local, View<double, 1> global, ScatterMethod m = ScatterMethod::Auto) const;

 private:
  void check(index_t global_size, const std::array<index_t, 3>& local_ext, const char* what) const;

  Geometry geom_;
  Exec exec_;
  index_t ne_ = 0, nn_ = 0;
  int npe_ = 0, comps_ = 1;
  std::vector<index_t> ids_;
  Array<int, 2> idx_;
  Array<index_t, 1> t_offsets_;  // (num_nodes + 1): entries of node n are t_entries_[t_offsets_[n] .. t_offsets_[n+1])
  Array<int, 1> t_entries_;      // k * npe + i, sorted per node
};

}  // namespace tessera::fem
