// expect: COMPILES
// Control case: the driver must see this one compile (guards against a broken setup
// making every other case "fail to compile" for the wrong reason).
#include "tessera/tensor.hpp"
using namespace tessera::tensor;
using S = Field<tessera::tensor::Sym<0, 1>, 3, 3>;
void f(const S& K, const S& g, const Field<NoSym, 3>& beta, const Scalar& alpha, const Field<NoSym, 4>& psi) {
  K(tessera::tensor::Sym<0, 1>(), i_, j_) = 2.0 * alpha * g(i_, j_) + beta(i_) * beta(j_) + psi(i_ + 1) * psi(j_ + 1);
}
