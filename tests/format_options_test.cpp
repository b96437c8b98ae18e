// tests/format_options_test.cpp — the formats declared with typed options: help defaults equal
// to the struct's, strings <-> struct round trips, errors naming key and value, and the typed
// Matrix::build equal to the string build.
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "spmat/core/typed_options.hpp"
#include "spmat/formats/bccoo/bccoo.hpp"
#include "spmat/formats/bcoo/bcoo.hpp"
#include "spmat/formats/bro_coo/bro_coo.hpp"
#include "spmat/formats/bro_csr/bro_csr.hpp"
#include "spmat/formats/bro_ell/bro_ell.hpp"
#include "spmat/formats/bro_hyb/bro_hyb.hpp"
#include "spmat/formats/coo/coo.hpp"
#include "spmat/formats/csb/csb.hpp"
#include "spmat/formats/csr/csr.hpp"
#include "spmat/formats/ell/ell.hpp"
#include "spmat/formats/ellr/ellr.hpp"
#include "spmat/formats/gcsb/gcsb.hpp"
#include "spmat/formats/hisparse/hisparse.hpp"
#include "spmat/formats/hyb/hyb.hpp"
#include "spmat/formats/sell/sell.hpp"
#include "spmat/formats/tiled/tiled.hpp"
#include "spmat/matrix.hpp"
#include "spmat/plan/plan_options.hpp"
#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

// A non-default setting of every option (hisparse's build=gpu needs CUDA: left out), in key
// order (FormatOptions::to_string's order).
template <class Opts>
std::string all_set();
template <>
std::string all_set<CsrOptions>() { return "bins=off,kernel=merge,narrow_cols=off,tpr=8"; }
template <>
std::string all_set<SellOptions>() { return "C=16,max_fill=inf,max_skew=2.5,sigma=64"; }
template <>
std::string all_set<TiledOptions>() {
  return "batch=4,cstore=plain,cv_max=2,device=h100,k=64,kernel=rows,kt=16,layout=col,"
         "panel_per_sm=90,panel_reuse=2,panel_rows=128,r=8,reorder=off,segsize=12,smem=16384,u_min=0.5,"
         "variant=segmented";
}
template <>
std::string all_set<HiSparseOptions>() {
  return "add=sort,d=64,dense=never,item_cost=100,spmv=levels,transposed=1";
}
template <>
std::string all_set<BcooOptions>() { return "chunk=64"; }
template <>
std::string all_set<BccooOptions>() { return "chunk=64"; }
template <>
std::string all_set<BccooGpuOptions>() { return "blocks=3,chunk=256,kernel=block,prefetch=2"; }
template <>
std::string all_set<BroEllOptions>() {
  return "bar=1,bar_algo=fast,bar_window=2,first=abs,fit_bits=64,h=64,kernel=batched,max_fill=20,"
         "max_skew=inf,sym_len=64,unroll=4";
}
template <>
std::string all_set<BroCooOptions>() { return "interval=256,sym_len=64"; }
template <>
std::string all_set<BroHybOptions>() {
  return "bar=1,bar_algo=greedy,bar_window=1,ell_width=2,first=abs,fit_bits=64,h=64,interval=64,"
         "kernel=classic,max_fill=inf,split=cusp,sym_len=64,unroll=4";
}
template <>
std::string all_set<BroCsrOptions>() { return "max_skew=inf,sym_len=64,tpr=2"; }
template <>
std::string all_set<EllOptions>() { return "max_fill=inf"; }
template <>
std::string all_set<EllrOptions>() { return "max_fill=20"; }
template <>
std::string all_set<CooOptions>() { return "kernel=segmented"; }
template <>
std::string all_set<HybOptions>() { return "K=3,breakeven=100,max_fill=inf"; }
template <>
std::string all_set<PlanOptions>() {
  return "budget_ms=50,cache=0,calls=10,deterministic=1,k=8,layout=col,memory=100000000,"
         "ops=spmv+spmv_t,transpose=store";
}
template <>
std::string all_set<CsbOptions>() { return "beta=8,empty=drop,l1_line_bytes=64"; }
template <>
std::string all_set<GcsbOptions>() {
  return "beta=8,block_lanes=2,blocks_per_lane=3,dense=both,dense_parts=2,empty=keep,flush=atomic,"
         "group_size=4,kernel=deterministic,l1_line_bytes=64,lanes=4,plan_form=runs";
}

