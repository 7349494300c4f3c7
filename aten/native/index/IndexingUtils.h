// What the indexing kernels share (Indexing.cpp, ScatterGather.cpp, TensorTransform.cpp):
// moving elements as raw bytes of the dtype's size, and one loop over a TensorIterator
// whose first two operands are the written and the read tensor and whose other operands
// are index tensors, each selecting a position along one dimension of one side.
#pragma once

#include <aten/native/TensorIterator.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace at::inline tessera::native {

struct Bytes16 {
  uint64_t lo, hi;
};

// Calls f.template operator()<T>() with an unsigned type of the given byte size.
template <typename F>
void by_itemsize(size_t itemsize, F&& f) {
  switch (itemsize) {
    case 1: f.template operator()<uint8_t>(); break;
    case 2: f.template operator()<uint16_t>(); break;
    case 4: f.template operator()<uint32_t>(); break;
    case 8: f.template operator()<uint64_t>(); break;
    case 16: f.template operator()<Bytes16>(); break;
    default: TORCH_INTERNAL_ASSERT(false, "no element type of ", itemsize, " bytes");
  }
}

// The dims the index operands select along: their sizes and the indexed side's strides in
// bytes, plus how a bad index is reported.
struct IndexedDims {
  c10::SmallVector<int64_t, 4> sizes;
  c10::SmallVector<int64_t, 4> stride_bytes;
  bool wrap_negative = true;  // -1 is the last position (indexing, take) or out of range (gather)
  bool index_error = true;    // IndexError (indexing) or RuntimeError (gather, scatter)
  int64_t dim = -1;           // the dim errors name (default: the index operand's position)
};

[[noreturn]] TORCH_API void index_out_of_bounds(const IndexedDims& dims, size_t k, int64_t index);

// One row of an iterator with a single index operand, in blocks: first every offset of
// the block is checked and its line prefetched (the reads or writes land at random
// places, so many misses are then in flight at once), then the block's elements move.
template <bool OffsetRead, typename Move>
void index_row_single(char* const* ptrs, const int64_t* strides, int64_t n, const IndexedDims& dims, Move& move) {
  const int64_t size = dims.sizes[0], step = dims.stride_bytes[0];
  const int64_t ds = strides[0], ss = strides[1], is = strides[2];
  const bool wrap = dims.wrap_negative;
  char* const indexed = OffsetRead ? ptrs[1] : ptrs[0];
  const int64_t indexed_stride = OffsetRead ? ss : ds;
  constexpr int64_t kBlock = 64;
  int64_t offsets[kBlock];
  for (int64_t base = 0; base < n; base += kBlock) {
    const int64_t m = std::min(kBlock, n - base);
    for (int64_t k = 0; k < m; ++k) {
      const int64_t given = *reinterpret_cast<const int64_t*>(ptrs[2] + (base + k) * is);
      const int64_t v = given < 0 && wrap ? given + size : given;
      if (v < 0 || v >= size) [[unlikely]] index_out_of_bounds(dims, 0, given);
      offsets[k] = v * step;
      char* line = indexed + (base + k) * indexed_stride + offsets[k];
      if constexpr (OffsetRead) __builtin_prefetch(line, 0);
      else __builtin_prefetch(line, 1);
    }
    for (int64_t k = 0; k < m; ++k) {
      const int64_t i = base + k;
      if constexpr (OffsetRead) move(ptrs[0] + i * ds, ptrs[1] + i * ss + offsets[k], 1, ds, ss);
      else move(ptrs[0] + i * ds + offsets[k], ptrs[1] + i * ss, 1, ds, ss);
    }
  }
}

