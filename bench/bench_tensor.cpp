// tessera bench tensor: the seed's tensor statements (Eq. 10-18, the contractions
// Contract1, 19, 20, Eq. 21, Eq. 6) and a generalized-harmonic right-hand-side module,
// each as one fused kernel per statement, against hand-written fused loops over the same
// contiguous arrays and the copy bandwidth of the same run. Compiled by nvcc in CUDA
// builds so that every case can run on the GPU.
#include <algorithm>
#include <cstdint>
#include <cmath>
#include <functional>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "bench_util.hpp"
#include "tessera/core.hpp"
#include "tessera/tensor.hpp"

namespace tessera::bench {
namespace {

using namespace tessera::tensor;

using Vec3 = Field<NoSym, 3>;
using Mat3 = Field<NoSym, 3, 3>;
using T3 = Field<NoSym, 3, 3, 3>;
using T4 = Field<NoSym, 3, 3, 3, 3>;
using Sym3 = Field<Sym<0, 1>, 3, 3>;
using Vec4 = Field<NoSym, 4>;
using Sym4 = Field<Sym<0, 1>, 4, 4>;

/// A prepared benchmark case at one grid size.
struct Prepared {
  std::function<void()> tensor;  // the statement(s)
  std::function<void()> hand;    // hand-written fused loop (may be empty)
  std::function<double()> check; // max relative difference tensor vs hand (after both ran)
  int ne = 0;                    // N_e: stored components read + written per point
  double flops = 0;              // per grid point
  int statements = 1;
  std::string text;
  std::vector<Array<double, 2>> keep;  // storage the statements point into
};

struct Case {
  std::string name;
  std::string group;
  int components;  // doubles per grid point allocated (inputs + outputs + hand outputs)
  std::function<Prepared(const Exec&, index_t)> make;
};

/// Uniform numbers in [-1, 1) from a hash of (seed, index), generated where the field lives
/// (host generation took minutes for the rank-4 fields at N = 10^8).
template <class F>
F rnd(const char* label, index_t n, Space sp, unsigned seed) {
  F f(label, n, sp);
  double* d = f.data();
  const Exec exec = sp == Space::Device ? Exec::cuda() : Exec::openmp();
  const std::uint64_t s = 0x9e3779b97f4a7c15ull * (seed + 1);
  forall("bench/tensor_random", exec, F::components * n, TESSERA_LAMBDA(index_t i) {
    std::uint64_t z = s + 0xbf58476d1ce4e5b9ull * static_cast<std::uint64_t>(i + 1);  // splitmix64
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    d[i] = static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
  });
  return f;
}

/// Hand-written fused loop: one pass over the grid, every component of the point in
/// the body. CUDA: one thread per point. CPU: chunks of the grid over the OpenMP threads,
/// `omp simd` inside.
template <class F>
void hand_loop(const Exec& exec, index_t n, const F& f) {
  if (exec.on_device()) {
    forall("bench/tensor_hand", exec, n, f);
    return;
  }
  const index_t chunk = 4096, nchunks = (n + chunk - 1) / chunk;
  tessera::detail::cpu_parallel_for("bench/tensor_hand", exec.backend, nchunks, [&](index_t c) {
    const index_t lo = c * chunk, hi = std::min(n, lo + chunk);
    const F body = f;
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (index_t x = lo; x < hi; ++x) body(x);
  });
}

template <class Fa, class Fb>
double max_rel_diff(const Fa& a, const Fb& b) {
  const auto x = a.array().to_vector(), y = b.array().to_vector();
  double m = 0;
  for (std::size_t q = 0; q < x.size(); ++q) m = std::max(m, std::abs(x[q] - y[q]) / std::max(1.0, std::abs(y[q])));
  return m;
}

template <class St>
Prepared from_statement(const St& s) {
  Prepared p;
  p.ne = s.components_moved();
  p.flops = s.flops_per_point();
  p.text = s.text();
  p.tensor = [s] { s.run(); };
  return p;
}

// ---------------------------------------------------------------- the seed's statements
std::vector<Case> cases() {
  std::vector<Case> c;
  c.push_back({"eq10", "assignment", 6, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto B = rnd<Vec3>("B", n, sp, 1);
                 Vec3 A("A", n, sp), H("H", n, sp);
                 Prepared p = from_statement(defer(A(i_)) = B(i_));
                 const double* b = B.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     for (int i = 0; i < 3; ++i) h[i * n + x] = b[i * n + x];
                   });
                 };
                 p.keep = {B.array(), A.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(A, H); };
                 return p;
               }});
  c.push_back({"eq11", "assignment", 27, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto B = rnd<Mat3>("B", n, sp, 2);
                 Mat3 A("A", n, sp), H("H", n, sp);
                 Prepared p = from_statement(defer(A(i_, j_)) = B(i_, j_));
                 const double* b = B.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     for (int i = 0; i < 9; ++i) h[i * n + x] = b[i * n + x];
                   });
                 };
                 p.keep = {B.array(), A.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(A, H); };
                 return p;
               }});
  c.push_back({"eq12", "assignment", 81, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto B = rnd<T3>("B", n, sp, 3);
                 T3 A("A", n, sp), H("H", n, sp);
                 Prepared p = from_statement(defer(A(i_, j_, k_)) = B(i_, j_, k_));
                 const double* b = B.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     for (int i = 0; i < 27; ++i) h[i * n + x] = b[i * n + x];
                   });
                 };
                 p.keep = {B.array(), A.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(A, H); };
                 return p;
               }});
  c.push_back({"eq13", "addition", 12, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto B = rnd<Vec3>("B", n, sp, 4), C = rnd<Vec3>("C", n, sp, 5);
                 Vec3 A("A", n, sp), H("H", n, sp);
                 Prepared p = from_statement(defer(A(i_)) = B(i_) + C(i_));
                 const double *b = B.data(), *cc = C.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     for (int i = 0; i < 3; ++i) h[i * n + x] = b[i * n + x] + cc[i * n + x];
                   });
                 };
                 p.keep = {B.array(), C.array(), A.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(A, H); };
                 return p;
               }});
  c.push_back({"eq14", "addition", 15, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto B = rnd<Vec3>("B", n, sp, 6), C = rnd<Vec3>("C", n, sp, 7), D = rnd<Vec3>("D", n, sp, 8);
                 Vec3 A("A", n, sp), H("H", n, sp);
                 Prepared p = from_statement(defer(A(i_)) = B(i_) + C(i_) + D(i_));
                 const double *b = B.data(), *cc = C.data(), *d = D.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     for (int i = 0; i < 3; ++i) h[i * n + x] = b[i * n + x] + cc[i * n + x] + d[i * n + x];
                   });
                 };
                 p.keep = {B.array(), C.array(), D.array(), A.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(A, H); };
                 return p;
               }});
  c.push_back({"eq15", "addition", 18, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto B = rnd<Vec3>("B", n, sp, 9), C = rnd<Vec3>("C", n, sp, 10), D = rnd<Vec3>("D", n, sp, 11),
                      E = rnd<Vec3>("E", n, sp, 12);
                 Vec3 A("A", n, sp), H("H", n, sp);
                 Prepared p = from_statement(defer(A(i_)) = B(i_) + C(i_) + D(i_) + E(i_));
                 const double *b = B.data(), *cc = C.data(), *d = D.data(), *e = E.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     for (int i = 0; i < 3; ++i)
                       h[i * n + x] = b[i * n + x] + cc[i * n + x] + d[i * n + x] + e[i * n + x];
                   });
                 };
                 p.keep = {B.array(), C.array(), D.array(), E.array(), A.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(A, H); };
                 return p;
               }});
  c.push_back({"eq16", "outer product", 24, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto B = rnd<Vec3>("B", n, sp, 13), C = rnd<Vec3>("C", n, sp, 14);
                 Mat3 A("A", n, sp), H("H", n, sp);
                 Prepared p = from_statement(defer(A(i_, j_)) = B(i_) * C(j_));
                 const double *b = B.data(), *cc = C.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     for (int i = 0; i < 3; ++i)
                       for (int j = 0; j < 3; ++j) h[(i * 3 + j) * n + x] = b[i * n + x] * cc[j * n + x];
                   });
                 };
                 p.keep = {B.array(), C.array(), A.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(A, H); };
                 return p;
               }});
  c.push_back({"eq17", "outer product", 63, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto B = rnd<Vec3>("B", n, sp, 15), C = rnd<Vec3>("C", n, sp, 16), D = rnd<Vec3>("D", n, sp, 17);
                 T3 A("A", n, sp), H("H", n, sp);
                 Prepared p = from_statement(defer(A(i_, j_, k_)) = B(i_) * C(j_) * D(k_));
                 const double *b = B.data(), *cc = C.data(), *d = D.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     for (int i = 0; i < 3; ++i)
                       for (int j = 0; j < 3; ++j)
                         for (int k = 0; k < 3; ++k)
                           h[((i * 3 + j) * 3 + k) * n + x] = b[i * n + x] * cc[j * n + x] * d[k * n + x];
                   });
                 };
                 p.keep = {B.array(), C.array(), D.array(), A.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(A, H); };
                 return p;
               }});
  c.push_back({"eq18", "outer product", 174, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto B = rnd<Vec3>("B", n, sp, 18), C = rnd<Vec3>("C", n, sp, 19), D = rnd<Vec3>("D", n, sp, 20),
                      E = rnd<Vec3>("E", n, sp, 21);
                 T4 A("A", n, sp), H("H", n, sp);
                 Prepared p = from_statement(defer(A(i_, j_, k_, l_)) = B(i_) * C(j_) * D(k_) * E(l_));
                 const double *b = B.data(), *cc = C.data(), *d = D.data(), *e = E.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     for (int i = 0; i < 3; ++i)
                       for (int j = 0; j < 3; ++j)
                         for (int k = 0; k < 3; ++k)
                           for (int l = 0; l < 3; ++l)
                             h[(((i * 3 + j) * 3 + k) * 3 + l) * n + x] =
                                 b[i * n + x] * cc[j * n + x] * d[k * n + x] * e[l * n + x];
                   });
                 };
                 p.keep = {B.array(), C.array(), D.array(), E.array(), A.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(A, H); };
                 return p;
               }});
  // Contractions with rank-4 results (the seed's Contract1, Eq. 19, Eq. 20).
  c.push_back({"contract1", "contraction", 252, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto B = rnd<Mat3>("B", n, sp, 22);
                 auto E = rnd<T4>("E", n, sp, 23);
                 T4 A("A", n, sp), H("H", n, sp);
                 Prepared p = from_statement(defer(A(i_, j_, k_, l_)) = Sum(m_, B(i_, m_) * E(m_, j_, k_, l_)));
                 const double *b = B.data(), *e = E.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     for (int i = 0; i < 3; ++i)
                       for (int j = 0; j < 3; ++j)
                         for (int k = 0; k < 3; ++k)
                           for (int l = 0; l < 3; ++l) {
                             double s = 0;
                             for (int m = 0; m < 3; ++m)
                               s += b[(i * 3 + m) * n + x] * e[(((m * 3 + j) * 3 + k) * 3 + l) * n + x];
                             h[(((i * 3 + j) * 3 + k) * 3 + l) * n + x] = s;
                           }
                   });
                 };
                 p.keep = {B.array(), E.array(), A.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(A, H); };
                 return p;
               }});
  c.push_back({"eq19", "contraction", 261, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto B = rnd<Mat3>("B", n, sp, 24), C = rnd<Mat3>("C", n, sp, 25);
                 auto E = rnd<T4>("E", n, sp, 26);
                 T4 A("A", n, sp), H("H", n, sp);
                 Prepared p = from_statement(defer(A(i_, j_, k_, l_)) =
                                                 Sum(m_, Sum(n_, C(j_, n_) * B(i_, m_) * E(m_, n_, k_, l_))));
                 const double *b = B.data(), *cc = C.data(), *e = E.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     for (int i = 0; i < 3; ++i)
                       for (int j = 0; j < 3; ++j)
                         for (int k = 0; k < 3; ++k)
                           for (int l = 0; l < 3; ++l) {
                             double s = 0;
                             for (int m = 0; m < 3; ++m)
                               for (int q = 0; q < 3; ++q)
                                 s += cc[(j * 3 + q) * n + x] * b[(i * 3 + m) * n + x] *
                                      e[(((m * 3 + q) * 3 + k) * 3 + l) * n + x];
                             h[(((i * 3 + j) * 3 + k) * 3 + l) * n + x] = s;
                           }
                   });
                 };
                 p.keep = {B.array(), C.array(), E.array(), A.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(A, H); };
                 return p;
               }});
  c.push_back({"eq20", "contraction", 270, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto B = rnd<Mat3>("B", n, sp, 27), C = rnd<Mat3>("C", n, sp, 28), D = rnd<Mat3>("D", n, sp, 29);
                 auto E = rnd<T4>("E", n, sp, 30);
                 T4 A("A", n, sp), H("H", n, sp);
                 Prepared p = from_statement(
                     defer(A(i_, j_, k_, l_)) =
                         Sum(m_, Sum(n_, Sum(o_, D(k_, o_) * C(j_, n_) * B(i_, m_) * E(m_, n_, o_, l_)))));
                 const double *b = B.data(), *cc = C.data(), *d = D.data(), *e = E.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     for (int i = 0; i < 3; ++i)
                       for (int j = 0; j < 3; ++j)
                         for (int k = 0; k < 3; ++k)
                           for (int l = 0; l < 3; ++l) {
                             double s = 0;
                             for (int m = 0; m < 3; ++m)
                               for (int q = 0; q < 3; ++q)
                                 for (int o = 0; o < 3; ++o)
                                   s += d[(k * 3 + o) * n + x] * cc[(j * 3 + q) * n + x] * b[(i * 3 + m) * n + x] *
                                        e[(((m * 3 + q) * 3 + o) * 3 + l) * n + x];
                             h[(((i * 3 + j) * 3 + k) * 3 + l) * n + x] = s;
                           }
                   });
                 };
                 p.keep = {B.array(), C.array(), D.array(), E.array(), A.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(A, H); };
                 return p;
               }});
  c.push_back({"eq21", "relativity", 22, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto g = rnd<Sym3>("g", n, sp, 31);
                 auto beta = rnd<Vec3>("beta", n, sp, 32);
                 auto alpha = rnd<Scalar>("alpha", n, sp, 33);
                 Sym3 K("K", n, sp), H("H", n, sp);
                 Prepared p =
                     from_statement(defer(K(Sym<0, 1>(), i_, j_)) = 2.0 * alpha * g(i_, j_) + beta(i_) * beta(j_));
                 const double *gp = g.data(), *bp = beta.data(), *ap = alpha.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     const double a2 = 2.0 * ap[x];
                     const double b0 = bp[x], b1 = bp[n + x], b2 = bp[2 * n + x];
                     h[0 * n + x] = a2 * gp[0 * n + x] + b0 * b0;
                     h[1 * n + x] = a2 * gp[1 * n + x] + b0 * b1;
                     h[2 * n + x] = a2 * gp[2 * n + x] + b1 * b1;
                     h[3 * n + x] = a2 * gp[3 * n + x] + b0 * b2;
                     h[4 * n + x] = a2 * gp[4 * n + x] + b1 * b2;
                     h[5 * n + x] = a2 * gp[5 * n + x] + b2 * b2;
                   });
                 };
                 p.keep = {g.array(), beta.array(), alpha.array(), K.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(K, H); };
                 return p;
               }});
  c.push_back({"eq6", "relativity", 60, [](const Exec& exec, index_t n) -> Prepared {
                 const Space sp = exec.space();
                 auto Invg = rnd<Sym3>("Invg", n, sp, 34);
                 auto dg = rnd<Field<Sym<0, 1>, 3, 3, 3>>("dg", n, sp, 35);
                 Field<Sym<1, 2>, 3, 3, 3> Gamma("Gamma", n, sp), H("H", n, sp);
                 Prepared p = from_statement(
                     defer(Gamma(Sym<1, 2>(), i_, j_, k_)) =
                         0.5 * Sum(l_, Invg(i_, l_) * (dg(j_, l_)(k_) + dg(l_, k_)(j_) - dg(j_, k_)(l_))));
                 const double *gi = Invg.data(), *d = dg.data();
                 double* h = H.data();
                 p.hand = [=]() -> void {
                   // Symmetric 3x3 storage order (00 01 11 02 12 22); dg(i,j)(k) at
                   // component sym(i,j)*3 + k; Gamma(i)(j,k) at i*6 + sym(j,k).
                   hand_loop(exec, n, TESSERA_LAMBDA(index_t x) {
                     constexpr int S[3][3] = {{0, 1, 3}, {1, 2, 4}, {3, 4, 5}};
                     double dd[18], gg[6];
                     for (int q = 0; q < 18; ++q) dd[q] = d[q * n + x];
                     for (int q = 0; q < 6; ++q) gg[q] = gi[q * n + x];
                     for (int i = 0; i < 3; ++i)
                       for (int k = 0; k < 3; ++k)
                         for (int j = 0; j <= k; ++j) {
                           double s = 0;
                           for (int l = 0; l < 3; ++l)
                             s += gg[S[i][l]] * (dd[S[j][l] * 3 + k] + dd[S[l][k] * 3 + j] - dd[S[j][k] * 3 + l]);
                           h[(i * 6 + S[j][k]) * n + x] = 0.5 * s;
                         }
                   });
                 };
                 p.keep = {Invg.array(), dg.array(), Gamma.array(), H.array()};  // the Fields outlive the statements
                 p.check = [=] { return max_rel_diff(Gamma, H); };
                 return p;
               }});
  return c;
}

