// Quantized tensors: a QTensorImpl is a strided tensor of small integers (quint8, qint8,
// qint32, and quint4x2/quint2x4 packed two or four to a byte) plus the Quantizer that maps them
// to real values, real = (q - zero_point) * scale, with one (scale, zero_point) for the tensor or
// one per slice along an axis. Only kernels registered for QuantizedCPU and QuantizedMeta (a
// quantized tensor on the meta device: no data) see one (aten/native/quantized).
#pragma once

#include <aten/core/Tensor.h>
#include <c10/core/QScheme.h>

namespace at::inline tessera {

// The qparams of a quantized tensor. Immutable: set_quantizer_ swaps the whole object.
class TORCH_API Quantizer : public c10::intrusive_ptr_target {
 public:
  explicit Quantizer(c10::ScalarType scalar_type) : scalar_type_(scalar_type) {}
  ~Quantizer() override = default;
  c10::ScalarType scalar_type() const { return scalar_type_; }
  virtual c10::QScheme qscheme() const = 0;
  virtual bool equalTo(const Quantizer& other) const = 0;

 private:
  c10::ScalarType scalar_type_;
};
using QuantizerPtr = c10::intrusive_ptr<Quantizer>;

class TORCH_API PerTensorAffineQuantizer final : public Quantizer {
 public:
  PerTensorAffineQuantizer(c10::ScalarType scalar_type, double scale, int64_t zero_point)
      : Quantizer(scalar_type), scale_(scale), zero_point_(zero_point) {}
  c10::QScheme qscheme() const override { return c10::kPerTensorAffine; }
  bool equalTo(const Quantizer& other) const override;
  double scale() const { return scale_; }
  int64_t zero_point() const { return zero_point_; }

 private:
  double scale_;
  int64_t zero_point_;
};

// per_channel_affine (float64 scales, int64 zero points, as torch stores them) or
// per_channel_affine_float_qparams (float32 scales and zero points: real = (q - zp) * s with
// a fractional zp, for embedding tables). Slice c along `axis` uses scales[c], zero_points[c].
class TORCH_API PerChannelAffineQuantizer final : public Quantizer {
 public:
  // scales/zero_points: 1-d, contiguous, of the dtypes above; callers have checked them.
  PerChannelAffineQuantizer(c10::ScalarType scalar_type, Tensor scales, Tensor zero_points, int64_t axis);
  c10::QScheme qscheme() const override {
    return float_qparams_ ? c10::kPerChannelAffineFloatQParams : c10::kPerChannelAffine;
  }
  bool equalTo(const Quantizer& other) const override;
  const Tensor& scales() const { return scales_; }
  const Tensor& zero_points() const { return zero_points_; }
  int64_t axis() const { return axis_; }

 private:
  Tensor scales_;
  Tensor zero_points_;
  int64_t axis_;
  bool float_qparams_;
};

class TORCH_API QTensorImpl final : public c10::TensorImpl {
 public:
  // A tensor over `storage` (elements of quantizer->scalar_type()) on the storage's device (CPU
  // or meta); sizes and strides are set by the caller, which has checked that they lie inside
  // the storage.
  QTensorImpl(const c10::Storage& storage, QuantizerPtr quantizer);
  const QuantizerPtr& quantizer() const { return quantizer_; }
  void set_quantizer_(QuantizerPtr quantizer) { quantizer_ = std::move(quantizer); }

 private:
  QuantizerPtr quantizer_;
};

// torch's check that zero_point fits `qtype` ("<op> zero_point N is above upper bound."), and
// a per-tensor quantizer made after it.
TORCH_API void check_zero_point(const char* op, c10::ScalarType qtype, int64_t zero_point);
TORCH_API QuantizerPtr per_tensor_quantizer_for(c10::ScalarType qtype, double scale, int64_t zero_point,
                                                const char* op);

// The impl of a quantized tensor; raises torch's RuntimeError for any other tensor.
TORCH_API QTensorImpl* get_qtensorimpl(const Tensor& self);
// A reference to the impl's pointer: a kernel that copy_ may run beside keeps its own copy.
TORCH_API const QuantizerPtr& get_quantizer(const Tensor& self);
// The quantizer as one of the two kinds; raises (naming `op`) for the other.
TORCH_API const PerTensorAffineQuantizer& per_tensor_quantizer(const Tensor& self, const char* op);
TORCH_API const PerChannelAffineQuantizer& per_channel_quantizer(const Tensor& self, const char* op);

// The integer type a quantized dtype stores (quint8 -> uint8, qint8 -> int8, qint32 -> int32),
// and the reverse; both raise torch's error for other dtypes.
TORCH_API c10::ScalarType underlying_type(c10::ScalarType qtype);
TORCH_API c10::ScalarType quantized_type_of(c10::ScalarType int_type);
// The values a quantized element takes: quint8 -> (0, 255), qint8 -> (-128, 127),
// qint32 -> (INT32_MIN, INT32_MAX), quint4x2 -> (0, 15), quint2x4 -> (0, 3).
TORCH_API std::pair<int64_t, int64_t> quantized_range(c10::ScalarType qtype);
// Bits per element: 8 or 32, or 4 and 2 for the sub-byte types.
TORCH_API int quantized_bits(c10::ScalarType qtype);
// Bytes that n elements of a sub-byte type fill (Note [Sub-byte quantized tensors]).
TORCH_API int64_t packed_nbytes(c10::ScalarType qtype, int64_t n);

// Note [Sub-byte quantized tensors]: quint4x2 and quint2x4 pack their elements into bytes, the
// first element in the low bits (torch's order), so element i of a contiguous tensor is bits
// (i % k) * b .. of byte i / k (k = 8 / b). Storage offsets and strides count elements, and
// torch 1.13 counts them as bytes when it slices one, reading the wrong elements; here such
// tensors stay contiguous from the storage's start: views that keep that (view, reshape,
// flatten, squeeze, unsqueeze, a prefix slice) work, the rest raise.

// A new quantized tensor of `sizes` laid out in `memory_format` on `device` (CPU or meta), its
// integers uninitialised (torch's _empty_affine_quantized and _empty_per_channel_affine_quantized).
TORCH_API Tensor new_qtensor(IntArrayRef sizes, MemoryFormat memory_format, QuantizerPtr quantizer,
                             c10::Device device = c10::Device(c10::DeviceType::CPU));
// A quantized view of self's storage with the given geometry and quantizer, sharing the
// version counter. The geometry must lie inside the storage (views computed it so); a sub-byte
// tensor's must also be contiguous from the storage's start.
TORCH_API Tensor make_qtensor_view(const Tensor& self, IntArrayRef sizes, IntArrayRef strides, int64_t offset,
                                   QuantizerPtr quantizer);
// A dense tensor of the underlying integer type over self's storage and geometry: what the
// kernels read and write (a view; int_repr is a copy of it). For a sub-byte type it is the
// packed bytes, 1-d, as torch's int_repr gives them.
TORCH_API Tensor integer_alias(const Tensor& self);

}  // namespace at::inline tessera
