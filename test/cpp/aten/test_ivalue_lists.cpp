// IValue's lists, tuples and generators, and the Stack helpers of the boxed convention.
#include <aten/core/IValue.h>
#include <c10/core/CPUAllocator.h>

#include "tensor_factory.h"

#include <gtest/gtest.h>

#include <sstream>
#include <tuple>

namespace {

using c10::IValue;
using c10::Stack;
using Tag = c10::IValue::Tag;

at::Tensor make_float(std::vector<int64_t> sizes) { return tessera_test::make_tensor(std::move(sizes)); }

std::string printed(const IValue& v) { return c10::str(v); }

class FixedGenerator final : public c10::GeneratorImpl {
 public:
  FixedGenerator() : GeneratorImpl(c10::kCPU, c10::DispatchKeySet(c10::DispatchKey::CPU)) {}
  void set_current_seed(uint64_t seed) override { seed_ = seed; }
  uint64_t current_seed() const override { return seed_; }
  c10::intrusive_ptr<GeneratorImpl> clone_impl() const override {
    auto copy = c10::make_intrusive<FixedGenerator>();
    copy->seed_ = seed_;
    return copy;
  }

 private:
  uint64_t seed_ = 0;
};

TEST(IValueList, IntList) {
  std::vector<int64_t> src{3, 1, 4};
  IValue v(src);
  EXPECT_TRUE(v.isIntList());
  EXPECT_TRUE(v.isList());
  EXPECT_FALSE(v.isGenericList());
  EXPECT_EQ(v.tagKind(), "int[]");
  EXPECT_EQ(v.toIntList(), c10::IntArrayRef({3, 1, 4}));
  EXPECT_NE(v.toIntList().data(), src.data());  // boxed by copy
  EXPECT_EQ(v.toIntVector(), (std::vector<int64_t>{3, 1, 4}));
  EXPECT_EQ(IValue(c10::IntArrayRef(src)).toIntList(), c10::IntArrayRef({3, 1, 4}));
  EXPECT_TRUE(IValue(std::vector<int64_t>{}).toIntList().empty());

  // The view points into the IValue's payload; copies share it and keep it alive.
  c10::IntArrayRef view = v.toIntList();
  IValue copy = v;
  EXPECT_EQ(copy.toIntList().data(), view.data());
  EXPECT_EQ(v.use_count(), 2u);
  v = IValue();
  EXPECT_EQ(copy.use_count(), 1u);
  EXPECT_EQ(view, c10::IntArrayRef({3, 1, 4}));  // still valid: copy holds the payload
  IValue moved = std::move(copy);
  EXPECT_EQ(moved.toIntList().data(), view.data());  // a move never copies the elements
}

TEST(IValueList, DoubleAndBoolLists) {
  IValue d(std::vector<double>{0.5, -1.0});
  EXPECT_TRUE(d.isDoubleList());
  EXPECT_EQ(d.tagKind(), "float[]");
  EXPECT_EQ(d.toDoubleList(), c10::ArrayRef<double>({0.5, -1.0}));
  double raw[] = {2.0};
  EXPECT_EQ(IValue(c10::ArrayRef<double>(raw)).toDoubleList(), c10::ArrayRef<double>({2.0}));

  IValue b(std::vector<bool>{true, false, true});
  EXPECT_TRUE(b.isBoolList());
  EXPECT_EQ(b.tagKind(), "bool[]");
  EXPECT_EQ(b.toBoolList(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(&IValue(b).toBoolList(), &b.toBoolList());  // a copy shares the vector
}

TEST(IValueList, TensorLists) {
  at::Tensor a = make_float({1}), b = make_float({2});
  {
    IValue v(std::vector<at::Tensor>{a, b});
    EXPECT_TRUE(v.isTensorList());
    EXPECT_EQ(v.tagKind(), "Tensor[]");
    EXPECT_EQ(a.use_count(), 2u);
    ASSERT_EQ(v.toTensorList().size(), 2u);
    EXPECT_TRUE(v.toTensorList()[1].is_same(b));
    IValue copy = v;  // shares the list: no tensor is retained again
    EXPECT_EQ(a.use_count(), 2u);
    std::vector<at::Tensor> tensors = v.to<std::vector<at::Tensor>>();
    EXPECT_EQ(a.use_count(), 3u);
  }
  EXPECT_EQ(a.use_count(), 1u);
  EXPECT_EQ(b.use_count(), 1u);
  std::vector<at::Tensor> src{a};
  EXPECT_TRUE(IValue(c10::ArrayRef<at::Tensor>(src)).toTensorList()[0].is_same(a));

  IValue opt(std::vector<std::optional<at::Tensor>>{a, std::nullopt});
  EXPECT_TRUE(opt.isOptionalTensorList());
  EXPECT_EQ(opt.tagKind(), "Tensor?[]");
  auto items = opt.toOptionalTensorList();
  ASSERT_EQ(items.size(), 2u);
  EXPECT_TRUE(items[0]->is_same(a));
  EXPECT_FALSE(items[1].has_value());
  std::vector<std::optional<at::Tensor>> osrc{std::nullopt};
  EXPECT_FALSE(IValue(c10::ArrayRef<std::optional<at::Tensor>>(osrc)).toOptionalTensorList()[0].has_value());
  // A Tensor[] is accepted where a Tensor?[] is wanted (by copy).
  auto widened = IValue(std::vector<at::Tensor>{a, b}).to<std::vector<std::optional<at::Tensor>>>();
  ASSERT_EQ(widened.size(), 2u);
  EXPECT_TRUE(widened[1]->is_same(b));
}

TEST(IValueList, GenericListHoldsAnything) {
  at::Tensor t = make_float({1});
  IValue v(std::vector<IValue>{IValue(1), IValue("a"), IValue(t), IValue()});
  EXPECT_TRUE(v.isGenericList());
  EXPECT_TRUE(v.isList());
  EXPECT_EQ(v.tagKind(), "list");
  auto items = v.toList();
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[0].toInt(), 1);
  EXPECT_EQ(items[1].toStringRef(), "a");
  EXPECT_TRUE(items[2].toTensor().is_same(t));
  EXPECT_TRUE(items[3].isNone());
  EXPECT_EQ(t.use_count(), 2u);
  EXPECT_EQ(printed(v), "[1, \"a\", Tensor(sizes=[1], dtype=Float, device=cpu), None]");
}

TEST(IValueList, EmptyGenericListFitsEveryTypedList) {
  IValue empty(std::vector<IValue>{});
  EXPECT_TRUE(empty.to<c10::IntArrayRef>().empty());
  EXPECT_TRUE(empty.to<std::vector<int64_t>>().empty());
  EXPECT_TRUE(empty.to<c10::ArrayRef<double>>().empty());
  EXPECT_TRUE(empty.to<std::vector<double>>().empty());
  EXPECT_TRUE(empty.to<std::vector<bool>>().empty());
  EXPECT_TRUE(empty.to<c10::ArrayRef<at::Tensor>>().empty());
  EXPECT_TRUE(empty.to<std::vector<at::Tensor>>().empty());
  EXPECT_TRUE(empty.to<c10::ArrayRef<std::optional<at::Tensor>>>().empty());
  EXPECT_TRUE(empty.to<std::optional<c10::IntArrayRef>>()->empty());
  // A non-empty one has element types to check, and they are not converted.
  EXPECT_THROW(IValue(std::vector<IValue>{IValue(1)}).to<c10::IntArrayRef>(), c10::TypeError);
}

TEST(IValueList, ToListTypes) {
  IValue ints(std::vector<int64_t>{5, 6});
  c10::IntArrayRef view = ints.to<c10::IntArrayRef>();
  EXPECT_EQ(view.data(), ints.toIntList().data());
  EXPECT_EQ(ints.to<std::vector<int64_t>>(), (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(ints.to<std::optional<c10::IntArrayRef>>()->size(), 2u);
  IValue doubles(std::vector<double>{1.5});
  EXPECT_EQ(doubles.to<c10::ArrayRef<double>>().data(), doubles.toDoubleList().data());
  EXPECT_EQ(doubles.to<std::vector<double>>(), std::vector<double>{1.5});
  EXPECT_THROW(ints.to<std::vector<double>>(), c10::TypeError);  // int[] is not float[]
  IValue generic(std::vector<IValue>{IValue(1)});
  EXPECT_EQ(generic.to<c10::ArrayRef<IValue>>().data(), generic.toList().data());
  EXPECT_EQ(generic.to<std::vector<IValue>>().size(), 1u);
}

TEST(IValueList, Tuples) {
  IValue t = IValue::makeTuple({IValue(1), IValue(2.5), IValue("x")});
  EXPECT_TRUE(t.isTuple());
  EXPECT_FALSE(t.isList());
  EXPECT_EQ(t.tagKind(), "tuple");
  auto items = t.toTupleElements();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].toInt(), 1);
  EXPECT_EQ(items[1].toDouble(), 2.5);
  EXPECT_EQ(items[2].toStringRef(), "x");

  at::Tensor a = make_float({3});
  IValue from_std(std::make_tuple(a, int64_t{4}, true));
  ASSERT_TRUE(from_std.isTuple());
  ASSERT_EQ(from_std.toTupleElements().size(), 3u);
  EXPECT_TRUE(from_std.toTupleElements()[0].toTensor().is_same(a));
  EXPECT_EQ(from_std.toTupleElements()[1].toInt(), 4);
  EXPECT_TRUE(from_std.toTupleElements()[2].toBool());

  EXPECT_EQ(printed(IValue::makeTuple({IValue(1), IValue(2.5)})), "(1, 2.5)");
  EXPECT_EQ(printed(IValue::makeTuple({IValue(1)})), "(1,)");
  EXPECT_EQ(printed(IValue::makeTuple({})), "()");
  EXPECT_FALSE(t.equals(IValue(std::vector<IValue>{IValue(1), IValue(2.5), IValue("x")})));  // tuple != list
}

TEST(IValueList, EqualsAndPrints) {
  using V = std::vector<int64_t>;
  EXPECT_TRUE(IValue(V{1, 2}).equals(IValue(V{1, 2})));
  EXPECT_FALSE(IValue(V{1, 2}).equals(IValue(V{1, 2, 3})));
  EXPECT_FALSE(IValue(V{1, 2}).equals(IValue(std::vector<double>{1.0, 2.0})));
  EXPECT_TRUE(IValue(std::vector<bool>{true}).equals(IValue(std::vector<bool>{true})));
  at::Tensor a = make_float({1}), b = make_float({1});
  EXPECT_TRUE(IValue(std::vector<at::Tensor>{a}).equals(IValue(std::vector<at::Tensor>{a})));
  EXPECT_FALSE(IValue(std::vector<at::Tensor>{a}).equals(IValue(std::vector<at::Tensor>{b})));
  using O = std::vector<std::optional<at::Tensor>>;
  EXPECT_TRUE(IValue(O{std::nullopt, a}).equals(IValue(O{std::nullopt, a})));
  EXPECT_FALSE(IValue(O{std::nullopt}).equals(IValue(O{a})));
  IValue nested(std::vector<IValue>{IValue(V{1}), IValue::makeTuple({IValue("s")})});
  IValue nested2(std::vector<IValue>{IValue(V{1}), IValue::makeTuple({IValue("s")})});
  EXPECT_TRUE(nested.equals(nested2));

  EXPECT_EQ(printed(IValue(V{1, 2})), "[1, 2]");
  EXPECT_EQ(printed(IValue(V{})), "[]");
  EXPECT_EQ(printed(IValue(std::vector<double>{1.0, 0.25})), "[1.0, 0.25]");
  EXPECT_EQ(printed(IValue(std::vector<bool>{true, false})), "[true, false]");
  EXPECT_EQ(printed(IValue(O{std::nullopt, at::Tensor()})), "[None, Tensor(undefined)]");
  EXPECT_EQ(printed(IValue(std::vector<at::Tensor>{make_float({2})})), "[Tensor(sizes=[2], dtype=Float, device=cpu)]");
  EXPECT_EQ(printed(nested), "[[1], (\"s\",)]");
}

TEST(IValueGenerator, BoxesTheHandle) {
  at::Generator g = at::make_generator<FixedGenerator>();
  g.set_current_seed(99);
  {
    IValue v(g);
    EXPECT_TRUE(v.isGenerator());
    EXPECT_EQ(v.tagKind(), "Generator");
    EXPECT_EQ(g.use_count(), 2u);
    at::Generator back = v.toGenerator();
    EXPECT_TRUE(back == g);
    EXPECT_EQ(back.current_seed(), 99u);
    EXPECT_EQ(g.use_count(), 3u);
    IValue copy = v;
    EXPECT_EQ(g.use_count(), 4u);
    EXPECT_TRUE(copy.equals(v));
    EXPECT_FALSE(copy.equals(IValue(g.clone())));
    EXPECT_TRUE(v.to<std::optional<at::Generator>>().value() == g);
    EXPECT_EQ(printed(v), "Generator(device=cpu)");
  }
  EXPECT_EQ(g.use_count(), 1u);
  IValue undefined{at::Generator()};
  EXPECT_TRUE(undefined.isGenerator());
  EXPECT_FALSE(undefined.toGenerator().defined());
  IValue undefined_copy = undefined;
  EXPECT_TRUE(undefined_copy.equals(undefined));
  EXPECT_TRUE(IValue(std::optional<at::Generator>()).isNone());
}

TEST(Stack, PushPopDropPeekLast) {
  at::Tensor t = make_float({1});
  Stack stack;
  c10::push(stack, t, 2, 1.5, "s");
  ASSERT_EQ(stack.size(), 4u);
  EXPECT_TRUE(stack[0].isTensor());
  EXPECT_EQ(stack[1].toInt(), 2);
  EXPECT_EQ(c10::peek(stack, 0, 3).toInt(), 2);
  EXPECT_EQ(c10::peek(stack, 2, 3).toStringRef(), "s");
  c10::peek(stack, 1, 3) = IValue(false);  // a reference into the stack
  EXPECT_TRUE(stack[2].isBool());
  const Stack& cstack = stack;
  EXPECT_TRUE(c10::peek(cstack, 0, 4).isTensor());

  auto tail = c10::last(stack, 2);
  ASSERT_EQ(tail.size(), 2u);
  EXPECT_EQ(tail.data(), stack.data() + 2);
  EXPECT_FALSE(tail[0].toBool());

  IValue top = c10::pop(stack);
  EXPECT_EQ(top.toStringRef(), "s");
  EXPECT_EQ(stack.size(), 3u);
  c10::drop(stack, 2);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_EQ(t.use_count(), 2u);
  EXPECT_TRUE(c10::pop(stack).toTensor().is_same(t));
  EXPECT_EQ(t.use_count(), 1u);
  EXPECT_TRUE(stack.empty());
}

TEST(Stack, PopSeveralKeepsOrder) {
  Stack stack;
  torch::jit::push(stack, 1, 2, 3);
  std::vector<IValue> args = torch::jit::pop(stack, 2);
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(args[0].toInt(), 2);
  EXPECT_EQ(args[1].toInt(), 3);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_TRUE(torch::jit::pop(stack, 0).empty());
  at::Stack same_type = stack;
  EXPECT_EQ(same_type.size(), 1u);
}

TEST(Stack, UnderflowIsAnError) {
  Stack stack;
  EXPECT_THROW(c10::pop(stack), c10::Error);
  c10::push(stack, 1);
  EXPECT_THROW(c10::drop(stack, 2), c10::Error);
  EXPECT_THROW(c10::peek(stack, 0, 2), c10::Error);
  EXPECT_THROW(c10::peek(stack, 1, 1), c10::Error);
  EXPECT_THROW(c10::last(stack, 2), c10::Error);
  EXPECT_THROW(c10::pop(stack, 2), c10::Error);
  EXPECT_EQ(stack.size(), 1u);  // nothing was removed by the failed calls
  c10::drop(stack, 0);
  EXPECT_EQ(stack.size(), 1u);
}

}  // namespace

namespace {

// A dim name boxes as its string ("*" for the wildcard, as torch boxes it), a list of names
// as a list of strings; to<> gives back the same interned names.
TEST(IValueList, DimnamesBoxAsStrings) {
  const c10::Dimname n = c10::Dimname::fromString("N");
  IValue one(n);
  EXPECT_TRUE(one.isString());
  EXPECT_EQ(one.toStringRef(), "N");
  EXPECT_EQ(one.to<c10::Dimname>(), n);
  IValue wild{c10::Dimname::wildcard()};
  EXPECT_EQ(wild.toStringRef(), "*");
  EXPECT_TRUE(wild.to<c10::Dimname>().isWildcard());

  const std::vector<c10::Dimname> names{n, c10::Dimname::wildcard(), c10::Dimname::fromString("C")};
  IValue list{c10::ArrayRef<c10::Dimname>(names)};
  EXPECT_TRUE(list.isGenericList());
  EXPECT_EQ(list.to<std::vector<c10::Dimname>>(), names);
  EXPECT_TRUE(IValue(std::vector<IValue>{}).to<std::vector<c10::Dimname>>().empty());
  EXPECT_FALSE(IValue(std::optional<c10::ArrayRef<c10::Dimname>>()).to<std::optional<std::vector<c10::Dimname>>>());
  // a string that is not an identifier is refused as torch refuses it
  EXPECT_THROW(IValue("1a").to<c10::Dimname>(), c10::Error);
}

}  // namespace
