// ProcessGroupMPI's collectives: each checks its tensors on the calling thread, then queues
// the MPI call (staging through a flat buffer where MPI wants one contiguous block).
#include <distributed/ProcessGroupMPI.h>

#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

// MPI's C API only: the deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <thread>

namespace c10d::inline tessera {

struct ProcessGroupMPI::Comm {
  MPI_Comm comm = MPI_COMM_NULL;
};

using WorkPtr = ProcessGroup::WorkPtr;

namespace {

// MPI_THREAD_SERIALIZED: one thread at a time in MPI, whichever group it serves.
std::mutex& mpi_lock() {
  static std::mutex m;
  return m;
}

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  TORCH_CHECK(false, "ProcessGroupMPI: ", call, " failed: ", std::string(msg, static_cast<size_t>(len)));
}
#define MPI_CALL(...) check_mpi((__VA_ARGS__), #__VA_ARGS__)

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

void init_mpi_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::lock_guard<std::mutex> g(mpi_lock());
    int initialized = 0, provided = 0;
    MPI_CALL(MPI_Initialized(&initialized));
    if (!initialized) {
      MPI_CALL(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
      std::atexit([] {
        std::lock_guard<std::mutex> g(mpi_lock());
        if (!mpi_finalized()) MPI_Finalize();
      });
    } else {
      MPI_CALL(MPI_Query_thread(&provided));
    }
    TORCH_CHECK(provided >= MPI_THREAD_SERIALIZED, "ProcessGroupMPI: MPI was initialised without thread support "
                "(MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE is needed)");
  });
}

MPI_Datatype mpi_type(c10::ScalarType t, const char* op) {
  switch (t) {
    case c10::kFloat: return MPI_FLOAT;
    case c10::kDouble: return MPI_DOUBLE;
    case c10::kByte: return MPI_UNSIGNED_CHAR;
    case c10::kChar: return MPI_SIGNED_CHAR;
    case c10::kShort: return MPI_SHORT;
    case c10::kInt: return MPI_INT;
    case c10::kLong: return MPI_LONG;
    default: break;
  }
  TORCH_CHECK_TYPE(false, "ProcessGroupMPI::", op, ": unsupported dtype ", t, " (MPI supports float32, float64, "
                   "uint8, int8, int16, int32 and int64)");
}

MPI_Op mpi_op(ReduceOp op, c10::ScalarType t, const char* name) {
  const bool integral = !c10::isFloatingType(t);
  switch (op) {
    case ReduceOp::SUM: return MPI_SUM;
    case ReduceOp::PRODUCT: return MPI_PROD;
    case ReduceOp::MIN: return MPI_MIN;
    case ReduceOp::MAX: return MPI_MAX;
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR:
      TORCH_CHECK(integral, "ProcessGroupMPI::", name, ": ReduceOp.", reduce_op_name(op), " needs integer tensors");
      return op == ReduceOp::BAND ? MPI_BAND : op == ReduceOp::BOR ? MPI_BOR : MPI_BXOR;
    default: break;
  }
  TORCH_CHECK(false, "Cannot use ReduceOp.", reduce_op_name(op), " with MPI");
}

void check_tensor(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.defined() && t.device().is_cpu() && t.layout() == c10::kStrided,
              "ProcessGroupMPI::", op, ": tensors must be dense CPU tensors");
  TORCH_CHECK(t.is_contiguous(), "ProcessGroupMPI::", op, ": tensors must be contiguous");
  mpi_type(t.scalar_type(), op);
}

at::Tensor single(std::vector<at::Tensor>& tensors, const char* op) {
  TORCH_CHECK(tensors.size() == 1, "ProcessGroupMPI::", op, ": takes a single tensor, got ", tensors.size());
  check_tensor(tensors[0], op);
  return tensors[0];
}

void check_like(const at::Tensor& t, const at::Tensor& like, const char* op) {
  check_tensor(t, op);
  TORCH_CHECK(t.scalar_type() == like.scalar_type() && t.sizes() == like.sizes(), "ProcessGroupMPI::", op,
              ": every tensor must have the dtype and size of the input, ", like.scalar_type(), " ", like.sizes());
}

