// TCPStore's client side: one connection per store object, requests one at a time, and
// the master's start-up (the server, then waiting for num_workers clients).
#include <distributed/TCPServer.h>
#include <distributed/TCPStore.h>

#include <c10/util/Exception.h>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace c10d::inline tessera {

namespace {
using Clock = std::chrono::steady_clock;
constexpr const char* kInitKey = "init/";  // counts the clients that joined
constexpr const char* kUserPrefix = "/";   // user keys live apart from the init key

std::string user_key(const std::string& key) { return kUserPrefix + key; }
Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string to_string(const Bytes& b) { return std::string(b.begin(), b.end()); }

struct TimedOut {};  // the reply did not come within the timeout
}  // namespace

class TCPClient {
 public:
  TCPClient(std::string host, uint16_t port, std::chrono::milliseconds timeout)
      : host_(std::move(host)), port_(port), timeout_(timeout) {
    connect();
  }
  ~TCPClient() { close(); }

  // Sends a request and reads its reply, waiting `timeout` (0: forever) for it.
  std::string request(tcp::Command cmd, const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
    try {
      return request_or_time_out(cmd, args, timeout);
    } catch (const TimedOut&) {
      TORCH_CHECK(false, "TCPStore: no reply from the server at ", host_, ":", port_, " within ", timeout.count(),
                  " ms");
    }
  }

  // As request(), but a late reply throws TimedOut for the caller to describe.
  std::string request_or_time_out(tcp::Command cmd, const std::vector<std::string>& args,
                                  std::chrono::milliseconds timeout) {
    if (fd_ < 0) connect();
    const std::string msg = tcp::encode(cmd, args);
    if (!tcp::send_all(fd_, msg.data(), msg.size())) lost();
    uint64_t len = 0;
    const auto deadline = timeout == Store::kNoTimeout ? Clock::time_point::max() : Clock::now() + timeout;
    read_exact(reinterpret_cast<char*>(&len), sizeof(len), deadline);
    std::string out(len, '\0');
    read_exact(out.data(), len, deadline);
    return out;
  }

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  [[noreturn]] void lost() {
    close();
    TORCH_CHECK(false, "TCPStore: the connection to the server at ", host_, ":", port_,
                " was closed (the master process may have exited)");
  }

  void read_exact(char* out, size_t n, Clock::time_point deadline) {
    while (n > 0) {
      int wait_ms = -1;
      if (deadline != Clock::time_point::max()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) {
          close();  // a late reply would be taken for the next request's: start over
          throw TimedOut{};
        }
        wait_ms = static_cast<int>(std::min<int64_t>(left, 1 << 30));
      }
      pollfd p{fd_, POLLIN, 0};
      const int rc = ::poll(&p, 1, wait_ms);
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0) continue;  // the deadline check above decides
      const ssize_t k = ::recv(fd_, out, n, 0);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) lost();
      out += k;
      n -= static_cast<size_t>(k);
    }
  }

  // Retries until the timeout: workers often start before the master's server listens.
  void connect() {
    const auto deadline = Clock::now() + (timeout_ == Store::kNoTimeout ? std::chrono::hours(24 * 365) : timeout_);
    std::string failure = "no address";
    auto pause = std::chrono::milliseconds(5);
    while (true) {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      hints.ai_flags = AI_NUMERICSERV;
      addrinfo* found = nullptr;
      const std::string service = std::to_string(port_);
      const int rc = ::getaddrinfo(host_.c_str(), service.c_str(), &hints, &found);
      if (rc != 0) {
        failure = ::gai_strerror(rc);
      } else {
        for (addrinfo* a = found; a != nullptr && fd_ < 0; a = a->ai_next) {
          const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
          if (fd < 0) continue;
          if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            fd_ = fd;
          } else {
            failure = tcp::errno_text(errno);
            ::close(fd);
          }
        }
        ::freeaddrinfo(found);
      }
      if (fd_ >= 0) return;
      TORCH_CHECK(Clock::now() < deadline, "TCPStore: could not connect to the server at ", host_, ":", port_,
                  " within the timeout of ", timeout_.count(), " ms (", failure, ")");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(200));
    }
  }

  std::string host_;
  uint16_t port_;
  std::chrono::milliseconds timeout_;
  int fd_ = -1;
};

