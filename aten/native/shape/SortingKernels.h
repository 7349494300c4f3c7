// Row kernels behind sort, topk, kthvalue and the medians (Sorting.cpp): orderings that
// put NaN after every number (ascending) or before it (descending) as torch does, a
// stable LSD radix sort for long rows of 32/64-bit keys, and selection of the k best.
// Every comparator here is a strict weak ordering, NaN included (all NaNs are
// equivalent), as std::sort and friends require.
#pragma once

#include <aten/core/Dispatch.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace at::inline tessera::native::sorting {

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_integral_v<T>) {
    (void)v;
    return false;
  } else {
    using O = opmath_t<T>;
    const O o = O(v);
    return o != o;
  }
}

// a before b when sorting ascending: numbers by value, NaNs last (equivalent to each other).
template <typename T>
bool less_nan_last(T a, T b) {
  using O = opmath_t<T>;
  if (is_nan(b)) return !is_nan(a);
  return !is_nan(a) && O(a) < O(b);
}
// a before b when sorting descending: NaNs first, then numbers by decreasing value.
template <typename T>
bool greater_nan_first(T a, T b) {
  using O = opmath_t<T>;
  if (is_nan(a)) return !is_nan(b);
  return !is_nan(b) && O(a) > O(b);
}

template <typename T>
struct Entry {
  T value;
  int64_t index;
};

// Types the radix sort handles: keys of 4 or 8 bytes that order like the values.
template <typename T>
constexpr bool kRadixSortable = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;

template <typename T>
using radix_key_t = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

// An unsigned key whose order is the ascending NaN-last order of the values: the sign bit
// flipped for integers; for floats, negatives' bits inverted and positives' sign bit set,
// with -0.0 keyed as +0.0 (they compare equal) and every NaN as the largest key.
template <typename T>
radix_key_t<T> radix_key(T v) {
  using K = radix_key_t<T>;
  constexpr K top = K(1) << (sizeof(K) * 8 - 1);
  if constexpr (std::is_integral_v<T>) {
    return static_cast<K>(v) ^ top;
  } else {
    if (v != v) return ~K(0);
    if (v == T(0)) return top;
    const K bits = std::bit_cast<K>(v);
    return (bits & top) ? ~bits : (bits | top);
  }
}

// Sorts row[0, n) stably; writes the order into `indices` (and the values, read back from
// the row so -0.0 and NaN payloads survive, into `values`). Scratch is per call.
template <typename T>
void radix_sort_row(const T* row, int64_t n, bool descending, T* values, int64_t* indices) {
  using K = radix_key_t<T>;
  std::vector<K> keys(static_cast<size_t>(n)), keys2(static_cast<size_t>(n));
  std::vector<int64_t> idx(static_cast<size_t>(n)), idx2(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const K k = radix_key(row[i]);
    keys[static_cast<size_t>(i)] = descending ? ~k : k;  // inverted keys sort descending, ties still in order
    idx[static_cast<size_t>(i)] = i;
  }
  K* src_k = keys.data();
  K* dst_k = keys2.data();
  int64_t* src_i = idx.data();
  int64_t* dst_i = idx2.data();
  for (size_t shift = 0; shift < sizeof(K) * 8; shift += 8) {
    int64_t count[256] = {};
    for (int64_t i = 0; i < n; ++i) ++count[(src_k[i] >> shift) & 0xff];
    if (count[(src_k[0] >> shift) & 0xff] == n) continue;  // one digit value: the pass changes nothing
    int64_t pos[256];
    int64_t sum = 0;
    for (int b = 0; b < 256; ++b) {
      pos[b] = sum;
      sum += count[b];
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = pos[(src_k[i] >> shift) & 0xff]++;
      dst_k[p] = src_k[i];
      dst_i[p] = src_i[i];
    }
    std::swap(src_k, dst_k);
    std::swap(src_i, dst_i);
  }
  for (int64_t i = 0; i < n; ++i) {
    indices[i] = src_i[i];
    if (values) values[i] = row[src_i[i]];
  }
}

