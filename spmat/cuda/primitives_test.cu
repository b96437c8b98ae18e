// spmat/cuda/primitives_test.cu — the shared CUDA primitives against host references: launch
// sizes and the merge-path search on the host; lane reductions, scans and epilogues on the GPU
// (skipped without one), bit for bit where the primitive promises a fixed order.
// SPDX-License-Identifier: MIT
#include "spmat/cuda/primitives.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "tests/support/test_support.hpp"

namespace spmat {
namespace {

// ---- host: launch sizes and the merge-path search ---------------------------------------------

TEST(CudaPrimitivesHost, GridCoverIsOneBlockPerShareCappedForLegality) {
  EXPECT_EQ(cuda::grid_cover(0, 256), 1u);
  EXPECT_EQ(cuda::grid_cover(1, 256), 1u);
  EXPECT_EQ(cuda::grid_cover(256, 256), 1u);
  EXPECT_EQ(cuda::grid_cover(257, 256), 2u);
  EXPECT_EQ(cuda::grid_cover(1000, 32), 32u);
  EXPECT_EQ(cuda::grid_cover(std::int64_t{1} << 40, 256),
            static_cast<unsigned>(cuda::kMaxCoverBlocks));
}

/// The merge path walked one step at a time: row coordinate of every diagonal 0..rows+nnz.
std::vector<std::int64_t> walk_merge_path(const std::vector<std::int64_t>& row_end,
                                          std::int64_t nnz) {
  const std::int64_t rows = static_cast<std::int64_t>(row_end.size());
  std::vector<std::int64_t> out{0};
  std::int64_t i = 0, j = 0;
  while (i + j < rows + nnz) {
    if (i < rows && (j >= nnz || row_end[i] <= j))
      ++i;  // row end i comes first
    else
      ++j;
    out.push_back(i);
  }
  return out;
}

TEST(CudaPrimitivesHost, MergePathSearchMatchesTheWalkedPath) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const std::int64_t rows = static_cast<std::int64_t>(rng() % 40);
    std::vector<std::int64_t> row_end;
    std::int64_t nnz = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      nnz += static_cast<std::int64_t>(rng() % 4 == 0 ? rng() % 30 : rng() % 3);  // empty rows too
      row_end.push_back(nnz);
    }
    const auto want = walk_merge_path(row_end, nnz);
    for (std::int64_t d = 0; d <= rows + nnz; ++d)
      ASSERT_EQ(cuda::merge_path_search(d, row_end.data(), rows, nnz), want[d])
          << "trial " << trial << " diagonal " << d;
  }
}

// ---- GPU --------------------------------------------------------------------------------------

class CudaPrimitives : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!testing::gpu_available(&why)) GTEST_SKIP() << "CUDA primitive tests skipped: " << why;
  }
};

