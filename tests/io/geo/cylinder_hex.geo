// Cylinder of radius 1 and height 0.5 (axis z), hexahedra: a recombined disc extruded in
// one layer, for curved meshes:
//   gmsh -3 -order 2 cylinder_hex.geo -o cylinder_hex_p2.msh
// Physical groups: volume 1 (the cylinder), surface 2 (its boundary).
DefineConstant[ h = 0.8 ];
Point(1) = {0, 0, 0, h};
Point(2) = {1, 0, 0, h};
Point(3) = {0, 1, 0, h};
Point(4) = {-1, 0, 0, h};
Point(5) = {0, -1, 0, h};
Circle(1) = {2, 1, 3};
Circle(2) = {3, 1, 4};
Circle(3) = {4, 1, 5};
Circle(4) = {5, 1, 2};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Recombine Surface {1};
out[] = Extrude {0, 0, 0.5} { Surface{1}; Layers{1}; Recombine; };
Physical Volume(1) = {out[1]};
Physical Surface(2) = {1, out[0], out[2], out[3], out[4], out[5]};
