// The borrower protocol's table, driven directly: what it sends, keeps and resolves.

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "actors/ownership/borrow_table.hpp"
#include "framework/detail/wire_convert.hpp"

using namespace swarm::actors;
namespace detail = swarm::detail;
namespace wire_msg = swarm::wire_msg;
using swarm::errc;
using state = wire_msg::object_borrowed::state_type;

namespace {

// Owner ids of objects owned by the nodes of {"head", "worker-1", "worker-2"}.
uint64_t owned_by(uint64_t index) {
  return (index + 1) << owner_index_shift;
}

// A table of node `node`, recording what it asks of its node.
struct fixture {
  std::vector<std::pair<std::string, wire_msg::message>> sent;
  std::vector<std::vector<object_key>> released;
  std::vector<object_key> notified;
  std::map<object_key, detail::slot_ptr> owned;
  std::vector<std::function<void()>> deferred;
  borrow_table table;

  explicit fixture(const std::string& node) : table(make(node)) {}

  borrow_config make(const std::string& node) {
    borrow_config c;
    c.node = node;
    c.nodes = {"head", "worker-1", "worker-2"};
    c.send = [this](const std::string& to, wire_msg::message m) {
      sent.emplace_back(to, std::move(m));
    };
    c.find = [this](const object_key& k) {
      auto i = owned.find(k);
      return i == owned.end() ? nullptr : i->second;
    };
    c.export_value = [](const detail::slot_ptr& s, std::vector<object_key>& held) {
      held.push_back(detail::key_of(s->id()));
      return wire_msg::arg{
          wire_msg::value{detail::type_of<int>().name, detail::encode(*s->read())}};
    };
    c.release = [this](std::vector<object_key> keys) { released.push_back(keys); };
    c.notify_done = [this](const object_key& k) { notified.push_back(k); };
    c.after_borrows = [this](std::function<void()> f) { deferred.push_back(f); };
    c.borrows_made = [] { return uint64_t{0}; };
    return c;
  }

  template <class T> const T& last_to(const std::string& node) {
    REQUIRE(!sent.empty());
    CHECK(sent.back().first == node);
    auto* m = std::get_if<T>(&sent.back().second);
    REQUIRE(m != nullptr);
    return *m;
  }
};

detail::slot_ptr slot_of(uint64_t owner, uint64_t seq) {
  return std::make_shared<detail::object_slot>(swarm::object_id{owner, seq});
}

} // namespace

TEST_CASE("the lender keeps an object while any node borrows it, answers with its value, "
          "and lets go of it and what it held once the last borrow is given back") {
  fixture f{"head"};
  auto obj = slot_of(owned_by(0), 1);
  obj->set_value(detail::boxed_value::make(41));
  auto k = detail::key_of(obj->id());
  f.owned[k] = obj;
  wire_msg::object_ref_id id{k.first, k.second};
  f.table.on_borrow("worker-1", {id});
  auto& answer = f.last_to<wire_msg::object_borrowed>("worker-1");
  CHECK(answer.ack);
  CHECK(answer.state == state::ready);
  f.table.on_borrow("worker-2", {id});
  f.table.on_borrow("worker-2", {id});
  f.owned.clear();
  std::weak_ptr<detail::object_slot> weak = obj;
  obj.reset();
  CHECK_FALSE(weak.expired());
  CHECK(f.table.lent() == 1);
  CHECK(f.table.borrows_of(k, "worker-2") == 2);
  f.table.on_unborrow("worker-2", {id});
  f.table.on_unborrow("worker-1", {id});
  CHECK(f.table.lent() == 1);
  CHECK(f.released.empty());
  f.table.on_unborrow("worker-2", {id});
  CHECK(f.table.lent() == 0);
  CHECK(weak.expired());
  REQUIRE(f.released.size() == 1);
  CHECK(f.released[0] == std::vector<object_key>{k});
}

TEST_CASE("a borrow of an object not made yet is answered pending, then again with the "
          "value once the slot is done, one of an object gone fails naming both nodes") {
  fixture f{"head"};
  auto obj = slot_of(owned_by(0), 2);
  auto k = detail::key_of(obj->id());
  f.owned[k] = obj;
  f.table.on_borrow("worker-1", {{k.first, k.second}});
  CHECK(f.last_to<wire_msg::object_borrowed>("worker-1").state == state::pending);
  obj->set_value(detail::boxed_value::make(5));
  REQUIRE(f.notified == std::vector<object_key>{k});
  f.table.on_done(k);
  auto& later = f.last_to<wire_msg::object_borrowed>("worker-1");
  CHECK_FALSE(later.ack);
  CHECK(later.state == state::ready);
  f.table.on_borrow("worker-2", {{k.first, k.second + 1}});
  auto& gone = f.last_to<wire_msg::object_borrowed>("worker-2");
  CHECK(gone.state == state::failed);
  CHECK(gone.error.code == static_cast<uint16_t>(errc::object_freed));
  CHECK(gone.error.message.find("'head'") != std::string::npos);
  CHECK(gone.error.message.find("'worker-2'") != std::string::npos);
  // A borrowing node lost gives back its borrows.
  f.table.lost("worker-1", "closed");
  CHECK(f.table.lent() == 0);
}

TEST_CASE("a borrower asks the owner, resolves its slot with the answer, holds barriers "
          "until answered, and gives the borrow back when the slot goes") {
  fixture f{"worker-1"};
  auto borrowed = slot_of(owned_by(0), 3);
  auto k = detail::key_of(borrowed->id());
  f.table.borrow(borrowed, &detail::type_of<int>());
  CHECK(f.last_to<wire_msg::object_borrow>("head").id ==
        wire_msg::object_ref_id{k.first, k.second});
  bool passed = false;
  f.table.barrier([&] { passed = true; });
  CHECK_FALSE(passed);
  wire_msg::object_borrowed answer;
  answer.id = {k.first, k.second};
  answer.ack = true;
  answer.state = state::ready;
  answer.value = wire_msg::value{detail::type_of<int>().name,
                                 detail::encode(detail::boxed_value::make(9))};
  // An answer from a node that does not own it changes nothing.
  f.table.on_borrowed("worker-2", answer);
  CHECK_FALSE(passed);
  f.table.on_borrowed("head", answer);
  CHECK(passed);
  REQUIRE(borrowed->done());
  CHECK(*static_cast<const int*>(borrowed->read()->ptr.get()) == 9);
  CHECK(f.table.borrowed() == 1);
  f.table.dropped(k);
  CHECK(std::holds_alternative<wire_msg::object_unborrow>(f.sent.back().second));
  CHECK(f.table.borrowed() == 0);
}

TEST_CASE("a borrowed object whose owner is lost before it came fails with owner_died, "
          "and barriers waiting for its answer go on") {
  fixture f{"worker-1"};
  auto borrowed = slot_of(owned_by(2), 4);
  f.table.borrow(borrowed, &detail::type_of<int>());
  CHECK(f.sent.back().first == "worker-2");
  bool passed = false;
  f.table.barrier([&] { passed = true; });
  f.table.lost("worker-2", "connection closed");
  CHECK(passed);
  auto v = borrowed->read();
  REQUIRE_FALSE(v);
  CHECK(v.err().code == errc::owner_died);
  CHECK(v.err().message.find("'worker-2'") != std::string::npos);
  CHECK(f.table.borrowed() == 0);
}
