#include "replay/replay.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/shape.h"
#include "replay/candidates.h"
#include "replay/rank_tie.h"
#include "replay/concretize.h"
#include "replay/liveness.h"
#include "replay/reduce.h"
#include "replay/trial.h"

namespace tangle::replay {

using detail::Comparison;
using detail::Trial;

const char* toString(ReplayStatus s) {
  switch (s) {
    case ReplayStatus::Matched: return "matched";
    case ReplayStatus::Mismatch: return "mismatch";
    case ReplayStatus::Counterexample: return "counterexample";
    case ReplayStatus::NoCounterexample: return "no-counterexample";
    case ReplayStatus::NotPossible: return "not-possible";
    case ReplayStatus::Skipped: return "skipped";
  }
  return "?";
}

namespace {

std::string num(double v) { return fmt::format("{:.6g}", v); }

std::string at(const std::string& what, const std::vector<int64_t>& index) {
  return index.empty() ? what : fmt::format("{}[{}]", what, fmt::join(index, ", "));
}

// Sizes of both graphs; nullopt (with a reason) when a shape is symbolic or unknown.
struct Sizes {
  int64_t inputs = 0, all = 0;
  int64_t peakLive = 0;  // of both graphs' runs, the spec's and the implementation's peaks added
  std::string problem;
  bool fits(const ReplayOptions& o) const {
    return inputs <= o.maxInputElements && peakLive <= o.maxLiveElements && all <= o.maxComputedElements;
  }
  // The limit it breaks, for the refusal.
  std::string overLimit(const ReplayOptions& o) const {
    auto n = [](int64_t v) { return v == INT64_MAX ? std::string("over 2^63") : std::to_string(v); };
    if (inputs > o.maxInputElements) return n(inputs) + " input elements";
    if (peakLive > o.maxLiveElements) return n(peakLive) + " elements alive at once";
    return n(all) + " elements";
  }
};
// Saturating arithmetic on element counts: an absurd declared size must read as
// "too large", never wrap around to a small count (or be undefined behaviour).
int64_t satMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
int64_t satAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

Sizes sizesOf(const std::vector<const LGraph*>& graphs) {
  Sizes s;
  for (const LGraph* lg : graphs)
    for (size_t i = 0; i < lg->nodes.size(); ++i) {
      const LNode& n = lg->nodes[i];
      if (n.aliasOf >= 0) continue;
      for (const TensorType& t : n.data.types) {
        int64_t numel = 1;
        for (Dim d : t.shape) {
          if (isSymbolic(d)) {
            if (s.problem.empty() && n.isInput) s.problem = "symbolic shape " + toString(t) + " of " + n.name;
            numel = 0;
            break;
          }
          numel = satMul(numel, d);
        }
        s.all = satAdd(s.all, numel);
        if (n.isInput) s.inputs = satAdd(s.inputs, numel);
      }
    }
  if (s.problem.empty())
    for (const LGraph* lg : graphs) s.peakLive = satAdd(s.peakLive, evalCost(*lg).peakLive);
  return s;
}

class Replayer {
 public:
  Replayer(const LGraph& spec, const LGraph& impl, const RelationFile& rel, const InferResult& res,
           const ReplayOptions& opts, ReplayReport& rep)
      : spec_(spec), impl_(impl), rel_(rel), res_(res), opts_(opts), rep_(rep) {}

