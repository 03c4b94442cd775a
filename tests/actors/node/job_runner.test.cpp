#include <doctest/doctest.h>

#include <caf/all.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "actors/node/job_runner.hpp"

using namespace std::chrono_literals;
using namespace swarm::actors;
namespace wire_msg = swarm::wire_msg;
namespace fs = std::filesystem;

namespace {

// A job runner in an actor system of its own, its answers collected.
struct runner {
  std::string scratch = [] {
    char tmpl[] = "/tmp/swarm-job-runner-test-XXXXXX";
    return std::string{::mkdtemp(tmpl)};
  }();
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<wire_msg::job_answer> answers;
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::actor jobs;

  std::string token = "the-token-of-the-job-tests";

  /// `jobs_on` false: the runner has no token (the file no [jobs] table).
  explicit runner(const std::string& kept_dir = "", const std::string& run_as = "",
                  bool jobs_on = true) {
    job_runner_config jc;
    jc.address = "127.0.0.1:1";
    jc.secret = "the-secret-of-the-job-tests";
    jc.token = jobs_on ? token : "";
    jc.run_as = run_as;
    jc.cluster = "jobs-test";
    jc.output_parent = scratch;
    jc.output_dir = kept_dir;
    jc.send = [this](const std::string&, wire_msg::message m) {
      std::lock_guard<std::mutex> guard{mtx};
      answers.push_back(std::get<wire_msg::job_answer>(std::move(m)));
      cv.notify_all();
    };
    jobs = spawn_job_runner(sys, std::move(jc));
  }

  ~runner() {
    stop();
    std::error_code ec;
    fs::remove_all(scratch, ec);
  }

  void stop() {
    if (!jobs) return;
    caf::anon_send_exit(jobs, caf::exit_reason::user_shutdown);
    jobs = nullptr;
  }

  // Sends `m` and waits for its answer.
  template <class M> wire_msg::job_answer ask(M m) {
    std::unique_lock<std::mutex> guard{mtx};
    auto before = answers.size();
    guard.unlock();
    caf::anon_send(jobs, job_atom::value, std::string{"driver"}, std::move(m));
    guard.lock();
    REQUIRE(cv.wait_for(guard, 10s, [&] { return answers.size() > before; }));
    return answers.back();
  }

  wire_msg::job_answer submit(std::vector<std::string> argv) {
    return ask(wire_msg::job_submit{1, std::move(argv), "", token});
  }

  // The job's row once it ended (within 10 s).
  wire_msg::job_row ended(uint64_t id) {
    for (int i = 0; i < 200; ++i) {
      auto a =
          ask(wire_msg::job_ask{2, wire_msg::job_ask::kind_type::status, id, 0, token});
      REQUIRE(a.ok);
      if (a.jobs.at(0).state != "running") return a.jobs.at(0);
      std::this_thread::sleep_for(50ms);
    }
    FAIL("job " << id << " did not end");
    return {};
  }

  std::string output(uint64_t id) {
    auto a =
        ask(wire_msg::job_ask{3, wire_msg::job_ask::kind_type::output, id, 0, token});
    REQUIRE(a.ok);
    return {a.output.begin(), a.output.end()};
  }

  // The folders the runner made under the scratch folder.
  std::vector<std::string> made() const {
    std::vector<std::string> out;
    for (auto& e : fs::directory_iterator(scratch))
      if (e.path().filename().string().rfind("swarm-jobs-", 0) == 0)
        out.push_back(e.path().string());
    return out;
  }
};

unsigned mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

} // namespace

