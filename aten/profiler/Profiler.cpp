// The Profiler key's fallback and the session it records into. One session at a time;
// each profiling thread appends to its own buffer (no lock per event), and disable()
// gathers them. The key sits above every other wrapper key, so a call is timed whole
// (autograd recording included), and a kernel's own operator calls, which start again at
// the top, are timed as nested events, as torch's profiler shows them.
#include <aten/profiler/Profiler.h>

#include <aten/dispatch/Dispatcher.h>
#include <aten/library.h>
#include <c10/core/ScalarType.h>
#include <c10/core/ThreadLocalState.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

namespace at::inline tessera::profiler {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A thread's events. Its own thread writes them; the mutex (uncontended but for disable())
// lets disable() read a buffer whose thread is still finishing a call.
struct ThreadBuffer {
  uint64_t thread = 0;
  std::mutex mu;
  std::vector<Event> events;

  size_t add(Event e) {
    std::lock_guard<std::mutex> g(mu);
    events.push_back(std::move(e));
    return events.size() - 1;
  }
  void finish(size_t index, int64_t end) {
    std::lock_guard<std::mutex> g(mu);
    if (index < events.size()) events[index].end_ns = end;
  }
};

struct Session {
  ProfilerConfig config;
  std::atomic<uint64_t> sequence{0};
  std::mutex mu;                                         // guards buffers
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;    // one per thread that recorded
};

std::mutex g_session_mu;
std::shared_ptr<Session> g_session;  // under g_session_mu
std::atomic<uint64_t> g_generation{0};

struct ThreadState {
  uint64_t generation = 0;  // the session this thread's buffer belongs to
  std::shared_ptr<Session> session;
  std::shared_ptr<ThreadBuffer> buffer;
};
thread_local ThreadState t_state;
std::atomic<uint64_t> g_thread_ids{0};
thread_local uint64_t t_thread_id = 0;

void include_key(bool on) {
  auto& tls = c10::thread_local_state();
  tls.included = on ? tls.included.add(c10::DispatchKey::Profiler) : tls.included.remove(c10::DispatchKey::Profiler);
}

// The calling thread's buffer in the current session, or null when this thread is not
// profiling (its session ended).
ThreadBuffer* buffer() {
  if (t_state.generation != g_generation.load(std::memory_order_acquire) || !t_state.session) return nullptr;
  return t_state.buffer.get();
}

void attach(const std::shared_ptr<Session>& session, uint64_t generation) {
  if (t_thread_id == 0) t_thread_id = ++g_thread_ids;
  auto buf = std::make_shared<ThreadBuffer>();
  buf->thread = t_thread_id;
  {
    std::lock_guard<std::mutex> g(session->mu);
    session->buffers.push_back(buf);
  }
  t_state = ThreadState{generation, session, std::move(buf)};
  include_key(true);
}

// A dtype as torch's traces name it (its C++ element type: "float", "long int", ...).
const char* element_type_name(c10::ScalarType t) {
  switch (t) {
    case c10::kFloat: return "float";
    case c10::kDouble: return "double";
    case c10::kHalf: return "c10::Half";
    case c10::kBFloat16: return "c10::BFloat16";
    case c10::kLong: return "long int";
    case c10::kInt: return "int";
    case c10::kShort: return "short int";
    case c10::kChar: return "signed char";
    case c10::kByte: return "unsigned char";
    case c10::kBool: return "bool";
    case c10::kComplexFloat: return "c10::complex<float>";
    case c10::kComplexDouble: return "c10::complex<double>";
    case c10::kComplexHalf: return "c10::complex<c10::Half>";
    default: return c10::toString(t);
  }
}

void record_inputs(Event& e, const c10::FunctionSchema& schema, const c10::Stack& stack) {
  const size_t n = schema.arguments().size();
  e.shapes.reserve(n);
  e.dtypes.reserve(n);
  for (size_t i = stack.size() - n; i < stack.size(); ++i) {
    const c10::IValue& v = stack[i];
    if (v.isTensor() && v.toTensor().defined()) {
      const at::Tensor& t = v.toTensor();
      e.shapes.emplace_back(t.sizes().begin(), t.sizes().end());
      e.dtypes.emplace_back(element_type_name(t.scalar_type()));
    } else {
      e.shapes.emplace_back();
      e.dtypes.emplace_back(v.isNone() ? "" : std::string(v.tagKind()));
    }
  }
}

void profiler_fallback(const c10::OperatorHandle& op, c10::DispatchKeySet ks, c10::Stack* stack) {
  const c10::DispatchKeySet below = ks & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, c10::DispatchKey::Profiler);
  ThreadBuffer* buf = buffer();
  if (buf == nullptr) {  // the session ended while this thread still had the key: drop it
    include_key(false);
    op.redispatchBoxed(below, stack);
    return;
  }
  Event e;
  e.name = op.operator_name().name;
  e.thread = buf->thread;
  e.sequence = t_state.session->sequence.fetch_add(1, std::memory_order_relaxed);
  if (t_state.session->config.record_shapes) record_inputs(e, op.schema(), *stack);
  // Keep the buffer alive across the call: a session ended inside it drops t_state's.
  std::shared_ptr<ThreadBuffer> keep = t_state.buffer;
  e.start_ns = now_ns();
  const size_t index = buf->add(std::move(e));
  op.redispatchBoxed(below, stack);
  buf->finish(index, now_ns());
}

