// The kinds of device a tensor can live on. Tessera knows three: CPU, CUDA and Meta
// (shape and dtype only, no data). Device pairs a type with an index.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>
#include <ostream>
#include <string>

namespace c10::inline tessera {

enum class DeviceType : int8_t {
  CPU = 0,
  CUDA = 1,
  Meta = 2,
};
constexpr int kNumDeviceTypes = 3;

constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kMeta = DeviceType::Meta;

// "cpu", "cuda", "meta": the spelling used in device strings and messages.
C10_API const char* DeviceTypeName(DeviceType type);
C10_API std::ostream& operator<<(std::ostream& os, DeviceType type);

}  // namespace c10::inline tessera
