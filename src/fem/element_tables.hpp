#pragma once
// The tables the interpolation and fused operator kernels read for one geometry's elements at
// a rule's points, built by one function (make_tables) for Interpolator and FusedOperator:
// tensor 1-D tables B, G, the rule's 1-D points and their derivative matrix Dq (with host
// copies for the launches that pass them as kernel parameters), or simplex dense tables.
#include <memory>
#include <vector>

#include "interpolate_kernels.hpp"
#include "tessera/fem/interpolate.hpp"

namespace tessera::fem::interp_detail {

struct ElementTables {
  ElementSizes sizes;
  QuadratureRule rule;    // host copy
  Array<double, 2> Bt;    // tensor: (nd1, nq1); simplex: (nd, nq)
  Array<double, 3> Gt;    // tensor: (1, nd1, nq1); simplex: (dim, nd, nq)
  Array<double, 2> Bq;    // simplex: (nq, nd), for the transpose
  Array<double, 3> Gq;    // simplex: (dim, nq, nd)
  Array<double, 1> x1d;   // tensor: the rule's 1-D points
  Array<double, 1> Dq;    // tensor: (nq1, nq1) Lagrange derivatives on the 1-D points (collocated gradients)
  std::vector<double> Bt_host, Gt_host, x1d_host, Dq_host;  // tensor: host copies (line kernels)
  int corners[8][3] = {};  // reference vertices (0/1) of the first-order map

  /// The sizes, the forward tables and the corners of a kernel's arguments.
  void fill(Args& a) const;
};

/// The tables of the `ne` elements (the restriction's) of geometry g of space at the points of
/// rule, in exec's space. Throws (naming `who`, e.g. "fem::Interpolator") when g is
/// unsupported, the rule is not on g, or a tensor rule is not a tensor product in lexicographic
/// order.
std::shared_ptr<const ElementTables> make_tables(const char* who, const H1Space& space, Geometry g,
                                                 const QuadratureRule& rule, const Exec& exec, index_t ne);

/// The reference vertices of g as 0/1 corners, corner[v][d] (the first-order map's monomial
/// form reads them); throws (naming `who`) where a vertex is not at one.
void reference_corners(const char* who, Geometry g, int corner[8][3]);

/// The vertex coordinates (ne, nv, sdim) of the elements of geometry g, after checking that
/// none is inverted (named in the error rather than producing infinities).
Array<double, 3> element_vertices(const Mesh& mesh, Geometry g, const QuadratureRule& rule, const Exec& exec);

}  // namespace tessera::fem::interp_detail
