#include <doctest/doctest.h>

#include "framework/detail/value_pool.hpp"

#include <caf/all.hpp>
#include <caf/test/dsl.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/object_manager.hpp"
#include "framework/detail/wire_convert.hpp"

using namespace std::chrono_literals;
using namespace swarm::actors;
namespace wire_msg = swarm::wire_msg;
namespace detail = swarm::detail;
using swarm::errc;

namespace {

using bytes_t = std::vector<uint8_t>;

// What the manager sent and published, outliving the actor system.
struct manager_parts {
  std::vector<std::pair<std::string, wire_msg::message>> sent;
  std::vector<wire_msg::object_location> rows;
  std::map<std::string, double> loads; // how busy each node is, 0 unless set
};

// `v` laid out as a holder sends it.
std::shared_ptr<const swarm::bulk_layout> layout_of(const detail::boxed_value& v) {
  return std::make_shared<const swarm::bulk_layout>(v.type->lay_out(v.ptr.get()));
}

// The bytes a puller receives for `v`: its layout's head, then its blocks.
bytes_t laid_out(const detail::boxed_value& v) {
  auto l = layout_of(v);
  bytes_t out = l->head;
  for (auto& [data, size] : l->blocks)
    out.insert(out.end(), data, data + size);
  return out;
}

// An object owned on node index 2 ("w1").
object_key owned_by_w1(uint64_t seq) {
  return {(uint64_t{2} << owner_index_shift) | 1, seq};
}

// Steps the manager on the test coordinator.
struct fixture : manager_parts, test_coordinator_fixture<> {
  object_manager_actor m;

  explicit fixture(uint64_t chunk_bytes = 4, uint64_t keep_bytes = 256 << 20,
                   detail::value_pool* pool = nullptr,
                   std::shared_ptr<wire_msg::landing_table> landings = nullptr) {
    object_manager_config oc;
    oc.node = "head";
    oc.nodes = {"head", "w1", "w2"};
    oc.send = [this](const std::string& to, wire_msg::message msg) {
      sent.emplace_back(to, std::move(msg));
    };
    oc.publish = [this](wire_msg::object_location r) { rows.push_back(std::move(r)); };
    oc.load = [this](const std::string& n) { return loads[n]; };
    oc.pick = [this](size_t n, const std::set<std::string>& exclude) {
      std::vector<std::pair<double, std::string>> free;
      for (auto& name : {"w1", "w2"})
        if (!exclude.count(name)) free.emplace_back(loads[name], name);
      std::sort(free.begin(), free.end());
      std::vector<std::string> out;
      for (size_t i = 0; i < free.size() && i < n; ++i)
        out.push_back(free[i].second);
      return out;
    };
    oc.chunk_bytes = chunk_bytes;
    oc.keep_pulled_bytes = keep_bytes;
    oc.pull_window = 2;
    oc.pool = pool;
    oc.landings = std::move(landings);
    m = spawn_object_manager(sys, std::move(oc), false);
  }

  ~fixture() override {
    if (m) caf::anon_send_exit(m, caf::exit_reason::user_shutdown);
    sched.run();
  }

  template <class... Ts> void tell(Ts&&... xs) {
    caf::anon_send(m, std::forward<Ts>(xs)...);
    sched.run();
  }

  // The pulls sent so far to `node`, in order.
  std::vector<wire_msg::object_pull> pulls_to(const std::string& node) const {
    std::vector<wire_msg::object_pull> out;
    for (auto& [to, msg] : sent)
      if (to == node)
        if (auto* p = std::get_if<wire_msg::object_pull>(&msg)) out.push_back(*p);
    return out;
  }

  // Answers the pull `p` from `encoded`, as the holder `from` would.
  void answer(const wire_msg::object_pull& p, const bytes_t& encoded,
              const std::string& from = "w1") {
    wire_msg::object_chunk c;
    c.id = p.id;
    c.offset = p.offset;
    c.total = encoded.size();
    c.data.assign(encoded.begin() + static_cast<ptrdiff_t>(p.offset),
                  encoded.begin() + static_cast<ptrdiff_t>(p.offset + p.length));
    tell(chunk_atom::value, from, std::move(c));
  }

