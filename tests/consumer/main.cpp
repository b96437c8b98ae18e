// A downstream program: builds a 2×2 matrix, multiplies, prints the result (expects "3 7").
#include <spmat/matrix.hpp>

#include <cstdio>
#include <vector>

int main() {
  spmat::Csr<double, int> a;
  a.rows = a.cols = 2;
  a.row_ptr = {0, 2, 4};
  a.col_idx = {0, 1, 0, 1};
  a.values = {1, 2, 3, 4};
  auto m = spmat::Matrix<double>::build(a, "csr");
  std::vector<double> x{1, 1}, y(2);
  m.spmv(x, y);
  std::printf("%g %g\n", y[0], y[1]);
  return (y[0] == 3 && y[1] == 7) ? 0 : 1;
}
