// linalg.eig and linalg.eigvals: the eigen-decomposition of a general square matrix on
// LAPACK's geev (right eigenvectors only). The results are always complex, as torch's: a
// real matrix's conjugate pairs come back from s/dgeev as real and imaginary parts, which
// are assembled into complex eigenvalues and eigenvectors here. CPU and Meta share eig_impl.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/linalg/Lapack.h>
#include <aten/native/linalg/LinalgUtils.h>
#include <aten/ops/Functions.h>

#include <vector>

namespace at::inline tessera::native {

namespace {

constexpr const char* kOp = "linalg.eig";

// A real geev's results as complex ones: an eigenvalue with a positive imaginary part comes
// first in its conjugate pair, and its eigenvector is vr[:, j] + i vr[:, j+1]; the pair's
// second vector is the conjugate of the first (torch's assembly, the same phases).
template <typename R>
void assemble_real_pairs(int64_t n, const R* wr, const R* wi, const R* vr, c10::complex<R>* w, c10::complex<R>* v) {
  for (int64_t j = 0; j < n; ++j) w[j] = c10::complex<R>(wr[j], wi[j]);
  for (int64_t j = 0; j < n; ++j) {
    const R* col = vr + j * n;
    if (wi[j] == R(0) || j + 1 == n) {
      for (int64_t r = 0; r < n; ++r) v[j * n + r] = c10::complex<R>(col[r], R(0));
      continue;
    }
    const R* next = col + n;
    for (int64_t r = 0; r < n; ++r) {
      v[j * n + r] = c10::complex<R>(col[r], next[r]);
      v[(j + 1) * n + r] = c10::complex<R>(col[r], -next[r]);
    }
    ++j;
  }
}

// One matrix through geev into eigenvalues w and eigenvectors v, both complex and
// column-major. `a` is overwritten.
template <typename T>
struct GeevRunner {
  using R = lapack::real_t<T>;
  using C = c10::complex<R>;
  static constexpr bool kComplexInput = !std::is_same_v<T, R>;
  int n;
  int lwork = 1;

  explicit GeevRunner(int n_, T* sample) : n(n_) {
    T query{};
    int info = 0;
    std::vector<R> rwork(static_cast<size_t>(2 * n));
    std::vector<T> w(static_cast<size_t>(n)), vr(static_cast<size_t>(n) * n);
    std::vector<R> wi(static_cast<size_t>(n));
    lapack::geev('V', n, sample, n, w.data(), wi.data(), vr.data(), n, &query, -1, rwork.data(), &info);
    lwork = lapack::workspace_size(query);
  }

  void run(T* a, C* w, C* v, int* info) const {
    auto work = lapack::workspace<T>(lwork);
    auto rwork = lapack::workspace<R>(2 * n);
    if constexpr (kComplexInput) {
      lapack::geev('V', n, a, n, w, nullptr, v, n, work.get(), lwork, rwork.get(), info);
    } else {
      auto wr = lapack::workspace<R>(n), wi = lapack::workspace<R>(n), vr = lapack::workspace<R>(int64_t{n} * n);
      lapack::geev('V', n, a, n, wr.get(), wi.get(), vr.get(), n, work.get(), lwork, rwork.get(), info);
      if (*info == 0) assemble_real_pairs<R>(n, wr.get(), wi.get(), vr.get(), w, v);
    }
  }
};

std::tuple<Tensor, Tensor> eig_impl(const Tensor& A, bool meta) {
  check_linalg_input(A, kOp);
  const int64_t n = A.size(-1);
  const TensorOptions complex_options = A.options().dtype(complex_dtype(A));
  Tensor W = at::empty(batch_shape_with(A, 2, {n}), complex_options);
  Tensor V = empty_batched_fortran(A.sizes(), complex_options);
  if (meta || A.numel() == 0) return {W, V};
  Tensor work_A;
  {
    const at::SerialScope serial = serial_before_lapack(A);
    TORCH_CHECK(at::isfinite(A).all().item().toBool(),
                "torch.linalg.eig: input tensor should not contain infs or NaNs.");
    work_A = clone_batched_fortran(A);
  }
  Tensor info = at::zeros(batch_shape_with(A, 2, {}), A.options().dtype(c10::kInt));
  const int ni = lapack::lapack_int(n, kOp);
  dispatch_types<kFloating | kComplex>(A.scalar_type(), kOp, [&]<typename T>() {
    using C = typename GeevRunner<T>::C;
    const GeevRunner<T> runner(ni, matrix_at<T>(work_A, 0));
    int* inf = info.data_ptr<int>();
    lapack::for_each_matrix(batch_count(A), 25 * n * n * n, [&](int64_t i) {
      runner.run(matrix_at<T>(work_A, i), W.data_ptr<C>() + i * n, matrix_at<C>(V, i), inf + i);
    });
  });
  check_linalg_errors(info, "torch.linalg.eig", LinalgFailure::EighNoConverge, A.dim() > 2);
  return {W, V};
}

}  // namespace

std::tuple<Tensor, Tensor> linalg_eig_cpu(const Tensor& A) { return eig_impl(A, false); }
std::tuple<Tensor, Tensor> linalg_eig_meta(const Tensor& A) { return eig_impl(A, true); }

// out=: any dtype the complex result can be cast to safely, checked before computing, in
// torch's words. An out of the result's own dtype takes its strides (column-major
// eigenvectors, as torch writes them); one that casts is resized contiguous.
static void check_eig_out(const Tensor& self, const Tensor& out, const char* op, const char* name) {
  const c10::ScalarType result = complex_dtype(self);
  TORCH_CHECK(c10::canCast(result, out.scalar_type()), op, ": Expected ", name, " to be safely castable from ", result,
              " dtype, but got ", name, " with dtype ", out.scalar_type());
}
static void write_eig_out(const Tensor& result, Tensor& out, const char* op) {
  if (out.scalar_type() == result.scalar_type()) {
    resize_out(out, meta::TensorMeta{result.sizes().vec(), result.scalar_type(), result.strides().vec()}, op);
    out.copy_(result);
    return;
  }
  copy_into_out(result, out, op);
}

std::tuple<Tensor&, Tensor&> linalg_eig_out(const Tensor& self, Tensor& eigenvalues, Tensor& eigenvectors) {
  check_linalg_input(self, kOp);
  check_eig_out(self, eigenvalues, "torch.linalg.eig", "eigenvalues");
  check_eig_out(self, eigenvectors, "torch.linalg.eig", "eigenvectors");
  auto [W, V] = at::linalg_eig(self);
  write_eig_out(W, eigenvalues, "torch.linalg.eig");
  write_eig_out(V, eigenvectors, "torch.linalg.eig");
  return {eigenvalues, eigenvectors};
}
Tensor& linalg_eigvals_out(const Tensor& self, Tensor& out) {
  check_linalg_input(self, "linalg.eigvals");
  check_eig_out(self, out, "torch.linalg.eigvals", "eigenvalues");
  write_eig_out(at::linalg_eigvals(self), out, "torch.linalg.eigvals");
  return out;
}

// eigvals through linalg.eig (torch 1.13's operator set has no values-only primitive; the
// eigenvectors geev computes besides are dropped).
Tensor linalg_eigvals(const Tensor& self) {
  check_linalg_input(self, "linalg.eigvals");
  return std::get<0>(at::linalg_eig(self));
}

}  // namespace at::inline tessera::native
