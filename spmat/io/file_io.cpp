// spmat/io/file_io.cpp — whole-file reading (plain/gzip) and atomic buffered writing.
// SPDX-License-Identifier: MIT
#include "spmat/io/file_io.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "spmat/core/error.hpp"

namespace spmat::io {

namespace {

[[noreturn]] void cannot_open(const std::string& path, int err) {
  throw ParseError("cannot open '" + path + "': " + std::strerror(err));
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

FilePtr open_for_read(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) cannot_open(path, errno);
  if (S_ISDIR(st.st_mode)) cannot_open(path, EISDIR);
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) cannot_open(path, errno);
  return f;
}

// Grows `buf` to hold at least `need` bytes (+2 for the sentinel), doubling.
void reserve_bytes(FileBytes& b, std::size_t& cap, std::size_t need) {
  if (need + 2 <= cap) return;
  std::size_t c = std::max<std::size_t>(cap, 1 << 20);
  while (c < need + 2) c *= 2;
  char* p = static_cast<char*>(std::realloc(b.data.get(), c));
  if (!p) throw OutOfMemoryError("out of memory reading a file (" + std::to_string(c) + " bytes)");
  b.data.release();
  b.data.reset(p);
  cap = c;
}

void add_sentinel(FileBytes& b) {
  char* d = b.data.get();
  if (b.size == 0 || d[b.size - 1] != '\n') {
    d[b.size] = '\n';
    d[b.size + 1] = '\0';
  } else {
    d[b.size] = '\0';
  }
}

}  // namespace

bool is_gzip_file(const std::string& path) {
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) return false;
  unsigned char m[2] = {0, 0};
  return std::fread(m, 1, 2, f.get()) == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

FileBytes read_file_bytes(const std::string& path, std::size_t max_bytes) {
  FilePtr f = open_for_read(path);
  struct stat st {};
  ::fstat(fileno(f.get()), &st);
  FileBytes b;
  b.disk_size = static_cast<std::size_t>(st.st_size);
  unsigned char magic[2] = {0, 0};
  const std::size_t got = std::fread(magic, 1, 2, f.get());
  b.gzip = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  std::size_t cap = 0;
  if (!b.gzip) {
    const std::size_t want = std::min(b.disk_size, max_bytes);
    reserve_bytes(b, cap, want);
    std::rewind(f.get());
    b.size = std::fread(b.data.get(), 1, want, f.get());
    if (b.size != want && std::ferror(f.get()))
      throw ParseError("cannot read '" + path + "': " + std::strerror(errno));
    add_sentinel(b);
    return b;
  }
  // The gzip trailer holds the uncompressed size mod 2^32 (of the last member): a good first
  // guess for the buffer; a wrong one only costs a few reallocations.
  std::size_t guess = std::max<std::size_t>(b.disk_size * 4, 1 << 16);
  unsigned char trailer[4];
  if (b.disk_size >= 18 && std::fseek(f.get(), -4, SEEK_END) == 0 &&
      std::fread(trailer, 1, 4, f.get()) == 4) {
    const std::size_t isize = std::size_t(trailer[0]) | std::size_t(trailer[1]) << 8 |
                              std::size_t(trailer[2]) << 16 | std::size_t(trailer[3]) << 24;
    if (isize >= b.disk_size) guess = isize + 1;
  }
  f.reset();
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) cannot_open(path, errno ? errno : ENOMEM);
  gzbuffer(gz, 1 << 20);
  reserve_bytes(b, cap, std::min(max_bytes, guess));
  for (;;) {
    if (b.size >= max_bytes) break;
    if (b.size + 2 >= cap) reserve_bytes(b, cap, cap * 2);
    const std::size_t room = std::min({cap - 2 - b.size, max_bytes - b.size, std::size_t(1) << 30});
    const int n = gzread(gz, b.data.get() + b.size, static_cast<unsigned>(room));
    if (n < 0) break;
    b.size += static_cast<std::size_t>(n);
    if (n == 0) break;
  }
  int err = Z_OK;
  const char* msg = gzerror(gz, &err);
  const std::string why = msg ? msg : "";
  gzclose(gz);
  if (err != Z_OK && b.size < max_bytes) {
    const std::size_t lines =
        static_cast<std::size_t>(std::count(b.begin(), b.begin() + b.size, '\n')) + 1;
    const bool truncated = err == Z_BUF_ERROR;
    throw ParseError(path + ":" + std::to_string(lines) + ": " +
                     (truncated ? "the gzip data is truncated (unexpected end of file)"
                                : "the gzip data is corrupt (" + why + ")") +
                     " after " + std::to_string(b.size) +
                     " bytes of text; expected a complete gzip stream");
  }
  reserve_bytes(b, cap, b.size);
  add_sentinel(b);
  return b;
}

FileWriter::FileWriter(const std::string& path, bool gzip)
    : path_(path), part_(path + ".part"), gzip_(gzip) {
  if (gzip_) {
    gzFile g = gzopen(part_.c_str(), "wb6");
    if (!g) fail("cannot create");
    gzbuffer(g, 1 << 20);
    handle_ = g;
  } else {
    std::FILE* f = std::fopen(part_.c_str(), "wb");
    if (!f) fail("cannot create");
    handle_ = f;
  }
}

FileWriter::~FileWriter() {
  if (!handle_) return;
  if (gzip_) gzclose(static_cast<gzFile>(handle_));
  else std::fclose(static_cast<std::FILE*>(handle_));
  std::remove(part_.c_str());
}

void FileWriter::fail(const std::string& what) {
  const int e = errno;
  throw ParseError(what + " '" + path_ + "': " + (e ? std::strerror(e) : "write failed"));
}

void FileWriter::write(const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const std::size_t c = std::min<std::size_t>(n, std::size_t(1) << 30);
    if (gzip_) {
      if (gzwrite(static_cast<gzFile>(handle_), p, static_cast<unsigned>(c)) != static_cast<int>(c))
        fail("cannot write");
    } else if (std::fwrite(p, 1, c, static_cast<std::FILE*>(handle_)) != c) {
      fail("cannot write");
    }
    p += c;
    n -= c;
  }
}

void FileWriter::commit() {
  void* h = handle_;
  handle_ = nullptr;
  const int rc = gzip_ ? gzclose(static_cast<gzFile>(h)) : std::fclose(static_cast<std::FILE*>(h));
  if (rc != 0) {
    std::remove(part_.c_str());
    fail("cannot write");
  }
  if (std::rename(part_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    std::remove(part_.c_str());
    errno = e;
    fail("cannot create");
  }
}

std::uint64_t available_memory_bytes() {
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kb = 0;
    bool found = false;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
        found = true;
        break;
      }
    std::fclose(f);
    if (found) return static_cast<std::uint64_t>(kb) * 1024;
  }
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

}  // namespace spmat::io
