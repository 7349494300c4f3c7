// The first native operators through the whole stack: at:: functions and Tensor methods
// (generated), the dispatcher, and CPU and Meta kernels.
#include <aten/aten.h>
#include <aten/core/NamedTensorUtils.h>

#include <gtest/gtest.h>

#include <cmath>

namespace {

using at::Tensor;

template <typename T>
std::vector<T> values(const Tensor& t) {
  Tensor c = at::empty(t.sizes(), at::TensorOptions(t.scalar_type()));
  c.copy_(t);
  return std::vector<T>(c.data_ptr<T>(), c.data_ptr<T>() + c.numel());
}

Tensor arange_float(std::vector<int64_t> sizes) {
  Tensor t = at::empty(sizes);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_ptr<float>()[i] = static_cast<float>(i);
  return t;
}

TEST(Ops, EmptyWithOptions) {
  Tensor t = at::empty({2, 3});
  EXPECT_EQ(t.sizes(), c10::IntArrayRef({2, 3}));
  EXPECT_EQ(t.scalar_type(), at::kFloat);
  EXPECT_TRUE(t.is_cpu());
  Tensor d = at::empty({4}, at::TensorOptions().dtype(at::kDouble));
  EXPECT_EQ(d.scalar_type(), at::kDouble);
  Tensor m = at::empty({2, 3}, at::TensorOptions().device("meta").dtype(at::kHalf));
  EXPECT_TRUE(m.is_meta());
  EXPECT_EQ(m.data_ptr(), nullptr);
  Tensor cl = at::empty({2, 3, 4, 5}, {}, at::MemoryFormat::ChannelsLast);
  EXPECT_TRUE(cl.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_EQ(cl.strides(), c10::IntArrayRef({60, 1, 15, 3}));
  EXPECT_THROW(at::empty({2, -1}), c10::Error);
  EXPECT_THROW(at::empty({2}, at::TensorOptions().device("cuda")), c10::Error);
}

TEST(Ops, EmptyStrided) {
  Tensor t = at::empty_strided({2, 3}, {1, 2});
  EXPECT_EQ(t.strides(), c10::IntArrayRef({1, 2}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.storage().nbytes(), 6u * 4u);
  EXPECT_THROW(at::empty_strided({2, 3}, {1}), c10::Error);
}

TEST(Ops, FillAndCheckedValues) {
  Tensor t = at::empty({3}, at::kInt);
  t.fill_(7);
  EXPECT_EQ(values<int32_t>(t), (std::vector<int32_t>{7, 7, 7}));
  Tensor b = at::empty({2}, at::kByte);
  EXPECT_THROW(b.fill_(300), c10::Error);  // value cannot be converted to type uint8_t without overflow
  Tensor h = at::empty({2}, at::kHalf);
  h.fill_(0.1);
  EXPECT_EQ(static_cast<float>(h.data_ptr<c10::Half>()[1]), static_cast<float>(c10::Half(0.1f)));
  uint32_t v0 = t.unsafeGetTensorImpl()->version_counter().current_version();
  t.fill_(1);
  EXPECT_EQ(t.unsafeGetTensorImpl()->version_counter().current_version(), v0 + 1);
}

TEST(Ops, AddMulBroadcastAndAlpha) {
  Tensor a = arange_float({2, 3});
  Tensor b = arange_float({3});
  EXPECT_EQ(values<float>(at::add(a, b)), (std::vector<float>{0, 2, 4, 3, 5, 7}));
  EXPECT_EQ(values<float>(a.add(b, 2)), (std::vector<float>{0, 3, 6, 3, 6, 9}));
  EXPECT_EQ(values<float>(at::mul(a, b)), (std::vector<float>{0, 1, 4, 0, 4, 10}));
  EXPECT_THROW(at::add(arange_float({2}), arange_float({3})), c10::Error);
}

TEST(Ops, TypePromotion) {
  Tensor i = at::empty({2}, at::kLong);
  i.fill_(3);
  Tensor f = at::empty({2}, at::kFloat);
  f.fill_(0.5);
  Tensor r = at::add(i, f);
  EXPECT_EQ(r.scalar_type(), at::kFloat);
  EXPECT_EQ(values<float>(r), (std::vector<float>{3.5f, 3.5f}));
  // torch: a 0-dim tensor of a higher category promotes (long + 0-dim double -> double),
  // one of the same category does not (float + 0-dim double -> float).
  Tensor d0 = at::empty({}, at::kDouble);
  d0.fill_(0.25);
  EXPECT_EQ(at::add(i, d0).scalar_type(), at::kDouble);
  EXPECT_EQ(at::add(f, d0).scalar_type(), at::kFloat);
  Tensor h = at::empty({1}, at::kHalf);
  EXPECT_EQ(at::add(h, d0).scalar_type(), at::kHalf);
  // A 0-dim complex lends only its category: float32 with complex128 -> complex64.
  Tensor z0 = at::empty({}, at::kComplexDouble);
  EXPECT_EQ(at::add(f, z0).scalar_type(), at::kComplexFloat);
  EXPECT_EQ(at::add(i, z0).scalar_type(), at::kComplexDouble);
  Tensor b = at::empty({2}, at::kBool);
  b.fill_(true);
  EXPECT_EQ(at::add(b, b).scalar_type(), at::kBool);
  EXPECT_THROW(at::add(i, i, 0.5), c10::Error);  // float alpha with integral inputs
}

TEST(Ops, IntegerArithmeticWraps) {
  Tensor a = at::empty({1}, at::kLong);
  a.fill_(INT64_MAX);
  Tensor one = at::empty({1}, at::kLong);
  one.fill_(1);
  EXPECT_EQ(values<int64_t>(at::add(a, one)), std::vector<int64_t>{INT64_MIN});
}

TEST(Ops, InPlaceAndOut) {
  Tensor a = arange_float({3});
  Tensor b = arange_float({3});
  Tensor& r = a.add_(b);
  EXPECT_TRUE(r.is_same(a));
  EXPECT_EQ(values<float>(a), (std::vector<float>{0, 2, 4}));
  Tensor i = at::empty({3}, at::kLong);
  EXPECT_THROW(i.add_(a), c10::Error);  // result type Float can't be cast to Long
  Tensor small = arange_float({1});
  EXPECT_THROW(small.add_(a), c10::Error);  // output shape mismatch
  Tensor out = at::empty({0});
  at::add_out(out, a, b);
  EXPECT_EQ(out.sizes(), c10::IntArrayRef({3}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{0, 3, 6}));
  Tensor wrong = at::empty({2});
  EXPECT_THROW(at::add_out(wrong, a, b), c10::Error);
}

TEST(Ops, CopyConvertsAndBroadcasts) {
  Tensor dst = at::empty({2, 2}, at::kInt);
  Tensor src = arange_float({2});
  src.fill_(2.75);
  dst.copy_(src);
  EXPECT_EQ(values<int32_t>(dst), (std::vector<int32_t>{2, 2, 2, 2}));
  EXPECT_THROW(src.copy_(dst), c10::Error);  // [2] can't take a [2, 2] source
}

TEST(Ops, ViewsShareStorageAndVersion) {
  Tensor a = arange_float({2, 3});
  Tensor v = a.view({3, 2});
  EXPECT_EQ(v.sizes(), c10::IntArrayRef({3, 2}));
  EXPECT_EQ(v.data_ptr(), a.data_ptr());
  EXPECT_EQ(a.view({-1}).sizes(), c10::IntArrayRef({6}));
  EXPECT_THROW(a.view({4, -1}), c10::Error);
  EXPECT_THROW(a.view({-1, -1}), c10::Error);
  v.fill_(1);
  EXPECT_EQ(a.unsafeGetTensorImpl()->version_counter().current_version(),
            v.unsafeGetTensorImpl()->version_counter().current_version());
  Tensor t = at::as_strided(a, {3, 2}, {1, 3});  // a transpose
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_THROW(t.view({6}), c10::Error);  // spans two subspaces: needs reshape
  EXPECT_THROW(at::as_strided(a, {4, 2}, {1, 3}), c10::Error);  // out of bounds of the storage
}

TEST(Ops, MetaTensorsComputeShapesOnly) {
  auto meta = at::TensorOptions().device("meta");
  Tensor a = at::empty({4, 1, 3}, meta);
  Tensor b = at::empty({5, 1}, meta.dtype(at::kDouble));
  Tensor c = at::add(a, b);
  EXPECT_TRUE(c.is_meta());
  EXPECT_EQ(c.sizes(), c10::IntArrayRef({4, 5, 3}));
  EXPECT_EQ(c.scalar_type(), at::kDouble);
  EXPECT_THROW(at::add(at::empty({2}, meta), at::empty({3}, meta)), c10::Error);
  EXPECT_EQ(c.view({20, 3}).sizes(), c10::IntArrayRef({20, 3}));
  EXPECT_THROW(at::empty({2}, meta).copy_(at::empty({3}, meta)), c10::Error);
}

TEST(Ops, DispatchDumpForANativeOp) {
  std::string dump = c10::Dispatcher::singleton().dumpState("aten::add.Tensor");
  EXPECT_NE(dump.find("schema: aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"),
            std::string::npos) << dump;
  EXPECT_NE(dump.find("CPU: registered at "), std::string::npos) << dump;
  EXPECT_NE(dump.find("Meta: registered at "), std::string::npos) << dump;
  EXPECT_NE(dump.find("RegisterCPU.cpp:"), std::string::npos) << dump;
}

}  // namespace

namespace {

// The C++ API of the Scalar overloads and ternary ops: plain numbers resolve to the Scalar
// overloads, and promotion treats them as Python numbers do.
TEST(Ops, ScalarOverloadsFromCpp) {
  Tensor i = at::arange(4);  // int64
  EXPECT_EQ(at::add(i, 2.5).scalar_type(), at::kFloat);
  EXPECT_EQ(values<float>(at::add(i, 2.5, 2))[1], 6.0f);
  EXPECT_EQ(i.mul(3).scalar_type(), at::kLong);
  EXPECT_EQ(values<int64_t>(i.mul(3))[3], 9);
  EXPECT_EQ(at::eq(i, 2).scalar_type(), at::kBool);
  EXPECT_EQ(values<bool>(at::eq(i, 2))[2], true);
  EXPECT_EQ(values<int64_t>(at::pow(2, i))[3], 8);
  EXPECT_THROW(at::pow(i, -1), c10::Error);       // integers to negative powers
  EXPECT_EQ(values<int64_t>(at::remainder(7, i.add(1)))[2], 1);
  Tensor f = arange_float({4});
  f.sub_(1.5);
  EXPECT_EQ(values<float>(f)[0], -1.5f);
}

TEST(Ops, TernaryFromCpp) {
  Tensor f = arange_float({2, 3});
  Tensor mask = at::gt(f, 2);
  Tensor w = at::where(mask, f, -1.0);
  EXPECT_EQ(w.scalar_type(), at::kFloat);
  EXPECT_EQ(values<float>(w), (std::vector<float>{-1, -1, -1, 3, 4, 5}));
  EXPECT_EQ(values<float>(at::clamp(f, 1, 3)), (std::vector<float>{1, 1, 2, 3, 3, 3}));
  EXPECT_EQ(values<float>(at::clamp_min(f, 4)), (std::vector<float>{4, 4, 4, 4, 4, 5}));
  EXPECT_THROW(at::clamp(f, std::optional<at::Scalar>(), std::optional<at::Scalar>()), c10::Error);
  EXPECT_EQ(values<float>(at::lerp(f, at::add(f, 2), 0.5)), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(values<float>(at::addcmul(f, f, f, 2))[2], 2.0f + 2 * 2 * 2);
  EXPECT_FLOAT_EQ(values<float>(at::addcdiv(f, f, at::add(f, 1)))[1], 1.5f);
  Tensor m = at::empty({2, 3}, at::TensorOptions().device("meta"));
  Tensor mm = at::where(at::gt(m, 0), m, 2);
  EXPECT_TRUE(mm.is_meta());
  EXPECT_EQ(mm.sizes(), c10::IntArrayRef({2, 3}));
}

}  // namespace

namespace {

TEST(Ops, ReductionsFromCpp) {
  Tensor f = arange_float({2, 3});  // 0 1 2 / 3 4 5
  EXPECT_EQ(values<float>(at::sum(f)), (std::vector<float>{15}));
  EXPECT_EQ(values<float>(f.sum(std::optional<at::IntArrayRef>(std::vector<int64_t>{0}))), (std::vector<float>{3, 5, 7}));
  EXPECT_EQ(at::sum(at::arange(4)).scalar_type(), at::kLong);
  EXPECT_EQ(values<float>(at::mean(f, std::optional<at::IntArrayRef>(std::vector<int64_t>{1}), true)),
            (std::vector<float>{1, 4}));
  EXPECT_EQ(values<float>(at::amax(f, {0})), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(values<float>(at::prod(at::add(f, 1))), (std::vector<float>{720}));
  EXPECT_EQ(values<bool>(at::any(at::gt(f, 4))), (std::vector<bool>{true}));
  EXPECT_EQ(values<int64_t>(at::argmax(f, 1)), (std::vector<int64_t>{2, 2}));
  auto [v, i] = at::min(f, 0);
  EXPECT_EQ(values<float>(v), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(values<int64_t>(i), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_THROW(at::amax(at::empty({0, 3})), c10::Error);
  Tensor m = at::empty({4, 5}, at::TensorOptions().device("meta"));
  EXPECT_EQ(at::sum(m, std::optional<at::IntArrayRef>(std::vector<int64_t>{1}), true).sizes(),
            c10::IntArrayRef({4, 1}));
}

// Optional dim lists take one number, a list, a vector or an IntArrayRef, as torch's do; one
// number used to dangle (std::optional<IntArrayRef> kept a pointer to a dead temporary).
TEST(Ops, OptionalDimListsFromCpp) {
  Tensor f = arange_float({2, 3, 2});
  const std::vector<float> over_middle{6, 9, 24, 27};
  EXPECT_EQ(values<float>(f.sum({-2})), over_middle);
  EXPECT_EQ(values<float>(at::sum(f, {1})), over_middle);
  const std::vector<int64_t> dims{0, 2};
  EXPECT_EQ(values<float>(f.sum(dims)), (std::vector<float>{14, 22, 30}));
  EXPECT_EQ(values<float>(f.mean({0, 1, 2})), (std::vector<float>{5.5f}));
  EXPECT_EQ(values<float>(f.sum(1)), over_middle);
  EXPECT_EQ(values<float>(at::mean(f, -2)), (std::vector<float>{2, 3, 8, 9}));
  EXPECT_EQ(values<float>(at::amax(f.sum(-1), {0})), (std::vector<float>{13, 17, 21}));
}

// Several-output out= forms return their out tensors (tuples of references), boxed or not.
TEST(Ops, TwoOutputOutFormsFromCpp) {
  Tensor f = arange_float({2, 3});  // 0 1 2 / 3 4 5
  Tensor lo = at::empty({0}), hi = at::empty({0});
  auto [rlo, rhi] = at::aminmax_out(lo, hi, f, 1, false);
  EXPECT_TRUE(rlo.is_same(lo));
  EXPECT_TRUE(rhi.is_same(hi));
  EXPECT_EQ(values<float>(lo), (std::vector<float>{0, 3}));
  EXPECT_EQ(values<float>(hi), (std::vector<float>{2, 5}));
  Tensor var = at::empty({0}), mean = at::empty({0});
  at::var_mean_out(var, mean, f, std::optional<at::IntArrayRef>(std::vector<int64_t>{1}), std::optional<int64_t>(1), false);
  EXPECT_EQ(values<float>(var), (std::vector<float>{1, 1}));
  EXPECT_EQ(values<float>(mean), (std::vector<float>{1, 4}));
  Tensor v = at::empty({0}), i = at::empty({0}, at::TensorOptions().dtype(at::kLong));
  at::cummax_out(v, i, f, 0);
  EXPECT_EQ(values<float>(v), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(values<int64_t>(i), (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(values<float>(at::cumsum(f, 1)), (std::vector<float>{0, 1, 3, 3, 7, 12}));
  Tensor mv = at::empty({0}), mi = at::empty({0}, at::TensorOptions().dtype(at::kLong));
  auto [rv, ri] = at::max_out(mv, mi, f, 1, true);
  EXPECT_TRUE(rv.is_same(mv) && ri.is_same(mi));
  EXPECT_EQ(mv.sizes(), c10::IntArrayRef({2, 1}));
  EXPECT_EQ(values<float>(mv), (std::vector<float>{2, 5}));
  EXPECT_EQ(values<int64_t>(mi), (std::vector<int64_t>{2, 2}));
}

// The Dimname overloads from C++: a dim by name, a names= factory, and torch's errors.
TEST(Ops, DimnameOverloadsFromCpp) {
  const at::Dimname n = at::Dimname::fromString("N"), c = at::Dimname::fromString("C");
  Tensor f = at::refine_names(arange_float({2, 3}), {n, c});  // 0 1 2 / 3 4 5
  Tensor rows = f.sum(std::vector<at::Dimname>{c});
  EXPECT_EQ(values<float>(at::rename(rows, std::nullopt)), (std::vector<float>{3, 12}));
  EXPECT_EQ(at::names_of(rows), (at::DimnameList{n}));
  EXPECT_EQ(at::names_of(f.transpose(n, c)), (at::DimnameList{c, n}));
  EXPECT_EQ(values<float>(at::rename(at::cumsum(f, c), std::nullopt)), (std::vector<float>{0, 1, 3, 3, 7, 12}));
  Tensor z = at::zeros({2, 3}, std::vector<at::Dimname>{n, at::Dimname::wildcard()}, at::TensorOptions());
  EXPECT_EQ(at::names_of(z), (at::DimnameList{n, at::Dimname::wildcard()}));
  EXPECT_EQ(at::dimname_to_position(f, c), 1);
  try {
    f.softmax(at::Dimname::fromString("H"));
    FAIL() << "a missing name was accepted";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Name 'H' not found in Tensor['N', 'C']."), std::string::npos) << e.what();
  }
  EXPECT_THROW(f.sort(c), c10::Error);  // torch registers it and refuses it
}

}  // namespace
