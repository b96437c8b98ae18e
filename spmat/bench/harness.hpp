// spmat/bench/harness.hpp — the benchmark harness behind `spmat bench`, usable from C++.
// SPDX-License-Identifier: MIT
//
// For every matrix × precision × format × operation the harness
//   1. builds the format (build_ms, of which upload_ms copied it to the GPU) and prepares the
//      operation (prepare_ms), together setup_ms (wall clock, with a device synchronize);
//   2. poisons the output with NaN, runs once and compares with the fp64 reference
//      (spmat/core/reference.hpp): max_relative_norm2, correct = error ≤ tolerance();
//   3. runs `warmup` untimed, then `reps` timed samples (CUDA events on the default stream, a
//      sample of back-to-back calls spanning about min_sample_ms; or steady_clock on the CPU)
//      and keeps median / min / max per call;
//   4. checks the output of the last timed run too (atomics may reorder sums run to run);
//   5. derives GB/s (format's traffic model and the CSR floor), GFLOP/s and bw_fraction;
//   6. with build_from_device (CUDA): builds the format once more from the CSR uploaded to the
//      device beforehand (untimed), timed as device_build_first_ms (wall clock with a
//      synchronize) and again up to 9 times (device_build_ms: their median, a rebuild's cost),
//      then times update_values on that matrix with the same values from device memory
//      (update_values_ms, CUDA events; the first, untimed, call builds any value map).
// An error in one measurement (a format lacking an operation, out of memory, ...) becomes a
// result with completed = false and its message; the suite goes on.
//
//   BenchConfig c;
//   c.matrices = {matrix_from_spec("gen:lap2d:100")};
//   c.formats = {{"csr", {}}};
//   Report r = run_bench(c);
//   std::string json = to_json(r).dump();   // the schema of `spmat bench --json`
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "spmat/bench/json.hpp"
#include "spmat/bench/timer.hpp"
#include "spmat/core/csr.hpp"
#include "spmat/core/options.hpp"
#include "spmat/core/types.hpp"

