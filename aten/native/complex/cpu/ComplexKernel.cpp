// Complex-number loops, compiled once per ISA (see aten/native/DispatchStub.h): conjugate,
// argument, and the two constructors from real tensors. Half and BFloat16 compute in float.
#include <aten/native/DispatchStubs.h>
#include <aten/native/complex/ComplexOps.h>
#include <aten/native/cpu/Loops.h>
#include <aten/native/cpu/MathScalar.h>

#include <cmath>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

// A copy for every dtype but the complex ones, whose imaginary part changes sign.
void conj_physical_kernel(TensorIterator& iter) {
  dispatch_types<kAllTypes>(iter.common_dtype(), "conj_physical", [&]<typename T>() {
    if constexpr (is_complex_v<T>) {
      cpu_kernel(iter, [](T z) -> T { return T(z.real(), -z.imag()); });
    } else {
      cpu_kernel(iter, [](T x) -> T { return x; });
    }
  });
}

// The argument: atan2(imag, real) for complex numbers; pi for negative reals, 0 for the
// others, NaN for NaN (torch's angle of a real tensor).
void angle_kernel(TensorIterator& iter) {
  dispatch_types<kFloating | kReducedFloat | kComplex>(iter.common_dtype(), "angle", [&]<typename T>() {
    if constexpr (is_complex_v<T>) {
      cpu_kernel(iter, [](T z) -> T { return T(std::atan2(z.imag(), z.real()), 0); });
    } else {
      using O = opmath_t<T>;
      cpu_kernel(iter, [](T x) -> T {
        const O v = static_cast<O>(x);
        if (std::isnan(v)) return x;
        return T(v < O(0) ? O(3.14159265358979323846) : O(0));
      });
    }
  });
}

void polar_kernel(TensorIterator& iter) {
  dispatch_types<kFloating>(iter.input(0).scalar_type(), "polar", [&]<typename R>() {
    cpu_kernel(iter, [](R r, R theta) -> c10::complex<R> {
      return c10::complex<R>(r * std::cos(theta), r * std::sin(theta));
    });
  });
}

void complex_kernel(TensorIterator& iter) {
  // Half parts make complex32 (BFloat16 ones were refused by complex_result_type).
  dispatch_types<kFloating | kReducedFloat>(iter.input(0).scalar_type(), "complex", [&]<typename R>() {
    if constexpr (std::is_same_v<R, c10::BFloat16>) {
      TORCH_INTERNAL_ASSERT(false, "complex: BFloat16 parts");
    } else {
      cpu_kernel(iter, [](R re, R im) -> c10::complex<R> { return c10::complex<R>(re, im); });
    }
  });
}

}  // namespace
}  // namespace CPU_CAPABILITY

// The stubs of ops.yaml's iterator operators, generated from it (each runs its <op>_kernel).
#include <aten/native/cpu/RegisterComplexKernel.h>

REGISTER_DISPATCH(angle_stub, &angle_kernel);
REGISTER_DISPATCH(polar_stub, &polar_kernel);
REGISTER_DISPATCH(complex_stub, &complex_kernel);

}  // namespace at::inline tessera::native
