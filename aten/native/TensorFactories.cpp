#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/TensorFactories.h>

namespace at::inline tessera::native {

size_t storage_bytes_for(IntArrayRef sizes, IntArrayRef strides, size_t itemsize) {
  int64_t last = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    TORCH_CHECK(sizes[i] >= 0, "Trying to create tensor with negative dimension ", sizes[i], ": ", sizes);
    if (sizes[i] == 0) return 0;
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    TORCH_CHECK(strides[i] >= 0, "as_strided: Negative strides are not supported at the moment, got strides: ",
                strides);
    int64_t span = 0;
    TORCH_CHECK(!__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) && !__builtin_add_overflow(last, span, &last),
                "Storage size calculation overflowed with sizes=", sizes, " and strides=", strides);
  }
  int64_t bytes = 0;
  TORCH_CHECK(!__builtin_mul_overflow(last + 1, static_cast<int64_t>(itemsize), &bytes),
              "Storage size calculation overflowed with sizes=", sizes, " and strides=", strides);
  return static_cast<size_t>(bytes);
}

static Tensor allocate(IntArrayRef sizes, IntArrayRef strides, bool contiguous, c10::ScalarType dtype,
                       c10::Device device) {
  TORCH_CHECK(dtype != c10::ScalarType::Undefined, "empty: a dtype is required");
  auto impl = c10::make_intrusive<c10::TensorImpl>(
      c10::Storage(), c10::DispatchKeySet(c10::backendDispatchKey(device.type(), c10::kStrided)), dtype, c10::kStrided);
  // Sizes first: they validate (negative dims, overflow) before anything is allocated.
  if (contiguous) {
    impl->set_sizes_contiguous(sizes);
  } else {
    impl->set_sizes_and_strides(sizes, strides);
  }
  size_t nbytes = storage_bytes_for(impl->sizes(), impl->strides(), c10::elementSize(dtype));
  impl->set_storage(c10::Storage(c10::StorageImpl::use_byte_size_t{}, nbytes, c10::GetAllocator(device.type()),
                                 /*resizable=*/true));
  return Tensor(std::move(impl));
}

Tensor make_empty(IntArrayRef sizes, c10::ScalarType dtype, c10::Device device) {
  return allocate(sizes, {}, true, dtype, device);
}

Tensor make_empty_strided(IntArrayRef sizes, IntArrayRef strides, c10::ScalarType dtype, c10::Device device) {
  TORCH_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  return allocate(sizes, strides, false, dtype, device);
}

static void check_factory_options(const char* op, std::optional<at::Layout> layout, std::optional<bool> pin_memory,
                                  std::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK_NOT_IMPLEMENTED(layout.value_or(c10::kStrided) == c10::kStrided, op, ": layout ", *layout,
                              " is not supported yet; only torch.strided");
  TORCH_CHECK_NOT_IMPLEMENTED(!pin_memory.value_or(false), op, ": pin_memory=True needs CUDA, which this op lacks");
  TORCH_CHECK(memory_format.value_or(c10::MemoryFormat::Contiguous) != c10::MemoryFormat::Preserve, op,
              ": preserve memory format is unsupported by the empty operator");
}

static Tensor empty_impl(const char* op, IntArrayRef size, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout> layout, std::optional<bool> pin_memory,
                         std::optional<at::MemoryFormat> memory_format, c10::Device device) {
  check_factory_options(op, layout, pin_memory, memory_format);
  c10::ScalarType t = dtype.value_or(c10::kFloat);
  if (memory_format.value_or(c10::MemoryFormat::Contiguous) == c10::MemoryFormat::ChannelsLast) {
    TORCH_CHECK(size.size() == 4, "required rank 4 tensor to use channels_last format");
    // NHWC: C fastest, then W, then H, then N.
    std::vector<int64_t> strides(4);
    int64_t s = 1;
    for (int d : {1, 3, 2, 0}) {
      strides[d] = s;
      s *= std::max<int64_t>(size[d], 1);
    }
    return make_empty_strided(size, strides, t, device);
  }
  return make_empty(size, t, device);
}

Tensor empty_cpu(IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                 std::optional<at::Device> device, std::optional<bool> pin_memory,
                 std::optional<at::MemoryFormat> memory_format) {
  return empty_impl("empty", size, dtype, layout, pin_memory, memory_format, c10::Device(c10::DeviceType::CPU));
}

Tensor empty_meta(IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                  std::optional<at::Device> device, std::optional<bool> pin_memory,
                  std::optional<at::MemoryFormat> memory_format) {
  return empty_impl("empty", size, dtype, layout, pin_memory, memory_format, c10::Device(c10::DeviceType::Meta));
}

Tensor empty_strided_cpu(IntArrayRef size, IntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout> layout, std::optional<at::Device> device,
                         std::optional<bool> pin_memory) {
  check_factory_options("empty_strided", layout, pin_memory, std::nullopt);
  return make_empty_strided(size, stride, dtype.value_or(c10::kFloat), c10::Device(c10::DeviceType::CPU));
}

Tensor empty_strided_meta(IntArrayRef size, IntArrayRef stride, std::optional<at::ScalarType> dtype,
                          std::optional<at::Layout> layout, std::optional<at::Device> device,
                          std::optional<bool> pin_memory) {
  check_factory_options("empty_strided", layout, pin_memory, std::nullopt);
  return make_empty_strided(size, stride, dtype.value_or(c10::kFloat), c10::Device(c10::DeviceType::Meta));
}

// ---- structured helpers

Tensor empty_for_meta(const meta::TensorMeta& m, c10::Device device) {
  return m.strides.empty() ? make_empty(m.sizes, m.dtype, device) : make_empty_strided(m.sizes, m.strides, m.dtype, device);
}

void check_inplace(const Tensor& self, const meta::TensorMeta& m, const char* op) {
  TORCH_CHECK(self.sizes().equals(m.sizes), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", IntArrayRef(m.sizes));
  TORCH_CHECK(c10::canCast(m.dtype, self.scalar_type()), "result type ", m.dtype,
              " can't be cast to the desired output type ", self.scalar_type());
}

void resize_out(const Tensor& out, const meta::TensorMeta& m, const char* op) {
  TORCH_CHECK(c10::canCast(m.dtype, out.scalar_type()), "result type ", m.dtype,
              " can't be cast to the desired output type ", out.scalar_type());
  if (out.sizes().equals(m.sizes)) return;
  TORCH_CHECK(out.numel() == 0, op, "(): the out= tensor has shape ", out.sizes(), " but the result has shape ",
              IntArrayRef(m.sizes), "; pass an empty tensor to have it resized");
  c10::TensorImpl* impl = out.unsafeGetTensorImpl();
  if (m.strides.empty()) {
    impl->set_sizes_contiguous(m.sizes);
  } else {
    impl->set_sizes_and_strides(m.sizes, m.strides);
  }
  size_t nbytes = storage_bytes_for(impl->sizes(), impl->strides(), impl->itemsize());
  c10::StorageImpl* storage = impl->storage().unsafeGetStorageImpl();
  TORCH_CHECK(storage != nullptr && storage->resizable(), op, "(): the out= tensor's storage cannot be resized");
  if (storage->nbytes() < nbytes + impl->storage_offset() * impl->itemsize()) {
    nbytes += impl->storage_offset() * impl->itemsize();
    storage->set_data_ptr(storage->allocator()->allocate(nbytes));
    storage->set_nbytes(nbytes);
  }
}

}  // namespace at::inline tessera::native
