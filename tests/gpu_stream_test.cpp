// tests/gpu_stream_test.cpp — GPU work on the caller's stream (spmat/stream.hpp): StreamScope,
// products of several matrices overlapping on their own streams, and products captured into CUDA
// graphs.
// SPDX-License-Identifier: MIT
//
// Test names:
//   StreamScope.*          host only (run everywhere): the default is the legacy stream (null);
//                          scopes nest and put the previous stream back, also when an exception
//                          leaves them; the current stream is per thread.
//   GpuStream.*            csr, coo-seg, sell, auto and cusparse-csr matrices (different
//                          matrices, formats with scratch buffers and counters among them), each
//                          built, prepared and run on its own non-blocking stream: spmv, spmv_t
//                          and spmm launched round after round, alternating between the streams,
//                          with no synchronization until the end (beta = 1 after the first
//                          round, so y = rounds·A·x), outputs NaN-poisoned first; the results
//                          against the fp64 reference. The same from two host threads.
//   GpuStreamGraph/CapturedProduct.ReplaysWithNewOperands/<format>
//                          every registered format with a CUDA spmv (dashes become underscores):
//                          after prepare, each product it supports (spmv, spmv_t, spmm with k = 3)
//                          is captured on a blocking stream in global capture mode (a launch on
//                          the legacy stream, a synchronization or an allocation during the
//                          capture fails it), with no device allocation counted during the
//                          capture; the graph is replayed three times with new operands in the
//                          same buffers and a NaN-poisoned output, each result against the fp64
//                          reference.
// Without a GPU (or without CUDA) every GPU case skips and says why.
#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "spmat/config.hpp"
#include "spmat/core/device_memory.hpp"
#include "spmat/core/reference.hpp"
#include "spmat/gen/generators.hpp"
#include "spmat/matrix.hpp"
#include "spmat/registry.hpp"
#include "spmat/stream.hpp"
#include "tests/support/test_support.hpp"
#if SPMAT_WITH_CUDA
#include <cuda_runtime_api.h>

#include "spmat/cuda/buffer.hpp"
#endif

namespace spmat {
namespace {

// Distinct addresses that stand for streams: StreamScope only stores them.
StreamHandle fake_stream(std::uintptr_t n) { return reinterpret_cast<StreamHandle>(n * 64); }

TEST(StreamScope, DefaultIsTheLegacyStream) { EXPECT_EQ(current_stream(), nullptr); }

TEST(StreamScope, NestsAndRestores) {
  const StreamHandle a = fake_stream(1), b = fake_stream(2);
  {
    StreamScope outer(a);
    EXPECT_EQ(current_stream(), a);
    {
      StreamScope inner(b);
      EXPECT_EQ(current_stream(), b);
      {
        StreamScope back_to_default(nullptr);
        EXPECT_EQ(current_stream(), nullptr);
      }
      EXPECT_EQ(current_stream(), b);
    }
    EXPECT_EQ(current_stream(), a);
  }
  EXPECT_EQ(current_stream(), nullptr);
}

TEST(StreamScope, RestoresWhenAnExceptionLeavesIt) {
  StreamScope outer(fake_stream(3));
  try {
    StreamScope inner(fake_stream(4));
    throw std::runtime_error("leaves the scope");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(current_stream(), fake_stream(3));
}

TEST(StreamScope, IsPerThread) {
  StreamScope mine(fake_stream(5));
  StreamHandle seen = fake_stream(99), set_there = nullptr;
  std::thread other([&] {
    seen = current_stream();  // a new thread starts on the legacy stream
    StreamScope theirs(fake_stream(6));
    set_there = current_stream();
  });
  other.join();
  EXPECT_EQ(seen, nullptr);
  EXPECT_EQ(set_there, fake_stream(6));
  EXPECT_EQ(current_stream(), fake_stream(5)) << "another thread's scope changed this thread's";
}

TEST(GpuStream, Available) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << "GPU stream cases skip: " << why;
}

#if SPMAT_WITH_CUDA

using Csr32 = Csr<double, std::int32_t>;
constexpr std::int64_t kK = 3;  // spmm: dense columns, row-major

/// A matrix on the device with the operands and outputs of its three products (device memory,
/// allocated and uploaded on current_stream()).
struct Problem {
  Csr32 a;
  std::optional<Matrix<double>> m;
  std::vector<Op> ops;  ///< the products it runs (supported, and prepare accepted them)
  cuda::DeviceBuffer<double> x, xt, b, y, yt, c;

