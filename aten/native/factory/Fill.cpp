// fill_: every element of a tensor set to one value (checked against the dtype's range);
// fill_.Tensor takes the value from a 0-dim tensor.
#include <aten/core/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/TensorIterator.h>

namespace at::inline tessera::native {

Tensor& fill_cpu_(Tensor& self, const Scalar& value) {
  // One value to every element: an expanded self (cells shared by several elements) is
  // fine, as in torch, where the random fills refuse it.
  TensorIterator iter =
      TensorIteratorConfig().add_output(self).check_all_same_dtype(false).resize_outputs(false).check_mem_overlap(false).build();
  dispatch_types<kAllTypes>(self.scalar_type(), "fill_", [&]<typename T>() {
    const T v = value.to<T>();
    iter.for_each([v](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
      for (int64_t j = 0; j < n1; ++j) {
        char* p = data[0] + j * strides[1];
        for (int64_t i = 0; i < n0; ++i) *reinterpret_cast<T*>(p + i * strides[0]) = v;
      }
    });
  });
  return self;
}

Tensor& fill_meta_(Tensor& self, const Scalar& value) {
  // The value must still fit the dtype: a meta run reports the errors a real one would.
  dispatch_types<kAllTypes>(self.scalar_type(), "fill_", [&]<typename T>() { (void)value.to<T>(); });
  return self;
}

static void check_fill_value(const Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions.");
}

Tensor& fill_tensor_cpu_(Tensor& self, const Tensor& value) {
  check_fill_value(value);
  return fill_cpu_(self, value.item());
}

Tensor& fill_tensor_meta_(Tensor& self, const Tensor& value) {
  check_fill_value(value);
  // A value with data is checked against self's dtype as a real fill would check it.
  if (!value.is_meta()) return fill_meta_(self, value.item());
  return self;
}

}  // namespace at::inline tessera::native
