// Reads the reference tables that test/tools/write_torch_tables.py writes from the
// installed torch into $TESSERA_TEST_DATA (the torch_reference_tables CTest fixture).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tessera_test {

inline std::vector<std::string> reference_lines(const std::string& name) {
  const char* dir = std::getenv("TESSERA_TEST_DATA");
  EXPECT_NE(dir, nullptr) << "TESSERA_TEST_DATA is unset: run through ctest, which writes the torch tables first";
  std::vector<std::string> lines;
  if (!dir) return lines;
  std::ifstream in(std::string(dir) + "/" + name);
  EXPECT_TRUE(in.good()) << "cannot read " << dir << "/" << name;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  EXPECT_FALSE(lines.empty()) << name << " is empty";
  return lines;
}

inline std::vector<int64_t> parse_ints(const std::string& csv) {
  std::vector<int64_t> out;
  std::stringstream ss(csv);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.find_first_not_of(' ') != std::string::npos) out.push_back(std::stoll(item));
  }
  return out;
}

}  // namespace tessera_test
