// Matrix norms and what is built on singular values: linalg.matrix_norm, linalg.norm,
// pinv, matrix_rank and cond, as composites over svdvals / eigh / vector_norm so they
// differentiate and run on Meta through those ops.
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/linalg/LinalgUtils.h>
#include <aten/native/reduce/ReduceOps.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace at::inline tessera::native {

namespace {


// A sum over the last dim. (A literal -1 would reach sum's optional dim list through a
// temporary that dies inside the optional's constructor.)
Tensor sum_last(const Tensor& t) {
  return t.sum({-1});
}

// The two norm dims, wrapped and checked (torch's messages).
std::pair<int64_t, int64_t> matrix_dims(const Tensor& A, IntArrayRef dim, const char* op) {
  TORCH_CHECK(A.dim() >= 2, op, ": The input tensor A must have at least 2 dimensions.");
  TORCH_CHECK(dim.size() == 2, op, ": dim must be a 2-tuple. Got ", dim);
  const int64_t n = A.dim();
  int64_t d0 = dim[0] < 0 ? dim[0] + n : dim[0], d1 = dim[1] < 0 ? dim[1] + n : dim[1];
  TORCH_CHECK_INDEX(d0 >= 0 && d0 < n && d1 >= 0 && d1 < n, "Dimension out of range (expected to be in range of [",
                    -n, ", ", n - 1, "], but got ", dim[d0 >= 0 && d0 < n ? 1 : 0], ")");
  TORCH_CHECK(d0 != d1, op, ": dims must be different. Got (", dim[0], ", ", dim[1], ")");
  return {d0, d1};
}

// A with the two dims moved last (so svdvals sees matrices), as a float dtype if asked.
Tensor matrices_last(const Tensor& A, int64_t d0, int64_t d1, std::optional<c10::ScalarType> dtype) {
  const Tensor cast = dtype ? A.to(*dtype) : A;
  return at::movedim(cast, std::vector<int64_t>{d0, d1}, std::vector<int64_t>{-2, -1});
}

// Puts back the reduced dims (size 1) when keepdim.
Tensor restore_dims(Tensor r, int64_t d0, int64_t d1, bool keepdim) {
  if (!keepdim) return r;
  const int64_t lo = std::min(d0, d1), hi = std::max(d0, d1);
  return r.unsqueeze(lo).unsqueeze(hi);
}

void check_matrix_norm_input(const Tensor& A) {
  TORCH_CHECK(c10::isFloatingType(A.scalar_type()) || c10::isComplexType(A.scalar_type()),
              "linalg.matrix_norm: Expected a floating point or complex tensor as input. Got ", A.scalar_type());
}

Tensor spectral_norm_of(const Tensor& A, int64_t d0, int64_t d1, bool keepdim, std::optional<c10::ScalarType> dtype,
                        bool largest) {
  const Tensor s = at::linalg_svdvals(matrices_last(A, d0, d1, dtype), std::nullopt);
  const Tensor r = largest ? s.amax(-1) : s.amin(-1);
  return restore_dims(r, d0, d1, keepdim);
}

}  // namespace

Tensor linalg_matrix_norm(const Tensor& self, const Scalar& ord, IntArrayRef dim, bool keepdim,
                          std::optional<c10::ScalarType> dtype) {
  check_matrix_norm_input(self);
  auto [d0, d1] = matrix_dims(self, dim, "linalg.matrix_norm");
  const double p = ord.toDouble();
  TORCH_CHECK(std::abs(p) == 2 || std::abs(p) == 1 || std::isinf(p),
              "linalg.matrix_norm: Order ", ord, " not supported.");
  check_norm_dtype(self.scalar_type(), dtype, "linalg.matrix_norm");
  if (std::abs(p) == 2) return spectral_norm_of(self, d0, d1, keepdim, dtype, p > 0);
  // 1 / -1: the extreme column sums of |A| (the sum runs over rows, d0); inf / -inf: rows.
  const Tensor a = (dtype ? self.to(*dtype) : self).abs();
  const int64_t sum_dim = std::isinf(p) ? d1 : d0;
  int64_t other = std::isinf(p) ? d0 : d1;
  Tensor sums = a.sum(std::vector<int64_t>{sum_dim}, keepdim);
  if (!keepdim && other > sum_dim) --other;
  return p > 0 ? sums.amax(std::vector<int64_t>{other}, keepdim) : sums.amin(std::vector<int64_t>{other}, keepdim);
}

