// Quantized embedding tables as torch 1.13 packs and reads them (quantized::embedding_bag_*
// on CPU and Meta): a float weight's rows packed to 8, 4 or 2 bits with a per-row scale and
// bias, unpacked, and summed by bags, Note [Packed embedding rows].
#include <aten/core/Parallel.h>
#include <aten/library.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/quantized/AffineQuantizer.h>
#include <aten/ops/Functions.h>

#include <c10/util/Half.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

namespace at::inline tessera::native {

// Note [Packed embedding rows]: a packed table is a plain uint8 tensor, one row per embedding.
// 8-bit rows hold D codes, then a float32 scale and bias (the row's minimum); 4- and 2-bit rows
// hold D / (8 / bits) bytes (element j in byte j / epb, lowest bits first), then a float16
// scale and bias. A value is code * scale + bias. Packing is float32 throughout as torch does
// it: 8-bit codes are lrintf((x - min) * (255 / (range + 1e-8))), unclamped; n-bit ones
// round min to half first and clamp lrintf((x - min) * (1 / scale)). A bag is a weighted sum
// over its rows: per index, s = w * scale and b = w * bias in float, then
// acc = float(double(s) * code + double(acc + b)) (torch's fma on mixed float/double
// arguments), so the sums equal torch's bit for bit. torch ignores `mode` (always a sum) and
// starts the bags at indices[0] whatever offsets[0] says; both are kept. Where torch reads out
// of bounds or crashes (per_sample_weights shorter than the indices, empty offsets, an empty
// row) this raises or returns an empty result. Checked by a NumPy reference on 20k packed rows
// and 0.67M bag outputs: docs/plans/quantized-embedding-*.

namespace {

float half_round(float x) { return static_cast<float>(c10::Half(x)); }

// std::min_element / max_element: the first of equal extremes, NaN never replacing.
std::pair<float, float> row_range(const float* x, int64_t n) {
  float lo = x[0], hi = x[0];
  for (int64_t i = 1; i < n; ++i) {
    if (x[i] < lo) lo = x[i];
    if (hi < x[i]) hi = x[i];
  }
  return {lo, hi};
}

Tensor float_rows(const Tensor& weight, const char* op) {
  TORCH_CHECK(weight.scalar_type() == c10::kFloat || weight.scalar_type() == c10::kHalf, "'", op,
              "' only support float32 or float16.");
  return weight.to(c10::kFloat).contiguous();
}

void store_float(uint8_t* dst, float v) { std::memcpy(dst, &v, sizeof v); }
void store_half(uint8_t* dst, float v) {
  const c10::Half h(v);
  std::memcpy(dst, &h, sizeof h);
}
float load_float(const uint8_t* src) {
  float v;
  std::memcpy(&v, src, sizeof v);
  return v;
}
float load_half(const uint8_t* src) {
  c10::Half h;
  std::memcpy(&h, src, sizeof h);
  return static_cast<float>(h);
}

// calculate_quant_loss: the L2 error of quantizing x with [lo, hi] to `bits`, in float.
float quant_loss(const float* x, int64_t n, float lo, float hi, int bits) {
  lo = half_round(lo);
  const float range = hi - lo, qmax = static_cast<float>((1 << bits) - 1);
  const float scale = range == 0 ? 1.0f : half_round(range / qmax);
  const float inv = scale == 0 ? 1.0f : 1.0f / scale;
  float norm = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float q = std::max(0.0f, std::min(round_even((x[i] - lo) * inv), qmax));
    const float d = x[i] - (q * scale + lo);
    norm += d * d;
  }
  return std::sqrt(norm);
}

// choose_qparams_optimized: a greedy search that narrows [min, max] by `nbins` steps while the
// quantization loss falls; returns (lo, hi).
std::pair<float, float> optimized_range(const float* x, int64_t n, int64_t nbins, double ratio, int bits) {
  auto [lo, hi] = row_range(x, n);
  const float step = (hi - lo) / static_cast<float>(nbins);
  // torch's int min_bins, truncated as x86 truncates
  const double bins = static_cast<double>(nbins) * (1.0 - static_cast<float>(ratio));
  const int32_t min_bins =
      bins >= -2147483648.0 && bins < 2147483648.0 ? static_cast<int32_t>(bins) : std::numeric_limits<int32_t>::min();
  float best = quant_loss(x, n, lo, hi, bits);
  float cur_lo = lo, cur_hi = hi, cur_loss = best;
  const float threshold = static_cast<float>(min_bins) * step;
  // each step narrows the range by one bin; where float steps stall on large values torch
  // loops forever, here the search ends after nbins steps
  for (int64_t steps = 0; steps <= nbins && cur_lo + threshold < cur_hi; ++steps) {
    const float up = quant_loss(x, n, cur_lo + step, cur_hi, bits);
    const float down = quant_loss(x, n, cur_lo, cur_hi - step, bits);
    if (cur_loss < up && cur_loss < down && cur_loss < best) {
      best = cur_loss, lo = cur_lo, hi = cur_hi;
    }
    if (up < down) {
      cur_lo += step, cur_loss = up;
    } else {
      cur_hi -= step, cur_loss = down;
    }
  }
  return {lo, hi};
}

Tensor byte_prepack(const Tensor& weight) {
  TORCH_CHECK(weight.dim() >= 1, "embedding_bag_byte_prepack: expected a weight of at least one dimension");
  const Tensor rows = float_rows(weight, "embedding_bag_byte_prepack");
  const int64_t d = weight.size(-1), n = d == 0 ? 0 : weight.numel() / d;
  std::vector<int64_t> sizes = weight.sizes().vec();
  sizes.back() = d + 8;
  Tensor out = at::empty(sizes, weight.options().dtype(c10::kByte));
  if (out.is_meta()) return out;
  TORCH_CHECK(d > 0 || out.numel() == 0, "embedding_bag_byte_prepack: rows must not be empty");
  const float* src = rows.data_ptr<float>();
  uint8_t* dst = out.data_ptr<uint8_t>();
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* x = src + r * d;
      uint8_t* o = dst + r * (d + 8);
      const auto [lo, hi] = row_range(x, d);
      const float range = hi - lo, inv = 255.0f / (range + 1e-8f);
      for (int64_t i = 0; i < d; ++i) o[i] = static_cast<uint8_t>(truncate_like_x86(round_even((x[i] - lo) * inv)));
      store_float(o + d, range / 255.0f);
      store_float(o + d + 4, lo);
    }
  });
  return out;
}

