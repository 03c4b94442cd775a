#include "actors/node/node_provider.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "framework/tls_env.hpp"

extern char** environ;

namespace swarm::actors {

namespace {

// The last `n` bytes of the file at `path`, trimmed.
std::string tail_of(const std::string& path, size_t n = 2000) {
  std::ifstream in{path, std::ios::binary};
  std::stringstream s;
  s << in.rdbuf();
  auto text = s.str();
  if (text.size() > n) text = "..." + text.substr(text.size() - n);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

std::string amount_text(double amount) {
  std::ostringstream a;
  a << amount;
  return a.str();
}

std::string resources_text(const resource_set& r) {
  std::string out;
  for (auto& [name, amount] : r.amounts())
    out += (out.empty() ? "" : ",") + name + "=" + amount_text(amount);
  return out;
}

// Waits up to `limit` for `pid` to end; its status, or -1 when it runs on. It sleeps on
// the process's descriptor (pidfd), woken when the process ends.
int wait_for(pid_t pid, std::chrono::milliseconds limit) {
  auto reap = [pid](int& status) {
    auto r = ::waitpid(pid, &status, WNOHANG);
    return r == pid || r < 0; // ended, or not ours any more (status 0)
  };
  int status = 0;
  if (reap(status)) return status;
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0 && errno == ESRCH) return reap(status) ? status : 0; // gone meanwhile
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    // Without pidfds (a kernel before 5.3; poll ignores fd -1) it looks every 10 ms.
    pollfd p{fd, POLLIN, 0};
    if (left.count() > 0) ::poll(&p, 1, fd < 0 ? 10 : static_cast<int>(left.count()));
    if (reap(status)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      status = -1;
      break;
    }
  }
  if (fd >= 0) ::close(fd);
  return status;
}

} // namespace

result<node_provider> node_provider::make(autoscaler_config cfg, provider_target target) {
  auto dir = private_dir::make("/tmp", "swarm-autoscaler-");
  if (!dir) return dir.err();
  return node_provider{std::move(cfg), std::move(target), std::move(*dir)};
}

node_provider::~node_provider() {
  for (auto& [name, pid] : running_)
    ::kill(pid, SIGTERM);
  for (auto& [name, pid] : running_)
    if (wait_for(pid, std::chrono::seconds(5)) < 0) {
      ::kill(pid, SIGKILL);
      wait_for(pid, std::chrono::seconds(2));
    }
}

result<pid_t> node_provider::spawn(const std::string& command, const node_type& type,
                                   const std::string& name) {
  std::vector<std::string> vars{"SWARM_ADDRESS=" + target_.head_address,
                                "SWARM_SECRET=" + target_.secret,
                                "SWARM_PROGRAM=" + target_.program,
                                "SWARM_NODE_NAME=" + name,
                                "SWARM_NODE_TYPE=" + type.name,
                                "SWARM_NODE_CPUS=" + amount_text(type.cpus),
                                "SWARM_NODE_GPUS=" + std::to_string(type.gpus),
                                "SWARM_NODE_RESOURCES=" + resources_text(type.resources)};
  for (auto& kv : tls_env(target_.tls))
    vars.push_back(kv);
  std::vector<char*> env;
  for (auto& v : vars)
    env.push_back(v.data());
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "SWARM_", 6) != 0) env.push_back(*e);
  env.push_back(nullptr);
  std::string sh = "/bin/sh", dash_c = "-c", cmd = command;
  char* argv[] = {sh.data(), dash_c.data(), cmd.data(), nullptr};
  auto log = dir_.path() + "/" + name + ".log";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, sh.c_str(), &fa, nullptr, argv, env.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return error{errc::invalid_argument,
                 "cannot run /bin/sh for node '" + name + "': " + std::strerror(rc)};
  return pid;
}

std::string node_provider::how_it_ended(const std::string& name, int status) const {
  std::string how =
      status < 0 ? "it ran past " +
                       std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                          cfg_.launch_timeout)
                                          .count()) +
                       " s and was killed"
      : WIFEXITED(status)   ? "it exited with code " + std::to_string(WEXITSTATUS(status))
      : WIFSIGNALED(status) ? "it was ended by signal " + std::to_string(WTERMSIG(status))
                            : "it ended";
  auto out = tail_of(dir_.path() + "/" + name + ".log");
  return how + (out.empty() ? ", printing nothing" : "; its output: " + out);
}

result<void> node_provider::launch(const node_type& type, const std::string& name) {
  auto command = cfg_.start_command;
  if (command.empty()) // the local provider's default: the head's own program
    command =
        "exec \"$SWARM_PROGRAM\" start --address \"$SWARM_ADDRESS\" --node "
        "\"$SWARM_NODE_NAME\" --cpus \"$SWARM_NODE_CPUS\" --gpus \"$SWARM_NODE_GPUS\" "
        "--resources \"$SWARM_NODE_RESOURCES\" --node-type \"$SWARM_NODE_TYPE\"";
  types_[name] = type;
  if (cfg_.provider == autoscaler_config::provider_type::command)
    return run_to_end("start_command", command, type, name);
  auto pid = spawn(command, type, name);
  if (!pid) return pid.err();
  running_[name] = *pid;
  return {};
}

result<void> node_provider::run_to_end(const char* what, const std::string& command,
                                       const node_type& type, const std::string& name) {
  auto pid = spawn(command, type, name);
  if (!pid) return pid.err();
  auto status = wait_for(*pid, cfg_.launch_timeout);
  if (status < 0) {
    ::kill(*pid, SIGKILL);
    wait_for(*pid, std::chrono::seconds(5));
  }
  if (status == 0) return {};
  return error{errc::node_unreachable, std::string{what} + " for node '" + name +
                                           "' failed: " + how_it_ended(name, status)};
}

result<void> node_provider::release(const std::string& name,
                                    std::chrono::milliseconds grace) {
  if (auto r = running_.find(name); r != running_.end()) {
    auto pid = r->second;
    running_.erase(r);
    if (wait_for(pid, grace) < 0) {
      ::kill(pid, SIGTERM);
      if (wait_for(pid, std::chrono::seconds(10)) < 0) {
        ::kill(pid, SIGKILL);
        wait_for(pid, std::chrono::seconds(5));
      }
    }
    types_.erase(name);
    return {};
  }
  if (cfg_.provider == autoscaler_config::provider_type::local) return {};
  auto t = types_.find(name);
  node_type type = t == types_.end() ? node_type{} : t->second;
  types_.erase(name);
  return run_to_end("stop_command", cfg_.stop_command, type, name);
}

void node_provider::adopt(const node_type& type, const std::string& name) {
  types_[name] = type;
}

std::vector<std::pair<std::string, std::string>> node_provider::ended() {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto i = running_.begin(); i != running_.end();) {
    int status = 0;
    if (::waitpid(i->second, &status, WNOHANG) == i->second) {
      out.emplace_back(i->first, how_it_ended(i->first, status));
      types_.erase(i->first);
      i = running_.erase(i);
    } else {
      ++i;
    }
  }
  return out;
}

} // namespace swarm::actors
