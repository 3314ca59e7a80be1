#pragma once
/// \file tensor/emit.hpp
/// `emit_c(statement)` / `emit_cuda(statement)`: standalone C / CUDA source computing the
/// same numbers as a Statement, with the seed's loop structure (loops over the left-hand
/// side's independent components, the grid loop innermost; sums unrolled).
///
///     auto s = tensor::defer(C(Sym<0,1>(), a_, b_)) = Sum(c_, A(a_, c_) * B(c_, b_));
///     std::string c_src = tensor::emit_c(s, "contract");   // void contract(long N, double* T0, ...)
///
/// The emitted function takes the grid size N and one pointer per distinct tensor
/// (T0 = the left-hand side, then the right-hand side's tensors in order of appearance),
/// each pointing to the component-major storage of a Field (Field::data()). Each tensor's
/// component table `Tk_c[..]` maps a multi-index to its stored component.

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/tensor/statement.hpp"

namespace tessera::tensor {

namespace detail {

struct EmitOperand {
  const double* data = nullptr;
  std::string label;
  int rank = 0;
  std::vector<int> dims;
  std::vector<int> table;  // component of each multi-index, row-major
  int components = 0;
};

/// Prints an expression tree as C: leaves become Tk[component * N + x].
class CodePrinter {
 public:
  bool unroll_sums() const { return true; }
  std::string constant(double v) const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return "(" + s + ")";
  }
  std::string index_value(int label) const { return values_[label]; }
  void set_index_value(int label, const std::string& v) { values_[label] = v; }

  template <class R>
  int operand(const R& r) {
    for (std::size_t q = 0; q < ops_.size(); ++q)
      if (ops_[q].data == r.data) return static_cast<int>(q);
    EmitOperand o;
    o.data = r.data;
    o.label = r.label ? r.label : "";
    o.rank = R::R;
    o.components = R::layout::components;
    constexpr LayoutInfo L = R::layout::info;
    int total = 1;
    for (int p = 0; p < R::R; ++p) {
      o.dims.push_back(L.dim[p]);
      total *= L.dim[p];
    }
    for (int t = 0; t < total; ++t) {
      int v[4] = {0, 0, 0, 0}, rest = t;
      for (int p = R::R - 1; p >= 0; --p) {
        v[p] = rest % L.dim[p];
        rest /= L.dim[p];
      }
      o.table.push_back(component_of(L, v));
    }
    ops_.push_back(o);
    return static_cast<int>(ops_.size()) - 1;
  }

  /// The component expression of a leaf: a number when every slot is known, else a
  /// table lookup.
  template <class R>
  std::string component(const R& r) {
    const int id = operand(r);
    if (R::R == 0) return "0";
    std::vector<std::string> slot(R::R);
    bool literal = true;
    int v[4] = {0, 0, 0, 0};
    for (int p = 0; p < R::R; ++p) {
      const int lab = R::slots.label[p];
      if (lab < 0) {
        slot[p] = std::to_string(r.off[p]);
        v[p] = r.off[p];
        continue;
      }
      const std::string& val = values_[lab];
      if (!val.empty() && val.find_first_not_of("0123456789") == std::string::npos) {
        v[p] = std::stoi(val) + r.off[p];
        slot[p] = std::to_string(v[p]);
      } else {
        literal = false;
        slot[p] = r.off[p] ? val + "+" + std::to_string(r.off[p]) : val;
      }
    }
    if (literal) return std::to_string(R::layout::component(v));
    std::string s = "T" + std::to_string(id) + "_c";
    for (const auto& x : slot) s += "[" + x + "]";
    return s;
  }

  template <class R>
  std::string leaf(const R& r) {
    const std::string c = component(r);
    const std::string t = "T" + std::to_string(operand(r));
    if (c == "0") return t + "[x]";
    return t + "[" + c + "*N + x]";
  }

  const std::vector<EmitOperand>& operands() const { return ops_; }

 private:
  std::vector<EmitOperand> ops_;
  std::string values_[kNumLabels];
};

inline std::string table_init(const EmitOperand& o, int p, int& pos) {
  if (p == o.rank) return std::to_string(o.table[pos++]);
  std::string s = "{";
  for (int v = 0; v < o.dims[p]; ++v) s += (v ? ", " : "") + table_init(o, p + 1, pos);
  return s + "}";
}

inline std::string table_decl(const EmitOperand& o, int id, const char* qualifier) {
  std::string s = std::string(qualifier) + " int T" + std::to_string(id) + "_c";
  for (int d : o.dims) s += "[" + std::to_string(d) + "]";
  int pos = 0;
  return s + " = " + table_init(o, 0, pos) + ";\n";
}

inline const char* op_text(AssignOp op) { return to_string(op); }

/// What the emitters share: the printed right-hand side, the operands, the LHS loops.
template <class St>
struct EmitParts {
  CodePrinter printer;
  std::string lhs, rhs, text;
  std::vector<int> loop_labels;      // LHS free letters, loop order
  std::vector<std::string> lower;    // lower bound of each loop ("0" or an outer variable)
  bool triangular_ok = true;
  int lhs_components = 0;

