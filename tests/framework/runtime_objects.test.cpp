#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <thread>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

swarm::runtime_config small_store(size_t bytes) {
  swarm::runtime_config cfg;
  cfg.cpus = 2;
  cfg.object_store_bytes = bytes;
  cfg.inline_threshold = 1024;
  cfg.spill = false; // a full store refuses (spilling: runtime_spilling.test.cpp)
  return cfg;
}

struct point {
  double x = 0;
  double y = 0;
  std::string label;
};

template <class Inspector> bool inspect(Inspector& f, point& p) {
  return f(p.x, p.y, p.label);
}

} // namespace

TEST_CASE("put and get round trip a value of a user type") {
  swarm::application app;
  auto norm = app.function("norm", [](const point& p) { return p.x * p.x + p.y * p.y; });
  swarm::runtime rt{app, small_store(1 << 20)};
  auto ref = rt.put(point{3, 4, "p"});
  auto back = ref.get(1s).value();
  CHECK(back.label == "p");
  CHECK(rt.submit(norm, ref).get(5s).value() == doctest::Approx(25));
}

TEST_CASE("get_shared returns the stored object itself, without a copy") {
  swarm::application app;
  swarm::runtime rt{app, small_store(64 << 20)};
  std::vector<char> data(32 << 20, 'a');
  auto* original = data.data();
  auto ref = rt.put(std::move(data));
  auto a = ref.get_shared(1s).value();
  auto b = ref.get_shared(1s).value();
  CHECK(a->data() == original);
  CHECK(a.get() == b.get());
}

TEST_CASE(
    "a put of a kept value reuses the memory of a freed object of its type, counted") {
  swarm::application app;
  auto cfg = small_store(64 << 20);
  cfg.object_pool_bytes = 16 << 20;
  swarm::runtime rt{app, cfg};
  std::vector<float> first(2 << 20, 1.5f);
  const void* memory = nullptr;
  {
    auto ref = rt.put(first);
    memory = ref.get_shared(1s).value()->data();
  }
  auto s = rt.stats();
  CHECK(s.store_bytes == 0);
  CHECK(s.store_pooled_bytes >= first.size() * sizeof(float));
  std::vector<float> second(2 << 20, 2.5f);
  second[12345] = -1.0f;
  auto ref = rt.put(second);
  auto got = ref.get_shared(1s).value();
  CHECK(static_cast<const void*>(got->data()) == memory);
  CHECK(*got == second);
  s = rt.stats();
  CHECK(s.store_pool_reuses == 1);
  CHECK(s.store_pooled_bytes == 0);
  CHECK(s.store_bytes >= second.size() * sizeof(float));
}

TEST_CASE("small objects stay inline and large ones are stored once") {
  swarm::application app;
  swarm::runtime rt{app, small_store(1 << 20)};
  auto small = rt.put(std::vector<char>(100));
  CHECK(rt.stats().store_objects == 0);
  auto large = rt.put(std::vector<char>(4096));
  auto copy = large;
  auto s = rt.stats();
  CHECK(s.store_objects == 1);
  CHECK(s.store_bytes >= 4096);
  CHECK(s.store_bytes < 8192);
}

TEST_CASE("an object is freed from the store when its last reference goes") {
  swarm::application app;
  auto make = app.function(
      "make", [](int n) { return std::vector<char>(static_cast<size_t>(n)); });
  swarm::runtime rt{app, small_store(1 << 20)};
  {
    auto a = rt.put(std::vector<char>(10000));
    auto b = rt.submit(make, 20000);
    REQUIRE(b.get(5s));
    CHECK(rt.stats().store_objects == 2);
  }
  CHECK(rt.stats().store_objects == 0);
  CHECK(rt.stats().store_bytes == 0);
}

TEST_CASE("reading an object after it was freed is a clear error") {
  swarm::application app;
  auto len = app.function("len", [](const std::vector<char>& v) { return v.size(); });
  swarm::runtime rt{app, small_store(1 << 20)};
  auto a = rt.put(std::vector<char>(10000));
  rt.free(a);
  CHECK(rt.stats().store_objects == 0);
  auto r = a.get(1s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::object_freed);
  CHECK(r.err().message.find(a.id().to_string()) != std::string::npos);
  auto dep = rt.submit(len, a).get(5s);
  REQUIRE_FALSE(dep);
  CHECK(dep.err().code == swarm::errc::dependency_failed);
  CHECK(dep.err().message.find("freed") != std::string::npos);
}

