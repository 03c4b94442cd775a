#include <doctest/doctest.h>

#include <map>

#include "tests/actors/object_manager_fixture.hpp"

using namespace std::chrono_literals;
using namespace swarm::actors;
using namespace swarm::object_manager_test;
namespace wire_msg = swarm::wire_msg;
namespace detail = swarm::detail;
using swarm::errc;

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

namespace {

// Answers the pulls sent to "w1" in the order they were sent, as one holder on one link
// would, `n` of them from `answered` on; the bytes answered for each object.
std::map<uint64_t, uint64_t> serve_in_order(fixture& f, const bytes_t& encoded,
                                            size_t& answered, size_t n) {
  std::map<uint64_t, uint64_t> bytes;
  for (size_t i = 0; i < n; ++i) {
    auto all = f.pulls_to("w1");
    REQUIRE(answered < all.size());
    auto p = all[answered++];
    bytes[p.id.seq] += p.length;
    f.answer(p, encoded);
  }
  return bytes;
}

} // namespace

TEST_CASE_FIXTURE(fixture, "pulls running at once share the link by weight: a higher "
                           "priority, or a larger job share, asks for more at a time") {
  auto encoded = laid_out(detail::boxed_value::make(std::string(4000, 'x')));
  auto low_key = owned_by_w1(20);
  auto high_key = owned_by_w1(21);
  auto ref = [&](const object_key& k) {
    return wire_msg::remote_ref{{k.first, k.second}, "w1", encoded.size()};
  };
  SUBCASE("one priority step apart: 4 to 1") {
    CHECK(pull_weight(1, 1) == doctest::Approx(4 * pull_weight(0, 1)));
    CHECK(pull_weight(0, 1) == doctest::Approx(4 * pull_weight(-1, 1)));
    auto low = read(ref(low_key), pull_weight(-1, 1));
    CHECK(pulls_to("w1").size() == 2); // alone: its window
    auto high = read(ref(high_key), pull_weight(0, 1));
    CHECK(pulls_to("w1").size() == 2 + 8); // four times the lighter one's
    size_t answered = 0;
    serve_in_order(*this, encoded, answered, 50); // past the start
    auto bytes = serve_in_order(*this, encoded, answered, 200);
    double share = double(bytes[high_key.second]) /
                   double(bytes[high_key.second] + bytes[low_key.second]);
    CHECK(share == doctest::Approx(0.8).epsilon(0.02));
    CHECK_FALSE(*low);
    CHECK_FALSE(*high);
  }
  SUBCASE("jobs of equal share: equally") {
    read(ref(low_key), pull_weight(0, 2));
    read(ref(high_key), pull_weight(0, 2));
    size_t answered = 0;
    serve_in_order(*this, encoded, answered, 50);
    auto bytes = serve_in_order(*this, encoded, answered, 200);
    CHECK(bytes[low_key.second] == bytes[high_key.second]);
  }
  SUBCASE("a heavier reader joining a pull widens it") {
    read(ref(low_key), pull_weight(0, 1));
    read(ref(high_key), pull_weight(0, 1));
    CHECK(pulls_to("w1").size() == 4);
    read(ref(high_key), pull_weight(0, 3));
    CHECK(pulls_to("w1").size() == 4 + 4); // three times the window: 6 of the second
  }
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
