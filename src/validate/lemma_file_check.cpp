#include "validate/lemma_file_check.h"

#include <fmt/format.h>
#include <unordered_map>

#include "interp/interp.h"
#include "ops/ops.h"

namespace tangle::validate {

namespace {

// Evaluates the expansion's body bottom-up; leaf "$i" is the node's child i.
// A fresh tree has one e-node per class.
std::optional<interp::Value> evalExpansion(const eg::EGraph& g, eg::Id c, const std::vector<interp::Value>& args,
                                           std::unordered_map<eg::Id, interp::Value>& memo) {
  c = g.find(c);
  if (auto it = memo.find(c); it != memo.end()) return it->second;
  const eg::ENode& n = g.eclass(c).nodes.front();
  std::optional<interp::Value> v;
  if (const std::string* name = ops::tensorName(n)) {
    if (name->size() < 2 || (*name)[0] != '$') return std::nullopt;
    size_t i = std::stoul(name->substr(1));
    if (i >= args.size()) return std::nullopt;
    v = args[i];
  } else {
    std::vector<interp::Value> kids;
    for (eg::Id k : n.children) {
      auto kv = evalExpansion(g, k, args, memo);
      if (!kv) return std::nullopt;
      kids.push_back(std::move(*kv));
    }
    v = ops::evaluate(n, kids);
  }
  if (v) memo.emplace(c, *v);
  return v;
}

}  // namespace

void installCustomOps(const lemmas::LemmaFile& file) {
  lemmas::registerCustomOpTypes(file);
  for (const lemmas::CustomOpDef& d : file.ops) {
    if (d.opaque) continue;
    ops::registerCustomEval(eg::intern(d.op), [def = d](const eg::ENode& n, const std::vector<interp::Value>& args)
                                                     -> std::optional<interp::Value> {
      std::vector<eg::ClassData> data;
      for (const interp::Value& a : args) {
        const interp::Tensor* t = a.tensor();
        if (!t) return std::nullopt;
        eg::ClassData cd;
        cd.types.push_back(TensorType{DType::F32, t->shape});
        if (t->shape.empty()) cd.constant = t->data[0];
        data.push_back(std::move(cd));
      }
      auto e = lemmas::expandDefinition(def, n, data);
      if (!e || !e->root) return std::nullopt;
      std::unordered_map<eg::Id, interp::Value> memo;
      return evalExpansion(*e->graph, *e->root, args, memo);
    });
  }
}

std::vector<LemmaResult> validateFileLemmas(const lemmas::LemmaFile& file, const Options& opts) {
  std::vector<LemmaResult> out;
  for (const lemmas::FileLemma& l : file.lemmas) {
    if (!l.opaqueOps.empty()) {
      LemmaResult r;
      r.name = l.lemma.rule.name;
      r.status = Status::Unvalidated;
      r.detail = "mentions the opaque operator " + l.opaqueOps.front() +
                 ", which has no definition: it cannot be validated numerically";
      out.push_back(std::move(r));
      continue;
    }
    out.push_back(validateRule(l.lemma.rule, opts));
  }
  return out;
}

std::string requireValidated(const lemmas::LemmaFile& file, const std::vector<LemmaResult>& results,
                             bool trustUnvalidated) {
  std::string warnings;
  for (size_t i = 0; i < results.size() && i < file.lemmas.size(); ++i) {
    const LemmaResult& r = results[i];
    const lemmas::FileLemma& l = file.lemmas[i];
    if (r.status != Status::Failed) continue;
    bool multiLine = r.detail.find('\n') != std::string::npos;  // a numeric counterexample: the terms, values
    throw InputError(l.loc, "lemma " + r.name + " is wrong: " +
                                (multiLine ? "the two sides differ on this instance:\n" + r.detail : r.detail));
  }
  for (size_t i = 0; i < results.size() && i < file.lemmas.size(); ++i) {
    const LemmaResult& r = results[i];
    const lemmas::FileLemma& l = file.lemmas[i];
    if (r.status != Status::Unvalidated) continue;
    if (!trustUnvalidated)
      throw InputError(l.loc, "lemma " + r.name + " is unvalidated (" + r.detail +
                                  "); refusing to use it (pass --trust-unvalidated to use it anyway)");
    warnings += fmt::format("{}:{}: warning: TRUSTING UNVALIDATED LEMMA {} ({}): a \"refines\" verdict now rests on it\n",
                            l.loc.file, l.loc.line, r.name, r.detail);
  }
  return warnings;
}

}  // namespace tangle::validate
