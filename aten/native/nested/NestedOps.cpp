// The operators torch 1.13 runs on nested tensors (NestedTensorCPU): add and mul (with
// another nested tensor of the same shapes, or a number), relu, gelu, softmax over a
// component dim, bmm, clone and dropout. Elementwise work runs once over the packed
// buffer (a view that is not packed is packed first, or, in place, done per component);
// the rest runs per component on dense views. matmul and linear on nested
// tensors are their composites' nested branches (nested_matmul, nested_linear below), so
// that autograd differentiates them through unbind and as_nested_tensor.
#include <aten/core/NestedTensorImpl.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/nested/NestedOps.h>
#include <aten/ops/Functions.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace at::inline tessera::native {

const NestedTensorImpl& nested_impl_of(const Tensor& t) {
  const NestedTensorImpl* impl = get_nested_impl(t);
  TORCH_INTERNAL_ASSERT(impl != nullptr, "a NestedTensorCPU kernel got a tensor that is not nested");
  return *impl;
}

namespace {

// A new nested tensor over `buffer` (1-d, contiguous, fresh) laid out as `like`: packed, or
// with like's strides and offsets when like is a layout-preserving copy (clone_nested).
Tensor nested_like(const Tensor& buffer, const Tensor& like) {
  const NestedTensorImpl& nt = nested_impl_of(like);
  if (nt.is_packed()) return Tensor(c10::make_intrusive<NestedTensorImpl>(buffer.contiguous(), nt.component_sizes()));
  return Tensor(c10::make_intrusive<NestedTensorImpl>(buffer.contiguous(), nt.component_sizes(), nt.component_strides(),
                                                      nt.offsets()));
}

// A new nested tensor holding copies of `parts` (dense, one rank), packed: the constructor's
// own kernel (below autograd here, so it records nothing).
Tensor pack(const std::vector<Tensor>& parts, c10::ScalarType dtype) {
  return at::_nested_tensor_from_tensor_list(parts, dtype);
}

std::vector<Tensor> components(const Tensor& nested) {
  std::vector<Tensor> out;
  for (int64_t i = 0; i < nested_impl_of(nested).num_components(); ++i) out.push_back(nested_component(nested, i));
  return out;
}

// The other operand of add/mul as torch 1.13 takes it: a nested tensor of the same
// component shapes (both packed), or a 0-dim tensor (a Python number); nullopt for a
// nested one.
std::optional<Tensor> scalar_operand(const Tensor& self, const Tensor& other, const std::string& op) {
  if (other.is_nested()) {
    TORCH_CHECK(nested_impl_of(self).component_sizes() == nested_impl_of(other).component_sizes(), op,
                " does not support broadcasting when given a NestedTensor");
    TORCH_CHECK(nested_impl_of(self).is_packed() && nested_impl_of(other).is_packed(), op,
                " does not support non-contiguous NestedTensor inputs");
    return std::nullopt;
  }
  TORCH_CHECK(other.dim() == 0,
              "Expected both self and other to be nested, but got a nested self and non-nested other");
  return other;
}

// A nested input of an out-of-place elementwise op, packed (torch's result is packed too).
Tensor packed(const Tensor& nested) {
  return nested_impl_of(nested).is_packed() ? nested : clone_nested(nested, c10::MemoryFormat::Contiguous);
}

template <typename Fn>
Tensor binary(const Tensor& self, const Tensor& other, const char* op, Fn fn) {
  if (!self.is_nested()) {  // a number first: 2 * nested
    TORCH_CHECK(self.dim() == 0,
                "Expected both self and other to be nested, but got a non-nested self and nested other");
    const Tensor b = packed(other);
    return nested_like(fn(self, nested_buffer(b)), b);
  }
  const std::optional<Tensor> number = scalar_operand(self, other, op);
  const Tensor a = packed(self);
  return nested_like(fn(nested_buffer(a), number ? *number : nested_buffer(other)), a);
}

// In place: over the buffer when self is packed, else component by component (a view's
// components are the same elements in another order).
template <typename Fn>
Tensor& binary_(Tensor& self, const Tensor& other, const char* op, Fn fn) {
  TORCH_CHECK(self.is_nested(), "Expected both self and other to be nested, but got a non-nested self and nested "
              "other");
  const std::optional<Tensor> number = scalar_operand(self, other, std::string(op) + "_");
  if (!number) {
    Tensor flat = nested_buffer(self);
    fn(flat, nested_buffer(other));
  } else if (nested_impl_of(self).is_packed()) {
    Tensor flat = nested_buffer(self);
    fn(flat, *number);
  } else {
    for (Tensor c : components(self)) fn(c, *number);
  }
  return self;
}

}  // namespace

