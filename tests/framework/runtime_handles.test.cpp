// Actor handles as values on one node: arguments, results, members of user types, and
// their encoding, read back by the node that wrote it.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

struct stage : swarm::actor {
  explicit stage(std::string label = "") : name(std::move(label)) {}
  void link(swarm::actor_handle<stage> n) { next = std::move(n); }
  std::string pass(std::string path) {
    path += "/" + name;
    return next.valid() ? next.call(&stage::pass, path).get(5s).value() : path;
  }
  std::string name;
  swarm::actor_handle<stage> next;
};

struct addressed {
  int tag = 0;
  swarm::actor_handle<stage> to;
};

template <class Inspector> bool inspect(Inspector& f, addressed& x) {
  return f(x.tag, x.to);
}

struct fixture {
  swarm::application app;
  swarm::actor_class<stage> stage_t =
      app.actor_type<stage>("stage").constructor<std::string>();
  swarm::task_fn<std::string(swarm::actor_handle<stage>, std::string)> send =
      app.function("send", [](swarm::actor_handle<stage> s, std::string path) {
        return s.call(&stage::pass, path).get(5s).value();
      });
  swarm::task_fn<swarm::actor_handle<stage>(std::string)> make =
      app.function("make", [](swarm::context& ctx, std::string name) {
        return ctx.spawn(ctx.app().find_actor_type<stage>("stage").value(), name);
      });
  swarm::task_fn<std::string(const addressed&)> deliver =
      app.function("deliver", [](const addressed& a) {
        return a.to.call(&stage::pass, std::to_string(a.tag)).get(5s).value();
      });
};

} // namespace

TEST_CASE("a pipeline of actors on one node: each stage is handed its successor") {
  fixture f;
  swarm::runtime rt{f.app};
  // Each stage waits for the next: on threads of their own, not the shared ones.
  swarm::actor_options own;
  own.dedicated_thread = true;
  auto a = rt.spawn(own, f.stage_t, std::string{"a"});
  auto b = rt.spawn(own, f.stage_t, std::string{"b"});
  auto c = rt.spawn(own, f.stage_t, std::string{"c"});
  a.call(&stage::link, b);
  b.call(&stage::link, c);
  CHECK(a.call(&stage::pass, std::string{"in"}).get(5s).value() == "in/a/b/c");
  CHECK(rt.submit(f.send, b, std::string{"task"}).get(5s).value() == "task/b/c");
}

TEST_CASE("a task returns the handle of an actor it made, and a handle travels in a user "
          "type") {
  fixture f;
  swarm::runtime rt{f.app};
  auto made = rt.submit(f.make, std::string{"m"}).get(5s).value();
  CHECK(made.call(&stage::pass, std::string{"x"}).get(5s).value() == "x/m");
  CHECK(rt.submit(f.deliver, addressed{7, made}).get(5s).value() == "7/m");
  auto stored = rt.put(addressed{8, made});
  CHECK(stored.get(5s).value().to.call(&stage::pass, std::string{"y"}).get(5s).value() ==
        "y/m");
}

TEST_CASE("an encoded handle is read back by its node as the same actor, and nowhere "
          "else") {
  fixture f;
  swarm::runtime rt{f.app};
  auto a = rt.spawn(f.stage_t, std::string{"a"});
  auto bytes = swarm::encode(addressed{1, a});
  addressed back;
  std::string why;
  REQUIRE(swarm::decode(bytes.data(), bytes.size(), back, why, a.node()));
  CHECK(back.to.record().get() == a.record().get());
  CHECK(back.to.call(&stage::pass, std::string{"z"}).get(5s).value() == "z/a");

  addressed nowhere;
  CHECK_FALSE(swarm::decode(bytes.data(), bytes.size(), nowhere, why));
  CHECK(why.find("read outside a node") != std::string::npos);

  swarm::actor_handle<stage> empty;
  auto none = swarm::encode(empty);
  swarm::actor_handle<stage> still_empty = a;
  REQUIRE(swarm::decode(none.data(), none.size(), still_empty, why, a.node()));
  CHECK_FALSE(still_empty.valid());

  rt.kill(a);
  swarm::actor_handle<stage> dead;
  REQUIRE(swarm::decode(bytes.data() + sizeof(int), bytes.size() - sizeof(int), dead, why,
                        a.node()));
  CHECK(dead.dead());
  CHECK(dead.death_reason().find("killed") != std::string::npos);
}
