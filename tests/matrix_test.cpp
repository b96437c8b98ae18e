// tests/matrix_test.cpp — the Matrix handle and the registry: lookups, argument checks, errors.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "spmat/matrix.hpp"
#include "spmat/registry.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

// [[1 0 2 0]
//  [0 0 0 0]
//  [3 4 0 5]]
Csr<double, std::int32_t> small() {
  Csr<double, std::int32_t> a;
  a.rows = 3;
  a.cols = 4;
  a.row_ptr = {0, 2, 2, 5};
  a.col_idx = {0, 2, 0, 1, 3};
  a.values = {1, 2, 3, 4, 5};
  return a;
}

/// The first registered format with a CPU backend (every build has at least `csr`).
const FormatEntry& cpu_format() {
  for (const auto& e : registry())
    if (e.caps.cpu.available) return e;
  throw std::logic_error("no registered format has a CPU backend");
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Registry, NamesAreUniqueLowerCaseWithDashesAndEveryEntryIsComplete) {
  ASSERT_FALSE(registry().empty());
  std::set<std::string> seen;
  for (const auto& e : registry()) {
    SCOPED_TRACE(e.name);
    EXPECT_TRUE(seen.insert(e.name).second) << "registered twice";
    EXPECT_FALSE(e.name.empty());
    EXPECT_TRUE(std::all_of(e.name.begin(), e.name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    })) << "registry names are lower case with dashes";
    EXPECT_FALSE(e.summary.empty()) << "no summary for `spmat formats`";
    EXPECT_TRUE((e.factory<float, std::int32_t>()));
    EXPECT_TRUE((e.factory<float, std::int64_t>()));
    EXPECT_TRUE((e.factory<double, std::int32_t>()));
    EXPECT_TRUE((e.factory<double, std::int64_t>()));
    for (Backend b : {Backend::cpu, Backend::cuda}) {
      const BackendCaps& c = e.caps.on(b);
      if (!c.available)
        for (Op op : {Op::spmv, Op::spmv_t, Op::spmm, Op::add}) EXPECT_FALSE(c.supports(op));
    }
    EXPECT_EQ(&find_format(e.name), &e) << "find_format finds the registry entry itself";
  }
  EXPECT_TRUE(seen.count("csr")) << "csr is the canonical format and always registered";
}

TEST(Registry, CudaBackendsAreDeclaredOnlyWhenCompiledIn) {
  if (!cuda_compiled())
    for (const auto& e : registry()) EXPECT_FALSE(e.caps.cuda.available) << e.name;
  if (!cuda_compiled()) EXPECT_FALSE(cuda_available());
}

TEST(Matrix, UnknownFormatNameListsEveryKnownFormat) {
  try {
    (void)Matrix<double>::build(small(), "no-such-format");
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(contains(msg, "unknown format 'no-such-format'")) << msg;
    for (const auto& f : registry()) EXPECT_TRUE(contains(msg, f.name)) << msg;
  }
  EXPECT_THROW((void)find_format(""), UnsupportedError);
}

TEST(Matrix, EveryRegisteredFormatBuildsOnEachBackendItDeclares) {
  std::string why;
  const bool gpu = testing::gpu_available(&why);
  for (const auto& e : registry())
    for (Backend b : {Backend::cpu, Backend::cuda}) {
      if (!e.caps.on(b).available || (b == Backend::cuda && !gpu)) continue;
      SCOPED_TRACE(e.name + " on " + std::string(to_string(b)));
      const auto m = Matrix<double>::build(small(), e.name, b);
      EXPECT_EQ(m.format_name(), e.name);
      EXPECT_EQ(&m.format(), &e);
      EXPECT_EQ(m.backend(), b);
      EXPECT_EQ(m.rows(), 3);
      EXPECT_EQ(m.cols(), 4);
      EXPECT_EQ(m.nnz(), 5);
      for (Op op : {Op::spmv, Op::spmv_t, Op::spmm, Op::add})
        EXPECT_EQ(m.supports(op), e.caps.on(b).supports(op)) << to_string(op);
    }
}

