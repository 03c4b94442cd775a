// The fault simulation: the cluster protocol (a head and two workers, real cluster nodes
// on the fake network) runs a bank under a schedule of faults drawn from a seed: kills
// (the node's process dies and starts again as a new life), freezes, partitions (both
// ways, one way, and between the head and one worker only), delays, messages reordered
// across connections, and connection resets. Four threads transfer money while the faults
// last, through the creator's handles (on the head) and handles looked up by name on
// worker-2, and a fifth runs chains of tasks, each taking the result before (lineage).
// Checkers assert the invariants afterwards:
//   - every future ends (a value or an error) within its deadline;
//   - every acknowledged operation is in its account's state, and none is there twice
//     (exactly-once on state: the accounts apply whatever they are given);
//   - money is conserved, through creator handles and looked-up handles alike: a transfer
//     that moved money out of one account and not into the other reported an error;
//   - every task chain's result is right;
//   - no call or task fails at all: each may be retried, and its actor restarted, far
//     more often than the faults need;
//   - at most one live instance per actor name, once the faults heal.
// Each seed runs in a child process under the deterministic schedule of det_threads.hpp:
// the threads' interleaving and time are drawn from the seed too, so a seed replays the
// same run, message for message (--replay runs each twice and checks it; --trace prints
// the messages and faults).
//
// With --membership it runs the deterministic simulation of the membership protocol
// instead (membership_sim.hpp): six nodes' membership actors in virtual time on one
// test coordinator, where a seed replays the same run event for event; --replay runs
// each seed twice and checks that, --trace prints a seed's events.
//
// Usage: swarm_sim [--seeds N] [--seed S] [--jobs J] [--replay] [--trace]   (N seeds
//                  from S, J at once, each its own process and cluster)
//        swarm_sim --membership [--seeds N] [--seed S] [--replay] [--trace]
//                  [--replication R] [--head-kills]   (the key-value chains' length, 2
//                  by default; the head killed once as well)
// Exit 1 on a violation. It prints a line per seed, the errors calls reported by kind
// (or the membership runs' totals), and the violations last.

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/actors/node/fake_nodes.hpp"
#include "tests/sim/det_threads.hpp"
#include "tests/sim/membership_sim.hpp"

