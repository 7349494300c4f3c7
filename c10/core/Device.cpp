#include <c10/core/Device.h>
#include <c10/util/Exception.h>

#include <charconv>
#include <limits>

namespace c10::inline tessera {

namespace {

constexpr DeviceType kAllDeviceTypes[] = {DeviceType::CPU, DeviceType::CUDA, DeviceType::Meta};

DeviceType parseType(std::string_view name, std::string_view spec) {
  for (DeviceType t : kAllDeviceTypes) {
    if (name == DeviceTypeName(t)) return t;
  }
  TORCH_CHECK(false, "Expected one of cpu, cuda, meta device type at start of device string: ", spec);
}

}  // namespace

Device::Device(std::string_view spec) : type_(DeviceType::CPU), index_(-1) {
  TORCH_CHECK(!spec.empty(), "Device string must not be empty");
  // The form first, as torch does: letters or '_' for the type, then optionally ':' and a
  // decimal index without sign or leading zeros. Only then is the type name looked up.
  size_t colon = spec.find(':');
  std::string_view name = spec.substr(0, colon);
  bool well_formed = !name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_") ==
                                          std::string_view::npos;
  int value = -1;
  if (well_formed && colon != std::string_view::npos) {
    std::string_view digits = spec.substr(colon + 1);
    well_formed = !digits.empty() && digits.size() <= 3 &&
                  digits.find_first_not_of("0123456789") == std::string_view::npos &&
                  !(digits.size() > 1 && digits[0] == '0');
    if (well_formed) std::from_chars(digits.data(), digits.data() + digits.size(), value);
  }
  TORCH_CHECK(well_formed && value <= std::numeric_limits<DeviceIndex>::max(), "Invalid device string: '", spec, "'");
  type_ = parseType(name, name);
  index_ = static_cast<DeviceIndex>(value);
}

std::string Device::str() const {
  std::string s = DeviceTypeName(type_);
  if (has_index()) {
    s += ':';
    s += std::to_string(index_);
  }
  return s;
}

std::ostream& operator<<(std::ostream& os, const Device& device) { return os << device.str(); }

}  // namespace c10::inline tessera
