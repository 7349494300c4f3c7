// copy_: writes src into self, broadcasting src and converting its dtype (the element loop
// is cpu/CopyKernel.cpp, compiled per ISA).
#include <aten/core/Parallel.h>
#include <aten/core/TensorUtils.h>
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/TensorIterator.h>
#include <aten/native/factory/Copy.h>
#include <aten/ops/Functions.h>

#include <cstring>

namespace at::inline tessera::native {

static void check_copy_shapes(const Tensor& self, const Tensor& src) {
  std::vector<int64_t> shape = infer_size(self.sizes(), src.sizes());
  TORCH_CHECK(self.sizes().equals(shape), "output with shape ", self.sizes(), " doesn't match the broadcast shape ",
              IntArrayRef(shape));
}

DEFINE_DISPATCH(copy_stub);

// One dense block to another, split across threads when large (one thread's memcpy
// reaches only part of the machine's bandwidth). The blocks are the same or disjoint
// (partial overlap was refused), but memmove keeps any overlap right regardless.
static void copy_bytes(char* dst, const char* src, size_t n) {
  if (n == 0) return;
  constexpr int64_t kGrain = int64_t{1} << 20;  // bytes: below this a region costs more than it saves
  const bool overlap = dst < src + n && src < dst + n;
  if (overlap || n <= static_cast<size_t>(kGrain)) {
    std::memmove(dst, src, n);
    return;
  }
  parallel_for(0, static_cast<int64_t>(n), kGrain, [&](int64_t b, int64_t e) {
    std::memcpy(dst + b, src + b, static_cast<size_t>(e - b));
  });
}

// copy_ between tensors carrying math bits: the raw values move (and convert) first, then
// the destination's memory is conjugated / negated where the two views read it differently
// (negation after the conversion, as torch: -1.5 into int64 is -1).
static void copy_through_math_bits(const Tensor& self, const Tensor& src) {
  const bool conj = self.is_complex() && self.is_conj() != src.is_conj();
  const bool neg = self.is_neg() != src.is_neg();
  TORCH_CHECK(!neg || self.scalar_type() != c10::kBool || self.numel() == 0, "\"neg_cpu\" not implemented for 'Bool'");
  Tensor dst = raw_view(self);
  copy_cpu_(dst, raw_view(src), false);
  if (conj) at::conj_physical_(dst);
  if (neg && dst.numel() > 0) at::neg_(dst);
}

Tensor& copy_cpu_(Tensor& self, const Tensor& src, bool non_blocking) {
  TORCH_CHECK(src.defined(), "copy_: the source tensor is undefined");
  TORCH_CHECK_NOT_IMPLEMENTED(!src.is_meta(), "Cannot copy out of meta tensor; no data!");
  TORCH_CHECK(src.is_cpu(), "copy_: copying from ", src.device(), " to cpu is not supported by this build");
  check_copy_shapes(self, src);
  if (self.is_same(src)) return self;
  assert_no_partial_overlap(self, src);
  if ((self.key_set() | src.key_set()).has_any(c10::math_bits_keyset)) {
    copy_through_math_bits(self, src);
    return self;
  }
  if (self.scalar_type() == src.scalar_type() && self.is_contiguous() && src.is_contiguous() &&
      self.sizes().equals(src.sizes())) {
    copy_bytes(static_cast<char*>(self.data_ptr()), static_cast<const char*>(src.data_ptr()), self.nbytes());
  } else {
    TensorIterator iter = TensorIteratorConfig()
                              .add_output(self)
                              .add_input(src)
                              .resize_outputs(false)
                              .check_all_same_dtype(false)
                              .op_name("copy_")
                              .build();
    copy_stub(c10::DeviceType::CPU, iter);
  }
  return self;
}

Tensor& copy_meta_(Tensor& self, const Tensor& src, bool non_blocking) {
  check_copy_shapes(self, src);
  return self;
}

}  // namespace at::inline tessera::native
