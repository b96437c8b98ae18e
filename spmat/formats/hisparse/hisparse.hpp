// spmat/formats/hisparse/hisparse.hpp — HiSparse: a tree of d×d nodes (dense or byte-coordinate COO).
// SPDX-License-Identifier: MIT
//
// HiSparse after A. Derler, "HiSparse: A Hierarchical Sparse Matrix Format for the GPU", MSc
// thesis, TU Graz 2016. Not the FPGA SpMV project of the same
// name. The matrix is embedded in a d^D square, D = max(1, ⌈log_d max(rows, cols)⌉); every node
// covers d×d blocks of the level below, leaves hold values, inner nodes hold child pointers.
//
// One byte pool, 16-byte aligned nodes, level order (root, level 1, ..., leaves; key order
// inside a level):
//   header (16 B)  u32 root pointer | u8 depth | u8 log2 d | u8 sizeof(Value) | u8 0 | u64 nnz
//   COOX node      u32 n | u32 0 | roundup(n,X) (row,col) byte pairs from offset 8 |
//                  roundup(n,X) entries from the next 16-B boundary (pads: coords (0,0), entry 0)
//                  X = 1 (n = 1), 2 (n = 2), 4 (n >= 3); entries row-major by local (row, col)
//   dense node     d² entries row-major, no header (inner: null pointers where no child;
//                  leaf: 0 outside the matrix)
//   entry          leaf: Value; inner: u32 pointer = (byte offset / 16) << 2 | type, 0 = null
//   type           dense = 0, COO1 = 1, COO2 = 2, COO4 = 3
// Type choice: inner node dense iff d²·4 bytes < its COO bytes; leaf dense iff every position
// inside the matrix is stored AND d²·sizeof(Value) < its COO bytes (a dense leaf cannot tell a
// stored zero from a missing entry, so only a full leaf may be dense: to_csr stays exact).
// Option dense=never forbids dense nodes.
//
// Worked example, d = 2, fp32, 4×4 (D = 2):
//   [ 1 . . . ]   header (0..15): root = encode(16, dense) = 4, depth 2, log2 d 1, 4, nnz 6
//   [ . 2 . . ]   root  @16 dense inner (16 B < 32 B COO2): slots 10 (A), 0, 0, 16 (B)
//   [ . . 3 4 ]   leaf A @32 COO2: n=2 | coords (0,0) (1,1) | values 1 2 (at 48)
//   [ . . 5 6 ]   leaf B @64 dense (full; 16 B < 32 B COO4): 3 4 5 6        pool = 80 bytes
// hisparse_test.cpp asserts these bytes.
//
// State {transposed, scale}: the logical matrix is scale·S or scale·Sᵀ where S is the stored
// pool; flipping the flag (hisparse_transposed) costs nothing, kernels swap coordinates.
// Canonical form: built from canonical CSR (no duplicates); explicit zeros are stored entries.
// storage_bytes = pool bytes. Traffic (spmv): pool + cols·V (x) + rows·V (y).
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "spmat/core/bytes.hpp"
#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/core/typed_options.hpp"
#include "spmat/formats/format_common.hpp"
#include "spmat/matrix_impl.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/format_options.hpp"

