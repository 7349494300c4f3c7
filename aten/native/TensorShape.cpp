// Views: new geometry over the same storage, sharing the base's version counter.
#include <aten/native/NativeFunctions.h>
#include <aten/native/TensorFactories.h>

#include <optional>

namespace at::inline tessera::native {

namespace {

Tensor make_view(const Tensor& self, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  c10::TensorImpl* base = self.unsafeGetTensorImpl();
  auto impl = c10::make_intrusive<c10::TensorImpl>(base->storage(), base->key_set(), base->scalar_type(), base->layout());
  impl->set_sizes_and_strides(sizes, strides);
  impl->set_storage_offset(offset);
  impl->set_version_counter(base->version_counter());
  return Tensor(std::move(impl));
}

// Resolves one -1 in a view's shape, or raises torch's errors.
std::vector<int64_t> infer_view_size(IntArrayRef shape, int64_t numel) {
  std::vector<int64_t> out = shape.vec();
  std::optional<size_t> infer;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      TORCH_CHECK(!infer, "only one dimension can be inferred");
      infer = i;
    } else {
      TORCH_CHECK(shape[i] >= 0, "invalid shape dimension ", shape[i]);
      known *= shape[i];
    }
  }
  if (infer) {
    TORCH_CHECK(known != 0 ? numel % known == 0 : false, "shape '", shape, "' is invalid for input of size ", numel);
    out[*infer] = numel / known;
  } else {
    TORCH_CHECK(known == numel, "shape '", shape, "' is invalid for input of size ", numel);
  }
  return out;
}

// Strides that view a tensor of (old sizes, old strides) with new sizes without copying,
// or nullopt when some new dimension would span two non-contiguous chunks of the old.
std::optional<std::vector<int64_t>> view_strides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                                 IntArrayRef new_sizes, int64_t numel) {
  std::vector<int64_t> out(new_sizes.size(), 1);
  if (old_sizes.empty() || numel == 0) {
    if (numel == 0 && old_sizes.equals(new_sizes)) return old_strides.vec();
    int64_t s = 1;
    for (size_t i = new_sizes.size(); i-- > 0;) {
      out[i] = s;
      s *= std::max<int64_t>(new_sizes[i], 1);
    }
    return out;
  }
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    // A chunk ends where the next outer dim is not laid out right after this one.
    if (d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

}  // namespace

Tensor view(const Tensor& self, IntArrayRef size) {
  std::vector<int64_t> shape = infer_view_size(size, self.numel());
  auto strides = view_strides(self.sizes(), self.strides(), shape, self.numel());
  TORCH_CHECK(strides.has_value(),
              "view size is not compatible with input tensor's size and stride (at least one dimension spans "
              "across two contiguous subspaces). Use .reshape(...) instead.");
  return make_view(self, shape, *strides, self.storage_offset());
}

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  TORCH_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape");
  int64_t offset = storage_offset.value_or(self.storage_offset());
  TORCH_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  size_t needed = storage_bytes_for(size, stride, self.itemsize());
  size_t have = self.storage().defined() ? self.storage().nbytes() : 0;
  if (needed > 0) {
    needed += static_cast<size_t>(offset) * self.itemsize();
    TORCH_CHECK(needed <= have, "setStorage: sizes ", size, ", strides ", stride, ", storage offset ", offset,
                ", and itemsize ", self.itemsize(), " requiring a storage size of ", needed,
                " are out of bounds for storage of size ", have);
  }
  return make_view(self, size, stride, offset);
}

}  // namespace at::inline tessera::native