TEST(Matrix, WrongVectorSizesAreDimensionMismatches) {
  const auto m = Matrix<double>::build(small(), cpu_format().name);
  std::vector<double> x4(4, 1.0), x3(3, 1.0), y3(3), y4(4), y5(5);
  if (m.supports(Op::spmv)) {
    EXPECT_NO_THROW(m.spmv(x4, y3));
    EXPECT_THROW(m.spmv(x3, y3), DimensionMismatchError);
    EXPECT_THROW(m.spmv(x4, y4), DimensionMismatchError);
    try {
      m.spmv(x4, y5);
      FAIL() << "expected DimensionMismatchError";
    } catch (const DimensionMismatchError& e) {
      EXPECT_TRUE(contains(e.what(), "y has 5 entries, expected 3")) << e.what();
    }
  }
  if (m.supports(Op::spmv_t)) {
    EXPECT_NO_THROW(m.spmv_t(x3, y4));
    EXPECT_THROW(m.spmv_t(x4, y4), DimensionMismatchError);
    EXPECT_THROW(m.spmv_t(x3, y3), DimensionMismatchError);
  }
  if (m.supports(Op::spmm)) {
    std::vector<double> b(4 * 2, 1.0), c(3 * 2);
    EXPECT_NO_THROW(m.spmm(b, c, 2, DenseLayout::row_major));
    EXPECT_THROW(m.spmm(b, c, 3, DenseLayout::row_major), DimensionMismatchError);
    EXPECT_THROW(m.spmm(std::span<const double>(b).first(7), c, 2, DenseLayout::col_major),
                 DimensionMismatchError);
    EXPECT_THROW(m.spmm(b, std::span<double>(c).first(5), 2, DenseLayout::row_major),
                 DimensionMismatchError);
    EXPECT_THROW(m.spmm({}, {}, -1, DenseLayout::row_major), DimensionMismatchError);
  }
}

TEST(Matrix, AnOutputOverlappingItsInputIsRefusedByEveryCpuFormat) {
  Csr<double, std::int32_t> sq;  // 4 x 4, so that x and y have the same length
  sq.rows = sq.cols = 4;
  sq.row_ptr = {0, 2, 3, 3, 5};
  sq.col_idx = {0, 3, 1, 0, 2};
  sq.values = {1, 2, 3, 4, 5};
  for (const auto& e : registry()) {
    if (!e.caps.cpu.available) continue;
    SCOPED_TRACE(e.name);
    const auto m = Matrix<double>::build(sq, e.name);
    std::vector<double> buf(8, 1.0);
    const std::span<double> all(buf);
    for (Op op : {Op::spmv, Op::spmv_t}) {
      if (!m.supports(op)) continue;
      auto run = [&](std::span<const double> x, std::span<double> y) {
        if (op == Op::spmv) m.spmv(x, y);
        else m.spmv_t(x, y);
      };
      try {
        run(all.first(4), all.first(4));  // A.spmv(v, v)
        ADD_FAILURE() << "aliased output accepted";
      } catch (const DimensionMismatchError& err) {
        EXPECT_TRUE(contains(err.what(), "overlaps the input")) << err.what();
      }
      EXPECT_THROW(run(all.first(4), all.subspan(3, 4)), DimensionMismatchError);  // one shared entry
      EXPECT_THROW(run(all.subspan(3, 4), all.first(4)), DimensionMismatchError);
      EXPECT_NO_THROW(run(all.first(4), all.subspan(4, 4)));  // adjacent, not overlapping
    }
    if (m.supports(Op::spmm)) {
      std::vector<double> bc(16, 1.0);
      const std::span<double> s(bc);
      EXPECT_THROW(m.spmm(s.first(8), s.subspan(4, 8), 2, DenseLayout::row_major), DimensionMismatchError);
      EXPECT_NO_THROW(m.spmm(s.first(8), s.subspan(8, 8), 2, DenseLayout::row_major));
    }
  }
}

TEST(Matrix, UnknownOptionIsAParseErrorNamingIt) {
  const FormatEntry& e = cpu_format();
  try {
    (void)Matrix<double>::build(small(), e.name, Backend::cpu,
                                FormatOptions().set("no_such_option", "1"));
    FAIL() << "expected ParseError";
  } catch (const ParseError& err) {
    const std::string msg = err.what();
    EXPECT_TRUE(contains(msg, "'no_such_option'")) << msg;
    EXPECT_TRUE(contains(msg, "'" + e.name + "'")) << msg;
    for (const auto& p : e.params) EXPECT_TRUE(contains(msg, p.name)) << msg;
  }
}

TEST(Matrix, DeclaredOptionsAreAcceptedAndBadValuesRejected) {
  // csr declares kernel=auto|scalar|vector|merge (a GPU choice; the CPU build accepts it too).
  EXPECT_NO_THROW((void)Matrix<double>::build(small(), "csr", Backend::cpu,
                                              FormatOptions::parse("kernel=scalar")));
  EXPECT_THROW((void)Matrix<double>::build(small(), "csr", Backend::cpu,
                                           FormatOptions::parse("kernel=bogus")),
               ParseError);
  EXPECT_THROW((void)FormatOptions::parse("kernel"), ParseError);
}

