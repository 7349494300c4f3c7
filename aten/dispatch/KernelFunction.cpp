#include <aten/dispatch/KernelFunction.h>

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace c10::inline tessera {

namespace {

void callUserBoxed(void* functor, const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  reinterpret_cast<KernelFunction::BoxedKernelFn>(functor)(op, ks, stack);
}

// A fallthrough entry is never called: the dispatcher masks its key out before lookup.
void fallthroughCalled(void*, const OperatorHandle&, DispatchKeySet ks, Stack*) {
  TORCH_INTERNAL_ASSERT(false, "a fallthrough kernel was called for ", ks);
}

}  // namespace

KernelFunction KernelFunction::makeFromBoxedFunction(BoxedKernelFn fn) {
  TORCH_CHECK(fn != nullptr, "a boxed kernel must be a function, not null");
  return makeInternalBoxed(&callUserBoxed, reinterpret_cast<void*>(fn));
}

KernelFunction KernelFunction::makeInternalBoxed(InternalBoxedFn fn, void* functor) {
  KernelFunction k;
  k.boxed_ = fn;
  k.functor_ = functor;
  return k;
}

KernelFunction KernelFunction::makeFallthrough() { return makeInternalBoxed(&fallthroughCalled, nullptr); }

bool KernelFunction::isFallthrough() const { return boxed_ == &fallthroughCalled; }

std::string CppSignature::name() const {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(type_->name(), nullptr, nullptr, &status),
                                                   std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : std::string(type_->name());
}

}  // namespace c10::inline tessera
