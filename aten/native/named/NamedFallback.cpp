// The Named key's boxed fallback: every operator called with a named tensor passes here
// (below autograd, so composites have decomposed already). An operator torch 1.13 names
// (its Named set, restricted to the rules below) runs under NoNamesGuard, kernels unaware
// of names, and its results, out= tensors and mutated self get the names the rule
// computes; any other operator raises torch's "not yet supported with named tensors".
#include <aten/core/Stack.h>
#include <aten/dispatch/Dispatcher.h>
#include <aten/library.h>
#include <aten/native/named/NameInference.h>

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace at::inline tessera::native::named {
namespace {

enum class Rule : uint8_t {
  Keep,         // self's names (unary, in-place, conversions, dim-preserving views)
  Unify,        // the broadcast of every tensor input's names
  Reduce,       // self's names without the reduced dims (`dim`, `keepdim`)
  Transpose,    // two names swapped (`dim0`/`dim1`; t() swaps a matrix's)
  DropDim,      // `dim` removed (select, unbind; squeeze.dim only when that dim has size 1)
  Squeeze,      // every size-1 dim removed
  Expand,       // new leading dims unnamed
  Matmul,       // matmul's rule (addmm/addmv: then broadcast with the bias)
  Cat,          // the inputs' names unified position by position
  Diagonal,     // `dim1`/`dim2` removed, one unnamed dim appended
  Resize,       // resize_/resize_as_: a named self keeps its size (and names); else the template's
  Passthrough,  // results carry no names (queries, autograd state, as_strided, masked_select)
};

// The operators (aten "name.overload") with a rule: each is in torch 1.13's Named set,
// which test_named_tensor.py checks against torch's dispatcher.
const std::unordered_map<std::string, Rule>& rules() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string, Rule>();
    auto add = [&](Rule r, std::initializer_list<const char*> names) {
      for (const char* n : names) t->emplace(n, r);
    };
    // Elementwise unary: the functional, out= and in-place forms.
    for (const char* base :
         {"abs",      "exp",        "expm1",  "log",       "log2",        "log10",       "log1p",    "sqrt",
          "rsqrt",    "reciprocal", "sin",    "cos",       "tan",         "asin",        "acos",     "atan",
          "sinh",     "cosh",       "tanh",   "asinh",     "acosh",       "atanh",       "sigmoid",  "erf",
          "erfc",     "erfinv",     "lgamma", "digamma",   "polygamma",   "neg",         "sign",     "floor",
          "ceil",     "round",      "trunc",  "frac",      "bitwise_not", "logical_not", "deg2rad",  "rad2deg",
          "absolute", "arccosh",    "i0",     "threshold", "clamp",       "clamp_min",   "clamp_max"}) {
      const std::string b(base);
      t->emplace(b, Rule::Keep);
      t->emplace(b + ".out", Rule::Keep);
      t->emplace(b + "_", Rule::Keep);
    }
    add(Rule::Keep, {"bernoulli_.Tensor",
                     "angle",
                     "angle.out",
                     "signbit",
                     "signbit.out",
                     "square",
                     "square_",
                     "relu",
                     "relu_",
                     "isnan",
                     "isinf",
                     "isfinite",
                     "real",
                     "imag",
                     "conj",
                     "fill_.Scalar",
                     "zero_",
                     "detach",
                     "detach_",
                     "requires_grad_",
                     "data",
                     "contiguous",
                     "clone",
                     "empty_like",
                     "zeros_like",
                     "ones_like",
                     "full_like",
                     "rand_like",
                     "randn_like",
                     "_to_copy",
                     "to.dtype_layout",
                     "to.device",
                     "to.dtype",
                     "uniform_",
                     "normal_",
                     "exponential_",
                     "geometric_",
                     "log_normal_",
                     "cauchy_",
                     "random_",
                     "random_.to",
                     "random_.from",
                     "bernoulli",
                     "bernoulli.out",
                     "bernoulli_.float",
                     "native_dropout",
                     "dropout",
                     "dropout_",
                     "cumsum",
                     "cumsum.out",
                     "cumprod",
                     "cumprod.out",
                     "logcumsumexp",
                     "logcumsumexp.out",
                     "cummax",
                     "cummax.out",
                     "cummin",
                     "cummin.out",
                     "softmax.int",
                     "log_softmax.int",
                     "index_fill.int_Scalar",
                     "index_fill.int_Tensor",
                     "index_fill_.int_Scalar",
                     "index_fill_.int_Tensor",
                     "slice.Tensor",
                     "narrow",
                     "narrow.Tensor",
                     "split.Tensor",
                     "split_with_sizes",
                     "chunk",
                     "unsafe_chunk",
                     "unsafe_split.Tensor",
                     "unsafe_split_with_sizes",
                     "tensor_split.sections",
                     "tensor_split.indices",
                     "tensor_split.tensor_indices_or_sections",
                     "pow.Tensor_Scalar",
                     "pow.Tensor_Scalar_out",
                     "pow_.Scalar",
                     "add.Scalar",
                     "add_.Scalar",
                     "sub.Scalar",
                     "sub_.Scalar",
                     "div.Scalar",
                     "div_.Scalar",
                     "true_divide.Scalar",
                     "true_divide_.Scalar",
                     "floor_divide.Scalar",
                     "floor_divide_.Scalar",
                     "rsub.Scalar",
                     "eq.Scalar",
                     "eq.Scalar_out",
                     "ne.Scalar",
                     "ne.Scalar_out",
                     "lt.Scalar",
                     "lt.Scalar_out",
                     "le.Scalar",
                     "le.Scalar_out",
                     "gt.Scalar",
                     "gt.Scalar_out",
                     "ge.Scalar",
                     "ge.Scalar_out"});
    // Elementwise binary and ternary: names broadcast.
    for (const char* base : {"add", "sub", "mul", "div", "true_divide"}) {
      const std::string b(base);
      t->emplace(b + ".Tensor", Rule::Unify);
      t->emplace(b + ".out", Rule::Unify);
      t->emplace(b + "_.Tensor", Rule::Unify);
    }
    for (const char* base : {"atan2", "hypot", "nextafter", "logical_and", "logical_or", "logical_xor", "igamma",
                             "igammac", "addcmul", "addcdiv"}) {
      const std::string b(base);
      t->emplace(b, Rule::Unify);
      t->emplace(b + ".out", Rule::Unify);
      t->emplace(b + "_", Rule::Unify);
    }
    for (const char* cmp : {"eq", "ne", "lt", "le", "gt", "ge"}) {
      const std::string c(cmp);
      t->emplace(c + ".Tensor", Rule::Unify);
      t->emplace(c + ".Tensor_out", Rule::Unify);
    }
    add(Rule::Unify, {"floor_divide",
                      "floor_divide.out",
                      "floor_divide_.Tensor",
                      "pow.Tensor_Tensor",
                      "pow.Tensor_Tensor_out",
                      "pow_.Tensor",
                      "pow.Scalar",
                      "pow.Scalar_out",
                      "logaddexp",
                      "logaddexp.out",
                      "logaddexp2",
                      "logaddexp2.out",
                      "rsub.Tensor",
                      "clamp.Tensor",
                      "clamp.Tensor_out",
                      "clamp_.Tensor",
                      "clamp_min.Tensor",
                      "clamp_min.Tensor_out",
                      "clamp_min_.Tensor",
                      "clamp_max.Tensor",
                      "clamp_max.Tensor_out",
                      "clamp_max_.Tensor",
                      "masked_fill.Scalar",
                      "masked_fill.Tensor",
                      "masked_fill_.Scalar",
                      "masked_fill_.Tensor",
                      "copy_",
                      "fill_.Tensor"});
    add(Rule::Reduce, {"sum",
                       "sum.dim_IntList",
                       "sum.IntList_out",
                       "prod",
                       "prod.dim_int",
                       "prod.int_out",
                       "mean",
                       "mean.dim",
                       "mean.out",
                       "any",
                       "all",
                       "var",
                       "var.dim",
                       "var.out",
                       "var.correction",
                       "var.correction_out",
                       "std",
                       "std.dim",
                       "std.out",
                       "std.correction",
                       "std.correction_out",
                       "var_mean",
                       "var_mean.dim",
                       "var_mean.correction",
                       "std_mean",
                       "std_mean.dim",
                       "std_mean.correction",
                       "logsumexp",
                       "logsumexp.out",
                       "max",
                       "min",
                       "max.dim",
                       "min.dim",
                       "max.dim_max",
                       "min.dim_min",
                       "kthvalue",
                       "kthvalue.values",
                       "median",
                       "median.dim",
                       "median.dim_values",
                       "nanmedian",
                       "nanmedian.dim",
                       "nanmedian.dim_values",
                       "mode",
                       "mode.values"});
    add(Rule::Transpose, {"transpose.int", "t"});
    add(Rule::DropDim, {"select.int", "squeeze.dim", "unbind.int"});
    add(Rule::Squeeze, {"squeeze"});
    add(Rule::Expand, {"expand"});
    add(Rule::Matmul, {"mm", "mm.out", "bmm", "bmm.out", "matmul", "matmul.out", "mv", "mv.out", "dot", "dot.out",
                       "addmm", "addmm.out", "addmm_", "addmv", "addmv.out", "addmv_"});
    add(Rule::Cat, {"cat", "cat.out"});
    add(Rule::Diagonal, {"diagonal"});
    add(Rule::Resize, {"resize_", "resize_as_"});
    add(Rule::Passthrough,
        {"equal", "is_leaf", "output_nr", "_version", "retain_grad", "_backward", "set_data", "result_type.Tensor",
         "result_type.Scalar", "result_type.Scalar_Tensor", "is_floating_point", "is_complex", "is_signed",
         "as_strided", "masked_select", "masked_select.out"});
    return t;
  }();
  return *table;
}

