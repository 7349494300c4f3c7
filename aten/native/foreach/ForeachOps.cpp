// Multi-tensor (foreach) operators: one call applies an operator across lists of tensors,
// as the optimizers' update loops need. Each is a composite over the per-tensor operator
// (torch's CPU path does the same), so autograd, Meta and every dtype come from those;
// the win is one dispatch from Python instead of one per parameter. Adam's update fuses
// further in FusedOptimizers.cpp.
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <vector>

namespace at::inline tessera::native {

namespace {

// torch's check_foreach_api_restrictions: a non-empty list, and equal lengths for the others.
void check_lists(const char* op, TensorList self) {
  TORCH_CHECK(!self.empty(), op, ": Tensor list must have at least one tensor.");
}

void check_lists(const char* op, TensorList self, TensorList other) {
  check_lists(op, self);
  TORCH_CHECK(self.size() == other.size(), op, ": Tensor lists must have the same number of tensors, got ",
              self.size(), " and ", other.size(), ".");
}

void check_lists(const char* op, TensorList self, TensorList a, TensorList b) {
  check_lists(op, self, a);
  check_lists(op, self, b);
}

template <typename F>
std::vector<Tensor> map_each(TensorList self, F f) {
  std::vector<Tensor> out;
  out.reserve(self.size());
  for (size_t i = 0; i < self.size(); ++i) out.push_back(f(i));
  return out;
}

}  // namespace

// ---------------------------------------------------------------- binary with a Scalar or a list

#define TESSERA_FOREACH_SCALAR(NAME)                                                        \
  std::vector<Tensor> _foreach_##NAME##_Scalar(TensorList self, const Scalar& scalar) {     \
    check_lists("_foreach_" #NAME, self);                                                   \
    return map_each(self, [&](size_t i) { return at::NAME(self[i], scalar); });             \
  }                                                                                         \
  void _foreach_##NAME##__Scalar(TensorList self, const Scalar& scalar) {                   \
    check_lists("_foreach_" #NAME "_", self);                                               \
    for (const Tensor& t : self) t.NAME##_(scalar);                                         \
  }

#define TESSERA_FOREACH_LIST_ALPHA(NAME)                                                    \
  std::vector<Tensor> _foreach_##NAME##_List(TensorList self, TensorList other, const Scalar& alpha) { \
    check_lists("_foreach_" #NAME, self, other);                                            \
    return map_each(self, [&](size_t i) { return at::NAME(self[i], other[i], alpha); });   \
  }                                                                                         \
  void _foreach_##NAME##__List(TensorList self, TensorList other, const Scalar& alpha) {    \
    check_lists("_foreach_" #NAME "_", self, other);                                        \
    for (size_t i = 0; i < self.size(); ++i) self[i].NAME##_(other[i], alpha);              \
  }

#define TESSERA_FOREACH_LIST(NAME)                                                          \
  std::vector<Tensor> _foreach_##NAME##_List(TensorList self, TensorList other) {           \
    check_lists("_foreach_" #NAME, self, other);                                            \
    return map_each(self, [&](size_t i) { return at::NAME(self[i], other[i]); });          \
  }                                                                                         \
  void _foreach_##NAME##__List(TensorList self, TensorList other) {                         \
    check_lists("_foreach_" #NAME "_", self, other);                                        \
    for (size_t i = 0; i < self.size(); ++i) self[i].NAME##_(other[i]);                     \
  }

TESSERA_FOREACH_SCALAR(add)
TESSERA_FOREACH_SCALAR(sub)
TESSERA_FOREACH_SCALAR(mul)
TESSERA_FOREACH_SCALAR(div)
TESSERA_FOREACH_LIST_ALPHA(add)
TESSERA_FOREACH_LIST_ALPHA(sub)
TESSERA_FOREACH_LIST(mul)
TESSERA_FOREACH_LIST(div)

// maximum / minimum have no in-place operator of their own: the out= form writes self.
#define TESSERA_FOREACH_MINMAX(NAME)                                                        \
  std::vector<Tensor> _foreach_##NAME##_List(TensorList self, TensorList other) {           \
    check_lists("_foreach_" #NAME, self, other);                                            \
    return map_each(self, [&](size_t i) { return at::NAME(self[i], other[i]); });          \
  }                                                                                         \
  void _foreach_##NAME##__List(TensorList self, TensorList other) {                         \
    check_lists("_foreach_" #NAME "_", self, other);                                        \
    for (size_t i = 0; i < self.size(); ++i) {                                              \
      Tensor out = self[i];                                                                 \
      at::NAME##_out(out, self[i], other[i]);                                               \
    }                                                                                       \
  }

TESSERA_FOREACH_MINMAX(maximum)
TESSERA_FOREACH_MINMAX(minimum)

// ---------------------------------------------------------------- pointwise with two lists

#define TESSERA_FOREACH_POINTWISE(NAME)                                                     \
  std::vector<Tensor> _foreach_##NAME##_Scalar(TensorList self, TensorList tensor1, TensorList tensor2, \
                                               const Scalar& value) {                       \
    check_lists("_foreach_" #NAME, self, tensor1, tensor2);                                 \
    return map_each(self, [&](size_t i) { return at::NAME(self[i], tensor1[i], tensor2[i], value); }); \
  }                                                                                         \
  void _foreach_##NAME##__Scalar(TensorList self, TensorList tensor1, TensorList tensor2, const Scalar& value) { \
    check_lists("_foreach_" #NAME "_", self, tensor1, tensor2);                             \
    for (size_t i = 0; i < self.size(); ++i) self[i].NAME##_(tensor1[i], tensor2[i], value); \
  }

TESSERA_FOREACH_POINTWISE(addcmul)
TESSERA_FOREACH_POINTWISE(addcdiv)

std::vector<Tensor> _foreach_lerp_Scalar(TensorList self, TensorList tensors1, const Scalar& weight) {
  check_lists("_foreach_lerp", self, tensors1);
  return map_each(self, [&](size_t i) { return at::lerp(self[i], tensors1[i], weight); });
}

void _foreach_lerp__Scalar(TensorList self, TensorList tensors1, const Scalar& weight) {
  check_lists("_foreach_lerp_", self, tensors1);
  for (size_t i = 0; i < self.size(); ++i) self[i].lerp_(tensors1[i], weight);
}

std::vector<Tensor> _foreach_lerp_List(TensorList self, TensorList tensors1, TensorList weights) {
  check_lists("_foreach_lerp", self, tensors1, weights);
  return map_each(self, [&](size_t i) { return at::lerp(self[i], tensors1[i], weights[i]); });
}

void _foreach_lerp__List(TensorList self, TensorList tensors1, TensorList weights) {
  check_lists("_foreach_lerp_", self, tensors1, weights);
  for (size_t i = 0; i < self.size(); ++i) self[i].lerp_(tensors1[i], weights[i]);
}

// ---------------------------------------------------------------- reductions and unary

std::vector<Tensor> _foreach_norm_Scalar(TensorList self, const Scalar& ord) {
  check_lists("_foreach_norm", self);
  return map_each(self, [&](size_t i) { return at::linalg_vector_norm(self[i], ord); });
}

void _foreach_zero_(TensorList self) {
  check_lists("_foreach_zero_", self);
  for (const Tensor& t : self) t.zero_();
}

#define TESSERA_FOREACH_UNARY(NAME)                                                         \
  std::vector<Tensor> _foreach_##NAME(TensorList self) {                                    \
    check_lists("_foreach_" #NAME, self);                                                   \
    return map_each(self, [&](size_t i) { return at::NAME(self[i]); });                     \
  }                                                                                         \
  void _foreach_##NAME##_(TensorList self) {                                                \
    check_lists("_foreach_" #NAME "_", self);                                               \
    for (const Tensor& t : self) t.NAME##_();                                               \
  }

TESSERA_FOREACH_UNARY(abs)
TESSERA_FOREACH_UNARY(acos)
TESSERA_FOREACH_UNARY(asin)
TESSERA_FOREACH_UNARY(atan)
TESSERA_FOREACH_UNARY(ceil)
TESSERA_FOREACH_UNARY(cos)
TESSERA_FOREACH_UNARY(cosh)
TESSERA_FOREACH_UNARY(erf)
TESSERA_FOREACH_UNARY(erfc)
TESSERA_FOREACH_UNARY(exp)
TESSERA_FOREACH_UNARY(expm1)
TESSERA_FOREACH_UNARY(floor)
TESSERA_FOREACH_UNARY(frac)
TESSERA_FOREACH_UNARY(lgamma)
TESSERA_FOREACH_UNARY(log)
TESSERA_FOREACH_UNARY(log10)
TESSERA_FOREACH_UNARY(log1p)
TESSERA_FOREACH_UNARY(log2)
TESSERA_FOREACH_UNARY(neg)
TESSERA_FOREACH_UNARY(reciprocal)
TESSERA_FOREACH_UNARY(round)
TESSERA_FOREACH_UNARY(sigmoid)
TESSERA_FOREACH_UNARY(sin)
TESSERA_FOREACH_UNARY(sinh)
TESSERA_FOREACH_UNARY(sqrt)
TESSERA_FOREACH_UNARY(tan)
TESSERA_FOREACH_UNARY(tanh)
TESSERA_FOREACH_UNARY(trunc)

}  // namespace at::inline tessera::native
