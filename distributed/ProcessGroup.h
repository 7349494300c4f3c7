// The process-group API (torch's c10d::ProcessGroup): the collectives every backend offers
// with torch's options and semantics, each returning a Work handle that completes when the
// tensors hold the result. Backends (ProcessGroupGloo) override what they run; the rest
// raise NotImplementedError naming the backend.
#pragma once

#include <aten/core/Tensor.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace c10d::inline tessera {

// torch's ReduceOp.RedOpType values.
enum class ReduceOp : uint8_t { SUM = 0, AVG = 1, PRODUCT = 2, MIN = 3, MAX = 4, BAND = 5, BOR = 6, BXOR = 7,
                                PREMUL_SUM = 8, UNUSED = 9 };
const char* reduce_op_name(ReduceOp op);

constexpr std::chrono::milliseconds kUnsetTimeout{-1};  // the process group's own timeout

struct AllreduceOptions {
  ReduceOp reduce_op = ReduceOp::SUM;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct BroadcastOptions {
  int64_t root_rank = 0;
  int64_t root_tensor = 0;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct ReduceOptions {
  ReduceOp reduce_op = ReduceOp::SUM;
  int64_t root_rank = 0;
  int64_t root_tensor = 0;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct AllgatherOptions {
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct GatherOptions {
  int64_t root_rank = 0;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct ScatterOptions {
  int64_t root_rank = 0;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct ReduceScatterOptions {
  ReduceOp reduce_op = ReduceOp::SUM;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct AllToAllOptions {
  std::chrono::milliseconds timeout = kUnsetTimeout;
};
struct BarrierOptions {
  std::vector<int64_t> device_ids;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

// A running collective. wait() rethrows what the collective raised.
class TORCH_API Work {
 public:
  explicit Work(std::string op, std::vector<at::Tensor> outputs = {});
  virtual ~Work();
  bool is_completed();
  bool is_success();
  std::exception_ptr exception();
  // Blocks until done (timeout 0: no limit); raises the collective's error, or a timeout.
  virtual bool wait(std::chrono::milliseconds timeout = std::chrono::milliseconds::zero());
  std::vector<at::Tensor> result() const { return outputs_; }
  virtual int source_rank() const;
  const std::string& op() const { return op_; }
  // Runs fn once the work completes (at once when it has), on the completing thread.
  void add_done_callback(std::function<void()> fn);
  void finish(std::exception_ptr error = nullptr);

 protected:
  std::string op_;
  std::vector<at::Tensor> outputs_;
  std::mutex mu_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::exception_ptr error_;
  std::vector<std::function<void()>> callbacks_;
};

class TORCH_API ProcessGroup {
 public:
  ProcessGroup(int rank, int size);
  virtual ~ProcessGroup();
  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual std::string backend_name() const = 0;

  using WorkPtr = std::shared_ptr<Work>;
  virtual WorkPtr broadcast(std::vector<at::Tensor>& tensors, const BroadcastOptions& opts = {});
  virtual WorkPtr allreduce(std::vector<at::Tensor>& tensors, const AllreduceOptions& opts = {});
  virtual WorkPtr reduce(std::vector<at::Tensor>& tensors, const ReduceOptions& opts = {});
  virtual WorkPtr allgather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                            const AllgatherOptions& opts = {});
  virtual WorkPtr allgather_base(at::Tensor& output, at::Tensor& input, const AllgatherOptions& opts = {});
  virtual WorkPtr gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                         const GatherOptions& opts = {});
  virtual WorkPtr scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                          const ScatterOptions& opts = {});
  virtual WorkPtr reduce_scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                 const ReduceScatterOptions& opts = {});
  virtual WorkPtr reduce_scatter_base(at::Tensor& output, at::Tensor& input, const ReduceScatterOptions& opts = {});
  virtual WorkPtr alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_split_sizes,
                                std::vector<int64_t>& input_split_sizes, const AllToAllOptions& opts = {});
  virtual WorkPtr alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                           const AllToAllOptions& opts = {});
  virtual WorkPtr barrier(const BarrierOptions& opts = {});
  virtual WorkPtr send(std::vector<at::Tensor>& tensors, int dst_rank, int tag);
  virtual WorkPtr recv(std::vector<at::Tensor>& tensors, int src_rank, int tag);
  virtual WorkPtr recv_anysource(std::vector<at::Tensor>& tensors, int tag);

 protected:
  [[noreturn]] void unsupported(const char* op) const;
  int rank_;
  int size_;
};

}  // namespace c10d::inline tessera
