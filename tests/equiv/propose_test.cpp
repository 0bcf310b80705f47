// tangle propose: relations from recorded values, and refusing to guess when values cannot decide.
#include "equiv/propose.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/error.h"

namespace tangle::equiv {
namespace {

Tensor t(std::vector<int64_t> shape, std::vector<double> data, std::string kind = "placeholder") {
  Tensor x;
  x.shape = std::move(shape);
  x.data = std::move(data);
  x.kind = std::move(kind);
  return x;
}

void put(Values& v, const std::string& name, Tensor x) {
  v.order.push_back(name);
  v.tensors[name] = std::move(x);
}

const Proposal& of(const std::vector<Proposal>& ps, const std::string& n) {
  for (const auto& p : ps)
    if (p.spec == n) return p;
  throw std::runtime_error("no proposal for " + n);
}

TEST(Propose, FusedRowsAreSlicesTransposesAndReshapes) {
  Values spec, impl;
  // impl fuses q (2 rows) and k (1 row) of width 2; spec keeps them apart
  put(impl, "qk", t({3, 2}, {1, 2, 3, 4, 5, 6}));
  put(impl, "w", t({2, 3}, {7, 8, 9, 10, 11, 12}));
  put(impl, "ids", t({4}, {3, 1, 0, 2}));
  put(spec, "q", t({2, 2}, {1, 2, 3, 4}));
  put(spec, "k", t({1, 2}, {5, 6}));
  put(spec, "wt", t({3, 2}, {7, 10, 8, 11, 9, 12}));
  put(spec, "ids", t({1, 4}, {3, 1, 0, 2}));
  auto ps = propose(spec, impl);
  EXPECT_EQ(of(ps, "q").expr, "slice(D0.qk, dim=0, start=0, end=2)");
  EXPECT_EQ(of(ps, "k").expr, "slice(D0.qk, dim=0, start=2, end=3)");
  EXPECT_EQ(of(ps, "wt").expr, "transpose(D0.w, 0, 1)");
  EXPECT_EQ(of(ps, "ids").expr, "reshape(D0.ids, [1, 4])");
}

// HF initializes biases to 0 and norm weights to 1: on such values every all-zero slice of a fused bias
// matches, so the proposal must refuse rather than take the first (a wrong relation would then be
// "proved" on a degenerate input).
TEST(Propose, DegenerateValuesAreRefusedNotGuessed) {
  Values spec, impl;
  put(impl, "qkv_bias", t({6}, {0, 0, 0, 0, 0, 0}));
  put(impl, "norm1", t({3}, {1, 1, 1}));
  put(impl, "norm2", t({3}, {1, 1, 1}));
  put(spec, "k_bias", t({2}, {0, 0}));
  put(spec, "post_norm", t({3}, {1, 1, 1}));
  auto ps = propose(spec, impl);
  EXPECT_EQ(of(ps, "k_bias").expr, "");
  EXPECT_NE(of(ps, "k_bias").note.find("ambiguous"), std::string::npos);
  EXPECT_EQ(of(ps, "post_norm").expr, "");
  EXPECT_NE(of(ps, "post_norm").note.find("ambiguous"), std::string::npos);
}

TEST(Propose, ConstantRegionFrontierMatchesDoubledHalves) {
  Values spec, impl;
  // HF's rotary cos = cat(c, c) over [T, D]; vLLM's cache lookup holds c: [T, D/2]
  put(impl, "cos_half", t({2, 2}, {0.1, 0.2, 0.3, 0.4}, "call_function"));
  put(spec, "cos", t({1, 2, 4}, {0.1, 0.2, 0.1, 0.2, 0.3, 0.4, 0.3, 0.4}, "call_function"));
  auto ps = propose(spec, impl, 1e-6, {"cos"});  // a cut point the user asks for
  EXPECT_EQ(of(ps, "cos").expr, "reshape(concat(D0.cos_half, D0.cos_half, dim=1), [1, 2, 4])");
  EXPECT_TRUE(of(ps, "cos").cut);
}

TEST(Propose, ConstantOnlyFrontierIsLeftToEvaluationNotCut) {
  Values spec, impl;
  put(impl, "mask", t({2, 2}, {0, -1, 0, 0}, "call_function"));
  put(spec, "where", t({1, 2, 2}, {0, -1, 0, 0}, "call_function"));
  spec.frontier = {"where"};
  auto ps = propose(spec, impl);
  EXPECT_EQ(of(ps, "where").expr, "");
  EXPECT_FALSE(of(ps, "where").cut);
  std::string text = relationText(ps, "hf.py", "vllm.py", {}, {});
  EXPECT_EQ(text.find("cut point"), std::string::npos) << text;
  EXPECT_NE(text.find("# S.where: computed from constants alone: the checker relates it by exact evaluation"),
            std::string::npos) << text;
}

TEST(Propose, NoMatchIsReportedWithoutARelation) {
  Values spec, impl;
  put(impl, "w", t({2}, {1, 2}));
  put(spec, "w", t({2}, {1, 2.5}));
  auto ps = propose(spec, impl);
  EXPECT_EQ(of(ps, "w").expr, "");
  std::string text = relationText(ps, "hf.py", "vllm.py", {{"w", "hf.w"}}, {});
  EXPECT_NE(text.find("# S.w (hf.w): no implementation tensor holds these values"), std::string::npos);
}

TEST(Propose, BadValuesFileIsOneInputError) {
  std::string path = ::testing::TempDir() + "bad.values.json";
  std::ofstream(path) << R"({"tensors": {"x": {"shape": [2, 2], "data": [1, 2, 3]}}})";
  try {
    readValues(path);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'x': 3 values for shape [2, 2]"), std::string::npos);
  }
}

}  // namespace
}  // namespace tangle::equiv

