// spmat/stream.cpp — the per-thread current stream behind spmat/stream.hpp (plain C++: the same
// in builds without CUDA, where nothing reads it).
// SPDX-License-Identifier: MIT
#include "spmat/stream.hpp"

namespace spmat {

namespace {
// Per thread, like CUDA's own current device: two host threads each driving their own stream
// do not see each other's choice.
thread_local StreamHandle current = nullptr;
}  // namespace

StreamHandle current_stream() noexcept { return current; }

StreamScope::StreamScope(StreamHandle stream) noexcept : previous_(current) { current = stream; }

StreamScope::~StreamScope() { current = previous_; }

}  // namespace spmat
