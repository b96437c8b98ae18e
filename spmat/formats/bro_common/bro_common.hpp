// spmat/formats/bro_common/bro_common.hpp — BRO bit packing shared by BRO-ELL, BRO-COO, BRO-HYB:
// Γ (bit width), an MSB-first bit packer, the sliced/multiplexed stream encoder, and the
// warp-uniform stream readers used by the CPU and the CUDA kernels alike.
// SPDX-License-Identifier: MIT
//
// Bit order (spec §3.1, forced by Algorithm 1): MSB first. A symbol of sym_len bits is stored
// as an unsigned integer whose most significant of its sym_len bits is the first bit of the
// stream. Symbol q of row-thread t of a slice of height h sits at `sym_off[s] + q*h + t`, so a
// warp loads 32 consecutive symbols (multiplexing).
//
// Worked example (paper Fig. 1, spec §3.2; h = 2, sym_len = 4, deltas of the 4×5 example):
//   slice 0: widths {1,2,1,1,1} (b_p = 2): symbols {1100, 1011, 0000, 1100}
//   slice 1: widths {3,1,2}     (b_p = 2): symbols {0101, 1001, 1000, 0000}   — 32 bits in all.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "spmat/core/typed_options.hpp"

#if defined(__CUDACC__)
#define SPMAT_BRO_HD __host__ __device__ __forceinline__
#else
#define SPMAT_BRO_HD inline
#endif

namespace spmat::bro {

/// Γ(u): bits needed for u (⌊log2 u⌋ + 1), with Γ(0) = 0. Γ(4) = 3, Γ(1) = 1.
inline int gamma(std::uint64_t u) {
  int b = 0;
  while (u) {
    ++b;
    u >>= 1;
  }
  return b;
}

/// Space savings η = 1 − C/O of the index data (paper §4, spec §9.12). `original` is the index
/// bytes of the uncompressed format (ELLPACK: rows·k·I padded, as the paper's Fig. 1 counts;
/// COO: 2·nnz·I), `original_nnz` the unpadded nnz-based count, `compressed` the bit streams plus
/// any index array kept raw, `metadata` widths, offsets and base rows, `permutation` the BAR
/// row map (rows·I; not in the paper's η, reported apart and added by eta_all).
struct IndexSavings {
  std::size_t original = 0;
  std::size_t original_nnz = 0;
  std::size_t compressed = 0;
  std::size_t metadata = 0;
  std::size_t permutation = 0;
  /// η with metadata and the BAR row map counted.
  double eta_all() const {
    if (original == 0) return 0.0;
    return 1.0 - static_cast<double>(compressed + metadata + permutation) /
                     static_cast<double>(original);
  }
  /// η against `original` (with_metadata adds `metadata` to C). 0 when there is no index data.
  double eta(bool with_metadata) const {
    if (original == 0) return 0.0;
    return 1.0 - static_cast<double>(compressed + (with_metadata ? metadata : 0)) /
                     static_cast<double>(original);
  }
  /// η against the unpadded nnz-based index bytes.
  double eta_nnz(bool with_metadata) const {
    if (original_nnz == 0) return 0.0;
    return 1.0 - static_cast<double>(compressed + (with_metadata ? metadata : 0)) /
                     static_cast<double>(original_nnz);
  }
  IndexSavings& operator+=(const IndexSavings& o) {
    original += o.original;
    original_nnz += o.original_nnz;
    compressed += o.compressed;
    metadata += o.metadata;
    permutation += o.permutation;
    return *this;
  }
};

/// Largest delta a BRO stream may hold: widths are at most 32 bits (the readers' contract).
inline constexpr std::uint64_t kMaxDelta = 0xffffffffull;

/// Appends values of given widths MSB-first to a bit stream and cuts it into sym_len-bit
/// symbols (sym_len in 1..64); the last symbol is zero-padded (the b_p pad bits).
class BitPacker {
 public:
  explicit BitPacker(int sym_len) : sym_len_(sym_len) {}
  /// Appends the low `bits` bits of v (bits in 0..32; v < 2^bits is the caller's duty).
  void put(std::uint64_t v, int bits) {
    for (int i = bits - 1; i >= 0; --i) {
      cur_ = (cur_ << 1) | ((v >> i) & 1u);
      if (++fill_ == sym_len_) {
        out_.push_back(cur_);
        cur_ = 0;
        fill_ = 0;
      }
    }
  }
  /// Pads the open symbol with zeros and returns all symbols.
  std::vector<std::uint64_t> finish() {
    if (fill_ > 0) {
      out_.push_back(cur_ << (sym_len_ - fill_));
      cur_ = 0;
      fill_ = 0;
    }
    return std::move(out_);
  }

