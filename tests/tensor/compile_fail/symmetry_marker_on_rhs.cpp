// expect: a symmetry marker Sym<...>() is only allowed on the left-hand side
#include "tessera/tensor.hpp"
using namespace tessera::tensor;
using S = Field<tessera::tensor::Sym<0, 1>, 3, 3>;
void f(const S& A, const S& B) { A(i_, j_) = B(tessera::tensor::Sym<0, 1>(), i_, j_); }
