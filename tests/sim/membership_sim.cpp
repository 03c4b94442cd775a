#include "tests/sim/membership_sim.hpp"

#include <caf/all.hpp>
#include <caf/detail/test_actor_clock.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>

#include "actors/control_store/gcs_shard.hpp"
#include "actors/control_store/gcs_shards.hpp"
#include "actors/node/membership.hpp"
#include "tests/sim/sim_network.hpp"

namespace swarm::sim {

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
namespace wm = swarm::wire_msg;
using link = sim_network::link;

constexpr size_t workers = 5;
constexpr auto heartbeat_interval = 50ms;
constexpr auto node_timeout = 400ms;
constexpr int64_t timeout_ms = 400;
constexpr int64_t user_timeout_ms = 2 * timeout_ms; // TCP_USER_TIMEOUT, as nodes set it
constexpr int64_t connect_timeout_ms = 1000;        // a dial into a cut network
constexpr int64_t faults_from_ms = 500, faults_until_ms = 15000;
constexpr int64_t settle_ms = 8000;          // after the last fault, before the end
constexpr int64_t write_every_ms = 25;       // the driver's key-value writes
constexpr int64_t write_deadline_ms = 10000; // a write tried again until then
constexpr int64_t reply_timeout_ms = 2000;   // an attempt not answered: tried again
constexpr int64_t read_phase_ms = 5000;      // the reads back, after the end
constexpr size_t gcs_shards = 2;
constexpr uint64_t epoch_ms = 1'700'000'000'000; // the virtual wall clock at the start
const std::string head = "head";

/// One fault, as drawn: what, on which worker, from when, for how long.
struct fault {
  enum class kind {
    freeze,
    cut_out,
    cut_in,
    cut_both,
    cut_from_head,
    delay,
    reset,
    kill,
    reorder,
    duplicate,
    kill_head
  } what;
  std::string node;
  int64_t start = 0;
  int64_t length = 0;
  int64_t extra = 0; // a delay's added latency
  std::string describe() const {
    static const char* names[] = {"freeze",        "cut-out",   "cut-in",   "cut-both",
                                  "cut-from-head", "delay",     "reset",    "kill",
                                  "reorder",       "duplicate", "kill-head"};
    auto s = std::string{names[static_cast<int>(what)]} + " " + node + " at " +
             std::to_string(start) + " ms for " + std::to_string(length) + " ms";
    if (what == kind::delay) s += " (+" + std::to_string(extra) + " ms)";
    return s;
  }
  // Whether the head may find `node` dead because of this fault.
  bool loses_node() const { return what != kind::duplicate && what != kind::reorder; }
  // ... at `t`: while it lasts, and until what it held back has arrived and a timeout
  // has passed. A head that starts again may find any node dead that has not rejoined
  // within its timeout.
  bool excuses(const std::string& name, int64_t t) const {
    if ((node != name && what != kind::kill_head) || !loses_node()) return false;
    return t >= start && t <= start + length + extra + timeout_ms + 200;
  }
};
constexpr int fault_kinds = 10; // drawn for workers: all but kill_head

std::vector<fault> draw_faults(std::mt19937_64& rng, bool head_kills) {
  std::vector<fault> out(2 + rng() % 7);
  for (auto& f : out) {
    f.what = static_cast<fault::kind>(rng() % fault_kinds);
    f.node = "worker-" + std::to_string(1 + rng() % workers);
    f.start =
        faults_from_ms + static_cast<int64_t>(rng() % (faults_until_ms - faults_from_ms));
    f.length = 100 + static_cast<int64_t>(rng() % 1400);
    f.extra = 50 + static_cast<int64_t>(rng() % 500);
    if (f.what == fault::kind::reorder) f.node = "all";
  }
  if (head_kills) { // drawn after the workers' faults, which stay as without it
    fault f;
    f.what = fault::kind::kill_head;
    f.node = "head";
    f.start =
        faults_from_ms + static_cast<int64_t>(rng() % (faults_until_ms - faults_from_ms));
    f.length = 100 + static_cast<int64_t>(rng() % 1400);
    out.push_back(f);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const fault& a, const fault& b) { return a.start < b.start; });
  return out;
}

class world;

