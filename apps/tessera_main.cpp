// The tessera command-line tool.
#include <CLI/CLI.hpp>

#include <iostream>

#include "bench.hpp"
#include "tessera/core.hpp"

namespace {

int devices(std::ostream& out) {
  out << "tessera " << TESSERA_VERSION << "\n\nBackends in this build:\n";
  out << "  serial   yes\n";
  out << "  openmp   " << (tessera::openmp_threads() > 1 ? "yes" : "yes (1 thread)") << ", "
      << tessera::openmp_threads() << " threads\n";
  out << "  cuda     "
      << (!tessera::cuda_compiled() ? "not compiled in"
                                    : tessera::cuda_available() ? "yes" : "compiled in, no usable GPU")
      << "\n";
  out << "Default backend: " << tessera::to_string(tessera::Exec::best().backend) << "\n";
  for (const auto& d : tessera::cuda_devices()) {
    out << "\nGPU " << d.id << ": " << d.name << " (compute capability " << d.cc_major << "." << d.cc_minor << ")\n"
        << "  multiprocessors           " << d.sm_count << "\n"
        << "  global memory             " << d.global_mem / (1 << 20) << " MiB\n"
        << "  datasheet bandwidth       " << static_cast<long>(d.peak_bandwidth_gbs) << " GB/s\n"
        << "  L2 cache                  " << d.l2_bytes / 1024 << " KiB\n"
        << "  shared memory per block   " << d.shared_per_block / 1024 << " KiB default, "
        << d.shared_per_block_optin / 1024 << " KiB opt-in (" << d.shared_per_block_optin << " bytes)\n"
        << "  shared memory per SM      " << d.shared_per_sm / 1024 << " KiB\n"
        << "  max threads per block     " << d.max_threads_per_block << "\n"
        << "  registers per SM          " << d.regs_per_sm << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tessera: high-order finite-element kernels for GPUs and CPUs, order chosen at run time"};
  app.require_subcommand(1);
  bool profile = false, sync = false;
  app.add_flag("--profile", profile, "Time every kernel launch and print a per-label table at exit");
  app.add_flag("--sync-launches", sync,
               "Synchronize after every launch so that GPU errors name their kernel (also TESSERA_SYNC_LAUNCHES=1)");
  app.set_version_flag("--version", TESSERA_VERSION);

  auto* dev = app.add_subcommand("devices", "List backends and GPU properties");

  auto* bench = app.add_subcommand("bench", "Run a benchmark");
  bench->require_subcommand(1);
  tessera::bench::CoreOptions core;
  auto* bcore = bench->add_subcommand(
      "core", "forall/team-launch bandwidth vs. the copy bandwidth of the same run, launch overhead");
  bcore->add_option("--backend", core.backend, "serial | openmp | cuda | auto")->capture_default_str();
  bcore->add_option("--n", core.n, "Doubles per array (0: 2^27 on a GPU, 2^24 on a CPU)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  bcore->add_option("--reps", core.reps, "Timed repetitions (median reported)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  bcore->add_option("--json", core.json, "Append results as JSON lines to this file");

  CLI11_PARSE(app, argc, argv);
  int rc = 0;
  try {
    if (sync) tessera::set_sync_launches(true);
    if (profile) tessera::profiling::enable();
    if (dev->parsed()) rc = devices(std::cout);
    if (bcore->parsed()) rc = tessera::bench::run_core(core, std::cout);
    if (profile) {
      std::cout << "\nKernel timers:\n";
      tessera::profiling::print(std::cout);
    }
  } catch (const tessera::Error& e) {
    std::cerr << "tessera: error: " << e.what() << "\n";
    return 1;
  }
  return rc;
}
