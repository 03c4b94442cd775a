#include "tools/bench_sim.hpp"

#include <pthread.h>
#include <time.h>

#include <caf/all.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "actors/common/protocol.hpp"
#include "actors/node/membership.hpp"
#include "actors/scheduling/protocol.hpp"
#include "framework/detail/wire_convert.hpp"
#include "tools/bench_stats.hpp"
#include "tools/bench_workloads.hpp"
#include "transport/wire_codec.hpp"

namespace swarm::tools {

namespace {

using namespace std::chrono_literals;
using sim_clock = std::chrono::steady_clock;

constexpr auto heartbeat_interval = 500ms; // the cluster file's default
constexpr size_t functions_per_node = 24;  // a row of about 1.7 KB, as measured

// One node's row as it joins: one CPU and a set of registered functions.
wire_msg::node_info row_of(const std::string& name, bool head) {
  wire_msg::node_info n;
  n.name = name;
  n.address = "sim";
  n.port = 7000;
  n.total = {{"CPU", 1.0}, {"memory", 1e9}};
  n.available = n.total;
  n.alive = true;
  n.head = head;
  for (size_t i = 0; i < functions_per_node; ++i)
    n.functions.push_back({"pipeline.stage_" + std::to_string(i),
                           "std::vector<float>(const std::vector<float>&, int)"});
  return n;
}

uint64_t rss_bytes() {
  return static_cast<uint64_t>(std::max<int64_t>(0, vm_bytes("VmRSS")));
}

class sim_cluster;

// What one simulated node's membership asks of its node: messages go to the addressed
// membership as values, their encoded size counted.
class sim_port final : public actors::membership_port {
public:
  sim_port(sim_cluster& c, std::string name, size_t index)
      : c_(c), name_(std::move(name)), index_(index) {}

  bool send(const std::string& peer, const wire_msg::message& m) override;
  std::vector<std::string> send_all(const std::vector<std::string>& peers,
                                    const wire_msg::message& m) override;
  bool connected(const std::string& peer) override;
  std::optional<std::chrono::milliseconds> quiet_for(const std::string& peer) override;
  void disconnect(const std::string&, const std::string&) override {}
  void dial(const std::string&) override {}
  void rejoin() override;
  void record(const wire_msg::node_info& info) override;
  void forget(const std::string&) override {}
  void set_chain(std::vector<std::string>) override {}
  void lost(const std::string&, const std::string&) override {}
  uint32_t queued() override;
  wire_msg::store_usage store() override { return {}; }
  caf::actor scheduler() override { return {}; }
  // A node the head found dead (a frozen simulation) joins again as the new life.
  void fenced(uint64_t life, const std::string&) override {
    life_ = life;
    joined_ = false;
    rejoin();
  }

  /// CPU time of the thread that runs this node's membership (the head's: detached).
  double thread_cpu_seconds() const;

private:
  void note_thread();

  sim_cluster& c_;
  std::string name_;
  size_t index_;
  std::atomic<bool> joined_{false};
  std::atomic<uint64_t> life_{0};
  std::atomic<bool> has_clock_{false};
  clockid_t clock_{};
  uint32_t ticks_ = 0;
};

// The nodes of one simulated cluster: the head is node 0.
class sim_cluster {
public:
  explicit sim_cluster(size_t workers)
      : n_(workers + 1), sent_to_head_(new std::atomic<sim_clock::rep>[workers + 1]) {
    names_.push_back("head");
    for (size_t i = 1; i < n_; ++i)
      names_.push_back("node-" + std::to_string(i));
    for (size_t i = 0; i < n_; ++i) {
      sent_to_head_[i] = 0;
      index_.emplace(names_[i], i);
      ports_.push_back(std::make_unique<sim_port>(*this, names_[i], i));
      views_.push_back(std::make_unique<actors::membership_view>());
    }
  }

  /// Spawns every membership; none joins before `open`.
  void start(caf::actor_system& sys) {
    global_ = actors::spawn_global_scheduler(sys);
    for (size_t i = 0; i < n_; ++i) {
      actors::membership_config mc;
      mc.self = row_of(names_[i], i == 0);
      mc.head = names_[0];
      mc.nodes = names_;
      mc.heartbeat_interval = heartbeat_interval;
      mc.node_timeout = 4 * heartbeat_interval;
      mc.log = node_log{names_[i], log_level::warn};
      auto m =
          actors::spawn_membership(sys, std::move(mc), *ports_[i], *views_[i], i == 0);
      addresses_.push_back(m.address());
      members_.push_back(std::move(m));
    }
  }

