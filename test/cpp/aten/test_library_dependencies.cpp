// load_library's look at a library's ELF dependencies before opening it
// (aten/library_dependencies.h): the real DT_NEEDED list of a tessera-built library, the
// names of PyTorch's libraries, and hostile files (truncated, bytes flipped, not ELF)
// that must give nullopt or some list, never a crash (the ASan build runs this).
#include <aten/aten.h>
#include <aten/library.h>
#include <aten/library_dependencies.h>
#include <c10/util/Exception.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace {

std::vector<char> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string write_temp(const std::vector<char>& bytes, const std::string& name) {
  const std::string path = testing::TempDir() + name;
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

TEST(LibraryDependencies, ReadsTheNeededListOfATesseraLibrary) {
  const auto needed = torch::elf_needed_libraries(TESSERA_MYOPS_PATH);
  ASSERT_TRUE(needed.has_value());
  EXPECT_NE(std::find(needed->begin(), needed->end(), "libaten.so.0"), needed->end());
  EXPECT_NE(std::find(needed->begin(), needed->end(), "libtessera_c10.so.0"), needed->end());
  for (const auto& name : *needed) EXPECT_FALSE(torch::is_pytorch_library_name(name)) << name;
}

TEST(LibraryDependencies, KnowsPyTorchsLibrariesByName) {
  for (const char* name : {"libc10.so", "libc10.so.1.13", "libtorch.so.1.13", "libtorch_cpu.so",
                           "libtorch_python.so.1.13", "libc10_cuda.so", "libshm.so.1.13"}) {
    EXPECT_TRUE(torch::is_pytorch_library_name(name)) << name;
  }
  for (const char* name : {"libtessera_c10.so.0", "libaten.so.0", "libtessera_autograd.so.0", "libc10x.so",
                           "libtorchvision.so", "libc.so.6", "libtorch", ""}) {
    EXPECT_FALSE(torch::is_pytorch_library_name(name)) << name;
  }
}

TEST(LibraryDependencies, HostileFilesNeverCrash) {
  const std::vector<char> good = read_all(TESSERA_MYOPS_PATH);
  ASSERT_GT(good.size(), 4096u);
  EXPECT_FALSE(torch::elf_needed_libraries(testing::TempDir() + "no_such_library.so").has_value());
  EXPECT_FALSE(torch::elf_needed_libraries(write_temp({'n', 'o', 't', ' ', 'E', 'L', 'F'}, "junk.so")).has_value());
  // Every truncation point in the header and section table region, and some further on.
  for (size_t cut = 0; cut < good.size(); cut += cut < 256 ? 1 : 997) {
    const auto path = write_temp(std::vector<char>(good.begin(), good.begin() + static_cast<long>(cut)), "cut.so");
    (void)torch::elf_needed_libraries(path);
  }
  // Random bytes flipped anywhere, many at once in the header.
  std::mt19937 gen(1234);
  std::uniform_int_distribution<size_t> anywhere(0, good.size() - 1), header(0, 127);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 300; ++round) {
    std::vector<char> bad = good;
    for (int i = 0; i < 8; ++i) bad[round % 2 ? anywhere(gen) : header(gen)] = static_cast<char>(byte(gen));
    const auto path = write_temp(bad, "flipped.so");
    (void)torch::elf_needed_libraries(path);
  }
}

TEST(LibraryDependencies, LoadLibraryRefusesALibraryThatRegistersNothing) {
  // c10's test hooks: a tessera library with no TORCH_LIBRARY block; refused every time,
  // also when the loader kept it mapped after the first refusal, and libc (mapped from the
  // start) too.
  for (const char* path : {TESSERA_NOTHING_PATH, TESSERA_NOTHING_PATH, "libc.so.6"}) {
    try {
      torch::load_library(path);
      FAIL() << "load_library accepted " << path << ", which registers nothing";
    } catch (const c10::Error& e) {
      EXPECT_NE(std::string(e.what()).find("registers nothing with tessera"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(torch::unload_library(TESSERA_NOTHING_PATH), c10::Error);  // not kept as loaded
}

TEST(LibraryDependencies, LoadLibraryRefusesPyTorchByName) {
  // a bare name is searched for by dlopen; PyTorch's own names are refused before that
  try {
    torch::load_library("libtorch_cpu.so.1.13");
    FAIL() << "load_library accepted PyTorch's libtorch_cpu";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("is PyTorch's libtorch_cpu.so.1.13"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(torch::is_pytorch_library_name("/opt/torch/lib/libc10.so"));  // linked by path
}

TEST(LibraryDependencies, LoadingAgainAfterUnloadStillWorks) {
  // the block check finds a still-mapped library's blocks (dormant after unload)
  auto& d = c10::Dispatcher::singleton();
  torch::load_library(TESSERA_MYOPS_PATH);
  torch::unload_library(TESSERA_MYOPS_PATH);
  torch::load_library(TESSERA_MYOPS_PATH);
  EXPECT_TRUE(d.findSchema({"myops::scale", ""}).has_value());
  torch::unload_library(TESSERA_MYOPS_PATH);
  EXPECT_FALSE(d.findSchema({"myops::scale", ""}).has_value());
}

}  // namespace
