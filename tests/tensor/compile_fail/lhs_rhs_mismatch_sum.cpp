// expect: the free indices of the left-hand side and of the right-hand side differ
#include "tessera/tensor.hpp"
using namespace tessera::tensor;
// Sum(k_) removes k_: the right-hand side has i_ only.
void f(const Field<NoSym, 3, 3>& A, const Field<NoSym, 3, 3>& B) { A(i_, k_) = Sum(k_, B(i_, k_)); }
