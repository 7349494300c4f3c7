// at::Tensor: the user's handle to a TensorImpl (a counted pointer, cheap to copy).
// This file holds the metadata API; the operator methods (t.add(u), t.view({2, 3}), ...)
// are generated from ops.yaml into aten/ops/TensorMethods.inc and included below.
#pragma once

#include <aten/core/Generator.h>
#include <aten/core/TensorOptions.h>
#include <aten/core/VariableHooksInterface.h>
#include <c10/core/NamedTensor.h>
#include <c10/core/QScheme.h>
#include <c10/core/Scalar.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/OptionalArrayRef.h>

#include <optional>
#include <string_view>
#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <vector>

#include <ostream>

namespace at::inline tessera {

using c10::Device;
using c10::DeviceType;
using c10::Dimname;
using c10::DispatchKey;
using c10::DispatchKeySet;
using c10::IntArrayRef;
using c10::Layout;
using c10::MemoryFormat;
using c10::QScheme;
using c10::Scalar;
using c10::ScalarType;
using c10::TensorImpl;
using TensorList = c10::ArrayRef<class Tensor>;

class TORCH_API Tensor {
 public:
  Tensor() = default;
  explicit Tensor(c10::intrusive_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  const c10::intrusive_ptr<TensorImpl>& getIntrusivePtr() const { return impl_; }
  void reset() { impl_.reset(); }
  size_t use_count() const { return impl_.use_count(); }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  int64_t dim() const { return impl_->dim(); }
  int64_t ndimension() const { return dim(); }
  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  int64_t size(int64_t d) const { return impl_->size(d); }
  int64_t stride(int64_t d) const { return impl_->stride(d); }
  int64_t numel() const { return impl_->numel(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  size_t element_size() const { return impl_->itemsize(); }
  size_t itemsize() const { return impl_->itemsize(); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * itemsize(); }
  ScalarType scalar_type() const { return impl_->scalar_type(); }
  Device device() const { return impl_->device(); }
  Layout layout() const { return impl_->layout(); }
  DispatchKeySet key_set() const { return impl_->key_set(); }
  bool is_cpu() const { return impl_->is_cpu(); }
  bool is_cuda() const { return impl_->is_cuda(); }
  bool is_meta() const { return impl_->is_meta(); }
  bool is_mkldnn() const { return impl_->key_set().has(c10::DispatchKey::MkldnnCPU); }
  bool is_nested() const { return impl_->key_set().has(c10::DispatchKey::NestedTensorCPU); }
  // COO (is_sparse) or one of CSR/CSC/BSR/BSC (is_sparse_csr, torch's name for all four).
  bool is_sparse() const { return impl_->layout() == c10::kSparse; }
  bool is_quantized() const {
    return impl_->key_set().has_any(
        {c10::DispatchKey::QuantizedCPU, c10::DispatchKey::QuantizedCUDA, c10::DispatchKey::QuantizedMeta});
  }
  bool is_sparse_csr() const { return c10::isSparseCompressed(impl_->layout()); }
  // Whether any dim is named (the names live in aten/core/NamedTensorUtils.h).
  bool has_names() const { return impl_->has_names(); }
  // The lazy math bits (conj() views, the negation behind a conj view's imag).
  bool is_conj() const { return impl_->is_conj(); }
  bool is_neg() const { return impl_->is_neg(); }
  void _set_conj(bool value) const { impl_->_set_conj(value); }
  void _set_neg(bool value) const { impl_->_set_neg(value); }
  bool is_contiguous(MemoryFormat format = MemoryFormat::Contiguous) const { return impl_->is_contiguous(format); }
  const c10::Storage& storage() const { return impl_->storage(); }
  void* data_ptr() const { return impl_->data(); }
  template <typename T>
  T* data_ptr() const {
    return static_cast<T*>(impl_->data());
  }

  // dtype and device of this tensor, for making others like it.
  TensorOptions options() const { return TensorOptions().dtype(scalar_type()).device(device()); }

  // The value of a one-element tensor (torch's Tensor.item()); CPU tensors only.
  c10::Scalar item() const;

  // --- autograd: declared here, implemented by libtessera_autograd (VariableHooksInterface) ---
  bool requires_grad() const { return impl_->requires_grad(); }
  // Only floating-point and complex tensors can require grad; returns *this.
  const Tensor& set_requires_grad(bool requires_grad) const;
  // The accumulated gradient (undefined until a backward reaches this tensor).
  const Tensor& grad() const;
  Tensor& mutable_grad() const;
  // Accumulates d(self)/d(leaf) into every leaf's grad(); `gradient` may be omitted for a
  // one-element self. retain_graph defaults to create_graph.
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                std::optional<TensorList> inputs = std::nullopt) const;
  bool is_leaf() const;
  int64_t output_nr() const;
  int64_t _version() const { return impl_->version_counter().current_version(); }
  const std::shared_ptr<torch::autograd::Node>& grad_fn() const;
  void retain_grad() const;
  bool retains_grad() const;
  bool is_view() const;
  const Tensor& _base() const;
  // A hook runs on the gradient flowing into this tensor; returning a defined Tensor
  // replaces that gradient. Hooks returning void only observe. Returns the hook's handle.
  template <typename Hook>
  unsigned register_hook(Hook&& hook) const {
    if constexpr (std::is_void_v<std::invoke_result_t<Hook, const Tensor&>>) {
      return _register_hook([h = std::forward<Hook>(hook)](const Tensor& g) {
        h(g);
        return Tensor();
      });
    } else {
      return _register_hook(std::forward<Hook>(hook));
    }
  }
  unsigned _register_hook(std::function<Tensor(const Tensor&)> hook) const;
  void remove_hook(unsigned handle) const;

  // Operator methods, generated from ops.yaml.
#include <aten/ops/TensorMethods.inc>

 private:
  c10::intrusive_ptr<TensorImpl> impl_;
};

// "Tensor(sizes=[2, 3], dtype=Float, device=cpu)", or "Tensor(undefined)".
TORCH_API std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace at::inline tessera
