// Cross-process floors: bare TCP and bare CAF against a child `swarm floor-peer`.

#include "tools/bench_floors.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "tools/command.hpp"

extern char** environ;

namespace swarm::tools {

namespace {

using floor_clock = std::chrono::steady_clock;

/// How long this process waits on the peer for any one thing.
constexpr std::chrono::seconds peer_timeout{10};
/// How long a TCP peer waits for this process before it gives up.
constexpr std::chrono::seconds peer_idle_limit{60};
constexpr size_t stream_chunk = size_t{1} << 20;
constexpr size_t warmup_round_trips = 50;

double micros(floor_clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), "floor: " + what);
}

// -- file descriptors and the peer process
// ---------------------------------------------

/// Owns a file descriptor.
class unique_fd {
public:
  unique_fd() = default;
  explicit unique_fd(int fd) : fd_{fd} {}
  unique_fd(unique_fd&& other) noexcept : fd_{std::exchange(other.fd_, -1)} {}
  unique_fd& operator=(unique_fd&& other) noexcept {
    reset(std::exchange(other.fd_, -1));
    return *this;
  }
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd() { reset(); }

  int get() const { return fd_; }

  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

private:
  int fd_ = -1;
};

/// A pipe whose ends are closed on exec.
std::pair<unique_fd, unique_fd> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno("pipe");
  return {unique_fd{fds[0]}, unique_fd{fds[1]}};
}

/// File actions for posix_spawn, destroyed with the object.
class spawn_actions {
public:
  spawn_actions() {
    if (int rc = ::posix_spawn_file_actions_init(&actions_); rc != 0)
      throw std::system_error(rc, std::generic_category(), "floor: spawn actions");
  }
  spawn_actions(const spawn_actions&) = delete;
  spawn_actions& operator=(const spawn_actions&) = delete;
  ~spawn_actions() { ::posix_spawn_file_actions_destroy(&actions_); }

  posix_spawn_file_actions_t* get() { return &actions_; }

private:
  posix_spawn_file_actions_t actions_;
};

/// A child `swarm ARGS...` (this binary), killed and reaped on destruction.
class peer_process {
public:
  /// Starts the child; with `piped`, its stdin and stdout are pipes to this process.
  peer_process(const std::vector<std::string>& args, bool piped)
      : name_{"peer 'swarm " + args.at(0) + " " + args.at(1) + "'"} {
    std::vector<std::string> words{"swarm"};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words)
      argv.push_back(w.data());
    argv.push_back(nullptr);
    spawn_actions actions;
    unique_fd child_in, child_out;
    if (piped) {
      std::tie(child_in, stdin_) = make_pipe();
      std::tie(stdout_, child_out) = make_pipe();
      ::posix_spawn_file_actions_adddup2(actions.get(), child_in.get(), STDIN_FILENO);
      ::posix_spawn_file_actions_adddup2(actions.get(), child_out.get(), STDOUT_FILENO);
    }
    // Descriptors this process opened without O_CLOEXEC stay out of the child.
    ::posix_spawn_file_actions_addclosefrom_np(actions.get(), STDERR_FILENO + 1);
    if (int rc = ::posix_spawn(&pid_, "/proc/self/exe", actions.get(), nullptr,
                               argv.data(), environ);
        rc != 0)
      throw std::system_error(rc, std::generic_category(), "floor: starting " + name_);
  }

  peer_process(const peer_process&) = delete;
  peer_process& operator=(const peer_process&) = delete;

  ~peer_process() {
    if (exited()) return;
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
  }

  const std::string& name() const { return name_; }
  int stdout_fd() const { return stdout_.get(); }

  /// Whether the child has exited; reaps it if so.
  bool exited() {
    if (!reaped_) reaped_ = ::waitpid(pid_, &status_, WNOHANG) == pid_;
    return reaped_;
  }

  /// An error saying that the child stopped `when`, with its exit status if it has one.
  std::runtime_error failure(const std::string& when) {
    auto deadline = floor_clock::now() + std::chrono::seconds(1);
    while (!exited() && floor_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::string how = "stopped";
    if (reaped_ && WIFEXITED(status_))
      how = "exited with status " + std::to_string(WEXITSTATUS(status_));
    else if (reaped_ && WIFSIGNALED(status_))
      how = "was killed by signal " + std::to_string(WTERMSIG(status_));
    return std::runtime_error("floor: " + name_ + " " + how + " " + when);
  }

  /// An error saying that the child did not answer in time.
  std::runtime_error timed_out(const std::string& what) const {
    return std::runtime_error("floor: " + name_ + " did not " + what + " within " +
                              std::to_string(peer_timeout.count()) + " s");
  }

private:
  std::string name_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  unique_fd stdin_;
  unique_fd stdout_;
};

