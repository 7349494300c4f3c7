// Memory for tensors: DataPtr owns one allocation together with its deleter and device;
// an Allocator hands them out. One allocator is registered per device type.
#pragma once

#include <c10/core/Device.h>
#include <c10/util/Exception.h>

#include <cstddef>
#include <memory>

namespace c10::inline tessera {

using DeleterFnPtr = void (*)(void*);

// Owns `ctx` through `deleter`; `data` is the usable address (often equal to ctx).
class C10_API DataPtr {
 public:
  DataPtr() : data_(nullptr), ctx_(nullptr, &noop_delete), device_(DeviceType::CPU) {}
  DataPtr(void* data, Device device) : data_(data), ctx_(nullptr, &noop_delete), device_(device) {}
  DataPtr(void* data, void* ctx, DeleterFnPtr deleter, Device device)
      : data_(data), ctx_(ctx, deleter ? deleter : &noop_delete), device_(device) {}

  void* get() const { return data_; }
  void* get_context() const { return ctx_.get(); }
  DeleterFnPtr get_deleter() const { return ctx_.get_deleter(); }
  Device device() const { return device_; }
  explicit operator bool() const { return data_ != nullptr; }
  // Frees now; the DataPtr becomes empty.
  void clear() {
    ctx_.reset();
    data_ = nullptr;
  }

  static void noop_delete(void*) {}

 private:
  void* data_;
  std::unique_ptr<void, DeleterFnPtr> ctx_;
  Device device_;
};

class C10_API Allocator {
 public:
  virtual ~Allocator();
  // A zero-byte request returns an empty DataPtr on the allocator's device. Failure
  // raises c10::OutOfMemoryError naming the size asked for.
  virtual DataPtr allocate(size_t nbytes) = 0;
  // The deleter when every allocation's context is its data pointer, else nullptr.
  virtual DeleterFnPtr raw_deleter() const { return nullptr; }
};

// The allocator registered for a device type (the CPU one is always present).
C10_API Allocator* GetAllocator(DeviceType type);
// Replaces the allocator for a device type; the previous one stays alive (callers may
// still hold its DataPtrs). Returns the previous allocator.
C10_API Allocator* SetAllocator(DeviceType type, Allocator* allocator);

}  // namespace c10::inline tessera
