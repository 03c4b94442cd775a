#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/private_dir.hpp"

namespace fs = std::filesystem;

namespace {

// A scratch folder under /tmp, removed after the test.
struct scratch {
  std::string path;
  scratch() {
    char tmpl[] = "/tmp/swarm-private-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

unsigned mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

} // namespace

TEST_CASE(
    "a private folder is made fresh with mode 0700 and goes with its files when let "
    "go") {
  scratch s;
  std::string path;
  {
    auto a = swarm::private_dir::make(s.path, "jobs-");
    auto b = swarm::private_dir::make(s.path, "jobs-");
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->path() != b->path());
    CHECK(a->path().rfind(s.path + "/jobs-", 0) == 0);
    CHECK(mode_of(a->path()) == 0700);
    path = a->path();
    std::ofstream{path + "/1.log"} << "output";
    auto moved = std::move(*a);
    CHECK(fs::exists(path + "/1.log"));
  }
  CHECK_FALSE(fs::exists(path));
  auto none = swarm::private_dir::make(s.path + "/missing", "jobs-");
  REQUIRE_FALSE(none);
  CHECK(none.err().message.find(s.path + "/missing") != std::string::npos);
}

TEST_CASE(
    "a kept folder is made private and stays, a symlink, a file or a folder open to "
    "others is refused, naming it") {
  scratch s;
  {
    auto kept = swarm::private_dir::keep(s.path + "/gcs/head/jobs");
    REQUIRE(kept);
    CHECK(mode_of(kept->path()) == 0700);
  }
  CHECK(fs::exists(s.path + "/gcs/head/jobs"));

  fs::create_directory(s.path + "/elsewhere");
  fs::create_directory_symlink(s.path + "/elsewhere", s.path + "/link");
  auto link = swarm::private_dir::keep(s.path + "/link");
  REQUIRE_FALSE(link);
  CHECK(link.err().message.find(s.path + "/link: it is a symlink") != std::string::npos);

  std::ofstream{s.path + "/file"} << "x";
  auto file = swarm::private_dir::keep(s.path + "/file");
  REQUIRE_FALSE(file);
  CHECK(file.err().message.find("it is not a folder") != std::string::npos);

  fs::create_directory(s.path + "/open");
  ::chmod((s.path + "/open").c_str(), 0777);
  auto open = swarm::private_dir::keep(s.path + "/open");
  REQUIRE(open); // ours: made private again
  CHECK(mode_of(s.path + "/open") == 0700);
}

TEST_CASE("a folder of another user is refused as a place for private files") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: giving a folder to another user needs root");
    return;
  }
  scratch s;
  auto theirs = s.path + "/theirs";
  fs::create_directory(theirs);
  REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0); // nobody's
  auto kept = swarm::private_dir::keep(theirs);
  REQUIRE_FALSE(kept);
  CHECK(kept.err().message.find("it belongs to user 65534") != std::string::npos);
}

TEST_CASE(
    "a private file is created new with mode 0600, never through a symlink and never "
    "over a file that exists") {
  scratch s;
  auto fd = swarm::create_private_file(s.path + "/1.log");
  REQUIRE(fd);
  ::close(*fd);
  CHECK(mode_of(s.path + "/1.log") == 0600);
  auto again = swarm::create_private_file(s.path + "/1.log");
  REQUIRE_FALSE(again);
  CHECK(again.err().message.find("cannot create " + s.path + "/1.log") !=
        std::string::npos);
  std::ofstream{s.path + "/target"} << "precious";
  fs::create_symlink(s.path + "/target", s.path + "/2.log");
  CHECK_FALSE(swarm::create_private_file(s.path + "/2.log"));
  std::ifstream in{s.path + "/target"};
  std::string kept;
  in >> kept;
  CHECK(kept == "precious");
}
