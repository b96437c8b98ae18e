// tests/fuzz/fuzz_support.hpp — what the libFuzzer harnesses share: the input as a file path
// (the readers take paths), and a crash that libFuzzer reports with the input.
// SPDX-License-Identifier: MIT
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace spmat::fuzz {

/// The input as a regular in-memory file (memfd), named by a /proc/self/fd path: no disk I/O
/// per input, and the reader sees a regular file with a size, as it would on disk.
inline std::string as_file(const std::uint8_t* data, std::size_t size, int slot = 0) {
  static int fds[2] = {-1, -1};
  int& fd = fds[slot];
  if (fd < 0) fd = ::memfd_create(slot ? "spmat-fuzz-1" : "spmat-fuzz-0", 0);
  if (fd < 0 || ::ftruncate(fd, 0) != 0 ||
      (size > 0 && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))) {
    std::perror("spmat fuzz: memfd");
    std::abort();
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

/// A scratch path for files the harness writes (the writer renames a ".part" file into it).
inline std::string scratch_path(const char* ext) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/spmat_fuzz_" + std::to_string(::getpid()) + ext;
}

/// A property the harness checks does not hold: report it and crash, so that libFuzzer keeps
/// the input.
[[noreturn]] inline void broken(const std::string& what) {
  std::fprintf(stderr, "spmat fuzz: %s\n", what.c_str());
  std::abort();
}

}  // namespace spmat::fuzz
