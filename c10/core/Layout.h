// How a tensor's elements are stored: dense with strides, or one of the sparse formats.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>
#include <ostream>

namespace c10::inline tessera {

enum class Layout : int8_t { Strided = 0, SparseCoo = 1, SparseCsr = 2 };
constexpr int kNumLayouts = 3;

constexpr Layout kStrided = Layout::Strided;
constexpr Layout kSparse = Layout::SparseCoo;
constexpr Layout kSparseCsr = Layout::SparseCsr;

// "strided", "sparse_coo", "sparse_csr": torch's Python names without the "torch." prefix.
C10_API const char* LayoutName(Layout layout);
C10_API std::ostream& operator<<(std::ostream& os, Layout layout);

}  // namespace c10::inline tessera
