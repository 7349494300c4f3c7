// arange, linspace, logspace: torch's dtype inference, size computation, checks and
// element formulas (so results match torch element for element), with CPU kernels and Meta
// kernels that run the same checks and resize the out tensor.
#include <aten/core/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/ops/Functions.h>
#include <c10/core/DefaultDtype.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace at::inline tessera::native {

namespace {

constexpr unsigned kRangeTypes = kIntegral | kFloating | kReducedFloat;

// The type torch computes arange's bounds and elements in: int64 for integers, double for
// float and double, float for the reduced floats.
template <typename T>
using range_acc_t = std::conditional_t<std::is_integral_v<T>, int64_t,
                                       std::conditional_t<std::is_floating_point_v<T>, double, float>>;

// Checks the range and returns arange's element count for an output of type T.
template <typename T>
int64_t arange_size(const Scalar& start, const Scalar& end, const Scalar& step) {
  using acc = range_acc_t<T>;
  acc xstart = start.to<acc>(), xend = end.to<acc>(), xstep = step.to<acc>();
  double size_d;
  if constexpr (std::is_same_v<T, int64_t>) {
    size_d = std::ceil(static_cast<double>(xend - xstart) / static_cast<double>(xstep));
  } else {
    size_d = std::ceil((end.to<double>() - start.to<double>()) / step.to<double>());
  }
  TORCH_CHECK(xstep > 0 || xstep < 0, "step must be nonzero");
  TORCH_CHECK(std::isfinite(static_cast<double>(xstart)) && std::isfinite(static_cast<double>(xend)),
              "unsupported range: ", xstart, " -> ", xend);
  TORCH_CHECK((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart),
              "upper bound and larger bound inconsistent with step sign");
  TORCH_CHECK(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max()),
              "invalid size, possible overflow?");
  return static_cast<int64_t>(size_d);
}

[[noreturn]] void not_implemented(const char* op, c10::ScalarType t) {
  TORCH_CHECK(false, "\"", op, "\" not implemented for '", t, "'");
}

Tensor& arange_out_impl(const Scalar& start, const Scalar& end, const Scalar& step, Tensor& out, bool fill) {
  c10::ScalarType t = out.scalar_type();
  if (!(c10::isIntegralType(t, false) || c10::isFloatingType(t))) not_implemented("arange_cpu", t);
  dispatch_types<kRangeTypes>(t, "arange_cpu", [&]<typename T>() {
    int64_t n = arange_size<T>(start, end, step);
    resize_factory_out(out, {n});
    if (!fill || n == 0) return;
    using acc = range_acc_t<T>;
    acc xstart = start.to<acc>(), xstep = step.to<acc>();
    Tensor dst = out.is_contiguous() ? out : at::empty({n}, t);
    T* data = dst.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<T>(xstart + xstep * static_cast<acc>(i));
    if (!dst.is_same(out)) out.copy_(dst);
  });
  return out;
}

// The type linspace's elements are built in: integer outputs step in double (the range
// can exceed the type); floating outputs in their own (opmath) type.
template <typename T>
void linspace_fill(T* data, const Scalar& start, const Scalar& end, int64_t steps) {
  using math = std::conditional_t<std::is_integral_v<T>, double, opmath_t<T>>;
  using value = std::conditional_t<std::is_integral_v<T>, T, opmath_t<T>>;
  const value a = static_cast<value>(start.to<T>()), b = static_cast<value>(end.to<T>());
  const math step = (static_cast<math>(b) - static_cast<math>(a)) / static_cast<math>(steps - 1);
  const int64_t halfway = steps / 2;
  for (int64_t i = 0; i < steps; ++i) {
    // Both ends are exact: the first half counts up from start, the second down from end.
    if (i < halfway) {
      data[i] = cast<T>(static_cast<math>(a) + step * static_cast<math>(i));
    } else {
      data[i] = cast<T>(static_cast<math>(b) - step * static_cast<math>(steps - i - 1));
    }
  }
}

