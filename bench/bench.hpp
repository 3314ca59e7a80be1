#pragma once
/// \file bench.hpp
/// Benchmarks run by `tessera bench <name>`: the public interface of the benchmark library
/// (tessera_bench, a layer of its own above the library and below the CLI). The CLI uses only
/// this header; bench_util.hpp is the benchmarks' own.

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

/// Options of the finite-element benchmarks (`tessera bench restriction|geometry`).
struct FemOptions {
  std::string backend = "auto";           ///< serial | openmp | cuda | auto
  std::string mesh = "box:hex:100x100x100";  ///< generator spec or mesh file
  int order = 3;                          ///< polynomial order p of the H1 space
  int components = 1;                     ///< field components (restriction)
  int reps = 20;                          ///< timed repetitions (median reported)
  std::string json;                       ///< JSON-lines output file ("" = none)
};

/// Element restriction: gather (global -> element-local) and scatter-add (element-local ->
/// global, atomic and atomic-free transpose-gather) bandwidth next to memcpy bandwidth.
int run_restriction(const FemOptions& opt, std::ostream& out);

/// Geometric factors at quadrature points (J, det J, J^-1, w det J J^-1 J^-T): time and
/// bandwidth next to memcpy bandwidth.
int run_geometry(const FemOptions& opt, std::ostream& out);

/// Options of `tessera bench interpolate` and `tessera tune interpolate`.
struct InterpolateOptions {
  std::string backend = "auto";                ///< serial | openmp | cuda | auto
  std::string geometries = "tri,quad,tet,hex";  ///< comma-separated
  std::string orders = "1,2,3";                ///< comma-separated orders p
  std::string fields = "scalar,vector";        ///< scalar (1 component), vector (dim components)
  std::string what = "values,ref-grad,grad";   ///< comma-separated kinds (each may join kinds with '+')
  double elements = 1e6;                       ///< elements per mesh for p <= 3 (fewer above, ~same DOFs)
  int max_epb = 32;                            ///< sweep 1..min(max_epb, 32 (2-D) or 16 (3-D))
  bool transpose = false;                      ///< also the transpose (integrate)
  bool stored_geometry = false;                ///< gradients from stored J^-1 instead of on the fly
  bool component_major = false;                ///< ComponentMajor output layout
  int threads = 0;                             ///< simplices: threads per element (0 = default)
  int chunk = 0;                               ///< forward: elements per item (0 = default)
  int reps = 10;                               ///< timed repetitions (median reported)
  std::string json;                            ///< JSON-lines output file ("" = none)
  bool tune = false;                           ///< write the best choice of each kernel to the cache
  std::string cache;                           ///< tuning cache file ("" = tuning::cache_path())
};

/// Options of `tessera bench bp`.
struct BpOptions {
  std::string backend = "auto";      ///< serial | openmp | cuda | auto
  std::string orders = "1,2,3,4,5,6,7,8";
  std::string problems = "bp1,bp2,bp3,bp4,bp5,bp6";  ///< bp1..bp6 (bk1..bk6 with element)
  std::string geometry = "stored,onthefly";         ///< stored and/or onthefly
  std::string elements = "hex";      ///< hex | tet | quad | tri
  double dofs = 8e6;                 ///< about this many scalar DOFs per mesh
  std::string sizes;                 ///< comma-separated DOF counts (a size sweep; overrides dofs)
  int reps = 10;
  int cg_iters = 20;                 ///< BP: time this many Jacobi-CG iterations (0: skip)
  int chunk = 0;                     ///< elements per item of the fused kernels (0: automatic)
  std::string ordering = "auto";  ///< the H1 spaces' node numbering: auto | first-touch | by-entity | interleaved | shared-first
  bool element = false;              ///< BK: E-vector to E-vector
  bool composed = false;             ///< the three-launch composition instead of the fused kernel (OperatorOptions::fused)
  bool collapsed = false;            ///< triangles, tetrahedra: the collapsed Gauss-Jacobi rules instead of the symmetric ones
  double perturb = 0;                ///< box mesh: random vertex displacement, a fraction of the element size (generate_mesh's perturb)
  int points_extra = 2;              ///< BP1-BP4 on quadrilaterals, hexahedra: q = p + points_extra Gauss points per direction (2: the CEED problems)
  bool full_geometry = false;        ///< factors at every point even on affine elements (OperatorOptions::compress_geometry = false)
  bool tune = false;                 ///< sweep elements per block and store the best (tune operators)
  std::string cache;                 ///< tuning cache file (tune)
  std::string json;
};

/// CEED bake-off problems BP1-BP6 (or BK1-BK6 with `element`) with the fused operator kernels
/// on hexahedra (or another element type): apply and CG-iteration GDOF/s against the roofline,
/// stored and on-the-fly geometry. With `tune`, sweeps elements per block and stores the best
/// in the tuning cache.
int run_bp(const BpOptions& opt, std::ostream& out);

