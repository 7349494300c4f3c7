// Joining tensors: cat (CPU and Meta kernels) and the composites over it, stack, hstack,
// vstack, dstack and column_stack. cat promotes its inputs to one dtype and, like torch,
// skips 1-D empty inputs (the legacy "torch.cat([torch.empty(0), x])" idiom) in its shape
// checks. Its CPU kernel copies each input into its slab of the output: plain memcpy of
// contiguous blocks when dtypes agree, split across threads when large.
#include <aten/core/Parallel.h>
#include <aten/native/Broadcast.h>
#include <aten/native/NativeFunctions.h>
#include <aten/native/StructuredHelpers.h>
#include <aten/native/TensorIterator.h>
#include <aten/native/factory/TensorFactories.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <cstring>

namespace at::inline tessera::native {

namespace {

// torch keeps 1-D empty tensors out of cat's shape checks: they were once the only way
// to write "no tensor yet".
bool skipped_by_cat(const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; }

struct CatPlan {
  std::vector<int64_t> sizes;  // the result's
  int64_t dim = 0;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  // The inputs' common suggested format (channels-last 2d/3d), else contiguous, as torch.
  c10::MemoryFormat format = c10::MemoryFormat::Contiguous;
};

CatPlan plan_cat(ArrayRef<Tensor> tensors, int64_t dim) {
  TORCH_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  CatPlan plan;
  ResultTypeState state;
  for (const Tensor& t : tensors) update_result_type_state(state, t);
  plan.dtype = result_type(state);
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    TORCH_CHECK(tensors[i].dim() > 0, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
    TORCH_CHECK(tensors[i].device() == tensors[0].device(),
                "Expected all tensors to be on the same device, but found at least two devices, ",
                tensors[0].device(), " and ", tensors[i].device(), "!");
    if (!ref && !skipped_by_cat(tensors[i])) ref = &tensors[i];
  }
  if (!ref) {  // only legacy empties: the result is one of them, promoted; torch checks no dim
    plan.dim = 0;
    plan.sizes = {0};
    return plan;
  }
  plan.dim = wrap_dim(dim, ref->dim());
  plan.sizes = ref->sizes().vec();
  plan.sizes[static_cast<size_t>(plan.dim)] = 0;
  std::optional<c10::MemoryFormat> common;
  bool agree = true;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped_by_cat(t)) continue;
    TORCH_CHECK(t.dim() == ref->dim(), "Tensors must have same number of dimensions: got ", ref->dim(), " and ",
                t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (d == plan.dim) continue;
      TORCH_CHECK(t.size(d) == ref->size(d), "Sizes of tensors must match except in dimension ", plan.dim,
                  ". Expected size ", ref->size(d), " but got size ", t.size(d), " for tensor number ", i,
                  " in the list.");
    }
    plan.sizes[static_cast<size_t>(plan.dim)] += t.size(plan.dim);
    const c10::MemoryFormat f = suggest_memory_format(t);
    if (!common) common = f;
    agree = agree && *common == f;
  }
  if (agree && common) plan.format = *common;
  return plan;
}

Tensor allocate_cat(const CatPlan& plan, c10::Device device) {
  if (plan.format != c10::MemoryFormat::Contiguous) {
    return make_empty_strided(plan.sizes, strides_for_memory_format(plan.sizes, plan.format), plan.dtype, device);
  }
  return make_empty(plan.sizes, plan.dtype, device);
}

