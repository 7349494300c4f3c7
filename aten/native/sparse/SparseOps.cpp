// Arithmetic and products on sparse operands: add/sub/mul/div with sparse, dense and scalar
// operands as torch defines each combination, any and sums, and sparse x dense / dense x
// sparse / sparse x sparse matrix products (the unary family is in SparseUnary.cpp).
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/core/TensorOperators.h>
#include <aten/core/TensorUtils.h>
#include <aten/native/Broadcast.h>
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/index/IndexingUtils.h>
#include <aten/native/sparse/SparseKernels.h>
#include <aten/native/sparse/SparseUtils.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <numeric>

namespace at::inline tessera::native {

using namespace sparse;

DEFINE_DISPATCH(spmm_csr_stub);
DEFINE_DISPATCH(scatter_add_rows_stub);

namespace {

void check_same_sizes(const Tensor& a, const Tensor& b, const char* op) {
  TORCH_CHECK(a.sizes().equals(b.sizes()), op, ": expected sizes of 'self' and 'other' to match, but ", a.sizes(),
              " != ", b.sizes());
}

// dense += alpha * sparse (COO), in place; dense is contiguous and has sparse's shape.
void add_coo_into_dense(Tensor& dense, const Tensor& coo, const c10::Scalar& alpha) {
  const SparseTensorImpl* impl = get_sparse_impl(coo);
  check_same_device("add", dense, {&coo});
  if (impl->nnz() == 0 || dense.is_meta()) return;
  const IntArrayRef sparse_sizes = coo.sizes().slice(0, static_cast<size_t>(impl->sparse_dim()));
  check_indices_in_bounds(impl->indices(), sparse_sizes);
  std::vector<int64_t> flat{numel_of(sparse_sizes)};
  for (int64_t d = impl->sparse_dim(); d < coo.dim(); ++d) flat.push_back(coo.size(d));
  Tensor values = impl->values().to(dense.scalar_type());
  const Tensor rows = flatten_indices(impl->indices(), sparse_sizes);
  if (sparse_kernels_take(dense.scalar_type()) && dense.is_contiguous() && !alpha.isComplex()) {
    Tensor matrix = dense.view({flat[0], -1});
    const Tensor entries = values.contiguous();
    // (a values member that shares dense's memory is read before it is written)
    scatter_add_rows_stub(c10::DeviceType::CPU, matrix, rows, written_overlaps(dense, entries) ? entries.clone() : entries,
                          alpha);
    return;
  }
  dense.view(flat).index_add_(0, rows, values, alpha);
}

// Entries of two coalesced COO tensors of one shape at the same positions: (i in a, j in b).
std::pair<std::vector<int64_t>, std::vector<int64_t>> intersect(const Tensor& a, const Tensor& b) {
  const SparseTensorImpl* ia = get_sparse_impl(a);
  const SparseTensorImpl* ib = get_sparse_impl(b);
  const IntArrayRef sparse_sizes = a.sizes().slice(0, static_cast<size_t>(ia->sparse_dim()));
  const Tensor ka = flatten_indices(ia->indices(), sparse_sizes), kb = flatten_indices(ib->indices(), sparse_sizes);
  const int64_t* pa = static_cast<const int64_t*>(ka.data_ptr());
  const int64_t* pb = static_cast<const int64_t*>(kb.data_ptr());
  std::vector<int64_t> left, right;
  int64_t i = 0, j = 0;
  while (i < ka.numel() && j < kb.numel()) {
    if (pa[i] < pb[j]) {
      ++i;
    } else if (pb[j] < pa[i]) {
      ++j;
    } else {
      left.push_back(i++);
      right.push_back(j++);
    }
  }
  return {left, right};
}

bool is_scalar_operand(const Tensor& t) { return t.layout() == c10::kStrided && t.dim() == 0; }

// The dense operand of sparse * dense broadcast to a compressed operand's shape: the
// result keeps its shape and pattern (a compressed tensor cannot grow batch or sparse dims
// here; torch's compressed sparse_mask refuses the same operands).
Tensor dense_shaped_as(const Tensor& dense, const Tensor& sparse) {
  if (dense.sizes().equals(sparse.sizes())) return dense;
  const std::vector<int64_t> shape = infer_size(dense.sizes(), sparse.sizes());  // (torch's error if none)
  TORCH_CHECK_NOT_IMPLEMENTED(IntArrayRef(shape).equals(sparse.sizes()), "mul: a dense operand of shape ",
                              dense.sizes(), " would broadcast the ", layout_word(sparse.layout()), " operand's shape ",
                              sparse.sizes(), " to ", IntArrayRef(shape), "; only a COO operand grows that way");
  return dense.expand(sparse.sizes());
}

// A coalesced COO tensor broadcast to `shape` (torch's COO * dense rule where the dense
// operand has more dims or wider ones): new leading dims, and size-1 sparse dims that
// widen, become sparse dims over which the whole pattern repeats; widened dense dims
// expand the values. Only the repeated dims' indices are new; the rest are copied.
Tensor broadcast_coo_to(const Tensor& coo, IntArrayRef shape) {
  const SparseTensorImpl* impl = get_sparse_impl(coo);
  const int64_t lead = static_cast<int64_t>(shape.size()) - coo.dim();
  const int64_t sparse_dim = lead + impl->sparse_dim();
  std::vector<int64_t> repeated_dims, repeated_sizes;
  bool sorted = true;  // repeating leading dims only keeps the coalesced order
  for (int64_t d = 0; d < sparse_dim; ++d) {
    if (d < lead || (coo.size(d - lead) == 1 && shape[d] != 1)) {
      repeated_dims.push_back(d);
      repeated_sizes.push_back(shape[d]);
      sorted = sorted && d < lead;
    }
  }
  const int64_t copies = numel_of(repeated_sizes), nnz = impl->nnz();
  const Tensor copy_of_entry = at::arange(copies, impl->indices().options()).repeat_interleave(nnz);
  const Tensor digits = unflatten_indices(copy_of_entry, repeated_sizes);
  std::vector<Tensor> rows;
  for (int64_t d = 0, r = 0; d < sparse_dim; ++d) {
    if (r < static_cast<int64_t>(repeated_dims.size()) && repeated_dims[r] == d) {
      rows.push_back(digits.select(0, r++));
    } else {
      rows.push_back(impl->indices().select(0, d - lead).repeat({copies}));
    }
  }
  std::vector<int64_t> repeats(static_cast<size_t>(impl->values().dim()), 1);
  repeats[0] = copies;
  std::vector<int64_t> value_shape{copies * nnz};
  value_shape.insert(value_shape.end(), shape.begin() + sparse_dim, shape.end());
  const Tensor values = impl->values().repeat(repeats).expand(value_shape).contiguous();
  const Tensor indices = rows.empty() ? at::empty({0, copies * nnz}, impl->indices().options()) : at::stack(rows, 0);
  const Tensor result = make_sparse_coo(shape, indices, values, sorted);
  return sorted ? result : result.coalesce();
}

// mul with a compressed operand: by a dense tensor, the compressed one's pattern with the
// dense values there; two unbatched CSR (or CSC) tensors, the intersection of their
// patterns, in that layout (current torch multiplies CSR only).
Tensor mul_compressed(const Tensor& self, const Tensor& other) {
  if (!c10::isSparseCompressed(self.layout()) || !c10::isSparseCompressed(other.layout())) {
    const Tensor& sparse = c10::isSparseCompressed(self.layout()) ? self : other;
    const Tensor& dense = c10::isSparseCompressed(self.layout()) ? other : self;
    TORCH_CHECK(dense.layout() == c10::kStrided, "mul: unsupported layouts ", self.layout(), " and ", other.layout());
    const SparseCsrTensorImpl* impl = get_sparse_csr_impl(sparse);
    const Tensor picked = dense_shaped_as(dense, sparse).sparse_mask(sparse);
    return make_sparse_compressed(sparse.layout(), sparse.sizes(), impl->compressed_indices().clone(),
                                  impl->plain_indices().clone(),
                                  at::mul(impl->values(), get_sparse_csr_impl(picked)->values()));
  }
  TORCH_CHECK(self.layout() == other.layout(), "mul: unsupported layouts ", self.layout(), " and ", other.layout());
  check_same_sizes(self, other, "mul");
  TORCH_CHECK_NOT_IMPLEMENTED(!is_blocked(self.layout()) && self.dim() == 2 && self.dense_dim() == 0 &&
                                  other.dense_dim() == 0,
                              "mul of two ", layout_word(self.layout()), " tensors: tessera multiplies 2-D CSR and "
                              "CSC tensors without dense dims only");
  refuse_meta(self, "mul of two sparse tensors");
  const Tensor product = mul_sparse(self.to_sparse(), other.to_sparse());
  return self.layout() == c10::kSparseCsr ? product.to_sparse_csr() : product.to_sparse_csc();
}

// A COO result written into self (the in-place forms), in self's dtype only.
Tensor& assign_coo_(Tensor& self, const Tensor& result) {
  TORCH_CHECK(result.scalar_type() == self.scalar_type(), "result type ", result.scalar_type(),
              " can't be cast to the desired output type ", self.scalar_type());
  const SparseTensorImpl* r = get_sparse_impl(result);
  get_sparse_impl(self)->set_members(result.sizes(), r->indices(), r->values(), r->coalesced());
  return self;
}

}  // namespace

// ---- add / sub

Tensor add_sparse(const Tensor& self, const Tensor& other, const c10::Scalar& alpha) {
  if (self.layout() == c10::kStrided) {
    // dense + sparse: a dense result (torch's add_out_dense_sparse).
    check_same_sizes(self, other, "add");
    Tensor out = self.to(c10::promoteTypes(self.scalar_type(), other.scalar_type()), false, true).contiguous();
    add_coo_into_dense(out, other, alpha);
    return out;
  }
  TORCH_CHECK(other.layout() == c10::kSparse, "add(sparse, dense) is not supported. Use add(dense, sparse) instead.");
  check_same_sizes(self, other, "add");
  TORCH_CHECK(self.sparse_dim() == other.sparse_dim(), "add: expected 'self' and 'other' to have same sparse dimensions, ",
              "but got ", self.sparse_dim(), " and ", other.sparse_dim());
  check_same_device("add", self, {&other});
  refuse_meta(self, "add of two sparse tensors");
  const SparseTensorImpl* a = get_sparse_impl(self);
  const SparseTensorImpl* b = get_sparse_impl(other);
  const c10::ScalarType type = c10::promoteTypes(self.scalar_type(), other.scalar_type());
  const Tensor indices = at::cat({a->indices(), b->indices()}, 1);
  const Tensor values = at::cat({a->values().to(type), at::mul(b->values().to(type), wrapped_scalar_tensor(alpha))}, 0);
  return at::_coalesce(make_sparse_coo(self.sizes(), indices, values.to(type), false));
}

Tensor& add_sparse_(Tensor& self, const Tensor& other, const c10::Scalar& alpha) {
  if (self.layout() == c10::kStrided) {
    check_same_sizes(self, other, "add_");
    TORCH_CHECK(c10::promoteTypes(self.scalar_type(), other.scalar_type()) == self.scalar_type(), "result type ",
                c10::promoteTypes(self.scalar_type(), other.scalar_type()), " can't be cast to the desired output type ",
                self.scalar_type());
    if (self.is_contiguous()) {
      add_coo_into_dense(self, other, alpha);
    } else {
      Tensor tmp = self.contiguous();
      add_coo_into_dense(tmp, other, alpha);
      self.copy_(tmp);
    }
    return self;
  }
  TORCH_CHECK(other.layout() == c10::kSparse, "add_(sparse, dense) is not supported: the result would be dense. ",
              "Use add(dense, sparse) instead.");
  const Tensor sum = add_sparse(self, other, alpha);
  TORCH_CHECK(sum.scalar_type() == self.scalar_type(), "result type ", sum.scalar_type(),
              " can't be cast to the desired output type ", self.scalar_type());
  const SparseTensorImpl* s = get_sparse_impl(sum);
  get_sparse_impl(self)->set_members(sum.sizes(), s->indices(), s->values(), s->coalesced());
  return self;
}

Tensor sub_sparse(const Tensor& self, const Tensor& other, const c10::Scalar& alpha) {
  TORCH_CHECK(self.scalar_type() != c10::kBool && other.scalar_type() != c10::kBool,
              "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
              "operator instead.");
  return add_sparse(self, other, -alpha);
}

// ---- mul / div

Tensor mul_sparse(const Tensor& self, const Tensor& other) {
  if (is_scalar_operand(other) || is_scalar_operand(self)) {
    const Tensor& sparse = is_scalar_operand(other) ? self : other;
    const Tensor& scalar = is_scalar_operand(other) ? other : self;
    if (sparse.layout() == c10::kSparse) {
      const SparseTensorImpl* impl = get_sparse_impl(sparse);
      return make_sparse_coo(sparse.sizes(), impl->indices().clone(), at::mul(impl->values(), scalar), impl->coalesced());
    }
    const SparseCsrTensorImpl* impl = get_sparse_csr_impl(sparse);
    return make_sparse_compressed(sparse.layout(), sparse.sizes(), impl->compressed_indices().clone(),
                                  impl->plain_indices().clone(), at::mul(impl->values(), scalar));
  }
  check_same_device("mul", self, {&other});
  if (c10::isSparseCompressed(self.layout()) || c10::isSparseCompressed(other.layout())) {
    return mul_compressed(self, other);
  }
  if (self.layout() == c10::kSparse && other.layout() == c10::kSparse) {
    refuse_meta(self, "mul of two sparse tensors");
    Tensor a = self.coalesce(), b = other.coalesce();
    if (!self.sizes().equals(other.sizes())) {
      // Broadcast operands (beyond torch's forward, which asks for one shape): what the
      // gradient of a COO * dense product that grew its COO operand multiplies.
      const std::vector<int64_t> shape = infer_size(self.sizes(), other.sizes());
      if (!IntArrayRef(shape).equals(a.sizes())) a = broadcast_coo_to(a, shape);
      if (!IntArrayRef(shape).equals(b.sizes())) b = broadcast_coo_to(b, shape);
    }
    TORCH_CHECK(a.sparse_dim() == b.sparse_dim(), "mul: expects sparse inputs with the same number of sparse dims, got ",
                a.sparse_dim(), " and ", b.sparse_dim(), " (shapes ", self.sizes(), " and ", other.sizes(), ")");
    auto [left, right] = intersect(a, b);
    const SparseTensorImpl* ia = get_sparse_impl(a);
    const SparseTensorImpl* ib = get_sparse_impl(b);
    const Tensor l = tensor_from_vector(left), r = tensor_from_vector(right);
    return make_sparse_coo(a.sizes(), ia->indices().index_select(1, l),
                           at::mul(ia->values().index_select(0, l), ib->values().index_select(0, r)), true);
  }
  // sparse * dense (either order): the sparse operand's pattern, as current torch.
  const Tensor& sparse = self.layout() == c10::kSparse ? self : other;
  const Tensor& dense = self.layout() == c10::kSparse ? other : self;
  TORCH_CHECK(sparse.layout() == c10::kSparse && dense.layout() == c10::kStrided, "mul: unsupported layouts ",
              self.layout(), " and ", other.layout());
  const std::vector<int64_t> shape = infer_size(dense.sizes(), sparse.sizes());  // (torch's error if none)
  Tensor a = sparse.coalesce();
  if (!IntArrayRef(shape).equals(sparse.sizes())) {
    refuse_meta(sparse, "mul of a COO tensor by a dense one that broadcasts it");
    a = broadcast_coo_to(a, shape);
  }
  const SparseTensorImpl* ia = get_sparse_impl(a);
  return make_sparse_coo(a.sizes(), ia->indices(), at::mul(ia->values(), dense.expand(shape).sparse_mask(a)._values()),
                         true);
}

Tensor& mul_sparse_(Tensor& self, const Tensor& other) {
  TORCH_CHECK(c10::isSparseLayout(self.layout()), "mul_(dense, sparse) is not supported: the result would be sparse. "
              "Use mul(dense, sparse) instead.");
  const Tensor product = mul_sparse(self, other);
  TORCH_CHECK(product.sizes().equals(self.sizes()), "output with shape ", self.sizes(),
              " doesn't match the broadcast shape ", product.sizes());
  // (the product in self's dtype, where torch's in-place rule allows the cast)
  const c10::ScalarType type = self.scalar_type();
  TORCH_CHECK(c10::canCast(product.scalar_type(), type), "result type ", product.scalar_type(),
              " can't be cast to the desired output type ", type);
  if (self.layout() != c10::kSparse) {
    const SparseCsrTensorImpl* p = get_sparse_csr_impl(product);
    get_sparse_csr_impl(self)->set_members(product.sizes(), p->compressed_indices(), p->plain_indices(),
                                           p->values().to(type));
    return self;
  }
  const SparseTensorImpl* p = get_sparse_impl(product);
  get_sparse_impl(self)->set_members(product.sizes(), p->indices(), p->values().to(type), p->coalesced());
  return self;
}

Tensor div_sparse(const Tensor& self, const Tensor& other) { return div_mode_sparse(self, other, std::nullopt); }

Tensor& div_sparse_(Tensor& self, const Tensor& other) { return assign_coo_(self, div_sparse(self, other)); }

// Division by a number, with torch's rounding modes: not linear where the divisor is 0
// or the result rounds, so on the values of the coalesced tensor (each position once).
Tensor div_mode_sparse(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  TORCH_CHECK(self.layout() == c10::kSparse && is_scalar_operand(other),
              "Sparse division requires a scalar or zero-dim dense tensor divisor (got shape ", other.sizes(),
              " for divisor)");
  const Tensor a = get_sparse_impl(self)->coalesced() ? self : self.coalesce();
  const SparseTensorImpl* ia = get_sparse_impl(a);
  return make_sparse_coo(self.sizes(), ia->indices().clone(), at::div(ia->values(), other, rounding_mode), true);
}

Tensor& div_mode_sparse_(Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  return assign_coo_(self, div_mode_sparse(self, other, rounding_mode));
}

Tensor floor_divide_sparse(const Tensor& self, const Tensor& other) {
  return div_mode_sparse(self, other, std::string_view("floor"));
}

Tensor& floor_divide_sparse_(Tensor& self, const Tensor& other) {
  return assign_coo_(self, floor_divide_sparse(self, other));
}

// ---- any: whether a specified element is nonzero, once duplicates are summed (torch
// reads the raw values, where duplicates that cancel would answer true).

Tensor any_sparse(const Tensor& self) {
  if (self.is_meta()) return at::empty({}, self.options().dtype(c10::kBool).layout(c10::kStrided));
  return get_sparse_impl(self.coalesce(), "any")->values().any();
}

// ---- sums

Tensor sum_sparse(const Tensor& self, std::optional<c10::ScalarType> dtype) {
  if (self.layout() != c10::kSparse) return get_sparse_csr_impl(self, "sum")->values().sum(dtype);
  return get_sparse_impl(self, "sum")->values().sum(dtype);
}

Tensor sparse_sum_all(const Tensor& self) { return get_sparse_impl(self, "_sparse_sum")->values().sum(); }

Tensor sparse_sum_dims(const Tensor& self, IntArrayRef dim) {
  const SparseTensorImpl* impl = get_sparse_impl(self, "_sparse_sum");
  const int64_t n = self.dim(), sd = impl->sparse_dim();
  std::vector<bool> summed(static_cast<size_t>(n), false);
  for (int64_t d : dim) {
    TORCH_CHECK_INDEX(d >= -n && d < n, "Dimension out of range (expected to be in range of [", -n, ", ", n - 1,
                      "], but got ", d, ")");
    const int64_t w = d < 0 ? d + n : d;
    TORCH_CHECK(!summed[static_cast<size_t>(w)], "dim ", w, " appears multiple times in the list of dims");
    summed[static_cast<size_t>(w)] = true;
  }
  Tensor values = impl->values();
  std::vector<int64_t> dense_dims;
  for (int64_t d = n; d-- > sd;) {
    if (summed[static_cast<size_t>(d)]) dense_dims.push_back(d - sd + 1);
  }
  if (!dense_dims.empty()) values = values.sum(dense_dims);
  std::vector<int64_t> kept_sparse, size;
  for (int64_t d = 0; d < n; ++d) {
    if (summed[static_cast<size_t>(d)]) continue;
    size.push_back(self.size(d));
    if (d < sd) kept_sparse.push_back(d);
  }
  if (kept_sparse.empty()) return values.sum(0);
  if (static_cast<int64_t>(kept_sparse.size()) == sd) return make_sparse_coo(size, impl->indices(), values, impl->coalesced());
  refuse_meta(self, "torch.sparse.sum over some of the sparse dims");
  const Tensor indices = impl->indices().index_select(0, index_tensor(kept_sparse, self));
  return at::_coalesce(make_sparse_coo(size, indices, values, false));
}

namespace sparse {
Tensor sum_coo_to_size(const Tensor& self, IntArrayRef size) {
  const SparseTensorImpl* impl = get_sparse_impl(self);
  const int64_t lead = self.dim() - static_cast<int64_t>(size.size()), sparse_dim = impl->sparse_dim();
  const auto summed_to_one = [&](int64_t d) { return d >= lead && size[d - lead] == 1 && self.size(d) != 1; };
  // Sparse dims: a leading one's index row goes, a widened one's becomes 0 (coalescing then
  // adds the entries it folds together).
  std::vector<int64_t> kept_rows, zeroed_rows;
  for (int64_t d = 0; d < sparse_dim; ++d) {
    if (d < lead) continue;
    if (summed_to_one(d)) zeroed_rows.push_back(static_cast<int64_t>(kept_rows.size()));
    kept_rows.push_back(d);
  }
  Tensor indices = impl->indices().index_select(0, index_tensor(kept_rows, impl->indices())).clone();
  for (int64_t r : zeroed_rows) indices.select(0, r).zero_();
  // Dense dims (value dim d - sparse_dim + 1), last first so earlier positions hold.
  Tensor values = impl->values();
  for (int64_t d = self.dim() - 1; d >= sparse_dim; --d) {
    const int64_t v = d - sparse_dim + 1;
    if (d < lead) {
      values = values.sum(v);
    } else if (summed_to_one(d)) {
      values = values.sum(v, /*keepdim=*/true);
    }
  }
  return make_sparse_coo(size, indices, values, false).coalesce();
}
}  // namespace sparse

Tensor sparse_sum_backward(const Tensor& grad, const Tensor& self, IntArrayRef dim) {
  const int64_t n = self.dim();
  std::vector<int64_t> keep_shape = self.sizes().vec();
  for (int64_t d : dim) keep_shape[static_cast<size_t>(d < 0 ? d + n : d)] = 1;
  const Tensor g = grad.layout() == c10::kStrided ? grad : grad.to_dense();
  return g.reshape(keep_shape).expand(self.sizes()).sparse_mask(self);
}

// ---- matrix products

namespace {

// out[M, N] = A x dense for A given by COO entries (rows, cols, values) of a 2-D matrix:
// entries are grouped by row (a counting sort), then rows run in parallel.
Tensor spmm(const Tensor& rows_t, const Tensor& cols_t, const Tensor& values_t, int64_t m, const Tensor& dense_in) {
  TORCH_CHECK(values_t.scalar_type() == dense_in.scalar_type(), "expected mat1 and mat2 to have the same dtype, but got: ",
              values_t.scalar_type(), " != ", dense_in.scalar_type());
  const Tensor dense = dense_in.contiguous();
  const int64_t n = dense.size(1), k_dim = dense.size(0), nnz = rows_t.numel();
  Tensor out = at::zeros({m, n}, dense.options());
  if (nnz == 0 || n == 0) return out;
  const Tensor rows_c = rows_t.contiguous(), cols_c = cols_t.contiguous(), values = values_t.contiguous();
  const int64_t* rows = static_cast<const int64_t*>(rows_c.data_ptr());
  const int64_t* cols = static_cast<const int64_t*>(cols_c.data_ptr());
  std::vector<int64_t> start(static_cast<size_t>(m + 1), 0), order(static_cast<size_t>(nnz));
  for (int64_t i = 0; i < nnz; ++i) {
    TORCH_CHECK(rows[i] >= 0 && rows[i] < m && cols[i] >= 0 && cols[i] < k_dim, "mm: sparse index (", rows[i], ", ",
                cols[i], ") out of range for a ", m, " x ", k_dim, " matrix");
    ++start[static_cast<size_t>(rows[i] + 1)];
  }
  for (int64_t r = 0; r < m; ++r) start[static_cast<size_t>(r + 1)] += start[static_cast<size_t>(r)];
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t i = 0; i < nnz; ++i) order[static_cast<size_t>(fill[static_cast<size_t>(rows[i])]++)] = i;
  dispatch_types<kFloating | kComplex | kIntegral>(dense.scalar_type(), "mm", [&]<typename scalar_t>() {
    const scalar_t* v = static_cast<const scalar_t*>(values.data_ptr());
    const scalar_t* d = static_cast<const scalar_t*>(dense.data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(n, 1));
    at::parallel_for(0, m, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        scalar_t* orow = o + r * n;
        for (int64_t k = start[static_cast<size_t>(r)]; k < start[static_cast<size_t>(r + 1)]; ++k) {
          const int64_t e = order[static_cast<size_t>(k)];
          const scalar_t a = v[e];
          const scalar_t* drow = d + cols[e] * n;
          for (int64_t j = 0; j < n; ++j) orow[j] = static_cast<scalar_t>(orow[j] + a * drow[j]);
        }
      }
    });
  });
  return out;
}

