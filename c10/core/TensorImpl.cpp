#include <c10/core/TensorImpl.h>

#include <c10/core/NamedTensor.h>

#include <limits>

namespace c10::inline tessera {

// Note [TensorImpl size]: every tensor pays for each byte here, and views and temporaries
// are many. Grow it only on purpose.
static_assert(sizeof(TensorImpl) <= 192, "TensorImpl grew; see Note [TensorImpl size]");

AutogradMetaInterface::~AutogradMetaInterface() = default;
PyObjectSlot::~PyObjectSlot() = default;

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, Layout layout)
    : TensorImpl(std::move(storage), DispatchKeySet(), dtype, layout) {}

TensorImpl::TensorImpl(Storage storage, DispatchKeySet keys, ScalarType dtype, Layout layout)
    : storage_(std::move(storage)),
      device_(storage_.defined() ? storage_.device() : Device(DeviceType::CPU)),
      dtype_(dtype),
      layout_(layout) {
  TORCH_CHECK(dtype != ScalarType::Undefined, "a tensor needs a defined dtype");
  if (keys.empty()) {
    keys = DispatchKeySet(backendDispatchKey(device_.type(), layout));
  } else if (!storage_.defined()) {
    device_ = Device(deviceTypeOf(keys.highestPriorityBackendTypeId()));
  }
  // A view made from a named base starts unnamed, and one made from a Python-handled
  // tensor starts without the Python object (set_pyobj_slot).
  keys = keys.remove(DispatchKey::Named).remove(DispatchKey::Python);
  DispatchKey backend = keys.highestPriorityBackendTypeId();
  TORCH_INTERNAL_ASSERT(backend != DispatchKey::Undefined, "a tensor's key set needs a backend key: ", keys);
  key_set_ = keys | autogradRelatedKeys(backend);
  refresh_numel_and_contiguity();
}

TensorImpl::~TensorImpl() = default;

void* TensorImpl::data() const {
  if (!storage_.defined() || storage_.data() == nullptr || numel_ == 0) {
    // Sparse impls keep their data in member tensors (Note [Sparse tensor geometry]).
    TORCH_CHECK(!isSparseLayout(layout_), "Cannot access data pointer of Tensor that doesn't have storage");
    TORCH_CHECK(!storage_.defined() || storage_.data() != nullptr || numel_ == 0 || device_.is_meta(),
                "The tensor has a non-zero number of elements, but its data is not allocated: it is a wrapper "
                "subclass's (Tensor._make_wrapper_subclass), whose data lives in what its __torch_dispatch__ "
                "passes to the kernels");
    return nullptr;
  }
  return static_cast<char*>(storage_.data()) + storage_offset_ * static_cast<int64_t>(itemsize());
}

int64_t TensorImpl::wrap_dim(int64_t d) const {
  int64_t n = dim();
  TORCH_CHECK_INDEX(n > 0, "Dimension specified as ", d, " but tensor has no dimensions");
  TORCH_CHECK_INDEX(d >= -n && d < n, "Dimension out of range (expected to be in range of [", -n, ", ", n - 1,
                    "], but got ", d, ")");
  return d < 0 ? d + n : d;
}

namespace {
// Rejects negative sizes, and sizes whose element count (or contiguous strides) would
// overflow int64, before a tensor's geometry is touched.
void validate_sizes(IntArrayRef sizes) {
  int64_t extent = 1;
  for (int64_t s : sizes) {
    TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", sizes);
    TORCH_CHECK(!__builtin_mul_overflow(extent, s > 1 ? s : 1, &extent),
                "numel: integer multiplication overflow for sizes ", sizes);
  }
}
}  // namespace

void TensorImpl::set_sizes_contiguous(IntArrayRef sizes) {
  validate_sizes(sizes);
  sizes_and_strides_.resize(sizes.size());
  int64_t* sz = sizes_and_strides_.sizes_data();
  int64_t* st = sizes_and_strides_.strides_data();
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    sz[i] = sizes[i];
    st[i] = stride;
    // Size-0 and size-1 dims get the stride the next dim would have, as in torch.
    stride *= sizes[i] > 1 ? sizes[i] : 1;
  }
  refresh_numel_and_contiguity();
  drop_names_if_rank_changed();
}

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides) {
  TORCH_CHECK(sizes.size() == strides.size(), "dimensionality of sizes (", sizes.size(),
              ") must match dimensionality of strides (", strides.size(), ")");
  validate_sizes(sizes);
  sizes_and_strides_.resize(sizes.size());
  std::copy(sizes.begin(), sizes.end(), sizes_and_strides_.sizes_data());
  std::copy(strides.begin(), strides.end(), sizes_and_strides_.strides_data());
  refresh_numel_and_contiguity();
  drop_names_if_rank_changed();
}

void TensorImpl::set_storage_offset(int64_t offset) {
  TORCH_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  storage_offset_ = offset;
}

