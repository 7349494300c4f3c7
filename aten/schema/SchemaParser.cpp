// The grammar half of the schema parser: names, arguments, types, alias annotations and
// defaults, by recursive descent over SchemaLexer's characters.
#include <aten/schema/SchemaLexer.h>
#include <aten/schema/SchemaParser.h>

#include <c10/util/Exception.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <string_view>
#include <utility>

namespace c10::inline tessera {

namespace {

using Kind = SchemaType::Kind;
using schema_detail::is_digit;
using schema_detail::is_ident_char;
using schema_detail::is_ident_start;
using schema_detail::NumberLiteral;
using schema_detail::SchemaLexer;

// The words torch's schema lexer reads as keywords (Python's and TorchScript's), never as
// names: there `foo(in x) -> Tensor` is an error, not an argument whose type is the type
// variable `in`. None and NoneType may still name a type.
bool is_keyword(std::string_view word) {
  static constexpr std::string_view kKeywords[] = {
      "def",   "if",    "else",   "elif",  "while",    "True", "False", "None",   "NoneType", "and",
      "or",    "not",   "return", "for",   "in",       "is",   "raise", "assert", "break",    "continue",
      "del",   "pass",  "class",  "import", "with",    "as",   "global", "Ellipsis"};
  return std::find(std::begin(kKeywords), std::end(kKeywords), word) != std::end(kKeywords);
}

// A parsed type and the alias annotation written on it, which belongs to the Argument.
struct AnnotatedType {
  SchemaType type;
  std::optional<AliasInfo> alias;
};

class Parser : private SchemaLexer {
 public:
  explicit Parser(std::string_view text) : SchemaLexer(text) {}

  FunctionSchema schema() {
    OperatorName name = operator_name();
    expect('(');
    std::vector<Argument> args;
    bool kwarg_only = false;
    bool is_vararg = false;
    if (!next_is(')')) {
      do {
        skip_ws();
        check_here(!is_vararg, "'...' must be the last argument");
        if (accept("...")) {
          is_vararg = true;
        } else if (next_is('*')) {
          if (kwarg_only) fail(pos_, "a second '*' marker");
          ++pos_;
          kwarg_only = true;
        } else {
          args.push_back(argument(kwarg_only));
        }
      } while (accept(','));
    }
    expect(')');
    expect("->");
    std::vector<Argument> returns;
    bool is_varret = false;
    skip_ws();
    if (accept('(')) {
      if (!next_is(')')) {
        do {
          skip_ws();
          check_here(!is_varret, "'...' must be the last return");
          if (accept("...")) is_varret = true;
          else returns.push_back(return_value());
        } while (accept(','));
      }
      expect(')');
    } else if (accept("...")) {
      is_varret = true;
    } else {
      returns.push_back(return_value());
    }
    expect_end();
    return FunctionSchema(std::move(name.name), std::move(name.overload_name), std::move(args), std::move(returns),
                          is_vararg, is_varret);
  }

  OperatorName operator_name() {
    OperatorName result;
    skip_ws();
    result.name = checked_identifier("an operator name");
    if (accept_raw("::")) result.name += "::" + checked_identifier("an operator name after '::'");
    if (accept_raw(".")) {
      const size_t start = pos_;
      while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
      if (pos_ == start || is_keyword(text_.substr(start, pos_ - start))) {
        expected(start, "an overload name after '.'");
      }
      result.overload_name = std::string(text_.substr(start, pos_ - start));
    }
    return result;
  }

  SchemaType bare_type() {
    const size_t start = skip_ws();
    AnnotatedType t = type();
    if (t.alias) fail(start, "an alias annotation is not allowed here");
    return std::move(t.type);
  }

  void expect_end() {
    if (skip_ws() < text_.size()) expected(pos_, "end of schema");
  }

 private:
  // Types nest by recursion (tuples, Dict(...)) and by suffixes (`[]`, `?`); each level
  // is a stack frame here and in the SchemaType's destructor, so hostile input such as a
  // thousand '(' must end in an error, not a stack overflow (found by fuzz_schema_parser).
  static constexpr int kMaxTypeDepth = 64;
  static constexpr int64_t kMaxFilledList = 1024;
  int type_depth_ = 0;
  void enter_type(size_t at, int extra = 0) {
    if (type_depth_ + extra >= kMaxTypeDepth) fail(at, "types nested more than 64 deep");
  }

  // An identifier that is not one of torch's keywords; `what` as for identifier().
  std::string checked_identifier(const char* what) {
    const size_t start = skip_ws();
    std::string word = identifier(what);
    if (is_keyword(word)) expected(start, what);
    return word;
  }

  // ---- arguments --------------------------------------------------------------------

