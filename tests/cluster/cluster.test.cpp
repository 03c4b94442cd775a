// A real 3-node cluster on 127.0.0.1: this test process is the head (and the driver),
// two node processes are the workers.

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/cluster/node_process.hpp"
#include "tests/cluster/test_app.hpp"
#include "tests/cluster/three_nodes.hpp"

using namespace std::chrono_literals;
using namespace swarm::cluster_test;

namespace {

// An actor made on worker-1 that moves to another node when worker-1 is lost (else it
// would wait for worker-1 to come back), restarted up to `restarts` times.
swarm::actor_options on_worker_1_movable(uint32_t restarts) {
  swarm::actor_options o;
  o.node = "worker-1";
  o.move_if_node_lost = true;
  o.max_restarts = restarts;
  return o;
}

} // namespace

TEST_CASE("tasks run on the node they are sent to and their results come back") {
  three_nodes c;
  auto pid = c.app.find_function<int()>("pid").value();
  auto add = c.app.find_function<int(int, int)>("add").value();
  CHECK(c.rt->submit(c.on("worker-1"), pid).get(10s).value() == c.w1->pid());
  CHECK(c.rt->submit(c.on("worker-2"), pid).get(10s).value() == c.w2->pid());
  CHECK(c.rt->submit(c.on("worker-1"), add, 2, 3).get(10s).value() == 5);
  CHECK(c.rt->submit(pid).get(10s).value() == ::getpid());
}

TEST_CASE("a future passed to a task on another node is fetched there") {
  three_nodes c;
  auto add = c.app.find_function<int(int, int)>("add").value();
  auto a = c.rt->submit(c.on("worker-1"), add, 1, 2);
  auto b = c.rt->submit(c.on("worker-2"), add, a, 10);
  CHECK(b.get(10s).value() == 13);
  // Errors cross too: an unknown node fails at once with a clear error.
  auto bad = c.rt->submit(c.on("nowhere"), add, 1, 1).get(10s);
  REQUIRE_FALSE(bad);
  CHECK(bad.err().code == swarm::errc::infeasible);
}

TEST_CASE("a task demanding a resource this node lacks spills to the node that has it") {
  three_nodes c;
  auto pid = c.app.find_function<int()>("pid").value();
  swarm::task_options special;
  special.resources.set("special", 1);
  CHECK(c.rt->submit(special, pid).get(10s).value() == c.w2->pid());
  swarm::task_options impossible;
  impossible.resources.set("CPU", 64);
  auto r = c.rt->submit(impossible, pid).get(10s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::infeasible);
}

TEST_CASE("a task whose large input lives on another node runs on that node") {
  three_nodes c;
  auto blob = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  auto read =
      c.app.find_function<std::vector<int64_t>(const std::vector<uint8_t>&)>("read_blob")
          .value();
  const int n = 3 << 20; // above the inline threshold: stays on worker-1
  auto big = c.rt->submit(c.on("worker-1"), blob, n);
  auto got = c.rt->submit(read, big).get(20s).value();
  CHECK(got[0] == c.w1->pid());
  int64_t sum = 0;
  for (int i = 0; i < n; ++i)
    sum += static_cast<uint8_t>(i);
  CHECK(got[1] == sum);
  // The owner has its own copy too, pulled in chunks.
  CHECK(big.get(20s).value().size() == static_cast<size_t>(n));
  // A large value put here is pulled by the node that reads it.
  auto local = c.rt->put(swarm::cluster_test::blob(n));
  auto there = c.rt->submit(c.on("worker-2"), read, local).get(20s).value();
  CHECK(there[0] == c.w2->pid());
  CHECK(there[1] == sum);
}

