// Measuring the latency of calls on your own actor: swarm::measure_latency times each
// call (after a warm-up) and returns its distribution in microseconds.
#include <chrono>
#include <cstdio>
#include <string>

#include "framework/swarm.hpp"

class tokenizer : public swarm::actor {
public:
  size_t count_words(const std::string& text) {
    size_t words = 0;
    bool in_word = false;
    for (char c : text) {
      bool letter = c != ' ';
      words += letter && !in_word;
      in_word = letter;
    }
    return words;
  }
};

int main() {
  swarm::application app;
  auto tokenizer_t = app.actor_type<tokenizer>("tokenizer");
  swarm::runtime rt{app};
  auto tok = rt.spawn(tokenizer_t);

  const std::string sentence = "the quick brown fox jumps over the lazy dog";
  bool right = true;
  swarm::latency_options opts;
  opts.warmup = 100;
  opts.iterations = 2'000;
  opts.time_cap = std::chrono::seconds(5);
  auto stats = swarm::measure_latency(
      [&] {
        // .get() waits for the reply, so the whole round trip is timed.
        right = right && tok.call(&tokenizer::count_words, sentence).get().value() == 9;
      },
      opts);

  std::printf("%zu calls: p50 %.1f us, p90 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f "
              "us, mean %.1f us\n",
              stats.count, stats.p50, stats.p90, stats.p99, stats.p999, stats.max,
              stats.mean);
  bool ordered = stats.p50 > 0 && stats.p50 <= stats.p90 && stats.p90 <= stats.p99 &&
                 stats.p99 <= stats.p999 && stats.p999 <= stats.max;
  return right && stats.count > 0 && ordered ? 0 : 1;
}
