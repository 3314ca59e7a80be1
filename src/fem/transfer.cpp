// OrderTransfer: prolongation between the H1 spaces of two orders and its transpose
// (compiled by nvcc in CUDA builds).
#include "tessera/fem/transfer.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/forall.hpp"
#include "tessera/core/memory.hpp"
#include "tessera/fem/basis.hpp"
#include "tessera/fem/reference_element.hpp"
#include "tensor_sizes.hpp"
#include "transfer_cpu.hpp"

namespace tessera::fem {

namespace transfer_detail {

/// Threads per block the launches aim at.
constexpr int kBlockThreads = 256;
/// Shared memory per block the choice of elements per block stays within (bytes); an element
/// whose buffers alone are larger gets a block of its own (and the tensor kernel may spill).
constexpr std::size_t kBlockShared = 48 * 1024;

inline int round_up(int n, int m) { return (n + m - 1) / m * m; }

/// What both kernels read and write: out(k, c, :) = A in(k, c, :) for every element k and
/// component c, with the fine-side weights w(fidx(k, i)) applied to the input (restriction)
/// or to the output (prolongation).
struct TransferArgs {
  int nc = 1;                  ///< components
  View<const double, 3> in;    ///< (elements, components, input nodes)
  View<double, 3> out;         ///< (elements, components, output nodes)
  View<const int, 2> fidx;     ///< fine element restriction: global fine node of each local one
  View<const double, 1> w;     ///< inverse multiplicities of the fine nodes
  bool scale_in = false, scale_out = false;
};

/// Sum-factorized A ⊗ A (⊗ A) on segments, quadrilaterals and hexahedra: A (m, n) maps the
/// n input nodes per direction to the m output nodes per direction. One item per element, a
/// flat team of threads; A in the block's common memory, the input and the partial
/// contractions in the item's memory (device memory when they do not fit: items_may_spill).
struct TensorTransfer {
  static constexpr bool items_may_spill = true;
  int dim = 3, m = 2, n = 2;
  View<const double, 2> A;  ///< (m, n)
  TransferArgs a;

  /// Doubles of the item buffers: the input (n^d), after the first contraction (n^(d-1) m),
  /// after the second (n^(d-2) m^2; 3-D only).
  TESSERA_HOST_DEVICE static void sizes(int dim, int m, int n, int& s0, int& s1, int& s2) {
    s0 = ipow(n, dim);
    s1 = dim >= 2 ? ipow(n, dim - 1) * m : 1;
    s2 = dim == 3 ? n * m * m : 1;
  }

  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const {
    int s0 = 0, s1 = 0, s2 = 0;
    sizes(dim, m, n, s0, s1, s2);
    auto As = ctx.shared_common<double>(m * n);
    auto u = ctx.shared_item<double>(s0);
    auto t1 = ctx.shared_item<double>(s1);
    auto t2 = ctx.shared_item<double>(s2);
    for (int i : ctx.block_threads(m * n)) As[i] = A.data()[i];
    ctx.sync();
    const bool valid = ctx.valid();
    const index_t k = valid ? ctx.item() : 0;
    const int mo = ipow(m, dim);  // output nodes
    for (int c = 0; c < a.nc; ++c) {
      if (valid)
        for (int i : ctx.item_threads(s0)) {
          double v = a.in(k, c, i);
          if (a.scale_in) v *= a.w(a.fidx(k, i));
          u[i] = v;
        }
      ctx.sync();
      if (dim == 1) {
        // out(x) = sum_i A(x, i) u(i)
        if (valid)
          for (int x : ctx.item_threads(m)) {
            double s = 0;
            for (int i = 0; i < n; ++i) s += As[x * n + i] * u[i];
            if (a.scale_out) s *= a.w(a.fidx(k, x));
            a.out(k, c, x) = s;
          }
      } else if (dim == 2) {
        // t1(j, x) = sum_i A(x, i) u(j, i);  out(y, x) = sum_j A(y, j) t1(j, x)
        if (valid)
          for (int e : ctx.item_threads(n * m)) {
            const int j = e / m, x = e - j * m;
            double s = 0;
            for (int i = 0; i < n; ++i) s += As[x * n + i] * u[j * n + i];
            t1[e] = s;
          }
        ctx.sync();
        if (valid)
          for (int e : ctx.item_threads(m * m)) {
            const int y = e / m, x = e - y * m;
            double s = 0;
            for (int j = 0; j < n; ++j) s += As[y * n + j] * t1[j * m + x];
            if (a.scale_out) s *= a.w(a.fidx(k, e));
            a.out(k, c, e) = s;
          }
      } else {
        // t1(l, j, x) = sum_i A(x, i) u(l, j, i); t2(l, y, x) = sum_j A(y, j) t1(l, j, x);
        // out(z, y, x) = sum_l A(z, l) t2(l, y, x)
        if (valid)
          for (int e : ctx.item_threads(n * n * m)) {
            const int lj = e / m, x = e - lj * m;
            double s = 0;
            for (int i = 0; i < n; ++i) s += As[x * n + i] * u[lj * n + i];
            t1[e] = s;
          }
        ctx.sync();
        if (valid)
          for (int e : ctx.item_threads(n * m * m)) {
            const int l = e / (m * m), yx = e - l * m * m, y = yx / m, x = yx - y * m;
            double s = 0;
            for (int j = 0; j < n; ++j) s += As[y * n + j] * t1[(l * n + j) * m + x];
            t2[e] = s;
          }
        ctx.sync();
        if (valid)
          for (int e : ctx.item_threads(mo)) {
            const int z = e / (m * m), yx = e - z * m * m;
            double s = 0;
            for (int l = 0; l < n; ++l) s += As[z * n + l] * t2[l * m * m + yx];
            if (a.scale_out) s *= a.w(a.fidx(k, e));
            a.out(k, c, e) = s;
          }
      }
      ctx.sync();  // the next component overwrites the buffers
    }
  }
};

/// Dense out = A in on triangles and tetrahedra, A (m, n) read from global memory in the
/// transposed layout At (n, m) (adjacent threads read adjacent entries). One item per
/// element; the input of one component in the item's shared memory.
struct DenseTransfer {
  int m = 1, n = 1;
  View<const double, 2> At;  ///< (n, m): At(j, i) = A(i, j)
  TransferArgs a;

