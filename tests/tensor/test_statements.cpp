// Tensor statements against naive reference loops on random data, on every backend:
// bit for bit on the CPU backends (same operation order), 1e-14 relative on the GPU.
#include <array>
#include <cmath>
#include <functional>
#include <vector>

#include "tensor_test_util.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tensor;

using Sym2 = Field<Sym<0, 1>, 3, 3>;
using Sym2x4 = Field<Sym<0, 1>, 4, 4>;
using Vec3 = Field<NoSym, 3>;
using Vec4 = Field<NoSym, 4>;
using Mat3 = Field<NoSym, 3, 3>;
using Mat4 = Field<NoSym, 4, 4>;
using T3 = Field<NoSym, 3, 3, 3>;
using T4 = Field<NoSym, 3, 3, 3, 3>;
using DSym2 = Field<Sym<0, 1>, 3, 3, 3>;   // d_k g_ij = dg(i, j)(k)
using Chris = Field<Sym<1, 2>, 3, 3, 3>;   // Gamma^i_jk

/// Calls fn(idx, comp) for the first multi-index (row-major) of each stored component.
template <class F>
void for_each_component(const std::function<void(const std::array<int, F::rank>&, int)>& fn) {
  constexpr auto d = F::dims();
  int total = 1;
  for (int p = 0; p < F::rank; ++p) total *= d[p];
  std::vector<bool> seen(F::components, false);
  for (int t = 0; t < total; ++t) {
    std::array<int, F::rank> idx{};
    int rest = t;
    for (int p = F::rank - 1; p >= 0; --p) {
      idx[p] = rest % d[p];
      rest /= d[p];
    }
    const int c = F::component_index(idx);
    if (seen[c]) continue;
    seen[c] = true;
    fn(idx, c);
  }
}

class TensorStatements : public BackendTest {
 protected:
  static constexpr index_t n = 1000 + 37;  // not a multiple of a vector width or chunk
  bool exact() const { return !on_gpu(); }
  template <class F>
  F rnd(const char* label, std::uint64_t seed, double lo = -1.0, double hi = 1.0) const {
    return random_field<F>(label, n, space(), seed, lo, hi);
  }
};

TEST_P(TensorStatements, AssignmentsRank1To3) {
  ExecScope on(exec());
  auto B1 = rnd<Vec3>("B1", 1);
  auto B2 = rnd<Mat3>("B2", 2);
  auto B3 = rnd<T3>("B3", 3);
  Vec3 A1("A1", n, space());
  Mat3 A2("A2", n, space());
  T3 A3("A3", n, space());
  A1(i_) = B1(i_);                 // Eq. 10
  A2(i_, j_) = B2(i_, j_);         // Eq. 11
  A3(i_, j_, k_) = B3(i_, j_, k_); // Eq. 12
  EXPECT_TRUE(matches(A1, host_values(B1), true));
  EXPECT_TRUE(matches(A2, host_values(B2), true));
  EXPECT_TRUE(matches(A3, host_values(B3), true));
  // Transposed assignment: A_ij = B_ji.
  A2(i_, j_) = B2(j_, i_);
  const auto b = host_values(B2);
  std::vector<double> ref(b.size());
  for_each_component<Mat3>([&](const auto& idx, int c) {
    for (index_t x = 0; x < n; ++x) ref[c * n + x] = at<Mat3>(b, n, {idx[1], idx[0]}, x);
  });
  EXPECT_TRUE(matches(A2, ref, true));
}

