// matmul and linear: composites over dot / mv / mm / bmm / addmm, following torch 1.13's
// choice for each rank combination, so shapes, broadcasting and error messages are its:
//   1-D @ 1-D dot; 2-D @ 1-D mv; 1-D @ 2-D and 2-D @ 2-D mm;
//   N-D @ 1-D or 2-D: the batch folded into the rows of one mv / mm;
//   1-D or 2-D @ N-D: the transposed problem folded the same way (b^T @ a^T);
//   otherwise the batch dims broadcast and one bmm over the flattened batch.
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/linalg/Blas.h>
#include <aten/native/named/NameInference.h>
#include <aten/native/nested/NestedOps.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>

#include <algorithm>
#include <vector>

namespace at::inline tessera::native {

namespace {

std::vector<int64_t> leading(IntArrayRef sizes, int64_t drop) {
  return std::vector<int64_t>(sizes.begin(), sizes.end() - drop);
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t s : v) n *= s;
  return n;
}

}  // namespace

Tensor matmul(const Tensor& self, const Tensor& other) {
  if (C10_UNLIKELY(self.is_nested() || other.is_nested())) return nested_matmul(self, other);
  if (C10_UNLIKELY(named::names_pending(self, other))) {
    const DimnameList names = named::matmul_names(names_of(self), names_of(other));
    NoNamesGuard guard;
    return named::named_result(native::matmul(self, other), names);
  }
  const int64_t da = self.dim(), db = other.dim();
  TORCH_CHECK(da > 0 && db > 0, "both arguments to matmul need to be at least 1D, but they are ", da, "D and ", db,
              "D");
  if (da == 1 && db == 1) return at::dot(self, other);
  if (da == 2 && db == 1) return at::mv(self, other);
  if (da == 1 && db == 2) return at::mm(self.unsqueeze(0), other).squeeze(0);
  if (da == 2 && db == 2) return at::mm(self, other);
  if (da >= 3 && db <= 2) {
    // Rows of every matrix in the batch are rows of one matrix.
    std::vector<int64_t> sizes = leading(self.sizes(), 1);
    const Tensor folded = self.reshape({-1, self.size(-1)});
    if (db == 1) return at::mv(folded, other).view(sizes);
    sizes.push_back(other.size(1));
    return at::mm(folded, other).view(sizes);
  }
  if (da <= 2 && db >= 3) {
    // (a @ b)^T = b^T @ a^T, with b^T's batch folded into its rows.
    std::vector<int64_t> sizes = leading(other.sizes(), 2);
    const Tensor folded = other.transpose(-1, -2).reshape({-1, other.size(-2)});
    if (da == 1) {
      sizes.push_back(other.size(-1));
      return at::mv(folded, self).view(sizes);
    }
    sizes.push_back(other.size(-1));
    sizes.push_back(self.size(0));
    return at::mm(folded, self.t()).view(sizes).transpose(-1, -2);
  }
  // Both at least 1-D with one at least 3-D: broadcast the batch dims, one bmm.
  const int64_t n = da > 1 ? self.size(-2) : 1, k1 = self.size(-1);
  const int64_t k2 = db > 1 ? other.size(-2) : other.size(0), p = db > 1 ? other.size(-1) : 1;
  const std::vector<int64_t> batch =
      infer_size(leading(self.sizes(), std::min<int64_t>(da, 2)), leading(other.sizes(), std::min<int64_t>(db, 2)));
  const int64_t B = product(batch);
  std::vector<int64_t> ea = batch, eb = batch;
  ea.insert(ea.end(), {n, k1});
  eb.insert(eb.end(), {k2, p});
  const Tensor a = (da == 1 ? self.unsqueeze(0) : self).expand(ea).reshape({B, n, k1});
  const Tensor b = (db == 1 ? other.unsqueeze(-1) : other).expand(eb).reshape({B, k2, p});
  std::vector<int64_t> sizes = batch;
  if (da > 1) sizes.push_back(n);
  if (db > 1) sizes.push_back(p);
  return at::bmm(a, b).view(sizes);
}

// out= forms of the composites: the result computed, then copied into out, which must
// have its dtype (products never cast into out, as in torch).
static Tensor& into_out(const Tensor& result, Tensor& out, const char* op) {
  check_product_out_dtype(out, result.scalar_type());
  resize_out_sizes(out, result.sizes(), op);
  out.copy_(result);
  return out;
}

Tensor& matmul_out(const Tensor& self, const Tensor& other, Tensor& out) {
  return into_out(at::matmul(self, other), out, "matmul");
}

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  if (C10_UNLIKELY(input.is_nested())) return nested_linear(input, weight, bias);
  const bool has_bias = bias && bias->defined();
  if (C10_UNLIKELY(named::names_pending(input, weight, has_bias ? *bias : Tensor()))) {
    // torch's linear is matmul(input, weight.t()) plus the bias, names included.
    DimnameList w = names_of(weight);
    std::reverse(w.begin(), w.end());
    DimnameList names = named::matmul_names(names_of(input), w);
    if (has_bias) names = named::unify_from_right(names, names_of(*bias));
    NoNamesGuard guard;
    return named::named_result(native::linear(input, weight, bias), names);
  }
  if (input.dim() == 2 && has_bias) return at::addmm(*bias, input, weight.t());
  if (has_bias && input.dim() >= 3 && input.is_contiguous() && weight.dim() == 2) {
    // The batch folded into rows: one addmm, the bias added by the GEMM.
    std::vector<int64_t> sizes = leading(input.sizes(), 1);
    sizes.push_back(weight.size(0));
    return at::addmm(*bias, input.view({-1, input.size(-1)}), weight.t()).view(sizes);
  }
  Tensor out = at::matmul(input, weight.t());
  return has_bias ? at::add(out, *bias) : out;
}

Tensor& linear_out(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, Tensor& out) {
  return into_out(at::linear(input, weight, bias), out, "linear");
}

// y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o], as one einsum.
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const std::optional<Tensor>& bias) {
  TORCH_CHECK(input1.dim() == input2.dim(), "bilinear(): input dimensions do not match: got ", input1.dim(), " and ",
              input2.dim());
  for (int64_t d = 0; d + 1 < input1.dim(); ++d) {
    TORCH_CHECK(input1.size(d) == input2.size(d), "bilinear(): input batch dimensions do not match: got ",
                input1.sizes(), " and ", input2.sizes());
  }
  TORCH_CHECK(weight.dim() == 3, "bilinear(): weight must be 3-D [out, in1, in2], got ", weight.sizes());
  TORCH_CHECK(input1.dim() >= 1 && input1.size(-1) == weight.size(1),
              "bilinear(): input1 size does not match weight size: got ", input1.dim() ? input1.size(-1) : 0,
              " but expected ", weight.size(1));
  TORCH_CHECK(input2.size(-1) == weight.size(2), "bilinear(): input2 size does not match weight size: got ",
              input2.size(-1), " but expected ", weight.size(2));
  const bool has_bias = bias && bias->defined();
  TORCH_CHECK(!has_bias || (bias->dim() == 1 && bias->size(0) == weight.size(0)),
              "bilinear(): bias size does not match weight size: got ", has_bias ? bias->sizes() : IntArrayRef{},
              " but expected [", weight.size(0), "]");
  // torch computes bilinear with _trilinear, which autocast lists nowhere, so it stays in
  // the inputs' precision; this einsum's bmm must not be cast to bfloat16 either.
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  Tensor out = at::einsum("...i,oij,...j->...o", {input1, weight, input2});
  return has_bias ? at::add(out, *bias) : out;
}

}  // namespace at::inline tessera::native
