// Custom classes: C++ types a library exposes to schemas and to Python, as torch::class_
// does. An operator may take or return `__torch__.torch.classes.<ns>.<Name>` (quantized::
// linear's packed weights are one); the object travels boxed as an IValue Object, and
// Python sees it as a tessera.ScriptObject whose methods are the ones registered here.
//
//   TORCH_LIBRARY(myns, m) {
//     m.class_<Counter>("Counter").def("value", &Counter::value);
//   }
#pragma once

#include <aten/core/IValue.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace c10::inline tessera {

// A method takes its object and arguments from the stack and leaves its result there.
using BoxedMethod = std::function<void(Stack&)>;

struct CustomClassType {
  std::string qualified_name;  // __torch__.torch.classes.<ns>.<Name>
  // The C++ class's mangled name: a type_info would dangle once its library is unloaded.
  // (Two libraries' classes of one name in anonymous namespaces share it: register such a
  // class under a named namespace.)
  std::string cpp_type;
  // Live registrations (a library's, until it is unloaded): one at a time.
  int owners = 0;
  // Methods: registered by the class's library and removed when it is unloaded.
  std::map<std::string, BoxedMethod, std::less<>> methods;
  // def_pickle's second half: takes a state from the stack, leaves a new object there.
  BoxedMethod from_state;
};

// Registers (ns, name) for the C++ class `type`, or takes it back when its registration was
// removed (a library unloaded and loaded again); a live registration of the name is an
// error, as in torch. The entry lives for the process, so a boxed object never points at a
// freed class; its methods go with the registration (remove_custom_class_methods).
// `code` is an address in the registering library's code: the library is kept mapped from
// then on, since the class's objects (and their destructors) may outlive its unloading.
TORCH_API CustomClassType& register_custom_class(const std::string& ns, const std::string& name,
                                                 const std::type_info& type, const void* code);
TORCH_API void add_custom_class_method(CustomClassType& type, std::string name, BoxedMethod method);
TORCH_API void set_custom_class_from_state(CustomClassType& type, BoxedMethod from_state);
// Ends a registration: its methods and def_pickle constructor go.
TORCH_API void remove_custom_class_methods(CustomClassType& type);
// The class named "__torch__.torch.classes.<ns>.<Name>" (or "<ns>.<Name>"); null if none.
TORCH_API const CustomClassType* find_custom_class(std::string_view qualified_name);
// A copy of the method `name` of `type`; empty when there is none.
TORCH_API BoxedMethod find_custom_class_method(const CustomClassType& type, std::string_view name);
// A copy of the class's def_pickle constructor; empty when it has none.
TORCH_API BoxedMethod find_custom_class_from_state(const CustomClassType& type);

}  // namespace c10::inline tessera

namespace torch::inline tessera {

template <class T>
class class_ {
  static_assert(std::is_base_of_v<CustomClassHolder, T>, "torch::class_<T> needs T to derive from CustomClassHolder");

 public:
  // Prefer Library::class_ (m.class_<T>("Name")): it removes the methods on unload.
  class_(const std::string& ns, const std::string& name)
      : type_(&c10::register_custom_class(ns, name, typeid(T), reinterpret_cast<const void*>(&code_anchor))) {}

  // A method without arguments besides the object: a member function (`&T::unpack`) or a
  // callable taking `const c10::intrusive_ptr<T>&`. Its result is boxed like a kernel's.
  template <typename F>
  class_& def(std::string name, F f) {
    c10::add_custom_class_method(*type_, std::move(name), [f = std::move(f)](c10::Stack& stack) {
      TORCH_CHECK(!stack.empty(), "a method call needs its object on the stack");
      c10::intrusive_ptr<T> self = stack.back().template to<c10::intrusive_ptr<T>>();
      stack.pop_back();
      if constexpr (std::is_member_function_pointer_v<F>) {
        push_result(stack, ((*self).*f)());
      } else {
        static_assert(std::is_invocable_v<F, const c10::intrusive_ptr<T>&>,
                      "a method takes the object only (const c10::intrusive_ptr<T>&)");
        push_result(stack, f(self));
      }
    });
    return *this;
  }
  // What pickling needs: `get` turns an object into a state (a method, __getstate__), `set`
  // makes a new object from one (`c10::intrusive_ptr<T>(c10::IValue state)`), so that
  // copy.deepcopy, pickle and torch.save of a ScriptObject work.
  template <typename GetState, typename SetState>
  class_& def_pickle(GetState get, SetState set) {
    def("__getstate__", std::move(get));
    c10::set_custom_class_from_state(*type_, [set = std::move(set)](c10::Stack& stack) {
      TORCH_CHECK(!stack.empty(), "__setstate__ needs a state on the stack");
      c10::IValue state = std::move(stack.back());
      stack.pop_back();
      c10::intrusive_ptr<T> object = set(std::move(state));
      stack.emplace_back(std::move(object));
    });
    return *this;
  }

  c10::CustomClassType& type() const { return *type_; }

 private:
  // A function emitted in the registering library (T is that library's type).
  static void code_anchor() {}
  template <typename R>
  static void push_result(c10::Stack& stack, R&& r) {
    stack.emplace_back(std::forward<R>(r));
  }
  c10::CustomClassType* type_;
};

}  // namespace torch::inline tessera
