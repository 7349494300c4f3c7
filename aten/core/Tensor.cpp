#include <aten/core/Dispatch.h>
#include <aten/core/Tensor.h>

#include <atomic>

namespace at::inline tessera {

void dtype_not_implemented(const char* op, c10::ScalarType t) {
  // torch raises RuntimeError (not NotImplementedError) for a dtype a kernel lacks.
  TORCH_CHECK(false, "\"", op, "\" not implemented for '", t, "'");
}

c10::Scalar Tensor::item() const {
  TORCH_CHECK(defined(), "item(): the tensor is undefined");
  TORCH_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  TORCH_CHECK_NOT_IMPLEMENTED(!is_meta(), "Tensor.item() cannot be called on meta tensors");
  TORCH_CHECK(is_cpu(), "item(): reading a ", device(), " tensor is not supported by this build");
  return dispatch_types<kAllTypes>(scalar_type(), "item", [&]<typename T>() -> c10::Scalar {
    if constexpr (std::is_same_v<T, c10::complex<c10::Half>>) {
      // Read as complex<float> (its opmath type), the math bits applied there.
      c10::complex<float> z = *static_cast<const T*>(data_ptr());
      if (is_conj()) z = c10::complex<float>(z.real(), -z.imag());
      if (is_neg()) z = -z;
      return c10::Scalar(c10::complex<double>(z.real(), z.imag()));
    } else {
      T v = *static_cast<const T*>(data_ptr());
      // The math bits: a conj() view reads its memory conjugated, a negative view negated.
      if constexpr (std::is_same_v<T, c10::complex<float>> || std::is_same_v<T, c10::complex<double>>) {
        if (is_conj()) v = T(v.real(), -v.imag());
      }
      if constexpr (std::is_same_v<T, bool>) {
        TORCH_CHECK(!is_neg(), "\"neg_cpu\" not implemented for 'Bool'");
      } else {
        if (is_neg()) v = static_cast<T>(-v);
      }
      if constexpr (std::is_same_v<T, c10::complex<float>>) {
        return c10::Scalar(c10::complex<double>(v.real(), v.imag()));
      } else if constexpr (std::is_integral_v<T> || std::is_same_v<T, bool> || std::is_same_v<T, double> ||
                           std::is_same_v<T, c10::complex<double>>) {
        return c10::Scalar(v);
      } else {
        return c10::Scalar(static_cast<double>(static_cast<float>(v)));
      }
    }
  });
}

// ---------------------------------------------------------------- autograd

namespace impl {
namespace {
std::atomic<VariableHooksInterface*> g_variable_hooks{nullptr};
}  // namespace

VariableHooksInterface::~VariableHooksInterface() = default;

void SetVariableHooks(VariableHooksInterface* hooks) { g_variable_hooks.store(hooks, std::memory_order_release); }

const VariableHooksInterface& GetVariableHooks() {
  VariableHooksInterface* h = g_variable_hooks.load(std::memory_order_acquire);
  TORCH_CHECK(h != nullptr, "autograd is not available: link libtessera_autograd (the CMake target Tessera::aten brings it) to use it");
  return *h;
}
}  // namespace impl

const Tensor& Tensor::set_requires_grad(bool requires_grad) const {
  impl::GetVariableHooks().set_requires_grad(*this, requires_grad);
  return *this;
}
const Tensor& Tensor::grad() const { return impl::GetVariableHooks().grad(*this); }
Tensor& Tensor::mutable_grad() const { return impl::GetVariableHooks().mutable_grad(*this); }
void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      std::optional<TensorList> inputs) const {
  impl::GetVariableHooks().backward(*this, gradient, retain_graph, create_graph, inputs);
}
bool Tensor::is_leaf() const { return impl::GetVariableHooks().is_leaf(*this); }
int64_t Tensor::output_nr() const { return impl::GetVariableHooks().output_nr(*this); }
const std::shared_ptr<torch::autograd::Node>& Tensor::grad_fn() const { return impl::GetVariableHooks().grad_fn(*this); }
void Tensor::retain_grad() const { impl::GetVariableHooks().retain_grad(*this); }
bool Tensor::retains_grad() const { return impl::GetVariableHooks().retains_grad(*this); }
bool Tensor::is_view() const { return impl::GetVariableHooks().is_view(*this); }
const Tensor& Tensor::_base() const { return impl::GetVariableHooks().base(*this); }
unsigned Tensor::_register_hook(std::function<Tensor(const Tensor&)> hook) const {
  return impl::GetVariableHooks().register_hook(*this, std::move(hook));
}
void Tensor::remove_hook(unsigned handle) const { impl::GetVariableHooks().remove_hook(*this, handle); }

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "Tensor(undefined)";
  return os << "Tensor(sizes=" << t.sizes() << ", dtype=" << t.scalar_type() << ", device=" << t.device() << ")";
}

}  // namespace at::inline tessera
