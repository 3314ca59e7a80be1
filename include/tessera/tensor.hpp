#pragma once
/// \file tensor.hpp
/// tessera's tensor layer: tensor expressions over grids, one fused kernel per statement.
#include "tessera/tensor/emit.hpp"
#include "tessera/tensor/expr.hpp"
#include "tessera/tensor/field.hpp"
#include "tessera/tensor/index.hpp"
#include "tessera/tensor/layout.hpp"
#include "tessera/tensor/module.hpp"
#include "tessera/tensor/statement.hpp"