  /// Builds `format` from the first spec it accepts and prepares its products; null (with the
  /// reasons in `why`) when it refuses them all.
  static std::unique_ptr<Problem> make(const std::string& format,
                                       const std::vector<std::string>& specs, std::string* why) {
    const FormatEntry& f = find_format(format);
    const FormatOptions o = f.name == "tune" ? FormatOptions().set("cache", "0") : FormatOptions();
    for (const auto& spec : specs) {
      auto p = std::make_unique<Problem>();
      p->a = gen::generate<double, std::int32_t>(spec);
      try {
        p->m.emplace(Matrix<double>::build(p->a, format, Backend::cuda, o));
      } catch (const UnsupportedError& e) {
        *why += spec + ": " + e.what() + "; ";
        continue;
      }
      for (Op op : {Op::spmv, Op::spmv_t, Op::spmm}) {
        if (!p->m->supports(op)) continue;
        try {
          p->m->prepare(op, op == Op::spmm ? kK : 1, DenseLayout::row_major);
          p->ops.push_back(op);
        } catch (const UnsupportedError& e) {  // e.g. an "auto" plan without that operation
          std::cout << "[ REFUSED  ] " << format << " " << to_string(op) << ": " << e.what()
                    << "\n";
        }
      }
      const auto rows = static_cast<std::size_t>(p->a.rows);
      const auto cols = static_cast<std::size_t>(p->a.cols);
      p->x = cuda::DeviceBuffer<double>(cols, "test x");
      p->xt = cuda::DeviceBuffer<double>(rows, "test xt");
      p->b = cuda::DeviceBuffer<double>(cols * kK, "test B");
      p->y = cuda::DeviceBuffer<double>(rows, "test y");
      p->yt = cuda::DeviceBuffer<double>(cols, "test yt");
      p->c = cuda::DeviceBuffer<double>(rows * kK, "test C");
      return p;
    }
    return nullptr;
  }

