// Scans along one dim: cumsum, cumprod (integers and bools accumulate in int64 unless
// dtype= says otherwise), logcumsumexp, cummax and cummin. Results are contiguous, as
// torch's are; the kernels (cpu/ScanOpsKernel.cpp) walk the input as DimBlocks, and a
// result laid out with the dim moved last is moved back and copied into place.
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/reduce/ScanOps.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <tuple>

namespace at::inline tessera::native {

namespace {

c10::ScalarType cum_dtype(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  if (dtype) return *dtype;
  return c10::isIntegralType(self.scalar_type(), true) ? c10::kLong : self.scalar_type();
}

// The blocks of `input` along `dim` and a contiguous tensor of their layout to write into,
// with a function giving that result back in input's dim order.
struct ScanPlan {
  DimBlocks blocks;
  bool moved;  // the blocks have `dim` moved last
  int64_t dim;

  Tensor result_like(c10::ScalarType dtype) const { return make_empty(blocks.data.sizes(), dtype, blocks.data.device()); }
  Tensor back(const Tensor& r) const { return moved ? r.movedim(-1, dim) : r; }
};

ScanPlan plan(const Tensor& input, int64_t dim) {
  const int64_t d = input.dim() == 0 ? 0 : wrap_dim(dim, input.dim());
  DimBlocks b = blocks_along(input, d);
  const bool moved = !b.data.is_same(input);
  return ScanPlan{std::move(b), moved, d};
}

Tensor scan(scan_fn stub_kernel, const Tensor& self, int64_t dim, c10::ScalarType dtype) {
  wrap_dim(dim, self.dim());  // torch's IndexError for a dim out of range, also on meta
  Tensor out = make_empty(self.sizes(), dtype, self.device());
  if (self.is_meta() || out.numel() == 0) return out;
  const ScanPlan p = plan(self.scalar_type() == dtype ? self : self.to(dtype), dim);
  Tensor r = p.moved ? p.result_like(dtype) : out;
  stub_kernel(p.blocks, r);
  if (p.moved) out.copy_(p.back(r));
  return out;
}


}  // namespace

// The stubs' kernels are per ISA; these adapt them to scan()'s function pointer.
static void cumsum_any(const DimBlocks& b, const Tensor& out) { cumsum_stub(c10::DeviceType::CPU, b, out); }
static void cumprod_any(const DimBlocks& b, const Tensor& out) { cumprod_stub(c10::DeviceType::CPU, b, out); }
static void logcumsumexp_any(const DimBlocks& b, const Tensor& out) { logcumsumexp_stub(c10::DeviceType::CPU, b, out); }

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  return scan(cumsum_any, self, dim, cum_dtype(self, dtype));
}
Tensor& cumsum_out(const Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype, Tensor& out) {
  check_out_dtype(out, dtype);
  return copy_into_out(at::cumsum(self, dim, dtype), out, "cumsum");
}
Tensor& cumsum_(Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  return self.copy_(at::cumsum(self, dim, dtype));
}

Tensor cumprod(const Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  return scan(cumprod_any, self, dim, cum_dtype(self, dtype));
}
Tensor& cumprod_out(const Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype, Tensor& out) {
  check_out_dtype(out, dtype);
  return copy_into_out(at::cumprod(self, dim, dtype), out, "cumprod");
}
Tensor& cumprod_(Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  // (a backend kernel: the generated Autograd kernel runs cumprod's formula on a copy of
  // the input it saves before this write)
  return self.copy_(at::cumprod(self, dim, dtype));
}

Tensor logcumsumexp(const Tensor& self, int64_t dim) {
  const c10::ScalarType t = self.scalar_type();
  TORCH_CHECK(c10::isFloatingType(t), "\"logcumsumexp_out_cpu\" not implemented for '", t, "'");
  return scan(logcumsumexp_any, self, dim, t);
}
Tensor& logcumsumexp_out(const Tensor& self, int64_t dim, Tensor& out) {
  return copy_into_out(at::logcumsumexp(self, dim), out, "logcumsumexp");
}

// ---- cummax / cummin

template <bool Max>
static std::tuple<Tensor, Tensor> cum_extremum(const Tensor& self, int64_t dim) {
  wrap_dim(dim, self.dim());
  Tensor values = make_empty(self.sizes(), self.scalar_type(), self.device());
  Tensor indices = make_empty(self.sizes(), c10::kLong, self.device());
  if (self.is_meta() || self.numel() == 0) return {values, indices};
  if (self.dim() == 0) {  // one element: itself at index 0, any dtype (as torch)
    values.copy_(self);
    indices.fill_(0);
    return {values, indices};
  }
  TORCH_CHECK(!c10::isComplexType(self.scalar_type()), "\"", Max ? "cummax_cpu" : "cummin_cpu",
              "\" not implemented for '", self.scalar_type(), "'");
  const ScanPlan p = plan(self, dim);
  Tensor v = p.moved ? p.result_like(self.scalar_type()) : values;
  Tensor i = p.moved ? p.result_like(c10::kLong) : indices;
  if constexpr (Max) cummax_stub(c10::DeviceType::CPU, p.blocks, v, i);
  else cummin_stub(c10::DeviceType::CPU, p.blocks, v, i);
  if (p.moved) {
    values.copy_(p.back(v));
    indices.copy_(p.back(i));
  }
  return {values, indices};
}

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) { return cum_extremum<true>(self, dim); }
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) { return cum_extremum<false>(self, dim); }

std::tuple<Tensor&, Tensor&> cummax_out(const Tensor& self, int64_t dim, Tensor& values, Tensor& indices) {
  auto [v, i] = at::cummax(self, dim);
  copy_into_out(v, values, "cummax");
  copy_into_out(i, indices, "cummax");
  return {values, indices};
}
std::tuple<Tensor&, Tensor&> cummin_out(const Tensor& self, int64_t dim, Tensor& values, Tensor& indices) {
  auto [v, i] = at::cummin(self, dim);
  copy_into_out(v, values, "cummin");
  copy_into_out(i, indices, "cummin");
  return {values, indices};
}

DEFINE_DISPATCH(cumsum_stub);
DEFINE_DISPATCH(cumprod_stub);
DEFINE_DISPATCH(logcumsumexp_stub);
DEFINE_DISPATCH(cummax_stub);
DEFINE_DISPATCH(cummin_stub);
DEFINE_DISPATCH(softmax_stub);

}  // namespace at::inline tessera::native
