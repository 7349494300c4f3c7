// The three Fourier-transform kernels under torch.fft, as torch names them: _fft_c2c
// (complex to complex), _fft_r2c (real to its half or full spectrum) and _fft_c2r (a half
// spectrum to real). Each runs one-dimensional transforms over FFTPlan.h's plans along
// every dim in `dim`: the last through the real plans where the input or output is real
// (a dim other than the last is moved there with one copy), the others complex along
// strided lines in place. Lines run across threads in blocks. Meta kernels give the shapes.
#include <aten/core/Parallel.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/native/spectral/FFTPlan.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <vector>

namespace at::inline tessera::native {

namespace {

enum class Norm : int64_t { none = 0, by_root_n = 1, by_n = 2 };

// Enough points per thread block that a block costs more than handing it out.
int64_t lines_per_block(int64_t n) { return std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(n, 1)); }

std::vector<int64_t> wrapped_dims(IntArrayRef dim, int64_t ndim, const char* op) {
  std::vector<int64_t> dims;
  for (int64_t d : dim) {
    const int64_t w = wrap_dim(d, ndim);
    for (int64_t seen : dims) TORCH_CHECK(seen != w, op, ": FFT dims must be unique");
    dims.push_back(w);
  }
  return dims;
}

void check_normalization(int64_t normalization) {
  TORCH_CHECK(normalization >= 0 && normalization <= 2, "Invalid normalization mode: ", normalization);
}

// Scales by 1/n or 1/sqrt(n) for the n points of one signal (the product over dims).
void normalize_(Tensor& t, int64_t normalization, double points) {
  if (normalization == static_cast<int64_t>(Norm::none) || points == 0) return;
  const double scale = normalization == static_cast<int64_t>(Norm::by_n) ? 1.0 / points : 1.0 / std::sqrt(points);
  t.mul_(scale);
}

void check_dtype(const Tensor& self, bool complex_input, const char* op) {
  const c10::ScalarType t = self.scalar_type();
  if (complex_input) {
    TORCH_CHECK(t == c10::kComplexFloat || t == c10::kComplexDouble, op, " expects a complex input tensor, but got ",
                t);
  } else {
    TORCH_CHECK(t == c10::kFloat || t == c10::kDouble, op, " expects a Float or Double input tensor, but got ", t);
  }
}

// The complex transform along dim d of `src` (contiguous) into `dst` (contiguous, the
// same sizes; may be src itself). Lines along d are `inner` apart in memory, and runs of
// neighbouring lines are 1 apart (or n apart along the last dim), so no copies. A few long
// lines run split (FFTPlan.h), each across threads.
template <typename T>
void c2c_dim(const Tensor& src, const Tensor& dst, int64_t d, bool forward) {
  using C = c10::complex<T>;
  const int64_t n = src.size(d);
  const int64_t lines = n == 0 ? 0 : src.numel() / n;
  if (lines == 0) return;
  int64_t inner = 1;
  for (int64_t k = d + 1; k < src.dim(); ++k) inner *= src.size(k);
  auto plan = fft::cached_complex_plan<T>(n);
  const C* in = src.data_ptr<C>();
  C* out = dst.data_ptr<C>();
  const auto offset = [&](int64_t line) { return line / inner * n * inner + line % inner; };
  if (lines < fft::kBatchLanes<T> && plan->splits()) {
    fft::LinesWork<T> tmp(n);
    for (int64_t line = 0; line < lines; ++line) {
      plan->execute_split(in + offset(line), inner, out + offset(line), inner, tmp.data(), forward);
    }
    return;
  }
  const int64_t line_stride = inner == 1 ? n : 1;
  at::parallel_for(0, lines, lines_per_block(n), [&](int64_t b, int64_t e) {
    fft::LinesWork<T> work(plan->lines_work_size(e - b));
    for (int64_t line = b; line < e;) {
      const int64_t run = inner == 1 ? e - line : std::min(e - line, inner - line % inner);
      plan->execute_lines(in + offset(line), line_stride, inner, out + offset(line), line_stride, inner, run,
                          work.data(), forward);
      line += run;
    }
  });
}

Tensor c2c_dims(const Tensor& x, const std::vector<int64_t>& dims, bool forward) {
  const Tensor src = x.contiguous();
  if (dims.empty()) return src.clone();
  Tensor out = at::empty(src.sizes(), src.options());
  const bool is_double = x.scalar_type() == c10::kComplexDouble;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    const Tensor& from = it == dims.rbegin() ? src : out;
    if (is_double) {
      c2c_dim<double>(from, out, *it, forward);
    } else {
      c2c_dim<float>(from, out, *it, forward);
    }
  }
  return out;
}