TCPStore::TCPStore(std::string host, const TCPStoreOptions& options)
    : Store(options.timeout), host_(std::move(host)), port_(options.port) {
  if (options.num_workers) TORCH_CHECK(*options.num_workers > 0, "TCPStore: world_size must be positive");
  if (options.is_master) {
    server_ = TCPServer::start(host_, options.port, options.multi_tenant);
    port_ = server_->port();
  }
  client_ = std::make_unique<TCPClient>(host_, port_, timeout_);
  if (options.wait_for_workers && options.num_workers) {
    {
      std::lock_guard<std::mutex> g(mu_);
      client_->request(tcp::Command::Add, {kInitKey, "1"}, timeout_);
    }
    if (options.is_master) wait_for_workers(*options.num_workers);
  }
}

TCPStore::~TCPStore() {
  wait_client_.reset();
  client_.reset();
  server_.reset();
}

void TCPStore::wait_for_workers(int64_t workers) {
  const auto start = Clock::now();
  while (true) {
    int64_t joined = 0;
    {
      std::lock_guard<std::mutex> g(mu_);
      joined = std::stoll(client_->request(tcp::Command::Add, {kInitKey, "0"}, timeout_));
    }
    if (joined >= workers) return;
    TORCH_CHECK(timeout_ == kNoTimeout || Clock::now() - start < timeout_, "Timed out after ", timeout_.count(),
                " ms waiting for clients. ", joined, "/", workers, " clients joined.");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void TCPStore::set(const std::string& key, const Bytes& value) {
  std::lock_guard<std::mutex> g(mu_);
  client_->request(tcp::Command::Set, {user_key(key), to_string(value)}, timeout_);
}

Bytes TCPStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  std::lock_guard<std::mutex> g(mu_);
  return to_bytes(
      client_->request(tcp::Command::CompareSet, {user_key(key), to_string(expected), to_string(desired)}, timeout_));
}

Bytes TCPStore::get(const std::string& key) {
  wait_raw({user_key(key)}, timeout_);
  std::lock_guard<std::mutex> g(mu_);
  const std::string reply = client_->request(tcp::Command::Get, {user_key(key)}, timeout_);
  TORCH_CHECK(!reply.empty(), "TCPStore: key ", key, " was deleted while get() waited for it");
  return to_bytes(reply.substr(1));
}

int64_t TCPStore::add(const std::string& key, int64_t value) {
  std::lock_guard<std::mutex> g(mu_);
  const std::string reply = client_->request(tcp::Command::Add, {user_key(key), std::to_string(value)}, timeout_);
  TORCH_CHECK(reply != "E", "Store::add: the key holds a value that is not an integer");
  return std::stoll(reply);
}

bool TCPStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> g(mu_);
  return client_->request(tcp::Command::Delete, {user_key(key)}, timeout_) == "1";
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  std::vector<std::string> args;
  for (const auto& k : keys) args.push_back(user_key(k));
  std::lock_guard<std::mutex> g(mu_);
  return client_->request(tcp::Command::Check, args, timeout_) == "1";
}

int64_t TCPStore::num_keys() {
  std::lock_guard<std::mutex> g(mu_);
  return std::stoll(client_->request(tcp::Command::NumKeys, {}, timeout_));
}

void TCPStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::vector<std::string> args;
  for (const auto& k : keys) args.push_back(user_key(k));
  wait_raw(args, timeout);
}

void TCPStore::wait_raw(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> g(wait_mu_);
  if (!wait_client_) wait_client_ = std::make_unique<TCPClient>(host_, port_, timeout_);
  try {
    wait_client_->request_or_time_out(tcp::Command::Wait, keys, timeout);
  } catch (const TimedOut&) {
    std::vector<std::string> shown;
    for (const auto& k : keys) shown.push_back(k.rfind(kUserPrefix, 0) == 0 ? k.substr(1) : k);
    throw_timeout(shown, timeout);
  }
}

}  // namespace c10d::inline tessera
