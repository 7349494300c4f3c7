// Named tensors at the ATen level: reading and setting a tensor's dim names with torch's
// checks and messages, the rename/refine_names/align_to family, and NoNamesGuard, under
// which operators run as if no tensor had names (the Named key is excluded).
#pragma once

#include <aten/core/Tensor.h>
#include <c10/core/NamedTensor.h>
#include <c10/core/ThreadLocalState.h>

#include <optional>
#include <string>
#include <vector>

namespace at::inline tessera {

using c10::Dimname;
using c10::DimnameList;

// t's names, one per dim: wildcards throughout when t is unnamed.
TORCH_API DimnameList names_of(const Tensor& t);
// Raises torch's errors for a wrong count or a duplicate basic name.
TORCH_API void check_names_valid_for(const Tensor& t, const DimnameList& names);
TORCH_API void check_no_duplicate_names(const DimnameList& names);
// The position of a named dim in t, with torch's errors for a wildcard and a missing name.
TORCH_API int64_t dimname_to_position(const Tensor& t, Dimname dim);
TORCH_API std::vector<int64_t> dimnames_to_positions(const Tensor& t, ArrayRef<Dimname> dims);
// Sets t's names in place (nullopt or all wildcards: unnamed) after those checks.
TORCH_API void internal_set_names_inplace(const Tensor& t, const std::optional<DimnameList>& names);

// A view of self (the alias operator: AliasBackward0) carrying `names` (nullopt: none).
TORCH_API Tensor rename(const Tensor& self, const std::optional<DimnameList>& names);
// self's names made more specific: wildcards may become names, names must stay.
TORCH_API Tensor refine_names(const Tensor& self, const DimnameList& names);
// A view (as_strided) permuted into `names` order; names self lacks become size-1 dims.
// With `ellipsis_idx`, self's dims absent from `order` fill that position in their order.
TORCH_API Tensor align_to(const Tensor& self, const DimnameList& names);
TORCH_API Tensor align_to(const Tensor& self, const DimnameList& order, int64_t ellipsis_idx);
TORCH_API Tensor align_as(const Tensor& self, const Tensor& other);

// The aten operators ("name.overload") whose names the Named fallback propagates.
TORCH_API std::vector<std::string> named_rule_operators();

// Operators called under it never see names: the names fallback runs kernels so, and the
// autograd engine runs backward so (grads are always unnamed, as in torch).
class NoNamesGuard {
 public:
  NoNamesGuard() : guard_(c10::DispatchKey::Named) {}

 private:
  c10::impl::ExcludeDispatchKeyGuard guard_;
};

}  // namespace at::inline tessera
