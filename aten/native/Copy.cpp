// copy_: writes src into self, broadcasting src and converting its dtype.
#include <aten/native/Broadcast.h>
#include <aten/native/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/cpu/Loops.h>

#include <cstring>

namespace at::inline tessera::native {

static void check_copy_shapes(const Tensor& self, const Tensor& src) {
  std::vector<int64_t> shape = infer_size(self.sizes(), src.sizes());
  TORCH_CHECK(self.sizes().equals(shape), "output with shape ", self.sizes(), " doesn't match the broadcast shape ",
              IntArrayRef(shape));
}

Tensor& copy_cpu_(Tensor& self, const Tensor& src, bool non_blocking) {
  TORCH_CHECK(src.defined(), "copy_: the source tensor is undefined");
  TORCH_CHECK_NOT_IMPLEMENTED(!src.is_meta(), "Cannot copy out of meta tensor; no data!");
  TORCH_CHECK(src.is_cpu(), "copy_: copying from ", src.device(), " to cpu is not supported by this build");
  check_copy_shapes(self, src);
  if (self.is_same(src)) return self;
  if (self.scalar_type() == src.scalar_type() && self.is_contiguous() && src.is_contiguous() &&
      self.sizes().equals(src.sizes())) {
    if (self.numel() > 0) std::memmove(self.data_ptr(), src.data_ptr(), self.nbytes());
  } else {
    dispatch_types<kAllTypes>(self.scalar_type(), "copy_", [&]<typename To>() {
      dispatch_types<kAllTypes>(src.scalar_type(), "copy_", [&]<typename From>() {
        std::vector<int64_t> dst_strides = self.strides().vec(), src_strides = broadcast_strides(src, self.sizes());
        for (auto& s : dst_strides) s *= static_cast<int64_t>(sizeof(To));
        for (auto& s : src_strides) s *= static_cast<int64_t>(sizeof(From));
        cpu::for_each_element<2>(self.sizes(), {dst_strides, src_strides},
                                 {static_cast<char*>(self.data_ptr()), static_cast<char*>(src.data_ptr())},
                                 [](char** p) {
                                   *reinterpret_cast<To*>(p[0]) = cast<To>(*reinterpret_cast<const From*>(p[1]));
                                 });
      });
    });
  }
  self.unsafeGetTensorImpl()->bump_version();
  return self;
}

Tensor& copy_meta_(Tensor& self, const Tensor& src, bool non_blocking) {
  check_copy_shapes(self, src);
  return self;
}

}  // namespace at::inline tessera::native
