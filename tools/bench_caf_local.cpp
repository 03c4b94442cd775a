#include "tools/bench_caf_local.hpp"

#include <algorithm>
#include <cstdint>
#include <thread>
#include <utility>

#include <caf/all.hpp>

#include "tools/bench_stats.hpp"

namespace swarm::tools {

namespace {

using bytes = std::vector<uint8_t>;

// Class-based: CAF 0.17 binds a null argument tuple for a function actor spawned with no
// arguments (UBSan).
class echo_actor : public caf::event_based_actor {
public:
  explicit echo_actor(caf::actor_config& cfg) : caf::event_based_actor(cfg) {}
  caf::behavior make_behavior() override {
    return {[](int x) { return x; }, [](bytes& b) { return std::move(b); }};
  }
};

caf::actor_system_config& configured(caf::actor_system_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads",
          std::max<size_t>(2, std::thread::hardware_concurrency()));
  return cfg;
}

} // namespace

struct caf_local_floor::impl {
  impl() : sys{configured(cfg)}, echo{sys.spawn<echo_actor>()}, self{sys} {}
  ~impl() { self->send_exit(echo, caf::exit_reason::user_shutdown); }

  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::actor echo;
  caf::scoped_actor self;
};

caf_local_floor::caf_local_floor() : impl_{std::make_unique<impl>()} {}

caf_local_floor::~caf_local_floor() = default;

std::vector<double> caf_local_floor::round_trips(size_t n,
                                                 std::chrono::milliseconds cap) {
  auto& self = impl_->self;
  std::vector<double> us;
  us.reserve(n);
  auto t0 = bench_clock::now();
  for (size_t i = 0; i < n && !past_cap(i, t0, cap); ++i) {
    auto s = bench_clock::now();
    int got = -1;
    self->request(impl_->echo, caf::infinite, static_cast<int>(i))
        .receive([&](int x) { got = x; }, [&](caf::error&) {});
    us.push_back(seconds_since(s) * 1e6);
    check(got == static_cast<int>(i), "caf raw request");
  }
  return us;
}

double caf_local_floor::pipelined(size_t n, std::chrono::milliseconds cap,
                                  size_t payload_bytes) {
  auto& self = impl_->self;
  bytes payload(payload_bytes, 'p');
  auto t0 = bench_clock::now();
  size_t sent = 0;
  for (; sent < n && !past_cap(sent, t0, cap); ++sent) {
    if (payload_bytes == 0)
      self->send(impl_->echo, static_cast<int>(sent));
    else
      self->send(impl_->echo, payload);
  }
  size_t received = 0;
  size_t wrong = 0;
  self->receive_for(received, sent)(
      [](int) {}, [&](const bytes& b) { wrong += b.size() != payload_bytes; });
  check(wrong == 0, "caf raw pipelined");
  return static_cast<double>(sent) / seconds_since(t0);
}

latency_stats caf_local_floor::payload_latency(size_t n_bytes,
                                               const latency_options& opts) {
  auto& self = impl_->self;
  bytes payload(n_bytes, 'p');
  return measure_latency(
      [&] {
        size_t got = 0;
        self->request(impl_->echo, caf::infinite, payload)
            .receive([&](const bytes& b) { got = b.size(); }, [&](caf::error&) {});
        check(got == n_bytes, "caf raw payload request");
      },
      opts);
}

double caf_local_floor::spawn_rate(size_t n, std::chrono::milliseconds cap) {
  auto& self = impl_->self;
  std::vector<caf::actor> actors;
  actors.reserve(n);
  auto t0 = bench_clock::now();
  for (size_t i = 0; i < n && !past_cap(i, t0, cap); ++i) {
    actors.push_back(impl_->sys.spawn<echo_actor>());
    int got = -1;
    self->request(actors.back(), caf::infinite, static_cast<int>(i))
        .receive([&](int x) { got = x; }, [&](caf::error&) {});
    check(got == static_cast<int>(i), "caf raw spawn");
  }
  auto rate = static_cast<double>(actors.size()) / seconds_since(t0);
  for (auto& a : actors)
    self->send_exit(a, caf::exit_reason::user_shutdown);
  return rate;
}

} // namespace swarm::tools