// The compressed indices rise from 0 to nnz: 0 = c[0] <= c[1] <= ... <= c[m] = nnz (the
// members may come from an unchecked constructor, and the kernel reads through them; it
// checks the plain indices itself, in parallel).
template <typename I>
bool csr_compressed_valid(const Tensor& compressed, int64_t m, int64_t nnz) {
  const I* c = static_cast<const I*>(compressed.data_ptr());
  bool ok = compressed.numel() == m + 1 && c[0] == 0 && c[m] == nnz;
  for (int64_t r = 0; ok && r < m; ++r) ok = c[r] <= c[r + 1];
  return ok;
}

// Whether the members have the shapes and dtypes the kernel reads them as (one int32 or
// int64 index dtype, 1-D, as many values as plain indices); anything else (an unchecked
// constructor's members) takes the generic path, which validates them fully.
bool csr_members_fit_kernel(const Tensor& self) {
  const SparseCsrTensorImpl* impl = get_sparse_csr_impl(self);
  const Tensor &c = impl->compressed_indices(), &p = impl->plain_indices(), &v = impl->values();
  const c10::ScalarType t = c.scalar_type();
  return (t == c10::kInt || t == c10::kLong) && p.scalar_type() == t && c.dim() == 1 && p.dim() == 1 &&
         v.dim() == 1 && v.size(0) == p.size(0);
}

