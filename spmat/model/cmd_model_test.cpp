// spmat/model/cmd_model_test.cpp — `spmat model`: argument errors and the model values of a 4×4
// matrix checked by hand (the command's source is compiled into this test).
// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "spmat/bench/json.hpp"
#include "spmat/core/error.hpp"
#include "spmat/io/matrix_market.hpp"
#include "tests/support/test_support.hpp"
#include "tools/cmd_model.cpp"

namespace spmat::cli {
namespace {

int call(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return cmd_model(static_cast<int>(argv.size()), argv.data());
}

TEST(ModelCli, ArgumentErrorsAreRefusedWithAClearMessage) {
  EXPECT_THROW(call({}), ParseError);                                              // no matrix
  EXPECT_THROW(call({"gen:lap2d:4", "gen:lap2d:5"}), ParseError);                  // two matrices
  EXPECT_THROW(call({"gen:lap2d:4", "--k", "0"}), ParseError);
  EXPECT_THROW(call({"gen:lap2d:4", "--k", "2.5"}), ParseError);
  EXPECT_THROW(call({"gen:lap2d:4", "--k", "abc"}), ParseError);
  EXPECT_THROW(call({"gen:lap2d:4", "--k"}), ParseError);                          // no value
  EXPECT_THROW(call({"gen:lap2d:4", "--precision", "fp16"}), ParseError);
  EXPECT_THROW(call({"gen:lap2d:4", "--index", "int16"}), ParseError);
  EXPECT_THROW(call({"gen:lap2d:4", "--layout", "diag"}), ParseError);
  EXPECT_THROW(call({"gen:lap2d:4", "--device", "v100"}), ParseError);
  EXPECT_THROW(call({"gen:lap2d:4", "--bandwidth-gbs", "-3"}), ParseError);
  EXPECT_THROW(call({"gen:lap2d:4", "--frobnicate", "1"}), ParseError);
  try {
    call({"gen:lap2d:4", "--precision", "fp16"});
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("fp32 or fp64"), std::string::npos) << e.what();
  }
  EXPECT_EQ(call({"--help"}), 0);
}

TEST(ModelCli, FourByFourValuesMatchTheHandComputation) {
  // [[1,0,2,0],[0,0,0,0],[3,4,0,5],[0,0,0,6]], fp32, K = 16, A100 numbers (no GPU in CI here;
  // with a GPU the SM count/L2 come from it, so U is checked only without one).
  const auto a = testing::example<double, std::int32_t>();
  const auto dir = std::filesystem::temp_directory_path() / "spmat_cmd_model_test";
  std::filesystem::create_directories(dir);
  const std::string mtx = (dir / "four.mtx").string(), json = (dir / "four.json").string();
  io::write_matrix_market(mtx, a);
  ASSERT_EQ(call({mtx, "--k", "16", "--layout", "col", "--device", "a100", "--bandwidth-gbs", "1000",
                  "--panel-rows", "2", "--as-run", "variant=segmented,segsize=2,reorder=off,kt=8", "--json", json}),
            0);
  std::ifstream in(json);
  std::stringstream text;
  text << in.rdbuf();
  const auto j = bench::Json::parse(text.str());
  const auto num = [](const bench::Json& o, std::string_view key) { return o.find(key)->as_number(); };
  const auto& s = *j.find("inputs");
  EXPECT_DOUBLE_EQ(num(s, "mu"), 1.5);
  EXPECT_DOUBLE_EQ(num(s, "sigma"), std::sqrt(1.25));
  EXPECT_DOUBLE_EQ(num(s, "rho"), 1.5);      // 6 nonzeros / 4 staged columns
  EXPECT_DOUBLE_EQ(num(s, "z"), 16.0);       // one 3×32 S-ELL slab / 6
  EXPECT_DOUBLE_EQ(num(s, "c_miss"), 4.0);   // 4 fp32 columns in one 64 B line
  EXPECT_DOUBLE_EQ(num(s, "l"), 1.0);
  EXPECT_DOUBLE_EQ(num(*j.find("device"), "bandwidth_gbs"), 1000);
  if (!cuda_available()) EXPECT_DOUBLE_EQ(num(s, "u"), 1.0 / 108);
  // Eq. 2, fp32/int32, δ = 8: 2·1.5/(1.5·12 + 12) = 0.1.
  EXPECT_NEAR(num(*j.find("naive"), "intensity"), 0.1, 1e-12);
  // Row-wise kernel, baseline, K = 16 → kt = 16: A = 6·8 + 4·2·4 = 80 B, B = 4 rows × 64 B,
  // C = 4 × 64 B: 592 B; optimistic time = 592 B / 1000 GB/s.
  const auto& base = j.find("rows_variants")->items()[0];
  EXPECT_EQ(base.find("name")->as_string(), "baseline");
  const auto& opt = *base.find("optimistic");
  EXPECT_DOUBLE_EQ(num(opt, "kt"), 16);
  EXPECT_DOUBLE_EQ(num(opt, "bytes"), 592);
  EXPECT_NEAR(num(opt, "time_ms"), 592 / 1e12 * 1e3, 1e-15);
  EXPECT_FALSE(j.find("chosen_options")->as_string().empty());
  // Gathers of the row-wise kernel: 8 rows per warp × longest row 3 = 24 slots × 64 B, and
  // 4 panel-distinct pieces; panel kernel R = 2: 5 distinct loads, L2 min(4, 5) pieces.
  EXPECT_DOUBLE_EQ(num(*base.find("predicted"), "l1_bytes"), 24 * 64);
  EXPECT_DOUBLE_EQ(num(*base.find("predicted"), "l2_bytes"), 4 * 64);
  const auto& panel = *j.find("panel");
  EXPECT_DOUBLE_EQ(num(panel, "panel_rows"), 2);
  EXPECT_DOUBLE_EQ(num(panel, "sum_distinct"), 5);
  EXPECT_DOUBLE_EQ(num(*panel.find("predicted"), "l1_bytes"), 5 * 64);
  EXPECT_DOUBLE_EQ(num(*panel.find("predicted"), "l2_bytes"), 4 * 64);
  const std::string kernel = j.find("kernel")->as_string();
  EXPECT_TRUE(kernel == "rows" || kernel == "panel") << kernel;
  EXPECT_GT(num(j, "panel_time_ms"), 0);
  EXPECT_GT(num(j, "rows_time_ms"), 0);
  // as_run: segsize 2 splits row 2 (3 nonzeros) into 2 work rows; kt = 8 → 2 tiles.
  const auto& ar = *j.find("as_run");
  EXPECT_EQ(ar.find("name")->as_string(), "segmented");
  EXPECT_DOUBLE_EQ(num(*ar.find("profile"), "work_rows"), 5);
  EXPECT_DOUBLE_EQ(num(*ar.find("profile"), "split_work_rows"), 2);
  EXPECT_DOUBLE_EQ(num(*ar.find("predicted"), "kt"), 8);
  EXPECT_DOUBLE_EQ(num(*ar.find("all_miss"), "a_bytes"), 2 * (6 * 8 + 5 * 2 * 4));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace spmat::cli
