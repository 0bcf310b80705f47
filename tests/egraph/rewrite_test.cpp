#include "egraph/rewrite.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "test_util.h"

using namespace tangle;
using namespace tangle::eg;
using eg::test::node;

namespace {
Rule rewrite(std::string name, std::string_view lhs, std::string_view rhs) {
  Rule r;
  r.name = std::move(name);
  r.lhs = Pattern::parse(lhs);
  r.rhs = Pattern::parse(rhs);
  return r;
}

// A rule that grows the e-graph forever: every tensor class gets a fresh node.
Rule fresh(std::string name, std::chrono::milliseconds delay = {}) {
  auto counter = std::make_shared<int64_t>(0);
  Rule r;
  r.name = std::move(name);
  r.lhs = Pattern::parse("(tensor[_, _])");  // every tensor leaf (name, owner)
  r.apply = [counter, delay](EGraph& g, const Match&) -> std::optional<Id> {
    if (delay.count()) std::this_thread::sleep_for(delay);
    return g.add(node("fresh", {}, {Attr::integer((*counter)++)}));
  };
  return r;
}
}  // namespace

TEST(Runner, CommutativityAssociativitySaturates) {
  EGraph g;
  Id a = g.leaf("a", {}), b = g.leaf("b", {}), c = g.leaf("c", {});
  Id root = g.add(node("add", {a, g.add(node("add", {b, c}))}));
  std::vector<Rule> rules{rewrite("comm", "(add ?x ?y)", "(add ?y ?x)"),
                          rewrite("assoc", "(add ?x (add ?y ?z))", "(add (add ?x ?y) ?z)")};
  RunReport rep = run(g, rules, RunLimits{});
  EXPECT_EQ(rep.stop, StopReason::Saturated);
  EXPECT_GT(rep.firings.at(0), 0u);
  EXPECT_GT(rep.firings.at(1), 0u);
  EXPECT_TRUE(g.clean());
  g.checkInvariants();
  // All 12 bracketings/orderings of a+b+c are in the root class.
  Id leaves[] = {a, b, c};
  int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (auto& p : perms) {
    Id x = leaves[p[0]], y = leaves[p[1]], z = leaves[p[2]];
    auto left = g.lookup(node("add", {x, y}));
    ASSERT_TRUE(left.has_value());
    EXPECT_EQ(g.lookup(node("add", {*left, z})), g.find(root));
    auto right = g.lookup(node("add", {y, z}));
    ASSERT_TRUE(right.has_value());
    EXPECT_EQ(g.lookup(node("add", {x, *right})), g.find(root));
  }
  // Classes: a, b, c, the three pairs, the root.
  EXPECT_EQ(g.numClasses(), 7u);
  // Running again changes nothing.
  RunReport again = run(g, rules, RunLimits{});
  EXPECT_EQ(again.stop, StopReason::Saturated);
  EXPECT_EQ(again.iterations, 1u);
  EXPECT_EQ(again.firings.at(0), 0u);
}

TEST(Runner, FiringsCountOnlyChangingMerges) {
  EGraph g;
  Id a = g.leaf("a", {});
  g.add(node("add", {a, a}));
  RunReport rep = run(g, {rewrite("comm", "(add ?x ?y)", "(add ?y ?x)")}, RunLimits{});
  EXPECT_EQ(rep.stop, StopReason::Saturated);
  EXPECT_EQ(rep.iterations, 1u);
  EXPECT_EQ(rep.firings.at(0), 0u);
}

TEST(Runner, GuardsRejectAndBindDerivedAttributes) {
  EGraph g;
  Id a = g.leaf("a", {}), b = g.leaf("b", {});
  Id fa = g.add(node("f", {a}, {Attr::integer(2)}));
  Id fb = g.add(node("f", {b}, {Attr::integer(5)}));
  Rule r = rewrite("f-to-g", "(f[?n] ?x)", "(g[?m] ?x)");
  r.guard = [](const EGraph&, Subst& s) {
    if (s.integer("n") > 3) return false;  // reject f[5]
    s.attrs["m"] = Attr::integer(s.integer("n") * 10);
    return true;
  };
  RunReport rep = run(g, {r}, RunLimits{});
  EXPECT_EQ(rep.stop, StopReason::Saturated);
  EXPECT_EQ(rep.firings.at(0), 1u);
  EXPECT_EQ(g.lookup(node("g", {a}, {Attr::integer(20)})), fa);
  EXPECT_FALSE(g.lookup(node("g", {b}, {Attr::integer(50)})).has_value());
  EXPECT_EQ(g.eclass(fb).nodes.size(), 1u);
}

