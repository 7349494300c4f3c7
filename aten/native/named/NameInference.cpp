#include <aten/native/named/NameInference.h>

#include <c10/util/Exception.h>

#include <algorithm>

namespace at::inline tessera::native::named {

namespace {

// A name matched against a wildcard (or a missing dim) must not appear elsewhere in the
// other list: the two would name different dims the same.
void check_aligned(Dimname name, const DimnameList& names, const DimnameList& other, const char* action) {
  if (name.isWildcard()) return;
  TORCH_CHECK(std::find(other.begin(), other.end(), name) == other.end(), "Misaligned dims when attempting to ", action,
              " dims ", c10::namesToString(names), " and dims ", c10::namesToString(other), ": dim ", name,
              " appears in a different position from the right across both lists.");
}

// torch's matmul messages name each dim with where it came from: 'B' (index 0 of ['B', 'N']).
std::string origin(const DimnameList& names, size_t index) {
  return c10::str(names[index], " (index ", index, " of ", c10::namesToString(names), ")");
}

}  // namespace

DimnameList unify_from_right(const DimnameList& a, const DimnameList& b, const char* action) {
  const size_t n = std::max(a.size(), b.size());
  DimnameList out(n);
  for (size_t i = 0; i < n; ++i) {  // i counts from the right
    const Dimname x = i < a.size() ? a[a.size() - 1 - i] : Dimname::wildcard();
    const Dimname y = i < b.size() ? b[b.size() - 1 - i] : Dimname::wildcard();
    // As torch: names at the same position must match, then a name facing a wildcard must
    // not sit elsewhere in the other list.
    TORCH_CHECK(x.matches(y), "Error when attempting to ", action, " dims ", c10::namesToString(a), " and dims ",
                c10::namesToString(b), ": dim ", x, " and dim ", y,
                " are at the same position from the right but do not match.");
    out[n - 1 - i] = x.unify(y);
    if (x.isWildcard() || y.isWildcard()) {
      check_aligned(x, a, b, action);
      check_aligned(y, b, a, action);
    }
  }
  return out;
}

DimnameList reduce_names(const DimnameList& names, const std::vector<int64_t>& reduced, bool keepdim) {
  if (keepdim) return names;
  DimnameList out;
  for (size_t d = 0; d < names.size(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(d)) == reduced.end()) out.push_back(names[d]);
  }
  return out;
}

DimnameList matmul_names(const DimnameList& self, const DimnameList& other) {
  TORCH_CHECK(!self.empty() && !other.empty(), "both arguments to matmul need to be at least 1D, but they are ",
              self.size(), "D and ", other.size(), "D");
  // Batch dims (all but the last two) broadcast; torch names each side's origin in errors.
  const size_t self_batch = self.size() > 2 ? self.size() - 2 : 0;
  const size_t other_batch = other.size() > 2 ? other.size() - 2 : 0;
  const size_t n = std::max(self_batch, other_batch);
  DimnameList out(n);
  for (size_t i = 0; i < n; ++i) {  // from the right of the batch dims
    const bool in_s = i < self_batch, in_o = i < other_batch;
    const size_t si = self_batch - 1 - i, oi = other_batch - 1 - i;
    if (in_s && in_o) {
      const Dimname x = self[si], y = other[oi];
      if (x.isWildcard() || y.isWildcard() || x == y) {
        // A name matched with a wildcard must not be a name the wildcard's side has elsewhere.
        const Dimname named = x.isWildcard() ? y : x;
        const DimnameList& wild_side = x.isWildcard() ? self : other;
        const size_t wi = x.isWildcard() ? si : oi;
        const size_t ni = x.isWildcard() ? oi : si;
        const DimnameList& named_side = x.isWildcard() ? other : self;
        TORCH_CHECK(
            named.isWildcard() || x == y || std::find(wild_side.begin(), wild_side.end(), named) == wild_side.end(),
            "matmul: Cannot match ", origin(named_side, ni), " with ", origin(wild_side, wi),
            " because the latter names already have ", named, ". Are your tensors misaligned?");
        out[n - 1 - i] = x.unify(y);
      } else {
        TORCH_CHECK(false, "matmul: Expected ", origin(self, si), " to match ", origin(other, oi),
                    " but they do not match.");
      }
    } else {
      out[n - 1 - i] = in_s ? self[si] : other[oi];
    }
  }
  if (self.size() >= 2) out.push_back(self[self.size() - 2]);
  if (other.size() >= 2) out.push_back(other[other.size() - 1]);
  for (size_t i = 0; i < out.size(); ++i) {
    TORCH_CHECK(out[i].isWildcard() ||
                    std::find(out.begin() + static_cast<std::ptrdiff_t>(i) + 1, out.end(), out[i]) == out.end(),
                "Matrix multiplying ", c10::tensorNamesToString(self), " with ", c10::tensorNamesToString(other),
                " would produce output tensor with duplicate names ", c10::namesToString(out),
                ". Please rename the input tensors with `Tensor.rename` to prevent this.");
  }
  return out;
}

void check_out_names(const Tensor& out, const DimnameList& names) {
  if (!out.has_names()) return;
  const DimnameList current = names_of(out);
  TORCH_CHECK(current == names, "Name mismatch: specified out tensor with names ", c10::namesToString(current),
              " are not the same as the computed output names ", c10::namesToString(names),
              ". Please rename the out tensor's dims with `Tensor.rename`.");
}

Tensor named_result(Tensor t, const DimnameList& names) {
  if (t.dim() == static_cast<int64_t>(names.size())) internal_set_names_inplace(t, names);
  return t;
}

}  // namespace at::inline tessera::native::named
