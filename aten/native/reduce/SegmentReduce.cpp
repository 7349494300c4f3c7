// segment_reduce and its backward: runs of consecutive elements along one axis, given by
// lengths or offsets (one row of them per position of data's leading dims), each reduced
// to one value. The checks and the output shape are computed once for Meta and CPU; the
// CPU kernels read the runs as [outer, axis, inner] blocks of contiguous data, one (row,
// run) pair per task, and fold a run's elements into `inner` accumulators at a time.
//
// Unlike torch 1.13, every run is checked to lie inside the axis even with unsafe=True
// (torch reads past the data there), and lengths or offsets must have exactly data's
// leading dims.
#include <aten/core/Dispatch.h>
#include <aten/core/Parallel.h>
#include <aten/core/TensorUtils.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/cpu/MathScalar.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace at::inline tessera::native {

namespace {

enum class SegmentOp { Sum, Mean, Max, Min, Prod };

SegmentOp segment_op(std::string_view reduce) {
  if (reduce == "sum") return SegmentOp::Sum;
  if (reduce == "mean") return SegmentOp::Mean;
  if (reduce == "max") return SegmentOp::Max;
  if (reduce == "min") return SegmentOp::Min;
  if (reduce == "prod") return SegmentOp::Prod;
  TORCH_CHECK(false, "unsupported reduction given! ", reduce);
  return SegmentOp::Sum;
}

// Where the runs are: `bounds` holds, per outer row, runs + 1 boundaries along the axis
// (filled only when the data can be read); the output has data's sizes with the axis
// replaced by `runs`.
struct SegmentGeometry {
  SegmentOp op = SegmentOp::Sum;
  int64_t axis = 0, outer = 1, n = 0, inner = 1, runs = 0;
  std::vector<int64_t> out_sizes;
  std::vector<int64_t> bounds;

