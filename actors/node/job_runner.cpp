#include "actors/node/job_runner.hpp"

#include <caf/all.hpp>

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <vector>

#include "actors/common/wall_clock.hpp"
#include "base/private_dir.hpp"
#include "base/same_token.hpp"
#include "framework/tls_env.hpp"

extern char** environ;

namespace swarm::actors {

namespace {

using reap_atom = caf::atom_constant<caf::atom("reap")>;

constexpr auto reap_interval = std::chrono::milliseconds(50);
constexpr size_t output_chunk = 1 << 20;

struct job {
  wire_msg::job_row row;
  std::string output;
  bool stopping = false;
  std::chrono::steady_clock::time_point kill_at;
};

// Owns the jobs' table: one thread touches it.
class job_runner : public caf::event_based_actor {
public:
  job_runner(caf::actor_config& c, job_runner_config cfg)
      : caf::event_based_actor(c), cfg_(std::move(cfg)) {}

  caf::behavior make_behavior() override {
    return {
        [this](job_atom, const std::string& peer, const wire_msg::job_submit& m) {
          auto why = forbidden(m.token);
          cfg_.send(peer, why.empty() ? submit(m) : refused(m.request_id, why));
        },
        [this](job_atom, const std::string& peer, const wire_msg::job_ask& m) {
          auto why = forbidden(m.token);
          cfg_.send(peer, why.empty() ? ask(m) : refused(m.request_id, why));
        },
        [this](reap_atom) {
          reaping_ = false;
          reap();
        },
    };
  }

  void on_exit() override {
    for (auto& [id, j] : jobs_)
      if (j.row.state == "running") ::kill(-static_cast<pid_t>(j.row.pid), SIGTERM);
    folder_.reset(); // a folder it made goes with it
  }

private:
  // Why a request carrying `token` is refused; empty when it is not.
  std::string forbidden(const std::string& token) const {
    if (cfg_.token.empty())
      return "jobs are off in cluster '" + cfg_.cluster +
             "': the head's file turns them on with a [jobs] token";
    if (same_token(token, cfg_.token)) return "";
    return std::string{token.empty() ? "no job token was given"
                                     : "the job token is wrong"} +
           ": jobs of cluster '" + cfg_.cluster +
           "' need the [jobs] token of the head's file (or SWARM_JOB_TOKEN), not "
           "only the cluster's secret";
  }

  static wire_msg::job_answer refused(uint64_t request_id, std::string why) {
    wire_msg::job_answer a;
    a.request_id = request_id;
    a.error = std::move(why);
    return a;
  }

  // The folder of the jobs' output, made on the first submit; the ids go on after the
  // highest one a kept folder holds.
  result<const private_dir*> output_folder() {
    if (folder_) return &*folder_;
    auto dir = cfg_.output_dir.empty()
                   ? private_dir::make(cfg_.output_parent, "swarm-jobs-")
                   : private_dir::keep(cfg_.output_dir);
    if (!dir) return dir.err();
    folder_.emplace(std::move(*dir));
    std::error_code ec;
    for (auto& e : std::filesystem::directory_iterator(folder_->path(), ec)) {
      auto name = e.path().filename().string();
      if (e.path().extension() == ".log")
        next_id_ =
            std::max<uint64_t>(next_id_, std::strtoull(name.c_str(), nullptr, 10) + 1);
    }
    return &*folder_;
  }

  // How a job starts as [jobs] run_as: the command before its own (setpriv, when that
  // user is not the node's) and the environment it gets; or why it cannot.
  struct as_user {
    std::vector<std::string> prefix;
    std::vector<std::string> env; // HOME, USER and LOGNAME
  };
  result<as_user> run_as() const {
    as_user out;
    if (cfg_.run_as.empty()) return out;
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(1 << 14);
    ::getpwnam_r(cfg_.run_as.c_str(), &pw, buf.data(), buf.size(), &found);
    auto what = "jobs run as '" + cfg_.run_as + "' ([jobs] run_as)";
    if (!found)
      return error{errc::invalid_argument, what + ", a user the head's host has not"};
    if (found->pw_uid != ::geteuid()) {
      if (::geteuid() != 0)
        return error{errc::invalid_argument,
                     what + ", but the head runs as uid " + std::to_string(::geteuid()) +
                         ", which cannot switch users: start it as root, or leave "
                         "run_as out"};
      out.prefix = {"setpriv", "--reuid=" + std::to_string(found->pw_uid),
                    "--regid=" + std::to_string(found->pw_gid), "--init-groups", "--"};
    }
    out.env = {std::string{"HOME="} + found->pw_dir, "USER=" + cfg_.run_as,
               "LOGNAME=" + cfg_.run_as};
    return out;
  }