namespace spmat {

namespace hisparse {
enum NodeType : std::uint32_t { dense = 0, coo1 = 1, coo2 = 2, coo4 = 3 };
/// Size classes of the SpMV queues (spec §5): dense, 1 entry, 2..32 entries, > 32 entries.
enum SizeClass : int { cls_dense = 0, cls_one = 1, cls_warp = 2, cls_block = 3 };
inline constexpr std::uint32_t kNull = 0;
inline constexpr std::uint64_t kHeaderBytes = 16;
/// u32 pointers address (2^30 − 1)·16 bytes: a pool must stay below 16 GiB.
inline constexpr std::uint64_t kMaxPoolBytes = (std::uint64_t{1} << 30) * 16;

struct alignas(16) Chunk {
  std::uint8_t b[16];
};

inline constexpr std::uint64_t round16(std::uint64_t b) { return (b + 15) & ~std::uint64_t{15}; }
inline constexpr std::uint32_t encode(std::uint64_t byte_offset, NodeType t) {
  return static_cast<std::uint32_t>((byte_offset >> 4) << 2) | t;
}
inline constexpr std::uint64_t offset_of(std::uint32_t p) { return std::uint64_t{p >> 2} << 4; }
inline constexpr NodeType type_of(std::uint32_t p) { return static_cast<NodeType>(p & 3u); }
inline constexpr NodeType coo_type(std::int64_t n) { return n == 1 ? coo1 : n == 2 ? coo2 : coo4; }
inline constexpr std::int64_t coo_padded(std::int64_t n) {
  const std::int64_t x = n == 1 ? 1 : n == 2 ? 2 : 4;
  return (n + x - 1) / x * x;
}
/// Byte offset of the entry array inside a COO node of n entries.
inline constexpr std::uint64_t coo_entries_offset(std::int64_t n) {
  return round16(8 + 2 * static_cast<std::uint64_t>(coo_padded(n)));
}
inline constexpr std::uint64_t coo_bytes(std::int64_t n, std::size_t entry_bytes) {
  return coo_entries_offset(n) + round16(static_cast<std::uint64_t>(coo_padded(n)) * entry_bytes);
}
inline constexpr std::uint64_t dense_bytes(int log2d, std::size_t entry_bytes) {
  return round16((std::uint64_t{1} << (2 * log2d)) * entry_bytes);
}
inline constexpr int size_class(NodeType t, std::int64_t n) {
  return t == dense ? cls_dense : n == 1 ? cls_one : n <= 32 ? cls_warp : cls_block;
}

using bytes::load;
using bytes::store;

/// Per-level statistics (for queue sizing and the thesis's Fig. 7.1).
struct LevelStats {
  std::array<std::int64_t, 4> nodes_by_type{};    ///< dense, coo1, coo2, coo4
  std::array<std::int64_t, 4> entries_by_type{};  ///< stored entries (inner: non-null children)
  std::array<std::int64_t, 4> nodes_by_class{};   ///< SizeClass
  std::int64_t nodes() const {
    return nodes_by_type[0] + nodes_by_type[1] + nodes_by_type[2] + nodes_by_type[3];
  }
};

/// The tree before it is laid out in bytes: per level, nodes in key order with their entries.
/// Build, add and to_csr all go through it, and one serializer lays it out, so a sum and a
/// fresh build of the same matrix produce identical pools.
struct ProtoLevel {
  std::vector<std::int64_t> begin{0};  ///< nodes+1: entry range of each node
  std::vector<std::int64_t> brow, bcol;  ///< nodes: block coordinates at this level
  std::vector<std::uint8_t> lr, lc;      ///< entries: local coordinates (row-major per node)
  std::vector<std::int64_t> child;       ///< entries of inner levels: child node index
  std::int64_t nodes() const { return static_cast<std::int64_t>(begin.size()) - 1; }
};
template <class Value>
struct Proto {
  std::int64_t rows = 0, cols = 0;
  int log2d = 7, depth = 1;
  std::vector<ProtoLevel> levels;  ///< depth levels (empty when nnz = 0)
  std::vector<Value> values;       ///< leaf-level entries
};
}  // namespace hisparse

template <class Value, class Index>
struct HiSparse {
  Index rows = 0, cols = 0;  ///< stored shape (the logical shape swaps when transposed)
  std::int64_t nnz = 0;
  int log2d = 7;
  int depth = 1;
  bool allow_dense = true;
  bool gpu_levels = false;  ///< option spmv=levels: the CUDA backend traverses on every call
  bool gpu_plan_block = false;  ///< option spmv=plan1: plan kernel with a block per item
  bool gpu_plan_occ6 = false;  ///< option spmv=plan6: the warp plan kernel at 6 blocks per SM
  bool gpu_plan_tlanes = false;  ///< option spmv=plan_tl: warp plan kernel, y = Sᵀx by entry lanes
  std::int64_t plan_item_cost = 8192;  ///< option item_cost: cost bound of a CUDA plan item
  bool gpu_add_sort = false;  ///< option add=sort: CUDA add sorts all candidates per level
  bool gpu_add_tcount = false;  ///< option add=merge_ct: transposed operand ordered per node by a
                                ///< warp bitmap count instead of a radix sort (d <= 128)
  std::uint32_t root = hisparse::kNull;
  std::vector<hisparse::Chunk> pool;         ///< header + nodes
  std::vector<hisparse::LevelStats> levels;  ///< depth entries
  // State (spec §2): the logical matrix is scale·S, or scale·Sᵀ when transposed.
  bool transposed = false;
  Value scale = 1;

