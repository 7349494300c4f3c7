#include <autograd/FunctionsManual.h>

#include <aten/core/NestedTensorImpl.h>
#include <aten/core/TensorOperators.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>

namespace torch::autograd::generated::details {

namespace {
int64_t wrap(int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);
  return dim < 0 ? dim + n : dim;
}

// The reduced dims, wrapped and sorted; none (or an empty list) means every dim. A 0-dim
// tensor has none to index (the forward accepted dim 0 or -1 as its scalar "dim").
std::vector<int64_t> reduced_dims(std::optional<IntArrayRef> dims, int64_t ndim) {
  std::vector<int64_t> out;
  if (ndim == 0) return out;
  if (!dims || dims->empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
  } else {
    for (int64_t d : *dims) out.push_back(wrap(d, ndim));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int64_t reduced_count(IntArrayRef sizes, std::optional<IntArrayRef> dims) {
  int64_t n = 1;
  for (int64_t d : reduced_dims(dims, static_cast<int64_t>(sizes.size()))) n *= sizes[d];
  return n;
}
}  // namespace

Tensor not_implemented(const char* what) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "the derivative for '", what, "' is not implemented.");
}

void not_implemented(const char* op, const char* input) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "the derivative for '", op, "' is not implemented (input '", input, "').");
}

Tensor restore_reduced_dims(const Tensor& grad, std::optional<IntArrayRef> dims, int64_t ndim, bool keepdim) {
  if (keepdim || ndim == 0) return grad;
  Tensor g = grad;
  for (int64_t d : reduced_dims(dims, ndim)) g = g.unsqueeze(d);
  return g;
}

Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, std::optional<IntArrayRef> dims, bool keepdim) {
  return restore_reduced_dims(grad, dims, static_cast<int64_t>(sizes.size()), keepdim).expand(sizes);
}

Tensor mean_backward(const Tensor& grad, IntArrayRef sizes, std::optional<IntArrayRef> dim, bool keepdim) {
  const int64_t n = reduced_count(sizes, dim);
  return sum_backward(grad, sizes, dim, keepdim) / static_cast<double>(n);
}

Tensor mean_backward(const Tensor& grad, const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim) {
  return mean_backward(grad, self.sizes(), dim, keepdim);
}

Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim, bool keepdim) {
  if (self.dim() == 0) return grad;
  dim = wrap(dim, self.dim());
  Tensor g = keepdim ? grad : grad.unsqueeze(dim);
  Tensor r = keepdim ? result : result.unsqueeze(dim);
  if (!self.eq(0).any().item().toBool()) return g * conjugate(r / self);
  // With zeros the quotient is undefined: the product of the other elements, from
  // exclusive prefix and suffix products.
  int64_t n = self.size(dim);
  Tensor ones = at::ones_like(self.narrow(dim, 0, 1));
  Tensor prefix = at::cat({ones, self.narrow(dim, 0, n - 1).cumprod(dim)}, dim);
  Tensor rev = self.flip({dim});
  Tensor suffix = at::cat({ones, rev.narrow(dim, 0, n - 1).cumprod(dim)}, dim).flip({dim});
  return g * conjugate(prefix * suffix);
}

Tensor var_backward(const Tensor& grad, const Tensor& self, std::optional<IntArrayRef> dim,
                    std::optional<int64_t> correction, bool keepdim) {
  int64_t n = reduced_count(self.sizes(), dim);
  double divisor = static_cast<double>(n - correction.value_or(1));
  Tensor g = restore_reduced_dims(grad, dim, self.dim(), keepdim);
  std::vector<int64_t> dims = reduced_dims(dim, self.dim());
  return g * (self - self.mean(IntArrayRef(dims), true)) * (2.0 / divisor);
}

Tensor std_backward(const Tensor& result, const Tensor& grad, const Tensor& self, std::optional<IntArrayRef> dim,
                    std::optional<int64_t> correction, bool keepdim) {
  Tensor g = grad / (result * 2);
  return var_backward(at::where(result.eq(0), at::zeros_like(g), g), self, dim, correction, keepdim);
}