// The boxed call's arguments, looked up by their schema names.
struct Args {
  const c10::FunctionSchema& schema;
  Stack* stack;
  size_t first;

  const IValue* get(const char* name) const {
    const auto& args = schema.arguments();
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].name() == name) return &(*stack)[first + i];
    }
    return nullptr;
  }
  // The inputs that carry names: tensors and optional tensors that are not out= arguments.
  std::vector<Tensor> tensor_inputs() const {
    std::vector<Tensor> out;
    const auto& args = schema.arguments();
    for (size_t i = 0; i < args.size(); ++i) {
      const IValue& v = (*stack)[first + i];
      if (!args[i].is_out() && v.isTensor() && v.toTensor().defined()) out.push_back(v.toTensor());
    }
    return out;
  }
};

std::optional<int64_t> wrap(int64_t d, int64_t n) {
  const int64_t extent = n == 0 ? 1 : n;
  if (d < -extent || d >= extent) return std::nullopt;  // the kernel raises its own error
  return d < 0 ? d + extent : d;
}

// The output names by `rule`; nullopt leaves every result unnamed (or, for arguments the
// kernel itself refuses, lets its error through).
std::optional<DimnameList> compute_names(Rule rule, const std::string& op, const Args& a) {
  const std::vector<Tensor> inputs = a.tensor_inputs();
  const IValue* self_arg = a.get("self");
  const Tensor self = self_arg != nullptr && self_arg->isTensor() ? self_arg->toTensor()
                      : inputs.empty()                            ? Tensor()
                                                                  : inputs.front();
  const int64_t n = self.defined() ? self.dim() : 0;
  switch (rule) {
    case Rule::Passthrough:
      return std::nullopt;
    case Rule::Keep:
      return names_of(self);
    case Rule::Unify: {
      if (op.rfind("masked_fill.", 0) == 0) {
        // as torch: the mask may not broadcast self to more dims when either is named
        const IValue* mask = a.get("mask");
        const Tensor& m = mask->toTensor();
        TORCH_CHECK(m.dim() <= n, "masked_fill: attempted to broadcast ", c10::tensorNamesToString(names_of(m)), " to ",
                    c10::tensorNamesToString(names_of(self)), " but the number of dims (", m.dim(),
                    ") must be less than or equal to the number of dims in the tensor (", n, ")");
      }
      DimnameList names;
      for (const Tensor& t : inputs) names = unify_from_right(names, names_of(t));
      return names;
    }
    case Rule::Reduce: {
      const IValue* dim = a.get("dim");
      const IValue* keepdim = a.get("keepdim");
      std::vector<int64_t> reduced;
      if (dim == nullptr || dim->isNone() || (dim->isIntList() && dim->toIntList().empty())) {
        for (int64_t d = 0; d < n; ++d) reduced.push_back(d);
      } else {
        for (int64_t d : dim->isInt() ? std::vector<int64_t>{dim->toInt()} : dim->toIntVector()) {
          auto w = wrap(d, n);
          if (!w) return std::nullopt;
          reduced.push_back(*w);
        }
      }
      return reduce_names(names_of(self), reduced, keepdim != nullptr && keepdim->toBool());
    }
    case Rule::Transpose: {
      DimnameList names = names_of(self);
      if (op == "t") {
        if (n == 2) std::swap(names[0], names[1]);
        return names;
      }
      auto d0 = wrap(a.get("dim0")->toInt(), n), d1 = wrap(a.get("dim1")->toInt(), n);
      if (!d0 || !d1 || n == 0) return std::nullopt;
      std::swap(names[static_cast<size_t>(*d0)], names[static_cast<size_t>(*d1)]);
      return names;
    }
    case Rule::DropDim: {
      auto d = wrap(a.get("dim")->toInt(), n);
      if (!d || n == 0) return std::nullopt;
      DimnameList names = names_of(self);
      // torch 1.13 drops every name when squeeze(dim) leaves the dim (its size is not 1).
      if (op == "squeeze.dim" && self.size(*d) != 1) return std::nullopt;
      names.erase(names.begin() + *d);
      return names;
    }
    case Rule::Squeeze: {
      DimnameList names;
      const DimnameList all = names_of(self);
      for (int64_t d = 0; d < n; ++d) {
        if (self.size(d) != 1) names.push_back(all[static_cast<size_t>(d)]);
      }
      return names;
    }
    case Rule::Expand: {
      const int64_t out_dim = static_cast<int64_t>(a.get("size")->toIntList().size());
      if (out_dim < n) return std::nullopt;
      DimnameList names(static_cast<size_t>(out_dim - n), Dimname::wildcard());
      for (Dimname d : names_of(self)) names.push_back(d);
      return names;
    }
    case Rule::Matmul: {
      if (inputs.size() == 3) {  // addmm / addmv: self is the bias
        return unify_from_right(matmul_names(names_of(inputs[1]), names_of(inputs[2])), names_of(inputs[0]));
      }
      TORCH_INTERNAL_ASSERT(inputs.size() == 2, op, ": the matmul rule needs two tensors");
      return matmul_names(names_of(inputs[0]), names_of(inputs[1]));
    }
    case Rule::Cat: {
      ArrayRef<Tensor> list = a.get("tensors")->toTensorList();
      DimnameList names;
      bool first = true;
      for (const Tensor& t : list) {
        // torch's check, made before the kernel's legacy leniency for 1-d empty inputs
        TORCH_CHECK(first || t.dim() == static_cast<int64_t>(names.size()),
                    "Tensors must have same number of dimensions: got ", names.size(), " and ", t.dim());
        names = first ? names_of(t) : unify_from_right(names, names_of(t), "cat");
        first = false;
      }
      return names;
    }
    case Rule::Diagonal: {
      auto d1 = wrap(a.get("dim1")->toInt(), n), d2 = wrap(a.get("dim2")->toInt(), n);
      if (!d1 || !d2 || *d1 == *d2 || n < 2) return std::nullopt;  // the kernel's error
      DimnameList names;
      const DimnameList all = names_of(self);
      for (int64_t d = 0; d < n; ++d) {
        if (d != *d1 && d != *d2) names.push_back(all[static_cast<size_t>(d)]);
      }
      names.push_back(Dimname::wildcard());
      return names;
    }
    case Rule::Resize: {
      const IValue* size = a.get("size");
      const Tensor templ = size == nullptr ? a.get("the_template")->toTensor() : Tensor();
      const std::vector<int64_t> target = size != nullptr ? size->toIntVector() : templ.sizes().vec();
      if (!self.has_names()) return templ.defined() ? std::optional<DimnameList>(names_of(templ)) : std::nullopt;
      TORCH_CHECK(self.sizes().equals(target), "Cannot resize named tensor with resize_ or resize_as_ (tried to resize ",
                  c10::tensorNamesToString(names_of(self)), " with size ", self.sizes(), " to ", IntArrayRef(target),
                  "). This may be caused by passing a named tensor as an `out=` argument; please ensure that the "
                  "sizes are the same. ");
      // resize_as_ treats self as the result of a computation named like the template.
      if (templ.defined()) check_out_names(self, names_of(templ));
      return names_of(self);
    }
  }
  return std::nullopt;
}

