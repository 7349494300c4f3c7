// TensorImpl: the object behind every tensor. A view of a Storage (offset, sizes,
// strides) with a dtype, a device, the dispatch keys that route its ops, a version
// counter shared with its views, and a slot for autograd's metadata.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>
#include <c10/core/SizesAndStrides.h>
#include <c10/core/StorageImpl.h>

#include <atomic>
#include <cstdint>
#include <memory>

namespace c10::inline tessera {

// A counter bumped by every in-place write. Views share their base's counter, so a
// tensor saved for backward can tell that any alias of it was modified since.
struct C10_API VersionCounter final : public intrusive_ptr_target {
  std::atomic<uint32_t> version{0};
};

class C10_API VariableVersion {
 public:
  VariableVersion() : counter_(make_intrusive<VersionCounter>()) {}
  uint32_t current_version() const { return counter_->version.load(std::memory_order_relaxed); }
  void bump() { counter_->version.fetch_add(1, std::memory_order_relaxed); }
  // Whether two tensors share a counter (one is a view of the other, or both of a third).
  bool shares_with(const VariableVersion& other) const { return counter_ == other.counter_; }
  size_t use_count() const { return counter_.use_count(); }

 private:
  intrusive_ptr<VersionCounter> counter_;
};

// What autograd keeps per tensor. c10 knows only this interface; the autograd library
// implements it (grad, grad_fn, hooks, ...) and installs it on tensors that need it.
class C10_API AutogradMetaInterface {
 public:
  virtual ~AutogradMetaInterface();
  virtual void set_requires_grad(bool requires_grad, class TensorImpl* self) = 0;
  virtual bool requires_grad() const = 0;
};

struct NamedTensorMeta;  // c10/core/NamedTensor.h

// What the Python layer keeps on a tensor whose Python class handles its operators
// (__torch_dispatch__): its class and instance state. c10 only owns it; csrc implements it.
class C10_API PyObjectSlot {
 public:
  virtual ~PyObjectSlot();
};

class C10_API TensorImpl : public intrusive_ptr_target {
 public:
  // A tensor over `storage`, initially 1-d with zero elements; its backend key is
  // computed from the storage's device and `layout`, its autograd keys from the backend.
  TensorImpl(Storage storage, ScalarType dtype, Layout layout = Layout::Strided);
  // The same with an explicit key set (subclasses and tests; empty means "compute it");
  // autograd keys are added.
  TensorImpl(Storage storage, DispatchKeySet keys, ScalarType dtype, Layout layout);
  ~TensorImpl() override;
  C10_DISABLE_COPY_AND_ASSIGN(TensorImpl);

  // --- metadata ---
  int64_t dim() const { return static_cast<int64_t>(sizes_and_strides_.size()); }
  IntArrayRef sizes() const { return sizes_and_strides_.sizes(); }
  IntArrayRef strides() const { return sizes_and_strides_.strides(); }
  // Negative dims count from the end; out of range is an IndexError as in torch.
  int64_t size(int64_t d) const { return sizes_and_strides_.sizes_data()[wrap_dim(d)]; }
  int64_t stride(int64_t d) const { return sizes_and_strides_.strides_data()[wrap_dim(d)]; }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  ScalarType scalar_type() const { return dtype_; }
  size_t itemsize() const { return elementSize(dtype_); }
  Device device() const { return device_; }
  Layout layout() const { return layout_; }
  DispatchKeySet key_set() const { return key_set_; }
  bool is_cpu() const { return device_.is_cpu(); }
  bool is_cuda() const { return device_.is_cuda(); }
  bool is_meta() const { return device_.is_meta(); }
  // The math bits: a lazy conj() view reads its storage conjugated, a negative view negated.
  // They live in the key set, so kernels that do not know them never see them (see
  // aten/native/MathBitsFallback.h).
  bool is_conj() const { return key_set_.has(DispatchKey::Conjugate); }
  bool is_neg() const { return key_set_.has(DispatchKey::Negative); }
  // Setting the conjugate bit needs a complex dtype; the negative bit takes any.
  void _set_conj(bool value);
  void _set_neg(bool value);