Tensor amaxamin_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim, bool keepdim) {
  std::optional<IntArrayRef> dims(dim);
  Tensor r = restore_reduced_dims(result, dims, self.dim(), keepdim);
  Tensor g = restore_reduced_dims(grad, dims, self.dim(), keepdim);
  Tensor mask = self.eq(r).to(grad.scalar_type());
  std::vector<int64_t> all = reduced_dims(dims, self.dim());
  return g * mask / mask.sum(IntArrayRef(all), true);
}

// I1'(x) = I0(x) - I1(x)/x, and for the scaled form I0e(x) - I1e(x) (sign(x) + 1/x); both are
// 1/2 at 0. Within machine epsilon of 0 (where I1(x)/x meets subnormals and 0/0) the
// slope is its limit 1/2, and x is replaced by 1 there so that the masked-off branch stays
// finite and a second differentiation meets no 0/0 either.
Tensor special_i1_backward(const Tensor& grad, const Tensor& self, const Tensor& result, bool scaled) {
  const double eps = self.scalar_type() == c10::kDouble ? 2.220446049250313e-16 : 1.1920928955078125e-07;
  const Tensor at_zero = self.abs().le(eps);
  const Tensor safe = at::where(at_zero, at::ones_like(self), self);
  const Tensor slope = scaled ? at::special_i0e(self) - result * (self.sign() + safe.reciprocal())
                              : at::i0(self) - result / safe;
  return grad * at::where(at_zero, at::full_like(self, 0.5), slope);
}

Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  Tensor mask = result.isnan().item().toBool() ? self.isnan() : self.eq(result);
  Tensor m = mask.to(grad.scalar_type());
  return m * (grad / m.sum());
}

Tensor index_select_backward_along(const Tensor& grad, const Tensor& indices, int64_t dim, IntArrayRef sizes,
                                   bool keepdim) {
  int64_t ndim = static_cast<int64_t>(sizes.size());
  if (ndim == 0) return grad.reshape(sizes);
  dim = wrap(dim, ndim);
  Tensor g = keepdim || grad.dim() == ndim ? grad : grad.unsqueeze(dim);
  Tensor idx = keepdim || indices.dim() == ndim ? indices : indices.unsqueeze(dim);
  return at::zeros(sizes, g.options()).scatter_add(dim, idx, g);
}

Tensor index_select_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, const Tensor& index) {
  return at::zeros(sizes, grad.options()).index_add(dim, index, grad);
}

Tensor gather_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index) {
  return at::zeros(self.sizes(), grad.options()).scatter_add(dim, index, grad);
}

std::tuple<Tensor, Tensor> scatter_reduce_backward(const Tensor& grad, const Tensor& self, int64_t dim,
                                                   const Tensor& index, const Tensor& src, std::string_view reduce,
                                                   bool include_self, const Tensor& result) {
  Tensor grad_self, grad_src;
  if (reduce == "sum") {
    grad_self = grad;
    grad_src = grad.gather(dim, index);
  } else if (reduce == "mean") {
    Tensor count = (include_self ? at::ones_like(grad) : at::zeros_like(grad)).scatter_add(dim, index, at::ones_like(src));
    grad_self = grad / count.masked_fill(count.eq(0), 1);
    grad_src = grad_self.gather(dim, index);
  } else if (reduce == "prod") {
    // result / x is 0 / 0 where x is 0: divide instead out of the product taken with x as 1
    // (for self), or with a slot's only zero source as 1. A slot with two zeros has no
    // nonzero partial derivative, which (grad * result) / x gives.
    const Tensor masked_self = self.masked_fill(self.eq(0), 1);
    grad_self = grad * masked_self.scatter_reduce(dim, index, src, reduce, include_self) / masked_self;
    const Tensor src_zero = src.eq(0);
    const Tensor zeros_in_slot =
        at::zeros_like(self).scatter_add(dim, index, src_zero.to(self.scalar_type())).gather(dim, index);
    const Tensor only_zero = src_zero.logical_and(zeros_in_slot.eq(1));
    const Tensor without_it = self.scatter_reduce(dim, index, src.masked_fill(only_zero, 1), reduce, include_self);
    grad_src = at::where(only_zero, (grad * without_it).gather(dim, index),
                         (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1));
  } else {  // amax, amin: the grad shared evenly among the elements equal to the result
    Tensor self_is_result = self.eq(result).to(grad.scalar_type());
    if (!include_self) self_is_result = self_is_result.scatter(dim, index, 0);
    const Tensor src_is_result = src.eq(result.gather(dim, index)).to(grad.scalar_type());
    const Tensor share = grad / self_is_result.scatter_add(dim, index, src_is_result);
    grad_self = self_is_result * share;
    grad_src = src_is_result * share.gather(dim, index);
  }
  if (!include_self) grad_self = grad_self.scatter(dim, index, 0);
  return {grad_self, grad_src};
}

