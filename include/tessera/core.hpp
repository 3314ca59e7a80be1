#pragma once
/// \file core.hpp
/// Everything of tessera's portable kernel layer.
#include "tessera/core/array.hpp"
#include "tessera/core/device.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/exec.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/core/profiling.hpp"
#include "tessera/core/reduce.hpp"
#include "tessera/core/team.hpp"
#include "tessera/core/timer.hpp"
#include "tessera/core/view.hpp"
