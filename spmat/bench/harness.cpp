// spmat/bench/harness.cpp — the measurement loop: load, build, check, time, derive figures.
// SPDX-License-Identifier: MIT
#include "spmat/bench/harness.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <new>
#include <random>
#include <span>
#include <tuple>

#include "spmat/config.hpp"
#include "spmat/core/device_memory.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/formats/csr/csr.hpp"  // csr_add: the reference of add
#include "spmat/io/file_io.hpp"
#include "spmat/io/load.hpp"
#include "spmat/matrix.hpp"
#include "spmat/model/traffic.hpp"
#include "spmat/registry.hpp"

namespace spmat::bench {

std::string_view to_string(Precision p) { return p == Precision::fp32 ? "fp32" : "fp64"; }
std::string_view to_string(IndexWidth w) { return w == IndexWidth::int32 ? "int32" : "int64"; }
Precision parse_precision(std::string_view s) {
  if (s == "fp32" || s == "float" || s == "single") return Precision::fp32;
  if (s == "fp64" || s == "double") return Precision::fp64;
  throw ParseError("unknown precision '" + std::string(s) + "': expected fp32 or fp64");
}
IndexWidth parse_index_width(std::string_view s) {
  if (s == "int32" || s == "32") return IndexWidth::int32;
  if (s == "int64" || s == "64") return IndexWidth::int64;
  throw ParseError("unknown index type '" + std::string(s) + "': expected int32 or int64");
}
double tolerance(Precision p) { return p == Precision::fp32 ? 1e-4 : 1e-10; }

namespace {
/// `make.template operator()<V, I>()` for the value and index types of (p, w).
template <class Make>
AnyCsr make_any(Precision p, IndexWidth w, Make&& make) {
  const bool i32 = w == IndexWidth::int32;
  if (p == Precision::fp64)
    return i32 ? AnyCsr(make.template operator()<double, std::int32_t>())
               : AnyCsr(make.template operator()<double, std::int64_t>());
  return i32 ? AnyCsr(make.template operator()<float, std::int32_t>())
             : AnyCsr(make.template operator()<float, std::int64_t>());
}
}  // namespace

MatrixSource matrix_from_spec(std::string spec) {
  std::string name = io::matrix_name(spec);
  return {std::move(name), [spec](Precision p, IndexWidth w) {
            return make_any(p, w, [&]<class V, class I>() { return io::load_matrix<V, I>(spec); });
          }};
}

MatrixSource matrix_from_csr(std::string name, Csr<double, std::int64_t> a) {
  auto shared = std::make_shared<const Csr<double, std::int64_t>>(std::move(a));
  return {name, [shared, name](Precision p, IndexWidth w) {
            return make_any(p, w, [&]<class V, class I>() { return convert<V, I>(*shared, name); });
          }};
}

namespace {

struct OpConfig {
  Op op;
  std::int64_t k = 1;
  DenseLayout layout = DenseLayout::row_major;
  auto key() const { return std::tuple(static_cast<int>(op), k, static_cast<int>(layout)); }
};

std::vector<OpConfig> expand_ops(const BenchConfig& c) {
  std::vector<OpConfig> v;
  for (Op op : c.ops) {
    if (op != Op::spmm) {
      v.push_back({op});
      continue;
    }
    for (std::int64_t k : c.ks)
      for (DenseLayout l : c.layouts) v.push_back({op, k, l});
  }
  return v;
}

void device_sync(Backend b) {
#if SPMAT_WITH_CUDA
  if (b == Backend::cuda) gpu::synchronize();
#else
  (void)b;
#endif
}

std::vector<double> time_runs(Backend b, const std::function<void()>& run, int warmup, int reps,
                              bool flush, double min_sample_ms, int& calls_per_sample) {
  calls_per_sample = 1;
#if SPMAT_WITH_CUDA
  if (b == Backend::cuda)
    return gpu::time_runs(run, warmup, reps, flush, 25.0, min_sample_ms, &calls_per_sample);
#else
  (void)b;
  (void)min_sample_ms;
#endif
  return cpu::time_runs(run, warmup, reps, flush);
}

/// A dense array in the backend's memory (host vector or device allocation).
template <class V>
class Operand {
 public:
  Operand(Backend b, std::size_t n) : backend_(b), n_(n) {
    if (b == Backend::cpu) {
      host_.resize(n);
      return;
    }
#if SPMAT_WITH_CUDA
    dev_ = static_cast<V*>(gpu::alloc(n * sizeof(V), "benchmark operand"));
#else
    throw UnsupportedError("spmat was built without CUDA: backend cuda is not available");
#endif
  }
  ~Operand() {
#if SPMAT_WITH_CUDA
    gpu::free(dev_, n_ * sizeof(V));
#endif
  }
  Operand(const Operand&) = delete;
  Operand& operator=(const Operand&) = delete;

