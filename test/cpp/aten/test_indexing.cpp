// The indexing operators through the C++ API (at::index, index_put_, gather, scatter_,
// index_add_, masked_fill_, nonzero, take), from_blob's ownership, view(dtype), the default
// dtype, and a stateful boxed kernel registered through torch::Library. Values are worked
// out by hand from the definitions; the Python tests compare everything with torch.
#include <aten/aten.h>
#include <aten/native/factory/TensorFactories.h>
#include <c10/core/DefaultDtype.h>

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace {

std::vector<float> values(const at::Tensor& t) {
  at::Tensor c = t.contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}

std::vector<int64_t> longs(const at::Tensor& t) {
  at::Tensor c = t.contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + c.numel());
}

at::Tensor arange_float(int64_t n) { return at::arange(n, at::TensorOptions(c10::kFloat)); }

at::Tensor longs_tensor(std::vector<int64_t> v) {
  at::Tensor t = at::empty({static_cast<int64_t>(v.size())}, at::TensorOptions(c10::kLong));
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<int64_t>()[i] = v[i];
  return t;
}

TEST(Indexing, IndexWithSeparatedIndicesPutsThemFirst) {
  at::Tensor x = arange_float(24).view({2, 3, 4});
  // x[[0, 1], :, [3, 0]]: indexed dims 0 and 2 are apart, so the broadcast dim goes first.
  std::vector<std::optional<at::Tensor>> idx{longs_tensor({0, 1}), std::nullopt, longs_tensor({3, 0})};
  at::Tensor r = at::index(x, idx);
  EXPECT_EQ(r.sizes().vec(), (std::vector<int64_t>{2, 3}));
  // r[k, j] = x[i0[k], j, i2[k]] = 12 * i0[k] + 4 * j + i2[k]
  EXPECT_EQ(values(r), (std::vector<float>{3, 7, 11, 12, 16, 20}));
  std::vector<std::optional<at::Tensor>> oob{longs_tensor({2})};
  EXPECT_THROW(at::index(x, oob), c10::IndexError);
}

TEST(Indexing, IndexPutAccumulatesRepeats) {
  at::Tensor x = at::zeros({4}, at::TensorOptions(c10::kFloat));
  std::vector<std::optional<at::Tensor>> idx{longs_tensor({1, 1, -1})};
  x.index_put_(idx, at::ones({3}, at::TensorOptions(c10::kFloat)), /*accumulate=*/true);
  EXPECT_EQ(values(x), (std::vector<float>{0, 2, 0, 1}));
}

TEST(Indexing, GatherScatterAndIndexAdd) {
  at::Tensor x = arange_float(6).view({2, 3});
  at::Tensor idx = longs_tensor({2, 0, 1, 1}).view({2, 2});
  EXPECT_EQ(values(at::gather(x, 1, idx)), (std::vector<float>{2, 0, 4, 4}));
  at::Tensor z = at::zeros({2, 3}, at::TensorOptions(c10::kFloat));
  z.scatter_add_(1, idx, at::ones({2, 2}, at::TensorOptions(c10::kFloat)));
  EXPECT_EQ(values(z), (std::vector<float>{1, 0, 1, 0, 2, 0}));
  at::Tensor w = at::zeros({3}, at::TensorOptions(c10::kFloat));
  w.index_add_(0, longs_tensor({2, 2, 0}), arange_float(3), 2);
  EXPECT_EQ(values(w), (std::vector<float>{4, 0, 2}));
  EXPECT_THROW(w.index_add_(0, longs_tensor({3}), arange_float(1)), c10::IndexError);
}