TEST_CASE("an object larger than the store's room is refused with a clear error") {
  swarm::application app;
  auto make = app.function(
      "make", [](int n) { return std::vector<char>(static_cast<size_t>(n)); });
  swarm::runtime rt{app, small_store(64 * 1024)};
  auto keep = rt.put(std::vector<char>(40 * 1024));
  try {
    rt.put(std::vector<char>(40 * 1024));
    FAIL("put should have thrown");
  } catch (const swarm::failure& e) {
    CHECK(e.err().code == swarm::errc::store_full);
    CHECK(std::string{e.what()}.find("does not fit") != std::string::npos);
  }
  auto r = rt.submit(make, 40 * 1024).get(5s);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::store_full);
  CHECK(rt.stats().store_rejected == 2);
  CHECK(keep.get(1s)->size() == 40 * 1024);
}

TEST_CASE("get with a timeout reports a timeout on an object not yet made") {
  swarm::application app;
  auto gate = std::make_shared<std::promise<void>>();
  auto opened = gate->get_future().share();
  auto slow = app.function("slow", [opened](int x) {
    opened.wait_for(10s);
    return x;
  });
  swarm::runtime rt{app, small_store(1 << 20)};
  auto f = rt.submit(slow, 1);
  auto r = f.get(20ms);
  REQUIRE_FALSE(r);
  CHECK(r.err().code == swarm::errc::timeout);
  gate->set_value();
  CHECK(f.get(5s).value() == 1);
}

TEST_CASE("work still queued when the runtime stops fails with runtime_stopped") {
  swarm::application app;
  auto gate = std::make_shared<std::promise<void>>();
  auto opened = gate->get_future().share();
  auto slow = app.function("slow", [opened](int x) {
    opened.wait_for(200ms);
    return x;
  });
  std::vector<swarm::object_ref<int>> refs;
  {
    swarm::runtime_config cfg = small_store(1 << 20);
    cfg.cpus = 1;
    swarm::runtime rt{app, cfg};
    for (int i = 0; i < 4; ++i)
      refs.push_back(rt.submit(slow, i));
  }
  size_t stopped = 0;
  for (auto& r : refs) {
    auto v = r.get(1s);
    if (!v) {
      CHECK(v.err().code == swarm::errc::runtime_stopped);
      ++stopped;
    }
  }
  CHECK(stopped >= 1);
}

TEST_CASE("the key-value store keeps, replaces and erases values, and names a bad key") {
  swarm::application app;
  swarm::runtime_config cfg;
  cfg.cpus = 1;
  cfg.gcs_shards = 3;
  swarm::runtime rt{app, cfg};
  CHECK_FALSE(rt.kv_get("model/version").value());
  REQUIRE(rt.kv_put("model/version", {1, 2}));
  REQUIRE(rt.kv_put("model/path", {7}));
  CHECK(rt.kv_get("model/version").value() == std::vector<uint8_t>{1, 2});
  REQUIRE(rt.kv_put("model/version", {3}));
  CHECK(rt.kv_get("model/version").value() == std::vector<uint8_t>{3});
  REQUIRE(rt.kv_erase("model/version"));
  REQUIRE(rt.kv_erase("model/version")); // absent: nothing to do
  CHECK_FALSE(rt.kv_get("model/version").value());
  CHECK(rt.kv_get("model/path").value() == std::vector<uint8_t>{7});
  auto bad = rt.kv_put("", {1});
  REQUIRE_FALSE(bad);
  CHECK(bad.err().code == swarm::errc::invalid_argument);
  CHECK(bad.err().message.find("1-1024 bytes") != std::string::npos);
  CHECK_FALSE(rt.kv_get(std::string(1025, 'k')));
}

TEST_CASE("a durable object is read back by name, typed, until it is freed") {
  swarm::application app;
  swarm::runtime rt{app};
  auto ref = rt.put_durable("table", std::vector<std::string>{"a", "b"});
  REQUIRE(ref);
  CHECK(ref->get().value() == std::vector<std::string>{"a", "b"});
  CHECK(rt.get_durable<std::vector<std::string>>("table").value() ==
        std::vector<std::string>{"a", "b"});
  auto wrong = rt.get_durable<int>("table");
  REQUIRE_FALSE(wrong);
  CHECK(wrong.err().code == swarm::errc::type_mismatch);
  CHECK(wrong.err().message.find("durable object 'table' holds a") != std::string::npos);
  REQUIRE(rt.free_durable("table"));
  auto gone = rt.get_durable<std::vector<std::string>>("table");
  REQUIRE_FALSE(gone);
  CHECK(gone.err().code == swarm::errc::object_freed);
  CHECK(ref->get().value().size() == 2); // the reference keeps its own copy
}
