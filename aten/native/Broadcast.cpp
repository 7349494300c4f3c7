#include <aten/native/Broadcast.h>

namespace at::inline tessera::native {

c10::DimVector infer_size_dimvector(IntArrayRef a, IntArrayRef b) {
  size_t n = std::max(a.size(), b.size());
  c10::DimVector out(n);
  // From the last dimension, so a mismatch is reported where torch reports it.
  for (size_t i = n; i-- > 0;) {
    // Align from the right.
    ptrdiff_t ia = static_cast<ptrdiff_t>(a.size()) - static_cast<ptrdiff_t>(n) + static_cast<ptrdiff_t>(i);
    ptrdiff_t ib = static_cast<ptrdiff_t>(b.size()) - static_cast<ptrdiff_t>(n) + static_cast<ptrdiff_t>(i);
    int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    TORCH_CHECK(sa == sb || sa == 1 || sb == 1, "The size of tensor a (", sa, ") must match the size of tensor b (", sb,
                ") at non-singleton dimension ", i);
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

std::vector<int64_t> infer_size(IntArrayRef a, IntArrayRef b) { return infer_size_dimvector(a, b).vec(); }

namespace {

enum class Rank { Dim, ZeroDim, Wrapped };

Rank rank_of(const Tensor& t) {
  if (t.unsafeGetTensorImpl()->is_wrapped_number()) return Rank::Wrapped;
  return t.dim() == 0 ? Rank::ZeroDim : Rank::Dim;
}

c10::ScalarType promote_skip_undefined(c10::ScalarType a, c10::ScalarType b) {
  if (a == c10::ScalarType::Undefined) return b;
  if (b == c10::ScalarType::Undefined) return a;
  return c10::promoteTypes(a, b);
}

// A lower-ranked result only matters when it is of a higher category than the higher
// rank's, and then lends only its category: float32 with a 0-dim complex128 is complex64.
c10::ScalarType combine(c10::ScalarType higher, c10::ScalarType lower) {
  if (c10::isComplexType(higher)) return higher;
  if (c10::isComplexType(lower)) return c10::isFloatingType(higher) ? c10::toComplexType(higher) : lower;
  if (c10::isFloatingType(higher)) return higher;
  if (higher == c10::ScalarType::Bool || c10::isFloatingType(lower)) return promote_skip_undefined(higher, lower);
  return higher != c10::ScalarType::Undefined ? higher : lower;
}

}  // namespace

static void update_slot(ResultTypeState& state, Rank r, c10::ScalarType dt) {
  if (r == Rank::Wrapped) {
    // A Python float is the default dtype; a Python complex the default complex dtype.
    if (c10::isFloatingType(dt)) dt = c10::get_default_dtype();
    if (c10::isComplexType(dt)) dt = c10::get_default_complex_dtype();
  }
  auto& slot = state.by_rank[static_cast<int>(r)];
  slot = promote_skip_undefined(slot, dt);
}

void update_result_type_state(ResultTypeState& state, const Tensor& t) {
  if (t.defined()) update_slot(state, rank_of(t), t.scalar_type());
}

void update_result_type_state(ResultTypeState& state, const c10::Scalar& s) {
  update_slot(state, Rank::Wrapped, s.type());
}

c10::ScalarType result_type(const ResultTypeState& state) {
  return combine(state.by_rank[0], combine(state.by_rank[1], state.by_rank[2]));
}

c10::ScalarType result_type(const Tensor& a, const Tensor& b) {
  ResultTypeState state;
  update_result_type_state(state, a);
  update_result_type_state(state, b);
  return result_type(state);
}

std::vector<int64_t> broadcast_strides(const Tensor& t, IntArrayRef sizes) {
  std::vector<int64_t> out(sizes.size(), 0);
  size_t offset = sizes.size() - static_cast<size_t>(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) {
    out[offset + d] = t.size(d) == 1 ? 0 : t.stride(d);
  }
  return out;
}

}  // namespace at::inline tessera::native
