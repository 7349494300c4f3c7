// Counting into bins: bincount (non-negative integers, optionally weighted), histc
// (equal-width bins over [min, max]) and histogram / histogramdd (D-dimensional points into
// bins given by counts and ranges or by edge tensors, optionally weighted and normalised to
// a density). bincount's length depends on the largest value, so
// its Meta kernel raises NotImplementedError; histc's length is `bins` and its Meta kernel
// gives the shape. histc bins a value by the same arithmetic as torch's, in the input's
// dtype, so values on an edge land where torch puts them.
#include <aten/core/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

namespace at::inline tessera::native {

namespace {

Tensor bincount_impl(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength, bool meta) {
  const bool weighted = weights && weights->defined();
  if (!c10::isIntegralType(self.scalar_type(), false)) dtype_not_implemented("bincount_cpu", self.scalar_type());
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  TORCH_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  if (weighted) {
    TORCH_CHECK(weights->dim() == 1 && weights->size(0) == self.size(0),
                "weights should be 1-d and have the same length as input");
  }
  // float weights sum in float, any other weights in double; counts are int64
  const c10::ScalarType dtype =
      !weighted ? c10::kLong : (weights->scalar_type() == c10::kFloat ? c10::kFloat : c10::kDouble);
  if (meta) {
    TORCH_CHECK_NOT_IMPLEMENTED(false, "aten::bincount: the output's length depends on the input's values, which a ",
                                "meta tensor does not have (a data-dependent operator)");
  }
  Tensor x = self.to(c10::kLong).contiguous();
  const int64_t* v = x.data_ptr<int64_t>();
  const int64_t n = x.numel();
  int64_t largest = -1;
  for (int64_t i = 0; i < n; ++i) {
    TORCH_CHECK(v[i] >= 0, "bincount only supports 1-d non-negative integral inputs.");
    largest = std::max(largest, v[i]);
  }
  TORCH_CHECK(largest < std::numeric_limits<int64_t>::max(), "bincount: the largest value leaves no room for its bin");
  const int64_t length = std::max(largest + 1, minlength);
  Tensor out = at::zeros({length}, dtype);
  if (!weighted) {
    int64_t* o = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) ++o[v[i]];
    return out;
  }
  Tensor w = weights->to(dtype).contiguous();
  dispatch_types<kFloating>(dtype, "bincount_cpu", [&]<typename T>() {
    const T* wv = w.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) o[v[i]] += wv[i];
  });
  return out;
}

