// Quantized tensors through the C++ API: quantize / dequantize with torch's rounding, the
// qparams, views that share the integers, the packed sub-byte dtypes, quantized meta
// tensors, fake quantization, and the refusals (the Python tests compare the same against
// torch itself).
#include <aten/aten.h>
#include <aten/core/QTensorImpl.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

at::Tensor floats(std::vector<float> v) {
  at::Tensor t = at::empty({static_cast<int64_t>(v.size())}, at::TensorOptions().dtype(c10::kFloat));
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<float>()[i] = v[i];
  return t;
}

template <typename T>
std::vector<T> ints_of(const at::Tensor& q) {
  at::Tensor ints = q.int_repr().contiguous();
  const T* p = static_cast<const T*>(ints.data_ptr());
  return std::vector<T>(p, p + ints.numel());
}

TEST(Quantized, PerTensorRoundsHalfToEvenAndClamps) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  at::Tensor q = at::quantize_per_tensor(floats({0.25f, 0.35f, -0.25f, 100.f, -100.f, nan, inf}), 0.1, 3, c10::kQInt8);
  EXPECT_TRUE(q.is_quantized());
  EXPECT_EQ(q.scalar_type(), c10::kQInt8);
  EXPECT_EQ(q.qscheme(), at::kPerTensorAffine);
  EXPECT_DOUBLE_EQ(q.q_scale(), 0.1);
  EXPECT_EQ(q.q_zero_point(), 3);
  // 2.5 -> 2 and 3.5 -> 4 (half to even), then + 3; NaN and inf go to the minimum, as on x86 torch.
  EXPECT_EQ(ints_of<int8_t>(q), (std::vector<int8_t>{5, 7, 1, 127, -128, -128, -128}));
  at::Tensor back = q.dequantize();
  EXPECT_EQ(back.scalar_type(), c10::kFloat);
  EXPECT_FLOAT_EQ(back.data_ptr<float>()[0], 0.2f);
  EXPECT_FLOAT_EQ(back.data_ptr<float>()[3], 12.4f);
}

TEST(Quantized, PerChannelQParamsAndSelect) {
  at::Tensor x = floats({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}).view({2, 3});
  at::Tensor scales = floats({0.5f, 1.f, 2.f}), zps = at::zeros({3}, at::TensorOptions().dtype(c10::kLong));
  at::Tensor q = at::quantize_per_channel(x, scales, zps, 1, c10::kQUInt8);
  EXPECT_EQ(q.qscheme(), at::kPerChannelAffine);
  EXPECT_EQ(q.q_per_channel_axis(), 1);
  EXPECT_EQ(q.q_per_channel_scales().scalar_type(), c10::kDouble);
  EXPECT_EQ(ints_of<uint8_t>(q), (std::vector<uint8_t>{2, 2, 2, 8, 5, 3}));  // 1.5 -> 2 and 2.5 -> 2
  // Selecting a channel leaves a per-tensor tensor with that channel's qparams.
  at::Tensor col = q.select(1, 2);
  EXPECT_EQ(col.qscheme(), at::kPerTensorAffine);
  EXPECT_DOUBLE_EQ(col.q_scale(), 2.0);
  // Selecting across channels keeps them, on a moved axis.
  EXPECT_EQ(q.select(0, 1).q_per_channel_axis(), 0);
  EXPECT_EQ(q.unsqueeze(0).q_per_channel_axis(), 2);
  EXPECT_THROW(q.transpose(0, 1), c10::Error);
}

TEST(Quantized, ViewsShareTheIntegers) {
  at::Tensor q = at::quantize_per_tensor(floats({0.f, 1.f, 2.f, 3.f, 4.f, 5.f}).view({2, 3}), 1.0, 0, c10::kQInt32);
  at::Tensor t = q.t();
  EXPECT_TRUE(t.is_quantized());
  EXPECT_EQ(t.storage().data(), q.storage().data());
  t.select(0, 1).copy_(floats({10.f, 20.f}));  // column 1 of q
  EXPECT_EQ(ints_of<int32_t>(q), (std::vector<int32_t>{0, 10, 2, 3, 20, 5}));
  EXPECT_TRUE(at::equal(q, q.clone()));
  EXPECT_FALSE(at::equal(q, at::quantize_per_tensor(q.dequantize(), 2.0, 0, c10::kQInt32)));
}

TEST(Quantized, Refusals) {
  EXPECT_THROW(at::empty({2}, at::TensorOptions().dtype(c10::kQInt8)), c10::Error);
  EXPECT_THROW(at::quantize_per_tensor(floats({1.f}), 0.1, 300, c10::kQInt8), c10::Error);
  EXPECT_THROW(at::quantize_per_tensor(floats({1.f}).to(c10::kDouble), 0.1, 0, c10::kQInt8), c10::Error);
  at::Tensor q = at::quantize_per_tensor(floats({1.f}), 0.1, 0, c10::kQInt8);
  EXPECT_THROW(floats({0.f}).copy_(q), c10::Error);
  EXPECT_THROW(q.q_per_channel_axis(), c10::Error);
}