TEST_CASE(
    "objects spilled to disk stay readable from other nodes, and swarm status shows "
    "the spilling") {
  three_nodes c{"object_store = \"4MiB\"\nobject_pool = 0\n"};
  auto read =
      c.app.find_function<std::vector<int64_t>(const std::vector<uint8_t>&)>("read_blob")
          .value();
  // Twice the head's store: half of it goes to disk.
  const int n = 1 << 20;
  std::vector<swarm::object_ref<std::vector<uint8_t>>> puts;
  for (int i = 0; i < 8; ++i)
    puts.push_back(c.rt->put(swarm::cluster_test::blob(n + i)));
  REQUIRE(c.rt->stats().spills >= 4);
  auto spilled = swarm::list_cluster(c.cfg, "objects", "head", 5s).value();
  CHECK(std::count_if(spilled.begin(), spilled.end(),
                      [](auto& o) { return o.state == "spilled"; }) >= 4);
  for (int i = 0; i < 8; ++i) {
    auto expected = swarm::cluster_test::blob(n + i);
    auto got = c.rt->submit(c.on("worker-1"), read, puts[i]).get(20s).value();
    CHECK(got[0] == c.w1->pid());
    CHECK(got[1] == std::accumulate(expected.begin(), expected.end(), int64_t{0}));
  }
  CHECK(c.rt->stats().restores >= 4);
  // Read again there: the copy worker-1 pulled last is still kept, a cache hit.
  REQUIRE(c.rt->submit(c.on("worker-1"), read, puts[7]).get(20s));
  // The heartbeat rows carry the spill and cache counts.
  bool shown = false;
  for (int i = 0; i < 100 && !shown; ++i) {
    auto [rc, out] = run_command(std::string{SWARM_CLI} + " status --config " + c.config);
    auto state = swarm::cluster_status(c.cfg, 2s);
    bool counted = false;
    for (auto& node : state ? state->nodes : std::vector<swarm::node_status>{})
      if (node.name == "worker-1")
        counted = node.cache_misses >= 8 && node.cache_hits >= 1;
    shown =
        counted && rc == 0 &&
        out.find("spilled (spills/restores)") != std::string::npos &&
        out.find("(" + std::to_string(c.rt->stats().spills) + "/") != std::string::npos;
    if (!shown) std::this_thread::sleep_for(50ms);
  }
  CHECK(shown);
}

TEST_CASE("actors are created on other nodes, called there, and found by name anywhere") {
  three_nodes c;
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  swarm::actor_options o;
  o.node = "worker-2";
  o.name = "tally";
  auto a = c.rt->spawn(o, counter_t, 100);
  CHECK(a.call(&counter::where).get(10s).value() == c.w2->pid());
  CHECK(a.call(&counter::add, 5).get(10s).value() == 105);
  // From a task on worker-1, by name, through the head's control store.
  auto call_named =
      c.app.find_function<int(const std::string&, int)>("call_named").value();
  CHECK(c.rt->submit(c.on("worker-1"), call_named, std::string{"tally"}, 1)
            .get(10s)
            .value() == 106);
  auto found = c.rt->find_actor(counter_t, "tally").value();
  CHECK(found.call(&counter::add, 1).get(10s).value() == 107);
  // Names are unique cluster-wide.
  swarm::actor_options again;
  again.node = "worker-1";
  again.name = "tally";
  auto taken = c.rt->spawn(again, counter_t, 0);
  CHECK(taken.dead());
  CHECK(taken.death_reason().find("'tally' is already taken") != std::string::npos);
  CHECK_FALSE(c.rt->find_actor(counter_t, "nobody"));
}

TEST_CASE("a node without the cluster secret cannot join") {
  three_nodes c;
  auto wrong = c.dir + "/wrong.toml";
  std::ifstream in{c.config};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  text.replace(text.find(secret), secret.size(), "a-different-secret-entirely");
  write(wrong, text);
  // worker-1 under the wrong secret: its port is taken, so give it worker-2's name and a
  // fresh port.
  auto port_at = text.find(std::to_string(c.cfg.nodes[2].port));
  text.replace(port_at, std::to_string(c.cfg.nodes[2].port).size(),
               std::to_string(free_port()));
  write(wrong, text);
  auto intruder = c.start("worker-2", wrong);
  CHECK(intruder->wait_exit(40s) == 1);
  CHECK(intruder->log().find("secret") != std::string::npos);
  CHECK(c.alive() == 3);
}

TEST_CASE("garbage bytes sent to a node's port close only that connection") {
  three_nodes c;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(c.cfg.nodes[1].port);
  ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  std::string junk(256, '\xee');
  REQUIRE(::write(fd, junk.data(), junk.size()) == static_cast<ssize_t>(junk.size()));
  ::close(fd);
  auto pid = c.app.find_function<int()>("pid").value();
  CHECK(c.rt->submit(c.on("worker-1"), pid).get(10s).value() == c.w1->pid());
  for (int i = 0; i < 100 && c.w1->log().find("bad frame") == std::string::npos; ++i)
    std::this_thread::sleep_for(50ms);
  CHECK(c.w1->log().find("bad frame") != std::string::npos);
}

