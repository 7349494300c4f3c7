// Schemas built in code print as torch would, the pieces (types, alias sets, defaults)
// print and answer predicates correctly, and malformed schemas fail at the right column.
#include <aten/schema/SchemaParser.h>

#include <c10/util/Exception.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

using c10::AliasInfo;
using c10::Argument;
using c10::DefaultValue;
using c10::FunctionSchema;
using c10::SchemaType;
using Kind = c10::SchemaType::Kind;

SchemaType T(Kind k) { return SchemaType(k); }

TEST(SchemaPrinting, BuiltInCode) {
  FunctionSchema add("aten::add", "Tensor",
                     {Argument("self", T(Kind::Tensor)), Argument("other", T(Kind::Tensor)),
                      Argument("alpha", T(Kind::Scalar), DefaultValue::integer(1), /*kwarg_only=*/true)},
                     {Argument("", T(Kind::Tensor))});
  EXPECT_EQ(add.toString(), "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_EQ(add, c10::parseSchema(add.toString()));

  FunctionSchema abs_out("aten::abs", "out",
                         {Argument("self", T(Kind::Tensor)),
                          Argument("out", T(Kind::Tensor), std::nullopt, true, AliasInfo({"a"}, true))},
                         {Argument("", T(Kind::Tensor), std::nullopt, false, AliasInfo({"a"}, true))});
  EXPECT_EQ(abs_out.toString(), "aten::abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
  EXPECT_TRUE(abs_out.is_mutable());
  EXPECT_TRUE(abs_out.arguments()[1].is_out());

  FunctionSchema topk("aten::topk", "",
                      {Argument("self", T(Kind::Tensor)), Argument("k", T(Kind::SymInt)),
                       Argument("dim", T(Kind::Int), DefaultValue::integer(-1)),
                       Argument("largest", T(Kind::Bool), DefaultValue::boolean(true))},
                      {Argument("values", T(Kind::Tensor)), Argument("indices", T(Kind::Tensor))});
  EXPECT_EQ(topk.toString(),
            "aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True) -> (Tensor values, Tensor indices)");
  EXPECT_EQ(topk.full_name(), "aten::topk");

  FunctionSchema nothing("prim::Nop", "", {}, {});
  EXPECT_EQ(nothing.toString(), "prim::Nop() -> ()");
  FunctionSchema var("prim::Var", "", {Argument("x", T(Kind::Tensor))}, {Argument("", T(Kind::Tensor))}, true, true);
  EXPECT_EQ(var.toString(), "prim::Var(Tensor x, ...) -> (Tensor, ...)");
  FunctionSchema all_var("prim::AllVar", "", {}, {}, true, true);
  EXPECT_EQ(all_var.toString(), "prim::AllVar(...) -> ...");
}

TEST(SchemaPrinting, SingleTupleReturnKeepsParentheses) {
  const auto pair = SchemaType::tuple({T(Kind::Str), SchemaType::var("t")});
  FunctionSchema popitem("aten::popitem", "str", {Argument("self", SchemaType::dict(T(Kind::Str), SchemaType::var("t")))},
                         {Argument("", pair)});
  EXPECT_EQ(popitem.toString(), "aten::popitem.str(Dict(str, t) self) -> ((str, t))");
  FunctionSchema items("aten::items", "str", {Argument("self", SchemaType::dict(T(Kind::Str), SchemaType::var("t")))},
                       {Argument("", SchemaType::list(pair))});
  EXPECT_EQ(items.toString(), "aten::items.str(Dict(str, t) self) -> ((str, t)[])");
  EXPECT_EQ(items, c10::parseSchema(items.toString()));
}

TEST(SchemaPrinting, ListDefaults) {
  const auto int2 = SchemaType::list(T(Kind::Int), 2);
  EXPECT_EQ(Argument("stride", int2, DefaultValue::int_list({1, 1})).str(), "int[2] stride=1");
  EXPECT_EQ(Argument("pad", int2, DefaultValue::int_list({1, 2})).str(), "int[2] pad=[1, 2]");
  EXPECT_EQ(Argument("d", SchemaType::list(T(Kind::Int), 1), DefaultValue::int_list({1})).str(), "int[1] d=[1]");
  // Without a fixed size a repeated value stays a list, so that it parses back as one.
  EXPECT_EQ(Argument("s", SchemaType::list(T(Kind::SymInt)), DefaultValue::int_list({3, 3})).str(), "SymInt[] s=[3, 3]");
  EXPECT_EQ(Argument("w", SchemaType::list(T(Kind::Float)), DefaultValue::double_list({1.0, 0.5})).str(),
            "float[] w=[1., 0.5]");
  EXPECT_EQ(Argument("m", SchemaType::list(T(Kind::Bool), 3), DefaultValue::bool_list({true, false, true})).str(),
            "bool[3] m=[True, False, True]");
  EXPECT_EQ(Argument("o", SchemaType::optional(SchemaType::list(T(Kind::Int), 1)), DefaultValue::none()).str(),
            "int[1]? o=None");
  const auto reparsed = c10::parseSchema("t::f(bool[3] m=[True, False, True], float[] w=[1., 0.5]) -> ()");
  EXPECT_EQ(reparsed.arguments()[0].default_value()->toBoolList(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(reparsed.arguments()[1].default_value()->toDoubleList(), (std::vector<double>{1.0, 0.5}));
}

TEST(SchemaPrinting, AliasAnnotations) {
  EXPECT_EQ(AliasInfo({"a"}, false).str(), "(a)");
  EXPECT_EQ(AliasInfo({"a"}, true).str(), "(a!)");
  EXPECT_EQ(AliasInfo({"a"}, false, {"*"}).str(), "(a -> *)");
  EXPECT_EQ(AliasInfo({"*"}, false).str(), "(*)");
  EXPECT_EQ(AliasInfo({"b", "a"}, false).str(), "(b|a)");
  EXPECT_TRUE(AliasInfo({"*"}, false).isWildcardBefore());
  EXPECT_FALSE(AliasInfo({"a"}, false, {"*"}).isWildcardBefore());

  // Tensor(a!)[]: the element's annotation, held by a set-less one on the list.
  AliasInfo container({}, true);
  container.addContainedType(AliasInfo({"a"}, true));
  const Argument out("out", SchemaType::list(T(Kind::Tensor)), std::nullopt, true, container);
  EXPECT_EQ(out.str(), "Tensor(a!)[] out");
  EXPECT_TRUE(out.is_out());
  // t[](a!): the list itself is annotated.
  EXPECT_EQ(Argument("self", SchemaType::list(SchemaType::var("t")), std::nullopt, false, AliasInfo({"a"}, true)).str(),
            "t[](a!) self");
  // Optional: the annotation goes before the '?'.
  EXPECT_EQ(Argument("x", SchemaType::optional(T(Kind::Tensor)), std::nullopt, false, AliasInfo({"a"}, true)).str(),
            "Tensor(a!)? x");
  EXPECT_THROW(Argument("bad", T(Kind::Tensor), std::nullopt, false, container), c10::Error);
}

TEST(SchemaType, PredicatesAndSpelling) {
  EXPECT_TRUE(T(Kind::Int).isIntLike());
  EXPECT_TRUE(T(Kind::SymInt).isIntLike());
  EXPECT_FALSE(T(Kind::Float).isIntLike());
  EXPECT_EQ(T(Kind::SymInt).str(), "SymInt");
  const auto opt_list = SchemaType::list(SchemaType::optional(T(Kind::Tensor)));
  EXPECT_TRUE(opt_list.isOptionalTensorList());
  EXPECT_FALSE(opt_list.isTensorList());
  EXPECT_EQ(opt_list.str(), "Tensor?[]");
  EXPECT_TRUE(SchemaType::list(T(Kind::Tensor), 3).isTensorList());
  EXPECT_EQ(SchemaType::list(T(Kind::Tensor), 3).fixedSize(), 3);
  EXPECT_EQ(SchemaType::list(T(Kind::Tensor)).fixedSize(), std::nullopt);
  EXPECT_EQ(SchemaType::optional(SchemaType::list(T(Kind::SymInt))).str(), "SymInt[]?");
  EXPECT_EQ(SchemaType::future(SchemaType::var("t")).str(), "Future(t)");
  EXPECT_EQ(SchemaType::rref(SchemaType::var("t")).str(), "RRef(t)");
  EXPECT_EQ(SchemaType::union_of({T(Kind::Int), T(Kind::None)}).str(), "Union(int, NoneType)");
  EXPECT_EQ(SchemaType::custom_class("__torch__.torch.classes.c10d.Work").str(), "__torch__.torch.classes.c10d.Work");
  EXPECT_EQ(SchemaType::from_name("number"), T(Kind::Scalar));
  EXPECT_EQ(SchemaType::from_name("None"), T(Kind::None));
  EXPECT_EQ(SchemaType::from_name("Tensr"), std::nullopt);
  EXPECT_FALSE(SchemaType::list(T(Kind::Int), 2) == SchemaType::list(T(Kind::Int)));
  EXPECT_THROW(SchemaType(Kind::List), c10::Error);
  EXPECT_THROW(T(Kind::Int).elementType(), c10::Error);
  EXPECT_EQ(T(Kind::Tensor).unwrapOptional(), T(Kind::Tensor));
}

TEST(SchemaDefaultValue, DoubleSpelling) {
  EXPECT_EQ(c10::format_schema_double(1.0), "1.");
  EXPECT_EQ(c10::format_schema_double(-0.0), "-0.");
  EXPECT_EQ(c10::format_schema_double(0.0), "0.");
  EXPECT_EQ(c10::format_schema_double(-100.0), "-100.");
  EXPECT_EQ(c10::format_schema_double(1e-05), "1.0000000000000001e-05");
  EXPECT_EQ(c10::format_schema_double(0.1), "0.10000000000000001");
  EXPECT_EQ(c10::format_schema_double(1.0 / 3), "0.33333333333333331");
  EXPECT_EQ(c10::format_schema_double(0.5), "0.5");
  // Whole numbers past 1e10 keep a '.' so they parse back as floats (torch prints them so).
  EXPECT_EQ(c10::format_schema_double(1e10), "10000000000.");
  EXPECT_EQ(c10::format_schema_double(6e16), "60000000000000000.");
  EXPECT_EQ(c10::format_schema_double(1e20), "1e+20");
  EXPECT_EQ(c10::format_schema_double(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(c10::format_schema_double(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(SchemaDefaultValue, StringsAndAccessors) {
  EXPECT_EQ(c10::quote_schema_string("mean"), "\"mean\"");
  EXPECT_EQ(c10::quote_schema_string("\"'\\"), R"("\"\'\\")");
  EXPECT_EQ(c10::quote_schema_string(std::string("\x01z", 2)), "\"\\001z\"");
  const auto s = c10::parseSchema(R"(t::f(str a="\001\t", float b=-inf, float c=nan, float d=-0.) -> ())");
  EXPECT_EQ(s.arguments()[0].default_value()->toStringRef(), "\x01\t");
  EXPECT_EQ(s.arguments()[1].default_value()->toDouble(), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(s.arguments()[2].default_value()->toDouble()));
  EXPECT_TRUE(std::signbit(s.arguments()[3].default_value()->toDouble()));
  EXPECT_EQ(s.toString(), R"(t::f(str a="\001\t", float b=-inf, float c=nan, float d=-0.) -> ())");
  EXPECT_EQ(s, c10::parseSchema(s.toString()));

  EXPECT_THROW(DefaultValue::string("x").toInt(), c10::Error);
  EXPECT_THROW(DefaultValue::integer(1).toDouble(), c10::Error);
  EXPECT_THROW(DefaultValue::none().toBool(), c10::Error);
  EXPECT_TRUE(DefaultValue().isNone());
  EXPECT_EQ(DefaultValue::enum_value("long", 4).str(), "4");
  EXPECT_EQ(DefaultValue::complex(1.0, -2.5).str(), "1.-2.5j");
  EXPECT_FALSE(DefaultValue::integer(1) == DefaultValue::floating(1.0));
}

TEST(SchemaPrinting, ConstructorChecks) {
  EXPECT_THROW(FunctionSchema("aten::f", "", {Argument("a", T(Kind::Int), std::nullopt, true), Argument("b", T(Kind::Int))},
                              {}),
               c10::Error);
  EXPECT_THROW(FunctionSchema("", "", {}, {}), c10::Error);
  EXPECT_THROW(FunctionSchema("aten::f", "", {}, {Argument("r", T(Kind::Int), DefaultValue::integer(1))}), c10::Error);
}

// ---- syntax errors: each names its 1-based column ------------------------------------

std::string parse_error(const std::string& schema) {
  try {
    c10::parseSchema(schema);
  } catch (const c10::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << schema;
  return {};
}

void expect_error(const std::string& schema, int column, const std::string& text) {
  const std::string msg = parse_error(schema);
  const std::string head = "schema parse error at column " + std::to_string(column) + ": ";
  EXPECT_EQ(msg.rfind(head, 0), 0u) << msg;
  EXPECT_NE(msg.find(text), std::string::npos) << msg;
  // The caret line points at the same column under the echoed schema.
  EXPECT_NE(msg.find("\n  " + schema + "\n  " + std::string(column - 1, ' ') + "^"), std::string::npos) << msg;
}

TEST(SchemaParserError, FullMessage) {
  EXPECT_EQ(parse_error("aten::add(Tensor self, Tensor other -> Tensor"),
            "schema parse error at column 37: expected ')' but found '-'\n"
            "  aten::add(Tensor self, Tensor other -> Tensor\n"
            "                                      ^");
}

TEST(SchemaParserError, Columns) {
  expect_error("aten::foo(Tensor x) Tensor", 21, "expected '->' but found 'Tensor'");
  expect_error("aten::foo(Tensr x) -> Tensor", 11, "unknown type 'Tensr'");
  expect_error("aten::foo(Tensor x, int y=1.5) -> Tensor", 27, "a default of type int cannot be a float");
  expect_error("aten::foo(Tensor(a x) -> Tensor", 20, "expected ')' but found 'x'");
  expect_error("aten::foo(int[2 x) -> ()", 17, "expected ']'");
  expect_error("aten::foo(Tensor x, *, *, Tensor y) -> ()", 24, "a second '*' marker");
  expect_error("aten::foo(Tensor x) -> Tensor extra junk", 37, "expected end of schema but found 'junk'");
  expect_error("aten::foo(str s=\"abc) -> ()", 17, "unterminated string literal");
  expect_error("aten::foo(Tensor x, ..., int y) -> ()", 26, "'...' must be the last argument");
  expect_error("aten::(Tensor x) -> ()", 7, "expected an operator name after '::' but found '('");
  expect_error("", 1, "expected an operator name but found end of schema");
  expect_error("aten::foo(Tensor x=None) -> ()", 20, "default None needs an optional type");
  expect_error("aten::foo(int[] x=1) -> ()", 19, "needs a fixed list size");
  expect_error("aten::foo(Tensor x) -> (Tensor, Tensor", 39, "expected ')' but found end of schema");
  expect_error("aten::foo(Dict(str) x) -> ()", 19, "expected ','");
  expect_error("aten::foo(int x=99999999999999999999) -> ()", 17, "integer out of range");
  expect_error("aten::foo(Tensor x, Tensor? y=nope) -> ()", 31, "expected a default value");
  expect_error("aten::foo(Dict(str, Tensor(a)) x) -> ()", 21, "alias annotation is not allowed here");
}

TEST(SchemaParserError, ParseName) {
  EXPECT_THROW(c10::parseName("aten::add."), c10::Error);
  EXPECT_THROW(c10::parseName("aten::add(Tensor x)"), c10::Error);
  try {
    c10::parseName("aten::add.Tensor x");
    ADD_FAILURE() << "no error";
  } catch (const c10::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("schema parse error at column 18: expected end of schema", 0), 0u) << e.what();
  }
}

}  // namespace
