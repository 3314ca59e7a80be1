# Writes the meshio_*.vtu samples of test_vtu_formats.cpp with meshio (pip install meshio):
#   python3 make_meshio_samples.py   (in tests/io/data)
# The mesh is test_vtu_formats.cpp's small_mesh: 2 triangles and a quadrilateral.
import numpy as np
import meshio

points = np.array([[0, 0], [1, 0], [2, 0], [0, 1], [1, 1.125], [2, 1]], dtype=np.float64)
u = 0.25 * np.arange(6) - 1


def mesh(points, itype):
    cells = [("triangle", np.array([[0, 1, 4], [0, 4, 3]], dtype=itype)),
             ("quad", np.array([[1, 2, 5, 4]], dtype=itype))]
    return meshio.Mesh(points, cells, point_data={"u": u},
                       cell_data={"gmsh:physical": [np.array([3, 4], dtype=np.int32), np.array([7], dtype=np.int32)]})


meshio.vtu.write("meshio_ascii.vtu", mesh(points, np.int64), binary=False)
meshio.vtu.write("meshio_binary.vtu", mesh(points, np.int64), binary=True, compression=None, header_type="UInt64")
meshio.vtu.write("meshio_zlib32.vtu", mesh(points.astype(np.float32), np.int32), binary=True, compression="zlib",
                 header_type="UInt32")