// torch converts each power to an integer type with a bare static_cast, which x86's
// cvttsd2si does: a value out of range (or NaN) becomes the "integer indefinite" INT64_MIN,
// or INT32_MIN for the narrower types, which convert through int32 and then wrap.
template <typename T>
T truncate_like_x86(double v) {
  if constexpr (sizeof(T) == 8) {
    return v >= -0x1p63 && v < 0x1p63 ? static_cast<T>(v) : std::numeric_limits<T>::min();
  } else {
    const int32_t i = v >= -0x1p31 && v < 0x1p31 ? static_cast<int32_t>(v) : std::numeric_limits<int32_t>::min();
    return static_cast<T>(i);
  }
}

template <typename T>
void logspace_fill(T* data, const Scalar& start, const Scalar& end, int64_t steps, double base) {
  const int64_t halfway = steps / 2;
  if constexpr (std::is_integral_v<T>) {
    const T a = start.to<T>(), b = end.to<T>();
    const double step = static_cast<double>(b - a) / static_cast<double>(steps - 1);
    const double fbase = static_cast<float>(base);
    for (int64_t i = 0; i < steps; ++i) {
      double e = i < halfway ? a + step * static_cast<double>(i) : b - step * static_cast<double>(steps - i - 1);
      data[i] = truncate_like_x86<T>(std::pow(fbase, e));
    }
  } else if constexpr (c10::detail::is_complex_v<T>) {
    using C = c10::complex<double>;
    const C a(start.to<T>()), b(end.to<T>());
    const C step = (b - a) / static_cast<double>(steps - 1);
    for (int64_t i = 0; i < steps; ++i) {
      C e = i < halfway ? a + step * static_cast<double>(i) : b - step * static_cast<double>(steps - i - 1);
      std::complex<double> r = std::pow(std::complex<double>(base, 0), std::complex<double>(e.real(), e.imag()));
      data[i] = T(static_cast<typename T::value_type>(r.real()), static_cast<typename T::value_type>(r.imag()));
    }
  } else {
    // Bounds in the output type; their difference in it too (torch's rounding), the rest
    // in double.
    using M = opmath_t<T>;
    const T ta = start.to<T>(), tb = end.to<T>();
    const double a = static_cast<double>(static_cast<M>(ta)), b = static_cast<double>(static_cast<M>(tb));
    const double step = static_cast<double>(static_cast<M>(cast<T>(static_cast<M>(tb) - static_cast<M>(ta)))) /
                        static_cast<double>(steps - 1);
    for (int64_t i = 0; i < steps; ++i) {
      double e = i < halfway ? a + step * static_cast<double>(i) : b - step * static_cast<double>(steps - i - 1);
      data[i] = cast<T>(std::pow(base, e));
    }
  }
}

// Inferred dtype of linspace / logspace: complex bounds make a complex result.
std::optional<c10::ScalarType> space_dtype(const char* op, const Scalar& start, const Scalar& end,
                                           std::optional<at::ScalarType> dtype) {
  if (!start.isComplex() && !end.isComplex()) return dtype;
  if (dtype) {
    TORCH_CHECK(c10::isComplexType(*dtype), "torch.", op, "(): inferred dtype c10::complex<float> can't be safely cast to passed dtype ",
                *dtype);
    return dtype;
  }
  return c10::kComplexFloat;
}

template <typename Fill>
Tensor& space_out(const char* kernel, const Scalar& start, const Scalar& end, int64_t steps, Tensor& out, bool run,
                  Fill&& fill) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  c10::ScalarType t = out.scalar_type();
  if (!(c10::isIntegralType(t, false) || c10::isFloatingType(t) || c10::isComplexType(t))) not_implemented(kernel, t);
  resize_factory_out(out, {steps});
  if (!run || steps == 0) return out;
  Tensor dst = out.is_contiguous() ? out : at::empty({steps}, t);
  dispatch_types<kRangeTypes | kComplex>(t, kernel, [&]<typename T>() { fill(dst.data_ptr<T>()); });
  if (!dst.is_same(out)) out.copy_(dst);
  return out;
}

}  // namespace

// ---- arange

Tensor arange(const Scalar& end, std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
              std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return arange_start_step(0, end, 1, dtype, layout, device, pin_memory);
}

Tensor arange_start(const Scalar& start, const Scalar& end, std::optional<at::ScalarType> dtype,
                    std::optional<at::Layout> layout, std::optional<at::Device> device,
                    std::optional<bool> pin_memory) {
  return arange_start_step(start, end, 1, dtype, layout, device, pin_memory);
}

