#include "import/fx_importer.h"

#include "import/text_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>

namespace tangle {
namespace {

const std::string kData = TANGLE_SOURCE_DIR "/tests/data/import/";

const Node& nodeNamed(const Graph& g, const std::string& name) {
  auto id = g.find(name);
  if (!id) throw std::runtime_error("no node " + name);
  return g.node(*id);
}
TensorType tt(DType d, std::vector<Dim> shape) { return TensorType{d, std::move(shape)}; }
Value ref(const Graph& g, const std::string& name) { return TensorRef{*g.find(name)}; }

// Imports `body` placed inside a forward(self, x: "f32[4]") and expects an
// InputError whose message has every fragment.
void expectFxError(const std::string& text, std::initializer_list<std::string> fragments) {
  try {
    importFxText(text, "bad.py");
    ADD_FAILURE() << "expected InputError for:\n" << text;
  } catch (const InputError& e) {
    std::string msg = e.what();
    for (const std::string& f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
  }
}

std::string wrap(const std::string& body) {
  return "import torch\n"                                  // line 1
         "class GraphModule(torch.nn.Module):\n"           // line 2
         "    def forward(self, x: \"f32[4]\"):\n"         // line 3
         + body;                                           // from line 4
}

TEST(FxImporter, BasicDump) {
  Graph g = importFxFile(kData + "basic.py");
  EXPECT_EQ(g.path, kData + "basic.py");
  ASSERT_EQ(g.size(), 19u);
  ASSERT_EQ(g.inputs.size(), 5u);
  EXPECT_EQ(g.node(g.inputs[0]).name, "x");
  EXPECT_EQ(g.node(g.inputs[0]).op, "placeholder");
  EXPECT_EQ(g.node(g.inputs[0]).type, tt(DType::F32, {8, 16}));
  const Dim s0 = *sym::toDim(sym::var("s0"));
  EXPECT_EQ(g.node(g.inputs[2]).type, tt(DType::I64, {s0, 8}));
  EXPECT_EQ(g.node(g.inputs[3]).type, std::nullopt);  // Sym(s0): a symbolic int
  EXPECT_EQ(g.node(g.inputs[3]).symValue, sym::var("s0"));
  EXPECT_EQ(g.node(g.inputs[4]).type, tt(DType::I64, {}));

  const Node& mm = nodeNamed(g, "mm");
  EXPECT_EQ(mm.op, "aten.mm.default");
  EXPECT_EQ(mm.type, tt(DType::F32, {8, 4}));
  EXPECT_EQ(mm.args, (std::vector<Value>{ref(g, "x"), ref(g, "w")}));
  EXPECT_EQ(mm.loc.file, kData + "basic.py");
  EXPECT_EQ(mm.loc.line, 15);
  EXPECT_EQ(mm.source, "File: /src/model.py:10 in forward, code: y = x @ w");

  const Node& drop = nodeNamed(g, "native_dropout");
  EXPECT_TRUE(drop.isTuple);
  EXPECT_FALSE(drop.type);
  EXPECT_EQ(drop.args, (std::vector<Value>{ref(g, "mm"), 0.1, true}));
  const Node& gi1 = nodeNamed(g, "getitem_1");
  EXPECT_EQ(gi1.op, "getitem");
  EXPECT_EQ(gi1.args, (std::vector<Value>{ref(g, "native_dropout"), int64_t{1}}));
  EXPECT_EQ(gi1.type, tt(DType::Bool, {8, 4}));
  EXPECT_EQ(gi1.source, "File: /src/model.py:11 in forward, code: y = dropout(y)");

  const Node& cst = nodeNamed(g, "_tensor_constant0");
  EXPECT_EQ(cst.op, "get_attr");
  EXPECT_EQ(cst.args, (std::vector<Value>{std::string("_tensor_constant0")}));
  EXPECT_FALSE(cst.isTuple);

  const Node& full = nodeNamed(g, "full");
  ASSERT_EQ(full.args.size(), 2u);
  EXPECT_EQ(full.args[0], Value(ValueList{int64_t{8}, int64_t{4}}));
  EXPECT_EQ(full.args[1], Value(-INFINITY));
  ASSERT_EQ(full.kwargs.size(), 4u);
  EXPECT_EQ(full.kwargs[0].first, "dtype");
  EXPECT_EQ(*full.kwarg("dtype"), Value(DType::F32));
  EXPECT_EQ(*full.kwarg("layout"), Value(Symbol{"torch.strided"}));
  EXPECT_EQ(*full.kwarg("device"), Value(Symbol{"device(type='cuda', index=0)"}));
  EXPECT_EQ(*full.kwarg("pin_memory"), Value(false));
  EXPECT_EQ(full.kwarg("nope"), nullptr);

  EXPECT_EQ(nodeNamed(g, "slice_1").args[3], Value(int64_t{9223372036854775807}));
  EXPECT_EQ(nodeNamed(g, "clamp").args, (std::vector<Value>{ref(g, "slice_1"), -1.5, 1e-05}));
  EXPECT_EQ(nodeNamed(g, "cat").args[0], Value(ValueList{ref(g, "clamp"), ref(g, "full")}));
  EXPECT_EQ(nodeNamed(g, "cat").args[1], Value(int64_t{-1}));
  EXPECT_EQ(nodeNamed(g, "layer_norm").args[2], Value(NoneValue{}));

  const Node& custom = nodeNamed(g, "masked");
  EXPECT_EQ(custom.op, "my_ns.custom_thing.default");
  EXPECT_EQ(custom.args[1], Value(ValueList{int64_t{1}, ValueList{int64_t{2}, int64_t{3}}}));
  EXPECT_EQ(custom.args[2], Value(std::string("name's")));
  EXPECT_EQ(*custom.kwarg("mode"), Value(std::string("x")));
  EXPECT_TRUE(std::isnan(std::get<double>(custom.kwarg("eps")->v)));
  EXPECT_EQ(*custom.kwarg("memory_format"), Value(Symbol{"torch.contiguous_format"}));

  const Node& ar = nodeNamed(g, "all_reduce");
  EXPECT_EQ(ar.op, "_c10d_functional.all_reduce.default");
  EXPECT_EQ(ar.args, (std::vector<Value>{ref(g, "masked"), std::string("sum"), std::string("12")}));
  EXPECT_EQ(ar.source, "");  // "# No stacktrace found" clears the source
  EXPECT_EQ(nodeNamed(g, "wait_tensor").op, "_c10d_functional.wait_tensor");
  EXPECT_EQ(nodeNamed(g, "emb").type, tt(DType::F32, {-1, 8, 4}));

  // `return (wait_tensor, None, getitem_1, emb)`: None is dropped.
  EXPECT_EQ(g.outputs, (std::vector<Value>{ref(g, "wait_tensor"), ref(g, "getitem_1"), ref(g, "emb")}));
  EXPECT_EQ(g.outputNodes().size(), 3u);
}

TEST(FxImporter, PytreeJointGraph) {
  Graph g = importFxFile(kData + "pytree.py");
  ASSERT_EQ(g.inputs.size(), 3u);
  EXPECT_EQ(g.node(g.inputs[0]).name, "primals_1");
  EXPECT_EQ(g.node(g.inputs[2]).name, "tangents_1");
  EXPECT_EQ(g.node(g.inputs[2]).type, tt(DType::F32, {1}));
  EXPECT_FALSE(g.find("primals"));  // the pytree containers are not nodes
  ASSERT_EQ(g.size(), 5u);
  EXPECT_EQ(nodeNamed(g, "mul_1").args, (std::vector<Value>{ref(g, "tangents_1"), ref(g, "primals_1")}));
  EXPECT_EQ(g.outputs, (std::vector<Value>{ref(g, "mul"), ref(g, "mul_1")}));
}

TEST(FxImporter, LambdaClassAutoFunctionalizedAndListReturn) {
  Graph g = importFxFile(kData + "lambda_list_return.py");
  const Node& af = nodeNamed(g, "auto_functionalized_v2");
  EXPECT_EQ(af.op, "higher_order.auto_functionalized_v2");
  EXPECT_TRUE(af.isTuple);
  EXPECT_EQ(af.args, (std::vector<Value>{Symbol{"tg.inplace_log_tensor.default"}}));
  EXPECT_EQ(*af.kwarg("_all_bases"), Value(ValueList{ref(g, "add")}));
  EXPECT_EQ(g.operands(*g.find("auto_functionalized_v2")), (std::vector<NodeId>{*g.find("add")}));
  EXPECT_EQ(g.outputs, (std::vector<Value>{ref(g, "getitem_1"), ref(g, "arg1_1")}));
}

TEST(FxImporter, TruncatedFileNamesLastStatement) {
  try {
    importFxFile(kData + "truncated.py");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("truncated.py:8"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'return'"), std::string::npos) << msg;
  }
}

TEST(FxImporter, UndefinedOrForwardReference) {
  expectFxError(wrap("        a: \"f32[4]\" = torch.ops.aten.neg.default(x)\n"
                     "        b: \"f32[4]\" = torch.ops.aten.add.Tensor(a, c)\n"
                     "        c: \"f32[4]\" = torch.ops.aten.neg.default(x)\n"
                     "        return (b,)\n"),
                {"bad.py:5:", "'b'", "'c'"});
  expectFxError(wrap("        a: \"f32[4]\" = torch.ops.aten.neg.default(x)\n"
                     "        return (a, ghost)\n"),
                {"bad.py:5:", "'ghost'"});
  expectFxError(wrap("        a: \"f32[4]\" = tup[0]\n        return (a,)\n"), {"bad.py:4:", "'tup'"});
}

TEST(FxImporter, DuplicateNodeName) {
  expectFxError(wrap("        a: \"f32[4]\" = torch.ops.aten.neg.default(x)\n"
                     "        a: \"f32[4]\" = torch.ops.aten.neg.default(x)\n"
                     "        return (a,)\n"),
                {"bad.py:5:", "duplicate", "'a'"});
}

TEST(FxImporter, MalformedLines) {
  // Garbage statement.
  expectFxError(wrap("        a: \"f32[4]\" = torch.ops.aten.neg.default(x)\n"
                     "        !!! what is this\n"
                     "        return (a,)\n"),
                {"bad.py:5:", "expected"});
  // Unbalanced parenthesis: the error names the line where the statement starts.
  expectFxError(wrap("        a: \"f32[4]\" = torch.ops.aten.neg.default(x\n"
                     "        b: \"f32[4]\" = torch.ops.aten.neg.default(a)\n"
                     "        return (b,)\n"),
                {"bad.py:4:", "'a'", "expected"});
  // Unbalanced parenthesis at the end of the file.
  expectFxError(wrap("        a: \"f32[4]\" = torch.ops.aten.neg.default(x\n"), {"bad.py:4:", "end of file"});
  // Bad type annotations.
  expectFxError(wrap("        a: \"f32[4, ]\" = torch.ops.aten.neg.default(x)\n        return (a,)\n"),
                {"bad.py:4:", "'a'", "f32[4, ]"});
  expectFxError(wrap("        a: \"q99[4]\" = torch.ops.aten.neg.default(x)\n        return (a,)\n"),
                {"bad.py:4:", "'a'", "q99"});
  expectFxError(wrap("        a: \"f32\" = torch.ops.aten.neg.default(x)\n        return (a,)\n"),
                {"bad.py:4:", "'a'", "dtype[dims]"});
  expectFxError("import torch\nclass GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4\"):\n        return (x,)\n",
                {"bad.py:3:", "'x'"});
  // More elements than int64 counts (found with UBSan: element counts overflowed later), and
  // size arithmetic that overflows (found by fuzz/sym_fuzz.cpp).
  expectFxError(wrap("        a: \"f32[1099511627776, 1099511627776]\" = torch.ops.aten.neg.default(x)\n        return (a,)\n"),
                {"bad.py:4:", "'a'", "64-bit"});
  expectFxError(wrap("        a: \"f32[4611686018427387904*4]\" = torch.ops.aten.neg.default(x)\n        return (a,)\n"),
                {"bad.py:4:", "'a'", "found '4611686018427387904*4'"});
  // Unterminated string.
  expectFxError(wrap("        a: \"f32[4]\" = torch.ops.aten.add.Tensor(x, 'oops)\n        return (a,)\n"),
                {"bad.py:4:", "unterminated"});
  // Integer overflow.
  expectFxError(wrap("        a: \"f32[4]\" = torch.ops.aten.slice.Tensor(x, 0, 0, 99999999999999999999)\n"
                     "        return (a,)\n"),
                {"bad.py:4:", "99999999999999999999"});
  // Index must be an integer; bad cleanup statement; trailing junk after return.
  expectFxError(wrap("        a = torch.ops.aten.split.Tensor(x, 2)\n        b: \"f32[2]\" = a['k']\n        return (b,)\n"),
                {"bad.py:5:", "integer index"});
  expectFxError(wrap("        a: \"f32[4]\" = torch.ops.aten.neg.default(x);  x = 3\n        return (a,)\n"),
                {"bad.py:4:", "clean-up"});
  expectFxError(wrap("        return (x,)\n        y = 1\n"), {"bad.py:5:", "after the 'return'"});
  // No class at all / nothing after the signature.
  expectFxError("import torch\n\nx = 1\n", {"bad.py:3:", "class"});
  expectFxError("", {"bad.py", "class"});
  expectFxError(wrap(""), {"bad.py", "'return'"});
}

TEST(FxImporter, NegativeNumbersAndFloatsForms) {
  Graph g = importFxText(wrap("        a: \"f32[4]\" = torch.ops.my.op(x, -9223372036854775808, -0.5, 2.5e+3, .5, -inf, inf, ())\n"
                              "        return a\n"),
                         "ok.py");
  const Node& a = nodeNamed(g, "a");
  EXPECT_EQ(a.op, "my.op");
  EXPECT_EQ(a.args[1], Value(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(a.args[2], Value(-0.5));
  EXPECT_EQ(a.args[3], Value(2500.0));
  EXPECT_EQ(a.args[4], Value(0.5));
  EXPECT_EQ(a.args[5], Value(-INFINITY));
  EXPECT_EQ(a.args[6], Value(INFINITY));
  EXPECT_EQ(a.args[7], Value(ValueList{}));
  EXPECT_EQ(g.outputs, (std::vector<Value>{ref(g, "a")}));
}

TEST(FxImporter, SignatureMaySpanLines) {
  Graph g = importFxText("import torch\nclass GraphModule(torch.nn.Module):\n"
                         "    def forward(self, a: \"f32[2]\",\n                b: \"f32[2]\"):\n"
                         "        c: \"f32[2]\" = torch.ops.aten.add.Tensor(a, b)\n        return (c,)\n",
                         "ok.py");
  EXPECT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(nodeNamed(g, "c").loc.line, 5);
}

// Every prefix of a valid dump that drops the `return` line, and every
// single-byte corruption, either imports or throws InputError: no crash, no
// other exception, no hang.
TEST(FxImporter, TruncationsAndCorruptionsAreInputErrors) {
  const std::string text = readTextFile(kData + "basic.py");
  const size_t returnAt = text.find("return (");
  ASSERT_NE(returnAt, std::string::npos);
  for (size_t len = 0; len < returnAt; ++len) {
    EXPECT_THROW(importFxText(std::string_view(text).substr(0, len), "cut.py"), InputError) << "prefix " << len;
  }
  int imported = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    for (char c : {')', '"', '[', '\n', '#'}) {
      std::string bad = text;
      bad[i] = c;
      try {
        importFxText(bad, "mut.py");
        ++imported;
      } catch (const InputError&) {
      }
    }
  }
  EXPECT_GT(imported, 0);  // e.g. edits inside comments are harmless
}

TEST(FxImporter, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '[');
  expectFxError(wrap("        a: \"f32[4]\" = torch.ops.my.op(x, " + deep + "\n"), {"bad.py:4:", "nested"});
}

}  // namespace
}  // namespace tangle

namespace tangle {
namespace {

// Dynamic-shape dumps: Sym inputs, Python arithmetic on them, sym_size calls
// and runtime assertions; symbolic dims are sym expressions.
TEST(FxImporter, SymbolicArithmetic) {
  Graph g = importFxText(
      "class GraphModule(torch.nn.Module):\n"
      "    def forward(self, n: \"Sym(s0)\", x: \"f32[s0, 8]\"):\n"
      "        floordiv: \"Sym((s0//2))\" = n // 2\n"
      "        mul: \"Sym(2*((s0//2)))\" = 2 * floordiv\n"
      "        sub: \"Sym(s0 - 2*((s0//2)))\" = n - mul\n"
      "        size: \"Sym(s0)\" = torch.ops.aten.sym_size.int(x, 0)\n"
      "        ge: \"Sym(s0 >= 2)\" = size >= 2\n"
      "        a = torch.ops.aten._assert_scalar.default(ge, 'Runtime assertion failed')\n"
      "        s: \"f32[(s0//2), 8]\" = torch.ops.aten.slice.Tensor(x, 0, 0, floordiv)\n"
      "        m: \"f32[Max(1, s0), 8]\" = torch.ops.my.op(x)\n"
      "        return (s, m)\n",
      "dyn.py");
  sym::ExprId s0 = sym::var("s0");
  EXPECT_EQ(nodeNamed(g, "n").symValue, s0);
  EXPECT_EQ(nodeNamed(g, "floordiv").op, "sym.arith");
  EXPECT_EQ(nodeNamed(g, "floordiv").symValue, sym::floorDiv(s0, 2));
  EXPECT_EQ(nodeNamed(g, "floordiv").args, (std::vector<Value>{ref(g, "n"), Value(int64_t{2})}));
  EXPECT_EQ(nodeNamed(g, "sub").symValue, sym::mod(s0, 2));
  EXPECT_EQ(nodeNamed(g, "ge").op, "sym.compare");
  EXPECT_EQ(nodeNamed(g, "s").type->shape, (std::vector<Dim>{*sym::toDim(*sym::floorDiv(s0, 2)), 8}));

  qualifySymbols(g, Owner::impl(3));
  EXPECT_EQ(nodeNamed(g, "floordiv").symValue, sym::floorDiv(sym::var("D3.s0"), 2));
  EXPECT_EQ(toString(*nodeNamed(g, "s").type), "f32[(D3.s0//2), 8]");
  EXPECT_EQ(toString(*nodeNamed(g, "m").type), "f32[Max(1, D3.s0), 8]");  // inside calls too
}

TEST(FxImporter, SymbolicArithmeticMustMatchItsAnnotation) {
  try {
    importFxText("class GraphModule(torch.nn.Module):\n"
                 "    def forward(self, n: \"Sym(s0)\"):\n"
                 "        m: \"Sym(s0 + 1)\" = n + 2\n"
                 "        return (m,)\n",
                 "bad.py");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.py:3:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("says Sym(s0 + 1) but the expression computes s0 + 2"), std::string::npos)
        << e.what();
  }
  try {
    importFxText("class GraphModule(torch.nn.Module):\n"
                 "    def forward(self, x: \"f32[s0, s1]\"):\n"
                 "        size: \"Sym(s0)\" = torch.ops.aten.sym_size.int(x, 1)\n"
                 "        return (size,)\n",
                 "bad.py");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.py:3: error: node 'size': the annotation says Sym(s0) but dim 1 of 'x' is s1"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tangle
