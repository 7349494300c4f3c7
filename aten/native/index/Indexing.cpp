// Advanced indexing: index.Tensor (self[i, j] with index tensors for some dims),
// index_put_, and the ops written over it: masked_select, take; plus masked_fill_ and
// nonzero. One description of an indexing (AdvancedIndex) serves the shape functions of
// both Meta and CPU and the kernels of both directions: self is viewed at the result's
// shape with stride 0 along the indexed dims, each index tensor is viewed at the same
// shape, and one loop moves elements with the indexed side's address offset by
// sum_k index_k * stride_k.
#include <aten/core/Dispatch.h>
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/index/IndexingUtils.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <utility>

namespace at::inline tessera::native {

void index_out_of_bounds(const IndexedDims& dims, size_t k, int64_t index) {
  const int64_t dim = dims.dim >= 0 ? dims.dim : static_cast<int64_t>(k);
  if (dims.index_error) {
    TORCH_CHECK_INDEX(false, "index ", index, " is out of bounds for dimension ", dim, " with size ", dims.sizes[k]);
  }
  TORCH_CHECK(false, "index ", index, " is out of bounds for dimension ", dim, " with size ", dims.sizes[k]);
}

TensorIterator make_index_iterator(const Tensor& written, const Tensor& read, c10::ArrayRef<Tensor> indices) {
  TensorIteratorConfig config;
  config.check_all_same_dtype(false).resize_outputs(false).check_mem_overlap(false).op_name("index");
  config.add_output(written).add_input(read);
  for (const Tensor& index : indices) config.add_input(index);
  return config.build();
}

void check_same_device(const char* op, const Tensor& self, std::initializer_list<const Tensor*> others) {
  for (const Tensor* t : others) {
    if (!t || !t->defined() || t->device() == self.device()) continue;
    TORCH_CHECK(false, op, "(): expected all tensors to be on the same device, but found at least two devices, ",
                self.device(), " and ", t->device(), "!");
  }
}

// Whether the byte ranges of two tensors on one storage intersect (a cheap superset of
// "share an element": interleaved views that never touch count as overlapping).
bool written_overlaps(const Tensor& written, const Tensor& other) {
  if (!written.storage().defined() || !written.storage().is_alias_of(other.storage())) return false;
  if (written.numel() == 0 || other.numel() == 0) return false;
  auto range = [](const Tensor& t) {
    int64_t last = 0;
    for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
    const auto item = static_cast<int64_t>(t.itemsize());
    return std::pair<int64_t, int64_t>(t.storage_offset() * item, (t.storage_offset() + last + 1) * item);
  };
  const auto [a0, a1] = range(written);
  const auto [b0, b1] = range(other);
  return a0 < b1 && b0 < a1;
}

void check_no_overlap(const Tensor& written, const Tensor& other) {
  TORCH_CHECK(!written_overlaps(written, other), "unsupported operation: some elements of the input tensor and the "
              "written-to tensor refer to a single memory location. Please clone() the tensor before performing the "
              "operation.");
}

Tensor value_in_dtype(c10::ScalarType dtype, const Scalar& value) {
  Tensor v = make_empty({}, dtype, c10::Device(c10::kCPU));
  v.fill_(value);
  return v;
}

void add_indexed(const TensorIterator& iter, const IndexedDims& dims, c10::ScalarType dtype, const char* op,
                 bool complex_half) {
  if (dtype == c10::kComplexHalf && !complex_half) dispatch_types<kArithmetic>(dtype, op, [&]<typename T>() {});
  dispatch_types<kArithmetic | kComplexHalf>(dtype, op, [&]<typename T>() {
    for_each_indexed(iter, dims, /*offset_read=*/false, /*parallel=*/false,
                     [](char* dst, char* src, int64_t n, int64_t ds, int64_t ss) {
                       for (int64_t i = 0; i < n; ++i) {
                         T& d = *reinterpret_cast<T*>(dst + i * ds);
                         const T& s = *reinterpret_cast<const T*>(src + i * ss);
                         if constexpr (std::is_same_v<T, c10::complex<c10::Half>>) {
                           d = T(c10::complex<float>(d) + c10::complex<float>(s));
                         } else {
                           d = static_cast<T>(d + s);
                         }
                       }
                     });
  });
}

void check_indices_in_range(const Tensor& index, int64_t size, const char* message) {
  Tensor dense = index.scalar_type() == c10::kLong ? index.contiguous() : index.to(c10::kLong).contiguous();
  const int64_t* p = dense.data_ptr<int64_t>();
  for (int64_t i = 0, n = dense.numel(); i < n; ++i) TORCH_CHECK_INDEX(p[i] >= 0 && p[i] < size, message);
}

namespace {

// self[indices] described once: which dims are indexed, by what, and the result's shape.
struct AdvancedIndex {
  Tensor self;                      // self, its indexed dims moved first when they were not adjacent
  std::vector<Tensor> indices;      // int64, one per indexed dim, in order
  int64_t before = 0;               // dims of `self` ahead of the indexed ones
  std::vector<int64_t> index_shape; // the indices' broadcast shape
  std::vector<int64_t> result_sizes;