Tensor index_backward(const Tensor& grad, IntArrayRef sizes, at::ArrayRef<std::optional<Tensor>> indices) {
  return at::zeros(sizes, grad.options()).index_put(indices, grad, true);
}

Tensor index_put_values_backward(const Tensor& grad, at::ArrayRef<std::optional<Tensor>> indices, const Tensor& values) {
  return at::index(grad, indices).sum_to_size(values.sizes());
}

Tensor take_backward(const Tensor& grad, const Tensor& self, const Tensor& index) {
  std::optional<Tensor> flat_index = index.reshape({-1});
  Tensor flat = at::zeros({self.numel()}, grad.options()).index_put({&flat_index, 1}, grad.reshape({-1}), true);
  return flat.view(self.sizes());
}

Tensor masked_select_backward(const Tensor& grad, const Tensor& self, const Tensor& mask) {
  // Scattered over the broadcast shape in the order masked_select read it; the engine sums
  // the result down to self's shape.
  const std::vector<int64_t> shape = at::broadcast_tensors({self, mask})[0].sizes().vec();
  if (shape.empty()) {  // 0-dim operands: the forward read them as one-element vectors
    std::optional<Tensor> m = mask.reshape({1});
    return at::zeros({1}, grad.options()).index_put({&m, 1}, grad, false).reshape({});
  }
  std::optional<Tensor> m = mask.expand(shape);
  return at::zeros(shape, grad.options()).index_put({&m, 1}, grad, false);
}

Tensor masked_fill_value_backward(const Tensor& grad, const Tensor& mask) {
  return grad.masked_select(mask).sum();
}

Tensor cumsum_backward(const Tensor& grad, int64_t dim) {
  if (grad.dim() == 0) return grad;
  return grad.flip({dim}).cumsum(dim).flip({dim});
}

Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result) {
  if (self.dim() == 0 || self.numel() == 0) return grad;
  dim = wrap(dim, self.dim());
  if (!self.eq(0).any().item().toBool()) return cumsum_backward(grad * conjugate(result), dim) / conjugate(self);
  // With zeros: grad_k = sum_{j>=k} grad_j * prod_{i<=j, i!=k} x_i, one position at a time.
  int64_t n = self.size(dim);
  std::vector<Tensor> parts;
  for (int64_t k = 0; k < n; ++k) {
    Tensor x_without_k = at::cat({self.narrow(dim, 0, k), at::ones_like(self.narrow(dim, k, 1)),
                                  self.narrow(dim, k + 1, n - k - 1)}, dim);
    Tensor prods = x_without_k.cumprod(dim).narrow(dim, k, n - k);
    parts.push_back((grad.narrow(dim, k, n - k) * conjugate(prods)).sum(IntArrayRef{dim}, true));
  }
  return at::cat(parts, dim);
}

