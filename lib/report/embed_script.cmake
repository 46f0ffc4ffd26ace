# Turns the report renderer into a string literal of a generated C++ source (a long script is
# split into several literals: compilers limit the length of one).
# Run as: cmake -DIN=<render.py> -DOUT=<file.cpp> -P this.
file(READ ${IN} text)
string(FIND "${text}" ")st_py\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter")
endif()
string(LENGTH "${text}" n)
set(body "// Generated from scripts/report/render.py at build time. Do not edit.\n#include \"report/report.hpp\"\n\nnamespace sparsetune::report {\n\nconst std::string& render_script() {\n  static const std::string text = std::string()")
set(at 0)
while(at LESS n)
  string(SUBSTRING "${text}" ${at} 8000 piece)
  string(APPEND body "\n      + R\"st_py(${piece})st_py\"")
  math(EXPR at "${at} + 8000")
endwhile()
string(APPEND body ";\n  return text;\n}\n\n}  // namespace sparsetune::report\n")
file(WRITE ${OUT}.tmp "${body}")
file(RENAME ${OUT}.tmp ${OUT})
