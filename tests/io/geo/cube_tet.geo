// Unit cube [0,1]^3 meshed with tetrahedra.
// Physical groups: volume 1 (domain); surfaces 11 (x = 0), 12 (x = 1), 13 (y = 0),
// 14 (y = 1), 15 (z = 0), 16 (z = 1).
h = 0.4;
Point(1) = {0, 0, 0, h};
Point(2) = {1, 0, 0, h};
Point(3) = {1, 1, 0, h};
Point(4) = {0, 1, 0, h};
Point(5) = {0, 0, 1, h};
Point(6) = {1, 0, 1, h};
Point(7) = {1, 1, 1, h};
Point(8) = {0, 1, 1, h};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Line(5) = {5, 6};
Line(6) = {6, 7};
Line(7) = {7, 8};
Line(8) = {8, 5};
Line(9) = {1, 5};
Line(10) = {2, 6};
Line(11) = {3, 7};
Line(12) = {4, 8};
Curve Loop(1) = {-4, -3, -2, -1};  // z = 0
Curve Loop(2) = {5, 6, 7, 8};      // z = 1
Curve Loop(3) = {1, 10, -5, -9};   // y = 0
Curve Loop(4) = {3, 12, -7, -11};  // y = 1
Curve Loop(5) = {9, -8, -12, 4};   // x = 0
Curve Loop(6) = {2, 11, -6, -10};  // x = 1
Plane Surface(1) = {1};
Plane Surface(2) = {2};
Plane Surface(3) = {3};
Plane Surface(4) = {4};
Plane Surface(5) = {5};
Plane Surface(6) = {6};
Surface Loop(1) = {1, 2, 3, 4, 5, 6};
Volume(1) = {1};
Physical Volume(1) = {1};
Physical Surface(11) = {5};
Physical Surface(12) = {6};
Physical Surface(13) = {3};
Physical Surface(14) = {4};
Physical Surface(15) = {1};
Physical Surface(16) = {2};
