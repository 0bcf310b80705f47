// The driver's stages: prepareCheck reads and settles everything inference
// needs; checks run one after another keep their facts apart.
#include "driver/check.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tangle {
namespace {

CheckRequest request(const std::string& example) {
  CheckRequest req;
  req.relationPath = std::string(TANGLE_SOURCE_DIR) + "/examples/" + example;
  return req;
}

bool mentions(const std::vector<std::string>& lines, const std::string& what) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(what) != std::string::npos; });
}

TEST(PrepareCheck, SettlesTheFactsBeforeInference) {
  auto pc = prepareCheck(request("symbolic/split_even.rel"));
  ASSERT_TRUE(pc->specL && pc->implL);
  EXPECT_EQ(pc->impl.size(), 2u);
  EXPECT_EQ(pc->relation.relations.size(), 6u);  // expanded: three statements over D*, two ranks
  Problem p = pc->problem();
  EXPECT_EQ(p.symbols, pc->symbols.get());
  EXPECT_EQ(p.relation, &pc->relation);
  // The assumption and the input relations' shapes are known, and the
  // report's list of facts is taken once they all are.
  EXPECT_TRUE(mentions(pc->info.symbolFacts, "assume at"));
  EXPECT_TRUE(mentions(pc->info.symbolFacts, "input relation at"));
  EXPECT_EQ(pc->info.symbolFacts, pc->symbols->describe());
}

// split_even.rel assumes the token count even and refines; split.rel does not
// and is a violation. Run one after another, neither sees the other's facts.
TEST(RunCheck, ChecksOneAfterAnotherShareNoFacts) {
  auto even = runCheck(request("symbolic/split_even.rel"));
  auto odd = runCheck(request("symbolic/split.rel"));
  auto evenAgain = runCheck(request("symbolic/split_even.rel"));
  EXPECT_EQ(even->result.verdict, Verdict::Refines);
  EXPECT_EQ(odd->result.verdict, Verdict::Violation);
  EXPECT_EQ(evenAgain->result.verdict, Verdict::Refines);
  EXPECT_FALSE(mentions(odd->prepared->info.symbolFacts, "assume at"));
  EXPECT_EQ(even->prepared->info.symbolFacts, evenAgain->prepared->info.symbolFacts);
}

}  // namespace
}  // namespace tangle