// CSR x dense through the per-ISA kernel (Note [CSR x dense]).
Tensor spmm_csr(const Tensor& self, const Tensor& mat2) {
  const SparseCsrTensorImpl* impl = get_sparse_csr_impl(self);
  const Tensor compressed = impl->compressed_indices().contiguous(), plain = impl->plain_indices().contiguous();
  const int64_t m = self.size(0), k = self.size(1);
  const bool compressed_ok = compressed.scalar_type() == c10::kInt
                                ? csr_compressed_valid<int32_t>(compressed, m, plain.numel())
                                : csr_compressed_valid<int64_t>(compressed, m, plain.numel());
  auto invalid = [&] {
    TORCH_CHECK(false, "mm: the CSR operand's indices are invalid (compressed indices must rise from 0 to nnz, "
                "plain indices lie in [0, ", k, "))");
  };
  if (!compressed_ok) invalid();
  if (plain.numel() == 0) return at::zeros({m, mat2.size(1)}, mat2.options());
  if (mat2.size(1) == 0) {  // (no kernel run to check the plain indices: check them here)
    const Tensor p = plain.to(c10::kLong);
    const int64_t* q = static_cast<const int64_t*>(p.data_ptr());
    if (!std::all_of(q, q + p.numel(), [&](int64_t i) { return i >= 0 && i < k; })) invalid();
    return at::zeros({m, 0}, mat2.options());
  }
  Tensor out = at::empty({m, mat2.size(1)}, mat2.options());
  if (!spmm_csr_stub(c10::DeviceType::CPU, compressed, plain, impl->values().contiguous(), mat2.contiguous(), out)) {
    invalid();
  }
  return out;
}

