#include <doctest/doctest.h>

#include <caf/all.hpp>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "actors/control_store/gcs_shard.hpp"
#include "actors/control_store/protocol.hpp"
#include "transport/wire_codec.hpp"

using namespace std::chrono_literals;
using namespace swarm::actors;
using swarm::wire_msg::gcs_chain;
using swarm::wire_msg::job_info;

namespace {

// Three or more shards in one actor system standing for the same shard on different
// nodes. Chain messages pass through the wire codec, as between processes; a node
// marked down receives nothing (as if its process died).
class chain_rig {
public:
  chain_rig() : sys_{cfg_} {}

  ~chain_rig() {
    for (auto& [name, a] : shards_)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }

  // Starts (or starts again, empty) the shard of node `name`.
  caf::actor start(const std::string& name) {
    gcs_shard_config cfg;
    cfg.link->set(name, [this](const std::string& to, gcs_chain m) { deliver(to, m); });
    cfg.logger = swarm::node_log{name, swarm::log_level::info,
                                 [this](swarm::log_level, const std::string& line) {
                                   std::lock_guard<std::mutex> guard{mtx_};
                                   log_.push_back(line);
                                 }};
    {
      std::lock_guard<std::mutex> guard{mtx_};
      links_[name] = cfg.link;
    }
    auto a = spawn_gcs_shard(sys_, cfg);
    REQUIRE(a);
    std::lock_guard<std::mutex> guard{mtx_};
    if (auto old = shards_.find(name); old != shards_.end())
      caf::anon_send_exit(old->second, caf::exit_reason::user_shutdown);
    shards_[name] = *a;
    down_.erase(name);
    return *a;
  }

  void take_down(const std::string& name) {
    std::lock_guard<std::mutex> guard{mtx_};
    down_.insert(name);
  }

  // The next `n` chain messages to node `name` are lost on the way (their connection
  // closed); what follows arrives.
  void lose_next(const std::string& name, int n) {
    std::lock_guard<std::mutex> guard{mtx_};
    lose_[name] = n;
  }

  // Writes job `id` at node `name`'s shard without waiting for the answer.
  void put_async(const std::string& name, uint64_t id) {
    caf::anon_send(shard(name), put_atom::value, std::string{"job"}, std::to_string(id),
                   table_row{job_info{id, "head", 0, true, 0, 0}});
  }

  // How many whole copies of the shard (syncs) reached node `name`.
  size_t copies_at(const std::string& name) {
    std::lock_guard<std::mutex> guard{mtx_};
    return copies_[name];
  }

  caf::actor shard(const std::string& name) {
    std::lock_guard<std::mutex> guard{mtx_};
    return shards_.at(name);
  }

  // A job row written at the chain's head; true once the head answered it.
  bool put(uint64_t id, std::chrono::milliseconds timeout = 5s) {
    return put_at("n0", id, timeout);
  }

  // The same, written at node `name`'s shard.
  bool put_at(const std::string& name, uint64_t id,
              std::chrono::milliseconds timeout = 5s) {
    job_info j;
    j.id = id;
    j.driver = "head";
    caf::scoped_actor self{sys_};
    bool ok = false;
    self->request(shard(name), timeout, put_atom::value, std::string{"job"},
                  std::to_string(id), table_row{j})
        .receive([&] { ok = true; }, [&](caf::error&) {});
    return ok;
  }

  // The job ids node `name` holds.
  std::set<uint64_t> jobs(const std::string& name) {
    caf::scoped_actor self{sys_};
    std::set<uint64_t> ids;
    self->request(shard(name), 5s, scan_atom::value, std::string{"job"})
        .receive(
            [&](std::vector<table_row>& rows) {
              for (auto& r : rows)
                ids.insert(std::get<job_info>(r).id);
            },
            [&](caf::error& e) { FAIL("scan failed: " << caf::to_string(e)); });
    return ids;
  }