// ---------------------------------------------------------------- generalized harmonic module
/// The right-hand side of the first-order generalized-harmonic system (Lindblom,
/// Scheel, Kidder, Owen, Rinne, Class. Quantum Grav. 23 (2006) S447, Eqs. 35-37) as 23
/// statements: spacetime (a_..f_) and spatial (i_..o_) indices, ranks up to 4, up to two
/// contractions per statement. Inputs: psi_ab, Pi_ab, Phi_iab, their spatial
/// derivatives, the gauge source H_a and its derivative, lapse, shift, the inverse
/// spatial and spacetime metrics and the normal (22 arrays, as the seed's GH module).
struct GhModule {
  // inputs
  Sym4 psi, Pi, inv_psi;
  Field<Sym<1, 2>, 3, 4, 4> Phi, dpsi, dPi;
  Field<Sym<2, 3>, 3, 3, 4, 4> dPhi;
  Vec4 H, t_up, t_dn;
  Field<NoSym, 4, 4> dH;
  Scalar lapse;
  Vec3 shift;
  Sym3 inv_g;
  // intermediates
  Field<Sym<1, 2>, 4, 4, 4> d4psi, Gam1, Gam2;
  Vec4 Gtr, C, tPi;
  Field<Sym<1, 2>, 3, 4, 4> PhiUp;
  Scalar ttPi;
  Field<NoSym, 3, 4> tPhi;
  Vec3 ttPhi;
  Field<NoSym, 3, 3> tPhi2;
  Sym4 PiPi, PhiPhi, GamGam, DH;
  Field<NoSym, 3, 4, 4> PhiPsi;
  Field<NoSym, 4, 4, 4> G3, GG;
  // outputs
  Sym4 dt_psi, dt_Pi;
  Field<Sym<1, 2>, 3, 4, 4> dt_Phi;

