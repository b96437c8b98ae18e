// tests/fuzz/fuzz_binary_cache.cpp — libFuzzer harness of the .smc reader: any input gives a
// valid CSR or a spmat::Error; nothing is allocated for sizes the bytes do not back. The
// checksum would stop almost every mutation at once, so an input whose first byte is odd has
// its checksum recomputed first: the fuzzer then reaches the structure checks behind it.
// SPDX-License-Identifier: MIT
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "spmat/core/csr.hpp"
#include "spmat/io/binary_cache.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

template <class V, class I>
void read(const std::string& path) {
  try {
    const auto a = spmat::io::read_binary_cache<V, I>(path);
    a.validate("fuzzed cache");
  } catch (const spmat::InvalidMatrixError& e) {
    spmat::fuzz::broken(std::string("the reader returned an invalid CSR: ") + e.what());
  } catch (const spmat::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint8_t> bytes(data, data + size);
  if (size >= 64 && (data[0] & 1)) {
    // Byte 0 is part of the magic: make it 'S' again, then fix the CRC-32 (field at 48, read
    // as 0 while computing it).
    bytes[0] = 'S';
    std::memset(bytes.data() + 48, 0, 8);
    const std::uint64_t crc = crc32(crc32(0, nullptr, 0), bytes.data(), static_cast<uInt>(bytes.size()));
    std::memcpy(bytes.data() + 48, &crc, 8);
  }
  const std::string path = spmat::fuzz::as_file(bytes.data(), bytes.size());
  read<double, std::int32_t>(path);
  read<float, std::int64_t>(path);
  return 0;
}
