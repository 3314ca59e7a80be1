#pragma once
/// \file refinement_transfer.hpp
/// `RefinementTransfer`: the prolongation from the order-p H1 space of a mesh to the order-p
/// H1 space of its uniform refinement (refine_uniformly), and its exact transpose: the
/// transfers between the mesh (h) levels of multigrid.
///
///     tessera::fem::Mesh coarse_mesh = tessera::fem::generate_mesh("box:hex:12x12x12");
///     tessera::fem::Mesh fine_mesh = tessera::fem::refine_uniformly(coarse_mesh);
///     tessera::fem::H1Space coarse(coarse_mesh, 1), fine(fine_mesh, 1);
///     tessera::fem::RefinementTransfer t(coarse, fine, exec);
///     t.prolong(xc.cview(), xf.view());     // xf = P xc: the coarse field at the fine nodes
///     t.restrict_(rf.cview(), rc.view());   // rc = P^T rf
///
/// The matrix. refine_uniformly gives element e of the coarse mesh the children
/// e 2^dim ... e 2^dim + 2^dim - 1 of the same geometry, whose vertices are the parent's
/// vertices, edge midpoints, face centres and centre (the parent's order-2 lattice points).
/// Each child vertex is located among those points (by its coordinates, which the
/// constructor checks), so the child's reference element maps into the parent's by its
/// first-order map; a fine node gets the value of the coarse field at its position in the
/// first child (in mesh order) that holds it: P(n, j) = phi^c_j(xi_n), phi^c the parent's basis.
/// Entries below 1e-14 in magnitude are dropped. P is built on the host (O(fine nodes x nodes per
/// element)) and kept as two CsrMatrix objects, P and P^T, whose products run on exec
/// (cuSPARSE on the GPU). Vector spaces transfer every component alike.

#include "tessera/core/exec.hpp"
#include "tessera/fem/h1_space.hpp"
#include "tessera/linalg/csr.hpp"

namespace tessera::fem {

/// Prolongation and its transpose between the order-p spaces of a mesh and of its uniform
/// refinement (see the file comment).
class RefinementTransfer {
 public:
  /// Throws tessera::Error when the orders or the components differ, when the fine mesh
  /// does not have 2^dim times the coarse mesh's elements, or when a child's geometry or
  /// vertices do not match its parent's refinement (the fine mesh is not refine_uniformly of
  /// the coarse one), naming the element.
  RefinementTransfer(const H1Space& coarse, const H1Space& fine, Exec exec = Exec::best());

  index_t coarse_size() const { return P_.cols(); }  ///< DOFs of the coarse space
  index_t fine_size() const { return P_.rows(); }    ///< DOFs of the fine space
  const Exec& exec() const { return exec_; }
  /// xf = P xc (xf overwritten), vectors in exec's memory space.
  void prolong(View<const double, 1> xc, View<double, 1> xf) const;
  /// rc = P^T rf (rc overwritten).
  void restrict_(View<const double, 1> rf, View<double, 1> rc) const;
  /// The matrix P (fine_size() x coarse_size()).
  const linalg::CsrMatrix& matrix() const { return P_; }

 private:
  Exec exec_;
  linalg::CsrMatrix P_, Pt_;
};

}  // namespace tessera::fem