template <typename T>
Tensor r2c_last(const Tensor& x) {
  using C = c10::complex<T>;
  const Tensor in = x.contiguous();
  const int64_t n = in.size(-1);
  std::vector<int64_t> sizes = in.sizes().vec();
  sizes.back() = n / 2 + 1;
  Tensor out = at::empty(sizes, in.options().dtype(c10::toComplexType(in.scalar_type())));
  const int64_t lines = n == 0 ? 0 : in.numel() / n;
  if (lines == 0) return out;
  auto plan = fft::cached_real_plan<T>(n);
  const T* src = in.data_ptr<T>();
  C* dst = out.data_ptr<C>();
  const int64_t h = n / 2 + 1;
  at::parallel_for(0, lines, lines_per_block(n), [&](int64_t b, int64_t e) {
    fft::LinesWork<T> work(plan->lines_work_size(e - b));
    plan->forward_lines(src + b * n, n, dst + b * h, h, e - b, work.data());
  });
  return out;
}

// The first n / 2 + 1 values of each line of `x`'s last dim, to n real values.
template <typename T>
Tensor c2r_last(const Tensor& x, int64_t n) {
  using C = c10::complex<T>;
  const Tensor in = x.contiguous();
  const int64_t stride = in.size(-1);
  std::vector<int64_t> sizes = in.sizes().vec();
  sizes.back() = n;
  Tensor out = at::empty(sizes, in.options().dtype(c10::toRealValueType(in.scalar_type())));
  const int64_t lines = out.numel() / n;
  if (lines == 0) return out;
  auto plan = fft::cached_real_plan<T>(n);
  const C* src = in.data_ptr<C>();
  T* dst = out.data_ptr<T>();
  at::parallel_for(0, lines, lines_per_block(n), [&](int64_t b, int64_t e) {
    fft::LinesWork<T> work(plan->lines_work_size(e - b));
    plan->inverse_lines(src + b * stride, stride, dst + b * n, n, e - b, work.data());
  });
  return out;
}

double signal_points(const Tensor& t, const std::vector<int64_t>& dims) {
  double points = 1;
  for (int64_t d : dims) points *= static_cast<double>(t.size(d));
  return points;
}

std::vector<int64_t> r2c_sizes(const Tensor& self, const std::vector<int64_t>& dims, bool onesided) {
  std::vector<int64_t> sizes = self.sizes().vec();
  if (onesided) sizes[static_cast<size_t>(dims.back())] = sizes[static_cast<size_t>(dims.back())] / 2 + 1;
  return sizes;
}

void check_c2r(const Tensor& self, const std::vector<int64_t>& dims, int64_t last_dim_size) {
  TORCH_CHECK(!dims.empty(), "_fft_c2r: dim must not be empty");
  TORCH_CHECK(last_dim_size >= 1, "Invalid number of data points (", last_dim_size, ") specified");
  TORCH_CHECK(self.size(dims.back()) >= last_dim_size / 2 + 1, "_fft_c2r: the last dim holds ",
              self.size(dims.back()), " values, fewer than the ", last_dim_size / 2 + 1, " that ", last_dim_size,
              " output points need");
}

