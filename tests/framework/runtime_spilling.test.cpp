#include <doctest/doctest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <thread>
#include <vector>

#include "framework/swarm.hpp"

using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr size_t mib = 1 << 20;

// A folder of its own under the system's temporary one, removed at the end.
struct temp_folder {
  fs::path path;
  temp_folder() {
    auto tmpl = (fs::temp_directory_path() / "swarm-spill-test-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~temp_folder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  // Files in the spill folders in it.
  size_t spill_files() const {
    size_t n = 0;
    for (auto& e : fs::recursive_directory_iterator{path})
      n += e.is_regular_file() ? 1 : 0;
    return n;
  }
};

swarm::runtime_config spilling_store(size_t bytes, const temp_folder& dir) {
  swarm::runtime_config cfg;
  cfg.cpus = 2;
  cfg.object_store_bytes = bytes;
  cfg.object_pool_bytes = 0;
  cfg.inline_threshold = 1024;
  cfg.spill_dir = dir.path.string();
  return cfg;
}

// `n` bytes that say which value they are.
std::vector<uint8_t> pattern(size_t n, int seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<uint8_t>(i * 7 + static_cast<size_t>(seed) * 13);
  return v;
}

} // namespace

TEST_CASE("puts of three times the store's capacity spill to disk and every value reads "
          "back right") {
  temp_folder dir;
  swarm::application app;
  auto sum = app.function("sum", [](const std::vector<uint8_t>& v) {
    return std::accumulate(v.begin(), v.end(), uint64_t{0});
  });
  {
    swarm::runtime rt{app, spilling_store(8 * mib, dir)};
    std::vector<swarm::object_ref<std::vector<uint8_t>>> refs;
    for (int i = 0; i < 24; ++i)
      refs.push_back(rt.put(pattern(mib, i)));
    auto s = rt.stats();
    CHECK(s.store_bytes <= 8 * mib);
    CHECK(s.spills >= 16);
    CHECK(s.spilled_objects >= 16);
    CHECK(s.spilled_bytes >= 16 * mib);
    CHECK(dir.spill_files() == s.spilled_objects);
    // Read back, on this thread and by tasks, each as it was put.
    for (int i = 0; i < 24; ++i) {
      CHECK(refs[i].get(5s).value() == pattern(mib, i));
      auto expected = pattern(mib, i);
      CHECK(rt.submit(sum, refs[i]).get(10s).value() ==
            std::accumulate(expected.begin(), expected.end(), uint64_t{0}));
    }
    CHECK(rt.stats().restores >= 16);
    CHECK(rt.stats().store_bytes <= 8 * mib);
    // Freed objects take their files with them (a task's argument goes once the worker
    // drops the task, just after its result is out).
    refs.clear();
    for (int i = 0; i < 500 && rt.stats().spilled_bytes > 0; ++i)
      std::this_thread::sleep_for(2ms);
    CHECK(dir.spill_files() == 0);
    CHECK(rt.stats().spilled_bytes == 0);
    CHECK(rt.stats().spilled_objects == 0);
    rt.put(pattern(mib, 0)); // the folder stays while the node runs
    CHECK(!fs::is_empty(dir.path));
  }
  // The node's spill folder goes when it stops.
  CHECK(fs::is_empty(dir.path));
}

TEST_CASE("the least recently read of equal objects spills first, and a value being read "
          "stays in memory") {
  temp_folder dir;
  swarm::application app;
  swarm::runtime rt{app, spilling_store(3 * mib + mib / 2, dir)};
  auto a = rt.put(pattern(mib, 1));
  auto b = rt.put(pattern(mib, 2));
  auto c = rt.put(pattern(mib, 3));
  REQUIRE(a.get(1s));
  auto held = c.get_shared(1s).value(); // c is read right now: it cannot go
  auto d = rt.put(pattern(mib, 4));
  CHECK(b.slot()->spilled());
  CHECK_FALSE(a.slot()->spilled());
  CHECK_FALSE(c.slot()->spilled());
  CHECK_FALSE(d.slot()->spilled());
  CHECK(*held == pattern(mib, 3));
  CHECK(b.get(1s).value() == pattern(mib, 2));
}

TEST_CASE("a put that fits neither memory nor the spill limit fails naming both") {
  temp_folder dir;
  swarm::application app;
  auto cfg = spilling_store(2 * mib + mib / 2, dir);
  cfg.spill_limit_bytes = 2 * mib + mib / 2;
  swarm::runtime rt{app, cfg};
  std::vector<swarm::object_ref<std::vector<uint8_t>>> kept;
  std::optional<swarm::error> refused;
  for (int i = 0; i < 8 && !refused; ++i) {
    try {
      kept.push_back(rt.put(pattern(mib, i)));
    } catch (const swarm::failure& e) {
      refused = e.err();
    }
  }
  REQUIRE(refused);
  CHECK(refused->code == swarm::errc::store_full);
  CHECK(refused->message.find("does not fit in the object store") != std::string::npos);
  CHECK(refused->message.find("in memory") != std::string::npos);
  CHECK(refused->message.find("the spill limit (2.50 MiB) is reached") !=
        std::string::npos);
  CHECK(kept.size() == 4); // two in memory, two on disk
  for (size_t i = 0; i < kept.size(); ++i)
    CHECK(kept[i].get(1s).value() == pattern(mib, static_cast<int>(i)));
}

TEST_CASE("a spill folder a crashed node left behind is removed, and a live one is not") {
  temp_folder dir;
  // A process that is gone: its pid names no process any more.
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  auto orphan = dir.path / ("swarm-spill-local-" + std::to_string(gone));
  auto alive = dir.path / ("swarm-spill-local-" + std::to_string(::getppid()));
  auto other = dir.path / "not-a-spill-folder";
  for (auto& p : {orphan, alive, other}) {
    fs::create_directory(p);
    std::ofstream{p / "obj-1-1"} << "stale";
  }
  swarm::application app;
  swarm::runtime rt{app, spilling_store(mib + mib / 2, dir)};
  auto a = rt.put(pattern(mib, 1));
  auto b = rt.put(pattern(mib, 2)); // spills a
  CHECK(a.slot()->spilled());
  CHECK_FALSE(fs::exists(orphan));
  CHECK(fs::exists(alive));
  CHECK(fs::exists(other));
  CHECK(a.get(1s).value() == pattern(mib, 1));
}

TEST_CASE("a spill file swapped with another, or changed, reads back as object_lost, "
          "never as wrong bytes") {
  temp_folder dir;
  swarm::application app;
  swarm::runtime rt{app, spilling_store(mib + mib / 2, dir)};
  auto a = rt.put(pattern(mib, 1));
  auto b = rt.put(pattern(mib, 2)); // spills a
  auto c = rt.put(pattern(mib, 3)); // spills b
  auto d = rt.put(pattern(mib, 4)); // spills c
  REQUIRE(a.slot()->spilled());
  REQUIRE(b.slot()->spilled());
  REQUIRE(c.slot()->spilled());
  std::vector<fs::path> files;
  for (auto& e : fs::recursive_directory_iterator{dir.path})
    if (e.is_regular_file()) files.push_back(e.path());
  REQUIRE(files.size() == 3);
  auto file_of = [&](const swarm::object_id& id) {
    for (auto& f : files)
      if (f.filename() == id.to_string()) return f;
    FAIL("no spill file for " << id.to_string());
    return fs::path{};
  };
  // Their folder is the process's alone.
  auto folder = files[0].parent_path();
  CHECK((fs::status(folder).permissions() & fs::perms::all) == fs::perms::owner_all);
  // Another user swaps a's and b's files: both are found out.
  auto fa = file_of(a.id()), fb = file_of(b.id());
  fs::rename(fa, dir.path / "tmp");
  fs::rename(fb, fa);
  fs::rename(dir.path / "tmp", fb);
  auto ra = a.get(1s);
  REQUIRE_FALSE(ra);
  CHECK(ra.err().code == swarm::errc::object_lost);
  CHECK(ra.err().message.find("it holds object " + b.id().to_string()) !=
        std::string::npos);
  CHECK_FALSE(b.get(1s));
  // One byte of c changes on disk.
  {
    std::fstream f{file_of(c.id()), std::ios::in | std::ios::out | std::ios::binary};
    f.seekp(-100, std::ios::end);
    f.put('\x5a');
  }
  auto rc = c.get(1s);
  REQUIRE_FALSE(rc);
  CHECK(rc.err().code == swarm::errc::object_lost);
  CHECK(rc.err().message.find("checksum mismatch") != std::string::npos);
  // What was not touched reads as it was.
  CHECK(d.get(1s).value() == pattern(mib, 4));
}

TEST_CASE("another user of the host can neither delete, swap, plant nor list a node's "
          "spill files (played as nobody)") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: playing another user needs root");
    return;
  }
  temp_folder dir;
  // The spill folder's parent open to every user, as /tmp is.
  fs::permissions(dir.path, fs::perms::all);
  swarm::application app;
  swarm::runtime rt{app, spilling_store(mib + mib / 2, dir)};
  auto a = rt.put(pattern(mib, 1));
  auto b = rt.put(pattern(mib, 2)); // spills a
  auto c = rt.put(pattern(mib, 3)); // spills b
  REQUIRE(a.slot()->spilled());
  REQUIRE(b.slot()->spilled());
  std::vector<std::string> files;
  for (auto& e : fs::recursive_directory_iterator{dir.path})
    if (e.is_regular_file()) files.push_back(e.path().string());
  REQUIRE(files.size() == 2);
  auto folder = fs::path{files[0]}.parent_path().string();
  auto planted = folder + "/planted";
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // As nobody: each attempt that succeeds sets a bit of the exit code.
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(64);
    int got = 0;
    if (::unlink(files[0].c_str()) == 0) got |= 1;
    if (::rename(files[1].c_str(), files[0].c_str()) == 0) got |= 2;
    int fd = ::open(planted.c_str(), O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) got |= 4;
    if (::opendir(folder.c_str()) != nullptr) got |= 8;
    ::_exit(got);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_FALSE(fs::exists(planted));
  CHECK(a.get(1s).value() == pattern(mib, 1));
  CHECK(b.get(1s).value() == pattern(mib, 2));
  CHECK(c.get(1s).value() == pattern(mib, 3));
}
