#pragma once
/// \file usage_error.hpp
/// The error of a command-line value that a command checks itself after parsing (a quadrature
/// name, a list of orders): `tessera` reports it like CLI11's own errors, with exit status 2
/// (docs/cli.md), while other tessera::Error exceptions (unreadable input, unsupported meshes)
/// exit with 1.

#include <utility>

#include "tessera/core/error.hpp"

namespace tessera::app {

class UsageError : public Error {
 public:
  using Error::Error;
};

/// Throws UsageError with the streamed arguments as message unless `cond` holds.
template <class... Args>
void require_usage(bool cond, Args&&... args) {
  if (!cond) throw UsageError(detail::concat(std::forward<Args>(args)...));
}

/// Throws UsageError with the streamed arguments as message.
template <class... Args>
[[noreturn]] void throw_usage(Args&&... args) {
  throw UsageError(detail::concat(std::forward<Args>(args)...));
}

}  // namespace tessera::app
