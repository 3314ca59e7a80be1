// Global sparse assembly: the pattern by a radix sort of the element-matrix keys, the fill by
// one typed kernel per (geometry, attribute) group or by device virtual calls, Dirichlet
// elimination (compiled by nvcc in CUDA builds).
#include "tessera/fem/assembly.hpp"

#include <algorithm>
#include <chrono>
#include <new>
#include <sstream>

#include "assembly_cpu.hpp"
#include "assembly_physics.hpp"
#include "tessera/core/device.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/core/reduce.hpp"
#include "tessera/core/sort.hpp"
#include "tessera/fem/basis.hpp"

namespace tessera::fem {

const char* name(FormKind k) {
  switch (k) {
    case FormKind::Mass: return "mass";
    case FormKind::Diffusion: return "diffusion";
    case FormKind::Elasticity: return "elasticity";
  }
  return "?";
}

FormKind parse_form(const std::string& s) {
  if (s == "mass") return FormKind::Mass;
  if (s == "diffusion" || s == "heat") return FormKind::Diffusion;
  if (s == "elasticity") return FormKind::Elasticity;
  fail("unknown form '", s, "' (known: mass, diffusion (or heat), elasticity)");
}

const char* name(FillMode m) {
  switch (m) {
    case FillMode::Deterministic: return "deterministic";
    case FillMode::Atomic: return "atomic";
    case FillMode::Auto: return "auto";
  }
  return "?";
}

const char* name(Dispatch d) { return d == Dispatch::Driver ? "driver" : "functor"; }

Material material_of(const MaterialTable& table, int a) {
  if (table.empty()) return Material{};
  const auto it = table.find(a);
  if (it != table.end()) return it->second;
  std::ostringstream known;
  for (const auto& [k, v] : table) known << (known.tellp() > 0 ? ", " : "") << k;
  fail("element attribute ", a, " has no material (the material table names attributes ", known.str(),
       "): give every attribute of the mesh a material");
}

namespace assembly_detail {

/// The quadrature degree H1Operator uses on this mesh (its default when `degree` < 0), checked
/// to integrate the form exactly on affine elements.
int form_degree(const Mesh& mesh, int p, FormKind kind, const AssemblyOptions& opt) {
  const bool gll = opt.quadrature == QuadratureType::GaussLobatto;
  bool any_tensor = false;
  for (Geometry g : {Geometry::Quadrilateral, Geometry::Hexahedron})
    any_tensor = any_tensor || (mesh.num_elements(g) > 0 && fem::dim(g) == mesh.dim());
  // as H1Operator: a curved mesh of order k adds dim (k - 1) on simplices (det J's degree)
  const int curved = mesh.has_nodes() ? mesh.dim() * (mesh.nodes_order() - 1) : 0;
  const int degree = opt.degree >= 0 ? opt.degree : gll ? 2 * p - 1 : any_tensor ? 2 * p + 3 : 2 * p + curved;
  const int exact = kind == FormKind::Mass ? 2 * p : std::max(0, 2 * p - 2);
  TESSERA_REQUIRE(degree >= exact, "fem::MatrixAssembler (", name(kind), "): a quadrature of degree ", degree,
                  " does not integrate the order-", p, " ", name(kind), " matrix exactly (degree >= ", exact,
                  " needed)");
  return degree;
}

/// The geometries of the mesh's dimension that the assembly covers, in a fixed order.
std::vector<Geometry> volume_geometries(const Mesh& mesh) {
  std::vector<Geometry> out;
  for (Geometry g : {Geometry::Segment, Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron,
                     Geometry::Hexahedron})
    if (mesh.num_elements(g) > 0 && fem::dim(g) == mesh.dim()) out.push_back(g);
  TESSERA_REQUIRE(!out.empty(), "fem assembly: the mesh has no elements of its dimension");
  return out;
}

GeometricFactorFlags factor_flags(FormKind kind) {
  switch (kind) {
    case FormKind::Mass: return GeometricFactorFlags::WDetJ;
    case FormKind::Diffusion: return GeometricFactorFlags::D;
    case FormKind::Elasticity: return GeometricFactorFlags::Jinv | GeometricFactorFlags::WDetJ;
  }
  return GeometricFactorFlags::All;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// The elements of one geometry: rule, restriction, factors and tables.
struct Part {
  Geometry geom;
  QuadratureRule rule;
  ElementRestriction R;
  GeometricFactors gf;
  Array<double, 2> B;  // (nq, npe), exec's space
  Array<double, 3> G;  // (nq, npe, dim)
};

/// The elements of one geometry with one attribute.
struct Group {
  AssemblyGroup info;
  int part = 0;
  Array<int, 1> elements;  // indices into the part, exec's space
  EntryShape shape;
};

/// Calls f(physics) with the typed physics of `kind` for one part and material.
template <class F>
void with_physics(FormKind kind, const Part& p, const Material& m, const F& f) {
  switch (kind) {
    case FormKind::Mass: f(MassPhysics{p.B.cview(), p.gf.wdetJ.cview(), m.density}); return;
    case FormKind::Diffusion:
      if (p.gf.dim == 1) f(DiffusionPhysics<1>{p.G.cview(), p.gf.D.cview(), m.conductivity});
      else if (p.gf.dim == 2) f(DiffusionPhysics<2>{p.G.cview(), p.gf.D.cview(), m.conductivity});
      else f(DiffusionPhysics<3>{p.G.cview(), p.gf.D.cview(), m.conductivity});
      return;
    case FormKind::Elasticity:
      if (p.gf.dim == 1) f(ElasticityPhysics<1>{p.G.cview(), p.gf.Jinv.cview(), p.gf.wdetJ.cview(), m.lambda, m.mu});
      else if (p.gf.dim == 2) f(ElasticityPhysics<2>{p.G.cview(), p.gf.Jinv.cview(), p.gf.wdetJ.cview(), m.lambda, m.mu});
      else f(ElasticityPhysics<3>{p.G.cview(), p.gf.Jinv.cview(), p.gf.wdetJ.cview(), m.lambda, m.mu});
      return;
  }
}

/// The polymorphic driver's node: one group, one typed functor, one launch.
template <class Physics>
class TypedNode final : public AssemblyNode {
 public:
  TypedNode(const AssemblyGroup& g, const GroupEntries<Physics>& f, const Exec& exec) : info_(g), f_(f), exec_(exec) {}
  void execute(View<double, 1> entries, View<const std::int32_t, 1> pos, View<double, 1> values) const override {
    const EntrySink sink{entries, pos, values, pos.size() > 0, exec_.backend == Backend::OpenMP};
    const GroupEntries<Physics> f = f_;
    const index_t first = info_.first_entry;
    forall("fem/assembly_fill", exec_, info_.num_elements * f.shape.pairs_per_element(), TESSERA_LAMBDA(index_t t) {
      index_t e1, e2;
      const double v = f(t, e1, e2);
      sink.put_pair(first + e1, first + e2, v);
    });
  }
  const AssemblyGroup& group() const override { return info_; }

 private:
  AssemblyGroup info_;
  GroupEntries<Physics> f_;
  Exec exec_;
};

/// The CPU backends' node: the group's elements simd::lanes at a time (fill_batched).
class BatchedNode final : public AssemblyNode {
 public:
  BatchedNode(const AssemblyGroup& g, const BatchedGroup& b, const Exec& exec) : info_(g), b_(b), exec_(exec) {}
  void execute(View<double, 1> entries, View<const std::int32_t, 1> pos, View<double, 1> values) const override {
    fill_batched(b_, EntrySink{entries, pos, values, pos.size() > 0, exec_.backend == Backend::OpenMP}, exec_);
  }
  const AssemblyGroup& group() const override { return info_; }

 private:
  AssemblyGroup info_;
  BatchedGroup b_;
  Exec exec_;
};

/// Constructs the functor of one group at `at` (exec's memory) by a kernel of exec's backend,
/// so that its vtable points to that backend's code.
template <class Physics>
void construct_functor(const Exec& exec, unsigned char* at, const GroupEntries<Physics>& f) {
  forall("fem/assembly_functor_new", exec, 1,
         TESSERA_LAMBDA(index_t) { ::new (static_cast<void*>(at)) EntryFunctorOf<Physics>(f); });
}

}  // namespace assembly_detail

namespace ad = assembly_detail;

struct MatrixAssembler::Impl {
  const H1Space* space = nullptr;
  FormKind kind = FormKind::Mass;
  Exec exec;
  AssemblyOptions opt;
  MaterialTable materials;
  FillMode mode = FillMode::Deterministic;
  int degree = 0;
  index_t n = 0;
  std::vector<ad::Part> parts;
  std::vector<ad::Group> groups;
  std::vector<AssemblyGroup> infos;
  std::int64_t total = 0, nnz = 0;
  Array<std::int64_t, 1> offsets;
  Array<std::int32_t, 1> pos, perm, jmap;  // entry -> position; sorted entries; each position's first sorted entry
  Array<int, 1> cols;
  mutable Array<double, 1> entries;  // the deterministic fill's buffer, allocated at its first use
  std::vector<std::unique_ptr<AssemblyNode>> nodes;
  // Dispatch::Functor: objects constructed on exec's backend, their base pointers, group starts.
  Array<unsigned char, 1> functor_storage;
  Array<ad::EntryFunctor*, 1> functor_table;
  Array<std::int64_t, 1> group_first, group_entry;
  std::int64_t total_pairs = 0;
  mutable AssemblyTimings timings;

