#include <aten/dispatch/KernelFunction.h>
#include <c10/util/Demangle.h>

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

KernelFunction KernelFunction::makeFromBoxedCallable(BoxedCallable fn) {
  TORCH_CHECK(static_cast<bool>(fn), "a boxed kernel must be callable");
  auto owner = std::make_shared<BoxedCallable>(std::move(fn));
  KernelFunction k = makeInternalBoxed(
      [](void* f, const OperatorHandle& op, DispatchKeySet ks, Stack* stack) { (*static_cast<BoxedCallable*>(f))(op, ks, stack); },
      owner.get());
  k.owner_ = std::move(owner);
  return k;
}

KernelFunction KernelFunction::makeInternalBoxed(InternalBoxedFn fn, void* functor) {
  KernelFunction k;
  k.boxed_ = fn;
  k.functor_ = functor;
  return k;
}

KernelFunction KernelFunction::makeFallthrough() { return makeInternalBoxed(&fallthroughCalled, nullptr); }

bool KernelFunction::isFallthrough() const { return boxed_ == &fallthroughCalled; }

std::string CppSignature::name() const { return demangle(type_->name()); }

}  // namespace c10::inline tessera
