// at::Generator: the user's handle to a GeneratorImpl (torch.Generator). Copies share the
// state; clone() makes an independent one. Random kernels take `Generator?` arguments and
// fall back to the device's default generator when given none.
#pragma once

#include <c10/core/GeneratorImpl.h>
#include <c10/util/Exception.h>

#include <mutex>
#include <ostream>
#include <utility>

namespace at::inline tessera {

using c10::GeneratorImpl;

class TORCH_API Generator {
 public:
  Generator() = default;
  // A null impl gives an undefined handle, as a default-constructed one.
  explicit Generator(c10::intrusive_ptr<GeneratorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_.defined(); }
  GeneratorImpl* get() const { return impl_.get(); }
  const c10::intrusive_ptr<GeneratorImpl>& getIntrusivePtr() const& { return impl_; }
  c10::intrusive_ptr<GeneratorImpl> getIntrusivePtr() && { return std::move(impl_); }
  size_t use_count() const { return impl_.use_count(); }

  // The backend's concrete generator; a generator of another kind (a CUDA generator handed
  // to a CPU kernel) is the caller's mistake, reported as a TypeError.
  template <class Impl>
  Impl* get() const {
    check_defined();
    auto* impl = dynamic_cast<Impl*>(impl_.get());
    TORCH_CHECK_TYPE(impl != nullptr, "expected a generator of another kind but got one for device ",
                     impl_->device(), " (a different backend's generator?)");
    return impl;
  }

  c10::Device device() const { return checked()->device(); }
  c10::DispatchKeySet key_set() const { return checked()->key_set(); }
  void set_current_seed(uint64_t seed) const { checked()->set_current_seed(seed); }
  uint64_t current_seed() const { return checked()->current_seed(); }
  uint64_t seed() const { return checked()->seed(); }
  std::mutex& mutex() const { return checked()->mutex(); }
  Generator clone() const { return Generator(checked()->clone()); }

  // Identity, as torch's: two handles are equal when they share one state.
  friend bool operator==(const Generator& a, const Generator& b) { return a.impl_ == b.impl_; }

 private:
  void check_defined() const { TORCH_CHECK(impl_.defined(), "the Generator is undefined (it has no state)"); }
  GeneratorImpl* checked() const {
    check_defined();
    return impl_.get();
  }

  c10::intrusive_ptr<GeneratorImpl> impl_;
};

template <class Impl, class... Args>
Generator make_generator(Args&&... args) {
  return Generator(c10::make_intrusive<Impl>(std::forward<Args>(args)...));
}

// "Generator(device=cpu)", or "Generator(undefined)".
inline std::ostream& operator<<(std::ostream& os, const Generator& g) {
  if (!g.defined()) return os << "Generator(undefined)";
  return os << "Generator(device=" << g.device() << ")";
}

}  // namespace at::inline tessera
