#pragma once
// Temporary files removed when the process is interrupted (SIGINT, SIGTERM, SIGHUP): an
// AtomicFile's temporary would otherwise stay beside its target, hidden and as large as the
// output (a generated matrix of gigabytes), and a StagedFolder's staging folder would stay with
// every file written so far. The handler unlinks the registered files, empties and removes the
// registered folders, then lets the signal end the process as it would have.
#include <string>

namespace sparsetune::io {

// Registers `path` for removal on an interrupt; returns its slot (-1 when every slot is taken,
// which leaves that file to the old behaviour). Installs the handlers where a signal still has
// its default action.
int remove_on_interrupt(const std::string& path);
// Registers the folder `path` for removal on an interrupt, with what it holds (one level of
// files, and folders that are empty once their files are gone); returns its slot as above.
int remove_folder_on_interrupt(const std::string& path);
// The file or folder of `slot` no longer needs removing (it was committed or removed).
void forget_on_interrupt(int slot);

}  // namespace sparsetune::io
