#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "actors/user_actors/applied_calls.hpp"
#include "framework/detail/type_descriptor.hpp"

using swarm::errc;
using swarm::object_id;
using swarm::actors::applied_calls;
using swarm::actors::call_outcome;
using swarm::detail::boxed_value;
using swarm::detail::type_of;

namespace {

call_outcome value_of(boxed_value v) {
  call_outcome o;
  o.value = std::move(v);
  return o;
}

// A user type: its answers are not kept (they may hold refs or handles).
struct point {
  int x = 0;
};
template <class Inspector> bool inspect(Inspector& f, point& p) {
  return f(p.x);
}

} // namespace

TEST_CASE("a state saved with the calls run keeps their answers, and a restored state "
          "answers them again") {
  applied_calls ran{8};
  ran.add({7, 1}, value_of(boxed_value::make(110)));
  call_outcome failed;
  failed.what = call_outcome::kind::error;
  failed.err = {errc::application_error, "no such account"};
  ran.add({7, 2}, failed);
  ran.add({7, 3}, value_of(boxed_value::make(std::map<std::string, int>{{"a", 1}})));
  auto saved = ran.wrap({1, 2, 3});
  CHECK(saved != std::vector<uint8_t>{1, 2, 3});

  applied_calls restored{8};
  CHECK(restored.unwrap(saved) == std::vector<uint8_t>{1, 2, 3});
  CHECK(restored.size() == 3);
  CHECK(restored.find({7, 4}) == nullptr);
  CHECK(restored.find({8, 1}) == nullptr);
  auto* first = restored.find({7, 1});
  REQUIRE(first);
  auto again = applied_calls::outcome_of(*first, &type_of<int>(), "'add'");
  REQUIRE(again.what == call_outcome::kind::value);
  CHECK(*static_cast<const int*>(again.value.ptr.get()) == 110);
  auto err = applied_calls::outcome_of(*restored.find({7, 2}), &type_of<int>(), "'add'");
  CHECK(err.what == call_outcome::kind::error);
  CHECK(err.err.code == errc::application_error);
  CHECK(err.err.message == "no such account");
  auto map = applied_calls::outcome_of(*restored.find({7, 3}),
                                       &type_of<std::map<std::string, int>>(), "'m'");
  REQUIRE(map.what == call_outcome::kind::value);
  CHECK(static_cast<const std::map<std::string, int>*>(map.value.ptr.get())->at("a") ==
        1);
}

TEST_CASE("a state keeps the last calls of each caller, of the callers that called last, "
          "and none with a window of 0") {
  applied_calls ran{2, 2};
  for (uint64_t i = 1; i <= 5; ++i)
    ran.add({1, i}, value_of(boxed_value::make(static_cast<int>(i))));
  CHECK(ran.size() == 2);
  CHECK(ran.find({1, 3}) == nullptr);
  CHECK(ran.find({1, 4}));
  CHECK(ran.find({1, 5}));
  // Another caller's calls never push caller 1's out.
  for (uint64_t i = 1; i <= 5; ++i)
    ran.add({2, i}, value_of(boxed_value::make(static_cast<int>(i))));
  CHECK(ran.find({1, 5}));
  CHECK(ran.find({2, 5}));
  CHECK(ran.size() == 4);
  // A third caller: caller 1, who called least lately, goes; a restore keeps the order.
  ran.add({3, 1}, value_of(boxed_value::make(1)));
  CHECK(ran.find({1, 5}) == nullptr);
  applied_calls restored{2, 2};
  restored.unwrap(ran.wrap({}));
  CHECK(restored.size() == 3);
  restored.add({4, 1}, value_of(boxed_value::make(1)));
  CHECK(restored.find({2, 5}) == nullptr);
  CHECK(restored.find({3, 1}));
  CHECK(restored.find({4, 1}));
  // A crash's effect is in no state: it is not kept.
  call_outcome crash;
  crash.what = call_outcome::kind::crash;
  restored.add({4, 2}, crash);
  CHECK(restored.find({4, 2}) == nullptr);

  applied_calls none{0};
  none.add({1, 1}, value_of(boxed_value::make(1)));
  CHECK(none.size() == 0);
  CHECK(none.wrap({4, 2}) == std::vector<uint8_t>{4, 2});
}

TEST_CASE(
    "a call whose answer a state cannot keep is answered again as lost, saying why, "
    "and never run twice") {
  applied_calls ran{4};
  ran.add({1, 1}, value_of(boxed_value::make(point{3})));
  ran.add({1, 2}, value_of(boxed_value::make(
                      std::vector<uint8_t>(applied_calls::max_answer_bytes + 1))));
  applied_calls restored{4};
  restored.unwrap(ran.wrap({}));
  auto user = applied_calls::outcome_of(*restored.find({1, 1}), &type_of<point>(),
                                        "'at' on actor of type 'plot'");
  CHECK(user.what == call_outcome::kind::error);
  CHECK(user.err.code == errc::object_lost);
  CHECK(user.err.message.find("'at' on actor of type 'plot' ran already") == 0);
  CHECK(user.err.message.find("not plain data") != std::string::npos);
  auto big = applied_calls::outcome_of(*restored.find({1, 2}),
                                       &type_of<std::vector<uint8_t>>(), "'blob'");
  CHECK(big.err.code == errc::object_lost);
  CHECK(big.err.message.find(" bytes") != std::string::npos);
}

TEST_CASE("bytes saved without calls restore as they are, and a damaged saved state is "
          "refused saying so") {
  applied_calls ran{4};
  ran.add({1, 1}, value_of(boxed_value::make(1)));
  CHECK(ran.unwrap({9, 9, 9}) == std::vector<uint8_t>{9, 9, 9});
  CHECK(ran.size() == 0); // what it kept went with the state before
  CHECK(ran.unwrap({}).empty());
  ran.add({1, 1}, value_of(boxed_value::make(1)));
  auto saved = ran.wrap({5});
  saved.pop_back();
  try {
    ran.unwrap(saved);
    FAIL("a damaged state was taken");
  } catch (const swarm::failure& f) {
    CHECK(f.err().message.find("a saved state is damaged") == 0);
  }
}
