// The quantized tensor's own operators: quantizing a float tensor, dequantizing, reading the
// qparams and the integers, the quantized factories, copy_, clone and equal.
#include <aten/core/QTensorImpl.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <cstring>

namespace at::inline tessera::native {

namespace {

void check_quantized_dtype(c10::ScalarType dtype) {
  TORCH_CHECK(c10::isQIntType(dtype), "ScalarType ", dtype, " is not supported in new_qtensor.");
}

void check_float_input(const Tensor& self) {
  TORCH_CHECK(self.scalar_type() == c10::kFloat, "Quantize only works on Float Tensor, got ", self.scalar_type());
}

// The layout a quantized copy of `self` takes: self's memory format, as torch keeps it, except
// that sub-byte tensors are always contiguous.
MemoryFormat quantized_format_of(const Tensor& self, c10::ScalarType qtype) {
  return c10::isSubByteQIntType(qtype) ? MemoryFormat::Contiguous : suggest_memory_format(self);
}

// The quantized tensor `quantizer` makes of `self` (float32), on self's device (CPU or meta).
Tensor quantize_with(const Tensor& self, QuantizerPtr quantizer) {
  const MemoryFormat format = quantized_format_of(self, quantizer->scalar_type());
  Tensor out = new_qtensor(self.sizes(), format, std::move(quantizer), self.device());
  quantize_into(self, out);
  return out;
}

// torch's checks of per-channel qparams, then the qparams in the dtypes the quantizer keeps:
// integer zero points give per_channel_affine (float64 scales, int64 zero points), floating
// ones per_channel_affine_float_qparams (float32 both).
QuantizerPtr per_channel_quantizer_for(const Tensor& self, const Tensor& scales, const Tensor& zero_points,
                                       int64_t axis, c10::ScalarType dtype, const char* op) {
  check_quantized_dtype(dtype);
  TORCH_CHECK(scales.dim() == 1, "scale tensor must have dimension 1");
  TORCH_CHECK(zero_points.dim() == 1, "zero_points tensor must have dimension 1");
  TORCH_CHECK(scales.numel() == zero_points.numel(), "number of elements in scales and zero_points must match");
  TORCH_CHECK(c10::isFloatingType(scales.scalar_type()), "scale tensor must be floating point");
  TORCH_CHECK(axis >= 0 && axis < self.dim(),
              "Channel axis out of range in per channel affine quantization. Got: ", axis, "Expected: [0, ", self.dim(),
              ")");
  TORCH_CHECK(self.size(axis) == scales.numel(), "length of scales must equal to channel");
  TORCH_CHECK(!scales.is_meta() && !zero_points.is_meta(), op, ": the scales and zero points of a quantized tensor ",
              "are CPU tensors (a meta tensor has no values)");
  if (c10::isFloatingType(zero_points.scalar_type())) {
    return c10::make_intrusive<PerChannelAffineQuantizer>(dtype, scales.to(c10::kFloat).contiguous().clone(),
                                                          zero_points.to(c10::kFloat).contiguous().clone(), axis);
  }
  TORCH_CHECK(c10::isIntegralType(zero_points.scalar_type(), false), "zero_points tensor must be an integer tensor");
  Tensor zps = zero_points.to(c10::kLong).contiguous().clone();
  const int64_t* zp = zps.data_ptr<int64_t>();
  for (int64_t c = 0; c < zps.numel(); ++c) check_zero_point(op, dtype, zp[c]);
  return c10::make_intrusive<PerChannelAffineQuantizer>(dtype, scales.to(c10::kDouble).contiguous().clone(), zps, axis);
}

}  // namespace

Tensor from_integers(const Tensor& ints, QuantizerPtr quantizer) {
  Tensor out = new_qtensor(ints.sizes(), suggest_memory_format(ints), std::move(quantizer), ints.device());
  integer_alias(out).copy_(ints);
  return out;
}

Tensor per_tensor_like(const Tensor& ints, const Tensor& self, const char* op) {
  const auto& q = per_tensor_quantizer(self, op);
  return from_integers(ints,
                       c10::make_intrusive<PerTensorAffineQuantizer>(self.scalar_type(), q.scale(), q.zero_point()));
}

// ---- quantize

Tensor quantize_per_tensor(const Tensor& self, double scale, int64_t zero_point, at::ScalarType dtype) {
  check_quantized_dtype(dtype);
  check_float_input(self);
  return quantize_with(self, per_tensor_quantizer_for(dtype, scale, zero_point, "quantize_tensor_per_tensor_affine"));
}

Tensor quantize_per_tensor_tensor_qparams(const Tensor& self, const Tensor& scale, const Tensor& zero_point,
                                          at::ScalarType dtype) {
  TORCH_CHECK(scale.numel() == 1 && zero_point.numel() == 1,
              "quantize_per_tensor: scale and zero_point must hold one element each");
  return at::quantize_per_tensor(self, scale.item().toDouble(), zero_point.item().toLong(), dtype);
}

std::vector<Tensor> quantize_per_tensor_tensors(TensorList tensors, const Tensor& scales, const Tensor& zero_points,
                                                at::ScalarType dtype) {
  TORCH_CHECK(scales.dim() == 1 && zero_points.dim() == 1 && scales.numel() == static_cast<int64_t>(tensors.size()) &&
                  zero_points.numel() == static_cast<int64_t>(tensors.size()),
              "quantize_per_tensor: scales and zero_points need one element per tensor (", tensors.size(), ")");
  TORCH_CHECK(!scales.is_meta() && !zero_points.is_meta(), "quantize_per_tensor: the scales and zero points are read ",
              "as numbers, which a meta tensor does not have");
  Tensor s = scales.to(c10::kDouble).contiguous(), z = zero_points.to(c10::kLong).contiguous();
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    out.push_back(at::quantize_per_tensor(tensors[i], s.data_ptr<double>()[i], z.data_ptr<int64_t>()[i], dtype));
  }
  return out;
}

