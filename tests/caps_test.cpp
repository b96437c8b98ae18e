// tests/caps_test.cpp — the registry's capabilities are derived from the kernels that exist
// (format_adapter.hpp's make_entry), and what is declared obeys the rules of BackendCaps.
// SPDX-License-Identifier: MIT
//
// Whether the caps match behaviour (an operation the caps allow runs, one they deny throws
// UnsupportedError; a product declared deterministic repeats bitwise) is the conformance
// suite's check (tests/conformance_test.cpp), on every entry and backend. Here: the derivation
// itself, on toy formats whose kernels are known, and the invariants of the table.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "spmat/core/csr.hpp"

#include "spmat/format_adapter.hpp"
#include "spmat/registry.hpp"

namespace spmat::caps_toys {

/// A storage with no arrays; the kernels each toy declares decide its products.
template <class Value, class Index>
struct Toy {
  using value_type = Value;
  Shape shape_;
  static Toy build(const Csr<Value, Index>& a, const FormatOptions&) {
    return {{a.rows, a.cols, a.nnz()}};
  }
  Csr<Value, Index> to_csr() const { return {}; }
  std::size_t storage_bytes() const { return 0; }
  Shape shape() const { return shape_; }
};
template <class Value, class Index>
std::size_t traffic_bytes(const Toy<Value, Index>&, Op, std::int64_t) { return 0; }

/// A toy of its own type `Self` (whose kernels are the free functions declared for Self).
template <class Self, class Value, class Index>
struct ToyOf : Toy<Value, Index> {
  static Self build(const Csr<Value, Index>& a, const FormatOptions& o) {
    return {{Toy<Value, Index>::build(a, o)}};
  }
};

/// spmv only.
template <class Value, class Index>
struct SpmvOnly : ToyOf<SpmvOnly<Value, Index>, Value, Index> {};
template <class Value, class Index>
void spmv(const SpmvOnly<Value, Index>&, const Value*, Value*, Value, Value) {}

/// Every product.
template <class Value, class Index>
struct Everything : ToyOf<Everything<Value, Index>, Value, Index> {};
template <class Value, class Index>
void spmv(const Everything<Value, Index>&, const Value*, Value*, Value, Value) {}
template <class Value, class Index>
void spmv_t(const Everything<Value, Index>&, const Value*, Value*, Value, Value) {}
template <class Value, class Index>
void spmm(const Everything<Value, Index>&, const Value*, Value*, std::int64_t, DenseLayout, Value,
          Value) {}
template <class Value, class Index>
Everything<Value, Index> add(const Everything<Value, Index>& a, const Everything<Value, Index>&,
                             Value, Value) {
  return a;
}

}  // namespace spmat::caps_toys

namespace spmat {
namespace {

using caps_toys::Everything;
using caps_toys::SpmvOnly;

bool same(const BackendCaps& a, const BackendCaps& b) {
  return a.available == b.available && a.ops() == b.ops() &&
         a.deterministic_spmv == b.deterministic_spmv &&
         a.deterministic_spmv_t == b.deterministic_spmv_t;
}

TEST(CapsDerivation, TheProductsAreTheKernelsThatExist) {
  const FormatEntry s = make_entry<SpmvOnly>({.name = "toy-spmv"}, {});
  EXPECT_TRUE(s.caps.cpu.available);
  EXPECT_EQ(s.caps.cpu.ops(), (BackendOps{.spmv = true}));
  const FormatEntry e = make_entry<Everything>({.name = "toy-all"}, {});
  EXPECT_EQ(e.caps.cpu.ops(),
            (BackendOps{.spmv = true, .spmv_t = true, .spmm = true, .add = true}));
  // Neither toy has a make_cuda_impl: no CUDA backend, in any build.
  EXPECT_TRUE(same(s.caps.cuda, BackendCaps{}));
  EXPECT_TRUE(same(e.caps.cuda, BackendCaps{}));
}

TEST(CapsDerivation, TheDeclaredPartIsTakenAsDeclared) {
  const FormatEntry e = make_entry<Everything>(
      {.name = "toy-all",
       .caps = {.cpu = {.available = false}, .cuda = {.available = true, .spmv = true}}},
      {.cpu = {.deterministic_spmv = false, .without = {.spmm = true}}});
  // Caps brought by the entry are replaced, the declared ones applied.
  EXPECT_TRUE(e.caps.cpu.available);
  EXPECT_EQ(e.caps.cpu.ops(), (BackendOps{.spmv = true, .spmv_t = true, .add = true}));
  EXPECT_FALSE(e.caps.cpu.deterministic_spmv);
  EXPECT_TRUE(e.caps.cpu.deterministic_spmv_t);
  EXPECT_FALSE(e.caps.cuda.available);
  // A backend the entry leaves out has the caps of one that does not exist.
  const FormatEntry gpu_only =
      make_entry<Everything>({.name = "toy-gpu"}, {.cpu = {.offered = false}});
  EXPECT_TRUE(same(gpu_only.caps.cpu, BackendCaps{}));
}

TEST(CapsDerivation, EveryAvailableRegistryBackendHasAProduct) {
  for (const auto& e : registry())
    for (Backend b : {Backend::cpu, Backend::cuda}) {
      const BackendCaps& c = e.caps.on(b);
      if (c.available)
        EXPECT_TRUE(c.spmv || c.spmv_t || c.spmm || c.add)
            << e.name << " on " << to_string(b) << ": available, but no product";
    }
}

TEST(CapsDerivation, CpuProductsAreDeterministic) {
  // The CPU kernels reduce in a fixed order (no atomics into the result); an entry that
  // declared otherwise would lose the conformance suite's bitwise repeatability check.
  for (const auto& e : registry())
    if (e.caps.cpu.available) {
      EXPECT_TRUE(e.caps.cpu.deterministic_spmv) << e.name;
      EXPECT_TRUE(e.caps.cpu.deterministic_spmv_t) << e.name;
    }
}

}  // namespace
}  // namespace spmat