// Copies the inputs into `out`, which has the plan's shape.
void fill_cat(ArrayRef<Tensor> tensors, const CatPlan& plan, const Tensor& out) {
  if (out.numel() == 0) return;
  const int64_t dim = plan.dim;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= plan.sizes[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(dim) + 1; d < plan.sizes.size(); ++d) inner *= plan.sizes[d];
  const int64_t out_row = plan.sizes[static_cast<size_t>(dim)] * inner;  // elements per outer index in out
  bool fast = out.is_contiguous();
  for (const Tensor& t : tensors) {
    fast = fast && (skipped_by_cat(t) || (t.scalar_type() == out.scalar_type() && t.is_contiguous()));
  }
  if (!fast) {
    // Casts, strided inputs or a strided out: each input through copy_ into its slab.
    int64_t offset = 0;
    for (const Tensor& t : tensors) {
      if (skipped_by_cat(t)) continue;
      const int64_t n = t.size(dim);
      if (n > 0) out.narrow(dim, offset, n).copy_(t);
      offset += n;
    }
    return;
  }
  // Block (input i, outer index o) is t_i's o-th row of size(dim) * inner elements; every
  // block goes to a known place in out, so blocks are independent work items.
  struct Source {
    const char* data;
    int64_t row_bytes;
    int64_t out_offset_bytes;
  };
  const int64_t item = static_cast<int64_t>(out.itemsize());
  std::vector<Source> sources;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (skipped_by_cat(t) || t.numel() == 0) continue;
    const int64_t row = t.size(dim) * inner;
    sources.push_back({static_cast<const char*>(t.data_ptr()), row * item, offset * item});
    offset += row;
  }
  char* dst = static_cast<char*>(out.data_ptr());
  const int64_t out_row_bytes = out_row * item;
  const int64_t blocks = outer * static_cast<int64_t>(sources.size());
  const int64_t total_bytes = out_row_bytes * outer;
  // About 1 MiB per thread chunk: below that, threads cost more than they bring.
  constexpr int64_t kGrainBytes = int64_t{1} << 20;
  if (blocks == static_cast<int64_t>(sources.size()) && outer == 1) {
    // One block per input (cat along dim 0 of contiguous tensors): split within blocks.
    parallel_for(0, total_bytes, kGrainBytes, [&](int64_t b, int64_t e) {
      for (const Source& s : sources) {
        const int64_t lo = std::max(b, s.out_offset_bytes), hi = std::min(e, s.out_offset_bytes + s.row_bytes);
        if (lo < hi) std::memcpy(dst + lo, s.data + (lo - s.out_offset_bytes), static_cast<size_t>(hi - lo));
      }
    });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kGrainBytes / std::max<int64_t>(1, total_bytes / std::max<int64_t>(1, blocks)));
  parallel_for(0, blocks, grain, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t o = k / static_cast<int64_t>(sources.size());
      const Source& s = sources[static_cast<size_t>(k % static_cast<int64_t>(sources.size()))];
      std::memcpy(dst + o * out_row_bytes + s.out_offset_bytes, s.data + o * s.row_bytes, static_cast<size_t>(s.row_bytes));
    }
  });
}

Tensor& cat_into(ArrayRef<Tensor> tensors, int64_t dim, Tensor& out, bool meta) {
  CatPlan plan = plan_cat(tensors, dim);
  TORCH_CHECK(c10::canCast(plan.dtype, out.scalar_type()),
              "torch.cat(): input types can't be cast to the desired output type ", out.scalar_type());
  for (const Tensor& t : tensors) {
    TORCH_CHECK(!out.is_same(t) || out.numel() == 0, "torch.cat(): the out= tensor may not be one of the inputs");
    if (!meta) assert_no_partial_overlap(out, t);
  }
  resize_out_sizes(out, plan.sizes, "cat");
  if (!meta) {
    plan.dtype = out.scalar_type();
    fill_cat(tensors, plan, out);
  }
  return out;
}

// The inputs with at least `n` dims (torch's atleast_1d/2d/3d): 0-dim -> [1](,1,1),
// 1-D [k] -> [1, k] (2-D) or [1, k, 1] (3-D), 2-D [a, b] -> [a, b, 1] (3-D).
std::vector<Tensor> at_least(ArrayRef<Tensor> tensors, int64_t n) {
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    Tensor r = t;
    if (r.dim() == 0) r = r.reshape({1});
    if (n >= 2 && r.dim() == 1) r = r.unsqueeze(0);
    if (n >= 3 && r.dim() == 2) r = r.unsqueeze(-1);
    out.push_back(r);
  }
  return out;
}

// stack: each input gains a size-1 dim at `dim`, all must be the same size.
std::vector<Tensor> stack_inputs(ArrayRef<Tensor> tensors, int64_t dim) {
  TORCH_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1);  // torch checks the dim first
  for (size_t i = 1; i < tensors.size(); ++i) {
    TORCH_CHECK(tensors[i].sizes().equals(tensors[0].sizes()), "stack expects each tensor to be equal size, but got ",
                tensors[0].sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
  }
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(t.unsqueeze(d));
  return out;
}

