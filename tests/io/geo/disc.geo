// Unit disc (radius 1, centre 0), coarse, for curved (high-order) meshes: the element
// order and the recombination into quadrilaterals are set on the command line, e.g.
//   gmsh -2 -order 2 disc.geo -o disc_tri_p2.msh
//   gmsh -2 -order 3 -setnumber quads 1 disc.geo -o disc_quad_p3.msh
// Physical groups: surface 1 (the disc), curve 2 (the circle).
DefineConstant[ quads = 0 ];
h = 0.6;
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
If (quads)
  Recombine Surface {1};
EndIf
Physical Surface(1) = {1};
Physical Curve(2) = {1, 2, 3, 4};
