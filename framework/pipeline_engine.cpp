#include "framework/detail/pipeline_engine.hpp"

#include <exception>

namespace swarm::detail {

namespace {

slot_ptr failed_slot(error e) {
  auto s = std::make_shared<object_slot>(object_id{});
  s->set_error(std::move(e));
  return s;
}

} // namespace

pipeline_engine::pipeline_engine(std::vector<stage_plan> stages, size_t window)
    : stages_(std::move(stages)), window_(window == 0 ? 1 : window) {
  for (auto& s : stages_) {
    loads_.emplace_back(s.replicas.size(), 0);
    cursor_.push_back(0);
  }
}

result<void> pipeline_engine::push(const std::function<slot_ptr()>& make,
                                   std::chrono::milliseconds timeout) {
  uint64_t seq = 0;
  {
    std::unique_lock<std::mutex> guard{mtx_};
    auto has_room = [this] { return closed_ || counts_.in_flight < window_; };
    if (timeout == std::chrono::milliseconds::max())
      room_.wait(guard, has_room);
    else if (!room_.wait_for(guard, timeout, has_room))
      return error{errc::timeout, "the pipeline's " + std::to_string(window_) +
                                      " items in flight did not move within " +
                                      std::to_string(timeout.count()) + " ms"};
    if (closed_)
      return error{errc::invalid_argument, "push on a pipeline that was closed"};
    seq = next_seq_++;
    items_[seq];
    ++counts_.pushed;
    ++counts_.in_flight;
  }
  slot_ptr in;
  try {
    in = make();
  } catch (const std::exception& e) {
    in = failed_slot(
        {errc::invalid_argument, std::string{"making the item: "} + e.what()});
  }
  start(seq, 0, std::move(in), 0);
  return {};
}

void pipeline_engine::close() {
  std::lock_guard<std::mutex> guard{mtx_};
  closed_ = true;
  room_.notify_all();
  ready_.notify_all();
}

result<std::optional<pipeline_outcome>>
pipeline_engine::next(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> guard{mtx_};
  auto can = [this] {
    auto i = items_.find(next_out_);
    return (i != items_.end() && i->second.settled) ||
           (closed_ && next_out_ == next_seq_);
  };
  if (timeout == std::chrono::milliseconds::max())
    ready_.wait(guard, can);
  else if (!ready_.wait_for(guard, timeout, can))
    return error{errc::timeout, "no pipeline output within " +
                                    std::to_string(timeout.count()) + " ms (item " +
                                    std::to_string(next_out_) + " is still on its way)"};
  auto i = items_.find(next_out_);
  if (i == items_.end()) return std::optional<pipeline_outcome>{};
  auto out = std::move(i->second.outcome);
  items_.erase(i);
  ++next_out_;
  ++counts_.taken;
  --counts_.in_flight;
  room_.notify_one();
  return out;
}

pipeline_counts pipeline_engine::counts() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return counts_;
}

size_t pipeline_engine::pick(size_t stage, size_t avoid) {
  auto& loads = loads_[stage];
  auto& replicas = stages_[stage].replicas;
  auto n = loads.size();
  auto usable = [&](size_t c) {
    return c != avoid && (!replicas[c].alive || replicas[c].alive());
  };
  size_t r = n;
  for (size_t k = 0; k < n; ++k) {
    auto c = (cursor_[stage] + k) % n;
    if (!usable(c)) continue;
    if (r == n) r = c;
    if (stages_[stage].routing == stage_routing::round_robin) break;
    if (loads[c] < loads[r]) r = c;
  }
  // None usable: the one that failed, or the next in turn (its call says why).
  if (r == n) r = avoid < n ? avoid : cursor_[stage] % n;
  cursor_[stage] = r + 1;
  ++loads[r];
  return r;
}

size_t pipeline_engine::next_main(size_t stage) const {
  auto n = stage + 1;
  while (n < stages_.size() && stages_[n].side)
    ++n;
  return n;
}

void pipeline_engine::start(uint64_t seq, size_t stage, slot_ptr input, uint32_t attempt,
                            size_t avoid) {
  size_t replica = 0;
  stage_call call;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    replica = pick(stage, avoid);
    call = stages_[stage].replicas[replica].call;
  }
  slot_ptr out;
  try {
    out = input->current() == object_slot::state::failed ? input : call(input);
  } catch (const std::exception& e) {
    out = failed_slot({errc::invalid_argument, e.what()});
  }
  std::weak_ptr<pipeline_engine> self = shared_from_this();
  // The callback holds the output until it is done (the slot drops its callbacks then).
  out->when_done([self, seq, stage, replica, input, out, attempt] {
    if (auto e = self.lock()) e->finished(seq, stage, replica, input, out, attempt);
  });
}

void pipeline_engine::finished(uint64_t seq, size_t stage, size_t replica,
                               const slot_ptr& input, const slot_ptr& out,
                               uint32_t attempt) {
  std::vector<size_t> then;
  bool again = false;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    --loads_[stage][replica];
    auto& plan = stages_[stage];
    bool failed = out->current() != object_slot::state::ready;
    // An input that failed upstream fails here as it is: sending it again changes
    // nothing.
    if (failed && out != input && attempt < plan.max_redeliveries) {
      ++counts_.redeliveries;
      again = true;
    } else {
      auto i = items_.find(seq);
      if (i == items_.end()) return;
      auto& it = i->second;
      if (plan.side) {
        --it.open_sides;
        if (failed && (!it.outcome || it.outcome->failed_stage.empty()))
          it.outcome = pipeline_outcome{out, plan.name, attempt + 1};
      } else if (failed) {
        it.outcome = pipeline_outcome{out, plan.name, attempt + 1};
      } else {
        auto n = next_main(stage);
        for (auto s = stage + 1; s < n; ++s)
          then.push_back(s);
        it.open_sides += static_cast<uint32_t>(then.size());
        if (n < stages_.size())
          then.push_back(n);
        else if (!it.outcome)
          it.outcome = pipeline_outcome{out, "", attempt + 1};
      }
      settle(seq);
    }
  }
  // Sent again to another replica when one lives.
  if (again) return start(seq, stage, input, attempt + 1, replica);
  for (auto s : then)
    start(seq, s, out, 0);
}

void pipeline_engine::settle(uint64_t seq) {
  auto& it = items_[seq];
  if (it.settled || !it.outcome || it.open_sides > 0) return;
  it.settled = true;
  if (seq == next_out_) ready_.notify_all();
}

} // namespace swarm::detail
