// spmat/formats/bccoo/bccoo.cpp — BCCOO: value table, encoders, decoders (to_csr), traffic model,
// registry entries of bccoo and bccoo-gpu.
// SPDX-License-Identifier: MIT
#include "spmat/formats/bccoo/bccoo.hpp"

#include <limits>
#include <string>

#include "spmat/core/typed_options.hpp"
#include "spmat/formats/bcoo/bcoo.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

namespace bccoo {

template <class Value>
Lut<Value> build_lut(const std::vector<Value>& values) {
  using B = Bits<Value>;
  std::vector<B> bits(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) bits[i] = std::bit_cast<B>(values[i]);
  std::sort(bits.begin(), bits.end());
  std::vector<std::pair<std::int64_t, B>> runs;  // (−count, pattern): ascending = the LUT order
  for (std::size_t i = 0; i < bits.size();) {
    std::size_t j = i;
    while (j < bits.size() && bits[j] == bits[i]) ++j;
    runs.emplace_back(-static_cast<std::int64_t>(j - i), bits[i]);
    i = j;
  }
  const std::size_t n = std::min<std::size_t>(runs.size(), kLutSize);
  std::partial_sort(runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(n), runs.end());
  Lut<Value> t;
  t.lut.assign(kLutSize, Value(0));
  for (std::size_t i = 0; i < n; ++i) {
    t.lut[i] = std::bit_cast<Value>(runs[i].second);
    t.sorted.emplace_back(runs[i].second, static_cast<std::uint8_t>(i));
  }
  std::sort(t.sorted.begin(), t.sorted.end());
  return t;
}

namespace {

/// Row of entry p (row_ptr[r] <= p < row_ptr[r+1], the row must be non-empty).
template <class Index>
std::int64_t row_of_entry(const std::vector<Index>& row_ptr, std::int64_t p) {
  return (std::upper_bound(row_ptr.begin(), row_ptr.end(), p,
                           [](std::int64_t v, Index e) { return v < static_cast<std::int64_t>(e); }) -
          row_ptr.begin()) - 1;
}

/// Encodes chunk h of the CPU stream into `out` (or only counts its bytes when out == nullptr).
template <class Value, class Index>
std::int64_t encode_chunk(const Csr<Value, Index>& a, const Lut<Value>& lut, std::int64_t b,
                          std::int64_t h, std::uint8_t* out) {
  const std::int64_t nnz = a.nnz(), rows = a.rows;
  const std::int64_t p0 = h * b, p1 = std::min(nnz, p0 + b);
  std::int64_t pos = 0;
  auto put = [&](std::uint8_t v) {
    if (out) out[pos] = v;
    ++pos;
  };
  std::int64_t r = row_of_entry(a.row_ptr, p0), cprev = 0;
  for (std::int64_t q = p0; q < p1; ++q) {
    const std::int64_t j = a.col_idx[q], d = j - cprev;
    const int li = lut.find(a.values[q]);
    const std::uint8_t f = li >= 0 ? kLutFlag : 0;
    if (d >= 0 && d <= kMaxInline) {
      put(static_cast<std::uint8_t>(f | d));
    } else if (d >= 0 && d <= 0xFFFF) {
      put(f | kDelta16);
      if (out) store(out + pos, static_cast<std::uint16_t>(d));
      pos += 2;
    } else {
      put(f | kAbsolute);
      if (out) store(out + pos, static_cast<std::uint32_t>(j));
      pos += 4;
    }
    if (li >= 0) {
      put(static_cast<std::uint8_t>(li));
    } else {
      if (out) store(out + pos, a.values[q]);
      pos += sizeof(Value);
    }
    cprev = j;
    if (q == static_cast<std::int64_t>(a.row_ptr[r + 1]) - 1) {  // last entry of row r
      put(kMarker);
      std::int64_t next = r + 1;
      while (next < rows && a.row_ptr[next + 1] == a.row_ptr[next]) ++next;
      if (next < rows)  // interior empty rows r+1 .. next-1: one marker each
        for (std::int64_t e = r + 1; e < next; ++e) put(kMarker);
      r = next;
    }
  }
  return pos;
}

void put_uint(std::uint8_t* p, int w, std::uint64_t v) {
  switch (w) {
    case 1: *p = static_cast<std::uint8_t>(v); break;
    case 2: store(p, static_cast<std::uint16_t>(v)); break;
    case 4: store(p, static_cast<std::uint32_t>(v)); break;
    default: store(p, static_cast<std::uint64_t>(v)); break;
  }
}

/// Rebuilds canonical CSR from any chunk visitor (entries arrive in row-major order).
template <class Value, class Index, class Fmt>
Csr<Value, Index> decode(const Fmt& s) {
  Csr<Value, Index> c;
  c.rows = s.rows;
  c.cols = s.cols;
  c.row_ptr.assign(static_cast<std::size_t>(s.rows) + 1, 0);
  c.col_idx.reserve(static_cast<std::size_t>(s.nnz));
  c.values.reserve(static_cast<std::size_t>(s.nnz));
  for (std::int64_t h = 0; h < s.chunks(); ++h)
    s.visit(h, [&](std::int64_t r, std::int64_t col, Value v) {
      if (r < 0 || r >= s.rows || col < 0 || col >= s.cols)
        throw InvalidMatrixError("bccoo: corrupt stream in chunk " + std::to_string(h) +
                                 " (entry at row " + std::to_string(r) + ", column " +
                                 std::to_string(col) + ")");
      ++c.row_ptr[static_cast<std::size_t>(r) + 1];
      c.col_idx.push_back(static_cast<Index>(col));
      c.values.push_back(v);
    });
  for (Index r = 0; r < s.rows; ++r) c.row_ptr[r + 1] += c.row_ptr[r];
  return c;
}

}  // namespace
}  // namespace bccoo

