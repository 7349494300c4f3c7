// Reductions: sum, nansum, prod, mean, amax, amin, any, all, count_nonzero, trace. Shape
// functions serve Meta and CPU; the CPU kernels fill an accumulator of the reduction's
// dtype through make_reduction (kernels in cpu/ReduceOpsKernel.cpp) and cast it into the
// result.
#include <aten/core/Dispatch.h>
#include <aten/native/MetaFunctions.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/elementwise/BinaryOps.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/named/NameInference.h>
#include <aten/native/reduce/ReduceOps.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/native/sparse/SparseUtils.h>
#include <aten/ops/Functions.h>

#include <limits>

namespace at::inline tessera {

namespace native {

std::vector<bool> reduction_mask(std::optional<IntArrayRef> dims, int64_t ndim) {
  std::vector<bool> mask(static_cast<size_t>(ndim), false);
  if (!dims || dims->empty()) {
    mask.assign(mask.size(), true);
    return mask;
  }
  bool scalar_dim_seen = false;  // dims 0 and -1 both name the one "dim" of a 0-dim tensor
  for (int64_t d : *dims) {
    int64_t w = wrap_dim(d, ndim);
    if (ndim == 0) {
      TORCH_CHECK(!scalar_dim_seen, "dim ", w, " appears multiple times in the list of dims");
      scalar_dim_seen = true;
      continue;
    }
    TORCH_CHECK(!mask[static_cast<size_t>(w)], "dim ", w, " appears multiple times in the list of dims");
    mask[static_cast<size_t>(w)] = true;
  }
  return mask;
}

std::vector<int64_t> reduced_sizes(IntArrayRef sizes, const std::vector<bool>& mask, bool keepdim) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask[d]) out.push_back(sizes[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

void check_nonempty_reduction(const Tensor& self, std::optional<IntArrayRef> dims, const char* op) {
  if (self.numel() != 0) return;
  TORCH_CHECK(dims && !dims->empty(), op, "(): Expected reduction dim to be specified for input.numel() == 0. ",
              "Specify the reduction dim with the 'dim' argument.");
  for (int64_t d : *dims) {
    int64_t w = wrap_dim(d, self.dim());
    TORCH_CHECK_INDEX(self.dim() == 0 || self.size(w) != 0, op, "(): Expected reduction dim ", w,
                      " to have non-zero size.");
  }
}

TensorIterator make_reduction(const Tensor& acc, const Tensor& input, const std::vector<bool>& mask, bool keepdim) {
  // The accumulator seen with the input's rank: each reduced dim has stride 0.
  std::vector<int64_t> strides(mask.size(), 0);
  int64_t k = 0;
  for (size_t d = 0; d < mask.size(); ++d) {
    if (!mask[d]) strides[d] = acc.stride(k++);
    else if (keepdim) ++k;
  }
  Tensor view = make_view(acc, input.sizes(), strides, acc.storage_offset());
  return TensorIteratorConfig()
      .is_reduction(true)
      .resize_outputs(false)
      .check_all_same_dtype(false)
      .add_output(view)
      .add_input(input)
      .op_name("reduction")
      .build();
}

DimBlocks blocks_along(const Tensor& self, int64_t dim) {
  std::vector<bool> mask(static_cast<size_t>(self.dim()), false);
  if (self.dim() > 0) mask[static_cast<size_t>(wrap_dim(dim, self.dim()))] = true;
  return blocks_along(self, mask);
}

DimBlocks blocks_along(const Tensor& self, const std::vector<bool>& mask) {
  DimBlocks b;
  const int64_t ndim = self.dim();
  int64_t first = ndim, last = -1;
  for (int64_t d = 0; d < ndim; ++d) {
    if (mask[static_cast<size_t>(d)]) {
      first = std::min(first, d);
      last = d;
    }
  }
  bool run = last < 0 || self.is_contiguous();
  for (int64_t d = first; run && d <= last; ++d) run = mask[static_cast<size_t>(d)] || self.size(d) == 1;
  if (run) {
    // The reduced dims are one run of a contiguous tensor: no copy.
    b.data = self;
    for (int64_t d = 0; d < ndim; ++d) {
      (d < first ? b.outer : d <= last ? b.n : b.inner) *= self.size(d);
    }
    return b;
  }
  std::vector<int64_t> order;
  for (int64_t d = 0; d < ndim; ++d) {
    if (!mask[static_cast<size_t>(d)]) {
      order.push_back(d);
      b.outer *= self.size(d);
    }
  }
  for (int64_t d = 0; d < ndim; ++d) {
    if (mask[static_cast<size_t>(d)]) {
      order.push_back(d);
      b.n *= self.size(d);
    }
  }
  b.data = self.permute(order).contiguous();
  return b;
}

DEFINE_DISPATCH(sum_stub);
DEFINE_DISPATCH(nansum_stub);
DEFINE_DISPATCH(sum_of_squares_stub);
DEFINE_DISPATCH(prod_stub);
DEFINE_DISPATCH(amax_stub);
DEFINE_DISPATCH(amin_stub);
DEFINE_DISPATCH(and_stub);
DEFINE_DISPATCH(or_stub);
DEFINE_DISPATCH(var_mean_stub);

}  // namespace native

namespace {

// sum and prod: integers and bools accumulate in int64 unless dtype= says otherwise.
c10::ScalarType sum_dtype(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  if (dtype) return *dtype;
  return c10::isIntegralType(self.scalar_type(), true) ? c10::kLong : self.scalar_type();
}

// The dtype a kernel accumulates in: float for Half and BFloat16.
c10::ScalarType accumulate_dtype(c10::ScalarType t) {
  return t == c10::kHalf || t == c10::kBFloat16 ? c10::kFloat : t;
}

// any/all give uint8 for uint8 inputs, else bool.
c10::ScalarType logical_dtype(const Tensor& self) {
  return self.scalar_type() == c10::kByte ? c10::kByte : c10::kBool;
}

meta::TensorMeta reduction_meta(const Tensor& self, std::optional<IntArrayRef> dims, bool keepdim,
                                c10::ScalarType dtype) {
  return meta::TensorMeta{native::reduced_sizes(self.sizes(), native::reduction_mask(dims, self.dim()), keepdim),
                          dtype};
}

std::optional<IntArrayRef> one_dim(const int64_t& dim) { return IntArrayRef(&dim, 1); }

// Folds self into out: the input converted to `acc_dtype`, an accumulator of that dtype
// starting at `identity`, then cast into out (which may be a user's out= tensor).
template <typename Stub>
void run_reduction(Stub& stub, const Tensor& self, std::optional<IntArrayRef> dims, bool keepdim, const Tensor& out,
                   c10::ScalarType acc_dtype, const c10::Scalar& identity) {
  const std::vector<bool> mask = native::reduction_mask(dims, self.dim());
  Tensor input = self.scalar_type() == acc_dtype ? self : self.to(acc_dtype);
  Tensor acc = out.scalar_type() == acc_dtype ? out : at::make_empty(out.sizes(), acc_dtype, out.device());
  acc.fill_(identity);
  if (input.numel() != 0) {
    TensorIterator iter = native::make_reduction(acc, input, mask, keepdim);
    stub(c10::DeviceType::CPU, iter);
  }
  if (!acc.is_same(out)) out.copy_(acc);
}

}  // namespace

namespace meta {

TensorMeta sum_IntList(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                       std::optional<c10::ScalarType> dtype) {
  return reduction_meta(self, dim, keepdim, sum_dtype(self, dtype));
}

TensorMeta nansum(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                  std::optional<c10::ScalarType> dtype) {
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "nansum does not support complex inputs");
  return reduction_meta(self, dim, keepdim, sum_dtype(self, dtype));
}

TensorMeta prod_int(const Tensor& self, int64_t dim, bool keepdim, std::optional<c10::ScalarType> dtype) {
  return reduction_meta(self, one_dim(dim), keepdim, sum_dtype(self, dtype));
}

static TensorMeta extremum_meta(const Tensor& self, IntArrayRef dim, bool keepdim, const char* op) {
  std::optional<IntArrayRef> dims(dim);
  native::check_nonempty_reduction(self, dims, op);
  return reduction_meta(self, dims, keepdim, self.scalar_type());
}

TensorMeta amax(const Tensor& self, IntArrayRef dim, bool keepdim) { return extremum_meta(self, dim, keepdim, "amax"); }
TensorMeta amin(const Tensor& self, IntArrayRef dim, bool keepdim) { return extremum_meta(self, dim, keepdim, "amin"); }

TensorMeta any(const Tensor& self, int64_t dim, bool keepdim) {
  return reduction_meta(self, one_dim(dim), keepdim, logical_dtype(self));
}
TensorMeta all(const Tensor& self, int64_t dim, bool keepdim) {
  return reduction_meta(self, one_dim(dim), keepdim, logical_dtype(self));
}
TensorMeta any_all(const Tensor& self) { return reduction_meta(self, std::nullopt, false, logical_dtype(self)); }
TensorMeta all_all(const Tensor& self) { return reduction_meta(self, std::nullopt, false, logical_dtype(self)); }

}  // namespace meta

namespace native {

void sum_out_cpu(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                 std::optional<c10::ScalarType> dtype, const Tensor& out) {
  run_reduction(sum_stub, self, dim, keepdim, out, accumulate_dtype(sum_dtype(self, dtype)), 0);
}

Tensor sum_of_squares_cpu(const Tensor& self, std::optional<IntArrayRef> dims, bool keepdim) {
  TORCH_INTERNAL_ASSERT(self.device().is_cpu() && c10::isFloatingType(self.scalar_type()) &&
                        self.scalar_type() != c10::kHalf && self.scalar_type() != c10::kBFloat16);
  const std::vector<bool> mask = reduction_mask(dims, self.dim());
  Tensor acc = at::make_empty(reduced_sizes(self.sizes(), mask, keepdim), self.scalar_type(), self.device());
  acc.fill_(0);
  if (self.numel() != 0) {
    TensorIterator iter = make_reduction(acc, self, mask, keepdim);
    sum_of_squares_stub(c10::DeviceType::CPU, iter);
  }
  return acc;
}

void nansum_out_cpu(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype, const Tensor& out) {
  c10::ScalarType acc = accumulate_dtype(sum_dtype(self, dtype));
  run_reduction(c10::isFloatingType(acc) ? nansum_stub : sum_stub, self, dim, keepdim, out, acc, 0);
}

void prod_out_cpu(const Tensor& self, int64_t dim, bool keepdim, std::optional<c10::ScalarType> dtype,
                  const Tensor& out) {
  run_reduction(prod_stub, self, one_dim(dim), keepdim, out, accumulate_dtype(sum_dtype(self, dtype)), 1);
}

// amax starts from the dtype's lowest value (amin from its highest), which every element
// replaces or equals; floating types start from -inf (inf), and NaNs win in the kernel.
static c10::Scalar extreme_of(c10::ScalarType t, bool lowest) {
  return dispatch_types<kIntegral | kBoolType | kFloating | kReducedFloat>(
      t, lowest ? "amax" : "amin", [&]<typename T>() -> c10::Scalar {
        if constexpr (std::is_same_v<T, bool>) {
          return c10::Scalar(!lowest);
        } else if constexpr (std::is_integral_v<T>) {
          return c10::Scalar(static_cast<int64_t>(lowest ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max()));
        } else {
          return c10::Scalar(lowest ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
        }
      });
}

void amax_out_cpu(const Tensor& self, IntArrayRef dim, bool keepdim, const Tensor& out) {
  if (self.numel() == 0) return;  // the shape function allowed it: the result is empty too
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "\"max_values_cpu\" not implemented for '",
              self.scalar_type(), "'");
  run_reduction(amax_stub, self, std::optional<IntArrayRef>(dim), keepdim, out, self.scalar_type(),
                extreme_of(self.scalar_type(), true));
}

void amin_out_cpu(const Tensor& self, IntArrayRef dim, bool keepdim, const Tensor& out) {
  if (self.numel() == 0) return;
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "\"min_values_cpu\" not implemented for '",
              self.scalar_type(), "'");
  run_reduction(amin_stub, self, std::optional<IntArrayRef>(dim), keepdim, out, self.scalar_type(),
                extreme_of(self.scalar_type(), false));
}

static void logical_reduce(bool is_any, const Tensor& self, std::optional<IntArrayRef> dims, bool keepdim,
                           const Tensor& out) {
  Tensor truth = self.scalar_type() == c10::kBool ? self : at::ne(self, 0);
  run_reduction(is_any ? or_stub : and_stub, truth, dims, keepdim, out, c10::kBool, !is_any);
}

void any_out_cpu(const Tensor& self, int64_t dim, bool keepdim, const Tensor& out) {
  logical_reduce(true, self, one_dim(dim), keepdim, out);
}
void all_out_cpu(const Tensor& self, int64_t dim, bool keepdim, const Tensor& out) {
  logical_reduce(false, self, one_dim(dim), keepdim, out);
}
void any_all_out_cpu(const Tensor& self, const Tensor& out) { logical_reduce(true, self, std::nullopt, false, out); }
void all_all_out_cpu(const Tensor& self, const Tensor& out) { logical_reduce(false, self, std::nullopt, false, out); }

// ---- composites

// The sum of a broadcast result back to the shape it was broadcast from: summed over the
// leading dims it lacks and keepdim-summed over its size-1 dims (autograd's broadcast rule).
Tensor sum_to_size(const Tensor& self, IntArrayRef size) {
  IntArrayRef shape = self.sizes();
  bool expandable = size.size() <= shape.size();
  for (size_t i = 0; expandable && i < size.size(); ++i) {
    int64_t s = size[size.size() - 1 - i], d = shape[shape.size() - 1 - i];
    expandable = s == d || s == 1;
  }
  TORCH_CHECK(expandable, "size {", size, "} is not expandable to size {", shape, "}.");
  // (a COO grad keeps its layout, even summed to a 0-dim shape)
  if (self.layout() == c10::kSparse) return sparse::sum_coo_to_size(self, size);
  // An empty size is a full sum, even of a 0-dim tensor (its integers promote to int64),
  // as torch's sum_to does.
  if (size.empty()) return at::sum(self, std::optional<c10::ScalarType>());
  int64_t lead = static_cast<int64_t>(shape.size() - size.size());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < lead; ++i) dims.push_back(i);
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == 1 && shape[static_cast<size_t>(lead) + i] != 1) dims.push_back(lead + static_cast<int64_t>(i));
  }
  Tensor result = dims.empty() ? self : at::sum(self, IntArrayRef(dims), /*keepdim=*/true);
  return lead > 0 || result.dim() != static_cast<int64_t>(size.size()) ? result.view(size) : result;
}