TEST(Matrix, CudaBackendWithoutAGpuSaysSo) {
  std::string why;
  if (testing::gpu_available(&why)) GTEST_SKIP() << "a GPU is present: nothing to refuse";
  for (const auto& e : registry()) {
    SCOPED_TRACE(e.name);
    try {
      (void)Matrix<double>::build(small(), e.name, Backend::cuda);
      ADD_FAILURE() << "building on cuda without a GPU did not throw";
    } catch (const UnsupportedError& err) {
      const std::string msg = err.what();
      EXPECT_TRUE(contains(msg, "'" + e.name + "'")) << msg;
      if (!cuda_compiled())
        EXPECT_TRUE(contains(msg, "built without CUDA")) << msg;
      else if (e.caps.cuda.available)
        EXPECT_TRUE(contains(msg, "no usable CUDA GPU")) << msg;
      else
        EXPECT_TRUE(contains(msg, "has no cuda backend")) << msg;
    }
  }
}

TEST(Matrix, InvalidInputIsRejectedBeforeBuilding) {
  auto a = small();
  a.col_idx[1] = 9;
  EXPECT_THROW((void)Matrix<double>::build(a, cpu_format().name), InvalidMatrixError);
  a = small();
  a.row_ptr.pop_back();
  EXPECT_THROW((void)Matrix<double>::build(a, cpu_format().name), InvalidMatrixError);
}

TEST(Matrix, IndexOverflowIsCheckedForTheChosenIndexType) {
  ScopedInt32Limit limit(3);  // cols = 4 and nnz = 5 exceed it
  try {
    (void)Matrix<double>::build(small(), cpu_format().name);
    FAIL() << "expected IndexOverflowError";
  } catch (const IndexOverflowError& e) {
    EXPECT_TRUE(contains(e.what(), "does not fit the int32 index type")) << e.what();
    EXPECT_TRUE(contains(e.what(), "'" + cpu_format().name + "'")) << e.what();
  }
  EXPECT_NO_THROW((void)Matrix<double>::build(convert<double, std::int64_t>(small()),
                                              cpu_format().name));
}

TEST(Matrix, UnsupportedOperationsNameTheFormatAndOperation) {
  for (const auto& e : registry()) {
    if (!e.caps.cpu.available) continue;
    const auto m = Matrix<double>::build(small(), e.name);
    for (Op op : {Op::spmv, Op::spmv_t, Op::spmm, Op::add}) {
      if (m.supports(op)) continue;
      SCOPED_TRACE(e.name + " " + std::string(to_string(op)));
      try {
        m.prepare(op);
        ADD_FAILURE() << "prepare of an unsupported operation did not throw";
      } catch (const UnsupportedError& err) {
        EXPECT_TRUE(contains(err.what(), "'" + e.name + "'")) << err.what();
        EXPECT_TRUE(contains(err.what(), std::string(to_string(op)))) << err.what();
      }
    }
  }
}

TEST(Matrix, CopiesShareTheStorageAndAddChecksShapes) {
  const auto m = Matrix<double>::build(small(), "csr");
  const Matrix<double> copy = m;
  EXPECT_EQ(&detail::impl_of(copy), &detail::impl_of(m));
  EXPECT_EQ(copy.storage_bytes(), m.storage_bytes());
  EXPECT_EQ(copy.to_csr(), (convert<double, std::int64_t>(small())));
  const auto t = Matrix<double>::build(transpose(small()), "csr");
  try {
    (void)m.add(t);
    FAIL() << "expected DimensionMismatchError";
  } catch (const DimensionMismatchError& e) {
    EXPECT_TRUE(contains(e.what(), "3x4 vs 4x3")) << e.what();
  }
}

TEST(Matrix, AddRefusesOperandsOfDifferentFormats) {
  const FormatEntry* other = nullptr;
  for (const auto& e : registry())
    if (e.name != "csr" && e.caps.cpu.available) other = &e;
  if (!other) GTEST_SKIP() << "only csr has a CPU backend in this build";
  const auto a = Matrix<double>::build(small(), "csr");
  const auto b = Matrix<double>::build(small(), other->name);
  try {
    (void)a.add(b);
    FAIL() << "expected UnsupportedError";
  } catch (const UnsupportedError& e) {
    EXPECT_TRUE(contains(e.what(), "'csr'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "'" + other->name + "'")) << e.what();
  }
}

}  // namespace
}  // namespace spmat