TEST_P(TensorStatements, SumsOfVectorsAndOperators) {
  ExecScope on(exec());
  auto B = rnd<Vec3>("B", 11), C = rnd<Vec3>("C", 12), D = rnd<Vec3>("D", 13), E = rnd<Vec3>("E", 14);
  auto s = rnd<Scalar>("s", 15, 0.5, 2.0);
  Vec3 A("A", n, space());
  const auto b = host_values(B), c = host_values(C), d = host_values(D), e = host_values(E), sv = host_values(s);
  std::vector<double> ref(b.size());

  A(i_) = B(i_) + C(i_) + D(i_) + E(i_);  // Eq. 15
  for (std::size_t q = 0; q < ref.size(); ++q) ref[q] = ((b[q] + c[q]) + d[q]) + e[q];
  EXPECT_TRUE(matches(A, ref, exact()));

  A(i_) = B(i_) - C(i_) * 2.5 + -D(i_);
  for (std::size_t q = 0; q < ref.size(); ++q) ref[q] = (b[q] - c[q] * 2.5) + (-d[q]);
  EXPECT_TRUE(matches(A, ref, exact()));

  A(i_) = 3.0 * B(i_) / s - C(i_) / 4.0;
  for (std::size_t q = 0; q < ref.size(); ++q) ref[q] = (3.0 * b[q]) / sv[q % n] - c[q] / 4.0;
  EXPECT_TRUE(matches(A, ref, exact()));

  A(i_) = (s * s + 1.0) * B(i_) * (2.0 / s);
  for (std::size_t q = 0; q < ref.size(); ++q) {
    const double sx = sv[q % n];
    ref[q] = ((sx * sx + 1.0) * b[q]) * (2.0 / sx);
  }
  EXPECT_TRUE(matches(A, ref, exact()));

  A(i_) = 1.5;  // a double on the right-hand side
  for (auto& r : ref) r = 1.5;
  EXPECT_TRUE(matches(A, ref, true));

  A(i_) = s;  // a grid scalar broadcast over the components
  for (std::size_t q = 0; q < ref.size(); ++q) ref[q] = sv[q % n];
  EXPECT_TRUE(matches(A, ref, true));
}

TEST_P(TensorStatements, CompoundAssignments) {
  ExecScope on(exec());
  auto B = rnd<Sym2>("B", 21);
  auto s = rnd<Scalar>("s", 22, 0.5, 2.0);
  auto A = rnd<Sym2>("A", 23);
  auto a = host_values(A);
  const auto b = host_values(B), sv = host_values(s);
  A(i_, j_) += B(i_, j_);
  for (std::size_t q = 0; q < a.size(); ++q) a[q] += b[q];
  EXPECT_TRUE(matches(A, a, exact()));
  A(i_, j_) -= 2.0 * B(i_, j_);
  for (std::size_t q = 0; q < a.size(); ++q) a[q] -= 2.0 * b[q];
  EXPECT_TRUE(matches(A, a, exact()));
  A(i_, j_) *= s;
  for (std::size_t q = 0; q < a.size(); ++q) a[q] *= sv[q % n];
  EXPECT_TRUE(matches(A, a, exact()));
  A(i_, j_) /= s * 2.0;
  for (std::size_t q = 0; q < a.size(); ++q) a[q] /= sv[q % n] * 2.0;
  EXPECT_TRUE(matches(A, a, exact()));
  A(i_, j_) *= 0.25;
  for (std::size_t q = 0; q < a.size(); ++q) a[q] *= 0.25;
  EXPECT_TRUE(matches(A, a, exact()));
}