  V* data() { return backend_ == Backend::cpu ? host_.data() : dev_; }
  std::span<V> span() { return {data(), n_}; }
  std::span<const V> cspan() { return {data(), n_}; }
  void set(const std::vector<V>& h) {
    if (backend_ == Backend::cpu) {
      host_ = h;
      return;
    }
#if SPMAT_WITH_CUDA
    gpu::upload(dev_, h.data(), n_ * sizeof(V));
#endif
  }
  std::vector<V> get() const {
    if (backend_ == Backend::cpu) return host_;
    std::vector<V> h(n_);
#if SPMAT_WITH_CUDA
    gpu::download(h.data(), dev_, n_ * sizeof(V));
#endif
    return h;
  }
  void poison() {
    if (backend_ == Backend::cpu) {
      std::fill(host_.begin(), host_.end(), std::numeric_limits<V>::quiet_NaN());
      return;
    }
#if SPMAT_WITH_CUDA
    gpu::fill_bytes(dev_, 0xFF, n_ * sizeof(V));
#endif
  }

 private:
  Backend backend_;
  std::size_t n_;
  std::vector<V> host_;
  V* dev_ = nullptr;
};

/// Inputs and fp64 reference output of one operation configuration.
template <class V>
struct Case {
  std::vector<V> in;
  std::vector<double> want;
};

/// One matrix in one precision: the converted CSR and the lazily computed cases, shared by
/// every format (the serial reference is computed once per matrix, precision and operation).
template <class V, class I>
struct MatrixData {
  Csr<V, I> a;
  bool integer_inputs = false;
  std::map<std::tuple<int, std::int64_t, int>, Case<V>> cases;
  /// add operands and references per add_b mode (see add_mode below).
  std::map<std::string, std::pair<Csr<V, I>, Csr<double, std::int64_t>>> add_cases;
  /// Device operands of the products (role 0: input, 1: output) by element count, allocated
  /// before the first format is built and shared by every format: an L2-bound gather of x runs
  /// up to 15% apart depending on where x lands in device memory, so operands allocated after
  /// each build (wherever that build's freed arrays left room) would time the allocation
  /// history along with the format.
  std::map<std::pair<int, std::size_t>, std::unique_ptr<Operand<V>>> operands;

  Operand<V>& operand(Backend b, int role, std::size_t n) {
    auto& slot = operands[{role, n}];
    if (!slot) slot = std::make_unique<Operand<V>>(b, n);
    return *slot;
  }
  /// The input and output element counts of `oc`'s product.
  std::pair<std::size_t, std::size_t> operand_sizes(const OpConfig& oc) const {
    const auto rows = static_cast<std::size_t>(a.rows), cols = static_cast<std::size_t>(a.cols);
    const auto k = static_cast<std::size_t>(std::max<std::int64_t>(oc.k, 1));
    switch (oc.op) {
      case Op::spmv: return {cols, rows};
      case Op::spmv_t: return {rows, cols};
      case Op::spmm: return {cols * k, rows * k};
      case Op::add: break;
    }
    return {0, 0};
  }

  std::vector<V> inputs(std::int64_t n, std::uint64_t seed) const {
    std::mt19937_64 rng(seed);
    std::vector<V> v(static_cast<std::size_t>(n));
    if (integer_inputs) {
      std::uniform_int_distribution<int> d(-4, 4);
      for (auto& e : v) e = static_cast<V>(d(rng));
    } else {
      std::uniform_real_distribution<double> d(-1.0, 1.0);
      for (auto& e : v) e = static_cast<V>(d(rng));
    }
    return v;
  }

