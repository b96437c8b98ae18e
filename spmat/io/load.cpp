// spmat/io/load.cpp — dispatch a matrix argument to the generators, the cache or Matrix Market.
// SPDX-License-Identifier: MIT
#include "spmat/io/load.hpp"

#include "spmat/gen/generators.hpp"
#include "spmat/io/binary_cache.hpp"
#include "spmat/io/file_io.hpp"
#include "spmat/io/matrix_market.hpp"

namespace spmat::io {

template <class Value, class Index>
Csr<Value, Index> load_matrix(std::string_view spec, const ReadOptions& options,
                              MatrixMarketHeader* mm_header) {
  if (gen::is_generator_spec(spec)) return gen::generate<Value, Index>(spec);
  const std::string path(spec);
  // One stream, sniffed once: a pipe cannot be opened a second time.
  InputStream in(path, options.lenient);
  if (ends_with(path, ".smc") || in.magic() == "SPMATSMC") return read_binary_cache<Value, Index>(in, options);
  return read_matrix_market<Value, Index>(in, options, mm_header, nullptr);
}

std::string matrix_name(std::string_view spec) {
  if (gen::is_generator_spec(spec)) return std::string(spec);
  const auto slash = spec.find_last_of('/');
  std::string_view s = slash == std::string_view::npos ? spec : spec.substr(slash + 1);
  for (std::string_view ext : {".gz", ".mtx", ".smc"})
    if (ends_with(s, ext) && s.size() > ext.size()) s.remove_suffix(ext.size());
  return std::string(s);
}

#define SPMAT_INSTANTIATE(V, I) \
  template Csr<V, I> load_matrix<V, I>(std::string_view, const ReadOptions&, MatrixMarketHeader*);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat::io
