#include "core/base/decimal.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace attn {

bool parse_decimal(const std::string& text, double& out, std::string& why) {
  const size_t n = text.size();
  size_t i = 0, digits = 0;
  auto is_digit = [&](size_t k) {
    return k < n && std::isdigit(static_cast<unsigned char>(text[k])) != 0;
  };
  if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
  if (i + 1 < n && text[i] == '0' && (text[i + 1] == 'x' || text[i + 1] == 'X')) {
    why = "is hexadecimal; write it in decimal";
    return false;
  }
  for (; is_digit(i); ++i) ++digits;
  if (i < n && text[i] == '.')
    for (++i; is_digit(i); ++i) ++digits;
  if (digits > 0 && i < n && (text[i] == 'e' || text[i] == 'E')) {
    size_t k = i + 1;
    if (k < n && (text[k] == '+' || text[k] == '-')) ++k;
    if (is_digit(k)) {
      while (is_digit(k)) ++k;
      i = k;
    }
  }
  if (digits == 0 || i != n) {
    std::string word;
    for (size_t k = text[0] == '+' || text[0] == '-' ? 1 : 0; k < n; ++k)
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(text[k])));
    why = word == "inf" || word == "infinity" || word == "nan" ? "is not finite"
                                                               : "is not a decimal number";
    return false;
  }
  errno = 0;
  const double x = std::strtod(text.c_str(), nullptr);
  if (errno == ERANGE && std::isinf(x)) {
    why = "is out of range (overflows; the largest magnitude is about 1.8e308)";
    return false;
  }
  if (errno == ERANGE && x == 0) {
    why = "is out of range (underflows to 0; write 0 if that is meant)";
    return false;
  }
  out = x;
  return true;
}

std::string fixed_decimal(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace attn
