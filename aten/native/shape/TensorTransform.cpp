// Rearranging elements: flip, roll, repeat (and tile over it), tril/triu. flip, roll and
// repeat are one gather: each output index along a dim reads a known input index along
// the same dim (n-1-i, (i-shift) mod n, i mod n), so one strided kernel serves all three,
// moving elements as raw bytes of the dtype's size (every dtype, no arithmetic). tril and
// triu copy and zero whole row segments (all-zero bytes is zero in every dtype).
#include <aten/core/Parallel.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/index/IndexingUtils.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <cstring>

namespace at::inline tessera::native {

namespace {

// out[i_0, ..., i_k] = src[map_0[i_0], ..., map_k[i_k]] where src and out have the same
// number of dims and maps[d] has out.size(d) entries. Rows of the last dim run inline;
// rows are split across threads.
void gather_by_maps(const Tensor& src, const Tensor& out, const std::vector<std::vector<int64_t>>& maps) {
  const int64_t ndim = out.dim();
  if (out.numel() == 0) return;
  if (ndim == 0) {
    std::memcpy(out.data_ptr(), src.data_ptr(), out.itemsize());
    return;
  }
  const int64_t cols = out.size(ndim - 1);
  const int64_t rows = out.numel() / cols;
  const std::vector<int64_t>& last = maps[static_cast<size_t>(ndim - 1)];
  by_itemsize(out.itemsize(), [&]<typename T>() {
    const T* in = static_cast<const T*>(src.data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    const int64_t in_col = src.stride(ndim - 1), out_col = out.stride(ndim - 1);
    parallel_for(0, rows, std::max<int64_t>(1, 32768 / cols), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        // r's multi-index over the leading dims gives both row offsets.
        int64_t rem = r, in_off = 0, out_off = 0;
        for (int64_t d = ndim - 2; d >= 0; --d) {
          const int64_t n = out.size(d), i = rem % n;
          rem /= n;
          in_off += maps[static_cast<size_t>(d)][static_cast<size_t>(i)] * src.stride(d);
          out_off += i * out.stride(d);
        }
        for (int64_t c = 0; c < cols; ++c) dst[out_off + c * out_col] = in[in_off + last[static_cast<size_t>(c)] * in_col];
      }
    });
  });
}

std::vector<int64_t> identity_map(int64_t n) {
  std::vector<int64_t> m(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) m[static_cast<size_t>(i)] = i;
  return m;
}

// flip's result keeps self's layout; roll's and tril/triu's are contiguous (as torch's).
Tensor like(const Tensor& self) {
  return empty_like_impl(self, self.scalar_type(), self.device(), std::nullopt, std::nullopt, c10::MemoryFormat::Preserve);
}
Tensor contiguous_like(const Tensor& self) { return make_empty(self.sizes(), self.scalar_type(), self.device()); }

std::vector<bool> flip_dims(const Tensor& self, IntArrayRef dims) {
  std::vector<bool> flipped(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  for (int64_t d : dims) {
    const size_t w = static_cast<size_t>(wrap_dim(d, self.dim()));
    TORCH_CHECK(!flipped[w], "dim ", w, " appears multiple times in the list of dims");
    flipped[w] = true;
  }
  return flipped;
}

Tensor flip_impl(const Tensor& self, IntArrayRef dims, bool meta) {
  std::vector<bool> flipped = flip_dims(self, dims);
  Tensor out = like(self);
  if (meta) return out;
  std::vector<std::vector<int64_t>> maps;
  for (int64_t d = 0; d < self.dim(); ++d) {
    std::vector<int64_t> m = identity_map(self.size(d));
    if (flipped[static_cast<size_t>(d)]) std::reverse(m.begin(), m.end());
    maps.push_back(std::move(m));
  }
  gather_by_maps(self, out, maps);
  return out;
}

Tensor roll_impl(const Tensor& self, IntArrayRef shifts, IntArrayRef dims, bool meta) {
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {
    // No dims: roll the flattened tensor, then restore the shape.
    Tensor flat = self.reshape({-1});
    return roll_impl(flat, shifts, {0}, meta).view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  Tensor out = contiguous_like(self);
  if (self.numel() == 0) return out;  // torch returns before looking at the dims
  std::vector<int64_t> total(static_cast<size_t>(self.dim()), 0);
  for (size_t k = 0; k < dims.size(); ++k) {
    TORCH_CHECK_INDEX(self.dim() > 0, "Dimension specified as ", dims[k], " but tensor has no dimensions");
    // each shift reduced first: adding raw int64 shifts could overflow
    const int64_t d = wrap_dim(dims[k], self.dim()), n = self.size(d);
    int64_t& t = total[static_cast<size_t>(d)];
    t = (t + (shifts[k] % n + n) % n) % n;
  }
  if (meta) return out;
  std::vector<std::vector<int64_t>> maps;
  for (int64_t d = 0; d < self.dim(); ++d) {
    const int64_t n = self.size(d);
    std::vector<int64_t> m(static_cast<size_t>(n));
    const int64_t s = total[static_cast<size_t>(d)];  // in [0, n)
    for (int64_t i = 0; i < n; ++i) m[static_cast<size_t>(i)] = (i - s + n) % n;
    maps.push_back(std::move(m));
  }
  gather_by_maps(self, out, maps);
  return out;
}

Tensor repeat_impl(const Tensor& self, IntArrayRef repeats, bool meta) {
  TORCH_CHECK(static_cast<int64_t>(repeats.size()) >= self.dim(),
              "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  const int64_t lead = static_cast<int64_t>(repeats.size()) - self.dim();
  std::vector<int64_t> padded(static_cast<size_t>(lead), 1), sizes;
  for (int64_t s : self.sizes()) padded.push_back(s);
  for (size_t d = 0; d < repeats.size(); ++d) {
    // overflow-checked by the allocation below only when the product is representable
    int64_t n = 0;
    TORCH_CHECK(!__builtin_mul_overflow(padded[d], repeats[d], &n), "repeat: the result size overflows");
    sizes.push_back(n);
  }
  for (int64_t s : sizes) {
    TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", IntArrayRef(sizes));
  }
  Tensor out = make_empty(sizes, self.scalar_type(), self.device());
  if (meta || out.numel() == 0) return out;
  Tensor src = self.reshape(padded);
  std::vector<std::vector<int64_t>> maps;
  for (size_t d = 0; d < sizes.size(); ++d) {
    std::vector<int64_t> m(static_cast<size_t>(sizes[d]));
    for (int64_t i = 0; i < sizes[d]; ++i) m[static_cast<size_t>(i)] = i % padded[d];
    maps.push_back(std::move(m));
  }
  gather_by_maps(src, out, maps);
  return out;
}

// Zeroes, in `t` (any strides), the elements of each trailing matrix outside the band:
// tril keeps j - i <= k, triu keeps j - i >= k.
void zero_outside(const Tensor& t, int64_t k, bool lower) {
  if (t.numel() == 0) return;
  const int64_t nd = t.dim(), rows = t.size(nd - 2), cols = t.size(nd - 1);
  const int64_t mats = t.numel() / (rows * cols);
  const int64_t rs = t.stride(nd - 2), cs = t.stride(nd - 1);
  by_itemsize(t.itemsize(), [&]<typename T>() {
    T* base = static_cast<T*>(t.data_ptr());
    parallel_for(0, mats * rows, std::max<int64_t>(1, 32768 / cols), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        int64_t m = r / rows, off = 0;
        const int64_t i = r % rows;
        for (int64_t d = nd - 3; d >= 0; --d) {
          off += (m % t.size(d)) * t.stride(d);
          m /= t.size(d);
        }
        T* row = base + off + i * rs;
        // columns [lo, hi) are zeroed. j - i lies in (-rows, cols), so clamping k to
        // [-rows, cols] changes no comparison and keeps i + k from overflowing.
        const int64_t kc = std::clamp<int64_t>(k, -rows, cols);
        const int64_t lo = lower ? std::clamp<int64_t>(i + kc + 1, 0, cols) : 0;
        const int64_t hi = lower ? cols : std::clamp<int64_t>(i + kc, 0, cols);
        for (int64_t j = lo; j < hi; ++j) std::memset(static_cast<void*>(row + j * cs), 0, sizeof(T));
      }
    });
  });
}

// torch's IndexError below 2 dims (an empty input passes: torch returns before checking).
void check_matrix(const Tensor& self) {
  if (self.numel() == 0) return;
  TORCH_CHECK_INDEX(self.dim() > 0, "Dimension specified as -2 but tensor has no dimensions");
  (void)wrap_dim(-2, self.dim());
}

Tensor trilu(const Tensor& self, int64_t k, bool lower, bool meta) {
  check_matrix(self);
  Tensor out = contiguous_like(self);
  if (!meta) {
    out.copy_(self);
    zero_outside(out, k, lower);
  }
  return out;
}

Tensor& trilu_(Tensor& self, int64_t k, bool lower, bool meta) {
  // Like torch, no refusal of a self with stride-0 dims: the band's kept elements are
  // left alone and only zeros are written, so the result is still well defined.
  check_matrix(self);
  if (!meta) zero_outside(self, k, lower);
  return self;
}

}  // namespace

Tensor flip_cpu(const Tensor& self, IntArrayRef dims) { return flip_impl(self, dims, false); }
Tensor flip_meta(const Tensor& self, IntArrayRef dims) { return flip_impl(self, dims, true); }
Tensor roll_cpu(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) { return roll_impl(self, shifts, dims, false); }
Tensor roll_meta(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) { return roll_impl(self, shifts, dims, true); }
Tensor repeat_cpu(const Tensor& self, IntArrayRef repeats) { return repeat_impl(self, repeats, false); }
Tensor repeat_meta(const Tensor& self, IntArrayRef repeats) { return repeat_impl(self, repeats, true); }

// tile pads the repeats with leading 1s up to self's dims, then repeats.
Tensor tile(const Tensor& self, IntArrayRef dims) {
  std::vector<int64_t> reps(static_cast<size_t>(std::max<int64_t>(0, self.dim() - static_cast<int64_t>(dims.size()))), 1);
  reps.insert(reps.end(), dims.begin(), dims.end());
  return self.repeat(reps);
}

Tensor tril_cpu(const Tensor& self, int64_t diagonal) { return trilu(self, diagonal, true, false); }
Tensor tril_meta(const Tensor& self, int64_t diagonal) { return trilu(self, diagonal, true, true); }
Tensor triu_cpu(const Tensor& self, int64_t diagonal) { return trilu(self, diagonal, false, false); }
Tensor triu_meta(const Tensor& self, int64_t diagonal) { return trilu(self, diagonal, false, true); }
Tensor& tril_cpu_(Tensor& self, int64_t diagonal) { return trilu_(self, diagonal, true, false); }
Tensor& tril_meta_(Tensor& self, int64_t diagonal) { return trilu_(self, diagonal, true, true); }
Tensor& triu_cpu_(Tensor& self, int64_t diagonal) { return trilu_(self, diagonal, false, false); }
Tensor& triu_meta_(Tensor& self, int64_t diagonal) { return trilu_(self, diagonal, false, true); }

}  // namespace at::inline tessera::native
