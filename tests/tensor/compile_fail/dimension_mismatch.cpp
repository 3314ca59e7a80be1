// expect: index dimension mismatch
#include "tessera/tensor.hpp"
using namespace tessera::tensor;
// a_ runs over 4 values; the slot has dimension 3.
void f(const Field<NoSym, 3>& A, const Field<NoSym, 3>& B) { A(a_) = B(a_); }
