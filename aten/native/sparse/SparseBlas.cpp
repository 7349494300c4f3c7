// Matrix-vector, batched and sampled products with a sparse operand: addmv/mv with a
// sparse matrix (COO or compressed), bmm of a 3-D COO tensor by a dense batch, and
// torch.sparse.sampled_addmm (a dense product read only at a CSR pattern), and the products
// with a sparse result (hspmm, smm, sspaddmm). Each goes through the 2-D sparse x dense
// kernel (sparse_mm) or reads only the pattern's entries.
#include <aten/core/TensorOperators.h>
#include <aten/core/TensorUtils.h>
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/index/IndexingUtils.h>
#include <aten/native/sparse/SparseUtils.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>

namespace at::inline tessera::native {

using namespace sparse;

Tensor addmv_sparse(const Tensor& self, const Tensor& mat, const Tensor& vec, const c10::Scalar& beta,
                    const c10::Scalar& alpha) {
  TORCH_CHECK(c10::isSparseLayout(mat.layout()) && vec.layout() == c10::kStrided && self.layout() == c10::kStrided,
              "addmv: expected a sparse 'mat' and strided 'self' and 'vec', got ", layout_word(mat.layout()), ", ",
              layout_word(self.layout()), " and ", layout_word(vec.layout()));
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got ", self.dim(), ", ", mat.dim(),
              ", ", vec.dim());
  TORCH_CHECK(mat.size(1) == vec.size(0) && (self.dim() == 0 || self.size(-1) == 1 || self.size(-1) == mat.size(0)) &&
                  self.dim() <= 1,
              "size mismatch, got input (", self.dim() == 0 ? 1 : self.size(-1), "), mat (", mat.size(0), "x",
              mat.size(1), "), vec (", vec.size(0), ")");
  check_same_device("addmv", self, {&mat});
  const Tensor product = at::mm(mat, vec.unsqueeze(1)).squeeze(1);
  const Tensor scaled = alpha.toComplexDouble() == c10::complex<double>(1, 0) ? product : product * alpha;
  // beta == 0 ignores self (it may hold NaN or be the unread buffer mv passes), as torch does
  if (beta.toComplexDouble() == c10::complex<double>(0, 0)) return scaled;
  return at::add(self * beta, scaled);
}

Tensor bmm_sparse(const Tensor& self, const Tensor& mat2) {
  TORCH_CHECK(mat2.layout() == c10::kStrided, "bmm_sparse: Tensor 'mat2' must be dense");
  const SparseTensorImpl* impl = get_sparse_impl(self, "bmm");
  TORCH_CHECK(impl->dense_dim() == 0, "bmm_sparse: Tensor 'self' must have 0 dense dims, but has ", impl->dense_dim());
  TORCH_CHECK(impl->sparse_dim() == 3, "bmm_sparse: Tensor 'self' must have 3 sparse dims, but has ",
              impl->sparse_dim());
  TORCH_CHECK(mat2.dim() == 3, "bmm_sparse: Tensor 'mat2' must have 3 dims, but has ", mat2.dim());
  TORCH_CHECK(self.size(0) == mat2.size(0), "bmm_sparse: 'self.size(0)' and 'mat2.size(0)' must match");
  TORCH_CHECK(self.size(2) == mat2.size(1), "bmm_sparse: 'self.size(2)' and 'mat2.size(1)' must match");
  const int64_t batches = self.size(0), rows = self.size(1), cols = mat2.size(2);
  const c10::ScalarType type = c10::promoteTypes(self.scalar_type(), mat2.scalar_type());
  check_same_device("bmm", self, {&mat2});
  Tensor out = at::zeros({batches, rows, cols}, mat2.options().dtype(type));
  if (out.is_meta()) return out;
  const Tensor a = self.coalesce();
  const SparseTensorImpl* ai = get_sparse_impl(a);
  // coalesced entries are sorted by batch first: each batch is one run of them
  const std::vector<int64_t> batch_of = host_int64_values(ai->indices().select(0, 0));
  int64_t begin = 0;
  const int64_t nnz = ai->nnz();
  while (begin < nnz) {
    const int64_t b = batch_of[static_cast<size_t>(begin)];
    int64_t end = begin;
    while (end < nnz && batch_of[static_cast<size_t>(end)] == b) ++end;
    const Tensor slice = make_sparse_coo({rows, self.size(2)}, ai->indices().narrow(0, 1, 2).narrow(1, begin, end - begin),
                                         ai->values().narrow(0, begin, end - begin), true);
    out.select(0, b).copy_(at::mm(slice, mat2.select(0, b)));
    begin = end;
  }
  return out;
}