void name_result(const Tensor& t, const DimnameList& names) {
  if (t.defined() && t.dim() == static_cast<int64_t>(names.size())) internal_set_names_inplace(t, names);
}

void named_fallback(const c10::OperatorHandle& op, c10::DispatchKeySet ks, Stack* stack) {
  const c10::OperatorName& name = op.operator_name();
  static constexpr std::string_view kAten = "aten::";
  const bool is_aten = name.name.rfind(kAten, 0) == 0;
  const std::string key = !is_aten                     ? std::string()
                          : name.overload_name.empty() ? name.name.substr(kAten.size())
                                                       : name.name.substr(kAten.size()) + "." + name.overload_name;
  const auto& table = rules();
  auto it = is_aten ? table.find(key) : table.end();
  TORCH_CHECK(it != table.end(), name.str(),
              " is not yet supported with named tensors. Please drop names via `tensor = tensor.rename(None)`, call "
              "the op with an unnamed tensor, and set names on the result of the operation.");

  const auto& schema = op.schema();
  const auto& args = schema.arguments();
  const size_t first = stack->size() - args.size();
  const Args view{schema, stack, first};
  const std::optional<DimnameList> names = compute_names(it->second, key, view);

  // Tensors the call writes: out= arguments must agree with the names before anything runs.
  std::vector<Tensor> written;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto* alias = args[i].alias_info();
    const IValue& v = (*stack)[first + i];
    if (alias == nullptr || !alias->isWrite() || !v.isTensor()) continue;
    if (args[i].is_out() && names) check_out_names(v.toTensor(), *names);
    written.push_back(v.toTensor());
  }

  {
    NoNamesGuard guard;
    op.redispatchBoxed(ks & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, c10::DispatchKey::Named), stack);
  }
  if (!names) return;

  for (const Tensor& t : written) name_result(t, *names);
  const size_t n_returns = schema.returns().size();
  for (size_t i = stack->size() - n_returns; i < stack->size(); ++i) {
    const IValue& r = (*stack)[i];
    if (r.isTensor()) {
      name_result(r.toTensor(), *names);
    } else if (r.isTensorList()) {
      for (const Tensor& t : r.toTensorList()) name_result(t, *names);
    }
  }
}

}  // namespace
}  // namespace at::inline tessera::native::named

namespace at::inline tessera {
std::vector<std::string> named_rule_operators() {
  std::vector<std::string> out;
  for (const auto& entry : native::named::rules()) out.push_back(entry.first);
  return out;
}
}  // namespace at::inline tessera

TORCH_LIBRARY_IMPL(_, Named, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction(&at::native::named::named_fallback));
}
