// add and mul: their shape functions (shared by Meta and CPU) and CPU kernels.
#include <aten/native/Broadcast.h>
#include <aten/native/Dispatch.h>
#include <aten/native/MetaFunctions.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/TensorFactories.h>
#include <aten/native/TensorIterator.h>

#include <type_traits>

namespace at::inline tessera {

namespace meta {

TensorMeta add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  TensorMeta m = TensorIteratorConfig()
                     .add_output(Tensor())
                     .add_input(self)
                     .add_input(other)
                     .promote_inputs_to_common_dtype(true)
                     .op_name("add")
                     .output_meta();
  TORCH_CHECK(!(c10::isIntegralType(m.dtype, true) && alpha.isFloatingPoint()),
              "For integral input tensors, argument alpha must not be a floating point number.");
  TORCH_CHECK(m.dtype == c10::kBool || !alpha.isBoolean(), "Boolean alpha only supported for Boolean results.");
  TORCH_CHECK(c10::isComplexType(m.dtype) || !alpha.isComplex(),
              "For non-complex input tensors, argument alpha must not be a complex number.");
  return m;
}

TensorMeta mul(const Tensor& self, const Tensor& other) {
  return TensorIteratorConfig()
      .add_output(Tensor())
      .add_input(self)
      .add_input(other)
      .promote_inputs_to_common_dtype(true)
      .op_name("mul")
      .output_meta();
}

}  // namespace meta

namespace native {

void dtype_not_implemented(const char* op, c10::ScalarType t) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "\"", op, "\" not implemented for '", t, "'");
}

namespace {

// Integer arithmetic wraps, as torch's does, without C++'s signed-overflow UB.
template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else {
    return a * b;
  }
}

// out = f(a, b) over an iterator whose operands all have dtype T.
template <typename T, typename F>
void binary_loop(const TensorIterator& iter, F f) {
  iter.for_each([&](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
    const int64_t* outer = strides + 3;
    for (int64_t j = 0; j < n1; ++j) {
      char* o = data[0] + j * outer[0];
      const char* a = data[1] + j * outer[1];
      const char* b = data[2] + j * outer[2];
      for (int64_t i = 0; i < n0; ++i) {
        *reinterpret_cast<T*>(o + i * strides[0]) =
            f(*reinterpret_cast<const T*>(a + i * strides[1]), *reinterpret_cast<const T*>(b + i * strides[2]));
      }
    }
  });
}

}  // namespace

void add_out_cpu(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  TensorIterator iter = TensorIterator::binary_op(out, self, other);
  dispatch_types<kArithmetic>(iter.common_dtype(), "add", [&]<typename T>() {
    using O = opmath_t<T>;
    const O al = alpha.to<O>();
    binary_loop<T>(iter, [al](T x, T y) { return cast<T>(wrap_add<O>(cast<O>(x), wrap_mul<O>(al, cast<O>(y)))); });
  });
  iter.cast_outputs();
}

void mul_out_cpu(const Tensor& self, const Tensor& other, const Tensor& out) {
  TensorIterator iter = TensorIterator::binary_op(out, self, other);
  dispatch_types<kArithmetic>(iter.common_dtype(), "mul", [&]<typename T>() {
    using O = opmath_t<T>;
    binary_loop<T>(iter, [](T x, T y) { return cast<T>(wrap_mul<O>(cast<O>(x), cast<O>(y))); });
  });
  iter.cast_outputs();
}

}  // namespace native
}  // namespace at::inline tessera
