#include <c10/core/Device.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>
#include <c10/util/Exception.h>

#include <gtest/gtest.h>

#include <sstream>
#include <unordered_set>

namespace {

using c10::Device;
using c10::DeviceType;

std::string error_of(const char* spec) {
  try {
    Device d(spec);
    ADD_FAILURE() << "'" << spec << "' parsed as " << d;
  } catch (const c10::Error& e) {
    return e.what();
  }
  return {};
}

TEST(Device, ParsesTorchDeviceStrings) {
  EXPECT_EQ(Device("cpu"), Device(DeviceType::CPU));
  EXPECT_EQ(Device("cuda"), Device(DeviceType::CUDA, -1));
  EXPECT_EQ(Device("cuda:1"), Device(DeviceType::CUDA, 1));
  EXPECT_EQ(Device("cuda:0").index(), 0);
  EXPECT_EQ(Device("meta"), Device(DeviceType::Meta));
  EXPECT_EQ(Device("cpu:0"), Device(DeviceType::CPU, 0));
  EXPECT_EQ(Device("cuda:127").index(), 127);
  EXPECT_TRUE(Device("meta").is_meta());
  EXPECT_FALSE(Device("cuda").has_index());
}

TEST(Device, PrintsAsTorchDoes) {
  EXPECT_EQ(Device("cpu").str(), "cpu");
  EXPECT_EQ(Device("cuda").str(), "cuda");
  EXPECT_EQ(Device(DeviceType::CUDA, 1).str(), "cuda:1");
  EXPECT_EQ(Device("meta").str(), "meta");
  std::ostringstream os;
  os << Device("cuda:3") << " " << DeviceType::Meta;
  EXPECT_EQ(os.str(), "cuda:3 meta");
}

TEST(Device, BadStringsAreClearErrors) {
  EXPECT_EQ(error_of("gpu"), "Expected one of cpu, cuda, meta device type at start of device string: gpu");
  EXPECT_EQ(error_of("CPU"), "Expected one of cpu, cuda, meta device type at start of device string: CPU");
  EXPECT_EQ(error_of("cuda:x"), "Invalid device string: 'cuda:x'");
  // The string's form is checked before its type name, and only the type is quoted then.
  EXPECT_EQ(error_of("gpu:1"), "Expected one of cpu, cuda, meta device type at start of device string: gpu");
  for (const char* bad : {"cuda:", "cuda:-1", "cuda: 1", "cuda:01", "cuda:1:2", "cuda:128", "cuda:1x", " cuda",
                          "cuda ", ":1", "cuda1", "gpu:x"}) {
    EXPECT_EQ(error_of(bad), std::string("Invalid device string: '") + bad + "'") << bad;
  }
  EXPECT_NE(error_of("").find("must not be empty"), std::string::npos);
}

TEST(Device, HashesAndCompares) {
  std::unordered_set<Device> set{Device("cpu"), Device("cuda:0"), Device("cuda:1"), Device("cuda:0")};
  EXPECT_EQ(set.size(), 3u);
  EXPECT_NE(Device("cuda:0"), Device("cuda:1"));
  EXPECT_NE(Device("cuda"), Device("cuda:0"));
}

TEST(LayoutAndMemoryFormat, PythonNames) {
  std::ostringstream os;
  os << c10::kStrided << " " << c10::kSparse << " " << c10::kSparseCsr << " " << c10::kMkldnn << " "
     << c10::MemoryFormat::ChannelsLast << " " << c10::MemoryFormat::ChannelsLast3d << " "
     << c10::MemoryFormat::Contiguous << " " << c10::MemoryFormat::Preserve;
  EXPECT_EQ(os.str(),
            "torch.strided torch.sparse_coo torch.sparse_csr torch._mkldnn torch.channels_last "
            "torch.channels_last_3d torch.contiguous_format torch.preserve_format");
}

}  // namespace
