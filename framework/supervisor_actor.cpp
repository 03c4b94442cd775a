#include "framework/detail/supervisor_actor.hpp"

#include <caf/all.hpp>

#include <deque>
#include <optional>
#include <utility>

namespace swarm::detail {

namespace {

using stop_timeout_atom = caf::atom_constant<caf::atom("sv_stopto")>;

/// The state of a supervisor actor: carries out the decisions of a supervisor_logic.
/// Stops are asynchronous (ask, wait for the down_msg, kill on timeout) and run one at a
/// time; starts are synchronous. Exits that arrive while a plan runs wait in `deferred_`.
class supervisor {
public:
  explicit supervisor(caf::event_based_actor* self) : self_(self) {}

  supervisor(const supervisor&) = delete;
  supervisor& operator=(const supervisor&) = delete;

  // Runs when the actor terminates, however it does (also when killed): children must
  // not outlive their supervisor.
  ~supervisor() {
    for (auto& child : actors_)
      if (child) caf::anon_send_exit(child, caf::exit_reason::kill);
  }

  caf::behavior make_behavior(supervisor_logic logic, supervisor_config cfg);

private:
  struct step {
    enum { stop, start } what;
    size_t index;
  };

  // Reports "<event> <child id>[ <detail>]".
  void emit(const char* event, size_t index, const char* detail = nullptr) {
    if (!on_event_) return;
    auto text = std::string(event) + ' ' + logic_->child(index).id;
    if (detail) text.append(1, ' ').append(detail);
    on_event_(text);
  }

  void emit(const char* event) {
    if (on_event_) on_event_(event);
  }

  std::optional<size_t> index_of(const caf::actor_addr& who) const {
    for (size_t i = 0; i < actors_.size(); ++i)
      if (actors_[i] && actors_[i].address() == who) return i;
    return std::nullopt;
  }

  bool start_child(size_t index, const char* event);
  void begin_stop(size_t index);
  void begin_shutdown(caf::error reason);
  void on_down(const caf::down_msg& msg);
  void on_exit(const caf::exit_msg& msg);
  void on_stop_timeout(uint64_t seq);
  void plan_exit(size_t index, exit_kind how);
  void plan_stop_all();
  void run_plan();
  void forget_deferred(size_t index);
  std::string describe(const caf::error& reason) const {
    if (reason.category() == caf::atom("swarm_sup"))
      return to_string(static_cast<supervisor_error>(reason.code()));
    if (reason == caf::exit_reason::user_shutdown) return "shut down";
    return self_->system().render(reason);
  }
  void tell_gone(size_t index, const std::string& why) {
    if (children_[index].gone) children_[index].gone(why);
  }

