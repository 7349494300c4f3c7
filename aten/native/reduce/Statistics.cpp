// Statistics of samples: cov and corrcoef of the rows of a matrix, quantile / nanquantile
// (on sorted values, with torch's five interpolations), mode (the most frequent value along
// a dim) and the trapezoid rule (trapezoid / trapz / cumulative_trapezoid). All but mode's
// kernel are written over sort, gather, lerp, matmul and sums, so autograd and Meta come
// from those; checks and messages are torch's.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <numeric>
#include <string_view>
#include <utility>
#include <vector>

namespace at::inline tessera::native {

// ---------------------------------------------------------------- covariance

// Rows are variables, columns observations; fweights (integer repeat counts) and aweights
// (importance) weight the observations; correction 1 is the unbiased estimate.
Tensor cov(const Tensor& self, int64_t correction, const std::optional<Tensor>& fweights,
           const std::optional<Tensor>& aweights) {
  TORCH_CHECK(self.dim() <= 2, "cov(): expected input to have two or fewer dimensions but got an input with ",
              self.dim(), " dimensions");
  TORCH_CHECK(self.scalar_type() != c10::kBool, "cov(): bool dtype is not supported for input");
  // (the complex form needs conj, which arrives with complex autograd's issue)
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_complex(), "cov(): complex input is not implemented in tessera yet");
  Tensor x = self.dim() < 2 ? self.reshape({1, -1}) : self;
  const int64_t observations = x.size(1);
  Tensor w;
  if (fweights && fweights->defined()) {
    const Tensor& f = *fweights;
    TORCH_CHECK(f.dim() <= 1, "cov(): expected fweights to have one or fewer dimensions but got fweights with ",
                f.dim(), " dimensions");
    TORCH_CHECK(c10::isIntegralType(f.scalar_type(), false), "cov(): expected fweights to have integral dtype but "
                "got fweights with ", f.scalar_type(), " dtype");
    TORCH_CHECK(f.numel() == observations, "cov(): expected fweights to have the same numel as there are "
                "observations in the input but got ", f.numel(), " != ", observations);
    TORCH_CHECK(observations == 0 || f.is_meta() || f.min().ge(0).item().toBool(), "cov(): fweights cannot be negative");
    w = f;
  }
  if (aweights && aweights->defined()) {
    const Tensor& a = *aweights;
    TORCH_CHECK(a.dim() <= 1, "cov(): expected aweights to have one or fewer dimensions but got aweights with ",
                a.dim(), " dimensions");
    TORCH_CHECK(c10::isFloatingType(a.scalar_type()), "cov(): expected aweights to have floating point dtype but "
                "got aweights with ", a.scalar_type(), " dtype");
    TORCH_CHECK(a.numel() == observations, "cov(): expected aweights to have the same numel as there are "
                "observations in the input but got ", a.numel(), " != ", observations);
    TORCH_CHECK(observations == 0 || a.is_meta() || a.min().ge(0).item().toBool(), "cov(): aweights cannot be negative");
    w = w.defined() ? w * a : a;
  }
  // Integer input is averaged in the default floating dtype.
  if (!c10::isFloatingType(x.scalar_type()) && !c10::isComplexType(x.scalar_type())) x = x.to(c10::kFloat);
  const Tensor total = w.defined() ? w.sum() : at::scalar_tensor(static_cast<double>(observations),
                                                                   TensorOptions().dtype(c10::kLong));
  const int64_t observation_dim[] = {1};  // (a named array: an IntArrayRef must not outlive its ints)
  const Tensor mean = w.defined() ? (x * w).sum(observation_dim, true) / total : x.mean(observation_dim, true);
  Tensor norm_factor;
  if (w.defined() && correction != 0 && aweights && aweights->defined()) {
    norm_factor = total - correction * (w * *aweights).sum() / total;
  } else {
    norm_factor = total - correction;
  }
  norm_factor = at::clamp_min(norm_factor, 0);
  const Tensor centred = x - mean;
  const Tensor weighted = w.defined() ? centred * w : centred;
  const Tensor c = at::mm(weighted, centred.t()) / norm_factor;
  return self.dim() < 2 ? c.squeeze() : c;
}