TEST_CASE("status lists every node and the driver's job, and stop ends a node process") {
  three_nodes c;
  auto state = swarm::cluster_status(c.cfg, 5s).value();
  auto& s = state.nodes;
  REQUIRE(s.size() == 3);
  for (auto& n : s)
    CHECK(n.alive);
  CHECK(s[0].head);
  CHECK(s[0].total.get("CPU") > 0);
  REQUIRE(state.jobs.size() == 1);
  CHECK(state.jobs[0].driver == "head");
  CHECK(state.jobs[0].pid == static_cast<uint32_t>(::getpid()));
  CHECK(state.jobs[0].running);
  // Each node's store, and the copies pulled into it, as its last heartbeat told.
  auto blob = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  auto big = c.rt->submit(c.on("worker-1"), blob, 1 << 20);
  REQUIRE(big.get(10s));
  // A put of a kept value after a freed one of its size: made in the freed one's memory.
  std::vector<uint8_t> kept(2 << 20, 7);
  c.rt->put(kept);
  auto reput = c.rt->put(kept);
  auto reported = [&] {
    state = swarm::cluster_status(c.cfg, 5s).value();
    for (auto& n : state.nodes)
      if (n.store_capacity == 0 || n.store_bytes > n.store_capacity ||
          n.pooled_bytes > n.store_capacity)
        return false;
    return state.nodes[0].pool_reuses >= 1 && state.nodes[0].pulled_bytes >= (1u << 20) &&
           state.nodes[0].store_bytes >= state.nodes[0].pulled_bytes &&
           state.nodes[1].store_bytes >= (1u << 20);
  };
  bool seen = false;
  for (int i = 0; i < 100 && !(seen = reported()); ++i)
    std::this_thread::sleep_for(50ms);
  CHECK(seen);
  REQUIRE(swarm::stop_cluster(c.cfg, "worker-1", 5s));
  CHECK(c.w1->wait_exit(10s) == 0);
}

TEST_CASE("swarm stop stops the workers of a cluster whose head is gone") {
  three_nodes c;
  c.rt.reset();
  REQUIRE(swarm::stop_cluster(c.cfg, "", 5s));
  CHECK(c.w1->wait_exit(10s) == 0);
  CHECK(c.w2->wait_exit(10s) == 0);
  auto none = swarm::stop_cluster(c.cfg, "", 2s);
  REQUIRE_FALSE(none);
  CHECK(none.err().message.find("no other node of the file answered") !=
        std::string::npos);
}

TEST_CASE(
    "a node stopped in the middle of work exits cleanly and every future resolves") {
  three_nodes c;
  auto slow_blob =
      c.app.find_function<std::vector<uint8_t>(int, int)>("slow_blob").value();
  auto add = c.app.find_function<int(int, int)>("add").value();
  // Large results held on worker-1, and small ones that travel back inline, still
  // running and queued there when it is told to stop.
  std::vector<swarm::object_ref<std::vector<uint8_t>>> large;
  std::vector<swarm::object_ref<int>> small;
  for (int i = 0; i < 150; ++i) {
    large.push_back(c.rt->submit(c.on("worker-1"), slow_blob, 200 << 10, 4));
    small.push_back(c.rt->submit(c.on("worker-1"), add, i, 1));
  }
  REQUIRE(large[10].get(10s));
  REQUIRE(swarm::stop_cluster(c.cfg, "worker-1", 5s));
  CHECK(c.w1->wait_exit(10s) == 0);
  CHECK(c.w1->log().find("stopping") != std::string::npos);
  // Each future has its value, or an error that names the node: none hangs.
  size_t values = 0, errors = 0;
  for (auto& r : large) {
    auto v = r.get(20s);
    if (v) {
      ++values;
      CHECK(v->size() == (200u << 10));
    } else {
      ++errors;
      CHECK(v.err().code != swarm::errc::timeout);
      INFO(v.err().to_string());
      CHECK(v.err().message.find("worker-1") != std::string::npos);
    }
  }
  for (int i = 0; i < static_cast<int>(small.size()); ++i) {
    auto v = small[static_cast<size_t>(i)].get(20s);
    if (v) {
      ++values;
      CHECK(*v == i + 1);
    } else {
      ++errors;
      CHECK(v.err().code != swarm::errc::timeout);
    }
  }
  CHECK(values >= 11);
  CHECK(values + errors == 300);
  // The rest of the cluster goes on.
  CHECK(c.rt->submit(c.on("worker-2"), add, 2, 2).get(10s).value() == 4);
}

