#pragma once
// Shared helpers of the fem tests: the message of an expected tessera::Error.
#include <gtest/gtest.h>

#include <exception>
#include <random>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/fem/mesh.hpp"

namespace tessera::fem::test {

/// Message of the tessera::Error that f() throws (or a note saying what happened instead).
template <class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const tessera::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(not a tessera::Error) ") + e.what();
  }
  return "(nothing thrown)";
}

/// n uniform random values in [-1, 1) from `seed` (the same on every platform).
inline std::vector<double> random_vector(std::size_t n, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (auto& x : v) x = u(g);
  return v;
}

/// generate_mesh(spec) with the vertices of a 3-D mesh moved by x += 0.1 y z, y += 0.12 x z,
/// z += 0.08 x y. The generator's perturbation moves interior vertices only, and the small
/// hexahedral meshes of these tests have none: their elements would be parallelepipeds, on
/// which the on-the-fly kernels' Jacobian is constant. Under this map every hexahedron is
/// trilinear (det J varies inside it in all three directions) and still conforming.
inline Mesh distorted_mesh(const std::string& spec) {
  Mesh m = generate_mesh(spec);
  if (m.space_dim() == 3) {
    auto x = m.coordinates();
    for (std::size_t v = 0; v + 2 < x.size(); v += 3) {
      const double x0 = x[v], y0 = x[v + 1], z0 = x[v + 2];
      x[v] = x0 + 0.1 * y0 * z0;
      x[v + 1] = y0 + 0.12 * x0 * z0;
      x[v + 2] = z0 + 0.08 * x0 * y0;
    }
  }
  return m;
}

}  // namespace tessera::fem::test

/// Expects `stmt` to throw tessera::Error whose message contains every given substring.
#define EXPECT_ERROR_MENTIONS(stmt, ...)                                                                  \
  do {                                                                                                    \
    EXPECT_THROW(stmt, tessera::Error);                                                                   \
    const std::string msg_ = ::tessera::fem::test::error_message([&] { stmt; });                          \
    for (const char* s_ : {__VA_ARGS__})                                                                  \
      EXPECT_NE(msg_.find(s_), std::string::npos) << "message: '" << msg_ << "' lacks '" << s_ << "'"; \
  } while (0)