  void run() {
    if (res_.verdict == Verdict::Inconclusive) return skip("replay skipped: the verdict is inconclusive");
    Sizes sz = sizesOf({&spec_, &impl_});
    rep_.inputElements = sz.inputs;
    if (!sz.problem.empty()) return skip("replay skipped: " + sz.problem + " (shape reduction is not supported)");
    if (!sz.fits(opts_))
      return skip(fmt::format("replay skipped: graphs too large ({}; shape reduction is not supported)",
                              sz.overLimit(opts_)));
    if (res_.failure && !res_.failure->limitReached) candidates_ = detail::candidatesFor(spec_, impl_, *res_.failure);
    refuted_.resize(candidates_.sameShape.size());
    for (auto& e : res_.expectations)
      if (!e.holds) refusedExpect_.push_back({e.expectation, true, std::nullopt, {}, {}});
    if (res_.failure)
      for (const Expectation* e : res_.uncheckedExpectations) refusedExpect_.push_back({e, false, std::nullopt, {}, {}});
    for (int k = 0; k < std::max(1, opts_.seeds); ++k) {
      Trial t(spec_, impl_, rel_, opts_.seed + static_cast<uint64_t>(k));
      rep_.seeds.push_back(t.seed());
      if (t.inputError()) return notPossible(*t.inputError());
      if (k == 0) rep_.notes.insert(rep_.notes.end(), t.inputNotes().begin(), t.inputNotes().end());
      if (!res_.failure && !checkOutputs(t)) return;
      if (!checkExpectations(t)) return;
      if (res_.failure && !res_.failure->limitReached && !searchOperator(t)) return;
      if (k == 0 && res_.verdict == Verdict::Violation) {
        rep_.localization = localize(spec_, impl_, res_, t);
        breakTie(t);
      }
    }
    conclude();
  }

 private:
  const LGraph& spec_;
  const LGraph& impl_;
  const RelationFile& rel_;
  const InferResult& res_;
  const ReplayOptions& opts_;
  ReplayReport& rep_;
  detail::Candidates candidates_;
  std::vector<std::optional<Difference>> refuted_;  // per candidate
  std::vector<std::string> unevaluable_;
  struct Refused {
    const Expectation* e;
    bool reached;        // refused by inference (else: inference stopped before it)
    std::optional<Difference> diff;
    std::string shapes;  // the two sides' shapes when they differ
    std::string unevaluated;  // why it could not be evaluated
  };
  std::vector<Refused> refusedExpect_;

  // The first operator is as suspect on several ranks: probe each rank's
  // inputs (src/replay/rank_tie.h). Naming only.
  void breakTie(Trial& t) {
    Localization& loc = *rep_.localization;
    if (loc.tiedRanks.empty() || !res_.failure || candidates_.sameShape.empty()) return;
    auto b = detail::breakRankTie(spec_, impl_, rel_, res_.failure->tensor, candidates_.sameShape, t, loc.tiedRanks);
    if (b) loc.nameRank(b->rank, b->evidence);
  }

  void skip(std::string why) {
    rep_.status = ReplayStatus::Skipped;
    rep_.summary = std::move(why);
  }
  void notPossible(std::string why) {
    rep_.status = ReplayStatus::NotPossible;
    rep_.summary = "replay not possible: " + why;
  }
  bool notPossibleEval(Trial& t, const std::string& fallback) {
    notPossible(t.evalError().value_or(fallback));
    return false;
  }

  Difference differenceAt(const std::string& subject, const std::string& candidate, const interp::Tensor& want,
                          const interp::Tensor& got, size_t flat, uint64_t seed) {
    return {subject, candidate, detail::unflatten(want.shape, flat), want.data[flat], got.data[flat], seed};
  }

  // A relation tangle claims (subject = candidate): any difference is a soundness bug.
  bool checkClaim(const std::string& subject, const std::string& candidate, const interp::Tensor& want,
                  const interp::Tensor& got, uint64_t seed) {
    Comparison c = detail::compareTensors(want, got);
    ++rep_.relationsChecked;
    if (c.sameShape && !c.firstDiff) {
      rep_.maxAbsError = std::max(rep_.maxAbsError, c.maxAbsError);
      return true;
    }
    rep_.status = ReplayStatus::Mismatch;
    rep_.summary = "replay: MISMATCH: the reported relation " + subject + " = " + candidate +
                   " does not hold on random inputs. This is a soundness bug in tangle; please report it.";
    if (c.sameShape) {
      rep_.mismatch = differenceAt(subject, candidate, want, got, *c.firstDiff, seed);
    } else {
      rep_.notes.push_back(fmt::format("{} has shape {} but {} has shape {} (seed {})", subject,
                                       interp::shapeString(want.shape), candidate, interp::shapeString(got.shape), seed));
    }
    return false;
  }