Tensor logcumsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim) {
  if (self.dim() == 0) return grad;
  // d out_j / d x_i = exp(x_i - out_j) for i <= j.
  return cumsum_backward(grad * (-result).exp(), dim) * self.exp();
}

Tensor unsqueeze_to(const Tensor& grad, int64_t dim, IntArrayRef sizes) {
  int64_t ndim = static_cast<int64_t>(sizes.size());
  if (ndim == 0) return grad.reshape(sizes);
  dim = wrap(dim, ndim);
  return sizes[static_cast<size_t>(dim)] == 1 && grad.dim() < ndim ? grad.unsqueeze(dim) : grad;
}

// (a sparse grad, from an op on a sparse input, is written into a dense result: the
// input's gradient is then dense, which a sparse input accepts)
static Tensor strided(const Tensor& grad) { return grad.layout() == c10::kStrided ? grad : grad.to_dense(); }

Tensor select_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t index) {
  const Tensor g = strided(grad);
  Tensor result = at::zeros(sizes, g.options());
  result.select(dim, index).copy_(g);
  return result;
}

Tensor slice_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                      std::optional<int64_t> end, int64_t step) {
  const Tensor g = strided(grad);
  Tensor result = at::zeros(sizes, g.options());
  at::slice(result, dim, start, end, step).copy_(g);
  return result;
}

Tensor diagonal_backward(const Tensor& grad, IntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2) {
  Tensor result = at::zeros(sizes, grad.options());
  result.diagonal(offset, dim1, dim2).copy_(grad);
  return result;
}

Tensor unfold_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t size, int64_t step) {
  int64_t ndim = static_cast<int64_t>(sizes.size());
  Tensor result = at::zeros(sizes, grad.options());
  if (ndim == 0) return grad.reshape(sizes);
  dim = wrap(dim, ndim);
  int64_t windows = grad.size(dim);
  for (int64_t w = 0; w < windows; ++w) {
    // Window w is grad[..., w, ..., :] with the window elements last.
    result.narrow(dim, w * step, size).add_(grad.select(dim, w).movedim(-1, dim));
  }
  return result;
}

Tensor as_strided_backward(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef self_strides, int64_t self_offset,
                           IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  for (size_t i = 0; i < size.size(); ++i) {
    TORCH_CHECK_NOT_IMPLEMENTED(!(size[i] > 1 && stride[i] == 0),
                                "the derivative of as_strided with overlapping elements is not implemented");
  }
  // Only self's geometry is kept (not self), so later in-place writes to self do not matter.
  int64_t expected = 1;
  for (size_t i = self_sizes.size(); i-- > 0;) {
    TORCH_CHECK_NOT_IMPLEMENTED(self_sizes[i] == 1 || self_strides[i] == expected,
                                "the derivative of as_strided of a non-contiguous input is not implemented");
    expected *= self_sizes[i];
  }
  // self is contiguous: its elements are storage positions self_offset .. self_offset+numel.
  Tensor flat = at::zeros({expected}, grad.options());
  int64_t offset = storage_offset.value_or(self_offset) - self_offset;
  flat.as_strided(size, stride, offset).copy_(grad);
  return flat.view(self_sizes);
}

Tensor permute_backward(const Tensor& grad, IntArrayRef dims) {
  int64_t n = static_cast<int64_t>(dims.size());
  std::vector<int64_t> inverse(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) inverse[static_cast<size_t>(wrap(dims[static_cast<size_t>(i)], n))] = i;
  return grad.permute(inverse);
}

