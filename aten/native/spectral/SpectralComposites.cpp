// torch.fft's functions as composites over the three transform kernels (SpectralOps.cpp):
// argument rules (n / s padding and trimming, dims, norm modes) and dtype promotion as
// torch's, so that autograd differentiates them through the kernels' formulas. Also the
// sample-frequency factories and the shifts.
#include <aten/native/NativeFunctions.h>
#include <c10/core/DefaultDtype.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <optional>
#include <string_view>
#include <vector>

namespace at::inline tessera::native {

namespace {

enum Norm : int64_t { kNone = 0, kByRootN = 1, kByN = 2 };

// norm="backward" (the default) leaves the forward transform unscaled and divides the
// inverse by n; "forward" the other way round; "ortho" scales both by 1/sqrt(n).
int64_t norm_from_string(std::optional<std::string_view> norm, bool forward) {
  if (!norm || *norm == "backward") return forward ? kNone : kByN;
  if (*norm == "forward") return forward ? kByN : kNone;
  if (*norm == "ortho") return kByRootN;
  TORCH_CHECK(false, "Invalid normalization mode: \"", *norm, "\"");
}

// Integers (and bool) transform in the default float dtype; Half and BFloat16 have no CPU
// transforms, as in torch.
Tensor promote_fft_input(const Tensor& t, bool require_complex) {
  c10::ScalarType type = t.scalar_type();
  if (c10::isIntegralType(type, true)) type = c10::get_default_dtype();
  const c10::ScalarType real = c10::isComplexType(type) ? c10::toRealValueType(type) : type;
  TORCH_CHECK(real == c10::kFloat || real == c10::kDouble, "Unsupported dtype ", real);
  if (require_complex && !c10::isComplexType(type)) type = c10::toComplexType(type);
  return t.scalar_type() == type ? t : t.to(type);
}

// Trims each dim to its size, or pads it with zeros at the end.
Tensor resize_fft_input(Tensor x, const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> pad(static_cast<size_t>(2 * x.dim()), 0);
  bool padding = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t have = x.size(dims[i]);
    if (sizes[i] < have) {
      x = x.narrow(dims[i], 0, sizes[i]);
    } else if (sizes[i] > have) {
      pad[static_cast<size_t>(2 * (x.dim() - 1 - dims[i]) + 1)] = sizes[i] - have;
      padding = true;
    }
  }
  return padding ? at::constant_pad_nd(x, pad, 0) : x;
}

void check_points(int64_t n) { TORCH_CHECK(n >= 1, "Invalid number of data points (", n, ") specified"); }

// The n-dimensional forms' dims and signal sizes, from s and dim as torch reads them.
struct ShapeAndDims {
  std::vector<int64_t> shape;
  std::vector<int64_t> dims;
};

ShapeAndDims canonicalize(const Tensor& input, std::optional<IntArrayRef> s, std::optional<IntArrayRef> dim) {
  ShapeAndDims d;
  const int64_t ndim = input.dim();
  if (dim) {
    for (int64_t v : *dim) {
      const int64_t w = wrap_dim(v, ndim);
      for (int64_t seen : d.dims) TORCH_CHECK(seen != w, "FFT dims must be unique");
      d.dims.push_back(w);
    }
  }
  if (s) {
    if (dim) {
      TORCH_CHECK(s->size() == dim->size(), "When given, dim and shape arguments must have the same length");
    } else {
      TORCH_CHECK(static_cast<int64_t>(s->size()) <= ndim, "Got shape with ", s->size(),
                  " values but input tensor only has ", ndim, " dimensions.");
      for (int64_t k = ndim - static_cast<int64_t>(s->size()); k < ndim; ++k) d.dims.push_back(k);
    }
    for (size_t i = 0; i < s->size(); ++i) d.shape.push_back((*s)[i] == -1 ? input.size(d.dims[i]) : (*s)[i]);
  } else {
    if (!dim) {
      for (int64_t k = 0; k < ndim; ++k) d.dims.push_back(k);
    }
    for (int64_t k : d.dims) d.shape.push_back(input.size(k));
  }
  for (int64_t n : d.shape) check_points(n);
  return d;
}

// The c2r forms' (irfftn, hfftn): the output length of the last dim, and the input's
// half length there.
int64_t c2r_last_size(const Tensor& input, ShapeAndDims& d, std::optional<IntArrayRef> s, const char* fname) {
  TORCH_CHECK(!d.dims.empty(), fname, " must transform at least one axis");
  const int64_t last = (s && s->back() != -1) ? s->back() : 2 * (input.size(d.dims.back()) - 1);
  check_points(last);
  d.shape.back() = last / 2 + 1;
  return last;
}

std::vector<int64_t> all_but_last(const std::vector<int64_t>& dims) {
  return std::vector<int64_t>(dims.begin(), dims.end() - 1);
}

// One-dimensional forms.
Tensor fft_c2c_1d(const Tensor& self, std::optional<int64_t> n, int64_t dim, std::optional<std::string_view> norm,
                  bool forward) {
  const Tensor input = promote_fft_input(self, true);
  const int64_t d = wrap_dim(dim, input.dim());
  const int64_t points = n.value_or(input.size(d));
  check_points(points);
  const Tensor x = n ? resize_fft_input(input, {d}, {points}) : input;
  return at::_fft_c2c(x, {d}, norm_from_string(norm, forward), forward);
}

// rfft (forward) and ihfft (the conjugate of the inverse).
Tensor fft_r2c_1d(const char* fname, const Tensor& self, std::optional<int64_t> n, int64_t dim,
                  std::optional<std::string_view> norm, bool forward) {
  TORCH_CHECK(!self.is_complex(), fname, " expects a real input tensor, but got ", self.scalar_type());
  const Tensor input = promote_fft_input(self, false);
  const int64_t d = wrap_dim(dim, input.dim());
  const int64_t points = n.value_or(input.size(d));
  check_points(points);
  const Tensor x = n ? resize_fft_input(input, {d}, {points}) : input;
  Tensor out = at::_fft_r2c(x, {d}, norm_from_string(norm, forward), true);
  return forward ? out : at::conj_physical(out);
}

// irfft (inverse) and hfft (forward, of the conjugate).
Tensor fft_c2r_1d(const Tensor& self, std::optional<int64_t> n, int64_t dim, std::optional<std::string_view> norm,
                  bool forward) {
  Tensor input = promote_fft_input(self, true);
  const int64_t d = wrap_dim(dim, input.dim());
  const int64_t points = n.value_or(2 * (input.size(d) - 1));
  check_points(points);
  if (n) input = resize_fft_input(input, {d}, {points / 2 + 1});
  if (forward) input = at::conj_physical(input);
  return at::_fft_c2r(input, {d}, norm_from_string(norm, forward), points);
}

Tensor fftn_c2c(const Tensor& self, std::optional<IntArrayRef> s, std::optional<IntArrayRef> dim,
                std::optional<std::string_view> norm, bool forward) {
  const ShapeAndDims d = canonicalize(self, s, dim);
  const Tensor x = resize_fft_input(promote_fft_input(self, true), d.dims, d.shape);
  return at::_fft_c2c(x, d.dims, norm_from_string(norm, forward), forward);
}

Tensor rfftn_impl(const char* fname, const Tensor& self, std::optional<IntArrayRef> s, std::optional<IntArrayRef> dim,
                  std::optional<std::string_view> norm) {
  TORCH_CHECK(!self.is_complex(), fname, " expects a real-valued input tensor, but got ", self.scalar_type());
  const ShapeAndDims d = canonicalize(self, s, dim);
  TORCH_CHECK(!d.dims.empty(), fname, " must transform at least one axis");
  const Tensor x = resize_fft_input(promote_fft_input(self, false), d.dims, d.shape);
  return at::_fft_r2c(x, d.dims, norm_from_string(norm, true), true);
}

Tensor irfftn_impl(const char* fname, const Tensor& self, std::optional<IntArrayRef> s,
                   std::optional<IntArrayRef> dim, std::optional<std::string_view> norm) {
  ShapeAndDims d = canonicalize(self, s, dim);
  const int64_t last = c2r_last_size(self, d, s, fname);
  const Tensor x = resize_fft_input(promote_fft_input(self, true), d.dims, d.shape);
  return at::_fft_c2r(x, d.dims, norm_from_string(norm, false), last);
}

Tensor hfftn_impl(const char* fname, const Tensor& self, std::optional<IntArrayRef> s, std::optional<IntArrayRef> dim,
                  std::optional<std::string_view> norm) {
  ShapeAndDims d = canonicalize(self, s, dim);
  const int64_t last = c2r_last_size(self, d, s, fname);
  Tensor x = resize_fft_input(promote_fft_input(self, true), d.dims, d.shape);
  const int64_t mode = norm_from_string(norm, true);
  if (d.dims.size() > 1) x = at::_fft_c2c(x, all_but_last(d.dims), mode, true);
  return at::_fft_c2r(at::conj_physical(x), {d.dims.back()}, mode, last);
}

Tensor ihfftn_impl(const char* fname, const Tensor& self, std::optional<IntArrayRef> s,
                   std::optional<IntArrayRef> dim, std::optional<std::string_view> norm) {
  TORCH_CHECK(!self.is_complex(), fname, " expects a real-valued input tensor, but got ", self.scalar_type());
  const ShapeAndDims d = canonicalize(self, s, dim);
  TORCH_CHECK(!d.dims.empty(), fname, " must transform at least one axis");
  const Tensor x = resize_fft_input(promote_fft_input(self, false), d.dims, d.shape);
  const int64_t mode = norm_from_string(norm, false);
  Tensor half = at::conj_physical(at::_fft_r2c(x, {d.dims.back()}, mode, true));
  return d.dims.size() == 1 ? half : at::_fft_c2c(half, all_but_last(d.dims), mode, false);
}

c10::ScalarType freq_dtype(const char* fname, std::optional<at::ScalarType> dtype) {
  const c10::ScalarType t = dtype.value_or(c10::get_default_dtype());
  TORCH_CHECK(c10::isFloatingType(t) || c10::isComplexType(t), fname,
              " requires a floating point or complex dtype");
  return t;
}

std::vector<int64_t> shifts_of(const Tensor& self, std::optional<IntArrayRef> dim, bool inverse,
                               std::vector<int64_t>& dims) {
  if (dim) {
    for (int64_t d : *dim) dims.push_back(wrap_dim(d, self.dim()));
  } else {
    for (int64_t d = 0; d < self.dim(); ++d) dims.push_back(d);
  }
  std::vector<int64_t> shifts;
  for (int64_t d : dims) shifts.push_back(inverse ? (self.size(d) + 1) / 2 : self.size(d) / 2);
  return shifts;
}

}  // namespace

