// ProcessGroupGloo's collectives. Each checks its arguments on the calling thread (so a bad
// call raises at once, as torch's do), then queues the Gloo call; results land in the
// caller's tensors, staged through a flat buffer where Gloo wants one.
#include <distributed/GlooCommon.h>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/scatter.h>

#include <cstring>
#include <numeric>

namespace c10d::inline tessera {

namespace {
using ms = std::chrono::milliseconds;

template <typename T>
T* ptr(const at::Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

// Raw copies between the caller's tensors and staging buffers: collectives write memory
// as torch's do, outside autograd (a leaf that requires grad may receive a broadcast).
void copy_bytes(const at::Tensor& dst, const void* src) {
  if (dst.nbytes() != 0) std::memcpy(dst.data_ptr(), src, dst.nbytes());
}

std::vector<char> concat(const std::vector<at::Tensor>& tensors) {
  size_t total = 0;
  for (const auto& t : tensors) total += t.nbytes();
  std::vector<char> flat(total);
  size_t at = 0;
  for (const auto& t : tensors) {
    if (t.nbytes() != 0) std::memcpy(flat.data() + at, t.data_ptr(), t.nbytes());
    at += t.nbytes();
  }
  return flat;
}

void split_into(const std::vector<at::Tensor>& tensors, const char* flat) {
  for (const auto& t : tensors) {
    copy_bytes(t, flat);
    flat += t.nbytes();
  }
}

void check_same(const at::Tensor& a, const at::Tensor& b, const char* op) {
  check_tensors({a}, op);
  check_tensors({b}, op);
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "ProcessGroupGloo::", op,
              ": input and output must have the same dtype, got ", b.scalar_type(), " and ", a.scalar_type());
}
}  // namespace

using WorkPtr = ProcessGroup::WorkPtr;

WorkPtr ProcessGroupGloo::broadcast(std::vector<at::Tensor>& tensors, const BroadcastOptions& opts) {
  check_tensors(tensors, "broadcast", true);
  check_root(opts.root_rank, size_, "broadcast");
  TORCH_CHECK(opts.root_tensor >= 0 && opts.root_tensor < static_cast<int64_t>(tensors.size()),
              "ProcessGroupGloo::broadcast: invalid root tensor: ", opts.root_tensor);
  const int root = static_cast<int>(opts.root_rank);
  return enqueue("broadcast", tensors, opts.timeout, [this, tensors, root, opts](uint32_t tag, ms timeout) {
    const at::Tensor& src = tensors[opts.root_tensor];
    with_gloo_type(src.scalar_type(), "broadcast", [&](auto v) {
      using T = decltype(v);
      gloo::BroadcastOptions o(context_);
      o.setRoot(root);
      o.setTag(tag);
      o.setTimeout(timeout);
      if (rank_ == root) o.setInput<T>(ptr<T>(src), src.numel());
      o.setOutput<T>(ptr<T>(src), src.numel());
      gloo::broadcast(o);
    });
    for (const auto& t : tensors) {
      if (!t.is_same(src)) copy_bytes(t, src.data_ptr());
    }
  });
}

WorkPtr ProcessGroupGloo::allreduce(std::vector<at::Tensor>& tensors, const AllreduceOptions& opts) {
  check_tensors(tensors, "allreduce", true);
  const ReduceFn fn = reduce_fn_for(tensors[0].scalar_type(), opts.reduce_op, "allreduce");
  return enqueue("allreduce", tensors, opts.timeout, [this, tensors, fn](uint32_t tag, ms timeout) {
    if (tensors[0].numel() == 0) return;
    with_gloo_type(tensors[0].scalar_type(), "allreduce", [&](auto v) {
      using T = decltype(v);
      std::vector<T*> outs;
      for (const auto& t : tensors) outs.push_back(ptr<T>(t));
      gloo::AllreduceOptions o(context_);
      o.setOutputs<T>(outs, tensors[0].numel());
      o.setReduceFunction(fn);
      o.setTag(tag);
      o.setTimeout(timeout);
      gloo::allreduce(o);
    });
  });
}

WorkPtr ProcessGroupGloo::reduce(std::vector<at::Tensor>& tensors, const ReduceOptions& opts) {
  check_tensors(tensors, "reduce", true);
  check_root(opts.root_rank, size_, "reduce");
  TORCH_CHECK(tensors.size() == 1, "ProcessGroupGloo::reduce: takes a single tensor");
  const ReduceFn fn = reduce_fn_for(tensors[0].scalar_type(), opts.reduce_op, "reduce");
  const int root = static_cast<int>(opts.root_rank);
  return enqueue("reduce", tensors, opts.timeout, [this, tensors, fn, root](uint32_t tag, ms timeout) {
    const at::Tensor& t = tensors[0];
    if (t.numel() == 0) return;
    with_gloo_type(t.scalar_type(), "reduce", [&](auto v) {
      using T = decltype(v);
      gloo::ReduceOptions o(context_);
      o.setRoot(root);
      o.setOutput<T>(ptr<T>(t), t.numel());
      o.setReduceFunction(fn);
      o.setTag(tag);
      o.setTimeout(timeout);
      gloo::reduce(o);
    });
  });
}

WorkPtr ProcessGroupGloo::allgather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                    const AllgatherOptions& opts) {
  TORCH_CHECK(inputs.size() == 1 && outputs.size() == 1,
              "ProcessGroupGloo::allgather: takes one input tensor and one output list");
  check_tensors(inputs, "allgather");
  TORCH_CHECK(static_cast<int>(outputs[0].size()) == size_, "ProcessGroupGloo::allgather: the output list must hold ",
              size_, " tensors (the world size), got ", outputs[0].size());
  check_tensors(outputs[0], "allgather");
  check_same(outputs[0][0], inputs[0], "allgather");
  TORCH_CHECK(outputs[0][0].sizes() == inputs[0].sizes(), "ProcessGroupGloo::allgather: invalid tensor size: "
              "every output tensor must have the input's sizes");
  const std::vector<at::Tensor> outs = outputs[0];
  const at::Tensor in = inputs[0];
  return enqueue("allgather", outs, opts.timeout, [this, outs, in](uint32_t tag, ms timeout) {
    std::vector<char> flat(in.nbytes() * size_);
    if (!flat.empty()) {
      with_gloo_type(in.scalar_type(), "allgather", [&](auto v) {
        using T = decltype(v);
        gloo::AllgatherOptions o(context_);
        o.setInput<T>(ptr<T>(in), in.numel());
        o.setOutput<T>(reinterpret_cast<T*>(flat.data()), in.numel() * size_);
        o.setTag(tag);
        o.setTimeout(timeout);
        gloo::allgather(o);
      });
    }
    split_into(outs, flat.data());
  });
}