TORCH_LIBRARY_IMPL(_, Profiler, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction(&profiler_fallback)); }

}  // namespace

void enable(const ProfilerConfig& config) {
  std::lock_guard<std::mutex> g(g_session_mu);
  TORCH_CHECK(!g_session, "Profiler is already enabled (one profiling session at a time)");
  auto session = std::make_shared<Session>();
  session->config = config;
  g_session = session;
  const uint64_t generation = ++g_generation;
  attach(session, generation);
}

void enable_on_this_thread() {
  std::shared_ptr<Session> session;
  {
    std::lock_guard<std::mutex> g(g_session_mu);
    TORCH_CHECK(g_session, "no profiling session is running");
    session = g_session;
  }
  if (buffer() == nullptr) attach(session, g_generation.load());
}

bool is_enabled() {
  std::lock_guard<std::mutex> g(g_session_mu);
  return g_session != nullptr;
}

std::vector<Event> disable() {
  std::shared_ptr<Session> session;
  {
    std::lock_guard<std::mutex> g(g_session_mu);
    TORCH_CHECK(g_session, "Profiler is not enabled");
    session = std::move(g_session);
    g_session.reset();
    ++g_generation;  // every thread's buffer is now stale; their key goes at their next call
  }
  include_key(false);
  t_state = ThreadState{};
  std::vector<Event> events;
  std::lock_guard<std::mutex> g(session->mu);
  for (const auto& buf : session->buffers) {
    std::lock_guard<std::mutex> gb(buf->mu);
    for (Event& e : buf->events) {
      if (e.end_ns != 0) events.push_back(std::move(e));  // calls still running are left out
    }
    buf->events.clear();
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.sequence < b.sequence; });
  return events;
}

uint64_t enter_range(std::string name) {
  ThreadBuffer* buf = buffer();
  if (buf == nullptr) return 0;
  Event e;
  e.name = std::move(name);
  e.thread = buf->thread;
  e.sequence = t_state.session->sequence.fetch_add(1, std::memory_order_relaxed);
  e.user_range = true;
  e.start_ns = now_ns();
  const size_t index = buf->add(std::move(e));
  return (t_state.generation << 32) + index + 1;  // the session and the index, never 0
}

void exit_range(uint64_t handle) {
  ThreadBuffer* buf = buffer();
  if (handle == 0 || buf == nullptr || handle >> 32 != t_state.generation) return;
  buf->finish(static_cast<size_t>(handle & 0xffffffffu) - 1, now_ns());
}

}  // namespace at::inline tessera::profiler