Tensor linalg_matrix_norm_str_ord(const Tensor& self, std::string_view ord, IntArrayRef dim, bool keepdim,
                                  std::optional<c10::ScalarType> dtype) {
  check_matrix_norm_input(self);
  auto [d0, d1] = matrix_dims(self, dim, "linalg.matrix_norm");
  TORCH_CHECK(ord == "fro" || ord == "nuc", "linalg.matrix_norm: Order ", ord, " not supported.");
  check_norm_dtype(self.scalar_type(), dtype, "linalg.matrix_norm");
  if (ord == "fro") {
    return at::linalg_vector_norm(self, 2, std::vector<int64_t>{d0, d1}, keepdim, dtype);
  }
  const Tensor s = at::linalg_svdvals(matrices_last(self, d0, d1, dtype), std::nullopt);
  return restore_dims(sum_last(s), d0, d1, keepdim);
}

// ---- the legacy names torch.frobenius_norm and torch.nuclear_norm
Tensor frobenius_norm(const Tensor& self) { return at::norm(self, 2); }

Tensor frobenius_norm_dim(const Tensor& self, IntArrayRef dim, bool keepdim) {
  TORCH_CHECK(dim.size() <= 2, "Expected at most 2 dimensions, but got ", dim.size(), " dimensions instead.");
  if (dim.size() == 2) {
    TORCH_CHECK(wrap_dim(dim[0], self.dim()) != wrap_dim(dim[1], self.dim()), "Expected dims to be different, got ",
                dim, " instead");
  }
  return at::norm(self, 2, dim, keepdim);
}

Tensor nuclear_norm(const Tensor& self, bool keepdim) {
  TORCH_CHECK(self.dim() == 2, "Expected a tensor with 2 dimensions, but got a tensor with ", self.dim(),
              self.dim() == 1 ? " dimension" : " dimensions", " instead.");
  return at::nuclear_norm(self, {0, 1}, keepdim);
}

Tensor nuclear_norm_dim(const Tensor& self, IntArrayRef dim, bool keepdim) {
  TORCH_CHECK(dim.size() == 2, "nuclear norm requires a 'dim' argument of size 2");
  TORCH_CHECK(wrap_dim(dim[0], self.dim()) != wrap_dim(dim[1], self.dim()), "duplicate or invalid dimensions");
  return at::linalg_matrix_norm(self, std::string_view("nuc"), dim, keepdim, std::nullopt);
}

Tensor linalg_norm(const Tensor& self, const std::optional<Scalar>& ord, std::optional<IntArrayRef> dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype) {
  if (dim) {
    TORCH_CHECK(dim->size() == 1 || dim->size() == 2, "linalg.norm: If dim is specified, it must be of length 1 or 2. Got ",
                *dim);
  } else if (ord) {
    TORCH_CHECK(self.dim() == 1 || self.dim() == 2, "linalg.norm: If dim is not specified but ord is, the input must be "
                "1D or 2D. Got ", self.dim(), "D.");
  }
  // a matrix norm needs an ord; without one a 2-element dim takes the vector 2-norm, as torch
  const bool matrix = ord && (dim ? dim->size() == 2 : self.dim() == 2);
  if (matrix) {
    const std::vector<int64_t> dims = dim ? std::vector<int64_t>(dim->begin(), dim->end()) : std::vector<int64_t>{0, 1};
    return at::linalg_matrix_norm(self, *ord, dims, keepdim, dtype);
  }
  return at::linalg_vector_norm(self, ord.value_or(Scalar(2.0)), dim, keepdim, dtype);
}