/// What one process of a node asks of the node around its membership. A process that
/// was killed (or replaced) reaches nothing.
class sim_port final : public actors::membership_port {
public:
  sim_port(world& w, std::string name, uint64_t process)
      : w_(w), name_(std::move(name)), process_(process) {}

  bool send(const std::string& peer, const wm::message& m) override;
  bool connected(const std::string& peer) override;
  std::optional<milliseconds> quiet_for(const std::string& peer) override;
  void disconnect(const std::string& peer, const std::string& why) override;
  void dial(const std::string& peer) override;
  void rejoin() override;
  void record(const wm::node_info& info) override;
  void forget(const std::string& node) override;
  void set_chain(std::vector<std::string> members) override;
  void set_kv_placement(const wm::kv_placement& p) override;
  uint64_t kv_placement_version() override;
  void lost(const std::string& peer, const std::string& why) override;
  uint32_t queued() override { return 0; }
  wm::store_usage store() override { return {}; }
  caf::actor scheduler() override { return {}; }
  void fenced(uint64_t life, const std::string& why) override;

private:
  bool current() const;

  world& w_;
  std::string name_;
  uint64_t process_;
};

/// A node: its process now (the membership actor, its port and view) and what the
/// faults did to it.
struct sim_node {
  std::string name;
  uint32_t index = 0;
  bool up = false;
  uint64_t process = 0; // counts its starts: what an earlier one left behind is void
  uint64_t life = 0;    // its incarnation
  int frozen = 0;       // freezes under way
  bool rejoining = false;
  sim_port* port = nullptr;
  actors::membership_view* view = nullptr;
  actors::membership_actor actor;
  std::shared_ptr<actors::gcs_shards> gcs; // its control-store shards
  std::vector<caf::actor> shards;
  std::set<caf::actor_id> ids; // the actors a freeze stops
};

/// A key-value write of the driver (on the head), tried until acknowledged, refused or
/// out of time; then read back.
struct kv_write {
  std::string key;
  std::vector<uint8_t> value;
  int64_t started = 0;
  uint64_t attempt = 0; // the request id of the attempt under way
  bool acked = false;
  bool done = false;
  std::string outcome; // how it ended, or how its read back did
};

class world {
public:
  world(unsigned seed, bool keep_trace, const membership_options& options)
      : fault_rng_(seed), keep_trace_(keep_trace), replication_(options.replication),
        net_(now_, uint64_t{seed} * 7919 + 17, user_timeout_ms,
             {[this](const std::string& to, const std::string& from,
                     std::vector<wm::message> in) {
                for (auto& m : in)
                  route(node(to), from, m);
              },
              [this](const std::string& at, const std::string& peer,
                     const std::string& why) { down(at, peer, why); },
              [this](const std::string& n) { return node(n).up; },
              [this](const std::string& line) { note(line); },
              [this](const std::string& what) { violation(what); }}) {
    cfg_.set("scheduler.policy", caf::atom("testing"));
    cfg_.set("logger.file-verbosity", caf::atom("quiet"));
    cfg_.set("logger.console-verbosity", caf::atom("quiet"));
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    sched_ = &dynamic_cast<caf::scheduler::test_coordinator&>(sys_->scheduler());
    sched_->clock().current_time += std::chrono::hours(1);
    nodes_.resize(workers + 1);
    for (uint32_t i = 0; i <= workers; ++i) {
      nodes_[i].name = i == 0 ? head : "worker-" + std::to_string(i);
      nodes_[i].index = i;
      names_.push_back(nodes_[i].name);
    }
    run_.faults.clear();
    faults_ = draw_faults(fault_rng_, options.head_kills);
    for (auto& f : faults_)
      run_.faults.push_back(f.describe());
  }

  ~world() {
    for (auto& n : nodes_) {
      if (n.actor) caf::anon_send_exit(n.actor, caf::exit_reason::user_shutdown);
      for (auto& shard : n.shards)
        caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
    }
    // What still waits for an answer (a key-value request's one-shot actor) ends with
    // its timeout.
    sched_->run();
    for (int i = 0; i < 100 && sched_->clock().trigger_timeouts() > 0; ++i)
      sched_->run();
    sys_.reset(); // before the ports and views its actors used
  }

