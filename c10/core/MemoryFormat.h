// The order in which a dense tensor's dimensions are laid out in memory.
// Preserve is only an argument value ("keep the input's format"), never a tensor's format.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>
#include <ostream>

namespace c10::inline tessera {

enum class MemoryFormat : int8_t { Contiguous = 0, Preserve = 1, ChannelsLast = 2, ChannelsLast3d = 3 };
constexpr int kNumMemoryFormats = 4;

// "contiguous_format", "preserve_format", "channels_last", "channels_last_3d": torch's Python names.
C10_API const char* MemoryFormatName(MemoryFormat format);
C10_API std::ostream& operator<<(std::ostream& os, MemoryFormat format);

}  // namespace c10::inline tessera
