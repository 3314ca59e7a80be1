// expect: the free indices of the operands of - differ
#include "tessera/tensor.hpp"
using namespace tessera::tensor;
void f(const Field<NoSym, 3, 3>& A, const Field<NoSym, 3>& B) { A(i_, j_) = B(i_) * B(j_) - B(i_); }