/// A device copy of a host vector, copied back by download().
template <class T>
struct Dev {
  T* p = nullptr;
  std::size_t n = 0;
  explicit Dev(const std::vector<T>& h) : n(h.size()) {
    SPMAT_CUDA_CHECK(cudaMalloc(&p, (n > 0 ? n : 1) * sizeof(T)));
    if (n > 0) SPMAT_CUDA_CHECK(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  explicit Dev(std::size_t count) : Dev(std::vector<T>(count)) {}
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  ~Dev() { cudaFree(p); }
  std::vector<T> download() const {
    SPMAT_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> h(n);
    if (n > 0) SPMAT_CUDA_CHECK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

std::vector<double> random_doubles(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto& e : v) e = d(rng) * std::ldexp(1.0, static_cast<int>(rng() % 40) - 20);  // wide range
  return v;
}

constexpr int kThreads = 256;  // 8 warps

template <int W>
__global__ void subwarp_sum_kernel(const double* in, double* out) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const double s = cuda::subwarp_sum<W>(in[t]);
  if (t % W == 0) out[t / W] = s;
}

/// The shuffle-down tree on the host: at each offset every lane reads its partner's value of the
/// previous step (lanes whose partner is past the group keep their own).
template <int W>
std::vector<double> host_subwarp_sums(const std::vector<double>& in) {
  std::vector<double> out;
  for (std::size_t g = 0; g < in.size(); g += W) {
    std::vector<double> v(in.begin() + static_cast<std::ptrdiff_t>(g),
                          in.begin() + static_cast<std::ptrdiff_t>(g + W));
    for (int off = W / 2; off > 0; off /= 2) {
      const std::vector<double> old = v;
      for (int i = 0; i < W; ++i) v[i] = old[i] + (i + off < W ? old[i + off] : old[i]);
    }
    out.push_back(v[0]);
  }
  return out;
}

template <int W>
void check_subwarp_sum(const std::vector<double>& in) {
  Dev<double> din(in), dout(in.size() / W);
  subwarp_sum_kernel<W><<<static_cast<unsigned>(in.size() / kThreads), kThreads>>>(din.p, dout.p);
  SPMAT_CUDA_CHECK_LAUNCH("subwarp_sum_kernel");
  EXPECT_TRUE(same_bits(dout.download(), host_subwarp_sums<W>(in))) << "W = " << W;
}

TEST_F(CudaPrimitives, SubwarpSumFollowsItsFixedTreeBitForBit) {
  const auto in = random_doubles(4 * kThreads, 11);
  check_subwarp_sum<2>(in);
  check_subwarp_sum<4>(in);
  check_subwarp_sum<8>(in);
  check_subwarp_sum<16>(in);
  check_subwarp_sum<32>(in);
}

__global__ void warp_sum_kernel(const double* in, double* out, int width) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  out[t] = cuda::warp_sum(in[t], width);
}

TEST_F(CudaPrimitives, WarpSumFollowsTheButterflyInEveryLane) {
  const auto in = random_doubles(2 * kThreads, 12);
  for (int width : {1, 2, 4, 8, 16, 32}) {
    Dev<double> din(in), dout(in.size());
    warp_sum_kernel<<<2, kThreads>>>(din.p, dout.p, width);
    SPMAT_CUDA_CHECK_LAUNCH("warp_sum_kernel");
    std::vector<double> want(in.size());
    for (std::size_t g = 0; g < in.size(); g += static_cast<std::size_t>(width)) {
      std::vector<double> v(in.begin() + static_cast<std::ptrdiff_t>(g),
                            in.begin() + static_cast<std::ptrdiff_t>(g) + width);
      for (int off = width / 2; off > 0; off /= 2) {
        const std::vector<double> old = v;
        for (int i = 0; i < width; ++i) v[i] = old[i] + old[i ^ off];
      }
      std::copy(v.begin(), v.end(), want.begin() + static_cast<std::ptrdiff_t>(g));
    }
    EXPECT_TRUE(same_bits(dout.download(), want)) << "width " << width;
  }
  // The documented example: lanes 0..3 hold 1,2,3,4 → 10 in each of them.
  std::vector<double> ex(32, 0.0);
  ex[0] = 1, ex[1] = 2, ex[2] = 3, ex[3] = 4;
  Dev<double> dex(ex), dres(32);
  warp_sum_kernel<<<1, 32>>>(dex.p, dres.p, 4);
  const auto res = dres.download();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(res[i], 10.0);
}

__global__ void block_sum_kernel(const double* in, double* out) {
  __shared__ double shared32[32];
  const double s = cuda::block_sum(in[blockIdx.x * blockDim.x + threadIdx.x], shared32);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

TEST_F(CudaPrimitives, BlockSumIsTheWarpTreeOfWarpTrees) {
  const auto in = random_doubles(3 * kThreads, 13);
  Dev<double> din(in), dout(3);
  block_sum_kernel<<<3, kThreads>>>(din.p, dout.p);
  SPMAT_CUDA_CHECK_LAUNCH("block_sum_kernel");
  const auto warp_totals = host_subwarp_sums<32>(in);  // 8 per block
  std::vector<double> want;
  for (std::size_t b = 0; b < 3; ++b) {
    std::vector<double> lanes(32, 0.0);
    for (int w = 0; w < kThreads / 32; ++w) lanes[w] = warp_totals[b * (kThreads / 32) + w];
    want.push_back(host_subwarp_sums<32>(lanes)[0]);
  }
  EXPECT_TRUE(same_bits(dout.download(), want));
}

template <class T>
__global__ void warp_inclusive_sum_kernel(const T* in, T* out) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  out[t] = cuda::warp_inclusive_sum(in[t]);
}

template <class T>
void check_warp_inclusive_sum(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> in(2 * kThreads);
  for (auto& e : in) e = static_cast<T>(rng() % 2001) - static_cast<T>(std::is_signed_v<T> ? 1000 : 0);
  Dev<T> din(in), dout(in.size());
  warp_inclusive_sum_kernel<T><<<2, kThreads>>>(din.p, dout.p);
  SPMAT_CUDA_CHECK_LAUNCH("warp_inclusive_sum_kernel");
  std::vector<T> want(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) want[i] = (i % 32 == 0 ? T(0) : want[i - 1]) + in[i];
  EXPECT_EQ(dout.download(), want);
}

TEST_F(CudaPrimitives, WarpInclusiveSumIsThePrefixSumOfEachWarp) {
  check_warp_inclusive_sum<int>(14);
  check_warp_inclusive_sum<unsigned>(15);
  check_warp_inclusive_sum<long long>(16);
}

template <class Key>
__global__ void warp_segmented_sum_kernel(const Key* key, const double* in, double* out,
                                          int* tail) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  bool is_tail = false;
  out[t] = cuda::warp_segmented_sum(key[t], in[t], &is_tail);
  tail[t] = is_tail ? 1 : 0;
}