int count(const at::Tensor& t) {
  TORCH_CHECK(t.numel() <= std::numeric_limits<int>::max(), "ProcessGroupMPI: a tensor of ", t.numel(),
              " elements is more than one MPI call takes");
  return static_cast<int>(t.numel());
}

// Tensors into one flat tensor and back (gather, scatter, allgather over a list).
at::Tensor flat_of(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> parts;
  for (const auto& t : ts) parts.push_back(t.reshape({-1}));
  c10::AutoGradMode no_grad(false);
  return at::cat(parts);
}

void unflatten(const at::Tensor& flat, const std::vector<at::Tensor>& ts) {
  int64_t at = 0;
  for (const auto& t : ts) {
    if (t.nbytes()) std::memcpy(t.data_ptr(), static_cast<char*>(flat.data_ptr()) + at * flat.element_size(), t.nbytes());
    at += t.numel();
  }
}

std::vector<int> counts_of(const at::Tensor& t, const std::vector<int64_t>& splits, int size, const char* what) {
  std::vector<int> counts(static_cast<size_t>(size));
  const int64_t row = t.dim() == 0 || t.size(0) == 0 ? 0 : t.numel() / t.size(0);
  if (splits.empty()) {
    TORCH_CHECK(t.dim() > 0 && t.size(0) % size == 0, "ProcessGroupMPI::alltoall_base: the ", what,
                " tensor's first dimension must divide by the group size ", size);
    for (auto& c : counts) c = static_cast<int>(t.size(0) / size * row);
    return counts;
  }
  TORCH_CHECK(static_cast<int>(splits.size()) == size, "ProcessGroupMPI::alltoall_base: ", what,
              " split sizes must have one entry per rank");
  TORCH_CHECK(std::accumulate(splits.begin(), splits.end(), int64_t{0}) == (t.dim() ? t.size(0) : 0),
              "ProcessGroupMPI::alltoall_base: ", what, " split sizes must add up to its first dimension");
  for (int r = 0; r < size; ++r) counts[static_cast<size_t>(r)] = static_cast<int>(splits[static_cast<size_t>(r)] * row);
  return counts;
}

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> d(counts.size(), 0);
  for (size_t i = 1; i < counts.size(); ++i) d[i] = d[i - 1] + counts[i - 1];
  return d;
}

// A posted send or receive; RequestPoller completes it.
class RequestWork final : public Work {
 public:
  RequestWork(const char* op, at::Tensor t, MPI_Request request) : Work(op, {std::move(t)}), request_(request) {}

  int source_rank() const override {
    TORCH_CHECK(done_, "source_rank(): wait() for the receive first");
    return source_;
  }

  MPI_Request request_;
  int source_ = -1;
};

// One thread for the process that tests the posted sends and receives (taking the MPI
// lock for each sweep only) and completes their Work outside that lock, so completion
// does not depend on anyone calling wait() and done-callbacks may post MPI calls of
// their own. A pending Work is held here, so its buffer outlives the request.
class RequestPoller {
 public:
  static RequestPoller& get() {
    static auto* poller = new RequestPoller();  // never destroyed: it may outlive exit handlers
    return *poller;
  }

  void add(std::shared_ptr<RequestWork> work) {
    {
      std::lock_guard<std::mutex> g(mu_);
      pending_.push_back(std::move(work));
    }
    cv_.notify_one();
  }

 private:
  RequestPoller() : thread_([this] { run(); }) { thread_.detach(); }

