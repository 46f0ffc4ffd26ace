#pragma once
// An output folder replaced as a whole: files are written into a hidden staging folder beside the
// target, and commit() swaps it with the target in one rename (renameat2 RENAME_EXCHANGE), so a
// killed run leaves either every previous output or every new one, never a mix. Files already in
// the target that this run does not write are carried over (hard links); a target holding
// folders, or the current folder or one of its parents, is refused by name. An interrupt
// (SIGINT, SIGTERM, SIGHUP) before commit() removes the staging folder (io/interrupt_cleanup).
#include <string>
#include <string_view>
#include <vector>

namespace sparsetune::io {

class StagedFolder {
 public:
  explicit StagedFolder(std::string dir);
  ~StagedFolder();  // without commit(): the staging folder is removed, the target untouched
  StagedFolder(const StagedFolder&) = delete;
  StagedFolder& operator=(const StagedFolder&) = delete;

  // Writes `name` (a plain file name) into the staging folder; returns its final path.
  std::string add(const std::string& name, std::string_view bytes);
  // The staging folder itself, for a program that writes its own files there; adopt_written()
  // then takes in every plain file it finds (names starting with '.' are left out).
  const std::string& staging_dir() const { return staging_; }
  void adopt_written();
  // Puts the staged files in place of the target folder.
  void commit();

  const std::string& dir() const { return dir_; }
  const std::vector<std::string>& files() const { return files_; }  // final paths, in order added

 private:
  std::string dir_, staging_;
  std::vector<std::string> names_, files_;
  bool committed_ = false;
  int interrupt_slot_ = -1;
};

}  // namespace sparsetune::io
