// spmat/io/binary_cache.cpp — the .smc binary cache: header, raw CSR arrays, CRC-32.
// SPDX-License-Identifier: MIT
#include "spmat/io/binary_cache.hpp"

#include <zlib.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <type_traits>

#include "spmat/io/file_io.hpp"

namespace spmat::io {

namespace {

static_assert(std::endian::native == std::endian::little,
              "the .smc cache is little-endian; add byte swapping for this host");

constexpr char kMagic[8] = {'S', 'P', 'M', 'A', 'T', 'S', 'M', 'C'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kHeaderBytes = 64;

struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_bytes;
  std::uint8_t value_code;
  std::uint8_t index_code;
  std::uint8_t reserved0[6];
  std::int64_t rows, cols, nnz;
  std::uint64_t checksum;
  std::uint64_t reserved1;
};
static_assert(sizeof(Header) == kHeaderBytes);

template <class T>
constexpr std::uint8_t type_code() {
  return (std::is_same_v<T, float> || std::is_same_v<T, std::int32_t>) ? 1 : 2;
}

std::uint32_t crc_update(std::uint32_t crc, const void* data, std::size_t n) {
  const auto* p = static_cast<const Bytef*>(data);
  while (n > 0) {  // crc32 takes an unsigned length
    const std::size_t c = std::min<std::size_t>(n, std::size_t(1) << 30);
    crc = static_cast<std::uint32_t>(crc32(crc, p, static_cast<uInt>(c)));
    p += c;
    n -= c;
  }
  return crc;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

[[noreturn]] void bad(const std::string& path, const std::string& msg) {
  throw ParseError(path + ": " + msg);
}

__int128 expected_length(const Header& h) {
  const __int128 isz = h.index_code == 1 ? 4 : 8, vsz = h.value_code == 1 ? 4 : 8;
  return kHeaderBytes + (__int128(h.rows) + 1 + h.nnz) * isz + __int128(h.nnz) * vsz;
}

// Reads exactly `n` bytes; a short read means the file ended early.
void read_exact(InputStream& in, void* out, std::size_t n, const char* what) {
  auto* o = static_cast<char*>(out);
  while (n > 0) {
    const std::size_t got = in.read(o, n);
    if (got == 0) bad(in.name(), std::string("cannot read ") + what + ": the file is truncated");
    o += got;
    n -= got;
  }
}

// Whether the stored length is known (a plain regular file), so that arrays sized by the
// header are backed by bytes on disk.
bool length_known(const InputStream& in) { return in.regular() && !in.gzip(); }

// Reads and checks the header (everything but the checksum and the arrays).
void read_header(InputStream& in, Header& h) {
  const std::string& path = in.name();
  std::size_t got = 0;
  while (got < sizeof h) {
    const std::size_t n = in.read(reinterpret_cast<char*>(&h) + got, sizeof h - got);
    if (n == 0) break;
    got += n;
  }
  const long long length = length_known(in) ? static_cast<long long>(in.file_size())
                                            : static_cast<long long>(got);
  if (got < sizeof h)
    bad(path, "the file is too short for a spmat binary cache header (" + std::to_string(length) +
                  " bytes, expected at least " + std::to_string(kHeaderBytes) + ")");
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0)
    bad(path, "not a spmat binary cache: bad magic, expected the file to start with 'SPMATSMC'");
  if (h.version != kVersion)
    bad(path, "binary cache version " + std::to_string(h.version) + " is not supported; expected " +
                  std::to_string(kVersion) + " (re-create it with `spmat convert`)");
  if (h.header_bytes != kHeaderBytes)
    bad(path, "header size " + std::to_string(h.header_bytes) + " is wrong; expected " +
                  std::to_string(kHeaderBytes));
  if (h.value_code < 1 || h.value_code > 2 || h.index_code < 1 || h.index_code > 2)
    bad(path, "unknown type codes (value " + std::to_string(h.value_code) + ", index " +
                  std::to_string(h.index_code) + "); expected 1 or 2");
  if (h.rows < 0 || h.cols < 0 || h.nnz < 0)
    bad(path, "negative sizes in the header (rows " + std::to_string(h.rows) + ", cols " +
                  std::to_string(h.cols) + ", nnz " + std::to_string(h.nnz) + ")");
  const __int128 expect = expected_length(h);
  if (length_known(in) && expect != length)
    bad(path, "the file has " + std::to_string(length) + " bytes but its header (" +
                  std::to_string(h.rows) + " x " + std::to_string(h.cols) + ", nnz " +
                  std::to_string(h.nnz) + ") needs " +
                  (expect > (__int128(1) << 62) ? std::string("more than 2^62")
                                                : std::to_string(static_cast<long long>(expect))) +
                  ": the file is truncated or corrupt");
}

// Reads `n` elements. When the file length did not back the header's sizes (a pipe, gzip),
// the array grows as the bytes arrive: a header claiming 10^12 rows cannot allocate ahead.
template <class T>
void read_array(InputStream& in, std::vector<T>& v, std::size_t n, std::uint32_t& crc, const char* what) {
  if (length_known(in)) {
    v.resize(n);
    read_exact(in, v.data(), n * sizeof(T), what);
  } else {
    v.clear();
    while (v.size() < n) {
      const std::size_t old = v.size();
      v.resize(old + std::min(n - old, std::max<std::size_t>(old, std::size_t(1) << 18)));
      read_exact(in, v.data() + old, (v.size() - old) * sizeof(T), what);
    }
  }
  crc = crc_update(crc, v.data(), n * sizeof(T));
}

template <class VS, class IS, class Value, class Index>
Csr<Value, Index> read_stored(InputStream& in, const Header& h, const ReadOptions& opt) {
  const std::string& path = in.name();
  Header zeroed = h;
  zeroed.checksum = 0;
  std::uint32_t crc = crc_update(static_cast<std::uint32_t>(crc32(0, nullptr, 0)), &zeroed, sizeof zeroed);
  if constexpr (!std::is_same_v<IS, Index>) check_index_range<Index>(h.rows, h.cols, h.nnz, path);
  check_index_range<IS>(h.rows, h.cols, h.nnz, path);
  // The arrays as stored, plus a converted copy when other types are asked for.
  const double stored = double(expected_length(h));
  double need = stored;
  if constexpr (!std::is_same_v<VS, Value> || !std::is_same_v<IS, Index>)
    need += (double(h.rows) + 1 + double(h.nnz)) * sizeof(Index) + double(h.nnz) * sizeof(Value);
  check_memory(opt, need, static_cast<std::uint64_t>(stored), path,
               std::to_string(h.rows) + " rows and " + std::to_string(h.nnz) + " entries");
  Csr<VS, IS> s;
  s.rows = static_cast<IS>(h.rows);
  s.cols = static_cast<IS>(h.cols);
  read_array(in, s.row_ptr, static_cast<std::size_t>(h.rows) + 1, crc, "row_ptr");
  read_array(in, s.col_idx, static_cast<std::size_t>(h.nnz), crc, "col_idx");
  read_array(in, s.values, static_cast<std::size_t>(h.nnz), crc, "values");
  char extra;
  if (in.read(&extra, 1) != 0)
    bad(path, "the file is longer than its header (" + std::to_string(h.rows) + " x " +
                  std::to_string(h.cols) + ", nnz " + std::to_string(h.nnz) +
                  ") says: the file is truncated or corrupt");
  if (crc != h.checksum)
    bad(path, "checksum mismatch (stored " + std::to_string(h.checksum) + ", computed " +
                  std::to_string(crc) + "): the file is corrupt; expected an intact cache");
  // Bound row_ptr before validate() walks it (a crafted file could pass the checksum).
  for (std::size_t r = 0; r < s.row_ptr.size(); ++r)
    if (s.row_ptr[r] < 0 || s.row_ptr[r] > h.nnz || (r > 0 && s.row_ptr[r] < s.row_ptr[r - 1]))
      bad(path, "the stored CSR is invalid: row_ptr[" + std::to_string(r) + "] = " +
                    std::to_string(s.row_ptr[r]) + "; expected non-decreasing values in [0, nnz]");
  try {
    s.validate(path);
  } catch (const InvalidMatrixError& e) {
    bad(path, std::string("the stored CSR is invalid (") + e.what() + ")");
  }
  if constexpr (std::is_same_v<VS, Value> && std::is_same_v<IS, Index>) return s;
  else return convert<Value, Index>(s, path);
}

}  // namespace

bool is_binary_cache_file(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  char m[8] = {};
  return f && std::fread(m, 1, 8, f.get()) == 8 && std::memcmp(m, kMagic, 8) == 0;
}

BinaryCacheInfo read_binary_cache_info(const std::string& path) {
  Header h{};
  InputStream in(path);
  read_header(in, h);
  return {h.version, h.value_code == 1 ? 4 : 8, h.index_code == 1 ? 4 : 8, h.rows, h.cols, h.nnz};
}

template <class Value, class Index>
void write_binary_cache(const std::string& path, const Csr<Value, Index>& a) {
  a.validate(path);
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.header_bytes = kHeaderBytes;
  h.value_code = type_code<Value>();
  h.index_code = type_code<Index>();
  h.rows = a.rows;
  h.cols = a.cols;
  h.nnz = static_cast<std::int64_t>(a.col_idx.size());
  std::uint32_t crc = crc_update(static_cast<std::uint32_t>(crc32(0, nullptr, 0)), &h, sizeof h);
  crc = crc_update(crc, a.row_ptr.data(), a.row_ptr.size() * sizeof(Index));
  crc = crc_update(crc, a.col_idx.data(), a.col_idx.size() * sizeof(Index));
  crc = crc_update(crc, a.values.data(), a.values.size() * sizeof(Value));
  h.checksum = crc;
  FileWriter w(path, false);
  w.write(&h, sizeof h);
  w.write(a.row_ptr.data(), a.row_ptr.size() * sizeof(Index));
  w.write(a.col_idx.data(), a.col_idx.size() * sizeof(Index));
  w.write(a.values.data(), a.values.size() * sizeof(Value));
  w.commit();
}

template <class Value, class Index>
Csr<Value, Index> read_binary_cache(InputStream& in, const ReadOptions& options) {
  Header h{};
  read_header(in, h);
  const int code = h.value_code * 10 + h.index_code;
  switch (code) {
    case 11: return read_stored<float, std::int32_t, Value, Index>(in, h, options);
    case 12: return read_stored<float, std::int64_t, Value, Index>(in, h, options);
    case 21: return read_stored<double, std::int32_t, Value, Index>(in, h, options);
    default: return read_stored<double, std::int64_t, Value, Index>(in, h, options);
  }
}

template <class Value, class Index>
Csr<Value, Index> read_binary_cache(const std::string& path, const ReadOptions& options) {
  InputStream in(path, options.lenient);
  return read_binary_cache<Value, Index>(in, options);
}

#define SPMAT_INSTANTIATE(V, I)                                               \
  template void write_binary_cache(const std::string&, const Csr<V, I>&);     \
  template Csr<V, I> read_binary_cache<V, I>(const std::string&, const ReadOptions&); \
  template Csr<V, I> read_binary_cache<V, I>(InputStream&, const ReadOptions&);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat::io
