// Views and shape operators. A view is new geometry (sizes, strides, storage offset) over
// the base's storage, sharing its version counter; one function computes that geometry for
// every backend (CPU and Meta alike) and for both the view and its in-place form
// (transpose_, squeeze_, unsqueeze_, as_strided_ give self the geometry). Shape operators
// naturally written with other operators (flatten, split, movedim, ...) are
// CompositeImplicitAutograd.
#include <aten/core/NamedTensorUtils.h>
#include <aten/core/TensorUtils.h>
#include <aten/core/NestedTensorImpl.h>
#include <aten/native/shape/TensorShape.h>

#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/nested/NestedOps.h>
#include <aten/ops/Functions.h>
#include <c10/core/StorageBounds.h>
#include <c10/util/safe_numerics.h>

#include <algorithm>
#include <sstream>
#include <limits>
#include <optional>

namespace at::inline tessera::native {

// ---------------------------------------------------------------- shared geometry

Tensor make_view(const Tensor& self, const ViewGeometry& g) { return make_view(self, g.sizes, g.strides, g.offset); }

// Every tensor's farthest element offset and every stride in bytes fit in int64
// (computeStorageNbytes), so offsets and strides a view derives for dims of two or more
// elements fit as well. A dim of size 0 or 1 may carry any such stride, as in torch;
// scaling or adding one can overflow, and then the view keeps the unscaled one, which
// serves that dim equally well.
static int64_t derived_stride(int64_t stride, int64_t factor, int64_t addend, int64_t size, size_t itemsize) {
  const int64_t max_stride = std::numeric_limits<int64_t>::max() / static_cast<int64_t>(itemsize);
  int64_t out = 0;
  if (!c10::mul_overflows(stride, factor, &out) && !c10::add_overflows(out, addend, &out) && out <= max_stride) {
    return out;
  }
  TORCH_CHECK(size <= 1, "Storage size calculation overflowed: stride ", stride, " * ", factor, " + ", addend,
              " for a dimension of size ", size);
  return stride;
}

namespace {
// self's storage as a view of another dtype with geometry g (in elements of that dtype).
Tensor make_dtype_view(const Tensor& self, c10::ScalarType dtype, const ViewGeometry& g) {
  c10::TensorImpl* base = self.unsafeGetTensorImpl();
  auto impl = c10::make_intrusive<c10::TensorImpl>(base->storage(), base->key_set(), dtype, base->layout());
  impl->set_sizes_and_strides(g.sizes, g.strides);
  impl->set_storage_offset(g.offset);
  impl->set_version_counter(base->version_counter());
  return Tensor(std::move(impl));
}
}  // namespace

// self's bytes read as another dtype. A different element size rescales the last dim,
// which must be contiguous (torch's rules for view(dtype)).
Tensor view_dtype(const Tensor& self, c10::ScalarType dtype) {
  // A quantized tensor's integers mean nothing without its quantizer (torch 1.13 crashes here).
  TORCH_CHECK(!self.is_quantized() && !c10::isQIntType(dtype), "view(dtype) is not supported for quantized tensors ",
              "or dtypes: use int_repr() and _make_per_tensor_quantized_tensor()");
  if (dtype != self.scalar_type()) {
    TORCH_CHECK(!self.is_conj(),
                "torch.Tensor.view is not supported for conjugate view tensors when converting to a different dtype.");
    TORCH_CHECK(!self.is_neg(), "torch.Tensor.view is not supported for tensors with negative bit set when converting "
                                "to a different dtype.");
  }
  const auto old_size = static_cast<int64_t>(self.itemsize()), new_size = static_cast<int64_t>(c10::elementSize(dtype));
  ViewGeometry g{self.sizes().vec(), self.strides().vec(), self.storage_offset()};
  if (old_size != new_size) {
    const char* why = " (different element sizes)";
    TORCH_CHECK(self.dim() > 0, "self.dim() cannot be 0 to view ", self.scalar_type(), " as ", dtype, why);
    TORCH_CHECK(self.stride(-1) == 1, "self.stride(-1) must be 1 to view ", self.scalar_type(), " as ", dtype, why,
                ", but got ", self.stride(-1));
    const size_t last = g.sizes.size() - 1;
    if (old_size > new_size) {
      const int64_t r = old_size / new_size;
      for (size_t d = 0; d < last; ++d) g.strides[d] = derived_stride(g.strides[d], r, 0, g.sizes[d], static_cast<size_t>(new_size));
      g.sizes[last] *= r;
      g.offset *= r;
    } else {
      const int64_t r = new_size / old_size;
      TORCH_CHECK(g.sizes[last] % r == 0, "self.size(-1) must be divisible by ", r, " to view ", self.scalar_type(),
                  " as ", dtype, why, ", but got ", g.sizes[last]);
      TORCH_CHECK(g.offset % r == 0, "self.storage_offset() must be divisible by ", r, " to view ", self.scalar_type(),
                  " as ", dtype, why, ", but got ", g.offset);
      for (size_t d = 0; d < last; ++d) {
        TORCH_CHECK(g.strides[d] % r == 0, "self.stride(", d, ") must be divisible by ", r, " to view ",
                    self.scalar_type(), " as ", dtype, why, ", but got ", g.strides[d]);
        g.strides[d] /= r;
      }
      g.sizes[last] /= r;
      g.offset /= r;
    }
  }
  return make_dtype_view(self, dtype, g);
}

// A complex tensor's storage read as (re, im) pairs of its real type: a trailing dim of 2.
Tensor view_as_real(const Tensor& self) {
  TORCH_CHECK(c10::isComplexType(self.scalar_type()), "view_as_real is only supported for complex tensors");
  TORCH_CHECK(!self.is_conj(),
              "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so you can "
              "view it as real, use self.resolve_conj(); however, be warned that the resulting tensor will NOT alias "
              "the original.");
  ViewGeometry g{self.sizes().vec(), self.strides().vec(), self.storage_offset() * 2};
  const size_t real_size = c10::elementSize(c10::toRealValueType(self.scalar_type()));
  for (size_t d = 0; d < g.strides.size(); ++d) {
    g.strides[d] = derived_stride(g.strides[d], 2, 0, g.sizes[d], real_size);
  }
  g.sizes.push_back(2);
  g.strides.push_back(1);
  return make_dtype_view(self, c10::toRealValueType(self.scalar_type()), g);
}

// The inverse: a trailing dim of (re, im) pairs, contiguous, read as complex numbers.
Tensor view_as_complex(const Tensor& self) {
  const c10::ScalarType t = self.scalar_type();
  TORCH_CHECK(t == c10::kHalf || t == c10::kFloat || t == c10::kDouble,
              "view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: ",
              t);
  TORCH_CHECK(self.dim() != 0, "Input tensor must have one or more dimensions");
  TORCH_CHECK(self.size(-1) == 2, "Tensor must have a last dimension of size 2");
  TORCH_CHECK(self.stride(-1) == 1, "Tensor must have a last dimension with stride 1");
  ViewGeometry g{self.sizes().vec(), self.strides().vec(), self.storage_offset()};
  g.sizes.pop_back();
  g.strides.pop_back();
  for (int64_t& st : g.strides) {
    TORCH_CHECK(st % 2 == 0, "Tensor must have a stride divisible by 2 for all but last dimension");
    st /= 2;
  }
  TORCH_CHECK(g.offset % 2 == 0, "Tensor must have a storage_offset divisible by 2");
  g.offset /= 2;
  return make_dtype_view(self, c10::toComplexType(t), g);
}

Tensor& set_geometry_(Tensor& self, const ViewGeometry& g) {
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_and_strides(g.sizes, g.strides);
  impl->set_storage_offset(g.offset);
  return self;
}

int64_t wrap_dim(int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);  // a 0-dim tensor takes dims -1 and 0
  TORCH_CHECK_INDEX(dim >= -n && dim < n, "Dimension out of range (expected to be in range of [", -n, ", ", n - 1,
                    "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

std::optional<ShapeError> try_infer_size(IntArrayRef shape, int64_t numel, std::vector<int64_t>& out) {
  out = shape.vec();
  std::optional<size_t> infer;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer) return ShapeError{ShapeError::Kind::TwoInferred, "only one dimension can be inferred"};
      infer = i;
    } else if (shape[i] >= 0) {
      known *= shape[i];
    } else {
      return ShapeError{ShapeError::Kind::NegativeDim, c10::str("invalid shape dimension ", shape[i])};
    }
  }
  bool fits = known == numel || (infer && known > 0 && numel % known == 0);
  if (!fits) {
    return ShapeError{ShapeError::Kind::Mismatch, c10::str("shape '", shape, "' is invalid for input of size ", numel)};
  }
  if (infer) {
    if (known == 0) {
      return ShapeError{ShapeError::Kind::Ambiguous,
                        c10::str("cannot reshape tensor of 0 elements into shape ", shape,
                                 " because the unspecified dimension size -1 can be any value and is ambiguous")};
    }
    out[*infer] = numel / known;
  }
  return std::nullopt;
}

