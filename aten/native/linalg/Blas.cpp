// batched_gemm and dot_into (Blas.h): the matmul family's kernels.
//
// BLAS reads a matrix through a leading dimension, so a row-major view (strides (ld, 1))
// and a transposed one (strides (1, ld)) both go to it as they are, flagged NoTrans /
// Trans: `a.t() @ b` copies nothing. An output stored column-major is computed as its
// transpose (out^T = b^T @ a^T). Only operands BLAS cannot describe (a stepped slice, a
// stride of 0 along a matrix dim) are copied to a contiguous tensor first.
//
// Note [float GEMM backend]: float32 products of at least 32x32x32 multiply-adds go to
// oneDNN's sgemm, smaller ones and double/complex to OpenBLAS. Measured on this project's
// machines (bench/gemm_backends.cpp), oneDNN's JIT kernels run 1.5-2x faster than Debian's
// OpenBLAS 0.3.21 from 32^3 up (AVX-512 hosts, where OpenBLAS falls back to AVX2 kernels;
// on par elsewhere), while OpenBLAS answers tiny products a fraction of a microsecond
// sooner. oneDNN threads through OpenMP, the pool at::parallel_for uses, so a GEMM and our
// elementwise kernels never have two thread pools spinning for the same cores.
// TESSERA_SGEMM=openblas sends every float32 product to OpenBLAS (for A/B measurements).
//
// Note [BLAS threads]: OpenBLAS (Debian's pthread build here) keeps its own thread pool,
// sized to at::get_num_threads() by set_num_threads (core/Parallel.cpp). A single GEMM
// uses that pool (or OpenMP's, for oneDNN). A batch of GEMMs (bmm, baddbmm, batched
// matmul) instead runs its matrices across our OpenMP threads with OpenBLAS held to one
// thread for the duration (oneDNN, called inside a parallel region, runs sequentially by
// itself): a 128x128x128 GEMM is too small for two threads to split without their
// synchronisation costing more than they gain, whereas whole matrices per thread need
// none, and one pool owning the cores means two never run at once and fight for them. The
// count is process-wide in OpenBLAS, so another thread's GEMM during that window runs
// single-threaded too (slower, never wrong).
#include <aten/native/linalg/Blas.h>

#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/nn/onednn/OneDnnMatmul.h>
#include <aten/ops/Functions.h>

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