TEST(Indexing, MasksNonzeroAndTake) {
  at::Tensor x = arange_float(6).view({2, 3});
  at::Tensor mask = at::gt(x, 2);
  EXPECT_EQ(longs(at::nonzero(mask)), (std::vector<int64_t>{1, 0, 1, 1, 1, 2}));
  EXPECT_EQ(values(at::masked_select(x, mask)), (std::vector<float>{3, 4, 5}));
  x.masked_fill_(mask, -1);
  EXPECT_EQ(values(x), (std::vector<float>{0, 1, 2, -1, -1, -1}));
  EXPECT_EQ(values(at::take(x, longs_tensor({-1, 0}))), (std::vector<float>{-1, 0}));
  // On Meta the shape of nonzero would depend on the values.
  EXPECT_THROW(at::nonzero(at::empty({3}, at::TensorOptions(c10::kFloat).device(c10::kMeta))),
               c10::NotImplementedError);
}

int g_released = 0;

TEST(FromBlob, TheDeleterRunsWhenTheLastViewGoes) {
  static float data[4] = {1, 2, 3, 4};
  g_released = 0;
  {
    c10::DataPtr ptr(data, data, [](void*) { ++g_released; }, c10::Device(c10::kCPU));
    at::Tensor t = at::from_blob(std::move(ptr), {2, 2}, {1, 2}, c10::kFloat);
    at::Tensor v = t.select(0, 1);
    EXPECT_EQ(values(t), (std::vector<float>{1, 3, 2, 4}));
    t = at::Tensor();
    EXPECT_EQ(g_released, 0);
    EXPECT_EQ(values(v), (std::vector<float>{2, 4}));
  }
  EXPECT_EQ(g_released, 1);
}

TEST(ViewDtype, ReinterpretsBytesAndRescalesTheLastDim) {
  at::Tensor x = at::zeros({2, 2}, at::TensorOptions(c10::kInt));
  at::Tensor b = x.view(c10::kByte);
  EXPECT_EQ(b.sizes().vec(), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(b.strides().vec(), (std::vector<int64_t>{8, 1}));
  b.data_ptr<uint8_t>()[4] = 1;  // little endian: x[0][1] becomes 1
  EXPECT_EQ(x.data_ptr<int32_t>()[1], 1);
  EXPECT_THROW(x.t().view(c10::kByte), c10::Error);  // the last dim must be contiguous
}

TEST(DefaultDtype, FactoriesAndPromotionFollowIt) {
  EXPECT_EQ(c10::get_default_dtype(), c10::kFloat);
  c10::set_default_dtype(c10::kDouble);
  EXPECT_EQ(at::empty({1}).scalar_type(), c10::kDouble);
  EXPECT_EQ(at::div(longs_tensor({1}), longs_tensor({2})).scalar_type(), c10::kDouble);
  EXPECT_EQ(c10::get_default_complex_dtype(), c10::kComplexDouble);
  c10::set_default_dtype(c10::kFloat);
  EXPECT_THROW(c10::set_default_dtype(c10::kLong), c10::TypeError);
}

TEST(BoxedCallable, AStatefulKernelSeesTheStack) {
  int calls = 0;
  {
    torch::Library def(torch::Library::DEF, "tessera_cpp_test", std::nullopt, __FILE__, __LINE__);
    def.def("count(Tensor x) -> Tensor");
    def.impl("count", torch::dispatch(c10::DispatchKey::CPU, torch::CppFunction::makeFromBoxedCallable(
                                                                 [&calls](const c10::OperatorHandle&, c10::DispatchKeySet,
                                                                          c10::Stack* stack) {
                                                                   ++calls;
                                                                   at::Tensor x = stack->back().toTensor();
                                                                   stack->pop_back();
                                                                   stack->push_back(at::mul(x, 2));
                                                                 })));
    auto op = c10::Dispatcher::singleton().findSchemaOrThrow("tessera_cpp_test::count", "");
    c10::Stack stack{c10::IValue(arange_float(2))};
    op.callBoxed(&stack);
    EXPECT_EQ(values(stack.back().toTensor()), (std::vector<float>{0, 2}));
  }
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(c10::Dispatcher::singleton().findSchema(c10::OperatorName{"tessera_cpp_test::count", ""}).has_value());
}

}  // namespace
