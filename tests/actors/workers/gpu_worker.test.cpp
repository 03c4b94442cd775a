#include <doctest/doctest.h>

// Before the test DSL: it defines a macro `allow` that the supervision header's
// `restart_window::allow` would collide with.
#include "actors/workers/gpu_worker.hpp"
#include "framework/detail/supervisor_actor.hpp"

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <memory>
#include <tuple>

using namespace std::chrono_literals;
using namespace swarm::actors;

namespace {

// One simulated device of 1000 bytes and its worker, stepped on the test coordinator.
struct fixture : test_coordinator_fixture<> {
  std::shared_ptr<swarm::gpu::host_device_api> api =
      std::make_shared<swarm::gpu::host_device_api>(std::vector<size_t>{1000});
  std::shared_ptr<device_board> board = std::make_shared<device_board>(1);
  caf::actor w;

  gpu_worker_config config() {
    gpu_worker_config g;
    g.api = api;
    g.board = board;
    g.node = "n1";
    g.streams = 2;
    return g;
  }

  fixture() {
    w = spawn_gpu_worker(sys, config());
    sched.run();
  }

  ~fixture() override {
    caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
    sched.run();
  }

  void ask(uint64_t bytes, caf::timespan wait = caf::timespan{0}) {
    self->send(w, dev_alloc_atom::value, bytes, wait);
    sched.run();
  }

  // The grant waiting in `self`'s mailbox, if any.
  std::optional<device_grant> grant() {
    std::optional<device_grant> out;
    self->receive([&](device_grant& g) { out = std::move(g); }, caf::after(0s) >> [] {});
    return out;
  }

  std::tuple<uint64_t, uint64_t, uint64_t, uint64_t> stats() {
    self->send(w, dev_stats_atom::value);
    sched.run();
    std::tuple<uint64_t, uint64_t, uint64_t, uint64_t> out;
    self->receive([&](uint64_t used, uint64_t cached, uint64_t cap, uint64_t waiting) {
      out = {used, cached, cap, waiting};
    });
    return out;
  }
};

} // namespace

TEST_CASE_FIXTURE(fixture,
                  "a GPU worker publishes its incarnation and streams when it starts") {
  auto v = board->get(0);
  REQUIRE(v);
  CHECK(v->epoch == 1);
  CHECK(v->streams.size() == 2);
  CHECK(v->worker == w);
  CHECK(std::get<2>(stats()) == 1000);
}

TEST_CASE_FIXTURE(fixture,
                  "a GPU worker grants what fits, holds a request that does not until a "
                  "buffer is freed, and reuses the freed block") {
  ask(600);
  auto first = grant();
  REQUIRE(first);
  REQUIRE(first->ok());
  CHECK(first->epoch == 1);
  ask(600, caf::timespan{10s});
  CHECK_FALSE(grant()); // waits: 600 + 600 > 1000
  CHECK(std::get<3>(stats()) == 1);
  self->send(w, dev_free_atom::value, first->address, first->epoch);
  sched.run();
  auto second = grant();
  REQUIRE(second);
  REQUIRE(second->ok());
  CHECK(second->address == first->address); // the same block, no new allocation
  CHECK(stats() ==
        std::make_tuple(uint64_t{600}, uint64_t{0}, uint64_t{1000}, uint64_t{0}));
}

TEST_CASE_FIXTURE(fixture,
                  "a GPU worker refuses what can never fit, and what does not fit "
                  "within its wait, with device_out_of_memory") {
  ask(2000, caf::timespan{10s});
  auto never = grant();
  REQUIRE(never);
  CHECK_FALSE(never->ok());
  CHECK(never->err.code == swarm::errc::device_out_of_memory);
  CHECK(never->err.message.find("larger than its memory") != std::string::npos);
  CHECK(never->err.message.find("GPU 0 of node 'n1'") != std::string::npos);
  ask(900);
  REQUIRE(grant()->ok());
  ask(200); // no wait
  auto now = grant();
  REQUIRE(now);
  CHECK(now->err.code == swarm::errc::device_out_of_memory);
  ask(200, caf::timespan{1s});
  CHECK_FALSE(grant());
  sched.trigger_timeouts();
  sched.run();
  auto late = grant();
  REQUIRE(late);
  CHECK(late->err.code == swarm::errc::device_out_of_memory);
  CHECK(late->err.message.find("within its wait") != std::string::npos);
}

TEST_CASE_FIXTURE(fixture, "a GPU worker gives cached blocks back when a request of "
                           "another size needs the room") {
  ask(600);
  auto a = grant();
  REQUIRE(a->ok());
  self->send(w, dev_free_atom::value, a->address, a->epoch);
  sched.run();
  CHECK(stats() ==
        std::make_tuple(uint64_t{0}, uint64_t{600}, uint64_t{1000}, uint64_t{0}));
  ask(700);
  REQUIRE(grant()->ok());
  CHECK(stats() ==
        std::make_tuple(uint64_t{700}, uint64_t{0}, uint64_t{1000}, uint64_t{0}));
}

TEST_CASE("a GPU worker whose device failed is restarted by its supervisor on a fresh "
          "context, and frees of the old incarnation are ignored") {
  test_coordinator_fixture<> f;
  auto api = std::make_shared<swarm::gpu::host_device_api>(std::vector<size_t>{1000});
  auto board = std::make_shared<device_board>(1);
  swarm::detail::supervisor_config sup;
  sup.how = swarm::strategy::one_for_one;
  sup.intensity = swarm::restart_intensity{5, std::chrono::seconds(10)};
  swarm::detail::supervised_child c;
  c.policy.id = "gpu_worker-0";
  c.start = [api, board](caf::local_actor& parent) {
    gpu_worker_config g;
    g.api = api;
    g.board = board;
    g.node = "n1";
    return spawn_gpu_worker(parent.home_system(), g);
  };
  sup.children.push_back(c);
  auto s = swarm::detail::spawn_supervisor(f.sys, sup);
  f.sched.run();
  auto first = board->get(0);
  REQUIRE(first);
  f.self->send(first->worker, dev_alloc_atom::value, uint64_t{800}, caf::timespan{0});
  f.sched.run();
  device_grant held;
  f.self->receive([&](device_grant& g) { held = g; });
  REQUIRE(held.ok());

  api->fail(0, "an illegal address in a kernel");
  CHECK(api->synchronize(0, first->streams[0]).err().code == swarm::errc::device_failed);
  caf::anon_send(first->worker, dev_fail_atom::value, std::string{"illegal address"});
  f.sched.run();
  auto second = board->get(0);
  REQUIRE(second);
  CHECK(second->epoch == 2);
  CHECK(second->worker != first->worker);
  // The fresh context works again and has all its memory: the old buffer went with
  // the old one, and its late free changes nothing.
  CHECK(api->synchronize(0, second->streams[0]));
  f.self->send(second->worker, dev_free_atom::value, held.address, held.epoch);
  f.self->send(second->worker, dev_alloc_atom::value, uint64_t{1000}, caf::timespan{0});
  f.sched.run();
  device_grant fresh;
  f.self->receive([&](device_grant& g) { fresh = g; });
  CHECK(fresh.ok());
  CHECK(fresh.epoch == 2);
  caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
  f.sched.run();
  CHECK_FALSE(board->get(0));
}
