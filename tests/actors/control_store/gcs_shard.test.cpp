#include <doctest/doctest.h>

#include <caf/all.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "actors/control_store/gcs_shard.hpp"
#include "actors/control_store/gcs_shards.hpp"
#include "actors/control_store/protocol.hpp"
#include "actors/node/local_node.hpp"
#include "framework/swarm.hpp"

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using swarm::wire_msg::job_info;
using swarm::wire_msg::node_info;

namespace {

struct temp_dir {
  std::string path;
  temp_dir() {
    char tmpl[] = "/tmp/swarm-gcs-shard-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

node_info node(const std::string& name) {
  node_info n;
  n.name = name;
  n.port = 7000;
  return n;
}

job_info job(uint64_t id) {
  job_info j;
  j.id = id;
  j.driver = "head";
  return j;
}

} // namespace

TEST_CASE("a node started again on its gcs_dir finds its control-store rows") {
  temp_dir d;
  swarm::application app;
  swarm::runtime_config cfg;
  cfg.cpus = 1;
  cfg.gcs_shards = 2;
  cfg.gcs_dir = d.path + "/head";
  {
    swarm::actors::local_node n{app, cfg};
    n.gcs().put("node", "head", node("head"));
    n.gcs().put("node", "w1", node("w1"));
    n.gcs().put("job", "1", job(1));
    n.gcs().put("job", "2", job(2));
    n.gcs().erase("job", "1");
    // Writes from one thread apply in order, before this scan.
    REQUIRE(n.gcs().scan("job").value().size() == 1);
  }
  CHECK(fs::exists(d.path + "/head/shard-0/log"));
  CHECK(fs::exists(d.path + "/head/shard-1/log"));
  swarm::actors::local_node again{app, cfg};
  auto nodes = again.gcs().scan("node").value();
  CHECK(nodes.size() == 2);
  auto jobs = again.gcs().scan("job").value();
  REQUIRE(jobs.size() == 1);
  CHECK(std::get<job_info>(jobs[0]).id == 2);
  // Without a directory the tables start empty, as before.
  cfg.gcs_dir.clear();
  swarm::actors::local_node in_memory{app, cfg};
  CHECK(in_memory.gcs().scan("node").value().empty());
}

TEST_CASE("a node whose control store cannot be opened does not start, and says why") {
  temp_dir d;
  std::ofstream{d.path + "/file"} << "x";
  swarm::application app;
  swarm::runtime_config cfg;
  cfg.cpus = 1;
  cfg.gcs_dir = d.path + "/file/head";
  try {
    swarm::actors::local_node n{app, cfg};
    FAIL("the node started on an unusable gcs_dir");
  } catch (const swarm::failure& f) {
    CHECK(f.err().message.find("gcs_shard") != std::string::npos);
    CHECK(f.err().message.find(d.path + "/file/head") != std::string::npos);
  }
}

TEST_CASE("a write the disk refuses is answered with an error and not applied") {
  temp_dir d;
  caf::actor_system_config sys_cfg;
  caf::actor_system sys{sys_cfg};
  swarm::actors::gcs_shard_config cfg;
  cfg.dir = d.path;
  auto shard = swarm::actors::spawn_gcs_shard(sys, cfg);
  REQUIRE(shard);
  caf::scoped_actor self{sys};
  auto put = [&](const std::string& key) {
    bool ok = false;
    std::string why;
    self->request(*shard, 5s, swarm::actors::put_atom::value, std::string{"node"}, key,
                  swarm::actors::table_row{node(key)})
        .receive([&] { ok = true; }, [&](caf::error& e) { why = sys.render(e); });
    return ok ? std::string{} : why;
  };
  CHECK(put("a").empty());
  auto size = fs::file_size(d.path + "/shard-0/log");
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit old_limit{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  rlimit none = old_limit;
  none.rlim_cur = size;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &none) == 0);
  auto refused = put("b");
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  CHECK(refused.find("not persisted") != std::string::npos);
  CHECK(put("c").empty());
  std::vector<swarm::actors::table_row> rows;
  self->request(*shard, 5s, swarm::actors::scan_atom::value, std::string{"node"})
      .receive([&](std::vector<swarm::actors::table_row>& r) { rows = std::move(r); },
               [&](caf::error&) {});
  REQUIRE(rows.size() == 2);
  CHECK(std::get<node_info>(rows[0]).name == "a");
  CHECK(std::get<node_info>(rows[1]).name == "c");
  self->send_exit(*shard, caf::exit_reason::user_shutdown);
}

TEST_CASE("a key-value table spread over several nodes is served by none before the head "
          "placed it, then by the shard its placement names") {
  using swarm::detail::kv_op;
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  swarm::actors::gcs_shards shards{sys, 1, true};
  shards.chain_link()->set("head", [](const std::string&, swarm::wire_msg::gcs_chain) {});
  std::vector<caf::actor> started;
  for (size_t i = 0; i < shards.local_count(); ++i) {
    swarm::actors::gcs_shard_config c;
    c.index = 0;
    c.count = 1;
    c.chain_id = i;
    c.link = shards.chain_link();
    auto a = swarm::actors::spawn_gcs_shard(sys, c);
    REQUIRE(a);
    shards.set(i, *a);
    started.push_back(*a);
  }
  // Started again, the head knows none of the rows its nodes hold: it must not answer
  // from a shard of its own (a write there would be lost once the table is placed).
  auto early = shards.kv(kv_op::put, "k", {1, 2, 3});
  REQUIRE_FALSE(early);
  CHECK(early.err().code == swarm::errc::runtime_stopped);
  CHECK(early.err().message.find("not placed yet") != std::string::npos);
  swarm::wire_msg::kv_placement p;
  p.version = 7;
  p.chains = {{0, {"head"}}};
  shards.set_kv_placement(p);
  REQUIRE(shards.kv(kv_op::put, "k", {1, 2, 3}));
  CHECK(shards.kv(kv_op::get, "k", {}).value() == std::vector<uint8_t>{1, 2, 3});
  for (auto& a : started)
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}
