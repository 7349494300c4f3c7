// What the fake-quantization operators share (FakeQuantize.cpp, LearnableFakeQuantize.cpp,
// FusedObserverFakeQuantize.cpp): the element types they run on and torch's checks.
#pragma once

#include <aten/core/Tensor.h>
#include <c10/util/Half.h>

#include <initializer_list>

namespace at::inline tessera::native {

// fn(T{}) for the element types torch fake-quantizes (float, double, half); torch's
// "not implemented for" error for the others.
template <typename Fn>
void dispatch_fake_quant_types(c10::ScalarType t, const char* op, Fn&& fn) {
  switch (t) {
    case c10::kFloat: return fn(float{});
    case c10::kDouble: return fn(double{});
    case c10::kHalf: return fn(c10::Half{});
    default: TORCH_CHECK(false, "\"", op, "\" not implemented for '", t, "'");
  }
}

inline void check_quant_range(int64_t quant_min, int64_t quant_max) {
  TORCH_CHECK(quant_min <= quant_max, "`quant_min` should be less than or equal to `quant_max`.");
}

// The kernels read the qparams' (and gradients') values: with a CPU input none may be on the
// meta device (a meta input only needs their shapes). The dispatcher picks the Meta kernel
// when any argument is meta, so this is where a mix is caught.
inline void check_qparams_have_values(const Tensor& self, std::initializer_list<Tensor> others, const char* op) {
  if (self.is_meta()) return;
  for (const Tensor& t : others) {
    TORCH_CHECK(!t.defined() || !t.is_meta(), op, ": expected all tensors to be on the same device, but the input is on ",
                self.device(), " and an argument is on meta");
  }
}

}  // namespace at::inline tessera::native