// torch's dynamic quantization: qparams chosen from the tensor's range (ChooseQuantizationParams
// with preserve_sparsity and force_scale_power_of_two off).
Tensor quantize_per_tensor_dynamic(const Tensor& self, at::ScalarType dtype, bool reduce_range) {
  TORCH_CHECK(dtype == c10::kQInt8 || dtype == c10::kQUInt8 || dtype == c10::kHalf, "dtype ", dtype, "not supported");
  Tensor input = self.contiguous();
  if (dtype == c10::kHalf) return input.to(c10::kHalf);
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_meta(), "quantize_per_tensor_dynamic: the qparams come from the values, which ",
                              "a meta tensor does not have");
  const float min = input.min().item().toFloat();
  const float max = input.max().item().toFloat();
  int64_t qmin = dtype == c10::kQInt8 ? -128 : 0;
  int64_t qmax = dtype == c10::kQInt8 ? 127 : 255;
  if (reduce_range) {
    qmin /= 2;
    qmax /= 2;
  }
  const QParams qparams = choose_quantization_params(min, max, qmin, qmax, /*preserve_sparsity=*/false);
  return at::quantize_per_tensor(self, qparams.scale, qparams.zero_point, dtype);
}

Tensor quantize_per_channel(const Tensor& self, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                            at::ScalarType dtype) {
  TORCH_CHECK(self.scalar_type() == c10::kFloat, "quantize_tensor_per_channel_affine expects a Float Tensor, got ",
              self.scalar_type());
  return quantize_with(
      self, per_channel_quantizer_for(self, scales, zero_points, axis, dtype, "quantize_tensor_per_channel_affine"));
}

// ---- dequantize

// Always a new tensor: a cast that returned self would alias its input without being a view.
Tensor dequantize_cpu(const Tensor& self) { return self.to(c10::kFloat, /*non_blocking=*/false, /*copy=*/true); }

Tensor dequantize_quantized(const Tensor& self) {
  Tensor out = at::empty(self.sizes(), self.options().dtype(c10::kFloat), suggest_memory_format(self));
  dequantize_into(self, out);
  return out;
}

std::vector<Tensor> dequantize_tensors(TensorList tensors) {
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(t.dequantize());
  return out;
}

// ---- qparams and integers

double q_scale_quant(const Tensor& self) { return per_tensor_quantizer(self, "q_scale").scale(); }
int64_t q_zero_point_quant(const Tensor& self) { return per_tensor_quantizer(self, "q_zero_point").zero_point(); }
Tensor q_per_channel_scales(const Tensor& self) {
  return per_channel_quantizer(self, "q_per_channel_scales").scales().clone();
}
Tensor q_per_channel_zero_points(const Tensor& self) {
  return per_channel_quantizer(self, "q_per_channel_zero_points").zero_points().clone();
}
int64_t q_per_channel_axis(const Tensor& self) { return per_channel_quantizer(self, "q_per_channel_axis").axis(); }
at::QScheme qscheme_quant(const Tensor& self) { return get_quantizer(self)->qscheme(); }

