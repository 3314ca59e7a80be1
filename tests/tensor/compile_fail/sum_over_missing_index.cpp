// expect: the summed index is not a free index
#include "tessera/tensor.hpp"
using namespace tessera::tensor;
void f(const Field<NoSym, 3>& A, const Field<NoSym, 3>& B) { A(i_) = Sum(k_, B(i_)); }
