// F.pad's modes, pixel (un)shuffle and channel shuffle, written over other operators: constant padding
// copies the input into a filled tensor (negative pads crop); reflect / replicate /
// circular concatenate each padded dim's slices of the input (flipped, expanded or
// wrapped; index_select of the source positions when a pad is negative), so autograd
// adds the grads of repeated positions together.
#include <aten/core/TensorOperators.h>
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <string_view>
#include <vector>

namespace at::inline tessera::native {

Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  TORCH_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals ", pad.size());
  const int64_t dims = static_cast<int64_t>(pad.size()) / 2, ndim = self.dim();
  TORCH_CHECK(dims <= ndim, "Length of pad should be no more than twice the number of dimensions of the input. Pad "
              "length is ", pad.size(), " while the input has ", ndim, " dimensions.");
  std::vector<int64_t> shape = self.sizes().vec();
  Tensor source = self;
  for (int64_t k = 0; k < dims; ++k) {  // pad[2k], pad[2k+1]: before and after dim ndim-1-k
    const int64_t d = ndim - 1 - k, before = pad[2 * k], after = pad[2 * k + 1];
    const int64_t size = shape[d] + before + after;
    TORCH_CHECK(size >= 0, "The input size ", shape[d], ", plus negative padding ", before, " and ", after,
                " resulted in a negative output size, which is invalid. Check dimension ", d, " of your input.");
    // negative pads crop the source
    const int64_t crop_front = std::max<int64_t>(-before, 0), crop_back = std::max<int64_t>(-after, 0);
    source = source.narrow(d, std::min(crop_front, shape[d]), std::max<int64_t>(shape[d] - crop_front - crop_back, 0));
    shape[d] = size;
  }
  // The result keeps the input's channels-last (2d or 3d) layout, as torch's does.
  Tensor out = at::empty(shape, self.options(), suggest_memory_format(self));
  out.fill_(value);
  Tensor window = out;
  for (int64_t k = 0; k < dims; ++k) {
    const int64_t d = ndim - 1 - k;
    window = window.narrow(d, std::max<int64_t>(pad[2 * k], 0), source.size(d));
  }
  window.copy_(source);
  return out;
}

namespace {

// Source positions of a dim of `n` elements padded by (before, after). Circular padding
// may crop (negative pads); it then wraps around what is left, as torch's does.
Tensor pad_index(int64_t n, int64_t before, int64_t after, std::string_view mode, const Tensor& like) {
  const int64_t first = std::max<int64_t>(-before, 0), kept = n - first - std::max<int64_t>(-after, 0);
  TORCH_CHECK(mode != "circular" || kept > 0 || n + before + after == 0,
              "Negative padding value is resulting in an empty dimension");
  std::vector<int64_t> idx;
  idx.reserve(static_cast<size_t>(std::max<int64_t>(n + before + after, 0)));
  for (int64_t i = -before; i < n + after; ++i) {
    int64_t j = i;
    if (mode == "reflect") {
      const int64_t period = 2 * (n - 1);
      j = period == 0 ? 0 : ((j % period) + period) % period;
      if (j >= n) j = period - j;
    } else if (mode == "replicate") {
      j = std::min(std::max<int64_t>(j, 0), n - 1);
    } else {  // circular, within the kept part [first, first + kept)
      j = first + (((i - first) % kept) + kept) % kept;
    }
    idx.push_back(j);
  }
  return tensor_from_vector(idx, like.device());
}

Tensor index_pad(const Tensor& self, IntArrayRef pad, std::string_view mode) {
  const int64_t dims = static_cast<int64_t>(pad.size()) / 2;
  Tensor out = self;
  for (int64_t k = 0; k < dims; ++k) {
    const int64_t d = self.dim() - 1 - k, n = self.size(d), before = pad[2 * k], after = pad[2 * k + 1];
    if (mode == "reflect") {
      TORCH_CHECK(before < n && after < n, "Argument #4: Padding size should be less than the corresponding input "
                  "dimension, but got: padding (", before, ", ", after, ") at dimension ", d, " of input ",
                  self.sizes());
    } else if (mode == "circular") {
      TORCH_CHECK(before <= n && after <= n, "Padding value causes wrapping around more than once.");
    } else {
      TORCH_CHECK(n > 0 || (before == 0 && after == 0), "input tensor must have non-zero size in dimension ", d,
                  " to be padded with replicate");
    }
    if (mode != "circular" && (before < 0 || after < 0)) {
      // a crop may leave nothing: torch's words (its reflect message starts with a stray "2"); k counts dims from the last
      const char* axis = k == 0 ? "W" : (k == 1 ? "H" : "D");
      TORCH_CHECK(n + before + after >= 1, "input (", axis, ": ", n, ") is too small. Calculated output ", axis, ": ",
                  n + before + after);
    }
    if (before < 0 || after < 0) {  // a crop as well: the general gather
      out = out.index_select(d, pad_index(n, before, after, mode, self));
      continue;
    }
    // The padded parts are slices of the input (reversed, repeated or wrapped): one cat,
    // which a long signal (stft's centring) needs far more than an index list.
    Tensor front, back;
    if (mode == "reflect") {
      front = out.narrow(d, 1, before).flip(d);
      back = out.narrow(d, n - 1 - after, after).flip(d);
    } else if (mode == "replicate") {
      std::vector<int64_t> shape = out.sizes().vec();
      shape[static_cast<size_t>(d)] = before;
      front = out.narrow(d, 0, std::min<int64_t>(n, 1)).expand(shape);
      shape[static_cast<size_t>(d)] = after;
      back = out.narrow(d, n - std::min<int64_t>(n, 1), std::min<int64_t>(n, 1)).expand(shape);
    } else {  // circular
      front = out.narrow(d, n - before, before);
      back = out.narrow(d, 0, after);
    }
    out = at::cat({front, out, back}, d);
  }
  return out;
}

}  // namespace

Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
  TORCH_CHECK(pad.size() % 2 == 0, "Padding length must be divisible by 2");
  TORCH_CHECK(static_cast<int64_t>(pad.size()) / 2 <= self.dim(), "Padding length too large");
  if (mode == "constant") return at::constant_pad_nd(self, pad, value.value_or(0.0));
  TORCH_CHECK(!value.has_value() || *value == 0, "Padding mode \"", mode,
              "\" doesn't take in value argument");
  TORCH_CHECK_NOT_IMPLEMENTED(mode == "reflect" || mode == "replicate" || mode == "circular",
                              "Unrecognised padding mode ", mode);
  const int64_t dims = static_cast<int64_t>(pad.size()) / 2;
  TORCH_CHECK_NOT_IMPLEMENTED(dims >= 1 && dims <= 3 && (self.dim() == dims + 1 || self.dim() == dims + 2),
                              "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  if (mode == "circular") return at::_pad_circular(self, pad);
  return index_pad(self, pad, mode);
}

