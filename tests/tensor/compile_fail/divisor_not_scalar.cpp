// expect: the divisor must be a scalar
#include "tessera/tensor.hpp"
using namespace tessera::tensor;
void f(const Field<NoSym, 3>& A, const Field<NoSym, 3>& B) { A(i_) = B(i_) / B(i_); }
