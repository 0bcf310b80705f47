// Importer for XLA HLO text modules (`HloModule ...` dumps such as the
// graph.N.hlo files written by AWS transformers-neuronx), read as text.
//
// Accepted subset: an optional `HloModule` header line, then computations
// `[ENTRY] %name (params) -> shape { instructions }`. Each instruction is
// `[ROOT] %name = shape opcode(operands), key=value, ...`; operands are
// `%name` (optionally preceded by their shape), `/* ... */` comments are
// skipped. Non-entry computations are only read for their name and the
// opcode of their ROOT instruction (the last one when none is marked ROOT).
//
// What becomes what in the Graph (only the ENTRY computation becomes nodes):
//  * nodes: all `parameter(N)` instructions first, by N (op "placeholder",
//    so Graph::inputs is in parameter order), then the other instructions in
//    file order; an operand must be defined by an earlier instruction;
//  * Node::name: the instruction name without '%'; Node::op: "hlo." + opcode
//    ("hlo.dot", "hlo.custom-call"); `get-tuple-element(t), index=i` is op
//    "getitem" with args [TensorRef t, int64 i] (as in torch.fx; t isTuple);
//  * Node::args: the operands (TensorRef). A scalar `constant(...)` has its
//    value as the only arg (double for floating types, inf/nan included;
//    int64 for integers; bool for pred); an array literal (`{...}`) gives no
//    args and kwarg "literal" = Symbol{literal text};
//  * Node::kwargs: the attributes in order, except `metadata`: `{1,0}` ->
//    ValueList of int64, `{{0,1},{2,3}}` -> list of lists, `slice={[0:8],
//    [2:6:2]}` -> list of [start, limit, stride], `"..."` -> string,
//    integers -> int64, other numbers -> double, true/false -> bool, bare
//    identifiers and anything else (`window={size=2}`) -> Symbol{raw text};
//    `to_apply=%comp` -> string holding comp's ROOT opcode ("add",
//    "maximum"), followed by kwarg "to_apply_computation" = "comp";
//  * Node::type: the instruction shape (layout ignored); a tuple shape
//    leaves it unset and sets isTuple; `token[]` leaves it unset too. The
//    element types are pred s8 s16 s32 s64 u8 f16 bf16 f32 f64 c64 c128;
//  * Node::loc: the instruction's line; Node::source: "File: <frame>", the
//    last frame of metadata source_file's traceback list outside
//    site-packages (or `source_file:source_line` without such a list);
//  * Graph::outputs: the operands of a ROOT `tuple(...)` (flattened; the
//    tuple itself is not a node), otherwise the ROOT instruction.
//
// Anything malformed (no ENTRY, a computation without its closing '}', a bad
// shape or instruction, an undefined operand or computation, an unsupported
// element type, a truncated file) throws InputError "file:line: error: ...".
#pragma once

#include <string>
#include <string_view>

#include "graph/graph.h"

namespace tangle {

Graph importHloFile(const std::string& path);
// `path` is used in error messages and SourceLocs only.
Graph importHloText(std::string_view text, const std::string& path);

}  // namespace tangle