  static constexpr int kComponents = 10 * 3 + 30 * 3 + 90 + 4 * 3 + 16 + 1 + 3 + 6 + 40 * 3 + 4 * 3 + 30 + 1 + 12 +
                                     3 + 9 + 10 * 4 + 48 + 64 * 2 + 10 * 2 + 30;

  GhModule(index_t n, Space sp)
      : psi(rnd<Sym4>("psi", n, sp, 41)),
        Pi(rnd<Sym4>("Pi", n, sp, 42)),
        inv_psi(rnd<Sym4>("inv_psi", n, sp, 43)),
        Phi(rnd<Field<Sym<1, 2>, 3, 4, 4>>("Phi", n, sp, 44)),
        dpsi(rnd<Field<Sym<1, 2>, 3, 4, 4>>("dpsi", n, sp, 45)),
        dPi(rnd<Field<Sym<1, 2>, 3, 4, 4>>("dPi", n, sp, 46)),
        dPhi(rnd<Field<Sym<2, 3>, 3, 3, 4, 4>>("dPhi", n, sp, 47)),
        H(rnd<Vec4>("H", n, sp, 48)),
        t_up(rnd<Vec4>("t_up", n, sp, 49)),
        t_dn(rnd<Vec4>("t_dn", n, sp, 50)),
        dH(rnd<Field<NoSym, 4, 4>>("dH", n, sp, 51)),
        lapse(rnd<Scalar>("lapse", n, sp, 52)),
        shift(rnd<Vec3>("shift", n, sp, 53)),
        inv_g(rnd<Sym3>("inv_g", n, sp, 54)),
        d4psi("d4psi", n, sp), Gam1("Gam1", n, sp), Gam2("Gam2", n, sp),
        Gtr("Gtr", n, sp), C("C", n, sp), tPi("tPi", n, sp),
        PhiUp("PhiUp", n, sp), ttPi("ttPi", n, sp), tPhi("tPhi", n, sp), ttPhi("ttPhi", n, sp),
        tPhi2("tPhi2", n, sp), PiPi("PiPi", n, sp), PhiPhi("PhiPhi", n, sp), GamGam("GamGam", n, sp),
        DH("DH", n, sp), PhiPsi("PhiPsi", n, sp), G3("G3", n, sp), GG("GG", n, sp),
        dt_psi("dt_psi", n, sp), dt_Pi("dt_Pi", n, sp), dt_Phi("dt_Phi", n, sp) {}

