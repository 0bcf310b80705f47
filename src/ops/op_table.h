// Internal to src/ops: the records of op_table.cpp.
#pragma once

#include <span>

#include "ops/ops.h"

namespace tangle::ops {
std::span<const OpDef> opTable();
}  // namespace tangle::ops