// Runs move(dst, src, n, dst_stride, src_stride) over rows of an iterator whose operands
// are (written, read, index_0, ..., index_k-1) with int64 indices; `offset_read` says
// which side the indices move: the read side (gather, index) or the written side
// (scatter, index_put). Rows where every index is constant go to `move` whole.
template <typename Move>
void for_each_indexed(const TensorIterator& iter, const IndexedDims& dims, bool offset_read, bool parallel, Move&& move) {
  const int nidx = iter.ntensors() - 2;
  TORCH_INTERNAL_ASSERT(nidx >= 1, "for_each_indexed: no index operand");
  auto loop = [&](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
    const int nt = nidx + 2;
    c10::SmallVector<char*, 8> ptrs(static_cast<size_t>(nt));
    bool row_constant = true;
    for (int k = 0; k < nidx; ++k) row_constant = row_constant && strides[2 + k] == 0;
    auto offset_at = [&](int64_t i) {
      int64_t off = 0;
      for (int k = 0; k < nidx; ++k) {
        const int64_t given = *reinterpret_cast<const int64_t*>(ptrs[2 + k] + i * strides[2 + k]);
        const int64_t size = dims.sizes[static_cast<size_t>(k)];
        const int64_t v = given < 0 && dims.wrap_negative ? given + size : given;
        if (v < 0 || v >= size) index_out_of_bounds(dims, static_cast<size_t>(k), given);
        off += v * dims.stride_bytes[static_cast<size_t>(k)];
      }
      return off;
    };
    for (int64_t j = 0; j < n1; ++j) {
      for (int t = 0; t < nt; ++t) ptrs[t] = data[t] + j * strides[nt + t];
      if (row_constant) {
        const int64_t off = offset_at(0);
        if (offset_read) move(ptrs[0], ptrs[1] + off, n0, strides[0], strides[1]);
        else move(ptrs[0] + off, ptrs[1], n0, strides[0], strides[1]);
        continue;
      }
      if (nidx == 1) {
        if (offset_read) index_row_single<true>(ptrs.data(), strides, n0, dims, move);
        else index_row_single<false>(ptrs.data(), strides, n0, dims, move);
        continue;
      }
      for (int64_t i = 0; i < n0; ++i) {
        const int64_t off = offset_at(i);
        char* dst = ptrs[0] + i * strides[0];
        char* src = ptrs[1] + i * strides[1];
        if (offset_read) move(dst, src + off, 1, strides[0], strides[1]);
        else move(dst + off, src, 1, strides[0], strides[1]);
      }
    }
  };
  if (parallel) iter.for_each(loop);
  else iter.serial_for_each(loop);
}

// The move that copies elements of T's size (every dtype of that size; no arithmetic).
template <typename T>
struct CopyElements {
  void operator()(char* dst, const char* src, int64_t n, int64_t ds, int64_t ss) const {
    if (n == 1) {
      *reinterpret_cast<T*>(dst) = *reinterpret_cast<const T*>(src);
    } else if (ds == static_cast<int64_t>(sizeof(T)) && ss == static_cast<int64_t>(sizeof(T))) {
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
    } else {
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * ds, src + i * ss, sizeof(T));
    }
  }
};

// for_each_indexed with written += read for self's dtype (kArithmetic), on one thread in
// iteration order so that repeated indices add up deterministically.
// complex32 is added (in complex<float>) only where torch adds it: index_put_'s accumulation
// and index_add; scatter's reductions and put_ refuse it as torch does.
TORCH_API void add_indexed(const TensorIterator& iter, const IndexedDims& dims, c10::ScalarType dtype, const char* op,
                           bool complex_half = false);

// Checks shared by the indexing kernels, with torch's messages: every tensor on self's
// device; nothing an op reads (an index, a mask) overlapping the memory it writes.
TORCH_API void check_same_device(const char* op, const Tensor& self, std::initializer_list<const Tensor*> others);
TORCH_API bool written_overlaps(const Tensor& written, const Tensor& other);
TORCH_API void check_no_overlap(const Tensor& written, const Tensor& other);
// A 0-dim CPU tensor of `dtype` holding value (fill_'s casts): what masked and scattered
// writes store, and index_add_'s alpha.
TORCH_API Tensor value_in_dtype(c10::ScalarType dtype, const c10::Scalar& value);

// Raises IndexError(message) unless every element of `index` (int32 or int64) is in [0, size).
TORCH_API void check_indices_in_range(const Tensor& index, int64_t size, const char* message);

// An iterator over (written, read, indices...) with no dtype checks and no resizing: every
// operand already has the iteration shape (index operands broadcast by stride 0).
TORCH_API TensorIterator make_index_iterator(const Tensor& written, const Tensor& read, c10::ArrayRef<Tensor> indices);

}  // namespace at::inline tessera::native
