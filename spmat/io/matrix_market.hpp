// spmat/io/matrix_market.hpp — read and write Matrix Market files (.mtx, .mtx.gz).
// SPDX-License-Identifier: MIT
//
// Reading accepts `%%MatrixMarket matrix <format> <field> <symmetry>` with
//   format   coordinate | array
//   field    real | double | integer | pattern   (pattern entries get the value 1;
//            complex is refused with UnsupportedError "complex matrices are not supported")
//   symmetry general | symmetric | skew-symmetric | hermitian (hermitian of a real field is
//            symmetric)
// and returns canonical CSR in full storage: a symmetric entry (i, j), i != j, also gives
// (j, i) (the diagonal is not duplicated); skew-symmetric mirrors it negated. The standard
// stores the lower triangle of symmetric files; an entry above the diagonal is accepted too
// and mirrored the same way (so a file listing both (i, j) and (j, i) gets each one twice,
// summed). Duplicates are summed, explicit zeros of coordinate files are kept; zeros of array
// (dense) files are not stored. gzip input is detected by its magic bytes, not its name; the
// text is parsed as it is inflated, and files, pipes and standard input ("-") are streamed.
// Blank lines and `%` comment lines are accepted anywhere after the banner (at most 64 MiB of
// them in all, 1 MiB after the last entry). Strict by default (see ReadOptions::lenient):
// words after the two indices of a pattern entry, data after the gzip stream, integer values
// beyond 2^53 and a size line declaring more entries than the matrix has positions (rows x
// cols; n(n+1)/2 for symmetric and hermitian, n(n-1)/2 for skew-symmetric) are errors. A
// coordinate file of more than 1 MiB of text is parsed on all OpenMP threads; the matrix
// (bit for bit) and every message are those of a one-thread read.
//
// Every malformed input throws ParseError "path:line: <what was expected>, found '<text>'"
// ("path:line:column: ..." where a token is at fault); a matrix too large for Index throws
// IndexOverflowError; memory beyond the limit of ReadOptions::max_memory (entries read so
// far, rows declared) throws OutOfMemoryError before it is allocated.
//
// Example: the file
//   %%MatrixMarket matrix coordinate real symmetric
//   3 3 3
//   1 1 4.0
//   2 1 -1.0
//   3 3 2.5
// reads as Csr{rows=3, cols=3, row_ptr={0,2,3,4}, col_idx={0,1,0,2}, values={4,-1,-1,2.5}}.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "spmat/core/csr.hpp"
#include "spmat/io/read_options.hpp"

namespace spmat::io {

class InputStream;

enum class MmFormat { coordinate, array };
enum class MmField { real, integer, pattern, complex };
enum class MmSymmetry { general, symmetric, skew_symmetric, hermitian };

std::string_view to_string(MmFormat f);
std::string_view to_string(MmField f);
std::string_view to_string(MmSymmetry s);

/// What the banner and size line of a Matrix Market file declare.
struct MatrixMarketHeader {
  MmFormat format = MmFormat::coordinate;
  MmField field = MmField::real;
  MmSymmetry symmetry = MmSymmetry::general;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  /// Stored entries: the count of the size line (coordinate) or the number of values (array).
  std::int64_t entries = 0;
  /// 1-based line number of the size line.
  std::int64_t size_line = 0;
};

/// Reads only the banner and size line (the start of the file). Complex files
/// are reported (field = complex), not refused. Throws ParseError as read_matrix_market does.
MatrixMarketHeader read_matrix_market_header(const std::string& path);

/// Reads a .mtx or .mtx.gz file into canonical CSR (see the top of this header).
template <class Value, class Index>
Csr<Value, Index> read_matrix_market(const std::string& path);

/// As read_matrix_market, also returning the header and the decompressed text size in bytes.
template <class Value, class Index>
Csr<Value, Index> read_matrix_market(const std::string& path, MatrixMarketHeader* header,
                                     std::size_t* text_bytes);

/// As read_matrix_market, with options (strict or lenient, memory limit).
template <class Value, class Index>
Csr<Value, Index> read_matrix_market(const std::string& path, const ReadOptions& options,
                                     MatrixMarketHeader* header = nullptr,
                                     std::size_t* text_bytes = nullptr);

/// As read_matrix_market, from a stream already opened (load_matrix sniffs its first bytes).
template <class Value, class Index>
Csr<Value, Index> read_matrix_market(InputStream& in, const ReadOptions& options,
                                     MatrixMarketHeader* header, std::size_t* text_bytes);

/// The banner the writer prints: `coordinate <field> <symmetry>`. With a symmetry other than
/// general only the lower triangle (diagonal included) is written; pattern writes no values.
/// `MmWriteOptions{h.field, h.symmetry}` with the header of the file read gives a read-write-
/// read round trip that is identical.
struct MmWriteOptions {
  MmField field = MmField::real;
  MmSymmetry symmetry = MmSymmetry::general;
};

/// Writes `a` as `%%MatrixMarket matrix coordinate <field> <symmetry>` (real general unless
/// asked), 1-based, real values printed with %.17g (double) or %.9g (float) so that they read
/// back exactly; gzip-compressed when `path` ends in ".gz". The file appears atomically
/// (written aside, then renamed). A matrix that does not have the field or symmetry asked
/// (a non-integer value for integer, A != A^T for symmetric, A != -A^T for skew-symmetric)
/// throws InvalidMatrixError; complex throws UnsupportedError.
template <class Value, class Index>
void write_matrix_market(const std::string& path, const Csr<Value, Index>& a,
                         const MmWriteOptions& options = {});

}  // namespace spmat::io