Tensor sum(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  return at::sum(self, std::optional<IntArrayRef>(), false, dtype);
}
Tensor& sum_out(const Tensor& self, std::optional<c10::ScalarType> dtype, Tensor& out) {
  return at::sum_out(out, self, std::optional<IntArrayRef>(), false, dtype);
}

Tensor prod(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  if (C10_UNLIKELY(named::names_pending(self))) {  // a full reduction: no names left
    NoNamesGuard guard;
    return named::named_result(native::prod(self, dtype), {});
  }
  // All dims: over the flattened tensor (prod has no dim-list overload).
  return at::prod(self.reshape({-1}), 0, false, dtype);
}
Tensor& prod_out(const Tensor& self, std::optional<c10::ScalarType> dtype, Tensor& out) {
  return at::prod_out(out, self.reshape({-1}), 0, false, dtype);
}

static int64_t reduced_count(const Tensor& self, std::optional<IntArrayRef> dim) {
  const std::vector<bool> mask = reduction_mask(dim, self.dim());
  int64_t n = 1;
  for (size_t d = 0; d < mask.size(); ++d) n *= mask[d] ? self.size(static_cast<int64_t>(d)) : 1;
  return n;
}

static c10::ScalarType mean_dtype(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  c10::ScalarType t = dtype.value_or(self.scalar_type());
  TORCH_CHECK(c10::isFloatingType(t) || c10::isComplexType(t),
              "mean(): could not infer output dtype. ", dtype ? "Optional" : "Input",
              " dtype must be either a floating point or complex dtype. Got: ", t);
  return t;
}