  int64_t begin(int64_t row, int64_t run) const { return bounds[static_cast<size_t>(row * (runs + 1) + run)]; }
  int64_t end(int64_t row, int64_t run) const { return begin(row, run + 1); }
};

// The boundaries of every row, from lengths (running sums) or offsets (as given), checked.
template <typename I>
void read_bounds(SegmentGeometry& g, const Tensor& index, bool are_offsets, bool unsafe) {
  const Tensor contiguous = index.contiguous();
  const I* p = contiguous.data_ptr<I>();
  const int64_t per_row = are_offsets ? g.runs + 1 : g.runs;
  g.bounds.resize(static_cast<size_t>(g.outer * (g.runs + 1)));
  for (int64_t row = 0; row < g.outer; ++row) {
    const I* r = p + row * per_row;
    int64_t* b = g.bounds.data() + row * (g.runs + 1);
    if (are_offsets) {
      for (int64_t k = 0; k <= g.runs; ++k) b[k] = static_cast<int64_t>(r[k]);
      TORCH_CHECK(b[0] >= 0 && b[g.runs] <= g.n, "segment_reduce(): offsets must lie in [0, data.size(axis)] = [0, ",
                  g.n, "], got offsets from ", b[0], " to ", b[g.runs]);
      for (int64_t k = 0; k < g.runs; ++k) {
        TORCH_CHECK(b[k + 1] - b[k] >= 0, "Expected segment_length >= 0 to be true, but got false.");
      }
      continue;
    }
    int64_t total = 0;
    bool negative = false;
    b[0] = 0;
    for (int64_t k = 0; k < g.runs; ++k) {
      negative = negative || r[k] < 0;
      total += static_cast<int64_t>(r[k]);
      b[k + 1] = b[k] + static_cast<int64_t>(r[k]);
    }
    if (!unsafe) {
      TORCH_CHECK(total == g.n,
                  "segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) when "
                  "!unsafe.");
      TORCH_CHECK(!negative, "lengths contains negative value!");
    }
    TORCH_CHECK(!negative, "Expected segment_length >= 0 to be true, but got false.");
    TORCH_CHECK(total <= g.n, "segment_reduce(): the lengths of a row add up to ", total,
                ", past data.size(axis) = ", g.n);
  }
}

SegmentGeometry segment_geometry(const Tensor& data, std::string_view reduce, const std::optional<Tensor>& lengths,
                                 const std::optional<Tensor>& indices, const std::optional<Tensor>& offsets,
                                 int64_t axis, bool unsafe, bool read) {
  SegmentGeometry g;
  g.axis = wrap_dim(axis, data.dim());
  TORCH_CHECK(data.numel() > 0, "Expected data.numel() > 0 to be true, but got false.");
  g.op = segment_op(reduce);
  const bool by_lengths = lengths.has_value() && lengths->defined();
  const bool by_offsets = !by_lengths && offsets.has_value() && offsets->defined();
  if (!by_lengths && !by_offsets) {
    TORCH_CHECK(!(indices.has_value() && indices->defined()),
                "segment_reduce(): indices based reduction is not supported yet.");
    TORCH_CHECK(false, "segment_reduce(): Either lengths or offsets must be defined.");
  }
  const Tensor& index = by_lengths ? *lengths : *offsets;
  const char* name = by_lengths ? "lengths" : "offsets";
  TORCH_CHECK(data.dim() >= index.dim(), "Expected data.dim() >= ", name,
              "_value.dim() to be true, but got false.");
  TORCH_CHECK(g.axis == index.dim() - 1, "segment_reduce(): Expected axis to be the last dimension of ", name,
              " but got ", g.axis, ".");
  TORCH_CHECK(index.sizes().slice(0, static_cast<size_t>(g.axis)).vec() ==
                  data.sizes().slice(0, static_cast<size_t>(g.axis)).vec(),
              "segment_reduce(): Expected the dims of ", name, " before axis to be data's, got ", name, " of size ",
              index.sizes(), " for data of size ", data.sizes());
  TORCH_CHECK(data.device() == index.device(), "segment_reduce(): Expected data and ", name,
              " on one device, got ", data.device(), " and ", index.device());
  const char* index_kernel = by_lengths ? "_segment_reduce_lengths_cpu_kernel1" : "_segment_reduce_offsets_cpu_kernel1";
  TORCH_CHECK_NOT_IMPLEMENTED(index.scalar_type() == c10::kInt || index.scalar_type() == c10::kLong, "\"",
                              index_kernel, "\" not implemented for '", index.scalar_type(), "'");
  dispatch_types<kFloating | kReducedFloat>(data.scalar_type(), "_segment_reduce_cpu", []<typename T>() {});
  const int64_t last = index.size(-1);
  g.runs = by_lengths ? last : last - 1;
  TORCH_CHECK(g.runs >= 0, "segment_reduce(): offsets need at least one boundary along axis");
  for (int64_t d = 0; d < g.axis; ++d) g.outer *= data.size(d);
  for (int64_t d = g.axis + 1; d < data.dim(); ++d) g.inner *= data.size(d);
  g.n = data.size(g.axis);
  g.out_sizes = data.sizes().vec();
  g.out_sizes[static_cast<size_t>(g.axis)] = g.runs;
  if (read) {
    if (index.scalar_type() == c10::kInt) {
      read_bounds<int32_t>(g, index, by_offsets, unsafe);
    } else {
      read_bounds<int64_t>(g, index, by_offsets, unsafe);
    }
  }
  return g;
}

// Each (row, run) pair to fn(row, run), pairs split across threads.
template <typename Fn>
void for_each_run(const SegmentGeometry& g, Fn fn) {
  const int64_t per_run = std::max<int64_t>(1, g.inner * std::max<int64_t>(1, g.n / std::max<int64_t>(1, g.runs)));
  const int64_t grain = std::max<int64_t>(1, 32768 / per_run);
  at::parallel_for(0, g.outer * g.runs, grain, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) fn(k / g.runs, k % g.runs);
  });
}

