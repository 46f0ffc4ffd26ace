#include "io/interrupt_cleanup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>

namespace sparsetune::io {

namespace {

// Fixed storage: the handler may only read it (no allocation, no locks in a signal handler).
constexpr int kSlots = 32;
constexpr std::size_t kPathBytes = 4096;
char paths[kSlots][kPathBytes];
bool is_folder[kSlots];
std::atomic<bool> used[kSlots];
std::mutex claim;  // between threads claiming slots, never taken by the handler

// Empties and removes a folder with system calls only: getdents64 rather than readdir, which
// may allocate. Removing entries while reading them may skip some, so it reads again from the
// start until a pass removes nothing.
void remove_folder(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buf[4096];  // on the stack: two signals at once in two threads share nothing
  for (bool removed = true; removed;) {
    removed = false;
    ::lseek(fd, 0, SEEK_SET);
    for (;;) {
      const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        const auto* e = reinterpret_cast<const struct dirent64*>(buf + at);
        at += e->d_reclen;
        const char* name = e->d_name;
        if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
        if (::unlinkat(fd, name, 0) == 0 || ::unlinkat(fd, name, AT_REMOVEDIR) == 0) removed = true;
      }
    }
  }
  ::close(fd);
  ::rmdir(path);
}

extern "C" void remove_and_reraise(int sig) {
  for (int i = 0; i < kSlots; ++i)  // files first: some of them lie in the folders
    if (used[i].load() && !is_folder[i]) ::unlink(paths[i]);
  for (int i = 0; i < kSlots; ++i)
    if (used[i].load() && is_folder[i]) remove_folder(paths[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// Checked at every registration (three system calls), not once: a handler set to the default
// since (a forked child's) gets ours again.
void install() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    // A handler the program or its caller set (or an ignored signal) is left alone.
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = remove_and_reraise;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

int claim_slot(const std::string& path, bool folder) {
  if (path.size() >= kPathBytes) return -1;
  std::lock_guard<std::mutex> lock(claim);
  install();
  for (int i = 0; i < kSlots; ++i)
    if (!used[i].load()) {
      std::memcpy(paths[i], path.c_str(), path.size() + 1);
      is_folder[i] = folder;
      used[i].store(true);
      return i;
    }
  return -1;
}

}  // namespace

int remove_on_interrupt(const std::string& path) { return claim_slot(path, false); }

int remove_folder_on_interrupt(const std::string& path) { return claim_slot(path, true); }

void forget_on_interrupt(int slot) {
  if (slot >= 0 && slot < kSlots) used[slot].store(false);
}

}  // namespace sparsetune::io
