// Tests of write_gmsh (io/gmsh.hpp): MSH 4.1 files that read_gmsh (and Gmsh, when installed)
// read back to the same mesh.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fem_test_util.hpp"
#include "io_test_util.hpp"
#include "tessera/fem/mesh.hpp"
#include "tessera/io/gmsh.hpp"

namespace {

using tessera::index_t;
using tessera::fem::Geometry;
using tessera::fem::Mesh;

// Same vertices (bit for bit: the writer prints the shortest exact decimal form), elements,
// boundary faces and attributes, in the same order.
void expect_identical(const Mesh& a, const Mesh& b, const std::string& what) {
  ASSERT_EQ(a.num_vertices(), b.num_vertices()) << what;
  ASSERT_EQ(a.num_elements(), b.num_elements()) << what;
  ASSERT_EQ(a.num_boundary(), b.num_boundary()) << what;
  ASSERT_EQ(a.space_dim(), b.space_dim()) << what;
  for (index_t v = 0; v < a.num_vertices(); ++v)
    for (int c = 0; c < a.space_dim(); ++c) ASSERT_EQ(a.vertex(v, c), b.vertex(v, c)) << what << " vertex " << v;
  for (index_t e = 0; e < a.num_elements(); ++e) {
    ASSERT_EQ(a.element_geometry(e), b.element_geometry(e)) << what;
    ASSERT_EQ(a.element_attribute(e), b.element_attribute(e)) << what << " element " << e;
    const auto x = a.element_vertices(e), y = b.element_vertices(e);
    ASSERT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end())) << what << " element " << e;
  }
  for (index_t f = 0; f < a.num_boundary(); ++f) {
    ASSERT_EQ(a.boundary_geometry(f), b.boundary_geometry(f)) << what;
    ASSERT_EQ(a.boundary_attribute(f), b.boundary_attribute(f)) << what << " face " << f;
    const auto x = a.boundary_vertices(f), y = b.boundary_vertices(f);
    ASSERT_TRUE(std::equal(x.begin(), x.end(), y.begin(), y.end())) << what << " face " << f;
  }
}

// Box meshes of every geometry (perturbed: coordinates with long decimal forms), with mixed
// element attributes so that the element blocks alternate.
TEST(GmshWrite, BoxMeshesReadBackIdentical) {
  for (Geometry g : {Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron, Geometry::Hexahedron}) {
    tessera::fem::BoxOptions o;
    o.perturb = 0.2;
    Mesh mesh = tessera::fem::box_mesh(g, {3, 2, 2}, o);
    for (index_t e = 0; e < mesh.num_elements(); ++e) mesh.set_element_attribute(e, 1 + int(e % 3 == 0) + 5 * int(e % 4 == 1));
    const std::string doc = tessera::io::write_gmsh_string(mesh);
    ASSERT_EQ(doc.rfind("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n", 0), 0u);
    std::vector<std::string> warnings;
    const Mesh back = tessera::io::read_gmsh_bytes(doc, "box.msh", &warnings);
    EXPECT_TRUE(warnings.empty());
    expect_identical(mesh, back, tessera::fem::name(g));
    // Written again, the file is the same.
    EXPECT_EQ(tessera::io::write_gmsh_string(back), doc);
  }
}

TEST(GmshWrite, StoredMeshesRoundTrip) {
  for (const char* f : {"square_quad_v41.msh", "cube_tet_v41_bin.msh", "square_tri_v22.msh"}) {
    std::vector<std::string> warnings;
    const Mesh mesh = tessera::io::read_gmsh(tessera::io::test::data_path(f), &warnings);
    const Mesh back = tessera::io::read_gmsh_bytes(tessera::io::write_gmsh_string(mesh), f, &warnings);
    expect_identical(mesh, back, f);
  }
}

TEST(GmshWrite, ErrorsNameTheProblem) {
  Mesh mesh = tessera::fem::box_mesh(Geometry::Quadrilateral, {2, 2, 1});
  mesh.set_element_attribute(3, 0);
  EXPECT_ERROR_MENTIONS(tessera::io::write_gmsh_string(mesh), "element 3", "attribute 0", "positive");
  EXPECT_ERROR_MENTIONS(tessera::io::write_gmsh("/no/such/dir/m.msh", tessera::fem::box_mesh(Geometry::Triangle, {1, 1, 1})),
                        "/no/such/dir/m.msh", "cannot open");
}

// Gmsh itself reads the file (when installed): same counts of nodes and elements.
TEST(GmshWrite, GmshReadsTheFile) {
  const std::string gmsh = TESSERA_GMSH_EXECUTABLE;
  if (gmsh.empty()) GTEST_SKIP() << "gmsh not installed";
  const Mesh mesh = tessera::fem::box_mesh(Geometry::Tetrahedron, {2, 2, 2});
  const auto dir = std::filesystem::path(::testing::TempDir()) / "tessera_gmsh_write";
  std::filesystem::create_directories(dir);
  const std::string in = (dir / "in.msh").string(), out = (dir / "out.msh").string();
  tessera::io::write_gmsh(in, mesh);
  // Gmsh reads the file and saves it again (MSH 4.1); read_gmsh reads that.
  const std::string cmd = "'" + gmsh + "' '" + in + "' -save -format msh41 -o '" + out + "' > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const Mesh back = tessera::io::read_gmsh(out);
  EXPECT_EQ(back.num_vertices(), mesh.num_vertices());
  EXPECT_EQ(back.num_elements(), mesh.num_elements());
  EXPECT_EQ(back.num_boundary(), mesh.num_boundary());
}

}  // namespace