Tensor repeat_backward(const Tensor& grad, IntArrayRef repeats, IntArrayRef sizes) {
  int64_t extra = static_cast<int64_t>(repeats.size() - sizes.size());
  Tensor g = grad;
  if (extra > 0) {
    std::vector<int64_t> leading;
    for (int64_t i = 0; i < extra; ++i) leading.push_back(i);
    g = g.sum(IntArrayRef(leading), false);
  }
  // Each remaining dim of size r*s splits into (r, s); summing over r folds the copies.
  std::vector<int64_t> split, sum_dims;
  for (size_t i = 0; i < sizes.size(); ++i) {
    split.push_back(repeats[static_cast<size_t>(extra) + i]);
    split.push_back(sizes[i]);
    sum_dims.push_back(static_cast<int64_t>(2 * i));
  }
  if (sizes.empty()) return g;
  return g.reshape(split).sum(IntArrayRef(sum_dims), false);
}

Tensor roll_backward(const Tensor& grad, IntArrayRef shifts, IntArrayRef dims) {
  std::vector<int64_t> neg;
  for (int64_t s : shifts) neg.push_back(-s);
  return grad.roll(neg, dims);
}

std::tuple<Tensor, Tensor, Tensor> mkldnn_convolution_backward(const Tensor& grad, const Tensor& self,
                                                               const Tensor& weight, const std::optional<Tensor>& bias,
                                                               IntArrayRef padding, IntArrayRef stride,
                                                               IntArrayRef dilation, int64_t groups,
                                                               std::array<bool, 3> mask) {
  std::optional<IntArrayRef> bias_sizes;
  if (bias && bias->defined()) bias_sizes = bias->sizes();
  const std::vector<int64_t> output_padding(padding.size(), 0);
  return at::convolution_backward(grad, self, weight, bias_sizes, stride, padding, dilation, false, output_padding,
                                  groups, mask);
}

Tensor to_padded_tensor_backward(const Tensor& grad, const Tensor& self) {
  const at::NestedTensorImpl* nt = at::get_nested_impl(self);
  TORCH_CHECK(nt != nullptr, "to_padded_tensor_backward: the saved input is not a nested tensor (a saved-tensor hook "
              "returned another kind of tensor)");
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < nt->num_components(); ++i) {
    Tensor g = grad.select(0, i);
    const auto& sizes = nt->component_sizes()[static_cast<size_t>(i)];
    for (size_t d = 0; d < sizes.size(); ++d) g = g.narrow(static_cast<int64_t>(d), 0, sizes[d]);
    parts.push_back(g);
  }
  return at::_nested_tensor_from_tensor_list(parts, self.scalar_type());
}

Tensor view_backward(const Tensor& grad, IntArrayRef self_sizes,
                     const std::optional<std::vector<std::vector<int64_t>>>& nested_sizes) {
  if (!nested_sizes) return grad.reshape(self_sizes);
  std::vector<Tensor> parts = grad.unbind(0);
  for (size_t i = 0; i < parts.size(); ++i) parts[i] = parts[i].reshape((*nested_sizes)[i]);
  return at::_nested_tensor_from_tensor_list(parts, grad.scalar_type());
}

Tensor unbind_backward(const std::vector<Tensor>& grads, const Tensor& self, int64_t dim) {
  if (!self.is_nested()) return at::stack(grads, dim);
  // (the components' shapes differ: they cannot be stacked, only nested again)
  return at::_nested_tensor_from_tensor_list(grads, self.scalar_type());
}

std::vector<Tensor> cat_tensors_backward(const Tensor& grad_in, const std::vector<Tensor>& tensors, int64_t dim) {
  // (a compressed grad, of a cat of compressed tensors, has no slices: dense grads for them)
  const Tensor grad = c10::isSparseCompressed(grad_in.layout()) ? grad_in.to_dense() : grad_in;
  std::vector<Tensor> out;
  int64_t ndim = grad.dim();
  dim = wrap(dim, ndim);
  int64_t pos = 0;
  for (const Tensor& t : tensors) {
    if (t.dim() == 1 && t.numel() == 0 && ndim != 1) {  // legacy empty inputs take no part
      out.push_back(at::zeros({0}, grad.options()));
      continue;
    }
    int64_t len = t.size(dim);
    out.push_back(grad.narrow(dim, pos, len));
    pos += len;
  }
  return out;
}

