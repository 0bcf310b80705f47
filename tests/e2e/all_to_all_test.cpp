// all_to_all_single end to end: tokens dispatched to the other rank with
// UNEVEN split sizes, processed there, and sent back refine the spec
// (confirmed by replay); a combine that returns the blocks in the wrong order
// is a violation.
#include <gtest/gtest.h>

#include "cli_support.h"

namespace tangle::e2e {
namespace {

std::string module(const std::string& params, const std::string& body) {
  std::string text = "import torch\n\nclass M(torch.nn.Module):\n    def forward(self, " + params + "):\n";
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) text += "        " + line + "\n";
  return text;
}

// Rank r holds `rows` tokens, keeps `keep` of them and sends `send` (after the
// kept ones) to the other rank, which applies relu and sends them back. With
// `swapped`, the combine's blocks come back in the wrong order.
std::string rankGraph(int r, bool swapped) {
  const int rows = r == 0 ? 3 : 4, keep = r == 0 ? 1 : 1, send = rows - keep;
  const int other = r == 0 ? 3 : 2;  // rows the other rank sends here
  std::string in = r == 0 ? "[" + std::to_string(keep) + ", " + std::to_string(send) + "]"
                          : "[" + std::to_string(send) + ", " + std::to_string(keep) + "]";
  std::string out = r == 0 ? "[" + std::to_string(keep) + ", " + std::to_string(other) + "]"
                           : "[" + std::to_string(other) + ", " + std::to_string(keep) + "]";
  std::string recvRows = std::to_string(keep + other), n = std::to_string(rows);
  std::string body =
      "a: \"f32[" + recvRows + ", 2]\" = torch.ops._c10d_functional.all_to_all_single.default(x, " + out + ", " + in +
      ", '0')\n"
      "w: \"f32[" + recvRows + ", 2]\" = torch.ops._c10d_functional.wait_tensor.default(a)\n"
      "h: \"f32[" + recvRows + ", 2]\" = torch.ops.aten.relu.default(w)\n"
      "b: \"f32[" + n + ", 2]\" = torch.ops._c10d_functional.all_to_all_single.default(h, " + in + ", " + out +
      ", '0')\n"
      "y: \"f32[" + n + ", 2]\" = torch.ops._c10d_functional.wait_tensor.default(b)\n";
  if (!swapped) return module("x: \"f32[" + n + ", 2]\"", body + "return (y,)");
  // the blocks of the two ranks back in the wrong order
  std::string first = r == 0 ? std::to_string(keep) : std::to_string(send);
  body += "s0: \"f32[" + first + ", 2]\" = torch.ops.aten.slice.Tensor(y, 0, 0, " + first + ")\n"
          "s1: \"f32[" + std::to_string(rows - std::stoi(first)) + ", 2]\" = torch.ops.aten.slice.Tensor(y, 0, " + first +
          ", " + n + ")\n"
          "z: \"f32[" + n + ", 2]\" = torch.ops.aten.cat.default([s1, s0])\n";
  return module("x: \"f32[" + n + ", 2]\"", body + "return (z,)");
}

RunResult check(bool swapped, const std::string& extra = "") {
  fs::path dir = tempPath("a2a");
  fs::create_directories(dir);
  std::ofstream(dir / "spec.py") << module("x: \"f32[7, 2]\"",
                                           "y: \"f32[7, 2]\" = torch.ops.aten.relu.default(x)\nreturn (y,)");
  for (int r = 0; r < 2; ++r) std::ofstream(dir / ("impl.r" + std::to_string(r) + ".py")) << rankGraph(r, swapped);
  std::ofstream(dir / "check.rel") << "spec spec.py\nimpl impl.r{rank}.py ranks 2\nS.x = shard(D*.x, dim=0)\n";
  std::vector<std::string> args = {"check", (dir / "check.rel").string()};
  if (!extra.empty()) args.push_back(extra);
  RunResult r = runTangle(args);
  fs::remove_all(dir);
  return r;
}

TEST(AllToAllE2E, UnevenDispatchAndCombineRefines) {
  RunResult r = check(false, "--replay");
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_EQ(firstLine(r.out), "verdict: refines") << r.out;
  EXPECT_TRUE(contains(r.out, "S.y = concat(D0.y, D1.y, dim=0)")) << r.out;
  EXPECT_FALSE(contains(r.out, "replay not possible")) << r.out;
  EXPECT_FALSE(contains(r.out, "mismatch")) << r.out;
}

TEST(AllToAllE2E, BlocksCombinedInTheWrongOrderAreAViolation) {
  RunResult r = check(true);
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  EXPECT_EQ(firstLine(r.out), "verdict: violation") << r.out;
}

}  // namespace
}  // namespace tangle::e2e
