// torch.nested's kernels (NestedTensorCPU): building a nested tensor from a list, padding
// it into a dense tensor, its component shapes, and unbind (operators: NestedOps.cpp,
// views: NestedViews.cpp). The layout is in
// aten/core/NestedTensorImpl.h; every other op on a nested tensor has no kernel and raises
// NotImplementedError, as in torch 1.13 for the ops it lacks.
#include <aten/core/NestedTensorImpl.h>
#include <aten/core/TensorUtils.h>
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera::native {

namespace {

const NestedTensorImpl& nested_impl(const Tensor& t, const char* op) {
  const NestedTensorImpl* impl = get_nested_impl(t);
  TORCH_CHECK_NOT_IMPLEMENTED(impl != nullptr, op, " expects a nested tensor");
  return *impl;
}

}  // namespace

Tensor _nested_tensor_from_tensor_list(at::ArrayRef<at::Tensor> list, std::optional<c10::ScalarType> dtype,
                                       std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                                       std::optional<bool> pin_memory) {
  TORCH_CHECK_NOT_IMPLEMENTED(layout.value_or(c10::kStrided) == c10::kStrided,
                              "nested_tensor: only the strided layout is supported");
  TORCH_CHECK_NOT_IMPLEMENTED(!pin_memory.value_or(false), "nested_tensor: pin_memory=True needs CUDA");
  for (size_t i = 1; i < list.size(); ++i) {
    TORCH_CHECK(list[i].dim() == list[0].dim(), "All Tensors given to nested_tensor must have the same dimension. Found dimension ",
                list[i].dim(), " for Tensor at index ", i, " and dimension ", list[0].dim(), " for Tensor at index 0.");
  }
  for (const Tensor& t : list) {
    TORCH_CHECK_NOT_IMPLEMENTED(!t.is_meta(), "Cannot copy out of meta tensor; no data!");
    TORCH_CHECK_NOT_IMPLEMENTED(t.is_cpu() && t.layout() == c10::kStrided,
                                "nested_tensor: only strided CPU tensors can be nested, got a tensor on ", t.device(),
                                " with layout ", t.layout());
  }
  const c10::Device target = device.value_or(c10::Device(c10::DeviceType::CPU));
  TORCH_CHECK_NOT_IMPLEMENTED(target.is_cpu(), "nested_tensor: nested tensors live on the CPU only, not on ", target);
  const c10::ScalarType type = dtype.value_or(list.empty() ? c10::get_default_dtype() : list[0].scalar_type());
  std::vector<std::vector<int64_t>> sizes;
  int64_t total = 0;
  for (const Tensor& t : list) {
    sizes.push_back(t.sizes().vec());
    total += t.numel();
  }
  Tensor buffer = make_empty({total}, type, target);
  int64_t offset = 0;
  for (const Tensor& t : list) {
    if (t.numel() > 0) buffer.narrow(0, offset, t.numel()).view(t.sizes()).copy_(t);
    offset += t.numel();
  }
  return Tensor(c10::make_intrusive<NestedTensorImpl>(buffer, std::move(sizes)));
}

Tensor nested_to_padded_tensor_nested(const Tensor& self, double padding, std::optional<at::IntArrayRef> output_size) {
  const NestedTensorImpl& nt = nested_impl(self, "to_padded_tensor");
  TORCH_CHECK(nt.is_packed(), "for now to_padded_tensor only supports contiguous nested tensor");
  const int64_t rank = nt.component_dim();
  TORCH_CHECK(nt.num_components() == 0 || rank > 0,
              "to_padded_tensor: the components are 0-d tensors; there is nothing to pad");
  std::vector<int64_t> padded(static_cast<size_t>(rank + 1), 0);
  padded[0] = nt.num_components();
  for (const auto& s : nt.component_sizes()) {
    for (int64_t d = 0; d < rank; ++d) {
      padded[static_cast<size_t>(d + 1)] = std::max(padded[static_cast<size_t>(d + 1)], s[static_cast<size_t>(d)]);
    }
  }
  if (nt.num_components() == 0) padded.resize(1);  // torch: an empty nested tensor pads to shape (0,)
  if (output_size) {
    TORCH_CHECK(output_size->size() == padded.size(),
                "Length of output_size does not match NestedTensor dims. Broadcasting is not supported.");
    for (size_t d = 0; d < padded.size(); ++d) {
      TORCH_CHECK((*output_size)[d] >= padded[d],
                  "Value in output_size is less than NestedTensor padded size. Truncation is not supported.");
    }
    padded = output_size->vec();
  }
  Tensor out = at::full(padded, padding, TensorOptions().dtype(self.scalar_type()));
  for (int64_t i = 0; i < nt.num_components(); ++i) {
    Tensor dst = out.select(0, i);
    const auto& s = nt.component_sizes()[static_cast<size_t>(i)];
    for (int64_t d = 0; d < rank; ++d) dst = dst.narrow(d, 0, s[static_cast<size_t>(d)]);
    dst.copy_(nested_component(self, i));
  }
  return out;
}

Tensor nested_to_padded_tensor(const Tensor& self, double padding, std::optional<at::IntArrayRef> output_size) {
  return self.to_padded_tensor(padding, output_size);
}

Tensor _nested_tensor_size(const Tensor& self) {
  const NestedTensorImpl& nt = nested_impl(self, "_nested_tensor_size");
  Tensor out = at::empty({nt.num_components(), nt.component_dim()}, TensorOptions().dtype(c10::kLong));
  int64_t* p = out.data_ptr<int64_t>();
  for (const auto& s : nt.component_sizes()) p = std::copy(s.begin(), s.end(), p);
  return out;
}

Tensor select_nested(const Tensor& self, int64_t dim, int64_t index) {
  const NestedTensorImpl& nt = nested_impl(self, "select");
  const int64_t wrapped = dim < 0 ? dim + self.dim() : dim;
  TORCH_CHECK_INDEX(wrapped >= 0 && wrapped < self.dim(), "Dimension out of range (expected to be in range of [",
                    -self.dim(), ", ", self.dim() - 1, "], but got ", dim, ")");
  TORCH_CHECK(wrapped == 0, "NestedTensor can only be selected along dimension 0 got dimension ", dim, " instead.");
  const int64_t n = nt.num_components();
  TORCH_CHECK_INDEX(index >= -n && index < n, "index ", index, " is out of bounds for dimension 0 with size ", n);
  return nested_component(self, index < 0 ? index + n : index);
}

std::vector<Tensor> unbind_nested(const Tensor& self, int64_t dim) {
  const NestedTensorImpl& nt = nested_impl(self, "unbind");
  // torch compares the dim as given: -3 of a 3-d nested tensor is refused too
  TORCH_CHECK(dim == 0, "NestedTensor can only be unbound along dimension 0 got dimension ", dim, " instead.");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < nt.num_components(); ++i) out.push_back(nested_component(self, i));
  return out;
}

}  // namespace at::inline tessera::native
