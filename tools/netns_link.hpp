#pragma once

// A real link for the QoS tests and benchmarks: two network namespaces of the caller's
// own, joined by a veth pair whose two ends each send at most `rate` (tc tbf), as a
// host's NIC on a network of that speed would. A thread enters one with `inside`, and
// what it starts meanwhile runs there. Only 10.77.0.1 and 10.77.0.2, inside
// the namespaces, are used. Needs root with the right to make namespaces, `ip` and `tc`:
// `unavailable()` says why not.

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace swarm::tools {

class netns_link {
public:
  /// How each end's queue treats a packet's priority (`SO_PRIORITY`): `marks` serves
  /// interactive packets before bulk ones (pfifo_fast's bands under the rate limit), as
  /// a network honouring DSCP would; `fifo`: one queue in arrival order.
  enum class queueing { marks, fifo };

  /// Why the link cannot be made here; empty when it can.
  static std::string unavailable() {
    if (::geteuid() != 0) return "not root";
    if (run("ip -V").first != 0) return "no ip tool";
    if (run("tc -V").first != 0) return "no tc tool";
    // Root in a container may still lack the right to make namespaces.
    auto probe = "swarm-link-probe-" + std::to_string(::getpid());
    if (auto [rc, out] = run("ip netns add " + probe); rc != 0)
      return "cannot make a network namespace: " + out;
    run("ip netns del " + probe);
    return {};
  }

  /// The link, each end sending at most `rate` (as tc writes it: "1gbit").
  explicit netns_link(const std::string& rate = "1gbit", queueing q = queueing::marks)
      : prefix_("swarm-link-" + std::to_string(::getpid())) {
    remove(); // left by an earlier process of this pid
    std::vector<std::string> steps{
        "ip netns add " + ns(0),
        "ip netns add " + ns(1),
        "ip -n " + ns(0) + " link add veth0 type veth peer name veth1 netns " + ns(1),
    };
    for (int i = 0; i < 2; ++i) {
      auto n = " -n " + ns(i);
      auto dev = " dev veth" + std::to_string(i);
      steps.push_back("ip" + n + " addr add " + address(i) + "/24" + dev);
      steps.push_back("ip" + n + " link set lo up");
      steps.push_back("ip" + n + " link set" + dev + " up");
      // A queue of up to 100 ms at the rate, as a switch's buffer holds.
      steps.push_back("tc" + n + " qdisc add" + dev + " root handle 1: tbf rate " + rate +
                      " burst 256kb latency 100ms");
      if (q == queueing::marks)
        steps.push_back("tc" + n + " qdisc add" + dev +
                        " parent 1:1 handle 10: pfifo_fast");
    }
    for (auto& s : steps)
      if (auto [rc, out] = run(s); rc != 0) {
        remove();
        throw std::runtime_error("cannot make the link: '" + s + "' failed: " + out);
      }
  }

  ~netns_link() { remove(); }
  netns_link(const netns_link&) = delete;
  netns_link& operator=(const netns_link&) = delete;

  /// The name of namespace `i` (0 or 1).
  std::string ns(int i) const { return prefix_ + (i == 0 ? "-a" : "-b"); }
  /// The address of namespace `i` on the link.
  static std::string address(int i) { return i == 0 ? "10.77.0.1" : "10.77.0.2"; }

  /// While it lives, the calling thread is inside namespace `i`, and so are the threads
  /// and processes it starts (for good); then it is back where it was.
  class inside {
  public:
    inside(const netns_link& link, int i)
        : home_(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) {
      auto fd = ::open(("/run/netns/" + link.ns(i)).c_str(), O_RDONLY | O_CLOEXEC);
      bool in = home_ >= 0 && fd >= 0 && ::setns(fd, CLONE_NEWNET) == 0;
      if (fd >= 0) ::close(fd);
      if (!in) {
        if (home_ >= 0) ::close(home_);
        throw std::runtime_error("cannot enter network namespace " + link.ns(i));
      }
    }
    ~inside() {
      ::setns(home_, CLONE_NEWNET);
      ::close(home_);
    }
    inside(const inside&) = delete;
    inside& operator=(const inside&) = delete;

  private:
    int home_;
  };

private:
  // Runs `command` in a shell; its exit code and what it printed.
  static std::pair<int, std::string> run(const std::string& command) {
    std::string out;
    auto* p = ::popen((command + " 2>&1").c_str(), "r");
    if (!p) return {-1, "cannot run " + command};
    char buf[512];
    while (auto n = std::fread(buf, 1, sizeof buf, p))
      out.append(buf, n);
    auto status = ::pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  }

  void remove() {
    for (int i = 0; i < 2; ++i)
      if (::access(("/run/netns/" + ns(i)).c_str(), F_OK) == 0)
        run("ip netns del " + ns(i));
  }

  std::string prefix_;
};

} // namespace swarm::tools
