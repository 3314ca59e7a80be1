// Unit ball (radius 1), coarse tetrahedra, for curved meshes:
//   gmsh -3 -order 2 ball.geo -o ball_tet_p2.msh
// Physical groups: volume 1 (the ball), surface 2 (the sphere).
SetFactory("OpenCASCADE");
Sphere(1) = {0, 0, 0, 1};
MeshSize{ PointsOf{ Volume{1}; } } = 0.9;
Physical Volume(1) = {1};
Physical Surface(2) = {1};
