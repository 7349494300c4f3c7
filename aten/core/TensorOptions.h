// TensorOptions: the optional dtype, device, layout, requires_grad and pinned-memory
// settings of a factory call, in PyTorch's builder style:
//   at::empty({2, 3}, at::TensorOptions().dtype(at::kDouble).device("cpu"))
#pragma once

#include <c10/core/DefaultDtype.h>
#include <c10/core/Device.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>

#include <optional>

namespace at::inline tessera {

using c10::kBool;
using c10::kByte;
using c10::kChar;
using c10::kComplexDouble;
using c10::kComplexFloat;
using c10::kDouble;
using c10::kFloat;
using c10::kHalf;
using c10::kInt;
using c10::kLong;
using c10::kShort;
using c10::kBFloat16;
using c10::kStrided;

class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(c10::ScalarType dtype) : dtype_(dtype) {}    // NOLINT: implicit, as in torch
  TensorOptions(c10::Device device) : device_(device) {}     // NOLINT
  TensorOptions(const char* device) : device_(device) {}     // NOLINT
  TensorOptions(c10::Layout layout) : layout_(layout) {}     // NOLINT

  TensorOptions dtype(std::optional<c10::ScalarType> d) const { auto o = *this; o.dtype_ = d; return o; }
  TensorOptions device(std::optional<c10::Device> d) const { auto o = *this; o.device_ = d; return o; }
  TensorOptions layout(std::optional<c10::Layout> l) const { auto o = *this; o.layout_ = l; return o; }
  TensorOptions requires_grad(std::optional<bool> r) const { auto o = *this; o.requires_grad_ = r; return o; }
  TensorOptions pinned_memory(std::optional<bool> p) const { auto o = *this; o.pinned_memory_ = p; return o; }

  // The settings, with torch's defaults for those not given.
  c10::ScalarType dtype() const { return dtype_.value_or(c10::get_default_dtype()); }
  c10::Device device() const { return device_.value_or(c10::Device(c10::DeviceType::CPU)); }
  c10::Layout layout() const { return layout_.value_or(c10::kStrided); }
  bool requires_grad() const { return requires_grad_.value_or(false); }
  bool pinned_memory() const { return pinned_memory_.value_or(false); }

  // The settings as given (nullopt when not), as the optional schema arguments take them.
  std::optional<c10::ScalarType> dtype_opt() const { return dtype_; }
  std::optional<c10::Device> device_opt() const { return device_; }
  std::optional<c10::Layout> layout_opt() const { return layout_; }
  std::optional<bool> requires_grad_opt() const { return requires_grad_; }
  std::optional<bool> pinned_memory_opt() const { return pinned_memory_; }

 private:
  std::optional<c10::ScalarType> dtype_;
  std::optional<c10::Device> device_;
  std::optional<c10::Layout> layout_;
  std::optional<bool> requires_grad_;
  std::optional<bool> pinned_memory_;
};

inline TensorOptions dtype(c10::ScalarType d) { return TensorOptions().dtype(d); }
inline TensorOptions device(c10::Device d) { return TensorOptions().device(d); }
inline TensorOptions layout(c10::Layout l) { return TensorOptions().layout(l); }

}  // namespace at::inline tessera