Tensor int_repr_quantized(const Tensor& self) {
  // A sub-byte tensor's are its packed bytes, as torch gives them (those of a copy, so the
  // unused bits of the last byte are zero even for a leading slice).
  if (c10::isSubByteQIntType(self.scalar_type())) return integer_alias(self.clone());
  Tensor ints = integer_alias(self);
  return at::empty(self.sizes(), ints.options(), suggest_memory_format(self)).copy_(ints);
}

Tensor make_per_tensor_quantized_tensor_cpu(const Tensor& self, double scale, int64_t zero_point) {
  const c10::ScalarType dtype = quantized_type_of(self.scalar_type());
  return from_integers(self, per_tensor_quantizer_for(dtype, scale, zero_point, "make_per_tensor_quantized_tensor"));
}

Tensor make_per_channel_quantized_tensor_cpu(const Tensor& self, const Tensor& scale, const Tensor& zero_point,
                                             int64_t axis) {
  const c10::ScalarType dtype = quantized_type_of(self.scalar_type());
  return from_integers(
      self, per_channel_quantizer_for(self, scale, zero_point, axis, dtype, "make_per_channel_quantized_tensor"));
}

// ---- factories

static void check_quantized_factory(const char* op, std::optional<at::Layout> layout, std::optional<bool> pin_memory,
                                    std::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK(layout.value_or(c10::kStrided) == c10::kStrided, op, ": quantized tensors are strided");
  TORCH_CHECK_NOT_IMPLEMENTED(!pin_memory.value_or(false), op, ": pin_memory=True needs CUDA");
  TORCH_CHECK(memory_format.value_or(c10::MemoryFormat::Contiguous) != c10::MemoryFormat::Preserve, op,
              ": preserve memory format is unsupported by the empty operator");
}

Tensor empty_affine_quantized(IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                              std::optional<at::Device> device, std::optional<bool> pin_memory, double scale,
                              int64_t zero_point, std::optional<at::MemoryFormat> memory_format) {
  check_quantized_factory("_empty_affine_quantized", layout, pin_memory, memory_format);
  const c10::ScalarType t = dtype.value_or(c10::get_default_dtype());
  TORCH_CHECK(c10::isQIntType(t), "Creation of quantized tensor requires quantized dtype like torch.quint8");
  return new_qtensor(size, memory_format.value_or(c10::MemoryFormat::Contiguous),
                     per_tensor_quantizer_for(t, scale, zero_point, "empty_affine_quantized"),
                     device.value_or(c10::Device(c10::DeviceType::CPU)));
}

Tensor empty_per_channel_affine_quantized(IntArrayRef size, const Tensor& scales, const Tensor& zero_points,
                                          int64_t axis, std::optional<at::ScalarType> dtype,
                                          std::optional<at::Layout> layout, std::optional<at::Device> device,
                                          std::optional<bool> pin_memory,
                                          std::optional<at::MemoryFormat> memory_format) {
  check_quantized_factory("_empty_per_channel_affine_quantized", layout, pin_memory, memory_format);
  const c10::ScalarType t = dtype.value_or(c10::get_default_dtype());
  TORCH_CHECK(c10::isQIntType(t), "Creation of quantized tensor requires quantized dtype like torch.quint8");
  Tensor shape_only = at::empty(size, TensorOptions().device(c10::Device(c10::DeviceType::Meta)));
  return new_qtensor(
      size, memory_format.value_or(c10::MemoryFormat::Contiguous),
      per_channel_quantizer_for(shape_only, scales, zero_points, axis, t, "empty_per_channel_affine_quantized"),
      device.value_or(c10::Device(c10::DeviceType::CPU)));
}

