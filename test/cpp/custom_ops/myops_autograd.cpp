// The Autograd kernel of a custom operator, as a user would write one: myops::scale's
// derivative as a torch::autograd::Function, registered with
// TORCH_LIBRARY_IMPL(myops, Autograd, m). Built as its own library (it links
// Tessera::autograd; myops itself needs only aten) and loaded after libtessera_test_myops.
#include <aten/aten.h>
#include <autograd/custom_function.h>

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

const c10::OperatorHandle& scale_op() {
  static const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow("myops::scale", "");
  return op;
}

struct ScaleFunction : torch::autograd::Function<ScaleFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, double factor) {
    ctx->saved_data["factor"] = factor;
    // Below Autograd: the CPU kernel, as the generated Autograd kernels call theirs.
    at::AutoDispatchBelowADInplaceOrView guard;
    return scale_op().typed<at::Tensor(const at::Tensor&, double)>().call(x, factor);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const double factor = ctx->saved_data["factor"].toDouble();
    // Written with a differentiable op, so second derivatives work too.
    return {scale_op().typed<at::Tensor(const at::Tensor&, double)>().call(grads[0], factor), at::Tensor()};
  }
};

at::Tensor scale_autograd(const at::Tensor& x, double factor) { return ScaleFunction::apply(x, factor); }

}  // namespace

TORCH_LIBRARY_IMPL(myops, Autograd, m) { m.impl("scale", TORCH_FN(scale_autograd)); }
