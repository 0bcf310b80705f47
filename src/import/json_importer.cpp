#include "import/json_importer.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "import/text_file.h"
#include "import/type_annotation.h"

namespace tangle {

namespace {

using Json = nlohmann::ordered_json;  // keeps kwargs in their written order

class JsonGraphReader {
 public:
  explicit JsonGraphReader(const std::string& path) : path_(path) { g_.path = path; }

  Graph read(std::string_view text) {
    Json doc;
    try {
      doc = Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
      int line = 1;
      for (size_t i = 0; i < e.byte && i < text.size(); ++i)
        if (text[i] == '\n') ++line;
      std::string what = e.what();
      // nlohmann's message starts with "[json.exception.parse_error.101] parse error at line ...".
      if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
      throw InputError(SourceLoc{path_, line}, "malformed JSON: " + what);
    } catch (const Json::exception& e) {  // e.g. out_of_range: a number too large for a double (1e99999)
      std::string what = e.what();
      if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
      throw InputError(SourceLoc{path_, 0}, "malformed JSON: " + what);
    }
    if (!doc.is_object()) fail("expected a JSON object at the top level");
    checkKeys(doc, {"format", "version", "nodes", "outputs", "symbols", "meta"}, "the top-level object");
    if (!doc.contains("format") || doc["format"] != "tangle-graph")
      fail("expected \"format\": \"tangle-graph\" (not a tangle graph file?)");
    if (!doc.contains("version") || !doc["version"].is_number_integer() || doc["version"].get<int64_t>() != 1)
      fail("unsupported \"version\": this tangle reads version 1");
    if (auto it = doc.find("symbols"); it != doc.end()) {
      if (!it->is_array()) fail("\"symbols\" must be an array of names");
      for (const Json& s : *it) {
        if (!s.is_string()) fail("\"symbols\" must be an array of names");
        (void)s;  // informational: symbols are known from the types that use them
      }
    }
    auto nodes = doc.find("nodes");
    if (nodes == doc.end() || !nodes->is_array()) fail("expected \"nodes\": [...]");
    for (size_t i = 0; i < nodes->size(); ++i) readNode((*nodes)[i], i);

    auto outputs = doc.find("outputs");
    if (outputs == doc.end() || !outputs->is_array()) fail("expected \"outputs\": [names]");
    where_.clear();
    for (const Json& o : *outputs) {
      if (o.is_null()) continue;
      if (!o.is_string()) fail("each output must be a node name (string) or null");
      g_.outputs.emplace_back(TensorRef{resolve(o.get<std::string>(), "output")});
    }
    g_.verify();
    return std::move(g_);
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw InputError(SourceLoc{path_, 0}, where_.empty() ? msg : where_ + ": " + msg);
  }

  void checkKeys(const Json& obj, std::initializer_list<const char*> allowed, const char* what) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool ok = false;
      for (const char* k : allowed) ok = ok || it.key() == k;
      if (!ok) fail(std::string("unknown key \"") + it.key() + "\" in " + what);
    }
  }

  NodeId resolve(const std::string& name, const std::string& what) const {
    std::optional<NodeId> id = g_.find(name);
    if (!id) fail(what + " refers to '" + name + "', which is not defined by an earlier node");
    return *id;
  }

