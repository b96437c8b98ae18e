// tests/support/temp_files.hpp — scratch files for the reader and writer tests: a per-process
// directory under gtest's TempDir, and whole-file writes (plain or through the library's gzip
// writer) and reads.
// SPDX-License-Identifier: MIT
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "spmat/io/file_io.hpp"

namespace spmat::testing {

/// Makes and returns TempDir()/<prefix><pid>: the pid keeps concurrent test processes apart.
inline std::string make_temp_dir(const std::string& prefix) {
  const std::filesystem::path p =
      std::filesystem::path(::testing::TempDir()) / (prefix + std::to_string(::getpid()));
  std::filesystem::create_directories(p);
  return p.string();
}

/// Writes `text` to `path` as it is; returns the path.
inline std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

/// Writes `text` gzip-compressed through the library's own writer (one gzip member).
inline std::string write_gzip_file(const std::string& path, const std::string& text) {
  spmat::io::FileWriter w(path, true);
  w.write(text.data(), text.size());
  w.commit();
  return path;
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace spmat::testing