  Argument argument(bool kwarg_only) {
    skip_ws();
    AnnotatedType t = type();
    std::string name = checked_identifier("an argument name");
    std::optional<DefaultValue> value;
    if (accept('=')) value = default_value(t.type);
    return Argument(std::move(name), std::move(t.type), std::move(value), kwarg_only, std::move(t.alias));
  }

  Argument return_value() {
    skip_ws();
    AnnotatedType t = type();
    std::string name;
    if (next_is_identifier()) name = checked_identifier("a return name");
    return Argument(std::move(name), std::move(t.type), std::nullopt, false, std::move(t.alias));
  }

  // ---- types ------------------------------------------------------------------------

  AnnotatedType type() {
    enter_type(pos_);
    ++type_depth_;
    AnnotatedType result{primary_type(), std::nullopt};
    --type_depth_;
    if (next_is('(')) result.alias = alias_annotation();
    for (int suffixes = 1;; ++suffixes) {
      enter_type(pos_, suffixes);
      if (accept('[')) {
        std::optional<int64_t> size;
        if (skip_ws() < text_.size() && is_digit(text_[pos_])) size = integer_literal();
        expect(']');
        result.type = SchemaType::list(std::move(result.type), size);
        std::optional<AliasInfo> own;
        if (next_is('(')) own = alias_annotation();
        if (result.alias) {
          // The element's annotation moves inside one on the list, as in torch: writing an
          // element writes the list.
          if (!own) own = AliasInfo({}, result.alias->isWrite());
          own->addContainedType(std::move(*result.alias));
        }
        result.alias = std::move(own);
      } else if (accept('?')) {
        result.type = SchemaType::optional(std::move(result.type));
        if (next_is('(')) {
          // `Tensor?(a!)`, as native_functions.yaml writes it; printed as `Tensor(a!)?`.
          if (result.alias) fail(pos_, "a second alias annotation");
          result.alias = alias_annotation();
        }
      } else {
        return result;
      }
    }
  }

  SchemaType primary_type() {
    const size_t start = skip_ws();
    if (accept('(')) {
      std::vector<SchemaType> elements;
      if (!next_is(')')) {
        do elements.push_back(bare_type());
        while (accept(','));
      }
      expect(')');
      return SchemaType::tuple(std::move(elements));
    }
    std::string name = identifier("a type");
    if (name != "None" && name != "NoneType" && is_keyword(name)) expected(start, "a type");
    if (pos_ < text_.size() && text_[pos_] == '.') {
      while (accept_raw(".")) {
        if (pos_ >= text_.size() || !is_ident_start(text_[pos_])) expected(pos_, "a class name after '.'");
        name += '.';
        while (pos_ < text_.size() && is_ident_char(text_[pos_])) name += text_[pos_++];
      }
      return SchemaType::custom_class(std::move(name));
    }
    if (name == "Dict") {
      expect('(');
      SchemaType key = bare_type();
      expect(',');
      SchemaType value = bare_type();
      expect(')');
      return SchemaType::dict(std::move(key), std::move(value));
    }
    if (name == "Future" || name == "RRef") {
      expect('(');
      SchemaType element = bare_type();
      expect(')');
      return name == "Future" ? SchemaType::future(std::move(element)) : SchemaType::rref(std::move(element));
    }
    if (name == "Union") {
      expect('(');
      std::vector<SchemaType> alternatives;
      do alternatives.push_back(bare_type());
      while (accept(','));
      expect(')');
      return SchemaType::union_of(std::move(alternatives));
    }
    if (auto leaf = SchemaType::from_name(name)) return std::move(*leaf);
    // torch's convention: an unknown lower-case name is a type variable (t, t1, tVal).
    if (std::islower(static_cast<unsigned char>(name[0]))) return SchemaType::var(std::move(name));
    fail(start, "unknown type '" + name + "'");
  }

  // `(a)`, `(a!)`, `(a|b)`, `(a -> *)`, `(*)`.
  AliasInfo alias_annotation() {
    expect('(');
    std::vector<std::string> before = alias_sets();
    const bool is_write = accept('!');
    std::vector<std::string> after;
    if (accept("->")) after = alias_sets();
    expect(')');
    return AliasInfo(std::move(before), is_write, std::move(after));
  }

  std::vector<std::string> alias_sets() {
    std::vector<std::string> sets;
    do {
      if (accept('*')) sets.emplace_back(AliasInfo::kWildcard);
      else sets.push_back(checked_identifier("an alias set name or '*'"));
    } while (accept('|'));
    return sets;
  }

  // ---- defaults ---------------------------------------------------------------------