Tensor histc_impl(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max, bool meta) {
  const c10::ScalarType dtype = self.scalar_type();
  if (!c10::isFloatingType(dtype)) dtype_not_implemented("histogram_cpu", dtype);
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  TORCH_CHECK(bins < std::numeric_limits<int64_t>::max(), "torch.histc: ", bins, " bins are too many");
  Tensor out = make_empty({bins}, dtype, self.device());
  if (meta) return out;
  if (dtype == c10::kHalf) {
    // torch 1.13 has no Half histc: counted in float as current PyTorch does, stored back
    out.copy_(histc_impl(self.to(c10::kFloat), bins, min, max, false));
    return out;
  }
  out.zero_();
  double lo = min.toDouble(), hi = max.toDouble();
  Tensor x = self.reshape({-1}).contiguous();
  if (lo == hi && x.numel() > 0) {
    // no range given: the data's own, computed in the input's dtype as torch does
    lo = at::min(x).item().toDouble();
    hi = at::max(x).item().toDouble();
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  TORCH_CHECK(!(lo > hi), "torch.histc: max must be larger than min");
  TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  // The outer edges as torch makes them (linspace in the input's dtype); a value's bin is
  // (value - left) / (right - left) * bins in the input's dtype, as torch's histc computes
  // it (no search against the inner edges), the right edge in the last bin.
  Tensor edges = at::linspace(lo, hi, bins + 1, dtype).contiguous();
  dispatch_types<kFloating | kReducedFloat>(dtype, "histogram_cpu", [&]<typename T>() {
    using O = opmath_t<T>;
    const T* v = x.data_ptr<T>();
    const T* e = edges.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const O left = O(e[0]), right = O(e[bins]);
    for (int64_t i = 0; i < x.numel(); ++i) {
      const O val = O(v[i]);
      if (!(val >= left && val <= right)) continue;  // outside, or NaN
      // (value - left) / (right - left) * bins, each step rounded to T as torch's does
      const O p = O(T(O(T(O(T(val - left)) / O(T(right - left)))) * O(T(static_cast<O>(bins)))));
      // compared in O first: casting a value past int64's range would be undefined
      const int64_t pos = p >= O(bins - 1) ? bins - 1 : std::max<int64_t>(0, static_cast<int64_t>(p));
      o[pos] = T(O(o[pos]) + O(1));
    }
  });
  return out;
}

// ---------------------------------------------------------------- histogramdd

const char* dtype_word(c10::ScalarType t) {
  return t == c10::kFloat ? "float" : t == c10::kDouble ? "double" : c10::toString(t);
}

// The checks every histogramdd form makes on the points and weights (torch's messages);
// returns the points as an (N, D) matrix.
Tensor points_of(const Tensor& self, const std::optional<Tensor>& weight) {
  if (!c10::isFloatingType(self.scalar_type()) || self.scalar_type() == c10::kHalf ||
      self.scalar_type() == c10::kBFloat16) {
    dtype_not_implemented("histogramdd", self.scalar_type());
  }
  TORCH_CHECK(self.dim() >= 2, "torch.histogramdd: input tensor should have at least 2 dimensions");
  const int64_t D = self.size(-1);
  if (weight && weight->defined()) {
    TORCH_CHECK(weight->scalar_type() == self.scalar_type(), "torch.histogramdd: if weight tensor is provided, input ",
                "tensor and weight tensor should have the same dtype, but got input(", dtype_word(self.scalar_type()),
                "), and weight(", dtype_word(weight->scalar_type()), ")");
    const std::vector<int64_t> leading(self.sizes().begin(), self.sizes().end() - 1);
    TORCH_CHECK(weight->sizes().vec() == leading, "torch.histogramdd: if weight tensor is provided it should have the ",
                "same shape as the input tensor excluding its innermost dimension, but got input with shape ",
                self.sizes(), " and weight with shape ", weight->sizes());
  }
  return self.reshape({-1, D});
}

void check_bin_count(int64_t bins, int64_t dim) {
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension ", dim);
}

// Equal-width edges per dimension: over `range` (2 values per dimension) when given, else
// over the data's own extent (computed in its dtype); a zero-width extent is widened by a
// half on each side, and no data at all spans [0, 1].
std::vector<Tensor> edges_from_counts(const Tensor& points, IntArrayRef bins, std::optional<ArrayRef<double>> range,
                                      bool meta) {
  const int64_t D = points.size(1);
  TORCH_CHECK(static_cast<int64_t>(bins.size()) == D, "torch.histogramdd: expected ", D, " bin counts for a ", D,
              "-dimensional histogram but got ", bins.size());
  for (int64_t d = 0; d < D; ++d) check_bin_count(bins[static_cast<size_t>(d)], d);
  if (range) {
    TORCH_CHECK(static_cast<int64_t>(range->size()) == 2 * D, "torch.histogramdd: for a ", D,
                "-dimensional histogram range should have ", 2 * D, " elements, but got ", range->size());
  }
  std::vector<Tensor> edges;
  for (int64_t d = 0; d < D; ++d) {
    const int64_t n = bins[static_cast<size_t>(d)] + 1;
    if (meta) {
      edges.push_back(make_empty({n}, points.scalar_type(), points.device()));
      continue;
    }
    double lo = 0, hi = 1;
    if (range) {
      lo = (*range)[static_cast<size_t>(2 * d)];
      hi = (*range)[static_cast<size_t>(2 * d + 1)];
    } else if (points.size(0) > 0) {
      const Tensor column = points.select(1, d);
      lo = at::min(column).item().toDouble();
      hi = at::max(column).item().toDouble();
    }
    TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histogramdd: dimension ", d, "'s range [", lo, ", ", hi,
                "] is not finite");
    TORCH_CHECK(lo <= hi, "torch.histogramdd: min should not exceed max, but got min ", lo, " max ", hi,
                " for dimension ", d);
    if (lo == hi) {
      lo -= 0.5;
      hi += 0.5;
    }
    edges.push_back(at::linspace(lo, hi, n, points.scalar_type()));
  }
  return edges;
}