std::vector<int64_t> infer_size(IntArrayRef shape, int64_t numel) {
  std::vector<int64_t> out;
  auto error = try_infer_size(shape, numel, out);
  TORCH_CHECK(!error, error->message);
  return out;
}

std::optional<std::vector<int64_t>> view_strides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                                 IntArrayRef new_sizes, int64_t numel) {
  std::vector<int64_t> out(new_sizes.size(), 1);
  if (old_sizes.empty()) return out;
  if (numel == 0) {
    // Any strides would do; keep the old ones for the same shape, else contiguous ones.
    if (old_sizes.equals(new_sizes)) return old_strides.vec();
    int64_t s = 1;
    for (size_t i = new_sizes.size(); i-- > 0;) {
      out[i] = s;
      s *= std::max<int64_t>(new_sizes[i], 1);
    }
    return out;
  }
  // Walk the old dims from the innermost, grouping them into chunks that are contiguous
  // among themselves; each chunk must be covered exactly by a run of new dims.
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    // A chunk ends where the next outer dim is not laid out right after this one.
    if (d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  // Dims of size 0 or 1 place no constraint; the others, innermost first, must each step
  // over exactly the block the dims inside them span.
  std::vector<size_t> dims;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] >= 2) dims.push_back(i);
  }
  std::stable_sort(dims.begin(), dims.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (size_t d : dims) {
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

std::vector<int64_t> movedim_permutation(int64_t ndim, IntArrayRef source, IntArrayRef destination) {
  std::vector<int64_t> perm(static_cast<size_t>(ndim), -1);
  std::vector<bool> used(static_cast<size_t>(ndim), false);
  for (size_t i = 0; i < source.size(); ++i) {
    perm[destination[i]] = source[i];
    used[source[i]] = true;
  }
  int64_t next = 0;
  for (auto& p : perm) {
    if (p != -1) continue;
    while (used[next]) ++next;
    p = next++;
  }
  return perm;
}

// ---------------------------------------------------------------- view kernels (CPU, Meta)

Tensor view(const Tensor& self, IntArrayRef size) {
  std::vector<int64_t> shape = infer_size(size, self.numel());
  auto strides = view_strides(self.sizes(), self.strides(), shape, self.numel());
  TORCH_CHECK(strides.has_value(),
              "view size is not compatible with input tensor's size and stride (at least one dimension spans "
              "across two contiguous subspaces). Use .reshape(...) instead.");
  return make_view(self, shape, *strides, self.storage_offset());
}

// The one bounds check between a caller's geometry and the storage's bytes (tessera.load
// reaches it with a checkpoint's offsets): computeStorageNbytes checks every product and sum.
static ViewGeometry as_strided_geometry(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                                        std::optional<int64_t> storage_offset) {
  TORCH_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape");
  const int64_t offset = storage_offset.value_or(self.storage_offset());
  const size_t needed = c10::computeStorageNbytes(size, stride, self.itemsize(), offset);
  const size_t have = self.storage().defined() ? self.storage().nbytes() : 0;
  TORCH_CHECK(needed <= have, "setStorage: sizes ", size, ", strides ", stride, ", storage offset ", offset,
              ", and itemsize ", self.itemsize(), " requiring a storage size of ", needed,
              " are out of bounds for storage of size ", have);
  return {size.vec(), stride.vec(), offset};
}

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  return make_view(self, as_strided_geometry(self, size, stride, storage_offset));
}

Tensor& as_strided_(Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  return set_geometry_(self, as_strided_geometry(self, size, stride, storage_offset));
}

Tensor permute(const Tensor& self, IntArrayRef dims) {
  const int64_t ndim = self.dim();
  TORCH_CHECK(static_cast<int64_t>(dims.size()) == ndim,
              "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
              "desired ordering of dimensions i.e. input.dim() = ",
              ndim, " is not equal to len(dims) = ", dims.size());
  std::vector<int64_t> sizes(dims.size()), strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim(dims[i], ndim);
    TORCH_CHECK(!seen[d], "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

static ViewGeometry transpose_geometry(const Tensor& self, int64_t dim0, int64_t dim1) {
  const int64_t ndim = self.dim();
  dim0 = wrap_dim(dim0, ndim);
  dim1 = wrap_dim(dim1, ndim);
  ViewGeometry g{self.sizes().vec(), self.strides().vec(), self.storage_offset()};
  if (ndim > 0) {
    std::swap(g.sizes[dim0], g.sizes[dim1]);
    std::swap(g.strides[dim0], g.strides[dim1]);
  }
  return g;
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  return make_view(self, transpose_geometry(self, dim0, dim1));
}

Tensor& transpose_(Tensor& self, int64_t dim0, int64_t dim1) {
  return set_geometry_(self, transpose_geometry(self, dim0, dim1));
}

Tensor expand(const Tensor& self, IntArrayRef size, bool /*implicit*/) {
  const int64_t ndim = static_cast<int64_t>(size.size());
  const int64_t tdim = self.dim();
  TORCH_CHECK(ndim >= tdim, "expand(", tensor_type_string(self), "{", self.sizes(), "}, size=", size,
              "): the number of sizes provided (", ndim, ") must be greater or equal to the number of dimensions "
              "in the tensor (", tdim, ")");
  std::vector<int64_t> sizes(ndim), strides(ndim);
  // From the innermost dim out; new leading dims line up with nothing in self.
  for (int64_t i = ndim - 1; i >= 0; --i) {
    const int64_t src = i - (ndim - tdim);
    int64_t cur = src >= 0 ? self.sizes()[src] : 1;
    int64_t stride = src >= 0 ? self.strides()[src] : (i + 1 < ndim ? sizes[i + 1] * strides[i + 1] : 1);
    int64_t target = size[i];
    if (target == -1) {
      TORCH_CHECK(src >= 0, "The expanded size of the tensor (", target,
                  ") isn't allowed in a leading, non-existing dimension ", i);
      target = cur;
    }
    if (target != cur) {
      TORCH_CHECK(cur == 1, "The expanded size of the tensor (", target, ") must match the existing size (", cur,
                  ") at non-singleton dimension ", i, ".  Target sizes: ", size, ".  Tensor sizes: ", self.sizes());
      cur = target;
      stride = 0;
    }
    sizes[i] = cur;
    strides[i] = stride;
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

ViewGeometry squeeze_geometry(const Tensor& self) {
  ViewGeometry g{{}, {}, self.storage_offset()};
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.sizes()[d] != 1) {
      g.sizes.push_back(self.sizes()[d]);
      g.strides.push_back(self.strides()[d]);
    }
  }
  return g;
}

ViewGeometry squeeze_dim_geometry(const Tensor& self, int64_t dim) {
  const int64_t ndim = self.dim();
  dim = wrap_dim(dim, ndim);
  ViewGeometry g{self.sizes().vec(), self.strides().vec(), self.storage_offset()};
  if (ndim > 0 && g.sizes[dim] == 1) {
    g.sizes.erase(g.sizes.begin() + dim);
    g.strides.erase(g.strides.begin() + dim);
  }
  return g;
}

ViewGeometry unsqueeze_geometry(const Tensor& self, int64_t dim) {
  const int64_t ndim = self.dim();
  dim = wrap_dim(dim, ndim + 1);
  ViewGeometry g{self.sizes().vec(), self.strides().vec(), self.storage_offset()};
  // The new dim steps over the dim it lands before (or over one element at the end).
  int64_t stride = dim >= ndim ? 1 : g.sizes[dim] * g.strides[dim];
  g.sizes.insert(g.sizes.begin() + dim, 1);
  g.strides.insert(g.strides.begin() + dim, stride);
  return g;
}

Tensor squeeze(const Tensor& self) { return make_view(self, squeeze_geometry(self)); }
Tensor& squeeze_(Tensor& self) { return set_geometry_(self, squeeze_geometry(self)); }

Tensor squeeze_dim(const Tensor& self, int64_t dim) { return make_view(self, squeeze_dim_geometry(self, dim)); }
Tensor& squeeze_dim_(Tensor& self, int64_t dim) { return set_geometry_(self, squeeze_dim_geometry(self, dim)); }

Tensor unsqueeze(const Tensor& self, int64_t dim) { return make_view(self, unsqueeze_geometry(self, dim)); }
Tensor& unsqueeze_(Tensor& self, int64_t dim) { return set_geometry_(self, unsqueeze_geometry(self, dim)); }

ViewGeometry select_geometry(const Tensor& self, int64_t dim, int64_t index) {
  const int64_t ndim = self.dim();
  TORCH_CHECK_INDEX(ndim > 0, "select() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, ndim);
  const int64_t size = self.sizes()[dim];
  TORCH_CHECK_INDEX(index >= -size && index < size, "select(): index ", index, " out of range for tensor of size ",
                    self.sizes(), " at dimension ", dim);
  if (index < 0) index += size;
  ViewGeometry g{self.sizes().vec(), self.strides().vec(), self.storage_offset() + index * self.strides()[dim]};
  g.sizes.erase(g.sizes.begin() + dim);
  g.strides.erase(g.strides.begin() + dim);
  return g;
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  return make_view(self, select_geometry(self, dim, index));
}

SliceGeometry slice_geometry(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                             int64_t step) {
  const int64_t ndim = self.dim();
  TORCH_CHECK_INDEX(ndim > 0, "slice() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, ndim);
  TORCH_CHECK(step > 0, "slice step must be positive");
  const int64_t size = self.sizes()[dim];
  // Python's rules: negative bounds count from the end, then both clamp to [0, size]
  // and an end before the start selects nothing.
  int64_t lo = start.value_or(0);
  int64_t hi = end.value_or(std::numeric_limits<int64_t>::max());
  if (lo < 0) lo += size;
  if (hi < 0) hi += size;
  lo = std::clamp<int64_t>(lo, 0, size);
  hi = std::clamp<int64_t>(hi, lo, size);
  SliceGeometry g{{self.sizes().vec(), self.strides().vec(), self.storage_offset() + lo * self.strides()[dim]}, dim, lo,
                  step};
  g.view.sizes[dim] = hi > lo ? (hi - lo - 1) / step + 1 : 0;  // ceil((hi - lo) / step), without overflowing
  g.view.strides[dim] = derived_stride(g.view.strides[dim], step, 0, g.view.sizes[dim], self.itemsize());
  return g;
}

Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  return make_view(self, slice_geometry(self, dim, start, end, step).view);
}

Tensor unfold(const Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  const int64_t ndim = self.dim();
  dimension = wrap_dim(dimension, ndim);
  const int64_t max_size = ndim == 0 ? 1 : self.sizes()[dimension];
  TORCH_CHECK(size <= max_size, "maximum size for tensor at dimension ", dimension, " is ", max_size,
              " but size is ", size);
  TORCH_CHECK(step > 0, "step is ", step, " but must be > 0");
  std::vector<int64_t> sizes = self.sizes().vec(), strides = self.strides().vec();
  sizes.push_back(size);
  strides.push_back(ndim == 0 ? 1 : strides[dimension]);
  if (ndim > 0) {
    int64_t room = 0;  // a size near INT64_MIN would overflow: torch's overflow error then
    TORCH_CHECK(!c10::sub_overflows(sizes[dimension], size, &room),
                "Storage size calculation overflowed with sizes=", IntArrayRef(sizes), " and strides=",
                IntArrayRef(strides));
    sizes[dimension] = room / step + 1;
    strides[dimension] = derived_stride(strides[dimension], step, 0, sizes[dimension], self.itemsize());
  }
  // torch reaches this through as_strided's storage check, whose message it keeps.
  TORCH_CHECK(std::all_of(sizes.begin(), sizes.end(), [](int64_t s) { return s >= 0; }),
              "Storage size calculation overflowed with sizes=", IntArrayRef(sizes),
              " and strides=", IntArrayRef(strides));
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1_, int64_t dim2_) {
  const int64_t ndim = self.dim();
  const int64_t dim1 = wrap_dim(dim1_, ndim);
  const int64_t dim2 = wrap_dim(dim2_, ndim);
  TORCH_CHECK(dim1 != dim2, "diagonal dimensions cannot be identical ", dim1_, ", ", dim2_);
  std::vector<int64_t> sizes = self.sizes().vec(), strides = self.strides().vec();
  const int64_t size1 = sizes[dim1], size2 = sizes[dim2];
  int64_t length = offset >= 0 ? std::min(size1, size2 - offset) : std::min(size1 + offset, size2);
  length = std::max<int64_t>(length, 0);
  int64_t storage_offset = self.storage_offset();
  if (length > 0) storage_offset += offset >= 0 ? offset * strides[dim2] : -offset * strides[dim1];
  const int64_t stride = derived_stride(strides[dim1], 1, strides[dim2], length, self.itemsize());
  for (int64_t d : {std::max(dim1, dim2), std::min(dim1, dim2)}) {
    sizes.erase(sizes.begin() + d);
    strides.erase(strides.begin() + d);
  }
  sizes.push_back(length);
  strides.push_back(stride);
  return make_view(self, sizes, strides, storage_offset);
}

// ---------------------------------------------------------------- copies (CPU, Meta)

Tensor clone(const Tensor& self, std::optional<at::MemoryFormat> memory_format) {
  const auto format = memory_format.value_or(c10::MemoryFormat::Preserve);
  const auto dtype = self.scalar_type();
  const auto device = self.device();
  Tensor out;
  if (format == c10::MemoryFormat::Preserve) {
    // Keep the input's memory order: its very strides when dense, else dense ones in its order.
    out = is_non_overlapping_and_dense(self)  // (an empty tensor keeps its strides, as torch)
              ? make_empty_strided(self.sizes(), self.strides(), dtype, device)
              : make_empty_strided(self.sizes(), infer_dense_strides(self.sizes(), self.strides()), dtype, device);
  } else if (format != c10::MemoryFormat::Contiguous) {
    out = make_empty_strided(self.sizes(), strides_for_memory_format(self.sizes(), format), dtype, device);
  } else {
    out = make_empty(self.sizes(), dtype, device);
  }
  out.copy_(self);
  return out;
}

// ---------------------------------------------------------------- composites

Tensor view_as(const Tensor& self, const Tensor& other) {
  check_sizes_readable(other);
  return self.view(other.sizes());
}

Tensor expand_as(const Tensor& self, const Tensor& other) {
  check_sizes_readable(other);
  return self.expand(other.sizes());
}

std::vector<Tensor> broadcast_tensors(TensorList tensors) {
  c10::DimVector shape;
  for (size_t i = 0; i < tensors.size(); ++i) {
    shape = i == 0 ? c10::DimVector(tensors[i].sizes()) : infer_size_dimvector(shape, tensors[i].sizes());
  }
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(t.expand(shape));
  return out;
}

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  if (self.is_nested()) return nested_reshape(self, shape);
  std::vector<int64_t> size = infer_size(shape, self.numel());
  // an mkldnn tensor has no views: the same shape is itself, another a copy (as torch)
  if (self.is_mkldnn()) return self.sizes() == IntArrayRef(size) ? self : at::_mkldnn_reshape(self, size);
  // A view when the strides allow one, else a contiguous copy (as torch decides).
  if (view_strides(self.sizes(), self.strides(), size, self.numel())) return self.view(size);
  return self.clone(c10::MemoryFormat::Contiguous).view(size);
}

Tensor contiguous(const Tensor& self, at::MemoryFormat memory_format) {
  if (self.is_contiguous(memory_format)) return self;
  TORCH_CHECK(memory_format != c10::MemoryFormat::Preserve,
              "preserve memory format is unsupported by the contiguous operator");
  return self.clone(memory_format);
}

Tensor t(const Tensor& self) {
  TORCH_CHECK(self.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  return self.transpose(0, self.dim() < 2 ? 0 : 1);
}

Tensor& t_(Tensor& self) {
  TORCH_CHECK(self.dim() <= 2, "t_() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  return self.transpose_(0, self.dim() < 2 ? 0 : 1);
}

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  TORCH_CHECK(self.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  const int64_t size = self.size(dim);
  // A negative start counts from the end, wrapped (and checked) like a dim; start == size
  // is a valid empty narrow.
  if (start != size) start = wrap_dim(start, size);
  TORCH_CHECK(length >= 0 && start <= size - length, "start (", start, ") + length (", length,
              ") exceeds dimension size (", size, ").");
  // A sparse tensor has no strides to view through: its narrow is a copy (narrow_copy).
  if (self.is_sparse()) return at::narrow_copy(self, wrap_dim(dim, self.dim()), start, length);
  return at::slice(self, dim, start, start + length, 1);
}

Tensor narrow_copy_dense(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  return at::narrow(self, dim, start, length).clone(c10::MemoryFormat::Contiguous);
}

Tensor narrow_Tensor(const Tensor& self, int64_t dim, const Tensor& start, int64_t length) {
  TORCH_CHECK(start.dim() == 0 && c10::isIntegralType(start.scalar_type(), /*includeBool=*/false),
              "start must be an 0-dim integral Tensor.");
  return at::narrow(self, dim, start.item().toLong(), length);
}

Tensor flatten_using_ints(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  const int64_t ndim = self.dim();
  const int64_t start = wrap_dim(start_dim, ndim);
  const int64_t end = wrap_dim(end_dim, ndim);
  TORCH_CHECK(start <= end, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (ndim == 0) return self.reshape({1});
  if (start == end) return self;
  // The flattened size is the product, not an inferred -1: with zero-size dims a -1 would
  // be ambiguous.
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().begin() + start);
  int64_t product = 1;
  for (int64_t d = start; d <= end; ++d) product *= self.sizes()[d];
  shape.push_back(product);
  shape.insert(shape.end(), self.sizes().begin() + end + 1, self.sizes().end());
  return self.reshape(shape);
}

std::vector<int64_t> unflatten_shape(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  dim = wrap_dim(dim, self.dim());
  TORCH_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  const int64_t size = self.size(dim);
  std::vector<int64_t> inferred;
  if (auto error = try_infer_size(sizes, size, inferred)) {
    switch (error->kind) {
      case ShapeError::Kind::Mismatch:
        if (self.has_names()) {
          const DimnameList names = names_of(self);
          std::ostringstream name;
          name << names[static_cast<size_t>(dim)];
          TORCH_CHECK(false, "unflatten: Provided sizes ", sizes, " don't multiply up to the size of dim ", dim, " (",
                      name.str(), ": ", size, ") in ", c10::tensorNamesToString(names));
        }
        TORCH_CHECK(false, "unflatten: Provided sizes ", sizes, " don't multiply up to the size of dim ", dim, " (",
                    size, ") in the input tensor");
      case ShapeError::Kind::TwoInferred:
        TORCH_CHECK(false, "unflatten got an unexpected error:\n", error->message);
      default:
        TORCH_CHECK(false, error->message);
    }
  }
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().begin() + dim);
  shape.insert(shape.end(), inferred.begin(), inferred.end());
  shape.insert(shape.end(), self.sizes().begin() + dim + 1, self.sizes().end());
  return shape;
}

Tensor unflatten_int(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  dim = wrap_dim(dim, self.dim());
  TORCH_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  TORCH_CHECK(!self.has_names(), "unflatten: input is a named tensor but no names were given for unflattened sizes");
  return self.view(unflatten_shape(self, dim, sizes));
}

std::vector<Tensor> split_Tensor(const Tensor& self, int64_t split_size, int64_t dim) {
  TORCH_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  TORCH_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size=", split_size);
  const int64_t size = self.size(dim);
  TORCH_CHECK(split_size > 0 || size == 0,
              "split_size can only be 0 if dimension size is 0, but got dimension size of ", size);
  // At least one piece (a split_size past the end gives the whole tensor; 0 of 0 gives one
  // empty piece); the last piece takes what is left.
  const int64_t pieces = split_size == 0 ? 1 : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(pieces));
  for (int64_t i = 0; i < pieces; ++i) {
    const int64_t start = i * split_size;
    out.push_back(self.narrow(dim, start, std::min(split_size, size - start)));
  }
  return out;
}

std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  TORCH_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  const int64_t size = self.size(dim);
  std::vector<Tensor> out;
  out.reserve(split_sizes.size());
  int64_t start = 0;
  for (int64_t length : split_sizes) {
    TORCH_CHECK(length >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got "
                "split_sizes=", split_sizes);
    out.push_back(at::slice(self, dim, start, start + length, 1));
    start += length;
  }
  TORCH_CHECK(start == size, "split_with_sizes expects split_sizes to sum exactly to ", size,
              " (input tensor's size at dimension ", dim, "), but got split_sizes=", split_sizes);
  return out;
}

std::vector<Tensor> split_sizes(const Tensor& self, IntArrayRef split_size, int64_t dim) {
  return self.split_with_sizes(split_size, dim);
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  TORCH_CHECK(self.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  TORCH_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  const int64_t size = self.size(dim);
  const int64_t split_size = (size + chunks - 1) / chunks;
  // An empty dim still gives `chunks` empty pieces, which split by size 0 would not.
  if (size == 0) return self.split_with_sizes(std::vector<int64_t>(static_cast<size_t>(chunks), 0), dim);
  return self.split(split_size, dim);
}

std::vector<Tensor> unbind_int(const Tensor& self, int64_t dim) {
  const int64_t size = self.size(dim);  // 0-dim: "Dimension specified as 0 but tensor has no dimensions"
  dim = wrap_dim(dim, self.dim());
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) out.push_back(self.select(dim, i));
  return out;
}

Tensor movedim_intlist(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  TORCH_CHECK(source.size() == destination.size(), "movedim: Invalid source or destination dims: source (", source,
              " dims) should contain the same number of dims as destination (", destination, " dims)");
  const int64_t ndim = self.dim();
  auto normalize = [&](IntArrayRef dims) {
    std::vector<int64_t> out;
    for (int64_t d : dims) out.push_back(wrap_dim(d, ndim));
    return out;
  };
  std::vector<int64_t> src = normalize(source), dst = normalize(destination);
  auto check_unique = [](const std::vector<int64_t>& dims, IntArrayRef raw, const char* what) {
    std::vector<int64_t> sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    TORCH_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "movedim: repeated dim in `", what,
                "` (", raw, ")");
  };
  check_unique(src, source, "source");
  check_unique(dst, destination, "destination");
  if (ndim == 0) return self.permute({});  // dims -1 and 0 both name the scalar's no dims
  return self.permute(movedim_permutation(ndim, src, dst));
}

Tensor movedim_int(const Tensor& self, int64_t source, int64_t destination) {
  return self.movedim(IntArrayRef(source), IntArrayRef(destination));
}

}  // namespace at::inline tessera::native
