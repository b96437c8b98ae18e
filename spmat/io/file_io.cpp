// spmat/io/file_io.cpp — streamed reading (plain/gzip, files and pipes), atomic buffered writing
// and the readers' memory limit.
// SPDX-License-Identifier: MIT
#include "spmat/io/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "spmat/core/error.hpp"
#include "spmat/io/read_options.hpp"

namespace spmat::io {

namespace {

[[noreturn]] void cannot_open(const std::string& path, int err) {
  throw ParseError("cannot open '" + path + "': " + std::strerror(err));
}

constexpr std::size_t kRawBuffer = std::size_t(1) << 20;

std::string mib_text(double bytes) {
  char buf[64];
  if (bytes >= double(std::uint64_t(1) << 30))
    std::snprintf(buf, sizeof buf, "%.3g GiB", bytes / double(std::uint64_t(1) << 30));
  else
    std::snprintf(buf, sizeof buf, "%.3g MiB", bytes / double(1 << 20));
  return buf;
}

}  // namespace

bool is_gzip_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  unsigned char m[2] = {0, 0};
  const bool gz = std::fread(m, 1, 2, f) == 2 && m[0] == 0x1f && m[1] == 0x8b;
  std::fclose(f);
  return gz;
}

InputStream::InputStream(const std::string& path, bool lenient)
    : path_(path), name_(path == "-" ? "<stdin>" : path), lenient_(lenient) {
  if (path == "-") {
    fd_ = 0;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) cannot_open(path, errno);
    own_fd_ = true;
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    if (own_fd_) ::close(fd_);
    cannot_open(path, e);
  }
  if (S_ISDIR(st.st_mode)) {
    if (own_fd_) ::close(fd_);
    cannot_open(path, EISDIR);
  }
  regular_ = S_ISREG(st.st_mode);
  file_size_ = regular_ ? static_cast<std::uint64_t>(st.st_size) : 0;
  // A small file gets a small buffer (a reader of many small files should not pay 1 MiB each).
  raw_cap_ = regular_ ? std::clamp<std::size_t>(file_size_ + 1, 64, kRawBuffer) : kRawBuffer;
  raw_.reset(new unsigned char[raw_cap_]);
  // A pipe may deliver its first bytes in several pieces: wait for the magic or the end.
  try {
    while (raw_len_ < 8 && fill_raw()) {
    }
  } catch (...) {
    if (own_fd_) ::close(fd_);
    throw;
  }
  magic_len_ = std::min<std::size_t>(raw_len_, 8);
  std::memcpy(magic_, raw_.get(), magic_len_);
  gzip_ = raw_len_ >= 2 && raw_[0] == 0x1f && raw_[1] == 0x8b;
  if (gzip_) {
    auto* z = new z_stream{};
    if (inflateInit2(z, 16 + MAX_WBITS) != Z_OK) {  // 16: a gzip wrapper, not zlib
      delete z;
      if (own_fd_) ::close(fd_);
      throw OutOfMemoryError("cannot start inflating '" + name_ + "': zlib could not initialise");
    }
    z_ = z;
  }
}

InputStream::~InputStream() {
  if (z_) {
    inflateEnd(static_cast<z_stream*>(z_));
    delete static_cast<z_stream*>(z_);
  }
  if (own_fd_) ::close(fd_);
}

void InputStream::fail_after(std::size_t produced, const std::string& msg) {
  // The text inflated before the error is delivered first, so that the error comes where the
  // text stops, whatever the sizes of the reads that got there.
  if (produced == 0) fail(msg);
  failed_ = msg;
}

void InputStream::fail(const std::string& msg) {
  failed_ = msg;
  throw ParseError(name_ + (line_ ? ":" + std::to_string(*line_) : std::string()) + ": " + msg);
}

