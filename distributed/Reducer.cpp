// The Reducer's bookkeeping: bucket layout, the AccumulateGrad hooks, bucket launches in
// order (every rank must issue its collectives alike), and the final write-back.
#include <distributed/Reducer.h>

#include <autograd/engine.h>
#include <autograd/function.h>
#include <autograd/functions/accumulate_grad.h>
#include <autograd/variable.h>
#include <aten/ops/Functions.h>
#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

#include <unordered_set>

namespace c10d::inline tessera {

using torch::autograd::Node;
using torch::autograd::variable_list;

std::shared_ptr<Reducer> Reducer::create(std::vector<at::Tensor> params, std::vector<std::vector<int64_t>> bucket_indices,
                                         std::shared_ptr<ProcessGroup> group, bool find_unused_parameters,
                                         bool gradient_as_bucket_view) {
  TORCH_CHECK(group, "Reducer needs a process group");
  std::shared_ptr<Reducer> r(new Reducer(std::move(params), std::move(group), find_unused_parameters,
                                         gradient_as_bucket_view));
  const size_t n = r->params_.size();
  r->where_.assign(n, {SIZE_MAX, 0});
  for (const auto& indices : bucket_indices) {
    TORCH_CHECK(!indices.empty(), "Reducer: a bucket must hold at least one parameter");
    Bucket b;
    int64_t size = 0;
    const auto dtype = r->params_.at(static_cast<size_t>(indices[0])).scalar_type();
    for (int64_t i : indices) {
      TORCH_CHECK(i >= 0 && static_cast<size_t>(i) < n, "Reducer: bucket index ", i, " out of range");
      const at::Tensor& p = r->params_[static_cast<size_t>(i)];
      TORCH_CHECK(r->where_[static_cast<size_t>(i)].first == SIZE_MAX, "Reducer: parameter ", i,
                  " is in two buckets");
      TORCH_CHECK(p.scalar_type() == dtype, "Reducer: a bucket's parameters must share one dtype");
      r->where_[static_cast<size_t>(i)] = {r->buckets_.size(), b.params.size()};
      b.params.push_back(static_cast<size_t>(i));
      b.offsets.push_back(size);
      size += p.numel();
    }
    b.buffer = at::zeros({size}, at::TensorOptions().dtype(dtype));
    r->buckets_.push_back(std::move(b));
  }
  for (size_t i = 0; i < n; ++i) {
    TORCH_CHECK(r->where_[i].first != SIZE_MAX, "Reducer: parameter ", i, " is in no bucket");
  }
  r->install_hooks();
  return r;
}

Reducer::Reducer(std::vector<at::Tensor> params, std::shared_ptr<ProcessGroup> group, bool find_unused_parameters,
                 bool gradient_as_bucket_view)
    : params_(std::move(params)), group_(std::move(group)), find_unused_(find_unused_parameters),
      as_bucket_view_(gradient_as_bucket_view) {
  for (const auto& p : params_) {
    TORCH_CHECK(p.defined() && p.requires_grad(), "Reducer: every parameter must require grad");
    TORCH_CHECK(p.device().is_cpu() && p.layout() == c10::kStrided, "Reducer: parameters must be dense CPU tensors");
  }
  ready_.assign(params_.size(), false);
  locally_used_.assign(params_.size(), false);
}

Reducer::~Reducer() = default;

void Reducer::install_hooks() {
  std::weak_ptr<Reducer> weak = weak_from_this();
  for (size_t i = 0; i < params_.size(); ++i) {
    auto acc = std::dynamic_pointer_cast<torch::autograd::AccumulateGrad>(
        torch::autograd::impl::grad_accumulator(params_[i]));
    TORCH_CHECK(acc, "Reducer: parameter ", i, " is not a leaf that requires grad");
    // The grad arrives after the parameter's own hooks; taken over, it is not stored by the
    // pass (the reducer writes .grad once the buckets are reduced).
    acc->set_grad_consumer([weak, i](const at::Tensor& grad) {
      auto self = weak.lock();
      return self && self->on_grad_ready(i, grad);
    });
    accumulators_.push_back(std::move(acc));
  }
}

void Reducer::set_comm_hook(CommHook hook) {
  std::lock_guard<std::mutex> g(mu_);
  TORCH_CHECK(!hook_set_, "register_comm_hook or register_builtin_comm_hook can only be called once.");
  hook_ = hook;
  hook_set_ = true;
}

void Reducer::set_comm_hook(std::shared_ptr<CommHookInterface> hook) {
  std::lock_guard<std::mutex> g(mu_);
  TORCH_CHECK(!hook_set_, "register_comm_hook or register_builtin_comm_hook can only be called once.");
  TORCH_CHECK(hook, "Reducer: the communication hook is null");
  outside_hook_ = std::move(hook);
  hook_set_ = true;
}

at::Tensor Reducer::slot(const Bucket& b, size_t k) const {
  const at::Tensor& p = params_[b.params[k]];
  return b.buffer.narrow(0, b.offsets[k], p.numel()).view(p.sizes());
}

void Reducer::prepare_for_backward(const std::vector<at::Tensor>& outputs) {
  std::lock_guard<std::mutex> g(mu_);
  TORCH_CHECK(!require_finalize_,
              "Expected to have finished reduction in the prior iteration before starting a new one. This error "
              "indicates that your module has parameters that were not used in producing loss. You can enable "
              "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
              "`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
              "participate in calculating loss.");
  for (auto& b : buckets_) {
    b.pending = b.params.size();
    b.work.reset();
  }
  ready_.assign(params_.size(), false);
  locally_used_.assign(params_.size(), !find_unused_);
  next_bucket_ = 0;
  div_factor_ = 0;
  finalize_queued_ = false;
  require_finalize_ = false;
  expect_hooks_ = true;
  if (!find_unused_) return;
  // Which AccumulateGrad nodes the outputs reach: the other parameters get no grad.
  std::unordered_set<const Node*> seen;
  std::vector<Node*> stack;
  for (const auto& out : outputs) {
    if (!out.defined() || !out.requires_grad()) continue;
    auto edge = torch::autograd::impl::gradient_edge(out);
    if (edge.function && seen.insert(edge.function.get()).second) stack.push_back(edge.function.get());
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const auto& e : node->next_edges()) {
      if (e.function && seen.insert(e.function.get()).second) stack.push_back(e.function.get());
    }
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    if (seen.count(accumulators_[i].get())) {
      locally_used_[i] = true;
    } else {
      mark_ready(i, nullptr);
    }
  }
  launch_ready_buckets();
}

