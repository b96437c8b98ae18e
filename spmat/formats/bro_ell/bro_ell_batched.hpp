// spmat/formats/bro_ell/bro_ell_batched.hpp — the batched BRO-ELL row decode shared by the CUDA
// kernel (bro_ell_cuda.cu) and its host emulation in the CPU tests (bro_ell_test.cpp).
// SPDX-License-Identifier: MIT
//
// The classic loop (spec §3.5) issues one value load and one x load per decoded field and waits
// for them before the next field (an in-order GPU stalls on the FMA), so a row of l entries costs
// l memory latencies. Here U fields are decoded first (register-only work plus an occasional
// warp-uniform symbol refill), then the U value loads and U x loads are issued together, then
// the U multiply-adds run in column order (same sums, same order as the classic loop, padding
// skipped). Widths come from a Widths source: load(c0) fetches positions c0..c0+31, get(k)
// returns position c0+k's width (0 past the row's l, which decodes as padding and consumes no
// bits). On the GPU load is one coalesced uint8 load per lane and get a warp shuffle; on the
// host (HostWidths) a plain array read.
#pragma once
#include <cstdint>

#include "spmat/formats/bro_common/bro_common.hpp"

#if defined(__CUDACC__)
#define SPMAT_BRO_UNROLL _Pragma("unroll")
#else
#define SPMAT_BRO_UNROLL
#endif

