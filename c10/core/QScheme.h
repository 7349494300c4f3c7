// QScheme: how a quantized tensor maps its integers to real values (torch's c10::QScheme,
// same numbering, so a pickled qscheme and a boxed one mean the same in both libraries).
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>

namespace c10::inline tessera {

enum class QScheme : uint8_t {
  PER_TENSOR_AFFINE = 0,
  PER_CHANNEL_AFFINE = 1,
  PER_TENSOR_SYMMETRIC = 2,
  PER_CHANNEL_SYMMETRIC = 3,
  PER_CHANNEL_AFFINE_FLOAT_QPARAMS = 4,
};
constexpr int kNumQSchemes = 5;

constexpr QScheme kPerTensorAffine = QScheme::PER_TENSOR_AFFINE;
constexpr QScheme kPerChannelAffine = QScheme::PER_CHANNEL_AFFINE;
constexpr QScheme kPerTensorSymmetric = QScheme::PER_TENSOR_SYMMETRIC;
constexpr QScheme kPerChannelSymmetric = QScheme::PER_CHANNEL_SYMMETRIC;
constexpr QScheme kPerChannelAffineFloatQParams = QScheme::PER_CHANNEL_AFFINE_FLOAT_QPARAMS;

// torch's Python names without the "torch." prefix: "per_tensor_affine", ...
constexpr const char* toString(QScheme q) {
  switch (q) {
    case QScheme::PER_TENSOR_AFFINE: return "per_tensor_affine";
    case QScheme::PER_CHANNEL_AFFINE: return "per_channel_affine";
    case QScheme::PER_TENSOR_SYMMETRIC: return "per_tensor_symmetric";
    case QScheme::PER_CHANNEL_SYMMETRIC: return "per_channel_symmetric";
    case QScheme::PER_CHANNEL_AFFINE_FLOAT_QPARAMS: return "per_channel_affine_float_qparams";
  }
  return "unknown_qscheme";
}

}  // namespace c10::inline tessera

namespace at::inline tessera {
using c10::kPerChannelAffine;
using c10::kPerChannelAffineFloatQParams;
using c10::kPerChannelSymmetric;
using c10::kPerTensorAffine;
using c10::kPerTensorSymmetric;
}  // namespace at::inline tessera
