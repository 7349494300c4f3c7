// The fingerprint check: each rank encodes (op, dtype and sizes of each tensor) as int64s;
// the helper group all-gathers the lengths, then the codes padded to the longest; a rank
// whose code differs from this rank's is named with both decoded.
#include <distributed/ProcessGroupWrapper.h>

#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <sstream>

namespace c10d::inline tessera {

using WorkPtr = ProcessGroup::WorkPtr;

namespace {

const char* const kOps[] = {"BROADCAST", "ALLREDUCE", "REDUCE", "ALLGATHER", "_ALLGATHER_BASE", "GATHER",
                            "SCATTER", "REDUCE_SCATTER", "_REDUCE_SCATTER_BASE", "ALLTOALL_BASE", "ALLTOALL",
                            "BARRIER"};

int64_t op_code(const char* op) {
  for (size_t i = 0; i < std::size(kOps); ++i) {
    if (std::string(op) == kOps[i]) return static_cast<int64_t>(i);
  }
  TORCH_INTERNAL_ASSERT(false, "unknown collective ", op);
}

// [op, n, (dtype, ndim, sizes...) per tensor]
std::vector<int64_t> encode(const char* op, const std::vector<at::Tensor>& tensors) {
  std::vector<int64_t> code{op_code(op), static_cast<int64_t>(tensors.size())};
  for (const auto& t : tensors) {
    code.push_back(static_cast<int64_t>(t.scalar_type()));
    code.push_back(t.dim());
    for (int64_t s : t.sizes()) code.push_back(s);
  }
  return code;
}

// torch's CollectiveFingerPrint text: the op, the first tensor's shape, every dtype.
std::string describe(const int64_t* code, int64_t length) {
  std::ostringstream os;
  os << "CollectiveFingerPrint(OpType=";
  if (length < 2 || code[0] < 0 || code[0] >= static_cast<int64_t>(std::size(kOps))) {
    os << "UNKNOWN)";
    return os.str();
  }
  os << kOps[code[0]];
  const int64_t n = code[1];
  if (n > 0) {
    std::vector<std::string> dtypes;
    std::string first_shape;
    int64_t pos = 2;
    for (int64_t i = 0; i < n && pos + 1 < length; ++i) {
      dtypes.emplace_back(c10::toString(static_cast<c10::ScalarType>(code[pos])));
      const int64_t ndim = code[pos + 1];
      pos += 2;
      if (i == 0) {
        std::ostringstream shape;
        shape << "[";
        for (int64_t d = 0; d < ndim && pos + d < length; ++d) shape << (d ? ", " : "") << code[pos + d];
        shape << "]";
        first_shape = shape.str();
      }
      pos += ndim;
    }
    os << ", TensorShape=" << first_shape << ", TensorDtypes=";
    for (size_t i = 0; i < dtypes.size(); ++i) os << (i ? ", " : "") << dtypes[i];
    os << ", TensorDeviceTypes=cpu";
  }
  os << ")";
  return os.str();
}

}  // namespace

ProcessGroupWrapper::ProcessGroupWrapper(std::shared_ptr<ProcessGroup> inner, std::shared_ptr<ProcessGroup> helper,
                                         std::chrono::milliseconds timeout)
    : ProcessGroup(inner->rank(), inner->size()), inner_(std::move(inner)), helper_(std::move(helper)),
      timeout_(timeout) {
  TORCH_CHECK(helper_->rank() == rank_ && helper_->size() == size_,
              "ProcessGroupWrapper: the helper group must span the same ranks");
}

// Every rank sends rank 0 a token and waits for its answer; rank 0 names those whose token
// did not come within the timeout (torch's monitoredBarrier message).
void ProcessGroupWrapper::monitored_barrier() {
  constexpr int kTag = 0;  // the helper group carries nothing else
  const auto opts = at::TensorOptions().dtype(at::kInt);
  if (rank_ != 0) {
    std::vector<at::Tensor> token{at::zeros({1}, opts)};
    helper_->send(token, 0, kTag)->wait(timeout_);
    helper_->recv(token, 0, kTag)->wait(timeout_);
    return;
  }
  std::vector<std::pair<int, WorkPtr>> arrivals;
  for (int r = 1; r < size_; ++r) {
    std::vector<at::Tensor> token{at::zeros({1}, opts)};
    arrivals.emplace_back(r, helper_->recv(token, r, kTag));
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  std::vector<int> missing;
  for (auto& [r, work] : arrivals) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    try {
      work->wait(std::max(left, std::chrono::milliseconds(1)));
    } catch (const std::exception&) {
      missing.push_back(r);
    }
  }
  if (!missing.empty()) {
    std::ostringstream ranks;
    for (size_t i = 0; i < missing.size(); ++i) ranks << (i ? ", " : "") << missing[i];
    TORCH_CHECK(false, "[Rank 0]: Ranks ", ranks.str(), " failed to pass monitoredBarrier in ", timeout_.count(),
                " ms");
  }
  for (int r = 1; r < size_; ++r) {
    std::vector<at::Tensor> token{at::zeros({1}, opts)};
    helper_->send(token, r, kTag)->wait(timeout_);
  }
}

void ProcessGroupWrapper::check(const char* op, const std::vector<at::Tensor>& tensors) {
  c10::AutoGradMode no_grad(false);
  monitored_barrier();
  const std::vector<int64_t> mine = encode(op, tensors);
  const auto opts = at::TensorOptions().dtype(at::kLong);
  at::Tensor length = at::full({1}, static_cast<int64_t>(mine.size()), opts);
  std::vector<std::vector<at::Tensor>> lengths(1);
  for (int r = 0; r < size_; ++r) lengths[0].push_back(at::empty({1}, opts));
  std::vector<at::Tensor> in{length};
  helper_->allgather(lengths, in)->wait();
  int64_t longest = 0;
  for (const auto& l : lengths[0]) longest = std::max(longest, l.item().toLong());
  at::Tensor padded = at::full({longest}, -1, opts);
  std::copy(mine.begin(), mine.end(), padded.data_ptr<int64_t>());
  std::vector<std::vector<at::Tensor>> codes(1);
  for (int r = 0; r < size_; ++r) codes[0].push_back(at::empty({longest}, opts));
  std::vector<at::Tensor> code_in{padded};
  helper_->allgather(codes, code_in)->wait();
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const int64_t n = lengths[0][r].item().toLong();
    const int64_t* theirs = codes[0][r].data_ptr<int64_t>();
    if (n != static_cast<int64_t>(mine.size()) || !std::equal(mine.begin(), mine.end(), theirs)) {
      TORCH_CHECK(false, "Detected mismatch between collectives on ranks. Rank ", rank_, " is running collective: ",
                  describe(mine.data(), static_cast<int64_t>(mine.size())), ", but Rank ", r,
                  " is running collective: ", describe(theirs, n), ".");
    }
  }
}

