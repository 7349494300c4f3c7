// LAPACK-backed spectral and orthogonal decompositions: eigh (syevd; heevd for complex),
// the SVD (gesdd) and QR (geqrf, then orgqr / ungqr for Q), for real and complex dtypes;
// eigenvalues and singular values are real. As in Factorizations.cpp, CPU and Meta share one function
// per op; outputs are batched column-major matrices, as torch returns them.
#include <aten/core/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/linalg/Lapack.h>
#include <aten/native/linalg/LinalgUtils.h>
#include <aten/ops/Functions.h>

#include <memory>
#include <string>
#include <vector>

namespace at::inline tessera::native {

namespace {

std::tuple<Tensor, Tensor> eigh_impl(const Tensor& A, std::string_view uplo, bool compute_v, bool meta) {
  TORCH_CHECK(uplo == "L" || uplo == "U" || uplo == "l" || uplo == "u",
              "Expected UPLO argument to be 'L' or 'U', but got ", uplo);
  check_linalg_input(A, "linalg.eigh");
  const int64_t n = A.size(-1);
  Tensor V = clone_batched_fortran(A);
  Tensor L = at::empty(batch_shape_with(A, 2, {n}), A.options().dtype(real_dtype(A)));
  Tensor info = at::zeros(batch_shape_with(A, 2, {}), A.options().dtype(c10::kInt));
  if (!meta && A.numel() > 0) {
    const char u = static_cast<char>(std::toupper(uplo[0])), jobz = compute_v ? 'V' : 'N';
    const int ni = lapack::lapack_int(n, "linalg.eigh");
    dispatch_types<kFloating | kComplex>(A.scalar_type(), "linalg.eigh", [&]<typename T>() {
      using R = lapack::real_t<T>;
      T work_query{};
      R rwork_query = 0;
      int iwork_query = 0, query_info = 0;
      lapack::heevd(jobz, u, ni, matrix_at<T>(V, 0), ni, L.data_ptr<R>(), &work_query, -1, &rwork_query, -1,
                    &iwork_query, -1, &query_info);
      const int lwork = lapack::workspace_size(work_query), liwork = std::max(1, iwork_query);
      const int lrwork = lapack::workspace_size(rwork_query);
      int* inf = info.data_ptr<int>();
      lapack::for_each_matrix(batch_count(V), 9 * n * n * n, [&](int64_t i) {
        auto work = lapack::workspace<T>(lwork);
        auto rwork = lapack::workspace<R>(lrwork);
        auto iwork = lapack::workspace<int>(liwork);
        lapack::heevd(jobz, u, ni, matrix_at<T>(V, i), ni, L.data_ptr<R>() + i * n, work.get(), lwork, rwork.get(),
                      lrwork, iwork.get(), liwork, inf + i);
      });
    });
    check_linalg_errors(info, "linalg.eigh", LinalgFailure::EighNoConverge, A.dim() > 2);
  }
  if (!compute_v) V = at::empty({0}, A.options());
  return {L, V};
}

std::tuple<Tensor, Tensor, Tensor> svd_impl(const Tensor& A, bool full_matrices, bool compute_uv,
                                            std::optional<std::string_view> driver, bool meta) {
  check_linalg_input(A, "linalg.svd", /*square=*/false);
  TORCH_CHECK(!driver.has_value(),
              "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  Tensor S = at::empty(batch_shape_with(A, 2, {k}), A.options().dtype(real_dtype(A)));
  Tensor U = compute_uv ? empty_batched_fortran(batch_shape_with(A, 2, {m, ucols}), A.options())
                        : at::empty({0}, A.options());
  Tensor Vh = compute_uv ? empty_batched_fortran(batch_shape_with(A, 2, {vrows, n}), A.options())
                         : at::empty({0}, A.options());
  if (meta) return {U, S, Vh};
  if (k == 0) {
    // Nothing to decompose: the full singular vectors are the identity.
    if (compute_uv) {
      U.copy_(at::eye(m, ucols, A.options()).expand(U.sizes()));
      Vh.copy_(at::eye(vrows, n, A.options()).expand(Vh.sizes()));
    }
    return {U, S, Vh};
  }
  Tensor work_A = clone_batched_fortran(A);
  Tensor info = at::zeros(batch_shape_with(A, 2, {}), A.options().dtype(c10::kInt));
  const char jobz = compute_uv ? (full_matrices ? 'A' : 'S') : 'N';
  const int mi = lapack::lapack_int(m, "linalg.svd"), ni = lapack::lapack_int(n, "linalg.svd");
  const int ldu = std::max(1, mi), ldvt = std::max<int>(1, static_cast<int>(vrows));
  // c/zgesdd's real workspace, which LAPACK does not size by query: its documented minimum
  // (7 min(m, n) without vectors, the larger bound otherwise).
  const int64_t mx = std::max(m, n);
  const int64_t lrwork = !A.is_complex() ? 1
                         : compute_uv ? std::max(5 * k * k + 5 * k, 2 * mx * k + 2 * k * k + k)
                                      : 7 * k;
  dispatch_types<kFloating | kComplex>(A.scalar_type(), "linalg.svd", [&]<typename T>() {
    using R = lapack::real_t<T>;
    // Without vectors LAPACK still wants valid pointers for U and VT.
    T dummy_u{}, dummy_vt{};
    auto u_at = [&](int64_t i) { return compute_uv ? matrix_at<T>(U, i) : &dummy_u; };
    auto vt_at = [&](int64_t i) { return compute_uv ? matrix_at<T>(Vh, i) : &dummy_vt; };
    auto gesdd_call = [&](int64_t i, R* s, T* work, int lwork, R* rwork, int* iwork, int* inf) {
      lapack::gesdd(jobz, mi, ni, matrix_at<T>(work_A, i), mi, s, u_at(i), ldu, vt_at(i), ldvt, work, lwork, rwork,
                    iwork, inf);
    };
    T work_query{};
    int query_info = 0;
    std::vector<int> iwork_query(static_cast<size_t>(8 * k));
    std::vector<R> rwork_query(static_cast<size_t>(lrwork));
    gesdd_call(0, S.data_ptr<R>(), &work_query, -1, rwork_query.data(), iwork_query.data(), &query_info);
    const int lwork = lapack::workspace_size(work_query);
    int* inf = info.data_ptr<int>();
    lapack::for_each_matrix(batch_count(work_A), 4 * m * n * k, [&](int64_t i) {
      // (uninitialised: gesdd's workspace is ~4n^2 scalars, whose zeroing showed in svd 512)
      auto work = lapack::workspace<T>(lwork);
      auto rwork = lapack::workspace<R>(lrwork);
      auto iwork = lapack::workspace<int>(8 * k);
      gesdd_call(i, S.data_ptr<R>() + i * k, work.get(), lwork, rwork.get(), iwork.get(), inf + i);
    });
  });
  check_linalg_errors(info, "linalg.svd", LinalgFailure::SvdNoConverge, A.dim() > 2);
  return {U, S, Vh};
}

std::tuple<Tensor, Tensor> qr_impl(const Tensor& A, std::string_view mode, bool meta) {
  TORCH_CHECK(mode == "reduced" || mode == "r" || mode == "complete", "qr received unrecognized mode '", mode,
              "' but expected one of 'reduced' (default), 'r', or 'complete'");
  check_linalg_input(A, "linalg.qr", /*square=*/false);
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const bool complete = mode == "complete", want_q = mode != "r";
  const int64_t qcols = complete ? m : k;
  Tensor work_A = clone_batched_fortran(A);
  Tensor tau = at::empty(batch_shape_with(A, 2, {k}), A.options());
  Tensor Q = want_q ? empty_batched_fortran(batch_shape_with(A, 2, {m, qcols}), A.options()) : at::empty({0}, A.options());
  const int64_t rrows = complete ? m : k;
  if (meta) return {Q, empty_batched_fortran(batch_shape_with(A, 2, {rrows, n}), A.options())};
  const int mi = lapack::lapack_int(m, "linalg.qr"), ni = lapack::lapack_int(n, "linalg.qr");
  const int ki = static_cast<int>(k), qi = static_cast<int>(qcols);
  const int64_t batch = batch_count(A);
  if (A.numel() > 0) {
    dispatch_types<kFloating | kComplex>(A.scalar_type(), "linalg.qr", [&]<typename T>() {
      T query{};
      int info = 0;
      lapack::geqrf(mi, ni, matrix_at<T>(work_A, 0), mi, tau.data_ptr<T>(), &query, -1, &info);
      const int lwork = lapack::workspace_size(query);
      lapack::for_each_matrix(batch, 2 * m * n * k, [&](int64_t i) {
        auto work = lapack::workspace<T>(lwork);
        int info_i = 0;
        lapack::geqrf(mi, ni, matrix_at<T>(work_A, i), mi, tau.data_ptr<T>() + i * k, work.get(), lwork, &info_i);
      });
    });
  }
  // R: the upper triangle of the first rows (all m rows for 'complete'; those past n are
  // zero).
  Tensor R = empty_batched_fortran(batch_shape_with(A, 2, {rrows, n}), A.options());
  R.copy_(work_A.narrow(-2, 0, rrows).triu());
  if (!want_q || Q.numel() == 0) {
    if (want_q && Q.numel() > 0) Q.zero_();
    return {Q, R};
  }
  // Q: the reflectors in its first k columns, expanded in place by orgqr.
  Q.narrow(-1, 0, k).copy_(work_A.narrow(-1, 0, k));
  if (k == 0) {
    Q.copy_(at::eye(m, qcols, A.options()).expand(Q.sizes()));
    return {Q, R};
  }
  dispatch_types<kFloating | kComplex>(A.scalar_type(), "linalg.qr", [&]<typename T>() {
    T query{};
    int info = 0;
    lapack::orgqr(mi, qi, ki, matrix_at<T>(Q, 0), mi, tau.data_ptr<T>(), &query, -1, &info);
    const int lwork = lapack::workspace_size(query);
    lapack::for_each_matrix(batch, 2 * m * qcols * k, [&](int64_t i) {
      auto work = lapack::workspace<T>(lwork);
      int info_i = 0;
      lapack::orgqr(mi, qi, ki, matrix_at<T>(Q, i), mi, tau.data_ptr<T>() + i * k, work.get(), lwork, &info_i);
    });
  });
  return {Q, R};
}

}  // namespace

std::tuple<Tensor, Tensor> linalg_eigh_cpu(const Tensor& A, std::string_view uplo, bool compute_v) {
  return eigh_impl(A, uplo, compute_v, false);
}
std::tuple<Tensor, Tensor> linalg_eigh_meta(const Tensor& A, std::string_view uplo, bool compute_v) {
  return eigh_impl(A, uplo, compute_v, true);
}
std::tuple<Tensor, Tensor, Tensor> linalg_svd_cpu(const Tensor& A, bool full_matrices, bool compute_uv,
                                                  std::optional<std::string_view> driver) {
  return svd_impl(A, full_matrices, compute_uv, driver, false);
}
std::tuple<Tensor, Tensor, Tensor> linalg_svd_meta(const Tensor& A, bool full_matrices, bool compute_uv,
                                                   std::optional<std::string_view> driver) {
  return svd_impl(A, full_matrices, compute_uv, driver, true);
}
std::tuple<Tensor, Tensor> linalg_qr_cpu(const Tensor& A, std::string_view mode) { return qr_impl(A, mode, false); }
std::tuple<Tensor, Tensor> linalg_qr_meta(const Tensor& A, std::string_view mode) { return qr_impl(A, mode, true); }

}  // namespace at::inline tessera::native
