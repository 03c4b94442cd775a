#include "tools/bench_remote.hpp"

// Quality of service on a real link (the workloads `link_`): a head and a node in two
// network namespaces joined by a 1 Gbit/s link (tools/netns_link.hpp), transfers from the
// head to the node beside bare TCP over the same link, two transfers of priorities one
// step apart, and latency-critical calls while a transfer fills the link. Needs root.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"
#include "tools/bench_cluster.hpp"
#include "tools/bench_stats.hpp"
#include "tools/bench_workloads.hpp"
#include "tools/netns_link.hpp"

namespace swarm::tools {

namespace {

using namespace std::chrono_literals;

constexpr size_t link_transfer_bytes = size_t{100} << 20; // 0.8 s at 1 Gbit/s
constexpr uint16_t floor_port = 7400;

// Bare TCP over the link: `bytes` from the first namespace to the second, in MB/s as
// the receiver counts them from its first byte to its last.
double tcp_over_link(const netns_link& link, size_t bytes) {
  double mb_s = 0;
  std::string failed;
  int listener = -1;
  sockaddr_in a{}; // the receiver's, in the second namespace
  a.sin_family = AF_INET;
  a.sin_port = htons(floor_port);
  ::inet_pton(AF_INET, netns_link::address(1).c_str(), &a.sin_addr);
  {
    netns_link::inside in{link, 1};
    listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listener, 1) != 0) {
      ::close(listener);
      throw std::runtime_error("link floor: cannot listen on the link");
    }
  }
  std::thread sender{[&] {
    try {
      netns_link::inside in{link, 0};
      int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        failed = "cannot connect over the link";
        return;
      }
      std::vector<char> buf(1 << 20, 's');
      for (size_t left = bytes; left > 0;) {
        auto n = ::write(fd, buf.data(), std::min(left, buf.size()));
        if (n <= 0) break;
        left -= static_cast<size_t>(n);
      }
      ::close(fd);
    } catch (const std::exception& e) {
      failed = e.what();
    }
  }};
  int conn = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ::close(listener);
  std::vector<char> buf(1 << 20);
  size_t got = 0;
  bench_clock::time_point t0;
  while (conn >= 0 && got < bytes) {
    auto n = ::read(conn, buf.data(), buf.size());
    if (n <= 0) break;
    if (got == 0) t0 = bench_clock::now();
    got += static_cast<size_t>(n);
  }
  if (got > 0) mb_s = static_cast<double>(got) / seconds_since(t0) / 1e6;
  if (conn >= 0) ::close(conn);
  sender.join();
  if (!failed.empty()) throw std::runtime_error("link floor: " + failed);
  check(got == bytes, "bytes over the link (fewer than sent)");
  return mb_s;
}

struct link_figures {
  std::vector<double> tcp_mb_s, transfer_mb_s, higher_mb_s, lower_mb_s, idle_p99_us,
      during_p99_us;
};

