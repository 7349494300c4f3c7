// Indexing along one dim: gather, scatter_ (plain, value, add/multiply reductions),
// scatter_reduce_ (sum, prod, mean, amax, amin), scatter_add_, index_add_ and index_select.
// Each views both sides at the index's shape, the indexed side with stride 0 along `dim`, and
// runs the shared indexed loop (IndexingUtils.h), whose index operand moves the indexed side
// by index * stride(dim). index_add_ is scatter_add_ with its 1-D index broadcast along the
// other dims, and index_select is gather with the index broadcast the same way.
#include <aten/core/Dispatch.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/index/IndexingUtils.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <limits>
#include <string_view>

namespace at::inline tessera::native {

namespace {

// A 0-dim tensor takes part as a 1-element vector (torch's ensure_nonempty_*).
int64_t nonempty_dim(const Tensor& t) { return t.dim() == 0 ? 1 : t.dim(); }
int64_t nonempty_size(const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.size(d); }
int64_t nonempty_stride(const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.stride(d); }
std::vector<int64_t> nonempty_sizes(const Tensor& t) { return t.dim() == 0 ? std::vector<int64_t>{1} : t.sizes().vec(); }

// t viewed at `sizes` with its own strides, except `dim`, which gets `dim_stride`.
Tensor view_at(const Tensor& t, const std::vector<int64_t>& sizes, int64_t dim, int64_t dim_stride) {
  std::vector<int64_t> strides;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    strides.push_back(d == dim ? dim_stride : nonempty_stride(t, d));
  }
  return make_view(t, sizes, strides, t.storage_offset());
}

IndexedDims along(const Tensor& indexed, int64_t dim, bool wrap_negative, bool index_error) {
  IndexedDims d;
  d.sizes.push_back(nonempty_size(indexed, dim));
  d.stride_bytes.push_back(nonempty_stride(indexed, dim) * static_cast<int64_t>(indexed.itemsize()));
  d.wrap_negative = wrap_negative;
  d.index_error = index_error;
  d.dim = dim;
  return d;
}

// A 1-D (or 0-dim) index viewed at `sizes`, moving along `dim` only (index_add_, index_select).
Tensor vector_index_along(const Tensor& index, const std::vector<int64_t>& sizes, int64_t dim) {
  Tensor idx = index.to(c10::kLong);
  std::vector<int64_t> strides(sizes.size(), 0);
  strides[static_cast<size_t>(dim)] = idx.dim() == 0 ? 0 : idx.stride(0);
  return make_view(idx, sizes, strides, idx.storage_offset());
}

void copy_along(const TensorIterator& iter, const IndexedDims& dims, bool offset_read, bool parallel, size_t itemsize) {
  by_itemsize(itemsize, [&]<typename T>() { for_each_indexed(iter, dims, offset_read, parallel, CopyElements<T>{}); });
}

// ---------------------------------------------------------------- gather

Tensor gather_impl(const Tensor& self, int64_t dim, const Tensor& index, bool meta) {
  TORCH_CHECK(index.scalar_type() == c10::kLong, "gather(): Expected dtype int64 for index");
  dim = wrap_dim(dim, self.dim());
  TORCH_CHECK(nonempty_dim(index) == nonempty_dim(self), "Index tensor must have the same number of dimensions as input tensor");
  for (int64_t d = 0; d < nonempty_dim(self); ++d) {
    if (d == dim) continue;
    TORCH_CHECK(nonempty_size(index, d) <= nonempty_size(self, d), "Size does not match at dimension ", d,
                " expected index ", index.sizes(), " to be smaller than self ", self.sizes(), " apart from dimension ", dim);
  }
  check_same_device("gather", self, {&index});
  Tensor out = make_empty(index.sizes(), self.scalar_type(), self.device());
  if (meta || index.numel() == 0) return out;
  const std::vector<int64_t> sizes = nonempty_sizes(index);
  TensorIterator iter = make_index_iterator(view_at(out, sizes, dim, nonempty_stride(out, dim)), view_at(self, sizes, dim, 0),
                                            {view_at(index, sizes, dim, nonempty_stride(index, dim))});
  copy_along(iter, along(self, dim, false, false), /*offset_read=*/true, /*parallel=*/true, self.itemsize());
  return out;
}

// ---------------------------------------------------------------- scatter

enum class Reduce { None, Add, Multiply };

Reduce parse_reduce(std::string_view reduce) {
  if (reduce == "add") return Reduce::Add;
  if (reduce == "multiply") return Reduce::Multiply;
  TORCH_CHECK(false, "reduce argument must be either add or multiply.");
}

// self[..., index[i, j], ...] (op)= src[i, j] along dim; `src` is null for a value (then
// `value` holds it as a 0-dim tensor of self's dtype).
Tensor& scatter_impl(Tensor& self, int64_t dim, const Tensor& index, const Tensor* src, const Scalar* value, Reduce reduce,
                     bool meta) {
  TORCH_CHECK(index.scalar_type() == c10::kLong, "scatter(): Expected dtype int64 for index");
  if (src) TORCH_CHECK(src->scalar_type() == self.scalar_type(), "scatter(): Expected self.dtype to be equal to src.dtype");
  dim = wrap_dim(dim, self.dim());
  TORCH_CHECK(nonempty_dim(index) == nonempty_dim(self), "Index tensor must have the same number of dimensions as self tensor");
  if (src) TORCH_CHECK(nonempty_dim(index) == nonempty_dim(*src), "Index tensor must have the same number of dimensions as src tensor");
  for (int64_t d = 0; d < nonempty_dim(self); ++d) {
    const bool fits_self = d == dim || nonempty_size(index, d) <= nonempty_size(self, d);
    const bool fits_src = !src || nonempty_size(index, d) <= nonempty_size(*src, d);
    TORCH_CHECK(fits_self && fits_src, "Expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                " apart from dimension ", dim, src ? c10::str(" and to be smaller size than src ", src->sizes()) : "");
  }
  check_same_device("scatter", self, {&index, src});
  if (meta || index.numel() == 0) return self;
  const std::vector<int64_t> sizes = nonempty_sizes(index);
  Tensor source;
  if (src) {
    // A source sharing self's memory is read in full before any of it is overwritten.
    source = view_at(written_overlaps(self, *src) ? src->clone() : *src, sizes, dim, nonempty_stride(*src, dim));
  } else {
    Tensor v = value_in_dtype(self.scalar_type(), *value);
    source = make_view(v, sizes, std::vector<int64_t>(sizes.size(), 0), 0);
  }
  check_no_overlap(self, index);
  const Tensor& idx = index;
  TensorIterator iter = make_index_iterator(view_at(self, sizes, dim, 0), source,
                                            {view_at(idx, sizes, dim, nonempty_stride(idx, dim))});
  const IndexedDims dims = along(self, dim, false, false);
  // One thread, in iteration order: repeated indices then write (or combine) deterministically.
  if (reduce == Reduce::None) {
    copy_along(iter, dims, /*offset_read=*/false, /*parallel=*/false, self.itemsize());
    return self;
  }
  if (reduce == Reduce::Add) {
    add_indexed(iter, dims, self.scalar_type(), "scatter_");
    return self;
  }
  dispatch_types<kArithmetic>(self.scalar_type(), "scatter_", [&]<typename T>() {
    for_each_indexed(iter, dims, false, false, [](char* dst, char* s, int64_t n, int64_t ds, int64_t ss) {
      for (int64_t i = 0; i < n; ++i) {
        T& d = *reinterpret_cast<T*>(dst + i * ds);
        d = static_cast<T>(d * *reinterpret_cast<const T*>(s + i * ss));
      }
    });
  });
  return self;
}

// ---------------------------------------------------------------- scatter_reduce.two

enum class Reduction { Sum, Prod, Mean, Amax, Amin };

Reduction parse_reduction(std::string_view reduce) {
  if (reduce == "sum") return Reduction::Sum;
  if (reduce == "prod") return Reduction::Prod;
  if (reduce == "mean") return Reduction::Mean;
  if (reduce == "amax") return Reduction::Amax;
  if (reduce == "amin") return Reduction::Amin;
  TORCH_CHECK(false, "reduce argument must be either sum, prod, mean, amax or amin.");
}

// The value a reduction starts from when self's own element is left out (include_self=False).
Scalar reduction_identity(Reduction r, c10::ScalarType dtype) {
  switch (r) {
    case Reduction::Sum:
    case Reduction::Mean: return Scalar(0);
    case Reduction::Prod: return Scalar(1);
    case Reduction::Amax:
    case Reduction::Amin: {
      const bool lowest = r == Reduction::Amax;
      if (dtype == c10::kBool) return Scalar(!lowest);
      if (c10::isFloatingType(dtype)) return Scalar(lowest ? -INFINITY : INFINITY);
      return dispatch_types<kIntegral>(dtype, "scatter_reduce", [&]<typename T>() {
        return Scalar(static_cast<int64_t>(lowest ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max()));
      });
    }
  }
  TORCH_INTERNAL_ASSERT(false, "unknown reduction");
}

template <unsigned Set, typename Combine>
void combine_indexed(const TensorIterator& iter, const IndexedDims& dims, c10::ScalarType dtype, Combine combine) {
  dispatch_types<Set>(dtype, "scatter_reduce", [&]<typename T>() {
    for_each_indexed(iter, dims, false, false, [&](char* dst, char* s, int64_t n, int64_t ds, int64_t ss) {
      for (int64_t i = 0; i < n; ++i) {
        T& d = *reinterpret_cast<T*>(dst + i * ds);
        d = combine(d, *reinterpret_cast<const T*>(s + i * ss));
      }
    });
  });
}

// self[..., index[i, j], ...] = reduce(self[...] (unless include_self is false), src[i, j], ...),
// on one thread in iteration order (sums of repeated indices add up deterministically).
// A mean divides each written element by how many values it took (floor division for
// integers); amax/amin propagate NaN.
Tensor& scatter_reduce_two_impl(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                                std::string_view reduce, bool include_self, bool meta) {
  const Reduction r = parse_reduction(reduce);
  TORCH_CHECK(index.scalar_type() == c10::kLong, "scatter(): Expected dtype int64 for index");
  TORCH_CHECK(src.scalar_type() == self.scalar_type(), "scatter(): Expected self.dtype to be equal to src.dtype");
  const c10::ScalarType dtype = self.scalar_type();
  if (r == Reduction::Mean && dtype == c10::kBool) dtype_not_implemented("scatter_gather_tensor_cpu_reduce_mean", dtype);
  if ((r == Reduction::Amax || r == Reduction::Amin) && c10::isComplexType(dtype)) {
    dtype_not_implemented(r == Reduction::Amax ? "scatter_gather_tensor_cpu_reduce_amax"
                                               : "scatter_gather_tensor_cpu_reduce_amin", dtype);
  }
  dim = wrap_dim(dim, self.dim());
  TORCH_CHECK(nonempty_dim(index) == nonempty_dim(self), "Index tensor must have the same number of dimensions as self tensor");
  TORCH_CHECK(nonempty_dim(index) == nonempty_dim(src), "Index tensor must have the same number of dimensions as src tensor");
  for (int64_t d = 0; d < nonempty_dim(self); ++d) {
    const bool fits = (d == dim || nonempty_size(index, d) <= nonempty_size(self, d)) &&
                      nonempty_size(index, d) <= nonempty_size(src, d);
    TORCH_CHECK(fits, "Expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                " apart from dimension ", dim, " and to be smaller size than src ", src.sizes());
  }
  check_same_device("scatter_reduce", self, {&index, &src});
  if (meta || index.numel() == 0) return self;
  const std::vector<int64_t> sizes = nonempty_sizes(index);
  check_no_overlap(self, index);
  const Tensor source = view_at(written_overlaps(self, src) ? src.clone() : src, sizes, dim, nonempty_stride(src, dim));
  const Tensor index_view = view_at(index, sizes, dim, nonempty_stride(index, dim));
  const IndexedDims dims = along(self, dim, false, false);
  if (!include_self) {
    Tensor identity = value_in_dtype(dtype, reduction_identity(r, dtype));
    Tensor filler = make_view(identity, sizes, std::vector<int64_t>(sizes.size(), 0), 0);
    copy_along(make_index_iterator(view_at(self, sizes, dim, 0), filler, {index_view}), dims, false, false,
               self.itemsize());
  }
  TensorIterator iter = make_index_iterator(view_at(self, sizes, dim, 0), source, {index_view});
  switch (r) {
    case Reduction::Sum:
    case Reduction::Mean: add_indexed(iter, dims, dtype, "scatter_reduce"); break;
    case Reduction::Prod:
      combine_indexed<kArithmetic>(iter, dims, dtype, []<typename T>(T d, T s) { return static_cast<T>(d * s); });
      break;
    case Reduction::Amax:
      combine_indexed<kIntegral | kBoolType | kFloating | kReducedFloat>(
          iter, dims, dtype, []<typename T>(T d, T s) { return s != s ? s : (d < s ? s : d); });
      break;
    case Reduction::Amin:
      combine_indexed<kIntegral | kBoolType | kFloating | kReducedFloat>(
          iter, dims, dtype, []<typename T>(T d, T s) { return s != s ? s : (s < d ? s : d); });
      break;
  }
  if (r == Reduction::Mean) {
    Tensor count = include_self ? at::ones_like(self) : at::zeros_like(self);
    count.scatter_add_(dim, index, at::ones_like(src));
    count.masked_fill_(count.eq(0), 1);
    if (c10::isFloatingType(dtype) || c10::isComplexType(dtype)) self.div_(count);
    else self.div_(count, "floor");
  }
  return self;
}

// ---------------------------------------------------------------- index_add_, index_select

void check_index_vector(const Tensor& index, const char* op) {
  TORCH_CHECK_INDEX(index.dim() <= 1, op, "(): Index is supposed to be a vector");
}

Tensor& index_add_impl(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha, bool meta) {
  dim = wrap_dim(dim, self.dim());
  check_index_vector(index, "index_add_");
  TORCH_CHECK(index.scalar_type() == c10::kLong || index.scalar_type() == c10::kInt,
              "index_add_(): Expected dtype int32/int64 for index");
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "index_add_(): self (", self.scalar_type(), ") and source (",
              source.scalar_type(), ") must have the same scalar type");
  TORCH_CHECK(dim == 0 || dim < source.dim(), "index_add_(): Indexing dim ", dim,
              " is out of bounds of the source tensor with dim ", source.dim());
  TORCH_CHECK(index.numel() == nonempty_size(source, dim), "index_add_(): Number of indices (", index.numel(),
              ") should be equal to source.size(dim): (", nonempty_size(source, dim), "), for dim: ", dim);
  bool same_slices = nonempty_dim(self) == nonempty_dim(source);
  for (int64_t d = 0; same_slices && d < nonempty_dim(self); ++d) {
    same_slices = d == dim || nonempty_size(self, d) == nonempty_size(source, d);
  }
  TORCH_CHECK(same_slices, "index_add_(): Source/destination tensor must have same slice shapes. Destination shape: ",
              self.sizes(), ", source shape: ", source.sizes(), ", dim: ", dim);
  TORCH_CHECK(!alpha.isComplex() || c10::isComplexType(self.scalar_type()), "index_add_(): complex alpha needs a ",
              "complex self, got ", self.scalar_type());
  check_same_device("index_add_", self, {&index, &source});
  if (meta || index.numel() == 0) return self;
  check_indices_in_range(index, nonempty_size(self, dim), "index out of range in self");
  const std::vector<int64_t> sizes = nonempty_sizes(source);
  // alpha in self's dtype first (as torch's kernel does), so the product keeps that dtype.
  Tensor scaled = alpha.equal(1) ? source : at::mul(source, value_in_dtype(self.scalar_type(), alpha));
  if (written_overlaps(self, scaled)) scaled = scaled.clone();
  check_no_overlap(self, index);
  TensorIterator iter = make_index_iterator(view_at(self, sizes, dim, 0),
                                            view_at(scaled, sizes, dim, nonempty_stride(scaled, dim)),
                                            {vector_index_along(index, sizes, dim)});
  add_indexed(iter, along(self, dim, false, true), self.scalar_type(), "index_add_", /*complex_half=*/true);
  return self;
}

Tensor index_select_impl(const Tensor& self, int64_t dim, const Tensor& index, bool meta) {
  dim = wrap_dim(dim, self.dim());
  check_index_vector(index, "index_select");
  TORCH_CHECK(index.scalar_type() == c10::kLong || index.scalar_type() == c10::kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  std::vector<int64_t> sizes = self.sizes().vec();
  if (self.dim() > 0) sizes[static_cast<size_t>(dim)] = index.numel();
  else TORCH_CHECK_INDEX(index.numel() == 1, "index_select(): Index to scalar can have only 1 value, got ", index.numel(), " value(s)");
  check_same_device("index_select", self, {&index});
  Tensor out = make_empty(sizes, self.scalar_type(), self.device());
  if (meta) return out;
  check_indices_in_range(index, nonempty_size(self, dim), "index out of range in self");
  if (out.numel() == 0) return out;
  const std::vector<int64_t> iter_sizes = nonempty_sizes(out);
  TensorIterator iter = make_index_iterator(view_at(out, iter_sizes, dim, nonempty_stride(out, dim)),
                                            view_at(self, iter_sizes, dim, 0), {vector_index_along(index, iter_sizes, dim)});
  copy_along(iter, along(self, dim, false, true), /*offset_read=*/true, /*parallel=*/true, self.itemsize());
  return out;
}

}  // namespace

Tensor gather_cpu(const Tensor& self, int64_t dim, const Tensor& index, bool) { return gather_impl(self, dim, index, false); }
Tensor gather_meta(const Tensor& self, int64_t dim, const Tensor& index, bool) { return gather_impl(self, dim, index, true); }

Tensor& scatter_src_cpu_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl(self, dim, index, &src, nullptr, Reduce::None, false);
}
Tensor& scatter_src_meta_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl(self, dim, index, &src, nullptr, Reduce::None, true);
}
Tensor& scatter_value_cpu_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return scatter_impl(self, dim, index, nullptr, &value, Reduce::None, false);
}
Tensor& scatter_value_meta_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return scatter_impl(self, dim, index, nullptr, &value, Reduce::None, true);
}
Tensor& scatter_reduce_cpu_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) {
  return scatter_impl(self, dim, index, &src, nullptr, parse_reduce(reduce), false);
}
Tensor& scatter_reduce_meta_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) {
  return scatter_impl(self, dim, index, &src, nullptr, parse_reduce(reduce), true);
}
Tensor& scatter_value_reduce_cpu_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) {
  return scatter_impl(self, dim, index, nullptr, &value, parse_reduce(reduce), false);
}
Tensor& scatter_value_reduce_meta_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) {
  return scatter_impl(self, dim, index, nullptr, &value, parse_reduce(reduce), true);
}
Tensor& scatter_add_cpu_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl(self, dim, index, &src, nullptr, Reduce::Add, false);
}
Tensor& scatter_add_meta_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl(self, dim, index, &src, nullptr, Reduce::Add, true);
}