  // Waits (bounded) until node `name` holds exactly `want`.
  bool holds(const std::string& name, const std::set<uint64_t>& want) {
    for (int i = 0; i < 200; ++i) {
      if (jobs(name) == want) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

  void configure(std::vector<std::string> members) {
    configure_at("n0", std::move(members));
  }

  // As a key-value shard: node `name` learns that the chain became `members` at
  // placement version `placed` (it heads it, steps down, or is a member), having joined
  // it at version `joined` (0: a new chain then).
  void place_at(const std::string& name, std::vector<std::string> members,
                uint64_t placed, uint64_t joined = 0) {
    caf::anon_send(shard(name), chain_atom::value, std::move(members), placed, joined);
  }

  // Node `name`'s latest placement of the key-value shard 0: `members` at `version`,
  // each a member since the version `since` gives.
  void placement_at(const std::string& name, std::vector<std::string> members,
                    uint64_t version, std::vector<uint64_t> since = {}) {
    swarm::wire_msg::kv_placement p;
    p.version = version;
    p.chains.push_back({0, std::move(members), std::move(since)});
    std::lock_guard<std::mutex> guard{mtx_};
    links_.at(name)->set_placement(std::move(p));
  }

  // Whether a shard logged a line holding `text` (bounded wait).
  bool logged(const std::string& text) {
    for (int i = 0; i < 200; ++i) {
      {
        std::lock_guard<std::mutex> guard{mtx_};
        for (auto& line : log_)
          if (line.find(text) != std::string::npos) return true;
      }
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

  // Tells node `name`'s shard of the chain `members` (it heads it, or steps down).
  void configure_at(const std::string& name, std::vector<std::string> members) {
    caf::anon_send(shard(name), chain_atom::value, std::move(members));
  }

  // Starts `members` (the head, "n0", first), chains them, and writes jobs 1 to `n`.
  void chain_with_writes(const std::vector<std::string>& members, uint64_t n) {
    for (auto& m : members)
      start(m);
    configure(members);
    for (uint64_t i = 1; i <= n; ++i)
      REQUIRE(put(i));
  }

private:
  void deliver(const std::string& to, const gcs_chain& m) {
    auto frame = swarm::wire_msg::encode_frame(m);
    swarm::wire_msg::frame_decoder dec{1 << 20};
    std::vector<swarm::wire_msg::message> out;
    REQUIRE(dec.feed(frame.data(), frame.size(), out));
    REQUIRE(out.size() == 1);
    std::lock_guard<std::mutex> guard{mtx_};
    if (down_.count(to) != 0) return;
    if (auto l = lose_.find(to); l != lose_.end() && l->second > 0) {
      --l->second;
      return;
    }
    auto i = shards_.find(to);
    if (i == shards_.end()) return;
    if (m.kind == gcs_chain::kind_type::sync) ++copies_[to];
    caf::anon_send(i->second, chain_atom::value, std::get<gcs_chain>(std::move(out[0])));
  }

  // The system goes first: its actors' links still reach the maps while it stops.
  caf::actor_system_config cfg_;
  std::mutex mtx_;
  std::map<std::string, caf::actor> shards_;
  std::set<std::string> down_;
  std::map<std::string, int> lose_;
  std::map<std::string, size_t> copies_;
  std::map<std::string, std::shared_ptr<gcs_chain_link>> links_;
  std::vector<std::string> log_;
  caf::actor_system sys_;
};

std::set<uint64_t> ids(uint64_t from, uint64_t to) {
  std::set<uint64_t> out;
  for (auto i = from; i <= to; ++i)
    out.insert(i);
  return out;
}

} // namespace

TEST_CASE("a control-store write is answered once every chain member has it") {
  chain_rig rig;
  rig.chain_with_writes({"n0", "n1", "n2"}, 20);
  for (auto n : {"n0", "n1", "n2"})
    CHECK(rig.jobs(n) == ids(1, 20));

  // With the tail gone, a write is not answered and reads do not see it.
  rig.take_down("n2");
  CHECK_FALSE(rig.put(21, 300ms));
  CHECK(rig.jobs("n0") == ids(1, 20));
  CHECK(rig.jobs("n1") == ids(1, 21));
}

TEST_CASE("a chain that loses a member goes on without it and loses no write") {
  chain_rig rig;
  rig.chain_with_writes({"n0", "n1", "n2"}, 10);
  // The middle member dies: writes made meanwhile wait, then commit on the new chain.
  rig.take_down("n1");
  for (uint64_t i = 11; i <= 15; ++i)
    rig.put_async("n0", i);
  CHECK(rig.jobs("n0") == ids(1, 10));
  rig.configure({"n0", "n2"});
  CHECK(rig.holds("n0", ids(1, 15)));
  CHECK(rig.jobs("n2") == ids(1, 15));

  // A fresh member added at the tail gets the whole shard, then every later write.
  rig.start("n3");
  rig.configure({"n0", "n2", "n3"});
  REQUIRE(rig.put(16));
  for (auto n : {"n0", "n2", "n3"})
    CHECK(rig.jobs(n) == ids(1, 16));
}

TEST_CASE("a chain member that lost its copy asks for the whole shard again") {
  chain_rig rig;
  rig.chain_with_writes({"n0", "n1"}, 5);
  // Restarted empty, without the head reconfiguring: the next write finds it behind.
  rig.start("n1");
  REQUIRE(rig.put(6));
  CHECK(rig.jobs("n1") == ids(1, 6));
  CHECK(rig.jobs("n0") == ids(1, 6));
}

TEST_CASE("a shard with no chain applies its writes at once") {
  chain_rig rig;
  rig.start("n0");
  REQUIRE(rig.put(1));
  rig.configure({"n0"});
  REQUIRE(rig.put(2));
  CHECK(rig.jobs("n0") == ids(1, 2));
}

TEST_CASE("a head shard that starts again empty recovers its rows from the chain") {
  chain_rig rig;
  rig.chain_with_writes({"n0", "n1", "n2"}, 10);
  // The head and the first member both lost everything; the tail still has it all.
  rig.start("n0");
  rig.start("n1");
  rig.configure({"n0", "n1", "n2"});
  CHECK(rig.holds("n0", ids(1, 10)));
  REQUIRE(rig.put(11));
  for (auto n : {"n0", "n1", "n2"})
    CHECK(rig.jobs(n) == ids(1, 11));
}

TEST_CASE("a member made head of the chain keeps every write the lost head committed") {
  chain_rig rig;
  rig.chain_with_writes({"n0", "n1", "n2"}, 10);
  rig.take_down("n0");
  rig.configure_at("n1", {"n1", "n2"});
  REQUIRE(rig.put_at("n1", 11));
  CHECK(rig.jobs("n1") == ids(1, 11));
  CHECK(rig.jobs("n2") == ids(1, 11));
}

TEST_CASE(
    "a head that hands its shard over fails later writes, and the new head has all") {
  chain_rig rig;
  rig.chain_with_writes({"n0", "n1", "n2"}, 10);
  rig.configure_at("n0", {"n1", "n0", "n2"});
  rig.configure_at("n1", {"n1", "n0", "n2"});
  // Answered with an error at once, not left to time out: its writer asks the new head.
  CHECK_FALSE(rig.put_at("n0", 11, 5s));
  REQUIRE(rig.put_at("n1", 12));
  auto want = ids(1, 10);
  want.insert(12);
  for (auto n : {"n0", "n1", "n2"})
    CHECK(rig.holds(n, want));

  // Handed back: the old head recovers the write made meanwhile.
  rig.configure_at("n1", {"n0", "n1", "n2"});
  rig.configure_at("n0", {"n0", "n1", "n2"});
  REQUIRE(rig.put_at("n0", 13));
  want.insert(13);
  for (auto n : {"n0", "n1", "n2"})
    CHECK(rig.holds(n, want));
}

TEST_CASE("writes lost on the way to a member are not acknowledged with the next one: "
          "the member asks for the whole shard") {
  chain_rig rig;
  rig.chain_with_writes({"n0", "n1"}, 3);
  // Writes 4 and 5 go with a connection that closed; 6 arrives on the next one.
  rig.lose_next("n1", 2);
  rig.put_async("n0", 4);
  rig.put_async("n0", 5);
  REQUIRE(rig.put(6));
  // Answered only once the member has them all: acknowledging 6 acknowledged 4 and 5.
  CHECK(rig.jobs("n1") == ids(1, 6));
  CHECK(rig.jobs("n0") == ids(1, 6));
}

TEST_CASE("a burst of writes behind one lost on the way to a member makes the head send "
          "the whole shard once, not once per write") {
  chain_rig rig;
  rig.chain_with_writes({"n0", "n1"}, 3);
  auto before = rig.copies_at("n1");
  // Write 4 goes with a connection that closed; the 20 behind it each make n1 ask.
  rig.lose_next("n1", 1);
  for (uint64_t id = 4; id <= 23; ++id)
    rig.put_async("n0", id);
  REQUIRE(rig.put(24));
  CHECK(rig.jobs("n1") == ids(1, 24));
  CHECK(rig.copies_at("n1") - before == 1);
}

TEST_CASE("a shard that heads its own chain does not acknowledge the writes of the head "
          "it replaced") {
  chain_rig rig;
  rig.chain_with_writes({"n0", "n1"}, 3);
  // The placement moved the shard to n1; n0 has not heard yet (cut off), and writes on.
  rig.start("n2");
  rig.configure_at("n1", {"n1", "n2"});
  REQUIRE(rig.holds("n2", ids(1, 3)));
  CHECK_FALSE(rig.put_at("n0", 4, 300ms));
  // n0 learns it moved: the write fails there; its writer asks n1, where it commits.
  rig.configure_at("n0", {"n1", "n2"});
  REQUIRE(rig.put_at("n1", 4));
  for (auto n : {"n1", "n2"})
    CHECK(rig.jobs(n) == ids(1, 4));
}

TEST_CASE("a head that steps down and heads again sends its next writes right after its "
          "copy") {
  chain_rig rig;
  rig.chain_with_writes({"n0", "n1"}, 3);
  // Two writes wait for a member that is cut off, then fail as the shard moves away.
  rig.take_down("n1");
  rig.put_async("n0", 4);
  rig.put_async("n0", 5);
  rig.configure_at("n0", {"n1", "n0"});
  // Back: the next write follows the sync without a gap (else the member would take it
  // for writes lost on the way, and ask for the shard again and again).
  rig.start("n1");
  rig.configure_at("n1", {"n0", "n1"});
  rig.configure_at("n0", {"n0", "n1"});
  REQUIRE(rig.put_at("n0", 6));
  auto want = ids(1, 3);
  want.insert(6);
  CHECK(rig.holds("n1", want));
  CHECK(rig.jobs("n0") == want);
}

// Placement versions, in ms as the head's clock gives them.
constexpr uint64_t v1 = 1'700'000'000'000, v2 = v1 + 1000, v3 = v1 + 2000;

// Nodes n0 to n2, and a key-value shard placed at v1 on n0 with n1, which commits jobs
// 1 to `n`.
void kv_chain_of_two(chain_rig& rig, uint64_t n) {
  for (auto node : {"n0", "n1", "n2"})
    rig.start(node);
  rig.place_at("n0", {"n0", "n1"}, v1);
  rig.place_at("n1", {"n0", "n1"}, v1);
  rig.placement_at("n0", {"n0", "n1"}, v1);
  for (uint64_t i = 1; i <= n; ++i)
    REQUIRE(rig.put_at("n0", i));
}

TEST_CASE("a key-value shard's member takes no write of a configuration older than its "
          "chain's last placement") {
  chain_rig rig;
  kv_chain_of_two(rig, 1);
  // Placed again: n2 is to head it with n1. n0, cut off, has not heard and writes on,
  // before n2 has even begun.
  rig.place_at("n1", {"n2", "n1"}, v2);
  CHECK_FALSE(rig.put_at("n0", 2, 300ms));
  rig.place_at("n2", {"n2", "n1"}, v2, v2);
  REQUIRE(rig.put_at("n2", 3));
  CHECK(rig.jobs("n2") == std::set<uint64_t>{1, 3});
  CHECK(rig.jobs("n1") == std::set<uint64_t>{1, 3});
}

// A chain of n0 and n1 with 3 rows; then n0 is cut off and never hears of v2, which has
// n1 head the chain with n2 and commit rows 4 to `last`.
void n0_dropped_at_v2(chain_rig& rig, uint64_t last) {
  kv_chain_of_two(rig, 3);
  rig.place_at("n1", {"n1", "n2"}, v2);
  rig.place_at("n2", {"n1", "n2"}, v2, v2);
  for (uint64_t i = 4; i <= last; ++i)
    REQUIRE(rig.put_at("n1", i));
}

TEST_CASE("a key-value head that missed the placements in between recovers the rows "
          "written meanwhile before it goes on") {
  chain_rig rig;
  n0_dropped_at_v2(rig, 5);
  // Back as before: n1 hears, n0 only learns the latest placement, the same chain as
  // in its own (it missed the one in between). Its next write finds n1 on the later
  // placement: n0 recovers n1's rows, then commits.
  rig.place_at("n1", {"n0", "n1"}, v3, v3);
  rig.placement_at("n0", {"n0", "n1"}, v3);
  REQUIRE(rig.holds("n1", ids(1, 5)));
  REQUIRE(rig.put_at("n0", 6));
  CHECK(rig.jobs("n0") == ids(1, 6));
  CHECK(rig.holds("n1", ids(1, 6)));
}

TEST_CASE("a key-value shard promoted without the copy of the chain it joined says "
          "writes may be lost") {
  chain_rig rig;
  for (auto n : {"n0", "n1", "n2", "n3"})
    rig.start(n);
  rig.place_at("n0", {"n0", "n1"}, v1);
  rig.place_at("n1", {"n0", "n1"}, v1);
  for (uint64_t i = 1; i <= 3; ++i)
    REQUIRE(rig.put_at("n0", i));
  // n2 joins at v2, but the head's copy never reaches it; then n0 and n1 are lost.
  rig.take_down("n2");
  rig.place_at("n0", {"n0", "n1", "n2"}, v2);
  rig.place_at("n2", {"n0", "n1", "n2"}, v2, v2);
  rig.take_down("n0");
  rig.take_down("n1");
  rig.start("n2"); // a member that lost its copy is as good as one that never had it
  rig.place_at("n2", {"n2", "n3"}, v3, v2);
  CHECK(rig.logged("writes acknowledged before may be lost"));
  // It goes on: the table stays available.
  REQUIRE(rig.put_at("n2", 4));
  CHECK(rig.jobs("n3") == std::set<uint64_t>{4});
}

// n0_dropped_at_v2 with 3 rows, n0 lost: n1, a member since the chain began, heads it
// with n2, new and empty.
void n1_heads_once_n0_lost(chain_rig& rig) {
  n0_dropped_at_v2(rig, 3);
  rig.take_down("n0");
}

TEST_CASE(
    "a key-value member promoted with the copy it kept since it joined says nothing "
    "of a loss when the member placed with it has no copy yet") {
  chain_rig rig;
  n1_heads_once_n0_lost(rig);
  CHECK_FALSE(rig.logged("may be lost"));
  REQUIRE(rig.put_at("n1", 4));
  CHECK(rig.holds("n2", ids(1, 4)));
}

TEST_CASE("a key-value head placed at the head of its chain again, having missed the "
          "placement that dropped it, recovers the chain's rows before it heads it") {
  chain_rig rig;
  n0_dropped_at_v2(rig, 4);
  // v3 places n0 at its head again, a member only since v3 by the head's word.
  rig.place_at("n1", {"n0", "n1"}, v3);
  rig.place_at("n0", {"n0", "n1"}, v3, v3);
  REQUIRE(rig.put_at("n0", 5));
  CHECK(rig.jobs("n0") == ids(1, 5));
  CHECK(rig.holds("n1", ids(1, 5)));
}

TEST_CASE("a key-value head that steps down while it still recovers claims no copy: the "
          "head after it says writes may be lost") {
  chain_rig rig;
  kv_chain_of_two(rig, 3);
  rig.start("n3");
  rig.take_down("n0"); // every node holding the rows is lost
  rig.take_down("n1");
  rig.take_down("n3"); // n2 asks it for the rows, and waits
  rig.place_at("n2", {"n2", "n3"}, v2, v2);
  // Before n2 has its rows, v3 has n3 (back empty, a member since v2) head the chain.
  rig.start("n3");
  rig.place_at("n2", {"n3", "n2"}, v3, v2);
  rig.place_at("n3", {"n3", "n2"}, v3, v2);
  CHECK(rig.logged("writes acknowledged before may be lost"));
}

TEST_CASE("a key-value member dropped from its chain and placed in it again says writes "
          "may be lost when promoted before it got the chain's copy") {
  chain_rig rig;
  kv_chain_of_two(rig, 3);
  // n1 was dropped at v2 (it never heard: cut off) while n0 and n2 wrote on; the head
  // places it again at v3, a member since then; n0 and n2 are lost before it has the
  // copy.
  rig.take_down("n2");
  rig.take_down("n0");
  rig.place_at("n1", {"n1", "n2"}, v3, v3);
  CHECK(rig.logged("writes acknowledged before may be lost"));
}

TEST_CASE(
    "a key-value head that comes back empty says writes may be lost when the member "
    "it asks joined the chain but never got its copy") {
  chain_rig rig;
  kv_chain_of_two(rig, 3);
  // n2 joins at v2 while cut off: the head's copy never reaches it. Then n0 is killed
  // and n1 lost: n0 comes back empty and heads the chain with n2, which has nothing.
  rig.take_down("n2");
  rig.place_at("n2", {"n0", "n1", "n2"}, v2, v2);
  rig.place_at("n0", {"n0", "n1", "n2"}, v2);
  rig.take_down("n1");
  rig.start("n0");
  rig.start("n2");
  rig.place_at("n2", {"n0", "n2"}, v3, v2);
  rig.place_at("n0", {"n0", "n2"}, v3);
  CHECK(rig.logged("writes acknowledged before may be lost"));
}

TEST_CASE("a key-value head that comes back empty says nothing of a loss when the member "
          "it recovers from kept its copy since it joined") {
  chain_rig rig;
  // n1 heads the chain with n2 and commits row 4. n0 comes back empty and is placed at
  // the head again, a member since v3; n1, one since the chain began, has every row.
  n1_heads_once_n0_lost(rig);
  REQUIRE(rig.put_at("n1", 4));
  rig.start("n0");
  rig.placement_at("n0", {"n0", "n1"}, v3, {v3, 0});
  rig.place_at("n1", {"n0", "n1"}, v3);
  rig.place_at("n0", {"n0", "n1"}, v3, v3);
  REQUIRE(rig.put_at("n0", 5));
  CHECK(rig.jobs("n0") == ids(1, 5));
  CHECK(rig.logged("recovered 4 rows from node 'n1'"));
  CHECK_FALSE(rig.logged("may be lost"));
}

TEST_CASE(
    "a key-value head that comes back empty says writes may be lost when the "
    "member it recovers from was dropped from the chain and placed again meanwhile") {
  chain_rig rig;
  kv_chain_of_two(rig, 3);
  // n1 is dropped at v2 and never hears (cut off) while n0 and n2 commit row 4. Then
  // n2 is lost and n0 comes back empty; v3 places n1 with it again, a member since v3
  // by the head's word. n1 still thinks it kept its copy since the chain began.
  rig.place_at("n0", {"n0", "n2"}, v2);
  rig.place_at("n2", {"n0", "n2"}, v2, v2);
  REQUIRE(rig.put_at("n0", 4));
  REQUIRE(rig.holds("n2", ids(1, 4)));
  rig.take_down("n2");
  rig.start("n0");
  rig.placement_at("n0", {"n0", "n1"}, v3, {v3, v3});
  rig.place_at("n0", {"n0", "n1"}, v3, v3);
  CHECK(rig.logged("writes acknowledged before may be lost"));
}

TEST_CASE("a key-value head that recovers asks the member again when its ask went with a "
          "connection that closed, well before it gives up on the member") {
  chain_rig rig;
  kv_chain_of_two(rig, 3);
  // n0 comes back empty; its first ask for n1's copy is lost on the way.
  rig.start("n0");
  rig.lose_next("n1", 1);
  rig.placement_at("n0", {"n0", "n1"}, v2, {v2, 0});
  rig.place_at("n0", {"n0", "n1"}, v2, v2);
  REQUIRE(rig.put_at("n0", 4, 1500ms));
  CHECK(rig.jobs("n0") == ids(1, 4));
  CHECK(rig.holds("n1", ids(1, 4)));
}
