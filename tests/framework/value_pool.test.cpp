#include <doctest/doctest.h>

#include "framework/detail/value_pool.hpp"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using swarm::detail::box_for_store;
using swarm::detail::value_pool;

namespace {

constexpr size_t mib = size_t{1} << 20;

// A value that counts its instances, to see that each is deleted once.
struct tracked {
  static inline std::atomic<int> alive{0};
  std::vector<char> bytes;
  tracked() { ++alive; }
  explicit tracked(size_t n, char c) : bytes(n, c) { ++alive; }
  tracked(const tracked& o) : bytes(o.bytes) { ++alive; }
  tracked& operator=(const tracked&) = default;
  ~tracked() { --alive; }
};

template <class Inspector> bool inspect(Inspector& f, tracked& x) {
  return f(x.bytes);
}

const char* data_of(const swarm::detail::boxed_value& v) {
  return static_cast<const std::vector<char>*>(v.ptr.get())->data();
}

} // namespace

TEST_CASE(
    "a copy put after a freed value of its type and size lands in that value's memory") {
  auto pool = std::make_shared<value_pool>(16 * mib, mib);
  std::vector<char> first(4 * mib, 'a');
  auto a = box_for_store(pool.get(), first);
  const char* memory = data_of(a);
  a = {};
  CHECK(pool->stats().values == 1);
  CHECK(pool->stats().bytes >= 4 * mib);

  std::vector<char> second(4 * mib, 'b');
  second.back() = 'z';
  auto b = box_for_store(pool.get(), second);
  CHECK(data_of(b) == memory);
  CHECK(*static_cast<const std::vector<char>*>(b.ptr.get()) == second);
  CHECK(pool->stats().values == 0);
  CHECK(pool->stats().reused == 1);
}

TEST_CASE("a pool takes no value of another type, much bigger, or too small to keep") {
  auto pool = std::make_shared<value_pool>(64 * mib, mib);
  box_for_store(pool.get(), std::vector<char>(16 * mib, 'x')); // freed at once
  REQUIRE(pool->stats().values == 1);
  auto other_type = box_for_store(pool.get(), std::string(4 * mib, 's'));
  auto smaller = box_for_store(pool.get(), std::vector<char>(4 * mib, 'y'));
  CHECK(pool->stats().reused == 0);
  CHECK(pool->stats().values == 1);
  box_for_store(pool.get(), std::vector<char>(1000, 'z'));
  CHECK(pool->stats().values == 1); // under min_bytes: left to the allocator
}

TEST_CASE("a moved value is stored without a copy and its memory comes back freed") {
  auto pool = std::make_shared<value_pool>(16 * mib, mib);
  std::vector<char> v(2 * mib, 'm');
  const char* memory = v.data();
  auto a = box_for_store(pool.get(), std::move(v));
  CHECK(data_of(a) == memory);
  a = {};
  CHECK(pool->stats().values == 1);
}

TEST_CASE("a full pool lets its longest-kept values go and sheds on demand") {
  auto pool = std::make_shared<value_pool>(10 * mib, mib);
  auto a = box_for_store(pool.get(), std::vector<char>(4 * mib));
  auto b = box_for_store(pool.get(), std::vector<char>(4 * mib));
  auto c = box_for_store(pool.get(), std::vector<char>(4 * mib));
  const char* kept_c = data_of(c);
  a = {};
  b = {};
  c = {};
  CHECK(pool->stats().values == 2); // a went for c
  CHECK(pool->shed(1) >= 4 * mib);
  CHECK(pool->stats().values == 1);
  std::vector<char> again(4 * mib, 'q');
  CHECK(data_of(box_for_store(pool.get(), again)) == kept_c); // and back once freed
  CHECK(pool->shed(100 * mib) >= 4 * mib);
  CHECK(pool->stats().values == 0);
  CHECK(pool->stats().bytes == 0);
}

TEST_CASE("a value freed after its pool is gone is deleted, and a pool deletes what it "
          "kept") {
  auto pool = std::make_shared<value_pool>(16 * mib, mib);
  box_for_store(pool.get(), tracked{2 * mib, 'k'}); // kept
  auto a = box_for_store(pool.get(), tracked{3 * mib, 'p'});
  CHECK(tracked::alive == 2);
  pool.reset();
  CHECK(tracked::alive == 1);
  a = {};
  CHECK(tracked::alive == 0);
}

TEST_CASE("values of a pool taken and freed from many threads are each deleted once") {
  auto pool = std::make_shared<value_pool>(8 * mib, mib);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      const tracked mine{mib + static_cast<size_t>(t) * 1024, static_cast<char>('a' + t)};
      std::vector<swarm::detail::boxed_value> held;
      for (int i = 0; i < 200; ++i) {
        held.push_back(box_for_store(pool.get(), mine));
        auto& v = *static_cast<const tracked*>(held.back().ptr.get());
        REQUIRE(v.bytes == mine.bytes);
        if (held.size() > 3) held.erase(held.begin()); // another thread may take it
      }
    });
  for (auto& t : threads)
    t.join();
  CHECK(pool->stats().reused > 0);
  CHECK(pool->stats().bytes <= 8 * mib);
  pool.reset();
  CHECK(tracked::alive == 0);
}

TEST_CASE("without a pool a value is boxed as it is") {
  std::vector<char> v(2 * mib, 'n');
  auto a = box_for_store(nullptr, v);
  CHECK(*static_cast<const std::vector<char>*>(a.ptr.get()) == v);
}