  TESSERA_HOST_DEVICE void operator()(TeamContext& ctx) const {
    auto u = ctx.shared_item<double>(n);
    const bool valid = ctx.valid();
    const index_t k = valid ? ctx.item() : 0;
    for (int c = 0; c < a.nc; ++c) {
      if (valid)
        for (int j : ctx.item_threads(n)) {
          double v = a.in(k, c, j);
          if (a.scale_in) v *= a.w(a.fidx(k, j));
          u[j] = v;
        }
      ctx.sync();
      if (valid)
        for (int i : ctx.item_threads(m)) {
          double s = 0;
          for (int j = 0; j < n; ++j) s += At(j, i) * u[j];
          if (a.scale_out) s *= a.w(a.fidx(k, i));
          a.out(k, c, i) = s;
        }
      ctx.sync();  // the next component overwrites u
    }
  }
};

/// out = A in per element (tensor: A ⊗ A (⊗ A) with A (m, n) per direction; simplex: A
/// (m, n) given as its transpose At (n, m)), weights as in TransferArgs.
void apply_tensor(const char* label, const Exec& exec, index_t ne, int dim, int m, int n, View<const double, 2> A,
                  const TransferArgs& args) {
  if (!exec.on_device() && dim >= 2) {  // CPU: elements side by side in SIMD lanes
    apply_tensor_cpu(label, exec, ne, dim, m, n, A.data(), args.nc, args.in.data(), args.out.data(),
                     args.fidx.data(), args.w.data(), args.scale_in, args.scale_out);
    return;
  }
  int s0 = 0, s1 = 0, s2 = 0;
  TensorTransfer::sizes(dim, m, n, s0, s1, s2);
  const std::size_t item = SharedLayout().add<double>(s0).add<double>(s1).add<double>(s2).bytes();
  const int wide = ipow(std::max(m, n), std::min(dim, 2));
  const int tpi = std::min(kBlockThreads, round_up(wide, 32));
  const int epb = std::max(1, std::min(kBlockThreads / tpi, int(kBlockShared / std::max<std::size_t>(item, 1))));
  Teams t{.items = ne, .items_per_block = epb, .threads = {tpi, 1, 1}, .shared_per_item = item,
          .shared_common = SharedLayout().add<double>(index_t(m) * n).bytes()};
  launch(label, exec, t, TensorTransfer{dim, m, n, A, args});
}

void apply_dense(const char* label, const Exec& exec, index_t ne, int m, int n, View<const double, 2> At,
                 const TransferArgs& args) {
  const std::size_t item = SharedLayout().add<double>(n).bytes();
  const int tpi = std::min(kBlockThreads, round_up(m, 32));
  const int epb = std::max(1, std::min(kBlockThreads / tpi, int(kBlockShared / item)));
  Teams t{.items = ne, .items_per_block = epb, .threads = {tpi, 1, 1}, .shared_per_item = item};
  launch(label, exec, t, DenseTransfer{m, n, At, args});
}

/// y = 0 on exec's backend.
void zero(const char* label, const Exec& exec, View<double, 1> y) {
  forall(label, exec, y.extent(0), TESSERA_LAMBDA(index_t i) { y(i) = 0.0; });
}

}  // namespace transfer_detail

namespace td = transfer_detail;

OrderTransfer::OrderTransfer(const H1Space& coarse, const H1Space& fine, Exec exec)
    : exec_(exec), pc_(coarse.order()), pf_(fine.order()), comps_(fine.components()),
      nc_dofs_(coarse.num_dofs()), nf_dofs_(fine.num_dofs()) {
  if (&coarse.mesh() != &fine.mesh())
    fail("fem::OrderTransfer: the coarse (p = ", pc_, ") and fine (p = ", pf_,
         ") spaces are built on different Mesh objects; transfers between orders need both spaces on the same mesh "
         "(for transfers between meshes, build the spaces on one Mesh)");
  if (coarse.components() != fine.components())
    fail("fem::OrderTransfer: the coarse space has ", coarse.components(), " components and the fine space ",
         fine.components(), "; both must have the same number of components");
  if (pc_ < 1)
    fail("fem::OrderTransfer: the coarse order is ", pc_, "; it must be at least 1");
  if (pc_ >= pf_)
    fail("fem::OrderTransfer: the coarse order (", pc_, ") must be lower than the fine order (", pf_,
         "); swap the spaces, or use no transfer when the orders are equal");
  const Mesh& mesh = coarse.mesh();
  const Space sp = exec.space();

  // Inverse multiplicities of the fine nodes (host, then exec's space).
  {
    Array<double, 1> w("fem/transfer_inverse_multiplicity", {fine.num_nodes()});
    std::fill(w.data(), w.data() + w.size(), 0.0);
    for (index_t n : fine.element_node_ids()) w.data()[n] += 1.0;
    for (index_t n = 0; n < fine.num_nodes(); ++n)
      w.data()[n] = w.data()[n] > 0 ? 1.0 / w.data()[n] : 0.0;  // every node is in an element
    inv_mult_ = sp == Space::Host ? w : w.clone(sp);
  }

  for (Geometry g : {Geometry::Segment, Geometry::Triangle, Geometry::Quadrilateral, Geometry::Tetrahedron,
                     Geometry::Hexahedron}) {
    if (mesh.num_elements(g) == 0) continue;
    const H1Basis bc(g, pc_), bf(g, pf_);
    Array<double, 2> T, Tt;
    if (is_tensor(g)) {
      // T1(a, i) = phi^c_i(x^f_a) between the 1-D GLL nodes
      const auto& c1 = bc.basis_1d();
      const auto& f1 = bf.basis_1d();
      const int m = f1.size(), n = c1.size();
      T = Array<double, 2>("fem/transfer_table_1d", {m, n});
      Tt = Array<double, 2>("fem/transfer_table_1d_t", {n, m});
      std::vector<double> v(static_cast<std::size_t>(n));
      for (int a = 0; a < m; ++a) {
        c1.eval(f1.nodes()[std::size_t(a)], v);
        for (int i = 0; i < n; ++i) T(a, i) = Tt(i, a) = v[std::size_t(i)];
      }
    } else {
      // T(a, j) = phi^c_j(node^f_a) at the fine element's reference nodes
      const Array<double, 2> B = bc.eval(bf.nodes());
      const index_t m = B.extent(0), n = B.extent(1);
      T = Array<double, 2>("fem/transfer_table", {m, n});
      Tt = Array<double, 2>("fem/transfer_table_t", {n, m});
      for (index_t a = 0; a < m; ++a)
        for (index_t j = 0; j < n; ++j) T(a, j) = Tt(j, a) = B(a, j);
    }
    ElementRestriction rc(coarse, g, exec), rf(fine, g, exec);
    const index_t ne = rc.num_elements();
    Array<double, 3> xc_e("fem/transfer_coarse_evector", {ne, index_t(comps_), index_t(rc.nodes_per_element())}, sp);
    Array<double, 3> xf_e("fem/transfer_fine_evector", {ne, index_t(comps_), index_t(rf.nodes_per_element())}, sp);
    parts_.push_back(Part{g, std::move(rc), std::move(rf), sp == Space::Host ? T : T.clone(sp),
                          sp == Space::Host ? Tt : Tt.clone(sp), std::move(xc_e), std::move(xf_e)});
  }
}

void OrderTransfer::check(const char* what, View<const double, 1> in, index_t in_size, View<double, 1> out,
                          index_t out_size) const {
  const char* from = std::string(what) == "prolong" ? "coarse" : "fine";
  const char* to = std::string(what) == "prolong" ? "fine" : "coarse";
  if (in.extent(0) != in_size)
    fail("fem::OrderTransfer::", what, " (p = ", pc_, " <-> ", pf_, "): the input has ", in.extent(0),
         " entries, expected the ", from, " space's ", in_size, " degrees of freedom");
  if (out.extent(0) != out_size)
    fail("fem::OrderTransfer::", what, " (p = ", pc_, " <-> ", pf_, "): the output has ", out.extent(0),
         " entries, expected the ", to, " space's ", out_size, " degrees of freedom");
  const struct {
    const char* label;
    const void* p;
  } args[] = {{"input", in.data()}, {"output", out.data()}};
  for (const auto& a : args) {
    const int s = detail::pointer_space(a.p);
    if (s >= 0 && !accessible(exec_.backend, static_cast<Space>(s)))
      fail("fem::OrderTransfer::", what, ": the ", a.label, " lives in ", to_string(static_cast<Space>(s)),
           " memory, which the ", to_string(exec_.backend), " backend cannot read; allocate it in ",
           to_string(exec_.space()), " memory (Exec::space())");
  }
  if (in.data() == out.data() && in_size > 0)
    fail("fem::OrderTransfer::", what, ": the input and the output are the same array; use two arrays");
}

void OrderTransfer::prolong(View<const double, 1> xc, View<double, 1> xf) const {
  check("prolong", xc, nc_dofs_, xf, nf_dofs_);
  td::zero("fem/transfer_zero", exec_, xf);
  for (const Part& p : parts_) {
    p.coarse.gather(xc, p.xc_e.view());
    td::TransferArgs a;
    a.nc = comps_;
    a.in = p.xc_e.cview();
    a.out = p.xf_e.view();
    a.fidx = p.fine.indices().cview();
    a.w = inv_mult_.cview();
    a.scale_out = true;
    const index_t ne = p.coarse.num_elements();
    if (is_tensor(p.geom))
      td::apply_tensor("fem/transfer_prolong_tensor", exec_, ne, dim(p.geom), pf_ + 1, pc_ + 1, p.table.cview(), a);
    else
      td::apply_dense("fem/transfer_prolong_dense", exec_, ne, p.fine.nodes_per_element(),
                      p.coarse.nodes_per_element(), p.table_t.cview(), a);
    p.fine.scatter_add(p.xf_e.cview(), xf);
  }
}

void OrderTransfer::restrict_(View<const double, 1> rf, View<double, 1> rc) const {
  check("restrict_", rf, nf_dofs_, rc, nc_dofs_);
  td::zero("fem/transfer_zero", exec_, rc);
  for (const Part& p : parts_) {
    p.fine.gather(rf, p.xf_e.view());
    td::TransferArgs a;
    a.nc = comps_;
    a.in = p.xf_e.cview();
    a.out = p.xc_e.view();
    a.fidx = p.fine.indices().cview();
    a.w = inv_mult_.cview();
    a.scale_in = true;
    const index_t ne = p.coarse.num_elements();
    if (is_tensor(p.geom))
      td::apply_tensor("fem/transfer_restrict_tensor", exec_, ne, dim(p.geom), pc_ + 1, pf_ + 1, p.table_t.cview(),
                       a);
    else
      td::apply_dense("fem/transfer_restrict_dense", exec_, ne, p.coarse.nodes_per_element(),
                      p.fine.nodes_per_element(), p.table.cview(), a);
    p.coarse.scatter_add(p.xc_e.cview(), rc);
  }
}

}  // namespace tessera::fem
