#pragma once
// Shared helpers of the io tests: paths of the stored test files and whole-file reads.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

namespace tessera::io::test {

/// Path of a file in tests/io/data.
inline std::string data_path(const std::string& f) { return std::string(TESSERA_IO_TEST_DATA) + "/" + f; }

/// The bytes of a file (a test failure, and "", when it cannot be opened).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace tessera::io::test
