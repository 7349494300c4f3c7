// libFuzzer target for c10::computeStorageNbytes, the bounds check behind as_strided,
// set_, resize, empty_strided and every import of foreign memory (numpy, DLPack,
// checkpoints): for any geometry it must return exactly the bytes the farthest element
// ends at (0 without elements), or refuse with c10::Error exactly when a size, stride or
// offset is negative or some byte offset would not fit in int64. The oracle recomputes
// that in 128-bit arithmetic, where nothing here can overflow.
#include <c10/core/StorageBounds.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace {

// Reads little pieces of the input; biased towards the values that break arithmetic
// (0, 1, near powers of two, near INT64_MAX / itemsize) as well as raw 64-bit words.
struct Reader {
  const uint8_t* data;
  size_t size;
  uint8_t byte() {
    if (size == 0) return 0;
    --size;
    return *data++;
  }
  int64_t word() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | byte();
    return static_cast<int64_t>(v);
  }
  int64_t value() {
    const uint8_t kind = byte();
    switch (kind % 8) {
      case 0: return kind / 8;                                   // 0 .. 31
      case 1: return int64_t{1} << (byte() % 63);                // powers of two
      case 2: return (int64_t{1} << (byte() % 63)) - 1;
      case 3: return std::numeric_limits<int64_t>::max() - (byte() % 17);
      case 4: return std::numeric_limits<int64_t>::max() / (2 + byte() % 15) + (byte() % 3) - 1;
      case 5: return -static_cast<int64_t>(byte() % 4);           // negatives must be refused
      case 6: return std::numeric_limits<int64_t>::min() + byte();
      default: return word();
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in{data, size};
  static constexpr size_t kItemsizes[] = {1, 2, 4, 8, 16};
  const size_t itemsize = kItemsizes[in.byte() % 5];
  const size_t ndim = in.byte() % 9;
  std::vector<int64_t> sizes(ndim), strides(ndim);
  for (size_t d = 0; d < ndim; ++d) {
    sizes[d] = in.value();
    strides[d] = in.value();
  }
  const int64_t offset = in.value();

  using i128 = __int128;
  const i128 kMax = std::numeric_limits<int64_t>::max();
  bool valid = offset >= 0;
  bool empty = false;
  i128 last = offset;
  for (size_t d = 0; d < ndim; ++d) {
    valid = valid && sizes[d] >= 0 && strides[d] >= 0 && i128{strides[d]} * i128(itemsize) <= kMax;
    if (sizes[d] == 0) empty = true;
    if (sizes[d] > 0 && strides[d] >= 0) last += i128{sizes[d] - 1} * i128{strides[d]};
    if (last > kMax) last = kMax + 1;  // past int64 already: saturate so 128 bits suffice
  }
  const i128 end = (last + 1) * i128(itemsize);
  valid = valid && end <= kMax;
  const size_t expected = valid && !empty ? static_cast<size_t>(end) : 0;

  bool refused = false;
  size_t got = 0;
  try {
    got = c10::computeStorageNbytes(sizes, strides, itemsize, offset);
  } catch (const c10::Error&) {
    refused = true;
  }
  if (refused == valid || (!refused && got != expected)) {
    std::fprintf(stderr, "computeStorageNbytes disagrees with the oracle: itemsize %zu, offset %lld, ndim %zu\n",
                 itemsize, static_cast<long long>(offset), ndim);
    for (size_t d = 0; d < ndim; ++d) {
      std::fprintf(stderr, "  size %lld stride %lld\n", static_cast<long long>(sizes[d]),
                   static_cast<long long>(strides[d]));
    }
    std::fprintf(stderr, "  %s, got %zu, expected %s %zu\n", refused ? "refused" : "accepted", got,
                 valid ? "accept" : "refuse", expected);
    std::abort();
  }
  return 0;
}
