// check_model (models/xgb_booster.hpp): an XGBoost model's trees read out of JSON or UBJSON, then
// checked. UBJSON is walked here rather than parsed into a document: the shipped SpMV ranking's
// 18 MB would take 0.4 s as nlohmann::json, which tune --budget 0 cannot spare; the walker skips
// every typed array but the three link lists, in milliseconds.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "models/xgb_booster.hpp"

namespace sparsetune::models::xgb {

namespace {

struct TreeLinks {
  std::vector<long long> left, right, split;
  int seen = 0;  // which of the three lists the tree had (bits)
};

// What the check needs of a model; -1 for a count the model does not give.
struct ModelShape {
  long long features = -1, classes = -1;
  std::vector<TreeLinks> trees;
};

struct Layout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

long long count_value(const nlohmann::json& v) {
  return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<long long>();
}

ModelShape shape_of_json(const nlohmann::json& j) {
  ModelShape s;
  const auto& learner = j.at("learner");
  const auto& param = learner.at("learner_model_param");
  s.features = count_value(param.at("num_feature"));
  if (param.contains("num_class")) s.classes = count_value(param.at("num_class"));
  const auto& booster = learner.at("gradient_booster");
  const auto& model =
      booster.contains("gbtree") ? booster.at("gbtree").at("model") : booster.at("model");
  for (const auto& t : model.at("trees")) {
    TreeLinks links;
    links.left = t.at("left_children").get<std::vector<long long>>();
    links.right = t.at("right_children").get<std::vector<long long>>();
    links.split = t.at("split_indices").get<std::vector<long long>>();
    links.seen = 7;
    s.trees.push_back(std::move(links));
  }
  return s;
}

// A UBJSON walker (ubjson.org: markers, optimised containers with '$' type and '#' count, big
// endian numbers). Trees are the objects inside an array keyed "trees"; the counts are read from
// the object keyed "learner_model_param".
class UbjsonWalker {
 public:
  explicit UbjsonWalker(std::string_view b) : b_(b) {}

  ModelShape walk() {
    value(next(), "", 0);
    if (at_ != b_.size()) throw Layout("bytes after the model's end");
    return std::move(shape_);
  }

 private:
  enum class Capture { none, left, right, split, count_feature, count_class };

  char next() {
    need(1);
    return b_[at_++];
  }
  void need(std::uint64_t n) const {
    if (n > b_.size() - at_) throw Layout("cut off at byte " + std::to_string(b_.size()));
  }
  std::uint64_t big_endian(int bytes) {
    need(bytes);
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = v << 8 | static_cast<unsigned char>(b_[at_++]);
    return v;
  }
  static int fixed_size(char m) {
    switch (m) {
      case 'i':
      case 'U':
      case 'C':
        return 1;
      case 'I':
        return 2;
      case 'l':
      case 'd':
        return 4;
      case 'L':
      case 'D':
        return 8;
      case 'Z':
      case 'N':
      case 'T':
      case 'F':
        return 0;
      default:
        return -1;
    }
  }
  // An integer of marker m; false for a marker that holds no integer.
  bool integer(char m, long long& v) {
    switch (m) {
      case 'i':
        v = static_cast<std::int8_t>(big_endian(1));
        return true;
      case 'U':
        v = static_cast<std::uint8_t>(big_endian(1));
        return true;
      case 'I':
        v = static_cast<std::int16_t>(big_endian(2));
        return true;
      case 'l':
        v = static_cast<std::int32_t>(big_endian(4));
        return true;
      case 'L':
        v = static_cast<std::int64_t>(big_endian(8));
        return true;
      default:
        return false;
    }
  }
  std::uint64_t length() {
    long long n = 0;
    if (!integer(next(), n) || n < 0) throw Layout("a length that is not a count");
    return static_cast<std::uint64_t>(n);
  }
  std::string_view string() {
    const std::uint64_t n = length();
    need(n);
    const std::string_view s = b_.substr(at_, n);
    at_ += n;
    return s;
  }

  // One value of marker m, under `key`, `depth` containers deep.
  void value(char m, std::string_view key, int depth) {
    if (depth > 64) throw Layout("containers nested too deep");
    if (m == '[' || m == '{') return container(m == '{', key, depth + 1);
    long long v = 0;
    if (integer(m, v)) return keep(v);
    if (m == 'S' || m == 'H') {
      const std::string_view s = string();
      if (capture_ == Capture::count_feature || capture_ == Capture::count_class) {
        long long n = 0;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), n);
        if (r.ec != std::errc() || r.ptr != s.data() + s.size())
          throw Layout("a count that is not a number");
        keep(n);
      }
      return;
    }
    const int size = fixed_size(m);
    if (size < 0) throw Layout(std::string("unknown marker '") + m + "'");
    need(size);
    at_ += size;
    if (capture_ != Capture::none && capture_ != Capture::count_class &&
        capture_ != Capture::count_feature)
      throw Layout("a link or split index that is not an integer");
  }

