#include <aten/core/IValue.h>

#include <aten/core/CustomClass.h>

#include <c10/util/Demangle.h>

#include <charconv>
#include <cmath>

namespace c10::inline tessera {

IValue::IValue(const Scalar& s) {
  if (s.isBoolean()) {
    *this = IValue(s.toBool());
  } else if (s.isIntegral(false)) {
    *this = IValue(s.toLong());
  } else if (s.isFloatingPoint()) {
    *this = IValue(s.toDouble());
  } else {
    *this = IValue(s.toComplexDouble());
  }
}

IValue::IValue(std::vector<IValue> v) : IValue(Tag::GenericList, std::move(v)) {}

IValue::IValue(Dimname name) : IValue(name.isWildcard() ? std::string("*") : std::string(name.str())) {}

IValue::IValue(ArrayRef<Dimname> names) {
  std::vector<IValue> boxed;
  boxed.reserve(names.size());
  for (Dimname name : names) boxed.emplace_back(name);
  *this = IValue(std::move(boxed));
}

Dimname IValue::toDimname() const {
  const std::string& text = toStringRef();
  return text == "*" ? Dimname::wildcard() : Dimname::fromString(text);
}

std::vector<Dimname> IValue::toDimnameVector() const {
  std::vector<Dimname> names;
  for (const IValue& element : toList()) names.push_back(element.toDimname());
  return names;
}

IValue IValue::makeTuple(std::vector<IValue> elements) {
  return IValue(Tag::Tuple, std::move(elements));
}

Scalar IValue::toScalar() const {
  switch (tag_) {
    case Tag::Int: return Scalar(payload_.u.as_int);
    case Tag::Double: return Scalar(payload_.u.as_double);
    case Tag::Bool: return Scalar(payload_.u.as_bool);
    case Tag::ComplexDouble: return Scalar(toComplexDouble());
    default: throw_wrong_tag("Scalar");
  }
}

ArrayRef<IValue> IValue::toList() const { return elements<IValue>(Tag::GenericList); }
ArrayRef<IValue> IValue::toTupleElements() const { return elements<IValue>(Tag::Tuple); }

std::string_view IValue::kindName(Tag tag) {
  switch (tag) {
    case Tag::None: return "None";
    case Tag::Tensor: return "Tensor";
    case Tag::Double: return "float";
    case Tag::ComplexDouble: return "complex";
    case Tag::Int: return "int";
    case Tag::Bool: return "bool";
    case Tag::String: return "str";
    case Tag::ScalarType: return "ScalarType";
    case Tag::Layout: return "Layout";
    case Tag::MemoryFormat: return "MemoryFormat";
    case Tag::Device: return "Device";
    case Tag::Generator: return "Generator";
    case Tag::IntList: return "int[]";
    case Tag::DoubleList: return "float[]";
    case Tag::BoolList: return "bool[]";
    case Tag::TensorList: return "Tensor[]";
    case Tag::OptionalTensorList: return "Tensor?[]";
    case Tag::GenericList: return "list";
    case Tag::Tuple: return "tuple";
    case Tag::Object: return "Object";
  }
  TORCH_INTERNAL_ASSERT(false, "corrupt IValue tag ", static_cast<int>(tag));
}

IValue IValue::makeObject(const CustomClassType& type, intrusive_ptr<torch::CustomClassHolder> object) {
  TORCH_CHECK(object, "cannot box a null ", type.qualified_name, " object");
  IValue v;
  v.adopt(make_intrusive<detail::IValueObject>(&type, std::move(object)));
  v.tag_ = Tag::Object;
  return v;
}

const intrusive_ptr<torch::CustomClassHolder>& IValue::toObjectOf(const std::type_info& type) const {
  const detail::IValueObject& o = object_payload();
  if (C10_UNLIKELY(o.type->cpp_type != type.name())) {
    TORCH_ERROR_WITH(TypeError, "expected ", custom_class_of(type).qualified_name, " but got ",
                     o.type->qualified_name);
  }
  return o.object;
}

void IValue::throw_wrong_tag(std::string_view expected) const {
  TORCH_ERROR_WITH(TypeError, "expected ", expected, " but got ", tagKind());
}

size_t IValue::use_count() const {
  if (tag_ == Tag::Tensor) return payload_.as_tensor.use_count();
  if (is_counted(tag_)) return raw::intrusive_ptr::use_count(payload_.u.as_ptr);
  return 0;
}

namespace {
template <typename T>
bool elementwise_equal(ArrayRef<T> a, ArrayRef<T> b, bool (*eq)(const T&, const T&)) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!eq(a[i], b[i])) return false;
  }
  return true;
}
bool same_tensor(const at::Tensor& a, const at::Tensor& b) { return a.is_same(b); }
bool same_optional_tensor(const std::optional<at::Tensor>& a, const std::optional<at::Tensor>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a.has_value() || a->is_same(*b);
}
bool ivalue_equal(const IValue& a, const IValue& b) { return a.equals(b); }
}  // namespace