  // Answers every pull sent to `node` once each, those it causes too; `answered` counts
  // the ones answered so far.
  void serve_pulls(const std::string& node, const bytes_t& encoded, size_t& answered) {
    for (auto all = pulls_to(node); answered < all.size(); all = pulls_to(node))
      answer(all[answered++], encoded, node);
  }

  // Reads `ref` as a std::string; what the manager hands back.
  std::shared_ptr<std::optional<swarm::result<detail::boxed_value>>>
  read(const wire_msg::remote_ref& ref) {
    auto out = std::make_shared<std::optional<swarm::result<detail::boxed_value>>>();
    tell(fetch_atom::value, fetch_request{ref, &detail::type_of<std::string>(),
                                          [out](swarm::result<detail::boxed_value> v) {
                                            *out = std::move(v);
                                          }});
    return out;
  }

  uint64_t kept_bytes() {
    uint64_t n = 0;
    self->send(m, kept_atom::value);
    sched.run();
    self->receive([&](uint64_t x) { n = x; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    return n;
  }

  uint64_t remembered() {
    uint64_t n = 0;
    self->send(m, count_atom::value);
    sched.run();
    self->receive([&](uint64_t x) { n = x; },
                  caf::after(std::chrono::seconds(0)) >> [] {});
    return n;
  }
};

std::string as_string(const detail::boxed_value& v) {
  return *static_cast<const std::string*>(v.ptr.get());
}

} // namespace

TEST_CASE_FIXTURE(
    fixture,
    "a pull asks for a window of chunks at a time and decodes the value once whole") {
  auto value = detail::boxed_value::make(std::string(13, 'x'));
  auto encoded = laid_out(value);
  auto key = owned_by_w1(7);
  auto got = read({{key.first, key.second}, "w1", encoded.size()});
  auto asked = pulls_to("w1");
  REQUIRE(asked.size() == 2); // the window
  CHECK(asked[0].offset == 0);
  CHECK(asked[1].offset == 4);
  size_t answered = 0;
  answer(asked[answered++], encoded);
  CHECK(pulls_to("w1").size() == 3); // one in, one more out
  serve_pulls("w1", encoded, answered);
  REQUIRE(*got);
  REQUIRE(**got);
  CHECK(as_string(***got) == std::string(13, 'x'));
  CHECK(kept_bytes() == encoded.size()); // a secondary copy now
}

TEST_CASE_FIXTURE(fixture,
                  "a second reader of an object being pulled waits for the same pull") {
  auto encoded = laid_out(detail::boxed_value::make(std::string("ab")));
  auto key = owned_by_w1(1);
  wire_msg::remote_ref ref{{key.first, key.second}, "w1", encoded.size()};
  auto a = read(ref);
  auto asked = pulls_to("w1").size();
  REQUIRE(asked > 0);
  auto b = read(ref);
  CHECK(pulls_to("w1").size() == asked);
  size_t answered = 0;
  serve_pulls("w1", encoded, answered);
  REQUIRE(*a);
  REQUIRE(*b);
  CHECK(as_string(***a) == "ab");
  CHECK(as_string(***b) == "ab");
}

TEST_CASE_FIXTURE(fixture,
                  "a held value is served in chunks and read here without a pull") {
  auto value = detail::boxed_value::make(std::string("held here"));
  auto encoded = layout_of(value);
  object_key key{1, 3};
  tell(hold_atom::value, hold_request{key, value, encoded, true, nullptr});
  tell(pull_atom::value, std::string{"w2"}, wire_msg::object_pull{{1, 3}, 4, 4});
  REQUIRE(sent.size() == 1);
  auto& c = std::get<wire_msg::object_chunk>(sent[0].second);
  CHECK(sent[0].first == "w2");
  CHECK(c.missing.empty());
  CHECK(c.total == encoded->size());
  CHECK(c.source_length == 4);
  auto got = read({{1, 3}, "w1", encoded->size()});
  REQUIRE(*got);
  CHECK(as_string(***got) == "held here");
  CHECK(pulls_to("w1").empty());
  // Released by its one task, it is gone: a pull now says so.
  tell(release_atom::value, std::vector<object_key>{key});
  tell(pull_atom::value, std::string{"w2"}, wire_msg::object_pull{{1, 3}, 0, 4});
  CHECK(std::get<wire_msg::object_chunk>(sent.back().second)
            .missing.find("holds no object") != std::string::npos);
}

TEST_CASE_FIXTURE(fixture,
                  "reading a held value as another type fails with a clear error") {
  auto value = detail::boxed_value::make(int64_t{5});
  tell(hold_atom::value, hold_request{{1, 4}, value, layout_of(value), false, nullptr});
  auto got = read({{1, 4}, "head", 8});
  REQUIRE(*got);
  REQUIRE_FALSE(**got);
  CHECK((**got).err().code == errc::type_mismatch);
}

TEST_CASE_FIXTURE(fixture, "losing the holder fails its pulls, naming the dead node") {
  auto key = owned_by_w1(9);
  auto from_w2 = read({{key.first, key.second}, "w2", 100});
  auto from_w1 = read({{1, 10}, "w1", 100});
  tell(lost_atom::value, std::string{"w2"}, std::string{"connection reset"});
  REQUIRE(*from_w2);
  REQUIRE_FALSE(**from_w2);
  CHECK((**from_w2).err().code == errc::object_lost);
  CHECK((**from_w2).err().message.find("node 'w2'") != std::string::npos);
  CHECK_FALSE(*from_w1); // still pulling from w1
  // The owner died with its value: that says owner_died.
  auto mine = read({{key.first, key.second + 1}, "w1", 100});
  tell(lost_atom::value, std::string{"w1"}, std::string{"killed"});
  REQUIRE(*mine);
  CHECK((**mine).err().code == errc::owner_died);
}

TEST_CASE_FIXTURE(
    fixture,
    "stopping mid-pull fails the pull's readers instead of leaving them waiting") {
  auto got = read({{1, 11}, "w1", 100});
  REQUIRE_FALSE(*got);
  caf::anon_send_exit(m, caf::exit_reason::user_shutdown);
  sched.run();
  REQUIRE(*got);
  CHECK((**got).err().code == errc::runtime_stopped);
  // A chunk arriving late finds nothing to write into.
  m = nullptr;
}

TEST_CASE_FIXTURE(fixture, "a result located on a lost node counts as gone from there") {
  auto slot = std::make_shared<detail::object_slot>(swarm::object_id{1, 12});
  slot->set_location(detail::object_slot::location{"w1", 100});
  tell(locate_atom::value, located_object{{1, 12}, "w1", slot});
  tell(lost_atom::value, std::string{"w1"}, std::string{"killed"});
  CHECK_FALSE(slot->primary_copy());
  REQUIRE(rows.size() == 1);
  CHECK_FALSE(rows[0].present);
  CHECK(rows[0].node == "w1");
  // Forgetting it afterwards publishes nothing more.
  tell(forget_atom::value, object_key{1, 12});
  CHECK(rows.size() == 1);
}

TEST_CASE_FIXTURE(
    fixture,
    "results held for an owner on a lost node are dropped, exported values stay") {
  auto value = detail::boxed_value::make(std::string("r"));
  auto encoded = layout_of(value);
  tell(hold_atom::value, hold_request{owned_by_w1(20), value, encoded, false, nullptr});
  tell(hold_atom::value, hold_request{{1, 21}, value, encoded, true, nullptr});
  tell(lost_atom::value, std::string{"w1"}, std::string{"killed"});
  tell(pull_atom::value, std::string{"w2"},
       wire_msg::object_pull{{owned_by_w1(20).first, 20}, 0, 4});
  CHECK_FALSE(std::get<wire_msg::object_chunk>(sent.back().second).missing.empty());
  tell(pull_atom::value, std::string{"w2"}, wire_msg::object_pull{{1, 21}, 0, 4});
  CHECK(std::get<wire_msg::object_chunk>(sent.back().second).missing.empty());
}

TEST_CASE_FIXTURE(fixture, "a chunk that does not fit its object fails the pull") {
  auto got = read({{1, 30}, "w1", 8});
  wire_msg::object_chunk c;
  c.id = {1, 30};
  c.offset = 0;
  c.total = 9; // the holder's object is another size
  c.data = {1, 2, 3, 4};
  tell(chunk_atom::value, std::string{"w1"}, std::move(c));
  REQUIRE(*got);
  CHECK((**got).err().code == errc::object_freed);
}

namespace {

struct keeping_fixture : fixture {
  keeping_fixture() : fixture(64, 100) {} // keeps up to 100 bytes of pulled values
};

} // namespace

TEST_CASE_FIXTURE(keeping_fixture, "a kept copy goes when its owner frees the object") {
  auto encoded = laid_out(detail::boxed_value::make(std::string(20, 'k')));
  auto got = read({{1, 7}, "w1", encoded.size()});
  size_t answered = 0;
  serve_pulls("w1", encoded, answered);
  REQUIRE(*got);
  REQUIRE(**got);
  *got = std::nullopt;
  CHECK(kept_bytes() == encoded.size());
  tell(free_atom::value, object_key{1, 7});
  CHECK(kept_bytes() == 0);
  CHECK(remembered() == 0);
}

TEST_CASE_FIXTURE(keeping_fixture,
                  "a copy whose owner freed it while it was pulled reaches "
                  "its readers and is not kept") {
  auto encoded = laid_out(detail::boxed_value::make(std::string(20, 'f')));
  auto got = read({{1, 8}, "w1", encoded.size()});
  tell(free_atom::value, object_key{1, 8});
  size_t answered = 0;
  serve_pulls("w1", encoded, answered);
  REQUIRE(*got);
  REQUIRE(**got);
  CHECK(as_string(***got) == std::string(20, 'f'));
  CHECK(kept_bytes() == 0);
  CHECK(remembered() == 0);
}

TEST_CASE_FIXTURE(keeping_fixture, "a pulled value is kept: read again it moves nothing, "
                                   "and past the budget the least recently read goes") {
  auto pull_fully = [&](uint64_t seq, const std::string& text) {
    auto encoded = laid_out(detail::boxed_value::make(text));
    auto got = read({{1, seq}, "w1", encoded.size()});
    size_t answered = pulls_to("w1").size() - 1; // the one just asked
    answer(pulls_to("w1")[answered++], encoded);
    serve_pulls("w1", encoded, answered);
    REQUIRE(*got);
    REQUIRE(**got);
    CHECK(as_string(***got) == text);
  };
  auto a = std::string(20, 'a'), b = std::string(20, 'b'), c = std::string(20, 'c');
  pull_fully(1, a); // 44 bytes laid out
  pull_fully(2, b);
  CHECK(kept_bytes() == 88);
  // Read again after every reader let go: served here, no pull.
  auto pulls = pulls_to("w1").size();
  auto again = read({{1, 1}, "w1", 44});
  REQUIRE(*again);
  CHECK(as_string(***again) == a);
  CHECK(pulls_to("w1").size() == pulls);
  // A third goes past 100 bytes: b, read least recently, is dropped; a stays.
  pull_fully(3, c);
  CHECK(kept_bytes() == 88);
  pulls = pulls_to("w1").size();
  auto a_again = read({{1, 1}, "w1", 44});
  REQUIRE(*a_again);
  CHECK(pulls_to("w1").size() == pulls);
  auto b_again = read({{1, 2}, "w1", 44});
  CHECK_FALSE(*b_again); // pulled anew
  CHECK(pulls_to("w1").size() > pulls);
}

namespace {

// A user type with a large buffer between small fields.
struct frame {
  std::string name;
  std::vector<float> pixels;
  int64_t tail = 0;
};

template <class Inspector> bool inspect(Inspector& f, frame& x) {
  return f(x.name, x.pixels, x.tail);
}

struct bulk_fixture : fixture {
  bulk_fixture() : fixture(64 << 10) {}
};

} // namespace

TEST_CASE_FIXTURE(bulk_fixture, "a held value's buffers are sent from its own memory") {
  std::vector<uint8_t> bytes(300 << 10);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i * 7);
  auto value = detail::boxed_value::make(std::move(bytes));
  auto& held = *static_cast<const std::vector<uint8_t>*>(value.ptr.get());
  auto layout = layout_of(value);
  REQUIRE(layout->blocks.size() == 1);
  tell(hold_atom::value, hold_request{{1, 40}, value, layout, true, nullptr});
  // A chunk inside the buffer is a view of it, not a copy.
  auto offset = layout->head.size() + 4096;
  tell(pull_atom::value, std::string{"w2"}, wire_msg::object_pull{{1, 40}, offset, 8192});
  auto& c = std::get<wire_msg::object_chunk>(sent.back().second);
  CHECK(c.source_data == held.data() + 4096);
  CHECK(c.source_length == 8192);
  CHECK(c.data.empty());
  // One asked across the head and the buffer ends where the head ends, sent from there.
  tell(pull_atom::value, std::string{"w2"}, wire_msg::object_pull{{1, 40}, 0, 8192});
  auto& first = std::get<wire_msg::object_chunk>(sent.back().second);
  CHECK(first.source_data == layout->head.data());
  CHECK(first.source_length == layout->head.size());
  CHECK(first.data.empty());
}

TEST_CASE_FIXTURE(bulk_fixture,
                  "the nodes sent chunks of an object are told to drop their "
                  "copies when the store here lets go of it") {
  auto value = detail::boxed_value::make(std::vector<uint8_t>(100 << 10, 3));
  tell(hold_atom::value, hold_request{{1, 60}, value, layout_of(value), true, nullptr});
  tell(pull_atom::value, std::string{"w2"}, wire_msg::object_pull{{1, 60}, 0, 4096});
  tell(pull_atom::value, std::string{"w1"}, wire_msg::object_pull{{1, 60}, 0, 4096});
  tell(pull_atom::value, std::string{"w2"}, wire_msg::object_pull{{1, 60}, 4096, 4096});
  tell(lost_atom::value, std::string{"w1"}, std::string{"gone"});
  auto before = sent.size();
  tell(freed_atom::value, object_key{1, 60});
  REQUIRE(sent.size() == before + 1); // w2 once; w1 was lost with its copies
  CHECK(sent.back().first == "w2");
  auto& f = std::get<wire_msg::object_free>(sent.back().second);
  CHECK(f.id.owner == 1);
  CHECK(f.id.seq == 60);
  tell(freed_atom::value, object_key{1, 60}); // told once
  CHECK(sent.size() == before + 1);
}

TEST_CASE_FIXTURE(
    bulk_fixture,
    "a pulled value is made from its head and its buffers filled in place, bit for bit") {
  frame f;
  f.name = "camera-3";
  f.pixels.resize(100'000);
  for (size_t i = 0; i < f.pixels.size(); ++i)
    f.pixels[i] = static_cast<float>(i) * 0.5f;
  f.tail = -42;
  auto value = detail::boxed_value::make(f);
  auto encoded = laid_out(value);
  auto key = owned_by_w1(41);
  wire_msg::remote_ref ref{{key.first, key.second}, "w1", encoded.size()};
  auto out = std::make_shared<std::optional<swarm::result<detail::boxed_value>>>();
  tell(fetch_atom::value, fetch_request{ref, &detail::type_of<frame>(),
                                        [out](swarm::result<detail::boxed_value> v) {
                                          *out = std::move(v);
                                        }});
  // Chunks arrive out of order: the second before the first.
  auto asked = pulls_to("w1");
  REQUIRE(asked.size() == 2);
  answer(asked[1], encoded);
  CHECK_FALSE(*out);
  size_t answered = 0;
  answer(asked[answered++], encoded);
  answered = 2;
  serve_pulls("w1", encoded, answered);
  REQUIRE(*out);
  REQUIRE(**out);
  auto& got = *static_cast<const frame*>((***out).ptr.get());
  CHECK(got.name == f.name);
  CHECK(got.pixels == f.pixels);
  CHECK(got.tail == f.tail);
}

namespace {

struct pooled_fixture : std::shared_ptr<detail::value_pool>, fixture {
  // Keeps no pulled copy, so a freed one goes back to the pool at once.
  pooled_fixture()
      : std::shared_ptr<detail::value_pool>{std::make_shared<detail::value_pool>(
            8 << 20, 64 << 10)},
        fixture(256 << 10, 0, get()) {}

  // Pulls `text` as object `seq` from w1; the value read.
  detail::boxed_value pull(uint64_t seq, const std::string& text) {
    auto encoded = laid_out(detail::boxed_value::make(text));
    auto got = read({{1, seq}, "w1", encoded.size()});
    size_t answered = 0;
    for (auto& p : pulls_to("w1"))
      if (p.id.seq != seq) ++answered;
    serve_pulls("w1", encoded, answered);
    REQUIRE(*got);
    REQUIRE(**got);
    return ***got;
  }
};

} // namespace

TEST_CASE_FIXTURE(pooled_fixture, "a pull lands in the memory of a freed pulled value of "
                                  "its type and size, which it fully overwrites") {
  auto first = pull(1, std::string(1 << 20, 'a'));
  const char* memory = static_cast<const std::string*>(first.ptr.get())->data();
  first = {};
  REQUIRE(get()->stats().values == 1);
  std::string second(1 << 20, 'b');
  second[777] = 'z';
  auto again = pull(2, second);
  CHECK(static_cast<const std::string*>(again.ptr.get())->data() == memory);
  CHECK(as_string(again) == second);
  CHECK(get()->stats().reused == 1);
  auto other_size = pull(3, std::string(3 << 20, 'c')); // nothing kept fits: fresh memory
  CHECK(get()->stats().reused == 1);
  CHECK(as_string(other_size) == std::string(3 << 20, 'c'));
}

TEST_CASE_FIXTURE(bulk_fixture,
                  "a chunk cut short is asked for again from where it ends, and one "
                  "never asked for (an earlier pull's) is dropped") {
  std::string text(200 << 10, 'x');
  for (size_t i = 0; i < text.size(); ++i)
    text[i] = static_cast<char>('a' + i % 26);
  auto encoded = laid_out(detail::boxed_value::make(text));
  auto got = read({{1, 50}, "w1", encoded.size()});
  auto asked = pulls_to("w1");
  REQUIRE(asked.size() == 2);
  // The first answered with 100 bytes of the 64 KiB asked.
  auto cut = asked[0];
  cut.length = 100;
  answer(cut, encoded);
  auto again = pulls_to("w1");
  REQUIRE(again.size() == 3);
  CHECK(again[2].offset == 100);
  CHECK(again[2].length == asked[0].length - 100);
  size_t answered = 1;
  serve_pulls("w1", encoded, answered);
  REQUIRE(*got);
  REQUIRE(**got);
  CHECK(as_string(***got) == text);

  auto stray = read({{1, 51}, "w1", encoded.size()});
  wire_msg::object_chunk c;
  c.id = {1, 51};
  c.offset = 7; // never asked for
  c.total = encoded.size();
  c.data.assign(encoded.begin() + 7, encoded.begin() + 70);
  tell(chunk_atom::value, std::string{"w1"}, std::move(c));
  CHECK_FALSE(*stray);
  answered = pulls_to("w1").size() - 2;
  serve_pulls("w1", encoded, answered);
  REQUIRE(*stray);
  REQUIRE(**stray);
  CHECK(as_string(***stray) == text);
}

TEST_CASE_FIXTURE(bulk_fixture,
                  "a pulled object whose head is malformed fails, naming it") {
  auto key = owned_by_w1(42);
  bytes_t junk(200 << 10, 0xff); // counts far past the object's size
  wire_msg::remote_ref ref{{key.first, key.second}, "w1", junk.size()};
  auto got = read(ref);
  size_t answered = 0;
  serve_pulls("w1", junk, answered);
  REQUIRE(*got);
  REQUIRE_FALSE(**got);
  CHECK((**got).err().code == errc::type_mismatch);
  CHECK((**got).err().message.find("bulk layout head") != std::string::npos);
}

namespace {

struct landing_fixture : std::shared_ptr<wire_msg::landing_table>, fixture {
  landing_fixture()
      : std::shared_ptr<
            wire_msg::landing_table>{std::make_shared<wire_msg::landing_table>()},
        fixture(64 << 10, 256 << 20, nullptr, *this) {}

  // Receives the chunk `p` asked for straight into the place awaiting it, as the I/O
  // thread does; false when no place awaits it.
  bool land(const wire_msg::object_pull& p, const bytes_t& encoded) {
    auto where = get()->claim("w1", p.id, p.offset, p.length);
    if (!where) return false;
    std::memcpy(where->at, encoded.data() + p.offset, p.length);
    wire_msg::object_chunk c;
    c.id = p.id;
    c.offset = p.offset;
    c.total = encoded.size();
    c.source = where->keep;
    c.source_data = where->at;
    c.source_length = p.length;
    c.landed = true;
    tell(chunk_atom::value, std::string{"w1"}, std::move(c));
    return true;
  }
};

} // namespace

TEST_CASE_FIXTURE(landing_fixture,
                  "once a pull's head is in, its chunks are received straight into the "
                  "value, each place awaited once, from the node asked") {
  std::string text(400 << 10, 'x');
  for (size_t i = 0; i < text.size(); ++i)
    text[i] = static_cast<char>('a' + i % 26);
  auto encoded = laid_out(detail::boxed_value::make(text));
  auto got = read({{1, 70}, "w1", encoded.size()});
  auto asked = pulls_to("w1");
  REQUIRE(asked.size() == 2);
  // Before the head is in, no value: nothing to receive into.
  CHECK(get()->size() == 0);
  CHECK_FALSE(land(asked[1], encoded));
  answer(asked[0], encoded);
  // The value is made: the chunk asked before, and the one asked now, await.
  auto now = pulls_to("w1");
  REQUIRE(now.size() == 3);
  CHECK(get()->size() == 2);
  CHECK_FALSE(get()->claim("w2", now[2].id, now[2].offset, now[2].length));
  // One still comes the buffered way: its place is no longer awaited.
  answer(asked[1], encoded);
  CHECK(get()->size() == 2); // now[2] and the next one asked
  // Every chunk but the short last one lands (smaller ones are copied anyway).
  for (size_t answered = 2; answered < pulls_to("w1").size(); ++answered) {
    auto p = pulls_to("w1")[answered];
    if (p.length >= wire_msg::shared_chunk_min)
      REQUIRE(land(p, encoded));
    else
      answer(p, encoded);
  }
  REQUIRE(*got);
  REQUIRE(**got);
  CHECK(as_string(***got) == text);
  CHECK(get()->size() == 0);
}

TEST_CASE_FIXTURE(landing_fixture,
                  "a pull that fails takes back the places it awaited, and a chunk "
                  "landed for it is not counted by a later pull") {
  auto encoded = laid_out(detail::boxed_value::make(std::string(400 << 10, 'q')));
  auto got = read({{1, 71}, "w1", encoded.size()});
  answer(pulls_to("w1")[0], encoded);
  auto asked = pulls_to("w1");
  // The network claimed a place, then the holder was lost.
  auto where = get()->claim("w1", asked[1].id, asked[1].offset, asked[1].length);
  REQUIRE(where);
  tell(lost_atom::value, std::string{"w1"}, std::string{"gone"});
  REQUIRE(*got);
  CHECK_FALSE(**got);
  CHECK(get()->size() == 0);
  // Read again: the chunk landed in the first pull's value comes late.
  auto again = read({{1, 71}, "w1", encoded.size()});
  answer(pulls_to("w1")[asked.size()], encoded);
  wire_msg::object_chunk late;
  late.id = asked[1].id;
  late.offset = asked[1].offset;
  late.total = encoded.size();
  late.source = where->keep;
  late.source_data = where->at;
  late.source_length = asked[1].length;
  late.landed = true;
  tell(chunk_atom::value, std::string{"w1"}, std::move(late));
  size_t answered = asked.size() + 1;
  for (auto all = pulls_to("w1"); answered < all.size(); all = pulls_to("w1"))
    if (!land(all[answered++], encoded)) answer(all[answered - 1], encoded);
  REQUIRE(*again);
  REQUIRE(**again);
  CHECK(as_string(***again) == std::string(400 << 10, 'q'));
}

TEST_CASE("an object's owner node is named by the index in its owner id") {
  std::vector<std::string> nodes{"head", "w1"};
  CHECK(owner_node_of({(uint64_t{1} << owner_index_shift) | 5, 1}, nodes) == "head");
  CHECK(owner_node_of({(uint64_t{2} << owner_index_shift) | 5, 1}, nodes) == "w1");
  CHECK(owner_node_of({(uint64_t{3} << owner_index_shift), 1}, nodes).empty());
  CHECK(owner_node_of({5, 1}, nodes).empty());
}

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
  for (int round = 0; round < 100 && !*got; ++round) {
    serve_pulls("w1", encoded, a1);
    serve_pulls("w2", encoded, a2);
  }
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

TEST_CASE_FIXTURE(fixture, "a holder without the object is asked for nothing more; the "
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
  for (int round = 0; round < 100 && !*got; ++round) {
    serve_pulls("w1", encoded, a1);
    serve_pulls("w2", encoded, a2);
  }
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