Tensor add_nested(const Tensor& self, const Tensor& other, const c10::Scalar& alpha) {
  return binary(self, other, "add", [&](const Tensor& a, const Tensor& b) { return at::add(a, b, alpha); });
}
Tensor& add_nested_(Tensor& self, const Tensor& other, const c10::Scalar& alpha) {
  return binary_(self, other, "add", [&](Tensor& a, const Tensor& b) { a.add_(b, alpha); });
}
Tensor mul_nested(const Tensor& self, const Tensor& other) {
  return binary(self, other, "mul", [](const Tensor& a, const Tensor& b) { return at::mul(a, b); });
}
Tensor& mul_nested_(Tensor& self, const Tensor& other) {
  return binary_(self, other, "mul", [](Tensor& a, const Tensor& b) { a.mul_(b); });
}

Tensor relu_nested(const Tensor& self) {
  const Tensor a = packed(self);
  return nested_like(at::relu(nested_buffer(a)), a);
}
Tensor& relu_nested_(Tensor& self) {
  if (nested_impl_of(self).is_packed()) {
    nested_buffer(self).relu_();
  } else {
    for (Tensor c : components(self)) c.relu_();
  }
  return self;
}
Tensor gelu_nested(const Tensor& self, std::string_view approximate) {
  const Tensor a = packed(self);
  return nested_like(at::gelu(nested_buffer(a), approximate), a);
}

Tensor softmax_nested(const Tensor& self, int64_t dim, bool half_to_float) {
  if (nested_impl_of(self).num_components() == 0) return clone_nested(self, std::nullopt);  // (as torch: nothing to do)
  const int64_t ndim = self.dim();
  TORCH_CHECK_INDEX(dim >= -ndim && dim < ndim, "Dimension out of range (expected to be in range of [", -ndim, ", ",
                    ndim - 1, "], but got ", dim, ")");
  const int64_t d = dim < 0 ? dim + ndim : dim;
  TORCH_CHECK(d != 0, "Cannot apply softmax across nested dimension 0");
  std::vector<Tensor> out;
  for (const Tensor& c : components(self)) out.push_back(at::_softmax(c, d - 1, half_to_float));
  return pack(out, half_to_float ? c10::kFloat : self.scalar_type());
}

