#include "tests/sim/det_threads.hpp"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
namespace det = swarm::sim::det;

struct child_result {
  int exit_code = -1;
  std::string output; // what `body` returned, then what the child wrote to stderr
};

// Runs `body` in a child process on the schedule drawn from `seed` (the schedule wants a
// process with one thread).
child_result on_schedule(uint64_t seed, const std::function<std::string()>& body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  auto pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], 2);
    det::start(seed);
    auto out = body();
    [[maybe_unused]] auto n = ::write(fds[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  child_result r;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    r.output.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Four threads taking turns on one mutex and condition variable: the order they got it.
std::string turns() {
  std::mutex m;
  std::condition_variable cv;
  std::string order;
  std::vector<std::thread> ts;
  for (char id = 'a'; id < 'e'; ++id)
    ts.emplace_back([&, id] {
      for (int i = 0; i < 30; ++i) {
        std::unique_lock<std::mutex> lock{m};
        order += id;
        cv.notify_all();
        cv.wait_for(lock, 1ms);
      }
    });
  for (auto& t : ts)
    t.join();
  return order;
}

} // namespace

TEST_CASE("on the deterministic schedule a thread's sleep of an hour takes no real time, "
          "and the clocks read the hour") {
  auto t0 = std::chrono::steady_clock::now();
  auto r = on_schedule(1, [] {
    auto steady = std::chrono::steady_clock::now();
    auto wall = std::chrono::system_clock::now();
    std::thread sleeper{[] { std::this_thread::sleep_for(1h); }};
    sleeper.join();
    auto s = std::chrono::duration<double>(std::chrono::steady_clock::now() - steady);
    auto w = std::chrono::duration<double>(std::chrono::system_clock::now() - wall);
    return std::to_string(s.count() >= 3600 && s.count() < 3601) + " " +
           std::to_string(w.count() >= 3600 && w.count() < 3601);
  });
  CHECK(r.exit_code == 0);
  CHECK(r.output == "1 1");
  CHECK(seconds_since(t0) < 30);
}

TEST_CASE("on the deterministic schedule threads taking turns on a mutex and a condition "
          "variable take them in the same order every time for a seed, and in other "
          "orders for other seeds") {
  auto first = on_schedule(7, turns);
  REQUIRE(first.exit_code == 0);
  CHECK(first.output.size() == 120);
  CHECK(on_schedule(7, turns).output == first.output);
  std::set<std::string> orders;
  for (uint64_t seed = 1; seed <= 6; ++seed)
    orders.insert(on_schedule(seed, turns).output);
  CHECK(orders.size() > 1);
}

TEST_CASE("on the deterministic schedule a future waited for with a timeout times out in "
          "virtual time, then wakes when its value is set") {
  auto r = on_schedule(3, [] {
    std::promise<int> p;
    auto f = p.get_future();
    auto t0 = std::chrono::steady_clock::now();
    std::thread setter{[&] {
      std::this_thread::sleep_for(5s);
      p.set_value(7);
    }};
    auto early = f.wait_for(1s);
    auto late = f.wait_for(10s);
    auto took = seconds_since(t0);
    setter.join();
    return std::string{early == std::future_status::timeout ? "timeout" : "?"} + " " +
           (late == std::future_status::ready ? "ready" : "?") + " " +
           std::to_string(f.get()) + " " + std::to_string(took >= 5 && took < 5.1);
  });
  CHECK(r.exit_code == 0);
  CHECK(r.output == "timeout ready 7 1");
}

TEST_CASE("on the deterministic schedule a run where every thread waits for ever ends "
          "with exit code 3, naming each wait") {
  auto r = on_schedule(1, [] {
    std::mutex m;
    std::condition_variable cv;
    std::thread other{[&] {
      std::lock_guard<std::mutex> lock{m};
      std::this_thread::sleep_for(1s);
      std::thread{[] { std::this_thread::sleep_for(2s); }}.detach();
    }}; // ends after a second, its own thread after three: then only the wait is left
    {
      std::unique_lock<std::mutex> lock{m};
      cv.wait(lock); // nobody notifies
    }
    other.join();
    return std::string{"ended"};
  });
  CHECK(r.exit_code == 3);
  CHECK(r.output.find("every thread waits and none has a deadline") != std::string::npos);
  CHECK(r.output.find("waits on a condition") != std::string::npos);
  CHECK(r.output.find("ended") == std::string::npos);
}
