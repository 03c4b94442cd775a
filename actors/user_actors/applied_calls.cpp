#include "actors/user_actors/applied_calls.hpp"

#include <algorithm>
#include <array>

#include "framework/detail/callable_traits.hpp"
#include "transport/codec.hpp"

namespace swarm::actors {

namespace {

// The kind of an entry whose answer is not kept, past call_outcome's kinds.
constexpr uint8_t not_kept = 3;

// Marks a state `wrap` made; bytes without it are the actor's own, as saved before
// states kept calls.
constexpr std::array<uint8_t, 8> magic{0xF5, 'S', 'W', 'S', 'T', 'A', 'T', 1};

struct wrapped_state {
  std::vector<uint8_t> user;
  std::vector<applied_calls::entry> calls;
};

template <class Inspector> bool inspect(Inspector& f, wrapped_state& x) {
  return f(x.user, x.calls);
}

// Whether a value of this shape is plain data: no user type, ref or device buffer in it
// (a kept answer is decoded without a node to lend refs or map devices).
bool plain(const std::string& shape) {
  return shape.find_first_of("xrd") == std::string::npos;
}

} // namespace

void applied_calls::add(const object_id& id, const call_outcome& outcome) {
  if (window_ == 0 || outcome.what == call_outcome::kind::crash) return;
  entry e;
  e.id = id;
  e.kind = static_cast<uint8_t>(outcome.what);
  if (outcome.what == call_outcome::kind::error) {
    e.code = static_cast<uint32_t>(outcome.err.code);
    e.message = outcome.err.message;
  } else if (detail::forwarded_from(outcome.value)) {
    e.kind = not_kept;
    e.message = "its answer was a future";
  } else if (auto* type = outcome.value.type; !type || !plain(type->shape)) {
    e.kind = not_kept;
    e.message = "its answer (" + (type ? type->name : std::string{"none"}) +
                ") is not plain data";
  } else {
    type->encode(outcome.value.ptr.get(), e.value, nullptr);
    if (e.value.size() > max_answer_bytes) {
      e.kind = not_kept;
      e.message = "its answer was " + std::to_string(e.value.size()) + " bytes";
      e.value.clear();
    }
  }
  keep(std::move(e));
}

void applied_calls::keep(entry e) {
  auto& c = callers_[e.id.owner];
  c.last = ++count_;
  c.calls.push_back(std::move(e));
  while (c.calls.size() > window_)
    c.calls.pop_front();
  while (callers_.size() > max_callers_)
    callers_.erase(
        std::min_element(callers_.begin(), callers_.end(),
                         [](auto& a, auto& b) { return a.second.last < b.second.last; }));
}

size_t applied_calls::size() const noexcept {
  size_t n = 0;
  for (auto& [owner, c] : callers_)
    n += c.calls.size();
  return n;
}

const applied_calls::entry* applied_calls::find(const object_id& id) const {
  auto c = callers_.find(id.owner);
  if (c == callers_.end()) return nullptr;
  auto& calls = c->second.calls;
  auto i = std::find_if(calls.rbegin(), calls.rend(),
                        [&](const entry& e) { return e.id.seq == id.seq; });
  return i == calls.rend() ? nullptr : &*i;
}

call_outcome applied_calls::outcome_of(const entry& e,
                                       const detail::type_descriptor* type,
                                       const std::string& what) {
  call_outcome out;
  auto lost = [&](const std::string& why) {
    out.what = call_outcome::kind::error;
    out.err = {errc::object_lost, what + " ran already, and its answer did not reach " +
                                      "the caller; " + why +
                                      ", so it was not kept to answer again (the call " +
                                      "does not run twice)"};
    return out;
  };
  if (e.kind == not_kept) return lost(e.message);
  if (e.kind == static_cast<uint8_t>(call_outcome::kind::error)) {
    out.what = call_outcome::kind::error;
    out.err = {
        static_cast<errc>(std::min<uint32_t>(e.code, static_cast<uint32_t>(last_errc))),
        e.message};
    return out;
  }
  std::string why;
  auto value =
      type ? type->decode(e.value.data(), e.value.size(), why, nullptr) : nullptr;
  if (!value)
    return lost(type ? "its kept answer does not decode: " + why
                     : std::string{"its answer's type is not known here"});
  out.value = {std::move(value), type};
  return out;
}

std::vector<uint8_t> applied_calls::wrap(std::vector<uint8_t> user) const {
  if (window_ == 0) return user;
  // The callers in the order they called last, so that a restore keeps that order.
  std::vector<const caller*> order;
  for (auto& [owner, c] : callers_)
    order.push_back(&c);
  std::sort(order.begin(), order.end(),
            [](const caller* a, const caller* b) { return a->last < b->last; });
  wrapped_state s{std::move(user), {}};
  for (auto* c : order)
    s.calls.insert(s.calls.end(), c->calls.begin(), c->calls.end());
  auto body = encode(s);
  std::vector<uint8_t> out(magic.begin(), magic.end());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

std::vector<uint8_t> applied_calls::unwrap(const std::vector<uint8_t>& saved) {
  callers_.clear();
  if (saved.size() < magic.size() ||
      !std::equal(magic.begin(), magic.end(), saved.begin()))
    return saved;
  wrapped_state s;
  std::string why;
  if (!decode(saved.data() + magic.size(), saved.size() - magic.size(), s, why))
    throw failure{{errc::invalid_argument, "a saved state is damaged: " + why}};
  if (window_ > 0)
    for (auto& e : s.calls)
      keep(std::move(e));
  return std::move(s.user);
}

} // namespace swarm::actors