  /// Host operands for one round of inputs (seed), small integers: every sum is exact.
  struct Inputs {
    std::vector<double> x, xt, b;
  };
  Inputs inputs(std::uint64_t seed) const {
    return {testing::operand_vector<double>(a.cols, seed, true),
            testing::operand_vector<double>(a.rows, seed + 1, true),
            testing::operand_vector<double>(a.cols * kK, seed + 2, true)};
  }
  void upload(const Inputs& in) {
    x.upload(in.x);
    xt.upload(in.xt);
    b.upload(in.b);
  }
  void poison() {
    y.fill_bytes(0xFF);
    yt.fill_bytes(0xFF);
    c.fill_bytes(0xFF);
  }
  /// Queues `op` on current_stream(): out = alpha·op(A)·in + beta·out.
  void run(Op op, double alpha, double beta) {
    switch (op) {
      case Op::spmv:
        m->spmv(std::span<const double>(x.span()), y.span(), alpha, beta);
        break;
      case Op::spmv_t:
        m->spmv_t(std::span<const double>(xt.span()), yt.span(), alpha, beta);
        break;
      case Op::spmm:
        m->spmm(std::span<const double>(b.span()), c.span(), kK, DenseLayout::row_major, alpha,
                beta);
        break;
      case Op::add:
        break;
    }
  }
  /// "" when the output of `op` (downloaded on current_stream()) is scale·op(A)·in, else why not.
  std::string check(Op op, const Inputs& in, double scale) const {
    std::vector<double> got, want;
    switch (op) {
      case Op::spmv:
        got = y.download();
        want = reference::spmv<double, std::int32_t, double, double>(a, in.x, scale);
        break;
      case Op::spmv_t:
        got = yt.download();
        want = reference::spmv_t<double, std::int32_t, double, double>(a, in.xt, scale);
        break;
      case Op::spmm:
        got = c.download();
        want = reference::spmm<double, std::int32_t, double, double>(a, in.b, kK,
                                                                    DenseLayout::row_major, scale);
        break;
      case Op::add:
        return "";
    }
    const double err = reference::relative_norm2_error<double>(got, want);
    if (err <= 1e-12) return "";
    return std::string(to_string(op)) + ": relative error " + std::to_string(err) +
           " against the fp64 reference";
  }
};

/// One matrix per stream, products round after round with no synchronization in between.
/// Returns the failures (empty: all correct).
std::vector<std::string> run_on_own_streams(const std::vector<std::string>& formats,
                                            const std::vector<std::string>& specs, int rounds) {
  std::vector<std::string> failures;
  std::vector<std::unique_ptr<cuda::Stream>> streams;
  std::vector<std::unique_ptr<Problem>> problems;
  std::vector<Problem::Inputs> inputs;
  for (std::size_t i = 0; i < formats.size(); ++i) {
    streams.push_back(std::make_unique<cuda::Stream>());
    StreamScope on(streams.back()->get());  // build, upload and prepare on the matrix's stream
    std::string why;
    auto p = Problem::make(formats[i], {specs[i % specs.size()]}, &why);
    if (!p) {
      failures.push_back(formats[i] + " refused the test matrix: " + why);
      problems.push_back(nullptr);
      inputs.emplace_back();
      continue;
    }
    inputs.push_back(p->inputs(100 + 7 * i));
    p->upload(inputs.back());
    p->poison();  // queued on the stream, ahead of the products
    problems.push_back(std::move(p));
  }
  for (int r = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < problems.size(); ++i) {
      if (!problems[i]) continue;
      StreamScope on(streams[i]->get());
      for (Op op : problems[i]->ops) problems[i]->run(op, 1.0, r == 0 ? 0.0 : 1.0);
    }
  for (std::size_t i = 0; i < problems.size(); ++i) {
    if (!problems[i]) continue;
    streams[i]->synchronize();
    StreamScope on(streams[i]->get());
    for (Op op : problems[i]->ops) {
      const std::string e = problems[i]->check(op, inputs[i], static_cast<double>(rounds));
      if (!e.empty()) failures.push_back(formats[i] + " " + e);
    }
    if (problems[i]->ops.empty()) failures.push_back(formats[i] + " ran no product");
  }
  return failures;
}

// Matrix i of a run takes kSpecs[i % 4]; the third (sell in the test below) is a regular one,
// because sell refuses a matrix whose longest row is far above the mean.
const std::vector<std::string> kSpecs = {"gen:powerlaw:3000:8:values=int:seed=11",
                                         "gen:random_k:2500:9:values=int:seed=12",
                                         "gen:lap2d:50",
                                         "gen:powerlaw:2000:12:values=int:seed=13"};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : "; ") + e;
  return s;
}

TEST(GpuStream, MatricesOverlapOnTheirOwnStreams) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << "not run: " << why;
  const std::vector<std::string> formats = {"csr", "coo-seg", "sell", "auto", "cusparse-csr"};
  const auto failures = run_on_own_streams(formats, kSpecs, 4);
  EXPECT_TRUE(failures.empty()) << joined(failures);
  EXPECT_EQ(current_stream(), nullptr);
}

