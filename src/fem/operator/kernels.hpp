#pragma once
// The fused mass and diffusion operator kernels, one header per family (docs/dev/operator-kernels.md):
// for each element the gather, the contractions to the quadrature points, the point factor, the
// transposed contractions and the scatter, in one launch.

#include "common.hpp"
#include "quad.hpp"
#include "point_columns.hpp"
#include "lines.hpp"
#include "hex_mass.hpp"
#include "hex_thread.hpp"
#include "hex_diffusion_lines.hpp"
#include "hex_points.hpp"
#include "hex_runtime.hpp"
#include "simplex.hpp"
#include "plan.hpp"
