#include <doctest/doctest.h>

// Before the test DSL: it defines a macro `allow` that the supervision header's
// `restart_window::allow` would collide with.
#include "actors/workers/gpu_worker.hpp"
#include "framework/detail/supervisor_actor.hpp"

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <future>
#include <memory>
#include <set>
#include <tuple>

using namespace std::chrono_literals;
using namespace swarm::actors;

namespace {

// A worker of device 0 of node "n1", run on the test coordinator.
gpu_worker_config test_config(std::shared_ptr<swarm::gpu::device_api> api,
                              std::shared_ptr<device_board> board) {
  gpu_worker_config g;
  g.api = std::move(api);
  g.board = std::move(board);
  g.node = "n1";
  g.own_thread = false;
  return g;
}

// One simulated device of 1000 bytes and its worker, stepped on the test coordinator.
struct fixture : test_coordinator_fixture<> {
  std::shared_ptr<swarm::gpu::host_device_api> api =
      std::make_shared<swarm::gpu::host_device_api>(std::vector<size_t>{1000});
  std::shared_ptr<device_board> board = std::make_shared<device_board>(1);
  caf::actor w;

  gpu_worker_config config() {
    auto g = test_config(api, board);
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
  CHECK(v->streams->all().size() == 2);
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

TEST_CASE("a GPU worker whose device faulted is restarted once, the restart cannot "
          "reopen the poisoned context, so the device is lost to the process, refuses "
          "allocations naming the fault, and nothing restarts in a loop") {
  test_coordinator_fixture<> f;
  auto api = std::make_shared<swarm::gpu::host_device_api>(std::vector<size_t>{1000});
  auto board = std::make_shared<device_board>(1);
  swarm::detail::supervisor_config sup;
  sup.how = swarm::strategy::one_for_one;
  sup.intensity = swarm::restart_intensity{5, std::chrono::seconds(10)};
  swarm::detail::supervised_child c;
  c.policy.id = "gpu_worker-0";
  int starts = 0;
  c.start = [api, board, &starts](caf::local_actor& parent) {
    ++starts;
    return spawn_gpu_worker(parent.home_system(), test_config(api, board));
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
  CHECK(board->lost(0).empty());

  api->fail(0, "an illegal address in a kernel");
  CHECK(api->synchronize(0, first->streams->take(0)).err().code ==
        swarm::errc::device_failed);
  caf::anon_send(first->worker, dev_fail_atom::value,
                 std::string{"cudaErrorIllegalAddress in task 'k'"});
  f.sched.run();
  CHECK(starts == 2);
  CHECK_FALSE(board->get(0));
  auto why = board->lost(0);
  CHECK(why.find("GPU 0 of node 'n1' is lost to this process") != std::string::npos);
  CHECK(why.find("cudaErrorIllegalAddress in task 'k'") != std::string::npos);
  CHECK(why.find("must be restarted") != std::string::npos);

  f.self->send(s, swarm::detail::which_child_atom::value, std::string{"gpu_worker-0"});
  f.sched.run();
  caf::actor second;
  f.self->receive([&](caf::actor& a) { second = a; });
  REQUIRE(second);
  CHECK(second != first->worker);
  f.self->send(second, dev_alloc_atom::value, uint64_t{10}, caf::timespan{0});
  f.sched.run();
  device_grant refused;
  f.self->receive([&](device_grant& g) { refused = g; });
  CHECK_FALSE(refused.ok());
  CHECK(refused.err.code == swarm::errc::device_failed);
  CHECK(refused.err.message == why);
  // Another fault report changes nothing: the worker stays, no restart follows.
  caf::anon_send(second, dev_fail_atom::value, std::string{"again"});
  f.sched.run();
  CHECK(starts == 2);
  caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
  f.sched.run();
  CHECK_FALSE(board->get(0));
}

namespace {

// A simulated device whose streams never finish on their own: an event recorded on one
// stays pending until someone waits for it.
class pending_work final : public swarm::gpu::device_api {
public:
  explicit pending_work(size_t bytes) : inner_(std::vector<size_t>{bytes}) {}

  const char* kind() const noexcept override { return "host"; }
  const std::vector<swarm::gpu::device_info>& devices() const noexcept override {
    return inner_.devices();
  }
  swarm::result<void> open(int d, bool reset) override { return inner_.open(d, reset); }
  void make_current(int) noexcept override {}
  swarm::result<size_t> free_memory(int d) override { return inner_.free_memory(d); }
  swarm::result<void*> allocate(int d, size_t n) override {
    if (gate.valid()) {
      entered.set_value();
      gate.wait(); // a cudaMalloc that blocks
    }
    return inner_.allocate(d, n);
  }
  swarm::result<void> release(int d, void* p) noexcept override {
    return inner_.release(d, p);
  }
  swarm::result<void*> host_alloc(size_t n) override { return inner_.host_alloc(n); }
  void host_free(void* p) noexcept override { inner_.host_free(p); }
  swarm::result<swarm::gpu::stream_handle> make_stream(int d) override {
    return inner_.make_stream(d);
  }
  void destroy_stream(int d, swarm::gpu::stream_handle s) noexcept override {
    inner_.destroy_stream(d, s);
  }
  swarm::result<void> copy(int dd, void* dst, int sd, const void* src, size_t n,
                           swarm::gpu::stream_handle s) override {
    return inner_.copy(dd, dst, sd, src, n, s);
  }
  swarm::result<void> to_host(void* dst, int d, const void* src, size_t n,
                              swarm::gpu::stream_handle s) override {
    return inner_.to_host(dst, d, src, n, s);
  }
  swarm::result<void> from_host(int d, void* dst, const void* src, size_t n,
                                swarm::gpu::stream_handle s) override {
    return inner_.from_host(d, dst, src, n, s);
  }
  swarm::result<void> synchronize(int d, swarm::gpu::stream_handle s) override {
    return inner_.synchronize(d, s);
  }
  swarm::result<swarm::gpu::event_handle> record(int,
                                                 swarm::gpu::stream_handle) override {
    auto* e = new bool{false};
    recorded.insert(e);
    return static_cast<swarm::gpu::event_handle>(e);
  }
  bool done(int, swarm::gpu::event_handle e) noexcept override {
    return *static_cast<bool*>(e);
  }
  void wait(int, swarm::gpu::event_handle e) noexcept override {
    ++waits;
    *static_cast<bool*>(e) = true;
  }
  void destroy_event(int, swarm::gpu::event_handle e) noexcept override {
    recorded.erase(static_cast<bool*>(e));
    delete static_cast<bool*>(e);
  }
  std::string sharing_host() const override { return ""; }
  swarm::result<std::string> share(int d, void* p) override { return inner_.share(d, p); }
  swarm::result<void*> open_shared(int d, const std::string& h, size_t n) override {
    return inner_.open_shared(d, h, n);
  }
  void close_shared(int d, void* p) noexcept override {
    ++closes;
    inner_.close_shared(d, p);
  }

  // The work queued so far is done: every event recorded is.
  void finish_all() {
    for (auto* e : recorded)
      *e = true;
  }

  int waits = 0;
  int closes = 0;
  std::set<bool*> recorded;
  // When valid, the next allocation says it began and blocks until it is ready.
  std::shared_future<void> gate;
  std::promise<void> entered;

private:
  swarm::gpu::host_device_api inner_;
};

// A worker of a device whose work stays pending until waited for (or finished).
struct pending_fixture : test_coordinator_fixture<> {
  std::shared_ptr<pending_work> api = std::make_shared<pending_work>(1000);
  std::shared_ptr<device_board> board = std::make_shared<device_board>(1);
  caf::actor w;

  pending_fixture() {
    w = spawn_gpu_worker(sys, test_config(api, board));
    sched.run();
  }
};

} // namespace

TEST_CASE_FIXTURE(
    pending_fixture,
    "a GPU worker reuses a freed block only once the work queued before its free "
    "is done, and waits for that work only when the device has no other room") {
  auto ask = [&](uint64_t bytes) {
    self->send(w, dev_alloc_atom::value, bytes, caf::timespan{0});
    sched.run();
    device_grant out;
    self->receive([&](device_grant& grant) { out = grant; });
    return out;
  };
  auto a = ask(400);
  REQUIRE(a.ok());
  // A kernel may still write `a`: a request of its size gets fresh memory.
  self->send(w, dev_free_atom::value, a.address, a.epoch);
  auto b = ask(400);
  REQUIRE(b.ok());
  CHECK(b.address != a.address);
  CHECK(api->waits == 0);
  // With no room left for a fresh block, the request waits for that work, then reuses.
  auto c = ask(400);
  REQUIRE(c.ok());
  CHECK(c.address == a.address);
  CHECK(api->waits > 0);
  caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  sched.run();
}

TEST_CASE("a stream pool gives each running task a stream of its own, grows when every "
          "stream is taken, and takes back what a finished task gives back") {
  auto api = std::make_shared<swarm::gpu::host_device_api>(std::vector<size_t>{1000});
  REQUIRE(api->open(0, false));
  auto pool = stream_pool::make(api, 0, 2).value();
  auto shared = pool->take(0); // outside any task: the first stream, for everyone
  CHECK(pool->take(0) == shared);
  auto a = pool->take(7);
  CHECK(a != nullptr);
  CHECK(a != shared);
  CHECK(pool->take(7) == a); // the same while it runs
  auto b = pool->take(8);    // none free: a new one
  CHECK(b != nullptr);
  CHECK(b != a);
  CHECK(b != shared);
  CHECK(pool->all().size() == 3);
  CHECK(pool->held(9) == nullptr);
  pool->give_back(7);
  CHECK(pool->held(7) == nullptr);
  CHECK(pool->take(9) == a); // reused, not made again
  CHECK(pool->all().size() == 3);
  pool->close();
  CHECK(pool->take(10) == nullptr);
  CHECK(pool->all().empty());
}

TEST_CASE("a GPU worker counts as its memory what the device has free when it starts, "
          "not what the device has in all") {
  test_coordinator_fixture<> f;
  auto api = std::make_shared<swarm::gpu::host_device_api>(std::vector<size_t>{1000});
  REQUIRE(api->open(0, false));
  auto other = api->allocate(0, 400).value(); // another process's, say
  CHECK(api->free_memory(0).value() == 600);
  auto board = std::make_shared<device_board>(1);
  auto w = spawn_gpu_worker(f.sys, test_config(api, board));
  f.sched.run();
  f.self->send(w, dev_stats_atom::value);
  f.sched.run();
  f.self->receive([&](uint64_t used, uint64_t, uint64_t capacity, uint64_t) {
    CHECK(used == 0);
    CHECK(capacity == 600);
  });
  // More than is free fails at once, naming the device and what it counts.
  f.self->send(w, dev_alloc_atom::value, uint64_t{700}, caf::timespan{0});
  f.sched.run();
  f.self->receive([&](device_grant& grant) {
    CHECK_FALSE(grant.ok());
    CHECK(grant.err.code == swarm::errc::device_out_of_memory);
    CHECK(grant.err.message.find("GPU 0 of node 'n1'") != std::string::npos);
  });
  caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  f.sched.run();
  CHECK(api->release(0, other));
}

TEST_CASE(
    "simulated device memory shared by its handle is mapped as the same memory, and "
    "a handle that names nothing, or a size past its end, is refused, saying which") {
  swarm::gpu::host_device_api api{{1 << 20}};
  REQUIRE(api.open(0, false));
  CHECK_FALSE(api.sharing_host().empty());
  auto p = api.allocate(0, 100000).value();
  auto handle = api.share(0, p).value();
  // Another process opens the same file through /proc; this one can too.
  // A sharer that says it holds more than it does is refused: reading past the end of
  // the mapping would fault.
  auto past = api.open_shared(0, handle, size_t{1} << 30);
  REQUIRE_FALSE(past);
  CHECK(past.err().code == swarm::errc::invalid_argument);
  CHECK(past.err().message.find("fewer than the 1073741824 its sharer said") !=
        std::string::npos);
  auto q = api.open_shared(0, handle, 100000).value();
  CHECK(q != p);
  static_cast<uint8_t*>(p)[99999] = 42;
  CHECK(static_cast<uint8_t*>(q)[99999] == 42);
  static_cast<uint8_t*>(q)[0] = 7;
  CHECK(static_cast<uint8_t*>(p)[0] == 7);
  api.close_shared(0, q);
  CHECK(api.release(0, p));
  auto gone = api.open_shared(0, "1/999999", 10);
  REQUIRE_FALSE(gone);
  CHECK(gone.err().code == swarm::errc::device_error);
  CHECK(gone.err().message.find("1/999999") != std::string::npos);
  int x = 0;
  CHECK_FALSE(api.share(0, &x));
}

TEST_CASE("a GPU worker makes its blocking device calls on a thread of its own: other "
          "actors run while an allocation blocks in the device") {
  // One scheduler thread: a worker blocking on it would hold up every other actor.
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 1);
  caf::actor_system sys{cfg};
  auto api = std::make_shared<pending_work>(1000);
  std::promise<void> open;
  api->gate = open.get_future().share();
  auto began = api->entered.get_future();
  auto board = std::make_shared<device_board>(1);
  auto g = test_config(api, board);
  g.own_thread = true;
  auto w = spawn_gpu_worker(sys, g);
  caf::scoped_actor self{sys};
  self->send(w, dev_alloc_atom::value, uint64_t{100}, caf::timespan{0});
  REQUIRE(began.wait_for(10s) == std::future_status::ready);
  // The step is a spawn argument: CAF 0.17 dereferences a null argument tuple for
  // argument-less spawns (harmless, but UBSan reports it).
  auto echo = sys.spawn(
      [](int step) -> caf::behavior { return {[step](int x) { return x + step; }}; }, 1);
  int answer = 0;
  self->request(echo, 5s, 41).receive([&](int y) { answer = y; }, [](caf::error&) {});
  CHECK(answer == 42);
  open.set_value();
  bool granted = false;
  self->receive([&](device_grant& grant) { granted = grant.ok(); },
                caf::after(10s) >> [] {});
  CHECK(granted);
  caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(
    pending_fixture,
    "memory another process shared, let go here, is unmapped only once the work "
    "queued on the device before is done, and then its sharer is told") {
  // Another process's memory: a block of the simulated device, mapped a second time.
  auto p = api->allocate(0, 100).value();
  auto q = api->open_shared(0, api->share(0, p).value(), 100).value();
  bool told = false;
  self->send(w, dev_unmap_atom::value,
             unmap_request{reinterpret_cast<uint64_t>(q), board->get(0)->epoch,
                           [&] { told = true; }});
  sched.run();
  CHECK_FALSE(told); // a kernel queued before may still read it
  CHECK(api->closes == 0);
  sched.trigger_timeouts();
  sched.run();
  CHECK_FALSE(told);
  api->finish_all();
  sched.trigger_timeouts();
  sched.run();
  CHECK(told);
  CHECK(api->closes == 1);
  // Of an incarnation whose context is gone: nothing to unmap, the sharer is told.
  bool stale = false;
  self->send(w, dev_unmap_atom::value, unmap_request{1, 0, [&] { stale = true; }});
  sched.run();
  CHECK(stale);
  CHECK(api->closes == 1);
  CHECK(api->release(0, p));
  caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
  sched.run();
}
