#include <aten/core/TensorUtils.h>

#include <aten/core/NestedTensorImpl.h>
#include <aten/core/QTensorImpl.h>
#include <aten/core/SparseTensorImpl.h>
#include <aten/native/shape/TensorShape.h>

#include <c10/core/StorageBounds.h>
#include <c10/core/ThreadLocalState.h>

namespace at::inline tessera {

namespace {

Tensor allocate(IntArrayRef sizes, IntArrayRef strides, bool contiguous, c10::ScalarType dtype, c10::Device device) {
  TORCH_CHECK(dtype != c10::ScalarType::Undefined, "empty: a dtype is required");
  // A quantized tensor is a QTensorImpl with qparams (aten/core/QTensorImpl.h); a plain one
  // of a quantized dtype would be integers no operator can interpret.
  TORCH_CHECK(!c10::isQIntType(dtype), "empty: a quantized tensor (dtype ", dtype,
              ") needs quantization parameters: make it with quantize_per_tensor, quantize_per_channel, "
              "_empty_affine_quantized or _empty_per_channel_affine_quantized");
  auto impl = c10::make_intrusive<c10::TensorImpl>(
      c10::Storage(), c10::DispatchKeySet(c10::backendDispatchKey(device.type(), c10::kStrided)), dtype, c10::kStrided);
  // Sizes first: they validate (negative dims, overflow) before anything is allocated.
  if (contiguous) {
    impl->set_sizes_contiguous(sizes);
  } else {
    impl->set_sizes_and_strides(sizes, strides);
  }
  size_t nbytes = c10::computeStorageNbytes(impl->sizes(), impl->strides(), c10::elementSize(dtype));
  impl->set_storage(c10::Storage(c10::StorageImpl::use_byte_size_t{}, nbytes, c10::GetAllocator(device.type()),
                                 /*resizable=*/true));
  return Tensor(std::move(impl));
}

}  // namespace

namespace {

// One cached wrapped number per dtype and thread, reused while only the cache refers to it
// (no op kept it: no autograd save, no view of its storage, no weak reference); otherwise
// the cache lets go of it and takes a fresh one.
template <typename T>
Tensor cached_wrapped_number(c10::ScalarType dtype, T value) {
  static thread_local Tensor cache;
  if (!(cache.defined() && cache.getIntrusivePtr().unique() && cache.storage().use_count() == 1 &&
        cache.unsafeGetTensorImpl()->is_wrapped_number())) {
    cache = make_empty(c10::IntArrayRef(), dtype, c10::Device(c10::kCPU));
    cache.unsafeGetTensorImpl()->set_wrapped_number(true);
  }
  *static_cast<T*>(cache.data_ptr()) = value;
  return cache;
}

}  // namespace

Tensor wrapped_scalar_tensor(const c10::Scalar& s, c10::Device device) {
  if (device.is_cpu()) {
    switch (s.type()) {
      case c10::kDouble: return cached_wrapped_number<double>(c10::kDouble, s.toDouble());
      case c10::kLong: return cached_wrapped_number<int64_t>(c10::kLong, s.toLong());
      case c10::kBool: return cached_wrapped_number<bool>(c10::kBool, s.toBool());
      case c10::kComplexDouble:
        return cached_wrapped_number<c10::complex<double>>(c10::kComplexDouble, s.toComplexDouble());
      default: break;
    }
  }
  Tensor t = make_empty({}, s.type(), device);
  if (!t.is_meta()) t.fill_(s);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

Tensor make_empty(IntArrayRef sizes, c10::ScalarType dtype, c10::Device device) {
  return allocate(sizes, {}, true, dtype, device);
}

Tensor make_empty_strided(IntArrayRef sizes, IntArrayRef strides, c10::ScalarType dtype, c10::Device device) {
  TORCH_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  return allocate(sizes, strides, false, dtype, device);
}

Tensor from_blob(c10::DataPtr data, IntArrayRef sizes, IntArrayRef strides, c10::ScalarType dtype) {
  TORCH_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  const c10::Device device = data.device();
  auto impl = c10::make_intrusive<c10::TensorImpl>(
      c10::Storage(), c10::DispatchKeySet(c10::backendDispatchKey(device.type(), c10::kStrided)), dtype, c10::kStrided);
  impl->set_sizes_and_strides(sizes, strides);
  const size_t nbytes = c10::computeStorageNbytes(impl->sizes(), impl->strides(), c10::elementSize(dtype));
  impl->set_storage(c10::Storage(c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t{}, nbytes,
                                                                       std::move(data), nullptr, /*resizable=*/false)));
  return Tensor(std::move(impl));
}

Tensor make_view(const Tensor& self, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  c10::TensorImpl* base = self.unsafeGetTensorImpl();
  if (self.is_nested()) {
    // A nested tensor's geometry lives in its impl: only an alias of the whole can be made.
    TORCH_CHECK_NOT_IMPLEMENTED(sizes.equals(self.sizes()) && strides.equals(self.strides()) &&
                                    offset == self.storage_offset(),
                                "views of nested tensors are not supported (only unbind and select along dim 0)");
    return nested_alias(self);
  }
  if (c10::isSparseLayout(self.layout())) {
    // Likewise a sparse tensor's (Note [Sparse tensor geometry]): its members are shared.
    TORCH_CHECK_NOT_IMPLEMENTED(sizes.equals(self.sizes()), "views of sparse tensors are not supported (layout ",
                                self.layout(), ")");
    return sparse_alias(self);
  }
  if (self.is_quantized()) {
    // The quantizer goes with the view. A per-channel one is tied to its axis: views that
    // move channels (select, slice, unsqueeze, squeeze) have QuantizedCPU kernels that make
    // the new one; any other change of geometry is refused, as torch refuses it.
    const QuantizerPtr& quantizer = get_quantizer(self);
    TORCH_CHECK(quantizer->qscheme() == c10::kPerTensorAffine ||
                    (sizes.equals(self.sizes()) && strides.equals(self.strides()) && offset == self.storage_offset()),
                "Setting strides is possible only on uniformly quantized tensor");
    return make_qtensor_view(self, sizes, strides, offset, quantizer);
  }
  auto impl = c10::make_intrusive<c10::TensorImpl>(base->storage(), base->key_set(), base->scalar_type(), base->layout());
  impl->set_sizes_and_strides(sizes, strides);
  impl->set_storage_offset(offset);
  impl->set_version_counter(base->version_counter());
  return Tensor(std::move(impl));
}

Tensor raw_view(const Tensor& self) {
  Tensor v = make_view(self, self.sizes(), self.strides(), self.storage_offset());
  v._set_conj(false);
  v._set_neg(false);
  return v;
}

std::string tensor_type_string(const Tensor& t) {
  const c10::ScalarType dtype = t.scalar_type();
  if (t.is_cpu()) {
    switch (dtype) {
      case c10::ScalarType::Byte:
      case c10::ScalarType::Char:
      case c10::ScalarType::Short:
      case c10::ScalarType::Int:
      case c10::ScalarType::Long:
      case c10::ScalarType::Half:
      case c10::ScalarType::Float:
      case c10::ScalarType::Double:
        return c10::str("torch.", c10::toString(dtype), "Tensor");
      default:
        break;
    }
  }
  return c10::str(c10::toString(c10::backendDispatchKey(t.device().type(), t.layout())), c10::toString(dtype), "Type");
}

void check_no_requires_grad(const Tensor& t, const char* name, const char* fn) {
  TORCH_CHECK(!(t.defined() && t.requires_grad() && c10::GradMode::is_enabled()), "The function '", fn,
              "' is not differentiable with respect to argument '", name,
              "'. This input cannot have requires_grad True.");
}

bool is_non_overlapping_and_dense(const Tensor& t) {
  return t.numel() == 0 || native::is_non_overlapping_and_dense(t.sizes(), t.strides());
}

}  // namespace at::inline tessera
