// tests/gpu_stream_test.cpp — GPU work on the caller's stream (spmat/stream.hpp): StreamScope.
// SPDX-License-Identifier: MIT
//
// Test names:
//   StreamScope.*          host only (run everywhere): the default is the legacy stream (null);
//                          scopes nest and put the previous stream back, also when an exception
//                          leaves them; the current stream is per thread.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <thread>

#include "spmat/stream.hpp"

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

}  // namespace
}  // namespace spmat
