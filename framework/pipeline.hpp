#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "framework/actor_handle.hpp"
#include "framework/context.hpp"
#include "framework/detail/pipeline_engine.hpp"

namespace swarm {

/// How a pipeline runs one stage.
struct stage_options {
  /// Actors of the stage, each fed its share of the items.
  uint32_t replicas = 1;
  stage_routing routing = stage_routing::least_loaded; ///< which replica takes an item
  /// How each replica is spawned (its node, resources, thread). A replica that crashes
  /// is restarted by its supervisor up to `actor.max_restarts` times (10 here).
  actor_options actor = restarting();
  /// Nodes to spread the replicas over, replica i on `nodes[i % size]`; empty: as
  /// `actor.node` says.
  std::vector<std::string> nodes = {};
  /// Times an item whose call to the stage failed is sent to it again before the item
  /// fails: items in flight to a replica that crashed are delivered again (at least
  /// once).
  uint32_t max_redeliveries = 3;
  /// The stage's name in errors; empty: its actor type's.
  std::string name = {};

  /// What a stage's actors default to: restarted up to 10 times.
  static actor_options restarting() {
    actor_options o;
    o.max_restarts = 10;
    return o;
  }
};

template <class In, class Out> class pipeline;

/// A pipeline started: items go in with `push` and come out, in the order pushed, from
/// `next`. At most `window` items are in flight (pushed and not yet taken): `push`
/// waits for room, so a slow stage or a slow reader slows the source, and memory stays
/// bounded end to end. Dropping it stops the stages' actors once their calls are done.
template <class In, class Out> class pipeline_run {
public:
  /// What an item gives at the end: `Out`, or `bool` (done) for a stage returning void.
  using output_type = std::conditional_t<std::is_void_v<Out>, bool, Out>;

  /// Feeds `item`, waiting up to `timeout` for room; `timeout` when none came, an
  /// error after `close`.
  result<void> push(In item, std::chrono::milliseconds timeout = forever) {
    auto* ctx = ctx_;
    return engine_->push([ctx, &item] { return ctx->put(std::move(item)).slot(); },
                         timeout);
  }

  /// No more items: `next` returns nullopt once the last was taken.
  void close() { engine_->close(); }

  /// The next item's output, in push order, waiting up to `timeout`: nullopt once closed
  /// and drained, an error when the item failed (naming the stage, after its
  /// redeliveries) or nothing came in time. For a last stage returning void, `true`.
  result<std::optional<output_type>> next(std::chrono::milliseconds timeout = forever) {
    auto o = engine_->next(timeout);
    if (!o) return o.err();
    if (!*o) return std::optional<output_type>{};
    auto& outcome = **o;
    if (!outcome.failed_stage.empty()) {
      auto e = outcome.slot->read().err();
      e.message = "stage '" + outcome.failed_stage + "' failed the item after " +
                  std::to_string(outcome.deliveries) + " deliveries: " + e.message;
      return e;
    }
    if constexpr (std::is_void_v<Out>) {
      return std::optional<bool>{true};
    } else {
      auto v = object_ref<Out>{outcome.slot}.get(std::chrono::milliseconds(0));
      if (!v) return v.err();
      return std::optional<Out>{std::move(*v)};
    }
  }

  /// Items pushed, taken, sent again, and in flight now.
  detail::pipeline_counts counts() const { return engine_->counts(); }

private:
  friend class pipeline<In, Out>;
  pipeline_run(context& ctx, std::shared_ptr<detail::pipeline_engine> engine)
      : ctx_(&ctx), engine_(std::move(engine)) {}

  context* ctx_;
  std::shared_ptr<detail::pipeline_engine> engine_;
};

/// A typed pipeline of actor stages, built one stage at a time and checked at compile
/// time: each stage's method takes what the stage before returns. Start with
/// `pipeline<T>{}` (items of `T` go in), add stages with `then` (the main path), side
/// branches with `tee` (they get each item there too; their outputs go nowhere: a
/// fan-out, or a sink beside the path), then `start` it on a runtime or in a task.
template <class In, class Out = In> class pipeline {
public:
  pipeline() = default;

  /// Adds a stage on the main path: items go through `method` of `cls`'s actors (a
  /// method returning a future, `object_ref<U>`, is async and gives `U`).
  template <class A, class R, class Arg>
  pipeline<In, detail::future_value_t<R>>
  then(const actor_class<A>& cls, R (A::*method)(Arg), stage_options o = {}) const {
    return add<detail::future_value_t<R>, R, Arg>(cls, method, std::move(o), false);
  }
  /// The same, for a const method.
  template <class A, class R, class Arg>
  pipeline<In, detail::future_value_t<R>>
  then(const actor_class<A>& cls, R (A::*method)(Arg) const, stage_options o = {}) const {
    return add<detail::future_value_t<R>, R, Arg>(cls, method, std::move(o), false);
  }

  /// Adds a side branch: each item's value here goes to `method` of `cls`'s actors too,
  /// and the item is done once they took it; the main path goes on with the same value.
  /// A pipeline does not start with one.
  template <class A, class R, class Arg>
  pipeline<In, Out> tee(const actor_class<A>& cls, R (A::*method)(Arg),
                        stage_options o = {}) const {
    return add<Out, R, Arg>(cls, method, std::move(o), true);
  }
  /// The same, for a const method.
  template <class A, class R, class Arg>
  pipeline<In, Out> tee(const actor_class<A>& cls, R (A::*method)(Arg) const,
                        stage_options o = {}) const {
    return add<Out, R, Arg>(cls, method, std::move(o), true);
  }

  /// Spawns every stage's replicas from `ctx` (a runtime, or a task's context) and
  /// starts the pipeline with at most `window` items in flight.
  pipeline_run<In, Out> start(context& ctx, size_t window = 64) const {
    std::vector<detail::stage_plan> plans;
    for (auto& make : stages_)
      plans.push_back(make(ctx));
    if (plans.empty() || plans.front().side)
      throw failure{{errc::invalid_argument,
                     "a pipeline needs a first stage on its main path (`then`)"}};
    return {ctx, std::make_shared<detail::pipeline_engine>(std::move(plans), window)};
  }

private:
  template <class I, class O> friend class pipeline;
  using maker = std::function<detail::stage_plan(context&)>;

  template <class Next, class R, class Arg, class A, class M>
  pipeline<In, Next> add(const actor_class<A>& cls, M method, stage_options o,
                         bool side) const {
    static_assert(!std::is_void_v<Out>,
                  "a pipeline stage needs an input: the stage before it returns void");
    static_assert(std::is_same_v<std::decay_t<Arg>, Out>,
                  "a pipeline stage's method must take what the stage before it returns "
                  "(or, for the first, the pipeline's item type)");
    pipeline<In, Next> out;
    out.stages_ = stages_;
    out.stages_.push_back([cls, method, o, side](context& ctx) {
      detail::stage_plan plan;
      plan.side = side;
      plan.name = o.name.empty() ? cls.name() : o.name;
      plan.routing = o.routing;
      plan.max_redeliveries = o.max_redeliveries;
      for (uint32_t i = 0; i < std::max<uint32_t>(1, o.replicas); ++i) {
        auto opts = o.actor;
        if (!o.nodes.empty()) opts.node = o.nodes[i % o.nodes.size()];
        auto h = ctx.spawn(opts, cls);
        plan.replicas.push_back({[h, method](const detail::slot_ptr& in) {
                                   return h.call(method, object_ref<Out>{in}).slot();
                                 },
                                 [h] { return !h.dead(); }});
      }
      return plan;
    });
    return out;
  }

  std::vector<maker> stages_;
};

} // namespace swarm