WorkPtr ProcessGroupGloo::allgather_base(at::Tensor& output, at::Tensor& input, const AllgatherOptions& opts) {
  check_same(output, input, "_allgather_base");
  TORCH_CHECK(output.numel() == input.numel() * size_, "ProcessGroupGloo::_allgather_base: the output must hold "
              "world size times the input's elements, got ", output.numel(), " for ", input.numel());
  at::Tensor out = output, in = input;
  return enqueue("_allgather_base", {out}, opts.timeout, [this, out, in](uint32_t tag, ms timeout) {
    if (in.numel() == 0) return;
    with_gloo_type(in.scalar_type(), "_allgather_base", [&](auto v) {
      using T = decltype(v);
      gloo::AllgatherOptions o(context_);
      o.setInput<T>(ptr<T>(in), in.numel());
      o.setOutput<T>(ptr<T>(out), out.numel());
      o.setTag(tag);
      o.setTimeout(timeout);
      gloo::allgather(o);
    });
  });
}

WorkPtr ProcessGroupGloo::gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                 const GatherOptions& opts) {
  check_root(opts.root_rank, size_, "gather");
  TORCH_CHECK(inputs.size() == 1, "ProcessGroupGloo::gather: takes a single input tensor");
  check_tensors(inputs, "gather");
  const int root = static_cast<int>(opts.root_rank);
  std::vector<at::Tensor> outs;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
                "ProcessGroupGloo::gather: the root needs one output list of ", size_, " tensors");
    check_tensors(outputs[0], "gather");
    check_same(outputs[0][0], inputs[0], "gather");
    TORCH_CHECK(outputs[0][0].sizes() == inputs[0].sizes(), "ProcessGroupGloo::gather: invalid tensor size: "
                "every output tensor must have the input's sizes");
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "ProcessGroupGloo::gather: requires an empty output list on a non-root rank");
  }
  const at::Tensor in = inputs[0];
  return enqueue("gather", outs, opts.timeout, [this, outs, in, root](uint32_t tag, ms timeout) {
    if (in.numel() == 0) return;
    std::vector<char> flat(rank_ == root ? in.nbytes() * size_ : 0);
    with_gloo_type(in.scalar_type(), "gather", [&](auto v) {
      using T = decltype(v);
      gloo::GatherOptions o(context_);
      o.setRoot(root);
      o.setInput<T>(ptr<T>(in), in.numel());
      if (rank_ == root) o.setOutput<T>(reinterpret_cast<T*>(flat.data()), in.numel() * size_);
      o.setTag(tag);
      o.setTimeout(timeout);
      gloo::gather(o);
    });
    if (rank_ == root) split_into(outs, flat.data());
  });
}

