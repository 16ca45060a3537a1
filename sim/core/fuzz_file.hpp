// For libFuzzer targets whose code under test reads a path (the trace importers, the YAML
// loaders): the input as an anonymous in-memory file, named by its /proc/self/fd/N path. No disk
// traffic and nothing left behind between iterations.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace xattn::core
{

class FuzzFile
{
public:
  FuzzFile(const std::uint8_t* data, std::size_t size) : fd_(memfd_create("xattn-fuzz", 0))
  {
    if (fd_ < 0) std::abort(); // the harness itself is broken: not a finding
    for (std::size_t done = 0; done < size;) {
      ssize_t n = write(fd_, data + done, size - done);
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~FuzzFile() { close(fd_); }
  FuzzFile(const FuzzFile&) = delete;
  FuzzFile& operator=(const FuzzFile&) = delete;
  const std::string& path() const { return path_; }

private:
  int fd_;
  std::string path_;
};

} // namespace xattn::core
