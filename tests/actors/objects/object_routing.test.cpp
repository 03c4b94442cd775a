// The object manager's routing (pulls from several holders, readers serving readers)
// and replicas.

#include <doctest/doctest.h>

#include "tests/actors/object_manager_fixture.hpp"

using namespace std::chrono_literals;
using namespace swarm::actors;
using namespace swarm::object_manager_test;
namespace wire_msg = swarm::wire_msg;
namespace detail = swarm::detail;
using swarm::errc;

namespace {

// A text of 44 bytes: a dozen 4-byte chunks in the default fixture.
const std::string fox = "the quick brown fox jumps over the lazy dog!";

// The chunk last sent to `node`.
wire_msg::object_chunk last_chunk_to(const manager_parts& m, const std::string& node) {
  for (auto i = m.sent.rbegin(); i != m.sent.rend(); ++i)
    if (i->first == node)
      if (auto* c = std::get_if<wire_msg::object_chunk>(&i->second)) return *c;
  return {};
}

} // namespace

TEST_CASE_FIXTURE(fixture, "a pull from two holders asks each for every other chunk") {
  auto encoded = laid_out(detail::boxed_value::make(fox));
  auto got = read({{1, 80}, "w1", encoded.size(), {"w2"}});
  CHECK(pulls_to("w1").size() == 2);
  CHECK(pulls_to("w2").size() == 2);
  CHECK(pulls_to("w1")[0].offset == 0);
  CHECK(pulls_to("w2")[0].offset == 4);
  size_t a1 = 0, a2 = 0;
  serve_both(*this, got, encoded, a1, a2);
  REQUIRE(*got);
  REQUIRE(**got);
  CHECK(as_string(***got) == fox);
  CHECK(a1 + a2 == (encoded.size() + 3) / 4);
  CHECK(a1 >= a2 - 1);
  CHECK(a2 >= a1 - 1);
}

TEST_CASE_FIXTURE(fixture, "a pull asks the least busy holder first") {
  loads["w1"] = 5;
  auto encoded = laid_out(detail::boxed_value::make(fox));
  auto got = read({{1, 81}, "w1", encoded.size(), {"w2"}});
  REQUIRE_FALSE(pulls_to("w2").empty());
  CHECK(pulls_to("w2")[0].offset == 0);
  CHECK(pulls_to("w1")[0].offset == 4);
}

TEST_CASE_FIXTURE(fixture, "the chunks asked of a holder that died are asked of another "
                           "holder, and the pull completes without it") {
  auto encoded = laid_out(detail::boxed_value::make(fox));
  auto got = read({{1, 82}, "w1", encoded.size(), {"w2"}});
  answer(pulls_to("w1")[0], encoded, "w1");
  tell(lost_atom::value, std::string{"w1"}, std::string{"killed"});
  auto to_w1 = pulls_to("w1").size();
  size_t a2 = 0;
  serve_pulls("w2", encoded, a2);
  REQUIRE(*got);
  REQUIRE(**got);
  CHECK(as_string(***got) == fox);
  CHECK(pulls_to("w1").size() == to_w1);
}

TEST_CASE_FIXTURE(fixture, "a holder without the object is asked for nothing more, the "
                           "others send its chunks") {
  auto encoded = laid_out(detail::boxed_value::make(fox));
  auto got = read({{1, 83}, "w1", encoded.size(), {"w2"}});
  wire_msg::object_chunk none;
  none.id = {1, 83};
  none.offset = pulls_to("w2")[0].offset;
  none.missing = "node 'w2' holds no object (freed, or never here)";
  tell(chunk_atom::value, std::string{"w2"}, std::move(none));
  auto to_w2 = pulls_to("w2").size();
  size_t a1 = 0;
  serve_pulls("w1", encoded, a1);
  REQUIRE(*got);
  REQUIRE(**got);
  CHECK(as_string(***got) == fox);
  CHECK(pulls_to("w2").size() == to_w2);

  // With no holder left, the pull fails naming the last one and why.
  auto lost = read({{1, 84}, "w1", encoded.size()});
  wire_msg::object_chunk gone;
  gone.id = {1, 84};
  gone.missing = "node 'w1' holds no object (freed, or never here)";
  tell(chunk_atom::value, std::string{"w1"}, std::move(gone));
  REQUIRE(*lost);
  REQUIRE_FALSE(**lost);
  CHECK((**lost).err().code == errc::object_lost);
  CHECK((**lost).err().message.find("from node 'w1'") != std::string::npos);
}

