// An app on the installed libtessera_autograd: fits y = 3x - 1 by gradient descent, the
// loss built from native ops and a custom torch::autograd::Function (a squared error with
// a hand-written derivative), then checks the fitted parameters.
#include <aten/aten.h>
#include <autograd/autograd.h>
#include <autograd/custom_function.h>

#include <cmath>
#include <iostream>

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// mean((pred - target)^2), with d/dpred = 2 (pred - target) / n.
struct SquaredError : torch::autograd::Function<SquaredError> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& pred, const at::Tensor& target) {
    at::Tensor diff = pred - target;
    ctx->save_for_backward({diff});
    return at::mean(diff * diff);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    at::Tensor diff = ctx->get_saved_variables()[0];
    at::Tensor g = grads[0] * diff * (2.0 / static_cast<double>(diff.numel()));
    return {g, -g};
  }
};

}  // namespace

int main() {
  at::Tensor x = at::empty({8}, at::kDouble);
  for (int i = 0; i < 8; ++i) x.data_ptr<double>()[i] = 0.25 * i - 1.0;
  at::Tensor y = x * 3.0 - 1.0;
  at::Tensor w = at::zeros({1}, at::TensorOptions(at::kDouble).requires_grad(true));
  at::Tensor b = at::zeros({1}, at::TensorOptions(at::kDouble).requires_grad(true));
  for (int step = 0; step < 500; ++step) {
    at::Tensor loss = SquaredError::apply(x * w + b, y);
    loss.backward();
    {
      c10::AutoGradMode no_grad(false);
      w.sub_(w.grad() * 0.1);
      b.sub_(b.grad() * 0.1);
    }
    w.mutable_grad() = at::Tensor();
    b.mutable_grad() = at::Tensor();
  }
  const double wv = w.data_ptr<double>()[0], bv = b.data_ptr<double>()[0];
  std::cout << "autograd fit: w=" << wv << " b=" << bv << "\n";
  return std::abs(wv - 3.0) < 1e-6 && std::abs(bv + 1.0) < 1e-6 ? 0 : 1;
}