// -- TCP on 127.0.0.1
// --------------------------------------------------------------------

sockaddr_in loopback(uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

/// A socket listening on 127.0.0.1 on a port the kernel picks, and that port.
std::pair<unique_fd, uint16_t> listen_loopback() {
  unique_fd fd{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (fd.get() < 0) throw_errno("socket");
  auto addr = loopback(0);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw_errno("bind 127.0.0.1:0");
  if (::listen(fd.get(), 1) != 0) throw_errno("listen");
  socklen_t len = sizeof addr;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw_errno("getsockname");
  return {std::move(fd), ntohs(addr.sin_port)};
}

/// Accepts the peer's connection, giving up when the peer exits or after `peer_timeout`.
unique_fd accept_peer(int listener, peer_process& peer) {
  auto deadline = floor_clock::now() + peer_timeout;
  for (;;) {
    pollfd p{listener, POLLIN, 0};
    int ready = ::poll(&p, 1, 20);
    if (ready < 0 && errno != EINTR) throw_errno("poll");
    if (ready > 0) {
      int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) return unique_fd{fd};
      if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
        throw_errno("accept");
    }
    if (peer.exited()) throw peer.failure("before connecting");
    if (floor_clock::now() > deadline) throw peer.timed_out("connect");
  }
}

/// Bounds every read and write on `fd` by `limit`; optionally sets TCP_NODELAY.
void tune_socket(int fd, std::chrono::seconds limit, bool nodelay) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(limit.count());
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0)
    throw_errno("setsockopt timeouts");
  int one = 1;
  if (nodelay && ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
    throw_errno("setsockopt TCP_NODELAY");
}

/// A read or write on a socket that waited past the socket's timeout.
struct io_timeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_io_error(const char* what) {
  if (errno == EAGAIN || errno == EWOULDBLOCK)
    throw io_timeout(std::string{"floor: the other side did not "} + what + " in time");
  throw_errno(what);
}

/// Up to `n` bytes; 0 at end of stream.
size_t read_some(int fd, char* buf, size_t n) {
  for (;;) {
    ssize_t got = ::recv(fd, buf, n, 0);
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) throw_io_error("send");
  }
}

/// Exactly `n` bytes; false if the stream ends before the first.
bool read_full(int fd, char* buf, size_t n) {
  for (size_t done = 0; done < n;) {
    size_t got = read_some(fd, buf + done, n - done);
    if (got == 0) {
      if (done == 0) return false;
      throw std::runtime_error("floor: connection closed in the middle of a message");
    }
    done += got;
  }
  return true;
}

void write_full(int fd, const char* buf, size_t n) {
  for (size_t done = 0; done < n;) {
    ssize_t put = ::send(fd, buf + done, n - done, MSG_NOSIGNAL);
    if (put < 0 && errno != EINTR) throw_io_error("receive");
    if (put > 0) done += static_cast<size_t>(put);
  }
}

