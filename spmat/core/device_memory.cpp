// spmat/core/device_memory.cpp — the device-memory budget, usage counters and fault injector.
// SPDX-License-Identifier: MIT
#include "spmat/core/device_memory.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>

#include "spmat/core/error.hpp"
#include "spmat/io/read_options.hpp"

namespace spmat {

namespace {

constexpr const char* kLimitVariable = "SPMAT_DEVICE_MEMORY_LIMIT";

// Constant-initialised, so that allocations made from other static initialisers find it ready.
std::atomic<std::size_t> g_bytes{0};
std::atomic<std::size_t> g_allocations{0};
std::atomic<std::uint64_t> g_attempts{0};
std::atomic<std::size_t> g_peak{0};
std::atomic<std::size_t> g_limit{0};
/// Whether g_limit is settled: read from the environment, or set by a call.
std::atomic<bool> g_limit_settled{false};
std::mutex g_limit_mutex;
/// Allocations to serve before the injected failure; negative: none armed.
std::atomic<std::int64_t> g_fail_countdown{-1};
std::atomic<std::uint64_t> g_injected{0};

/// Reads SPMAT_DEVICE_MEMORY_LIMIT the first time the budget is needed. A malformed value
/// throws (ParseError naming the variable) and is read again next time.
void settle_limit() {
  if (g_limit_settled.load(std::memory_order_acquire)) return;
  const std::lock_guard<std::mutex> lock(g_limit_mutex);
  if (g_limit_settled.load(std::memory_order_relaxed)) return;
  std::size_t limit = 0;
  if (const char* e = std::getenv(kLimitVariable); e && *e) {
    const std::uint64_t v = io::parse_byte_size(e, kLimitVariable);
    limit = v > std::numeric_limits<std::size_t>::max() ? std::numeric_limits<std::size_t>::max()
                                                        : static_cast<std::size_t>(v);
  }
  g_limit.store(limit, std::memory_order_relaxed);
  g_limit_settled.store(true, std::memory_order_release);
}

std::string bytes_text(std::size_t n) {
  std::string s = std::to_string(n) + " bytes";
  if (n >= (std::size_t(1) << 20)) {
    char buf[48];
    std::snprintf(buf, sizeof buf, " (%.1f MiB)", static_cast<double>(n) / (1 << 20));
    s += buf;
  }
  return s;
}

/// "spmat holds U in A allocations (budget: L); the device has F free of T".
std::string usage_text(detail::DeviceFreeBytesFn free_bytes) {
  const std::size_t limit = g_limit.load(std::memory_order_relaxed);
  std::string s = "spmat holds " + bytes_text(g_bytes.load(std::memory_order_relaxed)) + " in " +
                  std::to_string(g_allocations.load(std::memory_order_relaxed)) +
                  " allocations (budget: " + (limit ? bytes_text(limit) : std::string("none")) +
                  "); the device has ";
  std::size_t free_b = 0, total_b = 0;
  if (free_bytes && free_bytes(&free_b, &total_b))
    s += bytes_text(free_b) + " free of " + bytes_text(total_b);
  else
    s += "an unknown number of bytes free";
  return s;
}

}  // namespace

DeviceMemoryUsage device_memory_usage() {
  DeviceMemoryUsage u;
  u.bytes = g_bytes.load(std::memory_order_relaxed);
  u.allocations = g_allocations.load(std::memory_order_relaxed);
  u.attempts = g_attempts.load(std::memory_order_relaxed);
  u.peak_bytes = std::max(g_peak.load(std::memory_order_relaxed), u.bytes);
  return u;
}

void reset_device_memory_peak() { g_peak.store(g_bytes.load(std::memory_order_relaxed)); }

void set_device_memory_limit(std::size_t bytes) {
  const std::lock_guard<std::mutex> lock(g_limit_mutex);
  g_limit.store(bytes, std::memory_order_relaxed);
  g_limit_settled.store(true, std::memory_order_release);
}

std::size_t device_memory_limit() {
  settle_limit();
  return g_limit.load(std::memory_order_relaxed);
}

ScopedDeviceMemoryLimit::ScopedDeviceMemoryLimit(std::size_t bytes)
    : previous_(device_memory_limit()) {
  set_device_memory_limit(bytes);
}
ScopedDeviceMemoryLimit::~ScopedDeviceMemoryLimit() { set_device_memory_limit(previous_); }

ScopedDeviceAllocationFailure::ScopedDeviceAllocationFailure(std::uint64_t n)
    : injected_before_(g_injected.load(std::memory_order_relaxed)) {
  const auto countdown = static_cast<std::int64_t>(
      n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
          ? std::numeric_limits<std::int64_t>::max()
          : n);
  previous_ = g_fail_countdown.exchange(countdown, std::memory_order_relaxed);
}
ScopedDeviceAllocationFailure::~ScopedDeviceAllocationFailure() {
  // An outer guard that was still armed gets its remaining countdown back.
  g_fail_countdown.store(previous_ < 0 ? -1 : previous_, std::memory_order_relaxed);
}
bool ScopedDeviceAllocationFailure::fired() const {
  return g_injected.load(std::memory_order_relaxed) > injected_before_;
}

namespace detail {

void reserve_device_memory(std::size_t bytes, const char* what, DeviceFreeBytesFn free_bytes) {
  g_attempts.fetch_add(1, std::memory_order_relaxed);
  if (g_fail_countdown.load(std::memory_order_relaxed) >= 0 &&
      g_fail_countdown.fetch_sub(1, std::memory_order_relaxed) == 0) {
    g_injected.fetch_add(1, std::memory_order_relaxed);
    throw OutOfMemoryError(
        "GPU out of memory (a failure injected by "
        "spmat::ScopedDeviceAllocationFailure) allocating " +
        bytes_text(bytes) + " for " + what + "; " + usage_text(free_bytes));
  }
  settle_limit();
  const std::size_t limit = g_limit.load(std::memory_order_relaxed);
  std::size_t now = 0;  // the bytes held with this allocation
  if (limit == 0) {
    now = g_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  } else {
    std::size_t held = g_bytes.load(std::memory_order_relaxed);
    do {
      if (bytes > limit || held > limit - bytes)
        throw OutOfMemoryError("GPU memory budget exceeded: allocating " + bytes_text(bytes) +
                               " for " + what +
                               " would take spmat beyond its device memory "
                               "budget of " +
                               bytes_text(limit) + " (set by spmat::set_device_memory_limit or " +
                               kLimitVariable + "); " + usage_text(free_bytes));
    } while (!g_bytes.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
    now = held + bytes;
  }
  for (std::size_t peak = g_peak.load(std::memory_order_relaxed);
       now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed);) {
  }
  g_allocations.fetch_add(1, std::memory_order_relaxed);
}

void release_device_memory(std::size_t bytes) noexcept {
  g_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  g_allocations.fetch_sub(1, std::memory_order_relaxed);
}

void throw_device_out_of_memory(std::size_t bytes, const char* what, const char* cause,
                                DeviceFreeBytesFn free_bytes) {
  throw OutOfMemoryError("GPU out of memory allocating " + bytes_text(bytes) + " for " + what +
                         " (" + cause + "); " + usage_text(free_bytes));
}

}  // namespace detail
}  // namespace spmat