// cov scaled to unit diagonal, clipped to [-1, 1] (real and imaginary parts for complex).
Tensor corrcoef(const Tensor& self) {
  TORCH_CHECK(self.dim() <= 2, "corrcoef(): expected input to have two or fewer dimensions but got an input with ",
              self.dim(), " dimensions");
  const Tensor c = at::cov(self, 1, std::nullopt, std::nullopt);
  if (c.dim() == 0) return c / c;  // a single variable: 1 (or nan)
  const Tensor d = c.diagonal().sqrt();
  return at::clamp(c / d.unsqueeze(1) / d.unsqueeze(0), -1, 1);
}

// ---------------------------------------------------------------- quantiles

namespace {

enum class Interpolation { Linear, Lower, Higher, Midpoint, Nearest };

Interpolation parse_interpolation(std::string_view s, const char* op) {
  if (s == "linear") return Interpolation::Linear;
  if (s == "lower") return Interpolation::Lower;
  if (s == "higher") return Interpolation::Higher;
  if (s == "midpoint") return Interpolation::Midpoint;
  if (s == "nearest") return Interpolation::Nearest;
  TORCH_CHECK(false, op, "() interpolation must be one of linear, lower, higher, midpoint or nearest, but got ", s);
}

// q (0-d or 1-d, self's dtype) of self along dim (or all of it), sorted values picked at
// ranks q * (count - 1) where count is the row's length, or its non-NaN count with
// ignore_nan (quantile makes a row with a NaN all NaN).
Tensor quantile_impl(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                     std::string_view interpolation, bool ignore_nan, const char* op) {
  TORCH_CHECK(self.numel() > 0, op, "() input tensor must be non-empty");
  TORCH_CHECK(q.dim() <= 1, op, "() q must be a scalar or 1D tensor");
  TORCH_CHECK(self.scalar_type() == c10::kFloat || self.scalar_type() == c10::kDouble, op,
              "() input tensor must be either float or double dtype");
  TORCH_CHECK(self.scalar_type() == q.scalar_type(), op, "() q tensor must be same dtype as the input tensor");
  const Interpolation how = parse_interpolation(interpolation, op);
  if (!q.is_meta()) {
    TORCH_CHECK(q.numel() == 0 || at::logical_and(q.ge(0), q.le(1)).all().item().toBool(), op,
                "() q values must be in the range [0, 1]");
  }
  std::vector<int64_t> out_sizes;
  if (q.dim() == 1) out_sizes.push_back(q.size(0));
  Tensor rows;  // (..., n)
  if (dim) {
    const int64_t d = wrap_dim(*dim, self.dim());
    for (int64_t i = 0; i < self.dim(); ++i) {
      if (i != d) out_sizes.push_back(self.size(i));
      else if (keepdim) out_sizes.push_back(1);
    }
    rows = self.dim() == 0 ? self.reshape({1}) : self.movedim(d, -1);
  } else {
    if (keepdim) out_sizes.insert(out_sizes.end(), self.dim(), 1);
    rows = self.reshape({-1});
  }
  const Tensor sorted = std::get<0>(rows.sort(-1));  // NaNs last
  const int64_t n = sorted.size(-1);
  const Tensor qv = q.reshape({-1});
  Tensor count;
  if (ignore_nan) {
    const int64_t last[] = {-1};
    count = sorted.isnan().logical_not().sum(last, true).to(self.scalar_type());
  } else {
    count = at::full({1}, static_cast<double>(n), TensorOptions().dtype(self.scalar_type()).device(self.device()));
  }
  Tensor ranks = at::clamp_min((count - 1) * qv, 0);  // (..., Q)
  if (!ignore_nan) {
    // a row holding a NaN answers NaN: aim every rank at its last (NaN) element
    ranks = at::where(sorted.narrow(-1, n - 1, 1).isnan(), at::full_like(ranks, static_cast<double>(n - 1)), ranks);
  }
  Tensor values;
  if (how == Interpolation::Linear || how == Interpolation::Midpoint) {
    const Tensor below = ranks.floor();
    const Tensor lo = sorted.gather(-1, below.to(c10::kLong)), hi = sorted.gather(-1, ranks.ceil().to(c10::kLong));
    const Tensor weight = how == Interpolation::Midpoint ? at::full_like(ranks, 0.5) : ranks - below;
    values = at::lerp(lo, hi, weight);
  } else {
    const Tensor picked = how == Interpolation::Lower ? ranks.floor() : how == Interpolation::Higher ? ranks.ceil()
                                                                                                    : ranks.round();
    values = sorted.gather(-1, picked.to(c10::kLong));
  }
  // (..., Q) -> (Q, ...) in the output's layout
  values = values.movedim(-1, 0);
  return values.reshape(out_sizes);
}

Tensor scalar_q(const Tensor& self, double q, const char* op) {
  TORCH_CHECK(q >= 0 && q <= 1, op, "() q must be in the range [0, 1] but got ", q);
  return at::scalar_tensor(q, TensorOptions().dtype(self.scalar_type()).device(self.device()));
}

}  // namespace

