// torch 1.13's float32 sum and std in its order of operations, Note [torch's float reduction order].
#include <aten/native/quantized/TorchFloatReduce.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace at::inline tessera::native {

namespace {

constexpr int kVec = 8;  // floats per vector in torch's AVX2 and default kernels

int ceil_log2(int64_t x) {
  if (x <= 2) return 1;
  int bits = 0;
  for (uint64_t v = static_cast<uint64_t>(x - 1); v != 0; v >>= 1) ++bits;
  return bits;
}

template <int L>
using Lanes = std::array<float, L>;

template <int L>
void add_lanes(Lanes<L>& acc, const Lanes<L>& v) {
  for (int l = 0; l < L; ++l) acc[l] += v[l];
}

// SumKernel's multi_row_sum over `size` rows of L floats each (load(i, row) fills row i).
template <int L, typename Load>
Lanes<L> multi_row_sum(const Load& load, int64_t size) {
  constexpr int kLevels = 4;
  const int level_power = std::max(4, ceil_log2(size) / kLevels);
  const int64_t level_step = int64_t{1} << level_power;
  const int64_t level_mask = level_step - 1;
  std::array<Lanes<L>, kLevels> acc{};
  Lanes<L> row;
  int64_t i = 0;
  while (i + level_step <= size) {
    for (int64_t k = 0; k < level_step; ++k, ++i) {
      load(i, row);
      add_lanes<L>(acc[0], row);
    }
    for (int j = 1; j < kLevels; ++j) {
      add_lanes<L>(acc[j], acc[j - 1]);
      acc[j - 1] = Lanes<L>{};
      if ((i & (level_mask << (j * level_power))) != 0) break;
    }
  }
  for (; i < size; ++i) {
    load(i, row);
    add_lanes<L>(acc[0], row);
  }
  for (int j = 1; j < kLevels; ++j) add_lanes<L>(acc[0], acc[j]);
  return acc[0];
}

// SumKernel's row_sum: rows go round-robin into four partial sums (each a multi_row_sum over
// groups of four rows), the rows past the last group into the first, then 1..3 into it.
template <int L, typename Load>
Lanes<L> row_sum(const Load& load, int64_t size) {
  constexpr int kIlp = 4;
  const int64_t groups = size / kIlp;
  std::array<Lanes<L>, kIlp> parts{};
  if (groups > 0) {
    const Lanes<kIlp* L> stacked = multi_row_sum<kIlp * L>(
        [&](int64_t r, Lanes<kIlp * L>& out) {
          Lanes<L> one;
          for (int k = 0; k < kIlp; ++k) {
            load(r * kIlp + k, one);
            std::copy(one.begin(), one.end(), out.begin() + k * L);
          }
        },
        groups);
    for (int k = 0; k < kIlp; ++k) std::copy(stacked.begin() + k * L, stacked.begin() + (k + 1) * L, parts[k].begin());
  }
  Lanes<L> row;
  for (int64_t i = groups * kIlp; i < size; ++i) {
    load(i, row);
    add_lanes<L>(parts[0], row);
  }
  for (int k = 1; k < kIlp; ++k) add_lanes<L>(parts[0], parts[k]);
  return parts[0];
}

// One 2-d call of cascade_sum's loop; strides in elements, dim 0 the faster.
void cascade_loop(const float* in, float* out, int64_t size0, int64_t size1, std::array<int64_t, 2> in_strides,
                  std::array<int64_t, 2> out_strides) {
  if (out_strides[0] != 0 && out_strides[1] == 0) {
    std::swap(in_strides[0], in_strides[1]);
    std::swap(out_strides[0], out_strides[1]);
    std::swap(size0, size1);
  }
  if (out_strides[0] != 0 && out_strides[1] != 0) {  // nothing reduced here: out += in
    for (int64_t j = 0; j < size1; ++j) {
      for (int64_t i = 0; i < size0; ++i)
        out[j * out_strides[1] + i * out_strides[0]] += in[j * in_strides[1] + i * in_strides[0]];
    }
    return;
  }
  const int64_t out_stride = out_strides[1];
  auto store = [&](int64_t j, float v) { out[j * out_stride] += v; };
  if (in_strides[0] == 1 && size0 >= kVec) {  // vectorized_inner_sum
    const int64_t vectors = size0 / kVec;
    for (int64_t j = 0; j < size1; ++j) {
      const float* row = in + j * in_strides[1];
      const Lanes<kVec> acc = row_sum<kVec>(
          [&](int64_t i, Lanes<kVec>& v) { std::copy(row + i * kVec, row + (i + 1) * kVec, v.begin()); }, vectors);
      float total = 0;
      for (int64_t k = vectors * kVec; k < size0; ++k) total += row[k];
      for (int l = 0; l < kVec; ++l) total += acc[l];
      store(j, total);
    }
  } else if (in_strides[1] == 1 && size1 >= kVec) {  // vectorized_outer_sum
    const int64_t inner = in_strides[0];
    int64_t j = 0;
    for (; j + 4 * kVec <= size1; j += 4 * kVec) {
      const float* base = in + j;
      const Lanes<4 * kVec> sums = multi_row_sum<4 * kVec>(
          [&](int64_t r, Lanes<4 * kVec>& v) { std::copy(base + r * inner, base + r * inner + 4 * kVec, v.begin()); },
          size0);
      for (int l = 0; l < 4 * kVec; ++l) store(j + l, sums[l]);
    }
    for (; j + kVec <= size1; j += kVec) {
      const float* base = in + j;
      const Lanes<kVec> sums = row_sum<kVec>(
          [&](int64_t r, Lanes<kVec>& v) { std::copy(base + r * inner, base + r * inner + kVec, v.begin()); }, size0);
      for (int l = 0; l < kVec; ++l) store(j + l, sums[l]);
    }
    for (; j < size1; ++j) {
      const float* base = in + j;
      store(j, row_sum<1>([&](int64_t r, Lanes<1>& v) { v[0] = base[r * inner]; }, size0)[0]);
    }
  } else if (in_strides[0] < in_strides[1]) {  // scalar_inner_sum
    for (int64_t j = 0; j < size1; ++j) {
      const float* base = in + j * in_strides[1];
      store(j, row_sum<1>([&](int64_t r, Lanes<1>& v) { v[0] = base[r * in_strides[0]]; }, size0)[0]);
    }
  } else {  // scalar_outer_sum: four columns at a time
    int64_t j = 0;
    for (; j + 3 < size1; j += 4) {
      const float* base = in + j * in_strides[1];
      const Lanes<4> sums = multi_row_sum<4>(
          [&](int64_t r, Lanes<4>& v) {
            for (int k = 0; k < 4; ++k) v[k] = base[r * in_strides[0] + k * in_strides[1]];
          },
          size0);
      for (int k = 0; k < 4; ++k) store(j + k, sums[k]);
    }
    for (; j < size1; ++j) {
      const float* base = in + j * in_strides[1];
      store(j, row_sum<1>([&](int64_t r, Lanes<1>& v) { v[0] = base[r * in_strides[0]]; }, size0)[0]);
    }
  }
}

// A reduction as TensorIterator lays it out: dims in iteration order (0 fastest), coalesced.
struct Geometry {
  std::vector<int64_t> sizes, out_strides, in_strides;
};

Geometry reduction_geometry(const std::vector<int64_t>& sizes, const std::vector<int64_t>& in_strides,
                            const std::vector<int64_t>& out_strides) {
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> perm(ndim);
  for (int64_t d = 0; d < ndim; ++d) perm[d] = ndim - 1 - d;
  const std::array<const std::vector<int64_t>*, 2> ops{&out_strides, &in_strides};
  auto should_swap = [&](int64_t d0, int64_t d1) {
    for (size_t a = 0; a < ops.size(); ++a) {
      const int64_t s0 = (*ops[a])[d0], s1 = (*ops[a])[d1];
      if (a == 0 && (s0 == 0) != (s1 == 0)) return s1 == 0 ? 1 : -1;
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (sizes[d0] > sizes[d1]) return 1;
    }
    return 0;
  };
  for (int64_t i = 1; i < ndim; ++i) {
    int64_t d1 = i;
    for (int64_t d0 = i - 1; d0 >= 0; --d0) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  Geometry g;
  for (int64_t p : perm) {
    g.sizes.push_back(sizes[p]);
    g.out_strides.push_back(out_strides[p]);
    g.in_strides.push_back(in_strides[p]);
  }
  if (ndim <= 1) return g;
  int64_t prev = 0;
  for (int64_t d = 1; d < ndim; ++d) {
    const bool can = g.sizes[prev] == 1 || g.sizes[d] == 1 ||
                     (g.sizes[prev] * g.out_strides[prev] == g.out_strides[d] &&
                      g.sizes[prev] * g.in_strides[prev] == g.in_strides[d]);
    if (can) {
      if (g.sizes[prev] == 1) {
        g.out_strides[prev] = g.out_strides[d];
        g.in_strides[prev] = g.in_strides[d];
      }
      g.sizes[prev] *= g.sizes[d];
    } else {
      ++prev;
      if (prev != d) {
        g.out_strides[prev] = g.out_strides[d];
        g.in_strides[prev] = g.in_strides[d];
        g.sizes[prev] = g.sizes[d];
      }
    }
  }
  g.sizes.resize(prev + 1);
  g.out_strides.resize(prev + 1);
  g.in_strides.resize(prev + 1);
  return g;
}

// Calls fn(offsets) for every index of sizes[first..] in order (the first of them fastest),
// with the offsets the strides give.
template <typename Fn>
void for_each_index(const Geometry& g, size_t first, const Fn& fn) {
  const size_t n = g.sizes.size();
  std::vector<int64_t> idx(n > first ? n - first : 0, 0);
  int64_t total = 1;
  for (size_t d = first; d < n; ++d) total *= g.sizes[d];
  for (int64_t k = 0; k < total; ++k) {
    int64_t in_off = 0, out_off = 0;
    for (size_t d = first; d < n; ++d) {
      in_off += idx[d - first] * g.in_strides[d];
      out_off += idx[d - first] * g.out_strides[d];
    }
    fn(in_off, out_off);
    for (size_t d = 0; d < idx.size(); ++d) {
      if (++idx[d] < g.sizes[first + d]) break;
      idx[d] = 0;
    }
  }
}

// The keepdim result's contiguous strides, with 0 for the reduced dims TensorIterator
// broadcasts over (a reduced dim of size 1 keeps its stride).
std::vector<int64_t> result_strides(const std::vector<int64_t>& sizes, const std::vector<int64_t>& dims,
                                    int64_t& result_numel) {
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> strides(ndim);
  int64_t acc = 1;
  for (int64_t d = ndim - 1; d >= 0; --d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    const int64_t out_size = reduced ? 1 : sizes[d];
    strides[d] = reduced && sizes[d] != 1 ? 0 : acc;
    acc *= std::max<int64_t>(out_size, 1);
  }
  result_numel = 1;
  for (int64_t d = 0; d < ndim; ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) result_numel *= sizes[d];
  }
  return strides;
}

int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

}  // namespace

