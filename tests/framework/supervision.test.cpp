#include "framework/supervision.hpp"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace swarm;
using namespace std::chrono_literals;

namespace {

using action = supervisor_decision::action;
using indices = std::vector<size_t>;

const std::chrono::steady_clock::time_point t0{};

std::vector<child_policy> children(std::initializer_list<restart_type> types) {
  std::vector<child_policy> result;
  for (auto type : types)
    result.push_back(
        child_policy{std::string(1, static_cast<char>('a' + result.size())), type, {}});
  return result;
}

supervisor_logic make(strategy how, std::initializer_list<restart_type> types,
                      restart_intensity limits = {}) {
  return supervisor_logic{how, limits, children(types)};
}

constexpr auto permanent = restart_type::permanent;
constexpr auto transient = restart_type::transient;
constexpr auto temporary = restart_type::temporary;

} // namespace

// -- restart_window -----------------------------------------------------------

TEST_CASE("restart_window allows max_restarts restarts within the period and no more") {
  restart_window w{{3, 1000ms}};
  CHECK(w.allow(t0));
  CHECK(w.allow(t0 + 10ms));
  CHECK(w.allow(t0 + 20ms));
  CHECK(w.count() == 3);
  CHECK_FALSE(w.allow(t0 + 30ms));
  CHECK(w.count() == 3);
}

TEST_CASE("restart_window forgets restarts once they are a period old") {
  restart_window w{{2, 1000ms}};
  CHECK(w.allow(t0));
  CHECK(w.allow(t0 + 500ms));
  CHECK_FALSE(w.allow(t0 + 999ms));
  // The first restart expires at exactly one period.
  CHECK(w.allow(t0 + 1000ms));
  CHECK(w.count() == 2);
  CHECK_FALSE(w.allow(t0 + 1400ms));
  // The window slides: both older restarts are gone after another period.
  CHECK(w.allow(t0 + 2000ms));
  CHECK(w.count() == 1);
}

TEST_CASE("restart_window with zero max_restarts allows no restart at all") {
  restart_window w{{0, 1000ms}};
  CHECK_FALSE(w.allow(t0));
  CHECK(w.count() == 0);
}

// -- restart types ------------------------------------------------------------

TEST_CASE("a permanent child is restarted however it exits") {
  auto logic = make(strategy::one_for_one, {permanent}, {10, 1000ms});
  for (auto how : {exit_kind::normal, exit_kind::shutdown, exit_kind::failure}) {
    CAPTURE(to_string(how));
    auto d = logic.on_child_exit(0, how, t0);
    CHECK(d.what == action::restart);
    CHECK(d.start == indices{0});
    CHECK(d.stop.empty());
    CHECK(d.remove.empty());
    CHECK(logic.running(0));
  }
}

TEST_CASE("a transient child is restarted only when it fails") {
  auto logic = make(strategy::one_for_one, {transient, transient, transient});
  auto d = logic.on_child_exit(0, exit_kind::failure, t0);
  CHECK(d.what == action::restart);
  CHECK(d.start == indices{0});

  d = logic.on_child_exit(1, exit_kind::normal, t0);
  CHECK(d.what == action::none);
  CHECK(d.start.empty());
  CHECK(d.remove == indices{1});
  CHECK(logic.removed(1));

  d = logic.on_child_exit(2, exit_kind::shutdown, t0);
  CHECK(d.what == action::none);
  CHECK(d.remove == indices{2});
  CHECK(logic.removed(2));
}

TEST_CASE("a temporary child is never restarted and is removed when it exits") {
  auto logic = make(strategy::one_for_one, {temporary, permanent});
  auto d = logic.on_child_exit(0, exit_kind::failure, t0);
  CHECK(d.what == action::none);
  CHECK(d.remove == indices{0});
  CHECK(logic.removed(0));
  CHECK(logic.running(1));
  // A removed child's later exit reports are ignored.
  d = logic.on_child_exit(0, exit_kind::failure, t0);
  CHECK(d.what == action::none);
  CHECK(d.remove.empty());
  // Not restarting does not use up the intensity.
  CHECK(logic.window().count() == 0);
}

