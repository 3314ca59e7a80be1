// Mesh: building and topology queries (geometry and validation live in mesh_geometry.cpp).
#include "tessera/fem/mesh.hpp"

#include "tessera/core/error.hpp"
#include "tessera/fem/reference_element.hpp"

namespace tessera::fem {

Mesh::Mesh(int space_dim) : sdim_(space_dim) {
  if (space_dim < 1 || space_dim > 3) fail("fem::Mesh: space dimension ", space_dim, " is not 1, 2 or 3");
}

index_t Mesh::add_vertex(std::span<const double> x) {
  if (sdim_ == 0) fail("fem::Mesh::add_vertex: the mesh has no space dimension (construct it with Mesh(space_dim))");
  if (int(x.size()) != sdim_)
    fail("fem::Mesh::add_vertex: got ", x.size(), " coordinates for a mesh in ", sdim_, "-D");
  coords_.insert(coords_.end(), x.begin(), x.end());
  return num_vertices() - 1;
}

index_t Mesh::add_element(Geometry g, std::span<const index_t> v, int attribute) {
  if (has_nodes())
    fail("fem::Mesh::add_element: the mesh has order-", nodes_order_,
         " nodes already; add every element first, then call set_nodes");
  const int nv = fem::num_vertices(g);  // validates g
  if (int(v.size()) != nv)
    fail("fem::Mesh::add_element: a ", name(g), " has ", nv, " vertices, got ", v.size());
  if (fem::dim(g) > sdim_)
    fail("fem::Mesh::add_element: a ", name(g), " does not fit in a ", sdim_, "-D mesh");
  el_geom_.push_back(g);
  el_conn_.insert(el_conn_.end(), v.begin(), v.end());
  el_off_.push_back(index_t(el_conn_.size()));
  el_attr_.push_back(attribute);
  ++count_[static_cast<int>(g)];
  if (fem::dim(g) > dim_) dim_ = fem::dim(g);
  return num_elements() - 1;
}

index_t Mesh::add_boundary(Geometry g, std::span<const index_t> v, int attribute) {
  const int nv = fem::num_vertices(g);
  if (int(v.size()) != nv)
    fail("fem::Mesh::add_boundary: a ", name(g), " has ", nv, " vertices, got ", v.size());
  if (fem::dim(g) >= sdim_)
    fail("fem::Mesh::add_boundary: a ", name(g), " cannot bound elements of a ", sdim_, "-D mesh");
  bd_geom_.push_back(g);
  bd_conn_.insert(bd_conn_.end(), v.begin(), v.end());
  bd_off_.push_back(index_t(bd_conn_.size()));
  bd_attr_.push_back(attribute);
  return num_boundary() - 1;
}

void Mesh::set_nodes(int order, std::vector<double> nodes) {
  if (order < 1 || order > max_geometry_order)
    fail("fem::Mesh::set_nodes: geometry order ", order, " is outside 1..", max_geometry_order);
  if (num_elements() == 0) fail("fem::Mesh::set_nodes: the mesh has no elements to give nodes");
  std::vector<index_t> off(std::size_t(num_elements()) + 1, 0);
  for (index_t e = 0; e < num_elements(); ++e)
    off[std::size_t(e) + 1] = off[std::size_t(e)] + fem::num_nodes(element_geometry(e), order) * sdim_;
  if (index_t(nodes.size()) != off.back())
    fail("fem::Mesh::set_nodes: order-", order, " nodes of these ", num_elements(), " elements in ", sdim_,
         "-D need ", off.back(), " coordinates (num_nodes(geometry, ", order, ") * ", sdim_,
         " per element), got ", nodes.size());
  nodes_order_ = order;
  nodes_ = std::move(nodes);
  nodes_off_ = std::move(off);
}

void Mesh::clear_nodes() {
  nodes_order_ = 0;
  nodes_.clear();
  nodes_off_.clear();
}

void Mesh::reserve(index_t vertices, index_t elements, index_t boundary) {
  coords_.reserve(std::size_t(vertices * sdim_));
  el_geom_.reserve(std::size_t(elements));
  el_off_.reserve(std::size_t(elements + 1));
  el_conn_.reserve(std::size_t(elements * 4));
  el_attr_.reserve(std::size_t(elements));
  bd_geom_.reserve(std::size_t(boundary));
  bd_off_.reserve(std::size_t(boundary + 1));
  bd_conn_.reserve(std::size_t(boundary * 3));
  bd_attr_.reserve(std::size_t(boundary));
}

bool Mesh::is_uniform() const {
  if (el_geom_.empty()) return false;
  return num_elements(el_geom_.front()) == num_elements();
}

std::vector<index_t> Mesh::elements_of(Geometry g) const {
  std::vector<index_t> out;
  out.reserve(std::size_t(num_elements(g)));
  for (index_t e = 0; e < num_elements(); ++e)
    if (el_geom_[std::size_t(e)] == g) out.push_back(e);
  return out;
}

}  // namespace tessera::fem
