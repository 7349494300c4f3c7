// How a tensor's elements are stored: dense with strides, or one of the sparse formats.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>
#include <ostream>

namespace c10::inline tessera {

// torch's numbering (the sparse CSC/BSR/BSC layouts will take 4, 5 and 6).
enum class Layout : int8_t { Strided = 0, SparseCoo = 1, SparseCsr = 2, Mkldnn = 3 };
constexpr int kNumLayouts = 4;

constexpr Layout kStrided = Layout::Strided;
constexpr Layout kSparse = Layout::SparseCoo;
constexpr Layout kSparseCsr = Layout::SparseCsr;
constexpr Layout kMkldnn = Layout::Mkldnn;

// "strided", "sparse_coo", "sparse_csr", "_mkldnn": torch's Python names without the "torch." prefix.
C10_API const char* LayoutName(Layout layout);
C10_API std::ostream& operator<<(std::ostream& os, Layout layout);

}  // namespace c10::inline tessera
