#pragma once
/// \file cli_support.hpp
/// Command-line support of the `tessera` tool: option checks whose messages name the value
/// (CLI11's Range prints a 309-digit bound where there is none), the one-line messages of
/// mistakes CLI11 reports poorly (unknown subcommands, options before their subcommand), the
/// exit statuses, and the OpenMP thread settings (the default wait policy). docs/cli.md.

#include <CLI/CLI.hpp>

#include <cmath>
#include <iosfwd>
#include <optional>
#include <string>
#include <type_traits>

namespace tessera::app {

/// Exit status of a command line that is wrong (an unknown subcommand or option, a bad value);
/// 1 is for errors while a command runs (unreadable input, out of memory), 3 for a solver that
/// did not converge (docs/cli.md).
constexpr int kUsage = 2;
constexpr int kRuntime = 1;

/// The whole string as a number (no trailing characters), or nullopt.
std::optional<double> parse_number(const std::string& s);
/// x with up to 6 significant digits.
std::string short_number(double x);

/// A value in [lo, hi]; an integer when both bounds are. Unlike CLI::Range, the message names
/// the value and readable bounds.
template <class T>
CLI::Validator in_range(T lo, T hi) {
  const std::string range = short_number(double(lo)) + ".." + short_number(double(hi));
  return CLI::Validator(
      [lo, hi, range](std::string& v) -> std::string {
        const auto x = parse_number(v);
        if (!x || !std::isfinite(*x) || (std::is_integral_v<T> && *x != std::floor(*x)))
          return "'" + v + "' is not " + (std::is_integral_v<T> ? "an integer" : "a number") + " (expected " +
                 range + ")";
        if (*x < double(lo) || *x > double(hi)) return v + " is out of range (expected " + range + ")";
        return {};
      },
      "in " + range);
}

/// A number >= lo (no upper bound).
CLI::Validator at_least(double lo);
/// A backend name that tessera::Exec::parse knows (whether or not this build has it).
CLI::Validator backend_name();
/// A file name ending in `ext` (any case), such as the .vtu of --output.
CLI::Validator file_ending(const std::string& ext);
/// A comma-separated list of numbers (integers when `integers`).
CLI::Validator number_list(bool integers);

/// The subcommand path of the arguments ("tessera bench core"), and the one-line message of the
/// mistakes CLI11 reports poorly: an unknown subcommand ("A subcommand is required") and an
/// option of a subcommand given before it ("arguments were not expected"). Empty when neither.
std::string scan_arguments(CLI::App& app, int argc, char** argv, std::string& path);

/// Makes OMP_WAIT_POLICY=passive the default of the process (see cli_support.cpp); call first
/// in main(), before anything uses OpenMP.
void default_wait_policy(char** argv);
/// The OpenMP thread settings in force and where OMP_WAIT_POLICY came from (`tessera devices`).
void print_thread_settings(std::ostream& out);

}  // namespace tessera::app