  void run() {
    auto pause = std::chrono::microseconds(20);  // grows while nothing completes, up to 1 ms
    while (true) {
      std::vector<std::shared_ptr<RequestWork>> sweep;
      {
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait(g, [&] { return !pending_.empty(); });
        sweep.swap(pending_);
      }
      std::vector<std::pair<std::shared_ptr<RequestWork>, std::exception_ptr>> done;
      std::vector<std::shared_ptr<RequestWork>> still;
      {
        std::lock_guard<std::mutex> g(mpi_lock());
        const bool finalized = mpi_finalized();
        for (auto& w : sweep) {
          int flag = 0;
          MPI_Status status;
          const int rc = finalized ? MPI_ERR_OTHER : MPI_Test(&w->request_, &flag, &status);
          if (rc != MPI_SUCCESS) {
            std::exception_ptr error;
            try {
              check_mpi(rc, w->op().c_str());
            } catch (...) {
              error = std::current_exception();
            }
            done.emplace_back(w, error);
          } else if (flag) {
            w->source_ = status.MPI_SOURCE;
            done.emplace_back(w, nullptr);
          } else {
            still.push_back(w);
          }
        }
      }
      for (auto& [w, error] : done) w->finish(error);  // callbacks run outside the MPI lock
      pause = done.empty() ? std::min(pause * 2, std::chrono::microseconds(1000)) : std::chrono::microseconds(20);
      if (!still.empty()) {
        {
          std::lock_guard<std::mutex> g(mu_);
          pending_.insert(pending_.end(), still.begin(), still.end());
        }
        std::this_thread::sleep_for(pause);
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<RequestWork>> pending_;
  std::thread thread_;
};

}  // namespace

std::shared_ptr<ProcessGroupMPI> ProcessGroupMPI::create(std::vector<int> ranks) {
  init_mpi_once();
  auto comm = std::make_unique<Comm>();
  int rank = -1, size = 0;
  {
    std::lock_guard<std::mutex> g(mpi_lock());
    int world = 0;
    MPI_CALL(MPI_Comm_size(MPI_COMM_WORLD, &world));
    if (ranks.empty()) {
      MPI_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm->comm));
    } else {
      for (int r : ranks) {
        TORCH_CHECK(r >= 0 && r < world, "ProcessGroupMPI: rank ", r, " is not in MPI_COMM_WORLD of size ", world);
      }
      MPI_Group world_group, group;
      MPI_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
      MPI_CALL(MPI_Group_incl(world_group, static_cast<int>(ranks.size()), ranks.data(), &group));
      // collective over the world: every rank takes part, members get the communicator
      MPI_CALL(MPI_Comm_create(MPI_COMM_WORLD, group, &comm->comm));
      MPI_Group_free(&world_group);
      MPI_Group_free(&group);
    }
    if (comm->comm == MPI_COMM_NULL) return nullptr;
    MPI_CALL(MPI_Comm_set_errhandler(comm->comm, MPI_ERRORS_RETURN));
    MPI_CALL(MPI_Comm_rank(comm->comm, &rank));
    MPI_CALL(MPI_Comm_size(comm->comm, &size));
  }
  return std::shared_ptr<ProcessGroupMPI>(new ProcessGroupMPI(std::move(comm), rank, size));
}

ProcessGroupMPI::ProcessGroupMPI(std::unique_ptr<Comm> comm, int rank, int size)
    : ProcessGroup(rank, size), comm_(std::move(comm)), queue_(std::make_unique<WorkQueue>()) {}

ProcessGroupMPI::~ProcessGroupMPI() {
  queue_.reset();  // runs what is queued
  std::lock_guard<std::mutex> g(mpi_lock());
  if (!mpi_finalized() && comm_->comm != MPI_COMM_NULL) MPI_Comm_free(&comm_->comm);
}

WorkPtr ProcessGroupMPI::enqueue(const char* op, std::vector<at::Tensor> outputs, std::function<void()> fn) {
  auto work = std::make_shared<Work>(op, std::move(outputs));
  queue_->push("ProcessGroupMPI", op, [&](uint64_t) -> std::function<void()> {
    return [work, fn = std::move(fn)] {
      std::exception_ptr error;
      try {
        std::lock_guard<std::mutex> g(mpi_lock());
        fn();
      } catch (...) {
        error = std::current_exception();
      }
      work->finish(error);  // outside the MPI lock: callbacks may call MPI
    };
  });
  return work;
}

