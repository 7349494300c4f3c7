#include <autograd/saved_variable_hooks.h>

#include <c10/util/Exception.h>

#include <optional>
#include <vector>

namespace torch::autograd::saved_tensor_hooks {
namespace {
// Per thread, as in torch: a block on one thread never changes what another thread saves.
struct HookState {
  std::vector<SavedVariableHooksFactory> stack;
  std::optional<std::string> disabled_message;
};
thread_local HookState state;
}  // namespace

void push(SavedVariableHooksFactory factory) {
  TORCH_CHECK(!state.disabled_message, *state.disabled_message);
  state.stack.push_back(std::move(factory));
}

void pop() {
  TORCH_CHECK(!state.stack.empty(), "saved_tensors_hooks: pop without a matching push");
  state.stack.pop_back();
}

std::unique_ptr<SavedVariableHooks> make_for_saved_tensor() {
  if (state.stack.empty()) return nullptr;
  return state.stack.back()();
}

void disable(std::string message) {
  // Hooks already active would keep applying inside the block: refused, as torch does.
  TORCH_CHECK(state.stack.empty(), message);
  state.disabled_message = std::move(message);
}

void enable() { state.disabled_message.reset(); }

const std::optional<std::string>& disabled_message() { return state.disabled_message; }

}  // namespace torch::autograd::saved_tensor_hooks