TEST(Quantized, SubByteTypesPackLowBitsFirst) {
  // 0.1 / 0.1 + 2 = 3, 0.25 -> 2.5 -> 2 (half to even) + 2 = 4, 0.5 -> 7, 2.0 -> 22 -> 15 (clamped)
  at::Tensor q = at::quantize_per_tensor(floats({0.1f, 0.25f, 0.5f, 2.0f, -1.0f}), 0.1, 2, c10::kQUInt4x2);
  EXPECT_EQ(q.scalar_type(), c10::kQUInt4x2);
  EXPECT_EQ(q.storage().nbytes(), 3u);
  EXPECT_EQ(ints_of<uint8_t>(q), (std::vector<uint8_t>{3 | 4 << 4, 7 | 15 << 4, 0}));
  EXPECT_FLOAT_EQ(q.dequantize().data_ptr<float>()[3], 1.3f);
  at::Tensor q2 = at::quantize_per_tensor(floats({0.1f, 0.2f, 0.3f, 5.f, -5.f}), 0.1, 1, c10::kQUInt2x4);
  EXPECT_EQ(ints_of<uint8_t>(q2), (std::vector<uint8_t>{2 | 3 << 2 | 3 << 4 | 3 << 6, 0}));
  EXPECT_TRUE(at::equal(q, q.clone()));
  EXPECT_TRUE(q.view({5, 1}).is_quantized());
  EXPECT_THROW(at::slice(q, 0, 1, 3), c10::NotImplementedError);  // an element offset inside a byte
}

TEST(Quantized, MetaTensorsKeepShapeDtypeAndQParams) {
  at::Tensor x = at::empty({2, 3}, at::TensorOptions().device(c10::DeviceType::Meta));
  at::Tensor q = at::quantize_per_tensor(x, 0.5, 1, c10::kQUInt8);
  EXPECT_TRUE(q.is_quantized() && q.is_meta());
  EXPECT_TRUE(q.key_set().has(c10::DispatchKey::QuantizedMeta));
  EXPECT_DOUBLE_EQ(q.q_scale(), 0.5);
  at::Tensor d = q.dequantize();
  EXPECT_TRUE(d.is_meta());
  EXPECT_EQ(d.sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(q.select(0, 1).sizes().vec(), (std::vector<int64_t>{3}));
}

TEST(Quantized, FakeQuantizeAndItsMask) {
  auto [out, mask] = at::fake_quantize_per_tensor_affine_cachemask(floats({0.25f, 0.35f, 5.f, -5.f}), 0.1, 2, 0, 15);
  // 0.25 -> 2 + 2 = 4 -> 0.2; 0.35 -> 4 + 2 = 6 -> 0.4; 5 -> 52, clamped to 15 -> 1.3; -5 -> 0 -> -0.2
  EXPECT_FLOAT_EQ(out.data_ptr<float>()[0], 0.2f);
  EXPECT_FLOAT_EQ(out.data_ptr<float>()[1], 0.4f);
  EXPECT_FLOAT_EQ(out.data_ptr<float>()[2], 1.3f);
  EXPECT_FLOAT_EQ(out.data_ptr<float>()[3], -0.2f);
  EXPECT_EQ(std::vector<bool>(mask.data_ptr<bool>(), mask.data_ptr<bool>() + 4),
            (std::vector<bool>{true, true, false, false}));
  EXPECT_THROW(at::fake_quantize_per_tensor_affine(floats({1.f}), 0.1, 20, 0, 15), c10::Error);
}

// The quantized operators from C++: aten's on a quantized tensor, and the quantized::
// namespace through the dispatcher, as an app calls any registered operator.
TEST(Quantized, OperatorsFromCpp) {
  // integers 4 + x / 0.1, clamped to 0..255: {0, 2, 4, 7, 24}, meaning {-0.4, -0.2, 0, 0.3, 2}
  at::Tensor q = at::quantize_per_tensor(floats({-1.0f, -0.2f, 0.0f, 0.3f, 2.0f}), 0.1, 4, c10::kQUInt8);
  EXPECT_EQ(ints_of<uint8_t>(q), (std::vector<uint8_t>{0, 2, 4, 7, 24}));
  // relu keeps the qparams and raises the integers to the zero point
  at::Tensor r = at::relu(q);
  EXPECT_DOUBLE_EQ(r.q_scale(), 0.1);
  EXPECT_EQ(ints_of<uint8_t>(r), (std::vector<uint8_t>{4, 4, 4, 7, 24}));
  // quantized::add(q, q, 0.2, 10): 2x / 0.2 + 10 over the dequantized values
  auto add = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::add", "");
  at::Tensor sum = add.typed<at::Tensor(const at::Tensor&, const at::Tensor&, double, int64_t)>().call(q, q, 0.2, 10);
  EXPECT_DOUBLE_EQ(sum.q_scale(), 0.2);
  EXPECT_EQ(sum.q_zero_point(), 10);
  EXPECT_EQ(ints_of<uint8_t>(sum), (std::vector<uint8_t>{6, 8, 10, 13, 30}));
  // max pooling of the integers, in the input's qparams
  at::Tensor pooled = at::max_pool1d(q.reshape({1, 1, 5}), {2});
  EXPECT_EQ(ints_of<uint8_t>(pooled), (std::vector<uint8_t>{2, 7}));
  // the packed types are refused, as torch refuses them
  at::Tensor packed = at::quantize_per_tensor(floats({1.0f, 2.0f}), 0.5, 1, c10::kQUInt4x2);
  EXPECT_THROW(at::relu(packed), c10::Error);
}

}  // namespace
