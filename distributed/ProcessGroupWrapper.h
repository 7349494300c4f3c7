// ProcessGroupWrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL): a process group that, before each
// collective, checks on a helper group of its own that every rank has arrived (a monitored
// barrier: rank 0 names the ranks missing after the timeout) and is calling the same
// collective with tensors of the same dtypes and shapes (else every rank raises naming both
// fingerprints), instead of letting mismatched collectives hang or mix data.
#pragma once

#include <distributed/ProcessGroup.h>

namespace c10d::inline tessera {

class TORCH_API ProcessGroupWrapper final : public ProcessGroup {
 public:
  // `helper` spans the same ranks (its own store prefix): it carries only fingerprints.
  ProcessGroupWrapper(std::shared_ptr<ProcessGroup> inner, std::shared_ptr<ProcessGroup> helper,
                      std::chrono::milliseconds timeout);
  std::string backend_name() const override { return inner_->backend_name(); }
  const std::shared_ptr<ProcessGroup>& wrapped() const { return inner_; }

  WorkPtr broadcast(std::vector<at::Tensor>& tensors, const BroadcastOptions& opts = {}) override;
  WorkPtr allreduce(std::vector<at::Tensor>& tensors, const AllreduceOptions& opts = {}) override;
  WorkPtr reduce(std::vector<at::Tensor>& tensors, const ReduceOptions& opts = {}) override;
  WorkPtr allgather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                    const AllgatherOptions& opts = {}) override;
  WorkPtr allgather_base(at::Tensor& output, at::Tensor& input, const AllgatherOptions& opts = {}) override;
  WorkPtr gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                 const GatherOptions& opts = {}) override;
  WorkPtr scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                  const ScatterOptions& opts = {}) override;
  WorkPtr reduce_scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                         const ReduceScatterOptions& opts = {}) override;
  WorkPtr reduce_scatter_base(at::Tensor& output, at::Tensor& input, const ReduceScatterOptions& opts = {}) override;
  WorkPtr alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_split_sizes,
                        std::vector<int64_t>& input_split_sizes, const AllToAllOptions& opts = {}) override;
  WorkPtr alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                   const AllToAllOptions& opts = {}) override;
  WorkPtr barrier(const BarrierOptions& opts = {}) override;
  // Point-to-point calls pair two ranks only: passed through unchecked, as torch's are.
  WorkPtr send(std::vector<at::Tensor>& tensors, int dst_rank, int tag) override;
  WorkPtr recv(std::vector<at::Tensor>& tensors, int src_rank, int tag) override;
  WorkPtr recv_anysource(std::vector<at::Tensor>& tensors, int tag) override;

 private:
  // Raises on every rank when the ranks' fingerprints of this call differ.
  void check(const char* op, const std::vector<at::Tensor>& tensors);
  void monitored_barrier();

  std::shared_ptr<ProcessGroup> inner_;
  std::shared_ptr<ProcessGroup> helper_;
  std::chrono::milliseconds timeout_;
};

}  // namespace c10d::inline tessera