void measure_once(cluster_nodes& c, link_figures& out) {
  auto& rt = *c.rt;
  auto bytes_at_n2 = [&](const object_ref<std::vector<uint8_t>>& r, task_options o = {}) {
    o.node = "n2";
    return rt.submit(o, c.fns.byte_count, r);
  };
  auto blob = [&] { return rt.put(std::vector<uint8_t>(link_transfer_bytes, 7)); };

  // One transfer alone.
  {
    auto big = blob();
    auto t0 = bench_clock::now();
    check(bytes_at_n2(big).get(60s).value() == static_cast<int64_t>(link_transfer_bytes),
          "a transfer over the link (wrong size)");
    out.transfer_mb_s.push_back(static_cast<double>(link_transfer_bytes) /
                                seconds_since(t0) / 1e6);
  }

  // Two at once, priorities 0 and 1, the lower one asked first: their rates while both
  // ran, from when the first ended (its bytes then; twice that in all by the time the
  // second ended, the link full throughout).
  {
    auto x = blob();
    auto y = blob();
    task_options higher;
    higher.priority = 1;
    auto t0 = bench_clock::now();
    auto low = bytes_at_n2(x);
    auto high = bytes_at_n2(y, higher);
    double first = 0, last = 0;
    bool high_first = false;
    for (auto limit = t0 + 60s; bench_clock::now() < limit && last == 0;) {
      if (first == 0 && (low.ready() || high.ready())) {
        first = seconds_since(t0);
        high_first = high.ready();
      }
      if (low.ready() && high.ready()) last = seconds_since(t0);
      std::this_thread::sleep_for(1ms);
    }
    check(last > 0 && low.get(1s) && high.get(1s), "two transfers over the link");
    auto bytes = static_cast<double>(link_transfer_bytes);
    double first_mb_s = bytes / first / 1e6;
    double both_mb_s = 2 * bytes / last / 1e6;
    out.higher_mb_s.push_back(high_first ? first_mb_s : both_mb_s - first_mb_s);
    out.lower_mb_s.push_back(high_first ? both_mb_s - first_mb_s : first_mb_s);
  }

  // Latency-critical calls to an actor on n2, idle, then while a transfer to n2 fills
  // the link in the same direction.
  {
    actor_options o;
    o.node = "n2";
    auto echo = rt.spawn(o, c.fns.echo).latency_critical();
    auto round_trip_us = [&] {
      auto t0 = bench_clock::now();
      check(echo.call(&bench_echo::ping, 1).get(10s).value() == 1,
            "a call over the link");
      return seconds_since(t0) * 1e6;
    };
    std::vector<double> idle;
    for (int i = 0; i < 200; ++i)
      idle.push_back(round_trip_us());
    out.idle_p99_us.push_back(summarize_latency(std::move(idle)).p99);
    auto big = rt.put(std::vector<uint8_t>(3 * link_transfer_bytes, 7));
    auto pulled = bytes_at_n2(big);
    std::this_thread::sleep_for(200ms); // the link full
    std::vector<double> during;
    while (!pulled.ready() && during.size() < 5000)
      during.push_back(round_trip_us());
    check(pulled.get(60s).has_value(), "a transfer beside calls over the link");
    out.during_p99_us.push_back(summarize_latency(std::move(during)).p99);
  }
}

} // namespace

void measure_link(bench_session& s) {
  if (!s.wants("link_")) return;
  if (auto why = netns_link::unavailable(); !why.empty()) return s.skip("link_", why);
  auto& p = s.plan();
  netns_link link{"1gbit"};
  link_figures got;
  {
    char dir_tmpl[] = "/tmp/swarm-bench-link-XXXXXX";
    if (::mkdtemp(dir_tmpl) == nullptr)
      throw std::runtime_error("cannot create a temporary folder under /tmp");
    cluster_nodes c{dir_tmpl, 2, "", "", &link};
    for (int r = 0; r < p.reps; ++r) {
      got.tcp_mb_s.push_back(tcp_over_link(link, link_transfer_bytes));
      measure_once(c, got);
    }
  }
  double tcp =
      s.floor("link_tcp_megabytes", "MB/s", [&] { return median(got.tcp_mb_s); });
  s.add({"link_transfer_megabytes", median(got.transfer_mb_s), "MB/s",
         "link_tcp_megabytes", tcp, goal::ratio_at_least, 0.9, ">= 0.9x bare TCP"});
  // Weights 4:1: 80/20 of the link, each within 5%.
  s.add({"link_priority_1_beside_0_megabytes", median(got.higher_mb_s), "MB/s",
         "link_tcp_megabytes", tcp, goal::ratio_at_least, 0.75, ">= 0.75x (0.8x)"});
  s.add({"link_priority_0_beside_1_megabytes", median(got.lower_mb_s), "MB/s",
         "link_tcp_megabytes", tcp, goal::ratio_at_least, 0.15, ">= 0.15x (0.2x)"});
  double idle = s.floor("link_latency_critical_call_p99_idle_us", "us",
                        [&] { return median(got.idle_p99_us); });
  s.add({"link_latency_critical_call_p99_during_transfer_us", median(got.during_p99_us),
         "us", "link_latency_critical_call_p99_idle_us", idle, goal::at_most, idle + 2000,
         "<= idle + 2 ms"});
}

} // namespace swarm::tools