TEST_P(TensorStatements, OuterProducts) {
  ExecScope on(exec());
  auto B = rnd<Vec3>("B", 31), C = rnd<Vec3>("C", 32), D = rnd<Vec3>("D", 33), E = rnd<Vec3>("E", 34);
  Mat3 A2("A2", n, space());
  T3 A3("A3", n, space());
  T4 A4("A4", n, space());
  A2(i_, j_) = B(i_) * C(j_);                      // Eq. 16
  A3(i_, j_, k_) = B(i_) * C(j_) * D(k_);          // Eq. 17
  A4(i_, j_, k_, l_) = B(i_) * C(j_) * D(k_) * E(l_);  // Eq. 18
  const auto b = host_values(B), c = host_values(C), d = host_values(D), e = host_values(E);
  std::vector<double> r2(9 * n), r3(27 * n), r4(81 * n);
  for_each_component<Mat3>([&](const auto& I, int q) {
    for (index_t x = 0; x < n; ++x) r2[q * n + x] = b[I[0] * n + x] * c[I[1] * n + x];
  });
  for_each_component<T3>([&](const auto& I, int q) {
    for (index_t x = 0; x < n; ++x) r3[q * n + x] = (b[I[0] * n + x] * c[I[1] * n + x]) * d[I[2] * n + x];
  });
  for_each_component<T4>([&](const auto& I, int q) {
    for (index_t x = 0; x < n; ++x)
      r4[q * n + x] = ((b[I[0] * n + x] * c[I[1] * n + x]) * d[I[2] * n + x]) * e[I[3] * n + x];
  });
  EXPECT_TRUE(matches(A2, r2, exact()));
  EXPECT_TRUE(matches(A3, r3, exact()));
  EXPECT_TRUE(matches(A4, r4, exact()));
  // Symmetric outer product: only the 6 independent components are computed.
  Sym2 S("S", n, space());
  S(Sym<0, 1>(), i_, j_) = B(i_) * B(j_);
  std::vector<double> rs(6 * n);
  for_each_component<Sym2>([&](const auto& I, int q) {
    for (index_t x = 0; x < n; ++x) rs[q * n + x] = b[I[0] * n + x] * b[I[1] * n + x];
  });
  EXPECT_TRUE(matches(S, rs, exact()));
}

TEST_P(TensorStatements, Eq21ExtrinsicCurvatureLike) {
  ExecScope on(exec());
  auto g = rnd<Sym2>("g", 41);
  auto beta = rnd<Vec3>("beta", 42);
  auto alpha = rnd<Scalar>("alpha", 43);
  Sym2 K("K", n, space());
  K(Sym<0, 1>(), i_, j_) = 2.0 * alpha * g(i_, j_) + beta(i_) * beta(j_);
  const auto gv = host_values(g), bv = host_values(beta), av = host_values(alpha);
  std::vector<double> ref(6 * n);
  for_each_component<Sym2>([&](const auto& I, int q) {
    for (index_t x = 0; x < n; ++x)
      ref[q * n + x] = ((2.0 * av[x]) * gv[q * n + x]) + (bv[I[0] * n + x] * bv[I[1] * n + x]);
  });
  EXPECT_TRUE(matches(K, ref, exact()));
}

TEST_P(TensorStatements, ContractionsSingleAndNested) {
  ExecScope on(exec());
  auto A = rnd<Mat4>("A", 51), B = rnd<Mat4>("B", 52);
  Sym2x4 C("C", n, space());
  // Listing 15: C(Sym<0,1>(), a_, b_) = Sum(c_, A(a_, c_) * B(c_, b_)) (A B is not symmetric:
  // the loop writes the first (a, b) of each pair, a <= b).
  C(Sym<0, 1>(), a_, b_) = Sum(c_, A(a_, c_) * B(c_, b_));
  const auto av = host_values(A), bv = host_values(B);
  std::vector<double> ref(10 * n);
  for_each_component<Sym2x4>([&](const auto& I, int q) {
    for (index_t x = 0; x < n; ++x) {
      double s = av[(I[0] * 4 + 0) * n + x] * bv[(0 * 4 + I[1]) * n + x];
      for (int c = 1; c < 4; ++c) s += av[(I[0] * 4 + c) * n + x] * bv[(c * 4 + I[1]) * n + x];
      ref[q * n + x] = s;
    }
  });
  EXPECT_TRUE(matches(C, ref, exact()));

  // Nested: a full contraction to a scalar, s = Sum(a, Sum(b, A_ab B_ab)).
  Scalar s("s", n, space());
  s() = Sum(a_, Sum(b_, A(a_, b_) * B(a_, b_)));
  std::vector<double> rs(n);
  for (index_t x = 0; x < n; ++x) {
    double outer = 0;
    for (int a = 0; a < 4; ++a) {
      double inner = av[(a * 4 + 0) * n + x] * bv[(a * 4 + 0) * n + x];
      for (int b = 1; b < 4; ++b) inner += av[(a * 4 + b) * n + x] * bv[(a * 4 + b) * n + x];
      outer = a == 0 ? inner : outer + inner;
    }
    rs[x] = outer;
  }
  EXPECT_TRUE(matches(s, rs, exact()));
}

