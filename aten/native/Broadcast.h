// Broadcasting and type promotion for elementwise operators, by torch's rules.
#pragma once

#include <aten/core/Tensor.h>
#include <c10/util/SmallVector.h>

#include <vector>

namespace at::inline tessera::native {

// The broadcast shape of two shapes, or torch's error: "The size of tensor a (3) must
// match the size of tensor b (4) at non-singleton dimension 1".
TORCH_API std::vector<int64_t> infer_size(IntArrayRef a, IntArrayRef b);
// The same without touching the heap (TensorIterator's hot path).
TORCH_API c10::DimVector infer_size_dimvector(IntArrayRef a, IntArrayRef b);

// torch.result_type for two tensors: tensors with dimensions outrank 0-dim tensors,
// which outrank wrapped Python numbers; a lower rank only lifts the category
// (integral -> floating -> complex), and a float Python number means the default dtype.
TORCH_API c10::ScalarType result_type(const Tensor& a, const Tensor& b);

// The same over any number of tensors, one at a time (undefined tensors are skipped).
struct ResultTypeState {
  c10::ScalarType by_rank[3] = {c10::ScalarType::Undefined, c10::ScalarType::Undefined, c10::ScalarType::Undefined};
};
TORCH_API void update_result_type_state(ResultTypeState& state, const Tensor& t);
// A Scalar counts as a wrapped Python number.
TORCH_API void update_result_type_state(ResultTypeState& state, const c10::Scalar& s);
TORCH_API c10::ScalarType result_type(const ResultTypeState& state);

// Strides (in elements) that read `t` as if it had shape `sizes` (its shape broadcast
// to them): 0 along broadcast dimensions.
TORCH_API std::vector<int64_t> broadcast_strides(const Tensor& t, IntArrayRef sizes);

}  // namespace at::inline tessera::native
