#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "core/analysis/spectral.h"
#include "core/base/decimal.h"
#include "core/base/enum_names.h"
#include "core/base/error.h"

namespace attn::spectral {

namespace {
constexpr EnumName<Control> kControlNames[] = {
    {Control::None, "none"}, {Control::Spec, "spec"}, {Control::NormBound, "norm-bound"}};
}  // namespace

Control parse_control(const std::string& name) {
  Control c;
  if (find_enum(kControlNames, name, &c)) return c;
  throw Error("control must be none, spec or norm-bound, got '" + name + "'");
}

const char* control_name(Control c) {
  return enum_name(c, kControlNames);
}

std::vector<double> parse_matrix_csv(const std::string& text, const std::string& source, int& n) {
  std::vector<std::vector<double>> rows;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  std::vector<int> row_lines;
  int blank_run = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) {
      ++blank_run;
      continue;
    }
    if (blank_run > 0 && !rows.empty())
      throw Error(source + ": blank line inside the matrix before line " + std::to_string(line_no));
    blank_run = 0;
    std::vector<double> row;
    std::istringstream cells(line);
    std::string cell;
    int col = 0;
    const int r = static_cast<int>(rows.size()) + 1;
    while (std::getline(cells, cell, ',')) {
      ++col;
      const auto b = cell.find_first_not_of(" \t"), e = cell.find_last_not_of(" \t");
      const std::string v = b == std::string::npos ? "" : cell.substr(b, e - b + 1);
      const std::string where = source + ": row " + std::to_string(r) + ", column " +
                                std::to_string(col) + " (line " + std::to_string(line_no) + ")";
      if (v.empty()) throw Error(where + " is empty");
      double x = 0;
      std::string why;
      if (!parse_decimal(v, x, why)) throw Error(where + ": '" + v + "' " + why);
      row.push_back(x);
    }
    if (!line.empty() && line.back() == ',')
      throw Error(source + ": row " + std::to_string(r) + " ends with a comma (empty column " +
                  std::to_string(col + 1) + ")");
    if (!rows.empty() && row.size() != rows[0].size())
      throw Error(source + ": row " + std::to_string(r) + " has " + std::to_string(row.size()) +
                  " columns but row 1 has " + std::to_string(rows[0].size()));
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw Error(source + ": no matrix rows (expected N lines of N numbers)");
  if (rows.size() != rows[0].size())
    throw Error(source + ": the matrix must be square (N x N), got " + std::to_string(rows.size()) +
                " rows of " + std::to_string(rows[0].size()) + " columns");
  n = static_cast<int>(rows.size());
  std::vector<double> out;
  out.reserve(static_cast<size_t>(n) * n);
  for (const auto& r : rows) out.insert(out.end(), r.begin(), r.end());
  return out;
}

}  // namespace attn::spectral
