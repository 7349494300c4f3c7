// The autograd-state operators (and alias, detach's differentiable twin, and lift_fresh). detach: an alias of self sharing its storage and version
// counter; the Autograd kernel generated for it records no history, so the alias starts
// outside every graph. detach_ / requires_grad_: their hand-written Autograd kernels
// (autograd/VariableTypeManual.cpp) do the work; below autograd there is no autograd
// state to change, and they return self. The manual_cpp_binding ops (data, set_data,
// is_leaf, output_nr, _version, retain_grad, retains_grad, _backward) make the Tensor
// methods' and Python attributes' work reachable through the dispatcher (ops.aten).
#include <aten/core/NamedTensorUtils.h>
#include <aten/core/QTensorImpl.h>
#include <aten/core/SparseTensorImpl.h>
#include <aten/core/TensorUtils.h>
#include <aten/native/NativeFunctions.h>
#include <c10/util/Exception.h>

namespace at::inline tessera::native {

namespace {

Tensor alias_of(const Tensor& self) {
  Tensor alias = at::make_view(self, self.sizes(), self.strides(), self.storage_offset());
  if (self.unsafeGetTensorImpl()->is_wrapped_number()) alias.unsafeGetTensorImpl()->set_wrapped_number(true);
  return alias;
}

}  // namespace

Tensor detach(const Tensor& self) { return alias_of(self); }

Tensor alias(const Tensor& self) { return alias_of(self); }

Tensor lift_fresh(const Tensor& self) { return alias_of(self); }

Tensor& detach_(Tensor& self) { return self; }

Tensor& requires_grad_(Tensor& self, bool requires_grad) {
  (void)requires_grad;
  return self;
}

// Tensor.data: the same storage outside every graph and with its own version counter, so
// that writes through it are invisible to autograd's saved-tensor checks (torch's
// variable_data; detach() shares the counter instead).
Tensor data(const Tensor& self) {
  Tensor alias = alias_of(self);
  alias.unsafeGetTensorImpl()->set_version_counter(c10::VariableVersion());
  if (self.has_names()) internal_set_names_inplace(alias, names_of(self));  // torch's .data keeps names
  return alias;
}

// t.data = new: t takes new's data in place and keeps its requires_grad, grad, hooks and
// version counter, as torch's set_data does.
void set_data(Tensor& self, const Tensor& new_data) {
  // The impl keeps its own type: an mkldnn or nested tensor cannot take plain data, nor the
  // reverse (torch's _has_compatible_shallow_copy_type); a nested impl's component shapes
  // would not match another buffer either.
  TORCH_CHECK(self.is_mkldnn() == new_data.is_mkldnn() && !self.is_nested() && !new_data.is_nested() &&
                  self.is_quantized() == new_data.is_quantized(),
              "Attempted to call `variable.set_data(tensor)`, but `variable` and `tensor` have incompatible tensor "
              "type.");
  TORCH_CHECK_TYPE(new_data.device() == self.device() && new_data.layout() == self.layout(),
                   "data set to a tensor that requires gradients must be of a compatible type: got ",
                   new_data.device(), " data for a ", self.device(), " tensor");
  TORCH_CHECK(!self.requires_grad() || c10::isFloatingType(new_data.scalar_type()) ||
                  c10::isComplexType(new_data.scalar_type()),
              "set_data: a tensor that requires grad can only hold floating point or complex data, got ",
              c10::toString(new_data.scalar_type()));
  if (c10::isSparseLayout(self.layout())) {
    // A sparse impl's data are its members: take new_data's (same layout, checked above).
    TORCH_CHECK_NOT_IMPLEMENTED(new_data.scalar_type() == self.scalar_type(), "set_data: a sparse tensor keeps its ",
                                "dtype (", self.scalar_type(), "), got ", new_data.scalar_type());
    if (self.is_sparse()) {
      const SparseTensorImpl* from = get_sparse_impl(new_data);
      get_sparse_impl(self)->set_members(new_data.sizes(), from->indices(), from->values(), from->coalesced());
    } else {
      const SparseCsrTensorImpl* from = get_sparse_csr_impl(new_data);
      get_sparse_csr_impl(self)->set_members(new_data.sizes(), from->compressed_indices(), from->plain_indices(),
                                             from->values());
    }
    return;
  }
  self.unsafeGetTensorImpl()->set_data_from(*new_data.unsafeGetTensorImpl());
  // The integers and the quantizer that reads them go together.
  if (self.is_quantized()) get_qtensorimpl(self)->set_quantizer_(get_quantizer(new_data));
}

bool is_leaf(const Tensor& self) { return self.is_leaf(); }

bool is_conj(const Tensor& self) { return self.is_conj(); }

bool is_neg(const Tensor& self) { return self.is_neg(); }

int64_t output_nr(const Tensor& self) { return self.output_nr(); }

int64_t _version(const Tensor& self) { return self._version(); }

void retain_grad(Tensor& self) { self.retain_grad(); }

bool retains_grad(const Tensor& self) { return self.retains_grad(); }

void _backward(const Tensor& self, TensorList inputs, const std::optional<Tensor>& gradient,
               std::optional<bool> retain_graph, bool create_graph) {
  self.backward(gradient.value_or(Tensor()), retain_graph, create_graph,
                inputs.empty() ? std::nullopt : std::optional<TensorList>(inputs));
}

}  // namespace at::inline tessera::native