TEST_CASE("healthy workers moving 500 MB results to the head are not declared dead") {
  // Room for the four results the head holds (the default store is a quarter of the
  // machine's memory).
  three_nodes c{"object_store = \"3GiB\"\n"};
  auto blob = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  std::vector<swarm::object_ref<std::vector<uint8_t>>> results;
  for (auto* node : {"worker-1", "worker-2", "worker-1", "worker-2"})
    results.push_back(c.rt->submit(c.on(node), blob, 500 << 20));
  for (auto& r : results) {
    auto v = r.get(120s);
    REQUIRE_MESSAGE(v, v.err().to_string());
    CHECK(v->size() == (500u << 20));
    CHECK((*v)[1000] == static_cast<uint8_t>(1000 % 256));
  }
  CHECK(c.alive() == 3);
  CHECK(c.w1->log().find("no heartbeat") == std::string::npos);
  CHECK(c.w2->log().find("no heartbeat") == std::string::npos);
}

TEST_CASE("contiguous values of each kind cross between node processes bit for bit") {
  three_nodes c;
  auto& app = c.app;
  // 9 MB each: several chunks, the buffers sent from and received into the values'
  // memory.
  constexpr int n = 9 << 20;
  auto on_w1 = c.on("worker-1");
  // Made on worker-1, read here.
  auto bytes =
      c.rt->submit(on_w1, app.find_function<std::vector<uint8_t>(int)>("blob").value(), n)
          .get(60s);
  REQUIRE_MESSAGE(bytes, bytes.err().to_string());
  CHECK(*bytes == blob(n));
  auto text =
      c.rt->submit(on_w1, app.find_function<std::string(int)>("noise_text").value(), n)
          .get(60s);
  REQUIRE_MESSAGE(text, text.err().to_string());
  CHECK(*text == noise_text(n));
  auto doubles =
      c.rt->submit(on_w1,
                   app.find_function<std::vector<double>(int)>("noise_doubles").value(),
                   n)
          .get(60s);
  REQUIRE_MESSAGE(doubles, doubles.err().to_string());
  auto want = noise_doubles(n);
  REQUIRE(doubles->size() == want.size());
  CHECK(std::memcmp(doubles->data(), want.data(), want.size() * sizeof(double)) == 0);
  auto s = c.rt->submit(on_w1, app.find_function<sample(int)>("noise_sample").value(), n)
               .get(60s);
  REQUIRE_MESSAGE(s, s.err().to_string());
  CHECK(digest_sample(*s) == digest_sample(noise_sample(n)));
  CHECK(s->label == "sample-" + std::to_string(n));
  CHECK(s->tail == -n);
  // Put here, read by a task on worker-1.
  auto on_w1_digest = [&](auto value, const char* fn) {
    using T = decltype(value);
    auto ref = c.rt->put(std::move(value));
    auto d = c.rt->submit(on_w1, app.find_function<uint64_t(const T&)>(fn).value(), ref)
                 .get(60s);
    REQUIRE_MESSAGE(d, d.err().to_string());
    return *d;
  };
  auto sent = noise(n, 9);
  CHECK(on_w1_digest(sent, "digest_bytes") == digest_bytes(sent));
  CHECK(on_w1_digest(noise_text(n), "digest_text") == digest_text(noise_text(n)));
  CHECK(on_w1_digest(noise_doubles(n), "digest_doubles") ==
        digest_doubles(noise_doubles(n)));
  CHECK(on_w1_digest(noise_sample(n), "digest_sample") == digest_sample(noise_sample(n)));
}

#ifdef SWARM_SANITIZED
constexpr bool measures_memory_badly = true; // freed memory sits in quarantine
#else
constexpr bool measures_memory_badly = false;
#endif

