// How many bytes of storage a strided tensor's geometry reaches, computed with every
// product and sum checked: the bounds check behind as_strided, empty_strided, resize and
// every import of foreign memory (numpy, DLPack, checkpoints).
#pragma once

#include <c10/macros/Export.h>
#include <c10/util/ArrayRef.h>

#include <cstddef>
#include <cstdint>

namespace c10::inline tessera {

// The bytes of storage a strided tensor reaches: (storage_offset + 1 + the sum over
// non-empty dims of (size - 1) * stride) * itemsize, or 0 when it has no elements. Negative
// sizes, strides or offsets are errors, and so is any overflow, for empty tensors too, and a
// stride whose byte size overflows (even on a dim of size 1): every offset a view derives
// from a tensor's geometry, and every byte step a kernel takes, then fits in int64.
C10_API size_t computeStorageNbytes(IntArrayRef sizes, IntArrayRef strides, size_t itemsize,
                                    int64_t storage_offset = 0);

}  // namespace c10::inline tessera
