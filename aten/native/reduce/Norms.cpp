// Vector norms (linalg.vector_norm and the older norm overloads), logsumexp and aminmax:
// composites over the reductions and elementwise ops, so Meta and every backend come with
// them. torch's argument checks and messages are reproduced here, before any work.
#include <aten/core/TensorUtils.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/named/NameInference.h>
#include <aten/native/reduce/ReduceOps.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

namespace at::inline tessera::native {

namespace {


std::vector<int64_t> dims_or_empty(std::optional<IntArrayRef> dim) {
  return dim ? dim->vec() : std::vector<int64_t>{};
}

// A norm of order < 0 or +-inf has no identity: it cannot reduce an empty set.
void check_norm_identity(const Tensor& x, double p, const std::vector<int64_t>& dims) {
  if (x.numel() != 0 || !(p < 0 || std::isinf(p))) return;
  const c10::Scalar ord(p);
  TORCH_CHECK(!dims.empty(), "linalg.vector_norm cannot compute the ", ord,
              " norm on an empty tensor because the operation does not have an identity");
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, x.dim());
    TORCH_CHECK(x.dim() == 0 || x.size(w) != 0, "linalg.vector_norm cannot compute the ", ord,
                " norm on the dimension ", w, " because this dimension is empty and the operation does not have an identity");
  }
}

}  // namespace

void check_norm_dtype(c10::ScalarType in, std::optional<c10::ScalarType> dtype, const char* op) {
  if (!dtype) return;
  TORCH_CHECK(c10::isFloatingType(*dtype) || c10::isComplexType(*dtype), op,
              ": dtype should be floating point or complex, but got ", *dtype);
  const bool complex = c10::isComplexType(in);
  TORCH_CHECK(complex == c10::isComplexType(*dtype), op, ": dtype should be ", complex ? "complex" : "real", " for ",
              complex ? "complex" : "real", " inputs, but got ", *dtype);
  TORCH_CHECK(c10::promoteTypes(in, *dtype) == *dtype, op, ": the dtype of the input (", in,
              ") should be convertible without narrowing to the specified dtype (", *dtype, ")");
}

Tensor linalg_vector_norm(const Tensor& self, const c10::Scalar& ord, std::optional<IntArrayRef> dim, bool keepdim,
                          std::optional<c10::ScalarType> dtype) {
  const c10::ScalarType in = self.scalar_type();
  TORCH_CHECK(c10::isFloatingType(in) || c10::isComplexType(in),
              "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ", in);
  check_norm_dtype(in, dtype, "linalg.vector_norm");
  const double p = ord.toDouble();
  const std::vector<int64_t> dims = dims_or_empty(dim);
  check_norm_identity(self, p, dims);
  const Tensor x = dtype && *dtype != in ? self.to(*dtype) : self;
  const std::optional<IntArrayRef> over(dims);
  const bool differentiated = c10::GradMode::is_enabled() && self.requires_grad();
  if (p == 2 && !differentiated && x.device().is_cpu() &&
      (x.scalar_type() == c10::kFloat || x.scalar_type() == c10::kDouble)) {
    // One pass with no |x| or x * x in between, as torch's norm kernel reads it (normalize
    // and renorm spend most of their time here).
    // (a negative view's squares are its memory's: read raw)
    return sum_of_squares_cpu(x.is_neg() ? raw_view(x) : x, over, keepdim).sqrt_();
  }
  const Tensor a = x.abs();  // real for complex inputs
  if (p == 0) {
    Tensor count = at::sum(at::ne(a, 0), over, keepdim, a.scalar_type());
    if (!differentiated) return count;
    // A count is piecewise constant: differentiated, it is part of the graph with a zero
    // grad, as torch's norm backward gives (the finite mask keeps inf and NaN out of it).
    Tensor zero_path = at::where(at::isfinite(a), at::mul(a, 0), at::zeros_like(a));
    return at::add(count, at::sum(zero_path, over, keepdim, std::nullopt));
  }
  if (p == 1) return at::sum(a, over, keepdim, std::nullopt);
  if (std::isinf(p)) return p > 0 ? at::amax(a, dims, keepdim) : at::amin(a, dims, keepdim);
  Tensor sum = p == 2 ? at::sum(at::mul(a, a), over, keepdim, std::nullopt)
                      : at::sum(at::pow(a, ord), over, keepdim, std::nullopt);
  if (!differentiated) return p == 2 ? sum.sqrt_() : sum.pow_(1.0 / p);
  // Differentiated: a zero norm gets a zero grad, as torch's norm backward gives (the
  // root's derivative is infinite there, times the sum's zero, NaN).
  Tensor zero = sum.eq(0);
  Tensor root = at::where(zero, at::ones_like(sum), sum).pow(1.0 / p);
  return at::where(zero, at::zeros_like(root), root);
}

Tensor& linalg_vector_norm_out(const Tensor& self, const c10::Scalar& ord, std::optional<IntArrayRef> dim,
                               bool keepdim, std::optional<c10::ScalarType> dtype, Tensor& out) {
  return copy_into_out(at::linalg_vector_norm(self, ord, dim, keepdim, dtype), out, "linalg.vector_norm");
}

