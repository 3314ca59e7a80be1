// Matrix Market coordinate files: reader and writer of CSR matrices (host code).
#include "tessera/linalg/matrix_market.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::linalg {

namespace {

// ------------------------------------------------------------------ writer

/// Position of column c in the sorted row [b, e) of `col`, or -1.
std::int64_t find_in_row(const std::vector<int>& col, std::int64_t b, std::int64_t e, int c) {
  const auto first = col.begin() + b, last = col.begin() + e;
  const auto it = std::lower_bound(first, last, c);
  return it != last && *it == c ? static_cast<std::int64_t>(it - col.begin()) : -1;
}

/// `v` with 17 significant digits (the digits that tell any two doubles apart).
std::string full_precision(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// ------------------------------------------------------------------ reader

/// Splits a line into blank-separated tokens (spaces and tabs).
std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t b = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > b) out.push_back(line.substr(b, i - b));
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

/// The lines of a file with their 1-based numbers; "\r\n" line ends are accepted.
class Lines {
 public:
  explicit Lines(std::string_view text) : text_(text) {}
  /// The next line, false at the end of the file.
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    std::size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    ++number_;
    return true;
  }
  /// Number of the line next() returned last.
  std::size_t number() const { return number_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0, number_ = 0;
};

bool is_blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char ch) { return ch == ' ' || ch == '\t'; });
}

/// A whole token as a signed integer; false when it is not one (or does not fit).
bool parse_integer(std::string_view t, long long& out) {
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return ec == std::errc() && p == t.data() + t.size() && !t.empty();
}

/// A whole token as a double (decimal or exponent notation, inf, nan); false otherwise.
bool parse_real(std::string_view t, double& out) {
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out, std::chars_format::general);
  return ec == std::errc() && p == t.data() + t.size() && !t.empty();
}

enum class Field { Real, Integer, Pattern };
enum class Symmetry { General, Symmetric, Skew };

constexpr const char* kHeaderForm =
    "'%%MatrixMarket matrix coordinate <real|integer|pattern> <general|symmetric|skew-symmetric>'";

}  // namespace

void write_matrix_market(const CsrMatrix& a, const std::string& path, bool symmetric) {
  const std::vector<std::int64_t> off = a.row_offsets_array().to_vector();
  const std::vector<int> col = a.col_indices_array().to_vector();
  const std::vector<double> val = a.values_array().to_vector();
  const index_t rows = a.rows();
  std::int64_t count = a.nnz();
  if (symmetric) {
    TESSERA_REQUIRE(a.rows() == a.cols(), "write_matrix_market('", path, "'): a ", a.rows(), " x ", a.cols(),
                    " matrix is not square and cannot be written as symmetric; pass symmetric = false");
    count = 0;
    for (index_t r = 0; r < rows; ++r) {
      for (std::int64_t k = off[static_cast<std::size_t>(r)]; k < off[static_cast<std::size_t>(r) + 1]; ++k) {
        const int c = col[static_cast<std::size_t>(k)];
        if (c <= r) ++count;
        if (c == r) continue;
        const std::int64_t m =
            find_in_row(col, off[static_cast<std::size_t>(c)], off[static_cast<std::size_t>(c) + 1], static_cast<int>(r));
        if (m < 0)
          fail("write_matrix_market('", path, "'): the matrix is not symmetric: entry (", r, ", ", c,
               ") (zero-based) is stored but (", c, ", ", r, ") is not; pass symmetric = false to write all entries");
        const double v = val[static_cast<std::size_t>(k)], w = val[static_cast<std::size_t>(m)];
        if (!(v == w) && !(std::isnan(v) && std::isnan(w)))
          fail("write_matrix_market('", path, "'): the matrix is not symmetric: entry (", r, ", ", c,
               ") (zero-based) is ", full_precision(v), " but (", c, ", ", r, ") is ", full_precision(w),
               "; pass symmetric = false to write all entries");
      }
    }
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) fail("write_matrix_market: cannot open '", path, "' for writing (", std::strerror(errno), ")");
  std::string buf;
  buf.reserve(1 << 16);
  char line[96];
  bool ok = true;
  auto flush = [&] {
    if (!buf.empty() && std::fwrite(buf.data(), 1, buf.size(), f) != buf.size()) ok = false;
    buf.clear();
  };
  buf += symmetric ? "%%MatrixMarket matrix coordinate real symmetric\n" : "%%MatrixMarket matrix coordinate real general\n";
  std::snprintf(line, sizeof line, "%lld %lld %lld\n", static_cast<long long>(a.rows()),
                static_cast<long long>(a.cols()), static_cast<long long>(count));
  buf += line;
  for (index_t r = 0; r < rows && ok; ++r) {
    for (std::int64_t k = off[static_cast<std::size_t>(r)]; k < off[static_cast<std::size_t>(r) + 1]; ++k) {
      const int c = col[static_cast<std::size_t>(k)];
      if (symmetric && c > r) continue;
      std::snprintf(line, sizeof line, "%lld %d %.17g\n", static_cast<long long>(r) + 1, c + 1,
                    val[static_cast<std::size_t>(k)]);
      buf += line;
    }
    if (buf.size() > (1 << 16) - 256) flush();
  }
  flush();
  if (std::ferror(f)) ok = false;
  if (std::fclose(f) != 0) ok = false;
  if (!ok) fail("write_matrix_market: writing '", path, "' failed (", std::strerror(errno), "; is the disk full?)");
}