bool IValue::equals(const IValue& other) const {
  if (tag_ != other.tag_) return false;
  // Two views of one payload are equal without looking inside (also saves a deep walk).
  if (is_counted(tag_) && payload_.u.as_ptr == other.payload_.u.as_ptr) return true;
  switch (tag_) {
    case Tag::None: return true;
    case Tag::Tensor: return payload_.as_tensor.is_same(other.payload_.as_tensor);
    case Tag::Double: return payload_.u.as_double == other.payload_.u.as_double;
    case Tag::ComplexDouble: return toComplexDouble() == other.toComplexDouble();
    case Tag::Int: return payload_.u.as_int == other.payload_.u.as_int;
    case Tag::Bool: return payload_.u.as_bool == other.payload_.u.as_bool;
    case Tag::String: return toStringRef() == other.toStringRef();
    case Tag::ScalarType:
    case Tag::Layout:
    case Tag::MemoryFormat: return payload_.u.as_int == other.payload_.u.as_int;
    case Tag::Device: return toDevice() == other.toDevice();
    case Tag::Generator: return false;  // distinct impls (the same one returned above)
    case Tag::IntList: return toIntList() == other.toIntList();
    case Tag::DoubleList: return toDoubleList() == other.toDoubleList();
    case Tag::BoolList: return toBoolList() == other.toBoolList();
    case Tag::TensorList: return elementwise_equal(toTensorList(), other.toTensorList(), &same_tensor);
    case Tag::OptionalTensorList:
      return elementwise_equal(toOptionalTensorList(), other.toOptionalTensorList(), &same_optional_tensor);
    case Tag::GenericList: return elementwise_equal(toList(), other.toList(), &ivalue_equal);
    case Tag::Tuple: return elementwise_equal(toTupleElements(), other.toTupleElements(), &ivalue_equal);
    case Tag::Object: return toObject().get() == other.toObject().get();  // identity, as torch's `is`
  }
  TORCH_INTERNAL_ASSERT(false, "corrupt IValue tag ", static_cast<int>(tag_));
}

namespace {
// Shortest text that reads back as the same double, with ".0" kept on whole numbers so a
// float never prints like an int (Python's repr does the same).
void print_double(std::ostream& os, double d, bool force_point) {
  if (std::isnan(d)) {
    os << "nan";
    return;
  }
  if (std::isinf(d)) {
    os << (d < 0 ? "-inf" : "inf");
    return;
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  TORCH_INTERNAL_ASSERT(ec == std::errc(), "to_chars failed on ", d);
  std::string_view text(buf, static_cast<size_t>(end - buf));
  os << text;
  if (force_point && text.find_first_of(".e") == std::string_view::npos) os << ".0";
}

// Python's repr of a complex: (1+2j), (1.5-0.5j).
void print_complex(std::ostream& os, complex<double> z) {
  os << '(';
  print_double(os, z.real(), false);
  os << (std::signbit(z.imag()) && !std::isnan(z.imag()) ? '-' : '+');
  print_double(os, std::fabs(z.imag()), false);
  os << "j)";
}

void print_string(std::ostream& os, std::string_view s) {
  os << '"';
  for (char c : s) {
    if (c == '"' || c == '\\') os << '\\';
    if (c == '\n') {
      os << "\\n";
      continue;
    }
    os << c;
  }
  os << '"';
}

template <typename T, typename F>
void print_list(std::ostream& os, ArrayRef<T> items, F print_one, char open = '[', char close = ']') {
  os << open;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) os << ", ";
    print_one(items[i]);
  }
  // A one-element tuple keeps its comma, as Python writes it.
  if (open == '(' && items.size() == 1) os << ',';
  os << close;
}
}  // namespace

std::ostream& operator<<(std::ostream& os, const IValue& v) {
  using Tag = IValue::Tag;
  auto print_value = [&os](const IValue& e) { os << e; };
  switch (v.tag()) {
    case Tag::None: return os << "None";
    case Tag::Tensor: return os << v.toTensor();
    case Tag::Double: print_double(os, v.toDouble(), true); return os;
    case Tag::ComplexDouble: print_complex(os, v.toComplexDouble()); return os;
    case Tag::Int: return os << v.toInt();
    case Tag::Bool: return os << (v.toBool() ? "true" : "false");
    case Tag::String: print_string(os, v.toStringView()); return os;
    case Tag::ScalarType: return os << v.toScalarType();
    case Tag::Layout: return os << v.toLayout();
    case Tag::MemoryFormat: return os << v.toMemoryFormat();
    case Tag::Device: return os << v.toDevice();
    case Tag::Generator: return os << v.toGenerator();
    case Tag::IntList: return os << v.toIntList();
    case Tag::DoubleList:
      print_list(os, v.toDoubleList(), [&os](double d) { print_double(os, d, true); });
      return os;
    case Tag::BoolList: {
      const std::vector<bool>& bools = v.toBoolList();
      os << '[';
      for (size_t i = 0; i < bools.size(); ++i) os << (i ? ", " : "") << (bools[i] ? "true" : "false");
      return os << ']';
    }
    case Tag::TensorList: return os << v.toTensorList();
    case Tag::OptionalTensorList:
      print_list(os, v.toOptionalTensorList(), [&os](const std::optional<at::Tensor>& t) {
        if (t) os << *t;
        else os << "None";
      });
      return os;
    case Tag::GenericList: print_list(os, v.toList(), print_value); return os;
    case Tag::Tuple: print_list(os, v.toTupleElements(), print_value, '(', ')'); return os;
    case Tag::Object: return os << '<' << v.objectType().qualified_name << " object>";
  }
  TORCH_INTERNAL_ASSERT(false, "corrupt IValue tag ", static_cast<int>(v.tag()));
}

std::ostream& operator<<(std::ostream& os, IValue::Tag tag) { return os << IValue::kindName(tag); }

namespace detail {
void throw_int_out_of_range(int64_t v, size_t bytes, bool is_signed) {
  TORCH_CHECK(false, "value ", v, " is out of range for the ", (is_signed ? "" : "un"), "signed ", bytes * 8,
              "-bit integer the kernel takes");
}
}  // namespace detail

}  // namespace c10::inline tessera
