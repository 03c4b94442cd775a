#include "tools/bench_compare.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace swarm::tools {

namespace {

/// A parser of one flat JSON object of numbers, reporting errors by line.
class flat_json_reader {
public:
  flat_json_reader(std::string path, std::string text)
      : path_{std::move(path)}, text_{std::move(text)} {}

  bench_figures read() {
    bench_figures out;
    expect('{', "'{' at the start of the report");
    if (peek() == '}') {
      ++pos_;
    } else {
      for (;;) {
        std::string key = read_key();
        for (auto& [k, v] : out)
          if (k == key) fail("key '" + key + "' appears twice");
        expect(':', "':' after \"" + key + "\"");
        out.emplace_back(key, read_number(key));
        skip_space();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect('}', "',' or '}' after the value of \"" + key + "\"");
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) fail("text after the closing '}'");
    return out;
  }

private:
  [[noreturn]] void fail(const std::string& what) const {
    size_t line = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i)
      line += text_[i] == '\n';
    throw std::runtime_error(path_ + ":" + std::to_string(line) + ": " + what);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }

  char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }

  void expect(char c, const std::string& what) {
    if (peek() != c)
      fail("expected " + what + (pos_ < text_.size() ? "" : ", found the end"));
    ++pos_;
  }

  std::string read_key() {
    expect('"', "a quoted key");
    auto end = text_.find('"', pos_);
    if (end == std::string::npos) fail("a key without its closing quote");
    std::string key = text_.substr(pos_, end - pos_);
    if (key.empty() || key.find_first_of("\\\n") != std::string::npos)
      fail("key \"" + key + "\" is empty or has an escape or line break");
    pos_ = end + 1;
    return key;
  }

  double read_number(const std::string& key) {
    skip_space();
    const char* start = text_.c_str() + pos_;
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(start, &end);
    if (end == start || errno == ERANGE || !std::isfinite(v))
      fail("the value of \"" + key + "\" is not a finite number");
    pos_ += static_cast<size_t>(end - start);
    return v;
  }

  std::string path_;
  std::string text_;
  size_t pos_ = 0;
};

const double* find(const bench_figures& figs, const std::string& key) {
  for (auto& [k, v] : figs)
    if (k == key) return &v;
  return nullptr;
}

} // namespace

bench_figures read_bench_json(const std::string& path) {
  std::ifstream in{path};
  if (!in)
    throw std::runtime_error("cannot open '" + path + "': " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return flat_json_reader{path, text.str()}.read();
}

int run_compare(const std::string& old_path, const std::string& new_path) {
  bench_figures before, after;
  try {
    before = read_bench_json(old_path);
    after = read_bench_json(new_path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "swarm bench --compare: %s\n", e.what());
    return 1;
  }
  std::printf("%-52s %14s %14s %10s\n", "key", "old", "new", "new/old");
  std::vector<std::string> only_old, only_new;
  for (auto& [key, old_value] : before) {
    auto* new_value = find(after, key);
    if (!new_value) {
      only_old.push_back(key);
      continue;
    }
    if (old_value != 0)
      std::printf("%-52s %14.2f %14.2f %9.3fx\n", key.c_str(), old_value, *new_value,
                  *new_value / old_value);
    else
      std::printf("%-52s %14.2f %14.2f %10s\n", key.c_str(), old_value, *new_value, "-");
  }
  for (auto& [key, v] : after)
    if (!find(before, key)) only_new.push_back(key);
  auto list = [](const char* title, const std::string& path,
                 const std::vector<std::string>& keys) {
    if (keys.empty()) return;
    std::printf("\nonly in %s (%s):\n", title, path.c_str());
    for (auto& k : keys)
      std::printf("  %s\n", k.c_str());
  };
  list("OLD", old_path, only_old);
  list("NEW", new_path, only_new);
  return 0;
}

} // namespace swarm::tools