WorkPtr ProcessGroupMPI::broadcast(std::vector<at::Tensor>& tensors, const BroadcastOptions& opts) {
  at::Tensor t = single(tensors, "broadcast");
  const int root = static_cast<int>(opts.root_rank);
  TORCH_CHECK(root >= 0 && root < size_, "ProcessGroupMPI::broadcast: invalid root rank ", root);
  return enqueue("broadcast", {t}, [this, t, root] {
    MPI_CALL(MPI_Bcast(t.data_ptr(), count(t), mpi_type(t.scalar_type(), "broadcast"), root, comm_->comm));
  });
}

WorkPtr ProcessGroupMPI::allreduce(std::vector<at::Tensor>& tensors, const AllreduceOptions& opts) {
  at::Tensor t = single(tensors, "allreduce");
  MPI_Op op = mpi_op(opts.reduce_op, t.scalar_type(), "allreduce");
  return enqueue("allreduce", {t}, [this, t, op] {
    MPI_CALL(MPI_Allreduce(MPI_IN_PLACE, t.data_ptr(), count(t), mpi_type(t.scalar_type(), "allreduce"), op,
                           comm_->comm));
  });
}

WorkPtr ProcessGroupMPI::reduce(std::vector<at::Tensor>& tensors, const ReduceOptions& opts) {
  at::Tensor t = single(tensors, "reduce");
  MPI_Op op = mpi_op(opts.reduce_op, t.scalar_type(), "reduce");
  const int root = static_cast<int>(opts.root_rank);
  TORCH_CHECK(root >= 0 && root < size_, "ProcessGroupMPI::reduce: invalid root rank ", root);
  return enqueue("reduce", {t}, [this, t, op, root] {
    void* send = rank_ == root ? MPI_IN_PLACE : t.data_ptr();
    MPI_CALL(MPI_Reduce(send, t.data_ptr(), count(t), mpi_type(t.scalar_type(), "reduce"), op, root, comm_->comm));
  });
}

WorkPtr ProcessGroupMPI::allgather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                   const AllgatherOptions& opts) {
  at::Tensor in = single(inputs, "allgather");
  TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
              "ProcessGroupMPI::allgather: takes one list of ", size_, " output tensors");
  for (const auto& o : outputs[0]) check_like(o, in, "allgather");
  const std::vector<at::Tensor> outs = outputs[0];
  return enqueue("allgather", outs, [this, in, outs] {
    at::Tensor flat = at::empty({static_cast<int64_t>(size_) * in.numel()}, in.options());
    const MPI_Datatype type = mpi_type(in.scalar_type(), "allgather");
    MPI_CALL(MPI_Allgather(in.data_ptr(), count(in), type, flat.data_ptr(), count(in), type, comm_->comm));
    unflatten(flat, outs);
  });
}

WorkPtr ProcessGroupMPI::allgather_base(at::Tensor& output, at::Tensor& input, const AllgatherOptions& opts) {
  check_tensor(input, "_allgather_base");
  check_tensor(output, "_allgather_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type() && output.numel() == size_ * input.numel(),
              "ProcessGroupMPI::_allgather_base: output must hold group size (", size_, ") times the input");
  at::Tensor out = output, in = input;
  return enqueue("_allgather_base", {out}, [this, out, in] {
    const MPI_Datatype type = mpi_type(in.scalar_type(), "_allgather_base");
    MPI_CALL(MPI_Allgather(in.data_ptr(), count(in), type, out.data_ptr(), count(in), type, comm_->comm));
  });
}

WorkPtr ProcessGroupMPI::gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                const GatherOptions& opts) {
  at::Tensor in = single(inputs, "gather");
  const int root = static_cast<int>(opts.root_rank);
  TORCH_CHECK(root >= 0 && root < size_, "ProcessGroupMPI::gather: invalid root rank ", root);
  std::vector<at::Tensor> outs;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
                "ProcessGroupMPI::gather: the root takes one list of ", size_, " output tensors");
    for (const auto& o : outputs[0]) check_like(o, in, "gather");
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || outputs[0].empty(), "ProcessGroupMPI::gather: only the root takes outputs");
  }
  return enqueue("gather", outs, [this, in, outs, root] {
    const MPI_Datatype type = mpi_type(in.scalar_type(), "gather");
    at::Tensor flat = rank_ == root ? at::empty({static_cast<int64_t>(size_) * in.numel()}, in.options()) : at::Tensor();
    MPI_CALL(MPI_Gather(in.data_ptr(), count(in), type, flat.defined() ? flat.data_ptr() : nullptr, count(in), type,
                        root, comm_->comm));
    if (flat.defined()) unflatten(flat, outs);
  });
}

