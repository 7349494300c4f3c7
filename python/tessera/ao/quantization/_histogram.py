"""HistogramObserver (torch.ao.quantization.observer's): a histogram of the values seen,
re-binned as their range grows, from which calculate_qparams picks the range that
minimises the expected quantization error (an L2 approximation over the bins), bit for bit
as torch 1.13 does. That last part depends on float32 sums rounding as torch's do, hence
the helpers that add in torch's order."""
import struct

from ... import _C
from ..._dtype_info import iinfo
from .observer import _FLOAT32_EPS, UniformQuantizationObserverBase, _check_per_tensor

__all__ = ["HistogramObserver"]

# tessera's cumsum scans a 1-D line of up to this many elements strictly left to right; a
# longer one is cut into chunks summed separately (aten/native/reduce/cpu/ScanOpsKernel.cpp).
_SEQUENTIAL_SCAN = 1 << 16


def _f32(x):
    """x rounded to float32, as a Python float: torch's kernels round a Python number to the
    tensor's dtype before using it against a float32 tensor (comparisons included)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _running_sum(values):
    """The cumulative sum of a 1-D tensor in float64, added strictly left to right as torch's
    CPU cumsum adds (it accumulates float32 in double too; cast the result to float32 for
    torch's float32 cumsum). Past _SEQUENTIAL_SCAN elements each chunk is scanned after the
    previous chunk's last running total, prepended, so the chunks round as one scan would."""
    values = values.to(_C.float64)
    n = values.numel()
    if n <= _SEQUENTIAL_SCAN:
        return _C.cumsum(values, 0)
    step = _SEQUENTIAL_SCAN - 1
    pieces = [_C.cumsum(values[:step], 0)]
    for start in range(step, n, step):
        carried = _C.cat([pieces[-1][-1:], values[start:start + step]])
        pieces.append(_C.cumsum(carried, 0)[1:])
    return _C.cat(pieces)


def _cascade_rows(rows):
    """torch's multi_row_sum: the sum of rows[i] (each a block of 4 x lanes values) over i,
    added first into a level-0 accumulator that passes its total up every 16 rows, level 1
    every 16 of those, and so on (4 levels), then the levels added together."""
    size = rows.shape[0]
    ceil_log2 = 1 if size <= 2 else (size - 1).bit_length()
    power = max(4, ceil_log2 // 4)
    step = 1 << power
    acc = [_C.zeros_like(rows[0]) for _ in range(4)]
    i = 0
    while i + step <= size:
        for row in rows[i:i + step]:
            acc[0] = acc[0] + row
        i += step
        for level in range(1, 4):
            acc[level] = acc[level] + acc[level - 1]
            acc[level - 1] = _C.zeros_like(acc[level - 1])
            if i & ((step - 1) << (level * power)):
                break
    for row in rows[i:]:
        acc[0] = acc[0] + row
    for level in range(1, 4):
        acc[0] = acc[0] + acc[level]
    return acc[0]


def _sum_as_torch(values):
    """The float32 sum of a contiguous 1-D float32 tensor, added in the order of torch 1.13's
    CPU sum (cascade_sum in SumKernel.cpp with 8-float vectors, its AVX2 and default build;
    one thread, which torch uses below 32768 elements), as a Python float.

    The histogram search compares sums with thresholds and with each other, so a sum that
    rounds differently from torch's can stop the search a bin earlier or later. tessera's
    own sum adds pairwise in another order."""
    n = values.numel()
    lanes = 8 if n >= 8 else 1  # shorter rows take torch's scalar loop
    nvec = n // lanes
    vectors = values[:nvec * lanes].reshape(nvec, lanes)
    # 4 independent accumulators, each taking every 4th vector
    nrows = nvec // 4
    if nrows:
        partial = _cascade_rows(vectors[:nrows * 4].reshape(nrows, 4, lanes))
    else:
        partial = _C.zeros(4, lanes, dtype=values.dtype)
    first = partial[0]
    for k in range(nrows * 4, nvec):
        first = first + vectors[k]
    for k in range(1, 4):
        first = first + partial[k]
    if lanes == 1:
        return float(first[0])
    # the elements past the last whole vector, then the vector's lanes, one by one
    total = 0.0
    for v in values[nvec * lanes:].tolist() + first.tolist():
        total = _f32(total + v)
    return total


class HistogramObserver(UniformQuantizationObserverBase):
    """A running histogram of the values observed (bins equal bins from min_val to max_val),
    from which calculate_qparams picks the sub-range that quantizes it to the dtype's
    2**bits levels with the least L2 error, trimming outliers, and gives the qparams of that
    sub-range as MinMaxObserver would. Per-tensor qschemes only.

    A tensor that widens the range re-bins the kept histogram onto the wider grid: each old
    bin is spread evenly over upsample_rate sub-bins, and the sub-bins are summed per new
    bin. Each step computes and rounds as torch 1.13's HistogramObserver does, its quirks
    included: a tensor's values are counted over the new range with its ends truncated to
    integers (torch passes int(min) and int(max) to histc: values past those are dropped,
    and ends that truncate to the same integer give the tensor's own min and max), and
    while the kept range is a single value (min_val == max_val) the next tensor replaces the
    histogram instead of adding to it."""

    histogram: object
    min_val: object
    max_val: object

    def __init__(self, bins=2048, upsample_rate=128, dtype=None, qscheme=None, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=_FLOAT32_EPS):
        _check_per_tensor("HistogramObserver", qscheme)
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps)
        factory_kwargs = dict(factory_kwargs or {})
        self.bins = bins
        self.register_buffer("histogram", _C.zeros(bins, **factory_kwargs))
        self.register_buffer("min_val", _C.tensor(float("inf"), **factory_kwargs))
        self.register_buffer("max_val", _C.tensor(float("-inf"), **factory_kwargs))
        # the error is measured against the dtype's full grid, whatever quant_min/quant_max
        self.dst_nbins = 2 ** iinfo(self.dtype).bits
        self.upsample_rate = upsample_rate

    def _get_norm(self, delta_begin, delta_end, density):
        """The squared error of values spread with this density from delta_begin to delta_end
        (their distances to the value they quantize to): density * (end**3 - begin**3) / 3."""
        cubes = delta_end * delta_end * delta_end - delta_begin * delta_begin * delta_begin
        return density * (cubes / 3)

    def _compute_quantization_error(self, next_start_bin, next_end_bin):
        """The (approximate) L2 error of quantizing the histogram with the range of bins
        next_start_bin..next_end_bin spread over dst_nbins levels: the values of each bin
        taken as spread evenly over it, and those outside the range clamped to its ends."""
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_bin_width = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_bin_width == 0.0:
            return 0.0
        last_dst = self.dst_nbins - 1
        # where each source bin begins and ends, from the first level's beginning
        src_begin = (_C.arange(self.bins, device=self.histogram.device) - next_start_bin) * bin_width
        src_end = src_begin + bin_width
        # the levels those fall in (clamped: values past the range quantize to its ends)
        dst_of_begin = _C.clamp(_C.div(src_begin, dst_bin_width, rounding_mode="floor"), 0, last_dst)
        dst_of_end = _C.clamp(_C.div(src_end, dst_bin_width, rounding_mode="floor"), 0, last_dst)
        density = self.histogram / bin_width
        half = dst_bin_width / 2
        # the error within the source bin's first level, its whole levels between, and its last level
        norm = self._get_norm(src_begin - (dst_of_begin + 0.5) * dst_bin_width,
                              _C.ones(self.bins, device=self.histogram.device) * half, density)
        norm = norm + (dst_of_end - dst_of_begin - 1) * self._get_norm(_C.tensor(-half), _C.tensor(half), density)
        dst_of_end_center = dst_of_end * dst_bin_width + half
        norm = norm + self._get_norm(_C.tensor(-half), src_end - dst_of_end_center, density)
        return _sum_as_torch(norm)

    def _non_linear_param_search(self):
        """The range to quantize: bins are trimmed from whichever end holds the smaller share
        of the values (steps of 1e-5 of the total), as long as each trim lowers the
        quantization error (an approximation of L2 error minimisation, after caffe2's
        NormMinimization::NonlinearQuantizationParamsSearch)."""
        assert self.histogram.size()[0] == self.bins, "bins mistmatch"
        bin_width = (self.max_val - self.min_val) / self.bins
        total = _sum_as_torch(self.histogram)
        cumulative = _running_sum(self.histogram).to(self.histogram.dtype).tolist()
        step = 1e-5
        alpha, beta = 0.0, 1.0  # the shares of the total cut below and kept up to
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha, next_beta = alpha + step, beta - step
            # torch compares the float32 cumulative sums with the bounds rounded to float32
            low, high = _f32(next_alpha * total), _f32(next_beta * total)
            left, right = start_bin, end_bin
            while left < end_bin and cumulative[left] < low:
                left += 1
            while right > start_bin and cumulative[right] > high:
                right -= 1
            next_start_bin, next_end_bin = start_bin, end_bin
            if left - start_bin > end_bin - right:
                next_start_bin, alpha = left, next_alpha
            else:
                next_end_bin, beta = right, next_beta
            if next_start_bin == start_bin and next_end_bin == end_bin:
                continue
            norm = self._compute_quantization_error(next_start_bin, next_end_bin)
            if norm > norm_min:
                break
            norm_min, start_bin, end_bin = norm, next_start_bin, next_end_bin
        return self.min_val + bin_width * start_bin, self.min_val + bin_width * (end_bin + 1)

    def _adjust_min_max(self, combined_min, combined_max, upsample_rate):
        """The combined range widened (at the max only, so that a one-sided distribution keeps
        its min at 0) to a whole number of the kept histogram's sub-bins per new bin: gives
        (min, max, downsample_rate = sub-bins per new bin, sub-bin where the kept range begins)."""
        sub_bin_width = (self.max_val - self.min_val) / (self.bins * upsample_rate)
        downsample_rate = int(_C.ceil((combined_max - combined_min) / (self.bins * sub_bin_width)).item())
        excess = downsample_rate * (self.bins * sub_bin_width) - (combined_max - combined_min)
        start_idx = int(_C.round((self.min_val - combined_min) / sub_bin_width).item())
        return combined_min, combined_max + excess, downsample_rate, start_idx

    def _combine_histograms(self, orig_hist, new_hist, upsample_rate, downsample_rate, start_idx, Nbins):  # noqa: N803
        """orig_hist plus new_hist re-binned onto orig_hist's grid: each bin of new_hist
        spread over upsample_rate sub-bins placed from sub-bin start_idx of a grid of
        downsample_rate sub-bins per bin of orig_hist, and summed per bin."""
        device = orig_hist.device
        sub_bins = _C.zeros(Nbins * downsample_rate, device=device)
        sub_bins[start_idx:start_idx + Nbins * upsample_rate] = new_hist.repeat_interleave(upsample_rate)
        # each bin's count is the difference of the running totals (float64: long float32 sums
        # lose counts) at its last sub-bin and the previous bin's; torch rounds the previous
        # bin's total to float32 first
        ends = _running_sum(sub_bins)[downsample_rate - 1::downsample_rate]
        begins = _C.zeros(Nbins, device=device)
        begins[1:Nbins] = ends[0:-1]
        return orig_hist + ((ends - begins) / upsample_rate).to(_C.float32)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach()
        kept_min, kept_max = self.min_val.item(), self.max_val.item()
        if kept_min == kept_max or (kept_min == float("inf") and kept_max == float("-inf")):
            # nothing kept, or a single value: the histogram starts over from x
            new_min, new_max = _C.aminmax(x)
            self.min_val.copy_(new_min)
            self.max_val.copy_(new_max)
            self.histogram.copy_(_C.histc(x, self.bins, min=int(new_min), max=int(new_max)))
            return x_orig
        new_min, new_max = _C.aminmax(x)
        combined_min, combined_max, downsample_rate, start_idx = self._adjust_min_max(
            _C.min(new_min, self.min_val), _C.max(new_max, self.max_val), self.upsample_rate)
        combined = _C.histc(x, self.bins, min=int(combined_min), max=int(combined_max))
        if bool(combined_min == self.min_val) and bool(combined_max == self.max_val):
            combined += self.histogram
        else:
            combined = self._combine_histograms(combined, self.histogram, self.upsample_rate, downsample_rate,
                                                start_idx, self.bins)
        self.histogram.copy_(combined)
        self.min_val.copy_(combined_min)
        self.max_val.copy_(combined_max)
        return x_orig

    def calculate_qparams(self):
        if self.min_val.item() == float("inf") and self.max_val.item() == float("-inf"):
            return self._calculate_qparams(self.min_val, self.max_val)  # warns; the default qparams
        assert self.bins == len(self.histogram), \
            "The number of bins in histogram should be equal to the number of bins supplied while making this observer"
        return self._calculate_qparams(*self._non_linear_param_search())

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # Before version 3 an observer that had seen nothing saved min_val and max_val empty;
        # they are scalars now (+inf and -inf until the first tensor). The buffers take the
        # saved shapes (torch takes the saved tensors themselves as its buffers).
        if local_metadata.get("version", None) in (None, 1, 2):
            for name, unset in (("min_val", float("inf")), ("max_val", float("-inf"))):
                key = prefix + name
                if key in state_dict and tuple(state_dict[key].shape) == (0,):
                    state_dict[key] = _C.tensor(unset)
        for name in ("min_val", "max_val"):
            if prefix + name in state_dict:
                getattr(self, name).resize_(state_dict[prefix + name].shape)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"
