// spmat/io/read_options.hpp — how strictly the readers check their input and how much memory
// they may use.
// SPDX-License-Identifier: MIT
//
//   spmat::io::ReadOptions o;
//   o.lenient = true;                    // accept what real SuiteSparse files need (see below)
//   o.max_memory = std::uint64_t(8) << 30;  // refuse a matrix needing more than 8 GiB to read
//   auto a = spmat::io::load_matrix<double, std::int32_t>("Ragusa16.mtx.gz", o);
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace spmat::io {

/// Options of read_matrix_market, read_binary_cache and load_matrix.
struct ReadOptions {
  /// false (strict, the default): a pattern entry with words after its two indices, bytes
  /// after the end of a gzip stream, an integer-field value beyond 2^53 in magnitude and a
  /// coordinate size line declaring more entries than the matrix has positions (they could
  /// only be duplicates) are errors. true: the extra words are ignored (some SuiteSparse
  /// pattern files carry a value column), bytes after the gzip stream are ignored, such
  /// integers are rounded to the nearest double and the surplus entries are read as
  /// duplicates, summed (compacted as they come, so memory follows the matrix).
  bool lenient = false;
  /// The most bytes of memory a read may use; 0: the environment variable SPMAT_MAX_MEMORY
  /// when set, else the default of 64 MiB + 64 x the bytes of (decompressed) input. The
  /// memory available to the process bounds it in every case. A read that would need more
  /// throws OutOfMemoryError before allocating.
  std::uint64_t max_memory = 0;
};

/// The memory limit of a read that has consumed `input_bytes` of input so far (see
/// ReadOptions::max_memory). Throws ParseError when SPMAT_MAX_MEMORY is not a size.
std::uint64_t memory_limit(const ReadOptions& options, std::uint64_t input_bytes);

/// Throws OutOfMemoryError "<where>: reading this matrix needs about N MiB (<what>), more than
/// the memory limit of M MiB (...)" when `need` exceeds memory_limit(options, input_bytes).
void check_memory(const ReadOptions& options, double need, std::uint64_t input_bytes,
                  const std::string& where, const std::string& what);

/// Parses a byte count with an optional K, M, G or T suffix (powers of 1024): "512M", "8G",
/// "1000000". Throws ParseError naming `what` on anything else.
std::uint64_t parse_byte_size(std::string_view text, const std::string& what);

}  // namespace spmat::io