bool InputStream::fill_raw() {
  if (eof_) return false;
  if (raw_pos_ == raw_len_) {
    raw_pos_ = raw_len_ = 0;
  } else if (raw_len_ == raw_cap_ && raw_pos_ > 0) {
    std::memmove(raw_.get(), raw_.get() + raw_pos_, raw_len_ - raw_pos_);
    raw_len_ -= raw_pos_;
    raw_pos_ = 0;
  }
  if (raw_len_ == raw_cap_) return true;
  ssize_t n;
  do n = ::read(fd_, raw_.get() + raw_len_, raw_cap_ - raw_len_);
  while (n < 0 && errno == EINTR);
  if (n < 0) fail(std::string("cannot read: ") + std::strerror(errno));
  if (n == 0) {
    eof_ = true;
    return false;
  }
  raw_len_ += static_cast<std::size_t>(n);
  return true;
}

std::size_t InputStream::read_raw(unsigned char* out, std::size_t n) {
  if (raw_pos_ < raw_len_) {
    const std::size_t c = std::min(n, raw_len_ - raw_pos_);
    std::memcpy(out, raw_.get() + raw_pos_, c);
    raw_pos_ += c;
    return c;
  }
  if (eof_) return 0;
  ssize_t got;
  do got = ::read(fd_, out, n);
  while (got < 0 && errno == EINTR);
  if (got < 0) fail(std::string("cannot read: ") + std::strerror(errno));
  if (got == 0) eof_ = true;
  return static_cast<std::size_t>(got);
}

std::size_t InputStream::inflate_some(unsigned char* out, std::size_t n) {
  auto* z = static_cast<z_stream*>(z_);
  const auto text = [&] { return " after " + std::to_string(out_total_) + " bytes of text"; };
  for (;;) {
    if (stream_done_) return 0;
    if (raw_pos_ == raw_len_ && !fill_raw())
      fail("the gzip data is truncated (unexpected end of file)" + text() +
           "; expected a complete gzip stream");
    const std::size_t in_before = raw_len_ - raw_pos_;
    const std::size_t out_room = std::min<std::size_t>(n, std::size_t(1) << 30);
    z->next_in = raw_.get() + raw_pos_;
    z->avail_in = static_cast<uInt>(in_before);
    z->next_out = out;
    z->avail_out = static_cast<uInt>(out_room);
    const int rc = inflate(z, Z_NO_FLUSH);
    raw_pos_ += in_before - z->avail_in;
    const std::size_t produced = out_room - z->avail_out;
    if (rc == Z_STREAM_END) {
      // The member ended (its CRC and length checked by zlib). Another member may follow (a
      // concatenation is one gzip stream); anything else is trailing data.
      while (raw_len_ - raw_pos_ < 2 && fill_raw()) {
      }
      const std::size_t left = raw_len_ - raw_pos_;
      if (left == 0) {
        stream_done_ = true;
      } else if (left >= 2 && raw_[raw_pos_] == 0x1f && raw_[raw_pos_ + 1] == 0x8b) {
        inflateReset(z);
      } else if (lenient_) {
        stream_done_ = true;
      } else {
        fail_after(produced, "found data after the end of the gzip stream (" +
                                 std::to_string(out_total_ + produced) +
                                 " bytes of text); expected the end of the file (lenient reading "
                                 "ignores trailing data)");
      }
    } else if (rc == Z_BUF_ERROR || rc == Z_OK) {
      if (produced == 0 && in_before == raw_len_ - raw_pos_ && rc == Z_BUF_ERROR && in_before > 0)
        fail("the gzip data is corrupt (no progress)" + text() + "; expected a complete gzip stream");
    } else {
      fail_after(produced, "the gzip data is corrupt (" + std::string(z->msg ? z->msg : "inflate error") +
                               ") after " + std::to_string(out_total_ + produced) +
                               " bytes of text; expected a complete gzip stream");
    }
    if (produced > 0) return produced;
  }
}

std::size_t InputStream::read(void* out, std::size_t n) {
  if (!failed_.empty()) fail(std::string(failed_));
  if (n == 0) return 0;
  auto* o = static_cast<unsigned char*>(out);
  const std::size_t got = gzip_ ? inflate_some(o, n) : read_raw(o, n);
  out_total_ += got;
  return got;
}