Tensor nbit_prepack(const Tensor& weight, bool optimized_qparams, int64_t nbins, double ratio, int bits) {
  const char* op = bits == 4 ? "qembeddingbag_4bit_prepack" : "qembeddingbag_2bit_prepack";
  const Tensor rows = float_rows(weight, "qembeddingbag_nbit_prepack");
  TORCH_CHECK(weight.dim() == 2, op, ": expected a 2-d weight, got ", weight.dim(), " dimensions");
  TORCH_CHECK(!optimized_qparams || (nbins >= 0 && std::isfinite(ratio)), op,
              ": optimized qparams need nbins >= 0 and a finite ratio (torch loops forever otherwise)");
  const int64_t per_byte = 8 / bits, n = weight.size(0), d = weight.size(1);
  TORCH_CHECK(d % per_byte == 0, op, " only works for the number of columns a multiple of ", per_byte);
  const int64_t packed = d / per_byte;
  Tensor out = at::empty({n, packed + 4}, weight.options().dtype(c10::kByte));
  if (out.is_meta()) return out;
  TORCH_CHECK(d > 0 || n == 0, op, ": rows must not be empty");
  const float* src = rows.data_ptr<float>();
  uint8_t* dst = out.data_ptr<uint8_t>();
  const int64_t qmax = (int64_t{1} << bits) - 1;
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* x = src + r * d;
      uint8_t* o = dst + r * (packed + 4);
      auto [lo, hi] = optimized_qparams ? optimized_range(x, d, nbins, ratio, bits) : row_range(x, d);
      lo = half_round(lo);
      const float range = hi - lo;
      float scale = half_round(range == 0 ? 1.0f : range / static_cast<float>(qmax));
      float inv = scale == 0 ? 1.0f : 1.0f / scale;
      if (scale == 0 || std::isinf(inv)) scale = 1.0f, inv = 1.0f;
      std::fill(o, o + packed, uint8_t{0});
      for (int64_t i = 0; i < d; ++i) {
        const int64_t q = std::min(std::max<int64_t>(truncate_like_x86(round_even((x[i] - lo) * inv)), 0), qmax);
        o[i / per_byte] |= static_cast<uint8_t>(q << ((i % per_byte) * bits));
      }
      store_half(o + packed, scale);
      store_half(o + packed + 2, lo);
    }
  });
  return out;
}

