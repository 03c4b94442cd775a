// A node's spill files: one private file per object, checked when read back.

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "actors/objects/spill_files.hpp"
#include "base/private_dir.hpp"
#include "framework/detail/type_descriptor.hpp"

using namespace swarm;
using namespace swarm::actors;
namespace fs = std::filesystem;

namespace {

// A folder of the test's own (the project's `private_dir`), removed with what is in it.
struct scratch {
  private_dir dir =
      private_dir::make(fs::temp_directory_path().string(), "spill-test-").value();
  fs::path path{dir.path()};
  // The spill folders in it.
  std::vector<fs::path> folders() const {
    std::vector<fs::path> out;
    for (auto& e : fs::directory_iterator{path})
      out.push_back(e.path());
    return out;
  }
};

detail::boxed_value text(std::string s) {
  return detail::boxed_value::make(std::move(s));
}

std::string read_text(const spill_files& files, const object_id& id,
                      errc* failed = nullptr) {
  auto v = files.read(id, detail::type_of<std::string>(), nullptr);
  if (!v) {
    if (failed) *failed = v.err().code;
    return "error: " + v.err().message;
  }
  return *static_cast<const std::string*>(v->ptr.get());
}

} // namespace

TEST_CASE("spilled objects read back as they were, from a private folder that goes with "
          "the node") {
  scratch dir;
  {
    spill_files files{{dir.path.string(), "w1", 0, nullptr}};
    CHECK(dir.folders().empty()); // made at the first spill
    REQUIRE(files.write({1, 1}, text("first")));
    REQUIRE(files.write({1, 2}, text(std::string(100000, 'x'))));
    CHECK(files.bytes() > 100000);
    CHECK(read_text(files, {1, 1}) == "first");
    CHECK(read_text(files, {1, 2}) == std::string(100000, 'x'));
    auto folders = dir.folders();
    REQUIRE(folders.size() == 1);
    auto name = folders[0].filename().string();
    CHECK(name.rfind("swarm-spill-w1-" + std::to_string(::getpid()) + "-", 0) == 0);
    struct stat st {};
    REQUIRE(::stat(folders[0].c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    for (auto& f : fs::directory_iterator{folders[0]}) {
      REQUIRE(::stat(f.path().c_str(), &st) == 0);
      CHECK((st.st_mode & 0777) == 0600);
    }
    auto before = files.bytes();
    files.remove({1, 2});
    CHECK(files.bytes() < before);
    errc code{};
    CHECK(read_text(files, {1, 2}, &code).rfind("error: ", 0) == 0);
  }
  CHECK(dir.folders().empty());
}

TEST_CASE("a spill past the limit is refused naming it, and leaves nothing behind") {
  scratch dir;
  spill_files files{{dir.path.string(), "w1", 4096, nullptr}};
  REQUIRE(files.write({1, 1}, text("small")));
  auto used = files.bytes();
  auto big = files.write({1, 2}, text(std::string(8192, 'y')));
  REQUIRE_FALSE(big);
  CHECK(big.err().code == errc::store_full);
  CHECK(big.err().message.find("spill limit") != std::string::npos);
  CHECK(files.bytes() == used);
  REQUIRE(dir.folders().size() == 1);
  size_t n = 0;
  for (auto& f : fs::directory_iterator{dir.folders()[0]}) {
    (void)f;
    ++n;
  }
  CHECK(n == 1);
}

TEST_CASE("a spill file swapped with another, cut or changed reads as object_lost, never "
          "as wrong bytes") {
  scratch dir;
  spill_files files{{dir.path.string(), "w1", 0, nullptr}};
  REQUIRE(files.write({1, 1}, text(std::string(5000, 'a'))));
  REQUIRE(files.write({1, 2}, text(std::string(5000, 'b'))));
  auto folder = dir.folders().at(0);
  auto one = folder / object_id{1, 1}.to_string();
  auto two = folder / object_id{1, 2}.to_string();
  REQUIRE(fs::exists(one));
  REQUIRE(fs::exists(two));
  // Swapped.
  fs::rename(one, folder / "tmp");
  fs::rename(two, one);
  fs::rename(folder / "tmp", two);
  errc code{};
  CHECK(read_text(files, {1, 1}, &code).rfind("error: ", 0) == 0);
  CHECK(code == errc::object_lost);
  // Swapped back, it reads again; then one byte of object 2's payload changed.
  fs::rename(one, folder / "tmp");
  fs::rename(two, one);
  fs::rename(folder / "tmp", two);
  CHECK(read_text(files, {1, 1}) == std::string(5000, 'a'));
  {
    std::fstream f{two, std::ios::in | std::ios::out | std::ios::binary};
    f.seekp(-10, std::ios::end);
    f.put('z');
  }
  code = {};
  CHECK(read_text(files, {1, 2}, &code).rfind("error: ", 0) == 0);
  CHECK(code == errc::object_lost);
  // Cut short.
  fs::resize_file(one, fs::file_size(one) / 2);
  code = {};
  CHECK(read_text(files, {1, 1}, &code).rfind("error: ", 0) == 0);
  CHECK(code == errc::object_lost);
}

TEST_CASE("the spill folders of this node's processes that are gone are removed at the "
          "first spill, and others are left") {
  scratch dir;
  // A pid no process has (past the kernel's pid_max).
  auto gone = dir.path / "swarm-spill-w1-4194400-abcdef";
  auto other_node = dir.path / "swarm-spill-w2-4194400-abcdef";
  auto alive = dir.path / ("swarm-spill-w1-" + std::to_string(::getppid()) + "-abcdef");
  for (auto& p : {gone, other_node, alive})
    fs::create_directories(p / "inside");
  spill_files files{{dir.path.string(), "w1", 0, nullptr}};
  REQUIRE(files.write({1, 1}, text("x")));
  CHECK_FALSE(fs::exists(gone));
  CHECK(fs::exists(other_node));
  CHECK(fs::exists(alive));
}
