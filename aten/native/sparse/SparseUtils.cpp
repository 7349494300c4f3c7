#include <aten/native/sparse/SparseUtils.h>

#include <aten/core/Parallel.h>
#include <aten/core/TensorUtils.h>
#include <aten/native/HostVector.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <vector>

namespace at::inline tessera::native::sparse {

int64_t numel_of(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

void refuse_meta(const Tensor& t, const char* op) {
  TORCH_CHECK_NOT_IMPLEMENTED(!t.is_meta(), op, " on the Meta device: the result's nnz depends on the sparse "
                              "tensor's indices, which a meta tensor does not have (a data-dependent operator)");
}

Tensor index_tensor(const std::vector<int64_t>& v, const Tensor& like) { return tensor_from_vector(v, like.device()); }

Tensor flatten_indices(const Tensor& indices, IntArrayRef sparse_sizes) {
  refuse_meta(indices, "flattening sparse indices");
  const Tensor idx = indices.contiguous();
  const int64_t dims = idx.size(0), nnz = idx.size(1);
  Tensor out = make_empty({nnz}, c10::kLong, c10::Device(c10::DeviceType::CPU));
  const int64_t* in = static_cast<const int64_t*>(idx.data_ptr());
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  for (int64_t i = 0; i < nnz; ++i) o[i] = 0;
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t size = sparse_sizes[static_cast<size_t>(d)];
    const int64_t* row = in + d * nnz;
    for (int64_t i = 0; i < nnz; ++i) o[i] = o[i] * size + row[i];
  }
  return out;
}

Tensor unflatten_indices(const Tensor& linear, IntArrayRef sparse_sizes) {
  refuse_meta(linear, "unflattening sparse indices");
  const Tensor lin = linear.contiguous();
  const int64_t dims = static_cast<int64_t>(sparse_sizes.size()), n = lin.numel();
  Tensor out = make_empty({dims, n}, c10::kLong, c10::Device(c10::DeviceType::CPU));
  const int64_t* in = static_cast<const int64_t*>(lin.data_ptr());
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  std::vector<double> inverse(static_cast<size_t>(dims));
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t size = sparse_sizes[static_cast<size_t>(d)];
    inverse[static_cast<size_t>(d)] = size > 0 ? 1.0 / static_cast<double>(size) : 0.0;
  }
  // (a 64-bit division costs tens of cycles: below 2^52 the quotient is taken in double
  // precision and corrected by at most one, exactly)
  at::parallel_for(0, n, 65536, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t rest = in[i];
      for (int64_t d = dims; d-- > 0;) {
        const int64_t size = sparse_sizes[static_cast<size_t>(d)];
        int64_t q = 0;
        if (size > 0 && rest < (int64_t{1} << 52)) {
          q = static_cast<int64_t>(static_cast<double>(rest) * inverse[static_cast<size_t>(d)]);
          if (q * size > rest) --q;
          if ((q + 1) * size <= rest) ++q;
        } else if (size > 0) {
          q = rest / size;
        }
        o[d * n + i] = size > 0 ? rest - q * size : 0;
        rest = q;
      }
    }
  });
  return out;
}

