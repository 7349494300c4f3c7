#include <aten/native/DispatchStub.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace at::inline tessera::native {

namespace {

bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool fma = ecx & (1u << 12), osxsave = ecx & (1u << 27), avx = ecx & (1u << 28), f16c = ecx & (1u << 29);
  if (!(fma && osxsave && avx && f16c)) return false;
  // The OS must save the xmm and ymm state (XCR0 bits 1 and 2).
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 0x6u) != 0x6u) return false;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return ebx & (1u << 5);
#else
  return false;
#endif
}

void warn_to_stderr(const char* message) { std::fprintf(stderr, "[tessera] warning: %s\n", message); }

}  // namespace

namespace detail {

CPUCapability best_cpu_capability() {
#if defined(TESSERA_CPU_AVX2_KERNELS)
  constexpr bool kAvx2Compiled = true;
#else
  constexpr bool kAvx2Compiled = false;  // e.g. the sanitizer build
#endif
  return kAvx2Compiled && cpu_has_avx2() ? CPUCapability::AVX2 : CPUCapability::DEFAULT;
}

CPUCapability choose_cpu_capability(const char* requested, CPUCapability best, void (*warn)(const char*)) {
  if (requested == nullptr || *requested == '\0') return best;
  for (int i = 0; i < kNumCPUCapabilities; ++i) {
    const auto c = static_cast<CPUCapability>(i);
    if (strcasecmp(requested, cpu_capability_name(c)) != 0) continue;
    if (c <= best) return c;
    if (warn) {
      char message[160];
      std::snprintf(message, sizeof(message), "TESSERA_CPU_CAPABILITY=%s is not supported by this CPU or build; using %s",
                    requested, cpu_capability_name(best));
      warn(message);
    }
    return best;
  }
  if (warn) {
    char message[160];
    std::snprintf(message, sizeof(message), "TESSERA_CPU_CAPABILITY=%s is not one of default, avx2; using %s", requested,
                  cpu_capability_name(best));
    warn(message);
  }
  return best;
}

void no_kernel_registered(const char* stub) {
  TORCH_INTERNAL_ASSERT(false, stub, ": no CPU kernel was registered for any capability");
}

}  // namespace detail

}  // namespace at::inline tessera::native

namespace at::inline tessera {

CPUCapability get_cpu_capability() {
  // A function-local static: decided once, thread-safely, on first use (never at load).
  static const CPUCapability capability =
      native::detail::choose_cpu_capability(std::getenv("TESSERA_CPU_CAPABILITY"),
                                            native::detail::best_cpu_capability(), native::warn_to_stderr);
  return capability;
}

const char* cpu_capability_name(CPUCapability c) {
  switch (c) {
    case CPUCapability::DEFAULT:
      return "default";
    case CPUCapability::AVX2:
      return "avx2";
  }
  return "unknown";
}

const char* cpu_capability() { return cpu_capability_name(get_cpu_capability()); }

}  // namespace at::inline tessera