  bool checkOutputs(Trial& t) {
    rep_.outputsChecked = 0;
    for (const TensorRelations& out : res_.outputs) {
      const interp::Value* sv = t.spec().value(out.node);
      if (!sv) return notPossibleEval(t, "cannot evaluate " + out.tensor);
      if (!sv->tensor()) continue;
      ++rep_.outputsChecked;
      for (const eg::Term& e : out.exprs) {
        std::string why;
        auto v = evalTerm(e, t.leaves(), &why);
        if (!v) return notPossibleEval(t, why);
        if (!v->tensor()) continue;
        if (!checkClaim(out.tensor, formatTerm(e), *sv->tensor(), *v->tensor(), t.seed())) return false;
      }
    }
    return true;
  }

  // Both sides of an expectation; false (with `why`) when they cannot be evaluated.
  bool evalSides(Trial& t, const Expectation& e, std::optional<interp::Value>& lhs, std::optional<interp::Value>& rhs,
                 std::string& why) {
    try {
      lhs = evalTerm(termOf(e.lhs, spec_, impl_), t.leaves(), &why);
      if (lhs) rhs = evalTerm(termOf(e.rhs, spec_, impl_), t.leaves(), &why);
    } catch (const InputError& err) {
      why = err.what();
    }
    if (lhs && rhs && lhs->tensor() && rhs->tensor()) return true;
    why = t.evalError().value_or(why.empty() ? "a side is a tuple" : why);
    return false;
  }

  bool checkExpectations(Trial& t) {
    std::optional<interp::Value> lhs, rhs;
    std::string why;
    for (const ExpectationResult& er : res_.expectations) {
      if (!er.holds) continue;
      const Expectation& e = *er.expectation;
      if (!evalSides(t, e, lhs, rhs, why)) return notPossibleEval(t, why);
      if (!checkClaim(e.lhs.toString(), e.rhs.toString(), *lhs->tensor(), *rhs->tensor(), t.seed())) return false;
    }
    // Refused (or not reached) expectations: look for a differing element.
    for (auto& r : refusedExpect_) {
      if (r.diff || !r.shapes.empty() || !r.unevaluated.empty()) continue;
      if (!evalSides(t, *r.e, lhs, rhs, why)) {
        r.unevaluated = why;
        continue;
      }
      Comparison c = detail::compareTensors(*lhs->tensor(), *rhs->tensor());
      if (c.firstDiff)
        r.diff = differenceAt(r.e->lhs.toString(), r.e->rhs.toString(), *lhs->tensor(), *rhs->tensor(), *c.firstDiff,
                              t.seed());
      else if (!c.sameShape)
        r.shapes = interp::shapeString(lhs->tensor()->shape) + " and " + interp::shapeString(rhs->tensor()->shape);
    }
    return true;
  }

  bool searchOperator(Trial& t) {
    const Failure& f = *res_.failure;
    const interp::Value* sv = t.spec().value(f.tensor);
    if (!sv) return notPossibleEval(t, "cannot evaluate " + spec_.node(f.tensor).name);
    if (!sv->tensor()) return true;
    for (size_t k = 0; k < candidates_.sameShape.size(); ++k) {
      if (refuted_[k]) continue;
      const detail::Candidate& c = candidates_.sameShape[k];
      std::string why;
      auto v = evalTerm(c.term, t.leaves(), &why);
      if (!v || !v->tensor()) {
        std::string note = c.text + ": " + t.evalError().value_or(why);
        if (std::find(unevaluable_.begin(), unevaluable_.end(), note) == unevaluable_.end()) unevaluable_.push_back(note);
        continue;
      }
      Comparison cmp = detail::compareTensors(*sv->tensor(), *v->tensor());
      if (cmp.firstDiff)
        refuted_[k] = differenceAt(spec_.node(f.tensor).name, c.text, *sv->tensor(), *v->tensor(), *cmp.firstDiff, t.seed());
    }
    return true;
  }