  membership_run run() {
    int64_t end = faults_until_ms;
    for (auto& f : faults_) {
      end = std::max(end, f.start + f.length);
      at(f.start, [this, &f] { turn(f, true); });
      at(f.start + f.length, [this, &f] { turn(f, false); });
    }
    end += settle_ms;
    for (int64_t t = 200; t < faults_until_ms + 2000; t += write_every_ms)
      at(t, [this] { write(); });
    for (auto& n : nodes_)
      start(n);
    for (now_ = 0; now_ <= end; ++now_)
      step();
    check_converged();
    // Every acknowledged write reads back, from whichever node serves its key now.
    reading_ = true;
    for (size_t i = 0; i < writes_.size(); ++i)
      if (writes_[i].acked) {
        writes_[i].done = false;
        writes_[i].started = now_;
        attempt(i);
      }
    for (auto stop = now_ + read_phase_ms; now_ <= stop && !all_done(); ++now_)
      step();
    check_writes();
    run_.alarms = losses_reported_;
    run_.deliveries = net_.deliveries();
    run_.simulated_s = static_cast<double>(now_) / 1000.0;
    return std::move(run_);
  }

  // -- the driver's key-value writes ---------------------------------------------------

  // A new write, under a key of its own.
  void write() {
    kv_write w;
    w.key = "key-" + std::to_string(writes_.size());
    auto v = "value of " + w.key;
    w.value.assign(v.begin(), v.end());
    w.started = now_;
    writes_.push_back(std::move(w));
    attempt(writes_.size() - 1);
  }

  // Sends write (or, reading, read) `i` to the node serving its key by the head's
  // placement, as a node's key-value client does; the head serves it without one.
  void attempt(size_t i) {
    auto& w = writes_[i];
    w.attempt = ++requests_;
    auto id = w.attempt;
    wm::kv_request q;
    q.request_id = id;
    q.op = reading_ ? wm::kv_request::op_type::get : wm::kv_request::op_type::put;
    q.key = w.key;
    if (!reading_) q.value = w.value;
    pending_[id] = i;
    at(now_ + reply_timeout_ms, [this, id] {
      answered(id, error{errc::timeout,
                         "no answer in " + std::to_string(reply_timeout_ms) + " ms"});
    });
    if (!nodes_[0].up)
      return answered(id, error{errc::node_unreachable, "the driver's head is down"});
    auto target = nodes_[0].gcs->kv_node(w.key).value_or(head);
    if (target.empty()) return answered(id, error{errc::runtime_stopped, "not placed"});
    if (target == head) return serve(nodes_[0], head, std::move(q));
    send_dialling(head, target, std::move(q));
  }

  // Node `server` serves a key-value request from `from`, as a node does.
  void serve(sim_node& server, const std::string& from, wm::kv_request q) {
    auto id = q.request_id;
    auto reply = [this, name = server.name, process = server.process, from,
                  id](actors::gcs_shards::kv_reply r) {
      if (!is_current(name, process)) return;
      if (name == from) return answered(id, std::move(r));
      send_dialling(name, from, actors::to_wire(id, std::move(r)));
    };
    if (server.name != head && !server.gcs->kv_node(q.key))
      return reply(error{errc::runtime_stopped,
                         "node '" + server.name + "' serves no key-value shard"});
    server.gcs->kv_async(static_cast<detail::kv_op>(q.op), q.key, std::move(q.value),
                         std::move(reply));
  }

  // The answer to attempt `id`; one that comes after its attempt was given up on counts
  // for nothing.
  void answered(uint64_t id, actors::gcs_shards::kv_reply r) {
    auto p = pending_.find(id);
    if (p == pending_.end()) return;
    auto i = p->second;
    pending_.erase(p);
    auto& w = writes_[i];
    if (w.done || w.attempt != id) return;
    if (r) {
      w.done = true;
      if (!reading_) {
        w.acked = true;
        w.outcome = "acknowledged at " + std::to_string(now_) + " ms";
      } else if (!*r) {
        w.outcome += ", then not found";
      } else if (**r != w.value) {
        w.outcome += ", then read back as another value";
      } else {
        w.outcome.clear(); // read back as written
      }
      note((reading_ ? "read " : "acknowledged ") + w.key);
      return;
    }
    if (now_ - w.started < write_deadline_ms && r.err().code != errc::invalid_argument)
      return retry_later(i);
    w.done = true;
    if (reading_) w.outcome += ", then its read failed: " + r.err().to_string();
    note(w.key + (reading_ ? " could not be read: " : " failed: ") + r.err().to_string());
  }