TEST_CASE("a job's output goes to a new file in a private folder that goes with the "
          "runner") {
  runner r;
  auto a = r.submit({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  REQUIRE(a.ok);
  auto id = a.jobs.at(0).id;
  auto row = r.ended(id);
  CHECK(row.state == "failed");
  CHECK(row.exit_code == 3);
  CHECK(r.output(id) == "out\nerr\n");
  auto folders = r.made();
  REQUIRE(folders.size() == 1);
  CHECK(mode_of(folders[0]) == 0700);
  CHECK(mode_of(folders[0] + "/" + std::to_string(id) + ".log") == 0600);
  r.stop();
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = !fs::exists(folders[0]);
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  CHECK(gone);
}

TEST_CASE("a kept job folder goes on after the highest job it holds, and a program that "
          "cannot run is refused naming it") {
  runner first;
  auto kept = first.scratch + "/gcs/head/jobs";
  fs::create_directories(kept);
  ::chmod(kept.c_str(), 0700);
  std::ofstream{kept + "/7.log"} << "an earlier head's job\n";
  runner r{kept};
  auto a = r.submit({"/bin/echo", "again"});
  REQUIRE(a.ok);
  CHECK(a.jobs.at(0).id == 8);
  r.ended(8);
  CHECK(r.output(8) == "again\n");
  std::ifstream earlier{kept + "/7.log"};
  std::string line;
  std::getline(earlier, line);
  CHECK(line == "an earlier head's job");
  auto missing = r.submit({"/no/such/program"});
  CHECK_FALSE(missing.ok);
  CHECK(missing.error.find("cannot run '/no/such/program'") != std::string::npos);
}

TEST_CASE("a job folder another user made, with a symlink planted as the next job's log, "
          "is refused and nothing is written through the link") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: playing another user needs root");
    return;
  }
  runner first;
  auto theirs = first.scratch + "/gcs/head/jobs";
  fs::create_directories(theirs);
  auto target = first.scratch + "/precious";
  std::ofstream{target} << "precious\n";
  fs::create_symlink(target, theirs + "/1.log");
  // As `nobody` made it: theirs, open to them.
  REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
  ::chmod(theirs.c_str(), 0755);
  runner r{theirs};
  auto a = r.submit({"/bin/sh", "-c", "echo overwritten"});
  CHECK_FALSE(a.ok);
  CHECK(a.error.find("will not keep private files in " + theirs) != std::string::npos);
  CHECK(a.error.find("belongs to user 65534") != std::string::npos);
  std::ifstream in{target};
  std::string line;
  std::getline(in, line);
  CHECK(line == "precious");
}

TEST_CASE(
    "a job request without the [jobs] token, with a wrong one, or to a head without "
    "one is refused saying why, and runs nothing") {
  runner r;
  auto mark = r.scratch + "/ran";
  std::vector<std::string> touch{"/bin/sh", "-c", "touch " + mark};
  auto none = r.ask(wire_msg::job_submit{1, touch, "", ""});
  CHECK_FALSE(none.ok);
  CHECK(none.error.find("no job token was given: jobs of cluster 'jobs-test' need the "
                        "[jobs] token") != std::string::npos);
  auto wrong = r.ask(wire_msg::job_submit{1, touch, "", "the-token-of-the-job-testZ"});
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.error.find("the job token is wrong") != std::string::npos);
  // Reading and stopping need it too.
  auto listed =
      r.ask(wire_msg::job_ask{2, wire_msg::job_ask::kind_type::status, 0, 0, "guess"});
  CHECK_FALSE(listed.ok);
  CHECK(listed.jobs.empty());
  auto stop = r.ask(wire_msg::job_ask{3, wire_msg::job_ask::kind_type::stop, 1, 0, ""});
  CHECK_FALSE(stop.ok);
  // With the token, the same program runs.
  auto ran = r.submit(touch);
  REQUIRE(ran.ok);
  r.ended(ran.jobs.at(0).id);
  CHECK(fs::exists(mark));
  fs::remove(mark);
  // Off: a head whose file has no [jobs] token refuses any.
  runner off{"", "", false};
  auto refused = off.ask(wire_msg::job_submit{1, touch, "", ""});
  CHECK_FALSE(refused.ok);
  CHECK(refused.error ==
        "jobs are off in cluster 'jobs-test': the head's file turns them "
        "on with a [jobs] token");
  CHECK_FALSE(fs::exists(mark));
}

TEST_CASE("jobs run as the [jobs] run_as user, with its home, and a user the host lacks "
          "is refused naming it") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: switching users needs root");
    return;
  }
  runner r{"", "nobody"};
  auto a = r.submit({"/bin/sh", "-c", "id -u; id -g; echo $USER"});
  REQUIRE_MESSAGE(a.ok, a.error);
  auto row = r.ended(a.jobs.at(0).id);
  CHECK(row.state == "succeeded");
  CHECK(r.output(a.jobs.at(0).id) == "65534\n65534\nnobody\n");
  runner lacking{"", "no-such-user-of-swarm"};
  auto refused = lacking.submit({"/bin/true"});
  CHECK_FALSE(refused.ok);
  CHECK(refused.error ==
        "jobs run as 'no-such-user-of-swarm' ([jobs] run_as), a user the "
        "head's host has not");
}