TEST(Runner, ConstrainedRulesNeedExistingSubNodes) {
  EGraph g;
  Id x = g.leaf("x", {}), y = g.leaf("y", {});
  Id fx = g.add(node("f", {x}));
  Id fy = g.add(node("f", {y}));
  Id hy = g.add(node("h", {y}));
  Rule r = rewrite("f-is-g-of-h", "(f ?a)", "(g (h ?a))");
  r.constrained = true;
  RunReport rep = run(g, {r}, RunLimits{});
  EXPECT_EQ(rep.firings.at(0), 1u);  // only for y, where h(y) exists
  EXPECT_EQ(g.lookup(node("g", {hy})), fy);
  EXPECT_FALSE(g.lookup(node("h", {x})).has_value());
  EXPECT_EQ(g.eclass(fx).nodes.size(), 1u);
  // Unconstrained, it fires for x too.
  r.constrained = false;
  run(g, {r}, RunLimits{});
  ASSERT_TRUE(g.lookup(node("h", {x})).has_value());
  EXPECT_EQ(g.lookup(node("g", {*g.lookup(node("h", {x}))})), g.find(fx));
}

TEST(Runner, IterationLimit) {
  EGraph g;
  g.leaf("a", {});
  RunLimits lim;
  lim.maxIterations = 3;
  RunReport rep = run(g, {fresh("grow")}, lim);
  EXPECT_EQ(rep.stop, StopReason::IterationLimit);
  EXPECT_EQ(rep.iterations, 3u);
  EXPECT_EQ(rep.firings.at(0), 3u);
  EXPECT_EQ(g.numNodes(), 4u);
}

TEST(Runner, NodeLimitStopsARunawayIteration) {
  EGraph g;
  for (int i = 0; i < 1000; ++i) g.leaf("t" + std::to_string(i), {});
  RunLimits lim;
  lim.maxNodes = 1100;
  RunReport rep = run(g, {fresh("grow")}, lim);
  EXPECT_EQ(rep.stop, StopReason::NodeLimit);
  EXPECT_EQ(rep.iterations, 1u);
  EXPECT_LE(g.numNodes(), 1100u + 64u);  // stopped inside the iteration
  EXPECT_TRUE(g.clean());
}

TEST(Runner, TimeLimitStopsARunawayIteration) {
  EGraph g;
  for (int i = 0; i < 1000; ++i) g.leaf("t" + std::to_string(i), {});
  RunLimits lim;
  lim.maxSeconds = 0.02;
  RunReport rep = run(g, {fresh("slow", std::chrono::milliseconds(1))}, lim);
  EXPECT_EQ(rep.stop, StopReason::TimeLimit);
  EXPECT_LT(rep.seconds, 0.5);  // not 1000 x 1 ms
  EXPECT_TRUE(g.clean());
}

TEST(Runner, MaxMatchesPerRule) {
  EGraph g;
  for (int i = 0; i < 10; ++i) g.leaf("t" + std::to_string(i), {});
  RunLimits lim;
  lim.maxIterations = 1;
  lim.maxMatchesPerRule = 4;
  RunReport rep = run(g, {fresh("grow")}, lim);
  EXPECT_EQ(rep.firings.at(0), 4u);
}

// Four matches, the first three change nothing.
EGraph threeNoOpsThenOne() {
  EGraph g;
  Id a = g.leaf("a", {}), b = g.leaf("b", {});
  for (int i = 0; i < 3; ++i) g.add(node("add", {a, a}, {Attr::integer(i)}));
  g.add(node("add", {a, b}, {Attr::integer(9)}));
  return g;
}

TEST(Runner, TruncatedSearchIsNotSaturation) {
  // With an allowance of 3 that may not grow, the run cannot claim saturation.
  EGraph g = threeNoOpsThenOne();
  RunLimits lim;
  lim.maxMatchesPerRule = 3;
  lim.maxMatchesGrowth = 1;
  RunReport rep = run(g, {rewrite("comm", "(add[?n] ?x ?y)", "(add[?n] ?y ?x)")}, lim);
  EXPECT_EQ(rep.stop, StopReason::MatchLimit);
  EXPECT_EQ(rep.firings.at(0), 0u);
}

TEST(Runner, TruncatedRuleGetsMoreMatchesNextIteration) {
  // The same first three matches are not retaken forever: the allowance
  // doubles, the fourth match applies and the run saturates.
  EGraph g = threeNoOpsThenOne();
  RunLimits lim;
  lim.maxMatchesPerRule = 3;
  RunReport rep = run(g, {rewrite("comm", "(add[?n] ?x ?y)", "(add[?n] ?y ?x)")}, lim);
  EXPECT_EQ(rep.stop, StopReason::Saturated);
  EXPECT_EQ(rep.firings.at(0), 1u);
}