Tensor _pad_circular(const Tensor& self, IntArrayRef pad) { return index_pad(self, pad, "circular"); }

// [*, C r^2, H, W] -> [*, C, H r, W r]: each group of r^2 channels becomes an r x r block.
Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor) {
  TORCH_CHECK(self.dim() >= 3, "pixel_shuffle expects input to have at least 3 dimensions, but got input with ",
              self.dim(), " dimension(s)");
  TORCH_CHECK(upscale_factor > 0, "pixel_shuffle expects a positive upscale_factor, but got ", upscale_factor);
  const int64_t r = upscale_factor, c = self.size(-3), h = self.size(-2), w = self.size(-1);
  TORCH_CHECK(c % (r * r) == 0, "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
              "of upscale_factor, but input.size(-3)=", c, " is not divisible by ", r * r);
  std::vector<int64_t> lead(self.sizes().begin(), self.sizes().end() - 3);
  const int64_t nl = static_cast<int64_t>(lead.size());
  std::vector<int64_t> split = lead;
  split.insert(split.end(), {c / (r * r), r, r, h, w});
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < nl; ++i) perm.push_back(i);
  perm.insert(perm.end(), {nl, nl + 3, nl + 1, nl + 4, nl + 2});
  std::vector<int64_t> out = lead;
  out.insert(out.end(), {c / (r * r), h * r, w * r});
  return self.reshape(split).permute(perm).reshape(out);
}

// [N, C, *] seen as [N, g, C/g, *] -> [N, C/g, g, *]: channel k of group i moves to k g + i.
Tensor channel_shuffle(const Tensor& self, int64_t groups) {
  TORCH_CHECK(self.dim() > 2, "channel_shuffle expects input with > 2 dims, but got input with sizes ", self.sizes());
  TORCH_CHECK(groups > 0, "Number of groups to divide channels in must be positive. Value of groups:", groups);
  const int64_t c = self.size(1);
  TORCH_CHECK(c % groups == 0, "Number of channels must be divisible by groups. Got ", c, " channels and ", groups,
              " groups.");
  std::vector<int64_t> split = {self.size(0), groups, c / groups};
  split.insert(split.end(), self.sizes().begin() + 2, self.sizes().end());
  Tensor out = self.reshape(split).transpose(1, 2).reshape(self.sizes());
  // With one group (or one channel per group) the reshapes are views of self: the result
  // is a new tensor all the same, as torch's is.
  return out.storage().is_alias_of(self.storage()) ? out.clone(at::MemoryFormat::Contiguous) : out;
}

Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor) {
  TORCH_CHECK(self.dim() >= 3, "pixel_unshuffle expects input to have at least 3 dimensions, but got input with ",
              self.dim(), " dimension(s)");
  TORCH_CHECK(downscale_factor > 0, "pixel_unshuffle expects a positive downscale_factor, but got ",
              downscale_factor);
  const int64_t r = downscale_factor, c = self.size(-3), h = self.size(-2), w = self.size(-1);
  TORCH_CHECK(h % r == 0, "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=",
              h, " is not divisible by ", r);
  TORCH_CHECK(w % r == 0, "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=",
              w, " is not divisible by ", r);
  std::vector<int64_t> lead(self.sizes().begin(), self.sizes().end() - 3);
  const int64_t nl = static_cast<int64_t>(lead.size());
  std::vector<int64_t> split = lead;
  split.insert(split.end(), {c, h / r, r, w / r, r});
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < nl; ++i) perm.push_back(i);
  perm.insert(perm.end(), {nl, nl + 2, nl + 4, nl + 1, nl + 3});
  std::vector<int64_t> out = lead;
  out.insert(out.end(), {c * r * r, h / r, w / r});
  return self.reshape(split).permute(perm).reshape(out);
}

Tensor native_channel_shuffle(const Tensor& self, int64_t groups) { return at::channel_shuffle(self, groups); }

}  // namespace at::inline tessera::native
