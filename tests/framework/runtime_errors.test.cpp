#include <doctest/doctest.h>

#include <chrono>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

swarm::runtime_config two_cpus() {
  swarm::runtime_config cfg;
  cfg.cpus = 2;
  return cfg;
}

struct plain : swarm::actor {
  int one() { return 1; }
};

} // namespace

TEST_CASE("an exception in a task comes back as an application error with its message") {
  swarm::application app;
  auto bad = app.function("bad", [](int x) -> int {
    throw std::invalid_argument("x was " + std::to_string(x));
  });
  auto good = app.function("good", [](int x) { return x; });
  swarm::runtime rt{app, two_cpus()};
  auto r = rt.submit(bad, 7).get(5s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::application_error);
  CHECK(r.err().message.find("x was 7") != std::string::npos);
  CHECK(r.err().message.find("bad") != std::string::npos);
  CHECK_THROWS_AS(r.value(), swarm::failure);
  CHECK(rt.submit(good, 3).get(5s).value() == 3);
}

TEST_CASE("an error in an argument future propagates to the task that needs it") {
  swarm::application app;
  auto bad =
      app.function("bad", [](int) -> int { throw std::runtime_error("root cause"); });
  auto inc = app.function("inc", [](int x) { return x + 1; });
  swarm::runtime rt{app, two_cpus()};
  auto r = rt.submit(inc, rt.submit(inc, rt.submit(bad, 1))).get(5s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::dependency_failed);
  CHECK(r.err().message.find("root cause") != std::string::npos);
}

TEST_CASE("calling a function by a name nobody registered is a clear error") {
  swarm::application app;
  app.function("add", [](int a, int b) { return a + b; });
  swarm::runtime rt{app, two_cpus()};
  auto r = rt.call<int>("ad", 1, 2).get(1s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::unregistered);
  CHECK(r.err().message.find("'ad'") != std::string::npos);
  CHECK(r.err().message.find("add") != std::string::npos);
  CHECK(rt.call<int>("add", 1, 2).get(5s).value() == 3);
}

TEST_CASE("calling a function with arguments of the wrong type is a clear error") {
  swarm::application app;
  app.function("add", [](int a, int b) { return a + b; });
  swarm::runtime rt{app, two_cpus()};
  auto r = rt.call<int>("add", 1, "two").get(1s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::type_mismatch);
  CHECK(r.err().message.find("argument 2") != std::string::npos);
  CHECK(r.err().message.find("expected int") != std::string::npos);
  auto count = rt.call<int>("add", 1).get(1s);
  REQUIRE_FALSE(count);
  CHECK(count.err().message.find("takes 2 argument(s), got 1") != std::string::npos);
  auto result_type = rt.call<std::string>("add", 1, 2).get(1s);
  REQUIRE_FALSE(result_type);
  CHECK(result_type.err().code == swarm::errc::type_mismatch);
}

TEST_CASE("looking a function up with the wrong signature names the registered one") {
  swarm::application app;
  app.function("add", [](int a, int b) { return a + b; });
  auto f = app.find_function<int(std::string)>("add");
  REQUIRE_FALSE(f);
  CHECK(f.err().message.find("int(int, int)") != std::string::npos);
  CHECK(app.find_function<int(int, int)>("add"));
  auto t = app.find_actor_type<plain>("nope");
  REQUIRE_FALSE(t);
  CHECK(t.err().code == swarm::errc::unregistered);
}

TEST_CASE("registering a name twice is rejected") {
  swarm::application app;
  app.function("f", [](int x) { return x; });
  CHECK_THROWS_AS(app.function("f", [](int x) { return x; }), swarm::failure);
  app.actor_type<plain>("p");
  CHECK_THROWS_AS(app.actor_type<plain>("p"), swarm::failure);
  CHECK_THROWS_AS(app.function("", [](int x) { return x; }), swarm::failure);
}

TEST_CASE("a resource demand the node can never meet is reported infeasible") {
  swarm::application app;
  auto f = app.function("f", [](int x) { return x; });
  swarm::runtime rt{app, two_cpus()};
  swarm::task_options o;
  o.resources = swarm::resource_set::cpus(3);
  auto r = rt.submit(o, f, 1).get(1s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::infeasible);
  CHECK(r.err().message.find("CPU: 3") != std::string::npos);
  o.resources = swarm::resource_set{}.set("TPU", 1);
  CHECK(rt.submit(o, f, 1).get(1s).err().code == swarm::errc::infeasible);
}

TEST_CASE("an invalid runtime configuration names the field and the reason") {
  swarm::application app;
  swarm::runtime_config cfg;
  cfg.cpus = -1;
  try {
    swarm::runtime rt{app, cfg};
    FAIL("runtime should not start");
  } catch (const swarm::failure& e) {
    CHECK(std::string{e.what()}.find("runtime_config.cpus") != std::string::npos);
  }
  swarm::runtime_config zero;
  zero.object_store_bytes = 0;
  CHECK_THROWS_AS(swarm::runtime(app, zero), swarm::failure);
}

TEST_CASE("spawning an actor type that was not registered is a clear error") {
  swarm::application app;
  swarm::application other;
  auto t = other.actor_type<plain>("plain");
  swarm::runtime rt{app, two_cpus()};
  auto a = rt.spawn(t);
  CHECK(a.dead());
  CHECK(a.death_reason().find("actor type 'plain' is not registered") !=
        std::string::npos);
}

TEST_CASE("reading an empty object_ref is a clear error") {
  swarm::object_ref<int> empty;
  auto r = empty.get(1ms);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::invalid_argument);
}

TEST_CASE("empty function and actor handles are clear errors, not crashes") {
  swarm::application app;
  swarm::runtime rt{app, two_cpus()};
  swarm::task_fn<int(int)> none;
  CHECK_THROWS_WITH_AS(rt.submit(none, 1), doctest::Contains("empty task_fn"),
                       swarm::failure);
  swarm::actor_handle<plain> nobody;
  CHECK(nobody.dead());
  CHECK_THROWS_WITH_AS(nobody.call(&plain::one), doctest::Contains("empty actor_handle"),
                       swarm::failure);
  swarm::actor_group no_group;
  CHECK_FALSE(no_group.alive());
}