  bool is_contiguous(MemoryFormat format = MemoryFormat::Contiguous) const {
    switch (format) {
      case MemoryFormat::ChannelsLast: return is_channels_last_contiguous_;
      case MemoryFormat::ChannelsLast3d: return is_channels_last_3d_contiguous_;
      default: return is_contiguous_;
    }
  }

  // --- dimension names (named tensors; see c10/core/NamedTensor.h) ---
  // A tensor with at least one named dim carries the Named key, so every operator on it
  // passes the names fallback (aten/native/named) first.
  bool has_names() const { return key_set_.has(DispatchKey::Named); }
  // The names, or nullptr when no dim is named.
  const NamedTensorMeta* named_tensor_meta() const { return named_tensor_meta_.get(); }
  // Installs names (one per dim; all wildcards or nullptr clears them) and the Named key.
  // Callers validate the names (aten/core/NamedTensorUtils.h).
  void set_named_tensor_meta(std::unique_ptr<NamedTensorMeta> meta);

  // --- a Python class that handles this tensor's operators (__torch_dispatch__) ---
  // Installing the slot adds the Python key, so every operator on the tensor reaches the
  // Python fallback below autograd; nullptr removes both. A new impl (a view, an alias)
  // starts without either: only the tensor that holds the slot has a Python object.
  PyObjectSlot* pyobj_slot() const { return pyobj_slot_.get(); }
  void set_pyobj_slot(std::unique_ptr<PyObjectSlot> slot);

  // --- storage and data ---
  const Storage& storage() const { return storage_; }
  bool has_storage() const { return storage_.defined(); }
  // The address of element 0 (storage start + offset); nullptr for meta and empty tensors.
  // A tensor with elements whose storage has no memory (a wrapper subclass's, made by
  // Tensor._make_wrapper_subclass) raises instead: kernels never see a null buffer.
  void* data() const;

  // --- changing the view (used by view ops and resize) ---
  // Sizes with the contiguous strides for them.
  void set_sizes_contiguous(IntArrayRef sizes);
  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides);
  void set_storage_offset(int64_t offset);
  void set_storage(Storage storage);
  // torch's `t.data = src` (shallow_copy_from): this tensor takes src's storage, offset,
  // sizes, strides and dtype, and keeps its own autograd meta and version counter, so
  // hooks, grads and graphs that hold it stay attached. src must share device and layout.
  void set_data_from(const TensorImpl& src);

  // --- versions and autograd ---
  const VariableVersion& version_counter() const { return version_counter_; }
  // Views adopt their base's counter.
  void set_version_counter(const VariableVersion& counter) { version_counter_ = counter; }
  void bump_version() { version_counter_.bump(); }
  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> meta) { autograd_meta_ = std::move(meta); }
  bool requires_grad() const { return autograd_meta_ && autograd_meta_->requires_grad(); }

  // Wrapped numbers are 0-dim tensors made from Python scalars; type promotion ranks them last.
  bool is_wrapped_number() const { return is_wrapped_number_; }
  void set_wrapped_number(bool value);

 private:
  int64_t wrap_dim(int64_t d) const;
  void refresh_numel_and_contiguity();
  bool compute_contiguous() const;
  // NHWC for 4-d tensors, NDHWC for 5-d ones (rank 4 or 5 picks the rule).
  bool compute_channels_last_contiguous(int64_t rank) const;
  // Names describe dims: a change of rank (resize_, set_, .data =) drops them.
  void drop_names_if_rank_changed();

  Storage storage_;
  int64_t storage_offset_ = 0;
  int64_t numel_ = 0;
  SizesAndStrides sizes_and_strides_;
  VariableVersion version_counter_;
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
  std::unique_ptr<NamedTensorMeta> named_tensor_meta_;
  std::unique_ptr<PyObjectSlot> pyobj_slot_;
  DispatchKeySet key_set_;
  Device device_;
  ScalarType dtype_;
  Layout layout_;
  bool is_contiguous_ = true;
  bool is_channels_last_contiguous_ = false;
  bool is_channels_last_3d_contiguous_ = false;
  bool is_wrapped_number_ = false;
};

}  // namespace c10::inline tessera
