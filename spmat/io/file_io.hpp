// spmat/io/file_io.hpp — streamed reading (plain or gzip, detected by magic bytes; files, pipes,
// standard input) and atomic writing (plain or gzip), shared by the Matrix Market reader/writer
// and the binary cache.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

namespace spmat::io {

/// A file, a pipe or standard input ("-") read front to back, inflated on the fly when it
/// starts with the gzip magic bytes 1f 8b. Nothing is sized by what the data claims: the
/// output arrives in the caller's buffer as it is inflated, the gzip trailer's size field is
/// not used, and concatenated gzip members are read as one stream. Errors are ParseErrors
/// naming the file (and the line, when the reader passed a line counter to `set_line`).
class InputStream {
 public:
  /// Opens `path` ("-" is standard input). `lenient`: bytes after the end of the gzip stream
  /// are ignored instead of refused. Throws ParseError "cannot open 'path': <reason>".
  explicit InputStream(const std::string& path, bool lenient = false);
  ~InputStream();
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  /// The name for messages: the path, or "<stdin>" for "-".
  const std::string& name() const { return name_; }
  bool gzip() const { return gzip_; }
  /// True for a regular file: then `file_size()` is its size on disk.
  bool regular() const { return regular_; }
  std::uint64_t file_size() const { return file_size_; }
  /// The first bytes of the file as stored (before inflating), up to 8.
  std::string_view magic() const { return {magic_, magic_len_}; }

  /// Reads up to `n` bytes of (inflated) data; 0 only at the end. At the end of a gzip stream
  /// the CRC has been checked by zlib and any bytes after it refused unless lenient. After a
  /// failure every later call throws the same error again (naming the line set then), so a
  /// reader that read ahead of its parser meets the error where the parser gets to it. The
  /// text inflated before a gzip error is returned before the error is thrown, so the error
  /// comes where the text stops, whatever the sizes of the reads.
  std::size_t read(void* out, std::size_t n);
  /// Bytes returned by read() so far (the text size for a Matrix Market file).
  std::uint64_t bytes_read() const { return out_total_; }
  /// Messages name `*line` ("path:line: ...") while set; nullptr: the file only.
  void set_line(const std::int64_t* line) { line_ = line; }

 private:
  [[noreturn]] void fail(const std::string& msg);
  // Fails now when nothing was produced, else at the next read.
  void fail_after(std::size_t produced, const std::string& msg);
  std::size_t read_raw(unsigned char* out, std::size_t n);
  bool fill_raw();  // more stored bytes into raw_; false at the end of the file
  std::size_t inflate_some(unsigned char* out, std::size_t n);

  std::string path_, name_;
  int fd_ = -1;
  bool own_fd_ = false, gzip_ = false, regular_ = false, lenient_ = false;
  bool eof_ = false, stream_done_ = false;
  std::uint64_t file_size_ = 0, out_total_ = 0;
  char magic_[8] = {};
  std::size_t magic_len_ = 0;
  std::unique_ptr<unsigned char[]> raw_;
  std::size_t raw_cap_ = 0, raw_pos_ = 0, raw_len_ = 0;
  void* z_ = nullptr;  // z_stream
  const std::int64_t* line_ = nullptr;
  std::string failed_;  // the message of the first failure, thrown again by every later read
};

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

/// This process's resident memory now and at its height (VmRSS and VmHWM on Linux; 0 when
/// unknown).
struct ResidentMemory {
  std::uint64_t bytes = 0;
  std::uint64_t peak_bytes = 0;
};
ResidentMemory resident_memory();
/// Starts a new height from the resident memory now (Linux: /proc/self/clear_refs), so that
/// resident_memory().peak_bytes afterwards is the height of what follows; false where the system
/// does not allow it (the height then stays the process's).
bool reset_resident_peak();

}  // namespace spmat::io
