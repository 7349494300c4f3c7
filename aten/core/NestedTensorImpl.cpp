#include <aten/core/NestedTensorImpl.h>

#include <aten/core/TensorUtils.h>

#include <algorithm>

namespace at::inline tessera {

namespace {

int64_t product(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  return strides;
}

}  // namespace

// Note [Nested tensor geometry]: the base TensorImpl's sizes are (1, ..., 1, total), one dim
// per nested dim, so dim() is the nested rank and numel() the number of elements torch
// reports. Its strides are contiguous when the components are packed (each contiguous, one
// after another from offset 0: torch's is_contiguous() of a nested tensor) and the last is
// 0 otherwise, so is_contiguous() answers as torch does and any generic code that reads the
// base geometry by mistake stays inside the buffer. The real shapes are component_sizes_;
// the Python bridge refuses size()/stride() as torch does. (With at most one element every
// layout reads as packed: that element is then the buffer's first, wherever the strides say
// the empty components lie.)
NestedTensorImpl::NestedTensorImpl(const Tensor& buffer, std::vector<std::vector<int64_t>> component_sizes)
    : c10::TensorImpl(buffer.storage(), c10::DispatchKeySet(c10::DispatchKey::NestedTensorCPU), buffer.scalar_type(),
                      c10::kStrided),
      component_sizes_(std::move(component_sizes)),
      component_dim_(component_sizes_.empty() ? 0 : static_cast<int64_t>(component_sizes_[0].size())) {
  TORCH_INTERNAL_ASSERT(buffer.dim() == 1 && buffer.is_contiguous(), "a nested tensor's buffer is 1-d and contiguous");
  int64_t total = 0;
  for (const auto& s : component_sizes_) {
    TORCH_INTERNAL_ASSERT(static_cast<int64_t>(s.size()) == component_dim_, "nested components differ in rank");
    offsets_.push_back(total);
    component_strides_.push_back(contiguous_strides(s));
    total += product(s);
  }
  TORCH_INTERNAL_ASSERT(total == buffer.numel(), "nested components do not fill the buffer");
  set_base_geometry(buffer, /*packed=*/true);
}

NestedTensorImpl::NestedTensorImpl(const Tensor& base, std::vector<std::vector<int64_t>> component_sizes,
                                   std::vector<std::vector<int64_t>> component_strides, std::vector<int64_t> offsets)
    : c10::TensorImpl(base.storage(), c10::DispatchKeySet(c10::DispatchKey::NestedTensorCPU), base.scalar_type(),
                      c10::kStrided),
      component_sizes_(std::move(component_sizes)),
      component_strides_(std::move(component_strides)),
      offsets_(std::move(offsets)),
      component_dim_(component_sizes_.empty() ? 0 : static_cast<int64_t>(component_sizes_[0].size())) {
  TORCH_INTERNAL_ASSERT(
      component_strides_.size() == component_sizes_.size() && offsets_.size() == component_sizes_.size(),
      "a nested view needs strides and an offset per component");
  bool packed = true;
  int64_t next = 0;
  const auto capacity = static_cast<int64_t>(base.storage().nbytes()) / static_cast<int64_t>(base.element_size());
  for (size_t i = 0; i < component_sizes_.size(); ++i) {
    TORCH_INTERNAL_ASSERT(static_cast<int64_t>(component_sizes_[i].size()) == component_dim_ &&
                              component_strides_[i].size() == component_sizes_[i].size(),
                          "nested components differ in rank");
    if (product(component_sizes_[i]) > 0) {  // every element of a component lies in the storage
      int64_t last = base.storage_offset() + offsets_[i];
      for (size_t d = 0; d < component_sizes_[i].size(); ++d) {
        TORCH_INTERNAL_ASSERT(component_strides_[i][d] >= 0, "a nested view's strides are not negative");
        last += (component_sizes_[i][d] - 1) * component_strides_[i][d];
      }
      TORCH_INTERNAL_ASSERT(offsets_[i] >= 0 && last < capacity, "a nested view's component lies outside its storage");
    }
    packed = packed && offsets_[i] == next && component_strides_[i] == contiguous_strides(component_sizes_[i]);
    next += product(component_sizes_[i]);
  }
  set_base_geometry(base, packed);
}

void NestedTensorImpl::set_base_geometry(const Tensor& buffer, bool packed) {
  int64_t total = 0;
  for (const auto& s : component_sizes_) total += product(s);
  std::vector<int64_t> sizes(static_cast<size_t>(component_dim_ + 1), 1);
  sizes.back() = total;
  std::vector<int64_t> strides(sizes.size(), std::max<int64_t>(total, 1));
  strides.back() = packed ? 1 : 0;
  set_storage_offset(buffer.storage_offset());
  set_sizes_and_strides(sizes, strides);
}

std::optional<int64_t> NestedTensorImpl::regular_size(int64_t d) const {
  if (d == 0) return num_components();
  std::optional<int64_t> size;
  for (const auto& s : component_sizes_) {
    const int64_t v = s[static_cast<size_t>(d - 1)];
    if (size && *size != v) return std::nullopt;
    size = v;
  }
  return size;
}

NestedTensorImpl* get_nested_impl(const Tensor& t) {
  if (!t.defined() || !t.key_set().has(c10::DispatchKey::NestedTensorCPU)) return nullptr;
  // The key alone does not prove the impl's type: check it, so that a plain impl that
  // somehow carries the key is refused rather than read as a nested one.
  auto* impl = dynamic_cast<NestedTensorImpl*>(t.unsafeGetTensorImpl());
  TORCH_INTERNAL_ASSERT(impl != nullptr, "a tensor with the NestedTensorCPU key is not a nested tensor");
  return impl;
}

void check_sizes_readable(const Tensor& t) {
  TORCH_CHECK(!t.is_nested(), "Internal error: NestedTensorImpl doesn't support sizes. Please file an issue on "
              "https://github.com/pytorch/nestedtensor");
}

Tensor nested_alias(const Tensor& nested) {
  const NestedTensorImpl* nt = get_nested_impl(nested);
  TORCH_INTERNAL_ASSERT(nt != nullptr, "nested_alias of a tensor that is not nested");
  auto alias = c10::make_intrusive<NestedTensorImpl>(nested, nt->component_sizes(), nt->component_strides(),
                                                     nt->offsets());
  alias->set_version_counter(nested.unsafeGetTensorImpl()->version_counter());
  alias->_set_neg(nested.is_neg());
  if (nested.is_conj()) alias->_set_conj(true);
  return Tensor(std::move(alias));
}

namespace {
c10::intrusive_ptr<c10::TensorImpl> dense_view_of(const Tensor& nested, int64_t offset) {
  auto view = c10::make_intrusive<c10::TensorImpl>(nested.storage(), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                   nested.scalar_type(), c10::kStrided);
  view->set_storage_offset(nested.storage_offset() + offset);
  view->set_version_counter(nested.unsafeGetTensorImpl()->version_counter());
  return view;
}
}  // namespace

Tensor nested_component(const Tensor& nested, int64_t i) {
  const NestedTensorImpl* impl = get_nested_impl(nested);
  TORCH_INTERNAL_ASSERT(impl != nullptr && i >= 0 && i < impl->num_components());
  const auto k = static_cast<size_t>(i);
  auto view = dense_view_of(nested, impl->offsets()[k]);
  view->set_sizes_and_strides(impl->component_sizes()[k], impl->component_strides()[k]);
  return Tensor(std::move(view));
}

Tensor nested_buffer(const Tensor& nested) {
  const NestedTensorImpl* impl = get_nested_impl(nested);
  TORCH_INTERNAL_ASSERT(impl != nullptr);
  TORCH_INTERNAL_ASSERT(static_cast<int64_t>(nested.storage().nbytes()) >=
                        (nested.storage_offset() + nested.numel()) * static_cast<int64_t>(nested.element_size()),
                        "a nested tensor's elements lie outside its storage");
  auto flat = dense_view_of(nested, 0);
  flat->set_sizes_contiguous({nested.numel()});
  return Tensor(std::move(flat));
}

}  // namespace at::inline tessera