std::vector<int64_t> radix_order(const int64_t* key, int64_t n, int64_t max_key, std::vector<int64_t>& sorted_keys) {
  struct Entry {
    int64_t key, position;
  };
  constexpr int kBits = 11;
  constexpr int64_t kBuckets = int64_t{1} << kBits;
  std::vector<Entry> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) a[static_cast<size_t>(i)] = {key[i], i};
  int bits = 0;
  while (bits < 63 && (max_key >> bits) != 0) ++bits;
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), n / 65536));
  const int64_t per_chunk = (n + chunks - 1) / chunks;
  std::vector<int64_t> counts(static_cast<size_t>(chunks * kBuckets));
  for (int shift = 0; shift < bits; shift += kBits) {
    std::fill(counts.begin(), counts.end(), 0);
    at::parallel_for(0, chunks, 1, [&](int64_t cb, int64_t ce) {
      for (int64_t c = cb; c < ce; ++c) {
        int64_t* h = counts.data() + c * kBuckets;
        for (int64_t i = c * per_chunk, hi = std::min(n, (c + 1) * per_chunk); i < hi; ++i) {
          ++h[(a[static_cast<size_t>(i)].key >> shift) & (kBuckets - 1)];
        }
      }
    });
    // (a pass where every key has the same digit moves nothing)
    bool one_bucket = false;
    for (int64_t d = 0; d < kBuckets && !one_bucket; ++d) {
      int64_t total = 0;
      for (int64_t c = 0; c < chunks; ++c) total += counts[static_cast<size_t>(c * kBuckets + d)];
      one_bucket = total == n;
    }
    if (one_bucket) continue;
    // bucket d of chunk c starts after every smaller bucket, then after bucket d of chunks before c
    int64_t offset = 0;
    for (int64_t d = 0; d < kBuckets; ++d) {
      for (int64_t c = 0; c < chunks; ++c) {
        int64_t& slot = counts[static_cast<size_t>(c * kBuckets + d)];
        const int64_t count = slot;
        slot = offset;
        offset += count;
      }
    }
    at::parallel_for(0, chunks, 1, [&](int64_t cb, int64_t ce) {
      for (int64_t c = cb; c < ce; ++c) {
        int64_t* next = counts.data() + c * kBuckets;
        for (int64_t i = c * per_chunk, hi = std::min(n, (c + 1) * per_chunk); i < hi; ++i) {
          const Entry& e = a[static_cast<size_t>(i)];
          b[static_cast<size_t>(next[(e.key >> shift) & (kBuckets - 1)]++)] = e;
        }
      }
    });
    a.swap(b);
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  sorted_keys.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    order[static_cast<size_t>(i)] = a[static_cast<size_t>(i)].position;
    sorted_keys[static_cast<size_t>(i)] = a[static_cast<size_t>(i)].key;
  }
  return order;
}

void check_indices_in_bounds(const Tensor& indices, IntArrayRef size) {
  refuse_meta(indices, "checking sparse indices");
  const Tensor idx = indices.contiguous();
  const int64_t dims = idx.size(0), nnz = idx.size(1);
  const int64_t* in = static_cast<const int64_t*>(idx.data_ptr());
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t* row = in + d * nnz;
    int64_t lo = 0, hi = -1;
    for (int64_t i = 0; i < nnz; ++i) {
      lo = i == 0 || row[i] < lo ? row[i] : lo;
      hi = row[i] > hi ? row[i] : hi;
    }
    if (nnz == 0) continue;
    TORCH_CHECK(lo >= 0, "found negative index ", lo, " for dim ", d);
    TORCH_CHECK(hi < size[static_cast<size_t>(d)], "size is inconsistent with indices: for dim ", d, ", size is ",
                size[static_cast<size_t>(d)], " but found index ", hi);
  }
}

Tensor plain(const Tensor& t) { return make_view(t, t.sizes(), t.strides(), t.storage_offset()); }

Tensor as_coo(const Tensor& t) {
  if (t.layout() == c10::kSparse) return t;
  return t.to_sparse();
}

const char* layout_word(Layout layout) {
  switch (layout) {
    case c10::kStrided: return "Strided";
    case c10::kSparse: return "Sparse";
    case c10::kSparseCsr: return "SparseCsr";
    case c10::kSparseCsc: return "SparseCsc";
    case c10::kSparseBsr: return "SparseBsr";
    case c10::kSparseBsc: return "SparseBsc";
    case c10::kMkldnn: return "Mkldnn";
  }
  return "?";
}

void check_factory_options(std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                           std::optional<bool> pin_memory, c10::Layout expected, const char* op) {
  TORCH_CHECK(!layout || *layout == expected, op, ": expected layout ", expected, ", got ", *layout);
  TORCH_CHECK_NOT_IMPLEMENTED(!device || device->is_cpu() || device->is_meta(), op,
                              ": sparse tensors live on the CPU or the meta device here, not on ", *device);
  TORCH_CHECK_NOT_IMPLEMENTED(!pin_memory.value_or(false), op, ": pin_memory=True needs CUDA");
}

}  // namespace at::inline tessera::native::sparse