const OptionTable<BccooOptions>& BccooOptions::fields() {
  static const OptionTable<BccooOptions> t{chunk_option(&BccooOptions::chunk)};
  return t;
}

const OptionTable<BccooGpuOptions>& BccooGpuOptions::fields() {
  using O = BccooGpuOptions;
  static const OptionTable<O> t{
      chunk_option(&O::chunk),
      enum_option("kernel", &O::kernel,
                  {{"auto", std::nullopt},
                   {"stream", BccooGpuKernel::stream},
                   {"block", BccooGpuKernel::block},
                   {"atomic", BccooGpuKernel::atomic}},
                  "CUDA spmv kernel: auto (block when more than half of the chunks are raw "
                  "(no value table) with 4- or 8-byte column offsets, i.e. scattered x "
                  "gathers; else stream), "
                  "stream (persistent blocks, 8 entries per thread, "
                  "L2 prefetch of the next chunk, deterministic), block (one block per "
                  "chunk, deterministic) or atomic (warp segmented sum + atomicAdd)"),
      int_option("blocks", &O::blocks, 0, 0x7fffffff,
                 "CUDA stream kernel: persistent blocks (0 = one wave of resident blocks)"),
      int_option("prefetch", &O::prefetch, 0, 2,
                 "CUDA stream kernel: L2 prefetch distance in chunks (0, 1 or 2)")};
  return t;
}

template <class Value, class Index>
Bccoo<Value, Index> Bccoo<Value, Index>::build(const Csr<Value, Index>& a, const FormatOptions& o) {
  Bccoo s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.nnz = a.nnz();
  s.chunk = parse_options<BccooOptions>(o).chunk;
  if (static_cast<std::uint64_t>(a.cols) > std::numeric_limits<std::uint32_t>::max() + 1ull)
    throw UnsupportedError("bccoo: " + std::to_string(a.cols) +
                           " columns do not fit the 4-byte absolute column field of the CPU "
                           "encoding; use bccoo-gpu or bcoo");
  const auto lut = bccoo::build_lut(a.values);
  s.lut = lut.lut;
  const std::int64_t nb = (s.nnz + s.chunk - 1) / s.chunk;
  s.row.resize(static_cast<std::size_t>(nb));
  s.offset.assign(static_cast<std::size_t>(nb) + 1, 0);
#pragma omp parallel for schedule(static)
  for (std::int64_t h = 0; h < nb; ++h) {
    s.row[h] = static_cast<Index>(bccoo::row_of_entry(a.row_ptr, h * s.chunk));
    s.offset[h + 1] = bccoo::encode_chunk(a, lut, s.chunk, h, nullptr);
  }
  for (std::int64_t h = 0; h < nb; ++h) s.offset[h + 1] += s.offset[h];
  s.data.resize(static_cast<std::size_t>(s.offset[nb]));
#pragma omp parallel for schedule(static)
  for (std::int64_t h = 0; h < nb; ++h)
    bccoo::encode_chunk(a, lut, s.chunk, h, s.data.data() + s.offset[h]);
  if (s.nnz > 0) s.last_row = bccoo::row_of_entry(a.row_ptr, s.nnz - 1);
  return s;
}

