#include <aten/core/NestedTensorImpl.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/factory/TensorFactories.h>

#include <aten/core/TensorUtils.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/core/StorageBounds.h>

#include <algorithm>
#include <cstring>

namespace at::inline tessera::native {

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
  c10::ScalarType t = dtype.value_or(c10::get_default_dtype());
  const c10::MemoryFormat format = memory_format.value_or(c10::MemoryFormat::Contiguous);
  if (format != c10::MemoryFormat::Contiguous) {
    return make_empty_strided(size, strides_for_memory_format(size, format), t, device);
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
  return make_empty_strided(size, stride, dtype.value_or(c10::get_default_dtype()), c10::Device(c10::DeviceType::CPU));
}

Tensor empty_strided_meta(IntArrayRef size, IntArrayRef stride, std::optional<at::ScalarType> dtype,
                          std::optional<at::Layout> layout, std::optional<at::Device> device,
                          std::optional<bool> pin_memory) {
  check_factory_options("empty_strided", layout, pin_memory, std::nullopt);
  return make_empty_strided(size, stride, dtype.value_or(c10::get_default_dtype()), c10::Device(c10::DeviceType::Meta));
}

Tensor& empty_out(IntArrayRef size, std::optional<at::MemoryFormat> memory_format, Tensor& out) {
  // torch accepts the argument only so the schema matches empty's; any value is an error.
  TORCH_CHECK(!memory_format.has_value(), "'memory_format' argument is incompatible with 'out' tensor argument");
  for (int64_t s : size) {
    TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", size);
  }
  resize_factory_out(out, size);
  return out;
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

// Grows an out= tensor's storage to `nbytes`, keeping the bytes it had: other views of the
// same storage still read them (torch's storage resize copies too).
static void grow_storage(c10::StorageImpl* storage, size_t nbytes) {
  if (storage->nbytes() >= nbytes) return;
  c10::DataPtr grown = storage->allocator()->allocate(nbytes);
  if (storage->nbytes() > 0 && storage->data() != nullptr) std::memcpy(grown.get(), storage->data(), storage->nbytes());
  storage->set_data_ptr(std::move(grown));
  storage->set_nbytes(nbytes);
}

// An mkldnn or nested out= tensor keeps its geometry to itself (CompositeExplicitAutograd
// out= kernels reach MkldnnCPU): refuse to resize it.
static void check_resizable_out(const Tensor& out, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(!out.is_mkldnn() && !out.is_nested() && !out.is_quantized(), op, "(): an ",
                              out.is_mkldnn() ? "mkldnn" : out.is_nested() ? "nested" : "quantized",
                              " tensor cannot be an out= argument");
}

static void resize_out_impl(const Tensor& out, IntArrayRef sizes, IntArrayRef strides, const char* op) {
  if (out.layout() == c10::kSparse) return;  // (a COO out= takes the result's shape with its members, in copy_)
  check_resizable_out(out, op);
  if (out.sizes().equals(sizes)) return;
  TORCH_CHECK(out.numel() == 0, op, "(): the out= tensor has shape ", out.sizes(), " but the result has shape ", sizes,
              "; pass an empty tensor to have it resized");
  c10::TensorImpl* impl = out.unsafeGetTensorImpl();
  if (strides.empty()) {
    impl->set_sizes_contiguous(sizes);
  } else {
    impl->set_sizes_and_strides(sizes, strides);
  }
  const size_t nbytes =
      c10::computeStorageNbytes(impl->sizes(), impl->strides(), impl->itemsize(), impl->storage_offset());
  c10::StorageImpl* storage = impl->storage().unsafeGetStorageImpl();
  TORCH_CHECK(storage != nullptr && storage->resizable(), op, "(): the out= tensor's storage cannot be resized");
  grow_storage(storage, nbytes);
}

void resize_out(const Tensor& out, const meta::TensorMeta& m, const char* op) {
  TORCH_CHECK(c10::canCast(m.dtype, out.scalar_type()), "result type ", m.dtype,
              " can't be cast to the desired output type ", out.scalar_type());
  resize_out_impl(out, m.sizes, m.strides, op);
}

void resize_out_sizes(const Tensor& out, IntArrayRef sizes, const char* op) { resize_out_impl(out, sizes, {}, op); }

const char* cpp_type_name(c10::ScalarType t) {
  switch (t) {
    case c10::kByte: return "unsigned char";
    case c10::kChar: return "signed char";
    case c10::kShort: return "short int";
    case c10::kInt: return "int";
    case c10::kLong: return "long int";
    case c10::kFloat: return "float";
    case c10::kDouble: return "double";
    case c10::kHalf: return "c10::Half";
    case c10::kBFloat16: return "c10::BFloat16";
    case c10::kComplexHalf: return "c10::complex<c10::Half>";
    case c10::kComplexFloat: return "c10::complex<float>";
    case c10::kComplexDouble: return "c10::complex<double>";
    case c10::kBool: return "bool";
    default: return "unknown";
  }
}

void check_out_dtype(const Tensor& out, std::optional<c10::ScalarType> dtype) {
  TORCH_CHECK(!dtype || out.scalar_type() == *dtype, "Expected out tensor to have dtype ", cpp_type_name(*dtype),
              ", but got ", cpp_type_name(out.scalar_type()), " instead");
}

Tensor& copy_into_out(const Tensor& result, Tensor& out, const char* op) {
  resize_out(out, meta::TensorMeta{result.sizes().vec(), result.scalar_type()}, op);
  out.copy_(result);
  return out;
}

}  // namespace at::inline tessera::native

// ---------------------------------------------------------------- layout rules

namespace at::inline tessera::native {


// 4-d strides that walk C fastest, then W, then H, then N (5-d: C, W, H, D, N). Size-1 dims
// are ambiguous: a tensor reads as channels-last only when its strides could not also be
// contiguous ones.
static bool strides_like_channels_last(IntArrayRef sizes, IntArrayRef strides, size_t rank) {
  if (sizes.size() != rank || strides[1] == 0) return false;
  static constexpr size_t kOrder4[] = {1, 3, 2, 0};
  static constexpr size_t kOrder5[] = {1, 4, 3, 2, 0};
  int64_t floor = 0;  // each dim's stride must reach past the previous dim's extent
  for (size_t d : rank == 4 ? ArrayRef<size_t>(kOrder4) : ArrayRef<size_t>(kOrder5)) {
    if (sizes[d] == 0 || strides[d] < floor) return false;
    if (d == 0 && floor == strides[1]) return false;  // N111-like: call it contiguous
    floor = sizes[d] > 1 ? strides[d] * sizes[d] : strides[d];
  }
  return true;
}

c10::MemoryFormat suggest_memory_format(const Tensor& t) {
  if (t.layout() != c10::kStrided) return c10::MemoryFormat::Contiguous;
  if (strides_like_channels_last(t.sizes(), t.strides(), 4)) return c10::MemoryFormat::ChannelsLast;
  if (strides_like_channels_last(t.sizes(), t.strides(), 5)) return c10::MemoryFormat::ChannelsLast3d;
  return c10::MemoryFormat::Contiguous;
}

std::vector<int64_t> strides_for_memory_format(IntArrayRef sizes, c10::MemoryFormat format) {
  std::vector<int64_t> strides(sizes.size());
  // Contiguous strides treat a size-0 dim as size 1; channels-last ones do not, so every
  // stride outside an empty dim collapses to 0, as in torch.
  auto fill = [&](ArrayRef<size_t> innermost_first, bool clamp_empty) {
    int64_t s = 1;
    for (size_t d : innermost_first) {
      strides[d] = s;
      s *= clamp_empty ? std::max<int64_t>(sizes[d], 1) : sizes[d];
    }
  };
  static constexpr size_t kOrder4[] = {1, 3, 2, 0};
  static constexpr size_t kOrder5[] = {1, 4, 3, 2, 0};
  switch (format) {
    case c10::MemoryFormat::ChannelsLast:
      TORCH_CHECK(sizes.size() == 4, "required rank 4 tensor to use channels_last format");
      fill(kOrder4, false);
      return strides;
    case c10::MemoryFormat::ChannelsLast3d:
      TORCH_CHECK(sizes.size() == 5, "required rank 5 tensor to use channels_last_3d format");
      fill(kOrder5, false);
      return strides;
    case c10::MemoryFormat::Contiguous: {
      std::vector<size_t> order(sizes.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = order.size() - 1 - i;
      fill(order, true);
      return strides;
    }
    case c10::MemoryFormat::Preserve:
      break;
  }
  TORCH_CHECK(false, "Unsupported memory formatPreserve");  // torch's words, space and all
}

std::vector<int64_t> infer_dense_strides(IntArrayRef sizes, IntArrayRef strides) {
  const size_t ndim = sizes.size();
  // order[0] is the innermost dim. Start from the contiguous order and move a dim inwards
  // only past dims with a definitely larger stride (stride-0 dims compare as ties).
  std::vector<size_t> order(ndim);
  for (size_t i = 0; i < ndim; ++i) order[i] = ndim - 1 - i;
  auto compare = [&](size_t inner, size_t outer) -> int {
    int64_t a = strides[inner], b = strides[outer];
    if (a == 0 || b == 0) return 0;
    if (a != b) return a < b ? -1 : 1;
    return sizes[inner] > sizes[outer] ? 1 : 0;
  };
  for (size_t i = 1; i < ndim; ++i) {
    size_t moving = i;
    for (size_t j = i; j-- > 0;) {
      int c = compare(order[j], order[moving]);
      if (c > 0) {
        std::swap(order[j], order[moving]);
        moving = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  std::vector<int64_t> out(ndim);
  int64_t step = 1;
  for (size_t d : order) {
    out[d] = step;
    if (sizes[d] > 1) step *= sizes[d];
  }
  return out;
}

Tensor empty_like_impl(const Tensor& self, c10::ScalarType dtype, c10::Device device, std::optional<c10::Layout> layout,
                       std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_nested(), "empty_like (and the *_like factories) of a nested tensor is not "
                              "supported yet");
  c10::MemoryFormat format = memory_format.value_or(c10::MemoryFormat::Preserve);
  std::optional<c10::Layout> lay = layout ? layout : std::optional<c10::Layout>(self.layout());
  if (format != c10::MemoryFormat::Preserve) {
    return at::empty(self.sizes(), dtype, lay, device, pin_memory, format);
  }
  if (is_non_overlapping_and_dense(self)) {
    return at::empty_strided(self.sizes(), self.strides(), dtype, lay, device, pin_memory);
  }
  std::vector<int64_t> strides = infer_dense_strides(self.sizes(), self.strides());
  return at::empty_strided(self.sizes(), strides, dtype, lay, device, pin_memory);
}

void resize_factory_out(const Tensor& out, IntArrayRef sizes) {
  check_resizable_out(out, "out=");
  if (out.sizes().equals(sizes)) return;
  c10::TensorImpl* impl = out.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(sizes);
  const size_t nbytes =
      c10::computeStorageNbytes(impl->sizes(), impl->strides(), impl->itemsize(), impl->storage_offset());
  c10::StorageImpl* storage = impl->storage().unsafeGetStorageImpl();
  if (impl->numel() == 0) return;
  TORCH_CHECK(storage != nullptr && storage->resizable(), "Trying to resize storage that is not resizable");
  grow_storage(storage, nbytes);
}

// ---------------------------------------------------------------- factories over empty + fill

static c10::ScalarType full_dtype(const Scalar& value) {
  if (value.isBoolean()) return c10::kBool;
  if (value.isIntegral(false)) return c10::kLong;
  if (value.isComplex()) return c10::get_default_complex_dtype();
  return c10::get_default_dtype();
}

Tensor empty_like(const Tensor& self, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                  std::optional<at::Device> device, std::optional<bool> pin_memory,
                  std::optional<at::MemoryFormat> memory_format) {
  return empty_like_impl(self, dtype.value_or(self.scalar_type()), device.value_or(self.device()), layout, pin_memory,
                         memory_format);
}

Tensor& zeros_out(IntArrayRef size, Tensor& out) {
  resize_factory_out(out, size);
  out.fill_(0);
  return out;
}

Tensor& ones_out(IntArrayRef size, Tensor& out) {
  resize_factory_out(out, size);
  out.fill_(1);
  return out;
}

Tensor full(IntArrayRef size, const Scalar& fill_value, std::optional<at::ScalarType> dtype,
            std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin_memory) {
  Tensor t = at::empty(size, dtype.value_or(full_dtype(fill_value)), layout, device, pin_memory, std::nullopt);
  t.fill_(fill_value);
  return t;
}

Tensor& full_out(IntArrayRef size, const Scalar& fill_value, Tensor& out) {
  resize_factory_out(out, size);
  out.fill_(fill_value);
  return out;
}

Tensor scalar_tensor(const Scalar& s, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                     std::optional<at::Device> device, std::optional<bool> pin_memory) {
  Tensor t = at::empty({}, dtype, layout, device, pin_memory, std::nullopt);
  t.fill_(s);
  return t;
}

Tensor& zero_(Tensor& self) {
  self.fill_(0);
  return self;
}

// eye: zeros with the diagonal, a strided view of the result, filled with ones.
static Tensor& fill_eye(Tensor& out, int64_t n, int64_t m) {
  out.fill_(0);
  int64_t k = std::min(n, m);
  if (k > 0) {
    at::as_strided(out, {k}, {out.stride(0) + out.stride(1)}, out.storage_offset()).fill_(1);
  }
  return out;
}

static void check_eye(int64_t n, int64_t m) {
  TORCH_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "m must be greater or equal to 0, got ", m);
}

Tensor eye(int64_t n, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
           std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return eye_m(n, n, dtype, layout, device, pin_memory);
}

Tensor eye_m(int64_t n, int64_t m, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
             std::optional<at::Device> device, std::optional<bool> pin_memory) {
  check_eye(n, m);
  Tensor t = at::empty({n, m}, dtype, layout, device, pin_memory, std::nullopt);
  return fill_eye(t, n, m);
}

Tensor& eye_out(int64_t n, Tensor& out) { return eye_m_out(n, n, out); }

Tensor& eye_m_out(int64_t n, int64_t m, Tensor& out) {
  check_eye(n, m);
  resize_factory_out(out, {n, m});
  return fill_eye(out, n, m);
}

// t.new_empty(size): a factory taking self's dtype, layout and device unless given (new_zeros,
// new_ones and new_full are it, filled: ops.yaml `fill:`).
Tensor new_empty(const Tensor& self, IntArrayRef size, std::optional<at::ScalarType> dtype,
                 std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return at::empty(size, dtype.value_or(self.scalar_type()), layout.value_or(self.layout()),
                   device.value_or(self.device()), pin_memory, std::nullopt);
}

Tensor new_empty_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout> layout, std::optional<at::Device> device,
                         std::optional<bool> pin_memory) {
  return at::empty_strided(size, stride, dtype.value_or(self.scalar_type()), layout.value_or(self.layout()),
                           device.value_or(self.device()), pin_memory);
}

}  // namespace at::inline tessera::native