  /// Lets the nodes join (each at its next tick); what is spawned is visible to all.
  void open() { open_.store(true, std::memory_order_release); }
  bool is_open() const { return open_.load(std::memory_order_acquire); }

  /// Whether the head sees every node alive and every node's table lists all.
  bool formed() const {
    for (auto& v : views_) {
      auto t = v->get();
      if (t->size() != n_) return false;
    }
    auto head = views_[0]->get();
    return std::all_of(head->begin(), head->end(),
                       [](auto& row) { return row.second.info.alive; });
  }

  /// Stops every actor (before their system goes; the ports outlive them).
  void stop() {
    for (auto& m : members_)
      caf::anon_send_exit(m, caf::exit_reason::user_shutdown);
    if (global_) caf::anon_send_exit(global_, caf::exit_reason::user_shutdown);
    members_.clear(); // a detached actor's thread ends once nothing holds it
  }

  /// `m` from `from` as its addressee's membership takes it; empty for what the
  /// membership does not take. One message may go to many: it is not copied.
  caf::message as_message(const std::string& from, const wire_msg::message& m) {
    if (auto* hb = std::get_if<wire_msg::heartbeat>(&m)) {
      ++heartbeats;
      return caf::make_message(actors::heartbeat_atom::value, from, *hb);
    }
    if (auto* t = std::get_if<wire_msg::node_table>(&m))
      return caf::make_message(actors::table_atom::value, *t);
    if (auto* j = std::get_if<wire_msg::join>(&m))
      return caf::make_message(actors::join_atom::value, *j);
    return {};
  }

  /// How long since `from` last sent the head anything, as a node's transport tells
  /// from the bytes it read (a head whose membership is behind, as when a thousand
  /// nodes join at once, does not find the nodes waiting in its mailbox silent).
  std::optional<std::chrono::milliseconds> quiet_for(const std::string& from) const {
    auto i = index_.find(from);
    if (i == index_.end()) return std::nullopt;
    auto last = sent_to_head_[i->second].load(std::memory_order_relaxed);
    if (last == 0) return std::nullopt;
    auto now = sim_clock::now().time_since_epoch().count();
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        sim_clock::duration{now - last});
  }
  void sent_to_head(size_t from) {
    sent_to_head_[from].store(sim_clock::now().time_since_epoch().count(),
                              std::memory_order_relaxed);
  }

  /// Hands `msg` to `to`'s membership.
  void deliver(const std::string& to, const caf::message& msg) {
    auto i = index_.find(to);
    if (i == index_.end() || msg.empty()) return;
    if (auto target = caf::actor_cast<caf::actor>(addresses_[i->second]))
      caf::anon_send(target, msg);
  }

  void record(const wire_msg::node_info& info) {
    if (auto total = detail::from_list(info.total))
      caf::anon_send(global_, actors::update_atom::value, info.name,
                     actors::node_report{*total, info.queued, info.by_priority,
                                         info.alive, actors::abilities_of(info)});
  }

  /// Placements per second of `count` tasks of one CPU placed one after another by the
  /// head's global scheduler, as its table now stands.
  double placements_per_s(size_t count) {
    auto done = std::make_shared<std::promise<void>>();
    auto left = std::make_shared<std::atomic<size_t>>(count);
    auto t0 = sim_clock::now();
    for (size_t i = 0; i < count; ++i) {
      actors::placement_request req;
      req.demand.set("CPU", 1);
      req.needs = actors::work_needs::function("pipeline.stage_3");
      req.then = [done, left](result<std::string>) {
        if (left->fetch_sub(1) == 1) done->set_value();
      };
      caf::anon_send(global_, actors::place_atom::value, std::move(req));
    }
    if (done->get_future().wait_for(60s) != std::future_status::ready)
      throw std::runtime_error("the simulated head's global scheduler placed too slowly");
    return static_cast<double>(count) / seconds_since(t0);
  }

  sim_port& head_port() { return *ports_[0]; }
  const std::string& head_name() const { return names_[0]; }

  /// Node `i` reads its view's loads, as a node placing work does.
  void read_loads(size_t i) { views_[i]->loads(); }

