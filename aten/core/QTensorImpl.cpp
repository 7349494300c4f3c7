#include <aten/core/QTensorImpl.h>

#include <aten/core/TensorUtils.h>
#include <aten/native/factory/TensorFactories.h>
#include <c10/core/StorageBounds.h>

#include <cstring>
#include <limits>

namespace at::inline tessera {

bool PerTensorAffineQuantizer::equalTo(const Quantizer& other) const {
  auto* o = dynamic_cast<const PerTensorAffineQuantizer*>(&other);
  return o && o->scalar_type() == scalar_type() && o->scale_ == scale_ && o->zero_point_ == zero_point_;
}

PerChannelAffineQuantizer::PerChannelAffineQuantizer(c10::ScalarType scalar_type, Tensor scales, Tensor zero_points,
                                                     int64_t axis)
    : Quantizer(scalar_type),
      scales_(std::move(scales)),
      zero_points_(std::move(zero_points)),
      axis_(axis),
      float_qparams_(c10::isFloatingType(zero_points_.scalar_type())) {
  TORCH_INTERNAL_ASSERT(scales_.dim() == 1 && zero_points_.dim() == 1 && scales_.is_contiguous() &&
                            zero_points_.is_contiguous() && scales_.numel() == zero_points_.numel(),
                        "per-channel qparams are two contiguous 1-d tensors of one length");
  const c10::ScalarType scale_type = float_qparams_ ? c10::kFloat : c10::kDouble;
  const c10::ScalarType zero_point_type = float_qparams_ ? c10::kFloat : c10::kLong;
  TORCH_INTERNAL_ASSERT(scales_.scalar_type() == scale_type && zero_points_.scalar_type() == zero_point_type,
                        "per-channel qparams have torch's dtypes");
}

bool PerChannelAffineQuantizer::equalTo(const Quantizer& other) const {
  auto* o = dynamic_cast<const PerChannelAffineQuantizer*>(&other);
  return o && o->scalar_type() == scalar_type() && o->qscheme() == qscheme() && o->axis_ == axis_ &&
         o->scales_.equal(scales_) && o->zero_points_.equal(zero_points_);
}

namespace {

c10::DispatchKeySet quantized_keys(const c10::Storage& storage) {
  TORCH_INTERNAL_ASSERT(storage.defined(), "a quantized tensor is made over a storage");
  if (storage.device().is_meta()) return c10::DispatchKeySet(c10::DispatchKey::QuantizedMeta);
  TORCH_CHECK_NOT_IMPLEMENTED(storage.device().is_cpu(), "quantized tensors live on the CPU or the meta device, not ",
                              storage.device());
  return c10::DispatchKeySet(c10::DispatchKey::QuantizedCPU);
}

}  // namespace

QTensorImpl::QTensorImpl(const c10::Storage& storage, QuantizerPtr quantizer)
    : c10::TensorImpl(storage, quantized_keys(storage), quantizer->scalar_type(), c10::kStrided),
      quantizer_(std::move(quantizer)) {}

QTensorImpl* get_qtensorimpl(const Tensor& self) {
  auto* impl = dynamic_cast<QTensorImpl*>(self.unsafeGetTensorImpl());
  TORCH_CHECK(impl != nullptr, "expected a quantized tensor, got one of dtype ", self.scalar_type());
  return impl;
}

const QuantizerPtr& get_quantizer(const Tensor& self) { return get_qtensorimpl(self)->quantizer(); }

const PerTensorAffineQuantizer& per_tensor_quantizer(const Tensor& self, const char* op) {
  auto* q = dynamic_cast<const PerTensorAffineQuantizer*>(get_quantizer(self).get());
  TORCH_CHECK(q != nullptr, op, ": expected a per-tensor quantized tensor (qscheme per_tensor_affine), got ",
              c10::toString(get_quantizer(self)->qscheme()));
  return *q;
}

const PerChannelAffineQuantizer& per_channel_quantizer(const Tensor& self, const char* op) {
  auto* q = dynamic_cast<const PerChannelAffineQuantizer*>(get_quantizer(self).get());
  TORCH_CHECK(q != nullptr, op,
              ": expected a per-channel quantized tensor (qscheme per_channel_affine or "
              "per_channel_affine_float_qparams), got ",
              c10::toString(get_quantizer(self)->qscheme()));
  return *q;
}

namespace {

// The quantized dtypes: the integer type each stores, its range and its width. quint8 comes
// first: it is the quantized type of uint8.
struct QuantizedType {
  c10::ScalarType qtype, int_type;
  int64_t min, max;
  int bits;
};
constexpr QuantizedType kQuantizedTypes[] = {
    {c10::kQUInt8, c10::kByte, 0, 255, 8},
    {c10::kQInt8, c10::kChar, -128, 127, 8},
    {c10::kQInt32, c10::kInt, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), 32},
    {c10::kQUInt4x2, c10::kByte, 0, 15, 4},
    {c10::kQUInt2x4, c10::kByte, 0, 3, 2},
};

const QuantizedType& quantized_type(c10::ScalarType qtype) {
  for (const QuantizedType& t : kQuantizedTypes) {
    if (t.qtype == qtype) return t;
  }
  TORCH_CHECK(false, "Creation of quantized tensor requires quantized dtype like torch.quint8, got ", qtype);
}

}  // namespace

c10::ScalarType underlying_type(c10::ScalarType qtype) { return quantized_type(qtype).int_type; }

std::pair<int64_t, int64_t> quantized_range(c10::ScalarType qtype) {
  const QuantizedType& t = quantized_type(qtype);
  return {t.min, t.max};
}

int quantized_bits(c10::ScalarType qtype) { return quantized_type(qtype).bits; }

