// copy_'s element loop, compiled once per ISA (see Copy.h). Rows where both operands are
// contiguous go through copy_row: memcpy for one dtype, whole vectors for float <-> Half
// and BFloat16 on AVX2 (the same bits as c10::Half's scalar conversion, NaNs included),
// and a plain loop the compiler may vectorise otherwise. Strided rows convert one element
// at a time.
#include <aten/core/Dispatch.h>
#include <aten/native/cpu/Loops.h>
#include <aten/native/factory/Copy.h>

#include <cstring>
#include <type_traits>

namespace at::inline tessera::native {
inline namespace CPU_CAPABILITY {
namespace {

template <typename T>
constexpr bool is_reduced_float_v = std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>;

template <typename To, typename From>
void copy_row(To* dst, const From* src, int64_t n) {
  if constexpr (std::is_same_v<To, From>) {
    std::memcpy(static_cast<void*>(dst), static_cast<const void*>(src), static_cast<size_t>(n) * sizeof(To));
    return;
  }
#if defined(CPU_CAPABILITY_AVX2)
  using Vec = vec::Vectorized<float>;
  if constexpr (is_reduced_float_v<To> && std::is_same_v<From, float>) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) vec::store_from_float(dst + i, Vec::loadu(src + i), Vec::loadu(src + i + 8));
    if (i < n) {
      const int64_t rest = n - i;
      vec::store_from_float(dst + i, Vec::loadu(src + i, rest), Vec::loadu(src + i + 8, rest > 8 ? rest - 8 : 0), rest);
    }
    return;
  } else if constexpr (std::is_same_v<To, float> && is_reduced_float_v<From>) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      auto [lo, hi] = vec::load_as_float(src + i);
      lo.store(dst + i);
      hi.store(dst + i + 8);
    }
    if (i < n) {
      const int64_t rest = n - i;
      auto [lo, hi] = vec::load_as_float(src + i, rest);
      lo.store(dst + i, rest);
      if (rest > 8) hi.store(dst + i + 8, rest - 8);
    }
    return;
  }
#endif
  if constexpr (!std::is_same_v<To, From>) {
    for (int64_t i = 0; i < n; ++i) dst[i] = cast<To>(src[i]);
  }
}

template <typename To, typename From>
void copy_loop(TensorIterator& iter) {
  iter.for_each([](char** data, const int64_t* strides, int64_t n0, int64_t n1) {
    const bool contiguous = strides[0] == static_cast<int64_t>(sizeof(To)) && strides[1] == static_cast<int64_t>(sizeof(From));
    for (int64_t j = 0; j < n1; ++j) {
      char* dst = data[0] + j * strides[2];
      const char* src = data[1] + j * strides[3];
      if (contiguous) {
        copy_row(reinterpret_cast<To*>(dst), reinterpret_cast<const From*>(src), n0);
        continue;
      }
      for (int64_t i = 0; i < n0; ++i) {
        *reinterpret_cast<To*>(dst + i * strides[0]) = cast<To>(*reinterpret_cast<const From*>(src + i * strides[1]));
      }
    }
  });
}

void copy_kernel(TensorIterator& iter) {
  dispatch_types<kAllTypes>(iter.dtype(0), "copy_", [&]<typename To>() {
    dispatch_types<kAllTypes>(iter.dtype(1), "copy_", [&]<typename From>() { copy_loop<To, From>(iter); });
  });
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(copy_stub, &copy_kernel);

}  // namespace at::inline tessera::native
