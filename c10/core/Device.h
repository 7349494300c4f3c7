// Device: a device type plus an optional index ("cpu", "cuda:1", "meta").
// Parsed from and printed to torch's device strings.
#pragma once

#include <c10/core/DeviceType.h>

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace c10::inline tessera {

using DeviceIndex = int8_t;

class C10_API Device {
 public:
  // index -1 means "the current device of that type".
  constexpr Device(DeviceType type, DeviceIndex index = -1) : type_(type), index_(index) {}  // NOLINT: implicit as in torch
  // Parses "cpu", "cuda", "cuda:1", "meta"; raises c10::Error for anything else.
  explicit Device(std::string_view spec);
  Device(const char* spec) : Device(std::string_view(spec)) {}  // NOLINT: implicit as in torch
  Device(const std::string& spec) : Device(std::string_view(spec)) {}  // NOLINT

  constexpr DeviceType type() const { return type_; }
  constexpr DeviceIndex index() const { return index_; }
  constexpr bool has_index() const { return index_ != -1; }
  constexpr bool is_cpu() const { return type_ == DeviceType::CPU; }
  constexpr bool is_cuda() const { return type_ == DeviceType::CUDA; }
  constexpr bool is_meta() const { return type_ == DeviceType::Meta; }
  void set_index(DeviceIndex index) { index_ = index; }

  constexpr bool operator==(const Device& other) const = default;

  // "cpu", "cuda", "cuda:1".
  std::string str() const;

 private:
  DeviceType type_;
  DeviceIndex index_;
};

C10_API std::ostream& operator<<(std::ostream& os, const Device& device);

}  // namespace c10::inline tessera

template <>
struct std::hash<c10::Device> {
  size_t operator()(const c10::Device& d) const noexcept {
    return std::hash<int>()((static_cast<int>(d.type()) << 16) | static_cast<uint8_t>(d.index()));
  }
};