unique_fd connect_loopback(uint16_t port) {
  unique_fd fd{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (fd.get() < 0) throw_errno("socket");
  auto addr = loopback(port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw_errno("connect to 127.0.0.1:" + std::to_string(port));
  return fd;
}

// -- bare CAF
// ----------------------------------------------------------------------------

caf::actor_system_config& floor_caf_config(caf::actor_system_config& cfg) {
  cfg.load<caf::io::middleman>();
  // 2 threads, not the default 4, on a 2-vCPU VM. TOOLCHAIN.md: BASP p50 290-320 µs with
  // defaults, 170-180 µs with 2 threads and workers that never sleep. Measured here with
  // this setting alone (work stealing): p50 about 300 µs, p99 about 550 µs.
  cfg.set("scheduler.max-threads", 2);
  return cfg;
}

/// The port of the `caf-echo` peer, which it prints on a line of its own once published.
uint16_t read_published_port(peer_process& peer) {
  auto deadline = floor_clock::now() + peer_timeout;
  std::string line;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                      floor_clock::now());
    if (left.count() <= 0) throw peer.timed_out("publish its actor");
    pollfd p{peer.stdout_fd(), POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) throw_errno("poll");
    if (ready <= 0) continue;
    char c;
    ssize_t got = ::read(peer.stdout_fd(), &c, 1);
    if (got < 0 && errno != EINTR) throw_errno("read");
    if (got == 0) throw peer.failure("before publishing its actor");
    if (got < 0) continue;
    if (c != '\n') {
      line += c;
      continue;
    }
    char* end = nullptr;
    unsigned long port = std::strtoul(line.c_str(), &end, 10);
    if (line.empty() || *end != '\0' || port == 0 || port > 65535)
      throw std::runtime_error("floor: " + peer.name() + " printed '" + line +
                               "' instead of a port");
    return static_cast<uint16_t>(port);
  }
}

/// A handle to the actor published on 127.0.0.1:`port`, within `peer_timeout`.
caf::actor connect_echo(caf::actor_system& sys, caf::scoped_actor& self, uint16_t port,
                        peer_process& peer) {
  caf::actor echo;
  caf::error err;
  self->request(sys.middleman().actor_handle(), peer_timeout, caf::connect_atom::value,
                std::string{"127.0.0.1"}, port)
      .receive(
          [&](const caf::node_id&, caf::strong_actor_ptr& ptr,
              const std::set<std::string>&) {
            echo = caf::actor_cast<caf::actor>(std::move(ptr));
          },
          [&](caf::error& e) { err = std::move(e); });
  if (err == caf::sec::request_timeout) throw peer.timed_out("accept a CAF connection");
  if (err)
    throw std::runtime_error("floor: cannot reach " + peer.name() + ": " +
                             sys.render(err));
  if (!echo) throw std::runtime_error("floor: " + peer.name() + " published no actor");
  return echo;
}

/// Fails the blocking request in flight once `peer` has exited or `peer_timeout` has
/// passed: CAF never fails a request in flight to a peer that dies, and a per-request
/// timeout arms CAF's clock thread, which added 8-10% to every remote round trip here.
class request_watchdog {
public:
  request_watchdog(caf::blocking_actor* self, peer_process& peer)
      : self_{self}, peer_{peer}, thread_{[this] { run(); }} {}
  request_watchdog(const request_watchdog&) = delete;
  request_watchdog& operator=(const request_watchdog&) = delete;
  ~request_watchdog() { stop(); }

  void arm(caf::message_id response_id) {
    std::lock_guard<std::mutex> guard{mutex_};
    response_id_ = response_id;
    since_ = floor_clock::now();
    armed_ = true;
  }

  void disarm() {
    std::lock_guard<std::mutex> guard{mutex_};
    armed_ = false;
  }