WorkPtr ProcessGroupMPI::scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                 const ScatterOptions& opts) {
  at::Tensor out = single(outputs, "scatter");
  const int root = static_cast<int>(opts.root_rank);
  TORCH_CHECK(root >= 0 && root < size_, "ProcessGroupMPI::scatter: invalid root rank ", root);
  at::Tensor flat;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
                "ProcessGroupMPI::scatter: the root takes one list of ", size_, " input tensors");
    for (const auto& i : inputs[0]) check_like(i, out, "scatter");
    flat = flat_of(inputs[0]);
  } else {
    TORCH_CHECK(inputs.empty() || inputs[0].empty(), "ProcessGroupMPI::scatter: only the root takes inputs");
  }
  return enqueue("scatter", {out}, [this, out, flat, root] {
    const MPI_Datatype type = mpi_type(out.scalar_type(), "scatter");
    MPI_CALL(MPI_Scatter(flat.defined() ? flat.data_ptr() : nullptr, count(out), type, out.data_ptr(), count(out),
                         type, root, comm_->comm));
  });
}

WorkPtr ProcessGroupMPI::reduce_scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                        const ReduceScatterOptions& opts) {
  at::Tensor out = single(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
              "ProcessGroupMPI::reduce_scatter: takes one list of ", size_, " input tensors");
  for (const auto& i : inputs[0]) check_like(i, out, "reduce_scatter");
  MPI_Op op = mpi_op(opts.reduce_op, out.scalar_type(), "reduce_scatter");
  at::Tensor flat = flat_of(inputs[0]);
  return enqueue("reduce_scatter", {out}, [this, out, flat, op] {
    MPI_CALL(MPI_Reduce_scatter_block(flat.data_ptr(), out.data_ptr(), count(out),
                                      mpi_type(out.scalar_type(), "reduce_scatter"), op, comm_->comm));
  });
}

WorkPtr ProcessGroupMPI::reduce_scatter_base(at::Tensor& output, at::Tensor& input, const ReduceScatterOptions& opts) {
  check_tensor(input, "_reduce_scatter_base");
  check_tensor(output, "_reduce_scatter_base");
  TORCH_CHECK(input.scalar_type() == output.scalar_type() && input.numel() == size_ * output.numel(),
              "ProcessGroupMPI::_reduce_scatter_base: input must hold group size (", size_, ") times the output");
  MPI_Op op = mpi_op(opts.reduce_op, output.scalar_type(), "_reduce_scatter_base");
  at::Tensor out = output, in = input;
  return enqueue("_reduce_scatter_base", {out}, [this, out, in, op] {
    MPI_CALL(MPI_Reduce_scatter_block(in.data_ptr(), out.data_ptr(), count(out),
                                      mpi_type(out.scalar_type(), "_reduce_scatter_base"), op, comm_->comm));
  });
}

WorkPtr ProcessGroupMPI::alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_split_sizes,
                                       std::vector<int64_t>& input_split_sizes, const AllToAllOptions& opts) {
  check_tensor(input, "alltoall_base");
  check_tensor(output, "alltoall_base");
  TORCH_CHECK(input.scalar_type() == output.scalar_type(), "ProcessGroupMPI::alltoall_base: input and output must "
              "have the same dtype");
  const auto in_counts = counts_of(input, input_split_sizes, size_, "input");
  const auto out_counts = counts_of(output, output_split_sizes, size_, "output");
  at::Tensor out = output, in = input;
  return enqueue("alltoall_base", {out}, [this, out, in, in_counts, out_counts] {
    const MPI_Datatype type = mpi_type(in.scalar_type(), "alltoall_base");
    const auto in_displs = displacements(in_counts), out_displs = displacements(out_counts);
    MPI_CALL(MPI_Alltoallv(in.data_ptr(), in_counts.data(), in_displs.data(), type, out.data_ptr(), out_counts.data(),
                           out_displs.data(), type, comm_->comm));
  });
}

