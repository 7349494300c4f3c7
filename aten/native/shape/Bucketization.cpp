// searchsorted: for each input value, the index where it would go in a sorted sequence
// (the last dim of sorted_sequence; leading dims pair up with the input's). Left side finds
// the first element not below the value, right side the first element above it; both
// bisections move right past NaN on either side, so NaN values land at the end, as torch's.
// An optional sorter gives the order of an unsorted sequence. bucketize and isin are written
// over it.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/elementwise/BinaryOps.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera::native {

namespace {

constexpr const char* kOp = "torch.searchsorted(): ";

bool resolve_right(bool right, std::optional<std::string_view> side) {
  if (!side) return right;
  TORCH_CHECK(*side == "left" || *side == "right", kOp, "side can only be 'left' or 'right' but got ", *side);
  TORCH_CHECK(!(*side == "left" && right), kOp, "side and right can't be set to opposites, got side of left while right ",
              "was True");
  return *side == "right";
}

void check_inputs(const Tensor& seq, const Tensor& self, const std::optional<Tensor>& sorter) {
  TORCH_CHECK(seq.dim() > 0, kOp, "boundaries tensor should have positive dimension, but got 0 dimension");
  if (seq.dim() > 1) {
    bool match = seq.dim() == self.dim();
    for (int64_t d = 0; match && d + 1 < seq.dim(); ++d) match = seq.size(d) == self.size(d);
    TORCH_CHECK(match, kOp, "boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor ",
                "and input value tensor must match, but we got boundaries tensor ", seq.sizes(),
                " and input value tensor ", self.sizes());
  }
  if (sorter && sorter->defined()) {
    TORCH_CHECK(sorter->scalar_type() == c10::kLong, kOp, "sorter must be a tensor of long dtype but got dtype ",
                sorter->scalar_type());
    TORCH_CHECK(sorter->sizes().equals(seq.sizes()), kOp, "boundary and sorter must have the same size, but got ",
                "boundary tensor ", seq.sizes(), "and got sorter tensor ", sorter->sizes());
  }
}

// First position p in [0, n) whose element fails "goes before the value", or n.
template <typename O, typename Get>
int64_t bisect(int64_t n, O value, bool right, const Get& at) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const O m = at(mid);
    const bool before = right ? !(m > value) : !(m >= value);
    if (before) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

Tensor searchsorted_impl(const Tensor& seq, const Tensor& self, bool out_int32, bool right,
                         std::optional<std::string_view> side, const std::optional<Tensor>& sorter, bool meta) {
  check_inputs(seq, self, sorter);
  const bool use_right = resolve_right(right, side);
  Tensor out = make_empty(self.sizes(), out_int32 ? c10::kInt : c10::kLong, self.device());
  const c10::ScalarType common = native::result_type(seq, self);
  if (common == c10::kBool || c10::isComplexType(common)) dtype_not_implemented("searchsorted_out_cpu", common);
  if (meta || out.numel() == 0) return out;
  if (sorter && sorter->defined() && seq.numel() > 0) {
    const int64_t n = seq.numel();
    Tensor dense = sorter->contiguous();
    const int64_t* s = dense.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      TORCH_CHECK(s[i] >= 0 && s[i] < seq.size(-1), kOp, "sorter index out of range");
    }
  }
  Tensor bounds = seq.to(common).contiguous();
  Tensor values = self.to(common).contiguous();
  Tensor order = sorter && sorter->defined() ? sorter->contiguous() : Tensor();
  const int64_t n = bounds.size(-1);
  const int64_t per_row = bounds.dim() == 1 ? values.numel() : (self.dim() == 0 ? 1 : self.size(-1));
  dispatch_types<kIntegral | kFloating | kReducedFloat>(common, "searchsorted_out_cpu", [&]<typename T>() {
    using O = opmath_t<T>;
    const T* b = bounds.data_ptr<T>();
    const T* v = values.data_ptr<T>();
    const int64_t* srt = order.defined() ? order.data_ptr<int64_t>() : nullptr;
    parallel_for(0, values.numel(), 2048, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const int64_t row = bounds.dim() == 1 ? 0 : i / per_row;
        const T* r = b + row * n;
        const int64_t* sr = srt ? srt + row * n : nullptr;
        const int64_t p = sr ? bisect<O>(n, O(v[i]), use_right, [&](int64_t k) { return O(r[sr[k]]); })
                             : bisect<O>(n, O(v[i]), use_right, [&](int64_t k) { return O(r[k]); });
        if (out_int32) out.data_ptr<int32_t>()[i] = static_cast<int32_t>(p);
        else out.data_ptr<int64_t>()[i] = p;
      }
    });
  });
  return out;
}

}  // namespace

