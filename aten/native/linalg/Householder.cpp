// Householder reflectors as LAPACK stores them: geqrf (A = QR with Q kept as reflectors
// below R's diagonal and their scales tau), householder_product / orgqr (the first n
// columns of Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H) and ormqr (op(Q) C or C op(Q),
// op(Q) = Q or Q^H, without forming Q), for real and complex dtypes. CPU and Meta share one function per op, as in Factorizations.cpp.
#include <aten/core/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/linalg/Lapack.h>
#include <aten/native/linalg/LinalgUtils.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <vector>

namespace at::inline tessera::native {

namespace {

// tau: one dim fewer than input, the same batch dims and dtype.
void check_tau(const Tensor& input, const Tensor& tau, const char* op) {
  TORCH_CHECK(input.dim() - tau.dim() == 1, op, ": Expected tau to have one dimension less than input, but got "
              "tau.ndim equal to ", tau.dim(), " and input.ndim is equal to ", input.dim());
  TORCH_CHECK(tau.sizes().slice(0, tau.dim() - 1).equals(input.sizes().slice(0, input.dim() - 2)), op,
              ": Expected batch dimensions of tau to be equal to input.shape[:-2], but got ",
              tau.sizes().slice(0, tau.dim() - 1));
  TORCH_CHECK(tau.scalar_type() == input.scalar_type(), op, ": tau dtype ", tau.scalar_type(),
              " does not match input dtype ", input.scalar_type());
}

std::tuple<Tensor, Tensor> geqrf_impl(const Tensor& self, bool meta) {
  TORCH_CHECK(self.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  check_linalg_input(self, "torch.geqrf", /*square=*/false);
  const int64_t m = self.size(-2), n = self.size(-1), k = std::min(m, n);
  Tensor a = clone_batched_fortran(self);
  Tensor tau = at::empty(batch_shape_with(self, 2, {k}), self.options());
  if (meta || self.numel() == 0) return {a, tau};
  const int mi = lapack::lapack_int(m, "torch.geqrf"), ni = lapack::lapack_int(n, "torch.geqrf");
  dispatch_types<kFloating | kComplex>(self.scalar_type(), "torch.geqrf", [&]<typename T>() {
    T query{};
    int info = 0;
    lapack::geqrf(mi, ni, matrix_at<T>(a, 0), mi, tau.data_ptr<T>(), &query, -1, &info);
    const int lwork = lapack::workspace_size(query);
    lapack::for_each_matrix(batch_count(a), 2 * m * n * k, [&](int64_t i) {
      auto work = lapack::workspace<T>(lwork);
      int info_i = 0;
      lapack::geqrf(mi, ni, matrix_at<T>(a, i), mi, tau.data_ptr<T>() + i * k, work.get(), lwork, &info_i);
    });
  });
  return {a, tau};
}

Tensor householder_product_impl(const Tensor& input, const Tensor& tau, bool meta) {
  constexpr const char* op = "torch.linalg.householder_product";
  TORCH_CHECK(input.dim() >= 2, op, ": input must have at least 2 dimensions.");
  TORCH_CHECK(input.size(-2) >= input.size(-1), op, ": input.shape[-2] must be greater than or equal to input.shape[-1]");
  TORCH_CHECK(input.size(-1) >= tau.size(-1), op, ": input.shape[-1] must be greater than or equal to tau.shape[-1]");
  check_tau(input, tau, op);
  check_linalg_input(input, op, /*square=*/false);
  const int64_t m = input.size(-2), n = input.size(-1), k = tau.size(-1);
  Tensor Q = clone_batched_fortran(input);
  if (meta || Q.numel() == 0) return Q;
  const Tensor taus = tau.contiguous();
  const int mi = lapack::lapack_int(m, op), ni = static_cast<int>(n), ki = static_cast<int>(k);
  dispatch_types<kFloating | kComplex>(input.scalar_type(), op, [&]<typename T>() {
    T query{};
    int info = 0;
    lapack::orgqr(mi, ni, ki, matrix_at<T>(Q, 0), mi, taus.data_ptr<T>(), &query, -1, &info);
    const int lwork = lapack::workspace_size(query);
    lapack::for_each_matrix(batch_count(Q), 2 * m * n * std::max<int64_t>(k, 1), [&](int64_t i) {
      auto work = lapack::workspace<T>(lwork);
      int info_i = 0;
      lapack::orgqr(mi, ni, ki, matrix_at<T>(Q, i), mi, taus.data_ptr<T>() + i * k, work.get(), lwork, &info_i);
    });
  });
  return Q;
}

Tensor ormqr_impl(const Tensor& input, const Tensor& tau, const Tensor& other, bool left, bool transpose, bool meta) {
  constexpr const char* op = "torch.ormqr";
  TORCH_CHECK(input.dim() >= 2, op, ": input must have at least 2 dimensions.");
  TORCH_CHECK(other.dim() >= 2, op, ": other must have at least 2 dimensions.");
  const int64_t side_dim = left ? -2 : -1;
  TORCH_CHECK(other.size(side_dim) >= tau.size(-1), op, ": other.shape[", side_dim,
              "] must be greater than or equal to tau.shape[-1]");
  TORCH_CHECK(other.size(side_dim) == input.size(-2), op, ": other.shape[", side_dim,
              "] must be equal to input.shape[-2]");
  TORCH_CHECK(tau.size(-1) <= input.size(-1), op, ": tau.shape[-1] must be less than or equal to input.shape[-1]");
  TORCH_CHECK(input.dim() == other.dim(), op, ": Expected other to have the same number of dimensions as input, but "
              "got other.ndim equal to ", other.dim(), " and input.ndim is equal to ", input.dim());
  TORCH_CHECK(other.sizes().slice(0, other.dim() - 2).equals(input.sizes().slice(0, input.dim() - 2)), op,
              ": Expected batch dimensions of other to be equal to input.shape[:-2], but got ",
              other.sizes().slice(0, other.dim() - 2));
  check_tau(input, tau, op);
  TORCH_CHECK(other.scalar_type() == input.scalar_type(), op, ": Expected input and other to have the same dtype, "
              "but input has dtype ", input.scalar_type(), " and other has dtype ", other.scalar_type());
  check_linalg_input(input, op, /*square=*/false);
  Tensor C = clone_batched_fortran(other);
  if (meta || C.numel() == 0 || tau.size(-1) == 0) return C;
  const Tensor reflectors = clone_batched_fortran(input);
  const Tensor taus = tau.contiguous();
  const int64_t m = other.size(-2), n = other.size(-1), k = tau.size(-1), rows = input.size(-2);
  const int mi = lapack::lapack_int(m, op), ni = lapack::lapack_int(n, op), ki = static_cast<int>(k);
  const int lda = std::max(1, static_cast<int>(rows));
  const char side = left ? 'L' : 'R';
  dispatch_types<kFloating | kComplex>(input.scalar_type(), op, [&]<typename T>() {
    // transpose=True applies Q^H (c/zunmqr's 'C'; Q^T for real Q), as torch's
    const char trans = transpose ? lapack::adjoint_trans<T>() : 'N';
    T query{};
    int info = 0;
    lapack::ormqr(side, trans, mi, ni, ki, matrix_at<T>(reflectors, 0), lda, taus.data_ptr<T>(), matrix_at<T>(C, 0),
                  std::max(1, mi), &query, -1, &info);
    const int lwork = lapack::workspace_size(query);
    const int64_t stride = rows * input.size(-1);
    lapack::for_each_matrix(batch_count(C), 4 * m * n * k, [&](int64_t i) {
      auto work = lapack::workspace<T>(lwork);
      int info_i = 0;
      lapack::ormqr(side, trans, mi, ni, ki, reflectors.data_ptr<T>() + i * stride, lda, taus.data_ptr<T>() + i * k,
                    matrix_at<T>(C, i), std::max(1, mi), work.get(), lwork, &info_i);
    });
  });
  return C;
}

}  // namespace

std::tuple<Tensor, Tensor> geqrf_cpu(const Tensor& self) { return geqrf_impl(self, false); }
std::tuple<Tensor, Tensor> geqrf_meta(const Tensor& self) { return geqrf_impl(self, true); }
Tensor linalg_householder_product_cpu(const Tensor& input, const Tensor& tau) {
  return householder_product_impl(input, tau, false);
}
Tensor linalg_householder_product_meta(const Tensor& input, const Tensor& tau) {
  return householder_product_impl(input, tau, true);
}
Tensor orgqr(const Tensor& self, const Tensor& input2) { return at::linalg_householder_product(self, input2); }
Tensor ormqr_cpu(const Tensor& self, const Tensor& input2, const Tensor& input3, bool left, bool transpose) {
  return ormqr_impl(self, input2, input3, left, transpose, false);
}
Tensor ormqr_meta(const Tensor& self, const Tensor& input2, const Tensor& input3, bool left, bool transpose) {
  return ormqr_impl(self, input2, input3, left, transpose, true);
}

}  // namespace at::inline tessera::native
