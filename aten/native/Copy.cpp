// copy_: writes src into self, broadcasting src and converting its dtype.
#include <aten/native/Broadcast.h>
#include <aten/native/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/TensorIterator.h>

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
    TensorIterator iter = TensorIteratorConfig()
                              .add_output(self)
                              .add_input(src)
                              .resize_outputs(false)
                              .check_all_same_dtype(false)
                              .op_name("copy_")
                              .build();
    dispatch_types<kAllTypes>(self.scalar_type(), "copy_", [&]<typename To>() {
      dispatch_types<kAllTypes>(src.scalar_type(), "copy_", [&]<typename From>() {
        iter.for_each([](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
          for (int64_t j = 0; j < n1; ++j) {
            char* dst = data[0] + j * strides[2];
            const char* from = data[1] + j * strides[3];
            for (int64_t i = 0; i < n0; ++i) {
              *reinterpret_cast<To*>(dst + i * strides[0]) = cast<To>(*reinterpret_cast<const From*>(from + i * strides[1]));
            }
          }
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