  void retry_later(size_t i) {
    at(now_ + 50, [this, i] {
      if (!writes_[i].done) attempt(i);
    });
  }

  bool all_done() const {
    return std::all_of(writes_.begin(), writes_.end(),
                       [](const kv_write& w) { return w.done; });
  }

  // Every acknowledged write read back as written, or its loss reported: a shard that
  // found no copy as new as its chain's said writes may be lost (every node holding it
  // lost at once).
  void check_writes() {
    for (auto& w : writes_) {
      if (!w.acked) continue;
      ++run_.acknowledged;
      if (!w.done || !w.outcome.empty()) {
        auto what =
            w.key + " was " + w.outcome +
            (w.done ? ""
                    : ", then not read back in " + std::to_string(read_phase_ms) + " ms");
        if (reported_.count(actors::shard_of(w.key, gcs_shards)) == 0) {
          violation(what + ", and no node reported a loss of its shard");
        } else {
          note("lost, as reported: " + what);
          ++run_.lost_reported;
        }
      }
    }
    run_.writes = writes_.size();
  }

  // A key-value shard's log line saying writes may be lost ("key-value shard N: ...").
  void reported_loss(const std::string& line) {
    ++losses_reported_;
    static const std::string kv = "key-value shard ";
    if (auto at = line.find(kv); at != std::string::npos)
      reported_.insert(std::stoul(line.substr(at + kv.size())));
  }

  // -- what the ports ask -------------------------------------------------------------

  sim_node& node(const std::string& name) {
    return nodes_[name == head ? 0 : std::stoul(name.substr(7))];
  }

  bool is_current(const std::string& name, uint64_t process) {
    auto& n = node(name);
    return n.up && n.process == process;
  }

  bool connected(const std::string& from, const std::string& to) const {
    return net_.connected(from, to);
  }

  bool send(const std::string& from, const std::string& to, const wm::message& m) {
    return net_.send(from, to, m);
  }

  std::optional<milliseconds> quiet_for(const std::string& at, const std::string& peer) {
    return net_.quiet_for(at, peer);
  }

  // Sends `m`, dialling `to` first when no connection is open, as a node's transport
  // does; what waits for the dial goes in order once it connects, or is dropped.
  void send_dialling(const std::string& from, const std::string& to, wm::message m) {
    if (connected(from, to)) {
      send(from, to, m);
      return;
    }
    auto& waiting = dialling_[{from, to}];
    waiting.push_back(std::move(m));
    if (waiting.size() > 1) return; // the dial is under way
    connect(from, to, [this, from, to](bool ok) {
      auto sent = std::move(dialling_[{from, to}]);
      dialling_.erase({from, to});
      if (!ok) note(std::to_string(sent.size()) + " message(s) dropped");
      for (auto& each : sent)
        if (ok) send(from, to, each);
    });
  }

  // `from` closes its end: its own report comes back at once, the peer's when the close
  // reaches it.
  void disconnect(const std::string& from, const std::string& to,
                  const std::string& why) {
    net_.close(from, to, why);
  }

  // Dials `peer` for `from`'s process; `then` hears whether it connected.
  void connect(const std::string& from, const std::string& peer,
               std::function<void(bool)> then) {
    bool reach = net_.reachable(from, peer);
    auto wait =
        reach ? net_.latency(from, peer) + net_.latency(peer, from) : connect_timeout_ms;
    for_process(from, now_ + wait, [this, from, peer, then = std::move(then)] {
      bool ok = node(peer).up && net_.reachable(from, peer);
      if (ok) net_.open(from, peer);
      note(std::string{ok ? "connected " : "cannot connect "} + from + " -> " + peer);
      then(ok);
    });
  }