template <class Value, class Index>
Csr<Value, Index> Bccoo<Value, Index>::to_csr() const {
  return bccoo::decode<Value, Index>(*this);
}

template <class Value, class Index>
BccooGpu<Value, Index> BccooGpu<Value, Index>::build(const Csr<Value, Index>& a,
                                                     const FormatOptions& o) {
  BccooGpu s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.nnz = a.nnz();
  const auto opt = parse_options<BccooGpuOptions>(o);
  s.chunk = opt.chunk;
  s.kernel = opt.kernel.value_or(BccooGpuKernel::stream);
  s.blocks = opt.blocks;
  s.prefetch = opt.prefetch;
  const auto lut = bccoo::build_lut(a.values);
  s.lut = lut.lut;
  s.lut_used = static_cast<std::int32_t>(lut.sorted.size());
  const std::int64_t nb = (s.nnz + s.chunk - 1) / s.chunk;
  s.row.resize(static_cast<std::size_t>(nb));
  s.column.resize(static_cast<std::size_t>(nb));
  s.format.resize(static_cast<std::size_t>(nb));
  s.offset.assign(static_cast<std::size_t>(nb) + 1, 0);
  // Pass 1: per-chunk row/column bases, widths and LUT use; sizes.
#pragma omp parallel for schedule(static)
  for (std::int64_t h = 0; h < nb; ++h) {
    const std::int64_t p0 = h * s.chunk, p1 = std::min(s.nnz, p0 + s.chunk);
    const std::int64_t r0 = bccoo::row_of_entry(a.row_ptr, p0);
    const std::int64_t r1 = bccoo::row_of_entry(a.row_ptr, p1 - 1);
    std::int64_t cmin = a.col_idx[p0], cmax = a.col_idx[p0];
    bool all_lut = true;
    for (std::int64_t q = p0; q < p1; ++q) {
      cmin = std::min<std::int64_t>(cmin, a.col_idx[q]);
      cmax = std::max<std::int64_t>(cmax, a.col_idx[q]);
      all_lut = all_lut && lut.find(a.values[q]) >= 0;
    }
    s.row[h] = static_cast<Index>(r0);
    s.column[h] = static_cast<Index>(cmin);
    s.format[h] = bccoo::chunk_format(all_lut, static_cast<std::uint64_t>(cmax - cmin),
                                      static_cast<std::uint64_t>(r1 - r0));
    s.offset[h + 1] = bccoo::gpu_chunk(s.format[h], p1 - p0, sizeof(Value)).bytes;
  }
  for (std::int64_t h = 0; h < nb; ++h) s.offset[h + 1] += s.offset[h];
  if (!opt.kernel) s.kernel = bccoo::auto_kernel(s.format);
  s.data.assign(static_cast<std::size_t>(s.offset[nb]), 0);  // padding bytes are zero
  // Pass 2: fill the sub-arrays.
#pragma omp parallel for schedule(static)
  for (std::int64_t h = 0; h < nb; ++h) {
    const std::int64_t p0 = h * s.chunk, p1 = std::min(s.nnz, p0 + s.chunk);
    const bccoo::GpuChunk g = bccoo::gpu_chunk(s.format[h], p1 - p0, sizeof(Value));
    std::uint8_t* base = s.data.data() + s.offset[h];
    std::int64_t r = s.row[h];
    for (std::int64_t q = p0; q < p1; ++q) {
      while (static_cast<std::int64_t>(a.row_ptr[r + 1]) <= q) ++r;
      const std::int64_t e = q - p0;
      bccoo::put_uint(base + g.row_at + e * g.wr, g.wr,
                                     static_cast<std::uint64_t>(r - s.row[h]));
      bccoo::put_uint(base + g.col_at + e * g.wc, g.wc,
                                     static_cast<std::uint64_t>(a.col_idx[q] - s.column[h]));
      if (g.lut)
        base[g.val_at + e] = static_cast<std::uint8_t>(lut.find(a.values[q]));
      else
        bccoo::store(base + g.val_at + e * g.wv, a.values[q]);
    }
  }
  if (s.nnz > 0) s.last_row = bccoo::row_of_entry(a.row_ptr, s.nnz - 1);
  return s;
}

template <class Value, class Index>
Csr<Value, Index> BccooGpu<Value, Index>::to_csr() const {
  return bccoo::decode<Value, Index>(*this);
}

SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(Bccoo)
SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(BccooGpu)
template bccoo::Lut<float> bccoo::build_lut(const std::vector<float>&);
template bccoo::Lut<double> bccoo::build_lut(const std::vector<double>&);

}  // namespace spmat
