#include "import/json_importer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>

namespace tangle {
namespace {

const std::string kData = TANGLE_SOURCE_DIR "/tests/data/import/";

Value ref(const Graph& g, const std::string& name) { return TensorRef{*g.find(name)}; }

void expectJsonError(const std::string& text, std::initializer_list<std::string> fragments) {
  try {
    importJsonText(text, "bad.json");
    ADD_FAILURE() << "expected InputError for:\n" << text;
  } catch (const InputError& e) {
    std::string msg = e.what();
    for (const std::string& f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
  }
}

std::string graphWith(const std::string& nodes, const std::string& outputs = "[]") {
  return R"({"format": "tangle-graph", "version": 1, "nodes": [)" + nodes + R"(], "outputs": )" + outputs + "}";
}
const std::string kX = R"({"name": "x", "op": "placeholder", "type": "f32[4]"})";

TEST(JsonImporter, BasicFile) {
  Graph g = importJsonFile(kData + "basic.json");
  ASSERT_EQ(g.size(), 6u);
  EXPECT_EQ(g.inputs.size(), 2u);
  const Node& mm = g.node(*g.find("mm"));
  EXPECT_EQ(mm.op, "aten.mm.default");
  EXPECT_EQ(mm.type, (TensorType{DType::F32, {8, 4}}));
  EXPECT_EQ(mm.args, (std::vector<Value>{ref(g, "x"), ref(g, "w")}));
  EXPECT_EQ(mm.source, "File: /src/model.py:10 in forward, code: y = x @ w");
  EXPECT_EQ(mm.loc.file, kData + "basic.json");
  const Node& drop = g.node(*g.find("drop"));
  EXPECT_TRUE(drop.isTuple);
  EXPECT_EQ(drop.args, (std::vector<Value>{ref(g, "mm"), 0.1, true}));
  EXPECT_EQ(g.node(*g.find("getitem")).args, (std::vector<Value>{ref(g, "drop"), int64_t{0}}));
  const Node& cast = g.node(*g.find("cast"));
  ASSERT_EQ(cast.kwargs.size(), 5u);
  EXPECT_EQ(cast.kwargs[0].first, "dtype");  // written order is kept
  EXPECT_EQ(cast.kwargs[4].first, "tag");
  EXPECT_EQ(*cast.kwarg("dtype"), Value(DType::F16));
  EXPECT_EQ(*cast.kwarg("memory_format"), Value(Symbol{"torch.contiguous_format"}));
  EXPECT_EQ(*cast.kwarg("fill"), Value(-INFINITY));
  EXPECT_EQ(*cast.kwarg("sizes"), Value(ValueList{int64_t{8}, ValueList{int64_t{4}, NoneValue{}}}));
  EXPECT_EQ(*cast.kwarg("tag"), Value(std::string("t")));
  EXPECT_EQ(g.outputs, (std::vector<Value>{ref(g, "cast"), ref(g, "getitem")}));
}

TEST(JsonImporter, SymbolicDims) {
  Graph g = importJsonText(graphWith(R"({"name": "x", "op": "placeholder", "type": "f32[s0, 8]"})", R"(["x"])"),
                           "ok.json");
  EXPECT_EQ(g.node(0).type, (TensorType{DType::F32, {*sym::toDim(sym::var("s0")), 8}}));
}

TEST(JsonImporter, Errors) {
  expectJsonError("{\n  \"format\": \"tangle-graph\",\n  \"nodes\": [ oops ]\n}", {"bad.json:3:", "malformed JSON"});
  // A number past double range (found by fuzz/json_fuzz.cpp: nlohmann throws out_of_range, not parse_error).
  expectJsonError("{\"format\": \"tangle-graph\", \"version\": 1, \"nodes\": [{\"name\": \"a\", \"op\": \"x\", "
                  "\"args\": [33e33333]}], \"outputs\": []}",
                  {"bad.json: error:", "malformed JSON", "number overflow"});
  expectJsonError(R"({"format": "other", "version": 1, "nodes": [], "outputs": []})", {"bad.json", "tangle-graph"});
  expectJsonError(R"({"format": "tangle-graph", "version": 2, "nodes": [], "outputs": []})", {"bad.json", "version"});
  expectJsonError(graphWith(kX + R"(, {"name": "y", "op": "aten.neg.default", "args": [{"tensor": "z"}]})"),
                  {"bad.json", "node #1 'y'", "'z'", "arg 0"});
  expectJsonError(graphWith(kX + "," + kX), {"bad.json", "duplicate", "'x'"});
  expectJsonError(graphWith(R"({"name": "x", "op": "placeholder", "type": "f32[4"})"), {"node #0 'x'", "f32[4"});
  expectJsonError(graphWith(R"({"name": "x", "op": "placeholder", "typo": 1})"), {"node #0 'x'", "\"typo\""});
  expectJsonError(graphWith(R"({"op": "placeholder"})"), {"node #0", "\"name\""});
  expectJsonError(graphWith(kX + R"(, {"name": "y", "op": "f", "args": [{"dtype": "q7"}]})"), {"node #1 'y'", "q7"});
  expectJsonError(graphWith(kX + R"(, {"name": "y", "op": "f", "kwargs": {"k": {"weird": 1}}})"),
                  {"node #1 'y'", "kwarg 'k'"});
  expectJsonError(graphWith(kX, R"(["nope"])"), {"bad.json", "output", "'nope'"});
  expectJsonError(graphWith(kX + R"(, {"name": "g", "op": "getitem", "args": [{"tensor": "x"}]})"),
                  {"node #1 'g'", "getitem"});
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  expectJsonError(graphWith(kX + R"(, {"name": "y", "op": "f", "args": )" + deep + "}"), {"node #1 'y'", "nested"});
}

}  // namespace
}  // namespace tangle
