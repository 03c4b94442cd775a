#include "framework/detail/object_slot.hpp"

#include <thread>

namespace swarm::detail {

namespace {

// The hook of the task-running thread this code runs on, if any.
thread_local blocking_hook* current_hook = nullptr;

// Yielding a while before sleeping saves a sleep and wake-up (15-55 us on a small VM)
// when the producer runs on a thread of its own and is about to finish; when it shares
// the waiter's cores (CAF scheduler threads) it only delays it. Measured by `swarm
// bench`.
constexpr int spin_rounds = 200;

} // namespace

store_lease::~store_lease() = default;

void store_lease::bind(std::weak_ptr<object_slot>) {}

result<restored_value> store_lease::restore(const type_descriptor& type) {
  return error{errc::object_lost, "this store cannot read back a spilled " + type.name};
}

blocking_hook::~blocking_hook() = default;

void set_thread_blocking_hook(blocking_hook* hook) {
  current_hook = hook;
}

blocked_section::blocked_section() : hook_(current_hook) {
  if (hook_) hook_->on_block();
}

blocked_section::~blocked_section() {
  if (hook_) hook_->on_unblock();
}

object_slot::object_slot(object_id id) : id_(id) {}

object_slot::~object_slot() = default;

bool object_slot::set_value(boxed_value v, std::unique_ptr<store_lease> lease) {
  return complete(state::ready, std::move(v), {}, std::move(lease));
}

bool object_slot::set_error(error e) {
  return complete(state::failed, {}, std::move(e), nullptr);
}

bool object_slot::complete(state s, boxed_value v, error e,
                           std::unique_ptr<store_lease> lease) {
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (state_.load(std::memory_order_relaxed) != state::pending) return false;
    value_ = std::move(v);
    error_ = std::move(e);
    lease_ = std::move(lease);
    if (lease_) {
      last_use_.store(clock::now().time_since_epoch().count(), std::memory_order_relaxed);
      lease_->bind(weak_from_this());
    }
    state_.store(s, std::memory_order_release);
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  for (auto& f : callbacks)
    f();
  return true;
}

void object_slot::free() {
  std::vector<std::function<void()>> callbacks;
  boxed_value dropped;
  std::unique_ptr<store_lease> released;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (state_.load(std::memory_order_relaxed) == state::freed) return;
    dropped = std::move(value_);
    released = std::move(lease_);
    error_ = {errc::object_freed, "object " + id_.to_string() + " was freed"};
    state_.store(state::freed, std::memory_order_release);
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  for (auto& f : callbacks)
    f();
}

bool object_slot::wait_until(clock::time_point deadline) const {
  if (done()) return true;
  for (int i = 0; spin_ && i < spin_rounds; ++i) {
    std::this_thread::yield();
    if (done()) return true;
  }
  blocked_section guard;
  std::unique_lock<std::mutex> lock{mtx_};
  return cv_.wait_until(lock, deadline, [this] { return done(); });
}

result<boxed_value> object_slot::read() const {
  std::lock_guard<std::mutex> guard{mtx_};
  switch (state_.load(std::memory_order_relaxed)) {
  case state::ready:
    if (lease_) {
      last_use_.store(clock::now().time_since_epoch().count(), std::memory_order_relaxed);
      if (spilled_) return restore();
    }
    return value_;
  case state::pending:
    return error{errc::timeout, "object " + id_.to_string() + " is not ready"};
  default:
    return error_;
  }
}

result<boxed_value> object_slot::restore() const {
  auto back = lease_->restore(*value_.type);
  if (!back) return back.err();
  if (!back->kept) return std::move(back->value);
  value_.ptr = std::move(back->value.ptr);
  spilled_ = false;
  return value_;
}

result<bool>
object_slot::spill(const std::function<result<void>(const boxed_value&)>& write) {
  std::unique_lock<std::mutex> lock{mtx_, std::try_to_lock};
  if (!lock || state_.load(std::memory_order_relaxed) != state::ready || spilled_ ||
      !lease_ || value_.ptr.use_count() != 1)
    return false;
  if (auto ok = write(value_); !ok) return ok.err();
  value_.ptr.reset();
  spilled_ = true;
  return true;
}

bool object_slot::spilled() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return spilled_;
}

void object_slot::when_done(std::function<void()> f) {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (state_.load(std::memory_order_relaxed) == state::pending) {
      callbacks_.push_back(std::move(f));
      return;
    }
  }
  f();
}

void object_slot::set_producer(std::weak_ptr<task_spec> task) {
  std::lock_guard<std::mutex> guard{mtx_};
  producer_ = std::move(task);
}

std::shared_ptr<task_spec> object_slot::producer() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return producer_.lock();
}

void object_slot::set_location(std::optional<location> where) {
  std::lock_guard<std::mutex> guard{mtx_};
  location_ = std::move(where);
}

std::optional<object_slot::location> object_slot::primary_copy() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return location_;
}

std::vector<bool> wait_for_slots(const std::vector<object_slot*>& slots, size_t k,
                                 object_slot::clock::time_point deadline) {
  struct waiter {
    // Guards done (with cv): the threads completing slots add, the caller waits; shared
    // (make_shared) as callbacks may run after the wait returns.
    std::mutex mtx;
    std::condition_variable cv;
    size_t done = 0;
  };
  auto w = std::make_shared<waiter>();
  k = std::min(k, slots.size());
  for (auto* s : slots)
    s->when_done([w] {
      {
        std::lock_guard<std::mutex> guard{w->mtx};
        ++w->done;
      }
      w->cv.notify_all();
    });
  {
    std::unique_lock<std::mutex> lock{w->mtx};
    if (w->done < k) {
      blocked_section guard;
      w->cv.wait_until(lock, deadline, [&] { return w->done >= k; });
    }
  }
  std::vector<bool> ready;
  ready.reserve(slots.size());
  for (auto* s : slots)
    ready.push_back(s->done());
  return ready;
}

} // namespace swarm::detail
