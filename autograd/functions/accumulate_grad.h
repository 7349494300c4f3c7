// AccumulateGrad: the Node at the end of every path to a leaf that requires grad; it runs
// the leaf's hooks and adds the incoming grad into leaf.grad. Inside Engine::execute the
// grads are stored only once the whole pass has run (PendingLeafGrads), so a pass that
// fails half-way (an OutOfMemoryError) leaves every leaf's .grad as it was.
#pragma once

#include <autograd/function.h>

#include <functional>
#include <memory>
#include <vector>

namespace torch::autograd {

class TORCH_API AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "AccumulateGrad"; }
  const Tensor& variable() const { return variable_; }

  // A consumer that may take the grad over (DDP's reducer): called with the grad after the
  // leaf's hooks; when it returns true, this node stores nothing and the consumer writes
  // .grad itself (in an engine final callback, after the pass).
  using GradConsumer = std::function<bool(const Tensor& grad)>;
  void set_grad_consumer(GradConsumer consumer) { consumer_ = std::move(consumer); }

 private:
  friend class PendingLeafGrads;
  // `owned`: nobody else holds `grad` and it has the leaf's layout, so it may become .grad.
  void store(Tensor grad, bool owned);
  Tensor variable_;
  GradConsumer consumer_;
};

// The grads a backward pass has computed for leaves, held until the pass is done. While one
// is alive on a thread, AccumulateGrad (outside create_graph) prepares what it will store,
// doing any copying then, and leaves .grad alone; commit() stores everything without
// allocating. Destroyed uncommitted (the pass threw), it stores nothing.
class TORCH_API PendingLeafGrads {
 public:
  PendingLeafGrads();
  ~PendingLeafGrads();
  PendingLeafGrads(const PendingLeafGrads&) = delete;
  PendingLeafGrads& operator=(const PendingLeafGrads&) = delete;
  void commit();

 private:
  friend class AccumulateGrad;
  struct Entry {
    std::shared_ptr<Node> node;  // keeps the AccumulateGrad (and its leaf) alive
    Tensor grad;
    bool owned;
  };
  std::vector<Entry> entries_;
  PendingLeafGrads* previous_;
};

}  // namespace torch::autograd
