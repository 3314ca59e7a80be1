// Host set-up of the field-function kernels (field_functions.hpp): the element maps' nodes
// and shape functions at reference points, first owners of shared nodes.
#include "tessera/fem/field_functions.hpp"

#include "tessera/core/error.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

std::vector<Geometry> volume_geometries(const Mesh& mesh) {
  std::vector<Geometry> out;
  for (Geometry g : {Geometry::Segment, Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron,
                     Geometry::Hexahedron})
    if (fem::dim(g) == mesh.dim() && mesh.num_elements(g) > 0) out.push_back(g);
  return out;
}

ElementPoints element_points(const Mesh& mesh, Geometry g, const Array<double, 2>& ref_points_any, const Exec& exec) {
  const Array<double, 2> ref = ref_points_any.to_host();
  const int d = fem::dim(g), sd = mesh.space_dim();
  TESSERA_REQUIRE(ref.extent(1) == d, "fem::element_points: the points have ", ref.extent(1), " coordinates, a ",
                  name(g), " needs ", d);
  // the mesh's map: the vertices and vertex shape functions, or a curved mesh's nodes and
  // the order-k basis
  const Array<double, 3> X = element_map_nodes(mesh, g);
  const Array<double, 2> N = map_shape_values(mesh, g, ref);
  ElementPoints ep;
  ep.geom = g;
  ep.space_dim = sd;
  const Space sp = exec.space();
  ep.X = sp == Space::Host ? X : X.clone(sp);
  ep.N = sp == Space::Host ? N : N.clone(sp);
  return ep;
}

Array<unsigned char, 2> first_owner_flags(const H1Space& space, const ElementRestriction& r,
                                          std::vector<unsigned char>& seen, const Exec& exec) {
  TESSERA_REQUIRE(seen.size() == std::size_t(space.num_nodes()), "fem::first_owner_flags: ", seen.size(),
                  " flags for ", space.num_nodes(), " nodes");
  const index_t ne = r.num_elements();
  const int npe = r.nodes_per_element();
  Array<unsigned char, 2> own("fem/first_owner", {ne, npe});
  for (index_t k = 0; k < ne; ++k) {
    const auto nodes = space.element_nodes(r.element_ids()[std::size_t(k)]);
    for (int i = 0; i < npe; ++i) {
      unsigned char& s = seen[std::size_t(nodes[std::size_t(i)])];
      own(k, i) = s ? 0 : 1;
      s = 1;
    }
  }
  return exec.space() == Space::Host ? own : own.clone(exec.space());
}

}  // namespace tessera::fem