TEST_CASE_FIXTURE(fixture, "a holder names the readers it sent parts of an object to, "
                           "and a reader asks them too, and the holder for what they "
                           "do not have yet") {
  auto v = detail::boxed_value::make(fox);
  auto encoded = laid_out(v);
  tell(hold_atom::value, hold_request{{1, 85}, v, layout_of(v), false, nullptr});
  tell(pull_atom::value, std::string{"w1"}, wire_msg::object_pull{{1, 85}, 0, 4});
  CHECK(last_chunk_to(*this, "w1").holders.empty());
  tell(pull_atom::value, std::string{"w2"}, wire_msg::object_pull{{1, 85}, 0, 4});
  CHECK(last_chunk_to(*this, "w2").holders == std::vector<std::string>{"w1"});

  // The reader's side: w1 names w2, which gets the next chunks in turn; w2, still
  // getting the object, sends the reader back to w1.
  auto got = read({{1, 86}, "w1", encoded.size()});
  auto first = pulls_to("w1")[0];
  wire_msg::object_chunk c;
  c.id = first.id;
  c.offset = 0;
  c.total = encoded.size();
  c.data.assign(encoded.begin(), encoded.begin() + 4);
  c.holders = {"w2"};
  tell(chunk_atom::value, std::string{"w1"}, std::move(c));
  REQUIRE_FALSE(pulls_to("w2").empty());
  auto to_w2 = pulls_to("w2")[0];
  wire_msg::object_chunk later;
  later.id = to_w2.id;
  later.offset = to_w2.offset;
  later.missing = "node 'w2' is still getting these bytes";
  later.not_yet = true;
  tell(chunk_atom::value, std::string{"w2"}, std::move(later));
  CHECK(pulls_to("w1").back().offset == to_w2.offset);
  size_t a1 = 1, a2 = 1;
  serve_both(*this, got, encoded, a1, a2);
  REQUIRE(*got);
  REQUIRE(**got);
  CHECK(as_string(***got) == fox);
}

TEST_CASE_FIXTURE(bulk_fixture,
                  "a node still pulling an object serves the parts that came, holds "
                  "asks for parts coming from a whole copy until they come, and sends "
                  "other asks elsewhere") {
  auto encoded = laid_out(detail::boxed_value::make(std::string(200 << 10, 'p')));
  auto got = read({{1, 87}, "w1", encoded.size()});
  auto asked = pulls_to("w1");
  REQUIRE(asked.size() == 2);
  // w2 asks for the first bytes, on their way from w1: it waits for them.
  tell(pull_atom::value, std::string{"w2"}, wire_msg::object_pull{{1, 87}, 0, 4});
  CHECK(last_chunk_to(*this, "w2").total == 0);
  answer(asked[0], encoded, "w1");
  auto served = last_chunk_to(*this, "w2");
  CHECK(served.missing.empty());
  CHECK(served.offset == 0);
  CHECK(served.total == encoded.size());
  REQUIRE(served.size() == 4);
  CHECK(std::equal(served.bytes(), served.bytes() + 4, encoded.begin()));
  // A part not asked for yet: w2 is sent elsewhere.
  tell(pull_atom::value, std::string{"w2"},
       wire_msg::object_pull{{1, 87}, encoded.size() - 4, 4});
  CHECK(last_chunk_to(*this, "w2").not_yet);
  // A part that came: sent at once.
  tell(pull_atom::value, std::string{"w2"}, wire_msg::object_pull{{1, 87}, 1000, 8});
  CHECK(last_chunk_to(*this, "w2").missing.empty());
  CHECK(last_chunk_to(*this, "w2").offset == 1000);
  CHECK(last_chunk_to(*this, "w2").size() == 8);
  size_t answered = 1;
  serve_pulls("w1", encoded, answered);
  REQUIRE(*got);
  REQUIRE(**got);
  // Once whole, the copy kept here serves everything.
  tell(pull_atom::value, std::string{"w2"},
       wire_msg::object_pull{{1, 87}, encoded.size() - 4, 4});
  auto last = last_chunk_to(*this, "w2");
  CHECK(last.missing.empty());
  REQUIRE(last.size() == 4);
  CHECK(std::equal(last.bytes(), last.bytes() + 4, encoded.end() - 4));
}

namespace {

// The replicas asked of `node` so far.
std::vector<wire_msg::object_replicate> replicas_asked(const manager_parts& m,
                                                       const std::string& node) {
  std::vector<wire_msg::object_replicate> out;
  for (auto& [to, msg] : m.sent)
    if (to == node)
      if (auto* r = std::get_if<wire_msg::object_replicate>(&msg)) out.push_back(*r);
  return out;
}

// How many frees were sent to `node` so far.
size_t frees_to(const manager_parts& m, const std::string& node) {
  size_t n = 0;
  for (auto& [to, msg] : m.sent)
    n += to == node && std::holds_alternative<wire_msg::object_free>(msg);
  return n;
}

} // namespace

