#pragma once
/// \file error.hpp
/// tessera::Error and the checking helpers used on the host.

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace tessera {

/// The one exception type tessera throws. `what()` holds the full message:
/// the problem, where it happened (a kernel label, a file and line, an array
/// label) and, where there is one, what to do about it.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

namespace detail {
template <class... Args>
std::string concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
}  // namespace detail

/// Throws tessera::Error with the streamed arguments as message.
template <class... Args>
[[noreturn]] void fail(Args&&... args) {
  throw Error(detail::concat(std::forward<Args>(args)...));
}

}  // namespace tessera

/// Throws tessera::Error unless `cond` holds; the remaining arguments are streamed into the message.
#define TESSERA_REQUIRE(cond, ...)                 \
  do {                                             \
    if (!(cond)) ::tessera::fail(__VA_ARGS__);     \
  } while (0)