  /// Ends the watch; afterwards `peer` may be used again from this thread.
  void stop() {
    {
      std::lock_guard<std::mutex> guard{mutex_};
      stopping_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

private:
  void run() {
    std::unique_lock<std::mutex> lock{mutex_};
    while (!stopping_) {
      // Polled, not woken per request: waking this thread would cost a thread hop.
      wake_.wait_for(lock, std::chrono::milliseconds(100));
      if (!armed_ || stopping_) continue;
      if (peer_.exited() || floor_clock::now() - since_ > peer_timeout) {
        self_->eq_impl(response_id_, nullptr, nullptr,
                       caf::make_error(caf::sec::request_timeout));
        armed_ = false;
      }
    }
  }

  caf::blocking_actor* self_;
  peer_process& peer_;
  std::mutex mutex_;
  std::condition_variable wake_;
  caf::message_id response_id_;
  floor_clock::time_point since_;
  bool armed_ = false;
  bool stopping_ = false;
  std::thread thread_; // last: starts once the rest is initialized
};

std::vector<double> caf_round_trips(caf::actor_system& sys, peer_process& peer,
                                    uint16_t port, size_t n,
                                    std::chrono::milliseconds cap) {
  caf::scoped_actor self{sys};
  caf::actor echo = connect_echo(sys, self, port, peer);
  request_watchdog watchdog{self.ptr(), peer};
  auto round_trip = [&](int arg) {
    int got = -1;
    caf::error err;
    auto request = self->request(echo, caf::infinite, arg);
    watchdog.arm(request.id());
    request.receive([&](int x) { got = x; }, [&](caf::error& e) { err = std::move(e); });
    watchdog.disarm();
    if (err == caf::sec::request_timeout) {
      watchdog.stop();
      if (peer.exited()) throw peer.failure("during the requests");
      throw peer.timed_out("answer a request");
    }
    if (err) throw std::runtime_error("floor: " + peer.name() + ": " + sys.render(err));
    if (got != arg) throw std::runtime_error("floor: " + peer.name() + " answered wrong");
  };
  for (size_t i = 0; i < warmup_round_trips; ++i)
    round_trip(static_cast<int>(i));
  std::vector<double> us;
  us.reserve(n);
  auto t0 = floor_clock::now();
  for (size_t i = 0; i < n; ++i) {
    auto start = floor_clock::now();
    round_trip(static_cast<int>(i % 1'000'000));
    auto end = floor_clock::now();
    us.push_back(micros(end - start));
    if (end - t0 > cap) break;
  }
  return us;
}

// -- the peer side
// -----------------------------------------------------------------------

size_t parse_number(const std::string& text, const char* what, size_t max) {
  char* end = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno != 0 || x > max)
    throw std::invalid_argument(std::string{"bad "} + what + " '" + text + "'");
  return static_cast<size_t>(x);
}

uint16_t parse_port(const std::string& text) {
  return static_cast<uint16_t>(parse_number(text, "port", 65535));
}

int tcp_echo_peer(uint16_t port, size_t msg_bytes) {
  if (msg_bytes == 0) throw std::invalid_argument("message size must be positive");
  unique_fd conn = connect_loopback(port);
  tune_socket(conn.get(), peer_idle_limit, true);
  std::vector<char> buf(msg_bytes);
  while (read_full(conn.get(), buf.data(), msg_bytes))
    write_full(conn.get(), buf.data(), msg_bytes);
  return 0;
}

int tcp_stream_peer(uint16_t port, size_t bytes) {
  unique_fd conn = connect_loopback(port);
  tune_socket(conn.get(), peer_idle_limit, false);
  char go = 0;
  if (!read_full(conn.get(), &go, 1)) return 0;
  std::vector<char> buf(stream_chunk, 's');
  for (size_t left = bytes; left > 0;) {
    size_t n = std::min(left, stream_chunk);
    write_full(conn.get(), buf.data(), n);
    left -= n;
  }
  return 0;
}

/// Publishes an echo actor on 127.0.0.1:`port` (0: any), prints the port, and serves
/// until stdin closes; usually the parent kills it first.
int caf_echo_peer(uint16_t port) {
  caf::actor_system_config cfg;
  caf::actor_system sys{floor_caf_config(cfg)};
  // Takes an argument it does not need: CAF 0.17 binds a null argument tuple for a
  // function actor spawned with none (UBSan).
  auto echo = sys.spawn([](caf::event_based_actor*,
                           int) -> caf::behavior { return {[](int x) { return x; }}; },
                        0);
  auto published = sys.middleman().publish(echo, port, "127.0.0.1", true);
  if (!published) {
    caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
    throw std::runtime_error("publish: " + sys.render(published.error()));
  }
  std::printf("%u\n", static_cast<unsigned>(*published));
  std::fflush(stdout);
  char c;
  for (;;) {
    ssize_t got = ::read(STDIN_FILENO, &c, 1);
    if (got == 0 || (got < 0 && errno != EINTR)) break;
  }
  // A published actor left alive would hang the actor_system destructor.
  sys.middleman().unpublish(echo, *published);
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  return 0;
}

} // namespace