  DefaultValue default_value(const SchemaType& declared) {
    const size_t start = skip_ws();
    const SchemaType& type = declared.unwrapOptional();
    const bool loose = type.is(Kind::Any) || type.is(Kind::Var) || type.is(Kind::Union);
    if (accept_word("None")) {
      if (!declared.isOptional() && !type.is(Kind::None) && !loose) {
        fail(start, "default None needs an optional type, not " + declared.str());
      }
      return DefaultValue::none();
    }
    if (type.isList() && accept('[')) {
      std::vector<DefaultValue> items;
      if (!next_is(']')) {
        do items.push_back(scalar_default(type.elementType(), skip_ws()));
        while (accept(','));
      }
      expect(']');
      return list_default(type, std::move(items), start);
    }
    if (type.isList()) {
      // `int[2] stride=1` means [1, 1]: one value fills a fixed-size list.
      DefaultValue one = scalar_default(type.elementType(), start);
      const auto n = type.fixedSize();
      if (!n) fail(start, "a single-value default needs a fixed list size, as in int[2]");
      // The list is built here, one value per element: a hostile size must not allocate.
      if (*n > kMaxFilledList) fail(start, "a single-value default for a list of more than 1024 elements");
      return list_default(type, std::vector<DefaultValue>(static_cast<size_t>(*n), one), start);
    }
    return scalar_default(type, start);
  }

  DefaultValue list_default(const SchemaType& list, std::vector<DefaultValue> items, size_t start) {
    const SchemaType& element = list.elementType();
    if (element.isIntLike()) {
      std::vector<int64_t> ints;
      for (const auto& v : items) ints.push_back(v.toInt());
      return DefaultValue::int_list(std::move(ints));
    }
    if (element.is(Kind::Float)) {
      std::vector<double> doubles;
      for (const auto& v : items) doubles.push_back(v.toDouble());
      return DefaultValue::double_list(std::move(doubles));
    }
    if (element.is(Kind::Bool)) {
      std::vector<bool> bools;
      for (const auto& v : items) bools.push_back(v.toBool());
      return DefaultValue::bool_list(bools);
    }
    fail(start, "list defaults are supported for int, SymInt, float and bool lists, not " + list.str());
  }

  // One constant, converted to what `type` holds.
  DefaultValue scalar_default(const SchemaType& type, size_t start) {
    const Kind k = type.kind();
    const bool loose = k == Kind::Any || k == Kind::Var || k == Kind::Union;
    const bool int_like = type.isIntLike() || k == Kind::ScalarType || k == Kind::Layout ||
                          k == Kind::MemoryFormat || k == Kind::QScheme;
    auto mismatch = [&](const char* what) {
      fail(start, std::string("a default of type ") + type.str() + " cannot be " + what);
    };
    if (accept_word("True") || accept_word("False")) {
      if (k != Kind::Bool && k != Kind::Scalar && !loose) mismatch("a bool");
      return DefaultValue::boolean(text_[start] == 'T');
    }
    if (next_is('"') || next_is('\'')) {
      if (k != Kind::Str && !loose) mismatch("a string");
      return DefaultValue::string(string_literal());
    }
    if (next_is_identifier()) {
      const std::string word = identifier("a default value");
      if (word == "inf" || word == "nan") {
        if (k != Kind::Float && k != Kind::Scalar && !loose) mismatch("a float");
        return DefaultValue::floating(word == "inf" ? std::numeric_limits<double>::infinity()
                                                    : std::numeric_limits<double>::quiet_NaN());
      }
      auto constant = DefaultValue::from_enum_name(word);
      if (!constant) expected(start, "a default value");
      // Only where an int fits, as in torch (which refuses `Any x=float`): the constant is
      // printed as its number, and must parse back as the same default.
      if (!int_like) mismatch("an enum constant");
      return std::move(*constant);
    }
    const bool negative = accept('-');
    if (negative && skip_ws() < text_.size() && text_.compare(pos_, 3, "inf") == 0 &&
        (k == Kind::Float || k == Kind::Scalar)) {
      pos_ += 3;
      return DefaultValue::floating(-std::numeric_limits<double>::infinity());
    }
    NumberLiteral n = number(negative);
    if (k == Kind::Complex || n.is_complex) {
      if (k != Kind::Complex && k != Kind::Scalar && !loose) mismatch("a complex number");
      return DefaultValue::complex(n.real, n.imag);
    }
    if (k == Kind::Float) return DefaultValue::floating(n.real);
    if (!n.is_integer) {
      if (k != Kind::Scalar && !loose) mismatch("a float");
      return DefaultValue::floating(n.real);
    }
    if (!int_like && k != Kind::Scalar && !loose) mismatch("a number");
    return DefaultValue::integer(n.integer);
  }
};

}  // namespace

FunctionSchema parseSchema(std::string_view schema) { return Parser(schema).schema(); }

OperatorName parseName(std::string_view name) {
  Parser parser(name);
  OperatorName result = parser.operator_name();
  parser.expect_end();
  return result;
}

SchemaType parseType(std::string_view type) {
  Parser parser(type);
  SchemaType result = parser.bare_type();
  parser.expect_end();
  return result;
}

}  // namespace c10::inline tessera