std::vector<Tensor> column_stack_inputs(ArrayRef<Tensor> tensors) {
  TORCH_CHECK(!tensors.empty(), "column_stack expects a non-empty TensorList");
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(t.dim() <= 1 ? t.reshape({t.numel(), 1}) : t);
  return out;
}

// hstack joins 1-D inputs along dim 0, others along dim 1.
int64_t hstack_dim(const std::vector<Tensor>& ts) { return ts[0].dim() == 1 ? 0 : 1; }

}  // namespace

Tensor cat_cpu(ArrayRef<Tensor> tensors, int64_t dim) {
  CatPlan plan = plan_cat(tensors, dim);
  Tensor out = allocate_cat(plan, tensors[0].device());
  fill_cat(tensors, plan, out);
  return out;
}
Tensor cat_meta(ArrayRef<Tensor> tensors, int64_t dim) {
  return allocate_cat(plan_cat(tensors, dim), c10::Device(c10::DeviceType::Meta));
}
// Any backend: each input copied into its slab of the result by copy_ (an empty list
// reaches here too, having no tensor to dispatch on, and gets torch's error).
Tensor cat_composite(ArrayRef<Tensor> tensors, int64_t dim) {
  CatPlan plan = plan_cat(tensors, dim);
  Tensor out = allocate_cat(plan, tensors[0].device());
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (skipped_by_cat(t)) continue;
    const int64_t n = t.size(plan.dim);
    if (n > 0 && out.numel() > 0) out.narrow(plan.dim, offset, n).copy_(t);
    offset += n;
  }
  return out;
}
Tensor& cat_out_cpu(ArrayRef<Tensor> tensors, int64_t dim, Tensor& out) { return cat_into(tensors, dim, out, false); }
Tensor& cat_out_meta(ArrayRef<Tensor> tensors, int64_t dim, Tensor& out) { return cat_into(tensors, dim, out, true); }

Tensor stack(ArrayRef<Tensor> tensors, int64_t dim) {
  auto ts = stack_inputs(tensors, dim);
  return at::cat(ts, wrap_dim(dim, tensors[0].dim() + 1));
}
Tensor& stack_out(ArrayRef<Tensor> tensors, int64_t dim, Tensor& out) {
  auto ts = stack_inputs(tensors, dim);
  return at::cat_out(out, ts, wrap_dim(dim, tensors[0].dim() + 1));
}

Tensor hstack(ArrayRef<Tensor> tensors) {
  TORCH_CHECK(!tensors.empty(), "hstack expects a non-empty TensorList");
  auto ts = at_least(tensors, 1);
  return at::cat(ts, hstack_dim(ts));
}
Tensor& hstack_out(ArrayRef<Tensor> tensors, Tensor& out) {
  TORCH_CHECK(!tensors.empty(), "hstack expects a non-empty TensorList");
  auto ts = at_least(tensors, 1);
  return at::cat_out(out, ts, hstack_dim(ts));
}

Tensor vstack(ArrayRef<Tensor> tensors) {
  TORCH_CHECK(!tensors.empty(), "vstack expects a non-empty TensorList");
  return at::cat(at_least(tensors, 2), 0);
}
Tensor& vstack_out(ArrayRef<Tensor> tensors, Tensor& out) {
  TORCH_CHECK(!tensors.empty(), "vstack expects a non-empty TensorList");
  return at::cat_out(out, at_least(tensors, 2), 0);
}

Tensor dstack(ArrayRef<Tensor> tensors) {
  TORCH_CHECK(!tensors.empty(), "dstack expects a non-empty TensorList");
  return at::cat(at_least(tensors, 3), 2);
}
Tensor& dstack_out(ArrayRef<Tensor> tensors, Tensor& out) {
  TORCH_CHECK(!tensors.empty(), "dstack expects a non-empty TensorList");
  return at::cat_out(out, at_least(tensors, 3), 2);
}

Tensor column_stack(ArrayRef<Tensor> tensors) { return at::hstack(column_stack_inputs(tensors)); }
Tensor& column_stack_out(ArrayRef<Tensor> tensors, Tensor& out) {
  return at::hstack_out(out, column_stack_inputs(tensors));
}

}  // namespace at::inline tessera::native