Tensor clamp_backward(const Tensor& grad, const Tensor& self, const std::optional<at::Scalar>& min,
                      const std::optional<at::Scalar>& max) {
  Tensor mask;
  if (min) mask = self.ge(*min);
  if (max) mask = mask.defined() ? mask.logical_and(self.le(*max)) : self.le(*max);
  if (!mask.defined()) return grad;
  return grad * mask.to(grad.scalar_type());
}

std::tuple<Tensor, Tensor, Tensor> clamp_tensor_backward(const Tensor& grad, const Tensor& self,
                                                         const std::optional<Tensor>& min,
                                                         const std::optional<Tensor>& max,
                                                         std::array<bool, 3> grad_input_mask) {
  auto as = [&](const Tensor& m) { return grad * m.to(grad.scalar_type()); };
  Tensor self_mask = at::ones_like(self, at::kBool);
  Tensor g_self, g_min, g_max;
  if (min) self_mask = self_mask.logical_and(self.ge(*min));
  if (max) self_mask = self_mask.logical_and(self.le(*max));
  if (grad_input_mask[0]) g_self = as(self_mask);
  if (min && grad_input_mask[1]) {
    Tensor m = self.lt(*min);
    if (max) m = m.logical_and(min->le(*max));
    g_min = as(m);
  }
  if (max && grad_input_mask[2]) {
    Tensor m = self.gt(*max);
    if (min) m = m.logical_or(min->gt(*max));
    g_max = as(m);
  }
  return {g_self, g_min, g_max};
}

Tensor pow_self_backward(const Tensor& grad, const Tensor& self, const Tensor& exponent) {
  if (exponent.unsafeGetTensorImpl()->is_wrapped_number() && exponent.is_complex()) {
    const c10::complex<double> e = exponent.item().toComplexDouble();
    if (e == c10::complex<double>(0, 0)) return at::zeros_like(grad * self);
    return grad * conjugate(self.pow(at::Scalar(e - c10::complex<double>(1, 0))) * at::Scalar(e));
  }
  if (exponent.unsafeGetTensorImpl()->is_wrapped_number()) {
    // A Python number: `exponent - 1` of two wrapped numbers would come out in the default
    // dtype (float32) and cost the grad of x.pow(1/3) in double half its digits.
    const double e = exponent.item().toDouble();
    if (e == 0) return at::zeros_like(grad * self);
    return grad * conjugate(self.pow(e - 1) * e);
  }
  Tensor g = grad * conjugate(exponent * self.pow(exponent - 1));
  return at::where(exponent.eq(0), at::zeros_like(g), g);
}

Tensor pow_exponent_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  Tensor g = grad * conjugate(result * self.log());
  // 0^e for e >= 0 has derivative 0 in e (torch's convention), not NaN.
  return at::where(self.eq(0), at::zeros_like(g), g);
}

Tensor logit_backward(const Tensor& grad, const Tensor& self, std::optional<double> eps) {
  Tensor g = grad / (self * (1 - self));
  if (!eps) return at::where(self.lt(0).logical_or(self.gt(1)), at::full_like(g, NAN), g);
  Tensor outside = self.lt(*eps).logical_or(self.gt(1 - *eps));
  return at::where(outside, at::zeros_like(g), g);
}

Tensor scale(const Tensor& grad, const at::Scalar& factor) {
  if (factor.isIntegral(false) && factor.toLong() == 1) return grad;
  if (factor.isComplex()) return grad * at::Scalar(c10::conj(factor.toComplexDouble()));
  return grad * factor;
}

// Wirtinger calculus for s = z / |z|: ds/dz = 1 / (2|z|), ds/dconj(z) = -s^2 / (2|z|), so
// the grad is (g - s^2 conj(g)) / (2|z|); 0 where z is 0, as torch's.
Tensor sgn_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  if (!self.is_complex()) return at::zeros_like(grad);
  Tensor magnitude = self.abs();
  Tensor g = (grad - result * result * conjugate(grad)) / (magnitude * 2);
  return at::where(magnitude.eq(0), at::zeros_like(g), g);
}

