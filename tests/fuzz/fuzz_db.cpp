// Fuzzes the tuning-database import: the bytes become a file that `db merge` copies into a
// database (one in-memory target for the whole run), and that `--db` opens directly (one input in
// 16: opening writes the schema, which is slow). Either the rows come in whole, or the file is
// refused with sparsetune::Error and the target keeps exactly what it held.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "db/tuning_db.hpp"
#include "fuzz_check.hpp"

using namespace sparsetune;

namespace {

// Memory-backed when the machine has /dev/shm: the database's fsyncs cost nothing there.
std::filesystem::path scratch_root() {
  std::error_code ec;
  return std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm")
                                                       : std::filesystem::temp_directory_path();
}

std::string scratch(const char* name) {
  static const std::string dir = [] {
    std::string d = (scratch_root() / ("sparsetune-fuzz-db-" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir + "/" + name;
}

void write(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::filesystem::remove(path + suffix, ec);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // One in-memory target for the whole run: each input is merged in, then its rows removed.
  static db::TuningDb target(":memory:");
  static const bool seeded = [] {
    db::Measurement m;
    m.fingerprint = "csr1-fuzz";
    m.candidate = "graph/kept";
    target.add(m);
    return true;
  }();
  (void)seeded;
  const std::string other = scratch("other.db");
  write(other, data, size);
  const std::int64_t before = target.stats().measurements;
  try {
    const auto added = target.merge(other);
    FUZZ_ASSERT(added >= 0);
    FUZZ_ASSERT(target.stats().measurements == before + added);
  } catch (const Error&) {
    // nothing half-merged
    FUZZ_ASSERT(target.stats().measurements == before);
  }
  // The same file opened directly, as --db does, one input in 16 (it writes the schema).
  if (size > 0 && data[0] % 16 == 0) {
    write(other, data, size);
    try {
      db::TuningDb direct(other);
      (void)direct.stats();
      (void)direct.measurements();
    } catch (const Error&) {
    }
  }
  return 0;
}
