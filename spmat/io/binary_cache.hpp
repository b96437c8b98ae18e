// spmat/io/binary_cache.hpp — the binary cache (.smc): a CSR matrix as raw arrays, for reloads
// much faster than parsing text.
// SPDX-License-Identifier: MIT
//
// Layout (little-endian; version 1):
//   offset  size  field
//        0     8  magic "SPMATSMC"
//        8     4  version (1)
//       12     4  header bytes (64)
//       16     1  value type code (1 = float, 2 = double)
//       17     1  index type code (1 = int32, 2 = int64)
//       18     6  reserved (0)
//       24     8  rows
//       32     8  cols
//       40     8  nnz
//       48     8  checksum: CRC-32 (zlib) of the whole file with this field read as 0
//       56     8  reserved (0)
//       64        row_ptr (rows+1 indices), col_idx (nnz indices), values (nnz values)
// The file length must be exactly 64 + the three arrays.
#pragma once
#include <cstdint>
#include <string>

#include "spmat/core/csr.hpp"
#include "spmat/io/read_options.hpp"

namespace spmat::io {

class InputStream;

/// What a cache file's header says (read without loading the arrays).
struct BinaryCacheInfo {
  std::uint32_t version = 0;
  int value_bytes = 0;  ///< 4 (float) or 8 (double)
  int index_bytes = 0;  ///< 4 (int32) or 8 (int64)
  std::int64_t rows = 0, cols = 0, nnz = 0;
};

/// Writes `a` (validated first) in its own value and index types; the file appears atomically.
template <class Value, class Index>
void write_binary_cache(const std::string& path, const Csr<Value, Index>& a);

/// Reads a cache file ("-": standard input), checking magic, version, type codes, sizes
/// against the file length, the checksum and the CSR structure; each failure is a ParseError
/// naming the file. Stored types other than (Value, Index) are converted (IndexOverflowError
/// if Index is too small). From a pipe the arrays grow as their bytes arrive; the memory
/// limit of `options` is checked before reading them (OutOfMemoryError).
template <class Value, class Index>
Csr<Value, Index> read_binary_cache(const std::string& path, const ReadOptions& options = {});

/// As read_binary_cache, from a stream already opened (load_matrix sniffs its first bytes).
template <class Value, class Index>
Csr<Value, Index> read_binary_cache(InputStream& in, const ReadOptions& options);

/// Reads and checks only the header.
BinaryCacheInfo read_binary_cache_info(const std::string& path);

/// True when the file starts with the cache magic.
bool is_binary_cache_file(const std::string& path);

}  // namespace spmat::io