TEST_CASE(
    "reading a large result from another node takes its size plus the chunks in flight" *
    doctest::skip(measures_memory_badly)) {
  three_nodes c;
  auto blob_fn = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  // Warm: connections, buffers and the pull path exist before the peak is measured.
  REQUIRE(c.rt->submit(c.on("worker-1"), blob_fn, 8 << 20).get(60s));
  auto status = [](const std::string& key) {
    std::ifstream in{"/proc/self/status"};
    std::string line;
    while (std::getline(in, line))
      if (line.rfind(key + ":", 0) == 0)
        return std::stoul(line.substr(key.size() + 1)) << 10;
    return 0ul;
  };
  auto before = status("VmRSS");
  // Resets VmHWM, the peak, to the resident size now.
  if (!(std::ofstream{"/proc/self/clear_refs"} << "5")) {
    MESSAGE("this kernel cannot reset the peak RSS: not measured");
    return;
  }
  constexpr size_t size = 256u << 20;
  // Read without a copy of its own, to measure what the pull takes.
  auto v =
      c.rt->submit(c.on("worker-1"), blob_fn, static_cast<int>(size)).get_shared(120s);
  REQUIRE_MESSAGE(v, v.err().to_string());
  REQUIRE((*v)->size() == size);
  CHECK((**v)[size - 1] == static_cast<uint8_t>((size - 1) % 256));
  auto peak = status("VmHWM");
  MESSAGE("RSS " << before / 1024 << " KiB before, peak " << peak / 1024 << " KiB");
  // The value, plus a tenth, plus the chunks in flight (4 of 4 MiB, each in a frame and
  // a message): not twice the value.
  CHECK(peak - before <= size + size / 10 + (48u << 20));
}

TEST_CASE("actors spawned on another node and dropped are reclaimed there" *
          doctest::skip(measures_memory_badly)) {
  three_nodes c;
  auto ballast_t = c.app.find_actor_type<ballast>("ballast").value();
  swarm::actor_options o;
  o.node = "worker-1";
  auto rss = [&] {
    std::ifstream statm{"/proc/" + std::to_string(c.w1->pid()) + "/statm"};
    size_t pages = 0, resident = 0;
    statm >> pages >> resident;
    return resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  };
  auto spawn_and_drop = [&](int n) {
    for (int i = 0; i < n; ++i) {
      auto a = c.rt->spawn(o, ballast_t, 1024);
      REQUIRE(a.call(&ballast::kib).get(10s).value() == 1024);
    }
  };
  spawn_and_drop(20);
  auto warm = rss();
  // 300 MiB of actors if none were reclaimed.
  spawn_and_drop(300);
  size_t now = rss();
  for (int i = 0; i < 100 && now > warm + (48u << 20); ++i) {
    std::this_thread::sleep_for(50ms);
    now = rss();
  }
  INFO("worker-1 RSS went from " << warm / 1024 << " KiB to " << now / 1024 << " KiB");
  CHECK(now < warm + (48u << 20));
}

TEST_CASE("a node started with an invalid cluster file names the key and exits") {
  auto dir = make_dir();
  auto text = cluster_file(free_port(), free_port(), free_port(), secret);
  text.replace(text.find("heartbeat_ms = 100"), 18, "heartbeat_ms = \"soon\"");
  write(dir + "/bad.toml", text);
  node_process p{SWARM_TEST_NODE,
                 {"--config", dir + "/bad.toml", "--node", "head"},
                 dir + "/bad.log"};
  CHECK(p.wait_exit(10s) == 1);
  CHECK(p.log().find("heartbeat_ms") != std::string::npos);
}

TEST_CASE("a task whose node is killed runs again on another node") {
  three_nodes c;
  auto busy = c.start_long_task();
  auto survivor_pid = (*busy.survivor)->pid();
  (*busy.victim)->kill_now();
  CHECK(busy.task.get(20s).value() == survivor_pid);
  // With both workers dead, work that needs them says so rather than "infeasible".
  (*busy.survivor)->kill_now();
  auto pid = c.app.find_function<int()>("pid").value();
  swarm::task_options on_a_worker;
  on_a_worker.resources.set("slot", 1);
  swarm::result<int> r = swarm::error{swarm::errc::timeout, "not tried"};
  for (int i = 0; i < 100; ++i) {
    r = c.rt->submit(on_a_worker, pid).get(10s);
    if (!r && r.err().message.find("dead") != std::string::npos) break;
    std::this_thread::sleep_for(50ms);
  }
  REQUIRE_FALSE(r);
  INFO(r.err().to_string());
  CHECK(r.err().code == swarm::errc::node_unreachable);
  CHECK(
      r.err().message.find("the nodes that have it are dead ('worker-1', 'worker-2')") !=
      std::string::npos);
}

