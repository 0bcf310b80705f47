// Every operator record has every part, and the parts agree: the sampler's
// attributes fit the schema, and on random instances the kernel's result has
// the shape the type rule infers. Lemma patterns use each op as its schema says.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "lemmas/lemmas.h"
#include "ops/ops.h"
#include "validate/generate.h"
#include "validate/pattern_tree.h"

namespace tangle::validate {
namespace {

const std::set<std::string> kKinds = {"int", "dim", "ints", "real", "bool", "str", "number"};

TEST(OpRecords, EveryRecordHasEveryPart) {
  ASSERT_GE(ops::allOps().size(), 50u);
  std::set<std::string> names;
  for (const ops::OpDef* op : ops::allOps()) {
    SCOPED_TRACE(op->name);
    EXPECT_TRUE(names.insert(op->name).second) << "duplicate record";
    EXPECT_EQ(ops::find(eg::intern(op->name)), op);
    EXPECT_NE(op->type, nullptr);
    bool leaf = std::string(op->name) == "tensor";
    EXPECT_EQ(op->eval == nullptr, leaf) << "every op but the tensor leaf has a kernel";
    auto schema = ops::attrSchema(*op);
    for (const auto& a : schema) {
      EXPECT_FALSE(a.name.empty());
      EXPECT_TRUE(kKinds.count(a.kind)) << "unknown attribute kind '" << a.kind << "'";
    }
    if (!leaf) {
      EXPECT_EQ(op->sample == nullptr, schema.empty()) << "a sampler exactly when there are attributes";
    }
    if (op->gather) {
      EXPECT_TRUE(op->eval) << "a gather is also evaluated";
    }
    if (op->clean) {  // rearrangements (a gather) or cross-rank combines (no attributes)
      EXPECT_TRUE(op->gather || schema.empty());
    }
    EXPECT_EQ(ops::hasKernel(eg::intern(op->name)), op->eval != nullptr);
  }
  // The interned symbol set names records only (syms() aborts otherwise).
  EXPECT_EQ(ops::find(ops::syms().apexLayerNormBwd)->name, std::string("apex_layer_norm_bwd"));
  EXPECT_EQ(ops::find(eg::intern("aten.native_dropout.default")), nullptr);
}

TEST(OpRecords, SchemaChecksKindsAndOptionalAttributes) {
  const ops::OpDef* slice = ops::find(ops::syms().slice);
  using eg::Attr;
  EXPECT_TRUE(ops::fitsSchema(*slice, {Attr::integer(0), Attr::integer(0), Attr::dim(-5), Attr::integer(1)}));
  EXPECT_FALSE(ops::fitsSchema(*slice, {Attr::integer(0), Attr::integer(0), Attr::integer(2)}));
  EXPECT_FALSE(ops::fitsSchema(*slice, {Attr::integer(0), Attr::real(0.5), Attr::integer(2), Attr::integer(1)}));
  const ops::OpDef* gelu = ops::find(ops::syms().gelu);
  EXPECT_TRUE(ops::fitsSchema(*gelu, {}));
  EXPECT_TRUE(ops::fitsSchema(*gelu, {Attr::str("tanh")}));
  EXPECT_FALSE(ops::fitsSchema(*gelu, {Attr::integer(1)}));
}

// Random values for the leaves of an instance (integers for integer leaves,
// kept in range for lookups).
interp::Value randomValue(const TensorType& t, std::mt19937_64& rng) {
  interp::Shape s(t.shape.begin(), t.shape.end());
  interp::Tensor x = interp::Tensor::filled(s, 0);
  std::uniform_real_distribution<double> real(0.25, 2.0);
  for (double& v : x.data) v = !isFloating(t.dtype) ? static_cast<double>(rng() % 2) : real(rng);
  return interp::Value::of(std::move(x));
}

// Evaluates the instance rooted at `root` bottom-up (one e-node per class).
std::optional<interp::Value> evalInstance(const eg::EGraph& g, eg::Id root, std::mt19937_64& rng) {
  const eg::ENode& n = g.eclass(root).nodes.front();
  if (ops::tensorName(n)) return randomValue(*g.data(root).tensor(), rng);
  std::vector<interp::Value> kids;
  for (eg::Id c : n.children) {
    auto v = evalInstance(g, g.find(c), rng);
    if (!v) return std::nullopt;
    kids.push_back(std::move(*v));
  }
  return ops::evaluate(n, kids);
}

bool shapesAgree(const eg::ClassData& d, const interp::Value& v) {
  if (d.tuple != v.tuple || d.types.size() != v.items.size()) return false;
  for (size_t i = 0; i < d.types.size(); ++i)
    if (interp::Shape(d.types[i].shape.begin(), d.types[i].shape.end()) != v.items[i].shape) return false;
  return true;
}

// "(op[?a0, ?a1] ?x0 ?x1)" with the schema's attributes and `arity` operands.
std::string patternFor(const ops::OpDef& op, size_t arity) {
  std::string p = "(" + std::string(op.name);
  size_t nAttrs = ops::attrSchema(op).size();
  if (nAttrs) {
    p += "[";
    for (size_t i = 0; i < nAttrs; ++i) p += (i ? ", ?a" : "?a") + std::to_string(i);
    p += "]";
  }
  for (size_t i = 0; i < arity; ++i) p += " ?x" + std::to_string(i);
  return p + ")";
}

TEST(OpRecords, KernelShapesMatchTypeRulesOnRandomInstances) {
  // Ops whose well-typed random instances need structure the generic
  // generator rarely builds (lookups by index, rotary caches, GQA heads,
  // layer-norm statistics); lemma validation exercises them with builders.
  const std::set<std::string> structured = {"index_rows", "gather_rows", "rotary", "attention", "apex_layer_norm_bwd",
                                            "getitem", "one_hot", "sdpa", "sdpa_backward", "index_nd"};
  std::mt19937_64 rng(20261122);
  for (const ops::OpDef* op : ops::allOps()) {
    if (!op->eval) continue;
    SCOPED_TRACE(op->name);
    size_t typed = 0, evaluated = 0;
    for (size_t arity : {0, 1, 2, 3, 6}) {
      auto tree = parsePatternTree(patternFor(*op, arity));
      ASSERT_TRUE(tree);
      for (int attempt = 0; attempt < 150; ++attempt) {
        eg::EGraph g(ops::inferData);
        Gen gen(g, rng);
        auto root = gen.instantiate(*tree);
        if (!root) continue;
        ++typed;
        EXPECT_TRUE(ops::fitsSchema(*op, eg::attrs(g.eclass(g.find(*root)).nodes.front().attrs)));
        auto v = evalInstance(g, g.find(*root), rng);
        if (!v) continue;
        ++evaluated;
        EXPECT_TRUE(shapesAgree(g.data(*root), *v)) << eg::toString(g.eclass(g.find(*root)).nodes.front());
      }
    }
    if (!structured.count(op->name)) {
      EXPECT_GT(typed, 0u) << "no well-typed random instance";
      EXPECT_GT(evaluated, 0u) << "the kernel refused every well-typed instance";
    }
  }
}

// Walks a pattern tree: every node naming a record has an attribute count its schema allows.
void checkPattern(const PatTree& t, const std::string& lemma) {
  if (t.isVar) return;
  if (const ops::OpDef* op = ops::find(eg::intern(t.op))) {
    auto schema = ops::attrSchema(*op);
    size_t required = 0;
    for (const auto& a : schema) required += a.optional ? 0 : 1;
    EXPECT_TRUE(t.attrs.size() >= required && t.attrs.size() <= schema.size())
        << "lemma " << lemma << ": " << t.op << " with " << t.attrs.size() << " attributes";
  }
  for (const PatTree& c : t.children) checkPattern(c, lemma);
}

TEST(OpRecords, LemmaPatternsFollowTheSchemas) {
  size_t checked = 0;
  for (const lemmas::Lemma& l : lemmas::lemmaTable()) {
    auto lhs = parsePatternTree(l.rule.lhs.text());
    ASSERT_TRUE(lhs) << l.rule.name;
    checkPattern(*lhs, l.rule.name);
    ++checked;
    if (l.rule.rhs) {
      auto rhs = parsePatternTree(l.rule.rhs->text());
      ASSERT_TRUE(rhs) << l.rule.name;
      checkPattern(*rhs, l.rule.name);
    }
  }
  EXPECT_GT(checked, 150u);
}

}  // namespace
}  // namespace tangle::validate
