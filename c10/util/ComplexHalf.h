// c10::complex<c10::Half>: the element type of ComplexHalf (complex32) tensors. A storage
// type only, as in torch: kernels widen it to complex<float> (its opmath type), compute,
// and narrow the result back.
#pragma once

#include <c10/util/Half.h>
#include <c10/util/complex.h>

namespace c10::inline tessera {

template <>
struct alignas(4) complex<Half> {
  using value_type = Half;

  Half real_;
  Half imag_;

  constexpr complex() : real_(0.0f), imag_(0.0f) {}
  constexpr complex(Half re, Half im = Half(0.0f)) : real_(re), imag_(im) {}
  // Narrowing rounds each part to half precision, so it must be asked for.
  explicit complex(const complex<float>& z) : real_(z.real()), imag_(z.imag()) {}
  explicit complex(const complex<double>& z)
      : real_(static_cast<float>(z.real())), imag_(static_cast<float>(z.imag())) {}
  operator complex<float>() const { return complex<float>(static_cast<float>(real_), static_cast<float>(imag_)); }
  explicit operator complex<double>() const {
    return complex<double>(static_cast<float>(real_), static_cast<float>(imag_));
  }

  constexpr Half real() const { return real_; }
  constexpr Half imag() const { return imag_; }

  friend bool operator==(const complex& a, const complex& b) {
    return static_cast<float>(a.real_) == static_cast<float>(b.real_) &&
           static_cast<float>(a.imag_) == static_cast<float>(b.imag_);
  }
};

static_assert(sizeof(complex<Half>) == 4 && alignof(complex<Half>) == 4);

}  // namespace c10::inline tessera
