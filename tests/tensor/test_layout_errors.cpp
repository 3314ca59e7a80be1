// Storage layout of grid tensors, byte counts of statements, and the run-time errors.
#include <set>
#include <string>

#include "tensor_test_util.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tensor;

TEST(TensorLayout, IndependentComponentCounts) {
  EXPECT_EQ((Field<NoSym>::components), 1);
  EXPECT_EQ((Field<NoSym, 3>::components), 3);
  EXPECT_EQ((Field<NoSym, 4, 3>::components), 12);
  EXPECT_EQ((Field<Sym<0, 1>, 3, 3>::components), 6);
  EXPECT_EQ((Field<Sym<0, 1>, 4, 4>::components), 10);
  EXPECT_EQ((Field<Sym<1, 2>, 3, 3, 3>::components), 18);
  EXPECT_EQ((Field<Sym<0, 1>, 4, 4, 3>::components), 30);
  EXPECT_EQ((Field<Syms<Sym<0, 1>, Sym<2, 3>>, 4, 4, 4, 4>::components), 100);
  EXPECT_EQ((Field<Sym<0, 1, 2>, 3, 3, 3>::components), 10);
  EXPECT_EQ((Field<Sym<0, 1, 2, 3>, 4, 4, 4, 4>::components), 35);
}

template <class F>
void check_layout() {
  constexpr auto d = F::dims();
  int total = 1;
  for (int p = 0; p < F::rank; ++p) total *= d[p];
  std::set<int> comps;
  for (int t = 0; t < total; ++t) {
    std::array<int, F::rank> idx{};
    int rest = t;
    for (int p = F::rank - 1; p >= 0; --p) {
      idx[p] = rest % d[p];
      rest /= d[p];
    }
    const int c = F::component_index(idx);
    ASSERT_GE(c, 0);
    ASSERT_LT(c, F::components);
    comps.insert(c);
    // Every symmetric partner gives the same component: swap each symmetric pair.
    constexpr LayoutInfo L = F::layout::info;
    for (int p = 0; p < F::rank; ++p)
      for (int q = p + 1; q < F::rank; ++q)
        if (L.cls[p] == L.cls[q]) {
          auto sw = idx;
          std::swap(sw[p], sw[q]);
          EXPECT_EQ(F::component_index(sw), c);
        }
  }
  EXPECT_EQ(static_cast<int>(comps.size()), F::components);  // onto: no gaps
}

TEST(TensorLayout, ComponentIndexIsOntoAndSymmetric) {
  check_layout<Field<NoSym, 4, 3, 3>>();
  check_layout<Field<Sym<0, 1>, 3, 3>>();
  check_layout<Field<Sym<1, 2>, 4, 3, 3>>();
  check_layout<Field<Syms<Sym<0, 1>, Sym<2, 3>>, 4, 4, 3, 3>>();
  check_layout<Field<Sym<0, 1, 2>, 4, 4, 4>>();
  check_layout<Field<Sym<0, 2>, 3, 4, 3>>();
}

TEST(TensorLayout, OneContiguousComponentMajorAllocation) {
  Field<Sym<0, 1>, 3, 3> g("g", 100);
  EXPECT_EQ(g.array().extent(0), 6);
  EXPECT_EQ(g.array().extent(1), 100);
  EXPECT_EQ(g.component(0, 1).data(), g.data() + 1 * 100);
  EXPECT_EQ(g.component(1, 0).data(), g.component(0, 1).data());
  EXPECT_EQ(g.component(2, 2).data(), g.data() + 5 * 100);
  // Symmetric 3x3 order: 00 01 11 02 12 22.
  EXPECT_EQ((Field<Sym<0, 1>, 3, 3>::component_index({0, 2})), 3);
  EXPECT_EQ((Field<Sym<0, 1>, 3, 3>::component_index({1, 2})), 4);
  EXPECT_CONTAINS(error_message([&] { (void)g.component(0, 3); }), "outside 0..2");
}

TEST(TensorStatementInfo, ComponentsMovedAsInTheSeed) {
  const index_t n = 8;
  Field<NoSym, 4, 4> A("A", n), B("B", n), E("E", n), F("F", n);
  Field<Sym<0, 1>, 4, 4> C("C", n);
  Field<Sym<0, 1>, 3, 3> D("D", n);
  // Listing 15: N_e = 42 (16 from A, 16 from B, 10 from C).
  auto s15 = defer(C(Sym<0, 1>(), a_, b_)) = Sum(c_, A(a_, c_) * B(c_, b_));
  EXPECT_EQ(s15.components_moved(), 42);
  EXPECT_EQ(s15.lhs_components(), 10);
  // Listing 17: N_e = 19 (3 from D, 4 from F, 12 from E).
  auto s17 = defer(D(Sym<0, 1>(), i_, 0)) = Sum(c_, E(i_ + 1, c_) * F(c_, 0));
  EXPECT_EQ(s17.components_moved(), 19);
  EXPECT_EQ(s17.lhs_components(), 3);
  EXPECT_EQ(s17.text(), "D(i_, 0) = Sum(c_, (E(i_+1, c_)*F(c_, 0)))");
}

