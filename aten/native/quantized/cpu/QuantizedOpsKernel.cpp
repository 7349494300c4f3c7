// The quantized elementwise loops, compiled once per ISA: binary add/mul (and their fused
// relu), add of a quantized scalar, integer clamps, and the float functions of the unary
// activations. Each row is split as torch splits it, Note [Quantized elementwise arithmetic];
// on AVX2 the vector part runs eight lanes at a time, elsewhere the same formulas run per
// element (std::fma standing for the fused multiply-add).
#include <aten/core/Parallel.h>
#include <aten/cpu/vec/vec.h>
#include <aten/native/TensorIterator.h>
#include <aten/native/quantized/QuantizedOps.h>
#include <aten/native/quantized/cpu/QuantizeVal.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(CPU_CAPABILITY_AVX2)
#include <immintrin.h>
#endif

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

// torch's vector loop takes each contiguous row in chunks of two 32-byte vectors.
template <typename Int>
constexpr int64_t kChunk = 64 / static_cast<int64_t>(sizeof(Int));

template <typename Int>
constexpr int64_t kMin = std::numeric_limits<Int>::min();
template <typename Int>
constexpr int64_t kMax = std::numeric_limits<Int>::max();


// The 8-bit vector quantizer on x * inv_scale (quantize_vector_lane); torch's qint32 vector
// loop quantizes per element instead.
template <typename Int>
inline Int quantize_lane(float x, float inv_scale, int64_t zero_point) {
  if constexpr (sizeof(Int) == 4) {
    return quantize_val<Int>(x, inv_scale, zero_point);
  } else {
    return quantize_vector_lane<Int>(x * inv_scale, zero_point);
  }
}

// The two dequantizers.
inline float dequantize_lane(int64_t q, float scale, float neg_zp_scale) {
  return std::fma(scale, static_cast<float>(q), neg_zp_scale);
}
inline float dequantize_scalar(int64_t q, float scale, int64_t zero_point) {
  return scale * static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(q) - static_cast<uint32_t>(zero_point)));
}

// requantize_from_int: zero_point + lrintf(float(v) * multiplier), clamped (the scalar loop);
// the vector loop rounds with cvtps_epi32 and adds in int32, and for qint32 neither clamps
// nor saturates (the sum wraps).
template <typename Int>
inline Int requantize(int64_t v, float multiplier, int64_t zero_point) {
  const float t = static_cast<float>(v) * multiplier;
  const int64_t r = t >= -9.2233720368547758e18f && t < 9.2233720368547758e18f ? static_cast<int64_t>(std::nearbyint(t))
                                                                               : std::numeric_limits<int64_t>::min();
  const int64_t q = static_cast<int64_t>(static_cast<uint64_t>(zero_point) + static_cast<uint64_t>(r));
  return static_cast<Int>(std::min(std::max(q, kMin<Int>), kMax<Int>));
}
template <typename Int>
inline Int requantize_lane(int64_t v, float multiplier, int64_t zero_point) {
  const int64_t q = wrapping_add(cvtps_epi32(static_cast<float>(v) * multiplier), zero_point);
  return static_cast<Int>(std::min(std::max(q, kMin<Int>), kMax<Int>));
}

// Whether torch's loop vectorises a row with these byte strides (output first): every
// operand contiguous, or one input broadcast (stride 0) and the rest contiguous.
bool vectorised_row(const int64_t* strides, int ntensors, int64_t item) {
  if (strides[0] != item) return false;
  int broadcast = 0;
  for (int k = 1; k < ntensors; ++k) {
    if (strides[k] == 0) {
      ++broadcast;
    } else if (strides[k] != item) {
      return false;
    }
  }
  return broadcast <= 1;
}

