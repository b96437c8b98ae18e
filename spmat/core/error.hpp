// spmat/core/error.hpp — the exception types spmat throws; every message names the problem.
// SPDX-License-Identifier: MIT
#pragma once
#include <stdexcept>
#include <string>

namespace spmat {

/// Base of every error spmat throws. `what()` is a sentence a user can act on.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Malformed input: a Matrix Market file, a binary cache, a generator spec, an option.
struct ParseError : Error {
  using Error::Error;
};

/// A structural problem in a matrix (unsorted columns, index out of range, bad row_ptr).
struct InvalidMatrixError : Error {
  using Error::Error;
};

/// A matrix whose dimensions or nnz do not fit the chosen index type.
struct IndexOverflowError : Error {
  using Error::Error;
};

/// A format, operation or backend that is not available (not built, not supported).
struct UnsupportedError : Error {
  using Error::Error;
};

/// Vector/operand arguments that do not fit the operation: sizes that do not match the
/// matrix, or an output array overlapping an input.
struct DimensionMismatchError : Error {
  using Error::Error;
};

/// A CUDA runtime or library call failed; the message names the call and where.
struct CudaError : Error {
  using Error::Error;
};

/// Device (or host) memory exhausted; the message says how much was asked for.
struct OutOfMemoryError : Error {
  using Error::Error;
};

}  // namespace spmat
