// spmat/io/file_io.hpp — whole-file reading (plain or gzip, detected by magic bytes) and
// atomic writing (plain or gzip), shared by the Matrix Market reader/writer and the binary cache.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

namespace spmat::io {

/// The bytes of a file, decompressed when it was gzip. The buffer always ends with '\n'
/// followed by '\0' (added when absent, not counted in `text_size`), so a parser can stop
/// at a newline without checking the end pointer on every byte.
struct FileBytes {
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data;
  std::size_t size = 0;       ///< bytes before the sentinel ("\n\0" may follow)
  std::size_t disk_size = 0;  ///< bytes on disk (compressed size for gzip)
  bool gzip = false;
  const char* begin() const { return data.get(); }
  const char* end() const { return data.get() + size; }
};

/// Reads `path` whole (or only its first `max_bytes` decompressed bytes).
/// Throws ParseError "cannot open 'path': <reason>" when it cannot be opened, and a ParseError
/// naming the file when compressed data is corrupt or truncated.
FileBytes read_file_bytes(const std::string& path, std::size_t max_bytes = SIZE_MAX);

/// True when the file starts with the gzip magic bytes 1f 8b (false when it cannot be read).
bool is_gzip_file(const std::string& path);

/// True when `s` ends with `suffix`.
inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

/// Buffered writer to `path + ".part"`, renamed to `path` by `commit()` (so a reader never sees
/// a half-written file). gzip-compressed when `gzip` is true. Throws ParseError naming the file
/// on any failure; an uncommitted writer removes its partial file.
class FileWriter {
 public:
  FileWriter(const std::string& path, bool gzip);
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;
  void write(const void* data, std::size_t n);
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what);
  std::string path_, part_;
  bool gzip_;
  void* handle_ = nullptr;  // FILE* or gzFile
};

/// Bytes of memory available to this process now (MemAvailable on Linux; 0 when unknown).
std::uint64_t available_memory_bytes();

}  // namespace spmat::io