bool Reducer::on_grad_ready(size_t param, const at::Tensor& grad) {
  std::lock_guard<std::mutex> g(mu_);
  if (!expect_hooks_ || ready_[param]) return false;  // no_sync, a backward outside DDP, or a second pass
  locally_used_[param] = true;
  mark_ready(param, &grad);
  launch_ready_buckets();
  return true;
}

void Reducer::mark_ready(size_t param, const at::Tensor* grad) {
  c10::AutoGradMode no_grad(false);
  const auto [bi, k] = where_[param];
  Bucket& b = buckets_[bi];
  at::Tensor dst = slot(b, k);
  // The bucket holds what .grad will hold once the pass stores it: the grad accumulated so
  // far (no_sync iterations) plus this pass's.
  const at::Tensor& current = params_[param].grad();
  require_finalize_ = true;
  const bool has_new = grad != nullptr && grad->defined();
  if (current.defined() && has_new) {
    at::add_out(dst, current, *grad);
  } else if (current.defined()) {
    dst.copy_(current);
  } else if (has_new) {
    dst.copy_(*grad);
  } else {
    dst.zero_();
  }
  ready_[param] = true;
  --b.pending;
}

void Reducer::set_forward_pass_work_handle(std::shared_ptr<Work> work, bool use_static_world_size) {
  std::lock_guard<std::mutex> g(mu_);
  forward_work_ = std::move(work);
  static_world_size_ = use_static_world_size;
}

double Reducer::divide_factor() {
  if (div_factor_ == 0) {
    div_factor_ = static_cast<double>(group_->size());
    if (forward_work_ && !static_world_size_) {
      forward_work_->wait();
      const auto counted = forward_work_->result();
      TORCH_CHECK(!counted.empty() && counted[0].numel() == 1, "Reducer: the join all-reduce gave no count");
      div_factor_ = counted[0].item().toDouble();
    }
  }
  return div_factor_;
}

at::Tensor Reducer::wire_of(const at::Tensor& buffer) const {
  switch (hook_) {
    case CommHook::Fp16Compress:
      return buffer.to(c10::ScalarType::Half);
    case CommHook::Bf16Compress:
      return buffer.to(c10::ScalarType::BFloat16);
    case CommHook::AllReduce:
      break;
  }
  return buffer;
}

void Reducer::launch_ready_buckets() {
  c10::AutoGradMode no_grad(false);
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
    start_reduction(next_bucket_++);
  }
  // The last bucket is on its way: finish when this pass (a nested one included, as a
  // reentrant checkpoint runs) is done.
  if (next_bucket_ == buckets_.size() && !finalize_queued_ && torch::autograd::Engine::in_backward()) {
    std::weak_ptr<Reducer> weak = weak_from_this();
    torch::autograd::Engine::queue_callback([weak] {
      if (auto self = weak.lock()) self->finalize();
    });
    finalize_queued_ = true;
  }
}

