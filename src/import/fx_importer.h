// Importer for torch.fx `GraphModule.print_readable()` dumps, read as text
// (the file is never executed).
//
// Recognised layout: a header (comments, imports, `name: type` lines), one
// `class <name>(torch.nn.Module):` with one `def forward(self, ...):` whose
// body is a sequence of node statements ending with `return`.
//
// What becomes what in the Graph:
//  * placeholders: the annotated parameters of forward(); for pytree-style
//    dumps (`def forward(self, primals, tangents)`), the names unpacked by
//    `a, b, = fx_pytree.tree_flatten_spec(...)`, typed by the preceding
//    `a: "f32[4]"; b: ...;` declarations;
//  * `x: "f32[8]" = torch.ops.aten.mm.default(a, b)`: op "aten.mm.default"
//    (the text after `torch.ops.`; a call target not under torch.ops is kept
//    whole, e.g. "operator.add");
//  * `x: "f32[8]" = t[1]`: op "getitem", args [TensorRef t, 1]; `t` gets
//    isTuple when it has no tensor type annotation;
//  * `c = self._tensor_constant0`: op "get_attr", args ["_tensor_constant0"];
//  * literal arguments: int64, double (inf/nan included), bool, None, string,
//    lists and tuples (both ValueList), `torch.float32` etc. as DType; other
//    values are Symbols holding their text: `torch.contiguous_format`,
//    `device(type='cuda', index=0)`, and operator references such as the
//    first argument of higher_order.auto_functionalized, stored without the
//    `torch.ops.` prefix ("_C.rms_norm.default", matching Node::op spelling);
//  * "Sym(...)" annotations leave `type` unset and set Node::symValue (a
//    symbolic int, not a tensor); Python arithmetic on them
//    (`floordiv: "Sym((s0//2))" = arg0_1 // 2`) becomes a "sym.arith" node,
//    checked against its annotation ("sym.compare" for comparisons);
//    symbolic dims are sym expressions over the graph's own symbol names;
//  * `# File: ...` comments become Node::source of the following nodes (text
//    after "# "); any other comment clears it;
//  * the returned values, flattened, None dropped, become Graph::outputs.
// Trailing `;  a = b = None` clean-up statements are ignored.
//
// Any other construct, a reference to a name not defined by an earlier node,
// or a truncated file throws InputError "file:line: error: ..." naming the node.
#pragma once

#include <string>
#include <string_view>

#include "graph/graph.h"

namespace tangle {

Graph importFxFile(const std::string& path);
// `path` is used in error messages and SourceLocs only.
Graph importFxText(std::string_view text, const std::string& path);

}  // namespace tangle