// Runs row(data, strides, n, nvec) over iter's rows, where the row's first nvec elements are
// those torch's vector loop would take. A single row (dense operands) is cut into parallel
// pieces, each told how much of the vector part it holds; several rows run in order.
template <typename Int, typename Row>
void for_each_torch_row(const TensorIterator& iter, Row row) {
  constexpr int kMaxOperands = 3;
  const int nt = iter.ntensors();
  const int64_t item = sizeof(Int);
  if (iter.ndim() <= 1) {
    const int64_t n = iter.numel();
    int64_t strides[kMaxOperands];
    for (int k = 0; k < nt; ++k) strides[k] = iter.ndim() == 0 ? item : iter.strides(k)[0];
    const int64_t vend = vectorised_row(strides, nt, item) ? n / kChunk<Int> * kChunk<Int> : 0;
    at::parallel_for(0, n, 32768, [&](int64_t begin, int64_t end) {
      char* data[kMaxOperands];
      for (int k = 0; k < nt; ++k) data[k] = iter.data_ptr(k) + begin * strides[k];
      row(data, strides, end - begin, std::clamp<int64_t>(vend - begin, 0, end - begin));
    });
    return;
  }
  iter.serial_for_each([&](char** base, const int64_t* strides, int64_t size0, int64_t size1) {
    const int64_t nvec = vectorised_row(strides, nt, item) ? size0 / kChunk<Int> * kChunk<Int> : 0;
    char* data[kMaxOperands];
    for (int64_t j = 0; j < size1; ++j) {
      for (int k = 0; k < nt; ++k) data[k] = base[k] + j * strides[nt + k];
      row(data, strides, size0, nvec);
    }
  });
}

template <typename Int>
inline Int load(const char* p) {
  Int v;
  std::memcpy(&v, p, sizeof(Int));
  return v;
}
template <typename Int>
inline void store(char* p, Int v) {
  std::memcpy(p, &v, sizeof(Int));
}

#if defined(CPU_CAPABILITY_AVX2)
// Eight elements as int32 lanes, and back (the lanes already within Int's range).
template <typename Int>
inline __m256i load8(const char* p) {
  if constexpr (sizeof(Int) == 4) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  } else {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return std::is_signed_v<Int> ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
  }
}
template <typename Int>
inline void store8(char* p, __m256i v) {
  if constexpr (sizeof(Int) == 4) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  } else {
    const __m256i low_bytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                               0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i packed = _mm256_shuffle_epi8(v, low_bytes);
    const int32_t lo = _mm256_extract_epi32(packed, 0), hi = _mm256_extract_epi32(packed, 4);
    std::memcpy(p, &lo, 4);
    std::memcpy(p + 4, &hi, 4);
  }
}
inline __m256i clamp8(__m256i v, int64_t lo, int64_t hi) {
  return _mm256_min_epi32(_mm256_max_epi32(v, _mm256_set1_epi32(static_cast<int32_t>(lo))),
                          _mm256_set1_epi32(static_cast<int32_t>(hi)));
}
// The 8-bit vector quantizer on eight lanes, as int32 lanes clamped to Int's range.
template <typename Int>
inline __m256i quantize8(__m256 x, float inv_scale, int64_t zero_point) {
  // min(y, bound): a NaN y gives the bound (minps returns its second operand)
  const __m256 t = _mm256_min_ps(_mm256_mul_ps(x, _mm256_set1_ps(inv_scale)), _mm256_set1_ps(2147483520.0f));
  const __m256i q = _mm256_add_epi32(_mm256_cvtps_epi32(t), _mm256_set1_epi32(static_cast<int32_t>(zero_point)));
  return clamp8(q, kMin<Int>, kMax<Int>);
}
// 32 int32 lanes within Int's range (8-bit) packed into 32 bytes, in order.
template <typename Int>
inline void store32(char* p, __m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);
  const __m256i bytes = std::is_signed_v<Int> ? _mm256_packs_epi16(ab, cd) : _mm256_packus_epi16(ab, cd);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                      _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}