Tensor quantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  return quantile_impl(self, q, dim, keepdim, interpolation, false, "quantile");
}
Tensor quantile_scalar(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                       std::string_view interpolation) {
  return quantile_impl(self, scalar_q(self, q, "quantile"), dim, keepdim, interpolation, false, "quantile");
}
Tensor nanquantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  return quantile_impl(self, q, dim, keepdim, interpolation, true, "nanquantile");
}
Tensor nanquantile_scalar(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                          std::string_view interpolation) {
  return quantile_impl(self, scalar_q(self, q, "nanquantile"), dim, keepdim, interpolation, true, "nanquantile");
}

// ---------------------------------------------------------------- mode

// The most frequent value of each row along dim (the smallest among equally frequent ones)
// and the index of its last occurrence, as torch's CPU kernel answers.
std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim, bool keepdim) {
  const int64_t d = wrap_dim(dim, self.dim());
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "mode(): complex inputs are not supported");
  TORCH_CHECK_INDEX(self.dim() == 0 || self.size(d) > 0, "mode(): Expected reduction dim ", d,
                    " to have non-zero size.");
  std::vector<int64_t> sizes = self.sizes().vec();
  if (self.dim() > 0) {
    if (keepdim) sizes[d] = 1;
    else sizes.erase(sizes.begin() + d);
  }
  Tensor values = make_empty(sizes, self.scalar_type(), self.device());
  Tensor indices = make_empty(sizes, c10::kLong, self.device());
  if (self.is_meta() || values.numel() == 0) return {values, indices};
  const Tensor rows = (self.dim() == 0 ? self.reshape({1, 1}) : self.movedim(d, -1)).contiguous();
  const int64_t n = rows.size(-1), count = rows.numel() / n;
  const Tensor out_values = values.reshape({-1}), out_indices = indices.reshape({-1});
  dispatch_types<kAllTypes & ~kComplex & ~kComplexHalf>(self.scalar_type(), "mode", [&]<typename T>() {
    const T* in = rows.data_ptr<T>();
    T* vo = out_values.data_ptr<T>();
    int64_t* io = out_indices.data_ptr<int64_t>();
    at::parallel_for(0, count, 1, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        const T* row = in + r * n;
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [row](int64_t a, int64_t b) { return row[a] < row[b]; });
        int64_t best_start = 0, best_len = 0;
        for (int64_t s = 0; s < n;) {
          int64_t e = s + 1;
          while (e < n && !(row[order[s]] < row[order[e]]) && !(row[order[e]] < row[order[s]])) ++e;
          if (e - s > best_len) best_start = s, best_len = e - s;
          s = e;
        }
        // (a stable sort keeps equal values in index order: the run's last is the last occurrence)
        vo[r] = row[order[best_start]];
        io[r] = order[best_start + best_len - 1];
      }
    });
  });
  return {values, indices};
}