TEST_P(TensorStatements, ChristoffelEq6WithNestedDerivativeSyntax) {
  ExecScope on(exec());
  auto Invg = rnd<Sym2>("Invg", 61);
  auto dg = rnd<DSym2>("dg", 62);
  Chris Gamma("Gamma", n, space());
  Gamma(Sym<1, 2>(), i_, j_, k_) =
      0.5 * Sum(l_, Invg(i_, l_) * (dg(j_, l_)(k_) + dg(l_, k_)(j_) - dg(j_, k_)(l_)));
  const auto iv = host_values(Invg), dv = host_values(dg);
  auto G = [&](int a, int b, index_t x) { return at<Sym2>(iv, n, {a, b}, x); };
  auto D = [&](int a, int b, int c, index_t x) { return at<DSym2>(dv, n, {a, b, c}, x); };
  std::vector<double> ref(18 * n);
  for_each_component<Chris>([&](const auto& I, int q) {
    const int i = I[0], j = I[1], k = I[2];
    for (index_t x = 0; x < n; ++x) {
      double s = 0;
      for (int l = 0; l < 3; ++l) {
        const double t = G(i, l, x) * ((D(j, l, k, x) + D(l, k, j, x)) - D(j, k, l, x));
        s = l == 0 ? t : s + t;
      }
      ref[q * n + x] = 0.5 * s;
    }
  });
  EXPECT_TRUE(matches(Gamma, ref, exact()));
  // dg(j_, l_)(k_) and dg(j_, l_, k_) are the same leaf.
  Chris G2("G2", n, space());
  G2(i_, j_, k_) = 0.5 * Sum(l_, Invg(i_, l_) * (dg(j_, l_, k_) + dg(l_, k_, j_) - dg(j_, k_, l_)));
  EXPECT_TRUE(matches(G2, host_values(Gamma), true));
}