// ---- norm: p = None means 2; with dtype= the input is converted first.

namespace {
Tensor norm_impl(const Tensor& self, const std::optional<c10::Scalar>& p, std::optional<IntArrayRef> dim,
                 bool keepdim, std::optional<c10::ScalarType> dtype);

// A COO tensor's norm is its coalesced values' (the unspecified elements are zeros, which
// no p-norm counts), over every dim only and without dtype=, as torch's norm_sparse.
Tensor sparse_norm(const Tensor& self, const std::optional<c10::Scalar>& p, std::optional<IntArrayRef> dim,
                   bool keepdim, std::optional<c10::ScalarType> dtype) {
  // (torch's order: dim, then keepdim, then dtype)
  if (dim && !dim->empty()) {
    TORCH_CHECK(self.dim() > 0, "norm_sparse currently only supports full reductions, so 'dim' must either be empty "
                "or contain all dimensions of the input");
    std::vector<bool> covered(static_cast<size_t>(self.dim()), false);
    for (int64_t d : *dim) covered[static_cast<size_t>(wrap_dim(d, self.dim()))] = true;
    TORCH_CHECK(std::all_of(covered.begin(), covered.end(), [](bool c) { return c; }),
                "norm_sparse currently only supports full reductions, so 'dim' must either be empty or contain all "
                "dimensions of the input");
  }
  TORCH_CHECK(!keepdim, "norm_sparse currently does not support keepdim=True");
  TORCH_CHECK(!dtype, "norm_sparse currently does not support 'dtype' argument");
  TORCH_CHECK(c10::isFloatingType(self.scalar_type()) || c10::isComplexType(self.scalar_type()),
              "norm(): input dtype should be either floating point or complex. Got ", self.scalar_type(), " instead.");
  return norm_impl(self.coalesce().values(), p, std::nullopt, false, std::nullopt);
}

Tensor norm_impl(const Tensor& self, const std::optional<c10::Scalar>& p, std::optional<IntArrayRef> dim,
                 bool keepdim, std::optional<c10::ScalarType> dtype) {
  if (self.layout() == c10::kSparse) return sparse_norm(self, p, dim, keepdim, dtype);
  if (!dtype) {
    TORCH_CHECK(c10::isFloatingType(self.scalar_type()) || c10::isComplexType(self.scalar_type()),
                "norm(): input dtype should be either floating point or complex. Got ", self.scalar_type(),
                " instead.");
  }
  const Tensor x = dtype && *dtype != self.scalar_type() ? self.to(*dtype) : self;
  // Unlike linalg.vector_norm, norm gives 0 for an empty set whatever p is.
  if (x.numel() == 0) return at::sum(x.abs(), dim, keepdim, std::nullopt);
  return at::linalg_vector_norm(x, p.value_or(2), dim, keepdim, std::nullopt);
}
}  // namespace

namespace {
// torch has no Named kernel for norm: a named input is refused under the overload's name
// (these composites decompose before the names fallback could refuse them).
void refuse_names(const Tensor& self, const char* overload) {
  TORCH_CHECK(!self.has_names(), "aten::norm.", overload, " is not yet supported with named tensors. Please drop "
              "names via `tensor = tensor.rename(None)`, call the op with an unnamed tensor, and set names on the "
              "result of the operation.");
}
}  // namespace

Tensor norm_Scalar(const Tensor& self, const c10::Scalar& p) {
  refuse_names(self, "Scalar");
  return norm_impl(self, p, std::nullopt, false, std::nullopt);
}
Tensor norm_ScalarOpt_dim(const Tensor& self, const std::optional<c10::Scalar>& p, IntArrayRef dim, bool keepdim) {
  refuse_names(self, "ScalarOpt_dim");
  return norm_impl(self, p, dim, keepdim, std::nullopt);
}
Tensor norm_ScalarOpt_dim_dtype(const Tensor& self, const std::optional<c10::Scalar>& p, IntArrayRef dim, bool keepdim,
                                c10::ScalarType dtype) {
  refuse_names(self, "ScalarOpt_dim_dtype");
  return norm_impl(self, p, dim, keepdim, dtype);
}
Tensor norm_ScalarOpt_dtype(const Tensor& self, const std::optional<c10::Scalar>& p, c10::ScalarType dtype) {
  refuse_names(self, "ScalarOpt_dtype");
  return norm_impl(self, p, std::nullopt, false, dtype);
}

// native_norm: torch registers it for SparseCPU only, so a strided input gets the
// dispatcher's refusal in torch's words.
namespace {
void check_native_norm_input(const Tensor& self) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.layout() == c10::kSparse, "Could not run 'aten::native_norm' with arguments from the '",
                              self.is_meta() ? "Meta" : "CPU", "' backend: it takes a sparse COO tensor (got layout ",
                              self.layout(), ")");
}
}  // namespace