  // Joins the head, one attempt at a time: on the connection open, or a new one.
  void rejoin(const std::string& name) {
    if (connected(name, head)) {
      send(name, head, join_of(node(name)));
      return;
    }
    if (node(name).rejoining) return;
    node(name).rejoining = true;
    connect(name, head, [this, name](bool ok) {
      auto& n = node(name);
      n.rejoining = false;
      if (ok) send(name, head, join_of(n));
    });
  }

  // The head found this life dead: the node stops what it hosted for others (a few ms),
  // closes the old life's connections and joins as `life`.
  void fenced(const std::string& name, uint64_t life) {
    node(name).life = life;
    for_process(name, now_ + 5, [this, name] {
      for (auto& peer : names_)
        if (peer != name && peer != head && connected(name, peer))
          disconnect(name, peer, "node '" + name + "' begins a new life");
      send_dialling(name, head, join_of(node(name)));
    });
  }

  // The head's record of a row: fencing is checked as it changes.
  void record(const wm::node_info& info) {
    note("record " + info.name + " life " + std::to_string(info.incarnation) +
         (info.alive ? " alive" : " dead"));
    auto key = std::make_pair(info.name, info.incarnation);
    if (!info.alive) {
      if (found_dead_.emplace(key, now_).second) {
        ++run_.verdicts;
        if (std::none_of(faults_.begin(), faults_.end(),
                         [&](const fault& f) { return f.excuses(info.name, now_); }))
          violation("the head found " + info.name + " dead, and no fault touched it");
      }
    } else if (auto d = found_dead_.find(key); d != found_dead_.end()) {
      violation("the head recorded " + info.name + "'s life " +
                std::to_string(info.incarnation) +
                " alive again, after it found it dead at " + std::to_string(d->second) +
                " ms");
    }
  }

  void set_chain(std::vector<std::string> members) {
    chain_ = members;
    nodes_[0].gcs->set_chain(std::move(members));
  }

  void note(const std::string& what) {
    auto line = std::to_string(now_) + " " + what;
    for (unsigned char c : line) // FNV-1a
      run_.fingerprint = (run_.fingerprint ^ c) * 1099511628211ull;
    run_.fingerprint = (run_.fingerprint ^ '\n') * 1099511628211ull;
    if (keep_trace_) run_.trace.push_back(std::move(line));
  }

  void violation(const std::string& what) {
    note("VIOLATION " + what);
    run_.violations.push_back("at " + std::to_string(now_) + " ms: " + what);
  }

private:
  uint64_t wall_ms() const { return epoch_ms + static_cast<uint64_t>(now_); }

  // `n`'s join, as a node sends it: its row, the key-value placement it holds, and what
  // its table shows.
  wm::join join_of(const sim_node& n) const {
    return actors::join_of(row_of(n), n.gcs->kv_placement(), *n.view, head);
  }

  wm::node_info row_of(const sim_node& n) const {
    wm::node_info i;
    i.name = n.name;
    i.address = "sim";
    i.port = static_cast<uint16_t>(7000 + n.index);
    i.total = {{"CPU", 1.0}};
    i.available = i.total;
    i.head = n.index == 0;
    // The last worker joined by address, outside the cluster file: its row goes once it
    // is found dead, and it joins again when its heartbeats are refused.
    i.owner_index = n.index == workers ? n.index : 0;
    i.incarnation = n.life;
    return i;
  } // The control store of `n`'s new process, as a node starts it: shards of the node,
  // job and object tables, then the key-value table's own, whose chains reach the
  // other nodes' shards over the network.
  void start_control_store(sim_node& n, const node_log& log) {
    retired_.push_back(std::move(n.gcs));
    n.shards.clear();
    n.ids.clear();
    n.gcs = std::make_shared<actors::gcs_shards>(*sys_, gcs_shards, true);
    n.gcs->chain_link()->set(n.name, [this, name = n.name, process = n.process](
                                         const std::string& to, wm::gcs_chain m) {
      if (is_current(name, process)) send_dialling(name, to, std::move(m));
    });
    for (size_t i = 0; i < n.gcs->local_count(); ++i) {
      actors::gcs_shard_config c;
      c.index = i % gcs_shards;
      c.count = gcs_shards;
      c.chain_id = i;
      c.link = n.gcs->chain_link();
      c.logger = log;
      c.wall_clock = [this] { return wall_ms(); };
      auto shard = actors::spawn_gcs_shard(*sys_, c);
      if (!shard) throw std::runtime_error(shard.err().to_string());
      n.shards.push_back(*shard);
      n.ids.insert(shard->id());
      n.gcs->set(i, *shard);
    }
  }

