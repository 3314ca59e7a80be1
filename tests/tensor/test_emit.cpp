// emit_c / emit_cuda: the emitted source compiles (g++, and nvcc where found) and
// computes the same numbers as the statement (C: bit for bit; CUDA: 1e-14, on a GPU).
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tensor_test_util.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tensor;
namespace fs = std::filesystem;

using Sym2 = Field<Sym<0, 1>, 3, 3>;
using Sym2x4 = Field<Sym<0, 1>, 4, 4>;
using Mat4 = Field<NoSym, 4, 4>;
using Vec3 = Field<NoSym, 3>;

constexpr index_t kN = 517;

fs::path work_dir() {
  fs::path d = fs::path(TESSERA_TEST_EMIT_DIR);
  fs::create_directories(d);
  return d;
}

/// Writes `src` to name.<ext>, compiles it to a shared library with `cmd`; "" on success,
/// else the compiler's output.
std::string build_shared(const std::string& src, const std::string& name, const std::string& ext,
                         const std::string& compiler, const std::string& flags, fs::path* lib) {
  const fs::path dir = work_dir();
  const fs::path file = dir / (name + "." + ext);
  *lib = dir / ("lib" + name + ".so");
  const fs::path log = dir / (name + ".log");
  std::ofstream(file) << src;
  const std::string cmd = "\"" + compiler + "\" " + flags + " -shared -o \"" + lib->string() + "\" \"" +
                          file.string() + "\" > \"" + log.string() + "\" 2>&1";
  if (std::system(cmd.c_str()) == 0) return {};
  std::ifstream in(log);
  return cmd + "\n" + std::string(std::istreambuf_iterator<char>(in), {});
}

/// Calls the emitted function `name` of `lib` with N and the operand pointers.
void call_emitted(const fs::path& lib, const std::string& name, long n, const std::vector<double*>& p) {
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  void* f = dlsym(h, name.c_str());
  ASSERT_NE(f, nullptr) << dlerror();
  using D = double*;
  switch (p.size()) {
    case 1: reinterpret_cast<void (*)(long, D)>(f)(n, p[0]); break;
    case 2: reinterpret_cast<void (*)(long, D, D)>(f)(n, p[0], p[1]); break;
    case 3: reinterpret_cast<void (*)(long, D, D, D)>(f)(n, p[0], p[1], p[2]); break;
    case 4: reinterpret_cast<void (*)(long, D, D, D, D)>(f)(n, p[0], p[1], p[2], p[3]); break;
    case 5: reinterpret_cast<void (*)(long, D, D, D, D, D)>(f)(n, p[0], p[1], p[2], p[3], p[4]); break;
    default: FAIL() << "too many operands";
  }
  dlclose(h);
}

/// The statements emitted and checked, on fields of `space`; `check(stmt, out, operands)`
/// is called for each with out = the LHS Field and the pointers in emitted order.
struct Fixture {
  Space space;
  Sym2 g, K, Invg, D;
  Vec3 beta;
  Scalar alpha;
  Field<Sym<0, 1>, 3, 3, 3> dg;
  Field<Sym<1, 2>, 3, 3, 3> Gamma;
  Mat4 E, F;
  Sym2x4 psi;
  explicit Fixture(Space sp)
      : space(sp),
        g(random_field<Sym2>("g", kN, sp, 1)),
        K(random_field<Sym2>("K", kN, sp, 2)),
        Invg(random_field<Sym2>("Invg", kN, sp, 3)),
        D(random_field<Sym2>("D", kN, sp, 4)),
        beta(random_field<Vec3>("beta", kN, sp, 5)),
        alpha(random_field<Scalar>("alpha", kN, sp, 6, 0.5, 1.5)),
        dg(random_field<Field<Sym<0, 1>, 3, 3, 3>>("dg", kN, sp, 7)),
        Gamma(random_field<Field<Sym<1, 2>, 3, 3, 3>>("Gamma", kN, sp, 8)),
        E(random_field<Mat4>("E", kN, sp, 9)),
        F(random_field<Mat4>("F", kN, sp, 10)),
        psi(random_field<Sym2x4>("psi", kN, sp, 11)) {}
};

/// Runs `stmt` through the library on exec and through the emitted library, from the
/// same inputs, and compares the left-hand sides.
template <class St, class Out>
void compare(const St& stmt, Out& out, const fs::path& lib, const std::string& name, const Exec& exec,
             bool exact) {
  const auto before = out.clone(out.space());
  stmt.run(exec);
  const auto expected = host_values(out);
  deep_copy(out.array(), before.array());
  // The emitted function takes the LHS then the distinct RHS operands in order of appearance.
  tensor::detail::CodePrinter p;
  (void)p.leaf(stmt.lhs());
  (void)stmt.rhs().print(p);
  std::vector<double*> ptrs;
  for (const auto& o : p.operands()) ptrs.push_back(const_cast<double*>(o.data));
  call_emitted(lib, name, static_cast<long>(kN), ptrs);
  if (exec.on_device()) tessera::fence("emit test");
  EXPECT_TRUE(matches(out, expected, exact)) << stmt.text();
}

