// A tour of Tessera's core types, written as a user's app: it includes only the installed
// umbrella header and links Tessera::c10.
#include <c10/c10.h>

#include <cstring>
#include <iostream>

int main() {
  // Type promotion follows PyTorch's table.
  std::cout << "promote(Int, Float) = " << c10::promoteTypes(c10::kInt, c10::kFloat) << "\n";
  std::cout << "promote(Byte, Char) = " << c10::promoteTypes(c10::kByte, c10::kChar) << "\n";
  std::cout << "promote(Half, BFloat16) = " << c10::promoteTypes(c10::kHalf, c10::kBFloat16) << "\n";

  // Reduced-precision numbers round to nearest even.
  c10::Half h(1.0f / 3.0f);
  c10::BFloat16 b(1.0f / 3.0f);
  std::cout << "1/3 as Half = " << static_cast<float>(h) << ", as BFloat16 = " << static_cast<float>(b) << "\n";

  // Devices parse and print as torch's do; a bad one is a clear error.
  c10::Device d("cuda:1");
  std::cout << "device " << d << " has index " << int(d.index()) << "\n";
  try {
    c10::Device bad("gpu");
  } catch (const c10::Error& e) {
    std::cout << "Device(\"gpu\") -> " << e.what() << "\n";
  }

  // A 2x3 float tensor's TensorImpl over freshly allocated CPU storage.
  c10::Storage storage(c10::StorageImpl::use_byte_size_t{}, 6 * sizeof(float), c10::GetCPUAllocator());
  auto t = c10::make_intrusive<c10::TensorImpl>(storage, c10::kFloat);
  t->set_sizes_contiguous({2, 3});
  float values[6] = {1, 2, 3, 4, 5, 6};
  std::memcpy(t->data(), values, sizeof values);
  std::cout << "tensor sizes " << t->sizes() << " strides " << t->strides() << " numel " << t->numel()
            << " contiguous " << std::boolalpha << t->is_contiguous() << " keys " << t->key_set() << "\n";

  // Its transpose is a view: same storage, swapped strides, not contiguous.
  auto tt = c10::make_intrusive<c10::TensorImpl>(storage, c10::kFloat);
  tt->set_sizes_and_strides({3, 2}, {1, 3});
  tt->set_version_counter(t->version_counter());
  std::cout << "transpose sizes " << tt->sizes() << " strides " << tt->strides()
            << " contiguous " << tt->is_contiguous() << "\n";
  return 0;
}
