// Tensor.to(...) and _to_copy: dtype / device / layout / memory-format conversion. `to`
// returns self when nothing would change (unless copy=True), as torch does; otherwise
// _to_copy allocates the result (with empty_like's layout rules) and copies.
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera::native {

Tensor _to_copy(const Tensor& self, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                std::optional<at::Device> device, std::optional<bool> pin_memory, bool non_blocking,
                std::optional<at::MemoryFormat> memory_format) {
  c10::Device target = device.value_or(self.device());
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_meta() || target.is_meta(), "Cannot copy out of meta tensor; no data!");
  if (self.is_quantized() && dtype.value_or(self.scalar_type()) == self.scalar_type()) {
    // A quantized copy (to another device: the meta device) keeps its quantizer.
    Tensor result = at::empty_like(self, std::nullopt, layout, target, pin_memory, memory_format);
    return result.copy_(self, non_blocking);
  }
  Tensor result = empty_like_impl(self, dtype.value_or(self.scalar_type()), target, layout, pin_memory, memory_format);
  result.copy_(self, non_blocking);
  return result;
}

// Whether to(...) may return self: every option absent or already self's, and no copy asked.
static bool to_will_alias(const Tensor& self, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                          std::optional<at::Device> device, bool copy, std::optional<at::MemoryFormat> memory_format) {
  c10::MemoryFormat format = memory_format.value_or(c10::MemoryFormat::Preserve);
  return (!dtype || *dtype == self.scalar_type()) && (!layout || *layout == self.layout()) &&
         (!device || *device == self.device()) && !copy &&
         (format == c10::MemoryFormat::Preserve || suggest_memory_format(self) == format);
}

static Tensor to_impl(const Tensor& self, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                      std::optional<at::Device> device, std::optional<bool> pin_memory, bool non_blocking, bool copy,
                      std::optional<at::MemoryFormat> memory_format) {
  if (to_will_alias(self, dtype, layout, device, copy, memory_format)) return self;
  return at::_to_copy(self, dtype, layout, device, pin_memory, non_blocking, memory_format);
}

Tensor to_dtype_layout(const Tensor& self, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                       std::optional<at::Device> device, std::optional<bool> pin_memory, bool non_blocking, bool copy,
                       std::optional<at::MemoryFormat> memory_format) {
  return to_impl(self, dtype, layout, device, pin_memory, non_blocking, copy, memory_format);
}

Tensor to_device(const Tensor& self, at::Device device, at::ScalarType dtype, bool non_blocking, bool copy,
                 std::optional<at::MemoryFormat> memory_format) {
  return to_impl(self, dtype, std::nullopt, device, std::nullopt, non_blocking, copy, memory_format);
}

Tensor to_dtype(const Tensor& self, at::ScalarType dtype, bool non_blocking, bool copy,
                std::optional<at::MemoryFormat> memory_format) {
  return to_impl(self, dtype, std::nullopt, std::nullopt, std::nullopt, non_blocking, copy, memory_format);
}

Tensor to_other(const Tensor& self, const Tensor& other, bool non_blocking, bool copy,
                std::optional<at::MemoryFormat> memory_format) {
  return to_impl(self, other.scalar_type(), other.layout(), other.device(), std::nullopt, non_blocking, copy,
                 memory_format);
}

Tensor type_as(const Tensor& self, const Tensor& other) { return self.to(other); }

}  // namespace at::inline tessera::native
