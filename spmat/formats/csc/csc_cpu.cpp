// spmat/formats/csc/csc_cpu.cpp — OpenMP kernels of CSC: spmv_t (column gather), spmv (scatter_reduce).
// SPDX-License-Identifier: MIT
#include "spmat/formats/csc/csc.hpp"
#include "spmat/core/transposed_kernels.hpp"
#include "spmat/formats/csr/compressed_cpu.hpp"

namespace spmat {

// Contract: x has rows entries for spmv_t (cols for spmv), y cols entries (rows); caller
// allocates. spmv_t: column c's entries are summed in storage order (increasing row) by one
// thread, columns split dynamically in chunks (gather_chunk) as CSR's rows are. spmv: with at
// least 8 rows a column each thread owns a range of y and adds its entries column by column
// (the same bits with any thread count); otherwise columns split statically over the threads,
// each scattering into a private buffer of rows values (scatter_reduce), buffers summed in
// thread order (deterministic for a fixed thread count). Explicit zeros are multiplied like any
// entry; beta == 0 does not read y. Work 2·nnz.
namespace {
template <bool Transposed, class Value, class Index>
void columns_product(const CscStorage<Value, Index>& s, const Value* x, Value* y, Value alpha,
                     Value beta) {
  // A's columns are the major lines: Aᵀx gathers along them, Ax scatters across them.
  compressed_product<!Transposed>(s.a.cols, s.a.rows, s.a.col_ptr, s.a.row_idx, s.a.values, x, y,
                                  alpha, beta);
}
}  // namespace

SPMAT_DEFINE_KERNELS_BY_DIRECTION(CscStorage, columns_product)
SPMAT_INSTANTIATE_CPU_KERNELS(CscStorage)

}  // namespace spmat