namespace at::inline tessera::native {

namespace {

// A batch of matrices in memory: element pointer and strides (in elements).
template <typename T>
struct Mats {
  T* data;
  int64_t sb, rs, cs;  // batch, row, column strides
  int64_t rows, cols;
  T* at(int64_t b) const { return data + b * sb; }
  Mats transposed() const { return {data, sb, cs, rs, cols, rows}; }
};

template <typename T>
Mats<T> mats_of(const Tensor& t) {
  return {t.data_ptr<T>(), t.stride(0), t.stride(1), t.stride(2), t.size(1), t.size(2)};
}

// How BLAS (row-major interface) can read a rows x cols matrix: transposed or not, and
// the leading dimension; nullopt when the strides fit neither form. Along a dim of size 1
// the stride is never used, so any value is accepted there.
struct BlasForm {
  bool trans;
  int64_t ld;
};
std::optional<BlasForm> blas_form(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  const int64_t r = std::max<int64_t>(rows, 1), c = std::max<int64_t>(cols, 1);
  if (cs == 1 || cols == 1) {
    const int64_t ld = rows == 1 ? c : rs;
    if (ld >= c && ld <= INT_MAX) return BlasForm{false, ld};
  }
  if (rs == 1 || rows == 1) {
    const int64_t ld = cols == 1 ? r : cs;
    if (ld >= r && ld <= INT_MAX) return BlasForm{true, ld};
  }
  return std::nullopt;
}

// What products accumulate in: integers in their wrapping unsigned type (overflow wraps as
// in torch, never undefined), Half/BFloat16 in float, the rest in themselves.
template <typename T, bool = std::is_integral_v<T>>
struct product_acc {
  using type = opmath_t<T>;
};
template <typename T>
struct product_acc<T, true> {
  using type = wrapping_uint_t<T>;
};
template <typename T>
using product_acc_t = typename product_acc<T>::type;

// Note [float GEMM backend]: whether a float32 product goes to oneDNN.
bool onednn_sgemm_for(int m, int n, int k) {
  static const bool forced_openblas = [] {
    const char* v = std::getenv("TESSERA_SGEMM");
    return v && std::strcmp(v, "openblas") == 0;
  }();
  return !forced_openblas && int64_t{m} * n * k >= 32 * 32 * 32;
}

// One row-major GEMM: C (m x n, ldc) = alpha * op(A) @ op(B) + beta * C.
template <typename T>
void gemm(bool ta, bool tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb, T beta, T* c,
          int ldc) {
  const CBLAS_TRANSPOSE A = ta ? CblasTrans : CblasNoTrans, B = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    // oneDNN sizes its region by this thread's OpenMP default: make it set_num_threads'
    // count on threads other than the one that set it (inside a region it runs sequentially).
    if (onednn_sgemm_for(m, n, k) && (at::in_parallel_region() || (at::init_num_threads(), true)) &&
        dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) == dnnl_success) {
      return;
    }
    cblas_sgemm(CblasRowMajor, A, B, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, A, B, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if constexpr (std::is_same_v<T, c10::complex<float>>) {
    cblas_cgemm(CblasRowMajor, A, B, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
  } else {
    cblas_zgemm(CblasRowMajor, A, B, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
  }
}

// float, double, complex: every matrix of the batch through BLAS. `c` must be a BLAS
// row-major form (the caller transposes the problem or copies otherwise).
template <typename T>
void blas_batched(Mats<T> c, Mats<T> a, Mats<T> b, int64_t batch, int64_t k, T alpha, T beta) {
  const BlasForm fa = *blas_form(a.rows, a.cols, a.rs, a.cs), fb = *blas_form(b.rows, b.cols, b.rs, b.cs);
  const BlasForm fc = *blas_form(c.rows, c.cols, c.rs, c.cs);
  const int m = static_cast<int>(c.rows), n = static_cast<int>(c.cols), kk = static_cast<int>(k);
  auto one = [&](int64_t i) {
    gemm<T>(fa.trans, fb.trans, m, n, kk, alpha, a.at(i), static_cast<int>(fa.ld), b.at(i), static_cast<int>(fb.ld),
            beta, c.at(i), static_cast<int>(fc.ld));
  };
  const int threads = at::get_num_threads();
  if (batch > 1 && threads > 1 && !at::in_parallel_region() &&
      (batch >= threads || c.rows * c.cols * k < (int64_t{1} << 21))) {
    SingleThreadedBlas guard;
    at::parallel_for(0, batch, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) one(i);
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i);
  }
}

// Integer types (and float/double/complex with dims beyond BLAS's int): rows of the batch
// across threads, each row accumulated over k in the type's wrapping arithmetic as torch's
// loop does (integer overflow wraps, it is not undefined).
template <typename T>
void loop_batched(Mats<T> c, Mats<T> a, Mats<T> b, int64_t batch, int64_t k, T alpha, T beta, bool read_c) {
  using Acc = product_acc_t<T>;
  const int64_t m = c.rows, n = c.cols;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, n * k));
  at::parallel_for(0, batch * m, grain, [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(static_cast<size_t>(n));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t bi = row / m, i = row % m;
      std::fill(acc.begin(), acc.end(), Acc(0));
      const T* arow = a.at(bi) + i * a.rs;
      const T* bm = b.at(bi);
      for (int64_t p = 0; p < k; ++p) {
        const Acc x = Acc(arow[p * a.cs]);
        const T* brow = bm + p * b.rs;
        for (int64_t j = 0; j < n; ++j) acc[static_cast<size_t>(j)] += x * Acc(brow[j * b.cs]);
      }
      T* crow = c.at(bi) + i * c.rs;
      for (int64_t j = 0; j < n; ++j) {
        Acc v = Acc(alpha) * acc[static_cast<size_t>(j)];
        if (read_c) v += Acc(beta) * Acc(crow[j * c.cs]);
        crow[j * c.cs] = T(v);
      }
    }
  });
}

template <typename T>
void gemm_typed(const Tensor& out, const Tensor& a_in, const Tensor& b_in, const c10::Scalar& beta_s,
                const c10::Scalar& alpha_s) {
  const bool read_c = !is_zero_scalar(beta_s);
  const T alpha = alpha_s.to<T>();
  const T beta = read_c ? beta_s.to<T>() : T(0);
  const int64_t batch = out.size(0), k = a_in.size(2);
  constexpr bool blas_type = std::is_floating_point_v<T> || std::is_same_v<T, c10::complex<float>> ||
                             std::is_same_v<T, c10::complex<double>>;
  const bool dims_fit = out.size(1) <= INT_MAX && out.size(2) <= INT_MAX && k <= INT_MAX;
  if constexpr (blas_type) {
    if (dims_fit) {
      // The output: row-major as it is, column-major as the transposed problem, else a
      // contiguous buffer copied back.
      Tensor c = out;
      if (!blas_form(out.size(1), out.size(2), out.stride(1), out.stride(2))) {
        c = make_empty(out.sizes(), out.scalar_type(), out.device());
        if (read_c) c.copy_(out);
      }
      bool flip = blas_form(c.size(1), c.size(2), c.stride(1), c.stride(2))->trans;
      auto readable = [](const Tensor& t) {
        return blas_form(t.size(1), t.size(2), t.stride(1), t.stride(2)) ? t : t.contiguous();
      };
      const Tensor a = readable(a_in), b = readable(b_in);
      Mats<T> mc = mats_of<T>(c), ma = mats_of<T>(a), mb = mats_of<T>(b);
      if (flip) blas_batched<T>(mc.transposed(), mb.transposed(), ma.transposed(), batch, k, alpha, beta);
      else blas_batched<T>(mc, ma, mb, batch, k, alpha, beta);
      if (!c.is_same(out)) out.copy_(c);
      return;
    }
  }
  loop_batched<T>(mats_of<T>(out), mats_of<T>(a_in), mats_of<T>(b_in), batch, k, alpha, beta, read_c);
}

}  // namespace

