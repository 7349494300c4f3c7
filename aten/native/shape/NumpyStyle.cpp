// torch's NumPy-style shape functions, written over the view and copy operators (so
// autograd, Meta and every dtype come from those): the alternative names swapaxes /
// swapdims / moveaxis / row_stack / broadcast_to, the flips and rot90, ravel, reshape_as,
// atleast_{1,2,3}d, diag / diagflat / diag_embed and diff. Checks and messages are torch's
// (current torch's where 1.13 has none: diff's negative order, diag's rank).
#include <aten/core/NestedTensorImpl.h>
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace at::inline tessera::native {

Tensor swapaxes(const Tensor& self, int64_t axis0, int64_t axis1) { return self.transpose(axis0, axis1); }
Tensor& swapaxes_(Tensor& self, int64_t axis0, int64_t axis1) { return self.transpose_(axis0, axis1); }
Tensor swapdims(const Tensor& self, int64_t dim0, int64_t dim1) { return self.transpose(dim0, dim1); }
Tensor& swapdims_(Tensor& self, int64_t dim0, int64_t dim1) { return self.transpose_(dim0, dim1); }

Tensor moveaxis_int(const Tensor& self, int64_t source, int64_t destination) {
  return self.movedim(source, destination);
}

Tensor moveaxis_intlist(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  return self.movedim(source, destination);
}

Tensor broadcast_to(const Tensor& self, IntArrayRef size) { return self.expand(size); }

Tensor reshape_as(const Tensor& self, const Tensor& other) {
  check_sizes_readable(other);
  return self.reshape(other.sizes());
}

Tensor ravel(const Tensor& self) { return self.contiguous().view({-1}); }

Tensor row_stack(TensorList tensors) { return at::vstack(tensors); }

Tensor fliplr(const Tensor& self) {
  TORCH_CHECK(self.dim() >= 2, "Input must be >= 2-d.");
  return self.flip({1});
}

Tensor flipud(const Tensor& self) {
  TORCH_CHECK(self.dim() >= 1, "Input must be >= 1-d.");
  return self.flip({0});
}

// k quarter turns from dims[0] towards dims[1]: a flip and a transpose (a view of the
// flipped copy, as torch's result is).
Tensor rot90(const Tensor& self, int64_t k, IntArrayRef dims) {
  TORCH_CHECK(dims.size() == 2, "expected total rotation dims == 2, but got dims = ", dims.size());
  const int64_t rank = self.dim();
  TORCH_CHECK(rank >= 2, "expected total dims >= 2, but got total dims = ", rank);
  TORCH_CHECK(dims[0] != dims[1] && std::abs(dims[0] - dims[1]) != rank,
              "expected rotation dims to be different, but got dim0 = ", dims[0], " and dim1 = ", dims[1]);
  TORCH_CHECK(dims[0] < rank && dims[0] >= -rank, "Rotation dim0 out of range, dim0 = ", dims[0]);
  TORCH_CHECK(dims[1] < rank && dims[1] >= -rank, "Rotation dim1 out of range, dim1 = ", dims[1]);
  switch (((k % 4) + 4) % 4) {
    case 1:
      return self.flip({dims[1]}).transpose_(dims[0], dims[1]);
    case 2:
      return self.flip(dims);
    case 3:
      return self.flip({dims[0]}).transpose_(dims[0], dims[1]);
    default:
      return self.clone(c10::MemoryFormat::Contiguous);
  }
}

Tensor atleast_1d(const Tensor& self) { return self.dim() == 0 ? self.reshape({1}) : self; }

Tensor atleast_2d(const Tensor& self) {
  if (self.dim() == 0) return self.reshape({1, 1});
  return self.dim() == 1 ? self.unsqueeze(0) : self;
}

Tensor atleast_3d(const Tensor& self) {
  switch (self.dim()) {
    case 0:
      return self.reshape({1, 1, 1});
    case 1:
      return self.unsqueeze(0).unsqueeze(-1);
    case 2:
      return self.unsqueeze(-1);
    default:
      return self;
  }
}

#define TESSERA_ATLEAST_SEQUENCE(name)                            \
  std::vector<Tensor> name##_Sequence(TensorList tensors) {       \
    std::vector<Tensor> out;                                      \
    for (const Tensor& t : tensors) out.push_back(at::name(t));   \
    return out;                                                   \
  }
TESSERA_ATLEAST_SEQUENCE(atleast_1d)
TESSERA_ATLEAST_SEQUENCE(atleast_2d)
TESSERA_ATLEAST_SEQUENCE(atleast_3d)
#undef TESSERA_ATLEAST_SEQUENCE

int64_t numel(const Tensor& self) { return self.numel(); }

// ---------------------------------------------------------------- diagonals

// A tensor whose (offset, dim1, dim2) diagonal is self's last dim: zeros elsewhere.
Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t rank = self.dim() + 1;
  const int64_t d1 = wrap_dim(dim1, rank), d2 = wrap_dim(dim2, rank);
  TORCH_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t n = (self.dim() == 0 ? 1 : self.size(-1)) + std::abs(offset);
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  if (!sizes.empty()) sizes.pop_back();
  sizes.insert(sizes.begin() + std::min(d1, d2), n);
  sizes.insert(sizes.begin() + std::max(d1, d2), n);
  Tensor result = at::zeros(sizes, self.options());
  result.diagonal(offset, d1, d2).copy_(self);
  return result;
}

Tensor diag(const Tensor& self, int64_t diagonal) {
  TORCH_CHECK(self.dim() == 1 || self.dim() == 2, "diag(): Supports 1D or 2D tensors. Got ", self.dim(), "D");
  if (self.dim() == 1) return at::diag_embed(self, diagonal, 0, 1);
  return self.diagonal(diagonal).clone(c10::MemoryFormat::Contiguous);
}

Tensor diagflat(const Tensor& self, int64_t offset) { return at::diag_embed(self.contiguous().view({-1}), offset, 0, 1); }

// ---------------------------------------------------------------- diff

// The n-th forward difference along dim of [prepend, self, append]; bool tensors take
// logical_xor (numpy's rule).
Tensor diff(const Tensor& self, int64_t n, int64_t dim, const std::optional<Tensor>& prepend,
            const std::optional<Tensor>& append) {
  TORCH_CHECK(self.dim() >= 1, "diff expects input to be at least one-dimensional");
  TORCH_CHECK(n >= 0, "order must be non-negative but got ", n);
  for (const auto* extra : {&prepend, &append}) {
    if (extra->has_value() && (*extra)->defined()) {
      TORCH_CHECK((*extra)->dim() == self.dim(), "diff expects prepend or append to be the same dimension as input");
    }
  }
  std::vector<Tensor> parts;
  if (prepend && prepend->defined()) parts.push_back(*prepend);
  parts.push_back(self);
  if (append && append->defined()) parts.push_back(*append);
  Tensor x = parts.size() == 1 ? self : at::cat(parts, dim);
  const int64_t d = wrap_dim(dim, x.dim());
  for (int64_t i = 0; i < n && x.size(d) > 0; ++i) {
    const int64_t len = x.size(d) - 1;
    const Tensor hi = x.narrow(d, 1, len), lo = x.narrow(d, 0, len);
    x = x.scalar_type() == c10::kBool ? at::logical_xor(hi, lo) : hi - lo;
  }
  return n == 0 ? x.clone() : x;
}

}  // namespace at::inline tessera::native