// Writes elements [i, end) of a contiguous Int output from lanes(k) (int32 lanes of elements
// k..k+7, within Int's range): 32 at a time for 8-bit types, then 8 at a time. Returns where
// it stopped (fewer than 8 left).
template <typename Int, typename Lanes>
inline int64_t store_blocks(char* out, int64_t i, int64_t end, Lanes lanes) {
  if constexpr (sizeof(Int) == 1) {
    for (; i + 32 <= end; i += 32) store32<Int>(out + i, lanes(i), lanes(i + 8), lanes(i + 16), lanes(i + 24));
  }
  for (; i + 8 <= end; i += 8) store8<Int>(out + i * static_cast<int64_t>(sizeof(Int)), lanes(i));
  return i;
}
// Eight elements of an operand as int32 lanes: loaded, or broadcast where the stride is 0.
template <typename Int>
inline __m256i operand8(const char* base, int64_t stride, int64_t i) {
  return stride == 0 ? _mm256_set1_epi32(static_cast<int32_t>(load<Int>(base))) : load8<Int>(base + i * stride);
}
#endif

// ---- add and mul of two quantized tensors

template <typename Int>
void binary_kernel(QBinaryOp op, const Tensor& out, QAffine oq, const Tensor& a, QAffine aq, const Tensor& b,
                   QAffine bq) {
  auto iter = TensorIteratorConfig().add_output(out).add_input(a).add_input(b).resize_outputs(false).build();
  const bool relu = op == QBinaryOp::AddRelu || op == QBinaryOp::MulRelu;
  const float inv_scale = 1.0f / oq.scale;
  if (op == QBinaryOp::Mul || op == QBinaryOp::MulRelu) {
    // qmul: the integer product of the centred operands, requantized (one arithmetic for both loops).
    const float multiplier = aq.scale * bq.scale * inv_scale;
    const int64_t floor = relu ? static_cast<Int>(oq.zero_point) : kMin<Int>;  // torch compares in Int
    for_each_torch_row<Int>(iter, [&](char** d, const int64_t* s, int64_t n, int64_t nvec) {
      int64_t i = 0;
#if defined(CPU_CAPABILITY_AVX2)
      const __m256i za = _mm256_set1_epi32(static_cast<int32_t>(aq.zero_point));
      const __m256i zb = _mm256_set1_epi32(static_cast<int32_t>(bq.zero_point));
      const __m256i zo = _mm256_set1_epi32(static_cast<int32_t>(oq.zero_point));
      const __m256 m = _mm256_set1_ps(multiplier);
      i = store_blocks<Int>(d[0], i, nvec, [&](int64_t k) {
        const __m256i c = _mm256_mullo_epi32(_mm256_sub_epi32(operand8<Int>(d[1], s[1], k), za),
                                             _mm256_sub_epi32(operand8<Int>(d[2], s[2], k), zb));
        const __m256i r = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(c), m)), zo);
        return clamp8(r, floor, kMax<Int>);
      });
#endif
      for (; i < n; ++i) {
        const int32_t x = static_cast<int32_t>(load<Int>(d[1] + i * s[1])) - static_cast<int32_t>(aq.zero_point);
        const int32_t y = static_cast<int32_t>(load<Int>(d[2] + i * s[2])) - static_cast<int32_t>(bq.zero_point);
        const int32_t c = static_cast<int32_t>(static_cast<uint32_t>(x) * static_cast<uint32_t>(y));
        const Int r = i < nvec ? requantize_lane<Int>(c, multiplier, oq.zero_point)
                               : requantize<Int>(c, multiplier, oq.zero_point);
        store<Int>(d[0] + i * s[0], static_cast<Int>(std::max<int64_t>(r, floor)));
      }
    });
    return;
  }
  const float a_premul = aq.scale * -static_cast<float>(aq.zero_point);
  const float b_premul = bq.scale * -static_cast<float>(bq.zero_point);
  for_each_torch_row<Int>(iter, [&](char** d, const int64_t* s, int64_t n, int64_t nvec) {
    int64_t i = 0;
#if defined(CPU_CAPABILITY_AVX2)
    const __m256 sa = _mm256_set1_ps(aq.scale), pa = _mm256_set1_ps(a_premul);
    const __m256 sb = _mm256_set1_ps(bq.scale), pb = _mm256_set1_ps(b_premul);
    auto sum = [&](int64_t k) {
      const __m256 x = _mm256_cvtepi32_ps(operand8<Int>(d[1], s[1], k));
      const __m256 y = _mm256_cvtepi32_ps(operand8<Int>(d[2], s[2], k));
      const __m256 c = _mm256_add_ps(_mm256_fmadd_ps(sa, x, pa), _mm256_fmadd_ps(sb, y, pb));
      return relu ? _mm256_max_ps(c, _mm256_setzero_ps()) : c;
    };
    if constexpr (sizeof(Int) == 1) {
      i = store_blocks<Int>(d[0], i, nvec, [&](int64_t k) { return quantize8<Int>(sum(k), inv_scale, oq.zero_point); });
    } else {  // qint32's vector quantizer is quantize_val per element
      alignas(32) float lanes[8];
      for (; i + 8 <= nvec; i += 8) {
        _mm256_store_ps(lanes, sum(i));
        for (int k = 0; k < 8; ++k) {
          store<Int>(d[0] + (i + k) * s[0], quantize_val<Int>(lanes[k], inv_scale, oq.zero_point));
        }
      }
    }
#endif
    for (; i < nvec; ++i) {
      float c = dequantize_lane(load<Int>(d[1] + i * s[1]), aq.scale, a_premul) +
                dequantize_lane(load<Int>(d[2] + i * s[2]), bq.scale, b_premul);
      if (relu) c = std::max(c, 0.0f);
      store<Int>(d[0] + i * s[0], quantize_lane<Int>(c, inv_scale, oq.zero_point));
    }
    for (; i < n; ++i) {
      float c = dequantize_scalar(load<Int>(d[1] + i * s[1]), aq.scale, aq.zero_point) +
                dequantize_scalar(load<Int>(d[2] + i * s[2]), bq.scale, bq.zero_point);
      if (relu) c = std::max(c, 0.0f);
      store<Int>(d[0] + i * s[0], quantize_val<Int>(c, inv_scale, oq.zero_point));
    }
  });
}