template <class Opts>
class FormatOptionsTest : public ::testing::Test {};
using Converted = ::testing::Types<CsrOptions, SellOptions, TiledOptions, HiSparseOptions,
                                   BcooOptions, BccooOptions, BccooGpuOptions, BroEllOptions,
                                   BroCooOptions, BroHybOptions, BroCsrOptions, EllOptions,
                                   EllrOptions, CooOptions, HybOptions, CsbOptions, GcsbOptions,
                                   PlanOptions>;
TYPED_TEST_SUITE(FormatOptionsTest, Converted);

TYPED_TEST(FormatOptionsTest, RegistryParamsAreTheFieldTable) {
  using Opts = TypeParam;
  const FormatEntry& e = find_format(Opts::format);
  const std::vector<ParamInfo> want = option_params<Opts>();
  ASSERT_EQ(e.params.size(), want.size()) << e.name;
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(e.params[i].name, want[i].name) << e.name;
    EXPECT_EQ(e.params[i].default_value, want[i].default_value) << e.name << " " << want[i].name;
    EXPECT_EQ(e.params[i].help, want[i].help) << e.name << " " << want[i].name;
  }
  // The defaults `spmat formats` prints are what the build uses when the key is absent.
  FormatOptions help_defaults;
  for (const auto& p : e.params) help_defaults.set(p.name, p.default_value);
  EXPECT_EQ(parse_options<Opts>(help_defaults), Opts{}) << e.name;
}

TYPED_TEST(FormatOptionsTest, StringsStructStringsRoundTrip) {
  using Opts = TypeParam;
  const std::string text = all_set<Opts>();
  const Opts o = parse_options<Opts>(FormatOptions::parse(text));
  EXPECT_NE(o, Opts{}) << text;
  const FormatOptions rendered = to_format_options(o);
  EXPECT_EQ(rendered.all().size(), Opts::fields().size());  // every field, set or not
  const FormatOptions set = FormatOptions::parse(text);
  for (const auto& [key, value] : set.all())
    EXPECT_EQ(rendered.get_string(key, "(absent)"), value) << key;
  EXPECT_EQ(parse_options<Opts>(to_format_options(o)), o);
  EXPECT_EQ(parse_options<Opts>(to_format_options(Opts{})), Opts{});
  // Each option all_set names differs from its default (else the round trip proves little).
  const Opts d{};
  for (const auto& f : Opts::fields())
    if (set.has(f.name)) EXPECT_NE(f.render(o), f.render(d)) << f.name;
}

TYPED_TEST(FormatOptionsTest, TypedBuildEqualsStringBuild) {
  using Opts = TypeParam;
  const auto a = testing::random_int_matrix(70, 60, 0.08, 11, 8);
  for (const std::string& text : {std::string(), all_set<Opts>()}) {
    const FormatOptions strings = FormatOptions::parse(text);
    const auto by_string = Matrix<double>::build(a, Opts::format, Backend::cpu, strings);
    const auto typed = Matrix<double>::build(a, parse_options<Opts>(strings), Backend::cpu);
    EXPECT_EQ(typed.format_name(), Opts::format);
    EXPECT_EQ(typed.storage_bytes(), by_string.storage_bytes()) << text;
    EXPECT_EQ(typed.to_csr(), by_string.to_csr()) << text;
    if (typed.supports(Op::spmv)) {
      const auto x = testing::random_vector<double>(typed.cols(), 5, true);
      std::vector<double> y1(typed.rows()), y2(typed.rows());
      typed.spmv(x, y1);
      by_string.spmv(x, y2);
      EXPECT_EQ(y1, y2) << text;
    }
  }
}