Tensor arange_start_step(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout> layout, std::optional<at::Device> device,
                         std::optional<bool> pin_memory) {
  // torch's inference: all-integral (bools count) arguments give int64, else the default float.
  bool integral = !dtype && start.isIntegral(true) && end.isIntegral(true) && step.isIntegral(true);
  Tensor out = at::empty({0}, integral ? std::optional<at::ScalarType>(c10::kLong) : dtype, layout, device, pin_memory,
                         std::nullopt);
  return at::arange_out(out, start, end, step);
}

Tensor& arange_out(const Scalar& end, Tensor& out) { return at::arange_out(out, 0, end, 1); }

Tensor& arange_out_cpu(const Scalar& start, const Scalar& end, const Scalar& step, Tensor& out) {
  return arange_out_impl(start, end, step, out, true);
}

Tensor& arange_out_meta(const Scalar& start, const Scalar& end, const Scalar& step, Tensor& out) {
  return arange_out_impl(start, end, step, out, false);
}

// ---- linspace / logspace

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, std::optional<at::ScalarType> dtype,
                std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin_memory) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  Tensor out = at::empty({steps}, space_dtype("linspace", start, end, dtype), layout, device, pin_memory, std::nullopt);
  return at::linspace_out(out, start, end, steps);
}

static Tensor& linspace_out_impl(const Scalar& start, const Scalar& end, int64_t steps, Tensor& out, bool run) {
  return space_out("linspace_cpu", start, end, steps, out, run, [&]<typename T>(T* data) {
    if (steps == 1) {
      data[0] = start.to<T>();
    } else {
      linspace_fill<T>(data, start, end, steps);
    }
  });
}

Tensor& linspace_out_cpu(const Scalar& start, const Scalar& end, int64_t steps, Tensor& out) {
  return linspace_out_impl(start, end, steps, out, true);
}

Tensor& linspace_out_meta(const Scalar& start, const Scalar& end, int64_t steps, Tensor& out) {
  return linspace_out_impl(start, end, steps, out, false);
}

Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base, std::optional<at::ScalarType> dtype,
                std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin_memory) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  Tensor out = at::empty({steps}, space_dtype("logspace", start, end, dtype), layout, device, pin_memory, std::nullopt);
  return at::logspace_out(out, start, end, steps, base);
}

static Tensor& logspace_out_impl(const Scalar& start, const Scalar& end, int64_t steps, double base, Tensor& out,
                                 bool run) {
  return space_out("logspace_cpu", start, end, steps, out, run, [&]<typename T>(T* data) {
    // One step is torch's fill_ with base^start, a checked Scalar conversion: a power out
    // of the dtype's range raises "value cannot be converted to type ... without overflow".
    if (steps == 1) {
      if constexpr (c10::detail::is_complex_v<T>) {
        auto s = start.to<c10::complex<double>>();
        std::complex<double> r = std::pow(std::complex<double>(base, 0), std::complex<double>(s.real(), s.imag()));
        data[0] = Scalar(c10::complex<double>(r.real(), r.imag())).to<T>();
      } else {
        data[0] = Scalar(std::pow(base, start.to<double>())).to<T>();
      }
    } else {
      logspace_fill<T>(data, start, end, steps, base);
    }
  });
}

Tensor& logspace_out_cpu(const Scalar& start, const Scalar& end, int64_t steps, double base, Tensor& out) {
  return logspace_out_impl(start, end, steps, base, out, true);
}

Tensor& logspace_out_meta(const Scalar& start, const Scalar& end, int64_t steps, double base, Tensor& out) {
  return logspace_out_impl(start, end, steps, base, out, false);
}

// ---- triu_indices / tril_indices: the (row, col) coordinates of a triangle of a row x col
// matrix, row by row, as a 2 x count tensor. The upper triangle holds col >= row + offset,
// the lower col <= row + offset.