void check_edge_tensors(const Tensor& points, ArrayRef<Tensor> bins) {
  const int64_t D = points.size(1);
  TORCH_CHECK(static_cast<int64_t>(bins.size()) == D, "torch.histogramdd: expected ", D,
              " sequences of bin edges for a ", D, "-dimensional histogram but got ", bins.size());
  for (int64_t d = 0; d < D; ++d) {
    const Tensor& e = bins[static_cast<size_t>(d)];
    TORCH_CHECK(e.scalar_type() == points.scalar_type(), "torch.histogramdd: input tensor and bins tensors should ",
                "have the same dtype, but got input with dtype ", dtype_word(points.scalar_type()),
                " and bins for dimension ", d, " with dtype ", dtype_word(e.scalar_type()));
    TORCH_CHECK(e.dim() == 1, "torch.histogramdd: bins tensor should have one dimension, but got ", e.dim(),
                " dimensions in the bins tensor for dimension ", d);
    check_bin_count(e.numel() - 1, d);
  }
}

// Each point lands in the bin edge[p] <= x < edge[p + 1] of every dimension (the last edge
// closing the last bin); a point outside the edges in any dimension, or NaN, is not
// counted. Equal-width edges find p by arithmetic and then step to the edges' verdict,
// given edges by binary search.
template <typename T>
void count_points(Tensor& hist, const Tensor& points, const std::optional<Tensor>& weight,
                  const std::vector<Tensor>& edges, bool equal_width) {
  const int64_t N = points.size(0), D = points.size(1);
  const Tensor x = points.contiguous();
  const T* xv = x.data_ptr<T>();
  Tensor w;
  if (weight && weight->defined()) w = weight->reshape({-1}).contiguous();
  const T* wv = w.defined() ? w.data_ptr<T>() : nullptr;
  std::vector<Tensor> dense;
  std::vector<const T*> e;
  std::vector<int64_t> nbins, stride(static_cast<size_t>(D), 1);
  for (const Tensor& t : edges) {
    dense.push_back(t.contiguous());
    e.push_back(dense.back().data_ptr<T>());
    nbins.push_back(t.numel() - 1);
  }
  for (int64_t d = D - 2; d >= 0; --d) stride[static_cast<size_t>(d)] = stride[static_cast<size_t>(d + 1)] * nbins[static_cast<size_t>(d + 1)];
  T* h = hist.data_ptr<T>();
  for (int64_t i = 0; i < N; ++i) {
    int64_t flat = 0;
    bool inside = true;
    for (int64_t d = 0; d < D && inside; ++d) {
      const size_t k = static_cast<size_t>(d);
      const T val = xv[i * D + d];
      const T* edge = e[k];
      const int64_t nb = nbins[k];
      if (!(val >= edge[0] && val <= edge[nb])) {
        inside = false;
        break;
      }
      int64_t p;
      if (equal_width) {
        const double width = static_cast<double>(edge[nb]) - static_cast<double>(edge[0]);
        const double at = width > 0 ? (static_cast<double>(val) - static_cast<double>(edge[0])) / width * nb : 0;
        p = std::clamp<int64_t>(static_cast<int64_t>(std::min<double>(at, static_cast<double>(nb))), 0, nb - 1);
        while (p > 0 && val < edge[p]) --p;
        while (p < nb - 1 && val >= edge[p + 1]) ++p;
      } else {
        p = std::min<int64_t>(std::upper_bound(edge, edge + nb + 1, val) - edge - 1, nb - 1);
        p = std::max<int64_t>(p, 0);
      }
      flat += p * stride[k];
    }
    if (inside) h[flat] += wv ? wv[i] : T(1);
  }
}