  void conclude() {
    bool any = false;
    if (res_.failure && !res_.failure->limitReached) {
      const Failure& f = *res_.failure;
      const std::string& name = spec_.node(f.tensor).name;
      std::vector<std::string> agreeing, others;
      for (size_t k = 0; k < refuted_.size(); ++k) {
        if (refuted_[k] && !any) rep_.counterexamples.push_back(*refuted_[k]), any = true;
        else if (refuted_[k]) others.push_back(candidates_.sameShape[k].text);
        else agreeing.push_back(candidates_.sameShape[k].text);
      }
      if (any) rep_.summary = "replay: counterexample for the failing operator " + name;
      if (!others.empty()) rep_.notes.push_back(fmt::format("the other candidates differ too: {}", fmt::join(others, "; ")));
      for (auto& a : agreeing)
        if (std::find_if(unevaluable_.begin(), unevaluable_.end(), [&](auto& u) { return u.rfind(a + ":", 0) == 0; }) ==
            unevaluable_.end())
        {
          rep_.notes.push_back(a + " equals " + name + " on every seed (a relation inference may have missed)");
          ++rep_.agreeingCandidates;
        }
      for (auto& u : unevaluable_) rep_.notes.push_back("not evaluated: " + u);
      if (candidates_.sameShape.empty()) {
        auto shape = concreteShape(spec_.node(f.tensor));
        rep_.summary = fmt::format("replay: {} has shape {}; no same-shaped implementation tensor exists among the candidates",
                                   name, shape ? interp::shapeString(*shape) : "?");
        if (!candidates_.otherShapes.empty())
          rep_.notes.push_back(fmt::format("candidates of other shapes: {}", fmt::join(candidates_.otherShapes, ", ")));
      } else if (!any) {
        rep_.summary = "replay: no candidate differs from " + name + " on the seeds tried";
      }
    }
    for (auto& r : refusedExpect_) {
      const Expectation& e = *r.e;
      if (!r.unevaluated.empty()) {
        rep_.notes.push_back("expectation " + e.lhs.toString() + " = " + e.rhs.toString() + " not evaluated: " + r.unevaluated);
      } else if (!r.shapes.empty()) {
        rep_.notes.push_back("expectation " + e.lhs.toString() + " = " + e.rhs.toString() +
                             ": the two sides have different shapes (" + r.shapes + ")");
        any = true;
      } else if (r.diff) {
        rep_.counterexamples.push_back(*r.diff);
        any = true;
        if (rep_.summary.empty()) rep_.summary = "replay: counterexample for the refused expectation";
      } else if (r.reached) {
        rep_.notes.push_back("expectation " + e.lhs.toString() + " = " + e.rhs.toString() +
                             " held on every seed (inference may be incomplete)");
      } else {
        rep_.notes.push_back("expectation " + e.lhs.toString() + " = " + e.rhs.toString() + " held on every seed");
      }
    }
    bool violation = res_.verdict == Verdict::Violation;
    if (!violation) {
      rep_.status = ReplayStatus::Matched;
      rep_.summary = fmt::format("replay: {} outputs match (max abs error {})", rep_.outputsChecked, num(rep_.maxAbsError));
      return;
    }
    rep_.status = any ? ReplayStatus::Counterexample : ReplayStatus::NoCounterexample;
    if (!res_.failure && rep_.outputsChecked > 0)
      rep_.notes.insert(rep_.notes.begin(), fmt::format("{} outputs match their reported relations (max abs error {})",
                                                        rep_.outputsChecked, num(rep_.maxAbsError)));
    if (rep_.summary.empty()) rep_.summary = "replay: no counterexample found on the seeds tried";
  }
};

}  // namespace

std::string Difference::line() const {
  return fmt::format("{} = {} but {} = {}", at(subject, index), num(expected), at(candidate, index), num(actual));
}

std::string ReplayReport::text() const {
  std::string out = summary + "\n";
  if (mismatch) out += "  " + mismatch->line() + fmt::format("  (seed {})\n", mismatch->seed);
  for (auto& d : counterexamples) out += "  counterexample: " + d.line() + fmt::format("  (seed {})\n", d.seed);
  for (auto& n : notes) out += "  " + n + "\n";
  if (!seeds.empty())
    out += fmt::format("  seeds {}; {} input elements{}\n", fmt::join(seeds, ", "), inputElements,
                       relationsChecked ? fmt::format("; {} relations checked", relationsChecked) : "");
  if (localization) out += localization->text();
  if (seconds > 0) out += fmt::format("  replay time: {:.3f} s ({:.3f} s CPU)\n", seconds, cpuSeconds);
  return out;
}

nlohmann::json ReplayReport::json() const {
  auto diff = [](const Difference& d) {
    return nlohmann::json{{"subject", d.subject}, {"candidate", d.candidate}, {"index", d.index},
                          {"expected", d.expected}, {"actual", d.actual}, {"seed", d.seed}, {"text", d.line()}};
  };
  nlohmann::json j{{"status", toString(status)},        {"summary", summary},
                   {"outputs_checked", outputsChecked}, {"relations_checked", relationsChecked},
                   {"max_abs_error", maxAbsError},      {"input_elements", inputElements},
                   {"seeds", seeds},                    {"notes", notes}};
  j["mismatch"] = mismatch ? diff(*mismatch) : nlohmann::json(nullptr);
  j["counterexamples"] = nlohmann::json::array();
  for (auto& d : counterexamples) j["counterexamples"].push_back(diff(d));
  j["localization"] = localization ? localization->json() : nlohmann::json(nullptr);
  j["reduced_sizes"] = reducedSizes.empty() ? nlohmann::json(nullptr) : nlohmann::json(reducedSizes);
  j["seconds"] = seconds;
  j["cpu_seconds"] = cpuSeconds;
  return j;
}

std::optional<int> ReplayReport::exitCode() const {
  if (status == ReplayStatus::Mismatch) return 4;
  return std::nullopt;
}

namespace {

bool hasSymbolicSizes(const std::vector<const LGraph*>& graphs) {
  for (const LGraph* lg : graphs)
    for (const LNode& n : lg->nodes)
      for (const TensorType& t : n.data.types)
        if (!ops::allConcrete(t.shape)) return true;
  return false;
}

// Symbolic sizes: replay at a few concrete sizes that satisfy the facts; a
// mismatch or a counterexample at any of them is the answer.
ReplayReport replaySampledSizes(const LGraph& spec, const LGraph& impl, const RelationFile& relation,
                                const InferResult& result, const ReplayOptions& opts, const sym::Context& symbols) {
  constexpr int kSamples = 4;
  constexpr int64_t kMaxSize = 8;
  ReplayReport rep;
  auto skip = [&](std::string why) {
    rep.status = ReplayStatus::Skipped;
    rep.summary = "replay skipped: " + why;
    return rep;
  };
  auto vars = detail::sizeVariables({&spec, &impl}, symbols);
  if (!vars) return skip("a symbolic size is an opaque expression (no value can be chosen for it)");
  auto samples = symbols.sample(*vars, kSamples, 1, kMaxSize);
  if (samples.empty()) return skip(fmt::format("no sizes in [1, {}] satisfy the facts about symbolic sizes", kMaxSize));
  // For a violation the implementation may be right at some sizes (e.g. even
  // ones): the best witness is a counterexample that no candidate explains.
  auto strength = [](const ReplayReport& x) {
    if (x.status != ReplayStatus::Counterexample) return 0;
    return x.agreeingCandidates == 0 ? 2 : 1;
  };
  std::vector<std::string> tried;
  std::optional<ReplayReport> best;
  for (const auto& a : samples) {
    auto s = detail::concretize(spec, a, symbols), i = detail::concretize(impl, a, symbols);
    auto r = detail::concretize(result, a, symbols);
    if (!s || !i || !r) return skip("a size has no value at " + detail::describe(a));
    ReplayReport one;
    Replayer(*s, *i, relation, *r, opts, one).run();
    tried.push_back(detail::describe(a));
    one.notes.insert(one.notes.begin(), "at sizes " + tried.back());
    if (one.status == ReplayStatus::Mismatch || one.status == ReplayStatus::NotPossible ||
        one.status == ReplayStatus::Skipped)
      return one;
    if (!best || strength(one) > strength(*best)) best = std::move(one);
  }
  rep = std::move(*best);
  if (rep.status == ReplayStatus::Matched) rep.notes.erase(rep.notes.begin());  // it held at every one
  rep.notes.push_back(fmt::format("sizes tried: {}", fmt::join(tried, "; ")));
  return rep;
}

// Graphs too large to interpret: replay at reduced sizes (src/replay/reduce.h),
// or refuse with the reason when there is no valid smaller instance.
ReplayReport replayReducedSizes(const LGraph& spec, const LGraph& impl, const RelationFile& relation,
                                const InferResult& result, const ReplayOptions& opts, const Sizes& real) {
  ReplayReport rep;
  rep.inputElements = real.inputs;
  auto red = detail::reduceShapes(
      spec, impl, relation, result,
      {std::min(opts.maxLiveElements, opts.maxInputElements), opts.maxInputElements, opts.maxLiveElements,
       opts.maxComputedElements});
  if (!red.check) {
    rep.status = ReplayStatus::Skipped;
    rep.summary = fmt::format("replay skipped: graphs too large ({} elements) and {}", real.all, red.refusal);
    return rep;
  }
  const detail::ReducedCheck& rc = *red.check;
  Replayer(rc.spec, rc.impl, rc.relation, rc.result, opts, rep).run();
  rep.reducedSizes = rc.sizes;
  rep.notes.insert(rep.notes.begin(), fmt::format("at reduced sizes: {}; {} elements instead of {}", rc.sizes,
                                                  rc.elements, real.all));
  return rep;
}

// The interpreter allocates and frees a tensor per node, most of them above
// glibc's mmap threshold: each was mapped, page-faulted in and unmapped again
// (0.5 s of system time in GPT paral4_layer2's 2.5 s). Freed memory is kept
// in the heap for the next tensor instead; the peak (RSS) is unchanged.
void reuseFreedTensorMemory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest: tensors up to 4M doubles come from the heap
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

}  // namespace

ReplayReport replayCheck(const LGraph& spec, const LGraph& impl, const RelationFile& relation,
                         const InferResult& result, const ReplayOptions& opts, const sym::Context& symbols) {
  reuseFreedTensorMemory();
  if (result.verdict != Verdict::Inconclusive && hasSymbolicSizes({&spec, &impl}))
    return replaySampledSizes(spec, impl, relation, result, opts, symbols);
  if (result.verdict != Verdict::Inconclusive) {
    Sizes sz = sizesOf({&spec, &impl});
    if (sz.problem.empty() && !sz.fits(opts))
      return replayReducedSizes(spec, impl, relation, result, opts, sz);
  }
  ReplayReport rep;
  Replayer(spec, impl, relation, result, opts, rep).run();
  return rep;
}

}  // namespace tangle::replay