// angle = atan2(y, x): (d/dx + i d/dy) angle = (-y + ix) / |z|^2 = i z / |z|^2.
Tensor angle_backward(const Tensor& grad, const Tensor& self) {
  if (!self.is_complex()) return at::zeros_like(self);
  Tensor g = grad * self / self.abs().square() * at::Scalar(c10::complex<double>(0, 1));
  return at::where(self.eq(0), at::zeros_like(g), g);
}

// A cast's grad goes back to the input's dtype: a real input keeps the real part of a
// complex grad (d/dx of a real loss), as torch's _to_copy backward does.
Tensor fft_r2c_backward(const Tensor& grad, IntArrayRef dim, int64_t normalization, bool onesided,
                        IntArrayRef input_sizes) {
  Tensor full = grad;
  if (onesided) {
    const int64_t last = dim.back() < 0 ? dim.back() + grad.dim() : dim.back();
    const int64_t missing = input_sizes[static_cast<size_t>(last)] - grad.size(last);
    if (missing > 0) {
      std::vector<int64_t> sizes = grad.sizes().vec();
      sizes[static_cast<size_t>(last)] = missing;
      full = at::cat({grad, at::zeros(sizes, grad.options())}, last);
    }
  }
  return at::real(at::_fft_c2c(full, dim, normalization, false));
}

Tensor fft_c2r_backward(const Tensor& grad, IntArrayRef dim, int64_t normalization) {
  Tensor half = at::_fft_r2c(grad, dim, normalization, true);
  const int64_t last = dim.back() < 0 ? dim.back() + grad.dim() : dim.back();
  const int64_t n = grad.size(last);
  const int64_t doubled = n - half.size(last);  // bins 1 .. n - (n/2 + 1) have a mirror image
  if (doubled <= 0) return half;
  std::vector<int64_t> shape(static_cast<size_t>(grad.dim()), 1);
  shape[static_cast<size_t>(last)] = half.size(last);
  Tensor weights = at::ones({half.size(last)}, grad.options());
  weights.narrow(0, 1, doubled).fill_(2);
  return half * weights.reshape(shape);
}

Tensor real_part(const Tensor& t) { return at::real(t); }
Tensor imag_part(const Tensor& t) { return at::imag(t); }

Tensor cast_grad_back(const Tensor& grad, c10::ScalarType input_dtype) {
  if (grad.is_complex() && !c10::isComplexType(input_dtype)) return at::real(grad).to(input_dtype);
  return grad.to(input_dtype);
}

namespace {
// A 2-D layout that is the transpose of a contiguous matrix (a Linear weight's w.t()).
bool is_transposed_layout(at::IntArrayRef sizes, at::IntArrayRef strides) {
  return sizes.size() == 2 && strides[0] == 1 && (sizes[1] == 1 || strides[1] == sizes[0]) && sizes[0] != 1;
}
}  // namespace

// The grad of a transposed operand is computed transposed, so that it reaches the leaf
// behind the transpose (a Linear weight) contiguous: no copy when it is stored (torch
// does the same).
Tensor mm_mat1_backward(const Tensor& grad, const Tensor& mat2, at::IntArrayRef mat1_sizes,
                        at::IntArrayRef mat1_strides, const at::Scalar& alpha) {
  if (is_transposed_layout(mat1_sizes, mat1_strides)) return scale(conjugate(mat2).mm(grad.t()).t(), alpha);
  return scale(grad.mm(conjugate(mat2).t()), alpha);
}

Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, at::IntArrayRef mat2_sizes,
                        at::IntArrayRef mat2_strides, const at::Scalar& alpha) {
  if (is_transposed_layout(mat2_sizes, mat2_strides)) return scale(grad.t().mm(conjugate(mat1)).t(), alpha);
  return scale(conjugate(mat1).t().mm(grad), alpha);
}

