#include "runtime/worker_processes.hpp"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "framework/cluster.hpp"

namespace swarm {

namespace {

using namespace std::chrono_literals;

size_t threads_of_this_process() {
  size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (auto* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

// Reaps `pid` if it has exited by `deadline`; true when it has. Woken by the exit
// itself (a pidfd turns readable), or, on a kernel without pidfds, every 10 ms.
bool reap_by(pid_t pid, std::chrono::steady_clock::time_point deadline, int& status) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  while (true) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      if (fd >= 0) ::close(fd);
      return true;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      if (fd >= 0) ::close(fd);
      return false;
    }
    if (fd >= 0) {
      pollfd p{fd, POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(left.count()));
    } else {
      std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(10ms, left));
    }
  }
}

} // namespace

result<std::unique_ptr<worker_processes>>
worker_processes::fork_nodes(const application& app, const cluster_config& cfg,
                             const std::vector<std::string>& nodes) {
  if (auto n = threads_of_this_process(); n > 1)
    return error{errc::invalid_argument,
                 "a local cluster forks its node processes, which is only safe in a "
                 "single-threaded process, but this one runs " +
                     std::to_string(n) +
                     " threads: create the runtime for the local cluster before any other "
                     "runtime or thread"};
  std::unique_ptr<worker_processes> out{new worker_processes};
  auto parent = ::getpid();
  std::fflush(nullptr); // or buffered output would be written twice
  for (auto& name : nodes) {
    pid_t pid = ::fork();
    if (pid < 0)
      return error{errc::invalid_argument, "cannot fork node '" + name + "'"};
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(1);
      int code = serve(app, cfg, name);
      std::fflush(nullptr);
      ::_exit(code); // no atexit handlers: they belong to the parent's program
    }
    out->children_.emplace_back(name, pid);
  }
  return out;
}

std::string worker_processes::exited() {
  for (auto i = children_.begin(); i != children_.end();) {
    int status = 0;
    if (::waitpid(i->second, &status, WNOHANG) == i->second) {
      exited_.push_back("node '" + i->first + "' " + describe(status));
      i = children_.erase(i);
    } else {
      ++i;
    }
  }
  std::string out;
  for (auto& e : exited_)
    out += (out.empty() ? "" : "; ") + e;
  return out;
}

worker_processes::~worker_processes() {
  for (auto& [name, pid] : children_)
    ::kill(pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  for (auto& [name, pid] : children_) {
    int status = 0;
    if (reap_by(pid, deadline, status)) continue;
    std::fprintf(stderr, "[swarm] node '%s' (pid %d) ignored SIGTERM for 5 s: killed\n",
                 name.c_str(), static_cast<int>(pid));
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
}

} // namespace swarm