TEST_CASE("a transfer cut by killing the node it comes from ends lost, never half-read") {
  three_nodes c;
  auto blob = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  const int size = 192 << 20;
  auto big = c.rt->submit(c.on("worker-1"), blob, size);
  // The head pulls the result as soon as it hears where it is: kill its holder then.
  bool cut = false;
  for (int i = 0; i < 20000 && !big.ready(); ++i) {
    if (c.rt->stats().pulled_bytes >= static_cast<size_t>(size)) {
      c.w1->kill_now();
      cut = !big.ready();
      break;
    }
    std::this_thread::sleep_for(1ms);
  }
  {
    auto r = big.get(20s);
    INFO("killed mid-transfer: " << cut);
    if (r) {
      // Whole, or not at all.
      REQUIRE(r->size() == static_cast<size_t>(size));
      CHECK(*r == swarm::cluster_test::blob(size));
    } else {
      INFO(r.err().to_string());
      CHECK((r.err().code == swarm::errc::object_lost ||
             r.err().code == swarm::errc::node_unreachable ||
             r.err().code == swarm::errc::worker_died));
      CHECK(r.err().message.find("worker-1") != std::string::npos);
    }
  }
  // Nothing of it stays counted on the head.
  big = {};
  bool released = false;
  for (int i = 0; i < 200 && !(released = c.rt->stats().pulled_bytes == 0); ++i)
    std::this_thread::sleep_for(25ms);
  CHECK(released);
}

TEST_CASE("a frozen node is found dead within node_timeout and its task runs elsewhere") {
  three_nodes c;
  auto busy = c.start_long_task();
  auto& frozen = *busy.victim;
  auto survivor_pid = (*busy.survivor)->pid();
  auto stopped_at = std::chrono::steady_clock::now();
  frozen->freeze();
  // SIGSTOP keeps its sockets open: only the missing heartbeats tell (node_timeout is
  // 1 s in this cluster's file).
  for (int i = 0; i < 100 && c.alive() == 3; ++i)
    std::this_thread::sleep_for(20ms);
  auto detected = std::chrono::steady_clock::now() - stopped_at;
  CHECK(c.alive() == 2);
  CHECK(detected < 2s);
  CHECK(busy.task.get(20s).value() == survivor_pid);
  // Thawed, it joins again.
  frozen->thaw();
  for (int i = 0; i < 200 && c.alive() < 3; ++i)
    std::this_thread::sleep_for(25ms);
  INFO(frozen->log());
  CHECK(c.alive() == 3);
}

TEST_CASE("named actors of a frozen worker restart elsewhere, and once thawed it stops "
          "its stale instances before it joins again: one live instance per name, and "
          "calls to a stale one redirected") {
  three_nodes c;
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  auto o = on_worker_1_movable(2);
  o.checkpoint_every = 1;
  o.max_task_retries = 2;
  std::vector<swarm::actor_handle<counter>> accounts;
  for (int i = 0; i < 3; ++i) {
    o.name = "account-" + std::to_string(i);
    accounts.push_back(c.rt->spawn(o, counter_t, 100 * i));
    CHECK(accounts.back().call(&counter::add, 1).get(10s).value() == 100 * i + 1);
  }
  auto* core = accounts[0].node();
  auto stale = core->address_of(accounts[0].record());
  REQUIRE(stale.node == "worker-1");
  c.w1->freeze();
  for (int i = 0; i < 150 && c.alive() == 3; ++i)
    std::this_thread::sleep_for(20ms);
  REQUIRE(c.alive() == 2);
  for (int i = 0; i < 3; ++i) {
    CHECK(accounts[static_cast<size_t>(i)].call(&counter::add, 1).get(20s).value() ==
          100 * i + 2);
    CHECK(accounts[static_cast<size_t>(i)].call(&counter::where).get(10s).value() !=
          c.w1->pid());
  }
  c.w1->thaw();
  for (int i = 0; i < 200 && c.alive() < 3; ++i)
    std::this_thread::sleep_for(25ms);
  INFO(c.w1->log());
  REQUIRE(c.alive() == 3);
  CHECK(c.w1->log().find("stopped 3 actor(s) it hosted for other nodes") !=
        std::string::npos);
  // A call sent to a stale instance straight is refused there and redirected to the
  // live one; the names find it too.
  auto rec = core->actor_at(stale);
  REQUIRE(rec);
  swarm::actor_handle<counter> old{*core, *rec};
  CHECK(old.call(&counter::add, 1).get(10s).value() == 3);
  auto found = c.rt->find_actor(counter_t, "account-0").value();
  CHECK(found.call(&counter::add, 1).get(10s).value() == 4);
}