// The histogram over `edges`: zero-filled, counted, then for a density divided by the total
// and by each bin's width along every dimension.
Tensor histogram_over(const Tensor& points, const std::optional<Tensor>& weight, const std::vector<Tensor>& edges,
                      bool equal_width, bool density, bool meta) {
  std::vector<int64_t> shape;
  for (const Tensor& e : edges) shape.push_back(e.numel() - 1);
  Tensor hist = make_empty(shape, points.scalar_type(), points.device());
  if (meta) return hist;
  hist.zero_();
  dispatch_types<kFloating>(points.scalar_type(), "histogramdd",
                            [&]<typename T>() { count_points<T>(hist, points, weight, edges, equal_width); });
  if (density) {
    hist.div_(hist.sum());
    for (size_t d = 0; d < edges.size(); ++d) {
      std::vector<int64_t> along(edges.size(), 1);
      along[d] = -1;
      hist.div_(at::diff(edges[d]).reshape(along));
    }
  }
  return hist;
}

std::vector<Tensor> bin_edges_impl(const Tensor& self, IntArrayRef bins, std::optional<ArrayRef<double>> range,
                                   const std::optional<Tensor>& weight, bool meta) {
  return edges_from_counts(points_of(self, weight), bins, range, meta);
}

Tensor from_bin_cts_impl(const Tensor& self, IntArrayRef bins, std::optional<ArrayRef<double>> range,
                         const std::optional<Tensor>& weight, bool density, bool meta) {
  const Tensor points = points_of(self, weight);
  return histogram_over(points, weight, edges_from_counts(points, bins, range, meta), true, density, meta);
}

Tensor from_bin_tensors_impl(const Tensor& self, ArrayRef<Tensor> bins, const std::optional<Tensor>& weight,
                             bool density, bool meta) {
  const Tensor points = points_of(self, weight);
  check_edge_tensors(points, bins);
  return histogram_over(points, weight, bins.vec(), false, density, meta);
}

// histogram: histogramdd of the flattened input (and weights) as one-dimensional points.
std::optional<Tensor> flat_weight(const std::optional<Tensor>& weight) {
  return weight && weight->defined() ? std::optional<Tensor>(weight->reshape({-1})) : std::nullopt;
}

std::tuple<Tensor, Tensor> histogram_bin_ct_impl(const Tensor& self, int64_t bins,
                                                 std::optional<ArrayRef<double>> range,
                                                 const std::optional<Tensor>& weight, bool density, bool meta) {
  const std::optional<Tensor> w = flat_weight(weight);
  const Tensor points = points_of(self.reshape({-1, 1}), w);
  const int64_t counts[1] = {bins};
  std::vector<Tensor> edges = edges_from_counts(points, counts, range, meta);
  return {histogram_over(points, w, edges, true, density, meta), edges[0]};
}

std::tuple<Tensor, Tensor> histogram_bins_tensor_impl(const Tensor& self, const Tensor& bins,
                                                      const std::optional<Tensor>& weight, bool density, bool meta) {
  const std::optional<Tensor> w = flat_weight(weight);
  const Tensor points = points_of(self.reshape({-1, 1}), w);
  check_edge_tensors(points, {bins});
  return {histogram_over(points, w, {bins}, false, density, meta), bins.clone()};
}

}  // namespace

Tensor bincount_cpu(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  return bincount_impl(self, weights, minlength, false);
}
Tensor bincount_meta(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  return bincount_impl(self, weights, minlength, true);
}