// -- strategies ---------------------------------------------------------------

TEST_CASE("one_for_one restarts only the failed child") {
  auto logic = make(strategy::one_for_one, {permanent, permanent, permanent});
  auto d = logic.on_child_exit(1, exit_kind::failure, t0);
  CHECK(d.what == action::restart);
  CHECK(d.stop.empty());
  CHECK(d.start == indices{1});
  CHECK(d.remove.empty());
  for (size_t i = 0; i < 3; ++i)
    CHECK(logic.running(i));
}

TEST_CASE(
    "one_for_all stops the others in reverse start order and restarts all in order") {
  auto logic = make(strategy::one_for_all, {permanent, permanent, permanent, permanent});
  auto d = logic.on_child_exit(1, exit_kind::failure, t0);
  CHECK(d.what == action::restart);
  CHECK(d.stop == indices{3, 2, 0});
  CHECK(d.start == indices{0, 1, 2, 3});
  CHECK(d.remove.empty());
}

TEST_CASE("rest_for_one restarts the failed child and everything started after it") {
  auto logic = make(strategy::rest_for_one, {permanent, permanent, permanent, permanent});
  auto d = logic.on_child_exit(1, exit_kind::failure, t0);
  CHECK(d.what == action::restart);
  CHECK(d.stop == indices{3, 2});
  CHECK(d.start == indices{1, 2, 3});
  CHECK(d.remove.empty());
}

TEST_CASE("rest_for_one on the last child restarts only that child") {
  auto logic = make(strategy::rest_for_one, {permanent, permanent, permanent});
  auto d = logic.on_child_exit(2, exit_kind::failure, t0);
  CHECK(d.stop.empty());
  CHECK(d.start == indices{2});
}

TEST_CASE("a group restart removes the temporary children it stops") {
  auto logic = make(strategy::one_for_all, {temporary, permanent, transient, temporary});
  auto d = logic.on_child_exit(1, exit_kind::failure, t0);
  CHECK(d.what == action::restart);
  CHECK(d.stop == indices{3, 2, 0});
  CHECK(d.start == indices{1, 2});
  CHECK(d.remove == indices{3, 0});
  CHECK(logic.removed(0));
  CHECK(logic.removed(3));
  CHECK(logic.running(2));
}

TEST_CASE("removed children are neither stopped nor restarted by later group restarts") {
  auto logic = make(strategy::one_for_all, {permanent, transient, temporary, permanent});
  CHECK(logic.on_child_exit(1, exit_kind::normal, t0).remove == indices{1});
  CHECK(logic.on_child_exit(2, exit_kind::failure, t0).remove == indices{2});
  auto d = logic.on_child_exit(3, exit_kind::failure, t0);
  CHECK(d.what == action::restart);
  CHECK(d.stop == indices{0});
  CHECK(d.start == indices{0, 3});
  CHECK(d.remove.empty());

  auto rest = make(strategy::rest_for_one, {permanent, permanent, temporary, permanent});
  CHECK(rest.on_child_exit(2, exit_kind::normal, t0).remove == indices{2});
  d = rest.on_child_exit(0, exit_kind::failure, t0);
  CHECK(d.stop == indices{3, 1});
  CHECK(d.start == indices{0, 1, 3});
}

TEST_CASE("a transient child stopped by a group restart is restarted with the group") {
  auto logic = make(strategy::rest_for_one, {permanent, transient});
  auto d = logic.on_child_exit(0, exit_kind::failure, t0);
  CHECK(d.stop == indices{1});
  CHECK(d.start == indices{0, 1});
  CHECK(d.remove.empty());
}