  explicit EmitParts(const St& s) {
    using L = typename St::lhs_type;
    text = s.text();
    constexpr LhsLabels LL = lhs_labels<L>();
    for (int q = 0; q < LL.n; ++q) {
      loop_labels.push_back(LL.label[q]);
      printer.set_index_value(LL.label[q], std::string(1, label_char(LL.label[q])));
    }
    lhs = printer.leaf(s.lhs());
    rhs = s.rhs().print(printer);
    lhs_components = s.lhs_components();
    // Lower bounds: a free index in the same storage symmetry class as an earlier one
    // (same offset) starts at that one's value, as in the seed's loops.
    constexpr LayoutInfo info = L::layout::info;
    for (int q = 0; q < LL.n; ++q) {
      std::string lo = "0";
      int pq = -1;
      for (int p = 0; p < L::R; ++p)
        if (L::slots.label[p] == LL.label[q]) pq = p;
      for (int p = 0; p < L::R && pq >= 0; ++p) {
        const int lab = L::slots.label[p];
        if (p == pq || lab < 0 || info.cls[p] != info.cls[pq]) continue;
        int qq = -1;
        for (int r = 0; r < q; ++r)
          if (LL.label[r] == lab) qq = r;
        if (qq >= 0 && s.lhs().off[p] == s.lhs().off[pq]) lo = std::string(1, label_char(lab));
      }
      lower.push_back(lo);
    }
    // Check that the loops visit exactly the planned components.
    int visited = 0;
    std::vector<int> val(LL.n, 0);
    std::vector<bool> seen(L::layout::components, false);
    count_loops(s, 0, val, visited, seen);
    triangular_ok = triangular_ok && visited == lhs_components;
  }

  void count_loops(const St& s, int q, std::vector<int>& val, int& visited, std::vector<bool>& seen) {
    if (q == static_cast<int>(loop_labels.size())) {
      Env e{};
      for (std::size_t r = 0; r < loop_labels.size(); ++r) e.v[loop_labels[r]] = val[r];
      const int comp = s.lhs().component(e);
      if (seen[comp]) triangular_ok = false;
      seen[comp] = true;
      ++visited;
      return;
    }
    int lo = 0;
    if (lower[q] != "0")
      for (std::size_t r = 0; r < loop_labels.size(); ++r)
        if (label_char(loop_labels[r]) == lower[q][0]) lo = val[r];
    for (int v = lo; v < label_dim(loop_labels[q]); ++v) {
      val[q] = v;
      count_loops(s, q + 1, val, visited, seen);
    }
  }

  std::string params(bool cuda_kernel) const {
    std::string p = "long N";
    const auto& ops = printer.operands();
    for (std::size_t q = 0; q < ops.size(); ++q) {
      p += q == 0 ? ", double* __restrict__ T0" : ", const double* __restrict__ T" + std::to_string(q);
      (void)cuda_kernel;
    }
    return p;
  }
  std::string args() const {
    std::string a = "N";
    for (std::size_t q = 0; q < printer.operands().size(); ++q) a += ", T" + std::to_string(q);
    return a;
  }
  std::string header(const char* what) const {
    std::ostringstream o;
    o << "/* " << what << " generated by tessera::tensor from the statement\n *   " << text << "\n"
      << " * Storage: component-major; stored component c of tensor Tk starts at Tk + c*N.\n";
    const auto& ops = printer.operands();
    for (std::size_t q = 0; q < ops.size(); ++q)
      o << " *   T" << q << ": " << ops[q].label << " (rank " << ops[q].rank << ", " << ops[q].components
        << " stored components)\n";
    o << " */\n";
    return o.str();
  }
};

}  // namespace detail