// ---- a quantized scalar added (qadd_scalar_kernel): integers throughout

template <typename Int>
void add_scalar_kernel(const Tensor& out, QAffine oq, const Tensor& a, QAffine aq, int32_t addend, bool relu) {
  auto iter = TensorIteratorConfig().add_output(out).add_input(a).resize_outputs(false).build();
  const float multiplier = aq.scale * (1.0f / oq.scale);
  const int64_t floor = relu ? static_cast<Int>(oq.zero_point) : kMin<Int>;  // torch compares in Int
  for_each_torch_row<Int>(iter, [&](char** d, const int64_t* s, int64_t n, int64_t nvec) {
    for (int64_t i = 0; i < n; ++i) {
      const int32_t x = static_cast<int32_t>(load<Int>(d[1] + i * s[1])) - static_cast<int32_t>(aq.zero_point);
      const int32_t c = static_cast<int32_t>(static_cast<uint32_t>(x) + static_cast<uint32_t>(addend));
      const Int r =
          i < nvec ? requantize_lane<Int>(c, multiplier, oq.zero_point) : requantize<Int>(c, multiplier, oq.zero_point);
      store<Int>(d[0] + i * s[0], static_cast<Int>(std::max<int64_t>(r, floor)));
    }
  });
}

// ---- integer clamps and the reflection of mul by a negative scalar

