#include "import/hlo_importer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <initializer_list>

#include "import/import.h"
#include "import/text_file.h"

namespace tangle {
namespace {

namespace fs = std::filesystem;
const std::string kArtifact = TANGLE_SOURCE_DIR "/../shared/data/entangle-artifact";

const Node& nodeNamed(const Graph& g, const std::string& name) {
  auto id = g.find(name);
  if (!id) throw std::runtime_error("no node " + name);
  return g.node(*id);
}
Value ref(const Graph& g, const std::string& name) { return TensorRef{*g.find(name)}; }
ValueList ints(std::initializer_list<int64_t> xs) {
  ValueList out;
  for (int64_t x : xs) out.emplace_back(x);
  return out;
}
const Value& kw(const Node& n, const std::string& key) {
  const Value* v = n.kwarg(key);
  if (!v) throw std::runtime_error("node " + n.name + " has no kwarg " + key);
  return *v;
}

// A small module exercising the accepted subset; line numbers are in the comments.
const std::string kModule =
    "HloModule test_module, entry_computation_layout={(f32[4,8]{1,0}, f32[8,2]{1,0}, s32[4]{0})->(f32[4,2]{1,0})}\n"  // 1
    "\n"                                                                                                           // 2
    "%max.10 (a.11: f32[], b.12: f32[]) -> f32[] {\n"                                                              // 3
    "  %a.11 = f32[] parameter(0)\n"                                                                               // 4
    "  %b.12 = f32[] parameter(1)\n"                                                                               // 5
    "  ROOT %maximum.13 = f32[] maximum(f32[] %a.11, f32[] %b.12)\n"                                               // 6
    "}\n"                                                                                                          // 7
    "\n"                                                                                                           // 8
    "ENTRY %main.30 (p0.1: f32[4,8], p1.2: f32[8,2], p2.3: s32[4]) -> (f32[4,2], f32[], /*index=2*/f32[2,4]) {\n"  // 9
    "  %p1.2 = f32[8,2]{1,0} parameter(1), metadata={op_type=\"x\" source_file=\"/m/test.py\\n----\\n[\\'/m/test.py:46\\', "
    "\\'/m/model.py:12\\', \\'/env/lib/python3.11/site-packages/torch/x.py:5\\']\" source_line=46}\n"               // 10
    "  %p0.1 = f32[4,8]{1,0} parameter(0)\n"                                                                       // 11
    "  %dot.4 = f32[4,2]{1,0} dot(%p0.1, %p1.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
    "metadata={op_type=\"dot\" source_file=\"/m/plain.py\" source_line=7}\n"                                        // 12
    "  %constant.5 = f32[] constant(1e-05)\n"                                                                      // 13
    "  %constant.6 = f32[] constant(-inf)\n"                                                                       // 14
    "  %constant.7 = s32[2]{0} constant({1, 2})\n"                                                                 // 15
    "  %constant.8 = pred[] constant(true)\n"                                                                      // 16
    "  %broadcast.9 = f32[4,2]{1,0} broadcast(%constant.5), dimensions={}\n"                                       // 17
    "  %add.10 = f32[4,2]{1,0} add(%dot.4, %broadcast.9)\n"                                                        // 18
    "  %slice.11 = f32[2,2]{1,0} slice(%add.10), slice={[0:4:2], [0:2]}\n"                                         // 19
    "  %transpose.12 = f32[2,4]{0,1} transpose(%add.10), dimensions={1,0}\n"                                       // 20
    "  %compare.13 = pred[4,2]{1,0} compare(%add.10, %broadcast.9), direction=LE\n"                                // 21
    "  %gather.14 = f32[4,2]{1,0} gather(%add.10, %p2.3), offset_dims={1}, collapsed_slice_dims={0}, "
    "start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}\n"                                                 // 22
    "  %custom-call.15 = (f32[4,2]{1,0}, f32[]) custom-call(%gather.14), custom_call_target=\"AwsNeuronRmsNorm\", "
    "api_version=API_VERSION_UNSPECIFIED, metadata={op_type=\"c\" source_file=\"/m/c.py\" source_line=3}, "
    "backend_config=\"a\\\"b\"\n"                                                                                  // 23
    "  %get-tuple-element.16 = f32[4,2]{1,0} get-tuple-element(%custom-call.15), index=0\n"                        // 24
    "  %all-reduce.17 = f32[4,2]{1,0} all-reduce(%get-tuple-element.16), replica_groups={{0,1},{2,3}}, "
    "to_apply=%max.10, channel_id=3, scale=0.5, window={size=2 stride=1}\n"                                        // 25
    "  %reduce.18 = f32[] reduce(%all-reduce.17, %constant.6), dimensions={0,1}, to_apply=%max.10\n"               // 26
    "  %p2.3 = s32[4]{0} parameter(2)\n"                                                                           // 27
    "  ROOT %tuple.19 = (f32[4,2]{1,0}, f32[], f32[2,4]{0,1}) tuple(%all-reduce.17, %reduce.18, %transpose.12)\n"  // 28
    "}\n";                                                                                                         // 29

TEST(HloImporter, SmallModule) {
  Graph g = importHloText(kModule, "m.hlo");
  EXPECT_EQ(g.path, "m.hlo");
  ASSERT_EQ(g.size(), 18u);  // the reducer's instructions and the ROOT tuple are not nodes
  EXPECT_FALSE(g.find("maximum.13"));
  EXPECT_FALSE(g.find("tuple.19"));

  // Parameters first, by parameter number, whatever their position in the file.
  ASSERT_EQ(g.inputs.size(), 3u);
  EXPECT_EQ(g.inputs, (std::vector<NodeId>{0, 1, 2}));
  EXPECT_EQ(g.node(0).name, "p0.1");
  EXPECT_EQ(g.node(1).name, "p1.2");
  EXPECT_EQ(g.node(2).name, "p2.3");
  EXPECT_EQ(g.node(0).op, "placeholder");
  EXPECT_TRUE(g.node(0).args.empty());
  EXPECT_EQ(g.node(0).type, (TensorType{DType::F32, {4, 8}}));
  EXPECT_EQ(g.node(2).type, (TensorType{DType::I32, {4}}));
  EXPECT_EQ(g.node(2).loc.line, 27);
  EXPECT_EQ(g.node(1).loc.line, 10);
  EXPECT_EQ(g.node(1).loc.file, "m.hlo");
  EXPECT_EQ(g.node(1).source, "File: /m/model.py:12");  // last frame outside site-packages
  EXPECT_TRUE(g.node(1).kwargs.empty());                // metadata is not a kwarg
  EXPECT_EQ(g.node(0).source, "");
  // The others follow in file order.
  EXPECT_EQ(g.node(3).name, "dot.4");
  EXPECT_EQ(g.node(17).name, "reduce.18");

  const Node& dot = nodeNamed(g, "dot.4");
  EXPECT_EQ(dot.op, "hlo.dot");
  EXPECT_EQ(dot.args, (std::vector<Value>{ref(g, "p0.1"), ref(g, "p1.2")}));
  ASSERT_EQ(dot.kwargs.size(), 2u);
  EXPECT_EQ(dot.kwargs[0].first, "lhs_contracting_dims");
  EXPECT_EQ(dot.kwargs[0].second, Value(ints({1})));
  EXPECT_EQ(dot.kwargs[1].first, "rhs_contracting_dims");
  EXPECT_EQ(dot.kwargs[1].second, Value(ints({0})));
  EXPECT_EQ(dot.type, (TensorType{DType::F32, {4, 2}}));
  EXPECT_FALSE(dot.isTuple);
  EXPECT_EQ(dot.loc.line, 12);
  EXPECT_EQ(dot.source, "File: /m/plain.py:7");  // plain XLA metadata: file:line

  const Node& c5 = nodeNamed(g, "constant.5");
  EXPECT_EQ(c5.op, "hlo.constant");
  EXPECT_EQ(c5.args, (std::vector<Value>{1e-05}));
  EXPECT_TRUE(c5.kwargs.empty());
  EXPECT_EQ(c5.type, (TensorType{DType::F32, {}}));
  const Node& c6 = nodeNamed(g, "constant.6");
  ASSERT_EQ(c6.args.size(), 1u);
  EXPECT_EQ(std::get<double>(c6.args[0].v), -INFINITY);
  const Node& c7 = nodeNamed(g, "constant.7");
  EXPECT_TRUE(c7.args.empty());
  EXPECT_EQ(kw(c7, "literal"), Value(Symbol{"{1, 2}"}));
  EXPECT_EQ(c7.type, (TensorType{DType::I32, {2}}));
  EXPECT_EQ(nodeNamed(g, "constant.8").args, (std::vector<Value>{true}));

  const Node& bc = nodeNamed(g, "broadcast.9");
  EXPECT_EQ(bc.op, "hlo.broadcast");
  EXPECT_EQ(bc.args, (std::vector<Value>{ref(g, "constant.5")}));
  EXPECT_EQ(kw(bc, "dimensions"), Value(ValueList{}));

  const Node& slice = nodeNamed(g, "slice.11");
  EXPECT_EQ(kw(slice, "slice"), Value(ValueList{ints({0, 4, 2}), ints({0, 2, 1})}));
  const Node& tr = nodeNamed(g, "transpose.12");
  EXPECT_EQ(kw(tr, "dimensions"), Value(ints({1, 0})));
  EXPECT_EQ(tr.type, (TensorType{DType::F32, {2, 4}}));  // layout {0,1} ignored

  const Node& cmp = nodeNamed(g, "compare.13");
  EXPECT_EQ(cmp.op, "hlo.compare");
  EXPECT_EQ(kw(cmp, "direction"), Value(Symbol{"LE"}));
  EXPECT_EQ(cmp.type, (TensorType{DType::Bool, {4, 2}}));

  const Node& gather = nodeNamed(g, "gather.14");
  EXPECT_EQ(gather.args, (std::vector<Value>{ref(g, "add.10"), ref(g, "p2.3")}));
  ASSERT_EQ(gather.kwargs.size(), 5u);
  EXPECT_EQ(gather.kwargs[0].first, "offset_dims");
  EXPECT_EQ(gather.kwargs[3], (std::pair<std::string, Value>{"index_vector_dim", int64_t{1}}));
  EXPECT_EQ(kw(gather, "slice_sizes"), Value(ints({1, 2})));

  const Node& cc = nodeNamed(g, "custom-call.15");
  EXPECT_EQ(cc.op, "hlo.custom-call");
  EXPECT_TRUE(cc.isTuple);
  EXPECT_FALSE(cc.type);
  ASSERT_EQ(cc.kwargs.size(), 3u);
  EXPECT_EQ(cc.kwargs[0], (std::pair<std::string, Value>{"custom_call_target", std::string("AwsNeuronRmsNorm")}));
  EXPECT_EQ(cc.kwargs[1], (std::pair<std::string, Value>{"api_version", Symbol{"API_VERSION_UNSPECIFIED"}}));
  EXPECT_EQ(cc.kwargs[2], (std::pair<std::string, Value>{"backend_config", std::string("a\"b")}));
  EXPECT_EQ(cc.source, "File: /m/c.py:3");

  const Node& gte = nodeNamed(g, "get-tuple-element.16");
  EXPECT_EQ(gte.op, "getitem");
  EXPECT_EQ(gte.args, (std::vector<Value>{ref(g, "custom-call.15"), int64_t{0}}));
  EXPECT_TRUE(gte.kwargs.empty());
  EXPECT_EQ(gte.type, (TensorType{DType::F32, {4, 2}}));

  const Node& ar = nodeNamed(g, "all-reduce.17");
  EXPECT_EQ(ar.op, "hlo.all-reduce");
  EXPECT_EQ(ar.loc.line, 25);
  ASSERT_EQ(ar.kwargs.size(), 6u);
  EXPECT_EQ(ar.kwargs[0].first, "replica_groups");
  EXPECT_EQ(ar.kwargs[0].second, Value(ValueList{ints({0, 1}), ints({2, 3})}));
  EXPECT_EQ(ar.kwargs[1], (std::pair<std::string, Value>{"to_apply", std::string("maximum")}));
  EXPECT_EQ(ar.kwargs[2], (std::pair<std::string, Value>{"to_apply_computation", std::string("max.10")}));
  EXPECT_EQ(ar.kwargs[3], (std::pair<std::string, Value>{"channel_id", int64_t{3}}));
  EXPECT_EQ(ar.kwargs[4], (std::pair<std::string, Value>{"scale", 0.5}));
  EXPECT_EQ(ar.kwargs[5], (std::pair<std::string, Value>{"window", Symbol{"{size=2 stride=1}"}}));

  const Node& red = nodeNamed(g, "reduce.18");
  EXPECT_EQ(red.args, (std::vector<Value>{ref(g, "all-reduce.17"), ref(g, "constant.6")}));
  EXPECT_EQ(kw(red, "to_apply"), Value(std::string("maximum")));
  EXPECT_EQ(kw(red, "dimensions"), Value(ints({0, 1})));

  EXPECT_EQ(g.outputs, (std::vector<Value>{ref(g, "all-reduce.17"), ref(g, "reduce.18"), ref(g, "transpose.12")}));
}

TEST(HloImporter, ScalarLiteralsAndPlainRoot) {
  const std::string text =
      "ENTRY e {\n"                                       // 1: no signature, no '%'
      "  p = f16[] parameter(0)\n"                        // 2
      "  %a = f16[] constant(-30000)\n"                   // 3
      "  %b = bf16[] constant(8)\n"                       // 4
      "  %c = f32[] constant(nan)\n"                      // 5
      "  %d = f64[] constant(inf)\n"                      // 6
      "  %e = s64[] constant(-7)\n"                       // 7
      "  %f = u8[] constant(255)\n"                       // 8
      "  %g = pred[] constant(false)\n"                   // 9
      "  %t = (f16[], (f16[], f16[])) tuple(%a, %a)\n"    // 10
      "  %h = f16[] add(p, %a)\n"                         // 11
      "}\n";
  Graph g = importHloText(text, "s.hlo");
  EXPECT_EQ(nodeNamed(g, "a").args, (std::vector<Value>{-30000.0}));
  EXPECT_EQ(nodeNamed(g, "b").args, (std::vector<Value>{8.0}));
  EXPECT_EQ(nodeNamed(g, "b").type, (TensorType{DType::BF16, {}}));
  EXPECT_TRUE(std::isnan(std::get<double>(nodeNamed(g, "c").args.at(0).v)));
  EXPECT_EQ(nodeNamed(g, "d").args, (std::vector<Value>{INFINITY}));
  EXPECT_EQ(nodeNamed(g, "e").args, (std::vector<Value>{int64_t{-7}}));
  EXPECT_EQ(nodeNamed(g, "f").args, (std::vector<Value>{int64_t{255}}));
  EXPECT_EQ(nodeNamed(g, "g").args, (std::vector<Value>{false}));
  EXPECT_TRUE(nodeNamed(g, "t").isTuple);  // a tuple that is not the ROOT is a node
  EXPECT_EQ(nodeNamed(g, "t").op, "hlo.tuple");
  EXPECT_EQ(nodeNamed(g, "h").args, (std::vector<Value>{ref(g, "p"), ref(g, "a")}));
  // Without a ROOT marker the last instruction is the root; a non-tuple root is the output.
  EXPECT_EQ(g.outputs, (std::vector<Value>{ref(g, "h")}));
}

TEST(HloImporter, NestedRootTupleIsFlattened) {
  const std::string text =
      "ENTRY %e (p0: f32[2]) -> (f32[2], (f32[2], f32[2])) {\n"
      "  %p0 = f32[2]{0} parameter(0)\n"
      "  %n = f32[2]{0} negate(%p0)\n"
      "  %inner = (f32[2]{0}, f32[2]{0}) tuple(%n, %p0)\n"
      "  ROOT %outer = (f32[2]{0}, (f32[2]{0}, f32[2]{0})) tuple(%p0, %inner)\n"
      "}\n";
  Graph g = importHloText(text, "t.hlo");
  EXPECT_EQ(g.outputs, (std::vector<Value>{ref(g, "p0"), ref(g, "n"), ref(g, "p0")}));
}

// Imports `text` and expects an InputError whose message has every fragment.
void expectHloError(const std::string& text, std::initializer_list<std::string> fragments) {
  try {
    importHloText(text, "bad.hlo");
    ADD_FAILURE() << "expected InputError for:\n" << text;
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    for (const std::string& f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
  }
}

std::string entry(const std::string& body) {
  return "HloModule m\n"                                  // line 1
         "ENTRY %main (p0: f32[4]) -> f32[4] {\n"          // line 2
         "  %p0 = f32[4]{0} parameter(0)\n"                // line 3
         + body;                                           // from line 4
}

TEST(HloImporter, Errors) {
  expectHloError("HloModule m\n\n%r (a: f32[]) -> f32[] {\n  ROOT %a = f32[] parameter(0)\n}\n",
                 {"bad.hlo:1: error:", "no ENTRY computation"});
  expectHloError("", {"bad.hlo:1: error:", "no ENTRY computation"});
  expectHloError(entry("  ROOT %n = f32[4294967296,4294967296]{1,0} broadcast(%p0), dimensions={}\n}\n"),
                 {"bad.hlo:4: error:", "more elements than a 64-bit count holds"});
  expectHloError(entry("  ROOT %n = f32[4]{0} negate(%p0)\n"),
                 {"bad.hlo:2: error:", "computation 'main'", "missing '}'"});
  expectHloError(entry("  ROOT %n = f32[4]{0} negate(%p0 %p0)\n}\n"),
                 {"bad.hlo:4: error:", "instruction 'n'", "expected ',' or ')'"});
  expectHloError(entry("  ROOT %n = f32[4]{0} negate(%p0), dims\n}\n"),
                 {"bad.hlo:4: error:", "expected '=' after attribute 'dims'"});
  expectHloError(entry("  %n f32[4]{0} negate(%p0)\n}\n"), {"bad.hlo:4: error:", "expected '='"});
  expectHloError(entry("  ROOT %n = f32[4]{0} negate(%zz)\n}\n"),
                 {"bad.hlo:4: error:", "instruction 'n'", "'%zz'", "not defined"});
  expectHloError(entry("  %n = f32[4]{0} negate(%m)\n  ROOT %m = f32[4]{0} negate(%p0)\n}\n"),
                 {"bad.hlo:4: error:", "'%m'", "before its definition at line 5"});
  expectHloError(entry("  ROOT %n = f32[] reduce(%p0, %p0), dimensions={0}, to_apply=%nope\n}\n"),
                 {"bad.hlo:4: error:", "unknown computation '%nope'"});
  expectHloError(entry("  ROOT %n = f32[4,x]{1,0} negate(%p0)\n}\n"), {"bad.hlo:4: error:", "malformed shape"});
  expectHloError(entry("  ROOT %n = f32[4 negate(%p0)\n}\n"), {"bad.hlo:4: error:", "malformed shape"});
  expectHloError(entry("  ROOT %n = u32[4]{0} convert(%p0)\n}\n"),
                 {"bad.hlo:4: error:", "unsupported element type 'u32'"});
  expectHloError(entry("  ROOT %n = f32[] constant(abc)\n}\n"), {"bad.hlo:4: error:", "malformed floating-point constant"});
  // A literal running over lines is quoted by its first line (found by fuzz/hlo_fuzz.cpp: the
  // message had a line break).
  expectHloError(entry("  ROOT %n = f32[] constant(1x\n  garbage)\n}\n"),
                 {"bad.hlo:4: error:", "malformed floating-point constant '1x...'"});
  expectHloError(entry("  %q = f32[4]{0} parameter(0)\n  ROOT %n = f32[4]{0} add(%p0, %q)\n}\n"),
                 {"bad.hlo:4: error:", "parameter(0) is also declared by 'p0' at line 3"});
  expectHloError(entry("  %q = f32[4]{0} parameter(2)\n  ROOT %n = f32[4]{0} add(%p0, %q)\n}\n"),
                 {"bad.hlo:4: error:", "parameter numbers must be 0..1"});
  expectHloError(entry("  ROOT %n = f32[] get-tuple-element(%p0), index=0\n}\n"),
                 {"bad.hlo:4: error:", "not a tuple"});
  expectHloError(entry("  %n = f32[4]{0} negate(%p0)\n  %n = f32[4]{0} negate(%p0)\n}\n"),
                 {"bad.hlo:5: error:", "duplicate node name 'n'"});
  // Truncated inside the metadata string of an instruction.
  expectHloError(entry("  ROOT %n = f32[4]{0} negate(%p0), metadata={op_type=\"x\" source_file=\"/a.py"),
                 {"bad.hlo:4: error:", "unterminated string"});
  expectHloError(entry("  ROOT %n = f32[4]{0} negate("), {"bad.hlo:4: error:", "truncated file"});
  expectHloError(entry("  ROOT %n = f32[4]{0} constant({1, 2,"), {"bad.hlo:4: error:", "truncated file"});
}

// Every prefix of a valid module either imports or throws InputError: no crash, no hang.
TEST(HloImporter, EveryPrefixFailsCleanly) {
  for (size_t n = 0; n <= kModule.size(); ++n) {
    try {
      importHloText(std::string_view(kModule).substr(0, n), "cut.hlo");
    } catch (const InputError& e) {
      ASSERT_EQ(std::string(e.what()).rfind("cut.hlo:", 0), 0u) << e.what();
    }
  }
}

// Single-character corruptions anywhere give a graph or an InputError, never a crash.
TEST(HloImporter, CorruptionsAreInputErrors) {
  for (size_t i = 0; i < kModule.size(); ++i) {
    for (char c : {'(', '}', '"', '%', ',', '\n', 'x', '\\'}) {
      std::string text = kModule;
      text[i] = c;
      try {
        Graph g = importHloText(text, "bad.hlo");
        g.verify();
      } catch (const InputError& e) {
        ASSERT_EQ(std::string(e.what()).rfind("bad.hlo:", 0), 0u) << e.what();
      }
    }
  }
  // Deep nesting is an error (shapes) or a Symbol (attributes), not a stack overflow.
  const std::string deep(100000, '(');
  expectHloError(entry("  ROOT %n = " + deep + "\n}\n"), {"bad.hlo:4: error:"});
  Graph g = importHloText(entry("  ROOT %n = f32[4]{0} negate(%p0), x=" + std::string(100000, '{') +
                                std::string(100000, '}') + "\n}\n"),
                          "deep.hlo");
  EXPECT_TRUE(std::holds_alternative<Symbol>(g.node(1).kwargs.at(0).second.v));
}

const char* const kArtifactDirs[] = {"tp1_layer1", "tp1_layer2", "tp2_layer1", "tp2_layer2", "tp4_layer1", "tp4_layer2"};

std::string artifactFile(const std::string& dir) { return kArtifact + "/aws_llama/" + dir + "/graph.0.hlo"; }

TEST(HloImporter, ArtifactFiles) {
  if (!fs::is_directory(kArtifact + "/aws_llama"))
    GTEST_SKIP() << "data folder " << kArtifact << "/aws_llama is absent: the HLO artifact files are not checked";
  for (const char* dir : kArtifactDirs) {
    const std::string path = artifactFile(dir);
    Graph g;
    ASSERT_NO_THROW(g = importGraph(path)) << path;  // dispatch on ".hlo"
    EXPECT_EQ(g.path, path);
    EXPECT_GT(g.size(), 100u) << path;
    EXPECT_FALSE(g.inputs.empty()) << path;
    EXPECT_GE(g.outputs.size(), 3u) << path;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      std::string prefix = std::to_string(i);  // parameter(i) is named "p<i>.<id>"
      prefix.insert(prefix.begin(), 'p');
      prefix += '.';
      EXPECT_EQ(g.node(g.inputs[i]).name.rfind(prefix, 0), 0u) << path;
    }
    for (const Node& n : g.nodes) {
      EXPECT_EQ(n.op.rfind(n.op == "placeholder" ? "placeholder" : "hlo.", 0), 0u) << n.name;
      EXPECT_TRUE(n.type) << n.name;
      EXPECT_EQ(n.source.rfind("File: /opt/tiger/transformers-neuronx/src/transformers_neuronx/", 0), 0u)
          << n.name << ": " << n.source;
      EXPECT_EQ(n.source.find("site-packages"), std::string::npos) << n.source;
    }
  }

  const std::string path = artifactFile("tp2_layer1");
  Graph g = importHloFile(path);
  ASSERT_EQ(g.inputs.size(), 17u);
  const Node& p0 = g.node(g.inputs[0]);
  EXPECT_EQ(p0.name, "p0.1");
  EXPECT_EQ(p0.type, (TensorType{DType::F16, {2048, 64, 4}}));
  EXPECT_EQ(g.outputs.size(), 3u);
  int allReduces = 0;
  bool rmsNorm = false, transfer = false;
  for (const Node& n : g.nodes) {
    if (n.op == "hlo.all-reduce") {
      ++allReduces;
      EXPECT_EQ(kw(n, "replica_groups"), Value(ValueList{ints({0, 1})})) << n.name;
      EXPECT_EQ(kw(n, "to_apply"), Value(std::string("add"))) << n.name;
    }
    if (n.op == "hlo.custom-call") {
      const auto& target = std::get<std::string>(kw(n, "custom_call_target").v);
      rmsNorm |= target == "AwsNeuronRmsNorm";
      transfer |= target == "AwsNeuronTransferWithStaticRing";
    }
  }
  EXPECT_EQ(allReduces, 2);
  EXPECT_TRUE(rmsNorm);
  EXPECT_TRUE(transfer);
  const Node& cc = nodeNamed(g, "custom-call.39");
  EXPECT_EQ(cc.source, "File: /opt/tiger/transformers-neuronx/src/transformers_neuronx/hlo.py:909");
}

// Speed belongs to bench/artifact (whole checks, import included), not to a timed test; this checks that
// repeated imports of a real dump give the same graph.
TEST(HloImporter, ArtifactImportsRepeatably) {
  const std::string path = artifactFile("tp2_layer1");
  if (!fs::exists(path)) GTEST_SKIP() << "data folder " << kArtifact << " is absent";
  std::string text = readTextFile(path);
  const size_t first = importHloText(text, path).size();
  EXPECT_GT(first, 100u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(importHloText(text, path).size(), first);
}

}  // namespace
}  // namespace tangle