TEST_P(TensorStatements, OffsetsAndFixedIndices) {
  ExecScope on(exec());
  auto psi = rnd<Sym2x4>("psi", 71);
  Sym2 g("g", n, space());
  Vec3 beta("beta", n, space());
  Scalar lapse("lapse", n, space());
  g(i_, j_) = psi(i_ + 1, j_ + 1);     // Eq. 8
  beta(i_) = psi(i_ + 1, 0);           // Listing 5
  lapse() = psi(0, 0);
  const auto pv = host_values(psi);
  std::vector<double> rg(6 * n), rb(3 * n), rl(n);
  for_each_component<Sym2>([&](const auto& I, int q) {
    for (index_t x = 0; x < n; ++x) rg[q * n + x] = at<Sym2x4>(pv, n, {I[0] + 1, I[1] + 1}, x);
  });
  for (int i = 0; i < 3; ++i)
    for (index_t x = 0; x < n; ++x) rb[i * n + x] = at<Sym2x4>(pv, n, {i + 1, 0}, x);
  for (index_t x = 0; x < n; ++x) rl[x] = at<Sym2x4>(pv, n, {0, 0}, x);
  EXPECT_TRUE(matches(g, rg, true));
  EXPECT_TRUE(matches(beta, rb, true));
  EXPECT_TRUE(matches(lapse, rl, true));

  // Listing 17: D(Sym<0,1>(), i_, 0) = Sum(c_, E(i_+1, c_) * F(c_, 0)) — fixed index on
  // the left, offset and fixed index on the right.
  auto E = rnd<Mat4>("E", 72);
  auto F = rnd<Mat4>("F", 73);
  auto D = rnd<Sym2>("D", 74);
  auto rd = host_values(D);
  D(Sym<0, 1>(), i_, 0) = Sum(c_, E(i_ + 1, c_) * F(c_, 0));
  const auto ev = host_values(E), fv = host_values(F);
  for (int i = 0; i < 3; ++i) {
    const int q = Sym2::component_index({i, 0});
    for (index_t x = 0; x < n; ++x) {
      double s = at<Mat4>(ev, n, {i + 1, 0}, x) * at<Mat4>(fv, n, {0, 0}, x);
      for (int c = 1; c < 4; ++c) s += at<Mat4>(ev, n, {i + 1, c}, x) * at<Mat4>(fv, n, {c, 0}, x);
      rd[q * n + x] = s;
    }
  }
  EXPECT_TRUE(matches(D, rd, exact()));

  // Writing into a spacetime slot through an offset: psi_(i+1)(j+1) = g_ij.
  auto psi2 = rnd<Sym2x4>("psi2", 75);
  auto rp = host_values(psi2);
  psi2(i_ + 1, j_ + 1) = g(i_, j_);
  for_each_component<Sym2>([&](const auto& I, int q) {
    const int c = Sym2x4::component_index({I[0] + 1, I[1] + 1});
    for (index_t x = 0; x < n; ++x) rp[c * n + x] = rg[q * n + x];
  });
  EXPECT_TRUE(matches(psi2, rp, true));
}

