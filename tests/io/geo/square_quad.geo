// Unit square [0,1]^2 meshed with 5 x 4 quadrilaterals (transfinite lines, recombined).
// Physical groups: surface 1 (domain); curves 11 (x = 0), 12 (x = 1), 13 (y = 0), 14 (y = 1).
Point(1) = {0, 0, 0, 1};
Point(2) = {1, 0, 0, 1};
Point(3) = {1, 1, 0, 1};
Point(4) = {0, 1, 0, 1};
Line(1) = {1, 2};  // y = 0
Line(2) = {2, 3};  // x = 1
Line(3) = {3, 4};  // y = 1
Line(4) = {4, 1};  // x = 0
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Transfinite Curve{1, 3} = 6;  // 6 nodes, 5 cells along x
Transfinite Curve{2, 4} = 5;  // 5 nodes, 4 cells along y
Transfinite Surface{1};
Recombine Surface{1};
Physical Surface(1) = {1};
Physical Curve(11) = {4};
Physical Curve(12) = {2};
Physical Curve(13) = {1};
Physical Curve(14) = {3};
