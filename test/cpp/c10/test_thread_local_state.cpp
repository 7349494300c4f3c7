#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

#include <gtest/gtest.h>

#include <thread>

namespace {

using c10::DispatchKey;
using c10::DispatchKeySet;

TEST(ThreadLocalState, GradModeGuardsNestAndRestore) {
  ASSERT_TRUE(c10::GradMode::is_enabled());
  {
    at::NoGradGuard no_grad;
    EXPECT_FALSE(c10::GradMode::is_enabled());
    {
      c10::AutoGradMode enable(true);
      EXPECT_TRUE(c10::GradMode::is_enabled());
    }
    EXPECT_FALSE(c10::GradMode::is_enabled());
  }
  EXPECT_TRUE(c10::GradMode::is_enabled());
}

TEST(ThreadLocalState, GuardsRestoreOnException) {
  try {
    at::NoGradGuard no_grad;
    c10::impl::ExcludeDispatchKeyGuard exclude(DispatchKey::AutogradCPU);
    TORCH_CHECK(false, "boom");
  } catch (const c10::Error&) {
  }
  EXPECT_TRUE(c10::GradMode::is_enabled());
  EXPECT_TRUE(c10::thread_local_state().excluded.empty());
}

TEST(ThreadLocalState, StateIsPerThread) {
  at::NoGradGuard no_grad;
  c10::impl::IncludeDispatchKeyGuard include(DispatchKey::Python);
  bool other_grad = false, other_empty = false;
  std::thread([&] {
    other_grad = c10::GradMode::is_enabled();
    other_empty = c10::thread_local_state().included.empty();
  }).join();
  EXPECT_TRUE(other_grad);
  EXPECT_TRUE(other_empty);
  EXPECT_TRUE(c10::thread_local_state().included.has(DispatchKey::Python));
}

TEST(ThreadLocalState, IncludeExcludeGuardsOnlyUndoWhatTheyAdded) {
  c10::impl::ExcludeDispatchKeyGuard outer(DispatchKey::AutogradCPU);
  {
    c10::impl::ExcludeDispatchKeyGuard inner(DispatchKeySet{DispatchKey::AutogradCPU, DispatchKey::Profiler});
    EXPECT_EQ(c10::thread_local_state().excluded, (DispatchKeySet{DispatchKey::AutogradCPU, DispatchKey::Profiler}));
  }
  // The inner guard must not remove AutogradCPU, which the outer guard put there.
  EXPECT_EQ(c10::thread_local_state().excluded, DispatchKeySet(DispatchKey::AutogradCPU));
  {
    c10::impl::IncludeDispatchKeyGuard inc(DispatchKey::BackendSelect);
    EXPECT_TRUE(c10::thread_local_state().included.has(DispatchKey::BackendSelect));
  }
  EXPECT_TRUE(c10::thread_local_state().included.empty());
}

TEST(ThreadLocalState, InferenceModeExcludesAutogradAndDisablesGrad) {
  EXPECT_FALSE(c10::InferenceMode::is_enabled());
  {
    c10::InferenceMode guard;
    EXPECT_TRUE(c10::InferenceMode::is_enabled());
    EXPECT_FALSE(c10::GradMode::is_enabled());
    const auto& excluded = c10::thread_local_state().excluded;
    EXPECT_TRUE(excluded.has(DispatchKey::AutogradCPU));
    EXPECT_TRUE(excluded.has(DispatchKey::AutogradCUDA));
    EXPECT_TRUE(excluded.has(DispatchKey::AutogradOther));
    EXPECT_TRUE(excluded.has(DispatchKey::ADInplaceOrView));
    {
      c10::InferenceMode off(false);  // as in torch, a way back to recording
      EXPECT_FALSE(c10::InferenceMode::is_enabled());
      EXPECT_TRUE(c10::GradMode::is_enabled());
      EXPECT_FALSE(c10::thread_local_state().excluded.has(DispatchKey::AutogradCPU));
    }
    EXPECT_TRUE(c10::InferenceMode::is_enabled());
    EXPECT_FALSE(c10::GradMode::is_enabled());
  }
  EXPECT_FALSE(c10::InferenceMode::is_enabled());
  EXPECT_TRUE(c10::GradMode::is_enabled());
  EXPECT_TRUE(c10::thread_local_state().excluded.empty());
}

}  // namespace
