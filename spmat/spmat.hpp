// spmat/spmat.hpp — the public API in one include: what a program using the installed package needs.
// SPDX-License-Identifier: MIT
//
//   #include <spmat/spmat.hpp>
//   auto csr = spmat::io::load_matrix<double, std::int32_t>("A.mtx.gz");   // or "gen:lap2d:100"
//   auto A = spmat::Matrix<double>::build(csr, "auto", spmat::Backend::cpu);
//   A.spmv(x, y);
//
// What is public (and installed by `cmake --install`): this header and the headers it includes,
//   config.hpp                 build configuration (kCudaCompiled, SPMAT_WITH_CUDA, kVersion)
//   core/{error,types,options,csr,device_csr,device_memory}.hpp
//                              errors, Backend/Op/value types, FormatOptions, the canonical CSR,
//                              device CSR input, the GPU memory budget
//   format_options.hpp, core/typed_options.hpp, plan/plan_options.hpp
//                              every format's options as a typed struct (CsrOptions,
//                              SellOptions, ..., PlanOptions) for the typed Matrix::build
//   matrix.hpp                 Matrix<Value>, the handle over every format and backend (with
//                              matrix_impl.hpp, the interface it holds, and registry.hpp, the
//                              list of formats with their capabilities and options)
//   stream.hpp                 the CUDA stream spmat's GPU work goes to (no CUDA header needed)
//   plan/{plan,stats}.hpp      the planner: PlanRequest, FormatPlan, plan(), matrix statistics
//   io/{read_options,matrix_market,binary_cache,load}.hpp
//                              Matrix Market and .smc reading and writing, load_matrix()
//   gen/generators.hpp         the deterministic generators ("gen:lap2d:2000")
// With the CUDA backend, cuda/{check,buffer,device_csr}.hpp are installed too (DeviceBuffer,
// adopt_csr); they include CUDA's runtime header, so they are not included here and a program
// includes them itself. Everything else under spmat/ (the formats' storage structs and kernels,
// the planner's model and tuner, the generators' and readers' internals, the benchmark harness,
// test support) is internal: it stays in the source tree and may change without notice.
#pragma once

#include "spmat/config.hpp"
#include "spmat/core/csr.hpp"
#include "spmat/core/device_csr.hpp"
#include "spmat/core/device_memory.hpp"
#include "spmat/core/error.hpp"
#include "spmat/core/options.hpp"
#include "spmat/core/typed_options.hpp"
#include "spmat/core/types.hpp"
#include "spmat/format_options.hpp"
#include "spmat/gen/generators.hpp"
#include "spmat/io/binary_cache.hpp"
#include "spmat/io/load.hpp"
#include "spmat/io/matrix_market.hpp"
#include "spmat/io/read_options.hpp"
#include "spmat/matrix.hpp"
#include "spmat/plan/plan.hpp"
#include "spmat/plan/plan_options.hpp"
#include "spmat/plan/stats.hpp"
#include "spmat/registry.hpp"
#include "spmat/stream.hpp"