// beta * self + alpha * (mat1 @ mat2), kept at self's CSR pattern only: each entry (i, j)
// reads row i of mat1 and column j of mat2, so the dense product is never formed.
// sampled_addmm, one matrix or a batch of them (current torch's batched form: a 3-D CSR
// self with 3-D mat1 and mat2 of the same batch size; torch 1.13 fails on it): each entry
// of self gets beta * its value + alpha * the dot product of its row of mat1 and its
// column of mat2, gathered per batch.
Tensor sparse_sampled_addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const c10::Scalar& beta,
                            const c10::Scalar& alpha) {
  TORCH_CHECK(self.layout() == c10::kSparseCsr, "sampled_addmm: Expected self to be a sparse CSR tensor, but got ",
              layout_word(self.layout()));
  TORCH_CHECK(mat1.layout() == c10::kStrided && mat2.layout() == c10::kStrided,
              "sampled_addmm: Expected mat1 and mat2 to be strided, but got ", layout_word(mat1.layout()), " and ",
              layout_word(mat2.layout()));
  const int64_t dims = self.dim();
  TORCH_CHECK((dims == 2 || dims == 3) && mat1.dim() == dims && mat2.dim() == dims, "sampled_addmm: Expected 2-D "
              "operands or 3-D batches of one size, got ", self.dim(), "-D, ", mat1.dim(), "-D and ", mat2.dim(), "-D");
  const int64_t batches = dims == 3 ? self.size(0) : 1;
  TORCH_CHECK(dims == 2 || (mat1.size(0) == batches && mat2.size(0) == batches), "sampled_addmm: Expected the ",
              "batch sizes of self, mat1 and mat2 to match, got ", self.size(0), ", ", mat1.size(0), " and ",
              mat2.size(0));
  const int64_t m = mat1.size(-2), k = mat1.size(-1), n = mat2.size(-1);
  TORCH_CHECK(k == mat2.size(-2), "sampled_addmm: mat1 and mat2 shapes cannot be multiplied (", m, "x", k, " and ",
              mat2.size(-2), "x", n, ")");
  TORCH_CHECK(self.size(-2) == m && self.size(-1) == n, "sampled_addmm: self's shape ", self.sizes(),
              " does not match the product's (", m, ", ", n, ")");
  TORCH_CHECK(self.scalar_type() == mat1.scalar_type() && self.scalar_type() == mat2.scalar_type(),
              "sampled_addmm: Expected all operands to have the same dtype, got ", c10::toString(self.scalar_type()),
              ", ", c10::toString(mat1.scalar_type()), " and ", c10::toString(mat2.scalar_type()));
  const SparseCsrTensorImpl* impl = get_sparse_csr_impl(self);
  TORCH_CHECK(impl->dense_dim() == 0, "sampled_addmm: Expected self to have no dense dims");
  check_same_device("sampled_addmm", self, {&mat1, &mat2});
  if (self.is_meta()) {  // self's pattern, new values (Note [Sparse meta tensors])
    return make_sparse_compressed(c10::kSparseCsr, self.sizes(), impl->compressed_indices().clone(),
                                  impl->plain_indices().clone(), at::empty_like(impl->values()));
  }
  // (row, col) of every entry in storage order, per batch: rows repeated by their counts
  const int64_t nnz = impl->nnz();
  const Tensor crow = impl->compressed_indices().to(c10::kLong).reshape({batches, m + 1});
  const Tensor counts = crow.narrow(1, 1, m) - crow.narrow(1, 0, m);
  const Tensor rows = at::repeat_interleave(at::arange(m, crow.options()).repeat({batches}), counts.reshape({-1}))
                          .reshape({batches, nnz, 1}).expand({batches, nnz, k});
  const Tensor cols = impl->plain_indices().to(c10::kLong).reshape({batches, nnz, 1}).expand({batches, nnz, k});
  const Tensor row_vectors = mat1.reshape({batches, m, k}).gather(1, rows);
  const Tensor col_vectors = mat2.reshape({batches, k, n}).transpose(1, 2).gather(1, cols);
  const Tensor products = (row_vectors * col_vectors).sum(2).reshape(impl->values().sizes());
  const Tensor values = at::add(impl->values() * beta, products * alpha);
  return make_sparse_compressed(c10::kSparseCsr, self.sizes(), impl->compressed_indices().clone(),
                                impl->plain_indices().clone(), values);
}

// ---- products with a sparse result. Composites of differentiable operators (torch 1.13
// has no derivative for them): the gradient reaches mat1's values (in its pattern), mat2
// and self. The rows mat1 specifies are multiplied as one compact matrix, so the work and
// the result scale with those rows, not with mat1's height.

