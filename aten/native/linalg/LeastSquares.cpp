// linalg.lstsq on LAPACK's four drivers: gels (QR; full rank assumed), gelsy (complete
// orthogonal factorisation, rank-revealing; the CPU default), gelsd and gelss (SVD). The
// outputs follow torch: the solution; the squared residuals when m > n, the driver is not
// gelsy and every matrix has full rank (else empty); the rank (not for gels) and the
// singular values (gelsd, gelss), both over A's own batch dims; residuals and singular
// values are real for complex input. B may be a batch of vectors (one dim fewer than A). Only the solution is differentiable (derivatives.yaml).
#include <aten/core/Dispatch.h>
#include <aten/native/Broadcast.h>
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/linalg/Lapack.h>
#include <aten/native/linalg/LinalgUtils.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

namespace at::inline tessera::native {

namespace {

enum class Driver { gels, gelsy, gelsd, gelss };

Driver parse_driver(std::optional<std::string_view> driver) {
  if (!driver) return Driver::gelsy;
  if (*driver == "gels") return Driver::gels;
  if (*driver == "gelsy") return Driver::gelsy;
  if (*driver == "gelsd") return Driver::gelsd;
  if (*driver == "gelss") return Driver::gelss;
  TORCH_CHECK(false, "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
}

// A result computed over the broadcast batch, cut back to A's batch dims (A's matrices
// repeat along the dims it was broadcast over, so any copy will do: the first).
Tensor to_batch_of(const Tensor& t, const Tensor& A, int64_t tail_dims) {
  const int64_t bdims = t.dim() - tail_dims, adims = A.dim() - 2;
  Tensor r = t;
  for (int64_t d = 0; d < bdims; ++d) {
    const int64_t a_size = d - (bdims - adims) >= 0 ? A.size(d - (bdims - adims)) : 1;
    if (a_size == 1 && r.size(d) != 1) r = r.narrow(d, 0, 1);
  }
  std::vector<int64_t> shape(A.sizes().begin(), A.sizes().end() - 2);
  for (int64_t d = bdims; d < t.dim(); ++d) shape.push_back(t.size(d));
  return r.reshape(shape).contiguous();
}

using LstsqResult = std::tuple<Tensor, Tensor, Tensor, Tensor>;

LstsqResult lstsq_impl(const Tensor& self, const Tensor& b, std::optional<double> rcond,
                       std::optional<std::string_view> driver_name, bool meta) {
  constexpr const char* op = "torch.linalg.lstsq";
  TORCH_CHECK(self.dim() >= 2, op, ": input must have at least 2 dimensions.");
  TORCH_CHECK(b.dim() >= 1, op, ": other must have at least 1 dimension.");
  TORCH_CHECK(self.dim() >= b.dim() && self.dim() - b.dim() <= 1, op,
              ": input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1");
  TORCH_CHECK(self.scalar_type() == b.scalar_type(), op, ": Expected input and other to have the same dtype, but got "
              "input's dtype ", self.scalar_type(), " and other's dtype ", b.scalar_type());
  check_linalg_input(self, op, /*square=*/false);
  const Driver driver = parse_driver(driver_name);
  const bool vector_case = b.dim() == self.dim() - 1;
  const Tensor B = vector_case ? b.unsqueeze(-1) : b;
  TORCH_CHECK(self.size(-2) == B.size(-2), op, ": input.size(-2) should match other.size(",
              vector_case ? "-1" : "-2", ")");
  const int64_t m = self.size(-2), n = self.size(-1), k = B.size(-1), rows = std::max(m, n);
  std::vector<int64_t> batch = infer_size(self.sizes().slice(0, self.dim() - 2), B.sizes().slice(0, B.dim() - 2));
  const auto with = [&](std::initializer_list<int64_t> tail) {
    std::vector<int64_t> s = batch;
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  };
  const auto& opts = self.options();
  const TensorOptions real_opts = opts.dtype(real_dtype(self));
  // LAPACK's B holds max(m, n) rows: B on top, the solution's first n rows after the call.
  // With no right-hand sides it still gets one column of zeros (gelsd's inner routine
  // refuses nrhs = 0), so A's rank and singular values come out; torch 1.13 reports rank 0
  // there (gelsy), or fails (gelsd: a LAPACK argument error; gelss: a crash).
  const int64_t columns = std::max<int64_t>(k, 1);
  Tensor A = clone_batched_fortran(self.expand(with({m, n})));
  Tensor work_B = empty_batched_fortran(with({rows, columns}), opts);
  if (!meta && work_B.numel() > 0) {
    if (k == 0) {
      work_B.zero_();
    } else {
      work_B.narrow(-2, 0, m).copy_(B.expand(with({m, k})));
      if (n > m) work_B.narrow(-2, m, n - m).zero_();
    }
  }
  const bool has_rank = driver != Driver::gels, has_sv = driver == Driver::gelsd || driver == Driver::gelss;
  Tensor rank = at::zeros(with({}), opts.dtype(c10::kLong));
  Tensor sv = at::empty(with({std::min(m, n)}), real_opts);
  if (!meta && A.numel() > 0) {
    const int mi = lapack::lapack_int(m, op), ni = lapack::lapack_int(n, op), ki = lapack::lapack_int(columns, op);
    const int ldb = std::max(1, static_cast<int>(rows));
    Tensor info = at::zeros(with({}), opts.dtype(c10::kInt));
    dispatch_types<kFloating | kComplex>(self.scalar_type(), op, [&]<typename T>() {
      using R = lapack::real_t<T>;
      const R cutoff = rcond ? static_cast<R>(*rcond) : std::numeric_limits<R>::epsilon() * static_cast<R>(rows);
      // One driver call, for the workspace query (lwork = -1) and for each matrix. rwork is
      // the complex drivers' real workspace (the real ones ignore it).
      auto run = [&](T* Ai, T* Bi, T* work, int lwork, R* rwork, int* iwork, int* jpvt, R* s, int* r, int* inf) {
        switch (driver) {
          case Driver::gels: lapack::gels(mi, ni, ki, Ai, mi, Bi, ldb, work, lwork, inf); break;
          case Driver::gelsy:
            lapack::gelsy(mi, ni, ki, Ai, mi, Bi, ldb, jpvt, cutoff, r, work, lwork, rwork, inf);
            break;
          case Driver::gelsd:
            lapack::gelsd(mi, ni, ki, Ai, mi, Bi, ldb, s, cutoff, r, work, lwork, rwork, iwork, inf);
            break;
          case Driver::gelss: lapack::gelss(mi, ni, ki, Ai, mi, Bi, ldb, s, cutoff, r, work, lwork, rwork, inf); break;
        }
      };
      const int64_t kmin = std::min(m, n);
      // rwork: 2n reals (gelsy), 5 min(m, n) (gelss), gelsd's by its query (rwork[0]).
      const auto fixed_rwork = static_cast<size_t>(std::max<int64_t>(2 * n, 5 * kmin) + 1);
      T query{};
      int iquery = 0, qinfo = 0, qrank = 0;
      std::vector<int> jpvt_query(static_cast<size_t>(n));
      std::vector<R> s_query(static_cast<size_t>(kmin) + 1), rwork_query(fixed_rwork);
      T* B_base = work_B.data_ptr<T>();
      run(matrix_at<T>(A, 0), B_base, &query, -1, rwork_query.data(), &iquery, jpvt_query.data(), s_query.data(),
          &qrank, &qinfo);
      // Each matrix gets the workspaces its driver reads, no more: iwork for gelsd, the
      // pivots for gelsy, rwork for the complex drivers past gels.
      const int lwork = lapack::workspace_size(query);
      const int64_t liwork = driver == Driver::gelsd ? std::max(1, iquery) : 0;
      const int64_t lrwork = !lapack::is_complex_v<T> || driver == Driver::gels ? 0
                             : driver == Driver::gelsd ? lapack::workspace_size(rwork_query[0])
                                                       : static_cast<int64_t>(fixed_rwork);
      const auto ljpvt = static_cast<size_t>(driver == Driver::gelsy ? n : 0);
      int* inf = info.data_ptr<int>();
      int64_t* ranks = rank.data_ptr<int64_t>();
      lapack::for_each_matrix(batch_count(A), 2 * m * n * std::max(m, n), [&](int64_t i) {
        auto work = lapack::workspace<T>(lwork);
        auto rwork = lapack::workspace<R>(lrwork);
        auto iwork = lapack::workspace<int>(liwork);
        std::vector<int> jpvt(ljpvt, 0);  // 0: every column free to pivot
        int r = 0;
        run(matrix_at<T>(A, i), B_base + i * rows * columns, work.get(), lwork, rwork.get(), iwork.get(),
            jpvt.data(), sv.data_ptr<R>() + i * kmin, &r, inf + i);
        ranks[i] = r;
      });
    });
    check_linalg_errors(info, op,
                        driver == Driver::gels ? LinalgFailure::LstsqNotFullRank : LinalgFailure::SvdNoConverge,
                        self.dim() > 2);
  }
  const Tensor answers = work_B.narrow(-1, 0, k);
  Tensor solution = answers.narrow(-2, 0, n);
  // Residuals: the squared norms of the rows past n, when LAPACK's solution is the
  // least-squares one of a full-rank tall system.
  Tensor residuals = at::empty({0}, real_opts);
  if (m > n && driver != Driver::gelsy) {
    const bool full_rank = driver == Driver::gels || meta || rank.eq(n).all().item().toBool();
    if (full_rank) residuals = answers.narrow(-2, n, m - n).abs().square().sum(IntArrayRef{-2});
  }
  if (vector_case) solution = solution.squeeze(-1);
  return {solution, residuals, has_rank ? to_batch_of(rank, self, 0) : at::empty({0}, opts.dtype(c10::kLong)),
          has_sv ? to_batch_of(sv, self, 1) : at::empty({0}, real_opts)};
}

}  // namespace

LstsqResult linalg_lstsq_cpu(const Tensor& self, const Tensor& b, std::optional<double> rcond,
                             std::optional<std::string_view> driver) {
  return lstsq_impl(self, b, rcond, driver, false);
}
LstsqResult linalg_lstsq_meta(const Tensor& self, const Tensor& b, std::optional<double> rcond,
                              std::optional<std::string_view> driver) {
  return lstsq_impl(self, b, rcond, driver, true);
}

}  // namespace at::inline tessera::native
