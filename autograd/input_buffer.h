// InputBuffer: the grads arriving at one Node during a backward pass, summed per input
// until every producer has delivered.
#pragma once

#include <autograd/function.h>

namespace torch::autograd {

class InputBuffer {
 public:
  explicit InputBuffer(size_t size) : buffer_(size) {}
  // Adds `grad` to slot `pos` (the first grad is kept as is, later ones are summed).
  void add(size_t pos, Tensor grad);
  variable_list take() { return std::move(buffer_); }
  size_t size() const { return buffer_.size(); }

 private:
  variable_list buffer_;
};

}  // namespace torch::autograd