namespace {

using namespace std::chrono_literals;
using namespace swarm;
using swarm::fake_test::fake_nodes;
using clock_type = std::chrono::steady_clock;

constexpr int accounts = 4;
constexpr int64_t opening = 1000;
constexpr int drivers = 4;          // threads calling at once
constexpr size_t min_transfers = 8; // by each driver, faults or not
constexpr auto pace = 10ms;         // between a driver's transfers
constexpr auto deadline = 30s; // for any one future

/// An account that applies every operation it is given, and records its key: the
/// runtime, not the account, must see that each runs once. It saves its state each call.
class account : public swarm::actor {
public:
  account() = default;
  explicit account(int64_t balance) : balance_(balance) {}
  int64_t apply(uint64_t key, int64_t delta) {
    balance_ += delta;
    applied_.push_back(key);
    return balance_;
  }
  std::vector<int64_t> balance_and_keys() const {
    std::vector<int64_t> out{balance_};
    for (auto k : applied_)
      out.push_back(static_cast<int64_t>(k));
    return out;
  }
  std::vector<uint8_t> on_checkpoint() override {
    return swarm::encode(balance_and_keys());
  }
  void on_restore(const std::vector<uint8_t>& state) override {
    std::vector<int64_t> s;
    std::string why;
    if (!swarm::decode(state.data(), state.size(), s, why) || s.empty())
      throw std::runtime_error("bad checkpoint: " + why);
    balance_ = s.front();
    applied_.clear();
    for (size_t i = 1; i < s.size(); ++i)
      applied_.push_back(static_cast<uint64_t>(s[i]));
  }

private:
  int64_t balance_ = 0;
  std::vector<uint64_t> applied_; // in the order applied
};

void register_bank(application& app) {
  app.actor_type<account>("account")
      .constructor<int64_t>()
      .method("apply", &account::apply)
      .method("balance_and_keys", &account::balance_and_keys);
}

/// One fault, as drawn: what, on which worker, for how long.
struct fault {
  enum class kind {
    freeze,
    cut_outgoing,
    cut_incoming,
    delay,
    reset,
    cut_from_head,
    kill,
    reorder
  } what;
  std::string node;
  std::chrono::milliseconds length;
  uint32_t order = 0; // a reorder's draw of the connections' turns
  std::string describe() const {
    static const char* names[] = {"freeze", "cut-out",       "cut-in", "delay",
                                  "reset",  "cut-from-head", "kill",   "reorder"};
    return std::string{names[static_cast<int>(what)]} + " " + node + " " +
           std::to_string(length.count()) + "ms";
  }
};
constexpr int fault_kinds = 8;

std::vector<fault> draw_faults(std::mt19937& rng, int n) {
  std::vector<fault> out;
  for (int i = 0; i < n; ++i) {
    fault f;
    f.what = static_cast<fault::kind>(rng() % fault_kinds);
    f.node = rng() % 2 == 0 ? "worker-1" : "worker-2";
    // Shorter and longer than node_timeout (400 ms): some are found dead, some not.
    f.length = std::chrono::milliseconds(100 + rng() % 800);
    f.order = static_cast<uint32_t>(rng());
    // Worker-2 is where the looked-up handles' calls are made: a kill takes worker-1
    // (a caller's own node dying takes its calls with it, which no checker can count).
    if (f.what == fault::kind::kill) f.node = "worker-1";
    if (f.what == fault::kind::reorder) f.node = "all"; // every connection
    out.push_back(f);
  }
  return out;
}

/// Applies `f` to the network and undoes it after its length.
void inflict(fake_nodes& c, const fault& f) {
  auto on = std::make_shared<std::atomic<bool>>(true);
  auto node = f.node;
  switch (f.what) {
  case fault::kind::freeze:
    c.net.hold_if([on, node](auto& from, auto& to, auto&) {
      return *on && (from == node || to == node);
    });
    break;
  case fault::kind::cut_outgoing:
    c.net.hold_if([on, node](auto& from, auto&, auto&) { return *on && from == node; });
    break;
  case fault::kind::cut_incoming:
    c.net.hold_if([on, node](auto&, auto& to, auto&) { return *on && to == node; });
    break;
  case fault::kind::delay: // what the node sends arrives late, in order
    c.net.hold_if([on, node](auto& from, auto&, auto& m) {
      return *on && from == node && !std::holds_alternative<wire_msg::heartbeat>(m);
    });
    break;
  case fault::kind::cut_from_head: // the node and the head lose each other; the rest
                                   // of the network still reaches both
    c.net.hold_if([on, node](auto& from, auto& to, auto&) {
      return *on && ((from == node && to == "head") || (from == "head" && to == node));
    });
    break;
  case fault::kind::reorder: // what every node sends but heartbeats waits, then
                             // arrives with the connections' turns drawn at random
    c.net.hold_if([on](auto&, auto&, auto& m) {
      return *on && !std::holds_alternative<wire_msg::heartbeat>(m);
    });
    break;
  case fault::kind::reset:
    c.net.disconnect("head", node, "reset by the simulation");
    return;
  case fault::kind::kill:
    c.kill_and_restart_worker_1(f.length);
    return;
  }
  std::this_thread::sleep_for(f.length);
  if (f.what == fault::kind::reorder)
    c.net.heal_interleaved(f.order);
  else
    c.net.heal();
  *on = false;
}

struct seed_result {
  std::vector<std::string> violations;
  std::vector<std::string> faults;   // as drawn
  double seconds = 0;                // simulated
  size_t transfers = 0, errored = 0; // transfers made, and those that reported an error
  size_t chains = 0, chains_errored = 0; // task chains run, and those that reported one
  std::map<std::string, size_t> errors;  // the errors reported, by kind
  uint64_t fingerprint = 0;             // of every message delivered, in order
  uint64_t switches = 0;                // the schedule's hand-overs
};

// An error's kind: its text with the numbers in it left out.
std::string kind_of(const error& e) {
  std::string out;
  for (char ch : e.to_string())
    if (!std::isdigit(static_cast<unsigned char>(ch)) || out.empty() || out.back() != '#')
      out += std::isdigit(static_cast<unsigned char>(ch)) ? '#' : ch;
  return out;
}

// One transfer as the driver saw it.
struct transfer {
  int from = 0, to = 0;
  int64_t amount = 0;
  uint64_t out_key = 0, in_key = 0;
  bool out_acked = false, in_acked = false, errored = false;
};

seed_result run_seed(unsigned seed, bool trace) {
  seed_result r;
  auto started = clock_type::now();
  std::mt19937 rng{seed};
  // A killed node's stop reaches no one: a short stop_timeout bounds its wait for owners.
  fake_nodes c{0,
               [](cluster_config& cfg) {
                 cfg.join_wait = 3000ms;
                 cfg.stop_timeout = 2000ms;
               },
               register_bank};
  if (!c.formed) {
    r.violations.push_back("the cluster did not form");
    return r;
  }
  c.net.watch([trace](const std::string& from, const std::string& to, const auto& m) {
    auto what = from + " -> " + to + ": " + wire_msg::message_names[m.index()];
    swarm::sim::det::observe(what);
    if (trace) std::printf("%.6f %s\n", swarm::sim::det::virtual_seconds(), what.c_str());
  });
  auto account_t = c.app.find_actor_type<account>("account").value();
  std::vector<actor_handle<account>> created, found;
  context on_worker{*c.w2, c.w2->new_owner_id()}; // looks the accounts up by name
  for (int a = 0; a < accounts; ++a) {
    actor_options o;
    o.name = "acct-" + std::to_string(a);
    o.resources.set("slot", 1);
    o.checkpoint_every = 1;
    o.max_restarts = 100;
    o.max_task_retries = 100;
    created.push_back(c.driver->spawn(o, account_t, opening));
  }
  for (int a = 0; a < accounts; ++a) {
    auto h = on_worker.find_actor(account_t, "acct-" + std::to_string(a));
    if (!h) {
      r.violations.push_back("acct-" + std::to_string(a) +
                             " not found by name: " + h.err().to_string());
      return r;
    }
    found.push_back(*h);
  }
  auto drawn = draw_faults(rng, 6);
  for (auto& f : drawn)
    r.faults.push_back(f.describe());
  std::atomic<bool> storming{true};
  std::thread storm{[&] {
    for (auto& f : drawn) {
      std::this_thread::sleep_for(150ms);
      if (trace)
        std::printf("%.6f fault: %s\n", swarm::sim::det::virtual_seconds(),
                    f.describe().c_str());
      inflict(c, f);
    }
    storming = false;
  }};
  // Transfers run from `drivers` threads at once, paced, for as long as the faults
  // last, so calls are in flight whenever a fault strikes. Transfer t is driver
  // t % drivers's; its keys are 2t (withdrawal) and 2t + 1 (deposit).
  std::vector<std::vector<transfer>> by_driver(drivers);
  std::mutex results_mtx; // r's violations and errors, written by the drivers
  // Every account may restart 100 times and retry each call as often, each task too,
  // and no fault lasts a second: a call or task that fails anyway is a defect, and one
  // still pending at its deadline too.
  auto note_error = [&](const error& e, const std::string& what) {
    std::lock_guard<std::mutex> lock{results_mtx};
    ++r.errors[kind_of(e)];
    r.violations.push_back(e.code == errc::timeout
                               ? what + " still pending after " +
                                     std::to_string(deadline.count()) + " s"
                               : what + " failed with retries left: " + e.to_string());
    if (trace)
      std::printf("%.6f %s failed: %s\n", swarm::sim::det::virtual_seconds(),
                  what.c_str(), e.to_string().c_str());
  };
  auto drive = [&](int d) {
    std::mt19937 draw{seed * 7919u + static_cast<unsigned>(d)};
    auto& mine = by_driver[static_cast<size_t>(d)];
    while (storming || mine.size() < min_transfers) {
      auto t = static_cast<int>(mine.size()) * drivers + d;
      transfer x;
      x.from = static_cast<int>(draw() % accounts);
      x.to = (x.from + 1 + static_cast<int>(draw() % (accounts - 1))) % accounts;
      x.amount = 1 + static_cast<int64_t>(draw() % 50);
      x.out_key = 2 * static_cast<uint64_t>(t);
      x.in_key = x.out_key + 1;
      // Even transfers through the creator's handles, odd ones through looked-up ones.
      auto& hs = t % 2 == 0 ? created : found;
      // Applies `delta` to account `a` under `key`: whether it was acknowledged.
      auto apply = [&](int a, uint64_t key, int64_t delta, const char* what) {
        auto got =
            hs[static_cast<size_t>(a)].call(&account::apply, key, delta).get(deadline);
        if (got) return true;
        x.errored = true;
        note_error(got.err(), "transfer " + std::to_string(t) + "'s " + what);
        return false;
      };
      x.out_acked = apply(x.from, x.out_key, -x.amount, "withdrawal");
      if (x.out_acked) x.in_acked = apply(x.to, x.in_key, x.amount, "deposit");
      mine.push_back(x);
      std::this_thread::sleep_for(pace);
    }
  };
  // Beside them, chains of three tasks on the workers, each task taking the result of
  // the one before: when the node holding a result is lost, its task runs again (its
  // lineage). Each chain's result must be right.
  auto add = c.app.find_function<int(int, int)>("add").value();
  auto chain = [&] {
    task_options on_workers;
    on_workers.resources.set("slot", 1);
    on_workers.max_retries = 100;
    for (int t = 0; storming || t < static_cast<int>(min_transfers); ++t) {
      auto first = c.driver->submit(on_workers, add, t, 1);
      auto second = c.driver->submit(on_workers, add, first, 1);
      auto got = c.driver->submit(on_workers, add, second, 1).get(deadline);
      ++r.chains;
      if (!got) {
        ++r.chains_errored;
        note_error(got.err(), "task chain " + std::to_string(t));
      } else if (*got != t + 3) {
        std::lock_guard<std::mutex> lock{results_mtx};
        r.violations.push_back("task chain " + std::to_string(t) + " returned " +
                               std::to_string(*got) + ", not " + std::to_string(t + 3));
      }
      std::this_thread::sleep_for(pace);
    }
  };
  std::vector<std::thread> driving;
  for (int d = 0; d < drivers; ++d)
    driving.emplace_back(drive, d);
  driving.emplace_back(chain);
  for (auto& d : driving)
    d.join();
  auto transfer_of = [&](uint64_t key) -> const transfer& {
    auto t = static_cast<size_t>(key / 2);
    return by_driver[t % drivers][t / drivers];
  };
  storm.join();
  c.net.heal();
  if (!fake_nodes::eventually([&] { return c.head->wait_for_nodes(3, 0ms) == 3; }, 20s))
    r.violations.push_back("the workers did not all come back");
  // The accounts as they are now, each through its creator's handle.
  std::map<uint64_t, int> applied_in; // key -> account
  int64_t total = 0;
  for (int a = 0; a < accounts; ++a) {
    auto s =
        created[static_cast<size_t>(a)].call(&account::balance_and_keys).get(deadline);
    if (!s) {
      r.violations.push_back("acct-" + std::to_string(a) +
                             " cannot be read: " + s.err().to_string());
      continue;
    }
    total += s->front();
    int64_t from_keys = opening;
    for (size_t i = 1; i < s->size(); ++i) {
      auto key = static_cast<uint64_t>((*s)[i]);
      if (!applied_in.emplace(key, a).second)
        r.violations.push_back(
            "transfer " + std::to_string(key / 2) + "'s " +
            (key % 2 == 0 ? "withdrawal" : "deposit") + " was applied twice (in acct-" +
            std::to_string(applied_in[key]) + " and acct-" + std::to_string(a) + ")");
      auto& x = transfer_of(key);
      from_keys += key % 2 == 0 ? -x.amount : x.amount;
    }
    if (from_keys != s->front())
      r.violations.push_back("acct-" + std::to_string(a) + " holds " +
                             std::to_string(s->front()) + " but its operations sum to " +
                             std::to_string(from_keys));
  }
  int64_t lost_reported = 0;
  for (auto& mine : by_driver)
    for (auto& x : mine) {
      ++r.transfers;
      r.errored += x.errored ? 1 : 0;
      auto t = std::to_string(x.out_key / 2);
      bool out_in = applied_in.count(x.out_key) > 0;
      bool in_in = applied_in.count(x.in_key) > 0;
      if ((x.out_acked && !out_in) || (x.in_acked && !in_in))
        r.violations.push_back(
            "transfer " + t +
            ": an acknowledged operation is not in its account's state");
      if (out_in && !in_in) {
        if (!x.errored)
          r.violations.push_back("transfer " + t + " lost its money without an error");
        lost_reported += x.amount;
      }
    }
  if (total != accounts * opening - lost_reported)
    r.violations.push_back("money: " + std::to_string(total) + " in the accounts, " +
                           std::to_string(accounts * opening - lost_reported) +
                           " expected (" + std::to_string(lost_reported) +
                           " lost with an error)");
  // At most one live instance per name, once fenced nodes stopped theirs.
  auto live_instances = [&] {
    std::map<std::string, int> alive;
    for (auto* n : {c.head.get(), c.w1.get(), c.w2.get()})
      if (auto rows = n->list("actors"))
        for (auto& row : *rows)
          if (row.state == "alive" && row.id.rfind("acct-", 0) == 0) ++alive[row.id];
    return alive;
  };
  if (!fake_nodes::eventually(
          [&] {
            auto alive = live_instances();
            return std::all_of(alive.begin(), alive.end(),
                               [](auto& kv) { return kv.second <= 1; });
          },
          10s))
    for (auto& [name, n] : live_instances())
      if (n > 1)
        r.violations.push_back(name + " has " + std::to_string(n) + " live instances");
  r.seconds = std::chrono::duration<double>(clock_type::now() - started).count();
  r.fingerprint = swarm::sim::det::fingerprint();
  r.switches = swarm::sim::det::switches();
  return r;
}

// -- each seed in a process of its own, under the deterministic schedule

// A line of text as one line.
std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// The child's result, a line each, for the parent to read back (`parse`).
std::string serialize(const seed_result& r) {
  std::string out;
  for (auto& f : r.faults)
    out += "fault " + one_line(f) + "\n";
  for (auto& v : r.violations)
    out += "violation " + one_line(v) + "\n";
  for (auto& [kind, n] : r.errors)
    out += "error " + std::to_string(n) + " " + one_line(kind) + "\n";
  char nums[160];
  std::snprintf(nums, sizeof nums,
                "counts %zu %zu %zu %zu %.6f %016" PRIx64 " %" PRIu64 "\n", r.transfers,
                r.errored, r.chains, r.chains_errored, r.seconds, r.fingerprint,
                r.switches);
  return out + nums;
}

seed_result parse(const std::string& text) {
  seed_result r;
  size_t at = 0;
  while (at < text.size()) {
    auto end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    auto line = text.substr(at, end - at);
    at = end + 1;
    auto space = line.find(' ');
    auto key = line.substr(0, space);
    auto rest = space == std::string::npos ? std::string{} : line.substr(space + 1);
    if (key == "fault") {
      r.faults.push_back(rest);
    } else if (key == "violation") {
      r.violations.push_back(rest);
    } else if (key == "error") {
      auto gap = rest.find(' ');
      r.errors[rest.substr(gap + 1)] += std::stoul(rest.substr(0, gap));
    } else if (key == "counts") {
      std::sscanf(rest.c_str(), "%zu %zu %zu %zu %lf %" SCNx64 " %" SCNu64, &r.transfers,
                  &r.errored, &r.chains, &r.chains_errored, &r.seconds, &r.fingerprint,
                  &r.switches);
    }
  }
  return r;
}

// A seed's run under way in a child process.
struct child_run {
  unsigned seed = 0;
  pid_t pid = -1;
  int fd = -1;        // its result comes on this pipe
  std::string result; // read so far
};

// Forks a child that runs seed `s` alone in its process, under the deterministic
// schedule drawn from `s`; its nodes' logs go to stderr, its result to the pipe.
child_run start_child(unsigned s, bool trace) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(stdout);
  std::fflush(stderr);
  auto pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    swarm::sim::det::start(s);
    auto out = serialize(run_seed(s, trace));
    std::fflush(stdout);
    for (size_t done = 0; done < out.size();) {
      auto n = ::write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::_exit(0); // the run's threads have ended; nothing else to tear down
  }
  ::close(fds[1]);
  return {s, pid, fds[0], {}};
}

