// add and mul: their shape functions (shared by Meta and CPU) and CPU kernels.
#include <aten/native/Broadcast.h>
#include <aten/native/Dispatch.h>
#include <aten/native/MetaFunctions.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/TensorFactories.h>
#include <aten/native/cpu/Loops.h>

#include <type_traits>

namespace at::inline tessera {

namespace meta {

static void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  // A 0-dim CPU tensor (a number) may join tensors on any device, as in torch.
  if (a.device() == b.device()) return;
  bool a_number = a.dim() == 0 && a.is_cpu(), b_number = b.dim() == 0 && b.is_cpu();
  TORCH_CHECK(a_number || b_number, "Expected all tensors to be on the same device, but found at least two devices, ",
              a.device(), " and ", b.device(), "! (when checking arguments for ", op, ")");
}

static TensorMeta binary_meta(const char* op, const Tensor& self, const Tensor& other) {
  check_same_device(op, self, other);
  return TensorMeta{native::infer_size(self.sizes(), other.sizes()), native::result_type(self, other)};
}

TensorMeta add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  TensorMeta m = binary_meta("add", self, other);
  TORCH_CHECK(!(c10::isIntegralType(m.dtype, true) && alpha.isFloatingPoint()),
              "For integral input tensors, argument alpha must not be a floating point number.");
  TORCH_CHECK(m.dtype == c10::kBool || !alpha.isBoolean(), "Boolean alpha only supported for Boolean results.");
  TORCH_CHECK(c10::isComplexType(m.dtype) || !alpha.isComplex(),
              "For non-complex input tensors, argument alpha must not be a complex number.");
  return m;
}

TensorMeta mul(const Tensor& self, const Tensor& other) { return binary_meta("mul", self, other); }

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

Tensor as_dtype(const Tensor& t, c10::ScalarType dtype) {
  if (t.scalar_type() == dtype) return t;
  Tensor out = make_empty(t.sizes(), dtype, t.device());
  copy_cpu_(out, t, false);
  return out;
}

// out[i] = f(a[i], b[i]) over a's and b's broadcast, all three of dtype T.
template <typename T, typename F>
void binary_loop(const Tensor& a, const Tensor& b, const Tensor& out, F f) {
  auto bytes = [](std::vector<int64_t> s) {
    for (auto& x : s) x *= static_cast<int64_t>(sizeof(T));
    return s;
  };
  std::array<std::vector<int64_t>, 3> strides{bytes(out.strides().vec()), bytes(broadcast_strides(a, out.sizes())),
                                              bytes(broadcast_strides(b, out.sizes()))};
  std::array<char*, 3> base{static_cast<char*>(out.data_ptr()), static_cast<char*>(a.data_ptr()),
                            static_cast<char*>(b.data_ptr())};
  cpu::for_each_element<3>(out.sizes(), strides, base, [&](char** p) {
    *reinterpret_cast<T*>(p[0]) = f(*reinterpret_cast<const T*>(p[1]), *reinterpret_cast<const T*>(p[2]));
  });
}

// Runs body<T>(a, b, target) in the operands' common dtype T, converting inputs and the
// output where their dtypes differ (TensorIterator will fuse those casts later).
template <typename Body>
void binary_kernel(const char* op, const Tensor& self, const Tensor& other, const Tensor& out, Body&& body) {
  c10::ScalarType common = result_type(self, other);
  Tensor a = as_dtype(self, common), b = as_dtype(other, common);
  Tensor target = out.scalar_type() == common ? out : make_empty(out.sizes(), common, out.device());
  dispatch_types<kArithmetic>(common, op, [&]<typename T>() { body.template operator()<T>(a, b, target); });
  if (!target.is_same(out)) {
    Tensor o = out;
    copy_cpu_(o, target, false);
  }
}

}  // namespace

void add_out_cpu(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {
  binary_kernel("add", self, other, out, [&]<typename T>(const Tensor& a, const Tensor& b, const Tensor& target) {
    using O = opmath_t<T>;
    const O al = alpha.to<O>();
    binary_loop<T>(a, b, target, [al](T x, T y) { return cast<T>(wrap_add<O>(cast<O>(x), wrap_mul<O>(al, cast<O>(y)))); });
  });
}

void mul_out_cpu(const Tensor& self, const Tensor& other, const Tensor& out) {
  binary_kernel("mul", self, other, out, [&]<typename T>(const Tensor& a, const Tensor& b, const Tensor& target) {
    using O = opmath_t<T>;
    binary_loop<T>(a, b, target, [](T x, T y) { return cast<T>(wrap_mul<O>(cast<O>(x), cast<O>(y))); });
  });
}

}  // namespace native
}  // namespace at::inline tessera
