// The boxed fallbacks of the math-bit keys Conjugate and Negative. A tensor made by conj()
// (or the negation behind a conj view's imag) reads its storage conjugated (negated); kernels
// do not know that, so every operator without a fallthrough here gets its flagged inputs
// materialised first: the fallback clones them (clone writes the logical values), runs the
// operator below its key, and copies a mutated clone back through the view. View operators
// and the bit-aware utilities (copy_, clone, metadata) fall through and keep the bits.
#include <aten/core/Stack.h>
#include <aten/dispatch/Dispatcher.h>
#include <aten/library.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace at::inline tessera::native {
namespace {

struct MathBit {
  c10::DispatchKey key;
  const char* name;  // "conjugate" / "negative", as torch's messages say it
};

bool has_bit(const Tensor& t, c10::DispatchKey key) { return t.defined() && t.key_set().has(key); }

void math_bits_fallback(const MathBit& bit, const c10::OperatorHandle& op, c10::DispatchKeySet ks, Stack* stack) {
  // No autograd guard here, as in torch: a native op arrives under its autograd kernel's
  // guard already, and a custom op (whose Autograd key falls through) must keep recording
  // its inner ops' graph and bumping the version of what it writes back.
  const auto& args = op.schema().arguments();
  const size_t first = stack->size() - args.size();

  // An operator that only aliases its inputs (a view, or one that may return its input)
  // keeps the bit on what it returns: pass the call down untouched.
  bool any_write = false, any_alias = false, any_plain_alias = false;
  for (const auto& a : args) {
    const auto* info = a.alias_info();
    if (info == nullptr) continue;
    any_alias = true;
    (info->isWrite() ? any_write : any_plain_alias) = true;
  }
  TORCH_CHECK(!(any_write && any_plain_alias), "Unsupported operator for ", bit.name,
              " fallback: ", op.schema().name(), ". The ", bit.name,
              " fallback doesn't work for operators with a mix of mutable and non-mutable inputs that alias with outputs,"
              " this must be implemented manually. If you got this error on a core op, please report a bug to PyTorch.");
  const c10::DispatchKeySet below = ks & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, bit.key);
  if (any_alias && !any_write) {
    op.redispatchBoxed(below, stack);
    return;
  }

  // Mutated inputs (self, out=, the members of a mutable list) are computed into clones and
  // copied back through their views afterwards. torch refuses more than one of them, and
  // any in a mutable list; writing each back is as correct for many as for one.
  std::vector<std::pair<Tensor, Tensor>> mutated;  // (the caller's view, its clone)
  auto resolve = [&](const Tensor& t, bool writes) {
    Tensor resolved = t.clone();
    if (writes) mutated.emplace_back(t, resolved);
    return resolved;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    IValue& slot = (*stack)[first + i];
    const bool writes = args[i].alias_info() != nullptr && args[i].alias_info()->isWrite();
    if (slot.isTensor()) {
      if (has_bit(slot.toTensor(), bit.key)) slot = IValue(resolve(slot.toTensor(), writes));
    } else if (slot.isTensorList()) {
      auto list = slot.toTensorList();
      if (std::none_of(list.begin(), list.end(), [&](const Tensor& t) { return has_bit(t, bit.key); })) continue;
      std::vector<Tensor> resolved(list.begin(), list.end());
      for (Tensor& t : resolved) {
        if (has_bit(t, bit.key)) t = resolve(t, writes);
      }
      slot = IValue(std::move(resolved));
    } else if (slot.isOptionalTensorList()) {
      auto list = slot.toOptionalTensorList();
      auto flagged = [&](const std::optional<Tensor>& t) { return t.has_value() && has_bit(*t, bit.key); };
      if (std::none_of(list.begin(), list.end(), flagged)) continue;
      std::vector<std::optional<Tensor>> resolved(list.begin(), list.end());
      for (auto& t : resolved) {
        if (flagged(t)) t = resolve(*t, writes);
      }
      slot = IValue(std::move(resolved));
    }
  }

  op.redispatchBoxed(below, stack);

  const size_t n_returns = op.schema().returns().size();
  for (auto& [view, clone] : mutated) {
    if (!view.sizes().equals(clone.sizes())) view.resize_(clone.sizes());
    view.copy_(clone);
    // The operator returned the clone it wrote (self or out); the caller gets its own tensor.
    for (size_t i = stack->size() - n_returns; i < stack->size(); ++i) {
      IValue& ret = (*stack)[i];
      if (ret.isTensor() && ret.toTensor().is_same(clone)) ret = IValue(view);
    }
  }
}

void conjugate_fallback(const c10::OperatorHandle& op, c10::DispatchKeySet ks, Stack* stack) {
  math_bits_fallback({c10::DispatchKey::Conjugate, "conjugate"}, op, ks, stack);
}

void negative_fallback(const c10::OperatorHandle& op, c10::DispatchKeySet ks, Stack* stack) {
  math_bits_fallback({c10::DispatchKey::Negative, "negative"}, op, ks, stack);
}

// The operators that see the bits themselves: views (their results share the input's
// storage, so they keep its bits: make_view copies the key set), the copy and clone kernels
// that read and write through them, and metadata queries. Every name must be in ops.yaml.
void register_fallthroughs(torch::Library& m) {
  static const char* const kFallthroughs[] = {
      // bit-aware data movement and in-place metadata changes
      "clone", "copy_", "resize_", "resize_as_", "set_", "set_.source_Tensor", "set_.source_Tensor_storage_offset",
      "as_strided_", "transpose_", "t_", "squeeze_", "squeeze_.dim", "unsqueeze_", "swapaxes_", "swapdims_",
      "detach_", "requires_grad_",
      // autograd state and metadata
      "data", "set_data", "retain_grad", "retains_grad", "is_leaf", "output_nr", "_version", "_backward", "is_conj",
      "is_neg", "is_complex", "is_floating_point",
      // views
      "alias", "view", "as_strided", "permute", "transpose.int", "expand", "squeeze", "squeeze.dim", "unsqueeze",
      "select.int", "slice.Tensor", "unfold", "diagonal", "split.Tensor", "split_with_sizes", "unbind.int", "detach", "_conj",
      "_neg_view", "conj", "resolve_conj", "resolve_neg", "real", "imag", "view_as_real", "reshape", "view_as",
      "expand_as", "t", "narrow", "movedim.int", "movedim.intlist", "swapaxes", "swapdims", "unflatten.int", "chunk",
      "select.Dimname", "transpose.Dimname", "unbind.Dimname", "unflatten.Dimname",
      "hsplit.int", "hsplit.array", "vsplit.int", "vsplit.array", "dsplit.int", "dsplit.array",
      // factories that read only the input's metadata
      "empty_like", "empty.memory_format", "empty.out", "empty_strided", "full_like",
      // composites over dispatched ops (torch also lists repeat_interleave.Tensor, whose
      // CPU kernel reads the counts raw: tessera resolves them first)
      "repeat_interleave.self_Tensor", "repeat_interleave.self_int"};
  for (const char* name : kFallthroughs) m.impl(name, torch::CppFunction::makeFallthrough());
}

}  // namespace

TORCH_LIBRARY_IMPL(_, Conjugate, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction(&conjugate_fallback)); }
TORCH_LIBRARY_IMPL(_, Negative, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction(&negative_fallback)); }
TORCH_LIBRARY_IMPL(aten, Conjugate, m) { register_fallthroughs(m); }
TORCH_LIBRARY_IMPL(aten, Negative, m) { register_fallthroughs(m); }

}  // namespace at::inline tessera::native