template <typename Int>
void clamp_kernel(const Tensor& out, const Tensor& a, int64_t lo, int64_t hi, bool reflect) {
  auto iter = TensorIteratorConfig().add_output(out).add_input(a).resize_outputs(false).build();
  for_each_torch_row<Int>(iter, [&](char** d, const int64_t* s, int64_t n, int64_t) {
    int64_t i = 0;
#if defined(CPU_CAPABILITY_AVX2)
    if (!reflect && s[0] == sizeof(Int) && s[1] == sizeof(Int)) {
      i = store_blocks<Int>(d[0], i, n, [&](int64_t k) { return clamp8(load8<Int>(d[1] + k * s[1]), lo, hi); });
    }
#endif
    for (; i < n; ++i) {
      int64_t v = load<Int>(d[1] + i * s[1]);
      if (reflect) v = kMin<Int> + kMax<Int> - v;
      store<Int>(d[0] + i * s[0], static_cast<Int>(std::min(std::max(v, lo), hi)));
    }
  });
}

// ---- the float activations: dequantize, apply, quantize

using vec::Vectorized;
using FVec = Vectorized<float>;

// The function torch's vector loop applies (on Vectorized<float>) and its scalar one (in
// the precision torch's scalar lambda computes: gelu's in double).
template <QUnaryOp op>
struct UnaryFns {
  const QUnaryArgs& args;

  FVec vector(FVec x) const {
    const FVec zero(0.0f), one(1.0f), three(3.0f), six(6.0f);
    switch (op) {
      case QUnaryOp::Sigmoid:
        return (one + x.neg().exp()).reciprocal();
      case QUnaryOp::Tanh:
        return x.tanh();
      case QUnaryOp::Hardsigmoid:
        return vec::minimum(vec::maximum(x + three, zero), six) / six;
      case QUnaryOp::Hardswish:
        return x * vec::minimum(vec::maximum(x + three, zero), six) / six;
      case QUnaryOp::LeakyRelu:
        return x * FVec::blendv(FVec(args.alpha), one, x > zero);
      case QUnaryOp::Elu: {
        const FVec negative = ((x * FVec(args.gamma)).exp() - one) * FVec(args.alpha);
        return FVec::blendv(x, negative, x <= zero) * FVec(args.beta);
      }
      case QUnaryOp::Gelu:
        return x * FVec(0.5f) * (one + (x * FVec(static_cast<float>(M_SQRT1_2))).erf());
      case QUnaryOp::GeluTanh: {
        const FVec beta(static_cast<float>(M_SQRT2 * M_2_SQRTPI * 0.5)), kappa(0.044715f);
        const FVec inner = beta * vec::fmadd(kappa, x * x * x, x);  // GCC contracts torch's x + kappa * cube
        return FVec(0.5f) * x * (one + inner.tanh());
      }
      case QUnaryOp::Threshold:
        return FVec::blendv(FVec(args.beta), x, x > FVec(args.alpha));
      case QUnaryOp::Identity:
        return x;
      case QUnaryOp::Relu:
        return vec::maximum(x, zero);
    }
    return x;
  }

  float scalar(float x) const {
    switch (op) {
      case QUnaryOp::Sigmoid:
        return static_cast<float>(1.0 / (1.0 + static_cast<double>(std::exp(-x))));
      case QUnaryOp::Tanh:
        return std::tanh(x);
      case QUnaryOp::Hardsigmoid:
        return std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f;
      case QUnaryOp::Hardswish:
        return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f;
      case QUnaryOp::LeakyRelu:
        return x > 0 ? x : x * args.alpha;
      case QUnaryOp::Elu:
        return x >= 0 ? x * args.beta : (std::exp(x * args.gamma) - 1) * args.alpha * args.beta;
      case QUnaryOp::Gelu:
        return static_cast<float>(x * 0.5 * (1 + std::erf(x * M_SQRT1_2)));
      case QUnaryOp::GeluTanh: {
        const double beta = M_SQRT2 * M_2_SQRTPI * 0.5, kappa = 0.044715;
        const double inner = beta * (x + kappa * (static_cast<double>(x * x * x)));
        return static_cast<float>(0.5 * x * (1.0 + std::tanh(inner)));
      }
      case QUnaryOp::Threshold:
        return x > args.alpha ? x : args.beta;
      case QUnaryOp::Identity:
        return x;
      case QUnaryOp::Relu:
        return std::max(x, 0.0f);
    }
    return x;
  }
};