// f(x), k(x): a constrained rule f(a) -> g(h(a)) can apply only once k-to-h (an RHS rule) has
// built h(x), in k(x)'s class: a change outside f(x)'s match, so no partial search finds it.
TEST(Runner, ConfirmingSearchLeavesOutOnlyRulesThatReadOnlyTheirMatch) {
  for (bool declaredLocal : {false, true}) {
    EGraph g;
    Id x = g.leaf("x", {});
    Id fx = g.add(node("f", {x}));
    g.add(node("k", {x}));
    Rule needsH = rewrite("f-is-g-of-h", "(f ?a)", "(g (h ?a))");
    needsH.constrained = true;
    needsH.local = declaredLocal;  // wrongly: it reads whether h(a) exists
    EXPECT_FALSE(isLocal(needsH) && !declaredLocal);
    std::vector<Rule> rules{needsH, rewrite("k-to-h", "(k ?a)", "(h ?a)")};
    EXPECT_TRUE(isLocal(rules[1]));
    RunReport rep = run(g, rules, RunLimits{});
    EXPECT_EQ(rep.stop, StopReason::Saturated);
    auto hx = g.lookup(node("h", {x}));
    ASSERT_TRUE(hx.has_value());
    auto ghx = g.lookup(node("g", {*hx}));
    // Applied by the full search that confirms saturation, unless declared local.
    EXPECT_EQ(ghx.has_value(), !declaredLocal);
    if (ghx) {
      EXPECT_EQ(*ghx, g.find(fx));
    }
  }
}

// p(f(a), b) and q(c) in one class, c = u(z): u-to-v changes c's class, which puts the root
// class in the next partial search's region; the match of (p (f ?x) ?y) there touches no changed
// class and is not applied again until the confirming full search.
TEST(Runner, PartialSearchSkipsMatchesTouchingNoChangedClass) {
  EGraph g;
  Id a = g.leaf("a", {}), b = g.leaf("b", {}), z = g.leaf("z", {});
  Id c = g.add(node("u", {z}));
  Id root = g.add(node("p", {g.add(node("f", {a})), b}));
  g.merge(root, g.add(node("q", {c})));
  g.rebuild();
  auto calls = std::make_shared<int>(0);
  Rule counting;
  counting.name = "counting";
  counting.lhs = Pattern::parse("(p (f ?x) ?y)");
  counting.apply = [calls](EGraph&, const Match&) -> std::optional<Id> {
    ++*calls;
    return std::nullopt;
  };
  RunReport rep = run(g, {counting, rewrite("u-to-v", "(u ?z)", "(v ?z)")}, RunLimits{});
  EXPECT_EQ(rep.stop, StopReason::Saturated);
  EXPECT_EQ(g.lookup(node("v", {z})), g.find(c));
  // The first full search, then the confirming one (the partial search in between skips it).
  EXPECT_EQ(*calls, 2);
}

// A run resumed from the last one's saturatedAt searches only where the e-graph changed since,
// and ends where a fresh run would.
TEST(Runner, ResumedRunSearchesOnlyWhatChangedSinceSaturation) {
  auto calls = std::make_shared<int>(0);
  Rule counting;  // never fires; counts the matches of (p ?x) it is shown
  counting.name = "counting";
  counting.lhs = Pattern::parse("(p ?x)");
  counting.local = true;
  counting.apply = [calls](EGraph&, const Match&) -> std::optional<Id> {
    ++*calls;
    return std::nullopt;
  };
  std::vector<Rule> rules{counting, rewrite("comm", "(add ?x ?y)", "(add ?y ?x)")};
  auto build = [](EGraph& g) {
    Id a = g.leaf("a", {}), b = g.leaf("b", {});
    g.add(node("p", {a}));
    g.add(node("add", {a, b}));
  };
  EGraph resumed, fresh;
  build(resumed);
  build(fresh);
  RunReport first = run(resumed, rules, RunLimits{});
  ASSERT_EQ(first.stop, StopReason::Saturated);
  ASSERT_TRUE(first.saturatedAt.has_value());
  run(fresh, rules, RunLimits{});
  // New nodes after saturation, in both e-graphs alike.
  for (EGraph* g : {&resumed, &fresh}) {
    Id c = g->leaf("c", {});
    g->add(node("add", {c, g->leaf("a", {})}));
  }
  *calls = 0;
  RunReport again = run(resumed, rules, RunLimits{}, first.saturatedAt);
  EXPECT_EQ(again.stop, StopReason::Saturated);
  EXPECT_EQ(*calls, 0) << "(p a) touches no class changed since the last saturation";
  *calls = 0;
  run(fresh, rules, RunLimits{});
  EXPECT_EQ(*calls, 1) << "a fresh run searches everything first";
  EXPECT_EQ(resumed.numNodes(), fresh.numNodes());
  EXPECT_EQ(resumed.numClasses(), fresh.numClasses());
  Id a = resumed.leaf("a", {}), c = resumed.leaf("c", {});
  EXPECT_EQ(resumed.lookup(node("add", {a, c})), resumed.lookup(node("add", {c, a})));
  // A resume point past the log's end (another e-graph's) falls back to a full search.
  *calls = 0;
  run(resumed, rules, RunLimits{}, resumed.changeCount() + 1);
  EXPECT_EQ(*calls, 1);
}

