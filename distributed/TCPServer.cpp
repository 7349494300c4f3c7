// TCPStore's server: one thread polls the listening socket and every client connection,
// answers requests from its map, and parks Wait requests until their keys are all set.
#include <distributed/TCPProtocol.h>
#include <distributed/TCPServer.h>

#include <c10/util/Exception.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <thread>

namespace c10d::inline tessera {

namespace tcp {
std::string errno_text(int err) { return "errno: " + std::to_string(err) + " - " + std::strerror(err); }

bool send_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t k = ::send(fd, data, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    data += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}
}  // namespace tcp

namespace {
std::mutex g_tenants_mu;
std::map<uint16_t, std::weak_ptr<TCPServer>> g_tenants;  // multi-tenant servers by port
}  // namespace

std::shared_ptr<TCPServer> TCPServer::start(const std::string& host, uint16_t port, bool multi_tenant) {
  std::lock_guard<std::mutex> g(g_tenants_mu);
  if (multi_tenant && port != 0) {
    auto it = g_tenants.find(port);
    if (it != g_tenants.end()) {
      if (auto live = it->second.lock()) return live;
    }
  }
  auto server = std::shared_ptr<TCPServer>(new TCPServer(host, port));
  if (multi_tenant) g_tenants[server->port()] = server;
  return server;
}

TCPServer::TCPServer(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  // As torch's, the server listens on every interface, so that a host name that resolves to
  // a loopback alias here (Debian's 127.0.1.1) still reaches it from other machines; a
  // loopback address given by number (or "localhost") keeps it on that address.
  const bool loopback = host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
  const int rc = ::getaddrinfo(loopback ? host.c_str() : nullptr, service.c_str(), &hints, &found);
  TORCH_CHECK(rc == 0, "TCPStore: cannot resolve the server address ", host, ": ", ::gai_strerror(rc));
  std::string failure;
  for (addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 2048) == 0) {
      listen_fd_ = fd;
    } else {
      failure = tcp::errno_text(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  TORCH_CHECK(listen_fd_ >= 0, "The server socket has failed to listen on ", host, ":", port, " (", failure, ")");
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  TORCH_CHECK(::pipe2(wake_, O_CLOEXEC) == 0, "TCPStore: pipe failed (", tcp::errno_text(errno), ")");
  thread_ = std::thread([this] { loop(); });
}

TCPServer::~TCPServer() {
  const char byte = 0;
  (void)!::write(wake_[1], &byte, 1);
  thread_.join();
  for (auto& [fd, conn] : conns_) ::close(fd);
  ::close(listen_fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

void TCPServer::loop() {
  std::vector<pollfd> fds;
  char buf[65536];
  while (true) {
    fds.clear();
    fds.push_back({wake_[0], POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const auto& [fd, conn] : conns_) fds.push_back({fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) return;
    if (fds[1].revents & POLLIN) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));  // out of descriptors: do not spin
      }
      if (fd >= 0) {
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        conns_[fd];
      }
    }
    for (size_t i = 2; i < fds.size(); ++i) {
      const int fd = fds[i].fd;
      if (!fds[i].revents || !conns_.count(fd)) continue;  // quiet, or dropped by a wake-up
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        drop(fd);
        continue;
      }
      conns_[fd].append(buf, static_cast<size_t>(n));
      size_t consumed = 0;
      tcp::Command cmd{};
      std::vector<std::string> args;
      // Answering may drop this very connection (a failed reply), so look it up each time.
      for (auto it = conns_.find(fd); it != conns_.end() && tcp::decode(it->second, consumed, cmd, args);
           it = conns_.find(fd)) {
        it->second.erase(0, consumed);
        if (!answer(fd, cmd, args)) {
          drop(fd);
          break;
        }
      }
    }
  }
}

void TCPServer::drop(int fd) {
  ::close(fd);
  conns_.erase(fd);
  waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(), [fd](const Waiter& w) { return w.fd == fd; }),
                 waiters_.end());
}

bool TCPServer::reply(int fd, const std::string& value) {
  std::string out;
  tcp::put_arg(out, value);
  return tcp::send_all(fd, out.data(), out.size());
}

bool TCPServer::has_all(const std::vector<std::string>& keys) const {
  return std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return data_.count(k) != 0; });
}

// A key changed: answer the waits it completes.
void TCPServer::wake_waiters() {
  std::vector<int> done;
  for (size_t i = 0; i < waiters_.size();) {
    if (has_all(waiters_[i].keys)) {
      done.push_back(waiters_[i].fd);
      waiters_.erase(waiters_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  // Replies after the scan: a failed one drops its connection (and that connection's other
  // waits), which must not happen while the list is being walked.
  for (int fd : done) {
    if (conns_.count(fd) && !reply(fd, "1")) drop(fd);
  }
}

bool TCPServer::answer(int fd, tcp::Command cmd, const std::vector<std::string>& args) {
  using tcp::Command;
  auto need = [&](size_t n) { return args.size() == n; };
  switch (cmd) {
    case Command::Set:
      if (!need(2)) return false;
      data_[args[0]] = args[1];
      wake_waiters();
      return conns_.count(fd) && reply(fd, "");
    case Command::CompareSet: {
      if (!need(3)) return false;
      auto it = data_.find(args[0]);
      if (it == data_.end()) {
        if (!args[1].empty()) return reply(fd, args[1]);
        data_[args[0]] = args[2];
      } else if (it->second == args[1]) {
        it->second = args[2];
      } else {
        return reply(fd, it->second);
      }
      wake_waiters();
      return conns_.count(fd) && reply(fd, args[2]);
    }
    case Command::Get: {
      if (!need(1)) return false;
      auto it = data_.find(args[0]);
      return reply(fd, it == data_.end() ? std::string() : "1" + it->second);
    }
    case Command::Add: {
      if (!need(2)) return false;
      int64_t now = 0;
      auto it = data_.find(args[0]);
      try {
        now = parse_counter(Bytes(args[1].begin(), args[1].end()));
        if (it != data_.end() &&
            __builtin_add_overflow(now, parse_counter(Bytes(it->second.begin(), it->second.end())), &now)) {
          return reply(fd, "E");
        }
      } catch (const std::exception&) {
        return reply(fd, "E");  // not an integer (or out of range): the client raises
      }
      data_[args[0]] = std::to_string(now);
      wake_waiters();
      return conns_.count(fd) && reply(fd, std::to_string(now));
    }
    case Command::Check:
      return reply(fd, has_all(args) ? "1" : "0");
    case Command::Wait:
      if (has_all(args)) return reply(fd, "1");
      waiters_.push_back({fd, args});
      return true;
    case Command::Delete:
      if (!need(1)) return false;
      return reply(fd, data_.erase(args[0]) ? "1" : "0");
    case Command::NumKeys:
      return reply(fd, std::to_string(data_.size()));
  }
  return false;  // an unknown command: not one of our clients
}

}  // namespace c10d::inline tessera
