#include <c10/core/StorageBounds.h>
#include <c10/util/Exception.h>
#include <c10/util/safe_numerics.h>

#include <algorithm>
#include <limits>

namespace c10::inline tessera {

size_t computeStorageNbytes(IntArrayRef sizes, IntArrayRef strides, size_t itemsize, int64_t storage_offset) {
  TORCH_CHECK(sizes.size() == strides.size(), "mismatch in length of strides and shape");
  TORCH_CHECK(storage_offset >= 0, "Tensor: invalid storage offset ", storage_offset);
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    TORCH_CHECK(sizes[i] >= 0, "Trying to create tensor with negative dimension ", sizes[i], ": ", sizes);
    TORCH_CHECK(strides[i] >= 0, "as_strided: Negative strides are not supported at the moment, got strides: ",
                strides);
    empty |= sizes[i] == 0;
  }
  int64_t last = storage_offset, bytes = 0;  // `last`: the element index of the farthest element
  bool overflowed = false;
  const int64_t max_stride = std::numeric_limits<int64_t>::max() / static_cast<int64_t>(std::max<size_t>(itemsize, 1));
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t span = 0;
    // Every stride in bytes fits too, even one of a dim of size 0 or 1, which reaches no
    // memory: kernels turn strides into byte steps without asking.
    overflowed |= strides[i] > max_stride;
    if (sizes[i] == 0) continue;
    overflowed |= mul_overflows(sizes[i] - 1, strides[i], &span) || add_overflows(last, span, &last);
  }
  overflowed = overflowed || add_overflows(last, 1, &last) ||
               mul_overflows(last, static_cast<int64_t>(itemsize), &bytes);
  TORCH_CHECK(!overflowed, "Storage size calculation overflowed with sizes=", sizes, " and strides=", strides);
  return empty ? 0 : static_cast<size_t>(bytes);
}

}  // namespace c10::inline tessera
