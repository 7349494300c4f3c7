// c10::IValue: one boxed value of any type an operator schema can name, as the boxed calling
// convention passes arguments and results on a Stack. 16 bytes (payload word + tag); heap
// payloads are counted and never mutated once boxed, so copies share them, moves steal them.
#pragma once

#include <array>
#include <aten/core/Generator.h>
#include <aten/core/Tensor.h>
#include <c10/core/NamedTensor.h>
#include <c10/core/Scalar.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/complex.h>

#include <concepts>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace torch {
// The base of every class a library exposes as a schema type (torch::class_<T>, see
// aten/core/CustomClass.h): quantized::linear's packed weights are one. Held by intrusive_ptr.
class CustomClassHolder : public c10::intrusive_ptr_target {};
}  // namespace torch

namespace c10::inline tessera {

// A registered custom class: its qualified name and methods (aten/core/CustomClass.h).
struct CustomClassType;
// The class registered for C++ type `type`; a TypeError naming the type when there is none.
TORCH_API const CustomClassType& custom_class_of(const std::type_info& type);

class IValue;

namespace detail {
// The heap payloads. Only IValue creates them, and it hands out const views only: that is
// what lets copies of an IValue share one.
struct IValueString final : intrusive_ptr_target {
  explicit IValueString(std::string s) : value(std::move(s)) {}
  std::string value;
};
struct IValueComplex final : intrusive_ptr_target {
  explicit IValueComplex(complex<double> z) : value(z) {}
  complex<double> value;
};
template <typename T>
struct IValueVector final : intrusive_ptr_target {
  explicit IValueVector(std::vector<T> v) : elements(std::move(v)) {}
  std::vector<T> elements;
};

// A custom-class object and the class it was boxed as (the static type, as torch does: a
// kernel returning intrusive_ptr<Base> boxes a Base whatever the object's dynamic type).
struct IValueObject final : intrusive_ptr_target {
  IValueObject(const CustomClassType* t, intrusive_ptr<torch::CustomClassHolder> o) : type(t), object(std::move(o)) {}
  const CustomClassType* type;
  intrusive_ptr<torch::CustomClassHolder> object;
};

template <typename T>
struct ivalue_is_optional : std::false_type {};
template <typename T>
struct ivalue_is_optional<std::optional<T>> : std::true_type {};
template <typename T>
struct ivalue_is_bool_array : std::false_type {};
template <size_t N>
struct ivalue_is_bool_array<std::array<bool, N>> : std::true_type {};
template <typename T>
struct ivalue_is_object_ptr : std::false_type {};
template <typename T>
  requires std::is_base_of_v<torch::CustomClassHolder, T>
struct ivalue_is_object_ptr<intrusive_ptr<T>> : std::true_type {};
}  // namespace detail

class TORCH_API IValue final {
 public:
  enum class Tag : uint8_t {
    None, Tensor, Double, ComplexDouble, Int, Bool, String, ScalarType, Layout, MemoryFormat, Device,
    Generator, IntList, DoubleList, BoolList, TensorList, OptionalTensorList, GenericList, Tuple, Object,
  };

  IValue() noexcept = default;
  IValue(std::nullopt_t) noexcept {}  // NOLINT: the constructors are implicit, as torch's
  IValue(const IValue& other) { copy_from(other); }
  IValue(IValue&& other) noexcept { steal_from(other); }
  IValue& operator=(const IValue& other) {
    if (this != &other) {
      IValue copy(other);
      destroy();
      steal_from(copy);
    }
    return *this;
  }
  IValue& operator=(IValue&& other) noexcept {
    if (this != &other) {
      destroy();
      steal_from(other);
    }
    return *this;
  }
  ~IValue() { destroy(); }
  void swap(IValue& other) noexcept {
    IValue tmp(std::move(other));
    other.steal_from(*this);
    steal_from(tmp);
  }

