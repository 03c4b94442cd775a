#pragma once

// Starts node processes for the multi-node tests and always stops them by pid.

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace swarm::cluster_test {

/// A free TCP port on 127.0.0.1 (bound and released), never one this process was
/// given before: the kernel may hand a released port out again at once.
inline uint16_t free_port() {
  static std::set<uint16_t> given;
  for (;;) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    socklen_t len = sizeof(a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    auto port = ntohs(a.sin_port);
    if (given.insert(port).second) return port;
  }
}

/// Runs `command` in a shell, its stderr joined to its stdout; its exit code (-1 when
/// it did not exit) and everything it printed.
inline std::pair<int, std::string> run_command(const std::string& command) {
  std::string out;
  auto* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return {-1, "cannot run " + command};
  char buf[4096];
  while (auto n = std::fread(buf, 1, sizeof buf, p))
    out.append(buf, n);
  auto status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

/// A child process whose stdout and stderr go to a file; killed and reaped when
/// destroyed.
class node_process {
public:
  node_process(const std::string& binary, std::vector<std::string> args,
               const std::string& log_path)
      : log_(log_path) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (auto& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, log_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    if (posix_spawn(&pid_, binary.c_str(), &fa, nullptr, argv.data(), environ) != 0)
      throw std::runtime_error("cannot start " + binary);
    posix_spawn_file_actions_destroy(&fa);
  }

  ~node_process() { stop(); }

  node_process(const node_process&) = delete;
  node_process& operator=(const node_process&) = delete;

  int pid() const noexcept { return pid_; }

  /// Waits up to `timeout` for the process to exit; its exit code, or -1 if it runs on.
  int wait_exit(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (pid_ > 0) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return exit_code_;
  }

  /// Kills it at once (a node dying), then reaps it.
  void kill_now() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    wait_exit(std::chrono::seconds(5));
  }

  /// Stops it without killing it (a frozen node), or lets it run on.
  void freeze() { ::kill(pid_, SIGSTOP); }
  void thaw() { ::kill(pid_, SIGCONT); }

  /// SIGTERM, then SIGKILL after a grace period.
  void stop() {
    if (pid_ <= 0) return;
    thaw();
    ::kill(pid_, SIGTERM);
    if (wait_exit(std::chrono::seconds(5)) < 0) {
      ::kill(pid_, SIGKILL);
      wait_exit(std::chrono::seconds(5));
    }
  }

  /// What the process wrote so far.
  std::string log() const {
    std::ifstream in{log_};
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

private:
  std::string log_;
  pid_t pid_ = 0;
  int exit_code_ = -1;
};

/// Polls `done` every 50 ms for at most `limit`; whether it came true.
inline bool eventually(std::chrono::milliseconds limit,
                       const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

} // namespace swarm::cluster_test