std::uint64_t parse_byte_size(std::string_view text, const std::string& what) {
  auto bad = [&]() -> std::uint64_t {
    throw ParseError(what + "='" + std::string(text) +
                     "' is not a size; expected a number of bytes with an optional K, M, G or T "
                     "suffix (e.g. 8G)");
  };
  std::size_t i = 0;
  std::uint64_t v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (v > (UINT64_MAX - 9) / 10) bad();
    v = v * 10 + static_cast<std::uint64_t>(text[i++] - '0');
  }
  if (i == 0) bad();
  int shift = 0;
  if (i < text.size()) {
    switch (text[i] | 0x20) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      case 't': shift = 40; break;
      default: bad();
    }
    ++i;
    std::string_view rest = text.substr(i);
    if (!(rest.empty() || rest == "B" || rest == "b" || rest == "iB" || rest == "ib")) bad();
  }
  if (shift && v > (UINT64_MAX >> shift)) bad();
  if ((v << shift) == 0) bad();
  return v << shift;
}

namespace {

constexpr std::uint64_t kDefaultBase = std::uint64_t(64) << 20;
constexpr std::uint64_t kDefaultPerByte = 64;

struct Limit {
  std::uint64_t bytes;
  std::string why;
};

Limit find_limit(const ReadOptions& o, std::uint64_t input_bytes) {
  Limit l;
  if (o.max_memory) {
    l = {o.max_memory, "set by ReadOptions::max_memory"};
  } else if (const char* e = std::getenv("SPMAT_MAX_MEMORY"); e && *e) {
    l = {parse_byte_size(e, "SPMAT_MAX_MEMORY"), "set by SPMAT_MAX_MEMORY"};
  } else {
    const std::uint64_t per = input_bytes > (UINT64_MAX - kDefaultBase) / kDefaultPerByte
                                  ? UINT64_MAX - kDefaultBase
                                  : input_bytes * kDefaultPerByte;
    l = {kDefaultBase + per, "the default: 64 MiB + 64 x the " + std::to_string(input_bytes) +
                                 " bytes of input; set SPMAT_MAX_MEMORY (e.g. 16G) to raise it"};
  }
  const std::uint64_t avail = available_memory_bytes();
  if (avail > 0 && avail < l.bytes) l = {avail, "the memory available now"};
  return l;
}

}  // namespace

std::uint64_t memory_limit(const ReadOptions& options, std::uint64_t input_bytes) {
  return find_limit(options, input_bytes).bytes;
}

void check_memory(const ReadOptions& options, double need, std::uint64_t input_bytes,
                  const std::string& where, const std::string& what) {
  const Limit l = find_limit(options, input_bytes);
  if (need > double(l.bytes))
    throw OutOfMemoryError(where + ": reading this matrix needs about " + mib_text(need) + " (" + what +
                           "), more than the memory limit of " + mib_text(double(l.bytes)) + " (" +
                           l.why + ")");
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

namespace {
/// The value in kB of the line "`key` N kB" of a /proc file, times 1024; 0 when absent.
std::uint64_t proc_kb_field(const char* path, const char* key) {
  std::uint64_t bytes = 0;
  if (std::FILE* f = std::fopen(path, "r")) {
    char line[256];
    const std::size_t n = std::strlen(key);
    while (std::fgets(line, sizeof line, f))
      if (std::strncmp(line, key, n) == 0) {
        bytes = std::strtoull(line + n, nullptr, 10) * 1024;
        break;
      }
    std::fclose(f);
  }
  return bytes;
}
}  // namespace

std::uint64_t available_memory_bytes() {
  if (const std::uint64_t b = proc_kb_field("/proc/meminfo", "MemAvailable:")) return b;
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

ResidentMemory resident_memory() {
  return {proc_kb_field("/proc/self/status", "VmRSS:"), proc_kb_field("/proc/self/status", "VmHWM:")};
}

bool reset_resident_peak() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

}  // namespace spmat::io
