// spmat/cuda/array_list.hpp — a device storage's arrays listed once, and what is derived from
// the list: storage_bytes, stored_arrays, the element-wise upload from and download to the host
// storage, and ListedStorage, the members a device storage derives from them.
// SPDX-License-Identifier: MIT
//
// A device struct `Dev` whose storage is a list of arrays mirroring host vectors gives
//   static auto arrays(auto& d);        // std::tuple of cuda::Field{"name", d.member}, ...
//   static auto host_arrays(auto& s);   // std::tie(s.vector, ...), the same order
//   static constexpr const char* scalar_names = "rows, cols, ...";
//   std::vector<std::int64_t> scalars() const;
// `arrays` takes the struct as a parameter so that one list serves the const struct (sizes,
// downloads) and the mutable one (upload). The order of `arrays` is the order of stored_arrays,
// which the tests compare between the device-built and the uploaded storage, then the scalars.
// Work-space and value-map members stay out of the list: they are not stored arrays (the Dev's
// storage_bytes, which counts every device byte it holds, adds them: device_impl.hpp).
// From the list, DeviceImpl (device_impl.hpp) also derives the stored_arrays and upload_values
// hooks, and DeviceOnlyImpl the traffic of a storage read once per product (default_traffic).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "spmat/cuda/buffer.hpp"
#include "spmat/cuda/device_csr.hpp"
#include "spmat/matrix_impl.hpp"

namespace spmat::cuda {

/// One stored array of a device struct: its name in stored_arrays and the member
/// (DeviceBuffer or DeviceArray, const or not).
template <class Array>
struct Field {
  const char* name;
  Array& array;
};
template <class Array>
Field(const char*, Array&) -> Field<Array>;

/// A device struct that lists its arrays (see above).
template <class Dev>
concept ListedArrays = requires(const Dev& d) {
  Dev::arrays(d);
  { Dev::scalar_names } -> std::convertible_to<const char*>;
  { d.scalars() } -> std::same_as<std::vector<std::int64_t>>;
};

/// The bytes of the listed arrays: the storage the host format counts too.
template <class Fields>
std::size_t storage_bytes(const Fields& fields) {
  return std::apply([](const auto&... f) { return (std::size_t{0} + ... + f.array.bytes()); },
                    fields);
}

/// fn(field, host vector) for each pair in the same place of the two lists.
template <class Fields, class Host, class Fn>
void for_each_pair(const Fields& fields, const Host& host, Fn&& fn) {
  static_assert(std::tuple_size_v<Fields> == std::tuple_size_v<Host>);
  [&]<std::size_t... i>(std::index_sequence<i...>) {
    (fn(std::get<i>(fields), std::get<i>(host)), ...);
  }(std::make_index_sequence<std::tuple_size_v<Fields>>{});
}
template <class HostVector>
using ElementOf = typename std::remove_cvref_t<HostVector>::value_type;

/// Each listed array allocated (named "`format` `name`" in allocation errors) and filled from
/// the host vector in the same place of `host` (on stream(); complete on return).
template <class Fields, class Host>
void upload_arrays(const char* format, const Fields& fields, const Host& host) {
  for_each_pair(fields, host, [&](const auto& f, const auto& h) {
    const std::string what = std::string(format) + " " + f.name;
    f.array = DeviceBuffer<ElementOf<decltype(h)>>(h, what.c_str());
  });
}

/// Each listed array downloaded into the host vector in the same place of `host`.
template <class Fields, class Host>
void download_arrays(const Fields& fields, const Host& host) {
  for_each_pair(fields, host, [](const auto& f, auto& h) { h = f.array.download(); });
}

/// The listed arrays of element type `Value` refilled from the host vectors in the same places of
/// `host` (sizes unchanged, else DimensionMismatchError): a new set of values for the same
/// structure. The values are the only arrays of type Value; indices, pointers and permutations
/// are integers.
template <class Value, class Fields, class Host>
void upload_value_arrays(const Fields& fields, const Host& host) {
  for_each_pair(fields, host, [](const auto& f, const auto& h) {
    if constexpr (std::is_same_v<ElementOf<decltype(h)>, Value>) f.array.upload(h);
  });
}

/// Appends the listed arrays to `out`, downloaded, by name.
template <class Fields>
void append_stored(std::vector<StoredArray>& out, const Fields& fields) {
  std::apply(
      [&](const auto&... f) { (out.push_back(stored(f.name, f.array.data(), f.array.size())), ...); },
      fields);
}

/// The listed arrays downloaded, by name, then the scalars as one entry.
template <ListedArrays Dev>
std::vector<StoredArray> stored_arrays(const Dev& d) {
  std::vector<StoredArray> out;
  append_stored(out, Dev::arrays(d));
  out.push_back(stored_scalars(Dev::scalar_names, d.scalars()));
  return out;
}

/// d.rows, d.cols and d.nnz from the same-named members of `s` (a host storage or a device CSR
/// view), converted to d's types as plain assignments would: the shape every device storage
/// starts from.
template <class Dev, class Src>
void copy_shape(Dev& d, const Src& s) {
  d.rows = static_cast<decltype(d.rows)>(s.rows);
  d.cols = static_cast<decltype(d.cols)>(s.cols);
  d.nnz = static_cast<decltype(d.nnz)>(s.nnz);
}

/// What a device storage that lists its arrays derives from the list, for the host storage
/// `Host` it mirrors: upload, download, storage_bytes and shape. `Dev` derives from
/// ListedStorage<Dev, Host> and gives, besides the list,
///   static constexpr const char* format;     // "`format` `name`" in allocation errors
///   void upload_scalars(const Host& s);      // its scalars from those of `s`
///   void download_scalars(Host& s) const;    // the scalars of `s` from its own
/// A storage with more to make on upload (a workspace) hides upload with one that calls this.
template <class Dev, class Host>
struct ListedStorage {
  /// The scalars, then each listed array allocated and filled from its host vector.
  static Dev upload(const Host& s) {
    Dev d;
    d.upload_scalars(s);
    upload_arrays(Dev::format, Dev::arrays(d), Dev::host_arrays(s));
    return d;
  }
  /// The host storage: its scalars, then the listed arrays downloaded into its vectors.
  Host download() const {
    Host s;
    self().download_scalars(s);
    download_arrays(Dev::arrays(self()), Dev::host_arrays(s));
    return s;
  }
  /// The bytes of the listed arrays, as the host storage counts them.
  std::size_t storage_bytes() const { return cuda::storage_bytes(Dev::arrays(self())); }
  /// Dev's rows, cols and nnz (a storage whose nnz is the sum of parts hides it).
  Shape shape() const { return {self().rows, self().cols, self().nnz}; }

 private:
  const Dev& self() const { return static_cast<const Dev&>(*this); }
};

}  // namespace spmat::cuda