std::vector<int64_t> c2r_sizes(const Tensor& self, const std::vector<int64_t>& dims, int64_t last_dim_size) {
  std::vector<int64_t> sizes = self.sizes().vec();
  sizes[static_cast<size_t>(dims.back())] = last_dim_size;
  return sizes;
}

}  // namespace

Tensor _fft_c2c_cpu(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward) {
  check_dtype(self, true, "_fft_c2c");
  check_normalization(normalization);
  const std::vector<int64_t> dims = wrapped_dims(dim, self.dim(), "_fft_c2c");
  Tensor out = c2c_dims(self, dims, forward);
  normalize_(out, normalization, signal_points(self, dims));
  return out;
}

Tensor _fft_r2c_cpu(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided) {
  check_dtype(self, false, "_fft_r2c");
  check_normalization(normalization);
  const std::vector<int64_t> dims = wrapped_dims(dim, self.dim(), "_fft_r2c");
  TORCH_CHECK(!dims.empty(), "_fft_r2c: dim must not be empty");
  Tensor out;
  if (!onesided) {
    // The full spectrum of a real signal: the complex transform of it.
    out = c2c_dims(self.to(c10::toComplexType(self.scalar_type())), dims, true);
  } else {
    const int64_t last = dims.back();
    TORCH_CHECK(self.size(last) >= 1, "Invalid number of data points (", self.size(last), ") specified");
    Tensor moved = self.movedim(last, -1);
    Tensor half = self.scalar_type() == c10::kDouble ? r2c_last<double>(moved) : r2c_last<float>(moved);
    out = c2c_dims(half.movedim(-1, last), std::vector<int64_t>(dims.begin(), dims.end() - 1), true);
  }
  normalize_(out, normalization, signal_points(self, dims));
  return out;
}

Tensor _fft_c2r_cpu(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size) {
  check_dtype(self, true, "_fft_c2r");
  check_normalization(normalization);
  const std::vector<int64_t> dims = wrapped_dims(dim, self.dim(), "_fft_c2r");
  check_c2r(self, dims, last_dim_size);
  const int64_t last = dims.back();
  Tensor x = c2c_dims(self, std::vector<int64_t>(dims.begin(), dims.end() - 1), false);
  Tensor moved = x.movedim(last, -1);
  Tensor out = (self.scalar_type() == c10::kComplexDouble ? c2r_last<double>(moved, last_dim_size)
                                                           : c2r_last<float>(moved, last_dim_size))
                   .movedim(-1, last);
  double points = static_cast<double>(last_dim_size);
  for (auto it = dims.begin(); it + 1 != dims.end(); ++it) points *= static_cast<double>(self.size(*it));
  normalize_(out, normalization, points);
  return out;
}

Tensor _fft_c2c_meta(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward) {
  check_dtype(self, true, "_fft_c2c");
  check_normalization(normalization);
  (void)wrapped_dims(dim, self.dim(), "_fft_c2c");
  (void)forward;
  return at::empty(self.sizes(), self.options());
}

Tensor _fft_r2c_meta(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided) {
  check_dtype(self, false, "_fft_r2c");
  check_normalization(normalization);
  const std::vector<int64_t> dims = wrapped_dims(dim, self.dim(), "_fft_r2c");
  TORCH_CHECK(!dims.empty(), "_fft_r2c: dim must not be empty");
  return at::empty(r2c_sizes(self, dims, onesided), self.options().dtype(c10::toComplexType(self.scalar_type())));
}

Tensor _fft_c2r_meta(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size) {
  check_dtype(self, true, "_fft_c2r");
  check_normalization(normalization);
  const std::vector<int64_t> dims = wrapped_dims(dim, self.dim(), "_fft_c2r");
  check_c2r(self, dims, last_dim_size);
  return at::empty(c2r_sizes(self, dims, last_dim_size),
                   self.options().dtype(c10::toRealValueType(self.scalar_type())));
}

}  // namespace at::inline tessera::native
