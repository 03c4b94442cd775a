#pragma once

#include <string>

#include "base/result.hpp"

namespace swarm {

/// A folder only this process's user may enter (mode 0700). Made fresh under a parent
/// (`make`, with a random name, so nobody can plant it first), it is removed with all it
/// holds when its owner lets it go; taken over at a path the operator chose (`keep`), it
/// stays, and is refused unless it is a real folder of this user that nobody else may
/// write.
class private_dir {
public:
  /// A new folder `<parent>/<prefix>XXXXXX`; an error naming the parent if none can be
  /// made.
  static result<private_dir> make(const std::string& parent, const std::string& prefix);

  /// The folder at `path`, made (with its parents) if missing, kept when let go. An error
  /// naming it and what is wrong when it is a symlink, not a folder, another user's, or
  /// open to others (mode bits in 077).
  static result<private_dir> keep(const std::string& path);

  private_dir(private_dir&& other) noexcept;
  private_dir& operator=(private_dir&& other) noexcept;
  private_dir(const private_dir&) = delete;
  private_dir& operator=(const private_dir&) = delete;
  ~private_dir();

  const std::string& path() const noexcept { return path_; }

private:
  private_dir(std::string path, bool remove) : path_(std::move(path)), remove_(remove) {}

  std::string path_;
  bool remove_ = false;
};

/// Creates the file `path` for writing (mode 0600) and returns its descriptor: never
/// through a symlink, never a file that exists. An error naming the path otherwise.
result<int> create_private_file(const std::string& path);

} // namespace swarm
