// Helpers shared by the sparse kernels (aten/native/sparse): index arithmetic on COO
// indices, building results, and the checks the constructors and conversions share.
#pragma once

#include <aten/core/SparseTensorImpl.h>

#include <vector>

namespace at::inline tessera::native::sparse {

// The product of sizes (the number of positions the sparse dims address).
int64_t numel_of(IntArrayRef sizes);

// Row-major linear position of each entry over the sparse dims: int64 [nnz].
Tensor flatten_indices(const Tensor& indices, IntArrayRef sparse_sizes);
// The inverse of flatten_indices: int64 [sparse_sizes.size(), n].
Tensor unflatten_indices(const Tensor& linear, IntArrayRef sparse_sizes);

// The stable order that sorts n nonnegative keys (at most max_key): an LSD radix sort of
// (key, position) pairs, 11 bits a pass over the bits max_key needs, each pass split
// across threads. Keeps the sorted keys in `sorted_keys`.
std::vector<int64_t> radix_order(const int64_t* key, int64_t n, int64_t max_key, std::vector<int64_t>& sorted_keys);

// Raises torch's "size is inconsistent with indices" unless every index of dim d lies
// in [0, size[d]): what keeps to_dense's scatter inside its buffer.
void check_indices_in_bounds(const Tensor& indices, IntArrayRef size);

// A COO tensor's members without autograd state (a fresh alias sharing data and
// version counter), so kernels can compute with them below autograd.
Tensor plain(const Tensor& t);

// A sparse tensor of any layout as COO over its sparse dims (batch dims of a compressed
// tensor become leading sparse dims; block values become dense entries).
Tensor as_coo(const Tensor& t);

// sum_to_size of a COO tensor (a grad of a sparse * dense product that grew its sparse
// operand): leading dims summed away, widened dims summed back to size 1, each kept in the
// layout it had (a sparse dim stays sparse, a dense dim dense), so the grad keeps its
// input's sparse_dim.
Tensor sum_coo_to_size(const Tensor& self, IntArrayRef size);

// CSR and BSR compress rows (CSC and BSC columns); BSR and BSC store value blocks.
inline bool compresses_rows(Layout layout) { return layout == c10::kSparseCsr || layout == c10::kSparseBsr; }
inline bool is_blocked(Layout layout) { return layout == c10::kSparseBsr || layout == c10::kSparseBsc; }

// Note [Sparse meta tensors]: a sparse tensor on the meta device (SparseMeta,
// SparseCsrMeta) has meta members: its shape, dtype, sparse and dense dims and nnz are
// real, its indices and values hold no data. The kernels serve both keys; an op whose
// result's shape or nnz follows from those alone (the unary family, scalar arithmetic,
// shape ops along dense dims, to_dense, products with a dense result, softmax) runs on
// meta, and one whose nnz depends on the index data (coalesce, the union of add, the
// intersection of mul, selecting along a sparse dim, conversions between layouts) raises
// NotImplementedError through refuse_meta, as torch's data-dependent operators do.
void refuse_meta(const Tensor& t, const char* op);
// A host index vector as an int64 tensor on `like`'s device (only its shape on meta).
Tensor index_tensor(const std::vector<int64_t>& v, const Tensor& like);

// The factories' option checks: the layout asked (when given) is `expected`; sparse tensors
// live on the CPU or the meta device; no pinned memory.
void check_factory_options(std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                           std::optional<bool> pin_memory, c10::Layout expected, const char* op);

// The layout's name as torch prints it in messages ("Sparse", "SparseCsr", ...).
const char* layout_word(Layout layout);

}  // namespace at::inline tessera::native::sparse
