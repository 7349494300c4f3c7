// Geometry shared by the view and shape operators (TensorShape.cpp): dimension wrapping,
// shape inference for view/reshape, and the strides a reshape can reuse without copying.
#pragma once

#include <aten/core/TensorUtils.h>

#include <optional>
#include <string>
#include <vector>

namespace at::inline tessera::native {

// make_view(self, sizes, strides, offset) is at::make_view (aten/core/TensorUtils.h).
using at::make_view;

// The geometry a view operator computes: one function per operator serves both its view
// form (make_view) and its in-place form (set_geometry_), on every backend.
struct ViewGeometry {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};
TORCH_API Tensor make_view(const Tensor& self, const ViewGeometry& g);
// Gives self the geometry in place (same storage); returns self. Its version is bumped by
// the ADInplaceOrView kernel, as for every in-place op (kernels never bump versions).
TORCH_API Tensor& set_geometry_(Tensor& self, const ViewGeometry& g);

// The geometry of some views, for backends whose views need more than make_view (a
// per-channel quantized tensor's quantizer follows its channel axis). They check their
// arguments with torch's messages, as the view operators do.
TORCH_API ViewGeometry select_geometry(const Tensor& self, int64_t dim, int64_t index);
struct SliceGeometry {
  ViewGeometry view;
  int64_t dim;    // wrapped
  int64_t start;  // the first index taken, after clamping
  int64_t step;
};
TORCH_API SliceGeometry slice_geometry(const Tensor& self, int64_t dim, std::optional<int64_t> start,
                                       std::optional<int64_t> end, int64_t step);
TORCH_API ViewGeometry squeeze_geometry(const Tensor& self);
TORCH_API ViewGeometry squeeze_dim_geometry(const Tensor& self, int64_t dim);
TORCH_API ViewGeometry unsqueeze_geometry(const Tensor& self, int64_t dim);

// Wraps a possibly negative dim into [0, ndim), raising torch's IndexError otherwise. A
// 0-dim tensor accepts dims -1 and 0, as torch's maybe_wrap_dim does.
TORCH_API int64_t wrap_dim(int64_t dim, int64_t ndim);

// Why a shape cannot be inferred; the message is torch's for that case.
struct ShapeError {
  enum class Kind { TwoInferred, NegativeDim, Ambiguous, Mismatch } kind;
  std::string message;
};

// Resolves one -1 in `shape` so it holds `numel` elements; on failure returns the error
// (torch raises some of these as std::runtime_error, which unflatten rewrites).
TORCH_API std::optional<ShapeError> try_infer_size(IntArrayRef shape, int64_t numel, std::vector<int64_t>& out);
// The shape unflatten gives self when dim becomes `sizes` (one -1 inferred), or torch's
// error for sizes that do not fit (naming the dim when self is named).
TORCH_API std::vector<int64_t> unflatten_shape(const Tensor& self, int64_t dim, IntArrayRef sizes);
// The same, raising RuntimeError with torch's message.
TORCH_API std::vector<int64_t> infer_size(IntArrayRef shape, int64_t numel);

// Strides that view a tensor of (old sizes, old strides) with new sizes without copying,
// or nullopt when some new dimension would span two non-contiguous chunks of the old.
TORCH_API std::optional<std::vector<int64_t>> view_strides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                                           IntArrayRef new_sizes, int64_t numel);

// True when no two elements share memory and the elements fill one dense block (in some
// order of the dimensions), as torch's is_non_overlapping_and_dense.
TORCH_API bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides);

// torch's permutation for movedim: source dims land at destination dims, the rest keep
// their relative order in the free slots.
TORCH_API std::vector<int64_t> movedim_permutation(int64_t ndim, IntArrayRef source, IntArrayRef destination);

}  // namespace at::inline tessera::native
