// spmat/core/typed_options_test.cpp — the field table: parsing, printing, errors, help defaults.
// SPDX-License-Identifier: MIT
#include "spmat/core/typed_options.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace spmat {
namespace {

enum class Mode { fast, exact };

// Every kind of field once.
struct DemoOptions {
  static constexpr const char* format = "demo";
  int n = 4;
  std::optional<std::int64_t> window;
  int lanes = 8;
  int step = 64;
  double limit = 8;
  double ratio = 1.5;
  bool flag = false;
  Mode mode = Mode::fast;
  std::string pick = "a";
  std::string text = "free";
  static const OptionTable<DemoOptions>& fields() {
    using O = DemoOptions;
    static const OptionTable<O> t{
        int_option("n", &O::n, 1, 16, "count"),
        int_option("window", &O::window, 1, std::numeric_limits<std::int64_t>::max(), "window"),
        int_choice_option("lanes", &O::lanes, {4, 8, 16}, "lanes"),
        int_option("step", &O::step, 32, 1024, 32, "step"),
        double_option("limit", &O::limit, 0.0, false, "limit"),
        double_option("ratio", &O::ratio, 0.0, true, "ratio"),
        bool_option("flag", &O::flag, "flag"),
        enum_option("mode", &O::mode, {{"fast", Mode::fast}, {"exact", Mode::exact}}, "mode"),
        choice_option("pick", &O::pick, {"a", "b", "c"}, "pick"),
        string_option("text", &O::text, "text")};
    return t;
  }
  bool operator==(const DemoOptions&) const = default;
};
static_assert(TypedOptions<DemoOptions>);
static_assert(!TypedOptions<FormatOptions>);

std::string parse_error(const std::string& text) {
  try {
    (void)parse_options<DemoOptions>(FormatOptions::parse(text));
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TypedOptions, DefaultsComeFromTheStructAndRenderAsTheHelpDefaults) {
  const auto params = option_params<DemoOptions>();
  ASSERT_EQ(params.size(), DemoOptions::fields().size());
  std::string defaults;
  for (const auto& p : params) defaults += p.name + "=" + p.default_value + ",";
  EXPECT_EQ(defaults, "n=4,window=auto,lanes=8,step=64,limit=8,ratio=1.5,flag=0,mode=fast,pick=a,text=free,");
  EXPECT_EQ(params[0].help, "count");
  // The help defaults, read back, are the struct's defaults.
  FormatOptions o;
  for (const auto& p : params) o.set(p.name, p.default_value);
  EXPECT_EQ(parse_options<DemoOptions>(o), DemoOptions{});
  EXPECT_EQ(parse_options<DemoOptions>(FormatOptions()), DemoOptions{});
}

TEST(TypedOptions, StringsToStructToStringsRoundTrip) {
  const std::string text = "flag=1,lanes=16,limit=inf,mode=exact,n=12,pick=c,ratio=0.25,step=96,text=x y,window=300";
  const auto d = parse_options<DemoOptions>(FormatOptions::parse(text));
  EXPECT_EQ(d.n, 12);
  EXPECT_EQ(d.window, 300);
  EXPECT_EQ(d.lanes, 16);
  EXPECT_EQ(d.step, 96);
  EXPECT_TRUE(std::isinf(d.limit));
  EXPECT_EQ(d.ratio, 0.25);
  EXPECT_TRUE(d.flag);
  EXPECT_EQ(d.mode, Mode::exact);
  EXPECT_EQ(d.pick, "c");
  EXPECT_EQ(d.text, "x y");
  EXPECT_EQ(to_format_options(d).to_string(), text);
  EXPECT_EQ(parse_options<DemoOptions>(to_format_options(d)), d);
  // Numbers print as the shortest text that reads back exactly.
  const auto exact =
      parse_options<DemoOptions>(FormatOptions::parse("ratio=0.1234567890123,limit=1e300"));
  EXPECT_EQ(to_format_options(exact).get_string("ratio", ""), "0.1234567890123");
  EXPECT_EQ(parse_options<DemoOptions>(to_format_options(exact)), exact);
  // "auto" is the empty optional.
  EXPECT_EQ(parse_options<DemoOptions>(FormatOptions::parse("window=auto")).window, std::nullopt);
}

TEST(TypedOptions, KeysTheTableLacksAreLeftToTheRegistryCheck) {
  EXPECT_EQ(parse_options<DemoOptions>(FormatOptions::parse("other=1,n=2")).n, 2);
}

TEST(TypedOptions, BadValuesNameFormatKeyValueAndWhatIsAccepted) {
  EXPECT_EQ(parse_error("n=0"), "demo: n=0 is not an integer in 1..16");
  EXPECT_EQ(parse_error("n=4x"), "demo: n=4x is not an integer in 1..16");
  EXPECT_EQ(parse_error("window=0"), "demo: window=0 is not an integer >= 1 or auto");
  EXPECT_EQ(parse_error("lanes=5"), "demo: lanes=5 is not 4, 8 or 16");
  EXPECT_EQ(parse_error("step=48"), "demo: step=48 is not a multiple of 32 in 32..1024");
  EXPECT_EQ(parse_error("limit=-1"), "demo: limit=-1 is not a number >= 0");
  EXPECT_EQ(parse_error("limit=nan"), "demo: limit=nan is not a number >= 0");
  EXPECT_EQ(parse_error("ratio=0"), "demo: ratio=0 is not a number > 0");
  EXPECT_EQ(parse_error("flag=yes"), "demo: flag=yes is not 0 or 1");
  EXPECT_EQ(parse_error("mode=slow"), "demo: mode=slow is not fast or exact");
  EXPECT_EQ(parse_error("pick=d"), "demo: pick=d is not a, b or c");
  // The format named in the message is the caller's (a format registered under several names).
  try {
    (void)parse_options<DemoOptions>(FormatOptions::parse("n=99"), "demo-2");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), "demo-2: n=99 is not an integer in 1..16");
  }
}

}  // namespace
}  // namespace spmat