Tensor byte_unpack(const Tensor& packed) {
  TORCH_CHECK(packed.scalar_type() == c10::kByte, "expected scalar type Byte but found ", packed.scalar_type());
  TORCH_CHECK(packed.dim() >= 1 && packed.size(-1) >= 8,
              "embedding_bag_byte_unpack: expected rows of at least 8 bytes (the scale and bias)");
  std::vector<int64_t> sizes = packed.sizes().vec();
  const int64_t width = sizes.back(), d = width - 8;
  sizes.back() = d;
  Tensor out = at::empty(sizes, packed.options().dtype(c10::kFloat));
  if (out.is_meta()) return out;
  const Tensor rows = packed.contiguous();
  const uint8_t* src = rows.data_ptr<uint8_t>();
  float* dst = out.data_ptr<float>();
  const int64_t n = width == 0 ? 0 : packed.numel() / width;
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const uint8_t* row = src + r * width;
      const float scale = load_float(row + d), bias = load_float(row + d + 4);
      for (int64_t i = 0; i < d; ++i) dst[r * d + i] = static_cast<float>(row[i]) * scale + bias;
    }
  });
  return out;
}

Tensor nbit_unpack(const Tensor& packed, int bits) {
  TORCH_CHECK(packed.scalar_type() == c10::kByte, "expected scalar type Byte but found ", packed.scalar_type());
  TORCH_CHECK(packed.dim() == 2 && packed.size(1) >= 4, "embedding_bag_", bits,
              "bit_unpack: expected a 2-d table with rows of at least 4 bytes (the scale and bias)");
  const int64_t per_byte = 8 / bits, n = packed.size(0), width = packed.size(1), d = (width - 4) * per_byte;
  Tensor out = at::empty({n, d}, packed.options().dtype(c10::kFloat));
  if (out.is_meta()) return out;
  const Tensor rows = packed.contiguous();
  const uint8_t* src = rows.data_ptr<uint8_t>();
  float* dst = out.data_ptr<float>();
  const unsigned mask = (1u << bits) - 1;
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const uint8_t* row = src + r * width;
      const float scale = load_half(row + width - 4), bias = load_half(row + width - 2);
      for (int64_t i = 0; i < d; ++i) {
        const unsigned q = (row[i / per_byte] >> ((i % per_byte) * bits)) & mask;
        dst[r * d + i] = scale * static_cast<float>(q) + bias;
      }
    }
  });
  return out;
}

// Reads element i of an int32 or int64 tensor's data.
int64_t index_at(const Tensor& t, int64_t i) {
  return t.scalar_type() == c10::kInt ? t.data_ptr<int32_t>()[i] : t.data_ptr<int64_t>()[i];
}

void check_index_dtype(const Tensor& t, const char* what) {
  TORCH_CHECK(t.scalar_type() == c10::kInt || t.scalar_type() == c10::kLong, "Expect 32 or 64 bit ", what,
              ", but found ", t.scalar_type(), " instead.");
}