template <typename O>
O segment_identity(SegmentOp op) {
  switch (op) {
    case SegmentOp::Max: return -std::numeric_limits<O>::infinity();
    case SegmentOp::Min: return std::numeric_limits<O>::infinity();
    case SegmentOp::Prod: return O(1);
    default: return O(0);
  }
}

// One element into a run's accumulator; a NaN wins max and min, as in torch.
template <typename O>
O fold(SegmentOp op, O acc, O x) {
  switch (op) {
    case SegmentOp::Max:
    case SegmentOp::Min:
      if (acc != acc || x != x) return acc != acc ? acc : x;
      return (op == SegmentOp::Max ? x > acc : x < acc) ? x : acc;
    case SegmentOp::Prod: return acc * x;
    default: return acc + x;
  }
}

}  // namespace

Tensor segment_reduce_cpu(const Tensor& data, std::string_view reduce, const std::optional<Tensor>& lengths,
                          const std::optional<Tensor>& indices, const std::optional<Tensor>& offsets, int64_t axis,
                          bool unsafe, const std::optional<c10::Scalar>& initial) {
  const SegmentGeometry g = segment_geometry(data, reduce, lengths, indices, offsets, axis, unsafe, true);
  Tensor out = make_empty(g.out_sizes, data.scalar_type(), data.device());
  if (out.numel() == 0) return out;
  const Tensor x = data.contiguous();
  dispatch_types<kFloating | kReducedFloat>(data.scalar_type(), "_segment_reduce_cpu", [&]<typename T>() {
    using O = opmath_t<T>;
    const T* in = x.data_ptr<T>();
    T* dst = out.data_ptr<T>();
    const O start = initial ? initial->to<O>() : segment_identity<O>(g.op);
    for_each_run(g, [&](int64_t row, int64_t run) {
      const int64_t b = g.begin(row, run), e = g.end(row, run);
      std::vector<O> acc(static_cast<size_t>(g.inner), start);
      for (int64_t j = b; j < e; ++j) {
        const T* src = in + (row * g.n + j) * g.inner;
        O* a = acc.data();
        for (int64_t i = 0; i < g.inner; ++i) a[i] = fold(g.op, a[i], O(src[i]));
      }
      T* o = dst + (row * g.runs + run) * g.inner;
      for (int64_t i = 0; i < g.inner; ++i) {
        O v = acc[static_cast<size_t>(i)];
        // mean: (initial + sum) / length; an empty run is initial, or 0 / 0 without it
        if (g.op == SegmentOp::Mean && (e > b || !initial)) v = v / static_cast<O>(e - b);
        o[i] = static_cast<T>(v);
      }
    });
  });
  return out;
}

Tensor segment_reduce_meta(const Tensor& data, std::string_view reduce, const std::optional<Tensor>& lengths,
                           const std::optional<Tensor>& indices, const std::optional<Tensor>& offsets, int64_t axis,
                           bool unsafe, const std::optional<c10::Scalar>& initial) {
  const SegmentGeometry g = segment_geometry(data, reduce, lengths, indices, offsets, axis, unsafe, false);
  return make_empty(g.out_sizes, data.scalar_type(), data.device());
}

namespace {

void check_backward_operands(const Tensor& grad, const Tensor& output, const Tensor& data, const SegmentGeometry& g) {
  TORCH_CHECK(grad.sizes() == IntArrayRef(g.out_sizes) && output.sizes() == IntArrayRef(g.out_sizes),
              "_segment_reduce_backward: expected grad and output of size ", IntArrayRef(g.out_sizes), ", got ",
              grad.sizes(), " and ", output.sizes());
  TORCH_CHECK(grad.scalar_type() == data.scalar_type() && output.scalar_type() == data.scalar_type(),
              "_segment_reduce_backward: expected grad and output of data's dtype ", data.scalar_type(), ", got ",
              grad.scalar_type(), " and ", output.scalar_type());
}

}  // namespace

