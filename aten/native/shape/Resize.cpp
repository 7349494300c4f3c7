// Changing what a tensor is a view of, in place: resize_ / resize_as_ (new sizes, contiguous
// or channels-last, the storage grown when it is too small, keeping its bytes) and set_ (the
// storage, offset, sizes and strides of another tensor, or of an empty storage), plus
// is_set_to, which asks whether two tensors view exactly the same memory the same way.
// Their Autograd kernels (autograd/VariableTypeManual.cpp) refuse tensors that require grad.
#include <aten/core/QTensorImpl.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/ops/Functions.h>
#include <c10/core/StorageBounds.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace at::inline tessera::native {

namespace {

// Grows the storage under `impl` to hold its view, copying the bytes it had (as torch does).
void ensure_storage_holds(c10::TensorImpl* impl) {
  if (impl->is_meta()) return;
  const size_t nbytes = c10::computeStorageNbytes(impl->sizes(), impl->strides(), impl->itemsize(), impl->storage_offset());
  c10::StorageImpl* storage = impl->storage().unsafeGetStorageImpl();
  TORCH_INTERNAL_ASSERT(storage != nullptr, "resize_: a tensor without storage");
  if (storage->nbytes() >= nbytes) return;
  TORCH_CHECK(storage->resizable(), "Trying to resize storage that is not resizable");
  c10::DataPtr grown = storage->allocator()->allocate(nbytes);
  if (storage->nbytes() > 0 && storage->data() != nullptr) std::memcpy(grown.get(), storage->data(), storage->nbytes());
  storage->set_data_ptr(std::move(grown));
  storage->set_nbytes(nbytes);
}

// mkldnn and nested tensors keep their geometry to themselves (CompositeExplicitAutograd
// reaches MkldnnCPU): they neither change it here nor lend their buffer to another tensor.
void check_plain_layout(const Tensor& t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(!t.is_mkldnn() && !t.is_nested() && !c10::isSparseLayout(t.layout()), op,
                              " is not supported on ", t.is_mkldnn() ? "mkldnn" : t.is_nested() ? "nested" : "sparse",
                              " tensors", t.is_sparse() ? " (use sparse_resize_ for a COO tensor)" : "");
}

void resize_impl(Tensor& self, IntArrayRef size, std::optional<c10::MemoryFormat> memory_format) {
  check_plain_layout(self, "resize_");
  // A per-channel quantizer holds one scale per channel of the current shape (torch's rules).
  if (self.is_quantized()) {
    TORCH_CHECK(get_quantizer(self)->qscheme() == c10::kPerTensorAffine,
                "Can only resize quantized tensors with per-tensor schemes!");
    TORCH_CHECK(memory_format.value_or(c10::MemoryFormat::Contiguous) == c10::MemoryFormat::Contiguous,
                "Unsupported memory format for quantized tensor resize ", *memory_format);
  }
  for (int64_t s : size) TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_and_strides(size, strides_for_memory_format(size, memory_format.value_or(c10::MemoryFormat::Contiguous)));
  ensure_storage_holds(impl);
}

}  // namespace

Tensor& resize_(Tensor& self, IntArrayRef size, std::optional<c10::MemoryFormat> memory_format) {
  resize_impl(self, size, memory_format);
  return self;
}

Tensor& resize_as_(Tensor& self, const Tensor& the_template, std::optional<c10::MemoryFormat> memory_format) {
  c10::MemoryFormat format = memory_format.value_or(c10::MemoryFormat::Contiguous);
  if (format == c10::MemoryFormat::Preserve) {
    format = c10::MemoryFormat::Contiguous;
    if (!the_template.is_contiguous()) {
      for (c10::MemoryFormat f : {c10::MemoryFormat::ChannelsLast, c10::MemoryFormat::ChannelsLast3d}) {
        if (the_template.is_contiguous(f)) format = f;
      }
    }
  }
  resize_impl(self, the_template.sizes(), format);
  return self;
}

Tensor& set_source_Tensor_storage_offset(Tensor& self, const Tensor& source, int64_t storage_offset, IntArrayRef size,
                                         IntArrayRef stride) {
  check_plain_layout(self, "set_");
  check_plain_layout(source, "set_");
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_quantized() && !source.is_quantized(),
                              "set_ is not supported on quantized tensors");
  TORCH_CHECK(source.scalar_type() == self.scalar_type(), "Expected object of scalar type ", self.scalar_type(),
              " but got scalar type ", source.scalar_type(), " for argument 'source'");
  TORCH_CHECK(source.device() == self.device(), "Attempted to set the storage of a tensor on device \"",
              self.device(), "\" to a storage on different device \"", source.device(), "\"");
  TORCH_CHECK(stride.empty() || stride.size() == size.size(), "mismatch in length of strides and shape");
  for (int64_t s : size) TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
  TORCH_CHECK(storage_offset >= 0, "Tensor: invalid storage offset ", storage_offset);
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  const c10::Storage storage = source.unsafeGetTensorImpl()->storage();
  impl->set_storage(storage);
  impl->set_storage_offset(storage_offset);
  if (stride.empty()) impl->set_sizes_contiguous(size);
  else impl->set_sizes_and_strides(size, stride);
  // A view reaching past the storage's end grows it, as torch's set_ does.
  ensure_storage_holds(impl);
  return self;
}

Tensor& set_source_Tensor(Tensor& self, const Tensor& source) {
  if (self.unsafeGetTensorImpl() == source.unsafeGetTensorImpl()) return self;
  return set_source_Tensor_storage_offset(self, source, source.storage_offset(), source.sizes(), source.strides());
}

Tensor& set_empty(Tensor& self) {
  // A fresh, empty, resizable storage on self's device from the same allocator.
  const Tensor empty = at::empty({0}, self.options());
  return set_source_Tensor_storage_offset(self, empty, 0, std::vector<int64_t>{0}, std::vector<int64_t>{});
}

bool is_set_to(const Tensor& self, const Tensor& tensor) {
  const c10::TensorImpl* a = self.unsafeGetTensorImpl();
  const c10::TensorImpl* b = tensor.unsafeGetTensorImpl();
  return a->storage().is_alias_of(b->storage()) && a->storage_offset() == b->storage_offset() &&
         a->sizes().equals(b->sizes()) && a->strides().equals(b->strides());
}

}  // namespace at::inline tessera::native
