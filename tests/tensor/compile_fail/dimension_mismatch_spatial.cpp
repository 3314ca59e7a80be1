// expect: index dimension mismatch
#include "tessera/tensor.hpp"
using namespace tessera::tensor;
// i_ (dimension 3) in a spacetime slot without an offset.
void f(const Field<NoSym, 3>& A, const Field<NoSym, 4>& psi) { A(i_) = psi(i_); }