// One row: the first nvec elements in torch's vector arithmetic, in blocks of lanes (a short
// last block padded: lanes are independent), the rest in its scalar arithmetic.
template <typename Int, typename Fns>
void unary_row(const Fns& fns, char** d, const int64_t* s, int64_t n, int64_t nvec, QAffine oq, QAffine aq) {
  constexpr int64_t kLanes = FVec::size();
  const float inv_scale = 1.0f / oq.scale;
  const float premul = aq.scale * -static_cast<float>(aq.zero_point);
  // qint32's vector quantizer is quantize_val, with its own float inverse
  const float vector_inv = sizeof(Int) == 4 ? inv_scale : fns.args.vector_inv_scale;
  int64_t start = 0;
#if defined(CPU_CAPABILITY_AVX2)
  if constexpr (sizeof(Int) == 1) {
    const __m256 scale = _mm256_set1_ps(aq.scale), shift = _mm256_set1_ps(premul);
    start = store_blocks<Int>(d[0], 0, nvec, [&](int64_t k) {
      const __m256 x = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(operand8<Int>(d[1], s[1], k)), shift);
      return quantize8<Int>(fns.vector(FVec(x)), vector_inv, oq.zero_point);
    });
  }
#endif
  alignas(32) float lanes[kLanes];
  for (int64_t i = start; i < nvec; i += kLanes) {
    const int64_t m = std::min(kLanes, nvec - i);
    for (int64_t k = 0; k < kLanes; ++k) {
      lanes[k] = static_cast<float>(load<Int>(d[1] + (i + std::min(k, m - 1)) * s[1]));
    }
    fns.vector(vec::fmadd(FVec(aq.scale), FVec::loadu(lanes), FVec(premul))).store(lanes);
    for (int64_t k = 0; k < m; ++k) {
      store<Int>(d[0] + (i + k) * s[0], quantize_lane<Int>(lanes[k], vector_inv, oq.zero_point));
    }
  }
  for (int64_t i = nvec; i < n; ++i) {
    const float x = dequantize_scalar(load<Int>(d[1] + i * s[1]), aq.scale, aq.zero_point);
    store<Int>(d[0] + i * s[0], quantize_val<Int>(fns.scalar(x), inv_scale, oq.zero_point));
  }
}

// Calls fn.template operator()<Op>() with op as a compile-time constant, so each function's
// loop is compiled on its own (no switch per vector).
template <typename Fn>
void with_unary_op(QUnaryOp op, Fn&& fn) {
  switch (op) {
    case QUnaryOp::Sigmoid:
      return fn.template operator()<QUnaryOp::Sigmoid>();
    case QUnaryOp::Tanh:
      return fn.template operator()<QUnaryOp::Tanh>();
    case QUnaryOp::Hardsigmoid:
      return fn.template operator()<QUnaryOp::Hardsigmoid>();
    case QUnaryOp::Hardswish:
      return fn.template operator()<QUnaryOp::Hardswish>();
    case QUnaryOp::LeakyRelu:
      return fn.template operator()<QUnaryOp::LeakyRelu>();
    case QUnaryOp::Elu:
      return fn.template operator()<QUnaryOp::Elu>();
    case QUnaryOp::Gelu:
      return fn.template operator()<QUnaryOp::Gelu>();
    case QUnaryOp::GeluTanh:
      return fn.template operator()<QUnaryOp::GeluTanh>();
    case QUnaryOp::Threshold:
      return fn.template operator()<QUnaryOp::Threshold>();
    case QUnaryOp::Identity:
      return fn.template operator()<QUnaryOp::Identity>();
    case QUnaryOp::Relu:
      return fn.template operator()<QUnaryOp::Relu>();
  }
}