CsrMatrix read_matrix_market(const std::string& path, const Exec& exec) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("read_matrix_market: '", path, "' is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("read_matrix_market: cannot open '", path, "' (", std::strerror(errno), ")");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail("read_matrix_market: reading '", path, "' failed");

  Lines lines(text);
  std::string_view line;
  auto where = [&](std::size_t n) { return detail::concat(path, ":", n, ": "); };

  // Header.
  if (!lines.next(line)) fail(where(1), "the file is empty; a Matrix Market file starts with ", kHeaderForm);
  const auto head = split(line);
  if (head.empty() || lower(head[0]) != "%%matrixmarket")
    fail(where(1), "missing Matrix Market header: the first line must be ", kHeaderForm, ", found '", line, "'");
  if (head.size() != 5)
    fail(where(1), "the header has ", head.size(), " words; expected 5: ", kHeaderForm);
  const std::string object = lower(head[1]), format = lower(head[2]), field_s = lower(head[3]),
                    symmetry_s = lower(head[4]);
  if (object != "matrix")
    fail(where(1), "unknown Matrix Market object '", head[1], "'; only 'matrix' is read");
  if (format == "array")
    fail(where(1), "dense 'array' Matrix Market files are not supported; only the sparse 'coordinate' format is");
  if (format != "coordinate")
    fail(where(1), "unknown Matrix Market format '", head[2], "'; expected 'coordinate'");
  Field field;
  if (field_s == "real")
    field = Field::Real;
  else if (field_s == "integer")
    field = Field::Integer;
  else if (field_s == "pattern")
    field = Field::Pattern;
  else if (field_s == "complex")
    fail(where(1), "complex matrices are not supported; the field must be real, integer or pattern");
  else
    fail(where(1), "unknown Matrix Market field '", head[3], "'; expected real, integer or pattern");
  Symmetry symmetry;
  if (symmetry_s == "general")
    symmetry = Symmetry::General;
  else if (symmetry_s == "symmetric")
    symmetry = Symmetry::Symmetric;
  else if (symmetry_s == "skew-symmetric")
    symmetry = Symmetry::Skew;
  else if (symmetry_s == "hermitian")
    fail(where(1), "hermitian matrices are not supported; the symmetry must be general, symmetric or skew-symmetric");
  else
    fail(where(1), "unknown Matrix Market symmetry '", head[4], "'; expected general, symmetric or skew-symmetric");
  if (field == Field::Pattern && symmetry == Symmetry::Skew)
    fail(where(1), "a pattern matrix cannot be skew-symmetric (it has no values to negate)");

  // Size line (after comments and blank lines).
  bool have_size = false;
  while (lines.next(line)) {
    if (is_blank(line) || line.front() == '%') continue;
    have_size = true;
    break;
  }
  if (!have_size) fail(where(lines.number() + 1), "the file ends before the size line 'rows columns entries'");
  const std::size_t size_line = lines.number();
  long long rows = 0, cols = 0, entries = 0;
  {
    const auto t = split(line);
    if (t.size() != 3 || !parse_integer(t[0], rows) || !parse_integer(t[1], cols) || !parse_integer(t[2], entries) ||
        rows < 0 || cols < 0 || entries < 0)
      fail(where(size_line), "bad size line '", line, "': expected three non-negative integers 'rows columns entries'");
  }
  if (cols > INT_MAX)
    fail(where(size_line), "the matrix has ", cols,
         " columns, more than tessera's 32-bit column indices hold (at most 2147483647)");
  if (symmetry != Symmetry::General && rows != cols)
    fail(where(size_line), "a ", symmetry_s, " matrix must be square, but the size line says ", rows, " x ", cols);
  const long long max_entries = std::numeric_limits<std::int64_t>::max() / 2;
  if (entries > max_entries)
    fail(where(size_line), "the size line announces ", entries, " entries, more than tessera's 64-bit indices hold");

  // Entries.
  const std::size_t fields = field == Field::Pattern ? 2 : 3;
  const char* form = field == Field::Pattern ? "'row column'" : "'row column value'";
  std::vector<std::int64_t> row_of;
  std::vector<int> col_of;
  std::vector<double> val_of;
  {
    // Never reserve more than the file can hold (a bogus count must not allocate terabytes).
    const std::size_t cap = std::min<std::size_t>(static_cast<std::size_t>(entries), text.size() / 4 + 1);
    const std::size_t mirror = symmetry == Symmetry::General ? 1 : 2;
    row_of.reserve(cap * mirror);
    col_of.reserve(cap * mirror);
    val_of.reserve(cap * mirror);
  }
  long long seen = 0;
  while (lines.next(line)) {
    if (is_blank(line) || line.front() == '%') continue;
    const std::size_t n = lines.number();
    if (seen == entries)
      fail(where(n), "more entries than the ", entries, " announced by the size line (line ", size_line, ")");
    const auto t = split(line);
    if (t.size() != fields)
      fail(where(n), "expected ", fields, " fields ", form, " in a ", field_s, " file, found ", t.size(), ": '", line,
           "'");
    long long i = 0, j = 0;
    if (!parse_integer(t[0], i)) fail(where(n), "cannot parse the row index '", t[0], "' as an integer");
    if (!parse_integer(t[1], j)) fail(where(n), "cannot parse the column index '", t[1], "' as an integer");
    if (i < 1 || i > rows)
      fail(where(n), "row index ", i, " is outside 1..", rows, " (Matrix Market indices are 1-based)");
    if (j < 1 || j > cols)
      fail(where(n), "column index ", j, " is outside 1..", cols, " (Matrix Market indices are 1-based)");
    double v = 1.0;
    if (field == Field::Real) {
      if (!parse_real(t[2], v)) fail(where(n), "cannot parse the value '", t[2], "' as a real number");
    } else if (field == Field::Integer) {
      long long iv = 0;
      if (!parse_integer(t[2], iv)) fail(where(n), "cannot parse the value '", t[2], "' as an integer");
      v = static_cast<double>(iv);
    }
    if (symmetry == Symmetry::Skew && i == j)
      fail(where(n), "diagonal entry (", i, ", ", j, ") in a skew-symmetric file, whose diagonal is zero and not stored");
    row_of.push_back(i - 1);
    col_of.push_back(static_cast<int>(j - 1));
    val_of.push_back(v);
    if (symmetry != Symmetry::General && i != j) {
      row_of.push_back(j - 1);
      col_of.push_back(static_cast<int>(i - 1));
      val_of.push_back(symmetry == Symmetry::Skew ? -v : v);
    }
    ++seen;
  }
  if (seen < entries)
    fail(path, ": the size line (line ", size_line, ") announces ", entries, " entries but the file holds ", seen,
         " (it ends at line ", lines.number(), ")");

  CooMatrix coo;
  coo.rows = rows;
  coo.cols = cols;
  coo.row = Array<std::int64_t, 1>::from("coo_row", row_of);
  coo.col = Array<int, 1>::from("coo_col", col_of);
  coo.val = Array<double, 1>::from("coo_val", val_of);
  return csr_from_coo(coo, exec);
}

}  // namespace tessera::linalg