TEST(Runner, RejectsMalformedRules) {
  EGraph g;
  Rule r;
  r.name = "empty";
  r.lhs = Pattern::parse("?x");
  EXPECT_THROW(run(g, {r}, RunLimits{}), std::invalid_argument);
}

TEST(Runner, RuleIndexKeepsOnlyRulesWhoseRootOperatorIsPresent) {
  std::vector<Rule> rules = {rewrite("mul-comm", "(mul ?x ?y)", "(mul ?y ?x)"),
                             rewrite("add-comm", "(add ?x ?y)", "(add ?y ?x)"),
                             rewrite("any-neg", "?x", "(neg (neg ?x))"),
                             rewrite("add-zero", "(add ?x ?x)", "(mul ?x ?x)")};
  RuleIndex index(rules);
  EXPECT_EQ(index.size(), 4u);
  EGraph g;
  Id a = g.leaf("a", {}), b = g.leaf("b", {});
  g.add(node("add", {a, b}));
  g.rebuild();
  std::vector<uint32_t> may;
  std::vector<uint64_t> scratch;
  index.mayMatch(g, scratch, may);
  EXPECT_EQ(may, (std::vector<uint32_t>{1, 2, 3})) << "rule order, the variable-rooted rule included";
  g.add(node("mul", {a, b}));
  g.rebuild();
  index.mayMatch(g, scratch, may);
  EXPECT_EQ(may, (std::vector<uint32_t>{0, 1, 2, 3}));
  // More rules than one mask word: indices past 64 keep their order.
  std::vector<Rule> many;
  for (int i = 0; i < 70; ++i) many.push_back(rewrite("r" + std::to_string(i), i % 2 ? "(add ?x ?y)" : "(sub ?x ?y)", "(add ?y ?x)"));
  RuleIndex manyIndex(many);
  EGraph h;
  Id c = h.leaf("c", {});
  h.add(node("add", {c, c}));
  h.rebuild();
  manyIndex.mayMatch(h, scratch, may);
  ASSERT_EQ(may.size(), 35u);
  for (size_t k = 0; k < may.size(); ++k) EXPECT_EQ(may[k], 2 * k + 1);
  // A rule whose operator only appears mid-run joins the next iteration: add-zero builds the mul
  // that mul-tag rewrites; given the index or not, the run saturates to the same e-graph.
  std::vector<Rule> chain = {rewrite("mul-tag", "(mul ?x ?y)", "(tag ?x)"), rules[3]};
  RuleIndex chainIndex(chain);
  EGraph with, without;
  for (EGraph* e : {&with, &without}) {
    Id x = e->leaf("a", {});
    e->add(node("add", {x, x}));
  }
  RunReport r1 = run(with, chain, RunLimits{}, std::nullopt, &chainIndex);
  RunReport r2 = run(without, chain, RunLimits{});
  EXPECT_EQ(r1.stop, StopReason::Saturated);
  EXPECT_EQ(r2.stop, StopReason::Saturated);
  EXPECT_EQ(r1.firings, r2.firings);
  EXPECT_EQ(r1.firings, (std::vector<size_t>{1, 1}));
  EXPECT_EQ(with.numNodes(), without.numNodes());
  Id x = with.leaf("a", {});
  EXPECT_TRUE(with.lookup(node("tag", {x})).has_value());
}

TEST(Runner, RuleIndexRejectsMalformedRules) {
  Rule r;
  r.name = "empty";
  r.lhs = Pattern::parse("?x");
  EXPECT_THROW(RuleIndex{std::vector<Rule>{r}}, std::invalid_argument);
}

TEST(Runner, StopReasonNames) {
  EXPECT_STREQ(toString(StopReason::Saturated), "saturated");
  EXPECT_STREQ(toString(StopReason::NodeLimit), "node limit");
}
