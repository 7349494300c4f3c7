// fill_: every element of a tensor set to one value (checked against the dtype's range).
#include <aten/native/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/cpu/Loops.h>

namespace at::inline tessera::native {

Tensor& fill_cpu_(Tensor& self, const Scalar& value) {
  dispatch_types<kAllTypes>(self.scalar_type(), "fill_", [&]<typename T>() {
    const T v = value.to<T>();
    std::vector<int64_t> strides = self.strides().vec();
    for (auto& s : strides) s *= static_cast<int64_t>(sizeof(T));
    cpu::for_each_element<1>(self.sizes(), {strides}, {static_cast<char*>(self.data_ptr())},
                             [&](char** p) { *reinterpret_cast<T*>(p[0]) = v; });
  });
  self.unsafeGetTensorImpl()->bump_version();
  return self;
}

Tensor& fill_meta_(Tensor& self, const Scalar& value) {
  // The value must still fit the dtype: a meta run reports the errors a real one would.
  dispatch_types<kAllTypes>(self.scalar_type(), "fill_", [&]<typename T>() { (void)value.to<T>(); });
  return self;
}

}  // namespace at::inline tessera::native