  /// Adds the statements to m; returns the summed N_e and flops per point.
  void build(Module& m, int& ne, double& flops, int& count) {
    const double g0 = 0.5, g1 = -1.0, g2 = 0.75;
    auto add = [&](const auto& s) {
      ne += s.components_moved();
      flops += s.flops_per_point();
      ++count;
      m.add(s);
    };
    // Spacetime derivative of psi: time part from Pi and Phi, spatial part = Phi.
    add(defer(d4psi(0, a_, b_)) = -lapse * Pi(a_, b_) + Sum(k_, shift(k_) * Phi(k_, a_, b_)));
    add(defer(d4psi(Sym<1, 2>(), i_ + 1, a_, b_)) = Phi(i_, a_, b_));
    // Christoffel symbols of the first and second kind, their trace, the gauge constraint.
    add(defer(Gam1(Sym<1, 2>(), c_, a_, b_)) = 0.5 * (d4psi(a_, b_, c_) + d4psi(b_, a_, c_) - d4psi(c_, a_, b_)));
    add(defer(Gam2(c_, a_, b_)) = Sum(d_, inv_psi(c_, d_) * Gam1(d_, a_, b_)));
    add(defer(Gtr(a_)) = Sum(b_, Sum(c_, inv_psi(b_, c_) * Gam1(a_, b_, c_))));
    add(defer(C(a_)) = H(a_) + Gtr(a_));
    // Contractions with the inverse metrics and the normal.
    add(defer(PhiUp(i_, a_, b_)) = Sum(j_, inv_g(i_, j_) * Phi(j_, a_, b_)));
    add(defer(tPi(a_)) = Sum(c_, t_up(c_) * Pi(c_, a_)));
    add(defer(ttPi()) = Sum(a_, t_up(a_) * tPi(a_)));
    add(defer(tPhi(i_, a_)) = Sum(c_, t_up(c_) * Phi(i_, c_, a_)));
    add(defer(ttPhi(i_)) = Sum(a_, t_up(a_) * tPhi(i_, a_)));
    add(defer(tPhi2(i_, j_)) = Sum(c_, t_up(c_) * Phi(i_, j_ + 1, c_)));
    // Quadratic terms of the Pi equation.
    add(defer(PiPi(a_, b_)) = Sum(c_, Sum(d_, inv_psi(c_, d_) * Pi(c_, a_) * Pi(d_, b_))));
    add(defer(PhiPsi(i_, d_, a_)) = Sum(c_, inv_psi(d_, c_) * Phi(i_, c_, a_)));
    add(defer(PhiPhi(a_, b_)) = Sum(i_, Sum(d_, PhiPsi(i_, d_, a_) * PhiUp(i_, d_, b_))));
    add(defer(G3(b_, c_, f_)) = Sum(d_, inv_psi(c_, d_) * Gam1(b_, d_, f_)));
    add(defer(GG(b_, c_, e_)) = Sum(f_, inv_psi(e_, f_) * G3(b_, c_, f_)));
    add(defer(GamGam(a_, b_)) = Sum(c_, Sum(e_, Gam1(a_, c_, e_) * GG(b_, c_, e_))));
    add(defer(DH(a_, b_)) = 0.5 * (dH(a_, b_) + dH(b_, a_)) - Sum(c_, Gam2(c_, a_, b_) * H(c_)));
    // The evolution equations.
    add(defer(dt_psi(a_, b_)) = (1.0 + g1) * Sum(k_, shift(k_) * dpsi(k_, a_, b_)) - lapse * Pi(a_, b_) -
                                g1 * Sum(i_, shift(i_) * Phi(i_, a_, b_)));
    add(defer(dt_Pi(a_, b_)) = Sum(k_, shift(k_) * dPi(k_, a_, b_)) -
                               lapse * Sum(k_, Sum(i_, inv_g(k_, i_) * dPhi(k_, i_, a_, b_))) +
                               g1 * g2 * Sum(k_, shift(k_) * dpsi(k_, a_, b_)) +
                               2.0 * lapse * (PhiPhi(a_, b_) - PiPi(a_, b_) - GamGam(a_, b_)) -
                               2.0 * lapse * DH(a_, b_));
    add(defer(dt_Pi(a_, b_)) += -0.5 * lapse * ttPi * Pi(a_, b_) - lapse * Sum(i_, tPi(i_ + 1) * PhiUp(i_, a_, b_)) +
                                lapse * g0 * (t_dn(a_) * C(b_) + t_dn(b_) * C(a_) - psi(a_, b_) * Sum(c_, t_up(c_) * C(c_))) -
                                g1 * g2 * Sum(i_, shift(i_) * Phi(i_, a_, b_)));
    add(defer(dt_Phi(i_, a_, b_)) = Sum(k_, shift(k_) * dPhi(k_, i_, a_, b_)) - lapse * dPi(i_, a_, b_) +
                                    lapse * g2 * dpsi(i_, a_, b_) + 0.5 * lapse * ttPhi(i_) * Pi(a_, b_) +
                                    lapse * Sum(j_, tPhi2(i_, j_) * PhiUp(j_, a_, b_)) - lapse * g2 * Phi(i_, a_, b_));
  }
};

