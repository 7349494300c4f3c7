// DistributedDataParallel's gradient reducer (torch's c10d::Reducer): parameters grouped in
// buckets; each parameter's AccumulateGrad hands its grad (after the parameter's own hooks)
// to the reducer instead of storing it, the reducer adds it into the bucket, and a full
// bucket is all-reduced at once, asynchronously, so communication overlaps the rest of the
// backward pass. Once every bucket is launched, an engine final callback waits for them and
// writes the averaged gradients into .grad.
#pragma once

#include <distributed/ProcessGroup.h>

#include <functional>

#include <memory>
#include <mutex>
#include <vector>

namespace torch::autograd {
class Node;
}

namespace c10d::inline tessera {

// The built-in communication hooks (torch's default_hooks): the bucket's mean, sent as is,
// or as float16 / bfloat16 (halving the bytes, at that precision).
enum class CommHook { AllReduce, Fp16Compress, Bf16Compress };

// A communication hook from outside the reducer (a Python callable given to
// DDP.register_comm_hook): run() starts a bucket's reduction and returns what waits for
// its result, the bucket's reduced flat tensor. The reducer divides nothing then: the hook
// computes the mean (or whatever it reduces to).
class TORCH_API CommHookInterface {
 public:
  struct Bucket {
    size_t index;
    at::Tensor buffer;                   // flat: the bucket's grads, one after another
    std::vector<at::Tensor> gradients;   // views of buffer, shaped as the parameters
    std::vector<at::Tensor> parameters;
    bool is_last;
  };
  virtual ~CommHookInterface() = default;
  virtual std::function<at::Tensor()> run(Bucket& bucket) = 0;
};

class TORCH_API Reducer : public std::enable_shared_from_this<Reducer> {
 public:
  // bucket_indices: the parameters of each bucket, in the order the buckets are reduced.
  static std::shared_ptr<Reducer> create(std::vector<at::Tensor> params, std::vector<std::vector<int64_t>> bucket_indices,
                                         std::shared_ptr<ProcessGroup> group, bool find_unused_parameters,
                                         bool gradient_as_bucket_view);
  ~Reducer();

  // Called after each forward that will be followed by a synchronised backward. With
  // find_unused_parameters, parameters not reachable from `outputs` count as ready now.
  void prepare_for_backward(const std::vector<at::Tensor>& outputs);
  void set_comm_hook(CommHook hook);
  void set_comm_hook(std::shared_ptr<CommHookInterface> hook);
  // Parameters this rank found unused in the last iteration (find_unused_parameters).
  std::vector<int64_t> unused_parameters() const;

  // Uneven inputs (DDP.join). `work` is this forward's all-reduce that counts the ranks
  // not yet joined; unless use_static_world_size, the next backward divides the
  // gradients by that count instead of the group's size.
  void set_forward_pass_work_handle(std::shared_ptr<Work> work, bool use_static_world_size);
  // On a rank that has joined: the collectives one backward of the other ranks issues
  // (each bucket's all-reduce, then the unused-parameter map's), with zeros, so theirs
  // complete; their result becomes this rank's .grad as well. Blocks until done.
  void match_all_reduce_for_bwd_pass();

 private:
  struct Bucket {
    std::vector<size_t> params;
    std::vector<int64_t> offsets;  // of each parameter in `buffer`
    at::Tensor buffer;             // flat, the parameters' dtype
    at::Tensor wire;               // what is sent: `buffer`, or its compressed copy
    size_t pending = 0;
    std::shared_ptr<Work> work;
    std::function<at::Tensor()> hook_result;  // with an outside hook, in place of work
  };

  Reducer(std::vector<at::Tensor> params, std::shared_ptr<ProcessGroup> group, bool find_unused_parameters,
          bool gradient_as_bucket_view);
  void install_hooks();
  bool on_grad_ready(size_t param, const at::Tensor& grad);  // true: the reducer took the grad
  void mark_ready(size_t param, const at::Tensor* grad);  // under mu_
  void launch_ready_buckets();                            // under mu_
  double divide_factor();                                 // under mu_
  void start_reduction(size_t bucket);                    // under mu_: the hook or an allreduce
  void wait_reduction(Bucket& b);                         // under mu_: the result into b.buffer
  at::Tensor wire_of(const at::Tensor& buffer) const;      // what a bucket sends
  void finalize();
  std::vector<bool> reduce_used_map(at::Tensor used);      // MAX over ranks: used anywhere
  void write_back(const std::vector<bool>& globally_used);  // the buckets into .grad
  at::Tensor slot(const Bucket& b, size_t k) const;

  std::vector<at::Tensor> params_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;  // kept alive with their consumers
  std::vector<Bucket> buckets_;
  std::vector<std::pair<size_t, size_t>> where_;  // param -> (bucket, position)
  std::shared_ptr<ProcessGroup> group_;
  bool find_unused_;
  bool as_bucket_view_;
  CommHook hook_ = CommHook::AllReduce;
  std::shared_ptr<CommHookInterface> outside_hook_;
  bool hook_set_ = false;

  mutable std::mutex mu_;
  bool expect_hooks_ = false;       // between prepare_for_backward and finalize
  bool require_finalize_ = false;   // a parameter was marked ready since prepare_for_backward
  bool finalize_queued_ = false;
  size_t next_bucket_ = 0;
  std::shared_ptr<Work> forward_work_;  // the join context's count of ranks still running
  bool static_world_size_ = true;
  double div_factor_ = 0;               // 0: not yet known in this iteration
  std::vector<bool> ready_;
  std::vector<bool> locally_used_;
};

}  // namespace c10d::inline tessera
