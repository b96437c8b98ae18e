// spmat/core/bytes.hpp — unaligned little-endian loads and stores into byte streams.
// SPDX-License-Identifier: MIT
//
// The compressed formats (bccoo, hisparse) pack mixed-width fields into one byte array, so a
// field may start at any address: memcpy is the portable unaligned access and is clean under UBSan.
#pragma once
#include <cstdint>
#include <cstring>

namespace spmat::bytes {

template <class T>
inline T load(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
inline void store(std::uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

}  // namespace spmat::bytes
