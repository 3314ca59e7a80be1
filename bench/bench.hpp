#pragma once
/// \file bench.hpp
/// Benchmarks run by `tessera bench <name>`.

#include <iosfwd>
#include <string>

#include "tessera/core/exec.hpp"
#include "tessera/core/macros.hpp"

namespace tessera::bench {

struct CoreOptions {
  std::string backend = "auto";  ///< serial | openmp | cuda | auto
  index_t n = 0;                 ///< doubles per array; 0: 2^27 on a GPU, 2^24 on a CPU
  int reps = 20;                 ///< timed repetitions (median reported)
  std::string json;              ///< JSON-lines output file ("" = none)
};

/// Bandwidth of forall copy/triad, a team-launch copy and a dot product next to the
/// memcpy bandwidth of the same run; empty-launch overhead; refcount traffic of
/// launches that capture Arrays. Prints Markdown to `out`. Returns 0 on success.
int run_core(const CoreOptions& opt, std::ostream& out);

}  // namespace tessera::bench