template <class Fn>
void for_each_statement(Fixture& f, Fn&& fn) {
  fn("eq21", defer(f.K(Sym<0, 1>(), i_, j_)) = 2.0 * f.alpha * f.g(i_, j_) + f.beta(i_) * f.beta(j_), f.K);
  fn("christoffel",
     defer(f.Gamma(Sym<1, 2>(), i_, j_, k_)) =
         0.5 * Sum(l_, f.Invg(i_, l_) * (f.dg(j_, l_)(k_) + f.dg(l_, k_)(j_) - f.dg(j_, k_)(l_))),
     f.Gamma);
  fn("listing17", defer(f.D(Sym<0, 1>(), i_, 0)) = Sum(c_, f.E(i_ + 1, c_) * f.F(c_, 0)), f.D);
  fn("compound", defer(f.g(i_, j_)) += sqrt(f.alpha) * exp(f.K(i_, j_)) / f.alpha - pow(f.alpha, 2.0) * f.D(j_, i_), f.g);
  fn("offsets", defer(f.psi(i_ + 1, j_ + 0)) = f.g(i_, j_) * f.alpha, f.psi);  // needs the keep table
  fn("scalar", defer(f.alpha()) = abs(Sum(i_, f.beta(i_) * f.beta(i_))) + 1.0, f.alpha);
}

TEST(TensorEmit, EmittedCHasTheSeedsLoopStructure) {
  Fixture f(Space::Host);
  const std::string src =
      emit_c(defer(f.K(Sym<0, 1>(), i_, j_)) = 2.0 * f.alpha * f.g(i_, j_) + f.beta(i_) * f.beta(j_), "eq21");
  EXPECT_CONTAINS(src, "for (int i = 0; i < 3; ++i)");
  EXPECT_CONTAINS(src, "for (int j = i; j < 3; ++j)");
  EXPECT_CONTAINS(src, "for (long x = 0; x < N; ++x)");
  EXPECT_CONTAINS(src, "void eq21(long N, double* __restrict__ T0");
  EXPECT_CONTAINS(src, "static const int T0_c[3][3] = {{0, 1, 3}, {1, 2, 4}, {3, 4, 5}};");
}

TEST(TensorEmit, EmittedCCompilesAndAgrees) {
  Fixture f(Space::Host);
  for_each_statement(f, [&](const std::string& name, const auto& stmt, auto& out) {
    SCOPED_TRACE(name);
    fs::path lib;
    const std::string err = build_shared(emit_c(stmt, name), name, "c", TESSERA_TEST_CXX,
                                         "-x c++ -O2 -fPIC -Wall -Werror", &lib);
    ASSERT_EQ(err, "") << err;
    compare(stmt, out, lib, name, Exec::serial(), true);
  });
}

bool have_nvcc() { return std::string(TESSERA_TEST_NVCC).size() > 0; }

TEST(TensorEmit, EmittedCudaCompiles) {
  if (!have_nvcc()) GTEST_SKIP() << "skipped: no nvcc";
  Fixture f(Space::Host);
  for_each_statement(f, [&](const std::string& name, const auto& stmt, auto&) {
    SCOPED_TRACE(name);
    fs::path lib;
    const std::string err = build_shared(emit_cuda(stmt, name + "_cu"), name + "_cu", "cu", TESSERA_TEST_NVCC,
                                         "-O2 -arch=sm_90 -Xcompiler -fPIC", &lib);
    ASSERT_EQ(err, "") << err;
  });
}

TEST(TensorEmit, EmittedCudaAgreesOnTheGpu) {
  if (!have_nvcc()) GTEST_SKIP() << "skipped: no nvcc";
  TESSERA_SKIP_WITHOUT_GPU();
  Fixture f(Space::Device);
  for_each_statement(f, [&](const std::string& name, const auto& stmt, auto& out) {
    SCOPED_TRACE(name);
    fs::path lib;
    const std::string err = build_shared(emit_cuda(stmt, name + "_gpu"), name + "_gpu", "cu", TESSERA_TEST_NVCC,
                                         "-O2 -arch=sm_90 -Xcompiler -fPIC", &lib);
    ASSERT_EQ(err, "") << err;
    compare(stmt, out, lib, name + "_gpu", Exec::cuda(), false);
  });
}

}  // namespace
}  // namespace tessera::test
