#pragma once
// The CUDA fragment files of templates/, embedded at build time. A file is split into named
// sections by lines "//@ <name>".
#include <map>
#include <string>
#include <vector>

namespace sparsetune::codegen {

struct TemplateFile {
  const char* name;
  const char* text;
};

const std::vector<TemplateFile>& template_files();  // generated

// Sections of templates/<name>; throws Error when the file is not embedded.
const std::map<std::string, std::string>& template_sections(const std::string& name);

}  // namespace sparsetune::codegen