// sampled_addmm's mat1 and mat2 grads: grad (CSR, self's pattern) times the other operand,
// batch by batch for a 3-D grad (as a COO batch, which bmm takes; mat2's grad transposed:
// grad^T @ mat1, then transposed back).
Tensor sampled_addmm_mat1_backward(const Tensor& grad, const Tensor& mat2, const at::Scalar& alpha) {
  if (grad.dim() == 2) return scale(grad.mm(conjugate(mat2).t()), alpha);
  return scale(grad.to_sparse().bmm(conjugate(mat2).transpose(1, 2)), alpha);
}

Tensor sampled_addmm_mat2_backward(const Tensor& grad, const Tensor& mat1, const at::Scalar& alpha) {
  if (grad.dim() == 2) return scale(conjugate(mat1).t().mm(grad), alpha);
  return scale(grad.to_sparse().transpose(1, 2).bmm(conjugate(mat1)).transpose(1, 2), alpha);
}

Tensor sparse_constructor_values_backward(const Tensor& grad, const Tensor& indices) {
  const Tensor dense = grad.layout() == c10::kStrided ? grad : grad.to_dense();
  const int64_t sparse_dim = indices.size(0);
  // Row-major linear positions of the entries over the sparse dims.
  Tensor linear = at::zeros({indices.size(1)}, indices.options());
  for (int64_t d = 0; d < sparse_dim; ++d) linear = linear * dense.size(d) + indices.select(0, d);
  std::vector<int64_t> flat{-1};
  for (int64_t d = sparse_dim; d < dense.dim(); ++d) flat.push_back(dense.size(d));
  return dense.reshape(flat).index_select(0, linear);
}

Tensor values_backward(const Tensor& grad, const Tensor& self) {
  if (self.layout() == c10::kSparse) {
    return at::_sparse_coo_tensor_unsafe(self._indices(), grad, self.sizes())._coalesced_(self.is_coalesced());
  }
  const bool rows = self.layout() == c10::kSparseCsr || self.layout() == c10::kSparseBsr;
  return at::_sparse_compressed_tensor_unsafe(rows ? self.crow_indices() : self.ccol_indices(),
                                              rows ? self.col_indices() : self.row_indices(), grad, self.sizes(),
                                              std::nullopt, self.layout(), std::nullopt, std::nullopt);
}

Tensor sparse_sparse_matmul_backward(const Tensor& grad, const Tensor& self, const Tensor& other, int64_t which) {
  if (which == 0) return grad.mm(other.t()).sparse_mask(self);
  return self.t().mm(grad).sparse_mask(other);
}

Tensor sparse_layout_backward(const Tensor& grad, const Tensor& self) {
  if (self.layout() == c10::kStrided) return grad.layout() == c10::kStrided ? grad : grad.to_dense();
  return grad.sparse_mask(self);
}

Tensor softmax_backward(const Tensor& grad, const Tensor& result, int64_t dim) {
  if (result.is_nested()) {  // per component, along the component's dim (a nested result has dim > 0)
    const std::vector<Tensor> g = grad.unbind(0), r = result.unbind(0);
    std::vector<Tensor> parts;
    const int64_t d = (dim < 0 ? dim + result.dim() : dim) - 1;
    for (size_t i = 0; i < g.size(); ++i) parts.push_back(softmax_backward(g[i], r[i], d));
    return at::_nested_tensor_from_tensor_list(parts);
  }
  if (result.dim() == 0) return grad * 0;
  return (grad - (grad * result).sum(IntArrayRef{dim}, true)) * result;
}

Tensor log_softmax_backward(const Tensor& grad, const Tensor& result, int64_t dim) {
  if (result.dim() == 0) return grad * 0;
  return grad - result.exp() * grad.sum(IntArrayRef{dim}, true);
}

}  // namespace torch::autograd::generated::details
