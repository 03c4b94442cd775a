#include "tools/bench_broadcast.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/bench_report.hpp"
#include "tools/bench_stats.hpp"

namespace swarm::tools {

namespace {

using namespace std::chrono_literals;

constexpr size_t broadcast_bytes = size_t{100} << 20;

using blob = object_ref<std::vector<uint8_t>>;

} // namespace

void measure_broadcast(bench_session& s, cluster_nodes& c, int nodes) {
  bool broadcast = s.wants("broadcast_100mb");
  bool two_holders = s.wants("pull_2_holders");
  if (nodes < 3 || (!broadcast && !two_holders)) return;
  auto& p = s.plan();
  auto& rt = *c.rt;
  std::vector<task_options> on(static_cast<size_t>(nodes - 1));
  for (size_t i = 0; i < on.size(); ++i)
    on[i].node = cluster_nodes::name_of(static_cast<int>(i + 1));
  auto fresh = [&](int r) {
    return rt.put(std::vector<uint8_t>(broadcast_bytes, static_cast<uint8_t>(r)));
  };
  auto read = [&](const task_options& where, const blob& x) {
    return rt.submit(where, c.fns.byte_count, x);
  };
  auto check_read = [&](object_ref<int64_t> n, const char* what) {
    check(n.get(120s).value() == static_cast<int64_t>(broadcast_bytes), what);
  };

  if (broadcast) {
    std::vector<double> one, sequential, spread;
    // A first round unmeasured: every node's store has kept memory to pull into.
    for (int r = -1; r < p.transfers; ++r) {
      auto t0 = bench_clock::now();
      check_read(read(on[0], fresh(r)), "100 MB transfer to one node");
      one.push_back(seconds_since(t0));
      t0 = bench_clock::now();
      for (auto& where : on)
        check_read(read(where, fresh(r)), "100 MB transfers one after another");
      sequential.push_back(seconds_since(t0));
      auto x = fresh(r);
      t0 = bench_clock::now();
      std::vector<object_ref<int64_t>> all;
      for (auto& where : on)
        all.push_back(read(where, x));
      for (auto& n : all)
        check_read(n, "100 MB broadcast");
      spread.push_back(seconds_since(t0));
      if (r < 0) one.clear(), sequential.clear(), spread.clear();
    }
    auto n = std::to_string(on.size());
    s.floor("transfer_100mb_1_node_seconds", "s", [&] { return median(one); });
    auto sequential_key = "transfer_100mb_" + n + "_nodes_one_by_one_seconds";
    double one_by_one = s.floor(sequential_key, "s", [&] { return median(sequential); });
    s.add(versus("broadcast_100mb_" + n + "_nodes_seconds", median(spread), "s",
                 sequential_key, one_by_one));
  }

  if (two_holders) {
    std::vector<double> two, single;
    for (int r = -1; r < p.transfers; ++r) {
      auto x = fresh(r);
      check_read(read(on[0], x), "100 MB transfer to a first reader");
      auto t0 = bench_clock::now();
      check_read(read(on[1], x), "100 MB pull from two holders");
      two.push_back(static_cast<double>(broadcast_bytes) / seconds_since(t0) / 1e9);
      auto y = fresh(r);
      t0 = bench_clock::now();
      check_read(read(on[1], y), "100 MB pull from one holder");
      single.push_back(static_cast<double>(broadcast_bytes) / seconds_since(t0) / 1e9);
      if (r < 0) two.clear(), single.clear();
    }
    double one =
        s.floor("pull_1_holder_gigabytes", "GB/s", [&] { return median(single); });
    s.add(versus("pull_2_holders_gigabytes", median(two), "GB/s",
                 "pull_1_holder_gigabytes", one));
  }
}

} // namespace swarm::tools