Tensor empty_like_quantized(const Tensor& self, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                            std::optional<at::Device> device, std::optional<bool> pin_memory,
                            std::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK(!dtype.has_value() || *dtype == self.scalar_type(),
              "It is currently not supported to specify a dtype that doesn't match the input tensor's dtype via "
              "empty_like.  Specified: ",
              *dtype, " Input tensor's dtype: ", self.scalar_type());
  check_quantized_factory("empty_like", layout, pin_memory, std::nullopt);
  const c10::MemoryFormat format = memory_format.value_or(c10::MemoryFormat::Preserve);
  return new_qtensor(self.sizes(), format == c10::MemoryFormat::Preserve ? suggest_memory_format(self) : format,
                     get_quantizer(self), device.value_or(self.device()));
}

// ---- copy_, clone, equal

Tensor& copy_quantized_(Tensor& self, const Tensor& src, bool /*non_blocking*/) {
  TORCH_CHECK(self.is_quantized(),
              "Copying from quantized Tensor to non-quantized Tensor is not allowed, please use dequantize to get a "
              "float Tensor from a quantized Tensor");
  if (src.is_quantized()) {
    const QuantizerPtr quantizer = get_quantizer(src);
    TORCH_CHECK(get_quantizer(self)->qscheme() == quantizer->qscheme(), "Quantized Copy only works with same qscheme");
    TORCH_CHECK(self.scalar_type() == src.scalar_type(), "Quantized copy only works with the same dtype, got ",
                self.scalar_type(), " and ", src.scalar_type());
    // torch broadcasts here even per channel, leaving scales that do not fit self's channels.
    TORCH_CHECK(quantizer->qscheme() == c10::kPerTensorAffine || self.sizes().equals(src.sizes()),
                "Quantized copy of a per-channel quantized tensor needs the same shape, got ", src.sizes(), " into ",
                self.sizes());
    TORCH_CHECK_NOT_IMPLEMENTED(self.is_meta() || !src.is_meta(), "Cannot copy out of meta tensor; no data!");
    // As torch: the integers are copied (broadcast) and self takes src's qparams.
    if (c10::isSubByteQIntType(src.scalar_type())) {
      TORCH_CHECK(self.sizes().equals(src.sizes()), "Quantized copy of a ", src.scalar_type(),
                  " tensor needs the same shape, got ", src.sizes(), " into ", self.sizes());
      pack_sub_byte_into(unpack_sub_byte(src), self);
    } else {
      integer_alias(self).copy_(integer_alias(src));
    }
    get_qtensorimpl(self)->set_quantizer_(quantizer);
    return self;
  }
  TORCH_CHECK_NOT_IMPLEMENTED(self.is_meta() || !src.is_meta(), "Cannot copy out of meta tensor; no data!");
  TORCH_CHECK(src.layout() == c10::kStrided && (src.is_cpu() || src.is_meta()) && !src.is_mkldnn() && !src.is_nested(),
              "Quantized copy only works with a strided CPU source tensor, got layout ", src.layout(), " on ",
              src.device());
  TORCH_CHECK(src.scalar_type() == c10::kFloat, "Quantized copy only works with kFloat as source Tensor");
  TORCH_CHECK(self.sizes().equals(src.sizes()), "Quantized copy only works with Tensors with the same shape");
  quantize_into(src, self);
  return self;
}

// torch's quantized clone: no memory format means contiguous (not preserve, as dense clone)
Tensor clone_quantized(const Tensor& self, std::optional<at::MemoryFormat> memory_format) {
  const c10::MemoryFormat format = memory_format.value_or(c10::MemoryFormat::Contiguous);
  Tensor out = new_qtensor(self.sizes(), format == c10::MemoryFormat::Preserve ? suggest_memory_format(self) : format,
                           get_quantizer(self), self.device());
  if (c10::isSubByteQIntType(self.scalar_type())) {
    pack_sub_byte_into(unpack_sub_byte(self), out);
  } else {
    integer_alias(out).copy_(integer_alias(self));
  }
  return out;
}

// torch's equal for quantized tensors: the same quantizer, shape and integers. A quantized
// tensor never equals a dense one.
bool equal_quantized(const Tensor& self, const Tensor& other) {
  if (!self.is_quantized() || !other.is_quantized()) return false;
  if (!get_quantizer(self)->equalTo(*get_quantizer(other)) || !self.sizes().equals(other.sizes())) return false;
  if (c10::isSubByteQIntType(self.scalar_type())) return at::equal(unpack_sub_byte(self), unpack_sub_byte(other));
  return at::equal(integer_alias(self), integer_alias(other));
}

}  // namespace at::inline tessera::native