namespace tangle::equiv {
namespace {

Tensor op(std::vector<int64_t> shape, std::vector<double> data, std::vector<std::string> inputs, std::string src) {
  Tensor x = t(std::move(shape), std::move(data), "call_function");
  x.inputs = std::move(inputs);
  x.source = std::move(src);
  return x;
}

// The spec computes a = x * 2 then b = a + 1; the implementation stores a transposed and gets b wrong:
// the first divergence is b (not a, whose values the implementation holds rearranged), paired with the
// implementation operator that reads a's counterpart.
TEST(Localize, FirstDivergingTensorWithItsCounterpart) {
  Values spec, impl;
  put(spec, "x", t({2, 2}, {1, 2, 3, 4}));
  put(spec, "a", op({2, 2}, {2, 4, 6, 8}, {"x"}, "hf.py:10: a = x * 2"));
  put(spec, "b", op({2, 2}, {3, 5, 7, 9}, {"a"}, "hf.py:11: b = a + 1"));
  put(spec, "c", op({2, 2}, {6, 10, 14, 18}, {"b"}, "hf.py:12: c = b * 2"));
  put(impl, "x", t({2, 2}, {1, 2, 3, 4}));
  put(impl, "at", op({2, 2}, {2, 6, 4, 8}, {"x"}, "vllm.py:20: at = (x * 2).T"));
  put(impl, "bt", op({2, 2}, {3, 7, 5, 10}, {"at"}, "vllm.py:21: bt = at + 1 (wrong)"));
  auto d = firstDivergence(spec, impl);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->spec, "b");
  EXPECT_EQ(d->impl, "bt");
  EXPECT_EQ(d->specSource, "hf.py:11: b = a + 1");
  EXPECT_EQ(d->implSource, "vllm.py:21: bt = at + 1 (wrong)");
  ASSERT_EQ(d->matchedInputs.size(), 1u);
  EXPECT_EQ(d->matchedInputs[0], "S.a ~ D0.at");
}

TEST(Localize, NoDivergenceWhenEveryTensorHasACounterpart) {
  Values spec, impl;
  put(spec, "x", t({2}, {1, 2}));
  put(spec, "a", op({2}, {2, 4}, {"x"}, ""));
  put(impl, "x", t({2}, {1, 2}));
  put(impl, "a", op({1, 2}, {2, 4}, {"x"}, ""));
  EXPECT_FALSE(firstDivergence(spec, impl));
}

}  // namespace
}  // namespace tangle::equiv
