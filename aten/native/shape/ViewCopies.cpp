// The *_copy forms of the view operators (torch's functionalization names: t_copy,
// select_copy, view_copy, ...): the view's result cloned into new memory (clone's
// preserve_format, as torch's: a dense view such as t() keeps its strides, any other is
// made contiguous), never sharing memory with the input. Each is a composite over its
// view, so its gradient, its Meta kernel and its checks (as_strided_copy's bounds among
// them) are the view's own.
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera::native {

namespace {
// The input with its conjugate and negative bits applied (a copy only where one is set), as
// torch's fallbacks hand it to a *_copy kernel: view_as_real and view(dtype) refuse those
// bits, and a copy carries none of them.
Tensor resolved(const Tensor& self) { return self.resolve_conj().resolve_neg(); }

Tensor copied(const Tensor& view) { return view.clone(); }

std::vector<Tensor> copied(const std::vector<Tensor>& views) {
  std::vector<Tensor> out;
  out.reserve(views.size());
  for (const Tensor& v : views) out.push_back(copied(v));
  return out;
}
}  // namespace

Tensor view_as_real_copy(const Tensor& self) { return copied(at::view_as_real(resolved(self))); }
Tensor view_as_complex_copy(const Tensor& self) { return copied(at::view_as_complex(resolved(self))); }

Tensor as_strided_copy(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                       std::optional<int64_t> storage_offset) {
  return copied(resolved(self).as_strided(size, stride, storage_offset));
}

Tensor diagonal_copy(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  return copied(resolved(self).diagonal(offset, dim1, dim2));
}

Tensor expand_copy(const Tensor& self, IntArrayRef size, bool implicit) {
  return copied(resolved(self).expand(size, implicit));
}
Tensor permute_copy(const Tensor& self, IntArrayRef dims) { return copied(resolved(self).permute(dims)); }
Tensor select_copy_int(const Tensor& self, int64_t dim, int64_t index) {
  return copied(resolved(self).select(dim, index));
}
Tensor detach_copy(const Tensor& self) { return copied(resolved(self).detach()); }

Tensor slice_copy_Tensor(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                         int64_t step) {
  return copied(at::slice(resolved(self), dim, start, end, step));
}

Tensor squeeze_copy(const Tensor& self) { return copied(resolved(self).squeeze()); }
Tensor squeeze_copy_dim(const Tensor& self, int64_t dim) { return copied(resolved(self).squeeze(dim)); }
Tensor t_copy(const Tensor& self) { return copied(resolved(self).t()); }
Tensor transpose_copy_int(const Tensor& self, int64_t dim0, int64_t dim1) {
  return copied(resolved(self).transpose(dim0, dim1));
}
Tensor unsqueeze_copy(const Tensor& self, int64_t dim) { return copied(resolved(self).unsqueeze(dim)); }
// (where no view of that shape exists, torch's view_copy copies through reshape: the values
// are the same, so it never refuses what reshape takes)
Tensor view_copy(const Tensor& self, IntArrayRef size) { return copied(resolved(self).reshape(size)); }
Tensor view_copy_dtype(const Tensor& self, c10::ScalarType dtype) { return copied(resolved(self).view(dtype)); }

Tensor unfold_copy(const Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  return copied(resolved(self).unfold(dimension, size, step));
}

Tensor alias_copy(const Tensor& self) { return copied(at::alias(resolved(self))); }

std::vector<Tensor> split_copy_Tensor(const Tensor& self, int64_t split_size, int64_t dim) {
  return copied(resolved(self).split(split_size, dim));
}
std::vector<Tensor> split_with_sizes_copy(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  return copied(resolved(self).split_with_sizes(split_sizes, dim));
}
std::vector<Tensor> unbind_copy_int(const Tensor& self, int64_t dim) { return copied(resolved(self).unbind(dim)); }

}  // namespace at::inline tessera::native