int64_t packed_nbytes(c10::ScalarType qtype, int64_t n) {
  const int bits = quantized_bits(qtype);
  return (n * bits + 7) / 8;
}

c10::ScalarType quantized_type_of(c10::ScalarType int_type) {
  for (const QuantizedType& t : kQuantizedTypes) {
    if (t.int_type == int_type) return t.qtype;
  }
  TORCH_CHECK(false, "Creation of quantized tensor requires quantized dtype like torch.quint8");
}

// torch checks the zero point against the stored integer's range, so a quint4x2 zero point may
// be up to 255.
void check_zero_point(const char* op, c10::ScalarType qtype, int64_t zero_point) {
  const auto [qmin, qmax] = quantized_range(quantized_type_of(underlying_type(qtype)));
  TORCH_CHECK(zero_point <= qmax, op, " zero_point ", zero_point, " is above upper bound.");
  TORCH_CHECK(zero_point >= qmin, op, " zero_point ", zero_point, " is below lower bound.");
}

QuantizerPtr per_tensor_quantizer_for(c10::ScalarType qtype, double scale, int64_t zero_point, const char* op) {
  check_zero_point(op, qtype, zero_point);
  return c10::make_intrusive<PerTensorAffineQuantizer>(qtype, scale, zero_point);
}

namespace {

c10::Storage new_storage(size_t nbytes, c10::Device device) {
  return c10::Storage(c10::StorageImpl::use_byte_size_t{}, nbytes, c10::GetAllocator(device.type()),
                      /*resizable=*/true);
}

// Whether the geometry visits elements 0, 1, ... in order (size-1 dims may have any stride).
bool is_contiguous_geometry(IntArrayRef sizes, IntArrayRef strides) {
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (sizes[d] == 0) return true;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

}  // namespace

Tensor new_qtensor(IntArrayRef sizes, MemoryFormat memory_format, QuantizerPtr quantizer, c10::Device device) {
  const c10::ScalarType dtype = quantizer->scalar_type();
  const bool sub_byte = c10::isSubByteQIntType(dtype);
  const size_t itemsize = c10::elementSize(underlying_type(dtype));
  auto impl = c10::make_intrusive<QTensorImpl>(new_storage(0, device), std::move(quantizer));
  if (memory_format == MemoryFormat::Contiguous || memory_format == MemoryFormat::Preserve) {
    impl->set_sizes_contiguous(sizes);
  } else {
    TORCH_CHECK_NOT_IMPLEMENTED(!sub_byte, "a ", dtype, " tensor packs its elements in order: memory format ",
                                memory_format, " is not supported");
    impl->set_sizes_and_strides(sizes, native::strides_for_memory_format(sizes, memory_format));
  }
  size_t nbytes;
  if (sub_byte) {
    // torch rounds each row (the last dim) up to whole bytes: the packed elements need no
    // more, but a storage of torch's size saves and loads alike in both libraries.
    const int64_t row = sizes.empty() ? 1 : sizes.back();
    const int64_t rows = row == 0 ? 0 : impl->numel() / row;
    nbytes = static_cast<size_t>(rows * packed_nbytes(dtype, row));
  } else {
    nbytes = c10::computeStorageNbytes(impl->sizes(), impl->strides(), itemsize);
  }
  impl->set_storage(new_storage(nbytes, device));
  // A sub-byte tensor's bytes can hold bits no element owns (past the last one, and torch's
  // per-row rounding of the size): zero, so that saved files and comparisons are deterministic.
  if (sub_byte && nbytes > 0 && !device.is_meta()) std::memset(impl->storage().data(), 0, nbytes);
  return Tensor(std::move(impl));
}

Tensor make_qtensor_view(const Tensor& self, IntArrayRef sizes, IntArrayRef strides, int64_t offset,
                         QuantizerPtr quantizer) {
  if (c10::isSubByteQIntType(self.scalar_type())) {
    int64_t numel = 1;
    for (int64_t s : sizes) numel *= s;
    TORCH_CHECK_NOT_IMPLEMENTED(
        offset == 0 && is_contiguous_geometry(sizes, strides) &&
            packed_nbytes(self.scalar_type(), numel) <= static_cast<int64_t>(self.storage().nbytes()),
        "a ", self.scalar_type(), " tensor packs several elements into each byte: only views that stay contiguous ",
        "from the start of its storage (view, reshape, flatten, squeeze, unsqueeze, a leading slice) are supported, "
        "got sizes ", sizes, ", strides ", strides, " and offset ", offset);
  }
  auto impl = c10::make_intrusive<QTensorImpl>(self.storage(), std::move(quantizer));
  impl->set_sizes_and_strides(sizes, strides);
  impl->set_storage_offset(offset);
  impl->set_version_counter(self.unsafeGetTensorImpl()->version_counter());
  return Tensor(std::move(impl));
}

Tensor integer_alias(const Tensor& self) {
  TORCH_INTERNAL_ASSERT(get_quantizer(self)->scalar_type() == self.scalar_type(), "a quantizer for ",
                        get_quantizer(self)->scalar_type(), " on a ", self.scalar_type(), " tensor");
  const c10::ScalarType int_type = underlying_type(self.scalar_type());
  // The integers are a plain tensor on the same device (CPU, or meta for QuantizedMeta).
  auto impl = c10::make_intrusive<c10::TensorImpl>(self.storage(), int_type, c10::kStrided);
  if (c10::isSubByteQIntType(self.scalar_type())) {
    impl->set_sizes_contiguous({packed_nbytes(self.scalar_type(), self.numel())});
  } else {
    impl->set_sizes_and_strides(self.sizes(), self.strides());
    impl->set_storage_offset(self.storage_offset());
  }
  impl->set_version_counter(self.unsafeGetTensorImpl()->version_counter());
  return Tensor(std::move(impl));
}

}  // namespace at::inline tessera