  /// Options: d= (power of two, 2..256, default 128), dense=auto|never,
  /// spmv=plan|levels (CUDA kernels: precomputed leaf plan, or per-call level traversal),
  /// item_cost= (CUDA plan: cost bound of one work item, default 8192; small values for tests),
  /// add=merge|sort (CUDA add: merge path, or radix sort of all candidates per level),
  /// build=cpu|gpu (construction on the host, or on the GPU in CUDA builds: identical bytes).
  static HiSparse build(const Csr<Value, Index>& a, const FormatOptions& o);
  Csr<Value, Index> to_csr() const;
  std::size_t storage_bytes() const { return pool.size() * sizeof(hisparse::Chunk); }
  Shape shape() const {
    return transposed ? Shape{cols, rows, nnz} : Shape{rows, cols, nnz};
  }
  int d() const { return 1 << log2d; }
  const std::uint8_t* bytes() const { return pool.empty() ? nullptr : pool.data()->b; }
};

/// The same storage with the transposed flag flipped (O(1) state change, shares no memory).
template <class Value, class Index>
HiSparse<Value, Index> hisparse_transposed(HiSparse<Value, Index> a) {
  a.transposed = !a.transposed;
  return a;
}

namespace hisparse {
/// Stored pool -> proto tree (exact inverse of serialize).
template <class Value, class Index>
Proto<Value> decode(const HiSparse<Value, Index>& a);
/// Proto tree -> pool; fills everything but the state (transposed = false, scale = 1).
template <class Value, class Index>
HiSparse<Value, Index> serialize(const Proto<Value>& t, bool allow_dense);
}  // namespace hisparse

namespace hisparse {
/// A leaf found by the top-down traversal: its pointer and block coordinates (stored frame).
struct LeafRef {
  std::uint32_t ptr;
  std::int64_t brow, bcol;
};
/// Level-by-level top-down traversal of the inner levels (spec §5): every leaf with its block
/// coordinates, in tree order. Work: one visit per inner entry (≈ number of leaves).
template <class Value, class Index>
std::vector<LeafRef> leaf_list(const HiSparse<Value, Index>& a);

// --- The SpMV plan of the CUDA backend (hisparse_cuda.cu), built on the host at setup. ------
// The traversal's result (which leaves exist and at which block offsets) is static for a given
// pool, so it is computed once when the matrix is uploaded, not on every product. The leaves are
// then bucketed by OUTPUT block (block row for y = S·x, block column for y = Sᵀ·x) and every
// bucket is cut into work items of bounded cost; one thread block runs one item, accumulating
// the item's ≤ d outputs in shared memory. Inside an item the leaves are ordered by class:
//   [begin, warp_begin)   COO leaves with ≤ kThreadLeafMax entries: one thread per leaf;
//   [warp_begin, dense_begin) larger COO leaves: one warp per leaf, lanes over the entries;
//   [dense_begin, end)    dense leaves: the whole block, coalesced over the d² entries.
// An output block whose bucket fits one item is written with y = alpha·acc + beta·y (single
// writer, no atomics); a bucket split over several items adds with atomics after y = beta·y.
inline constexpr std::uint32_t kThreadLeafMax = 4;
/// Cost of a leaf in plan units: its entries (d² for a dense leaf) + 8 for the leaf overhead.
inline std::int64_t plan_cost(NodeType t, std::int64_t n, int log2d) {
  return (t == dense ? (std::int64_t{1} << (2 * log2d)) : n) + 8;
}
struct PlanLeaf {
  std::uint32_t ptr;       ///< node pointer (offset/16 << 2 | type)
  std::uint32_t in_block;  ///< block index on the input side (x), stored frame
};
struct PlanItem {
  std::uint32_t out_block;  ///< output block (rows [out_block·d, +d) of y)
  std::uint32_t begin, warp_begin, dense_begin, end;  ///< leaf ranges (see above)
  std::uint32_t split;      ///< 1: the output block is shared with other items (atomics)
};
struct Plan {
  std::vector<PlanLeaf> leaves;
  std::vector<PlanItem> items;  ///< every output block has ≥ 1 item (empty ones write beta·y)
  bool has_split = false;
};
/// The plan of y = S·x (by_col = false) or y = Sᵀ·x (by_col = true) in the stored frame.
/// `item_cost` bounds the cost of an item (an item holds at least one leaf). Throws
/// UnsupportedError when a block index does not fit 32 bits.
template <class Value, class Index>
Plan build_plan(const HiSparse<Value, Index>& a, bool by_col, std::int64_t item_cost = kPlanItemCost);
}  // namespace hisparse

// CPU kernels (hisparse_cpu.cpp). Deterministic: the leaves are bucketed by output block row
// (column for spmv_t) and each bucket is summed by one thread in tree order.
SPMAT_FORMAT_FUNCTIONS(HiSparse);
/// C = alpha·A + beta·B (logical matrices, states honoured) as a new HiSparse: the dual
/// traversal of both trees; entries in either operand are stored (cancellation keeps zeros).
template <class Value, class Index>
HiSparse<Value, Index> add(const HiSparse<Value, Index>& a, const HiSparse<Value, Index>& b,
                           Value alpha, Value beta);
/// The host copy of a hisparse CUDA impl (downloads an add result's pool); for tests. Throws
/// UnsupportedError when `m` is not a hisparse CUDA impl of these types.
template <class Value, class Index>
HiSparse<Value, Index> cuda_host_copy(const MatrixImpl<Value>& m);  // _cuda.cu
namespace hisparse {
/// GPU construction (option build=gpu, hisparse_build_cuda.cu, CUDA builds only): key sort on the
/// device + device serializer; the pool is byte-identical to the CPU build's. Needs
/// 2·log2d·depth ≤ 64 key bits (UnsupportedError otherwise). State fields are left default.
template <class Value, class Index>
HiSparse<Value, Index> build_on_gpu(const Csr<Value, Index>& a, int log2d, int depth,
                                    bool allow_dense);
}  // namespace hisparse

}  // namespace spmat