std::vector<float> torch_order_sum(const float* data, const std::vector<int64_t>& sizes,
                                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dims) {
  int64_t result_numel = 0;
  const std::vector<int64_t> out_strides = result_strides(sizes, dims, result_numel);
  std::vector<float> out(static_cast<size_t>(result_numel), 0.0f);
  if (numel_of(sizes) == 0) return out;
  Geometry g = reduction_geometry(sizes, strides, out_strides);
  if (g.sizes.empty()) g = Geometry{{1}, {0}, {0}};
  if (g.sizes.size() == 1) {
    cascade_loop(data, out.data(), g.sizes[0], 1, {g.in_strides[0], 0}, {g.out_strides[0], 0});
    return out;
  }
  for_each_index(g, 2, [&](int64_t in_off, int64_t out_off) {
    cascade_loop(data + in_off, out.data() + out_off, g.sizes[0], g.sizes[1], {g.in_strides[0], g.in_strides[1]},
                 {g.out_strides[0], g.out_strides[1]});
  });
  return out;
}

std::vector<float> torch_order_std(const float* data, const std::vector<int64_t>& sizes,
                                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dims,
                                   int64_t correction) {
  int64_t result_numel = 0;
  const std::vector<int64_t> out_strides = result_strides(sizes, dims, result_numel);
  const int64_t numel = numel_of(sizes);
  if (numel == 0) return std::vector<float>(static_cast<size_t>(result_numel), std::nanf(""));
  Geometry g = reduction_geometry(sizes, strides, out_strides);
  if (g.sizes.empty()) g = Geometry{{1}, {0}, {0}};
  std::vector<float> out(static_cast<size_t>(result_numel), 0.0f);
  const bool all_reduced = std::all_of(g.out_strides.begin(), g.out_strides.end(), [](int64_t s) { return s == 0; });
  if (all_reduced) {
    // two passes: the float mean, then squared deviations in double over memory in order
    std::vector<int64_t> every(sizes.size());
    for (size_t d = 0; d < every.size(); ++d) every[d] = static_cast<int64_t>(d);
    const float mean = torch_order_sum(data, sizes, strides, every)[0] / static_cast<float>(numel);
    std::vector<int64_t> offsets;
    offsets.reserve(static_cast<size_t>(numel));
    for_each_index(g, 0, [&](int64_t in_off, int64_t) { offsets.push_back(in_off); });
    std::sort(offsets.begin(), offsets.end());
    double acc = 0;
    for (int64_t off : offsets) {
      const double dx = static_cast<double>(data[off]) - static_cast<double>(mean);
      acc += dx * dx;
    }
    const double den = std::max(0.0, static_cast<double>(numel) - static_cast<double>(correction));
    for (float& o : out) o = static_cast<float>(std::sqrt(acc / den));
    return out;
  }
  size_t reduced = 0;
  while (reduced < g.sizes.size() && g.out_strides[reduced] == 0) ++reduced;
  Geometry inner{std::vector<int64_t>(g.sizes.begin(), g.sizes.begin() + reduced),
                 std::vector<int64_t>(g.out_strides.begin(), g.out_strides.begin() + reduced),
                 std::vector<int64_t>(g.in_strides.begin(), g.in_strides.begin() + reduced)};
  for_each_index(g, reduced, [&](int64_t in_off, int64_t out_off) {
    double mean = 0, m2 = 0;
    int64_t n = 0;
    for_each_index(inner, 0, [&](int64_t off, int64_t) {
      const double x = data[in_off + off];
      ++n;
      const double delta = x - mean;
      mean += delta / static_cast<double>(n);
      m2 += delta * (x - mean);
    });
    const double nf = static_cast<double>(n);
    const double divisor = nf > static_cast<double>(correction) ? nf - static_cast<double>(correction) : 0.0;
    out[out_off] = static_cast<float>(std::sqrt(m2 / divisor));
  });
  return out;
}

}  // namespace at::inline tessera::native