Tensor fft_fft(const Tensor& self, std::optional<int64_t> n, int64_t dim, std::optional<std::string_view> norm) {
  return fft_c2c_1d(self, n, dim, norm, true);
}
Tensor fft_ifft(const Tensor& self, std::optional<int64_t> n, int64_t dim, std::optional<std::string_view> norm) {
  return fft_c2c_1d(self, n, dim, norm, false);
}
Tensor fft_rfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, std::optional<std::string_view> norm) {
  return fft_r2c_1d("rfft", self, n, dim, norm, true);
}
Tensor fft_ihfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, std::optional<std::string_view> norm) {
  return fft_r2c_1d("ihfft", self, n, dim, norm, false);
}
Tensor fft_irfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, std::optional<std::string_view> norm) {
  return fft_c2r_1d(self, n, dim, norm, false);
}
Tensor fft_hfft(const Tensor& self, std::optional<int64_t> n, int64_t dim, std::optional<std::string_view> norm) {
  return fft_c2r_1d(self, n, dim, norm, true);
}

Tensor fft_fftn(const Tensor& self, std::optional<IntArrayRef> s, std::optional<IntArrayRef> dim,
                std::optional<std::string_view> norm) {
  return fftn_c2c(self, s, dim, norm, true);
}
Tensor fft_ifftn(const Tensor& self, std::optional<IntArrayRef> s, std::optional<IntArrayRef> dim,
                 std::optional<std::string_view> norm) {
  return fftn_c2c(self, s, dim, norm, false);
}
Tensor fft_rfftn(const Tensor& self, std::optional<IntArrayRef> s, std::optional<IntArrayRef> dim,
                 std::optional<std::string_view> norm) {
  return rfftn_impl("rfftn", self, s, dim, norm);
}
Tensor fft_irfftn(const Tensor& self, std::optional<IntArrayRef> s, std::optional<IntArrayRef> dim,
                  std::optional<std::string_view> norm) {
  return irfftn_impl("irfftn", self, s, dim, norm);
}
Tensor fft_hfftn(const Tensor& self, std::optional<IntArrayRef> s, std::optional<IntArrayRef> dim,
                 std::optional<std::string_view> norm) {
  return hfftn_impl("hfftn", self, s, dim, norm);
}
Tensor fft_ihfftn(const Tensor& self, std::optional<IntArrayRef> s, std::optional<IntArrayRef> dim,
                  std::optional<std::string_view> norm) {
  return ihfftn_impl("ihfftn", self, s, dim, norm);
}

