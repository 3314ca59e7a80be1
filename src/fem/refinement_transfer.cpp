// RefinementTransfer: the prolongation between a mesh's H1 space and that of its uniform
// refinement, as sparse matrices built on the host.
#include "tessera/fem/refinement_transfer.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

RefinementTransfer::RefinementTransfer(const H1Space& coarse, const H1Space& fine, Exec exec) : exec_(exec) {
  const Mesh& cm = coarse.mesh();
  const Mesh& fm = fine.mesh();
  const int p = coarse.order(), comps = coarse.components();
  TESSERA_REQUIRE(fine.order() == p, "fem::RefinementTransfer: the coarse space has order ", p, ", the fine one ",
                  fine.order(), "; both must have the same order");
  TESSERA_REQUIRE(fine.components() == comps, "fem::RefinementTransfer: ", comps, " and ", fine.components(),
                  " components");
  TESSERA_REQUIRE(cm.dim() == fm.dim() && cm.space_dim() == fm.space_dim(),
                  "fem::RefinementTransfer: the meshes have different dimensions");
  const int dim = cm.dim(), sd = cm.space_dim();
  const index_t nch = index_t(1) << dim;
  TESSERA_REQUIRE(fm.num_elements() == cm.num_elements() * nch, "fem::RefinementTransfer: the fine mesh has ",
                  fm.num_elements(), " elements, not ", nch, " x ", cm.num_elements(),
                  ": it is not the uniform refinement of the coarse mesh");
  const index_t nf = fine.num_nodes(), ncn = coarse.num_nodes();
  std::vector<unsigned char> done(static_cast<std::size_t>(nf), 0);
  std::vector<std::int64_t> rows;
  std::vector<int> cols;
  std::vector<double> vals;
  rows.reserve(std::size_t(nf) * 8);
  cols.reserve(rows.capacity());
  vals.reserve(rows.capacity());
  for (Geometry g : {Geometry::Segment, Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron,
                     Geometry::Hexahedron}) {
    if (fem::dim(g) != dim || cm.num_elements(g) == 0) continue;
    const H1Basis basis(g, p);
    const H1Basis lattice2(g, 2);  // the candidate positions of the children's vertices
    const int npe = int(basis.size()), nv = num_vertices(g), nl = int(lattice2.size());
    std::vector<double> phi(static_cast<std::size_t>(npe));
    // first-order vertex functions at the candidates and at the nodes (reference coordinates)
    std::vector<double> Nl(static_cast<std::size_t>(nl * nv)), Nn(static_cast<std::size_t>(npe * nv));
    for (int l = 0; l < nl; ++l) {
      double xi[3] = {0, 0, 0};
      for (int d = 0; d < dim; ++d) xi[d] = lattice2.nodes()(l, d);
      vertex_shape_functions(g, std::span<const double>(xi, std::size_t(dim)), std::span<double>(&Nl[std::size_t(l * nv)], std::size_t(nv)));
    }
    for (int i = 0; i < npe; ++i) {
      double xi[3] = {0, 0, 0};
      for (int d = 0; d < dim; ++d) xi[d] = basis.nodes()(i, d);
      vertex_shape_functions(g, std::span<const double>(xi, std::size_t(dim)), std::span<double>(&Nn[std::size_t(i * nv)], std::size_t(nv)));
    }
    std::vector<double> cand(static_cast<std::size_t>(nl * sd));
    std::vector<int> child_at(static_cast<std::size_t>(nv));
    for (index_t e : cm.elements_of(g)) {
      const auto pv = cm.element_vertices(e);
      double h2 = 0;  // squared size of the parent, for the matching tolerance
      for (int l = 0; l < nl; ++l) {
        if (cm.has_nodes()) {  // a curved parent's children have their vertices on its map
          const auto x = cm.map(e, std::span<const double>(&lattice2.nodes()(l, 0), std::size_t(dim)));
          for (int r = 0; r < sd; ++r) cand[std::size_t(l * sd + r)] = x[std::size_t(r)];
          continue;
        }
        for (int r = 0; r < sd; ++r) {
          double x = 0;
          for (int v = 0; v < nv; ++v) x += Nl[std::size_t(l * nv + v)] * cm.vertex(pv[std::size_t(v)], r);
          cand[std::size_t(l * sd + r)] = x;
        }
      }
      for (int r = 0; r < sd; ++r) {
        const double d = cm.vertex(pv[1], r) - cm.vertex(pv[0], r);
        h2 += d * d;
      }
      const auto coarse_nodes = coarse.element_nodes(e);
      for (index_t c = 0; c < nch; ++c) {
        const index_t k = e * nch + c;
        TESSERA_REQUIRE(fm.element_geometry(k) == g, "fem::RefinementTransfer: fine element ", k, " is a ",
                        name(fm.element_geometry(k)), ", its parent ", e, " a ", name(g),
                        ": the fine mesh is not the uniform refinement of the coarse mesh");
        const auto cv = fm.element_vertices(k);
        for (int v = 0; v < nv; ++v) {
          int best = -1;
          double bd = 0;
          for (int l = 0; l < nl; ++l) {
            double d2 = 0;
            for (int r = 0; r < sd; ++r) {
              const double t = fm.vertex(cv[std::size_t(v)], r) - cand[std::size_t(l * sd + r)];
              d2 += t * t;
            }
            if (best < 0 || d2 < bd) best = l, bd = d2;
          }
          TESSERA_REQUIRE(bd <= 1e-16 * h2, "fem::RefinementTransfer: vertex ", v, " of fine element ", k,
                          " is not a vertex, edge midpoint, face centre or centre of its parent ", e,
                          ": the fine mesh is not the uniform refinement of the coarse mesh");
          child_at[std::size_t(v)] = best;
        }
        const auto fnodes = fine.element_nodes(k);
        for (int i = 0; i < npe; ++i) {
          const index_t n = fnodes[std::size_t(i)];
          if (done[std::size_t(n)]) continue;
          done[std::size_t(n)] = 1;
          // the node's position in the parent's reference element
          double xi[3] = {0, 0, 0};
          for (int v = 0; v < nv; ++v)
            for (int d = 0; d < dim; ++d)
              xi[d] += Nn[std::size_t(i * nv + v)] * lattice2.nodes()(child_at[std::size_t(v)], d);
          basis.eval(std::span<const double>(xi, std::size_t(dim)), std::span<double>(phi));
          for (int j = 0; j < npe; ++j) {
            if (std::abs(phi[std::size_t(j)]) < 1e-14) continue;
            for (int comp = 0; comp < comps; ++comp) {
              rows.push_back(std::int64_t(comp) * nf + n);
              cols.push_back(int(std::int64_t(comp) * ncn + coarse_nodes[std::size_t(j)]));
              vals.push_back(phi[std::size_t(j)]);
            }
          }
        }
      }
    }
  }
  const index_t nnz = index_t(rows.size());
  linalg::CooMatrix coo;
  coo.rows = nf * comps;
  coo.cols = ncn * comps;
  coo.row = Array<std::int64_t, 1>::from("fem/refinement_transfer/row", std::span<const std::int64_t>(rows));
  coo.col = Array<int, 1>::from("fem/refinement_transfer/col", std::span<const int>(cols));
  coo.val = Array<double, 1>::from("fem/refinement_transfer/val", std::span<const double>(vals));
  P_ = linalg::csr_from_coo(coo, exec_);
  linalg::CooMatrix coot;
  coot.rows = coo.cols;
  coot.cols = coo.rows;
  std::vector<std::int64_t> rt(cols.begin(), cols.end());
  std::vector<int> ct(rows.size());
  for (index_t t = 0; t < nnz; ++t) ct[std::size_t(t)] = int(rows[std::size_t(t)]);
  coot.row = Array<std::int64_t, 1>::from("fem/refinement_transfer/row_t", std::span<const std::int64_t>(rt));
  coot.col = Array<int, 1>::from("fem/refinement_transfer/col_t", std::span<const int>(ct));
  coot.val = coo.val;
  Pt_ = linalg::csr_from_coo(coot, exec_);
}

void RefinementTransfer::prolong(View<const double, 1> xc, View<double, 1> xf) const {
  TESSERA_REQUIRE(xc.size() == coarse_size() && xf.size() == fine_size(), "fem::RefinementTransfer::prolong: vectors of ",
                  xc.size(), " and ", xf.size(), " entries for ", coarse_size(), " coarse and ", fine_size(),
                  " fine DOFs");
  P_.apply(xc, xf);
}

void RefinementTransfer::restrict_(View<const double, 1> rf, View<double, 1> rc) const {
  TESSERA_REQUIRE(rf.size() == fine_size() && rc.size() == coarse_size(),
                  "fem::RefinementTransfer::restrict_: vectors of ", rf.size(), " and ", rc.size(), " entries for ",
                  fine_size(), " fine and ", coarse_size(), " coarse DOFs");
  Pt_.apply(rf, rc);
}

}  // namespace tessera::fem