  // A new process of `n`: its membership, and a worker's join.
  void start(sim_node& n) {
    for (auto i = dialling_.begin(); i != dialling_.end();) // an earlier process's
      i = i->first.first == n.name ? dialling_.erase(i) : std::next(i);
    ++n.process;
    n.up = true;
    n.rejoining = false;
    n.life = std::max(wall_ms(), n.life + 1);
    ports_.push_back(std::make_unique<sim_port>(*this, n.name, n.process));
    views_.push_back(std::make_unique<actors::membership_view>());
    n.port = ports_.back().get();
    n.view = views_.back().get();
    actors::membership_config mc;
    mc.self = row_of(n);
    mc.head = head;
    mc.nodes = {names_.begin(), names_.end() - 1}; // the file's
    mc.replication = replication_;
    mc.gcs_shards = 2;
    mc.gcs_hosts = 3;
    mc.heartbeat_interval = heartbeat_interval;
    mc.node_timeout = node_timeout;
    mc.log = node_log{n.name, log_level::info,
                      [this, name = n.name](log_level l, const std::string& line) {
                        note(name + " " + to_string(l) + ": " + line);
                        if (l == log_level::error &&
                            line.find("may be lost") != std::string::npos)
                          reported_loss(line);
                      }};
    mc.wall_clock = [this] { return wall_ms(); };
    start_control_store(n, mc.log);
    n.actor = actors::spawn_membership(*sys_, std::move(mc), *n.port, *n.view, false);
    n.ids.insert(n.actor.id());
    note("start " + n.name + " life " + std::to_string(n.life));
    if (n.index > 0) rejoin(n.name);
  }

  // `n`'s process dies: its connections close (the peers hear when the close reaches
  // them); it starts again as a new life when the fault ends.
  void kill(sim_node& n) {
    n.up = false;
    n.frozen = 0;
    caf::anon_send_exit(n.actor, caf::exit_reason::kill);
    for (auto& shard : n.shards)
      caf::anon_send_exit(shard, caf::exit_reason::kill);
    net_.crash(n.name, names_);
  }

  // The head's process dies, and the driver in it with the requests it had in flight:
  // those writes are tried again once it runs again (the driver's caller retries).
  void kill_head() {
    kill(nodes_[0]);
    auto lost = std::move(pending_);
    pending_.clear();
    for (auto& [id, i] : lost)
      if (!writes_[i].done && writes_[i].attempt == id) retry_later(i);
  }

  // Begins (`on`) or ends fault `f`.
  void turn(const fault& f, bool on) {
    note((on ? "fault begins: " : "fault ends: ") + f.describe());
    switch (f.what) {
    case fault::kind::freeze: {
      auto& frozen = node(f.node).frozen;
      frozen = on ? frozen + 1 : std::max(0, frozen - 1);
      break;
    }
    case fault::kind::cut_out:
    case fault::kind::cut_in:
    case fault::kind::cut_both:
    case fault::kind::cut_from_head:
      for_cut(f, on);
      break;
    case fault::kind::delay:
      net_.delay(f.node, f.extra, on);
      break;
    case fault::kind::reset:
      if (on) net_.reset(f.node, head);
      break;
    case fault::kind::kill:
      if (on && node(f.node).up) kill(node(f.node));
      if (!on && !node(f.node).up) start(node(f.node));
      break;
    case fault::kind::reorder:
      net_.reorder(on);
      break;
    case fault::kind::duplicate:
      net_.duplicate(f.node, on);
      break;
    case fault::kind::kill_head:
      if (on && nodes_[0].up) kill_head();
      if (!on && !nodes_[0].up) start(nodes_[0]);
      break;
    }
  }

  // Cuts (`on`) or heals the directions `f` cuts.
  void for_cut(const fault& f, bool on) {
    for (auto& other : names_) {
      if (other == f.node || (f.what == fault::kind::cut_from_head && other != head))
        continue;
      std::vector<link> cut;
      if (f.what != fault::kind::cut_in) cut.emplace_back(f.node, other);
      if (f.what != fault::kind::cut_out) cut.emplace_back(other, f.node);
      for (auto& l : cut)
        net_.cut(l, on);
    }
  }