void matrix_entries_check(const Tensor& t, const char* op) {
  TORCH_CHECK(t.dim() == 2, op, ": expected a 2-D sparse matrix, got ", t.dim(), " dims");
  TORCH_CHECK(t.dense_dim() == 0, op, ": sparse matrices with dense dimensions are not supported");
}

// The (rows, cols, values) of a 2-D sparse matrix of any layout, with no dense dims.
std::tuple<Tensor, Tensor, Tensor> matrix_entries(const Tensor& t, const char* op) {
  matrix_entries_check(t, op);
  const Tensor coo = t.layout() == c10::kSparse ? t : t.to_sparse();
  const SparseTensorImpl* impl = get_sparse_impl(coo);
  return {impl->indices().select(0, 0), impl->indices().select(0, 1), impl->values()};
}

// C = A x B for two sparse matrices (Gustavson's row-by-row product); COO result.
Tensor spgemm(const Tensor& a, const Tensor& b) {
  TORCH_CHECK(a.size(1) == b.size(0), "mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x", a.size(1), " and ",
              b.size(0), "x", b.size(1), ")");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "expected mat1 and mat2 to have the same dtype, but got: ",
              a.scalar_type(), " != ", b.scalar_type());
  const Tensor ca = a.to_sparse_csr(), cb = b.to_sparse_csr();
  for (const Tensor* t : {&ca, &cb}) {  // (a CSR operand is used as it is: check its members)
    at::_validate_sparse_compressed_tensor_args(t->crow_indices(), t->col_indices(), t->values(), t->sizes(),
                                                c10::kSparseCsr);
  }
  const int64_t m = a.size(0), n = b.size(1);
  const Tensor arow = ca.crow_indices().to(c10::kLong).contiguous(), acol = ca.col_indices().to(c10::kLong).contiguous();
  const Tensor brow = cb.crow_indices().to(c10::kLong).contiguous(), bcol = cb.col_indices().to(c10::kLong).contiguous();
  const Tensor av = ca.values().contiguous(), bv = cb.values().contiguous();
  const int64_t* ar = static_cast<const int64_t*>(arow.data_ptr());
  const int64_t* ac = static_cast<const int64_t*>(acol.data_ptr());
  const int64_t* br = static_cast<const int64_t*>(brow.data_ptr());
  const int64_t* bc = static_cast<const int64_t*>(bcol.data_ptr());
  std::vector<int64_t> out_rows, out_cols;
  Tensor values;
  dispatch_types<kFloating | kComplex | kIntegral>(a.scalar_type(), "mm", [&]<typename scalar_t>() {
    const scalar_t* x = static_cast<const scalar_t*>(av.data_ptr());
    const scalar_t* y = static_cast<const scalar_t*>(bv.data_ptr());
    std::vector<scalar_t> acc(static_cast<size_t>(n)), out_values;
    std::vector<int64_t> marker(static_cast<size_t>(n), -1), touched;
    for (int64_t i = 0; i < m; ++i) {
      touched.clear();
      for (int64_t p = ar[i]; p < ar[i + 1]; ++p) {
        const int64_t k = ac[p];
        for (int64_t q = br[k]; q < br[k + 1]; ++q) {
          const int64_t j = bc[q];
          if (marker[static_cast<size_t>(j)] != i) {
            marker[static_cast<size_t>(j)] = i;
            acc[static_cast<size_t>(j)] = scalar_t(0);
            touched.push_back(j);
          }
          acc[static_cast<size_t>(j)] = static_cast<scalar_t>(acc[static_cast<size_t>(j)] + x[p] * y[q]);
        }
      }
      std::sort(touched.begin(), touched.end());
      for (int64_t j : touched) {
        out_rows.push_back(i);
        out_cols.push_back(j);
        out_values.push_back(acc[static_cast<size_t>(j)]);
      }
    }
    values = make_empty({static_cast<int64_t>(out_values.size())}, a.scalar_type(), c10::Device(c10::DeviceType::CPU));
    std::copy(out_values.begin(), out_values.end(), static_cast<scalar_t*>(values.data_ptr()));
  });
  const Tensor indices = at::stack({tensor_from_vector(out_rows), tensor_from_vector(out_cols)}, 0);
  return make_sparse_coo({m, n}, indices, values, true);
}

}  // namespace