WorkPtr ProcessGroupMPI::alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                  const AllToAllOptions& opts) {
  TORCH_CHECK(static_cast<int>(outputs.size()) == size_ && static_cast<int>(inputs.size()) == size_,
              "ProcessGroupMPI::alltoall: takes one input and one output tensor per rank (", size_, ")");
  for (int r = 0; r < size_; ++r) {
    check_tensor(inputs[r], "alltoall");
    check_tensor(outputs[r], "alltoall");
    TORCH_CHECK(inputs[r].scalar_type() == inputs[0].scalar_type() &&
                outputs[r].scalar_type() == inputs[0].scalar_type(),
                "ProcessGroupMPI::alltoall: tensors must all have the same dtype");
  }
  const std::vector<at::Tensor> outs = outputs;
  at::Tensor flat_in = flat_of(inputs);
  std::vector<int> in_counts, out_counts;
  for (const auto& t : inputs) in_counts.push_back(count(t));
  for (const auto& t : outputs) out_counts.push_back(count(t));
  return enqueue("alltoall", outs, [this, outs, flat_in, in_counts, out_counts] {
    const MPI_Datatype type = mpi_type(flat_in.scalar_type(), "alltoall");
    at::Tensor flat_out = at::empty({std::accumulate(out_counts.begin(), out_counts.end(), int64_t{0})},
                                    flat_in.options());
    const auto in_displs = displacements(in_counts), out_displs = displacements(out_counts);
    MPI_CALL(MPI_Alltoallv(flat_in.data_ptr(), in_counts.data(), in_displs.data(), type, flat_out.data_ptr(),
                           out_counts.data(), out_displs.data(), type, comm_->comm));
    unflatten(flat_out, outs);
  });
}

WorkPtr ProcessGroupMPI::barrier(const BarrierOptions& opts) {
  return enqueue("barrier", {}, [this] { MPI_CALL(MPI_Barrier(comm_->comm)); });
}

WorkPtr ProcessGroupMPI::post(const char* op, const at::Tensor& t, int peer, int tag, bool is_send) {
  MPI_Request request;
  {
    std::lock_guard<std::mutex> g(mpi_lock());
    const MPI_Datatype type = mpi_type(t.scalar_type(), op);
    if (is_send) {
      MPI_CALL(MPI_Isend(t.data_ptr(), count(t), type, peer, tag, comm_->comm, &request));
    } else {
      MPI_CALL(MPI_Irecv(t.data_ptr(), count(t), type, peer, tag, comm_->comm, &request));
    }
  }
  auto work = std::make_shared<RequestWork>(op, t, request);
  RequestPoller::get().add(work);
  return work;
}

WorkPtr ProcessGroupMPI::send(std::vector<at::Tensor>& tensors, int dst_rank, int tag) {
  at::Tensor t = single(tensors, "send");
  TORCH_CHECK(dst_rank >= 0 && dst_rank < size_ && dst_rank != rank_, "ProcessGroupMPI::send: invalid destination "
              "rank ", dst_rank);
  return post("send", t, dst_rank, tag, true);
}

WorkPtr ProcessGroupMPI::recv(std::vector<at::Tensor>& tensors, int src_rank, int tag) {
  at::Tensor t = single(tensors, "recv");
  TORCH_CHECK(src_rank >= 0 && src_rank < size_ && src_rank != rank_, "ProcessGroupMPI::recv: invalid source rank ",
              src_rank);
  return post("recv", t, src_rank, tag, false);
}

WorkPtr ProcessGroupMPI::recv_anysource(std::vector<at::Tensor>& tensors, int tag) {
  at::Tensor t = single(tensors, "recv_anysource");
  return post("recv_anysource", t, MPI_ANY_SOURCE, tag, false);
}

}  // namespace c10d::inline tessera
