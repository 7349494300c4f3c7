// How dim names flow through an operator, as torch 1.13 defines it: broadcasting unifies
// names from the right, reductions drop the reduced dims, matrix products keep the outer
// dims. The names fallback (NamedFallback.cpp) applies these per its rule table.
#pragma once

#include <aten/core/NamedTensorUtils.h>

#include <cstdint>
#include <vector>

namespace at::inline tessera::native::named {

// The names of a broadcast of a and b (`action` names the op in messages: "broadcast", "cat").
DimnameList unify_from_right(const DimnameList& a, const DimnameList& b, const char* action = "broadcast");
// names without the dims in `reduced` (indices already wrapped); all of them when keepdim.
DimnameList reduce_names(const DimnameList& names, const std::vector<int64_t>& reduced, bool keepdim);
// matmul's output names: the batch dims unified, then self's row and other's column dims.
DimnameList matmul_names(const DimnameList& self, const DimnameList& other);
// Raises when an out= tensor already named differently from the computed names.
void check_out_names(const Tensor& out, const DimnameList& names);

// Composite operators run above the Named key, so the operators inside them would see (and
// mostly refuse) names. The few composites torch names itself (matmul, linear, softmax,
// logsumexp) test this first and, when it holds, compute their names, run again under
// NoNamesGuard and name the result with named_result.
template <class... T>
bool names_pending(const T&... tensors) {
  return ((tensors.defined() && tensors.has_names()) || ...) &&
         !c10::thread_local_state().excluded.has(c10::DispatchKey::Named);
}
// t with `names` (unnamed if its rank differs: the composite raised no error but torch's
// rule does not apply).
Tensor named_result(Tensor t, const DimnameList& names);

}  // namespace at::inline tessera::native::named