  // Runs `fn` at `t` for `name`'s process of now, unless it has died since; while the
  // node is frozen, its agent waits with it.
  void for_process(const std::string& name, int64_t t, std::function<void()> fn) {
    auto process = node(name).process;
    at(t, [this, name, process, fn = std::move(fn)]() mutable {
      if (!is_current(name, process)) return;
      if (node(name).frozen > 0) return for_process(name, now_ + 1, std::move(fn));
      fn();
    });
  }

  void at(int64_t t, std::function<void()> fn) {
    timers_.emplace(std::make_pair(t, ++seq_), std::move(fn));
  }

  void run_timers() {
    while (!timers_.empty() && timers_.begin()->first.first <= now_) {
      auto fn = std::move(timers_.begin()->second);
      timers_.erase(timers_.begin());
      fn();
    }
  }

  // What the node's routes do with each message membership takes.
  void route(sim_node& to, const std::string& from, wm::message& m) {
    std::string what = wm::message_names[m.index()];
    if (auto* hb = std::get_if<wm::heartbeat>(&m)) {
      what += " life " + std::to_string(hb->incarnation);
      caf::anon_send(to.actor, actors::heartbeat_atom::value, from, std::move(*hb));
    } else if (auto* j = std::get_if<wm::join>(&m)) {
      what += " life " + std::to_string(j->node.incarnation);
      if (j->node.name == from)
        caf::anon_send(to.actor, actors::join_atom::value, std::move(*j));
    } else if (auto* t = std::get_if<wm::node_table>(&m)) {
      what += " version " + std::to_string(t->version) + " on " +
              std::to_string(t->base) + ", " + std::to_string(t->nodes.size()) +
              " rows, " + std::to_string(t->changes.size()) + " changes";
      if (from == head)
        caf::anon_send(to.actor, actors::table_atom::value, std::move(*t));
    } else if (auto* f = std::get_if<wm::node_fenced>(&m)) {
      what += " life " + std::to_string(f->incarnation);
      if (from == head)
        caf::anon_send(to.actor, actors::fenced_atom::value, std::move(*f));
    } else if (auto* k = std::get_if<wm::kv_placement>(&m)) {
      what += " version " + std::to_string(k->version);
      if (from == head) to.port->set_kv_placement(*k);
    } else if (auto* c = std::get_if<wm::gcs_chain>(&m)) {
      what += " shard " + std::to_string(c->shard);
      if (c->kind == wm::gcs_chain::kind_type::sync) ++run_.shard_copies;
      if (!to.gcs->chain_message(std::move(*c))) violation(to.name + " has no " + what);
    } else if (auto* q = std::get_if<wm::kv_request>(&m)) {
      what += " " + q->key;
      serve(to, from, std::move(*q));
    } else if (auto* a = std::get_if<wm::kv_reply>(&m)) {
      what += " " + std::to_string(a->request_id);
      answered(a->request_id, actors::from_wire(std::move(*a)));
    } else {
      violation(from + " sent " + to.name + " a " + what);
    }
    note(from + " -> " + to.name + ": " + what);
  }

  void down(const std::string& at, const std::string& peer, const std::string& why) {
    auto& n = node(at);
    note("down at " + at + ": " + peer + ": " + why);
    if (n.up)
      caf::anon_send(n.actor, actors::down_atom::value, std::string{peer},
                     std::string{why});
  }

  void step() {
    if (now_ > 0) sched_->clock().advance_time(1ms);
    run_timers();
    net_.deliver_due();
    run_actors();
  }

  void run_actors() {
    std::set<caf::actor_id> frozen;
    for (auto& n : nodes_)
      if (n.up && n.frozen > 0) frozen.insert(n.ids.begin(), n.ids.end());
    sched_->run_jobs_filtered([&](caf::resumable* r) {
      auto* a = dynamic_cast<caf::abstract_actor*>(r);
      return a == nullptr || frozen.count(a->id()) == 0;
    });
  }