SingleThreadedBlas::SingleThreadedBlas() { openblas_set_num_threads(1); }
SingleThreadedBlas::~SingleThreadedBlas() { openblas_set_num_threads(at::get_num_threads()); }

void batched_gemm(const Tensor& out, const Tensor& a, const Tensor& b, const c10::Scalar& beta,
                  const c10::Scalar& alpha, const char* op) {
  const c10::ScalarType t = out.scalar_type();
  // As in torch, an empty result or an empty sum never reaches the dtype check.
  if (out.numel() == 0) return;
  if (a.size(2) == 0) {
    // An empty sum: beta * out (zeros when beta is 0, whatever out held); beta in out's
    // dtype, so 0.5 is 0 for integers as torch's kernels convert it.
    if (is_zero_scalar(beta)) {
      out.zero_();
    } else if (!(beta.toComplexDouble() == c10::complex<double>(1, 0))) {
      out.mul_(make_empty({}, t, out.device()).fill_(beta));
    }
    return;
  }
  if (t == c10::kBool) dtype_not_implemented(op, t);
  // Native bfloat16 products where the CPU has them (oneDNN's matmul: float32 sums, one
  // rounding, as torch's mkldnn path); the float path below otherwise.
  if (t == c10::kBFloat16 && onednn::matmul_bf16(out, a, b, beta.toFloat(), alpha.toFloat())) return;
  if (t == c10::kHalf || t == c10::kBFloat16) {
    // Computed in float (as current PyTorch does on CPU), rounded once at the end.
    Tensor acc = is_zero_scalar(beta) ? make_empty(out.sizes(), c10::kFloat, out.device()) : out.to(c10::kFloat);
    batched_gemm(acc, a.to(c10::kFloat), b.to(c10::kFloat), beta, alpha, op);
    out.copy_(acc);
    return;
  }
  dispatch_types<kIntegral | kFloating | kComplex>(t, op, [&]<typename T>() { gemm_typed<T>(out, a, b, beta, alpha); });
}

void dot_into(const Tensor& out, const Tensor& self, const Tensor& other, bool conj_self, const char* op) {
  const int64_t n = self.numel();
  const c10::ScalarType t = self.scalar_type();
  if (t == c10::kBool) dtype_not_implemented(op, t);
  dispatch_types<kIntegral | kFloating | kReducedFloat | kComplex>(t, op, [&]<typename T>() {
    const T* x = self.data_ptr<T>();
    const T* y = other.data_ptr<T>();
    const int64_t sx = self.dim() ? self.stride(0) : 1, sy = other.dim() ? other.stride(0) : 1;
    T* r = out.data_ptr<T>();
    const bool blas_ok = n <= INT_MAX && sx >= 1 && sy >= 1 && sx <= INT_MAX && sy <= INT_MAX;
    const int bn = static_cast<int>(n), ix = static_cast<int>(sx), iy = static_cast<int>(sy);
    if constexpr (std::is_same_v<T, float>) {
      if (blas_ok) return void(*r = cblas_sdot(bn, x, ix, y, iy));
    } else if constexpr (std::is_same_v<T, double>) {
      if (blas_ok) return void(*r = cblas_ddot(bn, x, ix, y, iy));
    } else if constexpr (std::is_same_v<T, c10::complex<float>>) {
      if (blas_ok) return conj_self ? cblas_cdotc_sub(bn, x, ix, y, iy, r) : cblas_cdotu_sub(bn, x, ix, y, iy, r);
    } else if constexpr (std::is_same_v<T, c10::complex<double>>) {
      if (blas_ok) return conj_self ? cblas_zdotc_sub(bn, x, ix, y, iy, r) : cblas_zdotu_sub(bn, x, ix, y, iy, r);
    }
    // Integers wrap; Half/BFloat16 accumulate in float.
    using Acc = product_acc_t<T>;
    Acc acc(0);
    for (int64_t i = 0; i < n; ++i) {
      T xi = x[i * sx];
      if constexpr (std::is_same_v<T, c10::complex<float>> || std::is_same_v<T, c10::complex<double>>) {
        if (conj_self) xi = c10::conj(xi);
      }
      acc += Acc(xi) * Acc(y[i * sy]);
    }
    *r = T(acc);
  });
}

bool is_zero_scalar(const c10::Scalar& s) {
  return s.isComplex() ? s.toComplexDouble() == c10::complex<double>(0, 0) : s.toDouble() == 0;
}

}  // namespace at::inline tessera::native
