// parseSchema against torch: every schema torch 1.13 reports round-trips through parse and
// print, a hand-checked sample parses to the fields its text states, and the whole set
// parses quickly. Expected values are read off the schema text, not off our output.
#include <aten/schema/SchemaParser.h>

#include <c10/util/Exception.h>

#include <gtest/gtest.h>

#include "test_data.h"

#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

namespace {

using c10::DefaultValue;
using c10::FunctionSchema;
using c10::parseSchema;
using c10::SchemaType;
using Kind = c10::SchemaType::Kind;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
constexpr double kParseBudgetMs = 2000;  // instrumented builds run several times slower
#else
constexpr double kParseBudgetMs = 100;
#endif

TEST(SchemaParser, EveryTorchSchemaRoundTrips) {
  const auto lines = tessera_test::reference_lines("torch_schemas.txt");
  size_t ok = 0;
  std::vector<std::string> failures;
  for (const auto& line : lines) {
    try {
      const FunctionSchema schema = parseSchema(line);
      const std::string printed = schema.toString();
      if (printed != line) {
        failures.push_back("printed differently:\n  torch:   " + line + "\n  tessera: " + printed);
        continue;
      }
      // Printing loses nothing: the printed text parses back to an equal schema.
      if (!(parseSchema(printed) == schema)) {
        failures.push_back("reparse differs: " + line);
        continue;
      }
      ++ok;
    } catch (const c10::Error& e) {
      failures.push_back(std::string("threw: ") + e.what());
    }
  }
  std::cout << "[ schemas  ] " << ok << " of " << lines.size() << " torch schemas round-trip\n";
  RecordProperty("round_tripped", static_cast<int>(ok));
  EXPECT_GT(lines.size(), 4000u);
  EXPECT_EQ(failures.size(), 0u);
  for (size_t i = 0; i < failures.size() && i < 20; ++i) ADD_FAILURE() << failures[i];
}

TEST(SchemaParser, ParsesAllTorchSchemasQuickly) {
  const auto lines = tessera_test::reference_lines("torch_schemas.txt");
  std::vector<FunctionSchema> parsed;
  parsed.reserve(lines.size());
  const auto start = std::chrono::steady_clock::now();
  for (const auto& line : lines) parsed.push_back(parseSchema(line));
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ schemas  ] parsed " << parsed.size() << " schemas in " << ms << " ms\n";
  RecordProperty("parse_ms", static_cast<int>(ms));
  // Timing is reported, not asserted (machines are shared); every schema must parse.
  EXPECT_EQ(parsed.size(), lines.size());
  (void)kParseBudgetMs;
}

TEST(SchemaParser, AddTensor) {
  const auto s = parseSchema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_EQ(s.name(), "aten::add");
  EXPECT_EQ(s.overload_name(), "Tensor");
  EXPECT_EQ(s.full_name(), "aten::add.Tensor");
  EXPECT_EQ(s.ns(), "aten");
  EXPECT_EQ(s.base_name(), "add");
  ASSERT_EQ(s.arguments().size(), 3u);
  EXPECT_EQ(s.arguments()[0].name(), "self");
  EXPECT_TRUE(s.arguments()[0].type().isTensor());
  EXPECT_FALSE(s.arguments()[0].kwarg_only());
  EXPECT_FALSE(s.arguments()[1].kwarg_only());
  const auto& alpha = s.arguments()[2];
  EXPECT_EQ(alpha.name(), "alpha");
  EXPECT_TRUE(alpha.type().is(Kind::Scalar));
  EXPECT_TRUE(alpha.kwarg_only());
  ASSERT_TRUE(alpha.default_value());
  EXPECT_TRUE(alpha.default_value()->isInt());
  EXPECT_EQ(alpha.default_value()->toInt(), 1);
  ASSERT_EQ(s.returns().size(), 1u);
  EXPECT_TRUE(s.returns()[0].type().isTensor());
  EXPECT_EQ(s.returns()[0].name(), "");
  EXPECT_FALSE(s.is_mutable());
  EXPECT_FALSE(s.is_vararg());
  EXPECT_FALSE(s.is_varret());
  EXPECT_EQ(s.argumentIndexWithName("other"), 1u);
  EXPECT_EQ(s.argumentIndexWithName("beta"), std::nullopt);
}