/// Interpolation at quadrature points: time for every elements-per-block value, the best,
/// the chosen (tuning cache or heuristic), femto's table and 1 per block side by side, with
/// the bandwidth against the copy bandwidth of the same run. With `tune`, writes the best
/// choice of every kernel to the tuning cache.
int run_interpolate(const InterpolateOptions& opt, std::ostream& out);

/// Options of `tessera bench tensor`.
struct TensorOptions {
  std::string backend = "auto";  ///< serial | openmp | cuda | auto
  index_t min = 100;             ///< smallest grid size
  index_t max = 0;               ///< largest grid size; 0: 1e8 on a GPU, 1e7 on a CPU
  int per_decade = 1;            ///< grid sizes per decade (log spaced)
  std::string sizes;             ///< comma-separated grid sizes (overrides min/max)
  int reps = 10;                 ///< timed repetitions (median reported)
  std::string json;              ///< JSON-lines output file ("" = none)
  std::string statement;         ///< run only cases whose name contains this ("" = all)
  double max_gb = 0;             ///< memory cap in GB; 0: half the host memory / 80% of the GPU's
  bool graph = true;             ///< also time the GH module replayed as a CUDA graph (GPU)
};

/// The seed's tensor statements (Eq. 10-18, Contract1, 19, 20, 21, 6) and a
/// generalized-harmonic module over grid sizes: effective bandwidth against hand-written
/// fused loops and the copy bandwidth of the same run. Markdown to `out`, JSON lines.
int run_tensor(const TensorOptions& opt, std::ostream& out);

/// Options of `tessera bench vtable`.
struct VtableOptions {
  std::string backend = "auto";           ///< serial | openmp | cuda | auto
  index_t rows = 0;                       ///< rows m; 0: 2^17 on a GPU, 2^14 on a CPU
  std::string cols;                       ///< comma-separated columns n; "": 16..4096 (GPU), 16..1024 (CPU)
  std::string classes = "1,2,8,32";       ///< numbers of classes N (1..32)
  std::string divergence = "1,2,8,32";    ///< divergence levels D (row i uses object i % D)
  int reps = 0;                           ///< timed repetitions (median); 0: 10 on a GPU, 5 on a CPU
  std::string json;                       ///< JSON-lines output file ("" = none)
};

/// Polymorphism on the device (seed 003): Y += a X over the rows of m x n matrices, with the
/// row's work done by one of N classes. Times a typed kernel, device virtual calls, a switch
/// over the class id and the polymorphic driver (one typed launch per class), checks every
/// result and prints time, ratio to typed, GB/s and the fraction of the copy bandwidth.
int run_vtable(const VtableOptions& opt, std::ostream& out);

/// Options of `tessera bench assembly`.
struct AssemblyBenchOptions {
  std::string backend = "auto";                ///< serial | openmp | cuda | auto
  std::string geometries = "tri,quad,tet,hex";  ///< comma-separated
  std::string orders;                          ///< comma-separated; "": 1..8 (tet 1..6)
  std::string forms = "diffusion,elasticity";  ///< mass, diffusion, elasticity
  double dofs = 0;                             ///< scalar DOFs per mesh; 0: 2e6 on a GPU, 2e5 on a CPU
  double max_entries = 0;                      ///< element-matrix entries per mesh at most; 0: 4e8 GPU, 2e7 CPU
  int reps = 5;                                ///< timed repetitions (median reported)
  std::string fill = "deterministic,atomic";   ///< fill modes
  std::string dispatch = "driver,functor";     ///< dispatches
  std::string seed_mesh = "box:tri:100x100";   ///< the seed's Poisson application ("" or "none": skip)
  std::string seed_orders = "1,2,3,4";         ///< its orders
  std::string json;                            ///< JSON-lines output file ("" = none)
};

/// Global CSR assembly (fem::MatrixAssembler) per geometry, order, form, fill mode and
/// dispatch: symbolic, fill and re-assembly times, elements / nnz / entries per second, the
/// fill's byte roofline against the copy bandwidth of the same run, and the SpMV of the
/// assembled matrix next to the matrix-free apply; then the seed's Poisson application
/// (driver against functor dispatch). Markdown to `out`, JSON lines.
int run_assembly(const AssemblyBenchOptions& opt, std::ostream& out);

/// Prints "warning: machine overloaded/noisy: ..." (and returns true) when a benchmark since
/// the last call met results faster than the copy reference of its run, or a copy reference
/// that varied too much (bench_util.hpp); then starts counting again. The CLI calls it after
/// every bench run.
bool report_noise(std::ostream& out);

}  // namespace tessera::bench