/// Standalone C source (also valid C++) of a statement: a function
/// `void name(long N, double* T0, const double* T1, ...)`.
template <class St>
std::string emit_c(const St& s, const std::string& name = "tessera_statement") {
  detail::EmitParts<St> e(s);
  std::ostringstream o;
  o << e.header("C source") << "#include <math.h>\n\n";
  const auto& ops = e.printer.operands();
  for (std::size_t q = 0; q < ops.size(); ++q)
    if (ops[q].rank > 0) o << detail::table_decl(ops[q], static_cast<int>(q), "static const");
  o << "\n#ifdef __cplusplus\nextern \"C\"\n#endif\n";
  o << "void " << name << "(" << e.params(false) << ")\n{\n";
  std::string indent = "  ";
  const int nl = static_cast<int>(e.loop_labels.size());
  std::string keep_guard;
  if (!e.triangular_ok) {
    // Loops over every value with a table of the first visit of each stored component.
    std::string t = "static const unsigned char keep";
    std::vector<int> dims;
    for (int lab : e.loop_labels) dims.push_back(label_dim(lab));
    std::vector<int> flags(1, 0);
    int total = 1;
    for (int d : dims) total *= d;
    flags.assign(total, 0);
    for (int c = 0; c < s.lhs_components(); ++c) {
      const Env env = s.env(c);
      int f = 0;
      for (int lab : e.loop_labels) f = f * label_dim(lab) + env.v[lab];
      flags[f] = 1;
    }
    for (int d : dims) t += "[" + std::to_string(d) + "]";
    t += " = {";
    for (int f = 0; f < total; ++f) t += (f ? "," : "") + std::to_string(flags[f]);
    o << indent << t << "};  /* flat initializer */\n";
    keep_guard = "keep";
    for (int lab : e.loop_labels) keep_guard += std::string("[") + label_char(lab) + "]";
  }
  for (int q = 0; q < nl; ++q) {
    const char v = label_char(e.loop_labels[q]);
    const std::string lo = e.triangular_ok ? e.lower[q] : "0";
    o << indent << "for (int " << v << " = " << lo << "; " << v << " < " << label_dim(e.loop_labels[q]) << "; ++"
      << v << ") {\n";
    indent += "  ";
  }
  if (!keep_guard.empty()) o << indent << "if (!" << keep_guard << ") continue;\n";
  o << indent << "for (long x = 0; x < N; ++x) {\n";
  o << indent << "  " << e.lhs << detail::op_text(St::op) << e.rhs << ";\n";
  o << indent << "}\n";
  for (int q = nl - 1; q >= 0; --q) {
    indent.resize(indent.size() - 2);
    o << indent << "}\n";
  }
  o << "}\n";
  return o.str();
}

/// Standalone CUDA source of a statement: a kernel with one thread per (grid point,
/// independent left-hand-side component) — x over the grid, y over the components —
/// and a host function `void name(long N, double* T0, const double* T1, ...)` (device
/// pointers) that launches it.
template <class St>
std::string emit_cuda(const St& s, const std::string& name = "tessera_statement") {
  detail::EmitParts<St> e(s);
  std::ostringstream o;
  o << e.header("CUDA source") << "#include <cuda_runtime.h>\n\n";
  const auto& ops = e.printer.operands();
  for (std::size_t q = 0; q < ops.size(); ++q)
    if (ops[q].rank > 0) o << detail::table_decl(ops[q], static_cast<int>(q), "__constant__");
  const int nl = static_cast<int>(e.loop_labels.size());
  const int nc = s.lhs_components();
  if (nl > 0) {
    o << "/* values of the left-hand side's free indices (";
    for (int q = 0; q < nl; ++q) o << (q ? ", " : "") << label_char(e.loop_labels[q]);
    o << ") for each independent component */\n";
    o << "__constant__ unsigned char " << name << "_lhs[" << nc << "][" << nl << "] = {";
    for (int c = 0; c < nc; ++c) {
      const Env env = s.env(c);
      o << (c ? ", " : "") << "{";
      for (int q = 0; q < nl; ++q) o << (q ? ", " : "") << env.v[e.loop_labels[q]];
      o << "}";
    }
    o << "};\n";
  }
  o << "\n__global__ void " << name << "_kernel(" << e.params(true) << ")\n{\n";
  o << "  const long x = (long)blockIdx.x * blockDim.x + threadIdx.x;\n";
  o << "  if (x >= N) return;\n";
  if (nl > 0) {
    o << "  const int lhs_c = blockIdx.y;\n";
    for (int q = 0; q < nl; ++q)
      o << "  const int " << label_char(e.loop_labels[q]) << " = " << name << "_lhs[lhs_c][" << q << "];\n";
  }
  o << "  " << e.lhs << detail::op_text(St::op) << e.rhs << ";\n}\n\n";
  o << "extern \"C\" void " << name << "(" << e.params(false) << ")\n{\n";
  o << "  const dim3 block(128);\n";
  o << "  const dim3 grid((unsigned)((N + 127) / 128), " << nc << ");\n";
  o << "  if (N > 0) " << name << "_kernel<<<grid, block>>>(" << e.args() << ");\n}\n";
  return o.str();
}

}  // namespace tessera::tensor
