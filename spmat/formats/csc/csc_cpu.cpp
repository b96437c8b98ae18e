// spmat/formats/csc/csc_cpu.cpp — OpenMP kernels of CSC: spmv_t (column gather), spmv (scatter_reduce).
// SPDX-License-Identifier: MIT
#include "spmat/formats/csc/csc.hpp"
#include "spmat/formats/csr/compressed_cpu.hpp"

namespace spmat {

// Contract: x has rows entries, y cols entries; caller allocates. Column c's entries are
// summed in storage order (increasing row) by one thread: deterministic. Explicit zeros are
// multiplied like any entry; empty columns get alpha*0 + beta*y (beta == 0: y is not read).
// Columns split dynamically in chunks of 256 as CSR's rows are. Work 2·nnz flops.
template <class Value, class Index>
void spmv_t(const CscStorage<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  compressed_gather(s.a.cols, s.a.col_ptr, s.a.row_idx, s.a.values, x, y, alpha, beta);
}

// Contract: x has cols entries, y rows entries. Columns are split statically over the threads;
// each scatters values[k]*x[c] into a private buffer of rows values (scatter_reduce), buffers
// are summed in thread order: deterministic for a fixed thread count. Scratch threads×rows.
template <class Value, class Index>
void spmv(const CscStorage<Value, Index>& s, const Value* x, Value* y, Value alpha, Value beta) {
  compressed_scatter(s.a.rows, s.a.cols, s.a.col_ptr, s.a.row_idx, s.a.values, x, y, alpha, beta);
}

SPMAT_INSTANTIATE_CPU_KERNELS(CscStorage)

}  // namespace spmat
