// Streams from tasks on one node: order, back-pressure, errors, cancellation, re-runs.

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;

namespace {

// Waits up to `limit` for `ready`.
template <class F> bool eventually(std::chrono::milliseconds limit, F ready) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!ready()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

} // namespace

TEST_CASE("a streaming task's items come in the order written, and the stream ends with "
          "how many there were") {
  swarm::application app;
  auto squares = app.function("squares", [](swarm::stream_writer<int>& out, int n) {
    for (int i = 0; i < n; ++i)
      out.write(i * i).value();
  });
  swarm::runtime rt{app};
  auto s = rt.submit(squares, 50);
  for (int i = 0; i < 50; ++i) {
    auto item = s.next(10s);
    REQUIRE_MESSAGE(item, item.err().message);
    REQUIRE(item->has_value());
    CHECK((*item)->get().value() == i * i);
  }
  auto end = s.next(10s);
  REQUIRE_MESSAGE(end, end.err().message);
  CHECK_FALSE(end->has_value());
  CHECK(s.done().get().value() == 50);
}

TEST_CASE("a reader that falls behind holds the writer to the stream's window") {
  swarm::application app;
  std::atomic<int> written{0};
  auto count = app.function("count", [&written](swarm::stream_writer<int>& out, int n) {
    for (int i = 0; i < n; ++i) {
      out.write(i).value();
      ++written;
    }
  });
  swarm::runtime rt{app};
  swarm::task_options o;
  o.stream_window = 4;
  auto s = rt.submit(o, count, 100);
  // Nothing taken: the writer fills the window, then waits.
  REQUIRE(eventually(10s, [&] { return written.load() == 4; }));
  CHECK_FALSE(s.done().ready());
  for (int taken = 1; taken <= 100; ++taken) {
    auto item = s.next(10s);
    REQUIRE_MESSAGE(item, item.err().message);
    REQUIRE(item->has_value());
    CHECK((*item)->get().value() == taken - 1);
    CHECK(written.load() <= taken + 4);
  }
  CHECK(s.done().get(10s).value() == 100);
}

TEST_CASE("a writer's failure ends its stream with its error, after the items written "
          "before it") {
  swarm::application app;
  auto three_then_fail =
      app.function("three_then_fail", [](swarm::stream_writer<int>& out) {
        for (int i = 0; i < 3; ++i)
          out.write(i).value();
        throw std::runtime_error("the source ran dry");
      });
  swarm::runtime rt{app};
  auto s = rt.submit(three_then_fail);
  for (int i = 0; i < 3; ++i) {
    auto item = s.next(10s);
    REQUIRE_MESSAGE(item, item.err().message);
    REQUIRE(item->has_value());
    CHECK((*item)->get().value() == i);
  }
  auto end = s.next(10s);
  REQUIRE_FALSE(end);
  CHECK(end.err().message.find("the source ran dry") != std::string::npos);
  auto all = rt.submit(three_then_fail).collect(10s);
  REQUIRE_FALSE(all);
  CHECK(all.err().message.find("the source ran dry") != std::string::npos);
}

TEST_CASE("dropping a stream before its end stops its writer with a cancelled error") {
  swarm::application app;
  std::atomic<int> stopped_with{-1};
  auto endless = app.function("endless", [&](swarm::stream_writer<int>& out) {
    for (int i = 0;; ++i)
      if (auto ok = out.write(i); !ok) {
        stopped_with = static_cast<int>(ok.err().code);
        return;
      }
  });
  swarm::runtime rt{app};
  {
    swarm::task_options o;
    o.stream_window = 2;
    auto s = rt.submit(o, endless);
    CHECK(s.next(10s).value().has_value());
    CHECK(s.next(10s).value().has_value());
  }
  REQUIRE(eventually(10s, [&] { return stopped_with.load() != -1; }));
  CHECK(stopped_with.load() == static_cast<int>(swarm::errc::cancelled));
}

TEST_CASE("a streaming task run again after a failure writes its items again and the "
          "reader gets each once") {
  swarm::application app;
  std::atomic<int> runs{0};
  auto flaky = app.function("flaky", [&runs](swarm::stream_writer<int>& out, int n) {
    bool first = ++runs == 1;
    for (int i = 0; i < n; ++i) {
      if (first && i == 3) throw std::runtime_error("first run fails");
      out.write(i).value();
    }
  });
  swarm::runtime rt{app};
  swarm::task_options o;
  o.max_retries = 1;
  o.retry_exceptions = true;
  auto all = rt.submit(o, flaky, 6).collect(10s);
  REQUIRE_MESSAGE(all, all.err().message);
  CHECK(*all == std::vector<int>{0, 1, 2, 3, 4, 5});
  CHECK(runs.load() == 2);
}

TEST_CASE("a stream_writer written outside its streaming task says so") {
  swarm::application app;
  auto plain = app.function("plain", [](swarm::context& ctx) {
    swarm::stream_writer<int> w{ctx};
    auto ok = w.write(1);
    return ok ? std::string{"written"} : ok.err().message;
  });
  swarm::runtime rt{app};
  auto got = rt.submit(plain).get(10s).value();
  CHECK(got.find("outside the streaming task") != std::string::npos);
}

TEST_CASE("a streaming function is found by its items and parameters, and a lookup of "
          "another signature names the one it has") {
  swarm::application app;
  app.function("evens", [](swarm::stream_writer<int>& out, int n) {
    for (int i = 0; i < n; ++i)
      out.write(2 * i).value();
  });
  app.function("twice", [](int x) { return 2 * x; });
  REQUIRE(app.find_stream<int(int)>("evens"));
  auto wrong_items = app.find_stream<double(int)>("evens");
  REQUIRE_FALSE(wrong_items);
  CHECK(wrong_items.err().message.find("stream<int>(int)") != std::string::npos);
  auto as_task = app.find_function<int(int)>("evens");
  REQUIRE_FALSE(as_task);
  CHECK(as_task.err().message.find("stream<int>(int)") != std::string::npos);
  auto not_streaming = app.find_stream<int(int)>("twice");
  REQUIRE_FALSE(not_streaming);
  CHECK(not_streaming.err().message.find("int(int)") != std::string::npos);
}

namespace {

struct words : swarm::actor {
  int streams = 0;
  void split(swarm::stream_writer<std::string>& out, const std::string& text) {
    ++streams;
    std::string word;
    for (char ch : text + " ") {
      if (ch != ' ') {
        word += ch;
      } else if (!word.empty()) {
        if (!out.write(word)) return;
        word.clear();
      }
    }
  }
  int count() const { return streams; }
};

} // namespace

TEST_CASE("an actor method streams its items, and the actor takes its next call once the "
          "stream's reader went away") {
  swarm::application app;
  auto cls = app.actor_type<words>("words")
                 .method("split", &words::split)
                 .method("count", &words::count);
  swarm::runtime rt{app};
  auto w = rt.spawn(cls);
  auto all = w.call(&words::split, std::string{"the quick  brown fox"}).collect(10s);
  REQUIRE_MESSAGE(all, all.err().message);
  CHECK(*all == std::vector<std::string>{"the", "quick", "brown", "fox"});
  std::string many;
  for (int i = 0; i < 1000; ++i)
    many += "w ";
  {
    auto s = w.call_stream(2, &words::split, many);
    CHECK(s.next(10s).value()->get().value() == "w");
  }
  CHECK(w.call(&words::count).get(10s).value() == 2);
}
