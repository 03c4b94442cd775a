// A streaming task: the function writes items as it makes them (tokens of a generated
// answer, say) and the caller reads each as soon as it is written, at most a window of
// items ahead of what it took; dropping or cancelling the stream stops the writer.
#include <cstdio>
#include <string>
#include <vector>

#include "framework/swarm.hpp"

namespace {

// Writes the words of `text` one by one; `write` fails once the reader went away.
void words(swarm::stream_writer<std::string>& out, std::string text) {
  size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    if (!out.write(text.substr(start, end - start))) return;
    start = end + 1;
  }
}

// Counts up for ever, until its reader stops it.
void naturals(swarm::stream_writer<long>& out) {
  for (long i = 0;; ++i)
    if (!out.write(i)) return;
}

} // namespace

int main() {
  swarm::application app;
  auto split = app.function("words", words);
  auto count = app.function("naturals", naturals);
  swarm::runtime rt{app};

  // Read item by item as they come: `next` gives each item's future, nullopt at the end.
  auto stream = rt.submit(split, std::string{"tasks actors futures and streams"});
  std::vector<std::string> got;
  while (auto item = stream.next().value())
    got.push_back(item->get().value());
  std::printf("%zu words, the last '%s'; the task wrote %llu\n", got.size(),
              got.back().c_str(),
              static_cast<unsigned long long>(stream.done().get().value()));

  // A window of 4: the writer waits while 4 items are unread. Cancel after 10 items.
  swarm::task_options window;
  window.stream_window = 4;
  auto endless = rt.submit(window, count);
  long sum = 0;
  for (int i = 0; i < 10; ++i)
    sum += endless.next().value()->get().value();
  endless.cancel();
  auto ended = endless.done().get();
  std::printf("sum of the first 10 naturals: %ld; then the stream was %s\n", sum,
              ended ? "not cancelled" : ended.err().to_string().c_str());
  return got.size() == 5 && got.back() == "streams" && sum == 45 && !ended ? 0 : 1;
}
