// NestedTensorImpl: torch.nested's tensor, a list of tensors of one rank and dtype whose
// shapes may differ, each with its own strides and offset in one buffer: packed one after
// another (contiguous) when built, in another order for a view (transpose, view). Only
// kernels registered for NestedTensorCPU see it; the Python bridge asks it for its shapes.
#pragma once

#include <aten/core/Tensor.h>

#include <vector>

namespace at::inline tessera {

class TORCH_API NestedTensorImpl final : public c10::TensorImpl {
 public:
  // `buffer`: the components' elements back to back (1-d, contiguous); `sizes`: one shape
  // per component, all of one rank.
  NestedTensorImpl(const Tensor& buffer, std::vector<std::vector<int64_t>> component_sizes);
  // A view over `base`'s storage: component i has sizes[i] and strides[i] and starts
  // offsets[i] elements after base's storage offset.
  NestedTensorImpl(const Tensor& base, std::vector<std::vector<int64_t>> component_sizes,
                   std::vector<std::vector<int64_t>> component_strides, std::vector<int64_t> offsets);

  int64_t num_components() const { return static_cast<int64_t>(component_sizes_.size()); }
  // The rank of each component (the nested tensor's dim() is one more).
  int64_t component_dim() const { return component_dim_; }
  const std::vector<std::vector<int64_t>>& component_sizes() const { return component_sizes_; }
  const std::vector<std::vector<int64_t>>& component_strides() const { return component_strides_; }
  // Where each component starts, in elements after the storage offset.
  const std::vector<int64_t>& offsets() const { return offsets_; }
  // torch's is_contiguous() of a nested tensor: every component has contiguous strides and
  // they follow one another from offset 0 (Note [Nested tensor geometry]).
  bool is_packed() const { return is_contiguous(); }
  // The size of dim d (0 <= d < dim()) when every component agrees on it, else nullopt.
  std::optional<int64_t> regular_size(int64_t d) const;

 private:
  void set_base_geometry(const Tensor& buffer, bool packed);

  std::vector<std::vector<int64_t>> component_sizes_;
  std::vector<std::vector<int64_t>> component_strides_;
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
// The numel() elements from a nested tensor's storage offset as one 1-d dense CPU view
// (sharing its version counter): what elementwise kernels run over. Its components are
// those elements when it is packed, or when it is a fresh copy that keeps a view's layout.
TORCH_API Tensor nested_buffer(const Tensor& nested);

}  // namespace at::inline tessera
