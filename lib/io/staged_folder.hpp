#pragma once
// An output folder replaced as a whole: files are written into a hidden staging folder beside the
// target, and commit() swaps it with the target in one rename (renameat2 RENAME_EXCHANGE), so a
// killed run leaves either every previous output or every new one, never a mix. Files already in
// the target that this run does not write are carried over (hard links), except, for a folder of
// one run's outputs (Outputs::one_run), the files an earlier run of this tool wrote there: those
// are listed in the folder's `.sparsetune-outputs`, so a tune's report never sits beside another
// run's kernel while a user's own files stay. A target holding folders, or the current folder or
// one of its parents, is refused by name. An interrupt
// (SIGINT, SIGTERM, SIGHUP) before commit() removes the staging folder (io/interrupt_cleanup).
#include <string>
#include <string_view>
#include <vector>

namespace sparsetune::io {

class StagedFolder {
 public:
  enum class Outputs {
    gathered,  // files added to a folder of others (a models folder): every other file stays
    one_run,   // one run's outputs: what an earlier run wrote and this one does not is dropped
  };
  static constexpr const char* kOutputList = ".sparsetune-outputs";

  explicit StagedFolder(std::string dir, Outputs outputs = Outputs::gathered);
  // Throws Error naming `dir` when it cannot be an output folder: a file, the current folder or
  // one of its parents, a mount point (no rename can replace it), a name such as "." or "..".
  // The constructor checks it too; a command calls it first, before work that would be lost.
  static void check_target(const std::string& dir);
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
  Outputs outputs_;
  int interrupt_slot_ = -1;
};

}  // namespace sparsetune::io
