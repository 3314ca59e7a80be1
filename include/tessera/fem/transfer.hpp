#pragma once
/// \file transfer.hpp
/// `OrderTransfer`: the prolongation from the order-pc H1 space of a mesh to the order-pf
/// space of the same mesh (pc < pf), and its exact transpose, on every backend: the
/// transfers of p-multigrid.
///
///     tessera::fem::H1Space coarse(mesh, 1), fine(mesh, 3);
///     tessera::fem::OrderTransfer t(coarse, fine, exec);
///     t.prolong(xc.cview(), xf.view());     // xf = P xc: the order-3 interpolant of the order-1 field
///     t.restrict_(rf.cview(), rc.view());   // rc = P^T rf
///
/// The matrix. On each element, T_g(i, j) = phi^c_j(node^f_i) is the coarse basis at the
/// fine element's reference nodes (num_nodes(g, pf) x num_nodes(g, pc)). With R_c, R_f the
/// element restrictions (gathers) and W = diag(1 / multiplicity) of the fine nodes (the number
/// of elements sharing each), P = W R_f^T T R_c: every element contributes its interpolant
/// to each of its fine nodes, and the contributions are averaged. For a coarse field (a
/// global coarse vector is continuous) all contributions to a node agree, so each fine node
/// gets the value of the coarse field there and a coarse polynomial is represented exactly;
/// P is a well-defined matrix for any input. restrict_ applies P^T = R_c^T T^T R_f W with the
/// same arithmetic per entry, so (P x, y) = (x, P^T y) to roundoff.
///
/// Kernels. Quadrilaterals and hexahedra (and segments) apply T = T1 ⊗ T1 (⊗ T1) by sum
/// factorization, T1 the 1-D matrix between the GLL nodes of the two orders; triangles and
/// tetrahedra apply the dense table. One team kernel per family with the orders as run-time
/// values; the weights W are applied inside them (to the fine element-local values), so that a
/// transfer is, per geometry, a gather, one kernel and a scatter-add, with no host round trip.
/// Vector spaces transfer every component alike (component-major layout, h1_space.hpp).
///
/// The transfer keeps element-local scratch arrays (allocated once, in the constructor), so
/// one object must not be used by two host threads at the same time. It does not refer to the
/// spaces after construction.

#include <vector>

#include "tessera/core/array.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/fem/restriction.hpp"

namespace tessera::fem {

/// Prolongation and its transpose between the H1 spaces of two orders on one mesh (see the
/// file comment).
class OrderTransfer {
 public:
  /// The transfer from `coarse` (order pc) to `fine` (order pf) with kernels on exec's
  /// backend. Throws tessera::Error when the spaces are on different meshes, have different
  /// numbers of components, or when pc >= pf or pc < 1.
  OrderTransfer(const H1Space& coarse, const H1Space& fine, Exec exec = Exec::best());

  /// Order of the coarse space.
  int coarse_order() const { return pc_; }
  /// Order of the fine space.
  int fine_order() const { return pf_; }
  /// Field components of both spaces.
  int components() const { return comps_; }
  /// Degrees of freedom of the coarse space (the length of prolong's input).
  index_t coarse_size() const { return nc_dofs_; }
  /// Degrees of freedom of the fine space (the length of prolong's output).
  index_t fine_size() const { return nf_dofs_; }
  /// Backend the kernels run on.
  const Exec& exec() const { return exec_; }

  /// xf = P xc (xf overwritten): the fine-order interpolant of the coarse field. xc has
  /// coarse_size() entries, xf fine_size(), both readable by exec's backend, not overlapping.
  void prolong(View<const double, 1> xc, View<double, 1> xf) const;
  /// rc = P^T rf (rc overwritten): the exact transpose of prolong, for residuals. rf has
  /// fine_size() entries, rc coarse_size() (`restrict` being a C keyword, the name ends in _).
  void restrict_(View<const double, 1> rf, View<double, 1> rc) const;

  /// The inverse multiplicities W of the fine nodes: 1 / (number of elements sharing each
  /// fine node), fine num_nodes() entries in exec's memory space.
  const Array<double, 1>& inverse_multiplicity() const { return inv_mult_; }

 private:
  /// What one geometry of the mesh needs.
  struct Part {
    Geometry geom;
    ElementRestriction coarse, fine;
    Array<double, 2> table;    ///< tensor: T1 (pf + 1, pc + 1); simplex: T (npe_f, npe_c)
    Array<double, 2> table_t;  ///< its transpose
    mutable Array<double, 3> xc_e, xf_e;  ///< element-local scratch (elements, components, nodes)
  };
  void check(const char* what, View<const double, 1> in, index_t in_size, View<double, 1> out,
             index_t out_size) const;

  Exec exec_;
  int pc_ = 0, pf_ = 0, comps_ = 1;
  index_t nc_dofs_ = 0, nf_dofs_ = 0;
  std::vector<Part> parts_;
  Array<double, 1> inv_mult_;
};

}  // namespace tessera::fem