WorkPtr ProcessGroupGloo::scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                  const ScatterOptions& opts) {
  check_root(opts.root_rank, size_, "scatter");
  TORCH_CHECK(outputs.size() == 1, "ProcessGroupGloo::scatter: takes a single output tensor");
  check_tensors(outputs, "scatter");
  const int root = static_cast<int>(opts.root_rank);
  std::vector<at::Tensor> ins;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
                "ProcessGroupGloo::scatter: the root needs one input list of ", size_, " tensors");
    check_tensors(inputs[0], "scatter");
    check_same(outputs[0], inputs[0][0], "scatter");
    TORCH_CHECK(outputs[0].sizes() == inputs[0][0].sizes(), "ProcessGroupGloo::scatter: invalid tensor size: "
                "every input tensor must have the output's sizes");
    ins = inputs[0];
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "ProcessGroupGloo::scatter: requires an empty input list on a non-root rank");
  }
  const at::Tensor out = outputs[0];
  return enqueue("scatter", {out}, opts.timeout, [this, out, ins, root](uint32_t tag, ms timeout) {
    if (out.numel() == 0) return;
    with_gloo_type(out.scalar_type(), "scatter", [&](auto v) {
      using T = decltype(v);
      gloo::ScatterOptions o(context_);
      o.setRoot(root);
      if (rank_ == root) {
        std::vector<T*> sources;
        for (const auto& t : ins) sources.push_back(ptr<T>(t));
        o.setInputs<T>(sources, out.numel());
      }
      o.setOutput<T>(ptr<T>(out), out.numel());
      o.setTag(tag);
      o.setTimeout(timeout);
      gloo::scatter(o);
    });
  });
}

// Gloo has no reduce-scatter in its options API: an allreduce of the whole input, of which
// this rank keeps its chunk (what current torch's Gloo backend does too).
namespace {
void allreduce_flat(const std::shared_ptr<gloo::Context>& context, c10::ScalarType type, std::vector<char>& flat,
                    ReduceFn fn, uint32_t tag, ms timeout) {
  const size_t item = c10::elementSize(type);
  if (flat.empty()) return;
  with_gloo_type(type, "reduce_scatter", [&](auto v) {
    using T = decltype(v);
    gloo::AllreduceOptions o(context);
    o.setOutput<T>(reinterpret_cast<T*>(flat.data()), flat.size() / item);
    o.setReduceFunction(fn);
    o.setTag(tag);
    o.setTimeout(timeout);
    gloo::allreduce(o);
  });
}
}  // namespace

WorkPtr ProcessGroupGloo::reduce_scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                         const ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == 1 && inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
              "ProcessGroupGloo::reduce_scatter: takes one output tensor and one input list of ", size_, " tensors");
  check_tensors(outputs, "reduce_scatter");
  check_tensors(inputs[0], "reduce_scatter");
  check_same(outputs[0], inputs[0][0], "reduce_scatter");
  TORCH_CHECK(outputs[0].sizes() == inputs[0][0].sizes(), "ProcessGroupGloo::reduce_scatter: invalid tensor "
              "size: every input tensor must have the output's sizes");
  const ReduceFn fn = reduce_fn_for(outputs[0].scalar_type(), opts.reduce_op, "reduce_scatter");
  const at::Tensor out = outputs[0];
  const std::vector<at::Tensor> ins = inputs[0];
  return enqueue("reduce_scatter", {out}, opts.timeout, [this, out, ins, fn](uint32_t tag, ms timeout) {
    std::vector<char> flat = concat(ins);
    allreduce_flat(context_, out.scalar_type(), flat, fn, tag, timeout);
    copy_bytes(out, flat.data() + out.nbytes() * rank_);
  });
}

WorkPtr ProcessGroupGloo::reduce_scatter_base(at::Tensor& output, at::Tensor& input, const ReduceScatterOptions& opts) {
  check_same(output, input, "_reduce_scatter_base");
  TORCH_CHECK(input.numel() == output.numel() * size_, "ProcessGroupGloo::_reduce_scatter_base: the input must hold "
              "world size times the output's elements, got ", input.numel(), " for ", output.numel());
  const ReduceFn fn = reduce_fn_for(output.scalar_type(), opts.reduce_op, "_reduce_scatter_base");
  at::Tensor out = output, in = input;
  return enqueue("_reduce_scatter_base", {out}, opts.timeout, [this, out, in, fn](uint32_t tag, ms timeout) {
    std::vector<char> flat = concat({in});
    allreduce_flat(context_, out.scalar_type(), flat, fn, tag, timeout);
    copy_bytes(out, flat.data() + out.nbytes() * rank_);
  });
}