void TensorImpl::set_storage(Storage storage) {
  TORCH_CHECK(!storage.defined() || storage.device() == device_, "cannot set a storage on ", storage.device(),
              " for a tensor on ", device_);
  storage_ = std::move(storage);
}

void TensorImpl::set_data_from(const TensorImpl& src) {
  TORCH_CHECK(src.device_ == device_ && src.layout_ == layout_, "set_data: the new data (", src.device_,
              ") must be on the tensor's device (", device_, ") with its layout");
  storage_ = src.storage_;
  storage_offset_ = src.storage_offset_;
  sizes_and_strides_ = src.sizes_and_strides_;
  dtype_ = src.dtype_;
  key_set_ = (key_set_ - math_bits_keyset) | (src.key_set_ & math_bits_keyset);
  refresh_numel_and_contiguity();
  if (src.named_tensor_meta_) {  // a named source's names come along (torch's shallow copy)
    set_named_tensor_meta(std::make_unique<NamedTensorMeta>(*src.named_tensor_meta_));
  } else {
    drop_names_if_rank_changed();
  }
}

void TensorImpl::set_named_tensor_meta(std::unique_ptr<NamedTensorMeta> meta) {
  if (meta != nullptr) {
    TORCH_CHECK(static_cast<int64_t>(meta->names.size()) == dim(), "Number of names (", meta->names.size(),
                ") and number of dimensions in tensor (", dim(), ") do not match.");
    bool any_basic = false;
    for (Dimname n : meta->names) any_basic = any_basic || n.isBasic();
    if (!any_basic) meta.reset();
  }
  if (meta != nullptr) {
    key_set_ = key_set_.add(DispatchKey::Named);
  } else {
    key_set_ = key_set_.remove(DispatchKey::Named);
  }
  named_tensor_meta_ = std::move(meta);
}

void TensorImpl::drop_names_if_rank_changed() {
  if (named_tensor_meta_ && static_cast<int64_t>(named_tensor_meta_->names.size()) != dim()) {
    set_named_tensor_meta(nullptr);
  }
}

void TensorImpl::set_pyobj_slot(std::unique_ptr<PyObjectSlot> slot) {
  key_set_ = slot ? key_set_.add(DispatchKey::Python) : key_set_.remove(DispatchKey::Python);
  pyobj_slot_ = std::move(slot);
}

void TensorImpl::_set_conj(bool value) {
  TORCH_INTERNAL_ASSERT(!value || isComplexType(dtype_), "_set_conj: the conjugate bit needs a complex dtype, got ",
                        dtype_);
  key_set_ = value ? key_set_.add(DispatchKey::Conjugate) : key_set_.remove(DispatchKey::Conjugate);
}

void TensorImpl::_set_neg(bool value) {
  // Quantized kernels read the integers as they are: a lazy negation would be dropped.
  TORCH_CHECK(!value || !key_set_.has(DispatchKey::QuantizedCPU), "_set_neg: the negative bit is not supported ",
              "on quantized tensors");
  key_set_ = value ? key_set_.add(DispatchKey::Negative) : key_set_.remove(DispatchKey::Negative);
}

void TensorImpl::set_wrapped_number(bool value) {
  TORCH_INTERNAL_ASSERT(dim() == 0, "only 0-dim tensors can be wrapped numbers");
  is_wrapped_number_ = value;
}

void TensorImpl::refresh_numel_and_contiguity() {
  int64_t n = 1;
  for (int64_t s : sizes()) n *= s;  // validate_sizes ruled out overflow
  numel_ = n;
  is_contiguous_ = compute_contiguous();
  is_channels_last_contiguous_ = compute_channels_last_contiguous(4);
  is_channels_last_3d_contiguous_ = compute_channels_last_contiguous(5);
}

// Contiguous: row-major strides over the dims of size > 1 (size-1 dims may have any
// stride). Every empty tensor is contiguous.
bool TensorImpl::compute_contiguous() const {
  if (numel_ == 0) return true;
  IntArrayRef sizes = this->sizes(), strides = this->strides();
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

// Channels-last (NHWC) for 4-d tensors: the same rule with dims visited in the order
// C, W, H, N; channels-last-3d (NDHWC) for 5-d ones: C, W, H, D, N. Unlike the contiguous
// case, an empty tensor is judged by its strides, matching torch.
bool TensorImpl::compute_channels_last_contiguous(int64_t rank) const {
  if (dim() != rank) return false;
  IntArrayRef sizes = this->sizes(), strides = this->strides();
  static constexpr int kOrder4[] = {1, 3, 2, 0};
  static constexpr int kOrder5[] = {1, 4, 3, 2, 0};
  int64_t expected = 1;
  for (int d : rank == 4 ? ArrayRef<int>(kOrder4) : ArrayRef<int>(kOrder5)) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

}  // namespace c10::inline tessera
