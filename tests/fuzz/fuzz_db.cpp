// Fuzzes the tuning-database import: the bytes become a file that `db merge` copies into a
// database, and that `--db` opens directly. Either the rows come in whole, or the file is refused
// with sparsetune::Error and the target keeps exactly what it held.
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

std::string scratch(const char* name) {
  static const std::string dir = [] {
    std::string d = (std::filesystem::temp_directory_path() /
                     ("sparsetune-fuzz-db-" + std::to_string(getpid())))
                        .string();
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
  const std::string other = scratch("other.db");
  write(other, data, size);
  {
    db::TuningDb target(":memory:");
    db::Measurement m;
    m.fingerprint = "csr1-fuzz";
    m.candidate = "graph/kept";
    target.add(m);
    try {
      const auto added = target.merge(other);
      FUZZ_ASSERT(added >= 0);
      FUZZ_ASSERT(static_cast<std::int64_t>(target.measurements().size()) >= 1 + added);
    } catch (const Error&) {
      FUZZ_ASSERT(target.measurements().size() == 1);  // nothing half-merged
    }
  }
  write(other, data, size);
  try {
    db::TuningDb direct(other);
    (void)direct.stats();
    (void)direct.measurements();
  } catch (const Error&) {
  }
  return 0;
}
