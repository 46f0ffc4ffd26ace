#include "io/staged_folder.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "core/error.hpp"
#include "io/file_bytes.hpp"
#include "io/interrupt_cleanup.hpp"

namespace sparsetune::io {

namespace fs = std::filesystem;

namespace {

std::string errno_text() { return std::strerror(errno); }

// Whether `dir` is the current folder or one of its parents (replacing it would pull the folder
// from under the caller).
bool holds_cwd(const fs::path& dir) {
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(dir, ec);
  if (ec) return false;
  for (fs::path p = fs::current_path(ec); !ec && !p.empty(); p = p.parent_path()) {
    if (p == target) return true;
    if (p == p.parent_path()) break;
  }
  return false;
}

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

void StagedFolder::check_target(const std::string& dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  const fs::path target(d);
  if (target.filename().empty() || target.filename() == "." || target.filename() == "..")
    throw Error(d + ": give the output folder a name of its own");
  if (holds_cwd(target))
    throw Error(d +
                ": is the current folder or holds it; write the outputs into a folder of "
                "their own");
  std::error_code ec;
  if (fs::exists(target, ec) && !fs::is_directory(target, ec))
    throw Error(d + ": exists and is not a folder");
  // A mount point cannot be renamed over: the swap at the end would fail after all the work.
  struct stat own {
  }, up{};
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (::stat(d.c_str(), &own) == 0 && ::stat(parent.c_str(), &up) == 0 && own.st_dev != up.st_dev)
    throw Error(d +
                ": is a mount point, which the outputs cannot replace as a whole; write them "
                "into a folder inside it");
}

StagedFolder::StagedFolder(std::string dir, Outputs outputs)
    : dir_(std::move(dir)), outputs_(outputs) {
  static std::atomic<unsigned> counter{0};
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  check_target(dir_);
  const fs::path target(dir_);
  std::error_code ec;
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) throw Error(dir_ + ": cannot create its parent folder: " + ec.message());
  staging_ = (parent / ("." + target.filename().string() + ".staging-" +
                        std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1))))
                 .string();
  if (!fs::create_directory(staging_, ec) || ec)
    throw Error(dir_ + ": cannot create the staging folder " + staging_ + ": " + ec.message());
  interrupt_slot_ = remove_folder_on_interrupt(staging_);
}

StagedFolder::~StagedFolder() {
  std::error_code ec;
  fs::remove_all(staging_, ec);
  forget_on_interrupt(interrupt_slot_);
}

std::string StagedFolder::add(const std::string& name, std::string_view bytes) {
  if (committed_) throw Error(dir_ + ": add() after commit()");
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    throw Error(dir_ + ": '" + name + "' is not a file name");
  write_file_atomic(staging_ + "/" + name, bytes);
  if (std::find(names_.begin(), names_.end(), name) == names_.end()) {
    names_.push_back(name);
    files_.push_back((fs::path(dir_) / name).string());
  }
  return (fs::path(dir_) / name).string();
}

void StagedFolder::adopt_written() {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(staging_)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (!e.is_regular_file())
      throw Error(dir_ + ": " + name + " was written into the staging folder and is not a file");
    found.push_back(name);
  }
  std::sort(found.begin(), found.end());
  for (const auto& name : found)
    if (std::find(names_.begin(), names_.end(), name) == names_.end()) {
      names_.push_back(name);
      files_.push_back((fs::path(dir_) / name).string());
    }
}

void StagedFolder::commit() {
  if (committed_) return;
  std::error_code ec;
  const bool existed = fs::is_directory(dir_, ec);
  // What an earlier run of one-run outputs wrote, read before anything is replaced.
  std::vector<std::string> earlier;
  if (outputs_ == Outputs::one_run && existed) {
    const fs::path list = fs::path(dir_) / kOutputList;
    if (fs::is_regular_file(list, ec)) {
      std::string name;
      for (std::istringstream in(read_file(list.string())); std::getline(in, name);)
        earlier.push_back(name);
    }
  }
  if (outputs_ == Outputs::one_run) {
    std::string list;
    for (const auto& name : names_) list += name + "\n";
    write_file_atomic(staging_ + "/" + kOutputList, list);
  }
  if (existed) {
    // Files this run does not write stay: hard links into the staging folder.
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
      const std::string name = e.path().filename().string();
      if (std::find(names_.begin(), names_.end(), name) != names_.end()) continue;
      if (outputs_ == Outputs::one_run &&
          (name == kOutputList || std::find(earlier.begin(), earlier.end(), name) != earlier.end()))
        continue;
      if (!e.is_regular_file())
        throw Error(dir_ + ": holds " + name +
                    ", which is not a plain file; write the outputs into a new or empty folder");
      if (::link(e.path().c_str(), (staging_ + "/" + name).c_str()) != 0)
        fs::copy_file(e.path(), staging_ + "/" + name, ec);
    }
    if (ec) throw Error(dir_ + ": cannot read the folder: " + ec.message());
  }
  fsync_path(staging_, O_RDONLY | O_DIRECTORY);
  // From here the staging folder becomes the output: an interrupt must not remove it.
  forget_on_interrupt(interrupt_slot_);
  interrupt_slot_ = -1;
  if (existed) {
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) != 0) {
      if (errno != EINVAL && errno != ENOSYS)
        throw Error(dir_ + ": cannot replace the folder: " + errno_text());
      // A file system without the exchange: two renames, the previous folder kept until the new
      // one is in place (a kill between them leaves it under the staging name).
      const std::string previous = staging_ + ".previous";
      if (::rename(dir_.c_str(), previous.c_str()) != 0 ||
          ::rename(staging_.c_str(), dir_.c_str()) != 0)
        throw Error(dir_ + ": cannot replace the folder: " + errno_text());
      fs::rename(previous, staging_, ec);
    }
    // staging_ now holds the previous outputs.
  } else if (::rename(staging_.c_str(), dir_.c_str()) != 0) {
    throw Error(dir_ + ": cannot create the folder: " + errno_text());
  }
  const fs::path parent = fs::path(dir_).has_parent_path() ? fs::path(dir_).parent_path() : ".";
  fsync_path(parent.string(), O_RDONLY | O_DIRECTORY);
  committed_ = true;
  fs::remove_all(staging_, ec);  // the previous outputs, or nothing
}

}  // namespace sparsetune::io
