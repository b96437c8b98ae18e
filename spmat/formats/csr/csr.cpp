// spmat/formats/csr/csr.cpp — CSR format: build, traffic model, registry entries.
// SPDX-License-Identifier: MIT
#include "spmat/formats/csr/csr.hpp"

#include "spmat/core/typed_options.hpp"
#include "spmat/model/traffic.hpp"

namespace spmat {

const OptionTable<CsrOptions>& CsrOptions::fields() {
  static const OptionTable<CsrOptions> t{
      enum_option("kernel", &CsrOptions::kernel,
                  {{"auto", CsrKernel::automatic},
                   {"scalar", CsrKernel::scalar},
                   {"vector", CsrKernel::vector},
                   {"merge", CsrKernel::merge}},
                  "GPU kernel: auto, scalar, vector, merge"),
      int_choice_option("tpr", &CsrOptions::tpr, {0, 2, 4, 8, 16, 32},
                        "GPU lanes per row of the auto kernel and of spmv_t: 2,4,8,16,32 (0 = from the mean row length)"),
      enum_option("bins", &CsrOptions::bins,
                  {{"auto", CsrBins::automatic}, {"on", CsrBins::on}, {"off", CsrBins::off}},
                  "GPU auto kernel: row-length bins (medium rows a warp each) auto, on, off (auto = on skewed rows)"),
      enum_option("narrow_cols", &CsrOptions::narrow_cols,
                  {{"auto", CsrNarrowCols::automatic}, {"on", CsrNarrowCols::on}, {"off", CsrNarrowCols::off}},
                  "GPU, 64-bit indices: column indices stored as 32-bit (when cols <= INT32_MAX) auto, on, off (auto = when they fit, on = error when not; the CPU backend ignores it)")};
  return t;
}

template <class Value, class Index>
CsrStorage<Value, Index> CsrStorage<Value, Index>::build(const Csr<Value, Index>& a,
                                                         const FormatOptions& o) {
  CsrStorage s;
  s.a = a;
  const auto opt = parse_options<CsrOptions>(o);
  s.kernel = opt.kernel;
  s.threads_per_row = opt.tpr;
  s.bins = opt.bins;
  s.narrow_cols = opt.narrow_cols;
  return s;
}

SPMAT_INSTANTIATE_FOR_EACH_TYPE_PAIR(CsrStorage)

}  // namespace spmat
