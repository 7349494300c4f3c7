// What the _mkldnn layout's kernels share: an mkldnn tensor is a contiguous buffer behind
// the MkldnnCPU key, so a kernel runs the dense operator on a CPU view of that buffer and
// hands its result back as an mkldnn tensor. Internal to aten/native/mkldnn.
#pragma once

#include <aten/core/Tensor.h>

namespace at::inline tessera::native::mkldnn {

// The buffer of an mkldnn tensor seen as a dense CPU tensor (no copy); raises for a view.
Tensor dense_view(const Tensor& m);
// A dense result handed over as an mkldnn tensor (contiguous; it owns its buffer alone).
Tensor wrap(const Tensor& dense);
bool supported_dtype(c10::ScalarType t);
// torch's itensor_from_mkldnn check: the argument must already be an mkldnn tensor.
void check_is_mkldnn(const Tensor& t);
// torch's expand_param_if_needed for the pools: one value stands for every spatial dim.
std::vector<int64_t> expand_param(IntArrayRef v, const char* name, int64_t spatial);

}  // namespace at::inline tessera::native::mkldnn