// The bag sum of embedding_bag_{byte,4bit,2bit}_rowwise_offsets, Note [Packed embedding rows].
Tensor rowwise_offsets(const Tensor& weight, const Tensor& indices, const std::optional<Tensor>& offsets_in,
                       bool pruned_weights, const std::optional<Tensor>& per_sample_weights,
                       const std::optional<Tensor>& compressed_indices_mapping, bool include_last_offset, int bits) {
  const char* name = bits == 8 ? "embedding_bag_byte" : "embedding_bag_4bit/embedding_bag_2bit";
  if (bits != 8 && per_sample_weights) {  // torch's n-bit ops check these first
    TORCH_CHECK(per_sample_weights->scalar_type() == c10::kFloat || per_sample_weights->scalar_type() == c10::kHalf,
                "Expect fp32 or fp16 weights, but found", per_sample_weights->scalar_type(), " instead");
  }
  TORCH_CHECK(indices.dim() == 1 || indices.dim() == 2,
              "qembedding/qembedding_bag operator supports 1 or 2d indices, got ", indices.dim());
  for (const Tensor* t :
       {&indices, offsets_in ? &*offsets_in : nullptr, per_sample_weights ? &*per_sample_weights : nullptr,
        compressed_indices_mapping ? &*compressed_indices_mapping : nullptr}) {
    TORCH_CHECK(t == nullptr || t->device() == weight.device(),
                "Expected all tensors to be on the same device, but found at least two devices, ", weight.device(),
                " and ", t->device(), "!");
  }
  Tensor offsets;
  if (indices.dim() == 2) {
    TORCH_CHECK(!offsets_in.has_value(), name,
                " operator: input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                "length sequences.");
    TORCH_CHECK(indices.size(1) != 0, "step must be nonzero");
    offsets = at::arange(0, indices.numel(), indices.size(1), indices.options().dtype(c10::kLong));
  } else {
    TORCH_CHECK(offsets_in.has_value(), name, bits == 8 ? " expects" : " operator expects",
                " offsets to be set for 1D indices.");
    offsets = *offsets_in;
  }
  check_index_dtype(indices, "indices");
  check_index_dtype(offsets, "offsets");
  TORCH_CHECK(weight.is_contiguous() && indices.is_contiguous() && offsets.is_contiguous(),
              "Expect weight, indices, and offsets to be contiguous.");
  if (bits == 8) {
    TORCH_CHECK(weight.scalar_type() == c10::kByte,
                "Expected weight.scalar_type() == at::kByte to be true, but got "
                "false.");
  }
  TORCH_CHECK(weight.dim() == 2, "Expected weight.dim() == 2 to be true, but got false.");
  TORCH_CHECK(offsets.dim() == 1, "Expected offsets.dim() == 1 to be true, but got false.");
  TORCH_CHECK(weight.scalar_type() == c10::kByte, "expected scalar type Byte but found ", weight.scalar_type());
  const int64_t bags = include_last_offset ? offsets.numel() - 1 : offsets.numel();
  TORCH_CHECK(bags >= 0, "embedding_bag: include_last_offset needs at least one offset");
  const int64_t per_byte = 8 / bits, width = weight.size(1);
  const int64_t d = bits == 8 ? width - 8 : (width - 4) * per_byte;
  TORCH_CHECK(d >= 0, name, ": the table's rows are too short for their scale and bias");
  Tensor psw;
  if (per_sample_weights) {
    TORCH_CHECK(bits != 8 || per_sample_weights->scalar_type() == c10::kFloat, "expected scalar type Float but found ",
                per_sample_weights->scalar_type());
    TORCH_CHECK(per_sample_weights->numel() >= indices.numel(), name,
                ": per_sample_weights must have one weight per index, got ", per_sample_weights->numel(), " for ",
                indices.numel(), " indices");
    psw = per_sample_weights->to(c10::kFloat).contiguous();
  }
  Tensor mapping;
  if (pruned_weights) {
    TORCH_CHECK(compressed_indices_mapping.has_value(), name,
                ": pruned_weights needs compressed_indices_mapping (torch: bad optional access)");
    mapping = *compressed_indices_mapping;
    TORCH_CHECK(mapping.scalar_type() == c10::kInt, "expected scalar type Int but found ", mapping.scalar_type());
    mapping = mapping.contiguous();
  }
  Tensor out = at::zeros({bags, d}, weight.options().dtype(c10::kFloat));
  if (out.is_meta() || bags == 0) return out;
  // a mapping of [0] means the table is not pruned
  if (pruned_weights && mapping.numel() == 1 && mapping.data_ptr<int32_t>()[0] == 0) pruned_weights = false;
  const uint8_t* table = weight.data_ptr<uint8_t>();
  const int64_t rows = weight.size(0), count = indices.numel();
  const float* weights = psw.defined() ? psw.data_ptr<float>() : nullptr;
  float* dst = out.data_ptr<float>();
  const unsigned mask = (1u << bits) - 1;
  int64_t cur = 0;
  for (int64_t bag = 0; bag < bags; ++bag) {
    const int64_t end_offset = bag + 1 < offsets.numel() ? index_at(offsets, bag + 1) : count;
    int64_t length = 0;
    const bool overflows = __builtin_sub_overflow(end_offset, index_at(offsets, bag), &length);
    TORCH_CHECK(!overflows && length <= count - cur, "Expect the lengths data to be less than indices size");
    float* acc = dst + bag * d;
    for (int64_t k = 0; k < length; ++k, ++cur) {
      const int64_t idx = index_at(indices, cur);
      int64_t row = idx;
      if (pruned_weights) {
        TORCH_CHECK(idx >= 0 && idx < mapping.numel(), "Invalid indices data for Sparse Op.");
        row = mapping.data_ptr<int32_t>()[idx];
        if (row == -1) continue;
      }
      TORCH_CHECK(row >= 0 && row < rows, "Invalid indices data");
      const uint8_t* r = table + row * width;
      const float w = weights ? weights[cur] : 1.0f;
      const float scale = bits == 8 ? load_float(r + d) : load_half(r + width - 4);
      const float bias = bits == 8 ? load_float(r + d + 4) : load_half(r + width - 2);
      const float s = w * scale, b = w * bias;
      for (int64_t i = 0; i < d; ++i) {
        const unsigned q = bits == 8 ? r[i] : (r[i / per_byte] >> ((i % per_byte) * bits)) & mask;
        acc[i] = static_cast<float>(static_cast<double>(s) * q + static_cast<double>(acc[i] + b));
      }
    }
  }
  return out;
}

template <int Bits>
Tensor rowwise_offsets_op(const Tensor& weight, const Tensor& indices, const std::optional<Tensor>& offsets,
                          bool /*scale_grad_by_freq: torch ignores it*/, int64_t /*mode: torch always sums*/,
                          bool pruned_weights, const std::optional<Tensor>& per_sample_weights,
                          const std::optional<Tensor>& compressed_indices_mapping, bool include_last_offset) {
  return rowwise_offsets(weight, indices, offsets, pruned_weights, per_sample_weights, compressed_indices_mapping,
                         include_last_offset, Bits);
}

template <int Bits>
Tensor nbit_prepack_op(const Tensor& weight, bool optimized_qparams, int64_t nbins, double ratio) {
  return nbit_prepack(weight, optimized_qparams, nbins, ratio, Bits);
}

template <int Bits>
Tensor nbit_unpack_op(const Tensor& packed) {
  return nbit_unpack(packed, Bits);
}

void register_embedding_bag(torch::Library& m) {
  m.impl("embedding_bag_byte_prepack", TORCH_FN(byte_prepack));
  m.impl("embedding_bag_4bit_prepack", TORCH_FN(nbit_prepack_op<4>));
  m.impl("embedding_bag_2bit_prepack", TORCH_FN(nbit_prepack_op<2>));
  m.impl("embedding_bag_byte_unpack", TORCH_FN(byte_unpack));
  m.impl("embedding_bag_4bit_unpack", TORCH_FN(nbit_unpack_op<4>));
  m.impl("embedding_bag_2bit_unpack", TORCH_FN(nbit_unpack_op<2>));
  m.impl("embedding_bag_byte_rowwise_offsets", TORCH_FN(rowwise_offsets_op<8>));
  m.impl("embedding_bag_4bit_rowwise_offsets", TORCH_FN(rowwise_offsets_op<4>));
  m.impl("embedding_bag_2bit_rowwise_offsets", TORCH_FN(rowwise_offsets_op<2>));
}

}  // namespace

}  // namespace at::inline tessera::native

TORCH_LIBRARY_IMPL(quantized, CPU, m) { at::native::register_embedding_bag(m); }
TORCH_LIBRARY_IMPL(quantized, Meta, m) { at::native::register_embedding_bag(m); }