Tensor linalg_norm_ord_str(const Tensor& self, std::string_view ord, std::optional<IntArrayRef> dim, bool keepdim,
                           std::optional<c10::ScalarType> dtype) {
  if (dim) {
    TORCH_CHECK(dim->size() == 2, "linalg.norm: If dim is specified, it mut be of length 1 or 2. Got ", *dim);
  } else {
    TORCH_CHECK(self.dim() == 2, "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got ",
                self.dim(), "D.");
  }
  const std::vector<int64_t> dims = dim ? std::vector<int64_t>(dim->begin(), dim->end()) : std::vector<int64_t>{0, 1};
  return at::linalg_matrix_norm(self, ord, dims, keepdim, dtype);
}

// ---- pinv and rank: singular values kept above max(atol, rtol * largest)
namespace {

// torch's defaults: rtol = eps * max(m, n) when neither is given, 0 when only atol is.
// atol and rtol hold one value per matrix (or broadcast); s_max is (*, 1).
Tensor tolerance(const Tensor& A, const Tensor& s_max, const std::optional<Tensor>& atol,
                 const std::optional<Tensor>& rtol) {
  const c10::ScalarType real = real_dtype(A);
  const std::optional<Tensor> a = atol ? std::optional<Tensor>(atol->to(real).unsqueeze(-1)) : std::nullopt;
  Tensor rt;
  if (rtol) {
    rt = rtol->to(real).unsqueeze(-1);
  } else {
    const double eps = real == c10::kFloat ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
    rt = at::full({}, eps * static_cast<double>(std::max(A.size(-1), A.size(-2))), A.options().dtype(real));
    if (a) rt = at::where(at::gt(*a, 0), at::zeros_like(rt), rt);
  }
  const Tensor rel = rt * s_max;
  return a ? at::maximum(*a, rel) : rel;
}

// A tolerance given as a Python float, as a 0-dim double tensor (None stays None).
std::optional<Tensor> tolerance_tensor(const Tensor& like, std::optional<double> v) {
  if (!v) return std::nullopt;
  return at::full({}, *v, like.options().dtype(c10::kDouble));
}

// torch refuses complex tolerances (a tolerance compares with real singular values).
void check_real_tolerances(const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol, const char* op,
                           const char* rtol_name = "rtol") {
  for (const auto& [name, t] : {std::pair{"atol", &atol}, std::pair{rtol_name, &rtol}}) {
    if (!t->has_value()) continue;
    TORCH_CHECK(!(*t)->is_complex(), op, ": ", name, " tensor of complex type is not supported. Got ",
                (*t)->scalar_type());
  }
}

Tensor singular_magnitudes(const Tensor& A, bool hermitian) {
  return hermitian ? at::linalg_eigvalsh(A, "L").abs() : at::linalg_svdvals(A, std::nullopt);
}

}  // namespace

Tensor linalg_pinv_atol_rtol_tensor(const Tensor& self, const std::optional<Tensor>& atol,
                                    const std::optional<Tensor>& rtol, bool hermitian) {
  check_linalg_input(self, "linalg.pinv", /*square=*/hermitian);
  check_real_tolerances(atol, rtol, "torch.linalg.pinv");
  if (self.numel() == 0) return at::zeros(batch_shape_with(self, 2, {self.size(-1), self.size(-2)}), self.options());
  if (hermitian) {
    auto [L, V] = at::linalg_eigh(self, "L");
    const Tensor mag = L.abs();
    const Tensor tol = tolerance(self, mag.amax(-1, true), atol, rtol);
    const Tensor inv_l = at::where(at::gt(mag, tol), L.reciprocal(), at::zeros_like(L));
    return at::matmul(V * inv_l.unsqueeze(-2), mH(V));
  }
  auto [U, S, Vh] = at::linalg_svd(self, false, std::nullopt);
  const Tensor tol = tolerance(self, S.amax(-1, true), atol, rtol);
  const Tensor inv_s = at::where(at::gt(S, tol), S.reciprocal(), at::zeros_like(S));
  return at::matmul(mH(Vh) * inv_s.unsqueeze(-2), mH(U));
}