Tensor scatter_src(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return self.clone().scatter_(dim, index, src);
}
Tensor scatter_value(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return self.clone().scatter_(dim, index, value);
}
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) {
  return self.clone().scatter_(dim, index, src, reduce);
}
Tensor scatter_value_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) {
  return self.clone().scatter_(dim, index, value, reduce);
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return self.clone().scatter_add_(dim, index, src);
}

Tensor& scatter_reduce_two_cpu_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                                bool include_self) {
  return scatter_reduce_two_impl(self, dim, index, src, reduce, include_self, false);
}
Tensor& scatter_reduce_two_meta_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                                 bool include_self) {
  return scatter_reduce_two_impl(self, dim, index, src, reduce, include_self, true);
}
Tensor scatter_reduce_two(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                          bool include_self) {
  return self.clone().scatter_reduce_(dim, index, src, reduce, include_self);
}

Tensor& index_add_cpu_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  return index_add_impl(self, dim, index, source, alpha, false);
}
Tensor& index_add_meta_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  return index_add_impl(self, dim, index, source, alpha, true);
}
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  return self.clone().index_add_(dim, index, source, alpha);
}

Tensor index_select_cpu(const Tensor& self, int64_t dim, const Tensor& index) { return index_select_impl(self, dim, index, false); }
Tensor index_select_meta(const Tensor& self, int64_t dim, const Tensor& index) { return index_select_impl(self, dim, index, true); }

}  // namespace at::inline tessera::native