TEST_CASE_FIXTURE(fixture, "a replicated value is asked of the least busy other node, "
                           "another one when that node is lost, and its replicas are "
                           "freed with it") {
  loads["w1"] = 3;
  auto v = detail::boxed_value::make(fox);
  std::vector<std::string> kept;
  bool told = false;
  tell(replicate_atom::value,
       replicate_request{{{1, 90}, v, layout_of(v), false, nullptr},
                         1,
                         [&](std::vector<std::string> nodes) {
                           kept = std::move(nodes);
                           told = true;
                         }});
  REQUIRE(replicas_asked(*this, "w2").size() == 1);
  CHECK(replicas_asked(*this, "w1").empty());
  auto ask = replicas_asked(*this, "w2")[0];
  CHECK(ask.ref.node == "head");
  CHECK(ask.ref.size == laid_out(v).size());
  CHECK_FALSE(told);
  tell(replicated_atom::value, std::string{"w2"},
       wire_msg::object_replicated{{1, 90}, ""});
  REQUIRE(told);
  CHECK(kept == std::vector<std::string>{"w2"});
  // Held here for it: w2 pulls from this node.
  tell(pull_atom::value, std::string{"w2"}, wire_msg::object_pull{{1, 90}, 0, 4});
  CHECK(last_chunk_to(*this, "w2").missing.empty());

  tell(lost_atom::value, std::string{"w2"}, std::string{"killed"});
  REQUIRE(replicas_asked(*this, "w1").size() == 1);
  tell(replicated_atom::value, std::string{"w1"},
       wire_msg::object_replicated{{1, 90}, ""});

  tell(freed_atom::value, object_key{1, 90});
  CHECK(frees_to(*this, "w1") >= 1);
  // Freed here: nothing is held for a puller any more.
  tell(pull_atom::value, std::string{"w1"}, wire_msg::object_pull{{1, 90}, 0, 4});
  CHECK_FALSE(last_chunk_to(*this, "w1").missing.empty());
}

TEST_CASE_FIXTURE(fixture, "a replica asked of a node that refuses is asked of another, "
                           "and an answer for a freed object frees the replica again") {
  auto v = detail::boxed_value::make(fox);
  std::vector<std::string> kept{"none"};
  tell(replicate_atom::value,
       replicate_request{
           {{1, 91}, v, layout_of(v), false, nullptr},
           1,
           [&](std::vector<std::string> nodes) { kept = std::move(nodes); }});
  REQUIRE(replicas_asked(*this, "w1").size() == 1);
  tell(replicated_atom::value, std::string{"w1"},
       wire_msg::object_replicated{{1, 91}, "node 'w1' cannot pull: store full"});
  REQUIRE(replicas_asked(*this, "w2").size() == 1);
  tell(replicated_atom::value, std::string{"w2"},
       wire_msg::object_replicated{{1, 91}, "node 'w2' cannot pull: store full"});
  CHECK(kept.empty());
  // Each refusal is a warning of this node, naming the object and why.
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[1].find("node 'w2' did not keep a replica of object") == 0);
  CHECK(warnings[1].find("store full") != std::string::npos);

  tell(freed_atom::value, object_key{1, 91});
  auto before = frees_to(*this, "w2");
  tell(replicated_atom::value, std::string{"w2"},
       wire_msg::object_replicated{{1, 91}, ""});
  CHECK(frees_to(*this, "w2") == before + 1);
}

TEST_CASE_FIXTURE(fixture, "a node keeps a replica as the bytes it pulled, answers, "
                           "serves it, and makes a value of it for a reader here") {
  auto encoded = laid_out(detail::boxed_value::make(fox));
  wire_msg::remote_ref ref{{1, 92}, "w1", encoded.size()};
  tell(replica_atom::value, std::string{"w1"}, wire_msg::object_replicate{ref});
  size_t answered = 0;
  serve_pulls("w1", encoded, answered);
  auto& [to, last] = sent.back();
  CHECK(to == "w1");
  REQUIRE(std::holds_alternative<wire_msg::object_replicated>(last));
  CHECK(std::get<wire_msg::object_replicated>(last).error.empty());

  tell(pull_atom::value, std::string{"w2"}, wire_msg::object_pull{{1, 92}, 8, 4});
  auto served = last_chunk_to(*this, "w2");
  REQUIRE(served.size() == 4);
  CHECK(std::equal(served.bytes(), served.bytes() + 4, encoded.begin() + 8));

  auto pulls = pulls_to("w1").size();
  auto got = read(ref);
  REQUIRE(*got);
  REQUIRE(**got);
  CHECK(as_string(***got) == fox);
  CHECK(pulls_to("w1").size() == pulls);
  // Made once while a reader holds it: a second reader gets the same value.
  auto again = read(ref);
  REQUIRE(*again);
  REQUIRE(**again);
  CHECK((***again).ptr.get() == (***got).ptr.get());

  // Its owner frees it: the replica goes.
  tell(free_atom::value, object_key{1, 92});
  tell(pull_atom::value, std::string{"w2"}, wire_msg::object_pull{{1, 92}, 0, 4});
  CHECK_FALSE(last_chunk_to(*this, "w2").missing.empty());
}

TEST_CASE_FIXTURE(fixture, "a replica that cannot be pulled is refused with the reason") {
  wire_msg::remote_ref ref{{1, 93}, "w1", 40};
  tell(replica_atom::value, std::string{"w1"}, wire_msg::object_replicate{ref});
  tell(lost_atom::value, std::string{"w1"}, std::string{"killed"});
  // The answer goes nowhere (w1 is gone), but it says why.
  bool refused = false;
  for (auto& [to, msg] : sent)
    if (auto* r = std::get_if<wire_msg::object_replicated>(&msg))
      refused = r->error.find("killed") != std::string::npos;
  CHECK(refused);
}