void Reducer::start_reduction(size_t index) {
  Bucket& b = buckets_[index];
  if (outside_hook_) {
    CommHookInterface::Bucket hb{index, b.buffer, {}, {}, index + 1 == buckets_.size()};
    for (size_t k = 0; k < b.params.size(); ++k) {
      hb.gradients.push_back(slot(b, k));
      hb.parameters.push_back(params_[b.params[k]]);
    }
    b.wire = b.buffer;
    b.hook_result = outside_hook_->run(hb);
    return;
  }
  // The compression hooks divide by the group's size whatever join counts, as torch's
  // fp16/bf16_compress_hook do; the plain all-reduce takes join's divisor.
  const double divisor = hook_ == CommHook::AllReduce ? divide_factor() : static_cast<double>(group_->size());
  b.wire = wire_of(b.buffer).div_(divisor);
  std::vector<at::Tensor> tensors{b.wire};
  b.work = group_->allreduce(tensors);
}

void Reducer::wait_reduction(Bucket& b) {
  if (b.hook_result) {
    at::Tensor reduced = b.hook_result();
    b.hook_result = nullptr;
    TORCH_CHECK(reduced.defined() && reduced.numel() == b.buffer.numel(), "Communication hook: the future's value "
                "must be a tensor of the bucket's ", b.buffer.numel(), " elements");
    if (!reduced.is_same(b.buffer)) b.buffer.copy_(reduced.reshape({-1}));
    return;
  }
  b.work->wait();
  if (!b.wire.is_same(b.buffer)) b.buffer.copy_(b.wire);
}

void Reducer::finalize() {
  std::unique_lock<std::mutex> g(mu_);
  if (!expect_hooks_ || next_bucket_ < buckets_.size()) return;
  expect_hooks_ = false;
  require_finalize_ = false;
  forward_work_.reset();
  c10::AutoGradMode no_grad(false);
  for (auto& b : buckets_) wait_reduction(b);
  std::vector<bool> globally_used = locally_used_;
  if (find_unused_) {  // a parameter unused here may have been used elsewhere
    at::Tensor used = at::zeros({static_cast<int64_t>(params_.size())}, at::TensorOptions().dtype(at::kInt));
    auto* u = used.data_ptr<int32_t>();
    for (size_t i = 0; i < params_.size(); ++i) u[i] = locally_used_[i] ? 1 : 0;
    globally_used = reduce_used_map(used);
  }
  write_back(globally_used);
}

std::vector<bool> Reducer::reduce_used_map(at::Tensor used) {
  std::vector<at::Tensor> t{used};
  AllreduceOptions opts;
  opts.reduce_op = ReduceOp::MAX;
  group_->allreduce(t, opts)->wait();
  std::vector<bool> globally_used(params_.size());
  const auto* u = used.data_ptr<int32_t>();
  for (size_t i = 0; i < params_.size(); ++i) globally_used[i] = u[i] != 0;
  return globally_used;
}

void Reducer::write_back(const std::vector<bool>& globally_used) {
  for (auto& b : buckets_) {
    for (size_t k = 0; k < b.params.size(); ++k) {
      const size_t i = b.params[k];
      if (!globally_used[i]) continue;  // no rank produced a grad: .grad stays as it was
      at::Tensor& grad = params_[i].mutable_grad();
      at::Tensor reduced = slot(b, k);
      if (as_bucket_view_) {
        if (!grad.defined() || grad.data_ptr() != reduced.data_ptr()) grad = reduced;
      } else if (grad.defined()) {
        grad.copy_(reduced);
      } else {
        grad = reduced.clone();
      }
    }
  }
}

void Reducer::match_all_reduce_for_bwd_pass() {
  // Zeros go out; the running ranks' (already divided) grads come back, and become this
  // rank's .grad too, so an optimizer stepping here (ZeroRedundancyOptimizer's shard)
  // steps with the iteration's gradients.
  std::lock_guard<std::mutex> g(mu_);
  TORCH_CHECK(!expect_hooks_, "DistributedDataParallel join: a joined rank is still inside an iteration");
  c10::AutoGradMode no_grad(false);
  div_factor_ = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    buckets_[i].buffer.zero_();
    start_reduction(i);
  }
  for (auto& b : buckets_) wait_reduction(b);
  std::vector<bool> globally_used(params_.size(), true);
  if (find_unused_) {
    globally_used = reduce_used_map(at::zeros({static_cast<int64_t>(params_.size())},
                                              at::TensorOptions().dtype(at::kInt)));
  }
  write_back(globally_used);
}

std::vector<int64_t> Reducer::unused_parameters() const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<int64_t> out;
  for (size_t i = 0; i < locally_used_.size(); ++i) {
    if (!locally_used_[i]) out.push_back(static_cast<int64_t>(i));
  }
  return out;
}

}  // namespace c10d::inline tessera
