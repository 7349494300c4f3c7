// IValue's scalar kinds, tensors, ownership, errors, to<T>() and printing. Lists, tuples
// and the Stack helpers are in test_ivalue_lists.cpp.
#include <aten/core/IValue.h>
#include <c10/core/CPUAllocator.h>

#include "tensor_factory.h"

#include <gtest/gtest.h>

#include <limits>
#include <sstream>

namespace {

using c10::IValue;
using Tag = c10::IValue::Tag;

at::Tensor make_float(std::vector<int64_t> sizes) { return tessera_test::make_tensor(std::move(sizes)); }

std::string printed(const IValue& v) { return c10::str(v); }

// The message of the TypeError that f raises.
template <typename F>
std::string type_error(F f) {
  try {
    f();
  } catch (const c10::TypeError& e) {
    return e.msg();
  }
  return "(no TypeError)";
}

TEST(IValue, IsTwoWords) {
  EXPECT_EQ(sizeof(IValue), 16u);
}

// Any pointer other than a C string would otherwise become a bool.
static_assert(!std::is_constructible_v<IValue, int*>);
static_assert(!std::is_constructible_v<IValue, std::nullptr_t>);
static_assert(std::is_constructible_v<IValue, char*>);
static_assert(std::is_nothrow_move_constructible_v<IValue>);

TEST(IValue, NoneFromDefaultAndNullopt) {
  EXPECT_TRUE(IValue().isNone());
  EXPECT_EQ(IValue().tag(), Tag::None);
  EXPECT_TRUE(IValue(std::nullopt).isNone());
  EXPECT_EQ(IValue().tagKind(), "None");
  EXPECT_FALSE(IValue().isScalar());
  EXPECT_EQ(IValue().use_count(), 0u);
}

TEST(IValue, Numbers) {
  IValue d(2.5);
  EXPECT_TRUE(d.isDouble());
  EXPECT_EQ(d.toDouble(), 2.5);
  EXPECT_EQ(d.tagKind(), "float");

  IValue i(int64_t{-7});
  EXPECT_TRUE(i.isInt());
  EXPECT_EQ(i.toInt(), -7);
  EXPECT_EQ(i.tagKind(), "int");
  // Every integral type but bool is an int.
  EXPECT_EQ(IValue(3).tag(), Tag::Int);
  EXPECT_EQ(IValue(uint8_t{200}).toInt(), 200);
  EXPECT_EQ(IValue(int16_t{-300}).toInt(), -300);
  EXPECT_EQ(IValue(3u).toInt(), 3);
  EXPECT_EQ(IValue(std::numeric_limits<int64_t>::min()).toInt(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(IValue(uint64_t{1} << 62).toInt(), int64_t{1} << 62);
  EXPECT_THROW(IValue(std::numeric_limits<uint64_t>::max()), c10::Error);

  IValue b(true);
  EXPECT_TRUE(b.isBool());
  EXPECT_FALSE(b.isInt());
  EXPECT_TRUE(b.toBool());
  EXPECT_FALSE(IValue(false).toBool());
  EXPECT_EQ(b.tagKind(), "bool");

  IValue z(c10::complex<double>(1.5, -2.0));
  EXPECT_TRUE(z.isComplexDouble());
  EXPECT_EQ(z.toComplexDouble(), c10::complex<double>(1.5, -2.0));
  EXPECT_EQ(z.tagKind(), "complex");
  EXPECT_EQ(IValue(c10::complex<float>(0.5f, 4.0f)).toComplexDouble(), c10::complex<double>(0.5, 4.0));

  for (const IValue& v : {d, i, b, z}) EXPECT_TRUE(v.isScalar()) << v;
}

TEST(IValue, Strings) {
  IValue a(std::string("mean"));
  IValue b("sum");
  IValue c(std::string_view("none"));
  EXPECT_TRUE(a.isString());
  EXPECT_EQ(a.toStringRef(), "mean");
  EXPECT_EQ(b.toStringView(), "sum");
  EXPECT_EQ(c.toStringRef(), "none");
  EXPECT_EQ(a.tagKind(), "str");
  // The view points into the shared payload, which a copy keeps alive.
  IValue copy = a;
  EXPECT_EQ(copy.toStringView().data(), a.toStringView().data());
  EXPECT_EQ(a.use_count(), 2u);
}

TEST(IValue, EnumsAndDevices) {
  IValue st(c10::ScalarType::Half);
  EXPECT_TRUE(st.isScalarType());
  EXPECT_EQ(st.toScalarType(), c10::ScalarType::Half);
  IValue lay(c10::Layout::SparseCsr);
  EXPECT_TRUE(lay.isLayout());
  EXPECT_EQ(lay.toLayout(), c10::Layout::SparseCsr);
  IValue mf(c10::MemoryFormat::ChannelsLast);
  EXPECT_TRUE(mf.isMemoryFormat());
  EXPECT_EQ(mf.toMemoryFormat(), c10::MemoryFormat::ChannelsLast);
  IValue dev(c10::Device(c10::kCUDA, 3));
  EXPECT_TRUE(dev.isDevice());
  EXPECT_EQ(dev.toDevice(), c10::Device("cuda:3"));
  EXPECT_EQ(IValue(c10::Device(c10::kCPU)).toDevice(), c10::Device(c10::kCPU, -1));
  EXPECT_EQ(IValue(c10::Device(c10::kCPU)).toDevice().index(), -1);
  EXPECT_EQ(st.tagKind(), "ScalarType");
  EXPECT_EQ(lay.tagKind(), "Layout");
  EXPECT_EQ(mf.tagKind(), "MemoryFormat");
  EXPECT_EQ(dev.tagKind(), "Device");
}

TEST(IValue, ScalarRoundTrip) {
  EXPECT_EQ(IValue(c10::Scalar(int64_t{5})).tag(), Tag::Int);
  EXPECT_EQ(IValue(c10::Scalar(0.25)).tag(), Tag::Double);
  EXPECT_EQ(IValue(c10::Scalar(true)).tag(), Tag::Bool);
  EXPECT_EQ(IValue(c10::Scalar(c10::complex<double>(1, 2))).tag(), Tag::ComplexDouble);

  for (const c10::Scalar& s : {c10::Scalar(int64_t{-9}), c10::Scalar(0.25), c10::Scalar(true),
                               c10::Scalar(c10::complex<double>(1, 2))}) {
    EXPECT_TRUE(IValue(s).toScalar().equal(s)) << s;
  }
  EXPECT_EQ(type_error([] { IValue("x").toScalar(); }), "expected Scalar but got str");
}

TEST(IValue, TensorHoldsAReference) {
  at::Tensor t = make_float({2, 3});
  {
    IValue v(t);
    EXPECT_TRUE(v.isTensor());
    EXPECT_EQ(v.tagKind(), "Tensor");
    EXPECT_EQ(t.use_count(), 2u);
    EXPECT_TRUE(v.toTensor().is_same(t));
    EXPECT_EQ(&v.toTensor(), &v.toTensor());  // a reference to the stored handle, no copy
    EXPECT_EQ(t.use_count(), 2u);

    IValue copy = v;
    EXPECT_EQ(t.use_count(), 3u);
    EXPECT_EQ(v.use_count(), 3u);
    IValue moved = std::move(copy);
    EXPECT_EQ(t.use_count(), 3u);
    EXPECT_TRUE(copy.isNone());  // NOLINT: moved-from is None by contract
    EXPECT_TRUE(moved.toTensor().is_same(t));

    at::Tensor out = std::move(moved).toTensor();
    EXPECT_TRUE(moved.isNone());  // NOLINT
    EXPECT_EQ(t.use_count(), 3u);
  }
  EXPECT_EQ(t.use_count(), 1u);

  IValue undefined{at::Tensor()};
  EXPECT_TRUE(undefined.isTensor());
  EXPECT_FALSE(undefined.toTensor().defined());
  IValue undefined_copy = undefined;
  EXPECT_TRUE(undefined_copy.equals(undefined));
}

TEST(IValue, AssignmentReleasesTheOldPayload) {
  at::Tensor t = make_float({1});
  at::Tensor u = make_float({1});
  IValue v(t);
  v = IValue(u);
  EXPECT_EQ(t.use_count(), 1u);
  EXPECT_EQ(u.use_count(), 2u);
  IValue w(std::string("abc"));
  v = w;
  EXPECT_EQ(u.use_count(), 1u);
  EXPECT_EQ(w.use_count(), 2u);
  v = v;  // self-assignment keeps the value
  EXPECT_EQ(v.toStringRef(), "abc");
  v = 4;
  EXPECT_EQ(w.use_count(), 1u);
  EXPECT_EQ(v.toInt(), 4);

  IValue a(t), b(2.0);
  a.swap(b);
  EXPECT_EQ(a.toDouble(), 2.0);
  EXPECT_TRUE(b.toTensor().is_same(t));
  EXPECT_EQ(t.use_count(), 2u);
}

TEST(IValue, WrongTypeIsATypeError) {
  IValue i(3);
  EXPECT_THROW(i.toTensor(), c10::TypeError);
  EXPECT_EQ(type_error([&] { i.toTensor(); }), "expected Tensor but got int");
  EXPECT_EQ(type_error([] { IValue(make_float({1})).toInt(); }), "expected int but got Tensor");
  EXPECT_EQ(type_error([&] { i.toDouble(); }), "expected float but got int");
  EXPECT_EQ(type_error([&] { i.toBool(); }), "expected bool but got int");
  EXPECT_EQ(type_error([] { IValue(true).toInt(); }), "expected int but got bool");
  EXPECT_EQ(type_error([] { IValue(1.0).toComplexDouble(); }), "expected complex but got float");
  IValue none, doubles(std::vector<double>{1.0}), ints(std::vector<int64_t>{1}), list(std::vector<IValue>{});
  EXPECT_EQ(type_error([&] { none.toStringRef(); }), "expected str but got None");
  EXPECT_EQ(type_error([&] { i.toScalarType(); }), "expected ScalarType but got int");
  EXPECT_EQ(type_error([&] { i.toLayout(); }), "expected Layout but got int");
  EXPECT_EQ(type_error([&] { i.toMemoryFormat(); }), "expected MemoryFormat but got int");
  EXPECT_EQ(type_error([] { IValue("cpu").toDevice(); }), "expected Device but got str");
  EXPECT_EQ(type_error([&] { i.toGenerator(); }), "expected Generator but got int");
  EXPECT_EQ(type_error([&] { doubles.toIntList(); }), "expected int[] but got float[]");
  EXPECT_EQ(type_error([&] { doubles.toIntVector(); }), "expected int[] but got float[]");
  EXPECT_EQ(type_error([&] { ints.toDoubleList(); }), "expected float[] but got int[]");
  EXPECT_EQ(type_error([&] { i.toBoolList(); }), "expected bool[] but got int");
  EXPECT_EQ(type_error([&] { i.toTensorList(); }), "expected Tensor[] but got int");
  EXPECT_EQ(type_error([&] { i.toOptionalTensorList(); }), "expected Tensor?[] but got int");
  EXPECT_EQ(type_error([&] { ints.toList(); }), "expected list but got int[]");
  EXPECT_EQ(type_error([&] { list.toTupleElements(); }), "expected tuple but got list");
  // A failed check leaves the value alone.
  EXPECT_EQ(i.toInt(), 3);
}

TEST(IValue, ToConvertsToKernelParameterTypes) {
  at::Tensor t = make_float({2});
  EXPECT_TRUE(IValue(t).to<at::Tensor>().is_same(t));
  IValue tv(t);
  EXPECT_EQ(&tv.to<const at::Tensor&>(), &tv.toTensor());
  EXPECT_EQ(IValue(7).to<int64_t>(), 7);
  EXPECT_EQ(IValue(7).to<int32_t>(), 7);
  EXPECT_EQ(IValue(-1).to<int8_t>(), -1);
  EXPECT_EQ(IValue(255).to<uint8_t>(), 255);
  EXPECT_THROW(IValue(256).to<uint8_t>(), c10::Error);
  EXPECT_THROW(IValue(-1).to<uint32_t>(), c10::Error);
  EXPECT_THROW(IValue(int64_t{1} << 40).to<int32_t>(), c10::Error);
  EXPECT_EQ(IValue(2.5).to<double>(), 2.5);
  EXPECT_EQ(IValue(3).to<double>(), 3.0);  // int -> float, as TorchScript allows
  EXPECT_THROW(IValue(true).to<double>(), c10::TypeError);
  EXPECT_TRUE(IValue(false).to<bool>() == false);
  EXPECT_THROW(IValue(1).to<bool>(), c10::TypeError);
  EXPECT_EQ(IValue(2).to<c10::complex<double>>(), c10::complex<double>(2.0, 0.0));
  EXPECT_EQ(IValue(0.5).to<c10::complex<double>>(), c10::complex<double>(0.5, 0.0));
  EXPECT_EQ(IValue("mean").to<std::string>(), "mean");
  IValue s("sum");
  EXPECT_EQ(s.to<std::string_view>(), "sum");
  EXPECT_TRUE(IValue(4).to<c10::Scalar>().equal(c10::Scalar(int64_t{4})));
  EXPECT_TRUE(IValue(true).to<c10::Scalar>().equal(c10::Scalar(true)));
  EXPECT_TRUE(IValue(1.5).to<c10::Scalar>().equal(c10::Scalar(1.5)));
  EXPECT_EQ(IValue(c10::kInt).to<c10::ScalarType>(), c10::ScalarType::Int);
  EXPECT_EQ(IValue(c10::kStrided).to<c10::Layout>(), c10::Layout::Strided);
  EXPECT_EQ(IValue(c10::MemoryFormat::Preserve).to<c10::MemoryFormat>(), c10::MemoryFormat::Preserve);
  EXPECT_EQ(IValue(c10::Device("meta")).to<c10::Device>(), c10::Device(c10::kMeta));
  // t, tv, the temporary IValue and the copy to<IValue>() returns.
  EXPECT_EQ(IValue(t).to<IValue>().toTensor().use_count(), 4u);
  EXPECT_THROW(IValue(1.5).to<int64_t>(), c10::TypeError);       // no float -> int narrowing
  EXPECT_THROW(IValue("1").to<int64_t>(), c10::TypeError);
}

TEST(IValue, OptionalConversions) {
  EXPECT_TRUE(IValue(std::optional<int64_t>()).isNone());
  EXPECT_EQ(IValue(std::optional<int64_t>(3)).toInt(), 3);
  EXPECT_TRUE(IValue(std::optional<at::Tensor>()).isNone());
  at::Tensor t = make_float({1});
  EXPECT_TRUE(IValue(std::optional<at::Tensor>(t)).toTensor().is_same(t));
  EXPECT_EQ(IValue(std::optional<c10::ScalarType>(c10::kDouble)).toScalarType(), c10::kDouble);

  IValue none;
  EXPECT_EQ(none.to<std::optional<int64_t>>(), std::nullopt);
  EXPECT_EQ(none.to<std::optional<double>>(), std::nullopt);
  EXPECT_FALSE(none.to<std::optional<at::Tensor>>().has_value());
  EXPECT_FALSE(none.to<std::optional<c10::IntArrayRef>>().has_value());
  EXPECT_FALSE(none.to<std::optional<c10::ScalarType>>().has_value());
  EXPECT_FALSE(none.to<std::optional<c10::MemoryFormat>>().has_value());
  EXPECT_FALSE(none.to<std::optional<at::Generator>>().has_value());
  EXPECT_FALSE(none.to<std::optional<c10::Scalar>>().has_value());
  EXPECT_EQ(IValue(5).to<std::optional<int64_t>>(), std::optional<int64_t>(5));
  EXPECT_EQ(IValue(5).to<std::optional<double>>(), std::optional<double>(5.0));
  EXPECT_TRUE(IValue(t).to<std::optional<at::Tensor>>()->is_same(t));
  EXPECT_EQ(IValue(c10::Device("cuda:0")).to<std::optional<c10::Device>>(), c10::Device(c10::kCUDA, 0));
  // A non-None value of the wrong kind is still an error.
  EXPECT_THROW(IValue("x").to<std::optional<int64_t>>(), c10::TypeError);
}

TEST(IValue, EqualsComparesDeeply) {
  at::Tensor t = make_float({1});
  EXPECT_TRUE(IValue().equals(IValue(std::nullopt)));
  EXPECT_TRUE(IValue(3).equals(IValue(int64_t{3})));
  EXPECT_FALSE(IValue(3).equals(IValue(4)));
  EXPECT_FALSE(IValue(1).equals(IValue(1.0)));  // kinds differ
  EXPECT_FALSE(IValue(1).equals(IValue(true)));
  EXPECT_TRUE(IValue(0.5).equals(IValue(0.5)));
  EXPECT_FALSE(IValue(std::numeric_limits<double>::quiet_NaN()).equals(IValue(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_TRUE(IValue(c10::complex<double>(1, 2)).equals(IValue(c10::complex<double>(1, 2))));
  EXPECT_FALSE(IValue(c10::complex<double>(1, 2)).equals(IValue(c10::complex<double>(1, 3))));
  EXPECT_TRUE(IValue("a").equals(IValue(std::string("a"))));  // separate payloads, same text
  EXPECT_FALSE(IValue("a").equals(IValue("b")));
  EXPECT_TRUE(IValue(c10::kFloat).equals(IValue(c10::ScalarType::Float)));
  EXPECT_FALSE(IValue(c10::kFloat).equals(IValue(c10::kDouble)));
  EXPECT_FALSE(IValue(c10::Layout::Strided).equals(IValue(c10::MemoryFormat::Contiguous)));  // both 0
  EXPECT_TRUE(IValue(c10::Device("cuda:1")).equals(IValue(c10::Device(c10::kCUDA, 1))));
  EXPECT_FALSE(IValue(c10::Device("cuda:1")).equals(IValue(c10::Device("cuda:2"))));
  EXPECT_TRUE(IValue(t).equals(IValue(t)));
  EXPECT_FALSE(IValue(t).equals(IValue(make_float({1}))));  // identity, not contents
}

TEST(IValue, Prints) {
  EXPECT_EQ(printed(IValue()), "None");
  EXPECT_EQ(printed(IValue(3)), "3");
  EXPECT_EQ(printed(IValue(-12)), "-12");
  EXPECT_EQ(printed(IValue(2.5)), "2.5");
  EXPECT_EQ(printed(IValue(2.0)), "2.0");
  EXPECT_EQ(printed(IValue(0.1)), "0.1");
  EXPECT_EQ(printed(IValue(1e300)), "1e+300");
  EXPECT_EQ(printed(IValue(-std::numeric_limits<double>::infinity())), "-inf");
  EXPECT_EQ(printed(IValue(std::numeric_limits<double>::quiet_NaN())), "nan");
  EXPECT_EQ(printed(IValue(true)), "true");
  EXPECT_EQ(printed(IValue(false)), "false");
  EXPECT_EQ(printed(IValue(c10::complex<double>(1, 2))), "(1+2j)");
  EXPECT_EQ(printed(IValue(c10::complex<double>(1.5, -0.5))), "(1.5-0.5j)");
  EXPECT_EQ(printed(IValue("mean")), "\"mean\"");
  EXPECT_EQ(printed(IValue("say \"hi\"\n")), "\"say \\\"hi\\\"\\n\"");
  EXPECT_EQ(printed(IValue(c10::kFloat)), "Float");
  // Layouts and memory formats print as Python's repr does (c10's operator<<).
  EXPECT_EQ(printed(IValue(c10::Layout::Strided)), "torch.strided");
  EXPECT_EQ(printed(IValue(c10::MemoryFormat::ChannelsLast)), "torch.channels_last");
  EXPECT_EQ(printed(IValue(c10::Device("cuda:1"))), "cuda:1");
  EXPECT_EQ(printed(IValue(c10::Device(c10::kCPU))), "cpu");
  EXPECT_EQ(printed(IValue(make_float({2, 3}))), "Tensor(sizes=[2, 3], dtype=Float, device=cpu)");
  EXPECT_EQ(printed(IValue(at::Tensor())), "Tensor(undefined)");
  EXPECT_EQ(printed(IValue(at::Generator())), "Generator(undefined)");
  std::ostringstream tag;
  tag << Tag::OptionalTensorList;
  EXPECT_EQ(tag.str(), "Tensor?[]");
}

}  // namespace