// Sorts one row stably by (value order, original index).
template <typename T>
void sort_row(const T* row, int64_t n, bool descending, T* values, int64_t* indices) {
  if constexpr (kRadixSortable<T>) {
    if (n >= 256) {
      radix_sort_row(row, n, descending, values, indices);
      return;
    }
  }
  std::vector<Entry<T>> e(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) e[static_cast<size_t>(i)] = {row[i], i};
  if (descending) {
    std::stable_sort(e.begin(), e.end(), [](const Entry<T>& a, const Entry<T>& b) { return greater_nan_first(a.value, b.value); });
  } else {
    std::stable_sort(e.begin(), e.end(), [](const Entry<T>& a, const Entry<T>& b) { return less_nan_last(a.value, b.value); });
  }
  for (int64_t i = 0; i < n; ++i) {
    values[i] = e[static_cast<size_t>(i)].value;
    indices[i] = e[static_cast<size_t>(i)].index;
  }
}

// The k entries of row[0, n) that come first in the order (largest: NaN first, then
// decreasing; else increasing, NaN last), ties broken by the lower index so the order is
// total; written in that order.
template <typename T>
void topk_row(const T* row, int64_t n, int64_t k, bool largest, T* values, int64_t* indices) {
  if (k == 0) return;
  auto before = [largest](const Entry<T>& a, const Entry<T>& b) {
    const bool ab = largest ? greater_nan_first(a.value, b.value) : less_nan_last(a.value, b.value);
    const bool ba = largest ? greater_nan_first(b.value, a.value) : less_nan_last(b.value, a.value);
    return ab || (!ba && a.index < b.index);
  };
  std::vector<Entry<T>> best;
  if (k * 64 <= n) {
    // Few wanted from many: one pass over the row with a heap of the k best so far, whose
    // top is the worst of them; most elements lose to it at one comparison.
    best.reserve(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) best.push_back({row[i], i});
    std::make_heap(best.begin(), best.end(), before);
    // The worst kept value as a number: a value strictly beyond it (one comparison, false
    // for NaN) cannot enter, which settles almost every element of a long row.
    using O = opmath_t<T>;
    O worst = O(best.front().value);
    bool worst_is_nan = is_nan(best.front().value);
    for (int64_t i = k; i < n; ++i) {
      if (!worst_is_nan) {
        const O x = O(row[i]);
        if (largest ? x < worst : x > worst) continue;
      }
      const Entry<T> cand{row[i], i};
      if (before(cand, best.front())) {
        std::pop_heap(best.begin(), best.end(), before);
        best.back() = cand;
        std::push_heap(best.begin(), best.end(), before);
        worst = O(best.front().value);
        worst_is_nan = is_nan(best.front().value);
      }
    }
  } else {
    best.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) best[static_cast<size_t>(i)] = {row[i], i};
    std::nth_element(best.begin(), best.begin() + (k - 1), best.end(), before);
    best.resize(static_cast<size_t>(k));
  }
  std::sort(best.begin(), best.end(), before);
  for (int64_t i = 0; i < k; ++i) {
    values[i] = best[static_cast<size_t>(i)].value;
    indices[i] = best[static_cast<size_t>(i)].index;
  }
}

// The entry at 0-based position k of the row sorted ascending (NaN last), the lower index
// winning ties among equal values.
template <typename T>
Entry<T> kth_row(const T* row, int64_t n, int64_t k, std::vector<Entry<T>>& scratch) {
  scratch.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) scratch[static_cast<size_t>(i)] = {row[i], i};
  auto before = [](const Entry<T>& a, const Entry<T>& b) {
    const bool ab = less_nan_last(a.value, b.value), ba = less_nan_last(b.value, a.value);
    return ab || (!ba && a.index < b.index);
  };
  std::nth_element(scratch.begin(), scratch.begin() + k, scratch.end(), before);
  return scratch[static_cast<size_t>(k)];
}

}  // namespace at::inline tessera::native::sorting