Tensor linalg_pinv_atol_rtol_float(const Tensor& self, std::optional<double> atol, std::optional<double> rtol,
                                   bool hermitian) {
  return at::linalg_pinv(self, tolerance_tensor(self, atol), tolerance_tensor(self, rtol), hermitian);
}
Tensor linalg_pinv(const Tensor& self, double rcond, bool hermitian) {
  return at::linalg_pinv(self, tolerance_tensor(self, 0.0), tolerance_tensor(self, rcond), hermitian);
}
// torch.pinverse: linalg.pinv's older name, rcond positional.
Tensor pinverse(const Tensor& self, double rcond) { return at::linalg_pinv(self, rcond, false); }
Tensor linalg_pinv_rcond_tensor(const Tensor& self, const Tensor& rcond, bool hermitian) {
  check_real_tolerances(std::nullopt, rcond, "torch.linalg.pinv", "rcond");
  return at::linalg_pinv(self, std::optional<Tensor>(at::zeros({}, rcond.options().dtype(c10::kDouble))),
                         std::optional<Tensor>(rcond), hermitian);
}

Tensor linalg_matrix_rank_atol_rtol_tensor(const Tensor& input, const std::optional<Tensor>& atol,
                                           const std::optional<Tensor>& rtol, bool hermitian) {
  check_linalg_input(input, "linalg.matrix_rank", /*square=*/hermitian);
  check_real_tolerances(atol, rtol, "torch.linalg.matrix_rank");
  if (input.numel() == 0) return at::zeros(batch_shape_with(input, 2, {}), input.options().dtype(c10::kLong));
  const Tensor s = singular_magnitudes(input, hermitian);
  const Tensor tol = tolerance(input, s.amax(-1, true), atol, rtol);
  return sum_last(at::gt(s, tol));
}
Tensor linalg_matrix_rank_atol_rtol_float(const Tensor& self, std::optional<double> atol, std::optional<double> rtol,
                                          bool hermitian) {
  return at::linalg_matrix_rank(self, tolerance_tensor(self, atol), tolerance_tensor(self, rtol), hermitian);
}
Tensor linalg_matrix_rank(const Tensor& self, double tol, bool hermitian) {
  return at::linalg_matrix_rank(self, tolerance_tensor(self, tol), tolerance_tensor(self, 0.0), hermitian);
}
Tensor linalg_matrix_rank_tol_tensor(const Tensor& input, const Tensor& tol, bool hermitian) {
  return at::linalg_matrix_rank(input, std::optional<Tensor>(tol), std::optional<Tensor>(at::zeros({}, tol.options())),
                                hermitian);
}

// ---- condition numbers
namespace {
// norm(A) * norm(inv(A)) in a matrix norm named by a number or a string; a singular
// matrix has an infinite condition number (its "inverse" is garbage).
template <typename Ord>
Tensor cond_through_inverse(const Tensor& A, const Ord& ord) {
  check_linalg_input(A, "linalg.cond");
  auto [inverse, info] = at::linalg_inv_ex(A, false);
  const Tensor value = at::linalg_matrix_norm(A, ord, {-2, -1}, false, std::nullopt) *
                       at::linalg_matrix_norm(inverse, ord, {-2, -1}, false, std::nullopt);
  return at::where(at::gt(info, 0), at::full({}, std::numeric_limits<double>::infinity(), value.options()), value);
}
}  // namespace

Tensor linalg_cond(const Tensor& self, const std::optional<Scalar>& p) {
  const double ord = p ? p->toDouble() : 2.0;
  if (!p || std::abs(ord) == 2) {
    check_linalg_input(self, "linalg.cond", /*square=*/false);
    // the first and last of the descending singular values, as torch selects them (a tie's
    // gradient goes to that one value, not split as amax's)
    const Tensor s = at::linalg_svdvals(self, std::nullopt);
    if (s.size(-1) == 0) return at::zeros(batch_shape_with(self, 2, {}), s.options());  // torch: 0 for 0x0
    const Tensor hi = s.select(-1, 0), lo = s.select(-1, -1);
    return ord > 0 ? hi / lo : lo / hi;
  }
  TORCH_CHECK(std::abs(ord) == 1 || std::isinf(ord), "linalg.cond got an invalid norm type: ", *p);
  return cond_through_inverse(self, *p);
}
Tensor linalg_cond_p_str(const Tensor& self, std::string_view p) {
  TORCH_CHECK(p == "fro" || p == "nuc", "linalg.cond got an invalid norm type: ", p);
  return cond_through_inverse(self, p);
}

}  // namespace at::inline tessera::native
