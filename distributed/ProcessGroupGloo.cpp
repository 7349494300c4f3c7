// ProcessGroupGloo's rendezvous, worker thread and point-to-point work. The collectives
// themselves are in GlooCollectives.cpp.
#include <distributed/GlooCommon.h>

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

namespace c10d::inline tessera {

namespace {

// Gloo's rendezvous reads and writes the group's keys through this.
class GlooStore final : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(std::shared_ptr<c10d::Store> store) : store_(std::move(store)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_->set(key, Bytes(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    const Bytes v = store_->get(key);
    return std::vector<char>(v.begin(), v.end());
  }
  void wait(const std::vector<std::string>& keys) override { store_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_->wait(keys, timeout);
  }

 private:
  std::shared_ptr<c10d::Store> store_;
};

// The machine's host name when it resolves to an address this process can bind (as torch
// picks), else the loopback address.
std::string default_hostname() {
  char name[256] = {0};
  if (::gethostname(name, sizeof(name) - 1) == 0) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(name, nullptr, &hints, &found) == 0) {
      bool bindable = false;
      for (addrinfo* a = found; a != nullptr && !bindable; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        bindable = ::bind(fd, a->ai_addr, a->ai_addrlen) == 0;
        ::close(fd);
      }
      ::freeaddrinfo(found);
      if (bindable) return name;
    }
  }
  return "127.0.0.1";
}

class PointToPointWork final : public Work {
 public:
  PointToPointWork(const char* op, at::Tensor tensor, std::unique_ptr<gloo::transport::UnboundBuffer> buffer,
                   bool is_send, std::chrono::milliseconds timeout)
      : Work(op, {tensor}), buffer_(std::move(buffer)), is_send_(is_send), timeout_(timeout) {}

  bool wait(std::chrono::milliseconds timeout) override {
    std::call_once(waited_, [&] {
      try {
        const auto t = timeout == std::chrono::milliseconds::zero() ? timeout_ : timeout;
        const bool ok = is_send_ ? buffer_->waitSend(&peer_, t) : buffer_->waitRecv(&peer_, t);
        TORCH_CHECK(ok, "ProcessGroupGloo::", op_, ": aborted");
        finish();
      } catch (...) {
        finish(gloo_error(op_.c_str()));
      }
    });
    return Work::wait();
  }

  int source_rank() const override {
    TORCH_CHECK(done_, "source_rank(): wait() for the receive first");
    return peer_;
  }

 private:
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer_;
  bool is_send_;
  std::chrono::milliseconds timeout_;
  std::once_flag waited_;
  int peer_ = -1;
};

}  // namespace

std::exception_ptr gloo_error(const char* op) {
  try {
    throw;
  } catch (const c10::Error&) {
    return std::current_exception();
  } catch (const std::exception& e) {
    return std::make_exception_ptr(
        c10::Error(std::string("ProcessGroupGloo::") + op + ": " + e.what(), {__func__, __FILE__, __LINE__}));
  } catch (...) {
    return std::make_exception_ptr(
        c10::Error(std::string("ProcessGroupGloo::") + op + ": unknown error", {__func__, __FILE__, __LINE__}));
  }
}

ProcessGroupGloo::ProcessGroupGloo(std::shared_ptr<Store> store, int rank, int size, Options options)
    : ProcessGroup(rank, size), options_(std::move(options)) {
  TORCH_CHECK(store, "ProcessGroupGloo needs a store");
  gloo::transport::tcp::attr attr;
  if (!options_.interface.empty()) {
    attr.iface = options_.interface;
  } else {
    attr.hostname = options_.hostname.empty() ? default_hostname() : options_.hostname;
  }
  try {
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(options_.timeout);
    GlooStore rendezvous(store);
    context->connectFullMesh(rendezvous, device);
    context_ = std::move(context);
  } catch (const c10::Error& e) {
    TORCH_CHECK(false, "ProcessGroupGloo: rank ", rank, " could not connect to the other ", size - 1,
                " ranks: ", e.msg());
  } catch (const std::exception& e) {
    TORCH_CHECK(false, "ProcessGroupGloo: rank ", rank, " could not connect to the other ", size - 1,
                " ranks: ", e.what());
  }
}

ProcessGroupGloo::~ProcessGroupGloo() = default;

ProcessGroup::WorkPtr ProcessGroupGloo::enqueue(const char* op, std::vector<at::Tensor> outputs,
                                                std::chrono::milliseconds timeout,
                                                std::function<void(uint32_t, std::chrono::milliseconds)> fn) {
  auto work = std::make_shared<Work>(op, std::move(outputs));
  const auto limit = timeout == kUnsetTimeout ? options_.timeout : timeout;
  queue_.push("ProcessGroupGloo", op, [&](uint64_t seq) -> std::function<void()> {
    const auto tag = static_cast<uint32_t>(seq);  // every rank numbers its collectives alike
    return [work, fn = std::move(fn), tag, limit, op] {
      try {
        fn(tag, limit);
        work->finish();
      } catch (...) {
        work->finish(gloo_error(op));
      }
    };
  });
  return work;
}

namespace {
at::Tensor single_tensor(std::vector<at::Tensor>& tensors, const char* op) {
  TORCH_CHECK(tensors.size() == 1, "ProcessGroupGloo::", op, ": takes a single tensor, got ", tensors.size());
  check_tensors(tensors, op);
  return tensors[0];
}
}  // namespace

ProcessGroup::WorkPtr ProcessGroupGloo::send(std::vector<at::Tensor>& tensors, int dst_rank, int tag) {
  at::Tensor t = single_tensor(tensors, "send");
  TORCH_CHECK(dst_rank >= 0 && dst_rank < size_ && dst_rank != rank_, "ProcessGroupGloo::send: invalid destination rank ",
              dst_rank);
  auto buf = context_->createUnboundBuffer(t.data_ptr(), t.nbytes());
  buf->send(dst_rank, static_cast<uint64_t>(tag));
  return std::make_shared<PointToPointWork>("send", t, std::move(buf), true, options_.timeout);
}

ProcessGroup::WorkPtr ProcessGroupGloo::recv(std::vector<at::Tensor>& tensors, int src_rank, int tag) {
  at::Tensor t = single_tensor(tensors, "recv");
  TORCH_CHECK(src_rank >= 0 && src_rank < size_ && src_rank != rank_, "ProcessGroupGloo::recv: invalid source rank ",
              src_rank);
  auto buf = context_->createUnboundBuffer(t.data_ptr(), t.nbytes());
  buf->recv(src_rank, static_cast<uint64_t>(tag));
  return std::make_shared<PointToPointWork>("recv", t, std::move(buf), false, options_.timeout);
}

ProcessGroup::WorkPtr ProcessGroupGloo::recv_anysource(std::vector<at::Tensor>& tensors, int tag) {
  at::Tensor t = single_tensor(tensors, "recv_anysource");
  std::vector<int> peers;
  for (int r = 0; r < size_; ++r) {
    if (r != rank_) peers.push_back(r);
  }
  auto buf = context_->createUnboundBuffer(t.data_ptr(), t.nbytes());
  buf->recv(peers, static_cast<uint64_t>(tag));
  return std::make_shared<PointToPointWork>("recv_anysource", t, std::move(buf), false, options_.timeout);
}

}  // namespace c10d::inline tessera
