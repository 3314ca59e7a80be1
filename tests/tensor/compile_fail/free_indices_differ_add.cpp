// expect: the free indices of the operands of + differ
#include "tessera/tensor.hpp"
using namespace tessera::tensor;
void f(const Field<NoSym, 3>& A, const Field<NoSym, 3>& B, const Field<NoSym, 3>& C) { A(i_) = B(i_) + C(j_); }
