// Matrix products: mm, bmm, addmm, baddbmm, addbmm, addmv (structured: one shape function
// each, shared by Meta and CPU), mv, dot, vdot, outer/ger, and the composites matmul and
// linear. Every product ends in batched_gemm (Blas.cpp) on 3-D views, so 2-D operands are
// viewed as a batch of one rather than copied. Checks and messages follow torch 1.13,
// in its order (shapes before dtypes).
#include <aten/native/Broadcast.h>
#include <aten/native/MemoryOverlap.h>
#include <aten/native/MetaFunctions.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/linalg/Blas.h>
#include <aten/ops/Functions.h>

namespace at::inline tessera {

namespace {

// torch's "expected scalar type Float but found Double" between two operands.
void check_same_dtype(const Tensor& expected, const Tensor& found) {
  TORCH_CHECK(expected.scalar_type() == found.scalar_type(), "expected scalar type ", expected.scalar_type(),
              " but found ", found.scalar_type());
}

// self must broadcast to the result's shape (torch's expand message otherwise).
void check_expands_to(const Tensor& self, IntArrayRef sizes) { (void)self.expand(sizes); }


// out = beta * self + alpha * a @ b over 3-D views; self is read only when beta != 0 (so
// NaN there does not leak through beta = 0, as in torch) and is out itself in-place.
void add_product(const Tensor& out3, const Tensor& out, const Tensor& self, const Tensor& a3, const Tensor& b3,
                 const c10::Scalar& beta, const c10::Scalar& alpha, const char* op) {
  native::check_product_out_dtype(out, a3.scalar_type());
  native::assert_no_internal_overlap(out);
  if (!native::is_zero_scalar(beta) && !self.is_same(out)) out.copy_(self.expand(out.sizes()));
  native::batched_gemm(out3, a3, b3, beta, alpha, op);
}

void check_mm_shapes(const Tensor& mat1, const Tensor& mat2) {
  TORCH_CHECK(mat1.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", mat1.size(0), "x",
              mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
}

void check_bmm_shapes(const Tensor& batch1, const Tensor& batch2) {
  TORCH_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(batch2.size(0) == batch1.size(0) && batch2.size(1) == batch1.size(2),
              "Expected size for first two dimensions of batch2 tensor to be: [", batch1.size(0), ", ",
              batch1.size(2), "] but got: [", batch2.size(0), ", ", batch2.size(1), "].");
  check_same_dtype(batch1, batch2);
}

// addmv's checks; mv reports them as addmv with a result-sized self.
void check_addmv(int64_t self_dim, int64_t self_numel, const Tensor& mat, const Tensor& vec) {
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1 && self_dim <= 1, "vector + matrix @ vector expected, got ", self_dim,
              ", ", mat.dim(), ", ", vec.dim());
  TORCH_CHECK(mat.size(1) == vec.size(0) && (mat.size(0) == self_numel || self_numel == 1), "size mismatch, got ",
              self_numel, ", ", mat.size(0), "x", mat.size(1), ",", vec.size(0));
  check_same_dtype(mat, vec);
}

void check_dot(const Tensor& self, const Tensor& other) {
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ",
              other.dim(), "D tensors");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "dot : expected both vectors to have same dtype, but found ",
              self.scalar_type(), " and ", other.scalar_type());
  TORCH_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [", self.numel(),
              "] and src [", other.numel(), "] to have the same number of elements, but got ", self.numel(), " and ",
              other.numel(), " elements respectively");
}

}  // namespace

namespace meta {

TensorMeta mm(const Tensor& self, const Tensor& mat2) {
  TORCH_CHECK(self.dim() == 2, "self must be a matrix");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  check_mm_shapes(self, mat2);
  check_same_dtype(self, mat2);
  return {{self.size(0), mat2.size(1)}, self.scalar_type()};
}

TensorMeta addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const c10::Scalar&, const c10::Scalar&) {
  TORCH_CHECK(mat1.dim() == 2, "mat1 must be a matrix, got ", mat1.dim(), "-D tensor");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix, got ", mat2.dim(), "-D tensor");
  check_mm_shapes(mat1, mat2);
  check_expands_to(self, {mat1.size(0), mat2.size(1)});
  TORCH_CHECK(mat1.scalar_type() == mat2.scalar_type(), "mat1 and mat2 must have the same dtype");
  TORCH_CHECK(self.scalar_type() == mat2.scalar_type(), "self and mat2 must have the same dtype");
  return {{mat1.size(0), mat2.size(1)}, mat1.scalar_type()};
}

TensorMeta bmm(const Tensor& self, const Tensor& mat2) {
  check_bmm_shapes(self, mat2);
  return {{self.size(0), self.size(1), mat2.size(2)}, self.scalar_type()};
}

// baddbmm casts self into the result's dtype (torch 1.13 accepts a self of another dtype).
TensorMeta baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const c10::Scalar&,
                   const c10::Scalar&) {
  check_bmm_shapes(batch1, batch2);
  check_expands_to(self, {batch1.size(0), batch1.size(1), batch2.size(2)});
  return {{batch1.size(0), batch1.size(1), batch2.size(2)}, batch1.scalar_type()};
}