 private:
  int sym_len_;
  int fill_ = 0;
  std::uint64_t cur_ = 0;
  std::vector<std::uint64_t> out_;
};

/// A sliced, multiplexed BRO-ELL code (the index part of BRO-ELL, spec §3.4 with the §9.6
/// offsets). For slice s: l_s = width_off[s+1] - width_off[s] column positions, widths
/// `widths[width_off[s] .. +l_s)` (uint8, 1..32), and S_s = (sym_off[s+1]-sym_off[s])/h symbols
/// per row, symbol q of row t at `symbols[sym_off[s] + q*h + t]` (sym_len bits each).
struct SliceCode {
  int h = 0;
  int sym_len = 0;
  std::vector<std::int64_t> width_off{0};  ///< slices+1
  std::vector<std::uint8_t> widths;        ///< Σ l_s
  std::vector<std::int64_t> sym_off{0};    ///< slices+1 (in symbols)
  std::vector<std::uint64_t> symbols;      ///< sym_off.back()
};

/// Encodes per-row delta lists (row r: deltas[ptr[r] .. ptr[r+1]), every delta in 1..kMaxDelta)
/// into slices of h rows (the last slice is padded with empty rows). Position j of a slice gets
/// width b_j = max over its rows of Γ(δ_{r,j}), and rows shorter than l_s are padded with δ = 0
/// (the padding marker). Throws InvalidMatrixError for a zero or too large delta.
SliceCode encode_slices(const std::vector<std::int64_t>& ptr,
                        const std::vector<std::uint32_t>& deltas, int h, int sym_len);

/// Decodes row t of slice s of `code` back into its l_s deltas (padding included, as 0).
std::vector<std::uint32_t> decode_slice_row(const SliceCode& code, std::int64_t s, int t);

/// Packs symbols of `code` (sym_len 32 or 64) into the kernels' word arrays.
void store_symbols(const std::vector<std::uint64_t>& symbols, int sym_len,
                   std::vector<std::uint32_t>& sym32, std::vector<std::uint64_t>& sym64);

// -----------------------------------------------------------------------------------------------
// Readers: one per thread, over one multiplexed stream (symbols at p, p+stride, p+2*stride, ...).
// next(b) returns the next b-bit field (b in 0..32; b == 0 returns 0 and consumes nothing).
// A refill happens only when fewer than b bits remain (rb < b, spec §9.4), so a reader never
// loads past its stream's last symbol, and the branch depends only on the widths: it is
// warp-uniform whenever the lanes of a warp share the widths (one slice / one interval). No
// shift is ever by >= 64 (spec §9.5).
// -----------------------------------------------------------------------------------------------

template <class T>
SPMAT_BRO_HD T bro_load(const T* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

/// sym_len = 32: the spec's §3.5 reader, a 64-bit buffer holding rb valid bits top-aligned.
struct Reader32 {
  const std::uint32_t* p;
  std::int64_t stride;
  std::uint64_t buf = 0;
  int rb = 0;
  SPMAT_BRO_HD Reader32(const std::uint32_t* p0, std::int64_t s) : p(p0), stride(s) {}
  /// Loads the first symbol now (the stream must have one). Decoding is unchanged: the first
  /// refill would load the same word; priming only lets the load start earlier.
  SPMAT_BRO_HD void prime() {
    buf = static_cast<std::uint64_t>(bro_load(p)) << 32;
    p += stride;
    rb = 32;
  }
  SPMAT_BRO_HD std::uint32_t next(int b) {
    if (rb < b) {  // rb <= 31 here, so the shift is 1..32 and rb+32 <= 63 bits fit
      buf |= static_cast<std::uint64_t>(bro_load(p)) << (32 - rb);
      p += stride;
      rb += 32;
    }
    const std::uint32_t d = b ? static_cast<std::uint32_t>(buf >> (64 - b)) : 0u;
    buf <<= b;
    rb -= b;
    return d;
  }
};

/// sym_len = 64: a field may straddle two 64-bit symbols; the high part comes from the rb bits
/// left in the buffer, the low part from the top of the new symbol.
struct Reader64 {
  const std::uint64_t* p;
  std::int64_t stride;
  std::uint64_t buf = 0;
  int rb = 0;
  SPMAT_BRO_HD Reader64(const std::uint64_t* p0, std::int64_t s) : p(p0), stride(s) {}
  /// As Reader32::prime (the stream must have a symbol); rb = 64 is a valid state of next().
  SPMAT_BRO_HD void prime() {
    buf = bro_load(p);
    p += stride;
    rb = 64;
  }
  SPMAT_BRO_HD std::uint32_t next(int b) {
    if (b == 0) return 0u;
    if (rb >= b) {
      const std::uint32_t d = static_cast<std::uint32_t>(buf >> (64 - b));
      buf <<= b;
      rb -= b;
      return d;
    }
    const std::uint64_t s = bro_load(p);
    p += stride;
    const int need = b - rb;                                   // 1..32
    const std::uint64_t hi = rb ? (buf >> (64 - rb)) : 0ull;   // rb in 0..31
    const std::uint32_t d = static_cast<std::uint32_t>((hi << need) | (s >> (64 - need)));
    buf = s << need;
    rb = 64 - need;
    return d;
  }
};

template <class Sym>
struct ReaderFor;
template <>
struct ReaderFor<std::uint32_t> {
  using type = Reader32;
};
template <>
struct ReaderFor<std::uint64_t> {
  using type = Reader64;
};

/// Generic host reader over uint64 symbols of any sym_len in 1..64 (tests, to_csr of odd
/// sym_len codes). Same refill rule as the kernels' readers.
class HostReader {
 public:
  HostReader(const std::uint64_t* p, std::int64_t stride, int sym_len)
      : p_(p), stride_(stride), sym_len_(sym_len) {}
  std::uint64_t next(int b) {
    std::uint64_t d = 0;
    for (int i = 0; i < b; ++i) {
      if (rb_ == 0) {
        cur_ = *p_;
        p_ += stride_;
        rb_ = sym_len_;
      }
      --rb_;
      d = (d << 1) | ((cur_ >> rb_) & 1u);
    }
    return d;
  }

 private:
  const std::uint64_t* p_;
  std::int64_t stride_;
  int sym_len_;
  std::uint64_t cur_ = 0;
  int rb_ = 0;
};

// --- Options shared by the BRO formats (spmat/core/typed_options.hpp) --------------------------
// Fields on members of the same names in each format's options struct: sym_len, interval; and
// for the formats with a BRO-ELL storage (`ell_part`: the ELL part of bro-hyb, whose help says
// so) h, first, kernel, unroll, fit_bits, bar, bar_algo, bar_window.

template <class Opts>
OptionField<Opts> sym_len_option() {
  return int_choice_option("sym_len", &Opts::sym_len, {32, 64}, "symbol length in bits: 32 or 64");
}

template <class Opts>
OptionField<Opts> interval_option(std::string help) {
  return int_option("interval", &Opts::interval, 32, std::int64_t{1} << 24, 32, std::move(help));
}

/// h, sym_len, first, kernel, unroll, fit_bits.
template <class Opts>
OptionTable<Opts> slice_fields(bool ell_part) {
  return {
      int_option("h", &Opts::h, 32, 1024, 32,
                 ell_part ? "slice height of the BRO-ELL part: a multiple of 32 in 32..1024 (paper: 256)"
                          : "slice height: rows per slice, a multiple of 32 in 32..1024 (32 = one warp per "
                            "slice; paper: 256)"),
      sym_len_option<Opts>(),
      choice_option("first", &Opts::first, {"slice", "abs"},
                    ell_part ? "first-column coding of the BRO-ELL part: slice or abs (paper)"
                             : "first-column coding: slice (relative to the slice's smallest first column) "
                               "or abs (paper: column+1)"),
      choice_option("kernel", &Opts::kernel, {"fit", "batched", "classic"},
                    ell_part ? "CUDA spmv kernel of the BRO-ELL part: fit, batched or classic"
                             : "CUDA spmv kernel: fit (rows of <= 128 bits, see fit_bits, decoded by shifts; "
                               "other matrices run batched), batched (U fields decoded, then U loads at once) "
                               "or classic (one thread per row, the paper's decode loop)"),
      int_choice_option("unroll", &Opts::unroll, {4, 8}, "U of the batched CUDA kernel: 4 or 8"),
      int_choice_option("fit_bits", &Opts::fit_bits, {64, 128},
                        "longest row stream of the fit kernel: 128 (up to 4 symbols of 32 bits, 128-bit "
                        "shift decode) or 64 (one 64-bit word per row; longer rows run the batched kernel)")};
}

/// bar, bar_algo, bar_window.
template <class Opts>
OptionTable<Opts> bar_fields(bool ell_part) {
  return {bool_option("bar", &Opts::bar,
                      ell_part ? "1 = BAR row reordering of the BRO-ELL part (y in original order)"
                               : "1 = BAR row reordering (y still in the original row order)"),
          choice_option("bar_algo", &Opts::bar_algo, {"auto", "greedy", "fast"},
                        ell_part ? "BAR algorithm: greedy, fast, auto"
                                 : "BAR algorithm: greedy (Alg. 2), fast (windowed), auto (greedy when "
                                   "nnz·rows/h <= 2e8)"),
          int_option("bar_window", &Opts::bar_window, 0, 1 << 20,
                     ell_part ? "fast BAR: candidate clusters on either side of the home cluster"
                              : "fast BAR: candidate clusters on either side of a row's home cluster")};
}

}  // namespace spmat::bro