std::vector<index_t> grid_sizes(const TensorOptions& opt, bool gpu) {
  std::vector<index_t> s;
  if (!opt.sizes.empty()) {
    for (double d : split_numbers(opt.sizes, "bench tensor: --sizes")) {
      TESSERA_REQUIRE(d >= 1 && d < 9.2e18, "bench tensor: --sizes: ", d, " is not a grid size");
      s.push_back(static_cast<index_t>(d));
    }
    return s;
  }
  const index_t lo = opt.min > 0 ? opt.min : 100;
  const index_t hi = opt.max > 0 ? opt.max : (gpu ? index_t(100000000) : index_t(10000000));
  const int per = std::max(1, opt.per_decade);
  for (int k = 0;; ++k) {
    const double v = static_cast<double>(lo) * std::pow(10.0, static_cast<double>(k) / per);
    if (v > static_cast<double>(hi) * 1.0001) break;
    s.push_back(static_cast<index_t>(std::llround(v)));
  }
  return s;
}

/// Median time in ms; fewer repetitions for slow runs (at least 3).
double timed(const Exec& exec, int reps, const std::function<void()>& fn) {
  Timer t(exec);
  t.start();
  fn();
  const double once = t.stop();
  const int r = once > 200 ? 3 : reps;
  return time_median(exec, r, fn);
}

