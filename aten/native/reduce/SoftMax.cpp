// softmax and log_softmax along one dim (_softmax / _log_softmax do the work; the .int
// overloads convert to dtype= first). Half and BFloat16 are computed in float, as current
// PyTorch does on CPU (1.13 had no CPU kernel for them); results are contiguous.
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/named/NameInference.h>
#include <aten/native/reduce/ScanOps.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera::native {

namespace {

Tensor softmax_impl(const Tensor& self, int64_t dim, bool half_to_float, bool log) {
  TORCH_CHECK(!half_to_float, "softmax with half to float conversion is not supported on CPU");
  const c10::ScalarType t = self.scalar_type();
  const int64_t d = self.dim() == 0 ? (wrap_dim(dim, 0), 0) : wrap_dim(dim, self.dim());
  Tensor out = make_empty(self.sizes(), t, self.device());
  if (self.is_meta() || out.numel() == 0) return out;
  TORCH_CHECK(c10::isFloatingType(t), "\"", log ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl",
              "\" not implemented for '", t, "'");
  const c10::ScalarType compute = t == c10::kHalf || t == c10::kBFloat16 ? c10::kFloat : t;
  const Tensor input = t == compute ? self : self.to(compute);
  DimBlocks b = blocks_along(input, d);
  const bool moved = !b.data.is_same(input);
  Tensor r = !moved && compute == t ? out : make_empty(b.data.sizes(), compute, self.device());
  softmax_stub(c10::DeviceType::CPU, b, r, log);
  if (!r.is_same(out)) out.copy_(moved ? r.movedim(-1, d) : r);
  return out;
}


}  // namespace

Tensor _softmax(const Tensor& self, int64_t dim, bool half_to_float) { return softmax_impl(self, dim, half_to_float, false); }
Tensor _log_softmax(const Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_impl(self, dim, half_to_float, true);
}
Tensor& _softmax_out(const Tensor& self, int64_t dim, bool half_to_float, Tensor& out) {
  return copy_into_out(at::_softmax(self, dim, half_to_float), out, "_softmax");
}
Tensor& _log_softmax_out(const Tensor& self, int64_t dim, bool half_to_float, Tensor& out) {
  return copy_into_out(at::_log_softmax(self, dim, half_to_float), out, "_log_softmax");
}

Tensor softmax_int(const Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  if (C10_UNLIKELY(named::names_pending(self))) {
    NoNamesGuard guard;
    return named::named_result(native::softmax_int(self, dim, dtype), names_of(self));
  }
  return at::_softmax(dtype && *dtype != self.scalar_type() ? self.to(*dtype) : self, dim, false);
}
Tensor log_softmax_int(const Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  if (C10_UNLIKELY(named::names_pending(self))) {
    NoNamesGuard guard;
    return named::named_result(native::log_softmax_int(self, dim, dtype), names_of(self));
  }
  return at::_log_softmax(dtype && *dtype != self.scalar_type() ? self.to(*dtype) : self, dim, false);
}

}  // namespace at::inline tessera::native