template <typename Int>
void unary_kernel(QUnaryOp op, const QUnaryArgs& args, const Tensor& out, QAffine oq, const Tensor& a, QAffine aq) {
  auto iter = TensorIteratorConfig().add_output(out).add_input(a).resize_outputs(false).build();
  with_unary_op(op, [&]<QUnaryOp Op>() {
    const UnaryFns<Op> fns{args};
    for_each_torch_row<Int>(
        iter, [&](char** d, const int64_t* s, int64_t n, int64_t nvec) { unary_row<Int>(fns, d, s, n, nvec, oq, aq); });
  });
}

// cat's channels-last loop (qcat_nhwc): per pixel, the first C - C % 8 channels in the vector
// arithmetic, the rest in the scalar one. out and a are [pixels, C] with unit channel stride.
template <typename Int>
void requantize_rows_kernel(const Tensor& out, QAffine oq, const Tensor& a, QAffine aq, float vector_inv_scale,
                            bool relu) {
  QUnaryArgs args;
  args.vector_inv_scale = vector_inv_scale;
  const int64_t rows = out.size(0), channels = out.size(1);
  const int64_t strides[2] = {static_cast<int64_t>(sizeof(Int)), static_cast<int64_t>(sizeof(Int))};
  char* const out_base = static_cast<char*>(out.data_ptr());
  const char* const a_base = static_cast<const char*>(a.data_ptr());
  with_unary_op(relu ? QUnaryOp::Relu : QUnaryOp::Identity, [&]<QUnaryOp Op>() {
    const UnaryFns<Op> fns{args};
    at::parallel_for(0, rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(channels, 1)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        char* d[2] = {out_base + r * out.stride(0) * static_cast<int64_t>(sizeof(Int)),
                      const_cast<char*>(a_base) + r * a.stride(0) * static_cast<int64_t>(sizeof(Int))};
        unary_row<Int>(fns, d, strides, channels, channels / 8 * 8, oq, aq);
      }
    });
  });
}

void qbinary_kernel(QBinaryOp op, const Tensor& out, QAffine oq, const Tensor& a, QAffine aq, const Tensor& b,
                    QAffine bq) {
  dispatch_qint(out.scalar_type(), [&]<typename Int>(Int) { binary_kernel<Int>(op, out, oq, a, aq, b, bq); });
}
void qadd_scalar_kernel(const Tensor& out, QAffine oq, const Tensor& a, QAffine aq, int32_t addend, bool relu) {
  dispatch_qint(out.scalar_type(), [&]<typename Int>(Int) { add_scalar_kernel<Int>(out, oq, a, aq, addend, relu); });
}
void qclamp_kernel(const Tensor& out, const Tensor& a, int64_t lo, int64_t hi, bool reflect) {
  dispatch_qint(out.scalar_type(), [&]<typename Int>(Int) { clamp_kernel<Int>(out, a, lo, hi, reflect); });
}
void qunary_kernel(QUnaryOp op, const QUnaryArgs& args, const Tensor& out, QAffine oq, const Tensor& a, QAffine aq) {
  dispatch_qint(out.scalar_type(), [&]<typename Int>(Int) { unary_kernel<Int>(op, args, out, oq, a, aq); });
}
void qrequantize_rows_kernel(const Tensor& out, QAffine oq, const Tensor& a, QAffine aq, float vector_inv_scale,
                             bool relu) {
  dispatch_qint(out.scalar_type(), [&]<typename Int>(Int) {
    requantize_rows_kernel<Int>(out, oq, a, aq, vector_inv_scale, relu);
  });
}