Tensor searchsorted_cpu(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                        std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  return searchsorted_impl(sorted_sequence, self, out_int32, right, side, sorter, false);
}
Tensor searchsorted_meta(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                         std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  return searchsorted_impl(sorted_sequence, self, out_int32, right, side, sorter, true);
}

Tensor& searchsorted_out(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                         std::optional<std::string_view> side, const std::optional<Tensor>& sorter, Tensor& out) {
  // torch insists on the index dtype rather than casting into out
  const c10::ScalarType want = out_int32 ? c10::kInt : c10::kLong;
  TORCH_CHECK(out.scalar_type() == want, kOp, "output tensor's dtype is wrong, it can only be Int(int32) or ",
              "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype ",
              out.scalar_type(), " and out_int32 flag is ", out_int32 ? "True" : "False");
  Tensor result = at::searchsorted(sorted_sequence, self, out_int32, right, side, sorter);
  resize_out_sizes(out, result.sizes(), "searchsorted");
  out.copy_(result);
  return out;
}

// A Scalar value: only with a 1-D sequence; the result is 0-dim.
Tensor searchsorted_Scalar(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                           std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  TORCH_CHECK(sorted_sequence.dim() == 1, kOp, "input value can be a scalar only when boundaries tensor dimension is ",
              "1, but we got boundaries tensor dim(", sorted_sequence.dim(), ") and input value's dim(0) numel(1)");
  // a wrapped number, so it promotes like a Python number (2.5 into an int sequence: float)
  Tensor value = wrapped_scalar_tensor(self, sorted_sequence.device());
  return at::searchsorted(sorted_sequence, value, out_int32, right, side, sorter);
}
Tensor& searchsorted_Scalar_out(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                                std::optional<std::string_view> side, const std::optional<Tensor>& sorter, Tensor& out) {
  Tensor result = searchsorted_Scalar(sorted_sequence, self, out_int32, right, side, sorter);
  resize_out_sizes(out, result.sizes(), "searchsorted");
  out.copy_(result);
  return out;
}

// ---- bucketize and isin, over searchsorted

Tensor bucketize_Tensor(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return at::searchsorted(boundaries, self, out_int32, right, std::nullopt, std::nullopt);
}
Tensor bucketize_Scalar(const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return at::searchsorted(boundaries, self, out_int32, right, std::nullopt, std::nullopt);
}

// Whether each element occurs in test_elements: a bisection into their sorted values.
Tensor isin_Tensor_Tensor(const Tensor& elements, const Tensor& test_elements, bool assume_unique, bool invert) {
  const c10::ScalarType common = c10::promoteTypes(elements.scalar_type(), test_elements.scalar_type());
  const Tensor e = elements.to(common), sorted = std::get<0>(test_elements.to(common).reshape({-1}).sort());
  Tensor found;
  if (sorted.numel() == 0) {
    found = at::zeros(elements.sizes(), TensorOptions().dtype(c10::kBool).device(elements.device()));
  } else {
    const Tensor at_ = at::clamp_max(at::searchsorted(sorted, e, false, false, std::nullopt, std::nullopt),
                                     sorted.numel() - 1);
    found = sorted.index_select(0, at_.reshape({-1})).reshape(elements.sizes()).eq(e);
  }
  return invert ? found.logical_not() : found;
}
Tensor isin_Tensor_Scalar(const Tensor& elements, const Scalar& test_element, bool assume_unique, bool invert) {
  return at::isin(elements, wrapped_scalar_tensor(test_element, elements.device()), assume_unique, invert);
}
Tensor isin_Scalar_Tensor(const Scalar& element, const Tensor& test_elements, bool assume_unique, bool invert) {
  return at::isin(wrapped_scalar_tensor(element, test_elements.device()), test_elements, assume_unique, invert);
}

}  // namespace at::inline tessera::native
