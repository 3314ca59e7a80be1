"""tessera's VTK Lagrange output through meshio, and meshio's output through tessera.

Usage: meshio_check.py TESSERA_EXECUTABLE WORK_DIR. Exits 77 (CTest: skipped) when meshio
is not installed.
"""
import os
import subprocess
import sys

try:
    import meshio
    import numpy as np
except ImportError:
    print("meshio (or numpy) is not installed: skipped")
    sys.exit(77)

exe, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)


def run(*args):
    return subprocess.run([exe, *args], check=True, capture_output=True, text=True).stdout


def nodes(kind, p):
    return {"quad": (p + 1) ** 2, "triangle": (p + 1) * (p + 2) // 2, "hexahedron": (p + 1) ** 3,
            "tetra": (p + 1) * (p + 2) * (p + 3) // 6}[kind]


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


# 1. tessera writes the order-p Poisson solution; meshio reads the Lagrange cells.
cases = [("box:quad:2x2", 3, "quad", 70), ("box:tri:2x2:perturb=0.2", 4, "triangle", 69),
         ("box:hex:2x2x2", 2, "hexahedron", 72), ("box:tet:1x1x1", 3, "tetra", 71)]
for spec, p, kind, vtk_type in cases:
    path = os.path.join(work, f"{kind}_p{p}.vtu")
    run("poisson", "--backend", "serial", "--mesh", spec, "--order", str(p), "--output", path)
    m = meshio.read(path)
    check(len(m.cells) >= 1, f"{path}: no cells")
    n = nodes(kind, p)
    ncells = sum(len(b.data) for b in m.cells)
    for b in m.cells:
        check(meshio._vtk_common.meshio_to_vtk_type.get(b.type) == vtk_type, f"{path}: cell type {b.type}")
        check(b.data.shape[1] == n, f"{path}: {b.data.shape[1]} nodes a cell, expected {n}")
    check(len(m.points) == ncells * n, f"{path}: {len(m.points)} points for {ncells} cells of {n} nodes")
    u, ue, err = (np.asarray(m.point_data[k]).ravel() for k in ("u", "u_exact", "error"))
    check(np.max(np.abs(u - ue - err)) < 1e-12 * np.max(np.abs(ue)), f"{path}: error != u - u_exact")
    # the discrete solution is close to the exact one at every written point (a coarse mesh:
    # a few per cent of the solution's size)
    check(np.max(np.abs(err)) < 0.05 * np.max(np.abs(ue)), f"{path}: max error {np.max(np.abs(err))}")
    # meshio writes it back (zlib-compressed base64) and tessera reads that: the same cells
    back = os.path.join(work, f"{kind}_p{p}_meshio.vtu")
    meshio.write(back, m, binary=True, compression="zlib")
    info = run("info", back)
    check(f"elements            {ncells} " in info, f"{back}: tessera info says\n{info}")

# 2. meshio writes a first-order mesh in each of its encodings; tessera reads each.
points = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [1, 1, 0], [2, 1, 0]], dtype=np.float64)
cells = [("triangle", np.array([[0, 1, 4], [0, 4, 3]])), ("quad", np.array([[1, 2, 5, 4]]))]
for name, kw in [("ascii", dict(binary=False)), ("base64", dict(binary=True, compression=None)),
                 ("zlib", dict(binary=True, compression="zlib"))]:
    path = os.path.join(work, f"mixed_{name}.vtu")
    meshio.write(path, meshio.Mesh(points, cells), **kw)
    info = run("info", path)
    check("elements            3 (quadrilateral 1, triangle 2)" in info, f"{path}: tessera info says\n{info}")

if failures:
    sys.exit(1)
print("ok: meshio", meshio.__version__)
