#pragma once
/// \file matrix_market.hpp
/// Matrix Market files (https://math.nist.gov/MatrixMarket/formats.html) of sparse
/// matrices: the coordinate format.
///
///     auto A = tessera::linalg::read_matrix_market("poisson.mtx", tessera::Exec::best());
///     tessera::linalg::write_matrix_market(A, "copy.mtx");
///     tessera::linalg::write_matrix_market(A, "lower.mtx", /*symmetric=*/true);

#include <string>

#include "tessera/core/exec.hpp"
#include "tessera/linalg/csr.hpp"

namespace tessera::linalg {

/// Writes `a` as `%%MatrixMarket matrix coordinate real general` (every stored entry, row by
/// row) or, with `symmetric`, as `... real symmetric` with only the entries on and below the
/// diagonal. Values have 17 significant digits, so reading the file back gives the same
/// bits. With `symmetric`, the matrix must be square and every stored entry (r, c) must have
/// a stored partner (c, r) of the same value; otherwise tessera::Error names the first entry
/// that has none. Also throws when the file cannot be written.
void write_matrix_market(const CsrMatrix& a, const std::string& path, bool symmetric = false);

/// Reads a coordinate Matrix Market file into a CSR matrix on `exec`.
///
/// Accepted: fields real, integer and pattern (pattern entries get the value 1), symmetries
/// general, symmetric (entries from either triangle; each off-diagonal entry also stands
/// for its mirror image) and skew-symmetric (off-diagonal entries only; the mirror image
/// gets the negated value); comment lines (starting with %) and blank lines anywhere after
/// the header. Duplicate entries are summed in file order.
///
/// Throws tessera::Error with the file name and the line number for: a file that cannot
/// be opened, a missing or unknown header, the dense array format (not supported), complex
/// or hermitian matrices (not supported), a bad size line, a non-square symmetric matrix,
/// indices outside the matrix, numbers that cannot be parsed, fewer or more entries than
/// the size line announces, and sizes that do not fit tessera's index types (more than
/// 2^31 - 1 columns, or more entries than a 64-bit index holds).
CsrMatrix read_matrix_market(const std::string& path, const Exec& exec);

}  // namespace tessera::linalg