namespace {
// Elements going to (or coming from) each rank: split sizes count rows of dim 0; none given
// means equal parts.
std::vector<int64_t> per_rank_elements(const at::Tensor& t, const std::vector<int64_t>& splits, int size,
                                       const char* what) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const int64_t row = rows == 0 ? 0 : t.numel() / rows;
  std::vector<int64_t> out;
  if (splits.empty()) {
    TORCH_CHECK(rows % size == 0, "ProcessGroupGloo::alltoall_base: the ", what,
                " tensor's dim 0 must divide by the world size, got ", rows);
    out.assign(size, rows / size * row);
  } else {
    TORCH_CHECK(static_cast<int>(splits.size()) == size, "ProcessGroupGloo::alltoall_base: ", what,
                " split sizes must have one entry per rank");
    int64_t total = 0;
    for (int64_t s : splits) {
      TORCH_CHECK(s >= 0, "ProcessGroupGloo::alltoall_base: split sizes must not be negative");
      total += s;
      out.push_back(s * row);
    }
    TORCH_CHECK(total == rows, "ProcessGroupGloo::alltoall_base: ", what, " split sizes sum to ", total,
                " but dim 0 is ", rows);
  }
  return out;
}

void alltoallv(const std::shared_ptr<gloo::Context>& context, c10::ScalarType type, void* in,
               std::vector<int64_t> in_counts, void* out, std::vector<int64_t> out_counts, uint32_t tag, ms timeout) {
  with_gloo_type(type, "alltoall", [&](auto v) {
    using T = decltype(v);
    gloo::AlltoallvOptions o(context);
    o.setInput<T>(static_cast<T*>(in), std::move(in_counts));
    o.setOutput<T>(static_cast<T*>(out), std::move(out_counts));
    o.setTag(tag);
    o.setTimeout(timeout);
    gloo::alltoallv(o);
  });
}
}  // namespace

WorkPtr ProcessGroupGloo::alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_split_sizes,
                                        std::vector<int64_t>& input_split_sizes, const AllToAllOptions& opts) {
  check_same(output, input, "alltoall_base");
  auto in_counts = per_rank_elements(input, input_split_sizes, size_, "input");
  auto out_counts = per_rank_elements(output, output_split_sizes, size_, "output");
  at::Tensor out = output, in = input;
  return enqueue("alltoall_base", {out}, opts.timeout,
                 [this, out, in, in_counts, out_counts](uint32_t tag, ms timeout) {
                   alltoallv(context_, in.scalar_type(), in.data_ptr(), in_counts, out.data_ptr(), out_counts, tag,
                             timeout);
                 });
}

WorkPtr ProcessGroupGloo::alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                   const AllToAllOptions& opts) {
  TORCH_CHECK(static_cast<int>(outputs.size()) == size_ && static_cast<int>(inputs.size()) == size_,
              "ProcessGroupGloo::alltoall: takes one input and one output tensor per rank (", size_, ")");
  for (int r = 0; r < size_; ++r) check_same(outputs[r], inputs[r], "alltoall");
  for (int r = 1; r < size_; ++r) {
    TORCH_CHECK(inputs[r].scalar_type() == inputs[0].scalar_type(),
                "ProcessGroupGloo::alltoall: tensors must all have the same dtype");
  }
  const std::vector<at::Tensor> outs = outputs, ins = inputs;
  return enqueue("alltoall", outs, opts.timeout, [this, outs, ins](uint32_t tag, ms timeout) {
    std::vector<int64_t> in_counts, out_counts;
    for (const auto& t : ins) in_counts.push_back(t.numel());
    for (const auto& t : outs) out_counts.push_back(t.numel());
    std::vector<char> in = concat(ins);
    std::vector<char> out(std::accumulate(outs.begin(), outs.end(), size_t{0},
                                          [](size_t n, const at::Tensor& t) { return n + t.nbytes(); }));
    alltoallv(context_, ins[0].scalar_type(), in.data(), in_counts, out.data(), out_counts, tag, timeout);
    split_into(outs, out.data());
  });
}

WorkPtr ProcessGroupGloo::barrier(const BarrierOptions& opts) {
  return enqueue("barrier", {}, opts.timeout, [this](uint32_t tag, ms timeout) {
    gloo::BarrierOptions o(context_);
    o.setTag(tag);
    o.setTimeout(timeout);
    gloo::barrier(o);
  });
}

}  // namespace c10d::inline tessera