namespace spmat::bro {

/// Host width source: widths w[0..len), 0 beyond.
struct HostWidths {
  const std::uint8_t* w;
  std::int64_t len;
  std::int64_t c0 = 0;
  void load(std::int64_t c) { c0 = c; }
  int get(int k) const { return c0 + k < len ? w[c0 + k] : 0; }
};

/// The load-and-multiply half of a U-field step: for the decoded columns cc[0..U) (−1: padding,
/// neither loaded nor added), the values v[u·h] and x[cc[u]] loaded together, then
/// sum += value·x in column order.
template <int U, class Index, class Value>
SPMAT_BRO_HD void multiply_fields(const Index (&cc)[U], const Value* v, std::int64_t h,
                                  const Value* x, Value& sum) {
  Value a[U], xv[U];
  SPMAT_BRO_UNROLL
  for (int u = 0; u < U; ++u) {
    a[u] = Value(0);
    xv[u] = Value(0);
    if (cc[u] >= 0) {
      a[u] = bro_load(v + static_cast<std::int64_t>(u) * h);
      xv[u] = bro_load(x + cc[u]);
    }
  }
  SPMAT_BRO_UNROLL
  for (int u = 0; u < U; ++u)
    if (cc[u] >= 0) sum += a[u] * xv[u];
}

/// Σ over the row's stored entries of v[c·h]·x[col] in column order, decoding with rd (already
/// positioned, optionally primed) and the widths of wd; col starts at the slice's start column
/// (col_base − 1). U must divide 32. Explicit zeros are multiplied; padding (δ = 0) is skipped.
template <int U, class Index, class Reader, class Widths, class Value>
SPMAT_BRO_HD Value batched_row(Reader& rd, Widths& wd, std::int64_t len, const Value* v,
                               std::int64_t h, const Value* x, std::int64_t col) {
  static_assert(U >= 1 && 32 % U == 0, "U must divide 32");
  Value sum = 0;
  for (std::int64_t c0 = 0; c0 < len; c0 += 32) {
    wd.load(c0);
    const int n = len - c0 < 32 ? static_cast<int>(len - c0) : 32;
    for (int u0 = 0; u0 < n; u0 += U) {  // u0 + u <= 31: get() stays inside the loaded chunk
      Index cc[U];
      SPMAT_BRO_UNROLL
      for (int u = 0; u < U; ++u) {
        const std::uint32_t d = rd.next(wd.get(u0 + u));
        col += d;
        cc[u] = d ? static_cast<Index>(col) : Index(-1);
      }
      multiply_fields(cc, v + (c0 + u0) * h, h, x, sum);
    }
  }
  return sum;
}

/// Exact-fit decode (kernel=fit): the row's whole bit stream is at most 64 bits (sym_len 32 with
/// at most 2 symbols per row, or sym_len 64 with at most 1) and the slice has l ≤ 32 positions.
/// fit_word loads it once, top-aligned (symbol 0 in the high half); fit_row then decodes with
/// shifts only — no reader pointer, no refill branch, no bit counter — U fields at a time,
/// followed by their U value loads and U x loads and the U multiply-adds in column order (the
/// classic loop's sums in the classic loop's order). wd.get(k) = width of position k (0 past l:
/// decodes as padding, consumes no bits; (buf >> 1) >> (63 − b) is 0 for b = 0, no shift by 64).
template <class Sym>
SPMAT_BRO_HD std::uint64_t fit_word(const Sym* p, std::int64_t h, std::int64_t nsym) {
  if constexpr (sizeof(Sym) == 8) {
    (void)h;
    return nsym > 0 ? bro_load(p) : 0ull;
  } else {
    const std::uint64_t hi = nsym > 0 ? static_cast<std::uint64_t>(bro_load(p)) << 32 : 0ull;
    return nsym > h ? hi | bro_load(p + h) : hi;
  }
}

/// The fit kernel's bit buffers. take(b) returns the next b bits (0 ≤ b ≤ 32; b = 0 returns 0
/// and consumes nothing) by shifts only: (hi >> 1) >> (63 − b) is the top b bits of hi without a
/// shift by 64. FitBits128 is a 128-bit shift register (hi:lo) for rows of up to 128 bits.
struct FitBits64 {
  std::uint64_t hi;
  SPMAT_BRO_HD std::uint32_t take(int b) {
    const auto d = static_cast<std::uint32_t>((hi >> 1) >> (63 - b));
    hi <<= b;
    return d;
  }
};
struct FitBits128 {
  std::uint64_t hi, lo;
  SPMAT_BRO_HD std::uint32_t take(int b) {
    const auto d = static_cast<std::uint32_t>((hi >> 1) >> (63 - b));
    hi = (hi << b) | ((lo >> 1) >> (63 - b));
    lo <<= b;
    return d;
  }
};

/// Loads a row's stream of up to 128 bits (nsym ≤ 4·h symbols of 32 bits or ≤ 2·h of 64 bits
/// in the slice), top-aligned: symbol 0 in the high bits of hi. Symbols past the slice's stream
/// read as 0 (branches depend on nsym only: uniform over the slice).
template <class Sym>
SPMAT_BRO_HD FitBits128 fit_bits128(const Sym* p, std::int64_t h, std::int64_t nsym) {
  if constexpr (sizeof(Sym) == 8) {
    return {nsym > 0 ? bro_load(p) : 0ull, nsym > h ? bro_load(p + h) : 0ull};
  } else {
    auto w = [&](int k) -> std::uint64_t { return nsym > k * h ? bro_load(p + k * h) : 0u; };
    return {w(0) << 32 | w(1), w(2) << 32 | w(3)};
  }
}

/// The fit decode over any FitBits buffer: U fields decoded by shifts (widths wd.get(k), 0 past
/// l), then U value loads and U x loads, then U multiply-adds in column order.
template <int U, class Index, class Bits, class Widths, class Value>
SPMAT_BRO_HD Value fit_row_bits(Bits bits, const Widths& wd, int len, const Value* v,
                                std::int64_t h, const Value* x, Index col) {
  static_assert(U >= 1 && 32 % U == 0, "U must divide 32");
  Value sum = 0;
  for (int c0 = 0; c0 < len; c0 += U) {  // len <= 32, so c0 + u <= 31
    Index cc[U];
    SPMAT_BRO_UNROLL
    for (int u = 0; u < U; ++u) {
      const std::uint32_t d = bits.take(wd.get(c0 + u));
      col += static_cast<Index>(d);
      cc[u] = d ? col : Index(-1);
    }
    multiply_fields(cc, v + static_cast<std::int64_t>(c0) * h, h, x, sum);
  }
  return sum;
}

/// One-word fit decode (rows of ≤ 64 bits, buf from fit_word).
template <int U, class Index, class Widths, class Value>
SPMAT_BRO_HD Value fit_row(std::uint64_t buf, const Widths& wd, int len, const Value* v,
                           std::int64_t h, const Value* x, Index col) {
  return fit_row_bits<U, Index>(FitBits64{buf}, wd, len, v, h, x, col);
}

}  // namespace spmat::bro
