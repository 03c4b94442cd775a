#include "base/private_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

namespace swarm {

namespace {

error io_failure(const std::string& what) {
  return error{errc::io_error, what + ": " + std::strerror(errno)};
}

} // namespace

result<private_dir> private_dir::make(const std::string& parent,
                                      const std::string& prefix) {
  auto pattern = parent + "/" + prefix + "XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data()))
    return io_failure("cannot make a private folder under " + parent);
  return private_dir{name.data(), true};
}

result<private_dir> private_dir::keep(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  ::chmod(path.c_str(), 0700); // ours if just made; checked below either way
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return io_failure("cannot use folder " + path);
  auto refuse = [&](const std::string& why) {
    return error{errc::invalid_argument,
                 "will not keep private files in " + path + ": " + why};
  };
  if (S_ISLNK(st.st_mode)) return refuse("it is a symlink");
  if (!S_ISDIR(st.st_mode)) return refuse("it is not a folder");
  if (st.st_uid != ::geteuid())
    return refuse("it belongs to user " + std::to_string(st.st_uid) + ", not " +
                  std::to_string(::geteuid()));
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%o", static_cast<unsigned>(st.st_mode & 0777));
    return refuse(std::string{"others may enter it (mode "} + mode + ")");
  }
  return private_dir{path, false};
}

private_dir::private_dir(private_dir&& other) noexcept
    : path_(std::move(other.path_)), remove_(std::exchange(other.remove_, false)) {}

private_dir& private_dir::operator=(private_dir&& other) noexcept {
  if (this != &other) {
    private_dir gone{std::move(*this)};
    path_ = std::move(other.path_);
    remove_ = std::exchange(other.remove_, false);
  }
  return *this;
}

private_dir::~private_dir() {
  if (!remove_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

result<int> create_private_file(const std::string& path) {
  int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return io_failure("cannot create " + path);
  return fd;
}

} // namespace swarm
