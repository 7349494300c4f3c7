// embedding_bag: the sum, mean or max of the embedding rows of each bag of indices (bags
// are runs of a flat index list, given by their start offsets). Written over
// differentiable ops (index_select, index_add, gather), which carry its gradient; the
// bag structure (which positions count, into which bag) is read once from the indices.
#include <aten/core/Dispatch.h>
#include <aten/core/TensorOperators.h>
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <cmath>
#include <vector>

namespace at::inline tessera::native {

namespace {

enum BagMode : int64_t { kSum = 0, kMean = 1, kMax = 2 };

void check_index_type(const Tensor& t, const char* arg, int pos) {
  const c10::ScalarType s = t.scalar_type();
  TORCH_CHECK(s == c10::kLong || s == c10::kInt, "Expected tensor for argument #", pos, " '", arg, "' to have one of "
              "the following scalar types: Long, Int; but got ", tensor_type_string(t), " instead (while checking "
              "arguments for embedding_bag)");
}

// Which index positions count (inside a bag, not padding_idx), with their bag.
struct Bags {
  int64_t count = 0;
  std::vector<int64_t> offset2bag, kept_positions, kept_bags, sizes;
};

Bags read_bags(const std::vector<int64_t>& idx, const std::vector<int64_t>& off, bool include_last_offset,
               int64_t padding_idx, int64_t num_weights) {
  const int64_t n = static_cast<int64_t>(idx.size());
  Bags b;
  b.count = static_cast<int64_t>(off.size()) - (include_last_offset ? 1 : 0);
  TORCH_CHECK(b.count >= 0, "embedding_bag: include_last_offset needs at least one offset");
  if (!off.empty()) {
    TORCH_CHECK(off[0] == 0, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                "position 0. However, got ", off[0]);
    TORCH_CHECK(off.back() <= n, "offsets[-1] can not be greater than input's length ", n, " but got offsets[-1] of ",
                off.back());
  }
  for (size_t i = 1; i < off.size(); ++i) {
    TORCH_CHECK(off[i] >= off[i - 1], "embedding_bag: offsets must be non-decreasing, but offsets[", i, "] = ", off[i],
                " < offsets[", i - 1, "] = ", off[i - 1]);
  }
  b.offset2bag.assign(n, 0);
  b.sizes.assign(b.count, 0);
  for (int64_t bag = 0; bag < b.count; ++bag) {
    const int64_t end = bag + 1 < static_cast<int64_t>(off.size()) ? off[bag + 1] : n;
    for (int64_t i = off[bag]; i < end; ++i) {
      TORCH_CHECK_INDEX(idx[i] >= 0 && idx[i] < num_weights, "embedding_bag: index ", idx[i],
                        " is out of range for a weight of ", num_weights, " rows");
      b.offset2bag[i] = bag;
      if (idx[i] == padding_idx) continue;
      b.kept_positions.push_back(i);
      b.kept_bags.push_back(bag);
      ++b.sizes[bag];
    }
  }
  return b;
}

// Per bag and column, the weight row holding the largest value (-1 for an empty bag).
Tensor max_rows(const Tensor& weight, const std::vector<int64_t>& idx, const Bags& b) {
  const int64_t dim = weight.size(1);
  Tensor rows = at::full({b.count, dim}, -1, TensorOptions().dtype(c10::kLong));
  const Tensor w = weight.resolve_neg().contiguous();  // (a composite: a negative view reaches it)
  int64_t* r = rows.data_ptr<int64_t>();
  dispatch_types<kFloating | kReducedFloat>(weight.scalar_type(), "embedding_bag", [&]<typename T>() {
    using O = opmath_t<T>;
    const T* wp = w.data_ptr<T>();
    for (size_t k = 0; k < b.kept_positions.size(); ++k) {
      const int64_t row = idx[b.kept_positions[k]];
      int64_t* best = r + b.kept_bags[k] * dim;
      for (int64_t d = 0; d < dim; ++d) {
        const O v = static_cast<O>(wp[row * dim + d]);
        if (best[d] < 0) {
          best[d] = row;
          continue;
        }
        const O current = static_cast<O>(wp[best[d] * dim + d]);
        if (v > current || (std::isnan(v) && !std::isnan(current))) best[d] = row;  // a NaN wins, first kept
      }
    }
  });
  return rows;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag_padding_idx(
    const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool scale_grad_by_freq, int64_t mode,
    bool sparse, const std::optional<Tensor>& per_sample_weights, bool include_last_offset,
    std::optional<int64_t> padding_idx) {
  TORCH_CHECK(weight.dim() == 2, "embedding_bag: weight has to be a 2D Tensor, but got Tensor of dimension ",
              weight.dim());
  TORCH_CHECK(indices.dim() == 1, "embedding_bag: input has to be a 1D Tensor here, but got Tensor of dimension ",
              indices.dim());
  TORCH_CHECK(offsets.dim() == 1, "embedding_bag: offsets has to be a 1D Tensor, but got Tensor of dimension ",
              offsets.dim());
  check_index_type(indices, "indices", 1);
  check_index_type(offsets, "offsets", 2);
  TORCH_CHECK(indices.scalar_type() == offsets.scalar_type(), "Expected tensor for argument #1 'indices' to have the "
              "same type as tensor for argument #2 'offsets'; but type ", tensor_type_string(indices),
              " does not equal ", tensor_type_string(offsets), " (while checking arguments for embedding_bag)");
  TORCH_CHECK(c10::isFloatingType(weight.scalar_type()), "embedding_bag: expected a floating weight, but got ",
              toString(weight.scalar_type()));
  TORCH_CHECK(mode == kSum || mode == kMean || mode == kMax, "embedding_bag: mode has to be 0 (sum), 1 (mean) or 2 "
              "(max), but got ", mode);
  TORCH_CHECK(!(sparse && mode == kMax), "max mode does not support sparse weights");
  TORCH_CHECK_NOT_IMPLEMENTED(!scale_grad_by_freq, "embedding_bag: scale_grad_by_freq=True is not implemented in "
                              "tessera yet");
  const bool weighted = per_sample_weights.has_value() && per_sample_weights->defined();
  if (weighted) {
    TORCH_CHECK(mode == kSum, "embedding_bag: per_sample_weights only supported with mode='sum'");
    TORCH_CHECK(per_sample_weights->dim() == 1 && per_sample_weights->numel() == indices.numel(),
                "embedding_bag: expected per_sample_weights to be 1D with the same number of elements as indices (",
                indices.numel(), "), but got ", per_sample_weights->sizes());
    TORCH_CHECK(per_sample_weights->scalar_type() == weight.scalar_type(), "embedding_bag: expected per_sample_weights "
                "of dtype ", toString(weight.scalar_type()), ", but got ", toString(per_sample_weights->scalar_type()));
  }
  const int64_t num_weights = weight.size(0), dim = weight.size(1);
  int64_t pad = -1;
  if (padding_idx) {
    TORCH_CHECK(*padding_idx >= -num_weights && *padding_idx < num_weights, "padding_idx must be within the number "
                "of embeddings, -", num_weights, " through ", num_weights - 1, ", but got ", *padding_idx);
    pad = *padding_idx < 0 ? *padding_idx + num_weights : *padding_idx;
  }
  const int64_t bags = offsets.size(0) - (include_last_offset ? 1 : 0);
  const TensorOptions index_opts = TensorOptions().dtype(c10::kLong).device(weight.device());
  if (weight.is_meta() || indices.is_meta() || offsets.is_meta()) {
    return {at::empty({bags, dim}, TensorOptions().dtype(weight.scalar_type()).device(c10::kMeta)),
            at::empty({indices.numel()}, index_opts.device(c10::kMeta)), at::empty({bags}, index_opts.device(c10::kMeta)),
            at::empty({mode == kMax ? bags : 0, dim}, index_opts.device(c10::kMeta))};
  }
  const std::vector<int64_t> idx = host_int64_values(indices);
  const Bags b = read_bags(idx, host_int64_values(offsets), include_last_offset, pad, num_weights);
  const Tensor bag_sizes = tensor_from_vector(b.sizes), offset2bag = tensor_from_vector(b.offset2bag);
  if (mode == kMax) {
    const Tensor rows = max_rows(weight, idx, b);
    const Tensor nonempty = at::gt(bag_sizes, 0).unsqueeze(1);  // an empty bag gives 0 (not weight[0] * 0)
    const Tensor picked = at::where(nonempty, weight.gather(0, rows.clamp_min(0)),
                                    at::zeros({}, TensorOptions().dtype(weight.scalar_type())));
    return {picked, offset2bag, bag_sizes, rows};
  }
  std::vector<int64_t> kept_rows;
  kept_rows.reserve(b.kept_positions.size());
  for (int64_t p : b.kept_positions) kept_rows.push_back(idx[p]);
  // sparse=True: the rows are looked up through embedding, whose backward keeps the
  // weight's grad sparse (one entry per kept index, as torch's sparse bag backward).
  const Tensor kept = tensor_from_vector(kept_rows);
  Tensor rows = sparse ? at::embedding(weight, kept, -1, false, true) : weight.index_select(0, kept);
  if (weighted) rows = rows * per_sample_weights->index_select(0, tensor_from_vector(b.kept_positions)).unsqueeze(1);
  Tensor out = at::zeros({bags, dim}, TensorOptions().dtype(weight.scalar_type()))
                   .index_add(0, tensor_from_vector(b.kept_bags), rows);
  if (mode == kMean) out = out / bag_sizes.clamp_min(1).unsqueeze(1).to(weight.scalar_type());
  return {out, offset2bag, bag_sizes, at::empty({0, dim}, index_opts)};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight, const Tensor& indices,
                                                         const Tensor& offsets, bool scale_grad_by_freq, int64_t mode,
                                                         bool sparse, const std::optional<Tensor>& per_sample_weights,
                                                         bool include_last_offset) {
  return embedding_bag_padding_idx(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                                   include_last_offset, std::nullopt);
}

}  // namespace at::inline tessera::native
