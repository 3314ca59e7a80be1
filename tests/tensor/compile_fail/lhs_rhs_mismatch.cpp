// expect: the free indices of the left-hand side and of the right-hand side differ
#include "tessera/tensor.hpp"
using namespace tessera::tensor;
void f(const Field<NoSym, 3>& A, const Field<NoSym, 3>& B) { A(i_) = B(j_); }