/// The keyed scan as hyb and bro-coo wrote it before they shared warp_segmented_sum: the
/// partner's value is added when its key equals this lane's. Equal keys are contiguous in
/// their inputs (sorted rows, then one key for the lanes past the end), where the two agree.
template <class Key>
__global__ void keyed_scan_by_key_compare_kernel(const Key* key, const double* in, double* out) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x), lane = t & 31;
  double v = in[t];
  const Key k = key[t];
  for (int off = 1; off < 32; off <<= 1) {
    const double ov = __shfl_up_sync(0xffffffffu, v, off);
    const Key ok = __shfl_up_sync(0xffffffffu, k, off);
    if (lane >= off && ok == k) v += ov;
  }
  out[t] = v;
}

/// Sorted keys in runs of random length, and in some warps a tail of lanes "past the end" with
/// key `past_end` (as hyb uses -1 and bro-coo LLONG_MAX).
std::vector<long long> run_keys(std::size_t n, long long past_end, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<long long> k(n);
  long long row = static_cast<long long>(rng() % 100);
  for (std::size_t i = 0; i < n; ++i) {
    if (rng() % 3 == 0) row += 1 + static_cast<long long>(rng() % 4);
    k[i] = row;
  }
  for (std::size_t w = 0; w < n; w += 64)  // every other warp ends early
    for (std::size_t i = w + 32 - 1 - rng() % 20; i < w + 32; ++i) k[i] = past_end;
  return k;
}

TEST_F(CudaPrimitives, WarpSegmentedSumMatchesTheKeyCompareScanBitForBit) {
  for (long long past_end : {-1LL, LLONG_MAX}) {
    const auto keys = run_keys(4 * kThreads, past_end, 17);
    const auto in = random_doubles(keys.size(), 18);
    Dev<long long> dkey(keys);
    Dev<double> din(in), dout(in.size()), dref(in.size());
    Dev<int> dtail(in.size());
    warp_segmented_sum_kernel<<<4, kThreads>>>(dkey.p, din.p, dout.p, dtail.p);
    SPMAT_CUDA_CHECK_LAUNCH("warp_segmented_sum_kernel");
    keyed_scan_by_key_compare_kernel<<<4, kThreads>>>(dkey.p, din.p, dref.p);
    SPMAT_CUDA_CHECK_LAUNCH("keyed_scan_by_key_compare_kernel");
    EXPECT_TRUE(same_bits(dout.download(), dref.download())) << "past_end " << past_end;
    const auto tail = dtail.download();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const bool want = i % 32 == 31 || keys[i + 1] != keys[i];
      EXPECT_EQ(tail[i] != 0, want) << "lane " << i;
    }
  }
}

TEST_F(CudaPrimitives, WarpSegmentedSumDocumentedExample) {
  // keys 7,7,9,9,9 then 11 on lanes 5..31; v 1,2,3,4,5 then 0 → 1,3,3,7,12; tails 1, 4, 31.
  std::vector<long long> keys(32, 11);
  std::vector<double> v(32, 0.0);
  const long long k5[] = {7, 7, 9, 9, 9};
  for (int i = 0; i < 5; ++i) keys[i] = k5[i], v[i] = i + 1;
  Dev<long long> dkey(keys);
  Dev<double> din(v), dout(32);
  Dev<int> dtail(32);
  warp_segmented_sum_kernel<<<1, 32>>>(dkey.p, din.p, dout.p, dtail.p);
  SPMAT_CUDA_CHECK_LAUNCH("warp_segmented_sum_kernel");
  const auto out = dout.download();
  const auto tail = dtail.download();
  EXPECT_EQ(std::vector<double>(out.begin(), out.begin() + 5), (std::vector<double>{1, 3, 3, 7, 12}));
  for (int i = 0; i < 32; ++i) EXPECT_EQ(tail[i] != 0, i == 1 || i == 4 || i == 31) << i;
}

__global__ void epilogue_kernel(double* y, double alpha, double s, double beta, bool scale) {
  if (scale)
    cuda::scale_store(y, beta);
  else
    cuda::axpby_store(y, alpha, s, beta);
}

double run_epilogue(double y, double alpha, double s, double beta, bool scale) {
  Dev<double> d(std::vector<double>{y});
  epilogue_kernel<<<1, 1>>>(d.p, alpha, s, beta, scale);
  SPMAT_CUDA_CHECK_LAUNCH("epilogue_kernel");
  return d.download()[0];
}

