#include "actors/scheduling/function_stats.hpp"

namespace swarm::actors {

namespace {

bool continuation(const detail::task_spec& t) {
  return t.fn == &t.own_fn;
}

const void* key_of(const detail::task_spec& t) {
  static const char continuations = 0;
  return continuation(t) ? &continuations : static_cast<const void*>(t.fn);
}

} // namespace

function_stats::entry& function_stats::of(const detail::task_spec& t) {
  auto& e = entries_[key_of(t)];
  if (e.name.empty()) e.name = continuation(t) ? "(continuations)" : t.name;
  return e;
}

function_stats::entry& function_stats::ended(const detail::task_spec& t) {
  auto& e = of(t);
  if (t.started_us == 0 || t.ended_us < t.started_us) return e;
  auto took = static_cast<double>(t.ended_us - t.started_us);
  if (!e.mean_run_us)
    e.mean_run_us = took;
  else
    *e.mean_run_us += 0.25 * (took - *e.mean_run_us);
  return e;
}

std::optional<double> function_stats::mean_run_us(const detail::task_spec& t) const {
  auto i = entries_.find(key_of(t));
  return i == entries_.end() ? std::nullopt : i->second.mean_run_us;
}

counts_by_function function_stats::counts() const {
  counts_by_function out;
  for (auto& [fn, e] : entries_) {
    auto& c = out[e.name];
    c.submitted += e.counts.submitted;
    c.finished += e.counts.finished;
    c.failed += e.counts.failed;
  }
  return out;
}

} // namespace swarm::actors