Tensor histc_cpu(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  return histc_impl(self, bins, min, max, false);
}
Tensor histc_meta(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  return histc_impl(self, bins, min, max, true);
}

std::vector<Tensor> histogramdd_bin_edges_cpu(const Tensor& self, IntArrayRef bins, std::optional<ArrayRef<double>> range,
                                              const std::optional<Tensor>& weight, bool) {
  return bin_edges_impl(self, bins, range, weight, false);
}
std::vector<Tensor> histogramdd_bin_edges_meta(const Tensor& self, IntArrayRef bins, std::optional<ArrayRef<double>> range,
                                               const std::optional<Tensor>& weight, bool) {
  return bin_edges_impl(self, bins, range, weight, true);
}
Tensor histogramdd_from_bin_cts_cpu(const Tensor& self, IntArrayRef bins, std::optional<ArrayRef<double>> range,
                                    const std::optional<Tensor>& weight, bool density) {
  return from_bin_cts_impl(self, bins, range, weight, density, false);
}
Tensor histogramdd_from_bin_cts_meta(const Tensor& self, IntArrayRef bins, std::optional<ArrayRef<double>> range,
                                     const std::optional<Tensor>& weight, bool density) {
  return from_bin_cts_impl(self, bins, range, weight, density, true);
}
Tensor histogramdd_from_bin_tensors_cpu(const Tensor& self, ArrayRef<Tensor> bins, const std::optional<Tensor>& weight,
                                        bool density) {
  return from_bin_tensors_impl(self, bins, weight, density, false);
}
Tensor histogramdd_from_bin_tensors_meta(const Tensor& self, ArrayRef<Tensor> bins, const std::optional<Tensor>& weight,
                                         bool density) {
  return from_bin_tensors_impl(self, bins, weight, density, true);
}

std::tuple<Tensor, Tensor> histogram_bin_ct_cpu(const Tensor& self, int64_t bins, std::optional<ArrayRef<double>> range,
                                                const std::optional<Tensor>& weight, bool density) {
  return histogram_bin_ct_impl(self, bins, range, weight, density, false);
}
std::tuple<Tensor, Tensor> histogram_bin_ct_meta(const Tensor& self, int64_t bins, std::optional<ArrayRef<double>> range,
                                                 const std::optional<Tensor>& weight, bool density) {
  return histogram_bin_ct_impl(self, bins, range, weight, density, true);
}
std::tuple<Tensor, Tensor> histogram_bins_tensor_cpu(const Tensor& self, const Tensor& bins,
                                                     const std::optional<Tensor>& weight, bool density) {
  return histogram_bins_tensor_impl(self, bins, weight, density, false);
}
std::tuple<Tensor, Tensor> histogram_bins_tensor_meta(const Tensor& self, const Tensor& bins,
                                                      const std::optional<Tensor>& weight, bool density) {
  return histogram_bins_tensor_impl(self, bins, weight, density, true);
}

// out= forms: computed, then each out resized and filled.
std::tuple<Tensor&, Tensor&> histogram_bin_ct_out(const Tensor& self, int64_t bins, std::optional<ArrayRef<double>> range,
                                                  const std::optional<Tensor>& weight, bool density, Tensor& hist,
                                                  Tensor& bin_edges) {
  auto [h, e] = at::histogram(self, bins, range, weight, density);
  copy_into_out(h, hist, "histogram");
  copy_into_out(e, bin_edges, "histogram");
  return {hist, bin_edges};
}
std::tuple<Tensor&, Tensor&> histogram_bins_tensor_out(const Tensor& self, const Tensor& bins,
                                                       const std::optional<Tensor>& weight, bool density, Tensor& hist,
                                                       Tensor& bin_edges) {
  auto [h, e] = at::histogram(self, bins, weight, density);
  copy_into_out(h, hist, "histogram");
  copy_into_out(e, bin_edges, "histogram");
  return {hist, bin_edges};
}

}  // namespace at::inline tessera::native
