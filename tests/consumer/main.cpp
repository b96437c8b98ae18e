// A downstream program that includes only the umbrella header: builds a 2×2 matrix, multiplies,
// prints the result (expects "3 7"), and touches the rest of the public API on the way (the
// generators, Matrix Market writing and reading, the planner, the registry, the configuration).
#include <spmat/spmat.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  spmat::Csr<double, int> a;
  a.rows = a.cols = 2;
  a.row_ptr = {0, 2, 4};
  a.col_idx = {0, 1, 0, 1};
  a.values = {1, 2, 3, 4};
  auto m = spmat::Matrix<double>::build(a, "csr");
  std::vector<double> x{1, 1}, y(2);
  m.spmv(x, y);
  std::printf("%g %g\n", y[0], y[1]);
  if (!(y[0] == 3 && y[1] == 7)) return 1;

  // A generated matrix through a Matrix Market file (in the directory given, else the current
  // one) and back, planned and built by the planner.
  const std::string dir = argc > 1 ? argv[1] : ".";
  const auto g = spmat::gen::generate<double, std::int32_t>("gen:lap2d:8");
  spmat::io::write_matrix_market(dir + "/lap2d.mtx", g);
  const auto r = spmat::io::load_matrix<double, std::int32_t>(dir + "/lap2d.mtx");
  if (r.rows != 64 || r.nnz() != g.nnz()) return 2;
  const spmat::FormatPlan p = spmat::plan(r, spmat::PlanRequest{});
  if (p.choices.empty() || spmat::registry().empty()) return 3;
  auto planned = spmat::Matrix<double>::build(r, "auto");
  std::vector<double> ones(64, 1.0), out(64);
  planned.spmv(ones, out);
  // A format's typed options from the installed headers: the same matrix as the string form.
  auto typed = spmat::Matrix<double>::build(r, spmat::SellOptions{.C = 8}, spmat::Backend::cpu);
  std::vector<double> typed_out(64);
  typed.spmv(ones, typed_out);
  if (typed.format().name != "sell" || typed_out != out) return 6;
  try {
    (void)spmat::io::load_matrix<double, std::int32_t>(dir + "/no-such-file.mtx");
    return 4;
  } catch (const spmat::Error&) {
  }
  return spmat::kVersion[0] != '\0' ? 0 : 5;
}