std::tuple<Tensor&, Tensor&> mode_values(const Tensor& self, int64_t dim, bool keepdim, Tensor& values,
                                         Tensor& indices) {
  auto [v, i] = at::mode(self, dim, keepdim);
  resize_out_sizes(values, v.sizes(), "mode");
  resize_out_sizes(indices, i.sizes(), "mode");
  values.copy_(v);
  indices.copy_(i);
  return {values, indices};
}

// ---------------------------------------------------------------- the trapezoid rule

namespace {

// Sample spacings along dim: x's differences (x 1-D, or broadcast against y).
Tensor spacings(const Tensor& y, const Tensor& x, int64_t d) {
  if (x.dim() == 1) {
    TORCH_CHECK(x.size(0) == y.size(d), "trapezoid: There must be one `x` value for each sample point");
    std::vector<int64_t> shape(y.dim(), 1);
    shape[d] = y.size(d) - 1;
    return (at::slice(x, 0, 1) - at::slice(x, 0, 0, -1)).view(shape);
  }
  const int64_t xd = x.dim() - y.dim() + d;
  TORCH_CHECK(xd >= 0, "trapezoid: x must be 1-D or broadcastable to y");
  return at::slice(x, xd, 1) - at::slice(x, xd, 0, -1);
}

Tensor as_floating(const Tensor& y) {
  return c10::isFloatingType(y.scalar_type()) || c10::isComplexType(y.scalar_type()) ? y : y.to(c10::kFloat);
}

// The area of each interval along dim: (y[i] + y[i+1]) / 2 * dx[i].
Tensor interval_areas(const Tensor& y, int64_t d, const Tensor& dx) {
  return (at::slice(y, d, 1) + at::slice(y, d, 0, -1)) * dx / 2;
}

}  // namespace

Tensor trapezoid_x(const Tensor& y, const Tensor& x, int64_t dim) {
  const int64_t d = wrap_dim(dim, y.dim());
  if (y.size(d) == 0) return at::zeros_like(as_floating(y)).sum({d});
  return interval_areas(as_floating(y), d, spacings(y, x, d)).sum({d});
}

Tensor trapezoid_dx(const Tensor& y, const Scalar& dx, int64_t dim) {
  const int64_t d = wrap_dim(dim, y.dim());
  const Tensor yf = as_floating(y);
  if (y.size(d) == 0) return at::zeros_like(yf).sum({d});
  return ((yf.sum({d}) - (yf.select(d, 0) + yf.select(d, -1)) * 0.5) * dx);
}

Tensor trapz_x(const Tensor& y, const Tensor& x, int64_t dim) { return at::trapezoid(y, x, dim); }
Tensor trapz_dx(const Tensor& y, double dx, int64_t dim) { return at::trapezoid(y, dx, dim); }

Tensor cumulative_trapezoid_x(const Tensor& y, const Tensor& x, int64_t dim) {
  const int64_t d = wrap_dim(dim, y.dim());
  return interval_areas(as_floating(y), d, spacings(y, x, d)).cumsum(d);
}

Tensor cumulative_trapezoid_dx(const Tensor& y, const Scalar& dx, int64_t dim) {
  const int64_t d = wrap_dim(dim, y.dim());
  const Tensor yf = as_floating(y);
  return ((at::slice(yf, d, 1) + at::slice(yf, d, 0, -1)) * dx / 2).cumsum(d);
}

}  // namespace at::inline tessera::native
