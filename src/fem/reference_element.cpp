// Topology tables of the reference elements (Gmsh ordering) and lattice-node classification.
#include "tessera/fem/reference_element.hpp"

#include "tessera/core/error.hpp"

namespace tessera::fem {

namespace {

constexpr int seg_v[2][3] = {{0, 0, 0}, {1, 0, 0}};
constexpr int tri_v[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
constexpr int quad_v[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
constexpr int tet_v[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
constexpr int hex_v[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                             {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};

constexpr std::array<int, 2> seg_e[1] = {{0, 1}};
constexpr std::array<int, 2> tri_e[3] = {{0, 1}, {1, 2}, {2, 0}};
constexpr std::array<int, 2> quad_e[4] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
constexpr std::array<int, 2> tet_e[6] = {{0, 1}, {1, 2}, {2, 0}, {3, 0}, {3, 2}, {3, 1}};
constexpr std::array<int, 2> hex_e[12] = {{0, 1}, {0, 3}, {0, 4}, {1, 2}, {1, 5}, {2, 3},
                                          {2, 6}, {3, 7}, {4, 5}, {4, 7}, {5, 6}, {6, 7}};

constexpr int tri_f[1][3] = {{0, 1, 2}};
constexpr int quad_f[1][4] = {{0, 1, 2, 3}};
constexpr int tet_f[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {3, 1, 2}};
constexpr int hex_f[6][4] = {{0, 3, 2, 1}, {0, 1, 5, 4}, {0, 4, 7, 3},
                             {1, 2, 6, 5}, {2, 3, 7, 6}, {4, 5, 6, 7}};

void check_geometry(Geometry g, const char* where) {
  const int v = static_cast<int>(g);
  if (v < 0 || v > 4) fail(where, ": invalid Geometry value ", v, " (valid: 0..4)");
}

const int* vertex_coords(Geometry g, int v) {
  switch (g) {
    case Geometry::Segment: return seg_v[v];
    case Geometry::Triangle: return tri_v[v];
    case Geometry::Quadrilateral: return quad_v[v];
    case Geometry::Tetrahedron: return tet_v[v];
    case Geometry::Hexahedron: return hex_v[v];
  }
  return nullptr;
}

void check_index(const char* what, int i, int n, Geometry g) {
  if (n == 0)
    fail("fem::", what, ": a ", name(g), " has no faces (index ", i, " asked); only 2-D and 3-D elements have faces");
  if (i < 0 || i >= n) fail("fem::", what, ": index ", i, " is out of range for a ", name(g), " (valid: 0..", n - 1, ")");
}

}  // namespace

int num_vertices(Geometry g) {
  check_geometry(g, "fem::num_vertices");
  constexpr int n[] = {2, 3, 4, 4, 8};
  return n[static_cast<int>(g)];
}

int num_edges(Geometry g) {
  check_geometry(g, "fem::num_edges");
  constexpr int n[] = {1, 3, 4, 6, 12};
  return n[static_cast<int>(g)];
}

int num_faces(Geometry g) {
  check_geometry(g, "fem::num_faces");
  constexpr int n[] = {0, 1, 1, 4, 6};
  return n[static_cast<int>(g)];
}

std::array<double, 3> reference_vertex(Geometry g, int v) {
  check_index("reference_vertex", v, num_vertices(g), g);
  const int* c = vertex_coords(g, v);
  return {double(c[0]), double(c[1]), double(c[2])};
}

std::array<int, 2> edge_vertices(Geometry g, int e) {
  check_index("edge_vertices", e, num_edges(g), g);
  switch (g) {
    case Geometry::Segment: return seg_e[e];
    case Geometry::Triangle: return tri_e[e];
    case Geometry::Quadrilateral: return quad_e[e];
    case Geometry::Tetrahedron: return tet_e[e];
    case Geometry::Hexahedron: return hex_e[e];
  }
  return {0, 0};
}

std::span<const int> face_vertices(Geometry g, int f) {
  check_index("face_vertices", f, num_faces(g), g);
  switch (g) {
    case Geometry::Triangle: return {tri_f[f], 3};
    case Geometry::Quadrilateral: return {quad_f[f], 4};
    case Geometry::Tetrahedron: return {tet_f[f], 3};
    case Geometry::Hexahedron: return {hex_f[f], 4};
    default: break;
  }
  return {};
}

Geometry face_geometry(Geometry g, int f) {
  check_index("face_geometry", f, num_faces(g), g);
  return face_vertices(g, f).size() == 3 ? Geometry::Triangle : Geometry::Quadrilateral;
}

Geometry boundary_geometry(Geometry g) {
  check_geometry(g, "fem::boundary_geometry");
  switch (g) {
    case Geometry::Triangle:
    case Geometry::Quadrilateral: return Geometry::Segment;
    case Geometry::Tetrahedron: return Geometry::Triangle;
    case Geometry::Hexahedron: return Geometry::Quadrilateral;
    default: break;
  }
  fail("fem::boundary_geometry: the boundary of a segment is points, which have no Geometry");
}

void vertex_shape_functions(Geometry g, std::span<const double> xi, std::span<double> values,
                            std::span<double> gradients) {
  const int d = dim(g), nv = num_vertices(g);
  if (int(xi.size()) != d)
    fail("fem::vertex_shape_functions: a ", name(g), " needs ", d, " reference coordinates, got ", xi.size());
  if (int(values.size()) < nv || (!gradients.empty() && int(gradients.size()) < nv * d))
    fail("fem::vertex_shape_functions: output spans hold ", values.size(), " values and ", gradients.size(),
         " gradient entries; a ", name(g), " needs ", nv, " and ", nv * d);
  for (int v = 0; v < nv; ++v) {
    const int* a = vertex_coords(g, v);
    if (is_simplex(g)) {
      double s = 1;
      for (int c = 0; c < d; ++c) s -= xi[std::size_t(c)];
      values[std::size_t(v)] = v == 0 ? s : xi[std::size_t(v - 1)];
      if (!gradients.empty())
        for (int c = 0; c < d; ++c) gradients[std::size_t(v * d + c)] = v == 0 ? -1.0 : double(a[c]);
      continue;
    }
    double n = 1;
    for (int k = 0; k < d; ++k) n *= a[k] ? xi[std::size_t(k)] : 1 - xi[std::size_t(k)];
    values[std::size_t(v)] = n;
    if (gradients.empty()) continue;
    for (int c = 0; c < d; ++c) {
      double s = a[c] ? 1.0 : -1.0;
      for (int k = 0; k < d; ++k)
        if (k != c) s *= a[k] ? xi[std::size_t(k)] : 1 - xi[std::size_t(k)];
      gradients[std::size_t(v * d + c)] = s;
    }
  }
}

index_t num_nodes(Geometry g, int p) {
  check_geometry(g, "fem::num_nodes");
  if (p < 1) fail("fem::num_nodes: order p = ", p, " is not supported (p >= 1)");
  const index_t n = p + 1;
  switch (g) {
    case Geometry::Segment: return n;
    case Geometry::Quadrilateral: return n * n;
    case Geometry::Hexahedron: return n * n * n;
    case Geometry::Triangle: return n * (n + 1) / 2;
    case Geometry::Tetrahedron: return n * (n + 1) * (n + 2) / 6;
  }
  return 0;
}

std::vector<std::array<int, 3>> lattice_nodes(Geometry g, int p) {
  std::vector<std::array<int, 3>> out;
  out.reserve(static_cast<std::size_t>(num_nodes(g, p)));
  const int d = dim(g);
  const int kmax = d == 3 ? p : 0, jmax = d >= 2 ? p : 0;
  const bool simplex = is_simplex(g);
  for (int k = 0; k <= kmax; ++k)
    for (int j = 0; j <= (simplex ? jmax - k : jmax); ++j)
      for (int i = 0; i <= (simplex ? p - j - k : p); ++i) out.push_back({i, j, k});
  return out;
}

namespace {

// Is L = p*A + s*(B - A) for an integer s in 1..p-1? (A, B: vertex coordinates in {0,1}^3.)
bool on_edge(const std::array<int, 3>& L, int p, const int* A, const int* B, int& s) {
  s = -1;
  for (int c = 0; c < 3; ++c) {
    const int r = L[c] - p * A[c], d = B[c] - A[c];
    if (d == 0) {
      if (r != 0) return false;
    } else {
      const int t = r / d;
      if (t * d != r || (s >= 0 && s != t)) return false;
      s = t;
    }
  }
  return s >= 1 && s <= p - 1;
}

// Is L = p*A + s*(B - A) + t*(C - A) with s, t >= 1 and (triangle) s + t <= p - 1 or
// (parallelogram) s, t <= p - 1?
bool on_face(const std::array<int, 3>& L, int p, const int* A, const int* B, const int* C, bool triangle, int& s,
             int& t) {
  int u[3], v[3], r[3];
  for (int c = 0; c < 3; ++c) u[c] = B[c] - A[c], v[c] = C[c] - A[c], r[c] = L[c] - p * A[c];
  for (int c0 = 0; c0 < 3; ++c0)
    for (int c1 = c0 + 1; c1 < 3; ++c1) {
      const int det = u[c0] * v[c1] - u[c1] * v[c0];
      if (det == 0) continue;
      const int sn = r[c0] * v[c1] - r[c1] * v[c0], tn = u[c0] * r[c1] - u[c1] * r[c0];
      if (sn % det != 0 || tn % det != 0) return false;
      s = sn / det, t = tn / det;
      for (int c = 0; c < 3; ++c)
        if (s * u[c] + t * v[c] != r[c]) return false;
      if (s < 1 || t < 1) return false;
      return triangle ? s + t <= p - 1 : (s <= p - 1 && t <= p - 1);
    }
  return false;
}

}  // namespace

NodeLocation classify_node(Geometry g, int p, std::array<int, 3> L) {
  const index_t n = num_nodes(g, p);  // validates g and p
  (void)n;
  const int d = dim(g);
  for (int c = 0; c < 3; ++c) {
    const bool bad = c >= d ? L[c] != 0 : (L[c] < 0 || L[c] > p);
    if (bad || (is_simplex(g) && L[0] + L[1] + L[2] > p))
      fail("fem::classify_node: (", L[0], ", ", L[1], ", ", L[2], ") is not a lattice node of the order-", p, " ",
           name(g));
  }
  NodeLocation loc;
  for (int v = 0; v < num_vertices(g); ++v) {
    const int* V = vertex_coords(g, v);
    if (L[0] == p * V[0] && L[1] == p * V[1] && L[2] == p * V[2]) {
      loc.entity_dim = 0, loc.entity = v;
      return loc;
    }
  }
  for (int e = 0; e < num_edges(g); ++e) {
    const auto ev = edge_vertices(g, e);
    int s;
    if (on_edge(L, p, vertex_coords(g, ev[0]), vertex_coords(g, ev[1]), s)) {
      loc.entity_dim = 1, loc.entity = e, loc.coords = {s, 0, 0};
      return loc;
    }
  }
  for (int f = 0; f < num_faces(g); ++f) {
    const auto fv = face_vertices(g, f);
    const bool tri = fv.size() == 3;
    const int* A = vertex_coords(g, fv[0]);
    const int* B = vertex_coords(g, fv[1]);
    const int* C = vertex_coords(g, fv[tri ? 2 : 3]);
    int s, t;
    if (on_face(L, p, A, B, C, tri, s, t)) {
      loc.entity_dim = 2, loc.entity = f;
      loc.coords = tri ? std::array<int, 3>{p - s - t, s, t} : std::array<int, 3>{s, t, 0};
      return loc;
    }
  }
  loc.entity_dim = 3, loc.entity = 0;
  return loc;
}

}  // namespace tessera::fem