Tensor native_norm(const Tensor& self, const c10::Scalar& p) {
  check_native_norm_input(self);
  return sparse_norm(self, p, std::nullopt, false, std::nullopt);
}
Tensor native_norm_ScalarOpt_dim_dtype(const Tensor& self, const std::optional<c10::Scalar>& p, IntArrayRef dim,
                                       bool keepdim, std::optional<c10::ScalarType> dtype) {
  check_native_norm_input(self);
  return sparse_norm(self, p, dim, keepdim, dtype);
}

// ---- logsumexp: max + log(sum(exp(x - max))), with an infinite max taken as 0 so that
// all -inf gives -inf and any +inf gives +inf.

// Integer and bool inputs are computed in the default float dtype (float32: tessera has no
// set_default_dtype yet).
Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim) {
  if (C10_UNLIKELY(named::names_pending(self))) {
    std::vector<int64_t> reduced;
    for (int64_t d : dim) reduced.push_back(wrap_dim(d, self.dim()));
    if (dim.empty()) {
      for (int64_t d = 0; d < self.dim(); ++d) reduced.push_back(d);
    }
    const DimnameList names = named::reduce_names(names_of(self), reduced, keepdim);
    NoNamesGuard guard;
    return named::named_result(native::logsumexp(self, dim, keepdim), names);
  }
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()),
              "logsumexp(): Expected floating point type for result tensor, but got: ", self.scalar_type());
  const Tensor x = c10::isIntegralType(self.scalar_type(), true) ? self.to(c10::kFloat) : self;
  const std::optional<IntArrayRef> over(dim);
  if (x.numel() == 0) return at::sum(at::exp(x), over, keepdim, std::nullopt).log_();
  const Tensor m = at::amax(x, dim, true);
  const Tensor shift = at::where(at::isinf(m), c10::Scalar(0.0), m);
  Tensor r = at::sum(at::exp(at::sub(x, shift)), over, keepdim, std::nullopt).log_();
  return r.add_(keepdim ? shift : shift.reshape(r.sizes()));
}
Tensor& logsumexp_out(const Tensor& self, IntArrayRef dim, bool keepdim, Tensor& out) {
  return copy_into_out(at::logsumexp(self, dim, keepdim), out, "logsumexp");
}

// ---- aminmax

std::tuple<Tensor, Tensor> aminmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  std::vector<int64_t> dims;
  if (dim) {
    const int64_t d = wrap_dim(*dim, self.dim());
    TORCH_CHECK_INDEX(self.dim() == 0 || self.size(d) != 0, "aminmax: Expected reduction dim ", d,
                      " to have non-zero size.");
    dims.push_back(d);
  } else {
    TORCH_CHECK(self.numel() != 0,
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
  }
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "\"aminmax_cpu\" not implemented for '", self.scalar_type(),
              "'");
  return {at::amin(self, dims, keepdim), at::amax(self, dims, keepdim)};
}

std::tuple<Tensor&, Tensor&> aminmax_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& min,
                                         Tensor& max) {
  auto [lo, hi] = at::aminmax(self, dim, keepdim);
  copy_into_out(lo, min, "aminmax");
  copy_into_out(hi, max, "aminmax");
  return {min, max};
}

// Each slice along dim whose p-norm exceeds maxnorm scaled down to norm maxnorm (torch's
// 1e-7 guard in the divisor included); the others unchanged.
Tensor renorm(const Tensor& self, const c10::Scalar& p, int64_t dim, const c10::Scalar& maxnorm) {
  TORCH_CHECK(!maxnorm.isComplex(), "renorm: maxnorm must be real-valued");
  TORCH_CHECK(maxnorm.to<double>() >= 0.0, "renorm: expected maxnorm to be >= 0 but got ", maxnorm.to<double>());
  TORCH_CHECK(p.to<double>() > 0.0, "renorm: non-positive-norm not supported");
  const int64_t d = wrap_dim(dim, self.dim());
  std::vector<int64_t> others;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i != d) others.push_back(i);
  }
  const Tensor norms = at::linalg_vector_norm(self, p, IntArrayRef(others), true, std::nullopt);
  const Tensor scaled = at::mul(at::reciprocal(at::add(norms, 1e-7)), maxnorm);
  return at::mul(self, at::where(at::gt(norms, maxnorm), scaled, at::ones_like(norms)));
}

Tensor& renorm_(Tensor& self, const c10::Scalar& p, int64_t dim, const c10::Scalar& maxnorm) {
  return self.copy_(at::renorm(self.clone(), p, dim, maxnorm));  // (renorm saves its input for backward)
}

// The p-norm of self - other (broadcast).
Tensor dist(const Tensor& self, const Tensor& other, const c10::Scalar& p) { return at::norm(at::sub(self, other), p); }

// The pow-norm of v over every dim but dim (weight normalization's denominator), shaped to
// broadcast against v; dim -1 takes the norm of the whole tensor.
Tensor norm_except_dim(const Tensor& v, int64_t pow, int64_t dim) {
  if (dim == -1) return v.norm(pow);
  const int64_t d = wrap_dim(dim, v.dim());
  std::vector<int64_t> others;
  for (int64_t i = 0; i < v.dim(); ++i) {
    if (i != d) others.push_back(i);
  }
  return at::norm(v, pow, IntArrayRef(others), true);
}

}  // namespace at::inline tessera::native