/// Median times in ms of two functions run alternately (a, b, a, b, ...), so that a drift
/// of the machine's speed (other processes on a shared host) affects both alike; fewer
/// repetitions for slow runs (at least 3).
std::pair<double, double> timed_pair(const Exec& exec, int reps, const std::function<void()>& a,
                                     const std::function<void()>& b) {
  Timer t(exec);
  for (int w = 0; w < 2; ++w) {  // warm-ups
    a();
    b();
  }
  t.start();
  a();
  const double once = t.stop();
  const int r = once > 200 ? 3 : reps;
  std::vector<double> ta, tb;
  for (int k = 0; k < r; ++k) {
    t.start();
    a();
    ta.push_back(t.stop());
    t.start();
    b();
    tb.push_back(t.stop());
  }
  return {median(ta), median(tb)};
}

double memory_budget_bytes(const Exec& exec) {
  if (exec.on_device()) return 0.8 * static_cast<double>(current_device().global_mem);
  const double pages = static_cast<double>(sysconf(_SC_PHYS_PAGES)), page = static_cast<double>(sysconf(_SC_PAGE_SIZE));
  return 0.5 * pages * page;
}

}  // namespace

int run_tensor(const TensorOptions& opt, std::ostream& out) {
  const Exec exec = Exec::parse(opt.backend);
  const bool gpu = exec.on_device();
  const Space sp = exec.space();
  ExecScope on(exec);
  const auto sizes = grid_sizes(opt, gpu);
  const double budget = opt.max_gb > 0 ? opt.max_gb * 1e9 : memory_budget_bytes(exec);
  JsonLines js(opt.json);
  const nlohmann::json meta{{"bench", "tensor"}, {"backend", to_string(exec.backend)}, {"device", describe(exec)}};

  out << "## tessera bench tensor — backend " << to_string(exec.backend) << ", " << describe(exec) << "\n\n";
  out << "BW_eff = 8 B x (N_e x N + N_d) / t with N_e the stored components read and written per grid point\n"
         "(N_d = 0: no grid-independent arrays). 'hand' is a hand-written fused loop over the same contiguous\n"
         "arrays; 'ratio' = hand time / tensor time (> 1: the tensor statement is faster). Median of "
      << opt.reps << " runs after 2 warm-ups (3 runs for runs over 0.2 s).\n\n";
  out << "| case | N | N_e | tensor ms | BW_eff GB/s | % copy | hand ms | hand GB/s | ratio | GFLOP/s | flop/B | copy GB/s |\n"
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  out << std::fixed;
  int failures = 0;
  auto all = cases();
  const bool want_gh = opt.statement.empty() || std::string("gh").find(opt.statement) != std::string::npos ||
                       opt.statement.find("gh") != std::string::npos;
  for (const index_t n : sizes) {
    std::string copy_label;
    const double copy_gbs = copy_bandwidth_gbs(exec, n, opt.reps, &copy_label);
    auto report = [&](const std::string& name, const Prepared& p, double t_ms, double hand_ms, double diff,
                      const std::string& note) {
      const double bytes = 8.0 * p.ne * static_cast<double>(n);
      const double bw = bytes / t_ms / 1e6;
      const double gflops = p.flops * static_cast<double>(n) / t_ms / 1e6;
      out << "| " << name << note << " | " << n << " | " << p.ne << " | " << std::setprecision(4) << t_ms << " | "
          << std::setprecision(1) << bw << " | " << percent_of(bw, copy_gbs, 1) << " | ";
      if (hand_ms > 0)
        out << std::setprecision(4) << hand_ms << " | " << std::setprecision(1) << bytes / hand_ms / 1e6 << " | "
            << std::setprecision(2) << hand_ms / t_ms << " | ";
      else
        out << "- | - | - | ";
      out << std::setprecision(1) << gflops << " | " << std::setprecision(2) << p.flops / (8.0 * p.ne) << " | "
          << std::setprecision(1) << copy_gbs << " |\n";
      auto j = meta;
      j.update({{"case", name + note}, {"n", n}, {"ne", p.ne}, {"nd", 0}, {"statements", p.statements},
                {"tensor_ms", t_ms}, {"bw_eff_gbs", bw}, {"fraction_of_copy", bw / copy_gbs},
                {"flops_per_point", p.flops}, {"gflops", gflops}, {"copy_gbs", copy_gbs},
                {"flop_per_byte", p.flops / (8.0 * p.ne)},
                {"copy_reference", copy_label}, {"text", p.text}});
      if (hand_ms > 0) j.update({{"hand_ms", hand_ms}, {"hand_bw_gbs", bytes / hand_ms / 1e6},
                                 {"ratio_hand_over_tensor", hand_ms / t_ms}, {"max_rel_diff", diff}});
      js.write(j);
    };
    for (const auto& c : all) {
      if (!opt.statement.empty() && c.name.find(opt.statement) == std::string::npos) continue;
      if (8.0 * c.components * static_cast<double>(n) > budget) {
        out << "| " << c.name << " | " << n << " | skipped: needs " << std::setprecision(1)
            << 8.0 * c.components * n / 1e9 << " GB | | | | | | | | | |\n";
        continue;
      }
      Prepared p = c.make(exec, n);
      const auto [t, th] = timed_pair(exec, opt.reps, p.tensor, p.hand);
      const double diff = p.check();
      if (diff > 1e-12) {
        ++failures;
        out << "| " << c.name << " | " << n << " | MISMATCH tensor vs hand: max rel diff " << std::scientific << diff
            << std::fixed << " | | | | | | | | | |\n";
      }
      report(c.name, p, t, th, diff, "");
    }
    if (want_gh) {
      if (8.0 * GhModule::kComponents * static_cast<double>(n) > budget) {
        out << "| gh | " << n << " | skipped: needs " << std::setprecision(1)
            << 8.0 * GhModule::kComponents * n / 1e9 << " GB | | | | | | | | | |\n";
        continue;
      }
      GhModule gh(n, sp);
      Module m;
      Prepared p;
      gh.build(m, p.ne, p.flops, p.statements);
      p.text = "generalized-harmonic right-hand side (" + std::to_string(p.statements) + " statements)";
      const double t = timed(exec, opt.reps, [&] { m.run(exec); });
      report("gh", p, t, 0, 0, "");
      if (gpu && opt.graph) {
        m.capture(exec);
        const double tg = timed(exec, opt.reps, [&] { m.run(exec); });
        report("gh", p, tg, 0, 0, " (CUDA graph)");
      }
    }
  }
  out.unsetf(std::ios::floatfield);
  if (failures) out << "\n" << failures << " case(s) disagree with their hand-written loop.\n";
  return failures == 0 ? 0 : 1;
}

}  // namespace tessera::bench