  void readNode(const Json& j, size_t index) {
    where_ = "node #" + std::to_string(index);
    if (!j.is_object()) fail("expected an object {\"name\": ..., \"op\": ...}");
    auto name = j.find("name");
    if (name == j.end() || !name->is_string() || name->get_ref<const std::string&>().empty())
      fail("expected a non-empty \"name\" string");
    Node n;
    n.name = name->get<std::string>();
    where_ += " '" + n.name + "'";
    checkKeys(j, {"name", "op", "args", "kwargs", "type", "tuple", "source", "meta"}, "a node");
    auto op = j.find("op");
    if (op == j.end() || !op->is_string() || op->get_ref<const std::string&>().empty())
      fail("expected a non-empty \"op\" string");
    n.op = op->get<std::string>();
    n.loc = SourceLoc{path_, 0};

    if (auto args = j.find("args"); args != j.end()) {
      if (!args->is_array()) fail("\"args\" must be an array");
      for (size_t i = 0; i < args->size(); ++i) n.args.push_back(readValue((*args)[i], "arg " + std::to_string(i)));
    }
    if (auto kwargs = j.find("kwargs"); kwargs != j.end()) {
      if (!kwargs->is_object()) fail("\"kwargs\" must be an object");
      for (auto it = kwargs->begin(); it != kwargs->end(); ++it)
        n.kwargs.emplace_back(it.key(), readValue(it.value(), "kwarg '" + it.key() + "'"));
    }
    if (auto type = j.find("type"); type != j.end() && !type->is_null()) {
      if (!type->is_string()) fail("\"type\" must be a string such as \"f32[8, 16]\" or null");
      AnnotationResult r = parseTypeAnnotation(type->get<std::string>());
      if (!r.ok) fail("cannot parse \"type\": \"" + type->get<std::string>() + "\": " + r.error);
      n.type = std::move(r.type);
      n.symValue = r.symValue;
      n.complexView = r.complex;
    }
    if (auto tuple = j.find("tuple"); tuple != j.end()) {
      if (!tuple->is_boolean()) fail("\"tuple\" must be true or false");
      n.isTuple = tuple->get<bool>();
      if (n.isTuple && n.type) fail("a tuple-valued node (\"tuple\": true) must have \"type\": null");
    }
    if (auto source = j.find("source"); source != j.end() && !source->is_null()) {
      if (!source->is_string()) fail("\"source\" must be a string");
      n.source = source->get<std::string>();
    }
    if (n.op == "getitem") {
      if (n.args.size() != 2 || !n.args[0].isTensor() || !std::holds_alternative<int64_t>(n.args[1].v))
        fail("a getitem node takes args [{\"tensor\": tuple}, index]");
      Node& tuple = g_.node(std::get<TensorRef>(n.args[0].v).node);
      if (!tuple.type) tuple.isTuple = true;
    }
    g_.add(std::move(n));
  }

  Value readValue(const Json& j, const std::string& what, int depth = 0) const {
    if (depth > kMaxNesting)  // named without its 200 "[0]" indices
      fail(what.substr(0, what.find('[')) + ": nested more than " + std::to_string(kMaxNesting) + " levels deep");
    switch (j.type()) {
      case Json::value_t::null: return NoneValue{};
      case Json::value_t::boolean: return j.get<bool>();
      case Json::value_t::number_integer: return j.get<int64_t>();
      case Json::value_t::number_unsigned: {
        uint64_t u = j.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          fail(what + ": integer " + std::to_string(u) + " does not fit in 64 bits");
        return static_cast<int64_t>(u);
      }
      case Json::value_t::number_float: return j.get<double>();
      case Json::value_t::string: return j.get<std::string>();
      case Json::value_t::array: {
        ValueList items;
        items.reserve(j.size());
        for (size_t i = 0; i < j.size(); ++i) items.push_back(readValue(j[i], what + "[" + std::to_string(i) + "]", depth + 1));
        return items;
      }
      case Json::value_t::object: return readTaggedValue(j, what);
      default: fail(what + ": unsupported JSON value");
    }
  }

  // {"tensor": name} | {"dtype": "f32"} | {"symbol": text} | {"float": "inf" | "-inf" | "nan"}
  Value readTaggedValue(const Json& j, const std::string& what) const {
    if (j.size() == 1 && j.begin().value().is_string()) {
      const std::string& tag = j.begin().key();
      const std::string& s = j.begin().value().get_ref<const std::string&>();
      if (tag == "tensor") return TensorRef{resolve(s, what)};
      if (tag == "dtype") {
        DType d = parseDType(s);
        if (d == DType::Unknown) fail(what + ": unknown dtype '" + s + "'");
        return d;
      }
      if (tag == "symbol") return Symbol{s};
      if (tag == "float") {
        if (s == "inf") return std::numeric_limits<double>::infinity();
        if (s == "-inf") return -std::numeric_limits<double>::infinity();
        if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
        fail(what + ": {\"float\": ...} takes \"inf\", \"-inf\" or \"nan\", not '" + s + "'");
      }
    }
    fail(what + ": expected {\"tensor\": name}, {\"dtype\": name}, {\"symbol\": text} or {\"float\": \"inf\"}");
  }

  static constexpr int kMaxNesting = 200;
  const std::string& path_;
  Graph g_;
  std::string where_;  // "node #3 'mm'" for error messages
};

}  // namespace

Graph importJsonText(std::string_view text, const std::string& path) {
  JsonGraphReader reader(path);
  return reader.read(text);
}

Graph importJsonFile(const std::string& path) {
  std::string text = readTextFile(path);
  return importJsonText(text, path);
}

}  // namespace tangle