TEST(GpuStream, MatricesOnTwoHostThreads) {
  std::string why;
  if (!testing::gpu_available(&why)) GTEST_SKIP() << "not run: " << why;
  // Each thread its own stream and matrices; cusparse-csr on both shares cuSPARSE's handle.
  std::vector<std::string> failures[2];
  std::thread threads[2];
  for (int t = 0; t < 2; ++t)
    threads[t] = std::thread([&failures, t] {
      try {
        failures[t] = run_on_own_streams({t == 0 ? "csr" : "coo-seg", "cusparse-csr"},
                                         {kSpecs[static_cast<std::size_t>(t)]}, 6);
      } catch (const std::exception& e) {
        failures[t].push_back(std::string("threw: ") + e.what());
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_TRUE(failures[0].empty()) << "thread 0: " << joined(failures[0]);
  EXPECT_TRUE(failures[1].empty()) << "thread 1: " << joined(failures[1]);
}

// --- CUDA graphs -----------------------------------------------------------------------------

/// A stream that synchronizes with the legacy default stream: work that spmat queued on the
/// legacy stream during a capture on it would fail the capture instead of escaping it.
class BlockingStream {
 public:
  BlockingStream() { SPMAT_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamDefault)); }
  ~BlockingStream() { (void)cudaStreamDestroy(s_); }
  BlockingStream(const BlockingStream&) = delete;
  BlockingStream& operator=(const BlockingStream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

struct GraphDeleter {
  void operator()(cudaGraph_t g) const { (void)cudaGraphDestroy(g); }
};
struct GraphExecDeleter {
  void operator()(cudaGraphExec_t g) const { (void)cudaGraphExecDestroy(g); }
};
using Graph = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, GraphDeleter>;
using GraphExec = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, GraphExecDeleter>;

class CapturedProduct : public testing::GpuFormatTest {
 protected:
  CapturedProduct() : GpuFormatTest("graph capture") {}
};

TEST_P(CapturedProduct, ReplaysWithNewOperands) {
  const std::string& format = GetParam();
  BlockingStream stream;
  StreamScope on(stream.get());
  std::string why;
  auto p = Problem::make(format, {kSpecs[0], kSpecs[1]}, &why);
  if (!p) GTEST_SKIP() << format << " refused both test matrices: " << why;
  ASSERT_FALSE(p->ops.empty()) << format << " prepared none of its products";
  constexpr double kAlpha = 2.0;
  for (Op op : p->ops) {
    SCOPED_TRACE(format + " " + std::string(to_string(op)));
    // Operands in place before the capture: the graph keeps their addresses.
    p->upload(p->inputs(1));
    SPMAT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    const std::uint64_t attempts = device_memory_usage().attempts;
    SPMAT_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeGlobal));
    std::string error;
    try {
      p->run(op, kAlpha, 0.0);
    } catch (const std::exception& e) {
      error = e.what();
    }
    cudaGraph_t raw = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream.get(), &raw);
    const Graph graph(raw);
    (void)cudaGetLastError();  // a failed capture leaves its error behind; it is reported here
    ASSERT_TRUE(error.empty()) << "the product failed while being captured: " << error;
    ASSERT_EQ(ended, cudaSuccess) << "capture: " << cudaGetErrorString(ended)
                                  << " (work outside the stream, a synchronization or an "
                                     "allocation in the product?)";
    EXPECT_EQ(device_memory_usage().attempts, attempts)
        << "the prepared product allocated device memory";
    cudaGraphExec_t raw_exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&raw_exec, graph.get(), 0), cudaSuccess);
    const GraphExec exec(raw_exec);
    for (std::uint64_t replay = 0; replay < 3; ++replay) {
      const Problem::Inputs in = p->inputs(1000 + 10 * replay);
      p->upload(in);  // same buffers, new contents
      p->poison();
      ASSERT_EQ(cudaGraphLaunch(exec.get(), stream.get()), cudaSuccess);
      const std::string e = p->check(op, in, kAlpha);  // the download waits for the stream
      EXPECT_TRUE(e.empty()) << "replay " << replay << ": " << e;
    }
  }
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CapturedProduct);
INSTANTIATE_TEST_SUITE_P(GpuStreamGraph, CapturedProduct,
                         ::testing::ValuesIn(testing::cuda_formats_with(Op::spmv)),
                         [](const auto& info) { return testing::test_name(info.param); });

#endif  // SPMAT_WITH_CUDA

}  // namespace
}  // namespace spmat