class TensorErrors : public BackendTest {};

TEST_P(TensorErrors, GridSizesDiffer) {
  tensor::ExecScope on(exec());
  Field<NoSym, 3> A("A", 10, space()), B("B", 11, space());
  const std::string msg = error_message([&] { A(i_) = B(i_); });
  EXPECT_CONTAINS(msg, "grid sizes differ");
  EXPECT_CONTAINS(msg, "'A' has 10 points, 'B' has 11");
}

TEST_P(TensorErrors, SymmetryMarkerDisagreesWithStorage) {
  tensor::ExecScope on(exec());
  Field<NoSym, 3, 3> A("A", 10, space());
  Field<Sym<0, 1>, 3, 3> S("S", 10, space());
  const std::string m1 = error_message([&] { A(Sym<0, 1>(), i_, j_) = S(i_, j_); });
  EXPECT_CONTAINS(m1, "symmetry marker");
  EXPECT_CONTAINS(m1, "'A'");
  Field<Sym<1, 2>, 3, 3, 3> G("G", 10, space());
  EXPECT_CONTAINS(error_message([&] { G(Sym<0, 1>(), i_, j_, k_) = 1.0; }), "disagrees");
  // The right marker is accepted.
  S(Sym<0, 1>(), i_, j_) = 1.0;
  G(Sym<1, 2>(), i_, j_, k_) = 1.0;
}

TEST_P(TensorErrors, EmptyFieldAndIndexRanges) {
  tensor::ExecScope on(exec());
  Field<NoSym, 3> A("A", 10, space()), E;
  EXPECT_CONTAINS(error_message([&] { A(i_) = E(i_); }), "no storage");
  Field<NoSym, 4> P("P", 10, space());
  EXPECT_CONTAINS(error_message([&] { A(i_) = P(i_ + 2); }), "runs past its dimension 4");
  EXPECT_CONTAINS(error_message([&] { A(i_) = P(4) * A(i_); }), "fixed index 4");
}

TEST_P(TensorErrors, ReadingTheLeftHandSideWithOtherIndices) {
  tensor::ExecScope on(exec());
  Field<NoSym, 3, 3> A("A", 10, space());
  Field<Sym<0, 1>, 3, 3> S("S", 10, space());
  Field<NoSym, 3> v("v", 10, space());
  const std::string msg = error_message([&] { A(i_, j_) = A(j_, i_); });
  EXPECT_CONTAINS(msg, "a race");
  EXPECT_CONTAINS(msg, "of 'A'");
  EXPECT_CONTAINS(error_message([&] { v(i_) = Sum(j_, A(i_, j_) * v(j_)); }), "a race");
  // Reading exactly the component being written is fine, also through a symmetry.
  A(i_, j_) = 2.0 * A(i_, j_);
  S(i_, j_) = 0.5 * S(j_, i_);
  v(i_) += v(i_) * A(0, 0);
}

TEST_P(TensorErrors, HostDeviceMismatch) {
  // A statement on the CUDA backend over host memory (checked before any launch, so
  // this runs without a GPU too) ...
  Field<NoSym, 3> A("A", 10), B("B", 10);
  Exec gpu;
  gpu.backend = Backend::Cuda;
  {
    tensor::ExecScope on(gpu);
    const std::string msg = error_message([&] { A(i_) = B(i_); });
    EXPECT_CONTAINS(msg, "host/device mismatch");
    EXPECT_CONTAINS(msg, "'A' lives in host memory but the statement runs on the cuda backend");
  }
  // ... and on a CPU backend over device memory.
  if (on_gpu()) {
    Field<NoSym, 3> D("D", 10, Space::Device);
    tensor::ExecScope on(Exec::openmp());
    const std::string msg = error_message([&] { A(i_) = D(i_); });
    EXPECT_CONTAINS(msg, "'D' lives in device memory but the statement runs on the openmp backend");
  }
}

TESSERA_INSTANTIATE_BACKENDS(TensorErrors);

}  // namespace
}  // namespace tessera::test
