// fill_: every element of a tensor set to one value (checked against the dtype's range);
// fill_.Tensor takes the value from a 0-dim tensor.
#include <aten/core/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/TensorIterator.h>
#include <aten/ops/Functions.h>

#include <algorithm>

namespace at::inline tessera::native {

namespace {
// The value a fill writes. complex32 follows torch 1.13: a one-element fill converts with
// the range check, a longer one goes through complex<float> (too-large parts become inf).
template <typename T>
T fill_value(const Tensor& self, const Scalar& value) {
  if constexpr (std::is_same_v<T, c10::complex<c10::Half>>) {
    if (self.numel() != 1) return T(value.to<c10::complex<float>>());
  }
  return value.to<T>();
}
}  // namespace

Tensor& fill_cpu_(Tensor& self, const Scalar& value) {
  // One value to every element: an expanded self (cells shared by several elements) is
  // fine, as in torch, where the random fills refuse it.
  TensorIterator iter =
      TensorIteratorConfig().add_output(self).check_all_same_dtype(false).resize_outputs(false).check_mem_overlap(false).build();
  dispatch_types<kAllTypes>(self.scalar_type(), "fill_", [&]<typename T>() {
    const T v = fill_value<T>(self, value);
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
  dispatch_types<kAllTypes>(self.scalar_type(), "fill_", [&]<typename T>() { (void)fill_value<T>(self, value); });
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

// The functional fill: a copy of self with every element set to value (through fill_ on a
// clone, so a value tensor gets its gradient as torch's fill gives it).
Tensor fill_Scalar(const Tensor& self, const Scalar& value) { return self.clone().fill_(value); }
Tensor fill_Tensor(const Tensor& self, const Tensor& value) { return self.clone().fill_(value); }

// The main diagonal of a matrix, or of an n-D tensor with all dims equal, set to a value; a
// tall matrix with wrap restarts the diagonal every cols + 1 rows (NumPy's fill_diagonal).
Tensor& fill_diagonal_(Tensor& self, const Scalar& fill_value, bool wrap) {
  const int64_t n = self.dim();
  TORCH_CHECK(n >= 2, "dimensions must larger than 1");
  for (int64_t i = 1; i < n; ++i) {
    TORCH_CHECK(n == 2 || self.size(i) == self.size(0), "all dimensions of input must be of equal length");
  }
  int64_t length = self.size(0), stride = 0;
  for (int64_t i = 0; i < n; ++i) stride += self.stride(i);
  for (int64_t i = 1; i < n; ++i) length = std::min(length, self.size(i));
  if (n == 2 && wrap && self.size(0) > self.size(1) + 1) {
    // every (cols + 1)-th row restarts the diagonal: the flat positions k * (cols + 1)
    if (!self.is_contiguous()) {
      Tensor dense = self.contiguous();
      fill_diagonal_(dense, fill_value, wrap);
      self.copy_(dense);
      return self;
    }
    const int64_t rows = self.size(0), cols = self.size(1);
    length = (rows * cols + cols) / (cols + 1);
  }
  self.as_strided({length}, {stride}, self.storage_offset()).fill_(fill_value);
  return self;
}

}  // namespace at::inline tessera::native