WorkPtr ProcessGroupWrapper::broadcast(std::vector<at::Tensor>& tensors, const BroadcastOptions& opts) {
  check("BROADCAST", tensors);
  return inner_->broadcast(tensors, opts);
}
WorkPtr ProcessGroupWrapper::allreduce(std::vector<at::Tensor>& tensors, const AllreduceOptions& opts) {
  check("ALLREDUCE", tensors);
  return inner_->allreduce(tensors, opts);
}
WorkPtr ProcessGroupWrapper::reduce(std::vector<at::Tensor>& tensors, const ReduceOptions& opts) {
  check("REDUCE", tensors);
  return inner_->reduce(tensors, opts);
}
WorkPtr ProcessGroupWrapper::allgather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                       const AllgatherOptions& opts) {
  check("ALLGATHER", inputs);
  return inner_->allgather(outputs, inputs, opts);
}
WorkPtr ProcessGroupWrapper::allgather_base(at::Tensor& output, at::Tensor& input, const AllgatherOptions& opts) {
  check("_ALLGATHER_BASE", {input});
  return inner_->allgather_base(output, input, opts);
}
WorkPtr ProcessGroupWrapper::gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                    const GatherOptions& opts) {
  check("GATHER", inputs);
  return inner_->gather(outputs, inputs, opts);
}
WorkPtr ProcessGroupWrapper::scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                     const ScatterOptions& opts) {
  check("SCATTER", outputs);
  return inner_->scatter(outputs, inputs, opts);
}
WorkPtr ProcessGroupWrapper::reduce_scatter(std::vector<at::Tensor>& outputs,
                                            std::vector<std::vector<at::Tensor>>& inputs,
                                            const ReduceScatterOptions& opts) {
  check("REDUCE_SCATTER", outputs);
  return inner_->reduce_scatter(outputs, inputs, opts);
}
WorkPtr ProcessGroupWrapper::reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                 const ReduceScatterOptions& opts) {
  check("_REDUCE_SCATTER_BASE", {output});
  return inner_->reduce_scatter_base(output, input, opts);
}
// All-to-all shapes may differ by rank (split sizes): the op alone is compared.
WorkPtr ProcessGroupWrapper::alltoall_base(at::Tensor& output, at::Tensor& input,
                                           std::vector<int64_t>& output_split_sizes,
                                           std::vector<int64_t>& input_split_sizes, const AllToAllOptions& opts) {
  check("ALLTOALL_BASE", {});
  return inner_->alltoall_base(output, input, output_split_sizes, input_split_sizes, opts);
}
WorkPtr ProcessGroupWrapper::alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                      const AllToAllOptions& opts) {
  check("ALLTOALL", {});
  return inner_->alltoall(outputs, inputs, opts);
}
WorkPtr ProcessGroupWrapper::barrier(const BarrierOptions& opts) {
  check("BARRIER", {});
  return inner_->barrier(opts);
}
WorkPtr ProcessGroupWrapper::send(std::vector<at::Tensor>& tensors, int dst_rank, int tag) {
  return inner_->send(tensors, dst_rank, tag);
}
WorkPtr ProcessGroupWrapper::recv(std::vector<at::Tensor>& tensors, int src_rank, int tag) {
  return inner_->recv(tensors, src_rank, tag);
}
WorkPtr ProcessGroupWrapper::recv_anysource(std::vector<at::Tensor>& tensors, int tag) {
  return inner_->recv_anysource(tensors, tag);
}

}  // namespace c10d::inline tessera
