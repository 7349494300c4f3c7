// Work's completion and the ProcessGroup defaults (every collective unsupported).
#include <distributed/ProcessGroup.h>

#include <c10/util/Exception.h>

namespace c10d::inline tessera {

const char* reduce_op_name(ReduceOp op) {
  static const char* names[] = {"SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM", "UNUSED"};
  return names[static_cast<int>(op)];
}

Work::Work(std::string op, std::vector<at::Tensor> outputs) : op_(std::move(op)), outputs_(std::move(outputs)) {}
Work::~Work() = default;

bool Work::is_completed() {
  std::lock_guard<std::mutex> g(mu_);
  return done_;
}

bool Work::is_success() {
  std::lock_guard<std::mutex> g(mu_);
  TORCH_CHECK(done_, "Work::is_success: the work has not completed yet");
  return !error_;
}

std::exception_ptr Work::exception() {
  std::lock_guard<std::mutex> g(mu_);
  return error_;
}

int Work::source_rank() const {
  TORCH_CHECK(false, "source_rank() is only available for recv from any source");
}

bool Work::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> g(mu_);
  if (timeout == std::chrono::milliseconds::zero()) {
    done_cv_.wait(g, [&] { return done_; });
  } else {
    TORCH_CHECK(done_cv_.wait_for(g, timeout, [&] { return done_; }), "Work ", op_, " timed out after ",
                timeout.count(), " ms");
  }
  if (error_) std::rethrow_exception(error_);
  return true;
}

void Work::add_done_callback(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!done_) {
      callbacks_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

void Work::finish(std::exception_ptr error) {
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> g(mu_);
    done_ = true;
    error_ = std::move(error);
    callbacks.swap(callbacks_);
  }
  done_cv_.notify_all();
  for (auto& fn : callbacks) fn();
}

ProcessGroup::ProcessGroup(int rank, int size) : rank_(rank), size_(size) {
  TORCH_CHECK(size > 0, "ProcessGroup: world size must be positive, got ", size);
  TORCH_CHECK(rank >= 0 && rank < size, "ProcessGroup: invalid rank ", rank, " for world size ", size);
}
ProcessGroup::~ProcessGroup() = default;

void ProcessGroup::unsupported(const char* op) const {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "ProcessGroup ", backend_name(), " does not support ", op);
}

using WorkPtr = ProcessGroup::WorkPtr;
WorkPtr ProcessGroup::broadcast(std::vector<at::Tensor>&, const BroadcastOptions&) { unsupported("broadcast"); }
WorkPtr ProcessGroup::allreduce(std::vector<at::Tensor>&, const AllreduceOptions&) { unsupported("allreduce"); }
WorkPtr ProcessGroup::reduce(std::vector<at::Tensor>&, const ReduceOptions&) { unsupported("reduce"); }
WorkPtr ProcessGroup::allgather(std::vector<std::vector<at::Tensor>>&, std::vector<at::Tensor>&,
                                const AllgatherOptions&) {
  unsupported("allgather");
}
WorkPtr ProcessGroup::allgather_base(at::Tensor&, at::Tensor&, const AllgatherOptions&) {
  unsupported("_allgather_base");
}
WorkPtr ProcessGroup::gather(std::vector<std::vector<at::Tensor>>&, std::vector<at::Tensor>&, const GatherOptions&) {
  unsupported("gather");
}
WorkPtr ProcessGroup::scatter(std::vector<at::Tensor>&, std::vector<std::vector<at::Tensor>>&,
                              const ScatterOptions&) {
  unsupported("scatter");
}
WorkPtr ProcessGroup::reduce_scatter(std::vector<at::Tensor>&, std::vector<std::vector<at::Tensor>>&,
                                     const ReduceScatterOptions&) {
  unsupported("reduce_scatter");
}
WorkPtr ProcessGroup::reduce_scatter_base(at::Tensor&, at::Tensor&, const ReduceScatterOptions&) {
  unsupported("_reduce_scatter_base");
}
WorkPtr ProcessGroup::alltoall_base(at::Tensor&, at::Tensor&, std::vector<int64_t>&, std::vector<int64_t>&,
                                    const AllToAllOptions&) {
  unsupported("alltoall_base");
}
WorkPtr ProcessGroup::alltoall(std::vector<at::Tensor>&, std::vector<at::Tensor>&, const AllToAllOptions&) {
  unsupported("alltoall");
}
WorkPtr ProcessGroup::barrier(const BarrierOptions&) { unsupported("barrier"); }
WorkPtr ProcessGroup::send(std::vector<at::Tensor>&, int, int) { unsupported("send"); }
WorkPtr ProcessGroup::recv(std::vector<at::Tensor>&, int, int) { unsupported("recv"); }
WorkPtr ProcessGroup::recv_anysource(std::vector<at::Tensor>&, int) { unsupported("recv_anysource"); }

}  // namespace c10d::inline tessera