  void container(bool object, std::string_view key, int depth) {
    char type = 0;
    std::int64_t count = -1;
    if (at_ < b_.size() && b_[at_] == '$') {
      ++at_;
      type = next();
      if (at_ >= b_.size() || b_[at_] != '#') throw Layout("a typed container without a count");
    }
    if (at_ < b_.size() && b_[at_] == '#') {
      ++at_;
      count = static_cast<std::int64_t>(length());
    }
    const bool trees = !object && key == "trees";
    const bool tree = object && in_trees_ == depth - 1;
    const bool params = object && key == "learner_model_param";
    if (trees) in_trees_ = depth;
    if (tree) shape_.trees.emplace_back();
    // Typed fixed-size elements no list is kept of: skipped whole.
    if (type != 0 && !object && capture_ == Capture::none && fixed_size(type) >= 0) {
      const auto size = static_cast<std::uint64_t>(fixed_size(type));
      if (size > 0 && static_cast<std::uint64_t>(count) > (b_.size() - at_) / size)
        throw Layout("cut off at byte " + std::to_string(b_.size()));
      at_ += static_cast<std::uint64_t>(count) * size;
    } else {
      if (count > 0 && !object && static_cast<std::uint64_t>(count) <= b_.size() - at_)
        reserve(count);
      for (std::int64_t i = 0; count < 0 || i < count; ++i) {
        if (count < 0 && type == 0 && b_.size() > at_ && b_[at_] == (object ? '}' : ']')) {
          ++at_;
          break;
        }
        std::string_view k;
        Capture saved = capture_;
        if (object) {
          k = string();
          capture_ = Capture::none;
          if (tree && k == "left_children") capture_ = Capture::left;
          if (tree && k == "right_children") capture_ = Capture::right;
          if (tree && k == "split_indices") capture_ = Capture::split;
          if (params && k == "num_feature") capture_ = Capture::count_feature;
          if (params && k == "num_class") capture_ = Capture::count_class;
        }
        value(type != 0 ? type : next(), object ? k : key, depth);
        capture_ = saved;
      }
    }
    if (trees) in_trees_ = -1;
  }

  void keep(long long v) {
    switch (capture_) {
      case Capture::none:
        return;
      case Capture::left:
        list(1).push_back(v);
        return;
      case Capture::right:
        list(2).push_back(v);
        return;
      case Capture::split:
        list(4).push_back(v);
        return;
      case Capture::count_feature:
        shape_.features = v;
        return;
      case Capture::count_class:
        shape_.classes = v;
        return;
    }
  }
  void reserve(std::int64_t n) {
    const auto size = static_cast<std::size_t>(n);
    if (capture_ == Capture::left) list(1).reserve(size);
    if (capture_ == Capture::right) list(2).reserve(size);
    if (capture_ == Capture::split) list(4).reserve(size);
  }
  std::vector<long long>& list(int bit) {
    TreeLinks& t = shape_.trees.back();
    t.seen |= bit;
    return bit == 1 ? t.left : bit == 2 ? t.right : t.split;
  }

  std::string_view b_;
  std::size_t at_ = 0;
  int in_trees_ = -1;  // depth of the "trees" array being read, -1 outside it
  Capture capture_ = Capture::none;
  ModelShape shape_;
};

}  // namespace

void check_model(std::string_view bytes, const std::string& source, int classes) {
  const auto bad = [&source](const std::string& why) {
    return Error(source + ": not a valid XGBoost model: " + why);
  };
  ModelShape s;
  try {
    const nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
    if (!j.is_discarded()) {
      s = shape_of_json(j);
    } else if (!bytes.empty() && bytes[0] == '{') {
      s = UbjsonWalker(bytes).walk();
    } else {
      throw Error(source + ": not an XGBoost model (neither JSON nor UBJSON)");
    }
  } catch (const nlohmann::json::exception& e) {
    throw bad(std::string("unexpected layout (") + e.what() + ")");
  } catch (const Layout& e) {
    throw bad(std::string("unexpected layout (") + e.what() + ")");
  } catch (const std::logic_error& e) {  // stoll of a count that is not a number
    throw bad(std::string("a count that is not a number (") + e.what() + ")");
  }
  if (s.features < 0) throw bad("no feature count (learner_model_param.num_feature)");
  if (classes > 0 && std::max(1LL, s.classes) != classes)
    throw bad("it has " + std::to_string(std::max(1LL, s.classes)) + " classes, " +
              std::to_string(classes) + " expected");
  for (std::size_t t = 0; t < s.trees.size(); ++t) {
    const auto& [left, right, split, seen] = s.trees[t];
    const std::size_t n = left.size();
    const std::string which = "tree " + std::to_string(t);
    if (seen != 7) throw bad(which + " lacks its child or split lists");
    if (n == 0 || right.size() != n || split.size() != n)
      throw bad(which + " has child or split lists of different lengths");
    // Each node reached once from the root: no loop, no node with two parents.
    std::vector<char> reached(n, 0);
    std::vector<std::size_t> stack = {0};
    reached[0] = 1;
    while (!stack.empty()) {
      const std::size_t i = stack.back();
      stack.pop_back();
      const long long l = left[i], r = right[i];
      if ((l == -1) != (r == -1))
        throw bad(which + ": node " + std::to_string(i) + " has one child");
      if (l == -1) continue;
      const long long f = split[i];
      if (f < 0 || f >= s.features)
        throw bad(which + ": node " + std::to_string(i) + " splits on feature " +
                  std::to_string(f) + " of " + std::to_string(s.features));
      for (const long long c : {l, r}) {
        if (c < 0 || c >= static_cast<long long>(n) || reached[static_cast<std::size_t>(c)])
          throw bad(which + ": node " + std::to_string(i) + " links to node " + std::to_string(c) +
                    ", which is not a new node of the tree");
        reached[static_cast<std::size_t>(c)] = 1;
        stack.push_back(static_cast<std::size_t>(c));
      }
    }
  }
}

}  // namespace sparsetune::models::xgb
