// Object refs as values on one node: arguments, members of results and of actors' state.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

using refs = std::vector<swarm::object_ref<int>>;

int sum_of(const refs& rs) {
  int sum = 0;
  for (auto& r : rs)
    sum += r.get(5s).value();
  return sum;
}

struct keeper : swarm::actor {
  void keep(refs rs) { kept = std::move(rs); }
  int sum() const { return sum_of(kept); }
  refs kept;
};

struct fixture {
  swarm::application app;
  swarm::actor_class<keeper> keeper_t = app.actor_type<keeper>("keeper");
  swarm::task_fn<int(const refs&)> sum = app.function("sum", sum_of);
  swarm::task_fn<refs(int)> make = app.function("make", [](swarm::context& ctx, int n) {
    refs out;
    for (int i = 1; i <= n; ++i)
      out.push_back(ctx.put(i * 10));
    return out;
  });
};

} // namespace

TEST_CASE("refs inside values reach tasks and actors, an actor keeps refs after the "
          "driver dropped its own, and a task returns refs it made") {
  fixture f;
  swarm::runtime rt{f.app};
  swarm::actor_options own;
  own.dedicated_thread = true; // `sum` waits for the objects
  auto k = rt.spawn(own, f.keeper_t);
  {
    refs mine{rt.put(1), rt.put(2)};
    CHECK(rt.submit(f.sum, mine).get(5s).value() == 3);
    REQUIRE(k.call(&keeper::keep, mine).get(5s));
  }
  CHECK(k.call(&keeper::sum).get(5s).value() == 3);
  auto made = rt.submit(f.make, 3).get(5s).value();
  REQUIRE(made.size() == 3);
  CHECK(made[2].get(5s).value() == 30);
  CHECK(rt.submit(f.sum, made).get(5s).value() == 60);
}

TEST_CASE("a durable value holding refs is refused, saying how many it holds") {
  fixture f;
  swarm::runtime rt{f.app};
  auto d = rt.put_durable("refs", refs{rt.put(1)});
  REQUIRE_FALSE(d);
  CHECK(d.err().code == swarm::errc::invalid_argument);
  CHECK(d.err().message.find("1 object ref(s)") != std::string::npos);
}

TEST_CASE("a ref decoded outside a node fails with the reason, and the empty ref "
          "round-trips") {
  fixture f;
  swarm::runtime rt{f.app};
  auto bytes = swarm::encode(refs{rt.put(1), {}});
  refs back;
  std::string why;
  CHECK_FALSE(swarm::decode(bytes.data(), bytes.size(), back, why));
  CHECK(why.find("outside a node") != std::string::npos);
  auto empty = swarm::encode(refs{{}});
  REQUIRE(swarm::decode(empty.data(), empty.size(), back, why));
  REQUIRE(back.size() == 1);
  CHECK_FALSE(back[0].valid());
}