  // self viewed at the result's shape, stride 0 along the indexed dims.
  Tensor restrided_self() const {
    const auto n = static_cast<int64_t>(indices.size()), after = before + n;
    std::vector<int64_t> strides(self.strides().begin(), self.strides().begin() + before);
    strides.insert(strides.end(), index_shape.size(), 0);
    strides.insert(strides.end(), self.strides().begin() + after, self.strides().end());
    return make_view(self, result_sizes, strides, self.storage_offset());
  }
  // The index tensors viewed at the result's shape.
  std::vector<Tensor> restrided_indices() const {
    std::vector<Tensor> out;
    const size_t trailing = result_sizes.size() - static_cast<size_t>(before) - index_shape.size();
    for (const Tensor& index : indices) {
      std::vector<int64_t> strides(static_cast<size_t>(before), 0);
      std::vector<int64_t> b = broadcast_strides(index, index_shape);
      strides.insert(strides.end(), b.begin(), b.end());
      strides.insert(strides.end(), trailing, 0);
      out.push_back(make_view(index, result_sizes, strides, index.storage_offset()));
    }
    return out;
  }
  IndexedDims dims() const {
    IndexedDims d;
    for (size_t k = 0; k < indices.size(); ++k) {
      const int64_t dim = before + static_cast<int64_t>(k);
      d.sizes.push_back(self.size(dim));
      d.stride_bytes.push_back(self.stride(dim) * static_cast<int64_t>(self.itemsize()));
    }
    return d;
  }
};

bool is_mask(const Tensor& t) { return t.scalar_type() == c10::kBool || t.scalar_type() == c10::kByte; }

// The indices with each bool/uint8 mask replaced by one int64 tensor per mask dim (the
// coordinates of its true elements); undefined entries stand for untouched dims.
std::vector<Tensor> expand_masks(const Tensor& self, c10::ArrayRef<std::optional<Tensor>> indices, bool meta) {
  std::vector<Tensor> out;
  for (const auto& entry : indices) {
    if (!entry || !entry->defined()) {
      out.emplace_back();
      continue;
    }
    const Tensor& index = *entry;
    if (!is_mask(index)) {
      TORCH_CHECK_INDEX(index.scalar_type() == c10::kLong || index.scalar_type() == c10::kInt,
                        "tensors used as indices must be long, int, byte or bool tensors");
      out.push_back(index);
      continue;
    }
    for (int64_t j = 0; j < index.dim(); ++j) {
      const int64_t at_dim = static_cast<int64_t>(out.size()) + j;
      TORCH_CHECK_INDEX(at_dim < self.dim(), "too many indices for tensor of dimension ", self.dim());
      TORCH_CHECK_INDEX(index.size(j) == self.size(at_dim), "The shape of the mask ", index.sizes(), " at index ", j,
                        " does not match the shape of the indexed tensor ", self.sizes(), " at index ", at_dim);
    }
    TORCH_CHECK_NOT_IMPLEMENTED(!meta, "indexing with a boolean mask on the Meta device: the result's shape depends "
                                "on the mask's values");
    Tensor coords = at::nonzero(index);
    for (int64_t j = 0; j < index.dim(); ++j) out.push_back(coords.select(1, j));
  }
  return out;
}

// A 0-dim mask indexes a new size-1 dim at its place, as a Python bool does: self gains
// that dim (a view) and the mask becomes the index [0] (true) or [] (false).
Tensor unsqueeze_for_scalar_masks(const Tensor& self, c10::ArrayRef<std::optional<Tensor>> given, bool meta,
                                  std::vector<std::optional<Tensor>>& rewritten) {
  Tensor base = self;
  int64_t dim = 0;
  for (const auto& entry : given) {
    if (!entry || !entry->defined() || !is_mask(*entry) || entry->dim() > 0) {
      rewritten.push_back(entry);
      dim += entry && entry->defined() && is_mask(*entry) ? entry->dim() : 1;
      continue;
    }
    TORCH_CHECK_NOT_IMPLEMENTED(!meta, "indexing with a boolean mask on the Meta device: the result's shape depends "
                                "on the mask's values");
    base = base.unsqueeze(dim);
    const bool keep = entry->item().toBool();
    rewritten.push_back(keep ? at::zeros({1}, at::TensorOptions(c10::kLong)) : at::empty({0}, at::TensorOptions(c10::kLong)));
    ++dim;
  }
  return base;
}

AdvancedIndex make_info(const Tensor& self_in, c10::ArrayRef<std::optional<Tensor>> given_in, bool meta) {
  for (const auto& entry : given_in) {
    if (entry) check_same_device("index", self_in, {&*entry});
  }
  std::vector<std::optional<Tensor>> given_storage;
  const Tensor self = unsqueeze_for_scalar_masks(self_in, given_in, meta, given_storage);
  c10::ArrayRef<std::optional<Tensor>> given(given_storage);
  TORCH_CHECK_INDEX(static_cast<int64_t>(given.size()) <= self.dim(), "too many indices for tensor of dimension ",
                    self.dim(), " (got ", given.size(), ")");
  std::vector<Tensor> indices = expand_masks(self, given, meta);
  TORCH_CHECK_INDEX(static_cast<int64_t>(indices.size()) <= self.dim(), "too many indices for tensor of dimension ",
                    self.dim(), " (got ", indices.size(), ")");
  indices.resize(static_cast<size_t>(self.dim()));

  AdvancedIndex info;
  bool first = true;
  for (const Tensor& index : indices) {
    if (!index.defined()) continue;
    if (first) {
      info.index_shape = index.sizes().vec();
      first = false;
      continue;
    }
    try {
      info.index_shape = infer_size(info.index_shape, index.sizes());
    } catch (const c10::Error&) {
      std::string shapes;
      for (const Tensor& i : indices) {
        if (i.defined()) shapes += (shapes.empty() ? "" : ", ") + c10::str(i.sizes());
      }
      TORCH_CHECK_INDEX(false, "shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes);
    }
  }
  TORCH_CHECK_INDEX(!first, "index(): expected at least one index tensor");

  // Indexed dims separated by an unindexed one go first (numpy's and torch's rule).
  std::vector<int64_t> order;
  for (size_t d = 0; d < indices.size(); ++d) if (indices[d].defined()) order.push_back(static_cast<int64_t>(d));
  const bool adjacent = order.back() - order.front() + 1 == static_cast<int64_t>(order.size());
  if (adjacent) {
    info.self = self;
    info.before = order.front();
  } else {
    for (size_t d = 0; d < indices.size(); ++d) if (!indices[d].defined()) order.push_back(static_cast<int64_t>(d));
    std::vector<int64_t> sizes, strides;
    for (int64_t d : order) {
      sizes.push_back(self.size(d));
      strides.push_back(self.stride(d));
    }
    info.self = make_view(self, sizes, strides, self.storage_offset());
    info.before = 0;
  }
  for (Tensor& index : indices) {
    if (!index.defined()) continue;
    info.indices.push_back(meta || index.scalar_type() == c10::kLong ? index : index.to(c10::kLong));
  }
  const int64_t after = info.before + static_cast<int64_t>(info.indices.size());
  const IntArrayRef sizes = info.self.sizes();
  info.result_sizes.assign(sizes.begin(), sizes.begin() + info.before);
  info.result_sizes.insert(info.result_sizes.end(), info.index_shape.begin(), info.index_shape.end());
  info.result_sizes.insert(info.result_sizes.end(), sizes.begin() + after, sizes.end());
  return info;
}

bool expandable_to(IntArrayRef from, IntArrayRef to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 1; i <= from.size(); ++i) {
    const int64_t f = from[from.size() - i], t = to[to.size() - i];
    if (f != 1 && f != t) return false;
  }
  return true;
}

// self[mask] for a bool mask of self's own shape, both contiguous: one pass over the mask
// instead of its coordinates and a gather.
bool is_full_contiguous_mask(const Tensor& self, c10::ArrayRef<std::optional<Tensor>> indices) {
  if (indices.size() != 1 || !indices[0] || !indices[0]->defined()) return false;
  const Tensor& mask = *indices[0];
  return mask.scalar_type() == c10::kBool && self.dim() > 0 && mask.sizes().equals(self.sizes()) &&
         self.is_contiguous() && mask.is_contiguous() && self.is_cpu() && mask.is_cpu();
}

Tensor select_by_mask(const Tensor& self, const Tensor& mask) {
  const bool* m = mask.data_ptr<bool>();
  const int64_t n = self.numel();
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += m[i] ? 1 : 0;
  Tensor out = make_empty({count}, self.scalar_type(), self.device());
  by_itemsize(self.itemsize(), [&]<typename T>() {
    const T* src = static_cast<const T*>(self.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    for (int64_t i = 0; i < n; ++i) {
      if (m[i]) *dst++ = src[i];
    }
  });
  return out;
}

Tensor index_impl(const Tensor& self, c10::ArrayRef<std::optional<Tensor>> indices, bool meta) {
  if (!meta && is_full_contiguous_mask(self, indices)) return select_by_mask(self, *indices[0]);
  AdvancedIndex info = make_info(self, indices, meta);
  Tensor out = make_empty(info.result_sizes, self.scalar_type(), self.device());
  if (meta || out.numel() == 0) return out;
  TensorIterator iter = make_index_iterator(out, info.restrided_self(), info.restrided_indices());
  const IndexedDims dims = info.dims();
  by_itemsize(self.itemsize(), [&]<typename T>() {
    for_each_indexed(iter, dims, /*offset_read=*/true, /*parallel=*/true, CopyElements<T>{});
  });
  return out;
}

Tensor& index_put_impl(Tensor& self, c10::ArrayRef<std::optional<Tensor>> indices, const Tensor& values,
                       bool accumulate, bool meta) {
  TORCH_CHECK(values.scalar_type() == self.scalar_type(), "Index put requires the source and destination dtypes match, got ",
              self.scalar_type(), " for the destination and ", values.scalar_type(), " for the source.");
  check_same_device("index_put_", self, {&values});
  for (const auto& index : indices) {
    if (index && index->defined()) check_no_overlap(self, *index);
  }
  AdvancedIndex info = make_info(self, indices, meta);
  TORCH_CHECK(expandable_to(values.sizes(), info.result_sizes), "shape mismatch: value tensor of shape ", values.sizes(),
              " cannot be broadcast to indexing result of shape ", IntArrayRef(info.result_sizes));
  if (meta || std::accumulate(info.result_sizes.begin(), info.result_sizes.end(), int64_t{1}, std::multiplies<>()) == 0) {
    return self;
  }
  // Values that share self's memory are read in full before any is written.
  Tensor source = written_overlaps(self, values) ? values.clone() : values;
  source = make_view(source, info.result_sizes, broadcast_strides(source, info.result_sizes), source.storage_offset());
  TensorIterator iter = make_index_iterator(info.restrided_self(), source, info.restrided_indices());
  const IndexedDims dims = info.dims();
  if (!accumulate) {
    by_itemsize(self.itemsize(), [&]<typename T>() {
      for_each_indexed(iter, dims, /*offset_read=*/false, /*parallel=*/true, CopyElements<T>{});
    });
    return self;
  }
  add_indexed(iter, dims, self.scalar_type(), "index_put_", /*complex_half=*/true);
  return self;
}

void check_mask(const Tensor& mask, const char* op) {
  TORCH_CHECK(mask.scalar_type() == c10::kBool, op, " only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
}

Tensor& masked_fill_impl(Tensor& self, const Tensor& mask, const Scalar& value, bool meta) {
  check_mask(mask, "masked_fill_");
  check_same_device("masked_fill_", self, {&mask});
  check_no_overlap(self, mask);
  const std::vector<int64_t> shape = infer_size(self.sizes(), mask.sizes());
  TORCH_CHECK(self.sizes().equals(shape), "output with shape ", self.sizes(), " doesn't match the broadcast shape ",
              IntArrayRef(shape));
  Tensor expanded = mask.expand(self.sizes());
  if (meta || self.numel() == 0) return self;
  Tensor v = value_in_dtype(self.scalar_type(), value);
  TensorIterator iter = TensorIteratorConfig()
                            .check_all_same_dtype(false)
                            .resize_outputs(false)
                            .op_name("masked_fill_")
                            .add_output(self)
                            .add_input(expanded)
                            .build();
  by_itemsize(self.itemsize(), [&]<typename T>() {
    const T fill = *static_cast<const T*>(v.data_ptr());
    iter.for_each([&](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
      for (int64_t j = 0; j < n1; ++j) {
        char* out = data[0] + j * strides[2];
        const char* m = data[1] + j * strides[3];
        for (int64_t i = 0; i < n0; ++i) {
          if (*reinterpret_cast<const bool*>(m + i * strides[1])) *reinterpret_cast<T*>(out + i * strides[0]) = fill;
        }
      }
    });
  });
  return self;
}

void check_fill_value(const Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
}

Tensor masked_select_impl(const Tensor& self, const Tensor& mask, bool meta) {
  TORCH_CHECK(mask.scalar_type() == c10::kBool, "masked_select: expected BoolTensor for mask");
  check_same_device("masked_select", self, {&mask});
  std::vector<int64_t> shape = infer_size(self.sizes(), mask.sizes());
  TORCH_CHECK_NOT_IMPLEMENTED(!meta, "masked_select on the Meta device: the result's shape depends on the mask's values");
  if (shape.empty()) shape = {1};
  std::optional<Tensor> m = mask.expand(shape);
  return index_impl(self.expand(shape), {&m, 1}, false);
}

Tensor nonzero_impl(const Tensor& self, bool meta) {
  TORCH_CHECK_NOT_IMPLEMENTED(!meta, "nonzero on the Meta device: the result's shape depends on the input's values");
  Tensor dense = self.contiguous();
  const int64_t n = dense.numel(), ndim = self.dim();
  Tensor out;
  // Two passes, count then write, so the result is allocated once at its size.
  dispatch_types<kAllTypes>(self.scalar_type(), "nonzero_cpu", [&]<typename T>() {
    const T* p = static_cast<const T*>(dense.data_ptr());
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) count += cast<bool>(p[i]) ? 1 : 0;
    out = make_empty({count, ndim}, c10::kLong, self.device());
    if (count == 0 || ndim == 0) return;
    int64_t* o = out.data_ptr<int64_t>();
    if (ndim == 1) {
      for (int64_t i = 0; i < n; ++i) {
        if (cast<bool>(p[i])) *o++ = i;
      }
      return;
    }
    std::vector<int64_t> coord(static_cast<size_t>(ndim), 0);
    for (int64_t i = 0; i < n; ++i) {
      if (cast<bool>(p[i])) o = std::copy(coord.begin(), coord.end(), o);
      for (int64_t d = ndim - 1; d >= 0; --d) {
        if (++coord[static_cast<size_t>(d)] < self.size(d)) break;
        coord[static_cast<size_t>(d)] = 0;
      }
    }
  });
  return out;
}

Tensor take_impl(const Tensor& self, const Tensor& index, bool meta) {
  TORCH_CHECK(index.scalar_type() == c10::kLong, "take(): Expected a long tensor for index, but got ", index.scalar_type());
  check_same_device("take", self, {&index});
  Tensor out = make_empty(index.sizes(), self.scalar_type(), self.device());
  if (meta || index.numel() == 0) return out;
  TORCH_CHECK_INDEX(self.numel() > 0, "take(): tried to take from an empty tensor");
  const int64_t numel = self.numel();
  Tensor dense_index = index.contiguous();
  const int64_t* p = dense_index.data_ptr<int64_t>();
  for (int64_t i = 0; i < index.numel(); ++i) {
    TORCH_CHECK_INDEX(p[i] >= -numel && p[i] < numel, "out of range: tried to access index ", p[i], " on a tensor of ",
                      numel, " elements.");
  }
  Tensor flat = self.reshape({-1});
  std::vector<int64_t> zeros(static_cast<size_t>(index.dim()), 0);
  Tensor src = make_view(flat, index.sizes(), zeros, flat.storage_offset());
  IndexedDims dims;
  dims.sizes.push_back(numel);
  dims.stride_bytes.push_back(flat.stride(0) * static_cast<int64_t>(self.itemsize()));
  TensorIterator iter = make_index_iterator(out, src, {dense_index});
  by_itemsize(self.itemsize(), [&]<typename T>() { for_each_indexed(iter, dims, true, true, CopyElements<T>{}); });
  return out;
}

}  // namespace

Tensor index_cpu(const Tensor& self, c10::ArrayRef<std::optional<Tensor>> indices) { return index_impl(self, indices, false); }
Tensor index_meta(const Tensor& self, c10::ArrayRef<std::optional<Tensor>> indices) { return index_impl(self, indices, true); }

Tensor& index_put_cpu_(Tensor& self, c10::ArrayRef<std::optional<Tensor>> indices, const Tensor& values, bool accumulate) {
  return index_put_impl(self, indices, values, accumulate, false);
}
Tensor& index_put_meta_(Tensor& self, c10::ArrayRef<std::optional<Tensor>> indices, const Tensor& values, bool accumulate) {
  return index_put_impl(self, indices, values, accumulate, true);
}
Tensor index_put(const Tensor& self, c10::ArrayRef<std::optional<Tensor>> indices, const Tensor& values, bool accumulate) {
  return self.clone().index_put_(indices, values, accumulate);
}

Tensor& masked_fill_cpu_(Tensor& self, const Tensor& mask, const Scalar& value) { return masked_fill_impl(self, mask, value, false); }
Tensor& masked_fill_meta_(Tensor& self, const Tensor& mask, const Scalar& value) { return masked_fill_impl(self, mask, value, true); }
Tensor& masked_fill_tensor_cpu_(Tensor& self, const Tensor& mask, const Tensor& value) {
  check_fill_value(value);
  check_same_device("masked_fill_", self, {&value});
  return masked_fill_impl(self, mask, value.item(), false);
}
Tensor& masked_fill_tensor_meta_(Tensor& self, const Tensor& mask, const Tensor& value) {
  check_fill_value(value);
  check_same_device("masked_fill_", self, {&value});
  return masked_fill_impl(self, mask, 0, true);
}

// The functional forms broadcast self against the mask (the in-place ones cannot grow self).
// As torch: self broadcast to the mask's shape, cloned contiguous (a quantized self keeps its
// qparams), then filled in place.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  Tensor out = self.expand(infer_size(self.sizes(), mask.sizes())).clone(MemoryFormat::Contiguous);
  return out.masked_fill_(mask, value);
}
Tensor masked_fill_tensor(const Tensor& self, const Tensor& mask, const Tensor& value) {
  Tensor out = self.expand(infer_size(self.sizes(), mask.sizes())).clone(MemoryFormat::Contiguous);
  return out.masked_fill_(mask, value);
}

Tensor masked_select_cpu(const Tensor& self, const Tensor& mask) { return masked_select_impl(self, mask, false); }
Tensor masked_select_meta(const Tensor& self, const Tensor& mask) { return masked_select_impl(self, mask, true); }

Tensor nonzero_cpu(const Tensor& self) { return nonzero_impl(self, false); }
Tensor nonzero_meta(const Tensor& self) { return nonzero_impl(self, true); }
Tensor argwhere(const Tensor& self) { return self.nonzero(); }

std::vector<Tensor> nonzero_numpy(const Tensor& self) {
  // a 0-dim input reads as a one-element vector, as numpy's nonzero does
  return (self.dim() == 0 ? self.unsqueeze(0) : self).nonzero().unbind(1);
}

std::vector<Tensor> where(const Tensor& condition) { return at::nonzero_numpy(condition); }

Tensor take_cpu(const Tensor& self, const Tensor& index) { return take_impl(self, index, false); }
Tensor take_meta(const Tensor& self, const Tensor& index) { return take_impl(self, index, true); }

}  // namespace at::inline tessera::native