  /// Load changes at a tenth of the nodes each tick (the table carries changes), and
  /// another tenth reading them.
  std::atomic<bool> churn{false};
  std::atomic<uint64_t> heartbeats{0};
  std::atomic<uint64_t> bytes_to_nodes{0}; // node tables, and whatever else goes out
  std::atomic<uint64_t> bytes_to_head{0};  // joins and heartbeats

private:
  size_t n_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, size_t> index_;
  std::vector<std::unique_ptr<sim_port>> ports_;
  std::vector<std::unique_ptr<actors::membership_view>> views_;
  std::unique_ptr<std::atomic<sim_clock::rep>[]> sent_to_head_;
  std::vector<actors::membership_actor> members_; // the main thread's
  std::vector<caf::actor_addr> addresses_;        // any thread's, fixed once spawned
  caf::actor global_;
  std::atomic<bool> open_{false};
};

bool sim_port::send(const std::string& peer, const wire_msg::message& m) {
  note_thread();
  if (!c_.is_open()) return false;
  auto bytes = wire_msg::encode_frame(m).size();
  (peer == c_.head_name() ? c_.bytes_to_head : c_.bytes_to_nodes) += bytes;
  if (peer == c_.head_name()) c_.sent_to_head(index_);
  c_.deliver(peer, c_.as_message(name_, m));
  return true;
}

std::vector<std::string> sim_port::send_all(const std::vector<std::string>& peers,
                                            const wire_msg::message& m) {
  note_thread();
  if (!c_.is_open()) return peers;
  auto bytes = wire_msg::encode_frame(m).size(); // encoded once for all, as a node does
  c_.bytes_to_nodes += bytes * peers.size();
  auto msg = c_.as_message(name_, m);
  for (auto& p : peers)
    c_.deliver(p, msg);
  return {};
}

std::optional<std::chrono::milliseconds> sim_port::quiet_for(const std::string& peer) {
  return c_.quiet_for(peer);
}

bool sim_port::connected(const std::string& peer) {
  // The head's connection is up once joined; the mesh between the others is not
  // simulated (the data plane's connections are the transport's).
  return peer != c_.head_name() || index_ == 0 || joined_.load();
}

void sim_port::rejoin() {
  if (!c_.is_open() || joined_.exchange(true)) return;
  wire_msg::join j;
  j.node = row_of(name_, false);
  j.node.incarnation = life_;
  c_.bytes_to_head += wire_msg::encode_frame(j).size();
  c_.sent_to_head(index_);
  c_.deliver(c_.head_name(), c_.as_message(name_, j));
}

void sim_port::record(const wire_msg::node_info& info) {
  note_thread();
  c_.record(info);
}

uint32_t sim_port::queued() {
  ++ticks_;
  if (!c_.churn) return 0;
  // Another tenth places work by the nodes' loads: they get the loads' changes.
  if (index_ % 10 == 5) c_.read_loads(index_);
  if (index_ % 10 != 0) return 0;
  return ticks_ % 7; // a tenth of the nodes: a different load each tick
}

void sim_port::note_thread() {
  if (index_ != 0 || has_clock_.load(std::memory_order_acquire)) return;
  if (pthread_getcpuclockid(pthread_self(), &clock_) == 0)
    has_clock_.store(true, std::memory_order_release);
}

double sim_port::thread_cpu_seconds() const {
  if (!has_clock_.load(std::memory_order_acquire)) return 0;
  timespec ts{};
  clock_gettime(clock_, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// What one window of the steady state cost.
struct window {
  double head_cpu_s = 0;
  double wall_s = 0;
  uint64_t heartbeats = 0;
  uint64_t table_bytes = 0;
  uint64_t heartbeat_bytes = 0;
};

window measure_window(sim_cluster& c, std::chrono::milliseconds length) {
  auto cpu0 = c.head_port().thread_cpu_seconds();
  auto hb0 = c.heartbeats.load();
  auto bytes0 = c.bytes_to_nodes.load();
  auto up0 = c.bytes_to_head.load();
  auto t0 = sim_clock::now();
  std::this_thread::sleep_for(length);
  window w;
  w.wall_s = seconds_since(t0);
  w.head_cpu_s = c.head_port().thread_cpu_seconds() - cpu0;
  w.heartbeats = c.heartbeats.load() - hb0;
  w.table_bytes = c.bytes_to_nodes.load() - bytes0;
  w.heartbeat_bytes = c.bytes_to_head.load() - up0;
  return w;
}

struct sim_result {
  double form_s = 0;
  double us_per_heartbeat = 0;
  double idle_cores = 0;
  double idle_bytes_per_node_s = 0;
  double heartbeat_bytes_per_node_s = 0;
  double churn_bytes_per_node_s = 0;
  double churn_us_per_heartbeat = 0;
  double placements_per_s = 0;
  double kib_per_node = 0;
};

sim_result run_sim(size_t nodes, bool quick) {
  sim_result r;
  sim_cluster c{nodes - 1};
  caf::actor_system_config cfg;
  // Work sharing: an idle thread waits on a condition, not in the work-stealing
  // scheduler's sleeps, which would set the pace of a thousand small actors.
  cfg.set("scheduler.policy", caf::atom("sharing"));
  caf::actor_system sys{cfg};
  auto rss0 = rss_bytes(); // the nodes' own memory from here
  // Before the system waits for its actors, whatever ends the run.
  struct stopper {
    sim_cluster& c;
    ~stopper() { c.stop(); }
  } stop_at_end{c};
  c.start(sys);
  auto t0 = sim_clock::now();
  c.open();
  auto cap = std::chrono::seconds(quick ? 60 : 120);
  while (!c.formed()) {
    if (sim_clock::now() - t0 > cap)
      throw std::runtime_error("a simulated cluster of " + std::to_string(nodes) +
                               " nodes did not form within " +
                               std::to_string(cap.count()) + " s");
    std::this_thread::sleep_for(50ms); // each look reads every node's view
  }
  r.form_s = seconds_since(t0);
  r.kib_per_node = static_cast<double>(rss_bytes() - std::min(rss0, rss_bytes())) /
                   1024.0 / static_cast<double>(nodes);
  // Settle: the joins' changes go out with the next ticks.
  std::this_thread::sleep_for(3 * heartbeat_interval);
  auto length = std::chrono::milliseconds(quick ? 2000 : 5000);
  auto idle = measure_window(c, length);
  auto per_node_s = [&](const window& w) {
    return static_cast<double>(w.table_bytes) / static_cast<double>(nodes - 1) / w.wall_s;
  };
  r.us_per_heartbeat = idle.head_cpu_s * 1e6 / std::max<double>(1, idle.heartbeats);
  r.idle_cores = idle.head_cpu_s / idle.wall_s;
  r.idle_bytes_per_node_s = per_node_s(idle);
  r.heartbeat_bytes_per_node_s = static_cast<double>(idle.heartbeat_bytes) /
                                 static_cast<double>(nodes - 1) / idle.wall_s;
  c.churn = true;
  std::this_thread::sleep_for(2 * heartbeat_interval);
  auto busy = measure_window(c, length);
  c.churn = false;
  r.churn_bytes_per_node_s = per_node_s(busy);
  r.churn_us_per_heartbeat = busy.head_cpu_s * 1e6 / std::max<double>(1, busy.heartbeats);
  // The nodes catch up with the last changes before placements are timed.
  std::this_thread::sleep_for(4 * heartbeat_interval);
  r.placements_per_s = c.placements_per_s(quick ? 2000 : 10000);
  return r;
}

} // namespace

void measure_sim(bench_session& s, int nodes, bool quick) {
  if (!s.wants("sim")) return;
  std::vector<size_t> sizes;
  auto n = static_cast<size_t>(nodes);
  for (size_t size : {100, 250, 500, 1000, 2000, 4000})
    if (size < n && (!quick || size == 100)) sizes.push_back(size);
  sizes.push_back(n);
  double base_us = 0;
  for (auto size : sizes) {
    auto r = run_sim(size, quick);
    auto key = "sim_" + std::to_string(size) + "_nodes_";
    if (base_us == 0) {
      base_us = r.us_per_heartbeat;
      s.add(floor_row(key + "head_us_per_heartbeat", r.us_per_heartbeat, "us"));
    } else {
      s.add(figure{
          key + "head_us_per_heartbeat", r.us_per_heartbeat, "us",
          "sim_" + std::to_string(sizes.front()) + "_nodes_head_us_per_heartbeat",
          base_us, goal::ratio_at_most, 2.0, "<= 2x its value at the smallest size"});
    }
    s.add(figure{key + "form_seconds", r.form_s, "s", "", 0, goal::at_most, 10.0,
                 "<= 10 s"});
    s.add(floor_row(key + "head_idle_cores", r.idle_cores, "cores"));
    s.add(figure{key + "idle_table_bytes_per_node_per_s", r.idle_bytes_per_node_s, "B/s",
                 "", 0, goal::at_most, 1024, "<= 1 KB/s"});
    s.add(floor_row(key + "heartbeat_bytes_per_node_per_s", r.heartbeat_bytes_per_node_s,
                    "B/s"));
    s.add(floor_row(key + "churn_table_bytes_per_node_per_s", r.churn_bytes_per_node_s,
                    "B/s"));
    s.add(versus(key + "churn_head_us_per_heartbeat", r.churn_us_per_heartbeat, "us",
                 key + "head_us_per_heartbeat", r.us_per_heartbeat));
    s.add(floor_row(key + "placements_per_s", r.placements_per_s, "placements/s"));
    s.add(floor_row(key + "memory_per_node_kib", r.kib_per_node, "KiB"));
  }
}

} // namespace swarm::tools