namespace {

// (the rows mat1 specifies, sorted; their rows of mat1 @ mat2). torch's kernels for these
// operators sit below autocast, so the composite's inner product runs with the autocast
// keys excluded: float32 stays float32 under tessera.autocast, as in torch.
std::pair<Tensor, Tensor> specified_rows_product(const Tensor& mat1, const Tensor& mat2, const char* op) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  TORCH_CHECK_NOT_IMPLEMENTED(mat1.layout() == c10::kSparse && mat2.layout() == c10::kStrided, op,
                              " multiplies a sparse COO matrix by a strided one, got ", layout_word(mat1.layout()),
                              " and ", layout_word(mat2.layout()));
  TORCH_CHECK(mat1.sparse_dim() == 2 && mat1.dense_dim() == 0, op, ": Argument #2: matrices expected, got ",
              mat1.sparse_dim(), "D tensor");
  TORCH_CHECK(mat2.dim() == 2, op, ": Argument #3: matrices expected, got ", mat2.dim(), "D tensor");
  TORCH_CHECK(mat1.size(1) == mat2.size(0), op, ": Argument #3: Expected dim 0 size ", mat1.size(1), ", got ",
              mat2.size(0));
  TORCH_CHECK(mat1.scalar_type() == mat2.scalar_type(), "expected scalar type ", mat1.scalar_type(),
              " but found ", mat2.scalar_type());
  check_same_device(op, mat1, {&mat2});
  refuse_meta(mat1, op);
  const Tensor c = mat1.coalesce();
  const Tensor indices = c._indices();
  auto [rows, slot] = at::_unique(indices.select(0, 0), true, true);
  const Tensor compact = at::sparse_coo_tensor(at::stack({slot, indices.select(0, 1)}), c.values(),
                                               {rows.size(0), mat1.size(1)});
  return {rows, at::_sparse_mm(compact, mat2)};
}

}  // namespace

Tensor hspmm(const Tensor& mat1, const Tensor& mat2) {
  auto [rows, values] = specified_rows_product(mat1, mat2, "hspmm");
  return at::sparse_coo_tensor(rows.unsqueeze(0), values, {mat1.size(0), mat2.size(1)}, {}, /*is_coalesced=*/true);
}

Tensor smm(const Tensor& self, const Tensor& mat2) {
  TORCH_CHECK(self.layout() == c10::kSparse, "tensor.sspaddmm(...) can only be called on sparse tensors");
  auto [rows, values] = specified_rows_product(self, mat2, "smm");
  const int64_t n = mat2.size(1);
  const Tensor row_of_entry = rows.repeat_interleave(n);
  const Tensor col_of_entry = at::arange(n, rows.options()).repeat({rows.size(0)});
  // (rows sorted, each with every column in order: coalesced, so values() can carry grads)
  return at::sparse_coo_tensor(at::stack({row_of_entry, col_of_entry}), values.reshape({-1}), {self.size(0), n}, {},
                               /*is_coalesced=*/true);
}

// beta * self + alpha * smm(mat1, mat2) in self's dtype: the two sets of entries side by
// side, not coalesced (self's own coalesced first, so that its values get a gradient).
Tensor sspaddmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const c10::Scalar& beta,
                const c10::Scalar& alpha) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  TORCH_CHECK(self.layout() == c10::kSparse, "tensor.sspaddmm(...) can only be called on sparse tensors");
  TORCH_CHECK(self.dim() == 2, "sspaddmm: Argument #1: matrices expected, got ", self.dim(), "D tensor");
  TORCH_CHECK(mat1.dim() == 2 && mat2.dim() == 2, "sspaddmm: Argument #2: matrices expected, got ", mat1.dim(),
              "D and ", mat2.dim(), "D tensors");
  TORCH_CHECK(self.size(0) == mat1.size(0), "sspaddmm: Argument #1: Expected dim 0 size ", mat1.size(0), ", got ",
              self.size(0));
  TORCH_CHECK(self.size(1) == mat2.size(1), "sspaddmm: Argument #1: Expected dim 1 size ", mat2.size(1), ", got ",
              self.size(1));
  TORCH_CHECK(self.scalar_type() == mat1.scalar_type() && self.scalar_type() == mat2.scalar_type(),
              "sspaddmm: expected self, mat1 and mat2 to have one dtype, got ", self.scalar_type(), ", ",
              mat1.scalar_type(), " and ", mat2.scalar_type());
  const Tensor product = at::smm(mat1, mat2);
  const Tensor c = self.coalesce();
  // torch's kernel scales self's values by beta under the in-place cast rule, and reads
  // alpha in self's dtype (1.5 is 1 for int64); a complex scalar takes a complex self
  const c10::ScalarType type = self.scalar_type();
  TORCH_CHECK(!(beta.isComplex() || alpha.isComplex()) || c10::isComplexType(type),
              "sspaddmm: a complex beta or alpha needs a complex self, got ", type);
  TORCH_CHECK(!beta.isFloatingPoint() || !c10::isIntegralType(type, true), "result type ",
              c10::get_default_dtype(), " can't be cast to the desired output type ", type);
  const c10::Scalar scale = c10::isIntegralType(type, true) ? c10::Scalar(alpha.toLong()) : alpha;
  return at::sparse_coo_tensor(at::cat({c._indices(), product._indices()}, 1),
                               at::cat({at::mul(c.values(), beta).to(type), at::mul(product.values(), scale).to(type)}),
                               self.sizes());
}

}  // namespace at::inline tessera::native
