// Tests of the Matrix Market reader and writer.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/linalg/csr.hpp"
#include "tessera/linalg/matrix_market.hpp"
#include "test_backends.hpp"

namespace tessera::test {
namespace {

using linalg::CsrMatrix;
using linalg::read_matrix_market;
using linalg::write_matrix_market;

/// A fresh path in the test's temporary folder.
std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "tessera_linalg_mm";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CsrMatrix from_coo(index_t rows, index_t cols, const std::vector<std::int64_t>& r, const std::vector<int>& c,
                   const std::vector<double>& v, const Exec& exec) {
  linalg::CooMatrix coo{rows, cols, Array<std::int64_t, 1>::from("r", r), Array<int, 1>::from("c", c),
                        Array<double, 1>::from("v", v)};
  return linalg::csr_from_coo(coo, exec);
}

/// Values whose decimal forms need all 17 digits, extremes and signed zero.
double awkward(std::mt19937_64& gen) {
  static const double special[] = {1.0 / 3.0, -2.0 / 7.0, 1e-300, -1e300, 4.9406564584124654e-324,
                                   std::numeric_limits<double>::max(), -0.0, 0.1, 123456789.123456789};
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto k = gen() % 12;
  return k < 9 ? special[k] : u(gen) * std::pow(10.0, static_cast<int>(gen() % 40) - 20);
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

void expect_equal(const CsrMatrix& a, const CsrMatrix& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  EXPECT_EQ(a.row_offsets_array().to_vector(), b.row_offsets_array().to_vector());
  EXPECT_EQ(a.col_indices_array().to_vector(), b.col_indices_array().to_vector());
  EXPECT_TRUE(same_bits(a.values_array().to_vector(), b.values_array().to_vector()));
}

class MatrixMarketTest : public BackendTest {};
TESSERA_INSTANTIATE_BACKENDS(MatrixMarketTest);

TEST_P(MatrixMarketTest, GeneralRoundTripIsBitwise) {
  std::mt19937_64 gen(3);
  std::vector<std::int64_t> r;
  std::vector<int> c;
  std::vector<double> v;
  for (int k = 0; k < 400; ++k) {
    r.push_back(static_cast<std::int64_t>(gen() % 37));
    c.push_back(static_cast<int>(gen() % 53));
    v.push_back(awkward(gen));
  }
  const CsrMatrix a = from_coo(37, 53, r, c, v, exec());
  const std::string path = temp_path("general_" + std::string(to_string(GetParam())) + ".mtx");
  write_matrix_market(a, path);
  const std::string text = read_file(path);
  EXPECT_EQ(text.rfind("%%MatrixMarket matrix coordinate real general\n37 53 " + std::to_string(a.nnz()) + "\n", 0),
            0u);
  const CsrMatrix b = read_matrix_market(path, exec());
  EXPECT_EQ(b.exec().backend, GetParam());
  EXPECT_EQ(b.space(), space());
  expect_equal(a, b);
}

TEST_P(MatrixMarketTest, SymmetricWriteStoresTheLowerTriangleAndReadsBack) {
  std::mt19937_64 gen(4);
  std::vector<std::int64_t> r;
  std::vector<int> c;
  std::vector<double> v;
  for (int k = 0; k < 150; ++k) {
    const auto i = static_cast<int>(gen() % 30), j = static_cast<int>(gen() % 30);
    const double x = awkward(gen);
    r.push_back(i);
    c.push_back(j);
    v.push_back(x);
    if (i != j) {
      r.push_back(j);
      c.push_back(i);
      v.push_back(x);
    }
  }
  // Duplicates of (i, j) and (j, i) are summed in the same order on both sides: still symmetric.
  const CsrMatrix a = from_coo(30, 30, r, c, v, exec());
  const std::string path = temp_path("symmetric_" + std::string(to_string(GetParam())) + ".mtx");
  write_matrix_market(a, path, true);
  const std::string text = read_file(path);
  EXPECT_EQ(text.rfind("%%MatrixMarket matrix coordinate real symmetric\n", 0), 0u);
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);
  std::getline(lines, line);
  long long rows = 0, cols = 0, count = 0, lower = 0;
  std::istringstream(line) >> rows >> cols >> count;
  while (std::getline(lines, line)) {
    long long i = 0, j = 0;
    std::istringstream(line) >> i >> j;
    EXPECT_LE(j, i) << line;
    ++lower;
  }
  EXPECT_EQ(lower, count);
  EXPECT_LT(count, a.nnz());
  expect_equal(a, read_matrix_market(path, exec()));
}

TEST(MatrixMarket, SymmetricWriteRefusesNonSymmetricMatrices) {
  const Exec e = Exec::serial();
  const CsrMatrix a = from_coo(3, 3, {0, 1, 2}, {1, 0, 2}, {1.0, 2.0, 3.0}, e);
  const std::string m = error_message([&] { write_matrix_market(a, temp_path("bad_sym.mtx"), true); });
  EXPECT_CONTAINS(m, "not symmetric: entry (0, 1) (zero-based) is 1 but (1, 0) is 2");
  const CsrMatrix b = from_coo(3, 3, {0, 1}, {1, 1}, {1.0, 2.0}, e);
  EXPECT_CONTAINS(error_message([&] { write_matrix_market(b, temp_path("bad_sym.mtx"), true); }),
                  "entry (0, 1) (zero-based) is stored but (1, 0) is not");
  const CsrMatrix c = from_coo(2, 3, {0}, {0}, {1.0}, e);
  EXPECT_CONTAINS(error_message([&] { write_matrix_market(c, temp_path("bad_sym.mtx"), true); }),
                  "a 2 x 3 matrix is not square");
  EXPECT_CONTAINS(error_message([&] { write_matrix_market(c, temp_path("no/such/folder/x.mtx")); }),
                  "cannot open");
}

TEST(MatrixMarket, ReadsSymmetricSkewIntegerAndPatternFiles) {
  const Exec e = Exec::serial();
  const auto sym = write_file("sym.mtx",
                              "%%MatrixMarket matrix coordinate real symmetric\n% a comment\n\n3 3 4\n1 1 2.5\n"
                              "2 1 -1\n3 2 4e-1\n%another comment\n3 3 1\n");
  expect_equal(read_matrix_market(sym, e), from_coo(3, 3, {0, 0, 1, 1, 2, 2}, {0, 1, 0, 2, 1, 2},
                                                    {2.5, -1, -1, 0.4, 0.4, 1}, e));
  const auto skew = write_file("skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 3\n3 1 -0.5\n");
  expect_equal(read_matrix_market(skew, e), from_coo(3, 3, {1, 0, 2, 0}, {0, 1, 0, 2}, {3, -3, -0.5, 0.5}, e));
  const auto integer = write_file("int.mtx", "%%MatrixMarket matrix coordinate integer general\r\n2 2 2\r\n1 2 7\r\n2 1 -3\r\n");
  expect_equal(read_matrix_market(integer, e), from_coo(2, 2, {0, 1}, {1, 0}, {7, -3}, e));
  const auto pattern = write_file("pattern.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n");
  expect_equal(read_matrix_market(pattern, e), from_coo(2, 2, {0, 0, 1}, {0, 1, 0}, {1, 1, 1}, e));
  // Case of the header words does not matter; duplicates are summed in file order.
  const auto dup = write_file("dup.mtx",
                              "%%MatrixMarket MATRIX Coordinate Real General\n1 2 4\n1 2 1e16\n1 1 5\n1 2 1\n1 2 -1e16\n");
  expect_equal(read_matrix_market(dup, e), from_coo(1, 2, {0, 0}, {0, 1}, {5, 0}, e));
  const auto empty = write_file("empty.mtx", "%%MatrixMarket matrix coordinate real general\n0 0 0\n");
  EXPECT_EQ(read_matrix_market(empty, e).rows(), 0);
}

/// The message of reading a file with `text`.
std::string read_error(const std::string& name, const std::string& text) {
  const std::string path = write_file(name, text);
  return error_message([&] { read_matrix_market(path, Exec::serial()); });
}

TEST(MatrixMarket, MalformedFilesNameTheFileAndLine) {
  const std::string h = "%%MatrixMarket matrix coordinate real general\n";
  struct Case {
    const char* name;
    std::string text;
    std::string where, what;
  };
  const std::vector<Case> cases = {
      {"m_empty.mtx", "", "m_empty.mtx:1: ", "the file is empty"},
      {"m_noheader.mtx", "3 3 1\n1 1 1\n", "m_noheader.mtx:1: ", "missing Matrix Market header"},
      {"m_short.mtx", "%%MatrixMarket matrix coordinate real\n", "m_short.mtx:1: ", "the header has 4 words"},
      {"m_object.mtx", "%%MatrixMarket vector coordinate real general\n", "m_object.mtx:1: ",
       "unknown Matrix Market object 'vector'"},
      {"m_array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "m_array.mtx:1: ",
       "dense 'array' Matrix Market files are not supported"},
      {"m_format.mtx", "%%MatrixMarket matrix sparse real general\n", "m_format.mtx:1: ",
       "unknown Matrix Market format 'sparse'"},
      {"m_complex.mtx", "%%MatrixMarket matrix coordinate complex general\n", "m_complex.mtx:1: ",
       "complex matrices are not supported"},
      {"m_field.mtx", "%%MatrixMarket matrix coordinate double general\n", "m_field.mtx:1: ",
       "unknown Matrix Market field 'double'"},
      {"m_herm.mtx", "%%MatrixMarket matrix coordinate real hermitian\n", "m_herm.mtx:1: ",
       "hermitian matrices are not supported"},
      {"m_sym.mtx", "%%MatrixMarket matrix coordinate real upper\n", "m_sym.mtx:1: ",
       "unknown Matrix Market symmetry 'upper'"},
      {"m_nosize.mtx", h + "% only comments\n", "m_nosize.mtx:3: ", "the file ends before the size line"},
      {"m_size.mtx", h + "% c\n3 3\n", "m_size.mtx:3: ", "bad size line '3 3': expected three non-negative integers"},
      {"m_size2.mtx", h + "3 x 1\n", "m_size2.mtx:2: ", "bad size line '3 x 1'"},
      {"m_size3.mtx", h + "3 -3 1\n", "m_size3.mtx:2: ", "bad size line"},
      {"m_square.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", "m_square.mtx:2: ",
       "a symmetric matrix must be square, but the size line says 2 x 3"},
      {"m_cols.mtx", h + "1 3000000000 0\n", "m_cols.mtx:2: ",
       "3000000000 columns, more than tessera's 32-bit column indices hold"},
      {"m_nnz.mtx", h + "1 1 9000000000000000000\n", "m_nnz.mtx:2: ",
       "more than tessera's 64-bit indices hold"},
      {"m_row.mtx", h + "2 2 2\n1 1 1\n3 1 1\n", "m_row.mtx:4: ", "row index 3 is outside 1..2 (Matrix Market indices are 1-based)"},
      {"m_col.mtx", h + "2 2 1\n1 0 1\n", "m_col.mtx:3: ", "column index 0 is outside 1..2"},
      {"m_value.mtx", h + "2 2 1\n1 1 1.5x\n", "m_value.mtx:3: ", "cannot parse the value '1.5x' as a real number"},
      {"m_index.mtx", h + "2 2 1\n1.0 1 1\n", "m_index.mtx:3: ", "cannot parse the row index '1.0' as an integer"},
      {"m_intval.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 2.5\n", "m_intval.mtx:3: ",
       "cannot parse the value '2.5' as an integer"},
      {"m_fields.mtx", h + "2 2 1\n1 1\n", "m_fields.mtx:3: ", "expected 3 fields 'row column value' in a real file, found 2"},
      {"m_pfields.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n", "m_pfields.mtx:3: ",
       "expected 2 fields 'row column'"},
      {"m_more.mtx", h + "2 2 1\n1 1 1\n% c\n2 2 1\n", "m_more.mtx:5: ",
       "more entries than the 1 announced by the size line (line 2)"},
      {"m_fewer.mtx", h + "2 2 3\n1 1 1\n2 2 1\n", "m_fewer.mtx: ",
       "the size line (line 2) announces 3 entries but the file holds 2"},
      {"m_skewdiag.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n", "m_skewdiag.mtx:3: ",
       "diagonal entry (1, 1) in a skew-symmetric file"},
  };
  for (const Case& c : cases) {
    const std::string m = read_error(c.name, c.text);
    EXPECT_CONTAINS(m, c.where);
    EXPECT_CONTAINS(m, c.what);
  }
}

TEST(MatrixMarket, MissingFileAndDirectory) {
  const std::string missing = temp_path("does_not_exist.mtx");
  const std::string m = error_message([&] { read_matrix_market(missing, Exec::serial()); });
  EXPECT_CONTAINS(m, "cannot open '" + missing + "'");
  EXPECT_CONTAINS(m, "No such file or directory");
  const std::string dir = std::filesystem::path(temp_path("x")).parent_path().string();
  EXPECT_CONTAINS(error_message([&] { read_matrix_market(dir, Exec::serial()); }), "is a directory");
}

}  // namespace
}  // namespace tessera::test