  // Once the faults healed: every node alive in every table with its running life, and
  // every node on the head's key-value placement.
  void check_converged() {
    auto head_kv = nodes_[0].gcs->kv_placement_version();
    for (auto& viewer : nodes_) {
      auto table = viewer.view->get();
      for (auto& n : nodes_) {
        auto row = table->find(n.name);
        if (row == table->end() || !row->second.info.alive)
          violation(viewer.name + "'s table does not show " + n.name + " alive");
        else if (row->second.info.incarnation != n.life)
          violation(viewer.name + "'s table shows " + n.name + "'s life " +
                    std::to_string(row->second.info.incarnation) + ", not its life " +
                    std::to_string(n.life));
      }
      if (auto v = viewer.gcs->kv_placement_version(); v != head_kv)
        violation(viewer.name + " holds key-value placement " + std::to_string(v) +
                  ", the head " + std::to_string(head_kv));
    }
    if (chain_.size() != replication_)
      violation("the control-store chain has " + std::to_string(chain_.size()) +
                " members, " + std::to_string(replication_) + " wanted");
  }

  // Parts that outlive the actor system (declared first, gone last).
  std::vector<std::unique_ptr<sim_port>> ports_;
  std::vector<std::unique_ptr<actors::membership_view>> views_;
  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  caf::scheduler::test_coordinator* sched_ = nullptr;

  std::mt19937_64 fault_rng_;
  bool keep_trace_;
  uint32_t replication_; // members of each chain
  int64_t now_ = 0; // virtual ms since the start
  sim_network net_;
  membership_run run_;
  std::vector<fault> faults_;
  std::vector<sim_node> nodes_;
  std::vector<std::string> names_;
  uint64_t seq_ = 0;
  std::map<std::pair<int64_t, uint64_t>, std::function<void()>> timers_;
  std::map<std::pair<std::string, uint64_t>, int64_t> found_dead_; // (node, life): when
  std::vector<std::string> chain_;
  std::vector<std::shared_ptr<actors::gcs_shards>> retired_; // of processes gone
  std::map<link, std::vector<wm::message>> dialling_; // sent while dialled, in order
  std::vector<kv_write> writes_;
  std::map<uint64_t, size_t> pending_; // attempts under way: the write each is for
  uint64_t requests_ = 0;
  bool reading_ = false;
  size_t losses_reported_ = 0; // by the shards' logs
  std::set<size_t> reported_;  // the key-value shards whose losses they reported
};

bool sim_port::current() const {
  return w_.is_current(name_, process_);
}

bool sim_port::send(const std::string& peer, const wm::message& m) {
  return current() && w_.send(name_, peer, m);
}

bool sim_port::connected(const std::string& peer) {
  return current() && w_.connected(name_, peer);
}

std::optional<milliseconds> sim_port::quiet_for(const std::string& peer) {
  return w_.quiet_for(name_, peer);
}

void sim_port::disconnect(const std::string& peer, const std::string& why) {
  if (current()) w_.disconnect(name_, peer, why);
}

void sim_port::dial(const std::string& peer) {
  if (current()) w_.connect(name_, peer, [](bool) {});
}

void sim_port::rejoin() {
  if (current()) w_.rejoin(name_);
}

void sim_port::record(const wm::node_info& info) {
  if (current()) w_.record(info);
}

void sim_port::forget(const std::string& node) {
  w_.note("forget " + node);
}

void sim_port::set_chain(std::vector<std::string> members) {
  if (current()) w_.set_chain(std::move(members));
}

void sim_port::set_kv_placement(const wm::kv_placement& p) {
  if (current()) w_.node(name_).gcs->set_kv_placement(p);
}

uint64_t sim_port::kv_placement_version() {
  return current() ? w_.node(name_).gcs->kv_placement_version() : 0;
}

void sim_port::lost(const std::string& peer, const std::string& why) {
  w_.note(name_ + " lost " + peer + ": " + why);
}

void sim_port::fenced(uint64_t life, const std::string& why) {
  if (!current()) return;
  w_.note(name_ + " fenced, life " + std::to_string(life) + ": " + why);
  w_.fenced(name_, life);
}

} // namespace

membership_run run_membership(unsigned seed, bool keep_trace,
                              const membership_options& options) {
  return world{seed, keep_trace, options}.run();
}

} // namespace swarm::sim