TEST_F(CudaPrimitives, EpiloguesNeverReadYWhenBetaIsZero) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(run_epilogue(nan, 2.0, 3.0, 0.0, false), 6.0);
  EXPECT_EQ(run_epilogue(5.0, 2.0, 3.0, -1.0, false), 1.0);
  EXPECT_EQ(run_epilogue(nan, 2.0, 3.0, 0.0, true), 0.0);
  EXPECT_EQ(run_epilogue(5.0, 2.0, 3.0, 3.0, true), 15.0);
  // scale_store is not axpby_store with s = 0: an infinite alpha would make that NaN.
  EXPECT_EQ(run_epilogue(5.0, std::numeric_limits<double>::infinity(), 0.0, 3.0, true), 15.0);
}

TEST_F(CudaPrimitives, ScaleAsyncZeroesScalesOrLeavesY) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> y = random_doubles(100000, 19);
  y[7] = nan;
  {
    Dev<double> d(y);
    cuda::scale_async(d.p, static_cast<std::int64_t>(y.size()), 0.0);
    EXPECT_EQ(d.download(), std::vector<double>(y.size(), 0.0));
  }
  {
    Dev<double> d(y);
    cuda::scale_async(d.p, static_cast<std::int64_t>(y.size()), 1.0);
    EXPECT_TRUE(same_bits(d.download(), y));
  }
  {
    y[7] = 0.75;  // a NaN times -2 is NaN, but its bits may differ between host and device
    Dev<double> d(y);
    cuda::scale_async(d.p, static_cast<std::int64_t>(y.size()), -2.0);
    std::vector<double> want(y.size());
    for (std::size_t i = 0; i < y.size(); ++i) want[i] = -2.0 * y[i];
    EXPECT_TRUE(same_bits(d.download(), want));
  }
}

TEST_F(CudaPrimitives, LaunchSizesFollowTheDevice) {
  int dev = 0, sms = 0;
  SPMAT_CUDA_CHECK(cudaGetDevice(&dev));
  SPMAT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  EXPECT_EQ(cuda::sm_count(), sms);
  EXPECT_EQ(cuda::grid_for(1, 256), 1u);
  EXPECT_EQ(cuda::grid_for(std::int64_t{1} << 40, 256), static_cast<unsigned>(sms * 8 * 4));
}

// A kernel that stages 6 KB a block in shared memory (as a merge tile does) and reads x.
__global__ void __launch_bounds__(128) staged_tile_kernel(const float* x, float* y, int n) {
  __shared__ float tile[1536];
  for (int i = threadIdx.x; i < 1536; i += blockDim.x) tile[i] = x[(blockIdx.x * 1536 + i) % n];
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = tile[blockDim.x - 1];
}

TEST_F(CudaPrimitives, PreferL1KeepsTheOccupancyWithTheLeastSharedMemory) {
  const void* kernel = reinterpret_cast<const void*>(staged_tile_kernel);
  int before = 0, after = 0, dev = 0, sm_shared = 0, reserved = 0;
  SPMAT_CUDA_CHECK(cudaGetDevice(&dev));
  SPMAT_CUDA_CHECK(
      cudaDeviceGetAttribute(&sm_shared, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  SPMAT_CUDA_CHECK(
      cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev));
  SPMAT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&before, kernel, 128, 0));
  ASSERT_GT(before, 0);
  cuda::prefer_l1(staged_tile_kernel, 128);
  cuda::prefer_l1(staged_tile_kernel, 128);  // a second call changes nothing
  SPMAT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&after, kernel, 128, 0));
  EXPECT_EQ(after, before) << "the split must keep the blocks an SM holds";
  cudaFuncAttributes attr{};
  SPMAT_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  // The blocks' shared memory and the reserve of each, as a percentage of the SM's, rounded up.
  const long long need =
      static_cast<long long>(before) * (static_cast<long long>(attr.sharedSizeBytes) + reserved);
  EXPECT_EQ(attr.preferredShmemCarveout,
            static_cast<int>((need * 100 + sm_shared - 1) / sm_shared));
  EXPECT_LT(attr.preferredShmemCarveout, 100) << "shared memory is not to take the whole SM";
  // The kernel still runs and computes with the split.
  Dev<float> dx(std::vector<float>(4096, 2.0f)), dy(std::size_t{8});
  staged_tile_kernel<<<8, 128>>>(dx.p, dy.p, 4096);
  SPMAT_CUDA_CHECK(cudaGetLastError());
  for (float v : dy.download()) EXPECT_EQ(v, 2.0f);
}

}  // namespace
}  // namespace spmat