Tensor fft_fft2(const Tensor& self, std::optional<IntArrayRef> s, IntArrayRef dim,
                std::optional<std::string_view> norm) {
  return fftn_c2c(self, s, dim, norm, true);
}
Tensor fft_ifft2(const Tensor& self, std::optional<IntArrayRef> s, IntArrayRef dim,
                 std::optional<std::string_view> norm) {
  return fftn_c2c(self, s, dim, norm, false);
}
Tensor fft_rfft2(const Tensor& self, std::optional<IntArrayRef> s, IntArrayRef dim,
                 std::optional<std::string_view> norm) {
  return rfftn_impl("rfftn", self, s, dim, norm);
}
Tensor fft_irfft2(const Tensor& self, std::optional<IntArrayRef> s, IntArrayRef dim,
                  std::optional<std::string_view> norm) {
  return irfftn_impl("irfftn", self, s, dim, norm);
}
Tensor fft_hfft2(const Tensor& self, std::optional<IntArrayRef> s, IntArrayRef dim,
                 std::optional<std::string_view> norm) {
  return hfftn_impl("hfftn", self, s, dim, norm);
}
Tensor fft_ihfft2(const Tensor& self, std::optional<IntArrayRef> s, IntArrayRef dim,
                  std::optional<std::string_view> norm) {
  return ihfftn_impl("ihfftn", self, s, dim, norm);
}

// [0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d n).
Tensor fft_fftfreq(int64_t n, double d, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                   std::optional<at::Device> device, std::optional<bool> pin_memory) {
  Tensor result = at::arange(n, freq_dtype("fftfreq", dtype), layout, device, pin_memory);
  result.narrow(0, (n + 1) / 2, n / 2).sub_(n);
  return result.mul_(1.0 / (static_cast<double>(n) * d));
}

Tensor fft_rfftfreq(int64_t n, double d, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                    std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return at::arange(n / 2 + 1, freq_dtype("rfftfreq", dtype), layout, device, pin_memory)
      .mul_(1.0 / (static_cast<double>(n) * d));
}

Tensor fft_fftshift(const Tensor& self, std::optional<IntArrayRef> dim) {
  std::vector<int64_t> dims;
  const std::vector<int64_t> shifts = shifts_of(self, dim, false, dims);
  return at::roll(self, shifts, dims);
}

Tensor fft_ifftshift(const Tensor& self, std::optional<IntArrayRef> dim) {
  std::vector<int64_t> dims;
  const std::vector<int64_t> shifts = shifts_of(self, dim, true, dims);
  return at::roll(self, shifts, dims);
}

}  // namespace at::inline tessera::native