// d data: a sum hands every element its run's grad (a mean divides it by the run's
// length); max and min share it equally among the elements equal to the result (NaN
// results go to the NaN elements); prod gives grad * output / x, or with one zero in the
// run, the zero the product of the others (initial included) and the rest nothing.
Tensor segment_reduce_backward_cpu(const Tensor& grad, const Tensor& output, const Tensor& data,
                                   std::string_view reduce, const std::optional<Tensor>& lengths,
                                   const std::optional<Tensor>& offsets, int64_t axis,
                                   const std::optional<c10::Scalar>& initial) {
  const SegmentGeometry g = segment_geometry(data, reduce, lengths, std::nullopt, offsets, axis, true, true);
  check_backward_operands(grad, output, data, g);
  Tensor grad_data = at::zeros(data.sizes(), TensorOptions().dtype(data.scalar_type()).device(data.device()));
  const Tensor x = data.contiguous(), go = grad.contiguous(), y = output.contiguous();
  dispatch_types<kFloating | kReducedFloat>(data.scalar_type(), "_segment_reduce_backward_cpu", [&]<typename T>() {
    using O = opmath_t<T>;
    const T* in = x.data_ptr<T>();
    const T* gp = go.data_ptr<T>();
    const T* yp = y.data_ptr<T>();
    T* gi = grad_data.data_ptr<T>();
    const O init = initial ? initial->to<O>() : O(1);
    for_each_run(g, [&](int64_t row, int64_t run) {
      const int64_t b = g.begin(row, run), e = g.end(row, run);
      if (e == b) return;
      const int64_t at = (row * g.runs + run) * g.inner;
      auto element = [&](int64_t j, int64_t i) { return (row * g.n + j) * g.inner + i; };
      for (int64_t i = 0; i < g.inner; ++i) {
        const O gr = O(gp[at + i]), out = O(yp[at + i]);
        if (g.op == SegmentOp::Sum || g.op == SegmentOp::Mean) {
          const O share = g.op == SegmentOp::Mean ? gr / static_cast<O>(e - b) : gr;
          for (int64_t j = b; j < e; ++j) gi[element(j, i)] = static_cast<T>(share);
        } else if (g.op == SegmentOp::Max || g.op == SegmentOp::Min) {
          auto hit = [&](O v) { return v == out || (v != v && out != out); };
          int64_t ties = 0;
          for (int64_t j = b; j < e; ++j) ties += hit(O(in[element(j, i)])) ? 1 : 0;
          if (ties == 0) continue;  // initial won
          const O share = gr / static_cast<O>(ties);
          for (int64_t j = b; j < e; ++j) {
            if (hit(O(in[element(j, i)]))) gi[element(j, i)] = static_cast<T>(share);
          }
        } else {
          int64_t zeros = 0, zero_at = -1;
          O others = init;
          for (int64_t j = b; j < e; ++j) {
            const O v = O(in[element(j, i)]);
            if (v == O(0)) {
              ++zeros;
              zero_at = j;
            } else {
              others *= v;
            }
          }
          if (zeros == 0) {
            for (int64_t j = b; j < e; ++j) gi[element(j, i)] = static_cast<T>(gr * out / O(in[element(j, i)]));
          } else if (zeros == 1) {
            gi[element(zero_at, i)] = static_cast<T>(gr * others);
          }
        }
      }
    });
  });
  return grad_data;
}

Tensor segment_reduce_backward_meta(const Tensor& grad, const Tensor& output, const Tensor& data,
                                    std::string_view reduce, const std::optional<Tensor>& lengths,
                                    const std::optional<Tensor>& offsets, int64_t axis,
                                    const std::optional<c10::Scalar>& initial) {
  const SegmentGeometry g = segment_geometry(data, reduce, lengths, std::nullopt, offsets, axis, true, false);
  check_backward_operands(grad, output, data, g);
  return make_empty(data.sizes(), data.scalar_type(), data.device());
}

}  // namespace at::inline tessera::native