  wire_msg::job_answer submit(const wire_msg::job_submit& m) {
    if (m.argv.empty() || m.argv[0].empty())
      return refused(m.request_id, "a job needs a program to run");
    auto user = run_as();
    if (!user) return refused(m.request_id, user.err().message);
    auto folder = output_folder();
    if (!folder) return refused(m.request_id, folder.err().message);
    auto id = next_id_++;
    auto output = (*folder)->path() + "/" + std::to_string(id) + ".log";
    auto fd = create_private_file(output);
    if (!fd)
      return refused(m.request_id, "no output file for the job: " + fd.err().message);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&files, *fd, 1);
    posix_spawn_file_actions_adddup2(&files, *fd, 2);
    if (!m.cwd.empty()) posix_spawn_file_actions_addchdir_np(&files, m.cwd.c_str());
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Its own process group (stopped as a whole), default signals, none blocked: the
    // node may block SIGTERM for its own handling.
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
    std::vector<std::string> env_strings;
    auto replaced = [&](const std::string& kv) {
      for (const char* k :
           {"SWARM_ADDRESS=", "SWARM_SECRET=", "SWARM_JOB_ID=", "SWARM_TLS"})
        if (kv.rfind(k, 0) == 0) return true;
      for (auto& u : user->env)
        if (kv.compare(0, u.find('=') + 1, u, 0, u.find('=') + 1) == 0) return true;
      return false;
    };
    for (char** e = environ; *e; ++e)
      if (std::string kv{*e}; !replaced(kv)) env_strings.push_back(std::move(kv));
    env_strings.insert(env_strings.end(), user->env.begin(), user->env.end());
    env_strings.push_back("SWARM_ADDRESS=" + cfg_.address);
    env_strings.push_back("SWARM_SECRET=" + cfg_.secret);
    for (auto& kv : tls_env(cfg_.tls))
      env_strings.push_back(kv);
    env_strings.push_back("SWARM_JOB_ID=" + std::to_string(id));
    auto pointers = [](std::vector<std::string>& xs) {
      std::vector<char*> out;
      for (auto& x : xs)
        out.push_back(x.data());
      out.push_back(nullptr);
      return out;
    };
    auto argv_strings = user->prefix;
    argv_strings.insert(argv_strings.end(), m.argv.begin(), m.argv.end());
    auto argv = pointers(argv_strings);
    auto envp = pointers(env_strings);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, argv[0], &files, &attr, argv.data(), envp.data());
    ::close(*fd);
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attr);
    if (rc != 0)
      return refused(m.request_id, "cannot run '" + m.argv[0] + "'" +
                                       (m.cwd.empty() ? "" : " in " + m.cwd) + ": " +
                                       std::strerror(rc));
    auto& j = jobs_[id];
    j.output = output;
    j.row.id = id;
    for (auto& a : m.argv)
      j.row.command += (j.row.command.empty() ? "" : " ") + a;
    j.row.pid = static_cast<uint32_t>(pid);
    j.row.state = "running";
    j.row.started_ms = wall_ms();
    reap_later();
    wire_msg::job_answer a;
    a.request_id = m.request_id;
    a.ok = true;
    a.jobs.push_back(j.row);
    return a;
  }

  wire_msg::job_answer ask(const wire_msg::job_ask& m) {
    reap();
    wire_msg::job_answer a;
    a.request_id = m.request_id;
    if (m.id == 0 && m.kind == wire_msg::job_ask::kind_type::status) {
      for (auto& [id, j] : jobs_)
        a.jobs.push_back(j.row);
      a.ok = true;
      return a;
    }
    auto i = jobs_.find(m.id);
    if (i == jobs_.end())
      return refused(m.request_id, "no job " + std::to_string(m.id) + " (" +
                                       std::to_string(jobs_.size()) + " submitted)");
    auto& j = i->second;
    if (m.kind == wire_msg::job_ask::kind_type::stop && j.row.state == "running" &&
        !j.stopping) {
      j.stopping = true;
      j.kill_at = std::chrono::steady_clock::now() + cfg_.stop_grace;
      ::kill(-static_cast<pid_t>(j.row.pid), SIGTERM);
      reap_later();
    }
    if (m.kind == wire_msg::job_ask::kind_type::output) {
      std::ifstream in{j.output, std::ios::binary};
      in.seekg(static_cast<std::streamoff>(m.offset));
      a.output.resize(output_chunk);
      in.read(reinterpret_cast<char*>(a.output.data()),
              static_cast<std::streamsize>(a.output.size()));
      a.output.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
      a.output_end = m.offset + a.output.size();
    }
    a.ok = true;
    a.jobs.push_back(j.row);
    return a;
  }

  // Notes the jobs that ended; kills those stopped past their grace.
  void reap() {
    bool running = false;
    for (auto& [id, j] : jobs_) {
      if (j.row.state != "running") continue;
      int status = 0;
      auto pid = static_cast<pid_t>(j.row.pid);
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        j.row.ended_ms = wall_ms();
        if (WIFEXITED(status)) {
          j.row.exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
          j.row.exit_code = -WTERMSIG(status);
        }
        j.row.state = j.stopping             ? "stopped"
                      : j.row.exit_code == 0 ? "succeeded"
                                             : "failed";
        continue;
      }
      running = true;
      if (j.stopping && std::chrono::steady_clock::now() >= j.kill_at) {
        ::kill(-pid, SIGKILL);
        j.kill_at = std::chrono::steady_clock::time_point::max();
      }
    }
    if (running) reap_later();
  }

  void reap_later() {
    if (reaping_) return;
    reaping_ = true;
    delayed_send(this, reap_interval, reap_atom::value);
  }

  job_runner_config cfg_;
  std::optional<private_dir> folder_;
  std::map<uint64_t, job> jobs_;
  uint64_t next_id_ = 1;
  bool reaping_ = false;
};

} // namespace

caf::actor spawn_job_runner(caf::actor_system& sys, job_runner_config cfg) {
  return sys.spawn<job_runner>(std::move(cfg));
}

} // namespace swarm::actors
