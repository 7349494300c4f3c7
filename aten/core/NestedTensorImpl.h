// NestedTensorImpl: torch.nested's tensor, a list of tensors of one rank and dtype whose
// shapes may differ, packed one after another in one contiguous buffer. Only kernels
// registered for NestedTensorCPU see it; the Python bridge asks it for its shapes.
#pragma once

#include <aten/core/Tensor.h>

#include <vector>

namespace at::inline tessera {

class TORCH_API NestedTensorImpl final : public c10::TensorImpl {
 public:
  // `buffer`: the components' elements back to back (1-d, contiguous); `sizes`: one shape
  // per component, all of one rank.
  NestedTensorImpl(const Tensor& buffer, std::vector<std::vector<int64_t>> component_sizes);

  int64_t num_components() const { return static_cast<int64_t>(component_sizes_.size()); }
  // The rank of each component (the nested tensor's dim() is one more).
  int64_t component_dim() const { return component_dim_; }
  const std::vector<std::vector<int64_t>>& component_sizes() const { return component_sizes_; }
  // Where each component starts in the buffer, in elements.
  const std::vector<int64_t>& offsets() const { return offsets_; }
  // The size of dim d (0 <= d < dim()) when every component agrees on it, else nullopt.
  std::optional<int64_t> regular_size(int64_t d) const;

 private:
  std::vector<std::vector<int64_t>> component_sizes_;
  std::vector<int64_t> offsets_;
  int64_t component_dim_;
};

// The impl behind a nested tensor, or nullptr for any other tensor.
TORCH_API NestedTensorImpl* get_nested_impl(const Tensor& t);
// Raises torch's "NestedTensorImpl doesn't support sizes" for a nested tensor: for code
// that is about to read t.sizes() as a shape (view_as, expand_as, ...).
TORCH_API void check_sizes_readable(const Tensor& t);
// A second nested tensor over the same buffer and components, sharing the version counter
// and the math bits, with no autograd state: what make_view gives for a nested tensor
// (detach, .data, Parameter, saved tensors), since a plain TensorImpl cannot hold one.
TORCH_API Tensor nested_alias(const Tensor& nested);
// Component i of a nested tensor: a dense CPU view of its part of the buffer.
TORCH_API Tensor nested_component(const Tensor& nested, int64_t i);

}  // namespace at::inline tessera
