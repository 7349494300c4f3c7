// Reading and setting dim names, and the operators that exist for them: rename (an alias
// view), refine_names, align_to (an as_strided view) and align_as, with torch 1.13's checks
// and messages. The `...` forms and keyword renames are expanded in Python
// (tessera/_named_tensor.py), as torch does.
#include <aten/core/NamedTensorUtils.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <memory>

namespace at::inline tessera {

DimnameList names_of(const Tensor& t) {
  const c10::NamedTensorMeta* meta = t.unsafeGetTensorImpl()->named_tensor_meta();
  if (meta != nullptr) return meta->names;
  return DimnameList(static_cast<size_t>(t.dim()), Dimname::wildcard());
}

int64_t dimname_to_position(const Tensor& t, Dimname dim) {
  TORCH_CHECK(!dim.isWildcard(), "Please look up dimensions by name, got: name = None.");
  const DimnameList names = names_of(t);
  const auto it = std::find(names.begin(), names.end(), dim);
  TORCH_CHECK(it != names.end(), "Name ", dim, " not found in ", c10::tensorNamesToString(names), ".");
  return it - names.begin();
}

std::vector<int64_t> dimnames_to_positions(const Tensor& t, ArrayRef<Dimname> dims) {
  std::vector<int64_t> positions;
  positions.reserve(dims.size());
  for (Dimname dim : dims) positions.push_back(dimname_to_position(t, dim));
  return positions;
}

void check_names_valid_for(const Tensor& t, const DimnameList& names) {
  TORCH_CHECK(static_cast<int64_t>(names.size()) == t.dim(), "Number of names (", names.size(),
              ") and number of dimensions in tensor (", t.dim(),
              ") do not match. Attempted to create a tensor with names ", c10::namesToString(names));
  check_no_duplicate_names(names);
}

void check_no_duplicate_names(const DimnameList& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].isWildcard()) continue;
    TORCH_CHECK(std::find(names.begin() + static_cast<std::ptrdiff_t>(i) + 1, names.end(), names[i]) == names.end(),
                "Cannot construct a tensor with duplicate names. Got names: ", c10::namesToString(names), ".");
  }
}

void internal_set_names_inplace(const Tensor& t, const std::optional<DimnameList>& names) {
  if (!names.has_value()) {
    t.unsafeGetTensorImpl()->set_named_tensor_meta(nullptr);
    return;
  }
  check_names_valid_for(t, *names);
  t.unsafeGetTensorImpl()->set_named_tensor_meta(std::make_unique<c10::NamedTensorMeta>(c10::NamedTensorMeta{*names}));
}

Tensor rename(const Tensor& self, const std::optional<DimnameList>& names) {
  if (names.has_value()) check_names_valid_for(self, *names);
  Tensor result;
  {
    NoNamesGuard guard;
    result = at::alias(self);
  }
  internal_set_names_inplace(result, names);
  return result;
}

Tensor refine_names(const Tensor& self, const DimnameList& names) {
  const DimnameList current = names_of(self);
  TORCH_CHECK(current.size() == names.size(), "refine_names: cannot coerce ", c10::tensorNamesToString(current), " to ",
              c10::tensorNamesToString(names), " because they have a different number of dims (", current.size(),
              " and ", names.size(), " respectively).");
  check_names_valid_for(self, names);
  for (size_t i = 0; i < names.size(); ++i) {
    if (current[i] == names[i] || current[i].isWildcard()) continue;
    TORCH_CHECK(names[i].isBasic(), "refine_names: cannot coerce ", c10::tensorNamesToString(current), " to ",
                c10::tensorNamesToString(names), " because ", current[i], " is more specific than ", names[i],
                " at index ", i);
    TORCH_CHECK(false, "refine_names: cannot coerce ", c10::tensorNamesToString(current), " to ",
                c10::tensorNamesToString(names), " because ", current[i], " is different from ", names[i], " at index ",
                i);
  }
  return rename(self, names);
}

namespace {

// The view of self with dims laid out as `names`: out_dims[i] is the dim of self at
// position i, or -1 for a new size-1 dim (stride 0).
Tensor aligned_view(const Tensor& self, const std::vector<int64_t>& out_dims, const DimnameList& names) {
  check_no_duplicate_names(names);  // before a view that would repeat a dim exists
  std::vector<int64_t> sizes(out_dims.size(), 1), strides(out_dims.size(), 0);
  for (size_t i = 0; i < out_dims.size(); ++i) {
    if (out_dims[i] < 0) continue;
    sizes[i] = self.size(out_dims[i]);
    strides[i] = self.stride(out_dims[i]);
  }
  Tensor result;
  {
    NoNamesGuard guard;
    result = at::as_strided(self, sizes, strides, self.storage_offset());
  }
  internal_set_names_inplace(result, names);
  return result;
}

}  // namespace

Tensor align_to(const Tensor& self, const DimnameList& names) {
  const DimnameList current = names_of(self);
  std::vector<int64_t> out_dims(names.size(), -1);
  for (size_t d = 0; d < current.size(); ++d) {
    TORCH_CHECK(current[d].isBasic(), "align_to: All input dims must be named. Found unnamed dim at index ", d, " of ",
                c10::tensorNamesToString(current));
    auto it = std::find(names.begin(), names.end(), current[d]);
    // torch prints the desired names twice here; its text is kept.
    TORCH_CHECK(it != names.end(), "align_to: Cannot find dim ", current[d], " from ", c10::tensorNamesToString(names),
                " in desired alignment ", c10::namesToString(names), ".");
    out_dims[static_cast<size_t>(it - names.begin())] = static_cast<int64_t>(d);
  }
  return aligned_view(self, out_dims, names);
}

Tensor align_to(const Tensor& self, const DimnameList& order, int64_t ellipsis_idx) {
  TORCH_CHECK(ellipsis_idx >= 0 && ellipsis_idx <= static_cast<int64_t>(order.size()), "align_to: ellipsis_idx ",
              ellipsis_idx, " is out of range for ", order.size(), " names");
  const DimnameList current = names_of(self);
  // self's dims that `order` does not mention (unnamed ones included) fill the ellipsis.
  std::vector<int64_t> rest;
  for (size_t d = 0; d < current.size(); ++d) {
    if (current[d].isWildcard() || std::find(order.begin(), order.end(), current[d]) == order.end()) {
      rest.push_back(static_cast<int64_t>(d));
    }
  }
  DimnameList names;
  std::vector<int64_t> out_dims;
  auto place = [&](Dimname name) {
    auto it = std::find(current.begin(), current.end(), name);
    names.push_back(name);
    out_dims.push_back(it == current.end() ? -1 : static_cast<int64_t>(it - current.begin()));
  };
  for (int64_t i = 0; i < ellipsis_idx; ++i) place(order[static_cast<size_t>(i)]);
  for (int64_t d : rest) {
    names.push_back(current[static_cast<size_t>(d)]);
    out_dims.push_back(d);
  }
  for (size_t i = static_cast<size_t>(ellipsis_idx); i < order.size(); ++i) place(order[i]);
  return aligned_view(self, out_dims, names);
}

Tensor align_as(const Tensor& self, const Tensor& other) { return align_to(self, names_of(other)); }

}  // namespace at::inline tessera