Tensor bmm_nested(const Tensor& self, const Tensor& mat2) {
  TORCH_CHECK(self.is_nested() && mat2.is_nested(), "Expected both to be nested, but got a ",
              self.is_nested() ? "nested" : "non-nested", " self and ", mat2.is_nested() ? "nested" : "non-nested",
              " other");
  TORCH_CHECK(self.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(mat2.dim() == 3, "batch2 must be a 3D tensor");
  const std::vector<Tensor> a = components(self), b = components(mat2);
  TORCH_CHECK(a.size() == b.size(), "Expected size for first two dimensions of batch2 tensor to be: [", a.size(),
              ", ...] but got: [", b.size(), ", ...].");
  std::vector<Tensor> out;
  for (size_t i = 0; i < a.size(); ++i) {
    TORCH_CHECK(a[i].size(1) == b[i].size(0), i, "-th nested matrices in batch cannot be multiplied (", a[i].size(0),
                "x", a[i].size(1), " and ", b[i].size(0), "x", b[i].size(1), ")");
    out.push_back(at::mm(a[i], b[i]));
  }
  return pack(out, c10::promoteTypes(self.scalar_type(), mat2.scalar_type()));
}

Tensor clone_nested(const Tensor& self, std::optional<c10::MemoryFormat> memory_format) {
  const c10::MemoryFormat format = memory_format.value_or(c10::MemoryFormat::Preserve);
  TORCH_CHECK(format == c10::MemoryFormat::Preserve || format == c10::MemoryFormat::Contiguous,
              "Nested tensor clone supports Preserve and Contiguous memory formats, called clone with memory format: ",
              format);
  const NestedTensorImpl& nt = nested_impl_of(self);
  if (format == c10::MemoryFormat::Contiguous || nt.is_packed()) return pack(components(self), self.scalar_type());
  // Preserve: each component keeps its view's order of strides (empty_like's layout), the
  // components one after another in a fresh buffer.
  Tensor buffer = at::empty({self.numel()}, TensorOptions().dtype(self.scalar_type()));
  std::vector<std::vector<int64_t>> strides;
  std::vector<int64_t> offsets;
  int64_t next = 0;
  for (const Tensor& c : components(self)) {
    std::vector<int64_t> dense = infer_dense_strides(c.sizes(), c.strides());
    at::as_strided(buffer, c.sizes(), dense, next).copy_(c);
    strides.push_back(std::move(dense));
    offsets.push_back(next);
    next += c.numel();
  }
  return Tensor(c10::make_intrusive<NestedTensorImpl>(buffer, nt.component_sizes(), std::move(strides),
                                                      std::move(offsets)));
}

// A view's layout is kept, as torch's dropout keeps it: over a layout-preserving copy.
std::tuple<Tensor, Tensor> native_dropout_nested(const Tensor& input, double p, std::optional<bool> train) {
  const Tensor x = nested_impl_of(input).is_packed() ? input : clone_nested(input, c10::MemoryFormat::Preserve);
  auto [out, mask] = at::native_dropout(nested_buffer(x), p, train);
  return {nested_like(out, x), nested_like(mask, x)};
}

// matmul and linear of nested tensors, called by their composites: per component, through
// differentiable unbind and as_nested_tensor.
Tensor nested_matmul(const Tensor& self, const Tensor& other) {
  TORCH_CHECK(self.is_nested() && other.is_nested(), "Expected both to be nested, but got a ",
              self.is_nested() ? "nested" : "non-nested", " self and ", other.is_nested() ? "nested" : "non-nested",
              " other");
  TORCH_CHECK(self.dim() >= 3 && other.dim() >= 3, "matmul: For nested tensors, only inputs with >= 3 dims are "
              "currently supported. 1st input has rank: ", self.dim(), "; 2nd input has rank: ", other.dim(), ".");
  const std::vector<Tensor> a = self.unbind(0), b = other.unbind(0);
  TORCH_CHECK(a.size() == b.size(), "matmul: Expected size for first dim of the 2nd input to be: ", a.size(),
              " but got: ", b.size(), ".");
  std::vector<Tensor> out;
  for (size_t i = 0; i < a.size(); ++i) {
    // (no broadcasting between components' batch dims, as torch 1.13)
    const IntArrayRef sa = a[i].sizes(), sb = b[i].sizes();
    TORCH_CHECK(sa.slice(0, sa.size() - 2) == sb.slice(0, sb.size() - 2), "matmul: For nested tensors, batch "
                "dimensions must have the same sizes, no broadcasting is currently performed. Got batch shapes for "
                "self ", sa.slice(0, sa.size() - 2), " and batch shapes for mat2 ", sb.slice(0, sb.size() - 2));
    TORCH_CHECK(sa.back() == sb[sb.size() - 2], "matmul: Nested tensors cannot be matrix multiplied, last dimension "
                "of self has sizes ", sa.back(), " second last dimension of mat2 has sizes ", sb[sb.size() - 2]);
    out.push_back(at::matmul(a[i], b[i]));
  }
  return at::_nested_tensor_from_tensor_list(out);
}

Tensor nested_linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  TORCH_CHECK(nested_impl_of(input).is_packed(), "for now linear only supports contiguous nested tensor");
  TORCH_CHECK(input.dim() == 3 && weight.dim() == 2, "Linear requires nested_tensor.dim == 3 and dense_matrix.dim == "
              "2. Nested tensor dim: ", input.dim(), ". Dense tensor dim: ", weight.dim());
  std::vector<Tensor> out;
  for (const Tensor& c : input.unbind(0)) {
    TORCH_CHECK(c.size(-1) == weight.size(1), "Shape mismatch for NestedTensor Linear: Expected input's (a nested "
                "tensor) 'last_dim' to equal 'weight.size(1), but got: last_dim = ", c.size(-1),
                ", and weight.size(1) = ", weight.size(1));
    out.push_back(at::linear(c, weight, bias));
  }
  return at::_nested_tensor_from_tensor_list(out);
}

}  // namespace at::inline tessera::native