namespace spmat::bench {

enum class Precision { fp32, fp64 };
enum class IndexWidth { int32, int64 };
std::string_view to_string(Precision p);
std::string_view to_string(IndexWidth w);
Precision parse_precision(std::string_view s);
IndexWidth parse_index_width(std::string_view s);

/// Relative 2-norm error above which a result is flagged incorrect: fp64 1e-10, fp32 1e-4
/// (looser than the unit tests: GPU atomics reorder sums over long columns).
double tolerance(Precision p);

/// A canonical CSR in one of the benchmark's value and index types.
using AnyCsr = std::variant<Csr<float, std::int32_t>, Csr<float, std::int64_t>,
                            Csr<double, std::int32_t>, Csr<double, std::int64_t>>;

/// A matrix to benchmark: its name in the results and how to load it. The harness loads it
/// once per precision, directly in that precision and index width, so that no wider copy of a
/// large matrix sits in host memory beside the one the formats are built from.
struct MatrixSource {
  std::string name;
  std::function<AnyCsr(Precision, IndexWidth)> load;
};
/// A file (.mtx, .mtx.gz, .smc) or generator spec, loaded with spmat::io::load_matrix and
/// named by spmat::io::matrix_name.
MatrixSource matrix_from_spec(std::string spec);
/// An in-memory matrix (tests).
MatrixSource matrix_from_csr(std::string name, Csr<double, std::int64_t> a);

/// One format to run, with its build options (the same name may appear with different options).
struct FormatRun {
  std::string name;
  FormatOptions options;
};

struct Result;

struct BenchConfig {
  std::vector<MatrixSource> matrices;
  std::vector<FormatRun> formats;  ///< empty: every registered format available on `backend`
  std::vector<Op> ops{Op::spmv, Op::spmv_t};
  std::vector<Precision> precisions{Precision::fp64, Precision::fp32};
  std::vector<std::int64_t> ks{32};                         ///< spmm: dense columns
  std::vector<DenseLayout> layouts{DenseLayout::row_major};  ///< spmm: layout of B and C
  Backend backend = Backend::cpu;
  IndexWidth index = IndexWidth::int32;
  int reps = 0;     ///< timed runs; 0: 50 on cuda, 10 on cpu
  int warmup = -1;  ///< untimed runs first; -1: 10 on cuda, 2 on cpu
  bool flush_l2 = false;        ///< write 2× L2 (CPU: 2× LLC) between timed runs, untimed
  /// cuda: a timed sample holds enough back-to-back calls to span about this long (launch
  /// latency out of microsecond-long products); 0: one call per sample
  double min_sample_ms = 0.2;
  bool integer_inputs = false;  ///< x / B of small integers in [-4, 4] (exact sums: tests)
  double copy_gbs = 0;          ///< > 0: use as the copy bandwidth instead of measuring it
  bool build_from_device = false;  ///< cuda: also time the build from a device CSR (step 6)
  /// Called after each measurement (progress display); done counts from 1 to total.
  std::function<void(const Result&, std::size_t done, std::size_t total)> on_result;
};

/// One measurement. Doubles that do not apply (not completed, no cuSPARSE result) are NaN
/// (null in JSON). Ginkgo's meanings: storage_bytes of the stored format, time_ms the median of
/// `repetitions` runs, max_relative_norm2 the worst checked run, completed = ran to the end.
struct Result {
  std::string matrix;
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::string format;
  std::string options;  ///< the user's format options, "key=value,..."
  Op op = Op::spmv;
  Precision precision = Precision::fp64;
  IndexWidth index = IndexWidth::int32;
  std::int64_t k = 1;  ///< spmm only
  DenseLayout layout = DenseLayout::row_major;  ///< spmm only
  bool completed = false;
  bool correct = false;
  /// Not completed because the format refuses it by design (UnsupportedError: an operation or
  /// backend it lacks, ELL's padding limit), as opposed to a failure.
  bool unsupported = false;
  std::string error;
  double time_ms = NAN, time_min_ms = NAN, time_max_ms = NAN;
  int repetitions = 0;
  int calls_per_sample = 1;  ///< back-to-back calls in one timed sample (time_ms is per call)
  double setup_ms = NAN;     ///< build + prepare, planning excluded
  /// setup_ms in its two parts: the build (with its upload on the GPU) and prepare(op) (what a
  /// format does once per operation: cuSPARSE's buffer size and preprocess, work buffers);
  /// upload_ms: the part of build_ms that copied the storage to the device (0 on the CPU;
  /// NaN for "auto" and "tune", whose candidates' uploads are not told apart)
  double build_ms = NAN, prepare_ms = NAN, upload_ms = NAN;
  /// The build's memory at its height. Host: the process's resident memory at its height during
  /// the build and when the build began (the matrix's CSR and what the benchmark holds), so
  /// peak - before is what the build itself needed (0: unknown). Device: the most bytes the
  /// build held at once beyond what spmat held before it, transients included.
  std::uint64_t build_host_before_bytes = 0, build_host_peak_bytes = 0;
  std::size_t build_device_peak_bytes = 0;
  /// build_from_device only: Matrix::build from the CSR already in device memory, the median of
  /// the builds after the first (NaN when not measured or refused: device_build_error says
  /// why); device_builder: the format has a device builder (else that build went through the host); update_values_ms: the median
  /// update_values with device values (NaN where the format cannot take new values).
  double device_build_ms = NAN;
  double device_build_first_ms = NAN;  ///< the first build, with one-time costs (kernel loading)
  std::vector<double> device_build_samples_ms;  ///< the builds after the first, in order
  bool device_builder = false;
  std::string device_build_error;
  double update_values_ms = NAN;
  double plan_ms = NAN;      ///< "auto" / "tune": planning (and tuning) time; NaN otherwise
  /// "tune": the part of plan_ms beyond what "auto" spends (other candidates' builds, timing);
  /// from_cache: the decision came from the plan cache
  double tune_ms = NAN;
  bool from_cache = false;
  /// "tune": the candidates it timed for this op (format, "on A^T" for a stored transpose) and
  /// their medians in ms, in the order they were ranked
  std::vector<std::pair<std::string, double>> tune_measured;
  std::string planned;       ///< "auto" / "tune": the format that ran this op ("csr", "csr on Aᵀ")
  std::size_t storage_bytes = 0;
  double max_relative_norm2 = NAN;
  double gbs = NAN, csr_equiv_gbs = NAN, gflops = NAN, bw_fraction = NAN;
  double speedup_vs_cusparse = NAN;
};

struct Report {
  DeviceDescription device;
  Backend backend = Backend::cpu;
  std::string commit;
  std::string date;
  std::string version;
  std::vector<Result> results;
};

/// Runs every measurement of `config`. Throws only for configuration errors (no GPU for the
/// cuda backend, unknown format names); everything else is recorded per result.
Report run_bench(const BenchConfig& config);

/// Sets speedup_vs_cusparse of every completed result: the fastest completed, correct
/// `cusparse-*` median for the same matrix, op, precision, index, k and layout, divided by this
/// median; NaN where there is none.
void compute_speedups(std::vector<Result>& results);

/// The JSON document of `spmat bench` (schema in bench/README.md).
Json to_json(const Report& report);
Json to_json(const Result& result);

/// The terminal table; `color` marks incorrect results in red (ANSI).
std::string format_table(const Report& report, bool color);
/// One line per measurement, for progress output when stderr is not a terminal.
std::string one_line(const Result& r);
/// Why `spmat bench` exits with status 1: measurements that failed (not completed, other than
/// a refusal by design, see Result::unsupported) or are incorrect; "" when there are none.
std::string failure_summary(const Report& report);

/// `git rev-parse --short HEAD` when available, else $SPMAT_COMMIT, else "unknown".
std::string current_commit();
/// Now, as ISO 8601 UTC ("2025-01-31T12:00:00Z").
std::string utc_now_iso8601();

}  // namespace spmat::bench
