// ProcessGroupMPI: a process group on MPI (Debian's OpenMPI), for programs started by
// mpirun. MPI assigns ranks and sizes, so no store or rendezvous is needed. Collectives run
// in call order on the group's worker thread; every MPI call of the process goes through
// one lock (MPI is initialised with MPI_THREAD_SERIALIZED, as torch does). Sends and
// receives are posted at once and completed by a polling thread, so a waiting receive never
// holds the lock that a collective needs, and their futures complete without a wait(). Built when CMake finds MPI (is_mpi_available()).
#pragma once

#include <distributed/ProcessGroup.h>
#include <distributed/WorkQueue.h>

namespace c10d::inline tessera {

class TORCH_API ProcessGroupMPI final : public ProcessGroup {
 public:
  // The group of these world ranks (all of them when empty), initialising MPI on first use.
  // Every rank of MPI_COMM_WORLD must call it alike; a rank outside `ranks` gets nullptr.
  static std::shared_ptr<ProcessGroupMPI> create(std::vector<int> ranks = {});
  ~ProcessGroupMPI() override;
  std::string backend_name() const override { return "mpi"; }

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
  struct Comm;  // MPI_Comm, kept out of this header
  ProcessGroupMPI(std::unique_ptr<Comm> comm, int rank, int size);
  // Queues fn on the worker; the Work completes when it returns or throws.
  WorkPtr enqueue(const char* op, std::vector<at::Tensor> outputs, std::function<void()> fn);
  WorkPtr post(const char* op, const at::Tensor& t, int peer, int tag, bool is_send);

  std::unique_ptr<Comm> comm_;
  std::unique_ptr<WorkQueue> queue_;  // stopped before the communicator is freed
};

}  // namespace c10d::inline tessera
