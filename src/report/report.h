// Renderings of an inference result: the text report printed by the CLI and
// the JSON document written by --json (same content).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "infer/infer.h"

namespace tangle {

struct RunInfo {
  std::string relationPath;
  std::string specPath;
  std::vector<std::string> implPaths;
  double importSeconds = 0;
  bool allRelations = false;  // text report: also list the relation of every spec tensor
  std::vector<std::string> symbolFacts;  // facts about symbolic sizes the verdict relies on
};

// The JSON report's "schema_version". Bump it on every change to the report's
// fields or their meaning, together with docs/report-schema.json (its const)
// and docs/report.md; tests/python/test_report_schema.py checks real reports.
constexpr int kReportSchemaVersion = 5;

std::string textReport(const InferResult& r, const LGraph& spec, const LGraph& impl, const RunInfo& info);
nlohmann::json jsonReport(const InferResult& r, const LGraph& spec, const LGraph& impl, const RunInfo& info);

}  // namespace tangle
