// spmat/model/traffic.hpp — the minimal-bytes model shared by every format.
// SPDX-License-Identifier: MIT
//
// A format's SpMV must at least read its stored arrays once, read x once and write y once.
// Formats whose kernels provably read less (or must read more) override with their own count.
#pragma once
#include <cstddef>
#include <cstdint>

#include "spmat/core/types.hpp"
#include "spmat/matrix_impl.hpp"

namespace spmat {

/// Bytes of the dense operands of `op` (x read, y written; B read, C written for spmm).
inline std::size_t dense_operand_bytes(Op op, const Shape& s, std::int64_t k,
                                       std::size_t value_size) {
  switch (op) {
    case Op::spmv: return static_cast<std::size_t>(s.cols + s.rows) * value_size;
    case Op::spmv_t: return static_cast<std::size_t>(s.rows + s.cols) * value_size;
    case Op::spmm: return static_cast<std::size_t>((s.cols + s.rows) * k) * value_size;
    case Op::add: return 0;
  }
  return 0;
}

/// storage read once + dense operands (for add: both operands' storage is counted by the caller).
inline std::size_t default_traffic(std::size_t storage_bytes, Op op, const Shape& s,
                                   std::int64_t k, std::size_t value_size) {
  return storage_bytes + dense_operand_bytes(op, s, k, value_size);
}

/// The floor every format is compared against: CSR with 32-bit indices.
inline std::size_t csr_floor_bytes(Op op, const Shape& s, std::int64_t k, std::size_t value_size) {
  const std::size_t csr = static_cast<std::size_t>(s.rows + 1) * 4 +
                          static_cast<std::size_t>(s.nnz) * (4 + value_size);
  return csr + dense_operand_bytes(op, s, k, value_size);
}

}  // namespace spmat