std::string build_error(const std::string& format, const std::string& options) {
  const auto a = testing::example<double, std::int32_t>();
  try {
    (void)Matrix<double>::build(a, format, Backend::cpu, FormatOptions::parse(options));
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

TEST(FormatOptions, BadValueNamesFormatKeyValueAndTheAcceptedOnes) {
  EXPECT_EQ(build_error("csr", "tpr=3"), "csr: tpr=3 is not 0, 2, 4, 8, 16 or 32");
  EXPECT_EQ(build_error("csr", "kernel=warp"), "csr: kernel=warp is not auto, scalar, vector or merge");
  EXPECT_EQ(build_error("sell", "C=0"), "sell: C=0 is not an integer in 1..1024");
  EXPECT_EQ(build_error("sell", "max_fill=-2"), "sell: max_fill=-2 is not a number >= 0");
  EXPECT_EQ(build_error("tiled", "panel_reuse=0"), "tiled: panel_reuse=0 is not a number > 0");
  EXPECT_EQ(build_error("tiled", "device=v100"), "tiled: device=v100 is not h100, h200 or a100");
  EXPECT_EQ(build_error("hisparse", "transposed=yes"), "hisparse: transposed=yes is not 0 or 1");
  EXPECT_EQ(build_error("bccoo-gpu", "prefetch=3"), "bccoo-gpu: prefetch=3 is not an integer in 0..2");
  EXPECT_EQ(build_error("bcoo", "chunk=x"), "bcoo: chunk=x is not an integer >= 1");
  EXPECT_EQ(build_error("bro-ell", "h=48"), "bro-ell: h=48 is not a multiple of 32 in 32..1024");
  EXPECT_EQ(build_error("bro-hyb", "split=x"), "bro-hyb: split=x is not bytes or cusp");
  EXPECT_EQ(build_error("hyb", "K=-1"), "hyb: K=-1 is not an integer >= 0 or auto");
  EXPECT_EQ(build_error("tune", "cache=maybe"),
            "auto: cache=maybe is not 0, 1, false, true, no, yes, off or on");
  EXPECT_EQ(build_error("gcsb", "lanes=3"), "gcsb: lanes=3 is not 1, 2, 4, 8, 16, 32 or auto");
  // Cross-field rules stay in the build.
  EXPECT_EQ(build_error("sell", "C=32,sigma=48"),
            "sell: sigma=48 must be 1 (no sorting) or a positive multiple of C=32");
  // Unknown keys: rejected against the registry entry before the format reads anything.
  EXPECT_EQ(build_error("csr", "tpr=8,lanes=4"),
            "format 'csr' has no option 'lanes' (options: kernel, tpr, bins, narrow_cols)");
}

TEST(FormatOptions, TypedBuildChecksValuesLikeTheStringBuild) {
  const auto a = testing::example<double, std::int32_t>();
  try {
    (void)Matrix<double>::build(a, CsrOptions{.tpr = 3});
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), "csr: tpr=3 is not 0, 2, 4, 8, 16 or 32");
  }
  const auto m = Matrix<double>::build(a, SellOptions{.C = 2, .sigma = 4});
  EXPECT_EQ(m.format_name(), "sell");
  EXPECT_EQ(m.to_csr(), (convert<double, std::int64_t>(a)));
}

// Defaults derived from other options or the matrix: sell's sigma (256 rounded up to a multiple
// of C), tiled's panel_rows (256, or 4 with kernel=panel), gcsb's beta, group_size, lanes and
// blocks_per_lane are "auto" in the help and the struct.
TEST(FormatOptions, DerivedDefaultsAreAuto) {
  EXPECT_EQ(SellOptions{}.sigma, std::nullopt);
  EXPECT_EQ(to_format_options(SellOptions{}).to_string(), "C=32,max_fill=8,max_skew=8,sigma=auto");
  const auto a = testing::example<double, std::int32_t>();
  const auto s = Sell<double, std::int32_t>::build(a, to_format_options(SellOptions{.C = 48}));
  EXPECT_EQ(s.sigma, 288);
  EXPECT_EQ(TiledOptions{}.panel_rows, std::nullopt);
  EXPECT_EQ((TiledStorage<double, std::int32_t>::build(a, {}).panel_rows), 256);
  const auto g = to_format_options(GcsbOptions{});
  for (const char* key : {"beta", "group_size", "lanes", "blocks_per_lane"})
    EXPECT_EQ(g.get_string(key, ""), "auto") << key;
  EXPECT_EQ((Gcsb<double, std::int32_t>::build(a, {}).beta_log2), 4);  // fp64: 128 B / 8 B = 16
}

}  // namespace
}  // namespace spmat