// Bilinear upsampling, channels-last: per output pixel the four neighbours' channel rows, blended
// in float with FMA in torch's two orders (its vector loop on the first vector_channels channels,
// its scalar loop on the rest), minus the zero point, quantized with scale 1.
template <typename Int>
void upsample_bilinear_nhwc_kernel(const Tensor& out, const Tensor& in, const BilinearTap* rows,
                                   const BilinearTap* cols, int64_t vector_channels, int64_t zero_point) {
  const Int* src = static_cast<const Int*>(in.data_ptr());
  Int* dst = static_cast<Int*>(out.data_ptr());
  const int64_t channels = in.size(1), out_h = out.size(2), out_w = out.size(3);
  const int64_t sn = in.stride(0), sh = in.stride(2), sw = in.stride(3);
  const int64_t on = out.stride(0), oh_s = out.stride(2), ow_s = out.stride(3);
  const auto zp = static_cast<float>(zero_point);
  at::parallel_for(0, out.size(0) * out_h, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / out_h, oh = row % out_h;
      const BilinearTap& t = rows[oh];
      for (int64_t ow = 0; ow < out_w; ++ow) {
        const BilinearTap& u = cols[ow];
        const Int* __restrict a = src + n * sn + t.i0 * sh + u.i0 * sw;
        const Int* __restrict b = src + n * sn + t.i0 * sh + u.i1 * sw;
        const Int* __restrict c = src + n * sn + t.i1 * sh + u.i0 * sw;
        const Int* __restrict d = src + n * sn + t.i1 * sh + u.i1 * sw;
        Int* __restrict o = dst + n * on + oh * oh_s + ow * ow_s;
        int64_t k = 0;
        for (; k < vector_channels; ++k) {
          const float top = std::fma(u.l1, static_cast<float>(b[k]), u.l0 * static_cast<float>(a[k]));
          const float bottom = std::fma(u.l1, static_cast<float>(d[k]), u.l0 * static_cast<float>(c[k]));
          const float v = zp + std::nearbyint(std::fma(t.l1, bottom, t.l0 * top) - zp);
          o[k] = static_cast<Int>(static_cast<int32_t>(std::min(std::max(v, float(kMin<Int>)), float(kMax<Int>))));
        }
        for (; k < channels; ++k) {
          const float top = std::fma(u.l0, static_cast<float>(a[k]), u.l1 * static_cast<float>(b[k]));
          const float bottom = std::fma(u.l0, static_cast<float>(c[k]), u.l1 * static_cast<float>(d[k]));
          const float v = zp + std::nearbyint(std::fma(t.l0, top, t.l1 * bottom) - zp);
          const int64_t q = v >= -9.2233720368547758e18f && v < 9.2233720368547758e18f
                                ? static_cast<int64_t>(v)
                                : std::numeric_limits<int64_t>::min();
          o[k] = static_cast<Int>(std::min(std::max(q, kMin<Int>), kMax<Int>));
        }
      }
    }
  });
}

void qupsample_bilinear_nhwc_kernel(const Tensor& out, const Tensor& in, const BilinearTap* rows,
                                    const BilinearTap* cols, int64_t vector_channels, int64_t zero_point) {
  dispatch_qint(out.scalar_type(), [&]<typename Int>(Int) {
    upsample_bilinear_nhwc_kernel<Int>(out, in, rows, cols, vector_channels, zero_point);
  });
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(qbinary_stub, &qbinary_kernel);
REGISTER_DISPATCH(qadd_scalar_stub, &qadd_scalar_kernel);
REGISTER_DISPATCH(qclamp_stub, &qclamp_kernel);
REGISTER_DISPATCH(qunary_stub, &qunary_kernel);
REGISTER_DISPATCH(qrequantize_rows_stub, &qrequantize_rows_kernel);
REGISTER_DISPATCH(qupsample_bilinear_nhwc_stub, &qupsample_bilinear_nhwc_kernel);

}  // namespace at::inline tessera::native