  const Case<V>& get(const OpConfig& oc) {
    auto it = cases.find(oc.key());
    if (it != cases.end()) return it->second;
    Case<V> c;
    const std::uint64_t seed = 20240501u + 1000u * static_cast<unsigned>(oc.op) +
                               static_cast<std::uint64_t>(oc.k);
    switch (oc.op) {
      case Op::spmv:
        c.in = inputs(a.cols, seed);
        c.want = reference::spmv<V, I, V, V>(a, std::span<const V>(c.in));
        break;
      case Op::spmv_t:
        c.in = inputs(a.rows, seed);
        c.want = reference::spmv_t<V, I, V, V>(a, std::span<const V>(c.in));
        break;
      case Op::spmm:
        c.in = inputs(static_cast<std::int64_t>(a.cols) * oc.k, seed);
        c.want = reference::spmm<V, I, V, V>(a, std::span<const V>(c.in), oc.k, oc.layout);
        break;
      case Op::add: break;
    }
    return cases.emplace(oc.key(), std::move(c)).first->second;
  }

  /// The CSR that B of add is built from, and the reference A + B (logical B), per mode:
  ///   t      (default) B = Aᵀ, transposed explicitly on the host in setup (untimed); for a
  ///          non-square A, B = A;
  ///   a      B = A (A + A);
  ///   t_flag B is built from A itself with the format option transposed=1, so its logical
  ///          matrix is Aᵀ and the format transposes in its own way inside the timed add
  ///          (hisparse: the state flag; cusparse-csr: cusparseCsr2cscEx2). Square A only.
  const std::pair<Csr<V, I>, Csr<double, std::int64_t>>& add_case(const std::string& mode) {
    auto it = add_cases.find(mode);
    if (it != add_cases.end()) return it->second;
    if (mode != "t" && mode != "a" && mode != "t_flag")
      throw ParseError("add_b=" + mode + " is not one of t, a, t_flag");
    if (mode == "t_flag" && a.rows != a.cols)
      throw UnsupportedError("add_b=t_flag needs a square matrix (A + Aᵀ)");
    Csr<V, I> b = mode == "t" && a.rows == a.cols ? transpose(a) : a;
    const auto a64 = convert<double, std::int64_t>(a);
    auto want = csr_add(a64, mode == "t_flag" ? transpose(a64) : convert<double, std::int64_t>(b),
                        1.0, 1.0);
    return add_cases.emplace(mode, std::pair(std::move(b), std::move(want))).first->second;
  }
};

/// Relative 2-norm error of a sparse result against the reference, entries matched by
/// (row, column); an entry stored on one side only counts against 0 on the other.
template <class V>
double csr_relative_error(Csr<V, std::int64_t> got, const Csr<double, std::int64_t>& want) {
  if (got.rows != want.rows || got.cols != want.cols) return INFINITY;
  canonicalize(got);
  std::vector<double> g, w;
  for (std::int64_t r = 0; r < want.rows; ++r) {
    std::int64_t p = got.row_ptr[r], q = want.row_ptr[r];
    const std::int64_t pe = got.row_ptr[r + 1], qe = want.row_ptr[r + 1];
    while (p < pe || q < qe) {
      const std::int64_t cg = p < pe ? got.col_idx[p] : want.cols;
      const std::int64_t cw = q < qe ? want.col_idx[q] : want.cols;
      g.push_back(cg <= cw ? static_cast<double>(got.values[p]) : 0.0);
      w.push_back(cw <= cg ? want.values[q] : 0.0);
      if (cg <= cw) ++p;
      if (cw <= cg) ++q;
    }
  }
  return reference::relative_norm2_error<double>(g, w);
}

struct Context {
  const BenchConfig& cfg;
  int reps = 0;
  int warmup = 0;
  double copy_gbs = 0;
};

double per_ms(double amount, double ms) { return ms > 0 ? amount / (ms * 1e6) : NAN; }

/// For a planned matrix: planning time (taken out of setup_ms) and the format that runs `op`.
template <class V>
void record_plan(const Matrix<V>& A, Op op, Result& r) {
  const FormatPlan* p = A.plan();
  if (!p) return;
  r.plan_ms = p->plan_ms;
  r.tune_ms = p->tune_ms;
  r.from_cache = p->from_cache;
  r.setup_ms -= p->plan_ms;
  if (const OpChoice* c = p->choice(op)) r.planned = c->format + (c->transposed ? " on A^T" : "");
  for (const Candidate& c : p->candidates)
    if (c.op == op && !std::isnan(c.measured_ms))
      r.tune_measured.emplace_back(c.format + (c.transposed ? " on A^T" : ""), c.measured_ms);
}

/// Times `run` and fills the timing fields of `r`.
void time_into(const Context& ctx, const std::function<void()>& run, Result& r) {
  const TimingStats t = summarize(time_runs(ctx.cfg.backend, run, ctx.warmup, ctx.reps,
                                            ctx.cfg.flush_l2, ctx.cfg.min_sample_ms,
                                            r.calls_per_sample));
  r.time_ms = t.median_ms;
  r.time_min_ms = t.min_ms;
  r.time_max_ms = t.max_ms;
  r.repetitions = t.repetitions;
}

template <class V, class I>
void measure_vector_op(const Context& ctx, MatrixData<V, I>& md, const Matrix<V>& A,
                       double build_ms, const OpConfig& oc, Result& r) {
  const Backend b = ctx.cfg.backend;
  r.build_ms = build_ms;
  if (!A.plan()) r.upload_ms = detail::impl_of(A).upload_ms();
  r.prepare_ms = wall_ms([&] {
    A.prepare(oc.op, oc.k, oc.layout);
    device_sync(b);
  });
  r.setup_ms = build_ms + r.prepare_ms;
  r.storage_bytes = A.storage_bytes();  // after prepare: a planned matrix may add a storage
  record_plan(A, oc.op, r);
  const Case<V>& c = md.get(oc);
  const auto [in_size, out_size] = md.operand_sizes(oc);
  Operand<V>& in = md.operand(b, 0, in_size);
  Operand<V>& out = md.operand(b, 1, out_size);
  in.set(c.in);
  auto run = [&] {
    switch (oc.op) {
      case Op::spmv: A.spmv(in.cspan(), out.span()); break;
      case Op::spmv_t: A.spmv_t(in.cspan(), out.span()); break;
      case Op::spmm: A.spmm(in.cspan(), out.span(), oc.k, oc.layout); break;
      case Op::add: break;
    }
  };
  auto check = [&] {
    out.poison();
    run();
    const std::vector<V> got = out.get();
    return reference::relative_norm2_error<V>(got, c.want);
  };
  double err = check();
  time_into(ctx, run, r);
  err = std::max(err, check());  // atomics may sum differently from run to run
  r.max_relative_norm2 = err;

  const Shape s = A.shape();
  const double flops = 2.0 * static_cast<double>(s.nnz) * static_cast<double>(oc.k);
  r.gbs = per_ms(static_cast<double>(A.traffic_bytes(oc.op, oc.k)), r.time_ms);
  r.csr_equiv_gbs = per_ms(static_cast<double>(csr_floor_bytes(oc.op, s, oc.k, sizeof(V))), r.time_ms);
  r.gflops = per_ms(flops, r.time_ms);
}

/// The harness-only option add_b (mode of add, see MatrixData::add_case); never passed to a build.
std::string add_mode(const FormatOptions& o) { return o.get_string("add_b", "t"); }
FormatOptions build_options(const FormatOptions& o) {
  FormatOptions out;
  for (const auto& [k, v] : o.all())
    if (k != "add_b") out.set(k, v);
  return out;
}

template <class V, class I>
void measure_add(const Context& ctx, MatrixData<V, I>& md, const Matrix<V>& A, double build_ms,
                 const FormatRun& f, Result& r) {
  const Backend b = ctx.cfg.backend;
  r.storage_bytes = A.storage_bytes();
  if (!A.supports(Op::add)) A.prepare(Op::add);  // throws the UnsupportedError naming it
  const std::string mode = add_mode(f.options);
  const auto& add_case = md.add_case(mode);
  const Csr<V, I>& b_csr = add_case.first;
  const Csr<double, std::int64_t>& want = add_case.second;
  FormatOptions b_opts = build_options(f.options);
  if (mode == "t_flag") b_opts.set("transposed", "1");
  std::optional<Matrix<V>> B;
  r.build_ms = build_ms;
  if (!A.plan()) r.upload_ms = detail::impl_of(A).upload_ms();
  r.prepare_ms = wall_ms([&] {  // the second operand's build counts as preparing the sum
    B.emplace(Matrix<V>::build(b_csr, f.name, b, b_opts));
    A.prepare(Op::add);
    device_sync(b);
  });
  r.setup_ms = build_ms + r.prepare_ms;
  std::optional<Matrix<V>> C;
  auto run = [&] {
    C.reset();
    C.emplace(A.add(*B));
  };
  auto check = [&] {
    run();
    device_sync(b);
    return csr_relative_error<V>(C->to_csr(), want);
  };
  double err = check();
  time_into(ctx, run, r);
  err = std::max(err, check());
  r.max_relative_norm2 = err;

  const double flops = static_cast<double>(A.nnz() + B->nnz());
  const double bytes = static_cast<double>(A.traffic_bytes(Op::add) + B->traffic_bytes(Op::add) +
                                           C->storage_bytes());
  const double floor = static_cast<double>(csr_floor_bytes(Op::add, A.shape(), 1, sizeof(V)) +
                                           csr_floor_bytes(Op::add, B->shape(), 1, sizeof(V)) +
                                           csr_floor_bytes(Op::add, C->shape(), 1, sizeof(V)));
  r.gbs = per_ms(bytes, r.time_ms);
  r.csr_equiv_gbs = per_ms(floor, r.time_ms);
  r.gflops = per_ms(flops, r.time_ms);
}

std::string describe_exception(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return "out of host memory (std::bad_alloc)";
  return e.what();
}

/// Timed device builds after the first (their median is device_build_ms). Several, because a
/// build's large cudaMalloc calls now and then take milliseconds longer than usual.
constexpr int kDeviceRebuilds = 9;

/// The benchmark matrix uploaded once (untimed) as a device CSR, for build_from_device.
template <class V, class I>
struct DeviceInput {
  Operand<I> row_ptr, col_idx;
  Operand<V> values;
  DeviceCsrView<V, I> view;
  explicit DeviceInput(const Csr<V, I>& a)
      : row_ptr(Backend::cuda, a.row_ptr.size()),
        col_idx(Backend::cuda, a.col_idx.size()),
        values(Backend::cuda, a.values.size()) {
    row_ptr.set(a.row_ptr);
    col_idx.set(a.col_idx);
    values.set(a.values);
    view = {a.rows, a.cols, static_cast<std::int64_t>(a.col_idx.size()), row_ptr.data(),
            col_idx.data(), values.data()};
  }
};

/// Step 6 of harness.hpp: the build from the device CSR and update_values on its result.
template <class V, class I>
void measure_device_build(const Context& ctx, DeviceInput<V, I>& in, const FormatRun& f,
                          Result& r) {
  std::optional<Matrix<V>> D;
  // The memory the formats before this one left cached goes back to the device first: their
  // blocks, cut to their sizes, would otherwise decide whether this format's allocations map
  // new memory (measured: coo rebuilds on lap3d 5 times slower in one run than in another).
  // The first build then maps what this format needs, and the rebuilds find it as it was left.
  release_cached_device_memory();
  const auto build = [&] {
    D.reset();  // the previous matrix is freed outside the timed region
    device_sync(Backend::cuda);
    release_host_threads();  // the host's OpenMP workers of earlier work no longer spin
    return wall_ms([&] {
      D.emplace(Matrix<V>::build(in.view, f.name, build_options(f.options)));
      device_sync(Backend::cuda);
    });
  };
  try {
    // The first build also pays one-time costs (the builder's kernels are loaded at their first
    // launch); a rebuild (new structure, a tune candidate) pays what the median of the next ones
    // says. Up to kDeviceRebuilds more, within about a second.
    r.device_build_first_ms = build();
    std::vector<double> again;
    double spent = r.device_build_first_ms;
    while (static_cast<int>(again.size()) < kDeviceRebuilds && spent < 1000.0) {
      again.push_back(build());
      spent += again.back();
    }
    r.device_build_ms = again.empty() ? r.device_build_first_ms : summarize(again).median_ms;
    r.device_build_samples_ms = again;
  } catch (const std::exception& e) {
    r.device_build_ms = NAN;
    r.device_build_error = describe_exception(e);
    return;
  }
  r.device_builder = D->format().builds_on_device();
  try {
    const std::span<const V> v = in.values.cspan();
    D->update_values(v, Memory::device);  // the first call builds any value map: not timed
    device_sync(Backend::cuda);
    int calls_per_sample = 1;
    const TimingStats t = summarize(time_runs(
        Backend::cuda, [&] { D->update_values(v, Memory::device); }, 1, std::min(ctx.reps, 20),
        false, ctx.cfg.min_sample_ms, calls_per_sample));
    r.update_values_ms = t.median_ms;
  } catch (const UnsupportedError&) {
    r.update_values_ms = NAN;  // the format cannot take new values in place
  }
}

/// Every format × operation of one matrix in precision V with index I.
template <class V, class I>
void run_matrix(const Context& ctx, const MatrixSource& src, Precision prec,
                const std::vector<FormatRun>& formats, const std::vector<OpConfig>& ops,
                const std::function<void(Result&&)>& emit) {
  const std::string& name = src.name;
  std::string error;
  std::optional<MatrixData<V, I>> md;
  try {
    md.emplace();
    md->a = std::get<Csr<V, I>>(src.load(prec, ctx.cfg.index));
    md->integer_inputs = ctx.cfg.integer_inputs;
  } catch (const std::exception& e) {
    error = "load: " + describe_exception(e);
    md.reset();
  }
  std::optional<DeviceInput<V, I>> device_input;
  if (md && ctx.cfg.build_from_device && ctx.cfg.backend == Backend::cuda) {
    try {
      device_input.emplace(md->a);
    } catch (const std::exception& e) {
      error = "upload of the device CSR: " + describe_exception(e);
      md.reset();
    }
  }
  if (md) {
    try {
      for (const OpConfig& oc : ops) {
        if (oc.op == Op::add) continue;
        const auto [in_size, out_size] = md->operand_sizes(oc);
        md->operand(ctx.cfg.backend, 0, in_size);
        md->operand(ctx.cfg.backend, 1, out_size);
      }
    } catch (const std::exception& e) {
      error = "operands: " + describe_exception(e);
      md.reset();
    }
  }
  for (const FormatRun& f : formats) {
    Result device;  // the step 6 fields, copied into every operation's result
    if (device_input) measure_device_build(ctx, *device_input, f, device);  // before A: room
    std::optional<Matrix<V>> A;
    double build_ms = 0;
    std::string build_error = error;
    bool build_unsupported = false;
    io::ResidentMemory host_before, host_after;
    std::size_t device_before = 0, device_peak = 0;
    if (build_error.empty()) {
      try {
        const bool host_peak_known = io::reset_resident_peak();
        reset_device_memory_peak();
        host_before = io::resident_memory();
        device_before = device_memory_usage().bytes;
        build_ms = wall_ms([&] {
          A.emplace(Matrix<V>::build(md->a, f.name, ctx.cfg.backend, build_options(f.options)));
          device_sync(ctx.cfg.backend);
        });
        host_after = io::resident_memory();
        if (!host_peak_known) host_after.peak_bytes = 0;
        const std::size_t peak = device_memory_usage().peak_bytes;
        device_peak = peak > device_before ? peak - device_before : 0;
      } catch (const std::exception& e) {
        build_error = "build: " + describe_exception(e);
        build_unsupported = dynamic_cast<const UnsupportedError*>(&e) != nullptr;
      }
    }
    for (const OpConfig& oc : ops) {
      Result r;
      r.matrix = name;
      if (md) {
        r.rows = md->a.rows;
        r.cols = md->a.cols;
        r.nnz = md->a.nnz();
      }
      r.format = f.name;
      r.options = f.options.to_string();
      r.build_host_before_bytes = host_before.bytes;
      r.build_host_peak_bytes = host_after.peak_bytes;
      r.build_device_peak_bytes = device_peak;
      r.device_build_ms = device.device_build_ms;
      r.device_build_first_ms = device.device_build_first_ms;
      r.device_build_samples_ms = device.device_build_samples_ms;
      r.device_builder = device.device_builder;
      r.device_build_error = device.device_build_error;
      r.update_values_ms = device.update_values_ms;
      r.op = oc.op;
      r.precision = prec;
      r.index = ctx.cfg.index;
      r.k = oc.k;
      r.layout = oc.layout;
      if (!build_error.empty()) {
        r.error = build_error;
        r.unsupported = build_unsupported;
      } else {
        try {
          if (oc.op == Op::add)
            measure_add(ctx, *md, *A, build_ms, f, r);
          else
            measure_vector_op(ctx, *md, *A, build_ms, oc, r);
          r.completed = true;
          r.correct = r.max_relative_norm2 <= tolerance(prec);
          r.bw_fraction = ctx.copy_gbs > 0 ? r.csr_equiv_gbs / ctx.copy_gbs : NAN;
        } catch (const std::exception& e) {
          r.error = describe_exception(e);
          r.unsupported = dynamic_cast<const UnsupportedError*>(&e) != nullptr;
        }
      }
      emit(std::move(r));
    }
  }
}

}  // namespace

Report run_bench(const BenchConfig& cfg) {
  const Backend b = cfg.backend;
  if (b == Backend::cuda && !cuda_compiled())
    throw UnsupportedError("spmat was built without CUDA: use --backend cpu");
  if (b == Backend::cuda && !cuda_available())
    throw UnsupportedError("no usable CUDA GPU found: use --backend cpu");
  if (cfg.build_from_device && b != Backend::cuda)
    throw UnsupportedError("building from a device CSR (--build-from device) needs the cuda backend");
  std::vector<FormatRun> formats = cfg.formats;
  if (formats.empty())
    for (const auto& e : registry())
      if (e.caps.on(b).available) formats.push_back({e.name, {}});
  for (const auto& f : formats) (void)find_format(f.name);  // unknown names: a clear error now
  const std::vector<OpConfig> ops = expand_ops(cfg);
  for (const auto& oc : ops)
    if (oc.op == Op::spmm && oc.k < 1)
      throw ParseError("spmm needs k >= 1 dense columns (got " + std::to_string(oc.k) + ")");

  Report rep;
  rep.backend = b;
  rep.commit = current_commit();
  rep.date = utc_now_iso8601();
  rep.version = kVersion;
#if SPMAT_WITH_CUDA
  rep.device = b == Backend::cuda ? gpu::describe() : cpu::describe();
#else
  rep.device = cpu::describe();
#endif
  if (cfg.copy_gbs > 0) {
    rep.device.copy_gbs = cfg.copy_gbs;
  } else {
#if SPMAT_WITH_CUDA
    rep.device.copy_gbs = b == Backend::cuda ? gpu::copy_bandwidth_gbs() : cpu::copy_bandwidth_gbs();
#else
    rep.device.copy_gbs = cpu::copy_bandwidth_gbs();
#endif
  }

  Context ctx{cfg};
  ctx.reps = cfg.reps > 0 ? cfg.reps : (b == Backend::cuda ? 50 : 10);
  ctx.warmup = cfg.warmup >= 0 ? cfg.warmup : (b == Backend::cuda ? 10 : 2);
  ctx.copy_gbs = rep.device.copy_gbs;

  const std::size_t total =
      cfg.matrices.size() * cfg.precisions.size() * formats.size() * ops.size();
  auto emit = [&](Result&& r) {
    rep.results.push_back(std::move(r));
    if (cfg.on_result) cfg.on_result(rep.results.back(), rep.results.size(), total);
  };

  for (const MatrixSource& src : cfg.matrices) {
    for (Precision p : cfg.precisions) {
      const bool i32 = cfg.index == IndexWidth::int32;
      if (p == Precision::fp64 && i32)
        run_matrix<double, std::int32_t>(ctx, src, p, formats, ops, emit);
      else if (p == Precision::fp64)
        run_matrix<double, std::int64_t>(ctx, src, p, formats, ops, emit);
      else if (i32)
        run_matrix<float, std::int32_t>(ctx, src, p, formats, ops, emit);
      else
        run_matrix<float, std::int64_t>(ctx, src, p, formats, ops, emit);
    }
  }
  compute_speedups(rep.results);
  return rep;
}

}  // namespace spmat::bench