// Runs `seeds` from `first`, `jobs` child processes at once (each seed twice with
// `replay`), and calls `done` with each seed's result in the order they end.
void run_children(unsigned first, unsigned seeds, unsigned jobs, bool replay, bool trace,
                  const std::function<void(unsigned, seed_result)>& done) {
  std::vector<child_run> running;
  std::map<unsigned, seed_result> first_run; // a replayed seed's first result
  auto runs = seeds * (replay ? 2u : 1u);
  unsigned next = 0; // runs started
  while (next < runs || !running.empty()) {
    while (next < runs && running.size() < jobs) {
      running.push_back(start_child(first + next / (replay ? 2 : 1), trace));
      ++next;
    }
    std::vector<pollfd> fds;
    for (auto& c : running)
      fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
      throw std::runtime_error("poll failed");
    for (size_t i = running.size(); i-- > 0;) {
      if (fds[i].revents == 0) continue;
      auto& c = running[i];
      char buf[4096];
      auto n = ::read(c.fd, buf, sizeof buf);
      if (n > 0) {
        c.result.append(buf, static_cast<size_t>(n));
        continue;
      }
      ::close(c.fd);
      int status = 0;
      ::waitpid(c.pid, &status, 0);
      auto r = parse(c.result);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        r.violations.push_back(
            "the run's process ended " +
            (WIFEXITED(status) ? "with exit code " + std::to_string(WEXITSTATUS(status))
                               : "by signal " + std::to_string(WTERMSIG(status))) +
            " (3: every thread waited, 4: a thread blocked where the schedule cannot "
            "see; its stderr says more)");
      auto s = c.seed;
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      if (!replay) {
        done(s, std::move(r));
        continue;
      }
      auto before = first_run.find(s);
      if (before == first_run.end()) {
        first_run.emplace(s, std::move(r));
        continue;
      }
      if (before->second.fingerprint != r.fingerprint ||
          before->second.switches != r.switches)
        r.violations.push_back("the seed did not replay: fingerprints " +
                               std::to_string(before->second.fingerprint) + " and " +
                               std::to_string(r.fingerprint));
      first_run.erase(before);
      done(s, std::move(r));
    }
  }
}

