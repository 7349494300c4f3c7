#include <aten/core/NestedTensorImpl.h>

#include <aten/core/TensorUtils.h>

namespace at::inline tessera {

namespace {

int64_t product(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

}  // namespace

// Note [Nested tensor geometry]: the base TensorImpl's sizes are (1, ..., 1, total) with
// contiguous strides, one dim per nested dim. So dim() is the nested rank, numel() is the
// number of elements torch reports, and any generic code that reads the base geometry by
// mistake stays inside the buffer. The real shapes are component_sizes_; the Python bridge
// refuses size()/stride() as torch does.
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
    total += product(s);
  }
  TORCH_INTERNAL_ASSERT(total == buffer.numel(), "nested components do not fill the buffer");
  std::vector<int64_t> sizes(static_cast<size_t>(component_dim_ + 1), 1);
  sizes.back() = total;
  set_storage_offset(buffer.storage_offset());
  set_sizes_contiguous(sizes);
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
  int64_t total = 0;
  for (const auto& s : nt->component_sizes()) total += product(s);
  auto flat = c10::make_intrusive<c10::TensorImpl>(nested.storage(), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                   nested.scalar_type(), c10::kStrided);
  flat->set_storage_offset(nested.storage_offset());
  flat->set_sizes_contiguous({total});
  auto alias = c10::make_intrusive<NestedTensorImpl>(Tensor(std::move(flat)), nt->component_sizes());
  alias->set_version_counter(nested.unsafeGetTensorImpl()->version_counter());
  alias->_set_neg(nested.is_neg());
  if (nested.is_conj()) alias->_set_conj(true);
  return Tensor(std::move(alias));
}

Tensor nested_component(const Tensor& nested, int64_t i) {
  const NestedTensorImpl* impl = get_nested_impl(nested);
  TORCH_INTERNAL_ASSERT(impl != nullptr && i >= 0 && i < impl->num_components());
  auto view = c10::make_intrusive<c10::TensorImpl>(nested.storage(), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                   nested.scalar_type(), c10::kStrided);
  view->set_storage_offset(nested.storage_offset() + impl->offsets()[static_cast<size_t>(i)]);
  view->set_sizes_contiguous(impl->component_sizes()[static_cast<size_t>(i)]);
  view->set_version_counter(nested.unsafeGetTensorImpl()->version_counter());
  return Tensor(std::move(view));
}

}  // namespace at::inline tessera