TEST_CASE("a worker node killed mid-DAG still gives the right answer") {
  three_nodes c;
  auto blob = c.app.find_function<std::vector<uint8_t>(int)>("blob").value();
  auto slow_sum =
      c.app.find_function<int64_t(const std::vector<uint8_t>&, int)>("slow_sum").value();
  swarm::task_options on_a_worker;
  on_a_worker.resources.set("slot", 1);
  // Layer one: large values (over the inline threshold) that stay on the workers; layer
  // two reads them where they are, slowly; the driver adds it all up.
  std::vector<swarm::object_ref<int64_t>> sums;
  int64_t expected = 0;
  for (int i = 0; i < 8; ++i) {
    int size = 100'000 + i * 1000;
    for (int b = 0; b < size; ++b)
      expected += static_cast<uint8_t>(b);
    auto part = c.rt->submit(on_a_worker, blob, size);
    sums.push_back(c.rt->submit(on_a_worker, slow_sum, part, 400));
  }
  std::this_thread::sleep_for(300ms);
  c.w1->kill_now();
  int64_t total = 0;
  for (auto& s : sums)
    total += s.get(30s).value();
  CHECK(total == expected);
  CHECK(c.alive() == 2);
}

TEST_CASE("an actor whose node is killed is restarted on another with its saved state") {
  three_nodes c;
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  auto o = on_worker_1_movable(1);
  o.checkpoint_every = 1;
  o.max_task_retries = 1; // a call racing the node's death is sent again
  auto a = c.rt->spawn(o, counter_t, 40);
  CHECK(a.call(&counter::add, 2).get(10s).value() == 42);
  CHECK(a.call(&counter::where).get(10s).value() == c.w1->pid());
  c.w1->kill_now();
  // Calls made while it restarts wait for it.
  CHECK(a.call(&counter::add, 1).get(20s).value() == 43);
  auto now_at = a.call(&counter::where).get(10s).value();
  CHECK(now_at != c.w1->pid());
  CHECK((now_at == c.w2->pid() || now_at == ::getpid()));
}

TEST_CASE("an actor restarting onto a node frozen as it was chosen moves on once that "
          "node is found dead, and waits for a node that fits it to come back") {
  three_nodes c;
  auto counter_t = c.app.find_actor_type<counter>("counter").value();
  auto o = on_worker_1_movable(1);
  o.resources.set("slot", 1); // worker-2 is the only other node with one
  auto a = c.rt->spawn(o, counter_t, 7);
  REQUIRE(a.call(&counter::add, 1).get(10s).value() == 8);
  c.w2->freeze();
  c.w1->kill_now();
  // Its restart asks worker-2, which answers nothing until it is found dead; then no
  // node that fits the actor is alive, and it waits (up to join_wait) for one.
  for (int i = 0; i < 150 && c.alive() > 1; ++i)
    std::this_thread::sleep_for(20ms);
  REQUIRE(c.alive() == 1);
  c.w2->thaw();
  // Back as a new life, worker-2 takes it, well before the 10 s the first request would
  // have waited for worker-2's answer.
  auto r = a.call(&counter::add, 1).get(8s);
  INFO((r ? std::string{} : r.err().to_string()));
  CHECK(r.value() == 8);
  CHECK(a.call(&counter::where).get(10s).value() == c.w2->pid());
}