  void build_parts();
  void build_pattern();
  void build_nodes();
  void build_functors();
  void run_fill(View<double, 1> values) const;
};

void MatrixAssembler::Impl::build_parts() {
  const Mesh& mesh = space->mesh();
  const int p = space->order();
  const int comps = space->components();
  if (kind == FormKind::Elasticity) {
    TESSERA_REQUIRE(comps == mesh.dim(), "fem::MatrixAssembler (elasticity): the space has ", comps,
                    " component(s) but the mesh is ", mesh.dim(), "-dimensional: elasticity needs one component "
                    "per dimension (H1Space(mesh, p, ", mesh.dim(), "))");
    TESSERA_REQUIRE(mesh.space_dim() == mesh.dim(), "fem::MatrixAssembler (elasticity): the ", mesh.dim(),
                    "-dimensional mesh is embedded in ", mesh.space_dim(), " dimensions; elasticity needs a mesh "
                    "of the space's dimension");
  }
  TESSERA_REQUIRE(n <= index_t{0x7fffffff}, "fem::MatrixAssembler: ", n,
                  " rows exceed the 2^31 - 1 that 32-bit column indices hold");
  degree = ad::form_degree(mesh, p, kind, opt);
  const bool full = kind == FormKind::Elasticity;
  const int blocks = full ? comps * comps : comps;
  for (Geometry g : ad::volume_geometries(mesh)) {
    const QuadratureRule rule = quadrature(g, degree, opt.quadrature);
    ElementRestriction R(*space, g, exec);
    GeometricFactors gf = geometric_factors(mesh, g, rule, exec, ad::factor_flags(kind));
    const BasisTables t = tabulate(H1Basis(g, p), rule);
    Array<double, 2> B = exec.on_device() ? t.B.to_device() : t.B;
    Array<double, 3> G = exec.on_device() ? t.G.to_device() : t.G;
    const int npe = R.nodes_per_element();
    const std::int64_t per = std::int64_t(blocks) * npe * npe;
    TESSERA_REQUIRE(per <= 0x7fffffff, "fem::MatrixAssembler: ", per, " entries per ", name(g),
                    " exceed 2^31 - 1 (order ", p, ", ", comps, " components)");
    // Group the part's elements by attribute (ascending).
    std::map<int, std::vector<int>> by_attr;
    const auto& ids = R.element_ids();
    for (std::size_t k = 0; k < ids.size(); ++k) by_attr[mesh.element_attribute(ids[k])].push_back(int(k));
    const int part = static_cast<int>(parts.size());
    for (auto& [attr, list] : by_attr) {
      (void)material_of(materials, attr);  // names a missing material now, before any work
      ad::Group grp;
      grp.part = part;
      grp.info = AssemblyGroup{g, attr, index_t(list.size()), npe, index_t(per), total};
      grp.shape = ad::EntryShape{npe, comps, full, int(per)};
      grp.elements = Array<int, 1>::from("fem/assembly group elements", list, exec.space());
      total += std::int64_t(list.size()) * per;
      groups.push_back(std::move(grp));
    }
    parts.push_back(ad::Part{g, rule, std::move(R), std::move(gf), std::move(B), std::move(G)});
  }
  for (const auto& g : groups) infos.push_back(g.info);
}

void MatrixAssembler::Impl::build_pattern() {
  const auto t0 = std::chrono::steady_clock::now();
  // One exclusive scan over the entries: CUB's scan counts in 32 bits.
  TESSERA_REQUIRE(total < 0x7fffffff, "fem::MatrixAssembler: ", total,
                  " element-matrix entries exceed the 2^31 - 1 of one symbolic phase; use fewer elements or a "
                  "lower order per assembly");
  const Space sp = exec.space();
  Array<std::uint64_t, 1> keys("fem/assembly keys", {total}, sp);
  Array<std::int32_t, 1> ids("fem/assembly entry ids", {total}, sp);
  const std::uint64_t N = static_cast<std::uint64_t>(n);
  const index_t nn = space->num_nodes();
  for (const auto& grp : groups) {
    const auto idx = parts[std::size_t(grp.part)].R.indices().cview();
    const auto el = grp.elements.cview();
    const ad::EntryShape s = grp.shape;
    const index_t first = grp.info.first_entry;
    auto kv = keys.view();
    auto iv = ids.view();
    forall("fem/assembly_keys", exec, grp.info.num_elements * grp.info.entries_per_element,
           TESSERA_LAMBDA(index_t t) {
             index_t kk;
             int c, d, i, j;
             ad::split_entry(s, t, kk, c, d, i, j);
             const index_t k = el(kk);
             const std::uint64_t row = std::uint64_t(c) * std::uint64_t(nn) + std::uint64_t(idx(k, i));
             const std::uint64_t col = std::uint64_t(d) * std::uint64_t(nn) + std::uint64_t(idx(k, j));
             kv(first + t) = row * N + col;
             iv(first + t) = static_cast<std::int32_t>(first + t);
           });
  }
  sort_pairs(exec, keys.view(), ids.view(), bits_for(N * N));
  Array<std::int32_t, 1> run("fem/assembly runs", {total}, sp);
  {
    const auto k = keys.cview();
    auto r = run.view();
    forall("fem/assembly_heads", exec, total,
           TESSERA_LAMBDA(index_t s) { r(s) = (s == 0 || k(s) != k(s - 1)) ? 1 : 0; });
  }
  nnz = exclusive_scan(exec, run.cview(), run.view());
  offsets = Array<std::int64_t, 1>("fem/assembly row offsets", {n + 1}, sp);
  cols = Array<int, 1>("fem/assembly columns", {nnz}, sp);
  jmap = Array<std::int32_t, 1>("fem/assembly entry runs", {nnz + 1}, sp);
  pos = Array<std::int32_t, 1>("fem/assembly entry positions", {total}, sp);
  {
    const auto k = keys.cview();
    const auto r = run.cview();
    const auto id = ids.cview();
    auto off = offsets.view();
    auto cv = cols.view();
    auto jm = jmap.view();
    auto pv = pos.view();
    forall("fem/assembly_merge", exec, total, TESSERA_LAMBDA(index_t s) {
      const std::uint64_t key = k(s);
      const bool head = s == 0 || key != k(s - 1);
      const std::int32_t at = r(s) - (head ? 0 : 1);
      pv(id(s)) = at;
      if (head) {
        const std::uint64_t row = key / N;
        cv(at) = static_cast<int>(key - row * N);
        jm(at) = static_cast<std::int32_t>(s);
        if (s == 0 || k(s - 1) / N != row) off(static_cast<index_t>(row)) = at;
      }
    });
    const std::int64_t nz = nnz;
    const std::int32_t tot = static_cast<std::int32_t>(total);
    const index_t rows = n;
    forall("fem/assembly_ends", exec, 1, TESSERA_LAMBDA(index_t) {
      off(rows) = nz;
      jm(nz) = tot;
    });
    const index_t rows_seen = transform_reduce(
        "fem/assembly_rows", exec, total, index_t{0},
        TESSERA_LAMBDA(index_t s) -> index_t { return (s == 0 || k(s - 1) / N != k(s) / N) ? 1 : 0; }, Plus{});
    TESSERA_REQUIRE(rows_seen == n, "fem::MatrixAssembler: ", n - rows_seen, " of ", n,
                    " rows have no entry (DOFs that no element touches)");
  }
  perm = std::move(ids);
  fence("fem/assembly symbolic");
  timings.symbolic_ms = ad::ms_since(t0);
}

void MatrixAssembler::Impl::build_nodes() {
  nodes.clear();
  for (const auto& grp : groups) {
    const ad::Part& p = parts[std::size_t(grp.part)];
    if (!exec.on_device() && opt.cpu_batched) {
      ad::BatchedGroup b;
      b.kind = kind;
      b.dim = p.gf.dim;
      b.nq = p.rule.size();
      b.shape = grp.shape;
      b.B = p.B.data();
      b.G = p.G.data();
      b.w = p.gf.wdetJ.data();
      b.D = p.gf.D.data();
      b.Jinv = p.gf.Jinv.data();
      b.elements = grp.elements.data();
      b.count = grp.info.num_elements;
      b.first_entry = grp.info.first_entry;
      b.material = material_of(materials, grp.info.attribute);
      nodes.push_back(std::make_unique<ad::BatchedNode>(grp.info, b, exec));
      continue;
    }
    ad::with_physics(kind, p, material_of(materials, grp.info.attribute), [&](const auto& physics) {
      using P = std::decay_t<decltype(physics)>;
      nodes.push_back(std::make_unique<ad::TypedNode<P>>(grp.info, ad::GroupEntries<P>{physics, grp.elements.cview(),
                                                                                        grp.shape},
                                                         exec));
    });
  }
}

void MatrixAssembler::Impl::build_functors() {
  // Every object gets a slot of the largest functor's size (aligned to 64 bytes).
  constexpr std::size_t slot =
      (std::max({sizeof(ad::EntryFunctorOf<ad::MassPhysics>), sizeof(ad::EntryFunctorOf<ad::DiffusionPhysics<3>>),
                 sizeof(ad::EntryFunctorOf<ad::ElasticityPhysics<3>>)}) + 63) / 64 * 64;
  const index_t ng = index_t(groups.size());
  functor_storage = Array<unsigned char, 1>("fem/assembly functors", {ng * index_t(slot) + 64}, exec.space());
  unsigned char* base = functor_storage.data();
  base += (64 - reinterpret_cast<std::uintptr_t>(base) % 64) % 64;
  std::vector<ad::EntryFunctor*> table(std::size_t(ng), nullptr);
  // Per group: its first pair and its first entry (the functor kernel runs over all pairs).
  std::vector<std::int64_t> first(std::size_t(ng) + 1, 0), first_entry(std::size_t(ng), 0);
  for (index_t g = 0; g < ng; ++g) {
    const ad::Group& grp = groups[std::size_t(g)];
    const ad::Part& p = parts[std::size_t(grp.part)];
    unsigned char* at = base + g * index_t(slot);
    first[std::size_t(g) + 1] = first[std::size_t(g)] + grp.info.num_elements * grp.shape.pairs_per_element();
    first_entry[std::size_t(g)] = grp.info.first_entry;
    ad::with_physics(kind, p, material_of(materials, grp.info.attribute), [&](const auto& physics) {
      using P = std::decay_t<decltype(physics)>;
      const ad::GroupEntries<P> f{physics, grp.elements.cview(), grp.shape};
      ad::construct_functor(exec, at, f);
      table[std::size_t(g)] = reinterpret_cast<ad::EntryFunctor*>(at);
    });
  }
  functor_table = Array<ad::EntryFunctor*, 1>::from("fem/assembly functor table", table, exec.space());
  group_first = Array<std::int64_t, 1>::from("fem/assembly group pair starts", first, exec.space());
  group_entry = Array<std::int64_t, 1>::from("fem/assembly group entry starts", first_entry, exec.space());
  total_pairs = first.back();
}

void MatrixAssembler::Impl::run_fill(View<double, 1> values) const {
  const auto t0 = std::chrono::steady_clock::now();
  const bool atomic = mode == FillMode::Atomic;
  if (atomic) {
    forall("fem/assembly_zero", exec, values.size(), TESSERA_LAMBDA(index_t i) { values(i) = 0; });
  } else if (entries.size() != total) {
    entries = Array<double, 1>("fem/assembly entries", {total}, exec.space());
  }
  const View<double, 1> E = atomic ? View<double, 1>() : entries.view();
  const View<const std::int32_t, 1> P = atomic ? pos.cview() : View<const std::int32_t, 1>();
  if (opt.dispatch == Dispatch::Driver) {
    for (const auto& node : nodes) node->execute(E, P, values);
  } else {
    const ad::EntrySink sink{E, P, values, atomic, exec.backend == Backend::OpenMP};
    const auto table = functor_table.cview();
    const auto first = group_first.cview();
    const auto entry0 = group_entry.cview();
    const int ng = static_cast<int>(groups.size());
    forall("fem/assembly_fill_functor", exec, total_pairs, TESSERA_LAMBDA(index_t t) {
      int g = 0;
      while (g + 1 < ng && first(g + 1) <= t) ++g;
      index_t e1, e2;
      const double v = table(g)->entry(t - first(g), e1, e2);
      sink.put_pair(entry0(g) + e1, entry0(g) + e2, v);
    });
  }
  if (!atomic) {
    const auto jm = jmap.cview();
    const auto pm = perm.cview();
    const auto Ec = entries.cview();
    forall("fem/assembly_gather", exec, nnz, TESSERA_LAMBDA(index_t r) {
      double s = 0;
      for (std::int32_t k = jm(r); k < jm(r + 1); ++k) s += Ec(pm(k));
      values(r) = s;
    });
  }
  fence("fem/assembly fill");
  timings.fill_ms = ad::ms_since(t0);
}

MatrixAssembler::MatrixAssembler(const H1Space& space, FormKind kind, Exec exec, const MaterialTable& materials,
                                 const AssemblyOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.space = &space;
  m.kind = kind;
  m.exec = exec;
  m.opt = options;
  m.materials = materials;
  m.n = space.num_dofs();
  m.mode = options.fill == FillMode::Auto ? (exec.on_device() ? FillMode::Atomic : FillMode::Deterministic)
                                          : options.fill;
  m.build_parts();
  m.build_pattern();
  m.build_nodes();
  m.build_functors();
}

MatrixAssembler::~MatrixAssembler() = default;
MatrixAssembler::MatrixAssembler(MatrixAssembler&&) noexcept = default;
MatrixAssembler& MatrixAssembler::operator=(MatrixAssembler&&) noexcept = default;

linalg::CsrMatrix MatrixAssembler::assemble() const {
  const Impl& m = *impl_;
  Array<double, 1> values("fem/assembly values", {m.nnz}, m.exec.space());
  m.run_fill(values.view());
  return linalg::CsrMatrix(m.n, m.n, m.offsets, m.cols, std::move(values), m.exec);
}

void MatrixAssembler::fill(linalg::CsrMatrix& A) const {
  const Impl& m = *impl_;
  TESSERA_REQUIRE(A.rows() == m.n && A.nnz() == m.nnz && A.row_offsets().data() == m.offsets.data(),
                  "fem::MatrixAssembler::fill: the matrix (", A.rows(), " rows, ", A.nnz(),
                  " non-zeros) does not have this assembler's pattern (", m.n, " rows, ", m.nnz,
                  " non-zeros): fill a matrix made by this assembler's assemble()");
  m.run_fill(A.values());
}

void MatrixAssembler::set_materials(const MaterialTable& materials) {
  for (const auto& g : impl_->infos) (void)material_of(materials, g.attribute);
  impl_->materials = materials;
  impl_->build_nodes();
  impl_->build_functors();
}

void MatrixAssembler::set_fill_mode(FillMode mode) {
  impl_->mode = mode == FillMode::Auto ? (impl_->exec.on_device() ? FillMode::Atomic : FillMode::Deterministic)
                                       : mode;
}
void MatrixAssembler::set_dispatch(Dispatch d) { impl_->opt.dispatch = d; }
FillMode MatrixAssembler::fill_mode() const { return impl_->mode; }
Dispatch MatrixAssembler::dispatch() const { return impl_->opt.dispatch; }
FormKind MatrixAssembler::kind() const { return impl_->kind; }
const Exec& MatrixAssembler::exec() const { return impl_->exec; }
int MatrixAssembler::degree() const { return impl_->degree; }
index_t MatrixAssembler::size() const { return impl_->n; }
std::int64_t MatrixAssembler::nnz() const { return impl_->nnz; }
std::int64_t MatrixAssembler::num_entries() const { return impl_->total; }
const std::vector<AssemblyGroup>& MatrixAssembler::groups() const { return impl_->infos; }
const AssemblyTimings& MatrixAssembler::timings() const { return impl_->timings; }
const Array<std::int64_t, 1>& MatrixAssembler::row_offsets() const { return impl_->offsets; }
const Array<int, 1>& MatrixAssembler::col_indices() const { return impl_->cols; }

void eliminate_dirichlet(linalg::CsrMatrix& A, View<const index_t, 1> constrained, View<const double, 1> x_bc,
                         View<double, 1> b) {
  const index_t n = A.rows();
  TESSERA_REQUIRE(A.cols() == n, "fem::eliminate_dirichlet: the matrix is ", n, " x ", A.cols(), ", not square");
  TESSERA_REQUIRE(x_bc.size() == n && b.size() == n, "fem::eliminate_dirichlet: x_bc has ", x_bc.size(),
                  " entries and b ", b.size(), ", the matrix ", n, " rows");
  const Exec exec = A.exec();
  Array<unsigned char, 1> mask("fem/dirichlet mask", {n}, exec.space());
  auto mk = mask.view();
  forall("fem/dirichlet_mark", exec, constrained.size(), TESSERA_LAMBDA(index_t i) {
    const index_t d = constrained(i);
    if (d >= 0 && d < n) mk(d) = 1;
  });
  const auto off = A.row_offsets();
  const auto col = A.col_indices();
  auto val = A.values();
  const auto mc = mask.cview();
  forall("fem/dirichlet_eliminate", exec, n, TESSERA_LAMBDA(index_t r) {
    if (mc(r)) {
      for (std::int64_t k = off(r); k < off(r + 1); ++k) val(k) = col(k) == r ? 1.0 : 0.0;
      b(r) = x_bc(r);
      return;
    }
    double s = b(r);
    for (std::int64_t k = off(r); k < off(r + 1); ++k) {
      if (mc(col(k))) {
        s -= val(k) * x_bc(col(k));
        val(k) = 0;
      }
    }
    b(r) = s;
  });
}

}  // namespace tessera::fem