TEST(SchemaParser, InPlaceAliasIsWrite) {
  const auto s = parseSchema("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  EXPECT_TRUE(s.is_mutable());
  const auto* self_alias = s.arguments()[0].alias_info();
  ASSERT_NE(self_alias, nullptr);
  EXPECT_EQ(self_alias->beforeSets(), std::vector<std::string>{"a"});
  EXPECT_EQ(self_alias->afterSets(), std::vector<std::string>{"a"});
  EXPECT_TRUE(self_alias->isWrite());
  EXPECT_EQ(s.arguments()[1].alias_info(), nullptr);
  ASSERT_NE(s.returns()[0].alias_info(), nullptr);
  EXPECT_TRUE(s.returns()[0].alias_info()->isWrite());
  EXPECT_FALSE(s.arguments()[0].is_out());  // written, but positional
}

TEST(SchemaParser, Conv2dFixedSizeListsBroadcastOneValue) {
  const auto s = parseSchema(
      "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, "
      "int[2] dilation=1, int groups=1) -> Tensor");
  const auto& bias = s.arguments()[2];
  EXPECT_TRUE(bias.type().isOptional());
  EXPECT_TRUE(bias.type().elementType().isTensor());
  EXPECT_TRUE(bias.type().isTensorOrOptionalTensor());
  EXPECT_TRUE(bias.default_value()->isNone());
  const auto& stride = s.arguments()[3];
  EXPECT_TRUE(stride.type().isList());
  EXPECT_TRUE(stride.type().isIntList());
  EXPECT_TRUE(stride.type().elementType().is(Kind::Int));
  EXPECT_EQ(stride.N(), 2);
  EXPECT_EQ(stride.type().fixedSize(), 2);
  EXPECT_EQ(stride.default_value()->toIntList(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(stride.default_text(), "1");
  EXPECT_EQ(s.arguments()[4].default_value()->toIntList(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(s.arguments()[6].default_value()->toInt(), 1);
  EXPECT_EQ(s.arguments()[0].N(), std::nullopt);
}

TEST(SchemaParser, LayerNormFloatDefaultsAndNativeSpelling) {
  // native_functions.yaml spells the default 1e-05; torch prints it with 17 digits.
  const auto s = parseSchema(
      "aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
      "float eps=1e-05, bool cudnn_enable=True) -> Tensor");
  const auto& shape = s.arguments()[1];
  EXPECT_TRUE(shape.type().isIntList());
  EXPECT_TRUE(shape.type().elementType().isSymInt());
  EXPECT_TRUE(shape.type().elementType().isIntLike());
  EXPECT_EQ(shape.N(), std::nullopt);
  const auto& eps = s.arguments()[4];
  EXPECT_TRUE(eps.type().is(Kind::Float));
  EXPECT_TRUE(eps.default_value()->isDouble());
  EXPECT_EQ(eps.default_value()->toDouble(), 1e-05);
  EXPECT_EQ(eps.default_text(), "1.0000000000000001e-05");
  EXPECT_TRUE(s.arguments()[5].default_value()->toBool());
  EXPECT_EQ(s.toString(),
            "aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
            "float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor");
}

TEST(SchemaParser, SumDimOptionalFixedListAndDtype) {
  const auto s =
      parseSchema("aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  const auto& dim = s.arguments()[1];
  EXPECT_TRUE(dim.type().isOptional());
  EXPECT_TRUE(dim.type().unwrapOptional().isIntList());
  EXPECT_EQ(dim.N(), 1);
  EXPECT_FALSE(dim.default_value());
  EXPECT_FALSE(s.arguments()[2].default_value()->toBool());
  const auto& dtype = s.arguments()[3];
  EXPECT_TRUE(dtype.kwarg_only());
  EXPECT_TRUE(dtype.type().elementType().is(Kind::ScalarType));
  EXPECT_TRUE(dtype.default_value()->isNone());
}

TEST(SchemaParser, EmptyListAndOptionalFloatDefaults) {
  const auto s = parseSchema("test::f(Tensor self, int[1] dim=[], float? eps=None, int[] sizes=[-2, -1]) -> Tensor");
  EXPECT_EQ(s.ns(), "test");
  EXPECT_EQ(s.overload_name(), "");
  EXPECT_TRUE(s.arguments()[1].default_value()->toIntList().empty());
  EXPECT_EQ(s.arguments()[1].default_text(), "[]");
  EXPECT_TRUE(s.arguments()[2].type().unwrapOptional().is(Kind::Float));
  EXPECT_TRUE(s.arguments()[2].default_value()->isNone());
  EXPECT_EQ(s.arguments()[3].default_value()->toIntList(), (std::vector<int64_t>{-2, -1}));
}

TEST(SchemaParser, MaxDimNamedReturns) {
  const auto s = parseSchema("aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  ASSERT_EQ(s.returns().size(), 2u);
  EXPECT_EQ(s.returns()[0].name(), "values");
  EXPECT_EQ(s.returns()[1].name(), "indices");
  EXPECT_TRUE(s.returns()[1].type().isTensor());
  const auto single = parseSchema("_quantized::add(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc");
  EXPECT_EQ(single.returns()[0].name(), "qc");
  EXPECT_EQ(single.ns(), "_quantized");
  const auto none = parseSchema("aten::_assert_async(Tensor self) -> ()");
  EXPECT_TRUE(none.returns().empty());
}

TEST(SchemaParser, EmptyMemoryFormatTensorOptions) {
  const auto s = parseSchema(
      "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor");
  const Kind kinds[] = {Kind::ScalarType, Kind::Layout, Kind::Device, Kind::Bool, Kind::MemoryFormat};
  for (size_t i = 0; i < 5; ++i) {
    const auto& a = s.arguments()[i + 1];
    EXPECT_TRUE(a.kwarg_only()) << a.name();
    EXPECT_TRUE(a.type().isOptional()) << a.name();
    EXPECT_TRUE(a.type().elementType().is(kinds[i])) << a.name();
    EXPECT_TRUE(a.default_value()->isNone()) << a.name();
  }
  EXPECT_FALSE(s.arguments()[0].kwarg_only());
}

TEST(SchemaParser, EnumConstantDefaultsPrintAsTorchsIntegers) {
  // native_functions.yaml writes `memory_format=contiguous_format`; torch stores and prints 0.
  const auto s = parseSchema(
      "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)");
  const auto& mf = s.arguments()[1];
  EXPECT_TRUE(mf.default_value()->isEnum());
  EXPECT_EQ(mf.default_value()->enumName(), "contiguous_format");
  EXPECT_EQ(mf.default_value()->toInt(), 0);
  EXPECT_EQ(s.toString(), "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)");
  const auto d = parseSchema("test::g(ScalarType? dtype=long, Layout layout=strided, int reduction=Mean) -> ()");
  EXPECT_EQ(d.arguments()[0].default_value()->toInt(), 4);  // ScalarType::Long
  EXPECT_EQ(d.arguments()[1].default_value()->toInt(), 0);  // Layout::Strided
  EXPECT_EQ(d.arguments()[2].default_value()->toInt(), 1);  // Reduction::Mean
}

TEST(SchemaParser, StringDefaultsAndEscapes) {
  const auto s = parseSchema(
      "test::reduce(Tensor self, str reduce=\"mean\", str interp='linear', str chars=\" \\n\\t\\f\\v\") -> Tensor");
  EXPECT_TRUE(s.arguments()[1].type().is(Kind::Str));
  EXPECT_EQ(s.arguments()[1].default_value()->toStringRef(), "mean");
  EXPECT_EQ(s.arguments()[2].default_value()->toStringRef(), "linear");
  EXPECT_EQ(s.arguments()[3].default_value()->toStringRef(), " \n\t\f\v");
  EXPECT_EQ(s.toString(),
            "test::reduce(Tensor self, str reduce=\"mean\", str interp=\"linear\", str chars=\" \\n\\t\\f\\v\") -> Tensor");
  const auto q = parseSchema(R"(aten::_test_string_default(Tensor dummy, str a="\"\'\\") -> Tensor)");
  EXPECT_EQ(q.arguments()[1].default_value()->toStringRef(), "\"'\\");
}

TEST(SchemaParser, ComplexAndScalarDefaults) {
  const auto s = parseSchema("test::c(complex a=2j, complex b=1.+2.j, complex c=-1.5, Scalar d=0.5, Scalar e=1.-3.j) -> ()");
  const auto& a = *s.arguments()[0].default_value();
  EXPECT_TRUE(a.isComplex());
  EXPECT_EQ(a.complexReal(), 0.0);
  EXPECT_EQ(a.complexImag(), 2.0);
  EXPECT_EQ(s.arguments()[1].default_value()->complexReal(), 1.0);
  EXPECT_EQ(s.arguments()[1].default_value()->complexImag(), 2.0);
  EXPECT_EQ(s.arguments()[2].default_value()->complexReal(), -1.5);
  EXPECT_EQ(s.arguments()[2].default_value()->complexImag(), 0.0);
  EXPECT_TRUE(s.arguments()[3].default_value()->isDouble());
  EXPECT_EQ(s.arguments()[4].default_value()->complexImag(), -3.0);
  EXPECT_EQ(s.toString(), "test::c(complex a=0.+2.j, complex b=1.+2.j, complex c=-1.5+0.j, Scalar d=0.5, Scalar e=1.-3.j) -> ()");
}

TEST(SchemaParser, ContainersTypeVariablesAndWildcards) {
  const auto pop = parseSchema("aten::pop.Dict_str(Dict(str, t)(a!) self, str key) -> t(*)");
  const auto& self = pop.arguments()[0];
  EXPECT_TRUE(self.type().is(Kind::Dict));
  EXPECT_TRUE(self.type().contained()[0].is(Kind::Str));
  EXPECT_TRUE(self.type().contained()[1].is(Kind::Var));
  EXPECT_EQ(self.type().contained()[1].name(), "t");
  EXPECT_TRUE(self.alias_info()->isWrite());
  EXPECT_TRUE(pop.returns()[0].alias_info()->isWildcardBefore());

  const auto get = parseSchema("aten::get.str(Dict(str, t) self, str key) -> t(*)?");
  EXPECT_TRUE(get.returns()[0].type().isOptional());
  EXPECT_TRUE(get.returns()[0].alias_info()->isWildcardBefore());

  const auto items = parseSchema("aten::items.str(Dict(str, t) self) -> ((str, t)[])");
  ASSERT_EQ(items.returns().size(), 1u);
  const auto& tuple = items.returns()[0].type().elementType();
  EXPECT_TRUE(tuple.is(Kind::Tuple));
  ASSERT_EQ(tuple.contained().size(), 2u);
  EXPECT_TRUE(tuple.contained()[1].is(Kind::Var));

  const auto split = parseSchema("aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]");
  const auto* a = split.arguments()[0].alias_info();
  EXPECT_EQ(a->beforeSets(), std::vector<std::string>{"a"});
  EXPECT_EQ(a->afterSets(), std::vector<std::string>{"*"});
  EXPECT_TRUE(a->isWildcardAfter());
  EXPECT_FALSE(a->isWrite());
  EXPECT_TRUE(split.arguments()[1].type().isSymInt());
  // The element annotation sits inside a set-less one on the list.
  const auto* list_alias = split.returns()[0].alias_info();
  ASSERT_NE(list_alias, nullptr);
  EXPECT_TRUE(list_alias->beforeSets().empty());
  ASSERT_EQ(list_alias->containedTypes().size(), 1u);
  EXPECT_EQ(list_alias->containedTypes()[0].beforeSets(), std::vector<std::string>{"a"});

  const auto either = parseSchema("aten::cpu(Tensor(a) self) -> Tensor(b|a)");
  EXPECT_EQ(either.returns()[0].alias_info()->beforeSets(), (std::vector<std::string>{"b", "a"}));
}

TEST(SchemaParser, TensorListsAndOutArguments) {
  const auto unscale = parseSchema(
      "aten::_amp_foreach_non_finite_check_and_unscale.out(Tensor[] self, Tensor(b!) found_inf, Tensor inv_scale, *, "
      "Tensor(a!)[] out) -> ()");
  EXPECT_TRUE(unscale.arguments()[0].type().isTensorList());
  const auto& out = unscale.arguments()[3];
  EXPECT_TRUE(out.type().isTensorList());
  EXPECT_TRUE(out.is_write());
  EXPECT_TRUE(out.is_out());
  EXPECT_TRUE(out.alias_info()->isWrite());
  EXPECT_TRUE(unscale.is_mutable());

  const auto index = parseSchema("aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor");
  EXPECT_TRUE(index.arguments()[1].type().isOptionalTensorList());
  EXPECT_FALSE(index.arguments()[1].type().isTensorList());

  const auto list_alias = parseSchema("aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)");
  const auto* la = list_alias.arguments()[0].alias_info();
  EXPECT_EQ(la->beforeSets(), std::vector<std::string>{"a"});
  EXPECT_TRUE(la->containedTypes().empty());
  EXPECT_TRUE(list_alias.arguments()[0].type().elementType().is(Kind::Var));
}

TEST(SchemaParser, NativeOptionalAliasPrintsBeforeQuestionMark) {
  const auto s = parseSchema("test::bn(Tensor input, Tensor?(a!) running_mean, Tensor?(b!) running_var) -> Tensor");
  EXPECT_TRUE(s.arguments()[1].type().isOptional());
  EXPECT_TRUE(s.arguments()[1].alias_info()->isWrite());
  EXPECT_EQ(s.toString(), "test::bn(Tensor input, Tensor(a!)? running_mean, Tensor(b!)? running_var) -> Tensor");
}

TEST(SchemaParser, CustomClassesVarargsAndOtherLeaves) {
  const auto conv = parseSchema(
      "_quantized::conv2d(Tensor qx, __torch__.torch.classes.quantized.Conv2dPackedParamsBase packed_weight, "
      "float output_scale, int output_zero_point) -> Tensor");
  const auto& w = conv.arguments()[1].type();
  EXPECT_TRUE(w.is(Kind::Class));
  EXPECT_EQ(w.name(), "__torch__.torch.classes.quantized.Conv2dPackedParamsBase");

  const auto bcast = parseSchema("prim::BroadcastMKLDNNTensors(...) -> ...");
  EXPECT_TRUE(bcast.is_vararg());
  EXPECT_TRUE(bcast.is_varret());
  EXPECT_TRUE(bcast.arguments().empty());
  EXPECT_TRUE(bcast.returns().empty());
  const auto fmt = parseSchema("aten::format(str self, ...) -> str");
  EXPECT_TRUE(fmt.is_vararg());
  EXPECT_EQ(fmt.arguments().size(), 1u);

  const auto fut = parseSchema("aten::wait(Future(t) self) -> t");
  EXPECT_TRUE(fut.arguments()[0].type().is(Kind::Future));
  EXPECT_TRUE(fut.arguments()[0].type().elementType().is(Kind::Var));
  const auto u = parseSchema("test::u(Union(int, str, NoneType) x, Any y, AnyEnumType z, Stream s, number n) -> None");
  EXPECT_TRUE(u.arguments()[0].type().is(Kind::Union));
  EXPECT_EQ(u.arguments()[0].type().contained().size(), 3u);
  EXPECT_TRUE(u.arguments()[4].type().is(Kind::Scalar));  // `number` is torch's other name for Scalar
  EXPECT_EQ(u.toString(), "test::u(Union(int, str, NoneType) x, Any y, AnyEnumType z, Stream s, Scalar n) -> NoneType");
}

// torch's lexer reads Python's keywords as keywords, never as names: torch._C.parse_schema
// refuses "foo(in x) -> Tensor" ("expected ident but found 'in'") rather than reading `in`
// as a type variable, as an unknown lower-case type name otherwise is.
TEST(SchemaParser, KeywordsAreNeitherTypesNorNames) {
  std::string message = "no error";
  try {
    parseSchema("foo(in x) -> Tensor");
  } catch (const c10::Error& e) {
    message = e.what();
  }
  EXPECT_EQ(message.rfind("schema parse error at column 5: expected a type but found 'in'", 0), 0u) << message;
  for (const char* schema : {"foo(Tensor in) -> Tensor", "in(Tensor x) -> Tensor", "ns::in(Tensor x) -> Tensor",
                             "foo.in(Tensor x) -> Tensor", "foo(Tensor x) -> in", "foo(Tensor x) -> Tensor in",
                             "foo(Tensor(in) x) -> Tensor", "foo(True x) -> Tensor", "foo(int[] is) -> ()",
                             "foo(Tensor None) -> Tensor", "foo(Ellipsis x) -> Tensor"}) {
    EXPECT_THROW(parseSchema(schema), c10::Error) << schema;
  }
  // Still accepted, as by torch: None and NoneType as types, words torch does not reserve,
  // and other lower-case type names as type variables.
  EXPECT_NO_THROW(parseSchema("foo(None x, NoneType y) -> None"));
  EXPECT_NO_THROW(parseSchema("foo(Tensor from, int lambda, bool yield) -> Tensor"));
  const auto var = parseSchema("foo(blah x) -> blah");
  EXPECT_TRUE(var.arguments()[0].type().is(Kind::Var));
  EXPECT_EQ(var.arguments()[0].type().name(), "blah");
}

TEST(SchemaParser, ParseNameAndType) {
  const auto n = c10::parseName("aten::add.Tensor");
  EXPECT_EQ(n.name, "aten::add");
  EXPECT_EQ(n.overload_name, "Tensor");
  EXPECT_EQ(n.str(), "aten::add.Tensor");
  const auto plain = c10::parseName("aten::relu");
  EXPECT_EQ(plain.overload_name, "");
  EXPECT_EQ(plain.str(), "aten::relu");
  EXPECT_EQ(c10::parseName("my_op").name, "my_op");
  EXPECT_EQ(c10::parseType("int[2]"), SchemaType::list(SchemaType(Kind::Int), 2));
  EXPECT_EQ(c10::parseType("Dict(str, Tensor)?"),
            SchemaType::optional(SchemaType::dict(SchemaType(Kind::Str), SchemaType(Kind::Tensor))));
  EXPECT_THROW(c10::parseType("Tensor(a)"), c10::Error);
}

// Found by fuzz_schema_parser (test/fuzz): deep nesting overflowed the stack, and a large
// whole float default printed without its '.', parsing back as an int.
TEST(SchemaParser, HostileNestingIsAnErrorNotAStackOverflow) {
  for (const std::string& deep : {std::string(100000, '(') + "int x) -> ()", "f(int" + std::string(200000, '?') + " x) -> ()",
                                  "f(" + std::string(50000, '(') + ") x) -> ()", "f(int" + std::string(3000, '[') + " x) -> ()"}) {
    EXPECT_THROW(parseSchema("f(" + deep), c10::Error);
  }
  std::string ok = "int";
  for (int i = 0; i < 20; ++i) ok = "(" + ok + ")[]?";
  EXPECT_NO_THROW(parseSchema("f(" + ok + " x) -> ()"));
}

TEST(SchemaParser, LargeWholeFloatDefaultsRoundTrip) {
  for (const char* text : {"f(float x=6e16) -> ()", "f(float x=00060000000937018318.) -> ()",
                           "f(float[] x=[1e10, 2.5e17]) -> ()"}) {
    const auto schema = parseSchema(text);
    EXPECT_EQ(parseSchema(schema.toString()), schema) << schema.toString();
  }
  EXPECT_EQ(parseSchema("f(float x=6e16) -> ()").toString(), "f(float x=60000000000000000.) -> ()");
}

// Found by the short CI fuzz run: an enum constant as the default of a type variable printed
// as its number and parsed back as an int. torch refuses enum defaults there.
TEST(SchemaParser, EnumDefaultsOnlyWhereAnIntFits) {
  for (const char* text : {"f(oobl x=float) -> ()", "f(Any x=float) -> ()", "f(t x=contiguous_format) -> ()",
                           "f(t x=strided) -> ()"}) {
    EXPECT_THROW(parseSchema(text), c10::Error) << text;
  }
  for (const char* text : {"f(ScalarType x=float) -> ()", "f(ScalarType? x=float) -> ()", "f(int x=float) -> ()",
                           "f(MemoryFormat x=contiguous_format) -> ()", "f(Layout x=strided) -> ()"}) {
    const auto schema = parseSchema(text);
    EXPECT_EQ(parseSchema(schema.toString()), schema) << schema.toString();
  }
  EXPECT_EQ(parseSchema("f(ScalarType x=float) -> ()").toString(), "f(ScalarType x=6) -> ()");
  EXPECT_EQ(parseSchema("f(ScalarType x=float) -> ()"), parseSchema("f(ScalarType x=6) -> ()"));
}

// Also from the fuzzer: `int[88888888888883] padding=0` allocated one default per element.
TEST(SchemaParser, FilledListDefaultsAreBounded) {
  EXPECT_THROW(parseSchema("f(int[88888888888883] padding=0) -> ()"), c10::Error);
  EXPECT_THROW(parseSchema("f(int[1025] padding=0) -> ()"), c10::Error);
  EXPECT_EQ(parseSchema("f(int[1024] padding=0) -> ()").arguments()[0].default_value()->toIntList().size(), 1024u);
}

}  // namespace
