// expect: an index appears twice on the left-hand side
#include "tessera/tensor.hpp"
using namespace tessera::tensor;
void f(const Field<tessera::tensor::Sym<0, 1>, 3, 3>& dg, const Field<NoSym, 3>& B) { dg(i_, i_) = B(i_); }
