// spmat/gen/generators.cpp — generate(): parses a spec and dispatches to its generator.
// SPDX-License-Identifier: MIT
#include "spmat/gen/generators.hpp"

#include <new>

#include "spmat/gen/build.hpp"

namespace spmat::gen {

template <class Value, class Index>
Csr<Value, Index> generate(std::string_view text) {
  using namespace detail;
  const Spec spec = split_spec(text);
  const GeneratorInfo* info = nullptr;
  for (const auto& g : generator_table())
    if (g.name == spec.name) info = &g;
  if (!info) {
    std::string known;
    for (const auto& g : generator_table()) known += (known.empty() ? "" : ", ") + std::string(g.name);
    throw ParseError(spec.text + ": unknown generator '" + spec.name + "'; known generators: " +
                     known);
  }
  const Args args(spec, *info);
  try {
    const std::string_view name = info->name;
    if (name == "random_p") return gen_random_p<Value, Index>(args);
    if (name == "random_k") return gen_random_k<Value, Index>(args);
    if (name == "ideal") return gen_ideal<Value, Index>(args);
    if (name == "lap2d") return gen_stencil<Value, Index>(args, lap2d);
    if (name == "lap3d") return gen_stencil<Value, Index>(args, lap3d);
    if (name == "lap3d27") return gen_stencil<Value, Index>(args, lap3d27);
    if (name == "rmat") return gen_rmat<Value, Index>(args);
    if (name == "banded") return gen_banded<Value, Index>(args);
    if (name == "powerlaw") return gen_powerlaw<Value, Index>(args);
  } catch (const std::bad_alloc&) {
    throw OutOfMemoryError(spec.text + ": not enough host memory to generate this matrix with " +
                           std::string(index_name<Index>()) + " indices and " +
                           std::string(precision_name<Value>()) + " values");
  }
  throw UnsupportedError(spec.text + ": generator '" + spec.name + "' is listed but not wired");
}

#define SPMAT_INSTANTIATE(V, I) template Csr<V, I> generate<V, I>(std::string_view);
SPMAT_FOR_EACH_TYPE_PAIR(SPMAT_INSTANTIATE)
#undef SPMAT_INSTANTIATE

}  // namespace spmat::gen
