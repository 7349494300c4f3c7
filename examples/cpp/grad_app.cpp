// An app that links Tessera::aten alone, as the README shows, and takes a gradient: the
// autograd library comes with that target, so backward() works with nothing else named.
#include <aten/aten.h>

#include <iostream>

int main() {
  at::Tensor x = at::ones({3}, at::TensorOptions().dtype(at::kDouble).requires_grad(true));
  at::Tensor y = (x * x * 3.0).sum();  // dy/dx = 6x
  y.backward();
  const double* g = x.grad().data_ptr<double>();
  std::cout << "grad of sum(3x^2) at x=1: " << g[0] << " " << g[1] << " " << g[2] << "\n";
  return x.grad().allclose(at::full({3}, 6.0, at::TensorOptions().dtype(at::kDouble))) ? 0 : 1;
}