Tensor mean_dim(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                std::optional<c10::ScalarType> dtype) {
  c10::ScalarType t = mean_dtype(self, dtype);
  return at::sum(self, dim, keepdim, t).div_(wrapped_scalar_tensor(reduced_count(self, dim)));
}
Tensor mean(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  // a quantized self has its own mean.dim kernel; a dense one stays on this call path
  if (self.is_quantized()) return at::mean(self, std::optional<IntArrayRef>(), false, dtype);
  return mean_dim(self, std::nullopt, false, dtype);
}
Tensor& mean_out(const Tensor& self, std::optional<IntArrayRef> dim, bool keepdim,
                 std::optional<c10::ScalarType> dtype, Tensor& out) {
  // torch 1.13 returns a new tensor here and leaves out untouched: refused rather than ignored
  TORCH_CHECK_NOT_IMPLEMENTED(!self.is_quantized(), "mean(out=) of a quantized tensor is not supported: call mean "
                              "without out= (torch 1.13 ignores out= for quantized tensors)");
  c10::ScalarType t = mean_dtype(self, dtype);
  at::sum_out(out, self, dim, keepdim, t);
  return out.div_(wrapped_scalar_tensor(reduced_count(self, dim)));
}

static std::vector<int64_t> dims_of(std::optional<int64_t> dim) {
  return dim ? std::vector<int64_t>{*dim} : std::vector<int64_t>{};
}
Tensor count_nonzero_dim_IntList(const Tensor& self, IntArrayRef dim) {
  return at::sum(at::ne(self, 0), std::optional<IntArrayRef>(dim), false, std::nullopt);
}
Tensor count_nonzero(const Tensor& self, std::optional<int64_t> dim) {
  return count_nonzero_dim_IntList(self, dims_of(dim));
}
Tensor& count_nonzero_dim_IntList_out(const Tensor& self, IntArrayRef dim, Tensor& out) {
  return at::sum_out(out, at::ne(self, 0), std::optional<IntArrayRef>(dim), false, std::nullopt);
}
Tensor& count_nonzero_out(const Tensor& self, std::optional<int64_t> dim, Tensor& out) {
  return count_nonzero_dim_IntList_out(self, dims_of(dim), out);
}

// The sum of a matrix's main diagonal (integers in int64, as sum's).
Tensor trace(const Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  if (self.scalar_type() == c10::kBool) dtype_not_implemented("trace", self.scalar_type());
  return self.diagonal().sum();
}

}  // namespace native
}  // namespace at::inline tessera
