// Command-line support of the tessera tool (cli_support.hpp).
#include "cli_support.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <vector>

#include "tessera/core.hpp"
#include "tessera/io/mesh_io.hpp"

namespace tessera::app {

/// The whole string as a number (no trailing characters), or nullopt.
std::optional<double> parse_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE) return std::nullopt;
  return v;
}

std::string short_number(double x) {
  std::ostringstream os;
  os << std::setprecision(6) << x;
  return os.str();
}

/// A number >= lo (no upper bound).
CLI::Validator at_least(double lo) {
  return CLI::Validator(
      [lo](std::string& v) -> std::string {
        const auto x = parse_number(v);
        if (!x || !std::isfinite(*x)) return "'" + v + "' is not a number";
        if (*x < lo) return v + " is out of range (expected a number >= " + short_number(lo) + ")";
        return {};
      },
      ">= " + short_number(lo));
}

/// A backend name that tessera::Exec::parse knows (whether or not this build has it).
CLI::Validator backend_name() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        std::string l = v;
        std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        for (const char* b : {"serial", "openmp", "omp", "cpu", "cuda", "gpu", "auto"})
          if (l == b) return {};
        return "unknown backend '" + v + "' (expected serial, openmp, cpu, cuda, gpu or auto)";
      },
      "BACKEND");
}

/// A file name ending in `ext` (any case), such as the .vtu of --output.
CLI::Validator file_ending(const std::string& ext) {
  return CLI::Validator(
      [ext](std::string& v) -> std::string {
        if (io::lower_extension(v) == ext) return {};
        return "'" + v + "' must name a " + ext + " file";
      },
      "FILE" + ext);
}

/// A comma-separated list of numbers (integers when `integers`).
CLI::Validator number_list(bool integers) {
  return CLI::Validator(
      [integers](std::string& v) -> std::string {
        std::stringstream ss(v);
        std::string w;
        while (std::getline(ss, w, ',')) {
          if (w.empty()) continue;
          const auto x = parse_number(w);
          if (!x || !std::isfinite(*x) || (integers && *x != std::floor(*x)))
            return "'" + w + "' in '" + v + "' is not " + (integers ? "an integer" : "a number");
        }
        return {};
      },
      integers ? "INT,..." : "NUMBER,...");
}

namespace {

/// The subcommands of `app` by name.
std::vector<std::string> subcommand_names(const CLI::App* app) {
  std::vector<std::string> names;
  for (const auto* s : app->get_subcommands([](const CLI::App*) { return true; })) names.push_back(s->get_name());
  return names;
}

CLI::App* find_subcommand(CLI::App* app, const std::string& name) {
  for (auto* s : app->get_subcommands([](const CLI::App*) { return true; }))
    if (s->get_name() == name) return s;
  return nullptr;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string r;
  for (const auto& x : v) r += (r.empty() ? "" : sep) + x;
  return r;
}

}  // namespace

/// The subcommand path of the arguments ("tessera bench core"), and the one-line message of the
/// mistakes CLI11 reports poorly: an unknown subcommand ("A subcommand is required") and an
/// option of a subcommand given before it ("arguments were not expected"). Empty when neither.
std::string scan_arguments(CLI::App& app, int argc, char** argv, std::string& path) {
  path = "tessera";
  CLI::App* cur = &app;
  std::string early_option;  // an option before the first subcommand that is not a global one
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    if (a.size() > 1 && a[0] == '-') {
      if (cur == &app && early_option.empty() && app.get_option_no_throw(a.substr(0, a.find('='))) == nullptr &&
          a != "-h" && a != "--help")
        early_option = a;
      continue;
    }
    if (CLI::App* sub = find_subcommand(cur, a)) {
      if (cur == &app && !early_option.empty())
        return "option '" + early_option + "' comes before the subcommand '" + a +
               "': options follow the subcommand they belong to (tessera " + a + " " + early_option + " ...)";
      cur = sub;
      path += " " + a;
      continue;
    }
    if (cur == &app && !early_option.empty()) {
      // "tessera --order 3 poisson": name the subcommand if one follows
      for (int k = i; k < argc; ++k)
        if (find_subcommand(&app, argv[k]))
          return "option '" + early_option + "' comes before the subcommand '" + argv[k] +
                 "': options follow the subcommand they belong to (tessera " + argv[k] + " " + early_option +
                 " ...)";
      return "unknown option '" + early_option + "' (tessera --help lists the options and subcommands)";
    }
    if (cur->get_require_subcommand_min() > 0)
      return "unknown subcommand '" + a + "' of " + path + " (one of: " + join(subcommand_names(cur), ", ") + ")";
  }
  return {};
}

// ---- OpenMP thread settings --------------------------------------------------------------------

namespace {

/// Set when this process set OMP_WAIT_POLICY=passive itself (the user had set neither it nor
/// GOMP_SPINCOUNT).
bool g_wait_policy_defaulted = false;

}  // namespace

/// Makes OMP_WAIT_POLICY=passive the default: with the OpenMP runtime's default, threads that
/// wait at the end of a parallel loop spin, and on a machine whose cores are busy with other
/// work the spinning threads take the time the working ones need (measured in docs/cli.md).
/// libgomp reads its environment when it is loaded, before main(), so the variable is set and
/// the program started again (once: the marker variable stops a second restart). Where the
/// restart fails the program goes on with the runtime's default.
void default_wait_policy(char** argv) {
  constexpr const char* kMarker = "TESSERA_OMP_WAIT_POLICY_DEFAULTED";
  if (const char* m = std::getenv(kMarker)) {
    g_wait_policy_defaulted = std::string(m) == "1" && std::getenv("OMP_WAIT_POLICY");
    unsetenv(kMarker);  // not passed on to the programs this one starts
    return;
  }
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
#if defined(_OPENMP)
  setenv("OMP_WAIT_POLICY", "passive", 1);
  setenv(kMarker, "1", 1);
  execv("/proc/self/exe", argv);
  // no restart (no /proc): the runtime keeps its default
  unsetenv("OMP_WAIT_POLICY");
  unsetenv(kMarker);
#else
  (void)argv;
#endif
}

namespace {

const char* env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace

void print_thread_settings(std::ostream& out) {
  out << "\nOpenMP thread settings (read when the program starts):\n";
  out << "  OMP_NUM_THREADS  " << env_or("OMP_NUM_THREADS", "unset") << " (" << openmp_threads()
      << " threads)\n";
  out << "  OMP_WAIT_POLICY  " << env_or("OMP_WAIT_POLICY", "unset")
      << (g_wait_policy_defaulted ? " (tessera's default: waiting threads sleep instead of spinning)"
                                  : std::getenv("OMP_WAIT_POLICY") ? " (from the environment)"
                                                                   : " (the OpenMP runtime's default)")
      << "\n";
  if (const char* sc = std::getenv("GOMP_SPINCOUNT")) out << "  GOMP_SPINCOUNT   " << sc << "\n";
  out << "  OMP_PROC_BIND    " << env_or("OMP_PROC_BIND", "unset") << "\n";
  out << "  OMP_PLACES       " << env_or("OMP_PLACES", "unset") << "\n";
}

}  // namespace tessera::app