namespace {
bool is_reduced_float(c10::ScalarType t) { return t == c10::kHalf || t == c10::kBFloat16; }

// alpha or beta as a number of the result's dtype: torch's addmm takes beta=1.0 for
// integer tensors and keeps their dtype.
Tensor scalar_like(const c10::Scalar& s, c10::ScalarType type) {
  if (c10::isIntegralType(type, /*includeBool=*/true)) return wrapped_scalar_tensor(c10::Scalar(s.toLong()));
  return wrapped_scalar_tensor(s);
}
}  // namespace

Tensor sparse_mm(const Tensor& self, const Tensor& mat2) {
  // Half / BFloat16: computed in float and rounded once, as the dense GEMMs accumulate.
  if (is_reduced_float(self.scalar_type()) && self.scalar_type() == mat2.scalar_type()) {
    return sparse_mm(self.to(c10::kFloat), mat2.to(c10::kFloat)).to(self.scalar_type());
  }
  TORCH_CHECK(self.dim() == 2, "self must be a matrix");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(self.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", self.size(0), "x",
              self.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  const bool a_sparse = c10::isSparseLayout(self.layout()), b_sparse = c10::isSparseLayout(mat2.layout());
  check_same_device("mm", self, {&mat2});
  if (self.is_meta()) {  // a dense product's shape needs no data (Note [Sparse meta tensors])
    TORCH_CHECK(self.scalar_type() == mat2.scalar_type(), "expected mat1 and mat2 to have the same dtype, but got: ",
                self.scalar_type(), " != ", mat2.scalar_type());
    if (a_sparse && b_sparse) refuse_meta(self, "mm of two sparse matrices");
    if (a_sparse) matrix_entries_check(self, "mm");
    if (b_sparse) matrix_entries_check(mat2, "mm");
    return at::empty({self.size(0), mat2.size(1)}, (a_sparse ? mat2 : self).options());
  }
  if (a_sparse && b_sparse) {
    Tensor product = spgemm(self, mat2);
    // torch: a compressed operand gives a result in the first operand's layout.
    return self.layout() == c10::kSparse ? product : product.to_sparse(self.layout());
  }
  if (a_sparse) {
    if (self.layout() == c10::kSparseCsr && self.dense_dim() == 0 && sparse_kernels_take(self.scalar_type()) &&
        mat2.scalar_type() == self.scalar_type() && csr_members_fit_kernel(self)) {
      return spmm_csr(self, mat2);
    }
    auto [rows, cols, values] = matrix_entries(self, "mm");
    return spmm(rows, cols, values, self.size(0), mat2);
  }
  // dense x sparse = (sparse^T x dense^T)^T
  auto [rows, cols, values] = matrix_entries(mat2, "mm");
  return spmm(cols, rows, values, mat2.size(1), self.t()).t().contiguous();
}

Tensor sparse_addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const c10::Scalar& beta,
                    const c10::Scalar& alpha) {
  check_same_device("addmm", self, {&mat1});
  const c10::ScalarType type = self.scalar_type();
  if (is_reduced_float(type) && mat1.scalar_type() == type && mat2.scalar_type() == type) {
    return sparse_addmm(self.to(c10::kFloat), mat1.to(c10::kFloat), mat2.to(c10::kFloat), beta, alpha).to(type);
  }
  const Tensor product = at::mm(mat1, mat2);
  const Tensor b = scalar_like(beta, type), a = scalar_like(alpha, type);
  if (c10::isSparseLayout(product.layout()) && c10::isSparseLayout(self.layout())) {
    return at::add(at::mul(self, b), at::mul(product, a));
  }
  const Tensor dense_product = product.layout() == c10::kStrided ? product : product.to_dense();
  const Tensor base = self.layout() == c10::kStrided ? self : self.to_dense();
  TORCH_CHECK(base.dim() <= 2, "addmm: self must be broadcastable to the product's shape ", dense_product.sizes());
  // beta == 0 ignores self entirely (nan and inf included), as dense addmm does.
  if (beta.equal(c10::Scalar(0))) return at::mul(dense_product, a);
  return at::add(at::mul(base.expand(dense_product.sizes()), b), at::mul(dense_product, a));
}

Tensor sparse_sparse_matmul(const Tensor& self, const Tensor& other) {
  TORCH_CHECK(self.layout() == c10::kSparse && other.layout() == c10::kSparse,
              "_sparse_sparse_matmul expects two sparse COO matrices, got ", self.layout(), " and ", other.layout());
  TORCH_CHECK(self.dim() == 2 && other.dim() == 2, "_sparse_sparse_matmul: expected 2-D matrices, got ", self.dim(),
              "-D and ", other.dim(), "-D");
  if (is_reduced_float(self.scalar_type()) && self.scalar_type() == other.scalar_type()) {
    return sparse_sparse_matmul(self.to(c10::kFloat), other.to(c10::kFloat)).to(self.scalar_type());
  }
  return spgemm(self, other);
}

Tensor _sparse_mm(const Tensor& sparse, const Tensor& dense) {
  const int64_t rows = sparse.size(0), cols = dense.dim() == 2 ? dense.size(1) : 0;
  return at::_sparse_addmm(at::zeros({rows, cols}, dense.options()), sparse, dense, 0, 1);
}

}  // namespace at::inline tessera::native