// -- intensity ----------------------------------------------------------------

TEST_CASE(
    "exceeding the restart intensity escalates and stops all children in reverse order") {
  auto logic = make(strategy::one_for_one, {permanent, permanent, permanent, permanent},
                    {2, 1000ms});
  CHECK(logic.on_child_exit(2, exit_kind::failure, t0).what == action::restart);
  CHECK(logic.on_child_exit(2, exit_kind::failure, t0 + 100ms).what == action::restart);
  auto d = logic.on_child_exit(2, exit_kind::failure, t0 + 200ms);
  CHECK(d.what == action::escalate);
  CHECK(d.stop == indices{3, 1, 0});
  CHECK(d.start.empty());
  CHECK(logic.terminated());
  for (size_t i = 0; i < 4; ++i)
    CHECK_FALSE(logic.running(i));
  // After escalating, further exits are ignored.
  CHECK(logic.on_child_exit(0, exit_kind::failure, t0 + 300ms).what == action::none);
}

TEST_CASE("restarts of different children share one intensity") {
  auto logic = make(strategy::one_for_one, {permanent, permanent}, {1, 1000ms});
  CHECK(logic.on_child_exit(0, exit_kind::failure, t0).what == action::restart);
  auto d = logic.on_child_exit(1, exit_kind::failure, t0 + 1ms);
  CHECK(d.what == action::escalate);
  CHECK(d.stop == indices{0});
}

TEST_CASE("restarts spread wider than the period never escalate") {
  auto logic = make(strategy::one_for_all, {permanent, permanent}, {1, 1000ms});
  for (int i = 0; i < 10; ++i) {
    auto d = logic.on_child_exit(0, exit_kind::failure, t0 + i * 1000ms);
    CHECK(d.what == action::restart);
    CHECK(d.start == indices{0, 1});
  }
}

TEST_CASE("a normal exit of a transient child does not count towards the intensity") {
  auto logic = make(strategy::one_for_one, {transient, permanent}, {1, 1000ms});
  CHECK(logic.on_child_exit(0, exit_kind::normal, t0).what == action::none);
  CHECK(logic.on_child_exit(1, exit_kind::failure, t0).what == action::restart);
}

TEST_CASE("zero max_restarts escalates on the first restart") {
  auto logic = make(strategy::rest_for_one, {permanent, temporary}, {0, 1000ms});
  // A temporary exit needs no restart, so it is fine.
  CHECK(logic.on_child_exit(1, exit_kind::failure, t0).what == action::none);
  auto d = logic.on_child_exit(0, exit_kind::failure, t0);
  CHECK(d.what == action::escalate);
  CHECK(d.stop.empty());
}

// -- lifecycle ----------------------------------------------------------------

TEST_CASE("shutdown lists the running children in reverse start order") {
  auto logic = make(strategy::one_for_one, {permanent, temporary, permanent});
  logic.on_child_exit(1, exit_kind::normal, t0);
  CHECK(logic.shutdown() == indices{2, 0});
  CHECK(logic.terminated());
  CHECK(logic.shutdown().empty());
}

TEST_CASE("child ids must be unique and can be looked up") {
  auto logic = make(strategy::one_for_one, {permanent, permanent});
  CHECK(logic.index_of("b") == 1u);
  CHECK_FALSE(logic.index_of("z"));
  CHECK(logic.child(0).id == "a");
  auto twins = std::vector<child_policy>{{"x", permanent, {}}, {"x", temporary, {}}};
  CHECK_THROWS_AS(supervisor_logic(strategy::one_for_one, {}, twins),
                  std::invalid_argument);
}

TEST_CASE("enums print their OTP names") {
  CHECK(std::string(to_string(strategy::rest_for_one)) == "rest_for_one");
  CHECK(std::string(to_string(restart_type::transient)) == "transient");
  CHECK(std::string(to_string(exit_kind::shutdown)) == "shutdown");
}