TensorMeta addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const c10::Scalar&,
                  const c10::Scalar&) {
  TORCH_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(batch1.size(0) == batch2.size(0), "batch1 and batch2 must have same number of batches, got ",
              batch1.size(0), " and ", batch2.size(0));
  TORCH_CHECK(batch1.size(2) == batch2.size(1), "Incompatible matrix sizes for bmm (", batch1.size(1), "x",
              batch1.size(2), " and ", batch2.size(1), "x", batch2.size(2), ")");
  check_expands_to(self, {batch1.size(1), batch2.size(2)});
  TORCH_CHECK(self.scalar_type() == batch2.scalar_type(), "self and mat2 must have the same dtype");
  TORCH_CHECK(batch1.scalar_type() == batch2.scalar_type(), "mat1 and mat2 must have the same dtype");
  return {{batch1.size(1), batch2.size(2)}, self.scalar_type()};
}

// addmv, like baddbmm, casts self into the result's dtype.
TensorMeta addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const c10::Scalar&, const c10::Scalar&) {
  check_addmv(self.dim(), self.numel(), mat, vec);
  return {{mat.size(0)}, mat.scalar_type()};
}

}  // namespace meta

namespace native {

void check_product_out_dtype(const Tensor& out, c10::ScalarType t) {
  TORCH_CHECK(out.scalar_type() == t, "Expected out tensor to have dtype ", native::cpp_type_name(t), ", but got ",
              native::cpp_type_name(out.scalar_type()), " instead");
}

void mm_out_cpu(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  add_product(out.unsqueeze(0), out, out, self.unsqueeze(0), mat2.unsqueeze(0), 0, 1, "addmm_impl_cpu_");
}

void addmm_out_cpu(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const c10::Scalar& beta,
                   const c10::Scalar& alpha, const Tensor& out) {
  add_product(out.unsqueeze(0), out, self, mat1.unsqueeze(0), mat2.unsqueeze(0), beta, alpha, "addmm_impl_cpu_");
}

void bmm_out_cpu(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  add_product(out, out, out, self, mat2, 0, 1, "bmm");
}

void baddbmm_out_cpu(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const c10::Scalar& beta,
                     const c10::Scalar& alpha, const Tensor& out) {
  add_product(out, out, self, batch1, batch2, beta, alpha, "baddbmm");
}

// The sum over the batch of batch1[i] @ batch2[i] is one GEMM over the concatenated k:
// (M x B*K) @ (B*K x N). batch2 is a view when its batches are stacked rows already.
void addbmm_out_cpu(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const c10::Scalar& beta,
                    const c10::Scalar& alpha, const Tensor& out) {
  const int64_t b = batch1.size(0), m = batch1.size(1), k = batch1.size(2), n = batch2.size(2);
  const Tensor a = batch1.permute({1, 0, 2}).reshape({1, m, b * k});
  const Tensor bb = batch2.reshape({1, b * k, n});
  add_product(out.unsqueeze(0), out, self, a, bb, beta, alpha, "addmm_impl_cpu_");
}

// out (M) as an (1, M, 1) batch; vec as (1, K, 1): a GEMM with one column.
void addmv_out_cpu(const Tensor& self, const Tensor& mat, const Tensor& vec, const c10::Scalar& beta,
                   const c10::Scalar& alpha, const Tensor& out) {
  add_product(out.unsqueeze(0).unsqueeze(-1), out, self, mat.unsqueeze(0), vec.unsqueeze(0).unsqueeze(-1), beta,
              alpha, "addmv_impl_cpu");
}

Tensor mv(const Tensor& self, const Tensor& vec) {
  // As addmv with an unread (beta = 0) self of the result's size.
  check_addmv(1, self.dim() == 2 ? self.size(0) : 1, self, vec);
  return at::addmv(make_empty({self.size(0)}, self.scalar_type(), self.device()), self, vec, 0, 1);
}
Tensor& mv_out(const Tensor& self, const Tensor& vec, Tensor& out) {
  check_addmv(1, self.dim() == 2 ? self.size(0) : 1, self, vec);
  return at::addmv_out(out, make_empty({self.size(0)}, self.scalar_type(), self.device()), self, vec, 0, 1);
}

static Tensor dot_impl(const Tensor& self, const Tensor& other, bool conj, bool meta) {
  check_dot(self, other);
  Tensor out = make_empty({}, self.scalar_type(), self.device());
  if (!meta) dot_into(out, self, other, conj, "dot");
  return out;
}
Tensor dot_cpu(const Tensor& self, const Tensor& tensor) { return dot_impl(self, tensor, false, false); }
Tensor dot_meta(const Tensor& self, const Tensor& tensor) { return dot_impl(self, tensor, false, true); }
Tensor vdot_cpu(const Tensor& self, const Tensor& other) { return dot_impl(self, other, true, false); }
Tensor vdot_meta(const Tensor& self, const Tensor& other) { return dot_impl(self, other, true, true); }

// outer is a broadcast product, so mixed dtypes promote as torch's do.
static void check_outer(const Tensor& self, const Tensor& vec2) {
  TORCH_CHECK(self.dim() == 1, "outer: Expected 1-D argument self, but got ", self.dim(), "-D");
  TORCH_CHECK(vec2.dim() == 1, "outer: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
}
Tensor outer(const Tensor& self, const Tensor& vec2) {
  check_outer(self, vec2);
  return at::mul(self.reshape({-1, 1}), vec2);
}
Tensor& outer_out(const Tensor& self, const Tensor& vec2, Tensor& out) {
  check_outer(self, vec2);
  return at::mul_out(out, self.reshape({-1, 1}), vec2);
}
Tensor ger(const Tensor& self, const Tensor& vec2) { return at::outer(self, vec2); }
Tensor& ger_out(const Tensor& self, const Tensor& vec2, Tensor& out) { return at::outer_out(out, self, vec2); }

}  // namespace native
}  // namespace at::inline tessera