std::vector<double> tcp_floor_round_trips(size_t msg_bytes, size_t n,
                                          std::chrono::milliseconds cap) {
  if (msg_bytes == 0)
    throw std::invalid_argument("tcp_floor_round_trips: msg_bytes must be positive");
  auto [listener, port] = listen_loopback();
  peer_process peer{
      {"floor-peer", "tcp-echo", std::to_string(port), std::to_string(msg_bytes)}, false};
  unique_fd conn = accept_peer(listener.get(), peer);
  listener.reset();
  tune_socket(conn.get(), peer_timeout, true);
  std::vector<char> msg(msg_bytes, 'p');
  std::vector<char> back(msg_bytes);
  auto round_trip = [&] {
    try {
      write_full(conn.get(), msg.data(), msg_bytes);
      if (read_full(conn.get(), back.data(), msg_bytes)) return;
    } catch (const io_timeout&) {
      throw peer.timed_out("answer");
    }
    throw peer.failure("in the middle of the ping-pong");
  };
  for (size_t i = 0; i < warmup_round_trips; ++i)
    round_trip();
  std::vector<double> us;
  us.reserve(n);
  auto t0 = floor_clock::now();
  for (size_t i = 0; i < n; ++i) {
    auto start = floor_clock::now();
    round_trip();
    auto end = floor_clock::now();
    us.push_back(micros(end - start));
    if (end - t0 > cap) break;
  }
  return us;
}

double tcp_stream_gigabytes(size_t bytes, stream_into into) {
  if (bytes == 0)
    throw std::invalid_argument("tcp_stream_gigabytes: bytes must be positive");
  auto [listener, port] = listen_loopback();
  peer_process peer{
      {"floor-peer", "tcp-stream", std::to_string(port), std::to_string(bytes)}, false};
  unique_fd conn = accept_peer(listener.get(), peer);
  listener.reset();
  tune_socket(conn.get(), peer_timeout, false);
  // Zero-filled, so faulted in before the clock starts.
  std::vector<char> buf(into == stream_into::cache          ? stream_chunk
                        : into == stream_into::ready_buffer ? bytes
                                                            : 0);
  std::unique_ptr<char[]> fresh;
  const char go = 'g';
  auto t0 = floor_clock::now();
  size_t got = 0;
  try {
    // Not initialized: its pages are mapped by the reads that land in them.
    if (into == stream_into::fresh_buffer) fresh.reset(new char[bytes]);
    char* dest = fresh ? fresh.get() : buf.data();
    write_full(conn.get(), &go, 1);
    while (got < bytes) {
      size_t n = read_some(conn.get(), dest + (into == stream_into::cache ? 0 : got),
                           std::min(stream_chunk, bytes - got));
      if (n == 0) break;
      got += n;
    }
  } catch (const io_timeout&) {
    throw peer.timed_out("send the next bytes");
  }
  if (got < bytes)
    throw peer.failure("after " + std::to_string(got) + " of " + std::to_string(bytes) +
                       " bytes");
  double seconds = std::chrono::duration<double>(floor_clock::now() - t0).count();
  return static_cast<double>(bytes) / seconds / 1e9;
}

std::vector<double> caf_remote_round_trips(size_t n, std::chrono::milliseconds cap) {
  peer_process peer{{"floor-peer", "caf-echo", "0"}, true};
  uint16_t port = read_published_port(peer);
  caf::actor_system_config cfg;
  caf::actor_system sys{floor_caf_config(cfg)};
  // Every actor handle lives in caf_round_trips, so it is gone before `sys` is destroyed.
  return caf_round_trips(sys, peer, port, n, cap);
}

std::shared_ptr<void> start_self(const std::vector<std::string>& args) {
  return std::make_shared<peer_process>(args, false);
}

bool self_exited(const std::shared_ptr<void>& child) {
  return static_cast<peer_process*>(child.get())->exited();
}

int run_floor_peer(const std::vector<std::string>& args) {
  // Killed when the thread that started it ends, so even a killed bench leaves no peer.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  try {
    if (args.size() == 3 && args[0] == "tcp-echo")
      return tcp_echo_peer(parse_port(args[1]), parse_number(args[2], "size", SIZE_MAX));
    if (args.size() == 3 && args[0] == "tcp-stream")
      return tcp_stream_peer(parse_port(args[1]),
                             parse_number(args[2], "size", SIZE_MAX));
    if (args.size() == 2 && args[0] == "caf-echo")
      return caf_echo_peer(parse_port(args[1]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "swarm floor-peer: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: swarm floor-peer tcp-echo|tcp-stream PORT BYTES\n"
                       "       swarm floor-peer caf-echo PORT\n");
  return 2;
}

} // namespace swarm::tools
