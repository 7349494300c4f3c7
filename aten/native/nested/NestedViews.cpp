// Views of nested tensors, as torch 1.13 has them: transpose of two component dims, and
// view/reshape with the batch size first and each component reshaped. A view shares the
// buffer and gives each component its own strides and offset (NestedTensorImpl); reshape
// is a view when every component allows one, else a packed copy viewed.
#include <aten/core/NestedTensorImpl.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/nested/NestedOps.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <optional>
#include <vector>

namespace at::inline tessera::native {

namespace {

Tensor make_nested_view(const Tensor& self, std::vector<std::vector<int64_t>> sizes,
                        std::vector<std::vector<int64_t>> strides) {
  auto view =
      c10::make_intrusive<NestedTensorImpl>(self, std::move(sizes), std::move(strides), nested_impl_of(self).offsets());
  view->set_version_counter(self.unsafeGetTensorImpl()->version_counter());
  view->_set_neg(self.is_neg());
  if (self.is_conj()) view->_set_conj(true);
  return Tensor(std::move(view));
}

int64_t product(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// One component's new shape from `proposed` (the requested shape without the batch dim).
// A -1 at a position the component already has keeps its size there; when the rank grows
// only one may, and a -1 among the new trailing dims is refused (torch infers nothing).
std::vector<int64_t> component_shape(IntArrayRef proposed, const std::vector<int64_t>& old, IntArrayRef requested) {
  std::vector<int64_t> shape(proposed.begin(), proposed.end());
  const size_t kept = std::min(shape.size(), old.size());
  bool inherited = false;
  for (size_t d = 0; d < kept; ++d) {
    TORCH_CHECK(shape[d] >= -1, "invalid shape dimension ", shape[d]);
    if (shape[d] != -1) continue;
    TORCH_CHECK(!inherited || shape.size() <= old.size(), "only one dimension can be inferred");
    shape[d] = old[d];
    inherited = true;
  }
  bool inferred = false;
  for (size_t d = kept; d < shape.size(); ++d) {
    TORCH_CHECK(shape[d] >= -1, "invalid shape dimension ", shape[d]);
    if (shape[d] != -1) continue;
    TORCH_CHECK(!inferred, "only one dimension can be inferred");
    inferred = true;
  }
  TORCH_CHECK(!inferred, "nested tensor does not infer shape");
  const int64_t numel = product(old);
  TORCH_CHECK(product(shape) == numel, "shape '", requested, "' is invalid for input of size ", numel);
  return shape;
}

struct Reshaped {
  std::vector<std::vector<int64_t>> sizes;
  std::vector<std::optional<std::vector<int64_t>>> strides;  // nullopt: no view of that component
};

Reshaped reshaped(const Tensor& self, IntArrayRef shape, const char* op) {
  const NestedTensorImpl& nt = nested_impl_of(self);
  TORCH_CHECK(!shape.empty(), "shape '", shape, "' is invalid for a nested tensor");
  TORCH_CHECK(nt.num_components() > 0, "empty nested tensor cannot be reshaped");
  TORCH_CHECK(shape[0] == nt.num_components(), op,
              ": For now nested ", op, " cannot change or infer the implicit batch dimension");
  Reshaped out;
  for (int64_t i = 0; i < nt.num_components(); ++i) {
    const auto& old = nt.component_sizes()[static_cast<size_t>(i)];
    out.sizes.push_back(component_shape(shape.slice(1), old, shape));
    out.strides.push_back(view_strides(old, nt.component_strides()[static_cast<size_t>(i)], out.sizes.back(),
                                       product(old)));
  }
  return out;
}

bool viewable(const Reshaped& r) {
  for (const auto& s : r.strides) {
    if (!s) return false;
  }
  return true;
}

}  // namespace

Tensor transpose_nested(const Tensor& self, int64_t dim0, int64_t dim1) {
  const int64_t d0 = wrap_dim(dim0, self.dim()), d1 = wrap_dim(dim1, self.dim());
  if (d0 == d1) return nested_alias(self);
  TORCH_CHECK(d0 != 0 && d1 != 0, "Nested tensor dimension 0 cannot be transposed");
  auto sizes = nested_impl_of(self).component_sizes();
  auto strides = nested_impl_of(self).component_strides();
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::swap(sizes[i][static_cast<size_t>(d0 - 1)], sizes[i][static_cast<size_t>(d1 - 1)]);
    std::swap(strides[i][static_cast<size_t>(d0 - 1)], strides[i][static_cast<size_t>(d1 - 1)]);
  }
  return make_nested_view(self, std::move(sizes), std::move(strides));
}

Tensor view_nested(const Tensor& self, IntArrayRef size) {
  Reshaped r = reshaped(self, size, "view");
  TORCH_CHECK(viewable(r), "view size is not compatible with input tensor's size and stride (at least one dimension "
              "spans across two contiguous subspaces). Use .reshape(...) instead.");
  std::vector<std::vector<int64_t>> strides;
  for (auto& s : r.strides) strides.push_back(std::move(*s));
  return make_nested_view(self, std::move(r.sizes), std::move(strides));
}

// reshape's nested branch: through view (so autograd records a view) when every component
// allows one, else a packed copy viewed.
Tensor nested_reshape(const Tensor& self, IntArrayRef shape) {
  if (viewable(reshaped(self, shape, "reshape"))) return self.view(shape);
  return self.clone(c10::MemoryFormat::Contiguous).view(shape);
}

}  // namespace at::inline tessera::native