namespace {

int64_t triangle_row_begin(int64_t r, int64_t col, int64_t offset, bool upper) {
  return upper ? std::clamp<int64_t>(r + offset, 0, col) : 0;
}
int64_t triangle_row_end(int64_t r, int64_t col, int64_t offset, bool upper) {
  return upper ? col : std::clamp<int64_t>(r + offset + 1, 0, col);
}

Tensor& triangle_indices_out(int64_t row, int64_t col, int64_t offset, Tensor& out, bool upper, bool run) {
  TORCH_CHECK(row >= 0, "row must be non-negative, got", row);
  TORCH_CHECK(col >= 0, "col must be non-negative, got", col);
  const char* kernel = upper ? "triu_indices" : "tril_indices";
  const c10::ScalarType t = out.scalar_type();
  if (!c10::isIntegralType(t, false)) not_implemented(kernel, t);
  int64_t count = 0;
  for (int64_t r = 0; r < row; ++r) {
    count += triangle_row_end(r, col, offset, upper) - triangle_row_begin(r, col, offset, upper);
  }
  resize_factory_out(out, {2, count});
  if (!run || count == 0) return out;
  Tensor dst = out.is_contiguous() ? out : at::empty({2, count}, t);
  dispatch_types<kIntegral>(t, kernel, [&]<typename T>() {
    T* rows = dst.data_ptr<T>();
    T* cols = rows + count;
    int64_t k = 0;
    for (int64_t r = 0; r < row; ++r) {
      for (int64_t c = triangle_row_begin(r, col, offset, upper); c < triangle_row_end(r, col, offset, upper); ++c) {
        rows[k] = static_cast<T>(r), cols[k] = static_cast<T>(c), ++k;
      }
    }
  });
  if (!dst.is_same(out)) out.copy_(dst);
  return out;
}

}  // namespace

Tensor triu_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                    std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin_memory) {
  Tensor out = at::empty({0}, dtype.value_or(c10::kLong), layout, device, pin_memory, std::nullopt);
  return at::triu_indices_out(out, row, col, offset);
}
Tensor tril_indices(int64_t row, int64_t col, int64_t offset, std::optional<at::ScalarType> dtype,
                    std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin_memory) {
  Tensor out = at::empty({0}, dtype.value_or(c10::kLong), layout, device, pin_memory, std::nullopt);
  return at::tril_indices_out(out, row, col, offset);
}
Tensor& triu_indices_out_cpu(int64_t row, int64_t col, int64_t offset, Tensor& out) {
  return triangle_indices_out(row, col, offset, out, true, true);
}
Tensor& triu_indices_out_meta(int64_t row, int64_t col, int64_t offset, Tensor& out) {
  return triangle_indices_out(row, col, offset, out, true, false);
}
Tensor& tril_indices_out_cpu(int64_t row, int64_t col, int64_t offset, Tensor& out) {
  return triangle_indices_out(row, col, offset, out, false, true);
}
Tensor& tril_indices_out_meta(int64_t row, int64_t col, int64_t offset, Tensor& out) {
  return triangle_indices_out(row, col, offset, out, false, false);
}

// torch.range: like arange but the end is included; torch warns that it is deprecated (the
// Python wrapper does), and it defaults to the default floating dtype.
Tensor range_step(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<at::ScalarType> dtype,
                  std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin_memory) {
  const double a = start.to<double>(), b = end.to<double>(), s = step.to<double>();
  TORCH_CHECK(s != 0, "step must be nonzero");
  TORCH_CHECK(std::isfinite(a) && std::isfinite(b), "unsupported range: ", a, " -> ", b);
  TORCH_CHECK((s > 0 && b >= a) || (s < 0 && b <= a), "upper bound and larger bound inconsistent with step sign");
  const int64_t count = static_cast<int64_t>(std::floor((b - a) / s)) + 1;
  Tensor out = at::empty({count}, dtype.value_or(c10::get_default_dtype()), layout, device, pin_memory,
                         std::nullopt);
  if (out.is_meta() || count == 0) return out;
  return out.copy_(at::add(at::mul(at::arange(count, c10::kDouble, std::nullopt, std::nullopt, std::nullopt), s), a));
}
Tensor range(const Scalar& start, const Scalar& end, std::optional<at::ScalarType> dtype,
             std::optional<at::Layout> layout, std::optional<at::Device> device, std::optional<bool> pin_memory) {
  return range_step(start, end, 1, dtype, layout, device, pin_memory);
}

}  // namespace at::inline tessera::native
