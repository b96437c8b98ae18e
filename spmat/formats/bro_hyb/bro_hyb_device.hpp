// spmat/formats/bro_hyb/bro_hyb_device.hpp — the CUDA storage of BRO-HYB (a BRO-ELL part and a
// BRO-COO part), made by upload (from the host storage) or on the GPU from a device CSR
// (bro_hyb_device_build.cu): the same arrays. Its products are in bro_hyb_cuda.cu.
// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "spmat/formats/bro_coo/bro_coo_device.hpp"
#include "spmat/formats/bro_ell/bro_ell_device.hpp"
#include "spmat/formats/bro_hyb/bro_hyb.hpp"

namespace spmat {

template <class Value, class Index>
struct BroHybDevice {
  std::int64_t rows = 0, cols = 0, nnz = 0, ell_width = 0;
  BroEllDevice<Value, Index> ell;
  BroCooDevice<Value, Index> coo;
  /// Every device byte held: both parts (spmat/cuda/device_impl.hpp).
  std::size_t storage_bytes() const { return ell.storage_bytes() + coo.storage_bytes(); }
  Shape shape() const { return {rows, cols, nnz}; }
  static BroHybDevice upload(const BroHyb<Value, Index>& m) {
    BroHybDevice d;
    cuda::copy_shape(d, m);
    d.ell_width = m.ell_width;
    d.ell = BroEllDevice<Value, Index>::upload(m.ell);
    d.coo = BroCooDevice<Value, Index>::upload(m.coo);
    return d;
  }
  /// The host storage, both parts downloaded (to_csr of a device-built matrix).
  BroHyb<Value, Index> download() const {
    BroHyb<Value, Index> m;
    m.rows = static_cast<Index>(rows);
    m.cols = static_cast<Index>(cols);
    m.nnz = nnz;
    m.ell_width = ell_width;
    m.ell = ell.download();
    m.coo = coo.download();
    return m;
  }
};

/// The arrays of both parts, downloaded, named "ell …" and "coo …", then the scalars of the
/// whole and of each part (tests compare the device-built and the uploaded storage with it).
template <class Value, class Index>
std::vector<StoredArray> stored_arrays(const BroHybDevice<Value, Index>& d) {
  std::vector<StoredArray> out;
  const auto append = [&](const char* prefix, std::vector<StoredArray> part) {
    for (StoredArray& a : part) {
      a.name = prefix + a.name;
      out.push_back(std::move(a));
    }
  };
  append("ell ", cuda::stored_arrays(d.ell));
  append("coo ", cuda::stored_arrays(d.coo));
  const std::vector<std::int64_t> scalars{d.rows, d.cols, d.nnz, d.ell_width};
  out.push_back(cuda::stored_scalars("rows, cols, nnz, ell_width", scalars));
  return out;
}

// The device-only matrix over a BroHybDevice (bro_hyb_cuda.cu, where the products are).
SPMAT_DECLARE_CUDA_IMPL(BroHybDevice);

}  // namespace spmat
