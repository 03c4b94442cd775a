#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "framework/dynamic.hpp"
#include "framework/swarm.hpp"

using namespace std::chrono_literals;
using swarm::detail::boxed_value;

namespace {

class counter : public swarm::actor {
public:
  counter() = default;
  explicit counter(long start) : n_(start) {}
  long add(long by) { return n_ += by; }

private:
  long n_ = 0;
};

swarm::runtime_config two_cpus() {
  swarm::runtime_config cfg;
  cfg.cpus = 2;
  return cfg;
}

template <class T> T value_of(const swarm::dynamic_ref& r) {
  auto v = r.get(10s);
  REQUIRE_MESSAGE(v, v.err().message);
  return *static_cast<const T*>(v->get());
}

} // namespace

TEST_CASE("dynamic calls run a function by name with boxed values and futures") {
  swarm::application app;
  app.function("concat", [](std::string a, std::string b) { return a + b; });
  swarm::runtime rt{app, two_cpus()};
  swarm::dynamic_calls calls{rt};
  auto f = calls.function("concat");
  REQUIRE(f);
  auto first = calls.put(boxed_value::make(std::string{"dyn"}));
  CHECK(first.type().name == "std::string");
  auto r =
      calls.submit(**f, {}, {{{}, first}, {boxed_value::make(std::string{"amic"}), {}}});
  REQUIRE(r);
  CHECK(value_of<std::string>(*r) == "dynamic");
  // A typed ref made in C++ passes too.
  auto typed = rt.put(std::string{"c++ "});
  auto again = calls.submit(**f, {}, {{{}, swarm::dynamic_ref::of(typed)}, {{}, *r}});
  REQUIRE(again);
  CHECK(value_of<std::string>(*again) == "c++ dynamic");
  CHECK(calls.wait({*r, *again}, 2, 10s) == std::vector<bool>{true, true});
  CHECK(calls.function("missing").err().code == swarm::errc::unregistered);
}

TEST_CASE(
    "dynamic calls refuse a value or a future of the wrong type naming the argument") {
  swarm::application app;
  app.function("twice", [](long x) { return 2 * x; });
  swarm::runtime rt{app, two_cpus()};
  swarm::dynamic_calls calls{rt};
  auto& f = **calls.function("twice");
  auto wrong_value = calls.submit(f, {}, {{boxed_value::make(std::string{"x"}), {}}});
  REQUIRE_FALSE(wrong_value);
  CHECK(wrong_value.err().code == swarm::errc::type_mismatch);
  CHECK(wrong_value.err().message.find("argument 1: expected long") != std::string::npos);
  auto wrong_future = calls.submit(f, {}, {{{}, calls.put(boxed_value::make(1.5))}});
  REQUIRE_FALSE(wrong_future);
  CHECK(wrong_future.err().message.find("got a future of double") != std::string::npos);
  auto too_many =
      calls.submit(f, {}, {{boxed_value::make(1L), {}}, {boxed_value::make(2L), {}}});
  REQUIRE_FALSE(too_many);
  CHECK(too_many.err().message.find("takes 1 argument(s), got 2") != std::string::npos);
}

TEST_CASE(
    "dynamic calls spawn an actor with the constructor its arguments fit and call its "
    "methods") {
  swarm::application app;
  app.actor_type<counter>("counter").constructor<>().constructor<long>().method(
      "add", &counter::add);
  swarm::runtime rt{app, two_cpus()};
  swarm::dynamic_calls calls{rt};
  auto& type = **calls.actor_type("counter");
  auto a = calls.spawn(type, {}, {boxed_value::make(40L)});
  REQUIRE(a);
  auto* add = type.find_method("add");
  REQUIRE(add != nullptr);
  auto r = calls.call(*a, *add, {{boxed_value::make(2L), {}}});
  REQUIRE(r);
  CHECK(value_of<long>(*r) == 42);
  auto none = calls.spawn(type, {}, {boxed_value::make(std::string{"x"})});
  REQUIRE_FALSE(none);
  CHECK(none.err().message.find("has no constructor taking (std::string)") !=
        std::string::npos);
  calls.kill(*a, false);
  auto dead = calls.call(*a, *add, {{boxed_value::make(1L), {}}});
  REQUIRE(dead);
  auto v = dead->get(10s);
  REQUIRE_FALSE(v);
  CHECK(v.err().code == swarm::errc::actor_died);
  CHECK(calls.actor_type("nope").err().code == swarm::errc::unregistered);
}