TEST_P(TensorStatements, UnaryFunctionsAndPow) {
  ExecScope on(exec());
  auto u = rnd<Scalar>("u", 81, 0.1, 0.9);
  auto V = rnd<Vec3>("V", 82, 0.1, 0.9);
  Scalar r("r", n, space());
  Vec3 W("W", n, space());
  const auto uv = host_values(u), vv = host_values(V);
  std::vector<double> ref(n), rw(3 * n);
  struct Case {
    const char* name;
    std::function<void()> run;
    double (*f)(double);
  };
  const std::vector<Case> cases = {
      {"sqrt", [&] { r() = sqrt(u); }, [](double v) { return std::sqrt(v); }},
      {"cbrt", [&] { r() = cbrt(u); }, [](double v) { return std::cbrt(v); }},
      {"exp", [&] { r() = exp(u); }, [](double v) { return std::exp(v); }},
      {"log", [&] { r() = log(u); }, [](double v) { return std::log(v); }},
      {"sin", [&] { r() = sin(u); }, [](double v) { return std::sin(v); }},
      {"cos", [&] { r() = cos(u); }, [](double v) { return std::cos(v); }},
      {"tan", [&] { r() = tan(u); }, [](double v) { return std::tan(v); }},
      {"asin", [&] { r() = asin(u); }, [](double v) { return std::asin(v); }},
      {"acos", [&] { r() = acos(u); }, [](double v) { return std::acos(v); }},
      {"atan", [&] { r() = atan(u); }, [](double v) { return std::atan(v); }},
      {"sinh", [&] { r() = sinh(u); }, [](double v) { return std::sinh(v); }},
      {"cosh", [&] { r() = cosh(u); }, [](double v) { return std::cosh(v); }},
      {"tanh", [&] { r() = tanh(u); }, [](double v) { return std::tanh(v); }},
      {"abs", [&] { r() = abs(-1.0 * u); }, [](double v) { return std::fabs(-1.0 * v); }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    c.run();
    for (index_t x = 0; x < n; ++x) ref[x] = c.f(uv[x]);
    // The GPU's math library differs from the host's by an ulp or two.
    EXPECT_TRUE(matches(r, ref, exact(), 1e-14));
  }
  r() = pow(u, 2.5) + pow(u, u);
  for (index_t x = 0; x < n; ++x) ref[x] = std::pow(uv[x], 2.5) + std::pow(uv[x], uv[x]);
  EXPECT_TRUE(matches(r, ref, exact(), 1e-14));
  // Functions of scalar sub-expressions inside an indexed statement.
  W(i_) = sqrt(u * u + 1.0) * V(i_) + exp(V(i_));
  for (int i = 0; i < 3; ++i)
    for (index_t x = 0; x < n; ++x)
      rw[i * n + x] = std::sqrt(uv[x] * uv[x] + 1.0) * vv[i * n + x] + std::exp(vv[i * n + x]);
  EXPECT_TRUE(matches(W, rw, exact(), 1e-14));
}

TEST_P(TensorStatements, SymmetricLhsWritesEachComponentOnce) {
  ExecScope on(exec());
  // += on a symmetric left-hand side: a second write of an off-diagonal component
  // would add twice.
  Field<Syms<Sym<0, 1>, Sym<2, 3>>, 4, 4, 4, 4> A("A", n, space());
  auto B = rnd<Mat4>("B", 91);
  (void)B;
  A(Sym<0, 1>() && Sym<2, 3>(), a_, b_, c_, d_) += 1.0;
  std::vector<double> ones(100 * n, 1.0);
  EXPECT_TRUE(matches(A, ones, true));
  auto s = defer(A(a_, b_, c_, d_)) += B(a_, b_) * B(c_, d_);
  EXPECT_EQ(s.lhs_components(), 100);
  Field<Sym<0, 1, 2>, 3, 3, 3> S3("S3", n, space());
  S3(i_, j_, k_) += 2.0;
  EXPECT_TRUE(matches(S3, std::vector<double>(10 * n, 2.0), true));
  Sym2 g("g", n, space());
  auto st = defer(g(i_, j_)) += 1.0;
  EXPECT_EQ(st.lhs_components(), 6);
  st.run(exec());
  st.run(exec());
  EXPECT_TRUE(matches(g, std::vector<double>(6 * n, 2.0), true));
}

TEST_P(TensorStatements, ModuleRunsStatementsInOrder) {
  auto B = rnd<Vec3>("B", 101);
  Vec3 A("A", n, space());
  Sym2 G("G", n, space());
  Scalar s("s", n, space());
  Module m;
  m.add(defer(A(i_)) = 2.0 * B(i_))
      .add(defer(G(i_, j_)) = A(i_) * A(j_))
      .add(defer(s()) = Sum(i_, G(i_, i_)))
      .add(defer(A(i_)) += s * B(i_));
  EXPECT_EQ(m.size(), 4u);
  m.capture(exec());
  EXPECT_EQ(m.captured(), on_gpu());
  m.run(exec());
  m.run(exec());  // a replay gives the same result apart from the last +=
  const auto b = host_values(B);
  std::vector<double> ra(3 * n), rs(n);
  for (int rep = 0; rep < 2; ++rep) {
    for (std::size_t q = 0; q < ra.size(); ++q) ra[q] = 2.0 * b[q];
    for (index_t x = 0; x < n; ++x) {
      double t = ra[x] * ra[x];
      for (int i = 1; i < 3; ++i) t += ra[i * n + x] * ra[i * n + x];
      rs[x] = t;
    }
    for (std::size_t q = 0; q < ra.size(); ++q) ra[q] += rs[q % n] * b[q];
  }
  EXPECT_TRUE(matches(A, ra, exact()));
  EXPECT_TRUE(matches(s, rs, exact()));
}

TEST_P(TensorStatements, ZeroGridPointsIsANoOp) {
  ExecScope on(exec());
  Vec3 A("A", 0, space()), B("B", 0, space());
  A(i_) = B(i_) * 2.0;
  EXPECT_EQ(A.size(), 0);
}

TESSERA_INSTANTIATE_BACKENDS(TensorStatements);

}  // namespace
}  // namespace tessera::test