  caf::event_based_actor* self_;
  std::optional<supervisor_logic> logic_;
  std::vector<supervised_child> children_;
  std::vector<caf::actor> actors_; // null while not running
  std::function<void(const std::string&)> on_event_;
  std::deque<step> plan_;
  std::optional<size_t> stopping_; // the child whose down_msg a stop waits for
  uint64_t stop_seq_ = 0;          // tells a stale stop timeout from the current one
  std::deque<std::pair<size_t, exit_kind>> deferred_;
  bool terminating_ = false;
  caf::error exit_reason_;
};

caf::behavior supervisor::make_behavior(supervisor_logic logic, supervisor_config cfg) {
  logic_.emplace(std::move(logic));
  children_ = std::move(cfg.children);
  on_event_ = std::move(cfg.on_event);
  actors_.resize(children_.size());
  self_->set_down_handler([this](caf::down_msg& msg) { on_down(msg); });
  self_->set_exit_handler([this](caf::exit_msg& msg) { on_exit(msg); });
  for (size_t i = 0; i < children_.size(); ++i) {
    if (!start_child(i, "start")) {
      // As OTP's init: give up, stopping what already started.
      terminating_ = true;
      exit_reason_ = make_error(supervisor_error::start_failed);
      plan_stop_all();
      run_plan();
      break;
    }
  }
  return {
      [this](which_child_atom, const std::string& id) -> caf::result<caf::actor> {
        auto index = logic_->index_of(id);
        if (!index) return make_error(supervisor_error::unknown_child);
        if (!actors_[*index]) return make_error(supervisor_error::child_not_running);
        return actors_[*index];
      },
      [this](stop_timeout_atom, uint64_t seq) { on_stop_timeout(seq); },
  };
}

bool supervisor::start_child(size_t index, const char* event) {
  caf::actor child;
  try {
    child = children_[index].start(*self_);
  } catch (...) {
    child = nullptr;
  }
  if (!child) {
    emit("start_failed", index);
    return false;
  }
  self_->monitor(child);
  actors_[index] = std::move(child);
  emit(event, index);
  return true;
}

void supervisor::begin_stop(size_t index) {
  stopping_ = index;
  ++stop_seq_;
  const auto& policy = logic_->child(index).shutdown;
  if (policy.brutal_kill) {
    emit("kill", index);
    self_->send_exit(actors_[index], caf::exit_reason::kill);
    return;
  }
  self_->send_exit(actors_[index], caf::exit_reason::user_shutdown);
  if (policy.timeout != std::chrono::milliseconds::max())
    self_->delayed_send(self_, policy.timeout, stop_timeout_atom::value, stop_seq_);
}

void supervisor::on_stop_timeout(uint64_t seq) {
  if (!stopping_ || seq != stop_seq_) return;
  emit("kill", *stopping_);
  self_->send_exit(actors_[*stopping_], caf::exit_reason::kill);
}

void supervisor::on_down(const caf::down_msg& msg) {
  auto index = index_of(msg.source);
  if (!index) return;
  actors_[*index] = nullptr;
  if (stopping_ == index) {
    stopping_.reset();
    emit("stop", *index);
    run_plan();
    return;
  }
  const auto how = classify(msg.reason);
  emit("exit", *index, to_string(how));
  if (terminating_) return; // its stop step, if any, finds it gone
  if (stopping_) {
    deferred_.emplace_back(*index, how);
    return;
  }
  plan_exit(*index, how);
  run_plan();
}

void supervisor::on_exit(const caf::exit_msg& msg) {
  // Children are monitored, not linked; links from them tell nothing new.
  if (!msg.reason || index_of(msg.source)) return;
  begin_shutdown(msg.reason);
}

void supervisor::begin_shutdown(caf::error reason) {
  if (terminating_) return;
  terminating_ = true;
  exit_reason_ = std::move(reason);
  emit("shutdown");
  plan_stop_all();
  run_plan();
}

void supervisor::plan_exit(size_t index, exit_kind how) {
  auto decision = logic_->on_child_exit(index, how, self_->clock().now());
  for (auto i : decision.remove) {
    emit("remove", i);
    tell_gone(i, "removed by its supervisor after it exited (" +
                     std::string{to_string(how)} + ")");
  }
  switch (decision.what) {
  case supervisor_decision::action::none:
    return;
  case supervisor_decision::action::escalate:
    emit("escalate");
    terminating_ = true;
    exit_reason_ = make_error(supervisor_error::intensity_exceeded);
    break;
  case supervisor_decision::action::restart:
    break;
  }
  for (auto i : decision.stop)
    plan_.push_back(step{step::stop, i});
  for (auto i : decision.start)
    plan_.push_back(step{step::start, i});
}

void supervisor::plan_stop_all() {
  logic_->shutdown();
  plan_.clear();
  deferred_.clear();
  for (size_t i = actors_.size(); i-- > 0;)
    if (actors_[i] && stopping_ != i) plan_.push_back(step{step::stop, i});
}

void supervisor::forget_deferred(size_t index) {
  for (auto i = deferred_.begin(); i != deferred_.end();)
    i = i->first == index ? deferred_.erase(i) : i + 1;
}

void supervisor::run_plan() {
  for (;;) {
    while (!stopping_ && !plan_.empty()) {
      auto next = plan_.front();
      plan_.pop_front();
      // A child that died on its own while the plan ran is stopped already, and its
      // exit is folded into this restart (as OTP does).
      forget_deferred(next.index);
      if (next.what == step::stop) {
        if (actors_[next.index]) begin_stop(next.index);
      } else if (!start_child(next.index, "restart")) {
        deferred_.emplace_back(next.index, exit_kind::failure);
      }
    }
    if (stopping_) return;
    if (terminating_) {
      for (size_t i = 0; i < children_.size(); ++i)
        tell_gone(i, "its supervisor stopped: " + describe(exit_reason_));
      self_->quit(exit_reason_);
      return;
    }
    if (deferred_.empty()) return;
    auto [index, how] = deferred_.front();
    deferred_.pop_front();
    plan_exit(index, how);
  }
}

} // namespace

caf::error make_error(supervisor_error x) {
  return caf::error{static_cast<uint8_t>(x), caf::atom("swarm_sup")};
}

const char* to_string(supervisor_error x) {
  switch (x) {
  case supervisor_error::intensity_exceeded:
    return "intensity_exceeded";
  case supervisor_error::start_failed:
    return "start_failed";
  case supervisor_error::unknown_child:
    return "unknown_child";
  case supervisor_error::child_not_running:
    return "child_not_running";
  }
  return "?";
}

exit_kind classify(const caf::error& reason) {
  if (!reason || reason == caf::exit_reason::normal) return exit_kind::normal;
  if (reason == caf::exit_reason::user_shutdown) return exit_kind::shutdown;
  return exit_kind::failure;
}

caf::actor spawn_supervisor(caf::actor_system& sys, supervisor_config cfg) {
  std::vector<child_policy> policies;
  policies.reserve(cfg.children.size());
  for (const auto& child : cfg.children)
    policies.push_back(child.policy);
  // Built here so that a bad spec throws to the caller, not inside the actor.
  supervisor_logic logic{cfg.how, cfg.intensity, std::move(policies)};
  using actor_type = caf::stateful_actor<supervisor>;
  // Passed as spawn arguments, not captures: CAF 0.17 dereferences a null argument tuple
  // for argument-less spawns (harmless, but UBSan reports it).
  auto init = [](actor_type* self, supervisor_logic x, supervisor_config y) {
    return self->state.make_behavior(std::move(x), std::move(y));
  };
  return sys.spawn(init, std::move(logic), std::move(cfg));
}

caf::expected<caf::actor> which_child(caf::actor_system& sys, const caf::actor& sup,
                                      const std::string& id,
                                      std::chrono::milliseconds timeout) {
  caf::scoped_actor self{sys};
  caf::expected<caf::actor> result{caf::sec::request_timeout};
  self->request(sup, timeout, which_child_atom::value, id)
      .receive([&](const caf::actor& child) { result = child; },
               [&](caf::error& err) { result = std::move(err); });
  return result;
}

} // namespace swarm::detail