  // An undefined Tensor stays a Tensor (tagged Tensor, undefined); `Tensor?` arguments
  // that are absent are None instead.
  IValue(at::Tensor t) noexcept : tag_(Tag::Tensor) { new (&payload_.as_tensor) at::Tensor(std::move(t)); }
  IValue(double d) noexcept : tag_(Tag::Double) { payload_.u.as_double = d; }
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  IValue(T v) : tag_(Tag::Int) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) == sizeof(int64_t)) {
      TORCH_CHECK(v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), "value ", v,
                  " does not fit an IValue's int64");
    }
    payload_.u.as_int = static_cast<int64_t>(v);
  }
  IValue(bool b) noexcept : tag_(Tag::Bool) { payload_.u.as_bool = b; }
  IValue(complex<double> z) : tag_(Tag::ComplexDouble) { adopt(make_intrusive<detail::IValueComplex>(z)); }
  IValue(complex<float> z) : IValue(complex<double>(z)) {}
  IValue(std::string s) : tag_(Tag::String) { adopt(make_intrusive<detail::IValueString>(std::move(s))); }
  IValue(std::string_view s) : IValue(std::string(s)) {}
  IValue(const char* s) : IValue(std::string(s)) {}
  // Any other pointer would silently become a bool.
  template <typename T>
    requires(!std::same_as<std::remove_cv_t<T>, char>)
  IValue(T*) = delete;
  IValue(std::nullptr_t) = delete;
  IValue(const Scalar& s);
  // A dim name boxes as its string ("*" for the wildcard, as torch boxes it); a list of
  // names as a list of those strings. to<Dimname>() and to<std::vector<Dimname>>() undo it.
  IValue(Dimname name);
  IValue(ArrayRef<Dimname> names);
  IValue(ScalarType t) noexcept : tag_(Tag::ScalarType) { payload_.u.as_int = static_cast<int64_t>(t); }
  IValue(Layout l) noexcept : tag_(Tag::Layout) { payload_.u.as_int = static_cast<int64_t>(l); }
  IValue(MemoryFormat m) noexcept : tag_(Tag::MemoryFormat) { payload_.u.as_int = static_cast<int64_t>(m); }
  // A qscheme boxes as its number, as in torch (to<QScheme>() reads it back).
  IValue(QScheme q) noexcept : tag_(Tag::Int) { payload_.u.as_int = static_cast<int64_t>(q); }
  IValue(Device d) noexcept : tag_(Tag::Device) {
    payload_.u.as_device.type = d.type();
    payload_.u.as_device.index = d.index();
  }
  // An undefined Generator stays a Generator, as an undefined Tensor does.
  IValue(at::Generator g) noexcept : tag_(Tag::Generator) { adopt(std::move(g).getIntrusivePtr()); }
  // An object of a registered custom class, boxed as T (its class must be registered).
  template <typename T>
    requires std::is_base_of_v<torch::CustomClassHolder, T>
  IValue(intrusive_ptr<T> object)
      : IValue(makeObject(custom_class_of(typeid(T)), intrusive_ptr<torch::CustomClassHolder>(std::move(object)))) {}
  static IValue makeObject(const CustomClassType& type, intrusive_ptr<torch::CustomClassHolder> object);

  IValue(std::vector<int64_t> v) : IValue(Tag::IntList, std::move(v)) {}
  IValue(IntArrayRef v) : IValue(v.vec()) {}
  IValue(std::vector<double> v) : IValue(Tag::DoubleList, std::move(v)) {}
  IValue(ArrayRef<double> v) : IValue(v.vec()) {}
  IValue(std::vector<bool> v) : IValue(Tag::BoolList, std::move(v)) {}
  // bool[N] arguments (output_mask)
  template <size_t N>
  IValue(const std::array<bool, N>& v) : IValue(std::vector<bool>(v.begin(), v.end())) {}
  IValue(std::vector<at::Tensor> v) : IValue(Tag::TensorList, std::move(v)) {}
  IValue(ArrayRef<at::Tensor> v) : IValue(v.vec()) {}
  IValue(std::vector<std::optional<at::Tensor>> v) : IValue(Tag::OptionalTensorList, std::move(v)) {}
  IValue(ArrayRef<std::optional<at::Tensor>> v) : IValue(v.vec()) {}
  IValue(std::vector<IValue> v);
  template <typename T>
  IValue(std::optional<T> v) : IValue() {
    if (v.has_value()) *this = IValue(std::move(*v));
  }
  template <typename... Ts>
  IValue(std::tuple<Ts...> t) : IValue() {
    *this = makeTuple(std::apply([](auto&&... e) { return std::vector<IValue>{IValue(std::move(e))...}; }, std::move(t)));
  }
  static IValue makeTuple(std::vector<IValue> elements);

  Tag tag() const { return tag_; }
  bool isNone() const { return tag_ == Tag::None; }
  bool isTensor() const { return tag_ == Tag::Tensor; }
  bool isDouble() const { return tag_ == Tag::Double; }
  bool isComplexDouble() const { return tag_ == Tag::ComplexDouble; }
  bool isInt() const { return tag_ == Tag::Int; }
  bool isBool() const { return tag_ == Tag::Bool; }
  bool isString() const { return tag_ == Tag::String; }
  bool isScalarType() const { return tag_ == Tag::ScalarType; }
  bool isLayout() const { return tag_ == Tag::Layout; }
  bool isMemoryFormat() const { return tag_ == Tag::MemoryFormat; }
  bool isDevice() const { return tag_ == Tag::Device; }
  bool isGenerator() const { return tag_ == Tag::Generator; }
  bool isIntList() const { return tag_ == Tag::IntList; }
  bool isDoubleList() const { return tag_ == Tag::DoubleList; }
  bool isBoolList() const { return tag_ == Tag::BoolList; }
  bool isTensorList() const { return tag_ == Tag::TensorList; }
  bool isOptionalTensorList() const { return tag_ == Tag::OptionalTensorList; }
  bool isGenericList() const { return tag_ == Tag::GenericList; }
  bool isList() const { return tag_ >= Tag::IntList && tag_ <= Tag::GenericList; }
  bool isTuple() const { return tag_ == Tag::Tuple; }
  bool isObject() const { return tag_ == Tag::Object; }
  bool isScalar() const { return isInt() || isDouble() || isBool() || isComplexDouble(); }

  // Checked accessors: a wrong tag raises c10::TypeError ("expected int but got Tensor").
  // Views (ArrayRef, string_view, references) point into this IValue's payload and stay
  // valid while it, or a copy sharing the payload, lives: `auto r = pop(s).toIntList();`
  // dangles, `use(pop(s).toIntList())` does not.
  const at::Tensor& toTensor() const& {
    expect(Tag::Tensor);
    return payload_.as_tensor;
  }
  at::Tensor toTensor() && {  // moves the tensor out and leaves None behind
    expect(Tag::Tensor);
    at::Tensor t(std::move(payload_.as_tensor));
    destroy();
    return t;
  }
  double toDouble() const { return expect(Tag::Double), payload_.u.as_double; }
  int64_t toInt() const { return expect(Tag::Int), payload_.u.as_int; }
  bool toBool() const { return expect(Tag::Bool), payload_.u.as_bool; }
  complex<double> toComplexDouble() const {
    return expect(Tag::ComplexDouble), static_cast<const detail::IValueComplex*>(payload_.u.as_ptr)->value;
  }
  const std::string& toStringRef() const {
    return expect(Tag::String), static_cast<const detail::IValueString*>(payload_.u.as_ptr)->value;
  }
  std::string_view toStringView() const { return toStringRef(); }
  Scalar toScalar() const;
  ScalarType toScalarType() const { return expect(Tag::ScalarType), static_cast<ScalarType>(payload_.u.as_int); }
  Layout toLayout() const { return expect(Tag::Layout), static_cast<Layout>(payload_.u.as_int); }
  MemoryFormat toMemoryFormat() const {
    return expect(Tag::MemoryFormat), static_cast<MemoryFormat>(payload_.u.as_int);
  }
  Device toDevice() const { return expect(Tag::Device), Device(payload_.u.as_device.type, payload_.u.as_device.index); }
  at::Generator toGenerator() const {
    expect(Tag::Generator);
    auto* impl = static_cast<GeneratorImpl*>(payload_.u.as_ptr);
    return at::Generator(intrusive_ptr<GeneratorImpl>::unsafe_reclaim_from_nonowning(impl));
  }

  IntArrayRef toIntList() const { return elements<int64_t>(Tag::IntList); }
  std::vector<int64_t> toIntVector() const { return elements<int64_t>(Tag::IntList); }
  ArrayRef<double> toDoubleList() const { return elements<double>(Tag::DoubleList); }
  const std::vector<bool>& toBoolList() const { return elements<bool>(Tag::BoolList); }
  ArrayRef<at::Tensor> toTensorList() const { return elements<at::Tensor>(Tag::TensorList); }
  ArrayRef<std::optional<at::Tensor>> toOptionalTensorList() const {
    return elements<std::optional<at::Tensor>>(Tag::OptionalTensorList);
  }
  ArrayRef<IValue> toList() const;  // GenericList only; the typed lists have their own
  Dimname toDimname() const;
  std::vector<Dimname> toDimnameVector() const;
  ArrayRef<IValue> toTupleElements() const;
  const CustomClassType& objectType() const { return *object_payload().type; }
  const intrusive_ptr<torch::CustomClassHolder>& toObject() const { return object_payload().object; }
  // The object as the class `type` was registered for; a TypeError when it is another class.
  const intrusive_ptr<torch::CustomClassHolder>& toObjectOf(const std::type_info& type) const;

  // The conversion the boxing templates use to turn a stack slot into a kernel argument:
  // T is the kernel's parameter type (see aten/core/IValueTo.h for the accepted types and
  // TorchScript's leniencies: int -> float, numbers -> Scalar, [] -> any typed list).
  template <typename T>
  T to() const;

  // The schema-language name of the tag ("int", "float", "Tensor[]"), as errors print it.
  std::string_view tagKind() const { return kindName(tag_); }
  static std::string_view kindName(Tag tag);

  // Deep equality. Kinds must match (1 and 1.0 differ); tensors and generators compare by
  // identity, since comparing their contents would need an operator call.
  bool equals(const IValue& other) const;

  // How many IValues (and handles) share the heap payload; 0 for inline payloads.
  size_t use_count() const;

 private:
  template <typename T>
  IValue(Tag tag, std::vector<T>&& v) : tag_(tag) {
    adopt(make_intrusive<detail::IValueVector<T>>(std::move(v)));
  }
  template <typename T>
  void adopt(intrusive_ptr<T> p) noexcept {
    payload_.u.as_ptr = p.release();
  }
  // Tags whose payload is a counted intrusive_ptr_target* (Tensor is counted too, but as an
  // at::Tensor object so that toTensor() can return a reference).
  static constexpr bool is_counted(Tag t) {
    constexpr uint32_t mask = (1u << uint32_t(Tag::ComplexDouble)) | (1u << uint32_t(Tag::String)) |
                              (1u << uint32_t(Tag::Generator)) | (1u << uint32_t(Tag::IntList)) |
                              (1u << uint32_t(Tag::DoubleList)) | (1u << uint32_t(Tag::BoolList)) |
                              (1u << uint32_t(Tag::TensorList)) | (1u << uint32_t(Tag::OptionalTensorList)) |
                              (1u << uint32_t(Tag::GenericList)) | (1u << uint32_t(Tag::Tuple)) |
                              (1u << uint32_t(Tag::Object));
    return (mask >> uint32_t(t)) & 1u;
  }
  void expect(Tag t) const {
    if (C10_UNLIKELY(tag_ != t)) throw_wrong_tag(kindName(t));
  }
  [[noreturn]] void throw_wrong_tag(std::string_view expected) const;
  const detail::IValueObject& object_payload() const {
    expect(Tag::Object);
    return *static_cast<const detail::IValueObject*>(payload_.u.as_ptr);
  }
  // [] written in a schema default or by a caller has no element type: it is an empty
  // GenericList, and to<T>() accepts it for every typed list.
  bool isEmptyGenericList() const { return isGenericList() && elements<IValue>(Tag::GenericList).empty(); }
  template <typename T>
  const std::vector<T>& elements(Tag t) const {
    expect(t);
    return static_cast<const detail::IValueVector<T>*>(payload_.u.as_ptr)->elements;
  }

  // Precondition for both: *this holds nothing (fresh, or after destroy()).
  void copy_from(const IValue& other) {
    tag_ = other.tag_;
    if (tag_ == Tag::Tensor) {
      new (&payload_.as_tensor) at::Tensor(other.payload_.as_tensor);
    } else {
      payload_.u = other.payload_.u;
      if (is_counted(tag_)) raw::intrusive_ptr::incref(payload_.u.as_ptr);
    }
  }
  void steal_from(IValue& other) noexcept {
    tag_ = other.tag_;
    if (tag_ == Tag::Tensor) {
      new (&payload_.as_tensor) at::Tensor(std::move(other.payload_.as_tensor));
      other.payload_.as_tensor.~Tensor();
    } else {
      payload_.u = other.payload_.u;
    }
    other.payload_.u.as_int = 0;
    other.tag_ = Tag::None;
  }
  // Releases the payload and leaves None.
  void destroy() noexcept {
    if (tag_ == Tag::Tensor) {
      payload_.as_tensor.~Tensor();
    } else if (is_counted(tag_)) {
      raw::intrusive_ptr::decref(payload_.u.as_ptr);
    }
    payload_.u.as_int = 0;
    tag_ = Tag::None;
  }

  union Inline {
    int64_t as_int;
    double as_double;
    bool as_bool;
    intrusive_ptr_target* as_ptr;
    struct {
      DeviceType type;
      DeviceIndex index;
    } as_device;
  };
  union Payload {
    Payload() : u{.as_int = 0} {}
    ~Payload() {}
    Inline u;
    at::Tensor as_tensor;
  };
  Payload payload_;
  Tag tag_ = Tag::None;
};

static_assert(sizeof(IValue) == 16, "IValue must stay two words: stacks of them are copied on every boxed call");

TORCH_API std::ostream& operator<<(std::ostream& os, const IValue& v);
TORCH_API std::ostream& operator<<(std::ostream& os, IValue::Tag tag);

}  // namespace c10::inline tessera

namespace at::inline tessera {
using c10::IValue;
}  // namespace at::inline tessera

#include <aten/core/IValueTo.h>  // IWYU pragma: export
#include <aten/core/Stack.h>     // IWYU pragma: export
