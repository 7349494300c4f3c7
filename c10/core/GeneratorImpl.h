// c10::GeneratorImpl: the state behind a random-number generator handle (at::Generator).
// Backends subclass it; random kernels lock mutex() for the duration of a draw so that
// threads sharing one generator see one consistent stream.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/DispatchKeySet.h>
#include <c10/util/intrusive_ptr.h>

#include <cstdint>
#include <mutex>

namespace c10::inline tessera {

class C10_API GeneratorImpl : public intrusive_ptr_target {
 public:
  GeneratorImpl(Device device, DispatchKeySet key_set) : device_(device), key_set_(key_set) {}
  GeneratorImpl& operator=(const GeneratorImpl&) = delete;
  ~GeneratorImpl() override;

  // The seed is the whole user-visible configuration: setting it restarts the stream.
  virtual void set_current_seed(uint64_t seed) = 0;
  virtual uint64_t current_seed() const = 0;
  // Seeds from a nondeterministic source (torch.Generator.seed()) and returns the seed so
  // the run can be reproduced later. Subclasses override only to restrict the range.
  virtual uint64_t seed();

  // An independent generator in the same state: drawing from one leaves the other alone.
  // Not synchronised: a caller sharing this generator across threads holds mutex().
  intrusive_ptr<GeneratorImpl> clone() const;

  Device device() const { return device_; }
  DispatchKeySet key_set() const { return key_set_; }
  // Mutable so that a const handle can still be drawn from under the lock.
  std::mutex& mutex() const { return mutex_; }

 protected:
  // For subclasses' clone_impl(): copies device and keys; the copy gets its own mutex.
  GeneratorImpl(const GeneratorImpl& other) : intrusive_ptr_target(other), device_(other.device_), key_set_(other.key_set_) {}

  // Returns a fresh object (made with make_intrusive) holding a copy of this one's state.
  virtual intrusive_ptr<GeneratorImpl> clone_impl() const = 0;

 private:
  Device device_;
  DispatchKeySet key_set_;
  mutable std::mutex mutex_;
};

// 64 bits from the operating system's entropy source (std::random_device), falling back to
// a clock-based mix where none is available.
C10_API uint64_t nondeterministic_seed();

}  // namespace c10::inline tessera
