// The instruction set Tessera's CPU kernels run with: each per-ISA kernel file is compiled
// once per capability, and the best one this CPU and build support is chosen on first use
// (tessera._C._cpu_capability(); TESSERA_CPU_CAPABILITY lowers it).
#pragma once

#include <c10/macros/Export.h>

#include <cstdint>

namespace at::inline tessera {

enum class CPUCapability : uint8_t { DEFAULT = 0, AVX2 = 1 };
inline constexpr int kNumCPUCapabilities = 2;

// The capability kernels run with: the best the CPU supports (AVX2 needs avx2, fma, f16c
// and the OS saving ymm registers) and the build compiled, lowered by
// TESSERA_CPU_CAPABILITY. Decided once per process.
TORCH_API CPUCapability get_cpu_capability();
// Its name: "default" or "avx2" (tessera._C._cpu_capability()).
TORCH_API const char* cpu_capability();
TORCH_API const char* cpu_capability_name(CPUCapability c);

}  // namespace at::inline tessera
