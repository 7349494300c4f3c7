// ProcessGroupGloo: the CPU process group, on Gloo's TCP transport and its collective
// algorithms. The ranks rendezvous through a Store; collectives run in call order on the
// group's worker thread (so async_op work overlaps the caller), point-to-point sends and
// receives are posted from the calling thread as torch's are.
#pragma once

#include <distributed/ProcessGroup.h>
#include <distributed/Store.h>
#include <distributed/WorkQueue.h>

namespace gloo {
class Context;
}

namespace c10d::inline tessera {

class TORCH_API ProcessGroupGloo final : public ProcessGroup {
 public:
  struct Options {
    std::chrono::milliseconds timeout = std::chrono::minutes(30);  // torch's default_pg_timeout
    // The network interface (GLOO_SOCKET_IFNAME's first entry) or else the host name to bind;
    // both empty: the machine's host name when it resolves to a local address, else loopback.
    std::string interface;
    std::string hostname;
  };

  ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, Options options);
  ~ProcessGroupGloo() override;
  std::string backend_name() const override { return "gloo"; }
  std::chrono::milliseconds timeout() const { return options_.timeout; }

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
  WorkPtr send(std::vector<at::Tensor>& tensors, int dst_rank, int tag) override;
  WorkPtr recv(std::vector<at::Tensor>& tensors, int src_rank, int tag) override;
  WorkPtr recv_anysource(std::vector<at::Tensor>& tensors, int tag) override;

 private:
  // Queues fn(tag, timeout) on the worker; the Work completes when it returns or throws.
  WorkPtr enqueue(const char* op, std::vector<at::Tensor> outputs, std::chrono::milliseconds timeout,
                  std::function<void(uint32_t tag, std::chrono::milliseconds timeout)> fn);

  Options options_;
  std::shared_ptr<gloo::Context> context_;
  WorkQueue queue_;  // last: its thread stops before the context goes
};

}  // namespace c10d::inline tessera
