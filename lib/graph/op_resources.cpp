// SET_RESOURCES: the launch configuration of the part's kernel.
#include "graph/op_util.hpp"

namespace sparsetune::graph {

class SetResources final : public Operator {
 public:
  const char* name() const override { return "SET_RESOURCES"; }
  Stage stage() const override { return Stage::Mapping; }
  const char* summary() const override { return "Threads per CUDA block and the grid cap"; }
  std::vector<ParamSpec> params() const override {
    return {{"threads", ParamType::Int, 128, 32, 1024, "threads per block (a multiple of 32)"},
            {"max_blocks", ParamType::Int, 1 << 20, 1, 2147483647.0,
             "largest grid; thread blocks beyond it are visited by a grid-stride loop"}};
  }
  std::string precondition(const GraphState& s, const nlohmann::json& p) const override {
    if (!s.compressed) return "mapping operators follow COMPRESS";
    if (s.resources) return "SET_RESOURCES appears once per part";
    if (iparam(p, "threads") % 32 != 0) return "threads must be a multiple of 32";
    return "";
  }
  void advance(GraphState& s, const nlohmann::json&) const override { s.resources = true; }
  std::vector<Part> apply(Part& part, const nlohmann::json& p) const override {
    part.threads = static_cast<int>(iparam(p, "threads"));
    part.max_blocks = iparam(p, "max_blocks");
    return {};
  }
};

const Operator* make_set_resources() {
  static SetResources op;
  return &op;
}

}  // namespace sparsetune::graph