// What seed `s` broke, under which faults: its first violations.
std::string broke(unsigned s, const std::vector<std::string>& faults,
                  const std::vector<std::string>& violations) {
  std::string drawn;
  for (auto& f : faults)
    drawn += (drawn.empty() ? "" : ", ") + f;
  auto out =
      "seed " + std::to_string(s) + " broke an invariant (faults: " + drawn + "):\n";
  constexpr size_t shown = 5;
  for (size_t i = 0; i < std::min(shown, violations.size()); ++i)
    out += "  " + violations[i] + "\n";
  if (violations.size() > shown)
    out += "  and " + std::to_string(violations.size() - shown) + " more\n";
  return out;
}

// Where two runs of seed `s` part: the first event that differs, as each run has it.
std::string first_difference(unsigned s, const swarm::sim::membership_options& options) {
  auto a = swarm::sim::run_membership(s, true, options).trace;
  auto b = swarm::sim::run_membership(s, true, options).trace;
  auto at = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  auto said = [](auto i, auto end) { return i == end ? std::string{"(the end)"} : *i; };
  return "\"" + said(at.first, a.end()) + "\", then \"" + said(at.second, b.end()) + "\"";
}

// The membership simulation's seeds, one after another (each takes a few ms).
int run_membership_seeds(unsigned first, unsigned seeds, bool replay, bool trace,
                         const swarm::sim::membership_options& options) {
  unsigned clean = 0;
  size_t faults = 0, deliveries = 0, verdicts = 0, writes = 0, acknowledged = 0;
  size_t lost_reported = 0, seeds_lost_reported = 0, shard_copies = 0;
  size_t false_alarms = 0; // seeds where a node said writes may be lost, and none was
  double simulated = 0;
  std::string broken;
  for (unsigned s = first; s < first + seeds; ++s) {
    auto r = swarm::sim::run_membership(s, trace, options);
    if (replay) {
      auto again = swarm::sim::run_membership(s, false, options);
      if (again.fingerprint != r.fingerprint)
        r.violations.push_back("the seed did not replay; first difference: " +
                               first_difference(s, options));
    }
    for (auto& line : r.trace)
      std::printf("%s\n", line.c_str());
    faults += r.faults.size();
    deliveries += r.deliveries;
    verdicts += r.verdicts;
    writes += r.writes;
    acknowledged += r.acknowledged;
    lost_reported += r.lost_reported;
    seeds_lost_reported += r.lost_reported > 0 ? 1 : 0;
    false_alarms += r.alarms > 0 && r.lost_reported == 0 ? 1 : 0;
    shard_copies += r.shard_copies;
    simulated += r.simulated_s;
    std::printf("swarm_sim: membership seed %u: %zu faults, %" PRIu64
                " deaths found, %" PRIu64 " messages, %" PRIu64 " of %" PRIu64
                " key-value writes acknowledged, %.1f s simulated, fingerprint "
                "%016" PRIx64 ", %s\n",
                s, r.faults.size(), r.verdicts, r.deliveries, r.acknowledged, r.writes,
                r.simulated_s, r.fingerprint,
                (std::string{r.violations.empty() ? "clean" : "BROKEN"} +
                 (r.lost_reported > 0 ? " (" + std::to_string(r.lost_reported) +
                                            " writes lost, as reported)"
                  : r.alarms > 0 ? " (a false alarm: a loss reported, none lost)"
                                 : ""))
                    .c_str());
    if (r.violations.empty()) {
      ++clean;
      continue;
    }
    broken += broke(s, r.faults, r.violations);
  }
  std::printf("%sswarm_sim: membership replication=%u%s seeds=%u clean=%u%s faults=%zu "
              "deaths_found=%zu "
              "messages=%zu writes=%zu acknowledged=%zu lost_and_reported=%zu (in %zu "
              "seeds) false_alarms=%zu shard_copies=%zu simulated_hours=%.2f\n",
              broken.c_str(), options.replication,
              options.head_kills ? " head_kills" : "", seeds, clean,
              replay ? " (each replayed)" : "", faults, verdicts, deliveries, writes,
              acknowledged, lost_reported, seeds_lost_reported, false_alarms,
              shard_copies, simulated / 3600.0);
  return clean == seeds ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  unsigned first = 1, seeds = 10, jobs = 1;
  bool membership = false, replay = false, trace = false;
  swarm::sim::membership_options options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto number = [&](unsigned least, unsigned most = 100000) {
      auto v = std::stoul(argv[++i]);
      if (v < least || v > most) throw std::out_of_range(a);
      return static_cast<unsigned>(v);
    };
    try {
      if (a == "--seeds" && i + 1 < argc) {
        seeds = number(1);
      } else if (a == "--seed" && i + 1 < argc) {
        first = number(0, 1'000'000'000);
      } else if (a == "--jobs" && i + 1 < argc) {
        jobs = number(1);
      } else if (a == "--replication" && i + 1 < argc) {
        options.replication = number(2);
        if (options.replication > 5) throw std::out_of_range(a);
      } else if (a == "--head-kills") {
        options.head_kills = true;
      } else if (a == "--membership") {
        membership = true;
      } else if (a == "--replay") {
        replay = true;
      } else if (a == "--trace") {
        trace = true;
      } else {
        a.clear();
      }
    } catch (const std::exception&) {
      std::fprintf(stderr,
                   "swarm_sim: %s expects a number up to 100000 (1 or more but "
                   "for --seed, up to 10^9; 2 to 5 for --replication)\n",
                   a.c_str());
      return 2;
    }
    if (a.empty()) {
      std::fprintf(
          stderr,
          "usage: swarm_sim [--seeds N] [--seed FIRST] [--jobs J] [--replay] "
          "[--trace]\n"
          "       swarm_sim --membership [--seeds N] [--seed FIRST] [--replay] "
          "[--trace] [--replication R] [--head-kills]\n"
          "  J seeds run at once, each its own process and cluster, on a\n"
          "  deterministic schedule; --replay runs each seed twice and checks it\n"
          "  repeats, --trace prints its events; --membership simulates the\n"
          "  membership protocol alone,\n"
          "  --replication gives the key-value chains R members (2 to 5),\n"
          "  --head-kills kills the head once as well\n");
      return 2;
    }
  }
  if (membership) return run_membership_seeds(first, seeds, replay, trace, options);
  unsigned clean = 0;
  size_t faults = 0, transfers = 0, errored = 0, chains = 0, chains_errored = 0;
  uint64_t switches = 0;
  std::map<std::string, size_t> errors;
  double seconds = 0;
  std::string broken; // printed last, below the nodes' logs
  try {
    run_children(first, seeds, jobs, replay, trace, [&](unsigned s, seed_result r) {
      faults += r.faults.size();
      transfers += r.transfers;
      errored += r.errored;
      chains += r.chains;
      chains_errored += r.chains_errored;
      switches += r.switches;
      for (auto& [kind, n] : r.errors)
        errors[kind] += n;
      seconds += r.seconds;
      std::printf("swarm_sim: seed %u: %zu transfers (%zu reported an error), %zu task "
                  "chains (%zu), %.1f s simulated, %" PRIu64
                  " hand-overs, fingerprint %016" PRIx64 ", %s\n",
                  s, r.transfers, r.errored, r.chains, r.chains_errored, r.seconds,
                  r.switches, r.fingerprint, r.violations.empty() ? "clean" : "BROKEN");
      std::fflush(stdout);
      if (r.violations.empty()) {
        ++clean;
        return;
      }
      broken += broke(s, r.faults, r.violations);
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "swarm_sim: %s\n", e.what());
    return 2;
  }
  std::fflush(stderr);
  std::vector<std::pair<size_t, std::string>> kinds;
  for (auto& [kind, n] : errors)
    kinds.emplace_back(n, kind);
  std::sort(kinds.rbegin(), kinds.rend());
  for (size_t i = 0; i < std::min<size_t>(3, kinds.size()); ++i)
    std::printf("swarm_sim: %zu call(s) failed with: %s\n", kinds[i].first,
                kinds[i].second.c_str());
  std::printf("%sswarm_sim: seeds=%u clean=%u%s faults=%zu transfers=%zu errored=%zu "
              "task_chains=%zu errored=%zu hand_overs=%" PRIu64
              " simulated_hours=%.3f (%u at once)\n",
              broken.c_str(), seeds, clean, replay ? " (each replayed)" : "", faults,
              transfers, errored, chains, chains_errored, switches, seconds / 3600.0,
              jobs);
  return clean == seeds ? 0 : 1;
}
